//! The GADGET-style scheduler as a simulator
//! [`Policy`](crate::sim::Policy): its [session](super::GadgetSession)
//! driven by the simulator's events.

use crate::algorithms::Algorithm;
use crate::model::Instance;
use crate::online::SessionPolicy;

use super::session::GadgetSessionModel;
use super::{Gadget, GadgetParams};

/// The GADGET-style scheduler in the simulator: its session over a state of
/// the instance's cluster, driven by the simulator's events
/// ([`SessionPolicy`]). Every arrival is priced and either reserved
/// ([`Action::Reserve`](crate::sim::Action::Reserve), GPU ids as the state
/// assigns them) or rejected; a completion (for example at convergence)
/// releases the rest of the ring's plan; a plan that ends before its job is
/// extended where its servers have room, else the job is preempted.
///
/// The price bounds and the model of the cluster are derived from the
/// whole instance when the policy is built (clairvoyant, as the analysis
/// requires). A job arriving inside a slot is planned from the next
/// boundary on, with the session's head start in the slot in progress where
/// its first placement has room ([`Session`](crate::online::Session)); its
/// delay still counts from its arrival slot.
///
/// The simulator times a ring as the plans do — on one machine at its
/// internal bandwidth, across machines at its reserved bandwidth without
/// contention — so every admitted job completes in its planned slot when
/// the simulator trains the iterations the plans count and counts them the
/// same way: run it with [`GadgetParams::sim_options`] (which stops a job
/// at its convergence estimate under the default
/// [`ExcessiveTraining::StopAtConvergence`](super::ExcessiveTraining), and
/// counts whole iterations per slot at slot boundaries under
/// `ProgressMode::Floor`). With [`WorkUnit::Samples`](super::WorkUnit) the
/// plans count iterations at the chosen worker count, the simulator the
/// requested ones. A ring without a reservation spanning machines is never
/// planned. The certificate at the end is the session's.
///
/// ```
/// use dmlsched::algorithms::gadget::{GadgetParams, GadgetPolicy};
/// use dmlsched::model::*;
/// use dmlsched::sim::simulate;
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(8.0), 1e9);
/// let ring = RarJob { workers: WorkerCounts::Fixed(4), iterations: 150, ..RarJob::default() };
/// let jobs = (0..3).map(|i| Job::new(JobId(i), 0.0, ring.clone())).collect();
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let params = GadgetParams::default();
/// let mut policy = GadgetPolicy::new(&instance, &params)?;
/// let result = simulate(&instance, &mut policy, &params.sim_options())?;
/// // 150 iterations of 1.001 s: 3 slots each; two jobs run side by side,
/// // the third after them.
/// assert_eq!(policy.decisions().iter().filter(|d| d.admitted).count(), 3);
/// assert_eq!(result.jobs.iter().filter(|j| j.finish_s.is_some()).count(), 3);
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub type GadgetPolicy = SessionPolicy<GadgetSessionModel>;

impl GadgetPolicy {
    /// The policy for `instance`.
    ///
    /// # Errors
    ///
    /// As [`Gadget::solve`](crate::algorithms::Algorithm::solve), before any
    /// decision.
    pub fn new(instance: &Instance, params: &GadgetParams) -> crate::Result<Self> {
        let session = Gadget::new(params.clone())?.instance_session(instance)?;
        SessionPolicy::from_session(instance, session)
    }
}
