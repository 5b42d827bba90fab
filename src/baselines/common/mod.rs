//! Helpers shared by several baselines: the queue of jobs waiting for a
//! start, dominant shares, placement bookkeeping, and the actions of a
//! from-scratch reallocation.

mod shape;

pub(crate) use shape::{ByShape, Shape, Standalone, bits};

use crate::model::Elasticity;
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, JobView, SimView};

use crate::placement::{PlacementRule, Placer};

/// What a policy that reallocates from scratch works on: the active jobs
/// it recomputes (no plan, not bound to keep their allocation, rigid
/// gangs kept) and a placer by `rule` on the free room plus what the
/// running ones among them hold.
pub(crate) fn from_scratch<'a>(
    view: &SimView<'a>,
    rule: PlacementRule,
) -> (Vec<JobView<'a>>, Placer<'a>) {
    let jobs = recomputed(view);
    let mut placer = Placer::new(view.instance(), view.free_all(), rule);
    for j in jobs.iter().filter(|j| j.is_running()) {
        placer.release(j.job(), j.placement());
    }
    (jobs, placer)
}

/// The active jobs a policy that reallocates from scratch recomputes: no
/// plan, not bound to keep their allocation (rigid gangs kept), in arrival
/// order.
pub(crate) fn recomputed<'a>(view: &SimView<'a>) -> Vec<JobView<'a>> {
    view.active()
        .filter(|j| !j.has_plan() && !keeps_allocation(j, true))
        .collect()
}

/// Whether a running job must keep its allocation untouched by a policy
/// that reallocates from scratch: it is not preemptible, it holds a plan,
/// or (when `gangs_fixed`) it is a rigid gang, which may neither be
/// resized nor resume anywhere but where it ran.
pub(crate) fn keeps_allocation(j: &JobView<'_>, gangs_fixed: bool) -> bool {
    j.is_running()
        && (!j.job().discipline.preemptible
            || j.has_plan()
            || (gangs_fixed && j.job().discipline.elasticity == Elasticity::Rigid))
}

/// The part of `placement` kept when the job shrinks to at most `workers`
/// workers and `ps` PSs: tasks are removed one at a time from the machine
/// where the job has the fewest of that kind (ties: the higher machine
/// id), so the job stays as consolidated as it was. Counts already within
/// the limits are kept whole.
pub(crate) fn trim(placement: &Placement, workers: u32, ps: u32) -> Placement {
    let mut v = placement.normalised();
    let total = v.total();
    for (excess, is_worker) in [
        (total.workers.saturating_sub(workers), true),
        (total.ps.saturating_sub(ps), false),
    ] {
        for _ in 0..excess {
            let count = |t: &Tasks| if is_worker { t.workers } else { t.ps };
            let pick = v
                .iter()
                .enumerate()
                .filter(|(_, (_, t))| count(t) > 0)
                .min_by(|a, b| count(&a.1.1).cmp(&count(&b.1.1)).then(b.0.cmp(&a.0)))
                .map(|(i, _)| i);
            let Some(i) = pick else { break };
            let t = &mut v[i].1;
            if is_worker {
                t.workers -= 1;
            } else {
                t.ps -= 1;
            }
        }
    }
    v.retain(|(_, t)| !t.is_empty());
    v
}

/// The actions that give each listed job its new placement (empty: a
/// pause). The simulator applies one answer as a transaction, so the order
/// does not matter and no cycle of moves needs breaking.
pub(crate) fn to_actions<'a>(changes: Vec<(JobView<'a>, Placement)>) -> Vec<Action> {
    changes
        .into_iter()
        .map(|(j, new)| {
            if new.is_empty() {
                Action::pause(j.id())
            } else {
                Action::run(j.id(), new)
            }
        })
        .collect()
}

/// Starts jobs at their requested size in the given order while they can be
/// placed (FIFO, SJF): the first job that does not fit stops the walk
/// (head-of-line blocking) unless `backfill`, which skips it.
pub(crate) fn start_in_order<'a>(
    view: &SimView<'a>,
    order: impl IntoIterator<Item = JobView<'a>>,
    rule: PlacementRule,
    backfill: bool,
) -> Vec<Action> {
    let sized = order.into_iter().map(|j| {
        let size = super::requested_tasks(j.job());
        (j, size)
    });
    start_sized_in_order(view, sized, rule, backfill)
}

