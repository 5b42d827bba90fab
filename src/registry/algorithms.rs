//! The algorithms by name: their parameters from JSON, their offline runs
//! and their simulator policies, each through the [`Algorithm`] contract.

#[cfg(feature = "serde")]
use rand::SeedableRng;
#[cfg(feature = "serde")]
use rand::rngs::ChaCha8Rng;

use crate::algorithms::gadget::Gadget;
use crate::algorithms::locality::{Locality, LocalityBatch};
use crate::algorithms::oasis::Oasis;
use crate::algorithms::sjf_bco::{RarFf, RarLs, RarRand, SjfBco};
use crate::algorithms::smd::Smd;
#[cfg(feature = "serde")]
use crate::algorithms::smd::SmdReport;
#[cfg(feature = "serde")]
use crate::algorithms::{Algorithm, OnlineAlgorithm, Solved};
#[cfg(feature = "serde")]
use crate::baselines::BaselineParams;
#[cfg(feature = "serde")]
use crate::certificate::Certificate;
#[cfg(feature = "serde")]
use crate::model::Instance;
#[cfg(feature = "serde")]
use crate::online::AnySession;
#[cfg(feature = "serde")]
use crate::schedule::Schedule;
#[cfg(feature = "serde")]
use crate::sim::Policy;
use crate::trace::Arch;

use super::{BASELINES, RING_BASELINES, ROUND_POLICIES};

/// The algorithms [`solve`] runs, by [`Algorithm::NAME`](crate::algorithms::Algorithm::NAME), in a stable
/// order.
pub const ALGORITHMS: [&str; 9] = [
    <Oasis as crate::algorithms::Algorithm>::NAME,
    <Locality as crate::algorithms::Algorithm>::NAME,
    <LocalityBatch as crate::algorithms::Algorithm>::NAME,
    <Gadget as crate::algorithms::Algorithm>::NAME,
    <SjfBco as crate::algorithms::Algorithm>::NAME,
    <RarFf as crate::algorithms::Algorithm>::NAME,
    <RarLs as crate::algorithms::Algorithm>::NAME,
    <RarRand as crate::algorithms::Algorithm>::NAME,
    <Smd as crate::algorithms::Algorithm>::NAME,
];

/// The algorithms that are also simulator policies
/// ([`OnlineAlgorithm`](crate::algorithms::OnlineAlgorithm)), in a stable
/// order.
pub const ALGORITHM_POLICIES: [&str; 4] = [
    <Oasis as crate::algorithms::Algorithm>::NAME,
    <Locality as crate::algorithms::Algorithm>::NAME,
    <Gadget as crate::algorithms::Algorithm>::NAME,
    <Smd as crate::algorithms::Algorithm>::NAME,
];

/// Whether `name` is a simulator policy: a baseline, a ring baseline or an
/// algorithm's policy.
///
/// ```
/// use dmlsched::registry::is_policy;
///
/// assert!(is_policy("fifo")); // a baseline
/// assert!(is_policy("gadget-noprice")); // a ring baseline
/// assert!(is_policy("oasis")); // an algorithm's policy
/// assert!(!is_policy("sjf-bco")); // an offline algorithm only
/// assert!(!is_policy("no-such-policy"));
/// ```
pub fn is_policy(name: &str) -> bool {
    BASELINES.contains(&name)
        || RING_BASELINES.contains(&name)
        || ALGORITHM_POLICIES.contains(&name)
        || ROUND_POLICIES.contains(&name)
}

/// Every policy name, for messages: `baselines: …; algorithms: …`.
///
/// ```
/// let known = dmlsched::registry::known_policies();
/// assert!(known.starts_with("baselines: fifo, fifo-backfill, "));
/// assert!(known.contains("gadget-noprice; algorithms: oasis, "));
/// ```
pub fn known_policies() -> String {
    format!(
        "baselines: {}, {}; algorithms: {}; round-based allocation policies: {}",
        BASELINES.join(", "),
        RING_BASELINES.join(", "),
        ALGORITHM_POLICIES.join(", "),
        ROUND_POLICIES.join(", ")
    )
}

