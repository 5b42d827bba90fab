//! A whole slotted run of the SMD-style scheduler over an instance's
//! arrivals: the jobs checked up front, the simulation stopped at the
//! horizon, and the schedule verified before it is returned.

use crate::model::Instance;
use crate::schedule::{Schedule, verify};
use crate::sim::{Decisions, SimOptions, SimResult, StopAt, simulate, total_work};
use crate::timing::ProgressMode;

use super::{SmdEpochReport, SmdError, SmdParams, SmdScheduler, candidates};

/// What [`solve_slotted`] returns.
#[derive(Debug, Clone)]
pub struct SmdRun {
    /// The simulation (one record per instance job; jobs unfinished at the
    /// horizon have no finish time and earn nothing).
    pub result: SimResult,
    /// The slotted schedule of the run; it passes
    /// [`schedule::verify`](crate::schedule::verify).
    pub schedule: Schedule,
    /// Every epoch's report, in order; each certificate checked.
    pub reports: Vec<SmdEpochReport>,
    /// The parameters the run used (`max_iteration_s` at most the slot
    /// length).
    pub params: SmdParams,
}

impl SmdRun {
    /// Jobs that completed by the horizon.
    pub fn completed(&self) -> usize {
        self.result
            .jobs
            .iter()
            .filter(|j| j.finish_s.is_some())
            .count()
    }

    /// Jobs neither completed nor rejected when the run stopped (at the
    /// horizon, or with nothing left to happen).
    pub fn unfinished(&self) -> usize {
        self.result
            .jobs
            .iter()
            .filter(|j| j.finish_s.is_none() && !j.rejected)
            .count()
    }
}

/// Checks up front that every job is inside the scheduler's model for a
/// slotted run under `params` (with `max_iteration_s` set): a layered
/// parameter-server job, one worker and one PS fit the whole cluster, and
/// some configuration completes an iteration within a slot.
///
/// # Errors
///
/// [`SmdError::UnsupportedJob`] (naming the job and why),
/// [`SmdError::JobNeverFits`], [`SmdError::TooLarge`],
/// [`SmdError::InvalidOption`].
pub fn check_slotted(instance: &Instance, params: &SmdParams) -> Result<(), SmdError> {
    params.validate()?;
    let total = instance.cluster().total_capacity();
    for job in instance.jobs() {
        if candidates(job, total_work(job), &total, &total, params)?.is_empty() {
            return Err(SmdError::JobNeverFits { job: job.id });
        }
    }
    Ok(())
}

/// Runs the SMD-style scheduler over `instance`'s arrivals as a slotted
/// schedule: decisions at slot boundaries, whole iterations per slot, and
/// a stop at the instance's horizon (jobs unfinished then are reported by
/// their records and earn nothing). Only configurations that complete an
/// iteration within a slot are candidates (`max_iteration_s` is at most
/// the slot length).
///
/// Every job is checked before simulating ([`check_slotted`]); the
/// schedule is verified and every epoch's certificate checked before the
/// run is returned, so a returned schedule always passes
/// [`schedule::verify`](crate::schedule::verify).
///
/// # Errors
///
/// The input errors of [`check_slotted`]; the errors of
/// [`simulate`](crate::sim::simulate) and of the epochs;
/// [`crate::Error::Schedule`] if the schedule fails the checker and
/// [`SmdError::Certificate`] if a certificate fails its check (both bugs).
pub fn solve_slotted(instance: &Instance, params: &SmdParams) -> crate::Result<SmdRun> {
    let slot_s = instance.slot_length_s();
    let params = SmdParams {
        max_iteration_s: Some(params.max_iteration_s.map_or(slot_s, |t| t.min(slot_s))),
        ..*params
    };
    check_slotted(instance, &params)?;
    let mut scheduler = SmdScheduler::new(params);
    let options = SimOptions {
        decisions: Decisions::SlotBoundaries,
        progress: ProgressMode::Floor,
        stop: StopAt::Horizon,
        ..SimOptions::default()
    };
    let result = simulate(instance, &mut scheduler, &options)?;
    let schedule = result.to_schedule(instance);
    verify(instance, &schedule)?;
    for r in scheduler.reports() {
        r.check(1e-9)?;
    }
    Ok(SmdRun {
        result,
        schedule,
        reports: scheduler.reports().to_vec(),
        params,
    })
}
