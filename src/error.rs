//! The crate's one error type.
//!
//! Every module that can fail has its own error enum ([`ModelError`],
//! [`LpError`], [`TimingError`], [`SimError`], …); the crate-wide [`Error`]
//! wraps each of them with `#[from]`, so `?` works across modules while the
//! typed witness (which job, which machine, which row) is never lost.

pub use crate::algorithms::gadget::GadgetError;
pub use crate::algorithms::locality::LocalityError;
pub use crate::algorithms::oasis::OasisError;
pub use crate::algorithms::sjf_bco::SjfBcoError;
pub use crate::algorithms::smd::SmdError;
pub use crate::calibrate::CalibrateError;
pub use crate::certificate::CertificateViolation;
pub use crate::lp::LpError;
pub use crate::model::ModelError;
pub use crate::online::OnlineError;
pub use crate::pcip::PcError;
#[cfg(feature = "report")]
pub use crate::report::ReportError;
pub use crate::schedule::Violation;
pub use crate::sim::SimError;
pub use crate::state::StateError;
pub use crate::timing::TimingError;
pub use crate::trace::TraceError;

/// The crate-wide error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The instance (cluster, jobs, horizon) is invalid.
    #[error("invalid instance: {0}")]
    Model(#[from] ModelError),
    /// The LP/MIP layer failed (bad model, solver failure, solver not built).
    #[error("linear programming: {0}")]
    Lp(#[from] LpError),
    /// An allocation policy's input was invalid or its LP failed.
    #[error("allocation: {0}")]
    Allocation(#[from] crate::allocate::AllocationError),
    /// The packing–covering engine failed (invalid program, infeasible LP,
    /// repair failure, …).
    #[error("packing–covering: {0}")]
    Pc(#[from] PcError),
    /// A schedule violates the instance's constraints.
    #[error("infeasible schedule: {0}")]
    Schedule(#[from] Violation),
    /// A certificate failed its own consistency check.
    #[error("certificate check failed: {0}")]
    Certificate(#[from] CertificateViolation),
    /// The online primal–dual framework failed (invalid bounds or inputs,
    /// or an oracle bug such as a plan over capacity).
    #[error("online primal–dual: {0}")]
    Online(#[from] OnlineError),
    /// OASiS cannot run on the instance (cluster not split into worker and
    /// PS servers, job outside its model).
    #[error("OASiS: {0}")]
    Oasis(#[from] OasisError),
    /// The locality-aware scheduler cannot run on the instance (a job
    /// outside its model, an invalid option), or a schedule breaks its
    /// model.
    #[error("locality: {0}")]
    Locality(#[from] LocalityError),
    /// The GADGET-style scheduler cannot run on the instance (a job outside
    /// its ring-all-reduce model, an invalid option, a size guard).
    #[error("GADGET-style: {0}")]
    Gadget(#[from] GadgetError),
    /// SJF-BCO or one of its baselines cannot run on the instance (a job
    /// outside the ring-all-reduce model, an invalid option, a size guard),
    /// or no trial placed every job.
    #[error("SJF-BCO: {0}")]
    SjfBco(#[from] SjfBcoError),
    /// The SMD-style scheduler cannot decide an epoch (a job outside its
    /// layered parameter-server model, an invalid input or option, a size
    /// guard, an LP failure).
    #[error("SMD-style: {0}")]
    Smd(#[from] SmdError),
    /// A timing model or configuration is invalid (non-finite, negative or
    /// zero bandwidth, inconsistent counts).
    #[error("timing model: {0}")]
    Timing(#[from] TimingError),
    /// Calibrating a timing model to measured iteration times failed (a bad
    /// measurement, too few samples, an unidentifiable parameter, …).
    #[error("calibration: {0}")]
    Calibrate(#[from] CalibrateError),
    /// A simulation stopped: an infeasible action, a run that cannot
    /// progress, or inconsistent options.
    #[error("simulation: {0}")]
    Sim(#[from] SimError),
    /// A trace file could not be read or is malformed, or a trace tool got
    /// an invalid argument.
    #[error("trace: {0}")]
    Trace(#[from] TraceError),
    /// A CSV table or SVG plot of a run could not be written.
    #[cfg(feature = "report")]
    #[error("report: {0}")]
    Report(#[from] ReportError),
    /// The shared cluster state refused an operation (a use that does not
    /// fit, a time going back, a duplicate id, a saved state that does not
    /// add up).
    #[error("cluster state: {0}")]
    State(#[from] StateError),
    /// A name the [`registry`](crate::registry) does not know.
    #[error("unknown {kind} {name} (known: {known})")]
    UnknownName {
        /// What was looked up (`algorithm`, `policy`, …).
        kind: &'static str,
        /// The name given.
        name: String,
        /// The names known, for the message.
        known: String,
    },

    /// JSON input or output failed (syntax, unknown field, wrong type).
    #[cfg(feature = "serde")]
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// The job, for an error that refuses one job inside an algorithm's
    /// model only for its size (beyond an implementation limit): a driver
    /// of many jobs (the simulator, a replay) rejects that job and goes on,
    /// where any other error ends the run.
    pub(crate) fn job_beyond_size_limit(&self) -> Option<crate::model::JobId> {
        match self {
            Error::Oasis(OasisError::JobTooLarge { job, .. }) => Some(*job),
            _ => None,
        }
    }

    /// Whether the error is about the caller's input — an invalid instance,
    /// option or file, a job or cluster outside an algorithm's model, a
    /// size beyond a documented limit — rather than a failure of a run on
    /// valid input (a solver failure, a violated certificate, a bug). Tools
    /// map the first to "bad input" (the `dmlsched` command exits with code
    /// 2) and the second to "run failed" (code 1).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Model(_)
            | Error::Trace(_)
            | Error::Timing(_)
            | Error::Calibrate(_)
            | Error::State(_)
            | Error::UnknownName { .. } => true,
            #[cfg(feature = "serde")]
            Error::Json(_) => true,
            Error::Oasis(e) => matches!(
                e,
                OasisError::UnsupportedCluster { .. }
                    | OasisError::UnsupportedJob { .. }
                    | OasisError::InvalidOption { .. }
                    | OasisError::ExactTooLarge { .. }
                    | OasisError::JobTooLarge { .. }
            ),
            Error::Locality(e) => matches!(
                e,
                LocalityError::UnsupportedCluster { .. }
                    | LocalityError::UnsupportedJob { .. }
                    | LocalityError::InvalidOption { .. }
                    | LocalityError::OfflineTooLarge { .. }
                    | LocalityError::JobCannotFit { .. }
                    | LocalityError::BatchTooLarge { .. }
            ),
            Error::Gadget(e) => matches!(
                e,
                GadgetError::NoJobs
                    | GadgetError::NoServers
                    | GadgetError::UnsupportedJob { .. }
                    | GadgetError::InvalidOption { .. }
                    | GadgetError::TooLarge { .. }
                    | GadgetError::SlotTooLong { .. }
            ),
            Error::SjfBco(e) => {
                matches!(
                    e,
                    SjfBcoError::NoJobs
                        | SjfBcoError::NoGpus
                        | SjfBcoError::UnsupportedJob { .. }
                        | SjfBcoError::JobCannotFit { .. }
                        | SjfBcoError::InvalidOption { .. }
                        | SjfBcoError::TooLarge { .. }
                        // The instance's horizon is too short for the jobs.
                        | SjfBcoError::NoScheduleWithinHorizon { .. }
                        | SjfBcoError::BeyondInstanceHorizon { .. }
                ) || matches!(e, SjfBcoError::TimeIndexedBound(f) if f.is_input())
            }
            Error::Smd(e) => matches!(
                e,
                SmdError::UnsupportedJob { .. }
                    | SmdError::JobNeverFits { .. }
                    | SmdError::InvalidInput { .. }
                    | SmdError::InvalidOption { .. }
                    | SmdError::TooLarge { .. }
            ),
            Error::Sim(e) => matches!(e, SimError::BadParams { .. } | SimError::BadOptions { .. }),
            Error::Pc(e) => e.is_input(),
            Error::Allocation(e) => e.is_input(),
            // No schedulable job with positive late utility: the input's
            // utilities leave the η rule nothing to set `L` with.
            Error::Online(
                OnlineError::CannotDeriveBounds { .. } | OnlineError::ValueFloorTooLarge { .. },
            ) => true,
            _ => false,
        }
    }
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Parses JSON text into `T` like `serde_json::from_str`, but an error in a
/// value names the path of the field that holds it, e.g.
/// `jobs[3].architecture.parameter_server.epochs: invalid type: string "x",
/// expected u32 at line 1 column 287`.
///
/// Errors at the top level (syntax, a missing top-level field) are returned
/// unchanged; a `?` in the path stands for a map key that could not be
/// read. Inside internally tagged enums (`utility`, `degradation`) the
/// path stops at the enum's field, as serde reads those through a buffer.
#[cfg(feature = "serde")]
pub(crate) fn json_from_str<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." || path == "?" {
            inner
        } else {
            <serde_json::Error as serde::de::Error>::custom(format!("{path}: {inner}"))
        }
    })?;
    de.end()?;
    Ok(value)
}

/// Reads an externally tagged enum value whose variants may be written as a
/// bare name (`"value_floor"`, every field at its default) or as a one-key
/// object (`{"value_floor": {"v_floor": 2}}`), the name in snake case or in
/// the variant's CamelCase (`"ValueFloor"`). Returns the snake-case name,
/// checked against `variants`, and the body (`None` for a bare name or a
/// `null` body).
#[cfg(feature = "serde")]
pub(crate) fn enum_variant<'de, D: serde::Deserializer<'de>>(
    d: D,
    variants: &'static [&'static str],
) -> Result<(&'static str, Option<serde_json::Value>), D::Error> {
    use serde::Deserialize;
    use serde::de::Error as _;
    let value = serde_json::Value::deserialize(d)?;
    let (name, body) = match value {
        serde_json::Value::String(s) => (s, None),
        serde_json::Value::Object(m) if m.len() == 1 => match m.into_iter().next() {
            Some((k, b)) => (k, (!b.is_null()).then_some(b)),
            None => return Err(D::Error::custom("an empty object")),
        },
        _ => {
            return Err(D::Error::custom(format!(
                "expected one of {} as a string, or an object with one of them as its only key",
                variants.join(", ")
            )));
        }
    };
    let snake = snake_case(&name);
    variants
        .iter()
        .find(|v| **v == snake)
        .map(|v| (*v, body))
        .ok_or_else(|| D::Error::unknown_variant(&name, variants))
}

/// `ValueFloor` → `value_floor`; snake case stays as it is.
#[cfg(feature = "serde")]
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