/// The job architecture policy or algorithm `name` schedules: `None` for a
/// baseline that runs either (and for an unknown name).
///
/// ```
/// use dmlsched::registry::architecture;
/// use dmlsched::trace::Arch;
///
/// assert_eq!(architecture("oasis"), Some(Arch::ParameterServer));
/// assert_eq!(architecture("sjf-bco"), Some(Arch::RingAllReduce));
/// assert_eq!(architecture("sjf-bco-online"), Some(Arch::RingAllReduce));
/// assert_eq!(architecture("fifo"), None); // runs jobs of either
/// assert_eq!(architecture("no-such-policy"), None);
/// ```
pub fn architecture(name: &str) -> Option<Arch> {
    match name {
        "oasis" | "locality" | "locality-batch" | "smd" => Some(Arch::ParameterServer),
        "gadget" | "sjf-bco" | "rar-ff" | "rar-ls" | "rar-rand" => Some(Arch::RingAllReduce),
        n if RING_BASELINES.contains(&n) => Some(Arch::RingAllReduce),
        _ => None,
    }
}

/// What a policy needs of a replay's workload and cluster, so a replay
/// (`dmlsched replay`) can build each policy the workload it schedules
/// without naming policies itself (and, given its parameters,
/// [`needs_ps_only_machines`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Needs {
    /// The architecture of the jobs it schedules (`None`: either).
    pub arch: Option<Arch>,
    /// Layered parameter-server jobs (the SMD-style workload's timing
    /// model).
    pub layered: bool,
    /// A horizon its jobs can finish in, and utilities that reward
    /// finishing (the online primal–dual algorithms plan within the
    /// instance's horizon).
    pub horizon: bool,
    /// The most horizon slots × machines it can plan over, if limited.
    pub max_cells: Option<u64>,
}

/// What policy or algorithm `name` needs of a replay ([`Needs`]); nothing
/// for a baseline that runs on jobs of either architecture.
///
/// ```
/// use dmlsched::registry::needs;
/// assert!(needs("oasis").horizon);
/// assert!(needs("smd").layered && !needs("smd").horizon);
/// assert!(needs("gadget").max_cells.is_some());
/// assert_eq!(needs("fifo"), Default::default());
/// ```
pub fn needs(name: &str) -> Needs {
    let arch = architecture(name);
    Needs {
        arch,
        layered: name == <Smd as crate::algorithms::Algorithm>::NAME,
        horizon: matches!(name, "oasis" | "locality" | "gadget"),
        max_cells: (name == <Gadget as crate::algorithms::Algorithm>::NAME)
            .then_some(crate::algorithms::gadget::MAX_CELLS),
    }
}

/// An algorithm's run, whatever the algorithm: what the command line shows
/// and writes.
#[cfg(feature = "serde")]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outcome {
    /// The schedule; [`verify`](crate::schedule::verify) accepts it.
    pub schedule: Schedule,
    /// Its certificate.
    pub certificate: Certificate,
    /// The run in one line, where the algorithm has more to say than how
    /// many jobs it admitted (the SMD-style scheduler: completed and
    /// unfinished jobs).
    pub headline: Option<String>,
    /// Lines that summarise the algorithm's own report for a reader (empty
    /// for most algorithms).
    pub notes: Vec<String>,
    /// Further JSON files of the report, by file name (the SMD-style
    /// scheduler's `epochs.json`).
    pub files: Vec<(&'static str, serde_json::Value)>,
}

#[cfg(feature = "serde")]
impl Outcome {
    fn of<R>(s: Solved<R>) -> Self {
        Outcome {
            schedule: s.schedule,
            certificate: s.certificate,
            headline: None,
            notes: Vec::new(),
            files: Vec::new(),
        }
    }
}

/// Parameters of `A` from JSON text (an object with any fields of its
/// parameter struct; missing fields take their defaults, unknown fields
/// are errors), or its defaults without text.
#[cfg(feature = "serde")]
fn params_of<A>(json: Option<&str>) -> crate::Result<A::Params>
where
    A: Algorithm,
    A::Params: serde::de::DeserializeOwned + Default,
{
    Ok(match json {
        Some(text) => serde_json::from_str(text)?,
        None => A::Params::default(),
    })
}

