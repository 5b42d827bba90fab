//! One offline run of a pricing scheduler, stepped job by job over an
//! instance: the loop every algorithm over [`OnlinePrimalDual`] shares, with
//! the algorithm's own model, bookkeeping and report behind
//! [`OnlineModel`].

use std::fmt;
use std::time::Instant;

use crate::certificate::Certificate;
use crate::error::Result;
use crate::model::{Instance, JobId};
use crate::schedule::{JobSchedule, Schedule, Segment, verify};
use crate::sim::Rejection;

use super::engine::{Decision, JobOutcome, OnlinePrimalDual, RunReport};
use super::oracle::PricingOracle;

/// The job type of a model's oracle.
type JobOf<M> = <<M as OnlineModel>::Oracle as PricingOracle>::Job;
/// The plan type of a model's oracle.
type PlanOf<M> = <<M as OnlineModel>::Oracle as PricingOracle>::Plan;

/// What a pricing scheduler adds to the generic run ([`OnlineRun`]): its
/// model of the cluster (plans to schedule
/// segments), its bookkeeping around each decision, and its report and
/// certificate. The value holds the run's own state (the cluster in the
/// model's units, the price-bound diagnostics, counters).
pub trait OnlineModel: Sized {
    /// The algorithm's pricing oracle.
    type Oracle: PricingOracle;
    /// The algorithm's report of a finished run.
    type Report;

    /// The algorithm's name.
    const NAME: &'static str;

    /// The instance's id of `job`.
    fn job_id(job: &JobOf<Self>) -> JobId;

    /// Called before the engine decides on `job` (for example to freeze a
    /// fairness weight). Default: nothing.
    fn before_step(&mut self, job: &mut JobOf<Self>) {
        let _ = job;
    }

    /// Called after the engine decided on `job` (`outcome`), with the
    /// oracle that answered. Default: nothing.
    fn after_step(
        &mut self,
        job: &JobOf<Self>,
        outcome: &JobOutcome<PlanOf<Self>>,
        oracle: &Self::Oracle,
    ) {
        let _ = (job, outcome, oracle);
    }

    /// Why `job` (the last job stepped, if any) has no plan even on the
    /// empty cluster: the text of its [`Rejection::Unschedulable`].
    fn unschedulable_why(&self, job: Option<&JobOf<Self>>) -> String;

    /// The segments the simulator reserves for `plan`.
    fn segments(&self, plan: &PlanOf<Self>) -> Vec<Segment>;

    /// The crate schedule of a finished run: every job of `instance`
    /// rejected but the admitted ones of `jobs` (in the order stepped, with
    /// their `outcomes`). Default: each admitted job with the
    /// [`segments`](Self::segments) of its plan ([`schedule_of`]).
    ///
    /// # Errors
    ///
    /// [`unknown_job`](Self::unknown_job) for a job not of `instance`.
    fn schedule(
        &self,
        instance: &Instance,
        jobs: &[JobOf<Self>],
        outcomes: &[JobOutcome<PlanOf<Self>>],
    ) -> Result<Schedule> {
        let admitted = jobs
            .iter()
            .zip(outcomes)
            .filter_map(|(job, o)| match &o.decision {
                Decision::Admitted { plan, .. } => Some((Self::job_id(job), self.segments(plan))),
                Decision::Rejected(_) => None,
            });
        schedule_of(instance, admitted).map_err(Self::unknown_job)
    }

    /// Called before the engine computes the final dual (which asks the
    /// oracle again), for counters read from the oracle. Default: nothing.
    fn before_finish(&mut self, oracle: &Self::Oracle) {
        let _ = oracle;
    }

    /// The report of a finished run: the framework's `run` over `jobs` (in
    /// the order stepped) and the wall-clock seconds of every decision.
    ///
    /// # Errors
    ///
    /// The algorithm's own errors while closing its run.
    fn report(
        self,
        run: RunReport<PlanOf<Self>>,
        jobs: Vec<JobOf<Self>>,
        decision_seconds: Vec<f64>,
    ) -> Result<Self::Report>;

    /// The certificate of `report`, a run over the jobs of `instance`: the
    /// framework's, named and scoped to the model.
    fn certificate(report: &Self::Report, instance: &Instance) -> Certificate;

    /// The error for a job the run was not built for.
    fn unknown_job(job: JobId) -> crate::Error;
}

/// The crate schedule of a run over `instance`: every job rejected but
/// those of `admitted`, each with its segments.
///
/// # Errors
///
/// The id of the first admitted job that is not a job of `instance`.
pub fn schedule_of(
    instance: &Instance,
    admitted: impl IntoIterator<Item = (JobId, Vec<Segment>)>,
) -> std::result::Result<Schedule, JobId> {
    let mut out: Vec<JobSchedule> = instance
        .jobs()
        .iter()
        .map(|j| JobSchedule::rejected(j.id))
        .collect();
    for (job, segments) in admitted {
        let p = instance.job_position(job).ok_or(job)?;
        out[p] = JobSchedule {
            job,
            admitted: true,
            segments,
        };
    }
    Ok(Schedule { jobs: out })
}

