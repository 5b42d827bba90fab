//! Helpers shared by several baselines: the queue of jobs waiting for a
//! start, dominant shares, placement bookkeeping, and the actions of a
//! from-scratch reallocation.

use crate::model::{Elasticity, FIT_TOL, ResourceKind, Resources};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, JobStatus, JobView, SimView};

use super::{PlacementRule, Placer};

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

/// Whether a job waits for a start: it arrived and holds nothing (never
/// started, or paused) and holds no plan.
pub(crate) fn is_queued(j: &JobView<'_>) -> bool {
    matches!(j.status(), JobStatus::Waiting | JobStatus::Paused) && !j.has_plan()
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

/// `demand / total` per resource kind, over the kinds with positive total
/// capacity (0 for the others), in [`ResourceKind::ALL`] order.
pub(crate) fn normalised(demand: &Resources, total: &Resources) -> [f64; 5] {
    let mut out = [0.0; 5];
    for (slot, kind) in out.iter_mut().zip(ResourceKind::ALL) {
        let c = total.get(kind);
        if c > 0.0 {
            *slot = demand.get(kind) / c;
        }
    }
    out
}

/// The dominant share of `demand` against `total`: `max_r demand_r /
/// total_r` over the resource kinds with positive total capacity (DRF,
/// Ghodsi et al., NSDI 2011). 0 for a zero demand.
///
/// ```
/// use dmlsched::baselines::dominant_share;
/// use dmlsched::model::Resources;
/// let total = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(64e9).nic(1e10);
/// let two_workers = Resources::zero().gpus(2.0).cpu_cores(2.0).memory(8e9);
/// assert_eq!(dominant_share(&two_workers, &total), 0.5);
/// ```
pub fn dominant_share(demand: &Resources, total: &Resources) -> f64 {
    normalised(demand, total).into_iter().fold(0.0, f64::max)
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

/// The largest number of `job`'s workers that fit in `free` on a machine
/// (GPU and every other resource), at most `cap` (which bounds a worker
/// that needs nothing).
pub(crate) fn workers_fitting(worker: &Resources, free: &Resources, cap: u32) -> u32 {
    let mut n = f64::from(cap);
    for kind in ResourceKind::ALL {
        let d = worker.get(kind);
        if d > 0.0 {
            let f = free.get(kind);
            // As `Resources::fits_in`: `k·d ≤ f + tol·max(|f|, 1)`. The
            // count starts at most `cap`, so it stays an exact integer
            // (a tiny demand makes `f / d` huge or infinite) and each step
            // down changes it: the loop ends, after a step or two.
            let ok = |k: f64| k * d <= f + FIT_TOL * f.abs().max(1.0);
            let mut k = (f.max(0.0) / d).floor().min(n);
            if k < n && ok(k + 1.0) {
                k += 1.0;
            }
            while k > 0.0 && !ok(k) {
                k -= 1.0;
            }
            n = n.min(k);
        }
    }
    if n <= 0.0 { 0 } else { n as u32 }
}

/// Whether one worker fits: `workers_fitting(worker, free, cap) ≥ 1` for
/// every `cap ≥ 1` (the same test, `d ≤ f + tol·max(|f|, 1)` on each
/// resource the worker needs, without the divisions).
pub(crate) fn one_worker_fits(worker: &Resources, free: &Resources) -> bool {
    ResourceKind::ALL.into_iter().all(|kind| {
        let d = worker.get(kind);
        let f = free.get(kind);
        // As `workers_fitting`, a resource it does not need (`d > 0`
        // false) does not count.
        if d > 0.0 {
            d <= f + FIT_TOL * f.abs().max(1.0)
        } else {
            true
        }
    })
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
    use crate::model::MachineId;

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

    #[test]
    fn workers_fitting_counts_every_resource() {
        let w = Resources::zero().gpus(1.0).cpu_cores(2.0);
        assert_eq!(
            workers_fitting(&w, &Resources::zero().gpus(4.0).cpu_cores(5.0), 10),
            2
        );
        assert_eq!(
            workers_fitting(&w, &Resources::zero().gpus(4.0).cpu_cores(8.0), 3),
            3
        );
        assert_eq!(
            workers_fitting(&w, &Resources::zero().gpus(0.5).cpu_cores(8.0), 3),
            0
        );
        // A denormal demand: as many as the cap allows.
        let tiny = Resources::zero().gpus(5e-324);
        assert_eq!(
            workers_fitting(&tiny, &Resources::zero().gpus(4.0), u32::MAX),
            u32::MAX
        );
        assert!(workers_fitting(&tiny, &Resources::zero(), 7) <= 7);
        // 3 × 0.1 GPUs in 0.3 GPUs despite rounding.
        let tenth = Resources::zero().gpus(0.1);
        assert_eq!(workers_fitting(&tenth, &Resources::zero().gpus(0.3), 10), 3);
    }

    /// `one_worker_fits` answers as `workers_fitting(…) ≥ 1` for any cap,
    /// on demands and free room at and around the tolerance, negative,
    /// zero, tiny and huge.
    #[test]
    fn one_worker_fits_as_workers_fitting() {
        use rand::rngs::ChaCha8Rng;
        use rand::{RngExt, SeedableRng};
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let values = [
            0.0,
            -1e-12,
            -1.0,
            1e-300,
            5e-324,
            0.1,
            0.3,
            1.0,
            1.0 + 1e-10,
            1.0 - 1e-10,
            2.0,
            7.0,
            1e300,
        ];
        let pick = |rng: &mut ChaCha8Rng| {
            let mut r = Resources::zero();
            for kind in ResourceKind::ALL {
                *r.get_mut(kind) = values[rng.random_range(0..values.len())];
            }
            r
        };
        for _ in 0..20_000 {
            let (worker, free) = (pick(&mut rng), pick(&mut rng));
            let fits = one_worker_fits(&worker, &free);
            for cap in [1, 2, 5, u32::MAX] {
                assert_eq!(
                    fits,
                    workers_fitting(&worker, &free, cap) >= 1,
                    "{worker:?} in {free:?}, cap {cap}"
                );
            }
        }
    }
}