/// The parameters of algorithm `name` as a simulator policy or a session
/// when none are given, as JSON over its defaults: the paper's, except
/// where a documented practical variant replaces them. OASiS runs on
/// machines that host both roles (`shared_machines`; the paper's model
/// refuses them, and on a cluster without them both values give the same
/// results), so a replay needs no parameter-server-only machines, which
/// real traces never had; and it prices by the value floor (`"bounds":
/// "value_floor"`) instead of the η rule, whose lowest price follows the
/// least utility any plan can reach — about 10⁻²⁵⁰ of a job's worth under
/// sigmoid utilities — so that it admits plans worth almost nothing, far
/// in the future, which hold capacity later jobs then pay for (measured
/// in the algorithms guide's real-trace section). Both OASiS and the
/// locality scheduler keep a job rejected for its price or for lack of
/// room waiting, and decide it again at the first slot boundary after each
/// completion, until one planning window has passed or its utility is 0
/// (`"pd": {"requeue_rejected": true}`), as a cluster's queue would, where
/// the papers turn it away at arrival for good.
///
/// ```
/// use dmlsched::registry::practical_params;
///
/// let oasis = practical_params("oasis").expect("OASiS has a practical variant");
/// assert!(oasis.contains(r#""shared_machines": true"#));
/// assert_eq!(practical_params("locality"), Some(r#"{"pd": {"requeue_rejected": true}}"#));
/// assert_eq!(practical_params("gadget"), None); // the paper's defaults
/// ```
pub const fn practical_params(name: &str) -> Option<&'static str> {
    match name.as_bytes() {
        b"oasis" => Some(
            r#"{"shared_machines": true, "bounds": "value_floor", "pd": {"requeue_rejected": true}}"#,
        ),
        b"locality" => Some(r#"{"pd": {"requeue_rejected": true}}"#),
        _ => None,
    }
}