/// One run of a pricing scheduler in progress: the framework's engine, the
/// algorithm's state and the jobs stepped so far. Built by the algorithm
/// (its ledger, bounds and oracle), stepped by its offline `solve` over
/// the instance's arrivals (in the simulator the algorithm runs as a
/// [`Session`](super::Session) instead, [`SessionPolicy`](super::SessionPolicy)).
pub struct OnlineRun<M: OnlineModel> {
    engine: OnlinePrimalDual<M::Oracle>,
    model: M,
    stepped: Vec<JobOf<M>>,
    decision_seconds: Vec<f64>,
}

impl<M> fmt::Debug for OnlineRun<M>
where
    M: OnlineModel + fmt::Debug,
    OnlinePrimalDual<M::Oracle>: fmt::Debug,
    JobOf<M>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnlineRun")
            .field("engine", &self.engine)
            .field("model", &self.model)
            .field("stepped", &self.stepped)
            .field("decision_seconds", &self.decision_seconds)
            .finish()
    }
}

impl<M: OnlineModel> OnlineRun<M> {
    /// A run of `engine` (before any job) with the algorithm's state
    /// `model`, room for `jobs` jobs.
    pub fn new(engine: OnlinePrimalDual<M::Oracle>, model: M, jobs: usize) -> Self {
        OnlineRun {
            engine,
            model,
            stepped: Vec::with_capacity(jobs),
            decision_seconds: Vec::with_capacity(jobs),
        }
    }

    /// The engine, for driving the loop directly.
    pub fn into_engine(self) -> OnlinePrimalDual<M::Oracle> {
        self.engine
    }

    /// The algorithm's state.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Decides on `job` (the engine's step timed).
    ///
    /// # Errors
    ///
    /// The engine's and the oracle's errors.
    pub fn step(&mut self, mut job: JobOf<M>) -> Result<()> {
        self.model.before_step(&mut job);
        let start = Instant::now();
        self.engine.step(&job)?;
        self.decision_seconds.push(start.elapsed().as_secs_f64());
        if let Some(outcome) = self.engine.outcomes().last() {
            self.model.after_step(&job, outcome, self.engine.oracle());
        }
        self.stepped.push(job);
        Ok(())
    }

    /// The plan of the last job stepped, when it was admitted.
    pub fn last_plan(&self) -> Option<&PlanOf<M>> {
        match self.engine.outcomes().last().map(|o| &o.decision) {
            Some(Decision::Admitted { plan, .. }) => Some(plan),
            _ => None,
        }
    }

    /// Why the last job stepped was rejected (`None` when admitted).
    pub fn last_rejection(&self) -> Option<Rejection> {
        self.engine
            .last_rejection(|| self.model.unschedulable_why(self.stepped.last()))
    }

    /// Closes the framework (final dual, certificate) over the stepped
    /// jobs.
    fn close(mut self) -> Result<Closed<M>> {
        self.model.before_finish(self.engine.oracle());
        let run = self.engine.finish(&self.stepped)?;
        Ok(Closed {
            model: self.model,
            run,
            jobs: self.stepped,
            decision_seconds: self.decision_seconds,
        })
    }

    /// Finishes the framework (final dual, certificate) over the stepped
    /// jobs and returns the algorithm's report.
    ///
    /// # Errors
    ///
    /// The framework's and the algorithm's errors.
    pub fn finish(self) -> Result<M::Report> {
        let c = self.close()?;
        c.model.report(c.run, c.jobs, c.decision_seconds)
    }

    /// Steps every job of `jobs` (the instance's, in arrival order),
    /// finishes, and returns the schedule (checked with [`verify`]), the
    /// certificate and the report.
    ///
    /// # Errors
    ///
    /// As [`step`](Self::step) and [`finish`](Self::finish); a schedule
    /// that [`verify`] rejects is reported as [`crate::Error::Schedule`]
    /// (a bug).
    pub fn solve(
        mut self,
        jobs: Vec<JobOf<M>>,
        instance: &Instance,
    ) -> Result<(Schedule, Certificate, M::Report)> {
        for job in jobs {
            self.step(job)?;
        }
        let c = self.close()?;
        let schedule = c.model.schedule(instance, &c.jobs, &c.run.outcomes)?;
        verify(instance, &schedule)?;
        let report = c.model.report(c.run, c.jobs, c.decision_seconds)?;
        let certificate = M::certificate(&report, instance);
        Ok((schedule, certificate, report))
    }
}

/// A finished run: the algorithm's state, the framework's report, the jobs
/// stepped and the seconds of every decision.
struct Closed<M: OnlineModel> {
    model: M,
    run: RunReport<PlanOf<M>>,
    jobs: Vec<JobOf<M>>,
    decision_seconds: Vec<f64>,
}
