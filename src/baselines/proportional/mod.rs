//! Budget-based proportional share: a fixed-budget GPU market.
//!
//! The rule is in `rule.rs`, the market's bookkeeping (skip pointers,
//! equal splits) in `market.rs` and the fast path of repeated clearings
//! in `fast.rs`.

use crate::sim::{Action, Event, Policy, SimView};

use super::common::{Shortcut, ShortcutUse, WithShortcut};
use crate::placement::PlacementRule;

mod fast;
mod market;
mod rule;

/// Fixed-budget proportional share: each job spends a fixed budget on the
/// GPUs of the machines it may use, each machine's GPUs are split in
/// proportion to the bids, and the GPUs a job is paid for are placed by a
/// placement rule (a budget proportional share in the style of
/// proportional-share markets such as Tycoon, Lai et al. 2005; no paper
/// fixes it here, so the rules are the crate's, stated below). Recomputed
/// at every event; jobs are elastic.
///
/// # Rule
///
/// 1. **Budgets.** Every job taking part has budget `B_j =`
///    [`ProportionalShare::budget`], times its `weight` when
///    [`ProportionalShare::weighted`] is set.
/// 2. **Bids.** A job splits `B_j` over the machines it may use (its
///    `allowed_machines`, machines hosting workers that can hold one of
///    its workers and have GPUs) in proportion to each machine's GPU
///    capacity: `b_{j,h} = B_j · C_h / Σ_{h'} C_{h'}`.
/// 3. **Shares.** Each machine's GPUs available to the market (free, plus
///    what the taking-part jobs hold now) are split among its bidders in
///    proportion to their bids, in whole GPUs by the largest-remainder
///    method (ties: earlier arrival, then id).
/// 4. **Paid workers.** A share on a machine pays for as many workers as
///    it covers (`⌊share / GPUs per worker⌋`), within the job's
///    `max_workers` overall and within what the machine's other resources
///    (CPU, memory, NIC, …) still hold for it in this clearing. A
///    ring-all-reduce job with a reserved bandwidth `b` is charged `b` of
///    NIC on every machine where it is paid for workers once they are two
///    or more machines, as the simulator charges a placed ring. (Only
///    workers are paid for; PSs come with the placement, step 8.)
/// 5. **Unused shares.** GPUs a job cannot use — its cap is reached, the
///    machine lacks its other resources, or the share is smaller than one
///    worker — go back to the machine and are offered again, in a new
///    round, to the jobs that can still use them there, in proportion to
///    their bids. Rounds repeat while they pay for a worker.
/// 6. **Counts.** A ring-all-reduce job's paid workers are rounded down to
///    an allowed count; a rigid gang gets its whole [`requested_tasks`](super::requested_tasks)
///    size or nothing; a parameter-server job keeps them all, with
///    [`ps_for`](super::ps_for) PSs. The GPUs of workers rounded away stay idle until the
///    next event.
/// 7. **Leaving the market.** A job left with no worker although it was
///    paid for some — a rigid gang short of its size, a ring below its
///    smallest allowed count — leaves the market (the latest arrival among
///    such jobs first) and the market clears again from step 3 without it,
///    so its GPUs go to the others; it waits for the next event. (Without
///    this, a few early gangs that can never be paid in full would hold
///    every share and nothing would run.)
/// 8. **Placement.** The market decides how many workers each job runs
///    (where they would fit, so that they fit somewhere), not where they
///    run: in arrival order, each job's workers and PSs go by the
///    sticky reallocation the other reallocating baselines use — a job
///    whose counts do not change keeps its placement if that is still
///    free; otherwise its tasks go first back on the machines it holds
///    now, the rest by [`ProportionalShare::placement`] (best fit, the
///    fewest machines, by default), all or nothing, charging what the
///    simulator charges (other resources, a reserving ring's bandwidth).
///    A job that does not fit loses one worker at a time (a ring: down to
///    the next allowed count; a rigid gang: all of them) until it fits;
///    after 32 such tries it halves its count instead, so a decision stays
///    bounded. The GPUs it leaves unused stay idle until the next event.
///    A job that fits with no worker leaves the market as in step 7 (the
///    latest arrival first), and the market clears again from step 3 and
///    places again.
///
/// **Who takes part.** Waiting and paused jobs, and running jobs that are
/// elastic and preemptible: all recomputed from scratch, so a running job
/// whose share shrinks to nothing is paused. A running job that is not
/// preemptible, or is a rigid gang, keeps its allocation and its GPUs are
/// not offered. A waiting rigid gang starts only when its shares pay for
/// its whole size (then it keeps that allocation until it completes).
/// Jobs whose workers need no GPU are outside the market and start at
/// their requested size, placed after the market's jobs, if they fit. Jobs
/// holding a plan are left alone. Each changed allocation is stated
/// directly (the simulator applies the answer as one transaction); a job
/// whose placement is unchanged gets no action.
///
/// # Parameters
///
/// * `budget` (default 1.0): each job's budget (a non-positive or
///   non-finite budget bids nothing, so such a job never runs — with
///   `weighted`, a job of weight 0 never runs);
/// * `weighted` (default `false`): multiply the budget by the job's
///   `weight`;
/// * `placement` (default [`PlacementRule::BestFit`]): where the paid
///   workers go (step 8).
///
/// # Complexity
///
/// For `J` jobs on `H` machines, `K` rounds (at most the number of workers
/// paid plus one, usually two): when every job bids alike (the same budget
/// and machines, the usual case) each machine finds its bidders in arrival
/// order without looking at the others, and one clearing costs
/// `O(J + K·H + g·log J)` for `g` shares given (plus the bidders passed
/// over where they are blocked); otherwise `O(K·H·J)`. An
/// event runs at most `J + 1` clearings and placements of every job that
/// takes part (usually one of each).
///
/// # Example
///
/// ```
/// use dmlsched::baselines::ProportionalShare;
/// use dmlsched::placement::PlacementRule;
/// let equal = ProportionalShare::default();
/// assert_eq!((equal.budget, equal.weighted), (1.0, false));
/// assert_eq!(equal.placement, PlacementRule::BestFit);
/// let by_weight = ProportionalShare { weighted: true, ..ProportionalShare::default() };
/// assert!(by_weight.weighted);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProportionalShare {
    /// Each job's budget.
    pub budget: f64,
    /// Multiply the budget by the job's weight.
    pub weighted: bool,
    /// Where the paid workers are placed.
    pub placement: PlacementRule,
}

impl Default for ProportionalShare {
    fn default() -> Self {
        ProportionalShare {
            budget: 1.0,
            weighted: false,
            placement: PlacementRule::BestFit,
        }
    }
}

impl Policy for ProportionalShare {
    fn name(&self) -> String {
        if self.weighted {
            "proportional-weighted".into()
        } else {
            "proportional".into()
        }
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.decide(view, Shortcut::Allowed, &mut ShortcutUse::default())
    }
}

impl WithShortcut for ProportionalShare {
    /// The rule ([`ProportionalShare::run`]), with the market's shortcuts
    /// where `shortcut` allows them.
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>> {
        self.run(view, shortcut, used)
    }
}
