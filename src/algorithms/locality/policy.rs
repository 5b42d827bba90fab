//! The locality-aware scheduler as a simulator [`Policy`]: every arrival
//! is priced and either reserved for good ([`Action::Reserve`] of segments
//! with their configurations) or rejected.

use crate::model::{Instance, JobId};
use crate::online::Arrivals;
use crate::sim::{Action, Event, Policy, Rejection, SimView};

use super::{LocalityError, LocalityJob, LocalityParams, LocalityReport, Run};

/// The locality-aware scheduler in the simulator.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as for [`Locality::solve`](super::Locality::solve)).
/// A job arriving inside a slot may use slots from the next boundary on
/// (the simulator does not let a plan start in a slot that has begun); its
/// utility still counts from its arrival slot
/// ([`LocalityJob::starting_at`]). After the run,
/// [`report`](Self::report) finishes the framework and returns the
/// scheduler's report.
#[derive(Debug)]
pub struct LocalityPolicy {
    run: Run,
    /// The jobs still to arrive, and why rejected ones were rejected.
    arrivals: Arrivals<LocalityJob>,
}

impl LocalityPolicy {
    /// The policy for `instance`; `rng` seeds randomised inner solvers when
    /// [`LocalityParams::seed`] is `None` (the exact solver ignores it).
    ///
    /// # Errors
    ///
    /// As [`Locality::solve`](super::Locality::solve), before any decision.
    pub fn new(
        instance: &Instance,
        params: &LocalityParams,
        rng: &mut impl rand::Rng,
    ) -> crate::Result<Self> {
        let (run, jobs) = Run::new(params, instance, rng)?;
        let positioned = jobs
            .into_iter()
            .filter_map(|j| instance.job_position(j.id).map(|p| (p, j)));
        Ok(LocalityPolicy {
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
    pub fn report(self) -> crate::Result<LocalityReport> {
        Ok(self.run.finish()?.1)
    }

    fn decide(&mut self, view: &SimView<'_>, id: JobId) -> crate::Result<Action> {
        let job = self.arrivals.take(view.instance(), id).ok_or_else(|| {
            LocalityError::UnsupportedJob {
                job: id,
                reason: "not a job of the instance the policy was built for, or decided twice"
                    .into(),
            }
        })?;
        let earliest = view.first_plannable_slot().unwrap_or(u32::MAX);
        self.run.step(job.starting_at(earliest))?;
        let segments = self.run.last_plan().map(|p| p.segments(&self.run.cluster));
        Ok(self
            .arrivals
            .action(id, segments, || self.run.last_rejection()))
    }
}

impl Policy for LocalityPolicy {
    fn name(&self) -> String {
        "locality".into()
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
