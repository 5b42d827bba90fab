//! The published scheduling algorithms, one module per system.
//!
//! Every algorithm takes an [`Instance`](crate::model::Instance) and returns
//! [`Solved`]: a schedule that [`verify`](crate::schedule::verify) accepts,
//! its [`Certificate`], and an algorithm-specific report.

pub mod gadget;
pub mod locality;
pub mod oasis;
pub mod sjf_bco;
pub mod smd;

use crate::certificate::Certificate;
use crate::schedule::Schedule;

/// What an algorithm returns: the schedule, its certificate and the
/// algorithm's own diagnostics `R` (α, α_eff, per-job decisions, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Solved<R> {
    /// The schedule; [`verify`](crate::schedule::verify) accepts it.
    pub schedule: Schedule,
    /// Objective, proven bound, a-priori guarantees, achieved ratio.
    pub certificate: Certificate,
    /// Algorithm-specific diagnostics.
    pub report: R,
}