/// `given` over `base`: objects merged key by key (recursively), any other
/// value replaced.
#[cfg(feature = "serde")]
fn merge_json(base: &mut serde_json::Value, given: serde_json::Value) {
    match (base, given) {
        (serde_json::Value::Object(b), serde_json::Value::Object(g)) => {
            for (k, v) in g {
                match b.get_mut(&k) {
                    Some(slot) => merge_json(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, g) => *b = g,
    }
}

/// Parameters of `A` as a policy or session ([`practical_params`]): the
/// fields in `json` over the practical ones over the defaults (nested
/// objects such as `pd` merged field by field).
#[cfg(feature = "serde")]
fn practical_of<A>(json: Option<&str>) -> crate::Result<A::Params>
where
    A: Algorithm,
    A::Params: serde::de::DeserializeOwned + Default,
{
    let Some(base) = practical_params(A::NAME) else {
        return params_of::<A>(json);
    };
    let mut merged: serde_json::Value = serde_json::from_str(base)?;
    if let Some(text) = json {
        // The given text alone first, for its errors' line and column.
        params_of::<A>(Some(text))?;
        merge_json(&mut merged, serde_json::from_str(text)?);
    }
    Ok(serde_json::from_value(merged)?)
}

/// Whether policy `name` with parameters `json` (over [`practical_params`])
/// needs machines that host only parameter servers: OASiS when its
/// parameters set `"shared_machines": false`.
///
/// # Errors
///
///
/// ```
/// use dmlsched::registry::needs_ps_only_machines;
///
/// assert!(!needs_ps_only_machines("oasis", None)?);
/// assert!(needs_ps_only_machines("oasis", Some(r#"{"shared_machines": false}"#))?);
/// assert!(!needs_ps_only_machines("fifo", None)?);
/// assert!(needs_ps_only_machines("oasis", Some(r#"{"shared_machines": 0}"#)).is_err());
/// # Ok::<(), dmlsched::Error>(())
/// ```
/// As [`check_params`].
#[cfg(feature = "serde")]
pub fn needs_ps_only_machines(name: &str, json: Option<&str>) -> crate::Result<bool> {
    Ok(name == <Oasis as crate::algorithms::Algorithm>::NAME
        && !practical_of::<Oasis>(json)?.shared_machines)
}

/// `A` built from its JSON parameters (validated), run over `instance`
/// with a ChaCha8 generator seeded by `seed`.
#[cfg(feature = "serde")]
fn run<A>(instance: &Instance, json: Option<&str>, seed: u64) -> crate::Result<Solved<A::Report>>
where
    A: Algorithm,
    A::Params: serde::de::DeserializeOwned + Default,
{
    let algorithm = A::new(params_of::<A>(json)?)?;
    algorithm.solve(instance, &mut ChaCha8Rng::seed_from_u64(seed))
}

/// The simulator policy of `A` built from its JSON parameters.
#[cfg(feature = "serde")]
fn policy_of<A>(
    instance: &Instance,
    json: Option<&str>,
    seed: u64,
) -> crate::Result<Box<dyn Policy>>
where
    A: OnlineAlgorithm,
    A::Params: serde::de::DeserializeOwned + Default,
{
    let algorithm = A::new(practical_of::<A>(json)?)?;
    let policy = algorithm.policy(instance, &mut ChaCha8Rng::seed_from_u64(seed))?;
    Ok(Box::new(policy))
}

/// The error for a name that is not in `known`.
#[cfg(feature = "serde")]
fn unknown(kind: &'static str, name: &str, known: &[&str]) -> crate::Error {
    crate::Error::UnknownName {
        kind,
        name: name.into(),
        known: known.join(", "),
    }
}

/// Checks that `json` parses as the parameters of algorithm `name` and
/// that they are valid ([`Algorithm::new`]).
///
/// ```
/// use dmlsched::registry::check_params;
/// assert!(check_params("gadget", r#"{"u_scale": 2.0}"#).is_ok());
/// assert!(check_params("gadget", r#"{"no_such_field": 1}"#).is_err());
/// assert!(check_params("oasis", r#"{"u_scale": -1.0}"#).is_err());
/// assert!(check_params("fifo", "{}").is_err());
/// ```
///
/// # Errors
///
/// [`crate::Error::Json`] for text that is not the parameters' JSON; the
/// algorithm's `InvalidOption` error for a bad value;
/// [`crate::Error::UnknownName`] for a name not in [`ALGORITHMS`].
#[cfg(feature = "serde")]
pub fn check_params(name: &str, json: &str) -> crate::Result<()> {
    fn check<A>(json: &str) -> crate::Result<()>
    where
        A: Algorithm,
        A::Params: serde::de::DeserializeOwned + Default,
    {
        A::new(params_of::<A>(Some(json))?).map(|_| ())
    }
    match name {
        "oasis" => check::<Oasis>(json),
        "locality" => check::<Locality>(json),
        "locality-batch" => check::<LocalityBatch>(json),
        "gadget" => check::<Gadget>(json),
        "sjf-bco" => check::<SjfBco>(json),
        "rar-ff" => check::<RarFf>(json),
        "rar-ls" => check::<RarLs>(json),
        "rar-rand" => check::<RarRand>(json),
        "smd" => check::<Smd>(json),
        other => Err(unknown("algorithm", other, &ALGORITHMS)),
    }
}

/// Runs algorithm `name` over `instance` with the parameters in `json`
/// (its defaults without), drawing random numbers (only the randomised
/// algorithms do) from ChaCha8 seeded by `seed`.
///
/// ```
/// use dmlsched::model::Instance;
/// use dmlsched::registry::{ALGORITHMS, solve};
///
/// let text = std::fs::read_to_string("examples/data/instance_ring_batch.json").unwrap();
/// let instance = Instance::from_json(&text)?;
/// let run = solve("sjf-bco", &instance, None, 0)?;
/// assert!(run.certificate.check(1e-9).is_ok());
/// assert!(ALGORITHMS.contains(&"sjf-bco"));
/// assert!(solve("fifo", &instance, None, 0).is_err());
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// As [`check_params`]; the algorithm's errors on `instance`.
#[cfg(feature = "serde")]
pub fn solve(
    name: &str,
    instance: &Instance,
    json: Option<&str>,
    seed: u64,
) -> crate::Result<Outcome> {
    Ok(match name {
        "oasis" => Outcome::of(run::<Oasis>(instance, json, seed)?),
        "locality" => Outcome::of(run::<Locality>(instance, json, seed)?),
        "locality-batch" => Outcome::of(run::<LocalityBatch>(instance, json, seed)?),
        "gadget" => Outcome::of(run::<Gadget>(instance, json, seed)?),
        "sjf-bco" => Outcome::of(run::<SjfBco>(instance, json, seed)?),
        "rar-ff" => Outcome::of(run::<RarFf>(instance, json, seed)?),
        "rar-ls" => Outcome::of(run::<RarLs>(instance, json, seed)?),
        "rar-rand" => Outcome::of(run::<RarRand>(instance, json, seed)?),
        "smd" => smd_outcome(instance, run::<Smd>(instance, json, seed)?),
        other => return Err(unknown("algorithm", other, &ALGORITHMS)),
    })
}

/// The simulator policy named `name` for `instance`: an algorithm's policy
/// with the parameters in `json` (its defaults without), or a baseline
/// tuned by `baselines` (which takes no JSON). `seed` seeds the randomised
/// ones (`locality`'s inner solver, `rar-online-random`).
///
/// # Errors
///
/// As [`check_params`] for an algorithm; [`crate::Error::UnknownName`] for
/// a name that is not a policy ([`is_policy`]) or parameters given to a
///
/// ```
/// use dmlsched::baselines::BaselineParams;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::registry::policy;
/// use dmlsched::sim::{SimOptions, simulate};
///
/// let machine = Resources::zero().gpus(2.0).cpu_cores(8.0).nic(1e10);
/// let cluster = Cluster::homogeneous(1, machine, 1e10);
/// let job = PsJob {
///     worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(1e9),
///     ps: Resources::zero().cpu_cores(1.0).nic(1e9),
///     ..PsJob::default()
/// };
/// let instance = Instance::new(cluster, vec![Job::new(JobId(0), 0.0, job)], 60.0, 10)?;
/// let baselines = BaselineParams::default();
/// let mut sjf = policy("sjf", &instance, None, 0, &baselines)?;
/// assert_eq!(sjf.name(), "sjf");
/// let result = simulate(&instance, sjf.as_mut(), &SimOptions::default())?;
/// assert_eq!(result.summary().completed, 1);
/// // An algorithm's policy takes JSON parameters; a baseline takes none.
/// let oasis = policy("oasis", &instance, Some(r#"{"u_scale": 2.0}"#), 0, &baselines)?;
/// assert_eq!(oasis.name(), "oasis");
/// assert!(policy("sjf", &instance, Some("{}"), 0, &baselines).is_err());
/// assert!(policy("sjf-bco", &instance, None, 0, &baselines).is_err()); // offline only
/// # Ok::<(), dmlsched::Error>(())
/// ```
/// baseline; the algorithm's errors on `instance`.
#[cfg(feature = "serde")]
pub fn policy(
    name: &str,
    instance: &Instance,
    json: Option<&str>,
    seed: u64,
    baselines: &BaselineParams,
) -> crate::Result<Box<dyn Policy>> {
    match name {
        "oasis" => policy_of::<Oasis>(instance, json, seed),
        "locality" => policy_of::<Locality>(instance, json, seed),
        "gadget" => policy_of::<Gadget>(instance, json, seed),
        "smd" => policy_of::<Smd>(instance, json, seed),
        _ if json.is_some() => Err(unknown("algorithm policy", name, &ALGORITHM_POLICIES)),
        "rar-online-random" => Ok(Box::new(super::RarOnlineRandom::new(seed))),
        other => super::by_name_with(other, baselines).ok_or_else(|| crate::Error::UnknownName {
            kind: "policy",
            name: other.into(),
            known: known_policies(),
        }),
    }
}

/// The SMD-style run's outcome: its summary lines and `epochs.json`.
#[cfg(feature = "serde")]
fn smd_outcome(instance: &Instance, solved: Solved<SmdReport>) -> Outcome {
    let notes = smd_notes(&solved.report);
    let report = &solved.report;
    let headline = format!(
        "{} jobs, {} completed, {} unfinished ({})",
        instance.jobs().len(),
        report.completed(),
        report.unfinished(),
        if report.result.stalled {
            "stalled"
        } else {
            "horizon"
        }
    );
    let epochs: Vec<serde_json::Value> = solved
        .report
        .epochs
        .iter()
        .map(|r| {
            serde_json::json!({
                "mode": r.mode,
                "fractional_groups": r.fractional_groups,
                "capacity_rows": r.capacity_rows,
                "plan_estimate_s": r.plan_estimate_s,
                "lp_columns": r.lp_columns,
                "downgraded": r.downgraded,
                "certificate": r.certificate,
            })
        })
        .collect();
    Outcome {
        files: vec![("epochs.json", serde_json::Value::Array(epochs))],
        headline: Some(headline),
        notes,
        ..Outcome::of(solved)
    }
}

/// Median of `v` (sorted in place); NaN when empty.
#[cfg(feature = "serde")]
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What a reader of an SMD-style run wants besides its certificate: JCTs
/// and the epochs' certificates.
#[cfg(feature = "serde")]
fn smd_notes(report: &SmdReport) -> Vec<String> {
    let s = report.result.summary();
    let mut notes = Vec::new();
    notes.push(if s.completed > 0 {
        format!(
            "over the {} completed: mean JCT {:.0} s, p95 {:.0} s, makespan {:.0} s; GPU use {:.3}",
            s.completed, s.avg_jct_s, s.p95_jct_s, s.makespan_s, s.gpu_utilization
        )
    } else {
        format!("no job completed; GPU use {:.3}", s.gpu_utilization)
    });
    let epochs = &report.epochs;
    let mut ratios: Vec<f64> = epochs
        .iter()
        .map(|r| r.certificate.achieved_ratio())
        .filter(|x| x.is_finite())
        .collect();
    let valid = epochs
        .iter()
        .filter(|r| r.certificate.guarantees.iter().all(|g| g.valid))
        .count();
    let max_ratio = ratios.iter().copied().fold(f64::NAN, f64::max);
    notes.push(format!(
        "{} epochs, every certificate checked; objective/bound median {:.4}, max {:.4}; \
         guarantees valid in {valid} of {} epochs; at most {} fractional groups (d = {})",
        epochs.len(),
        median(&mut ratios),
        max_ratio,
        epochs.len(),
        epochs
            .iter()
            .map(|r| r.fractional_groups)
            .max()
            .unwrap_or(0),
        epochs.iter().map(|r| r.capacity_rows).max().unwrap_or(0),
    ));
    // The epoch farthest from its bound (the largest program on ties).
    let hardest = epochs.iter().enumerate().max_by(|(_, a), (_, b)| {
        let key = |r: &crate::algorithms::smd::SmdEpochReport| {
            let ratio = r.certificate.achieved_ratio();
            (if ratio.is_finite() { ratio } else { 0.0 }, r.lp_columns)
        };
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0).then(ka.1.cmp(&kb.1))
    });
    if let Some((k, r)) = hardest {
        notes.push(format!(
            "the certificate of epoch {k} (farthest from its bound, {} LP columns):\n{}",
            r.lp_columns, r.certificate
        ));
    }
    notes
}

/// The algorithms that decide job by job as a session over a shared
/// cluster state ([`session`]), in a stable order.
pub const SESSION_ALGORITHMS: [&str; 3] = [
    <Oasis as crate::algorithms::Algorithm>::NAME,
    <Locality as crate::algorithms::Algorithm>::NAME,
    <Gadget as crate::algorithms::Algorithm>::NAME,
];

/// A session of algorithm `name` (one of [`SESSION_ALGORITHMS`]) over
/// `state`'s cluster, with the parameters in `json` (its defaults without)
/// and a planning window of `window` slots. Its price bounds are learned
/// from the `past` jobs (jobs like the ones to come, each as if it arrived
/// at slot 0 of a window; the algorithm's own rule), which also set
/// GADGET-style's model of the cluster. `seed` seeds what the algorithm
/// draws (the locality scheduler's inner solver, unless its parameters fix
/// a seed).
///
/// ```
/// # #[cfg(feature = "highs")] {
/// use dmlsched::model::Instance;
/// use dmlsched::registry::session;
/// use dmlsched::state::ClusterState;
///
/// let text = std::fs::read_to_string("examples/data/instance_ring_batch.json").unwrap();
/// let past = Instance::from_json(&text)?;
/// let mut state = ClusterState::new(past.cluster(), past.slot_length_s())?;
/// let mut s = session("gadget", &state, 50, past.jobs(), None, 0)?;
/// let d = s.submit(&mut state, &past.jobs()[0], 0.0)?;
/// assert_eq!(d.admitted, !d.segments.is_empty());
/// assert!(session("fifo", &state, 50, past.jobs(), None, 0).is_err());
/// # }
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// As [`check_params`]; [`crate::Error::UnknownName`] for a name not in
/// [`SESSION_ALGORITHMS`]; the algorithm's errors for a cluster or past
/// job outside its model, or for past jobs that set no bound (none with a
/// positive value).
#[cfg(feature = "serde")]
pub fn session(
    name: &str,
    state: &crate::state::ClusterState,
    window: u32,
    past: &[crate::model::Job],
    json: Option<&str>,
    seed: u64,
) -> crate::Result<Box<dyn AnySession + Send>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Ok(match name {
        "oasis" => {
            Box::new(Oasis::new(practical_of::<Oasis>(json)?)?.session(state, window, past)?)
        }
        "locality" => Box::new(
            Locality::new(practical_of::<Locality>(json)?)?
                .session(state, window, past, &mut rng)?,
        ),
        "gadget" => {
            Box::new(Gadget::new(practical_of::<Gadget>(json)?)?.session(state, window, past)?)
        }
        other => return Err(unknown("session algorithm", other, &SESSION_ALGORITHMS)),
    })
}

/// The session of algorithm `name` saved by [`AnySession::save`]: it
/// decides as the saved one would have.
///
/// # Errors
///
/// [`crate::Error::UnknownName`] for a name not in [`SESSION_ALGORITHMS`];
///
/// ```
/// use dmlsched::model::{Cluster, Job, JobId, RarJob, Resources, WorkerCounts};
/// use dmlsched::registry::{restore_session, session};
/// use dmlsched::state::ClusterState;
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
/// let ring = |id, gpus| Job::new(JobId(id), 0.0, RarJob {
///     workers: WorkerCounts::Fixed(gpus), iterations: 600, ..RarJob::default()
/// });
/// let mut state = ClusterState::new(&cluster, 60.0)?;
/// let mut live = session("gadget", &state, 20, &[ring(0, 2), ring(1, 4)], None, 0)?;
/// assert!(live.submit(&mut state, &ring(10, 4), 0.0)?.admitted);
/// // Saved and restored, the session decides the next job as the live one does.
/// let mut restored = restore_session("gadget", &live.save()?)?;
/// let mut copy = state.clone();
/// let a = live.submit(&mut state, &ring(11, 8), 60.0)?;
/// let b = restored.submit(&mut copy, &ring(11, 8), 60.0)?;
/// assert_eq!((a.admitted, &a.segments, a.price), (b.admitted, &b.segments, b.price));
/// assert!(restore_session("fifo", "{}").is_err());
/// # Ok::<(), dmlsched::Error>(())
/// ```
/// as [`Session::restore`](crate::online::Session::restore).
#[cfg(feature = "serde")]
pub fn restore_session(name: &str, text: &str) -> crate::Result<Box<dyn AnySession + Send>> {
    use crate::algorithms::gadget::GadgetSession;
    use crate::algorithms::locality::LocalitySession;
    use crate::algorithms::oasis::OasisSession;
    Ok(match name {
        "oasis" => Box::new(OasisSession::restore(text)?),
        "locality" => Box::new(LocalitySession::restore(text)?),
        "gadget" => Box::new(GadgetSession::restore(text)?),
        other => return Err(unknown("session algorithm", other, &SESSION_ALGORITHMS)),
    })
}

#[cfg(all(test, feature = "serde"))]
mod practical_tests {
    use super::*;
    use crate::online::BoundsChoice;

    #[test]
    fn oasis_practical_defaults_share_machines_and_price_by_the_value_floor() {
        let p = practical_of::<Oasis>(None).unwrap();
        assert!(p.shared_machines);
        assert!(
            matches!(p.bounds, BoundsChoice::ValueFloor { .. }),
            "{:?}",
            p.bounds
        );
        // A user's field wins over the practical one; the others stay.
        let p = practical_of::<Oasis>(Some(r#"{"bounds": "eta"}"#)).unwrap();
        assert!(matches!(p.bounds, BoundsChoice::Eta));
        assert!(p.shared_machines);
        // `solve` keeps the paper's defaults.
        let p = params_of::<Oasis>(None).unwrap();
        assert!(!p.shared_machines);
        assert!(matches!(p.bounds, BoundsChoice::Eta));
    }
}
