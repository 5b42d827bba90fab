//! The published scheduling algorithms, one module per system.
//!
//! # One contract
//!
//! Every algorithm implements [`Algorithm`]:
//!
//! - [`Algorithm::new`] takes its parameters and validates them, once: a
//!   bad option is a typed error there, before any instance is seen;
//! - [`Algorithm::solve`] runs it over an [`Instance`]'s arrivals and
//!   returns [`Solved`]: a schedule that [`verify`](crate::schedule::verify)
//!   accepts, its [`Certificate`] (objective, proven bound, a-priori
//!   guarantee, achieved ratio) and the algorithm's own report. It takes a
//!   random number generator; an algorithm that draws no random numbers
//!   ignores it.
//!
//! The online algorithms also implement [`OnlineAlgorithm`]: the same
//! algorithm as a simulator [`Policy`](crate::sim::Policy), built the same
//! way. The [`registry`](crate::registry) names them all.
//!
//! | algorithm | name | online policy |
//! |---|---|---|
//! | [`oasis::Oasis`] | `oasis` | [`oasis::OasisPolicy`] |
//! | [`locality::Locality`] | `locality` | [`locality::LocalityPolicy`] |
//! | [`locality::LocalityBatch`] | `locality-batch` | — (offline) |
//! | [`gadget::Gadget`] | `gadget` | [`gadget::GadgetPolicy`] |
//! | [`sjf_bco::SjfBco`] | `sjf-bco` | — (offline; the online comparator is [`sjf_bco::SjfBcoOnline`]) |
//! | [`sjf_bco::RarFf`], [`sjf_bco::RarLs`], [`sjf_bco::RarRand`] | `rar-ff`, `rar-ls`, `rar-rand` | — (offline) |
//! | [`smd::Smd`] | `smd` | [`smd::SmdScheduler`] |

pub mod around;
pub mod gadget;
pub mod locality;
pub mod oasis;
pub mod sjf_bco;
pub mod smd;

use rand::Rng;

use crate::certificate::Certificate;
use crate::model::Instance;
use crate::schedule::Schedule;

/// The contract every algorithm of the crate follows (see the
/// [module documentation](self)).
///
/// ```
/// use dmlsched::algorithms::Algorithm;
/// use dmlsched::algorithms::gadget::{Gadget, GadgetParams};
/// use dmlsched::model::Instance;
/// use rand::SeedableRng;
///
/// # #[cfg(all(feature = "serde", feature = "highs"))] {
/// let text = std::fs::read_to_string("examples/data/instance_ring.json").unwrap();
/// let instance = Instance::from_json(&text)?;
/// let gadget = Gadget::new(GadgetParams::default())?;
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let solved = gadget.solve(&instance, &mut rng)?;
/// assert!(solved.certificate.check(1e-9).is_ok());
/// # }
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub trait Algorithm: Sized {
    /// Its name in the [`registry`](crate::registry) and on the command
    /// line.
    const NAME: &'static str;
    /// Its parameters; `Default` gives its paper's (or the crate's)
    /// defaults.
    type Params;
    /// Its own diagnostics, returned beside the schedule and certificate.
    type Report;

    /// The algorithm with `params`, validated.
    ///
    /// # Errors
    ///
    /// The algorithm's `InvalidOption` error naming the bad option.
    fn new(params: Self::Params) -> crate::Result<Self>;

    /// Its parameters.
    fn params(&self) -> &Self::Params;

    /// Runs the algorithm over `instance`'s arrivals and returns the
    /// verified schedule, its certificate and the report. `rng` is drawn
    /// from only by randomised algorithms (each says so).
    ///
    /// # Errors
    ///
    /// A typed error for an instance outside the algorithm's model (each
    /// module lists its errors); a schedule the checker rejects is returned
    /// as [`crate::Error::Schedule`] (a bug).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        rng: &mut R,
    ) -> crate::Result<Solved<Self::Report>>;
}

/// An online algorithm: also a simulator policy, built from the same
/// validated algorithm.
pub trait OnlineAlgorithm: Algorithm {
    /// Its simulator policy.
    type Policy: crate::sim::Policy + 'static;

    /// The policy that makes this algorithm's decisions inside the
    /// simulator on `instance` (the instance gives the cluster, and the
    /// price bounds of the primal–dual algorithms). `rng` is drawn from
    /// only by randomised algorithms.
    ///
    /// # Errors
    ///
    /// As [`Algorithm::solve`], before any decision.
    fn policy<R: Rng>(&self, instance: &Instance, rng: &mut R) -> crate::Result<Self::Policy>;
}

/// The scope of an online scheduler's certificate on `instance`: what `OPT`
/// (hence the bound) ranges over, `objective` naming the model's plans.
/// `job` at its one compute speed on the GPU types `types` (the types of
/// the cluster's machines with GPUs), for a model with one speed per job;
/// the reason it has none when its speed differs between two of them.
pub(crate) fn at_one_speed<'a>(
    job: &'a crate::model::Job,
    types: &[Option<String>],
) -> Result<std::borrow::Cow<'a, crate::model::Job>, String> {
    one_speed(job, types).map(|speed| job.at_speed(speed))
}

/// The one compute speed of `job` on the GPU types `types`, or the reason
/// it has none (see [`at_one_speed`]).
pub(crate) fn one_speed(job: &crate::model::Job, types: &[Option<String>]) -> Result<f64, String> {
    match job.uniform_speed(types.iter().map(Option::as_deref)) {
        Some(speed) => Ok(speed),
        None => Err(format!(
            "it runs at different speeds on the cluster's GPU types ({}), and the model \
             has one compute speed per job",
            types
                .iter()
                .map(|t| t.as_deref().unwrap_or("default"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The distinct GPU types of `cluster`'s machines with GPUs, owned (what a
/// model keeps for [`at_one_speed`]).
pub(crate) fn gpu_types_of(cluster: &crate::model::Cluster) -> Vec<Option<String>> {
    cluster
        .gpu_types_present()
        .into_iter()
        .map(|t| t.map(str::to_string))
        .collect()
}

/// One default GPU type: the types of a model saved before clusters had
/// types.
#[cfg(feature = "serde")]
pub(crate) fn one_default_gpu_type() -> Vec<Option<String>> {
    vec![None]
}

pub(crate) fn plan_scope(objective: &str, instance: &Instance) -> String {
    format!(
        "OPT is the best {objective} over this instance's {} jobs, within its horizon of {} slots of {} s; \
         a simulator's replay of the schedule (other timing, progress or utility accounting) is not covered",
        instance.jobs().len(),
        instance.horizon_slots(),
        instance.slot_length_s()
    )
}

/// What an algorithm returns: the schedule, its certificate and the
/// algorithm's own diagnostics `R` (α, α_eff, per-job decisions, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Solved<R> {
    /// The schedule; [`verify`](crate::schedule::verify) accepts it.
    pub schedule: Schedule,
    /// Objective, proven bound, a-priori guarantees, achieved ratio.
    pub certificate: Certificate,
    /// Algorithm-specific diagnostics.
    pub report: R,
}
