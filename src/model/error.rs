//! Validation errors of the model.

use std::fmt;

use super::cluster::{MachineId, RackId, Resources, TaskKind};
use super::job::JobId;
use super::units::Num;

/// The part of an instance an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    /// The instance itself (slot length, horizon, format version).
    Instance,
    /// Cluster-level parameters (ring network).
    Cluster,
    /// One machine.
    Machine(MachineId),
    /// One rack.
    Rack(RackId),
    /// One job.
    Job(JobId),
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entity::Instance => f.write_str("instance"),
            Entity::Cluster => f.write_str("cluster"),
            Entity::Machine(m) => write!(f, "{m}"),
            Entity::Rack(r) => write!(f, "{r}"),
            Entity::Job(j) => write!(f, "{j}"),
        }
    }
}

/// Why an instance is invalid. Each case names the job, machine or field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A number is NaN or infinite.
    #[error("{entity}: field `{field}` is not finite ({})", Num(*value))]
    NonFinite {
        /// Where.
        entity: Entity,
        /// Field path, e.g. `architecture.worker.gpus`.
        field: String,
        /// The offending value.
        value: f64,
    },
    /// A number that must be ≥ 0 is negative.
    #[error("{entity}: field `{field}` is negative ({})", Num(*value))]
    Negative {
        /// Where.
        entity: Entity,
        /// Field path.
        field: String,
        /// The offending value.
        value: f64,
    },
    /// A number that must be > 0 (a bandwidth, a speed) is zero.
    #[error("{entity}: field `{field}` must be positive, got {}", Num(*value))]
    NonPositive {
        /// Where.
        entity: Entity,
        /// Field path.
        field: String,
        /// The offending value.
        value: f64,
    },
    /// The slot length is not a positive finite number of seconds.
    #[error(
        "slot length must be a positive finite number of seconds, got {}",
        Num(*value)
    )]
    BadSlotLength {
        /// The offending value.
        value: f64,
    },
    /// The horizon has no slots.
    #[error("the horizon must have at least one slot")]
    ZeroHorizon,
    /// The cluster has no machines.
    #[error("the cluster has no machines")]
    EmptyCluster,
    /// Every capacity of a machine is zero.
    #[error("{machine} has zero capacity in every resource")]
    EmptyMachine {
        /// The machine.
        machine: MachineId,
    },
    /// Two machines share an id.
    #[error("duplicate machine id: {machine}")]
    DuplicateMachine {
        /// The repeated id.
        machine: MachineId,
    },
    /// Two racks share an id.
    #[error("duplicate rack id: {rack}")]
    DuplicateRack {
        /// The repeated id.
        rack: RackId,
    },
    /// Two jobs share an id.
    #[error("duplicate job id: {job}")]
    DuplicateJob {
        /// The repeated id.
        job: JobId,
    },
    /// A machine refers to a rack that does not exist.
    #[error("{machine} refers to unknown {rack}")]
    UnknownRack {
        /// The machine.
        machine: MachineId,
        /// The missing rack.
        rack: RackId,
    },
    /// A job refers to a machine that does not exist.
    #[error("{job} refers to unknown {machine}")]
    UnknownMachine {
        /// The job.
        job: JobId,
        /// The missing machine.
        machine: MachineId,
    },
    /// One task of the job fits no machine that may host it.
    #[error(
        "{job}: one {task} (demand {demand}) fits no machine that may host it (largest eligible: {})",
        largest_machine.map_or_else(|| "none".to_string(), |r| r.to_string())
    )]
    TaskCannotFit {
        /// The job.
        job: JobId,
        /// Worker or parameter server.
        task: TaskKind,
        /// Demand of one task.
        demand: Resources,
        /// Component-wise largest capacity among the machines that may host
        /// the task (`None` when no machine may host it at all).
        largest_machine: Option<Resources>,
    },
    /// The job's smallest allocation needs more than the whole cluster
    /// (summed over the machines it may use).
    #[error("{job}: its smallest allocation {demand} exceeds the cluster's total {cluster}")]
    JobCannotFit {
        /// The job.
        job: JobId,
        /// Demand of its smallest allocation.
        demand: Resources,
        /// Total capacity of the machines it may use.
        cluster: Resources,
    },
    /// A job arrives at or after the end of the horizon.
    #[error(
        "{job} arrives at {} s, at or after the horizon end {} s",
        Num(*arrival_s),
        Num(*horizon_s)
    )]
    ArrivalAfterHorizon {
        /// The job.
        job: JobId,
        /// Its arrival, seconds.
        arrival_s: f64,
        /// End of the horizon, seconds.
        horizon_s: f64,
    },
    /// A job has no work to do.
    #[error("{job}: zero workload (`{field}` is 0)")]
    ZeroWorkload {
        /// The job.
        job: JobId,
        /// The zero field.
        field: &'static str,
    },
    /// A count that must be ≥ 1 (worker or PS cap, allowed worker count,
    /// mini-batch size) is zero or an allowed-count list is empty.
    #[error("{job}: `{field}` must be at least 1")]
    ZeroCount {
        /// The job.
        job: JobId,
        /// The field.
        field: &'static str,
    },
    /// A parameter-server job's workload `E·N·M` is above
    /// [`MAX_TOTAL_MINIBATCHES`](super::MAX_TOTAL_MINIBATCHES).
    #[error(
        "{job}: workload epochs × data_chunks × minibatches_per_chunk = {} mini-batches exceeds the limit of 2^53 ({})",
        Num(*minibatches as f64),
        Num(*limit as f64)
    )]
    WorkloadTooLarge {
        /// The job.
        job: JobId,
        /// The product `E·N·M`.
        minibatches: u128,
        /// The largest product accepted.
        limit: u64,
    },
    /// The utilities of the jobs (each at zero delay, its largest value)
    /// sum to more than an `f64` holds, so no objective over the instance
    /// would be finite. The job is the one where the running sum, in the
    /// order given, stops being finite.
    #[error(
        "{job}: utility {} makes the sum of the jobs' best utilities not finite (the sum over all jobs must stay below {})",
        Num(*utility),
        Num(f64::MAX)
    )]
    UtilitySumNotFinite {
        /// The job.
        job: JobId,
        /// Its utility at zero delay.
        utility: f64,
    },
    /// A job's utility increases with delay.
    #[error("{job}: utility increases with delay (from δ = {at_delay} slots)")]
    UtilityIncreasing {
        /// The job.
        job: JobId,
        /// First delay where it increases.
        at_delay: u32,
    },
    /// A table utility has no entries.
    #[error("{job}: table utility has no entries")]
    EmptyUtilityTable {
        /// The job.
        job: JobId,
    },
    /// Fields contradict each other (e.g. `max_ps > max_workers` under the
    /// PS ≤ workers rule, convergence after the requested iterations, a
    /// ring worker needing other than one GPU).
    #[error("{entity}: `{field}`: {reason}")]
    Inconsistent {
        /// Where.
        entity: Entity,
        /// Field path.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The cluster names a GPU type twice.
    #[error("cluster: GPU type `{gpu_type}` is named twice in `gpu_types`")]
    DuplicateGpuType {
        /// The type.
        gpu_type: String,
    },
    /// A machine or a job names a GPU type the cluster does not list in
    /// its `gpu_types`.
    #[error("{entity}: GPU type `{gpu_type}` is not one of the cluster's `gpu_types`")]
    UnknownGpuType {
        /// The machine or job.
        entity: Entity,
        /// The type.
        gpu_type: String,
    },
    /// The cluster names GPU types but a machine with GPUs names none.
    #[error("{machine}: the cluster names GPU types, so a machine with GPUs needs a `gpu_type`")]
    MissingGpuType {
        /// The machine.
        machine: MachineId,
    },
    /// The cluster has several GPU types and a job gives no speed on one
    /// of them.
    #[error(
        "{job}: no speed on GPU type `{gpu_type}` in `gpu_speeds` (a cluster of several types needs one per type)"
    )]
    MissingGpuSpeed {
        /// The job.
        job: JobId,
        /// The type without a speed.
        gpu_type: String,
    },
    /// The JSON's `format_version` is not one this crate reads.
    #[error("unsupported format_version {found} (this crate reads {supported})")]
    UnsupportedFormatVersion {
        /// The version found.
        found: u32,
        /// The version supported.
        supported: u32,
    },
}
