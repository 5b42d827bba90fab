//! Errors of the online primal–dual framework.

use crate::model::MachineId;
use crate::model::units::Num;

use super::{PoolId, ResourceId};

/// Why the online primal–dual framework stopped.
///
/// Every variant names its witness: the job (by its index in arrival order),
/// the pool, or the (machine, resource, slot) cell.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OnlineError {
    /// The ledger or a job's bound inputs are invalid (negative or non-finite
    /// capacity, a unit demand with no positive entry or an entry in
    /// `(0, 1e-12)`, an arrival outside the horizon, arrivals out of order,
    /// a utility that increases, …).
    #[error("invalid instance: {reason}")]
    InvalidInstance {
        /// What is wrong, naming the job, pool or machine.
        reason: String,
    },
    /// No schedulable job is eligible for the minimum that defines `L_κ`
    /// (every job has `f(δ_max) = 0` or no normaliser in the pool): pass
    /// explicit or value-floor bounds instead.
    #[error("cannot derive price bounds for {pool}: no schedulable job with positive late utility")]
    CannotDeriveBounds {
        /// The pool.
        pool: PoolId,
    },
    /// A price bound is not finite, or `U ≤ L`, or an override factor is
    /// out of range.
    #[error("invalid price bounds for {pool}{}: {reason}", resource.map(|r| format!(", {r}")).unwrap_or_default())]
    InvalidPriceBounds {
        /// The pool.
        pool: PoolId,
        /// The resource, when the problem is about one `U_κ^r`.
        resource: Option<ResourceId>,
        /// What is wrong.
        reason: String,
    },
    /// The value floor is so large that `L_κ = v_floor/(4·P·T·C_κ)`
    /// reaches some `U_κ^r` (no room left for prices to rise): the caller's
    /// `v_floor` must be below `limit = min_{κ,r} U_κ^r·4·P·T·C_κ`.
    #[error(
        "v_floor = {} is too large: it must be below {} on this instance (the value floor sets L = v_floor/(4·P·T·C), which must stay below every U)",
        Num(*v_floor),
        Num(*limit)
    )]
    ValueFloorTooLarge {
        /// The value floor given.
        v_floor: f64,
        /// The largest value floor the instance allows (exclusive).
        limit: f64,
    },
    /// The oracle returned a plan that exceeds the residual capacity of a
    /// cell (a bug in the oracle; the ledger is left unchanged).
    #[error(
        "oracle plan of job {job} exceeds the residual capacity of {machine}, {resource}, slot {slot} by {}",
        Num(*excess)
    )]
    OracleViolatedCapacity {
        /// Index of the job in arrival order.
        job: usize,
        /// The machine.
        machine: MachineId,
        /// The resource.
        resource: ResourceId,
        /// The 0-based slot.
        slot: u32,
        /// Amount above the residual capacity.
        excess: f64,
    },
    /// The oracle returned a plan that is malformed: an unknown machine or
    /// resource, a slot before the arrival or after the horizon, a negative
    /// or non-finite amount, or a non-finite or negative utility.
    #[error("oracle plan of job {job} is malformed: {reason}")]
    OracleInvalidPlan {
        /// Index of the job in arrival order.
        job: usize,
        /// What is wrong.
        reason: String,
    },
    /// The cost the oracle declared differs from the cost recomputed from
    /// the plan's consumption at the view's prices by more than
    /// `1e-9·max(1, cost)` (stale prices).
    #[error(
        "oracle cost of job {job} is {}, but the plan costs {} at the current prices",
        Num(*declared),
        Num(*recomputed)
    )]
    OracleCostMismatch {
        /// Index of the job in arrival order.
        job: usize,
        /// The cost in the oracle's response.
        declared: f64,
        /// The cost recomputed by the framework.
        recomputed: f64,
    },
    /// [`OnlinePrimalDual::finish`](super::OnlinePrimalDual::finish) got a
    /// different number of jobs than were stepped.
    #[error("finish got {given} jobs, but {stepped} were stepped")]
    JobCountMismatch {
        /// Jobs passed to `finish`.
        given: usize,
        /// Jobs passed to `step`.
        stepped: usize,
    },
}
