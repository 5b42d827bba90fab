//! Budget-based proportional share: a fixed-budget GPU market.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::rc::Rc;

use crate::model::{
    Architecture, Elasticity, Job, Machine, Resources, TaskKind, WorkerCounts, units,
};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::{keeps_allocation, to_actions, workers_fitting};
use super::placement::Span;
use super::{PlacementRule, Placer, ps_for, requested_tasks};

/// Fixed-budget proportional share: each job spends a fixed budget on the
/// GPUs of the machines it may use, and each machine's GPUs are split in
/// proportion to the bids (a budget proportional share in the style of
/// proportional-share markets such as Tycoon, Lai et al. 2005; no paper
/// fixes it here, so the rules are the crate's, stated below). Recomputed at every event; jobs are elastic.
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
/// 4. **Workers.** A job runs as many workers on the machine as its share
///    pays for (`⌊share / GPUs per worker⌋`), within its `max_workers`
///    overall and within what the machine's other resources (CPU, memory,
///    NIC, …) still hold. A ring-all-reduce job with a reserved bandwidth
///    `b` is charged `b` of NIC on every machine holding its workers once
///    they span two or more, as the simulator charges it: workers on a new
///    machine need `b` free there beside their own demand (and on the
///    job's first machine when they make it multi-machine), and the
///    reservation is given back when the job is left on one machine.
/// 5. **Unused shares.** GPUs a job cannot use — its cap is reached, the
///    machine lacks its other resources, or the share is smaller than one
///    worker — go back to the machine and are offered again, in a new
///    round, to the jobs that can still use them there, in proportion to
///    their bids. Rounds repeat while they place a worker. Whatever is left
///    after the last round stays idle until the next event.
/// 6. **Counts.** A ring-all-reduce job's workers are rounded down to an
///    allowed count; a parameter-server job gets [`ps_for`] PSs, each on
///    the lowest-index machine with room; if they do not fit it loses one
///    worker at a time until they do. Workers are dropped from the
///    machines where the job has the fewest (ties: the higher index), and
///    the GPUs they free stay idle until the next event.
/// 7. **Leaving the market.** A job left with no worker although it was
///    given GPUs — a rigid gang short of its size, a ring below its
///    smallest allowed count, PSs that fit nowhere — leaves the market
///    (the latest arrival among such jobs first) and the market clears
///    again from step 3 without it, so its GPUs go to the others; it
///    waits for the next event. (Without this, a few early gangs that can
///    never be paid in full would hold every share and nothing would run.)
///
/// **Who takes part.** Waiting and paused jobs, and running jobs that are
/// elastic and preemptible: all recomputed from scratch, so a running job
/// whose share shrinks to nothing is paused. A running job that is not
/// preemptible, or is a rigid gang, keeps its allocation and its GPUs are
/// not offered. A waiting rigid gang starts only when its shares pay for
/// its whole [`requested_tasks`] size (then it keeps that allocation
/// until it completes). Jobs whose workers need no GPU are outside the
/// market and start at their requested size, first fit, on what the
/// market leaves, if it fits. Jobs holding a plan are left alone. Each
/// changed allocation is stated directly (the simulator applies the answer
/// as one transaction); a job whose placement is unchanged gets no action.
///
/// # Parameters
///
/// * `budget` (default 1.0): each job's budget (a non-positive or
///   non-finite budget bids nothing, so such a job never runs — with
///   `weighted`, a job of weight 0 never runs);
/// * `weighted` (default `false`): multiply the budget by the job's
///   `weight`.
///
/// # Complexity
///
/// One clearing costs `O(K·H·J log J + J·H·p)` for `J` jobs on `H`
/// machines, `K` rounds (at most the number of workers placed plus one,
/// usually a handful) and `p` PSs per job; an event runs at most `J + 1`
/// clearings (usually one).
///
/// # Example
///
/// ```
/// use dmlsched::baselines::ProportionalShare;
/// let equal = ProportionalShare::default();
/// assert_eq!((equal.budget, equal.weighted), (1.0, false));
/// let by_weight = ProportionalShare { weighted: true, ..ProportionalShare::default() };
/// assert!(by_weight.weighted);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProportionalShare {
    /// Each job's budget.
    pub budget: f64,
    /// Multiply the budget by the job's weight.
    pub weighted: bool,
}

impl Default for ProportionalShare {
    fn default() -> Self {
        ProportionalShare {
            budget: 1.0,
            weighted: false,
        }
    }
}

