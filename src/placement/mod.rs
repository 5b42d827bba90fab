//! Placement shared by the baselines and the algorithms that place tasks
//! on machines: where a job's workers and PSs go, and how much of a
//! machine or the cluster a demand takes.
//!
//! - [`Placer`] places tasks by a [`PlacementRule`] (best fit, first fit,
//!   consolidating first fit, round robin) over a scratch copy of the free
//!   capacities, charging a reserving ring's bandwidth exactly as the
//!   simulator does.
//! - The reallocation of the policies that recompute every job's size at
//!   each event (sticky placement: a job keeps what it can of its machines)
//!   is crate-internal.
//! - [`dominant_share`] is DRF's share of a demand (Ghodsi et al., NSDI
//!   2011).
//!
//! This is infrastructure: it sits below both the algorithms and the
//! baselines, and imports neither.

mod placer;
pub(crate) mod realloc;
mod share;
mod size;

pub(crate) use placer::Span;
pub use placer::{PlacementRule, Placer, UnknownPlacementRule};
pub use share::dominant_share;
pub(crate) use share::{normalised, one_worker_fits, workers_fitting};
pub use size::{ps_for, requested_tasks};
