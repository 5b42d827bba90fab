//! The GADGET-style scheduler as a simulator
//! [`Policy`](crate::sim::Policy): every arrival is priced and either
//! reserved for good ([`Action::Reserve`](crate::sim::Action::Reserve)) or
//! rejected.

use crate::model::Instance;
use crate::online::OnlinePolicy;

use super::GadgetParams;
use super::run::GadgetOnline;

/// The GADGET-style scheduler in the simulator: the generic
/// [`OnlinePolicy`] over its run.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as the analysis requires). A job arriving inside a
/// slot may start from the next boundary on; its delay still counts from
/// its arrival slot. Plans are reserved without GPU ids (the simulator
/// hands them out); [`Gadget::solve`](crate::algorithms::Algorithm::solve) assigns them in
/// its schedule.
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
/// planned. After the run, [`report`](OnlinePolicy::report) finishes the
/// framework and returns the [`GadgetReport`](super::GadgetReport).
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
/// let report = policy.report()?;
/// // 150 iterations of 1.001 s: 3 slots each; two jobs run side by side,
/// // the third after them.
/// assert_eq!(report.admitted(), 3);
/// assert_eq!(result.jobs.iter().filter(|j| j.finish_s.is_some()).count(), 3);
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub type GadgetPolicy = OnlinePolicy<GadgetOnline>;

impl GadgetPolicy {
    /// The policy for `instance`.
    ///
    /// # Errors
    ///
    /// As [`Gadget::solve`](crate::algorithms::Algorithm::solve).
    pub fn new(instance: &Instance, params: &GadgetParams) -> crate::Result<Self> {
        let (run, jobs) = GadgetOnline::start(instance, params)?;
        Ok(OnlinePolicy::from_run(instance, run, jobs))
    }
}
