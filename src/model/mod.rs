//! The typed cluster and job model: plain data, validated once by
//! [`Instance::new`] (or when an instance is read from JSON).
//!
//! Units are SI throughout (seconds, bytes, bytes per second, counts); see
//! [`units`] for conversions. Slots are 0-based; the slot length in seconds is
//! part of the [`Instance`].

mod cluster;
mod error;
mod instance;
mod job;
pub mod units;
mod utility;

pub use cluster::{
    Amount, Cluster, Degradation, FIT_TOL, GpuId, Hosting, Machine, MachineId, Rack, RackId,
    ResourceKind, Resources, RingParams, TaskKind,
};
pub use error::{Entity, ModelError};
pub use instance::{FORMAT_VERSION, Instance};
pub(crate) use instance::{validate_cluster, validate_job};
pub(crate) use job::ps_for_bandwidth;
pub use job::{
    Architecture, Discipline, Elasticity, Job, JobId, Layer, MAX_TOTAL_MINIBATCHES, PsJob, RarJob,
    SyncMode, WorkerCounts,
};
pub use utility::{Utility, UtilityDefect};
