//! Simulator errors.

use crate::model::units::Num;
use crate::model::{JobId, MachineId, ResourceKind};
use crate::schedule::Violation;

/// Why a simulation stopped: an infeasible action (named by job, machine
/// and resource), a model the timing layer rejects, or a run that cannot
/// progress.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// An action names a job the instance does not have.
    #[error("t = {} s: action for unknown {job}", Num(*time_s))]
    UnknownJob {
        /// The job.
        job: JobId,
        /// When.
        time_s: f64,
    },
    /// An action targets a job that has not arrived yet.
    #[error("t = {} s: {job} has not arrived (arrival {} s)", Num(*time_s), Num(*arrival_s))]
    NotArrived {
        /// The job.
        job: JobId,
        /// When.
        time_s: f64,
        /// Its arrival.
        arrival_s: f64,
    },
    /// An action targets a job that completed or was rejected.
    #[error("t = {} s: {job} is already {state}", Num(*time_s))]
    JobClosed {
        /// The job.
        job: JobId,
        /// When.
        time_s: f64,
        /// `"completed"` or `"rejected"`.
        state: &'static str,
    },
    /// An allocation breaks a per-allocation rule of the instance (hosting,
    /// caps, gang size, worker counts, GPU ids, …).
    #[error("t = {} s: {violation}", Num(*time_s))]
    InvalidAllocation {
        /// When.
        time_s: f64,
        /// The rule broken (its segment index is 0 for an allocation, the
        /// plan's segment for a reservation).
        violation: Violation,
    },
    /// An allocation or plan would exceed a machine's capacity.
    #[error(
        "t = {} s: {job} on {machine} needs {resource} {} in total, capacity {} (slot {slot})",
        Num(*time_s),
        Num(*used),
        Num(*capacity)
    )]
    OverAllocation {
        /// The job whose action overflowed.
        job: JobId,
        /// The machine.
        machine: MachineId,
        /// The resource.
        resource: ResourceKind,
        /// When the action was taken.
        time_s: f64,
        /// The slot where the overflow happens.
        slot: u32,
        /// Total use on the machine with the action.
        used: f64,
        /// Capacity.
        capacity: f64,
    },
    /// A GPU id is held by another job.
    #[error("t = {} s: {job} asks for GPU {index} of {machine}, held by {holder}", Num(*time_s))]
    GpuBusy {
        /// The job.
        job: JobId,
        /// The machine.
        machine: MachineId,
        /// GPU index on the machine.
        index: u32,
        /// The job that holds it.
        holder: JobId,
        /// When.
        time_s: f64,
    },
    /// A non-preemptible job would be stopped or paused before completing.
    #[error("t = {} s: {job} is not preemptible", Num(*time_s))]
    NotPreemptible {
        /// The job.
        job: JobId,
        /// When.
        time_s: f64,
    },
    /// A rigid job would run a placement other than the one it ran before
    /// (while running, or when resuming after a pause).
    #[error("t = {} s: {job} is rigid; it must keep the placement it ran on", Num(*time_s))]
    RigidResize {
        /// The job.
        job: JobId,
        /// When.
        time_s: f64,
    },
    /// A plan starts in a slot that has already begun, or ends past the
    /// horizon, or its segments overlap.
    #[error("t = {} s: {job}: bad plan: {reason}", Num(*time_s))]
    BadPlan {
        /// The job.
        job: JobId,
        /// When.
        time_s: f64,
        /// What is wrong.
        reason: String,
    },
    /// A policy's parameters are invalid (e.g. Tiresias thresholds that
    /// are not finite, positive and increasing).
    #[error("invalid parameters of policy {policy}: {reason}")]
    BadParams {
        /// The policy.
        policy: String,
        /// What is wrong.
        reason: String,
    },
    /// The options are inconsistent.
    #[error("invalid simulator options: {reason}")]
    BadOptions {
        /// What is wrong.
        reason: String,
    },
    /// Running jobs exist but none can progress and no other event can
    /// occur (`ProgressMode::Floor` with τ longer than a slot).
    #[error(
        "t = {} s: no running job can progress ({job} needs more than a slot per iteration)",
        Num(*time_s)
    )]
    NoProgress {
        /// One of the stuck jobs.
        job: JobId,
        /// When.
        time_s: f64,
    },
    /// The run exceeded [`SimOptions::max_events`](super::SimOptions::max_events).
    #[error("event limit of {limit} reached at t = {} s", Num(*time_s))]
    EventLimit {
        /// The limit.
        limit: u64,
        /// When.
        time_s: f64,
    },
    /// The event loop found no event after the current time although
    /// nothing happened at it (a guard: every event source yields a later
    /// time or completes a job, so this names a bug rather than an input).
    #[error("t = {} s: the simulation cannot advance time", Num(*time_s))]
    Stalled {
        /// When.
        time_s: f64,
    },
}