/// One job in the market.
struct Bidder<'a> {
    view: JobView<'a>,
    /// GPUs per worker.
    gpu: f64,
    /// Most workers it may get.
    cap: u32,
    /// Bid per machine position (shared by the bidders of one shape).
    bids: Rc<[f64]>,
    /// Workers per machine position.
    workers: Vec<u32>,
    total: u32,
    saturated: bool,
    /// Machines whose other resources ran out for it.
    blocked: Vec<bool>,
    /// The machines holding its workers, and its ring reservation.
    span: Span,
    /// Left the market: it could not use what it was given.
    excluded: bool,
    /// Rank by (arrival, id), for ties between equal remainders.
    rank: usize,
}

impl Bidder<'_> {
    fn job(&self) -> &Job {
        self.view.job()
    }

    /// Drops `k` workers, from the machines where it has the fewest
    /// (ties: the higher index), giving their resources back to `pool`
    /// (with the ring reservation of a machine left without workers, and
    /// of the last one when the job is left on one machine).
    fn drop_workers(&mut self, k: u32, pool: &mut [Resources]) {
        for _ in 0..k.min(self.total) {
            let pick = self
                .workers
                .iter()
                .enumerate()
                .filter(|(_, w)| **w > 0)
                .min_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
                .map(|(h, _)| h);
            let Some(h) = pick else { return };
            self.workers[h] -= 1;
            self.total -= 1;
            pool[h] = pool[h].plus(&self.job().demand_for(1, 0));
            if self.workers[h] == 0 {
                self.span.vacate(pool, h);
            }
        }
    }
}

/// Splits `units` among `weights` in proportion, in whole units, by the
/// largest remainder; `order` ranks equal remainders (smaller first).
/// At most `2⁵³` units are split (counts stay exact; a machine with more
/// GPUs than that hands them out over several rounds).
fn largest_remainder<K: Ord>(units: u64, weights: &[f64], order: &[K]) -> Vec<u64> {
    let units = units.min(1 << 53);
    let sum: f64 = weights.iter().sum();
    if units == 0 || sum <= 0.0 || !sum.is_finite() {
        return vec![0; weights.len()];
    }
    let exact: Vec<f64> = weights.iter().map(|w| units as f64 * w / sum).collect();
    let mut shares: Vec<u64> = exact.iter().map(|x| x.floor().max(0.0) as u64).collect();
    let given: u64 = shares.iter().fold(0, |a, &b| a.saturating_add(b));
    // The spare units go one each to the `k` largest remainders (ties:
    // smaller `order`, then smaller index — a strict total order, so the
    // `k` first are the same set as after a stable sort): a selection, not
    // a sort.
    let k = usize::try_from(units.saturating_sub(given))
        .unwrap_or(usize::MAX)
        .min(weights.len());
    if k == 0 {
        return shares;
    }
    let mut rank: Vec<usize> = (0..weights.len()).collect();
    let before = |&a: &usize, &b: &usize| {
        let fa = exact[a] - exact[a].floor();
        let fb = exact[b] - exact[b].floor();
        fb.total_cmp(&fa)
            .then_with(|| order[a].cmp(&order[b]))
            .then(a.cmp(&b))
    };
    if k < rank.len() {
        rank.select_nth_unstable_by(k - 1, before);
    }
    for &i in &rank[..k] {
        shares[i] += 1;
    }
    shares
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
        let instance = view.instance();
        let machines = &instance.cluster().machines;
        let h_count = machines.len();
        let jobs: Vec<JobView<'_>> = view
            .active()
            .filter(|j| !j.has_plan() && !keeps_allocation(j, true))
            .collect();
        let mut scratch = Placer::new(instance, view.free_all(), PlacementRule::FirstFit);
        for j in jobs.iter().filter(|j| j.is_running()) {
            scratch.release(j.job(), j.placement());
        }
        let pool: Vec<Resources> = scratch.free().to_vec();

        let mut bidders: Vec<Bidder<'_>> = Vec::new();
        let mut outside: Vec<JobView<'_>> = Vec::new();
        // Jobs of one shape bid alike: their bids are computed once.
        let mut bids_by_shape: HashMap<BidShape, Rc<[f64]>> = HashMap::new();
        for &j in &jobs {
            let job = j.job();
            let Some(worker) = job.task_demand(TaskKind::Worker).copied() else {
                continue;
            };
            let budget = if self.weighted {
                self.budget * job.weight
            } else {
                self.budget
            };
            if worker.gpus <= 0.0 {
                outside.push(j);
                continue;
            }
            let bids = match bids_by_shape.entry(BidShape::of(job, &worker, budget)) {
                Entry::Occupied(e) => Rc::clone(e.get()),
                Entry::Vacant(e) => {
                    let bids = bids_of(machines, job, &worker, budget);
                    if e.key().shared {
                        e.insert(Rc::clone(&bids));
                    }
                    bids
                }
            };
            let cap = if job.discipline.elasticity == Elasticity::Rigid {
                requested_tasks(job).0
            } else {
                job.max_workers()
            };
            bidders.push(Bidder {
                view: j,
                gpu: worker.gpus,
                cap,
                bids,
                workers: vec![0; h_count],
                total: 0,
                saturated: false,
                blocked: vec![false; h_count],
                span: Span::new(job, []),
                excluded: false,
                rank: 0,
            });
        }
        let mut by_arrival: Vec<usize> = (0..bidders.len()).collect();
        by_arrival.sort_by(|&a, &b| {
            let (x, y) = (bidders[a].job(), bidders[b].job());
            x.arrival_s.total_cmp(&y.arrival_s).then(x.id.cmp(&y.id))
        });
        for (rank, i) in by_arrival.into_iter().enumerate() {
            bidders[i].rank = rank;
        }

        // Clear the market; a job left with nothing although it was given
        // GPUs leaves the market (the latest such arrival first) and the
        // market clears again without it.
        let base = pool;
        let mut pool;
        let mut results;
        loop {
            pool = base.clone();
            results = clear(instance, &mut bidders, &mut pool);
            let short = bidders
                .iter()
                .zip(&results)
                .rposition(|(b, (_, given))| *given && b.total == 0);
            match short {
                Some(i) => bidders[i].excluded = true,
                None => break,
            }
        }
        let mut placements: Vec<(JobView<'_>, Placement)> = bidders
            .iter()
            .zip(results)
            .map(|(b, (p, _))| (b.view, p))
            .collect();
        // Jobs outside the market, at their requested size, first fit.
        for j in outside {
            let (w, p) = requested_tasks(j.job());
            let mut placer = Placer::new(instance, &pool, PlacementRule::FirstFit);
            let placement = match placer.place(j.job(), w, p) {
                Some(placement) => {
                    pool = placer.free().to_vec();
                    placement
                }
                None => Placement::new(),
            };
            placements.push((j, placement));
        }

        // Ties in the action order follow arrival order.
        placements.sort_by_key(|(j, _)| {
            jobs.iter()
                .position(|k| k.id() == j.id())
                .unwrap_or(usize::MAX)
        });
        let changes: Vec<_> = placements
            .into_iter()
            .filter(|(j, p)| !j.placement().same_as(p))
            .collect();
        Ok(to_actions(changes))
    }
}

