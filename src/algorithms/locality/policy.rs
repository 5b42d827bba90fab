//! The locality-aware scheduler as a simulator
//! [`Policy`](crate::sim::Policy): its [session](super::LocalitySession)
//! driven by the simulator's events.

use crate::algorithms::Algorithm;
use crate::model::Instance;
use crate::online::SessionPolicy;

use super::{Locality, LocalityParams, LocalitySessionModel};

/// The locality-aware scheduler in the simulator: its session over a state
/// of the instance's cluster, driven by the simulator's events
/// ([`SessionPolicy`]). Every arrival is priced and either reserved
/// ([`Action::Reserve`](crate::sim::Action::Reserve) of segments with their
/// configurations and GPU ids) or rejected; a completion releases the rest
/// of the job's plan; a plan that ends before its job is extended where its
/// machines have room, else the job is preempted.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as for [`Locality::solve`](crate::algorithms::Algorithm::solve)).
/// A job arriving inside a slot is planned from the next boundary on, with
/// the session's head start in the slot in progress where its first
/// placement has room ([`Session`](crate::online::Session)); its
/// utility still counts from its arrival slot. The certificate at the end is
/// the session's ([`Session::certificate`](crate::online::Session::certificate)).
pub type LocalityPolicy = SessionPolicy<LocalitySessionModel>;

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
        let session = Locality::new(params.clone())?.instance_session(instance, rng)?;
        SessionPolicy::from_session(instance, session)
    }
}
