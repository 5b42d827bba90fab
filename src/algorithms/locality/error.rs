//! Errors of the locality-aware scheduler.

use crate::lp::InvalidLimit;
use crate::model::JobId;

/// Which rule of the locality model a schedule breaks
/// ([`verify_locality`](super::verify_locality)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LocalityRule {
    /// The schedule lists a job the instance does not have, or a job twice.
    UnknownOrDuplicateJob,
    /// A rejected job runs, or an admitted job does not.
    Admission,
    /// A segment has no configuration, or two segments of the job share a
    /// slot (exactly one configuration per job and slot).
    OneConfiguration,
    /// A LOCAL slot is not one machine with at least one worker and exactly
    /// one PS, or LOCAL is disabled.
    LocalShape,
    /// A DISTRIBUTED slot breaks `b·Σy ≤ B·Σz`, `Σz ≤ Σy`, or has no worker.
    DistributedShape,
    /// More workers than `N_i` or PSs than the job's PS cap in a slot.
    TaskCap,
    /// A task on a machine whose role, or the job's allowed machines,
    /// forbid it.
    Roles,
    /// A slot outside the job's window `[a_i, end_i]`.
    Window,
    /// Some machine, resource and slot is over capacity.
    Capacity,
    /// The work done does not reach `Q_i` mini-batches.
    Work,
}

/// Why the locality-aware scheduler cannot run, or a schedule breaks its
/// model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LocalityError {
    /// The cluster cannot be used (no machine may host a worker, or no
    /// machine a PS).
    #[error("cluster not supported by the locality scheduler: {reason}")]
    UnsupportedCluster {
        /// What is wrong.
        reason: String,
    },
    /// A job is outside the model (not a parameter-server job, not elastic
    /// and preemptible, `b_i ≤ 0`, `B_i < b_i`, a demand or rate out of
    /// range).
    #[error("{job} not supported by the locality scheduler: {reason}")]
    UnsupportedJob {
        /// The job.
        job: JobId,
        /// What is wrong.
        reason: String,
    },
    /// An option is invalid.
    #[error("invalid locality option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The exact offline benchmark would need more columns than its limit
    /// allows (estimated before anything is built).
    #[error("the locality offline MIP would need about {columns} columns; the limit is {limit}")]
    OfflineTooLarge {
        /// The column estimate.
        columns: u128,
        /// The limit.
        limit: u64,
    },
    /// A job of the offline batch fits nowhere: on the empty cluster no
    /// machine hosts it LOCAL (one worker and one PS) and no pair of
    /// machines hosts one DISTRIBUTED worker and its PS.
    #[error("{job} cannot be placed on the empty cluster: {reason}")]
    JobCannotFit {
        /// The job.
        job: JobId,
        /// What does not fit.
        reason: String,
    },
    /// Neither offline list scheduler (AlwaysLocal, AlwaysSpread) finishes
    /// a job of the offline batch within the slots available (the
    /// instance's horizon, capped by the batch's slot limit), so the
    /// batch has no upper bound on its makespan.
    #[error("no offline list schedule finishes {job} within {slots} slots")]
    NoListSchedule {
        /// The first job the spreading list scheduler cannot finish (the
        /// local one's when only it ran).
        job: JobId,
        /// The slots available.
        slots: u32,
    },
    /// The offline batch's program would exceed a size limit.
    #[error("the offline batch needs {needed} {what}, above the limit of {limit}")]
    BatchTooLarge {
        /// What is counted (slots, columns).
        what: &'static str,
        /// How many would be needed (at least).
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// A schedule breaks the locality model.
    #[error("locality schedule invalid ({rule:?}){}{}: {detail}",
        job.map(|j| format!(", {j}")).unwrap_or_default(),
        slot.map(|s| format!(", slot {s}")).unwrap_or_default())]
    InvalidSchedule {
        /// The rule broken.
        rule: LocalityRule,
        /// The job, when one job breaks it.
        job: Option<JobId>,
        /// The slot (0-based), when one slot does.
        slot: Option<u32>,
        /// What is wrong.
        detail: String,
    },
}

impl From<InvalidLimit> for LocalityError {
    /// An invalid solver limit as [`LocalityError::InvalidOption`].
    fn from(e: InvalidLimit) -> Self {
        LocalityError::InvalidOption {
            name: e.name,
            reason: e.reason,
        }
    }
}