/// What a job's bids depend on besides the cluster: its worker demand and
/// budget (bit for bit), when it may use every machine (`shared`); the bids
/// of a job limited to some machines are computed for it alone.
#[derive(PartialEq, Eq, Hash)]
struct BidShape {
    worker: [u64; 5],
    budget: u64,
    shared: bool,
}

impl BidShape {
    fn of(job: &Job, worker: &Resources, budget: f64) -> Self {
        BidShape {
            worker: [
                worker.gpus.to_bits(),
                worker.cpu_cores.to_bits(),
                worker.memory_bytes.to_bits(),
                worker.storage_bytes.to_bits(),
                worker.nic_bps.to_bits(),
            ],
            budget: budget.to_bits(),
            shared: job.allowed_machines.is_none(),
        }
    }
}

/// Rules 1–2: `job`'s bid on each machine, `budget` split over the machines
/// it may use in proportion to their GPU capacity (all 0 when it has no
/// budget or no such machine). Depends on the job only through its allowed
/// machines, `worker` and `budget`.
fn bids_of(machines: &[Machine], job: &Job, worker: &Resources, budget: f64) -> Rc<[f64]> {
    let eligible: Vec<bool> = machines
        .iter()
        .map(|m| job.may_use(m.id) && m.can_host(TaskKind::Worker, worker) && m.capacity.gpus > 0.0)
        .collect();
    let capacity: f64 = machines
        .iter()
        .zip(&eligible)
        .filter(|(_, e)| **e)
        .map(|(m, _)| m.capacity.gpus)
        .sum();
    if budget > 0.0 && budget.is_finite() && capacity > 0.0 {
        machines
            .iter()
            .zip(&eligible)
            .map(|(m, e)| {
                if *e {
                    budget * m.capacity.gpus / capacity
                } else {
                    0.0
                }
            })
            .collect()
    } else {
        vec![0.0; machines.len()].into()
    }
}

