//! Errors of the GADGET-style scheduler.

use crate::model::JobId;
use crate::model::units::Num;

/// Why the GADGET-style scheduler cannot run on an instance.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GadgetError {
    /// The instance has no job.
    #[error("the instance has no job")]
    NoJobs,
    /// No machine can host a ring-all-reduce worker (no GPU, a role that
    /// forbids workers, or another resource too small for one worker).
    #[error("no machine can host a ring-all-reduce worker")]
    NoServers,
    /// A job is outside the model: not ring-all-reduce, an allowed worker
    /// list that is too long, a reserved bandwidth above a server's internal
    /// bandwidth, or an iteration time the timing model rejects.
    #[error("{job} not supported by the GADGET-style scheduler: {reason}")]
    UnsupportedJob {
        /// The job.
        job: JobId,
        /// What is wrong.
        reason: String,
    },
    /// In `Floor` progress mode a ring shape gains no whole iteration per
    /// slot (`⌊1/τ⌋ = 0`), so its duration is undefined.
    #[error(
        "{job} makes no progress with {workers} workers on {servers} servers: one iteration takes {} slots, more than one slot in Floor mode",
        Num(*tau_slots)
    )]
    NoProgress {
        /// The job.
        job: JobId,
        /// Workers of the shape.
        workers: u32,
        /// Servers of the shape.
        servers: u32,
        /// Its iteration time `τ`, slots.
        tau_slots: f64,
    },
    /// An option is invalid (NaN, negative or infinite numbers, a zero
    /// server cap, a duration table naming an unknown job or shape, explicit
    /// bounds with `U ≤ L`, the exhaustive oracle on too many servers).
    #[error("invalid GADGET-style option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The instance is beyond a size guard (jobs, GPUs of one machine,
    /// horizon × servers cells, worker counts of one job, ring shapes).
    #[error(
        "instance too large for the GADGET-style scheduler: {what} is {}, at most {}",
        Num(*value),
        Num(*limit)
    )]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The guard.
        limit: f64,
    },
    /// The slot is so long that a NIC's line rate (or a ring's reserved
    /// bandwidth) over one slot is beyond [`MAX_DATA_PER_SLOT`] data units,
    /// where the ledger's capacities and prices stop being finite.
    ///
    /// [`MAX_DATA_PER_SLOT`]: super::MAX_DATA_PER_SLOT
    #[error(
        "slot_length_s = {} s is too long for the GADGET-style scheduler: {what} of {} bytes/s over one slot is beyond {} data units; at most {} s here",
        Num(*slot_length_s),
        Num(*bytes_per_s),
        Num(super::MAX_DATA_PER_SLOT),
        Num(*limit_s)
    )]
    SlotTooLong {
        /// What carries the bandwidth (a machine's NIC, a job's reservation).
        what: String,
        /// The slot length, seconds.
        slot_length_s: f64,
        /// The bandwidth, bytes per second.
        bytes_per_s: f64,
        /// The longest slot this bandwidth allows, seconds.
        limit_s: f64,
    },
    /// The simulator handed the policy a job it was not built for, or the
    /// same arrival twice.
    #[error("{job} is not in the instance the GADGET-style policy was built for, or arrived twice")]
    UnknownJob {
        /// The job.
        job: JobId,
    },
}

/// `Err(SlotTooLong)` when `bytes_per_s` over one slot of `slot_length_s`
/// seconds (both directions, `2·b·slot`) is beyond
/// [`super::MAX_DATA_PER_SLOT`] data units.
pub(crate) fn slot_too_long(
    what: impl FnOnce() -> String,
    bytes_per_s: f64,
    slot_length_s: f64,
) -> Result<(), GadgetError> {
    let data = 2.0 * super::data_per_slot(bytes_per_s, slot_length_s);
    if data <= super::MAX_DATA_PER_SLOT || bytes_per_s.is_nan() || bytes_per_s <= 0.0 {
        return Ok(());
    }
    Err(GadgetError::SlotTooLong {
        what: what(),
        slot_length_s,
        bytes_per_s,
        limit_s: super::MAX_DATA_PER_SLOT / 2.0 * super::DATA_UNIT_BYTES / bytes_per_s,
    })
}

/// `Err(TooLarge)` when `value > limit`.
pub(crate) fn too_large(what: &'static str, value: f64, limit: f64) -> Result<(), GadgetError> {
    if value > limit {
        Err(GadgetError::TooLarge { what, value, limit })
    } else {
        Ok(())
    }
}
