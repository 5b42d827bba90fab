//! FIFO: first come, first served, at a fixed size.

use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::{start_in_order, start_sized_in_order};
use super::{RequestedSizes, requested_size};
use crate::placement::PlacementRule;

/// First in, first out (the Hadoop/Spark default; the FIFO baseline of the
/// OASiS and Optimus evaluations).
///
/// Every job runs at its requested size until it completes
/// (non-preemptive): its entry in [`Fifo::requests`] if it has one (a
/// requested configuration `k^req` from a trace or a generator), else
/// [`requested_tasks`](super::requested_tasks) (all its workers). At each event, waiting jobs are considered in arrival
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
/// assert!(!strict.backfill && backfill.backfill && strict.requests.is_empty());
/// // Job 0 requests 2 workers and 1 PS.
/// let sized = Fifo { requests: [(dmlsched::model::JobId(0), (2, 1))].into(), ..Fifo::default() };
/// assert_eq!(sized.requests.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fifo {
    /// Let later jobs start when the head of the queue does not fit.
    pub backfill: bool,
    /// How tasks are spread over machines.
    pub placement: PlacementRule,
    /// Requested sizes per job (default empty: every job at
    /// [`requested_tasks`](super::requested_tasks)). A run with an entry a
    /// job cannot run at ends with
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams).
    pub requests: RequestedSizes,
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
        if self.requests.is_empty() {
            return Ok(start_in_order(
                view,
                view.active().filter(JobView::is_queued),
                self.placement,
                self.backfill,
            ));
        }
        let sized = view
            .active()
            .filter(JobView::is_queued)
            .map(|j| Ok((j, requested_size(j.job(), &self.requests, "fifo")?)))
            .collect::<crate::Result<Vec<_>>>()?;
        Ok(start_sized_in_order(
            view,
            sized,
            self.placement,
            self.backfill,
        ))
    }
}
