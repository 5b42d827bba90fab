//! OASiS as a simulator [`Policy`](crate::sim::Policy): its
//! [session](super::OasisSession) driven by the simulator's events.

use crate::algorithms::Algorithm;
use crate::model::Instance;
use crate::online::SessionPolicy;

use super::session::OasisSessionModel;
use super::{Oasis, OasisParams};

/// OASiS in the simulator: its session over a state of the instance's
/// cluster, driven by the simulator's events ([`SessionPolicy`]). Every
/// arrival is priced and either reserved
/// ([`Action::Reserve`](crate::sim::Action::Reserve)) or rejected; a
/// completion releases the rest of its plan; a plan that ends before its
/// job is extended where its machines have room, else the job is preempted.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as the theory requires; estimated bounds would mark the
/// certificate not valid). A job arriving inside
/// a slot is planned from the next boundary on, with the session's head
/// start in the slot in progress where its first placement has room
/// ([`Session`](crate::online::Session)); its utility still counts
/// from its arrival slot. The certificate at the end is the session's.
///
/// ```
/// # use dmlsched::model::*;
/// # use dmlsched::model::units::gbps;
/// use dmlsched::algorithms::oasis::{OasisParams, OasisPolicy};
/// use dmlsched::sim::{simulate, SimOptions, PsTiming};
/// # let server = |id, cpu: f64, nic: f64, hosts| {
/// #     Machine::new(MachineId(id), Resources::zero().cpu_cores(cpu).nic(gbps(nic)), gbps(nic)).hosting(hosts)
/// # };
/// # let cluster = Cluster::new(vec![server(0, 4.0, 4.0, Hosting::Workers), server(1, 4.0, 8.0, Hosting::ParameterServers)]);
/// # let job = |id| Job::new(JobId(id), 0.0, Architecture::ParameterServer(PsJob {
/// #     epochs: 1, data_chunks: 2, minibatches_per_chunk: 1, minibatch_compute_s: 1800.0,
/// #     gradient_bytes: 900.0 * gbps(1.0),
/// #     worker: Resources::zero().cpu_cores(1.0).nic(gbps(1.0)), ps: Resources::zero().cpu_cores(1.0).nic(gbps(2.0)),
/// #     max_workers: 2, max_ps: 2, ps_at_most_workers: true, sync: SyncMode::Asynchronous, layers: None,
/// # })).with_utility(Utility::Table { values: vec![10.0, 4.0] });
/// # let instance = Instance::new(cluster, (0..5).map(job).collect(), 3600.0, 2)?;
/// let mut policy = OasisPolicy::new(&instance, &OasisParams::default())?;
/// let mut opts = SimOptions::default();
/// opts.ps_timing = PsTiming::NoLocality;
/// let result = simulate(&instance, &mut policy, &opts)?;
/// assert_eq!(policy.decisions().iter().filter(|d| d.admitted).count(), 4);
/// assert_eq!(result.jobs.iter().filter(|j| j.finish_s.is_some()).count(), 4);
/// // The fifth job is turned away, and the run says why.
/// let rejected = result.jobs.iter().find(|j| j.rejected).unwrap();
/// println!("job {}: {}", rejected.job, rejected.rejection.as_ref().unwrap());
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub type OasisPolicy = SessionPolicy<OasisSessionModel>;

impl OasisPolicy {
    /// The policy for `instance`.
    ///
    /// # Errors
    ///
    /// As [`Oasis::solve`](crate::algorithms::Algorithm::solve), before any
    /// decision.
    pub fn new(instance: &Instance, params: &OasisParams) -> crate::Result<Self> {
        let session = Oasis::new(params.clone())?.instance_session(instance)?;
        SessionPolicy::from_session(instance, session)
    }
}
