//! The locality-aware scheduler as a simulator [`Policy`]: every arrival
//! is priced and either reserved for good ([`Action::Reserve`] of segments
//! with their configurations) or rejected.

use std::collections::BTreeMap;

use crate::model::{Instance, JobId};
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
    /// Every job of the instance by position.
    by_position: Vec<Option<LocalityJob>>,
    /// Why each rejected job was rejected.
    rejections: BTreeMap<JobId, Rejection>,
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
        let mut by_position = vec![None; instance.jobs().len()];
        for j in jobs {
            if let Some(p) = instance.job_position(j.id) {
                by_position[p] = Some(j);
            }
        }
        Ok(LocalityPolicy {
            run,
            by_position,
            rejections: BTreeMap::new(),
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
        let job = view
            .instance()
            .job_position(id)
            .and_then(|p| self.by_position.get_mut(p).and_then(Option::take))
            .ok_or_else(|| LocalityError::UnsupportedJob {
                job: id,
                reason: "not a job of the instance the policy was built for, or decided twice"
                    .into(),
            })?;
        let earliest = view.first_plannable_slot().unwrap_or(u32::MAX);
        self.run.step(job.starting_at(earliest))?;
        Ok(
            match self.run.last_plan().map(|p| p.segments(&self.run.cluster)) {
                Some(segments) => Action::Reserve { job: id, segments },
                None => {
                    if let Some(r) = self.run.last_rejection() {
                        self.rejections.insert(id, r);
                    }
                    Action::Reject { job: id }
                }
            },
        )
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
        self.rejections.get(&job).cloned()
    }
}
