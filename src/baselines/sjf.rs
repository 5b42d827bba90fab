//! SJF: shortest remaining job first, at a fixed size, with an oracle.

use crate::model::Resources;
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::start_in_order;
use super::requested_tasks;
use crate::placement::{PlacementRule, Placer};

/// Shortest job first with an oracle of the remaining duration: the
/// classic size-based baseline; no paper fixes its rules here, so they are
/// the crate's, stated below.
///
/// # Rule
///
/// At each event, every job waiting for a start (never started, or paused)
/// is ranked by its remaining duration at its [`requested_tasks`] size:
/// [`SimView::remaining_time_s`] on the placement that the policy's rule
/// ([`Sjf::placement`]) would choose **on an empty cluster** — an
/// estimate that does not depend on what happens to be free now, so a job
/// that does not fit yet keeps its rank (a job that cannot be placed even
/// on an empty cluster ranks last, with an infinite estimate). Ties go to
/// the earlier arrival, then instance order. The queue is then walked in
/// that order and each job starts at its requested size where the rule
/// places it, if it fits what is free. With `backfill` (the default) the
/// walk continues past a job that does not fit; without it, the first
/// such job blocks the rest. Non-preemptive: a started job runs to
/// completion.
///
/// The oracle knows the timing model exactly (remaining work over the
/// rate of [`SimView::rate`], ring-all-reduce contention counted against
/// the jobs running now); it is an idealised baseline, which Tiresias
/// (no knowledge of durations) and Optimus (a fitted speed model) are
/// measured against.
///
/// # Parameters
///
/// * `backfill` (default `true`): let later jobs start past one that does
///   not fit;
/// * `placement` (default [`PlacementRule::BestFit`]: the fewest machines
///   that hold the job).
///
/// # Complexity
///
/// `O(q·(P + R) + q log q)` per event for `q` waiting jobs, where `P` is
/// one placement (`O((w + p)·H)` for `w + p` tasks on `H` machines) and `R`
/// one rate evaluation of the timing model.
///
/// # Errors
///
/// A timing-model error of [`SimView::remaining_time_s`] (the simulator
/// would hit the same error when it runs the job).
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Sjf;
/// use dmlsched::placement::PlacementRule;
/// let sjf = Sjf::default();
/// assert!(sjf.backfill);
/// assert_eq!(sjf.placement, PlacementRule::BestFit);
/// let strict = Sjf { backfill: false, ..Sjf::default() };
/// assert!(!strict.backfill);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sjf {
    /// Let later jobs start when one does not fit.
    pub backfill: bool,
    /// How tasks are spread over machines (also for the estimate).
    pub placement: PlacementRule,
}

impl Default for Sjf {
    fn default() -> Self {
        Sjf {
            backfill: true,
            placement: PlacementRule::BestFit,
        }
    }
}

impl Policy for Sjf {
    fn name(&self) -> String {
        if self.backfill {
            "sjf".into()
        } else {
            "sjf-strict".into()
        }
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        let instance = view.instance();
        let empty: Vec<Resources> = instance
            .cluster()
            .machines
            .iter()
            .map(|m| m.capacity)
            .collect();
        let mut queue = Vec::new();
        for j in view.active().filter(JobView::is_queued) {
            let (w, p) = requested_tasks(j.job());
            let estimate = match Placer::new(instance, &empty, self.placement).place(j.job(), w, p)
            {
                Some(placement) => view.remaining_time_s(j.job(), &placement)?,
                None => f64::INFINITY,
            };
            queue.push((estimate, j));
        }
        // Stable: equal estimates keep arrival (then instance) order.
        queue.sort_by(|a, b| a.0.total_cmp(&b.0));
        let actions = start_in_order(
            view,
            queue.into_iter().map(|(_, j)| j),
            self.placement,
            self.backfill,
        );
        Ok(actions)
    }
}