/// One clearing of the market over `pool`: the rounds of shares, then the
/// counts, PSs and placements. Returns each bidder's placement and whether
/// it was given any worker before the counts were settled.
fn clear(
    instance: &crate::model::Instance,
    bidders: &mut [Bidder<'_>],
    pool: &mut [Resources],
) -> Vec<(Placement, bool)> {
    let machines = &instance.cluster().machines;
    for b in bidders.iter_mut() {
        b.workers.iter_mut().for_each(|w| *w = 0);
        b.blocked.iter_mut().for_each(|x| *x = false);
        b.total = 0;
        b.saturated = b.cap == 0 || b.excluded;
        b.span = Span::new(b.view.job(), []);
    }
    loop {
        let mut progress = false;
        for h in 0..pool.len() {
            let units = units::floor_tol(pool[h].gpus.max(0.0));
            if units < 1.0 {
                continue;
            }
            let here: Vec<usize> = (0..bidders.len())
                .filter(|&i| {
                    let b = &bidders[i];
                    !b.saturated && !b.blocked[h] && b.bids[h] > 0.0
                })
                .collect();
            if here.is_empty() {
                continue;
            }
            let weights: Vec<f64> = here.iter().map(|&i| bidders[i].bids[h]).collect();
            let order: Vec<usize> = here.iter().map(|&i| bidders[i].rank).collect();
            let shares = largest_remainder(units as u64, &weights, &order);
            for (&i, share) in here.iter().zip(shares) {
                if share == 0 {
                    continue;
                }
                let b = &mut bidders[i];
                let room = b.cap.saturating_sub(b.total);
                let paid = units::floor_tol(share as f64 / b.gpu);
                let paid = if paid >= f64::from(u32::MAX) {
                    u32::MAX
                } else {
                    paid as u32
                };
                let worker = b.job().demand_for(1, 0);
                // What is left for workers after the ring reservation they
                // would bring (none: it does not fit).
                let y = b
                    .span
                    .room(pool, h)
                    .map_or(0, |free| paid.min(workers_fitting(&worker, &free, room)));
                if y > 0 {
                    b.workers[h] += y;
                    b.total += y;
                    b.span
                        .charge(h, &b.job().demand_for(y, 0), true)
                        .apply(pool);
                    b.span.record(h, true);
                    progress = true;
                }
                if b.total >= b.cap {
                    b.saturated = true;
                } else if y < paid {
                    b.blocked[h] = true;
                }
            }
        }
        if !progress {
            break;
        }
    }

    // Counts, PSs and placements.
    let mut out = Vec::with_capacity(bidders.len());
    for b in bidders.iter_mut() {
        let given = b.total > 0;
        let job = b.view.job();
        let rigid = job.discipline.elasticity == Elasticity::Rigid;
        let keep = if rigid && b.total < b.cap {
            0
        } else {
            match &job.architecture {
                Architecture::RingAllReduce(r) => largest_allowed(&r.workers, b.total),
                Architecture::ParameterServer(_) => b.total,
            }
        };
        b.drop_workers(b.total.saturating_sub(keep), pool);
        let mut ps_placement = Placement::new();
        if b.total > 0 && job.max_ps() > 0 {
            loop {
                let ps = if rigid {
                    requested_tasks(job).1
                } else {
                    ps_for(job, b.total)
                };
                if let Some(p) = place_ps(instance, job, ps, pool) {
                    ps_placement = p;
                    break;
                }
                if rigid || b.total <= 1 {
                    b.drop_workers(b.total, pool);
                    break;
                }
                b.drop_workers(1, pool);
            }
        }
        let mut placement: Placement = b
            .workers
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(h, w)| (machines[h].id, Tasks::new(*w, 0)))
            .collect();
        if b.total > 0 {
            placement.merge(&ps_placement);
        } else {
            placement.clear();
        }
        out.push((placement, given));
    }
    out
}

/// The largest allowed worker count `≤ w` (0 if none).
fn largest_allowed(counts: &WorkerCounts, w: u32) -> u32 {
    match counts {
        WorkerCounts::Fixed(g) => {
            if *g <= w {
                *g
            } else {
                0
            }
        }
        WorkerCounts::Allowed(v) => v.iter().copied().filter(|&c| c <= w).max().unwrap_or(0),
    }
}

