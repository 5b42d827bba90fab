//! Budget-based proportional share: a fixed-budget GPU market.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::rc::Rc;

use crate::model::{
    Architecture, Elasticity, Job, Machine, Resources, TaskKind, WorkerCounts, units,
};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::{from_scratch, to_actions, workers_fitting};
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
/// For `J` jobs on `H` machines, `K` rounds (at most the number of workers
/// placed plus one, usually two) and `p` PSs per job: when every job bids
/// alike (the same budget and machines, the usual case) each machine
/// finds its bidders in arrival order without looking at the others, and
/// one clearing costs `O(J + K·H + g·(log J + p·H))` for `g` shares given;
/// otherwise `O(K·H·J + g·p·H)`. An event runs at most `J + 1` clearings
/// (usually one).
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
    /// Position among the jobs the event looks at (the order of the
    /// actions).
    pos: usize,
    /// GPUs per worker.
    gpu: f64,
    /// Most workers it may get.
    cap: u32,
    /// Bid per machine position (shared by the bidders of one shape).
    bids: Rc<[f64]>,
    /// Workers per machine position, for the positions holding any (in no
    /// particular order).
    workers: Vec<(usize, u32)>,
    total: u32,
    saturated: bool,
    /// Machine positions whose other resources ran out for it, sorted.
    blocked: Vec<usize>,
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

    fn is_blocked(&self, h: usize) -> bool {
        self.blocked.binary_search(&h).is_ok()
    }

    /// Adds `y` workers on machine position `h` to its count.
    fn add_workers(&mut self, h: usize, y: u32) {
        match self.workers.iter_mut().find(|(p, _)| *p == h) {
            Some((_, w)) => *w += y,
            None => self.workers.push((h, y)),
        }
        self.total += y;
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
                .min_by(|(_, a), (_, b)| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|(i, _)| i);
            let Some(i) = pick else { return };
            let h = self.workers[i].0;
            self.workers[i].1 -= 1;
            self.total -= 1;
            pool[h] = pool[h].plus(&self.job().demand_for(1, 0));
            if self.workers[i].1 == 0 {
                self.workers.swap_remove(i);
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

/// [`largest_remainder`] of `units` among `n` bit-identical weights whose
/// sum (as `Iterator::sum` adds them) is `sum`, with distinct orders:
/// `(q, k)` — every weight gets `q` units and the `k` smallest orders one
/// more.
///
/// Exactness: every weight's exact share `units · w / sum` is the same
/// float, so every floor is `q`, `given` is `n·q` (saturating, as the fold
/// of saturating additions), and every remainder is the same float: the
/// `k` spare units go to the `k` smallest orders, the tie-break.
fn equal_split(units: u64, w: f64, sum: f64, n: usize) -> (u64, usize) {
    let units = units.min(1 << 53);
    if units == 0 || sum <= 0.0 || !sum.is_finite() || n == 0 {
        return (0, 0);
    }
    let q = (units as f64 * w / sum).floor().max(0.0) as u64;
    let given = q.saturating_mul(n as u64);
    let k = usize::try_from(units.saturating_sub(given))
        .unwrap_or(usize::MAX)
        .min(n);
    (q, k)
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
        // The free room of the market: the free capacities plus what the
        // taking-part running jobs hold.
        let (jobs, scratch) = from_scratch(view, PlacementRule::FirstFit);
        let base = scratch.free().to_vec();
        let (mut bidders, outside) = self.bidders(&instance.cluster().machines, &jobs);
        let mut market = Market::new(&mut bidders, base.len());

        // Clear the market; a job left with nothing although it was given
        // GPUs leaves the market (the latest such arrival first) and the
        // market clears again without it.
        let mut pool;
        let mut results;
        loop {
            pool = base.clone();
            results = market.clear(instance, &mut bidders, &mut pool);
            let short = bidders
                .iter()
                .zip(&results)
                .rposition(|(b, (_, given))| *given && b.total == 0);
            match short {
                Some(i) => bidders[i].excluded = true,
                None => break,
            }
        }
        let mut changes: Vec<(usize, JobView<'_>, Placement)> = bidders
            .iter()
            .zip(results)
            .filter(|(b, (p, _))| !b.view.placement().same_as(p))
            .map(|(b, (p, _))| (b.pos, b.view, p))
            .collect();
        // Jobs outside the market, at their requested size, first fit.
        for (pos, j) in outside {
            let (w, p) = requested_tasks(j.job());
            let mut placer = Placer::new(instance, &pool, PlacementRule::FirstFit);
            let placement = match placer.place(j.job(), w, p) {
                Some(placement) => {
                    pool = placer.free().to_vec();
                    placement
                }
                None => Placement::new(),
            };
            if !j.placement().same_as(&placement) {
                changes.push((pos, j, placement));
            }
        }
        // Ties in the action order follow arrival order.
        changes.sort_by_key(|(pos, _, _)| *pos);
        Ok(to_actions(
            changes.into_iter().map(|(_, j, p)| (j, p)).collect(),
        ))
    }
}

impl ProportionalShare {
    /// Rules 1–2: the bidders among `jobs` (with their positions), and the
    /// jobs whose workers need no GPU (outside the market).
    fn bidders<'a>(
        &self,
        machines: &[Machine],
        jobs: &[JobView<'a>],
    ) -> (Vec<Bidder<'a>>, Vec<(usize, JobView<'a>)>) {
        let mut bidders: Vec<Bidder<'_>> = Vec::new();
        let mut outside = Vec::new();
        // Jobs of one shape bid alike: their bids are computed once.
        let mut bids_by_shape: HashMap<BidShape, Rc<[f64]>> = HashMap::new();
        for (pos, &j) in jobs.iter().enumerate() {
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
                outside.push((pos, j));
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
                pos,
                gpu: worker.gpus,
                cap,
                bids,
                workers: Vec::new(),
                total: 0,
                saturated: false,
                blocked: Vec::new(),
                span: Span::new(job, []),
                excluded: false,
                rank: 0,
            });
        }
        (bidders, outside)
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

/// The bidders' rank order, and what lets each machine find its bidders
/// in a round without looking at every bidder.
struct Market {
    /// Bidder indices by rank.
    by_rank: Vec<usize>,
    /// Skip pointers over `by_rank` (one more, a sentinel): `next[p] == p`
    /// while the bidder of rank `p` is not saturated, otherwise a later
    /// position (path halving), so the unsaturated bidders are visited in
    /// rank order without the saturated ones.
    next: Vec<usize>,
    /// Unsaturated bidders.
    unsaturated: usize,
    /// Per machine position, the unsaturated bidders blocked there.
    blocked_here: Vec<usize>,
    /// The bids of every bidder when they are all the same, bit for bit:
    /// then each machine's bidders are its unsaturated, unblocked ones
    /// (or none), their shares equal ([`equal_split`]).
    uniform: Option<Rc<[f64]>>,
    /// Sums of `n` equal bids, added as `Iterator::sum` adds them: per
    /// bid's bits, `sums[w][n - 1]`.
    sums: HashMap<u64, Vec<f64>>,
}

impl Market {
    /// Ranks `bidders` by (arrival, id).
    fn new(bidders: &mut [Bidder<'_>], machines: usize) -> Self {
        let mut by_rank: Vec<usize> = (0..bidders.len()).collect();
        let before = |a: &Bidder<'_>, b: &Bidder<'_>| {
            let (x, y) = (a.job(), b.job());
            x.arrival_s.total_cmp(&y.arrival_s).then(x.id.cmp(&y.id))
        };
        // The simulator's active jobs usually come in arrival order.
        if !bidders.is_sorted_by(|a, b| before(a, b).is_le()) {
            by_rank.sort_by(|&a, &b| before(&bidders[a], &bidders[b]));
        }
        for (rank, &i) in by_rank.iter().enumerate() {
            bidders[i].rank = rank;
        }
        let uniform = bidders.first().and_then(|first| {
            let same = |b: &Bidder<'_>| {
                Rc::ptr_eq(&b.bids, &first.bids)
                    || b.bids
                        .iter()
                        .zip(first.bids.iter())
                        .all(|(x, y)| x.to_bits() == y.to_bits())
            };
            bidders.iter().all(same).then(|| Rc::clone(&first.bids))
        });
        #[cfg(test)]
        let uniform = uniform.filter(|_| !tests::SCAN_ONLY.with(std::cell::Cell::get));
        Market {
            next: Vec::with_capacity(bidders.len() + 1),
            by_rank,
            unsaturated: 0,
            blocked_here: vec![0; machines],
            uniform,
            sums: HashMap::new(),
        }
    }

    /// Rules 3–6, one clearing over `pool`: the rounds of shares, then the
    /// counts, PSs and placements. Returns each bidder's placement and
    /// whether it was given any worker before the counts were settled.
    fn clear(
        &mut self,
        instance: &crate::model::Instance,
        bidders: &mut [Bidder<'_>],
        pool: &mut [Resources],
    ) -> Vec<(Placement, bool)> {
        self.reset(bidders);
        loop {
            let mut progress = false;
            for h in 0..pool.len() {
                let units = units::floor_tol(pool[h].gpus.max(0.0));
                if units < 1.0 {
                    continue;
                }
                for (i, share) in self.shares(bidders, h, units as u64) {
                    progress |= self.take(&mut bidders[i], h, share, pool);
                }
            }
            if !progress {
                break;
            }
        }
        bidders
            .iter_mut()
            .map(|b| settle(instance, b, pool))
            .collect()
    }

    /// Every bidder with nothing, unsaturated unless it has no room or left
    /// the market.
    fn reset(&mut self, bidders: &mut [Bidder<'_>]) {
        self.next.clear();
        self.unsaturated = 0;
        self.blocked_here.iter_mut().for_each(|c| *c = 0);
        for (p, &i) in self.by_rank.iter().enumerate() {
            let b = &mut bidders[i];
            b.workers.clear();
            b.blocked.clear();
            b.total = 0;
            b.saturated = b.cap == 0 || b.excluded;
            b.span = Span::new(b.view.job(), []);
            self.next.push(if b.saturated { p + 1 } else { p });
            self.unsaturated += usize::from(!b.saturated);
        }
        self.next.push(self.by_rank.len());
    }

    /// The first unsaturated rank position at or after `p`.
    fn find(&mut self, mut p: usize) -> usize {
        while self.next[p] != p {
            self.next[p] = self.next[self.next[p]];
            p = self.next[p];
        }
        p
    }

    /// Rule 3 on machine position `h` with `units` whole GPUs: the bidders
    /// given a positive share, in bidder order, with their shares.
    fn shares(&mut self, bidders: &[Bidder<'_>], h: usize, units: u64) -> Vec<(usize, u64)> {
        let Some(w) = self.uniform.as_ref().map(|bids| bids[h]) else {
            return scan_shares(bidders, h, units);
        };
        let n = self.unsaturated - self.blocked_here[h];
        // As the scan's `bid > 0` (a NaN bid is no bid).
        if w.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || n == 0 {
            return Vec::new();
        }
        let (q, k) = equal_split(units, w, self.sum_of(w, n), n);
        let given = if q == 0 { k } else { n };
        #[cfg(test)]
        tests::EQUAL.with(|e| {
            let mut c = e.get();
            c[usize::from(given < n)] += 1;
            e.set(c);
        });
        let mut out = Vec::with_capacity(given);
        let mut p = self.find(0);
        while out.len() < given && p < self.by_rank.len() {
            let i = self.by_rank[p];
            if !bidders[i].is_blocked(h) {
                out.push((i, q + u64::from(out.len() < k)));
            }
            p = self.find(p + 1);
        }
        out.sort_unstable_by_key(|&(i, _)| i);
        out
    }

    /// The sum of `n ≥ 1` bids `w`, as `Iterator::sum` adds them.
    fn sum_of(&mut self, w: f64, n: usize) -> f64 {
        let sums = self.sums.entry(w.to_bits()).or_default();
        while sums.len() < n {
            sums.push(sums.last().map_or(w, |s| s + w));
        }
        sums[n - 1]
    }

    /// Rule 4 (and 5's bookkeeping): `b` turns a share of `share` GPUs on
    /// machine position `h` into workers, within its cap and the machine's
    /// other resources; whether it placed any.
    fn take(&mut self, b: &mut Bidder<'_>, h: usize, share: u64, pool: &mut [Resources]) -> bool {
        let room = b.cap.saturating_sub(b.total);
        let paid = units::floor_tol(share as f64 / b.gpu);
        let paid = if paid >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            paid as u32
        };
        let worker = b.job().demand_for(1, 0);
        // What is left for workers after the ring reservation they would
        // bring (none: it does not fit).
        let y = b
            .span
            .room(pool, h)
            .map_or(0, |free| paid.min(workers_fitting(&worker, &free, room)));
        if y > 0 {
            b.add_workers(h, y);
            b.span
                .charge(h, &b.job().demand_for(y, 0), true)
                .apply(pool);
            b.span.record(h, true);
        }
        if b.total >= b.cap {
            b.saturated = true;
            self.next[b.rank] = b.rank + 1;
            self.unsaturated -= 1;
            for &q in &b.blocked {
                self.blocked_here[q] -= 1;
            }
        } else if y < paid
            && let Err(at) = b.blocked.binary_search(&h)
        {
            b.blocked.insert(at, h);
            self.blocked_here[h] += 1;
        }
        y > 0
    }
}

/// Rule 3 on machine position `h` by looking at every bidder (bids that
/// differ between bidders): the bidders given a positive share, in bidder
/// order, with their shares.
fn scan_shares(bidders: &[Bidder<'_>], h: usize, units: u64) -> Vec<(usize, u64)> {
    let here: Vec<usize> = (0..bidders.len())
        .filter(|&i| {
            let b = &bidders[i];
            !b.saturated && !b.is_blocked(h) && b.bids[h] > 0.0
        })
        .collect();
    if here.is_empty() {
        return Vec::new();
    }
    let weights: Vec<f64> = here.iter().map(|&i| bidders[i].bids[h]).collect();
    let order: Vec<usize> = here.iter().map(|&i| bidders[i].rank).collect();
    let shares = largest_remainder(units, &weights, &order);
    here.into_iter()
        .zip(shares)
        .filter(|&(_, s)| s > 0)
        .collect()
}

/// Rule 6 for one bidder after the rounds: its count, PSs and placement,
/// and whether it was given any worker before.
fn settle(
    instance: &crate::model::Instance,
    b: &mut Bidder<'_>,
    pool: &mut [Resources],
) -> (Placement, bool) {
    if b.total == 0 {
        return (Placement::new(), false);
    }
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
    if b.total == 0 {
        return (Placement::new(), true);
    }
    let machines = &instance.cluster().machines;
    b.workers.sort_unstable();
    let mut placement: Placement = b
        .workers
        .iter()
        .map(|&(h, w)| (machines[h].id, Tasks::new(w, 0)))
        .collect();
    placement.merge(&ps_placement);
    (placement, true)
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
    // The capacities taken, to put back as they were if one does not fit.
    let mut taken: Vec<(usize, Resources)> = Vec::new();
    let mut placement = Placement::new();
    for _ in 0..ps {
        let fits = |h: &usize| {
            let m = &machines[*h];
            job.may_use(m.id)
                && m.can_host(TaskKind::ParameterServer, &unit)
                && unit.fits_in(&pool[*h], crate::model::FIT_TOL)
        };
        let Some(h) = (0..machines.len()).find(fits) else {
            for (h, was) in taken.into_iter().rev() {
                pool[h] = was;
            }
            return None;
        };
        taken.push((h, pool[h]));
        pool[h] = pool[h].minus(&unit);
        placement.add(machines[h].id, Tasks::new(0, 1));
    }
    Some(placement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::fixtures::{Busy, assert_same_runs, busy_workload};
    use rand::rngs::ChaCha8Rng;
    use rand::seq::SliceRandom;
    use rand::{RngExt, SeedableRng};
    use std::cell::Cell;

    thread_local! {
        /// Forces every machine's shares to be found by looking at every
        /// bidder (the reference).
        pub(super) static SCAN_ONLY: Cell<bool> = const { Cell::new(false) };
        /// Machines whose shares were found from the rank order, with
        /// every bidder given (`[0]`) or only some (`[1]`).
        pub(super) static EQUAL: Cell<[u64; 2]> = const { Cell::new([0; 2]) };
    }

    /// Equal bids split as [`largest_remainder`] splits them.
    #[test]
    fn equal_bids_split_as_the_largest_remainder() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let bids = [1.0 / 256.0, 1.0 / 3.0, 0.1, 2.0, 1.0 / 255.0, 1e-300, 1e300];
        let mut market = Market::new(&mut [], 0);
        for _ in 0..3_000 {
            let n = rng.random_range(1..300usize);
            let w = bids[rng.random_range(0..bids.len())];
            let units = if rng.random_bool(0.1) {
                rng.random_range(0..u64::MAX)
            } else {
                rng.random_range(0..40u64)
            };
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut rng);
            let weights = vec![w; n];
            let sum = market.sum_of(w, n);
            assert_eq!(
                sum.to_bits(),
                weights.iter().sum::<f64>().to_bits(),
                "{n} × {w}"
            );
            let (q, k) = equal_split(units, w, sum, n);
            let want = largest_remainder(units, &weights, &order);
            let got: Vec<u64> = order.iter().map(|&o| q + u64::from(o < k)).collect();
            assert_eq!(got, want, "{units} units over {n} bids of {w}");
        }
    }

    /// Finding each machine's bidders from the rank order decides exactly
    /// as looking at every bidder, on busy clusters (more bidders than
    /// GPUs, and fewer), with gangs, rings, PS jobs and reservations.
    #[test]
    fn equal_bids_decide_as_the_scan() {
        let kinds = [
            Busy::default(),
            Busy {
                fraction: true,
                ..Busy::default()
            },
            Busy {
                restricted: true,
                ..Busy::default()
            },
            Busy {
                weighted: true,
                ..Busy::default()
            },
        ];
        EQUAL.with(|e| e.set([0; 2]));
        for seed in 0..4 {
            for busy in kinds {
                for machines in [3, 6] {
                    assert_same_runs(
                        &busy_workload(seed, machines, busy),
                        || ProportionalShare {
                            weighted: busy.weighted,
                            ..ProportionalShare::default()
                        },
                        |scan| SCAN_ONLY.with(|s| s.set(scan)),
                        &format!("seed {seed}, {machines} machines, {busy:?}"),
                    );
                }
            }
        }
        let [all, some] = EQUAL.with(Cell::get);
        assert!(
            all > 0 && some > 0,
            "equal shares to all {all}, to some {some}"
        );
    }

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
