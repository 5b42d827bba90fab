//! Errors of SJF-BCO, its baselines and its slot simulator.

use crate::model::JobId;

/// Why SJF-BCO (or one of its baselines, or the slot simulator) cannot run
/// on an instance, or why a run found nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SjfBcoError {
    /// The instance has no job.
    #[error("the instance has no job")]
    NoJobs,
    /// No machine can host a ring worker (no GPU, or a role that forbids
    /// workers).
    #[error("no machine can host a ring-all-reduce worker")]
    NoGpus,
    /// A job is outside the model: not ring-all-reduce, arriving after the
    /// first slot, restricted to some machines, or with an iteration time
    /// that is zero, NaN or infinite.
    #[error("{job} not supported by SJF-BCO: {reason}")]
    UnsupportedJob {
        /// The job.
        job: JobId,
        /// What is wrong.
        reason: String,
    },
    /// A job needs more GPUs than the whole cluster offers.
    #[error("{job} needs {demand} GPUs, the cluster has {cluster_gpus}")]
    JobCannotFit {
        /// The job.
        job: JobId,
        /// Its gang size `G_j`.
        demand: u64,
        /// Usable GPUs in the cluster.
        cluster_gpus: u64,
    },
    /// An option is invalid (`u < 1`, `l ∉ (0, 1]`, `λ < 1`, `T = 0`,
    /// a κ of 0, a per-job list of the wrong length, a NaN).
    #[error("invalid SJF-BCO option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The instance is beyond the size guards (GPUs, jobs, their product,
    /// iterations, estimated durations or the horizon).
    #[error("instance too large for SJF-BCO: {what} is {value}, at most {limit}")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The guard.
        limit: f64,
    },
    /// No trial placed every job (every budget up to the horizon `T` failed).
    #[error(
        "no trial placed every job within the horizon of {horizon} slots: give the instance a longer horizon (horizon_slots)"
    )]
    NoScheduleWithinHorizon {
        /// The horizon `T`.
        horizon: u64,
    },
    /// The returned schedule ends after the instance's horizon, so it cannot
    /// be written as a crate schedule; give the instance a longer horizon
    /// than the search's `T`.
    #[error(
        "the schedule ends at slot {makespan}, after the instance's horizon of {horizon} slots: give the instance a longer horizon (horizon_slots)"
    )]
    BeyondInstanceHorizon {
        /// The schedule's makespan, slots.
        makespan: u64,
        /// The instance's horizon, slots.
        horizon: u32,
    },
    /// Slot simulator: every running job gains no iteration per slot
    /// (`⌊1/τ⌋ = 0` in `Floor` mode) and no other event can occur.
    #[error("{job} makes no progress (its iteration time exceeds one slot in Floor mode)")]
    NoProgress {
        /// A stuck job.
        job: JobId,
    },
    /// Slot simulator: the run passed its slot guard.
    #[error("the simulation passed its guard of {limit} slots (at slot {slots})")]
    HorizonExceeded {
        /// The slot reached.
        slots: u64,
        /// The guard.
        limit: u64,
    },
    /// Slot simulator: no job is running and none can start (the per-GPU
    /// orders are cyclic; impossible for assignments made by a trial).
    #[error("deadlock at slot {slot}: nothing runs and {job} cannot start")]
    Deadlock {
        /// The slot.
        slot: u64,
        /// A job that cannot start.
        job: JobId,
    },
    /// Slot simulator: an assignment is malformed (a GPU outside the
    /// cluster, a GPU twice, a wrong gang size, a job twice or missing).
    #[error("invalid assignment of {job}: {reason}")]
    BadAssignment {
        /// The job.
        job: JobId,
        /// What is wrong.
        reason: String,
    },
    /// The time-indexed bound
    /// ([`SjfBcoParams::time_indexed_bound`](super::SjfBcoParams::time_indexed_bound))
    /// failed: too many jobs or columns, no solver, or a solver error.
    #[error("the time-indexed lower bound: {0}")]
    TimeIndexedBound(Box<super::formulation::FormulationError>),
}
