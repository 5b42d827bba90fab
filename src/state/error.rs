//! Errors of the shared cluster state.

use crate::model::units::Num;
use crate::model::{GpuId, JobId, MachineId, ResourceKind};

use super::Holder;

/// Why the shared cluster state refused an operation. A refused operation
/// changes nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The slot length is not positive and finite, or the cluster cannot
    /// be tracked (no machine, a GPU count out of range).
    #[error("invalid cluster state: {reason}")]
    Invalid {
        /// What is wrong.
        reason: String,
    },
    /// A time is not finite, negative, or earlier than the state's `now`.
    #[error("time {time_s} s: {reason}")]
    Time {
        /// The time given, seconds since the state's start.
        time_s: Num,
        /// What is wrong with it.
        reason: String,
    },
    /// A job id was already held on this state (ids are unique for the
    /// state's life).
    #[error("{job} was already submitted to this state (ids are unique for its life)")]
    DuplicateJob {
        /// The job.
        job: JobId,
    },
    /// A job that was never committed to this state.
    #[error("{job} was never committed to this state")]
    NotCommitted {
        /// The job.
        job: JobId,
    },
    /// A machine the state does not have.
    #[error("{machine} is not a machine of the cluster")]
    UnknownMachine {
        /// The machine.
        machine: MachineId,
    },
    /// A plan or usage starts before the current slot (cells before `now`
    /// are gone), or its slot range is empty or too long.
    #[error("{holder}: slots {start}..{end}: {reason}")]
    Slots {
        /// Who asked.
        holder: Holder,
        /// First slot.
        start: u32,
        /// End slot (exclusive).
        end: u32,
        /// What is wrong.
        reason: String,
    },
    /// A slot before the current one: its cell is gone.
    #[error("slot {slot} is before the current slot {current} (its cells are gone)")]
    PastSlot {
        /// The slot asked for.
        slot: u32,
        /// The current slot.
        current: u32,
    },
    /// The use does not fit what is left of a machine in a slot.
    #[error(
        "{holder}: {machine}, slot {slot}: {resource} would reach {used} of capacity {capacity}"
    )]
    DoesNotFit {
        /// Who asked.
        holder: Holder,
        /// The machine.
        machine: MachineId,
        /// The first slot where it does not fit.
        slot: u32,
        /// The first resource that does not fit.
        resource: ResourceKind,
        /// What the machine would use.
        used: Num,
        /// The machine's capacity.
        capacity: Num,
    },
    /// A GPU id is not on its machine, is listed twice, or is in use.
    #[error("{holder}: {gpu}: {reason}")]
    Gpu {
        /// Who asked.
        holder: Holder,
        /// The GPU.
        gpu: GpuId,
        /// What is wrong.
        reason: String,
    },
    /// A use's resources are negative or not finite, or its GPU ids do not
    /// match its GPU count.
    #[error("{holder}: {machine}: {reason}")]
    Use {
        /// Who asked.
        holder: Holder,
        /// The machine.
        machine: MachineId,
        /// What is wrong.
        reason: String,
    },
    /// A saved state does not add up (its cells are not the sum of its
    /// holds, or it over-commits a machine).
    #[error("inconsistent saved state: {reason}")]
    Inconsistent {
        /// What does not add up.
        reason: String,
    },
}
