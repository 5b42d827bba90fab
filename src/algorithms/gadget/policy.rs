//! The GADGET-style scheduler as a simulator [`Policy`]: every arrival is
//! priced and either reserved for good ([`Action::Reserve`]) or rejected.

use crate::model::{Instance, JobId};
use crate::online::Arrivals;
use crate::sim::{Action, Event, Policy, Rejection, SimView};

use super::error::GadgetError;
use super::model::GadgetJob;
use super::run::Run;
use super::{GadgetParams, GadgetReport};

/// The GADGET-style scheduler in the simulator.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as the analysis requires). A job arriving inside a
/// slot may start from the next boundary on; its delay still counts from
/// its arrival slot. Plans are reserved without GPU ids (the simulator
/// hands them out); [`Gadget::solve`](super::Gadget::solve) assigns them in
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
/// planned. After the run, [`report`](Self::report) finishes the
/// framework.
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
#[derive(Debug)]
pub struct GadgetPolicy {
    run: Run,
    /// The jobs still to arrive, and why rejected ones were rejected.
    arrivals: Arrivals<GadgetJob>,
}

impl GadgetPolicy {
    /// The policy for `instance`.
    ///
    /// # Errors
    ///
    /// As [`Gadget::solve`](super::Gadget::solve).
    pub fn new(instance: &Instance, params: &GadgetParams) -> crate::Result<Self> {
        let (run, jobs) = Run::new(instance, params)?;
        let positioned = jobs.into_iter().map(|j| (j.position, j));
        Ok(GadgetPolicy {
            run,
            arrivals: Arrivals::new(instance.jobs().len(), positioned),
        })
    }

    /// Finishes the framework (final dual, certificate) over the jobs that
    /// arrived.
    ///
    /// # Errors
    ///
    /// The framework's errors.
    pub fn report(self) -> crate::Result<GadgetReport> {
        Ok(self.run.finish()?.1)
    }

    fn decide(&mut self, view: &SimView<'_>, id: JobId) -> crate::Result<Action> {
        let job = self
            .arrivals
            .take(view.instance(), id)
            .ok_or(GadgetError::UnknownJob { job: id })?;
        let earliest = view.first_plannable_slot().unwrap_or(u32::MAX);
        self.run.step(job.starting_at(earliest))?;
        let segments =
            (self.run.last_plan()).map(|plan| vec![plan.segment(&self.run.cluster, None)]);
        Ok(self
            .arrivals
            .action(id, segments, || self.run.last_rejection()))
    }
}

impl Policy for GadgetPolicy {
    fn name(&self) -> String {
        "gadget".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        match event {
            Event::Arrival { job } => Ok(vec![self.decide(view, *job)?]),
            _ => Ok(Vec::new()),
        }
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.arrivals.rejection(job)
    }

    fn finish(
        self: Box<Self>,
        instance: &Instance,
    ) -> crate::Result<Option<crate::certificate::Certificate>> {
        let report = self.report()?;
        Ok(Some(super::certificate_of(&report, instance)))
    }
}
