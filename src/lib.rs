//! # dmlsched
//!
//! Optimization algorithms, with certificates, for scheduling distributed
//! machine-learning training jobs on shared GPU clusters.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod certificate;
pub mod error;
pub mod lp;
pub mod model;
pub mod schedule;

pub use error::{Error, Result};
