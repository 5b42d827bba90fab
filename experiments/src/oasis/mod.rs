//! The set-up of the OASiS experiments (Bao, Peng, Wu, Li, "Online Job
//! Scheduling in Distributed Machine Learning Clusters", IEEE INFOCOM 2018),
//! for [`dmlsched::algorithms::oasis`].
//!
//! * [`oasis_like_ps_jobs`] draws parameter-server jobs from the paper's
//!   simulation ranges ([`OasisWorkload`]), with Poisson or diurnal arrivals,
//!   for any cluster;
//! * [`repro`] draws whole instances — cluster, arrivals and jobs — as in the
//!   paper's Figures 3, 5 and 6 (`examples/oasis.rs` runs them;
//!   `docs/reproduction.md` has the numbers).

pub mod repro;
pub(crate) mod workload;

pub(crate) use workload::oasis_ps_job;
pub use workload::{OasisWorkload, oasis_fastest_slots, oasis_like_ps_jobs};
