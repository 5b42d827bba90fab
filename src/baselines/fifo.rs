//! FIFO: first come, first served, at a fixed size.

use crate::sim::{Action, Event, Policy, SimView};

use super::PlacementRule;
use super::common::{is_queued, start_in_order};

/// First in, first out (the Hadoop/Spark default; the FIFO baseline of the
/// OASiS and Optimus evaluations).
///
/// Every job runs at its [`requested_tasks`](super::requested_tasks) size until it completes
/// (non-preemptive). At each event, waiting jobs are considered in arrival
/// order (ties by instance order) and started while their whole allocation
/// can be placed. Without backfill the first job that does not fit blocks
/// every job behind it (head-of-line blocking, on purpose); with backfill
/// later jobs that fit start anyway.
///
/// # Complexity
///
/// `O(q · (w + p) · H)` per event for `q` waiting jobs, `w + p` tasks each,
/// `H` machines.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Fifo;
/// let strict = Fifo::default();
/// let backfill = Fifo { backfill: true, ..Fifo::default() };
/// assert!(!strict.backfill && backfill.backfill);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fifo {
    /// Let later jobs start when the head of the queue does not fit.
    pub backfill: bool,
    /// How tasks are spread over machines.
    pub placement: PlacementRule,
}

impl Policy for Fifo {
    fn name(&self) -> String {
        if self.backfill {
            "fifo-backfill".into()
        } else {
            "fifo".into()
        }
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        let actions = start_in_order(
            view,
            view.active().filter(is_queued),
            self.placement,
            self.backfill,
        );
        Ok(actions)
    }
}