/// [`start_in_order`] with each job's size given beside it.
pub(crate) fn start_sized_in_order<'a>(
    view: &SimView<'a>,
    order: impl IntoIterator<Item = (JobView<'a>, (u32, u32))>,
    rule: PlacementRule,
    backfill: bool,
) -> Vec<Action> {
    let mut placer = Placer::new(view.instance(), view.free_all(), rule);
    let mut actions = Vec::new();
    for (j, (w, p)) in order {
        match placer.place(j.job(), w, p) {
            Some(placement) => actions.push(Action::run(j.id(), placement)),
            None if backfill => {}
            None => break,
        }
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MachineId, Resources};
    use crate::placement::dominant_share;

    #[test]
    fn shares_and_merges() {
        let total = Resources::zero().gpus(4.0).memory(10.0);
        let d = Resources::zero().gpus(1.0).cpu_cores(5.0).memory(5.0);
        // CPU has no capacity and is ignored; memory dominates.
        assert_eq!(dominant_share(&d, &total), 0.5);
        let mut p = Placement::from(vec![(MachineId(1), Tasks::new(1, 0))]);
        p.merge(&Placement::from(vec![
            (MachineId(1), Tasks::new(1, 1)),
            (MachineId(0), Tasks::new(0, 0)),
            (MachineId(2), Tasks::new(2, 0)),
        ]));
        assert_eq!(
            p,
            vec![
                (MachineId(1), Tasks::new(2, 1)),
                (MachineId(2), Tasks::new(2, 0))
            ]
        );
        assert!(p.same_as(&Placement::from(vec![
            (MachineId(2), Tasks::new(2, 0)),
            (MachineId(0), Tasks::new(0, 0)),
            (MachineId(1), Tasks::new(2, 1))
        ])));
    }

    #[test]
    fn trim_removes_from_the_smallest_parts() {
        let p = Placement::from(vec![
            (MachineId(0), Tasks::new(3, 1)),
            (MachineId(1), Tasks::new(1, 1)),
            (MachineId(2), Tasks::new(1, 0)),
        ]);
        // Two workers off: machine 2 (1, higher id), then machine 1; then
        // one PS off: machine 1 (tie with machine 0, higher id).
        assert_eq!(trim(&p, 3, 1), vec![(MachineId(0), Tasks::new(3, 1))]);
        assert_eq!(
            trim(&p, 4, 2),
            vec![
                (MachineId(0), Tasks::new(3, 1)),
                (MachineId(1), Tasks::new(1, 1))
            ]
        );
        assert_eq!(trim(&p, 9, 9), p);
        assert!(trim(&p, 0, 0).is_empty());
    }
}

pub(crate) use crate::exact::Shortcut;

/// How often a decision took its shortcut, and how often the shortcut
/// handed over to the rule part-way: what the tests check is exercised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ShortcutUse {
    /// Decisions that took the shortcut.
    pub(crate) taken: u64,
    /// Hand-overs to the rule inside a decision.
    pub(crate) handed_over: u64,
    /// Steps the shortcut skipped at once (proportional share's bidders
    /// excluded together).
    pub(crate) skipped: u64,
    /// Repeated work the shortcut reused (proportional share's clearings
    /// reset from the previous one).
    pub(crate) reused: u64,
    /// Equal splits by whether every bidder got a share (`[0]`) or only
    /// some (`[1]`) (proportional share's uniform bids).
    pub(crate) splits: [u64; 2],
}

impl ShortcutUse {
    /// Adds `other`'s counts.
    pub(crate) fn add(&mut self, other: &ShortcutUse) {
        self.taken += other.taken;
        self.handed_over += other.handed_over;
        self.skipped += other.skipped;
        self.reused += other.reused;
        self.splits[0] += other.splits[0];
        self.splits[1] += other.splits[1];
    }
}

/// A baseline whose decision has an exact shortcut beside its rule: its
/// [`Policy::on_event`](crate::sim::Policy::on_event) is
/// `decide(view, Shortcut::Allowed, &mut ShortcutUse::default())`.
pub(crate) trait WithShortcut {
    /// The decision at an event, taking the shortcut only where
    /// `shortcut` allows it, counting its use in `used`.
    ///
    /// # Errors
    ///
    /// The policy's errors.
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>>;
}