/// Places `ps` PSs of `job`, each on the lowest-index machine with room,
/// taking them from `pool`; `None` (and `pool` unchanged) if they do not
/// all fit.
fn place_ps(
    instance: &crate::model::Instance,
    job: &Job,
    ps: u32,
    pool: &mut [Resources],
) -> Option<Placement> {
    let unit = job.task_demand(TaskKind::ParameterServer).copied()?;
    let machines = &instance.cluster().machines;
    let mut free = pool.to_vec();
    let mut placement = Placement::new();
    for _ in 0..ps {
        let h = (0..machines.len()).find(|&h| {
            let m = &machines[h];
            job.may_use(m.id)
                && m.can_host(TaskKind::ParameterServer, &unit)
                && unit.fits_in(&free[h], crate::model::FIT_TOL)
        })?;
        free[h] = free[h].minus(&unit);
        placement.add(machines[h].id, Tasks::new(0, 1));
    }
    pool.copy_from_slice(&free);
    Some(placement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_remainder_splits_in_whole_units() {
        assert_eq!(largest_remainder(4, &[1.0, 1.0], &[0, 1]), vec![2, 2]);
        assert_eq!(largest_remainder(4, &[3.0, 1.0], &[0, 1]), vec![3, 1]);
        // 4 units among 3 equal bids: 1⅓ each, the spare unit to rank 0.
        assert_eq!(
            largest_remainder(4, &[1.0, 1.0, 1.0], &[2, 0, 1]),
            vec![1, 2, 1]
        );
        // Remainders .5 and .5 against .0: ranks break the tie.
        assert_eq!(
            largest_remainder(3, &[1.0, 1.0, 0.0], &[1, 0, 2]),
            vec![1, 2, 0]
        );
        assert_eq!(largest_remainder(0, &[1.0], &[0]), vec![0]);
        assert_eq!(largest_remainder(5, &[0.0, 0.0], &[0, 1]), vec![0, 0]);
        let s = largest_remainder(7, &[0.3, 0.3, 0.4], &[0, 1, 2]);
        assert_eq!(s.iter().sum::<u64>(), 7);
    }

    /// The split with a full stable sort of the remainders (the reference
    /// the selection must agree with).
    fn by_sorting(units: u64, weights: &[f64], order: &[usize]) -> Vec<u64> {
        let sum: f64 = weights.iter().sum();
        if units == 0 || sum <= 0.0 || !sum.is_finite() {
            return vec![0; weights.len()];
        }
        let exact: Vec<f64> = weights.iter().map(|w| units as f64 * w / sum).collect();
        let mut shares: Vec<u64> = exact.iter().map(|x| x.floor().max(0.0) as u64).collect();
        let mut left = units.saturating_sub(shares.iter().sum());
        let mut rank: Vec<usize> = (0..weights.len()).collect();
        rank.sort_by(|&a, &b| {
            let fa = exact[a] - exact[a].floor();
            let fb = exact[b] - exact[b].floor();
            fb.total_cmp(&fa).then_with(|| order[a].cmp(&order[b]))
        });
        for i in rank {
            if left == 0 {
                break;
            }
            shares[i] += 1;
            left -= 1;
        }
        shares
    }

    #[test]
    fn the_selection_splits_as_a_full_sort() {
        use rand::rngs::ChaCha8Rng;
        use rand::{RngExt, SeedableRng};
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..5_000 {
            let n = rng.random_range(1..40usize);
            // Few distinct weights and orders: many equal remainders and
            // equal orders.
            let weights: Vec<f64> = (0..n)
                .map(|_| f64::from(rng.random_range(0..4u32)) * 0.25)
                .collect();
            let order: Vec<usize> = (0..n).map(|_| rng.random_range(0..5usize)).collect();
            let units = rng.random_range(0..20u64);
            assert_eq!(
                largest_remainder(units, &weights, &order),
                by_sorting(units, &weights, &order),
                "{units} units over {weights:?} ranked {order:?}"
            );
        }
    }

    #[test]
    fn largest_allowed_rounds_down() {
        let v = WorkerCounts::Allowed(vec![1, 2, 4]);
        assert_eq!(largest_allowed(&v, 3), 2);
        assert_eq!(largest_allowed(&v, 9), 4);
        assert_eq!(largest_allowed(&v, 0), 0);
        assert_eq!(largest_allowed(&WorkerCounts::Fixed(4), 3), 0);
        assert_eq!(largest_allowed(&WorkerCounts::Fixed(4), 5), 4);
    }
}
