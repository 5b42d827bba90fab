//! The published scheduling algorithms, one module per system.
//!
//! Every algorithm takes an [`Instance`] and returns
//! [`Solved`]: a schedule that [`verify`](crate::schedule::verify) accepts,
//! its [`Certificate`], and an algorithm-specific report.

pub mod gadget;
pub mod locality;
pub mod oasis;
pub mod sjf_bco;
pub mod smd;

use crate::certificate::Certificate;
use crate::model::Instance;
use crate::schedule::Schedule;

/// The scope of an online scheduler's certificate on `instance`: what `OPT`
/// (hence the bound) ranges over, `objective` naming the model's plans.
pub(crate) fn plan_scope(objective: &str, instance: &Instance) -> String {
    format!(
        "OPT is the best {objective} over this instance's {} jobs, within its horizon of {} slots of {} s; \
         a simulator's replay of the schedule (other timing, progress or utility accounting) is not covered",
        instance.jobs().len(),
        instance.horizon_slots(),
        instance.slot_length_s()
    )
}

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
