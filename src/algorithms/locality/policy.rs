//! The locality-aware scheduler as a simulator
//! [`Policy`](crate::sim::Policy): every arrival is priced and either
//! reserved for good ([`Action::Reserve`](crate::sim::Action::Reserve) of
//! segments with their configurations) or rejected.

use crate::model::Instance;
use crate::online::OnlinePolicy;

use super::{LocalityOnline, LocalityParams};

/// The locality-aware scheduler in the simulator: the generic
/// [`OnlinePolicy`] over its run.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as for [`Locality::solve`](crate::algorithms::Algorithm::solve)).
/// A job arriving inside a slot may use slots from the next boundary on
/// (the simulator does not let a plan start in a slot that has begun); its
/// utility still counts from its arrival slot
/// ([`LocalityJob::starting_at`](super::LocalityJob::starting_at)). After
/// the run, [`report`](OnlinePolicy::report) finishes the framework and
/// returns the scheduler's [`LocalityReport`](super::LocalityReport).
pub type LocalityPolicy = OnlinePolicy<LocalityOnline>;

impl LocalityPolicy {
    /// The policy for `instance`; `rng` seeds randomised inner solvers when
    /// [`LocalityParams::seed`] is `None` (the exact solver ignores it).
    ///
    /// # Errors
    ///
    /// As [`Locality::solve`](crate::algorithms::Algorithm::solve), before any decision.
    pub fn new(
        instance: &Instance,
        params: &LocalityParams,
        rng: &mut impl rand::Rng,
    ) -> crate::Result<Self> {
        let (run, jobs) = LocalityOnline::start(params, instance, rng)?;
        Ok(OnlinePolicy::from_run(instance, run, jobs))
    }
}
