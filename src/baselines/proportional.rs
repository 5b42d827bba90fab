//! Budget-based proportional share: a fixed-budget GPU market.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::rc::Rc;

use crate::model::{
    Architecture, Elasticity, Job, Machine, Resources, TaskKind, WorkerCounts, units,
};
use crate::schedule::Tasks;
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::{Shortcut, ShortcutUse, WithShortcut, recomputed};
use super::{ps_for, requested_tasks};
use crate::placement::PlacementRule;
use crate::placement::Span;
use crate::placement::realloc::Realloc;
use crate::placement::{one_worker_fits, workers_fitting};

mod fast;

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
///    an allowed count; a rigid gang gets its whole [`requested_tasks`]
///    size or nothing; a parameter-server job keeps them all, with
///    [`ps_for`] PSs. The GPUs of workers rounded away stay idle until the
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

/// One job in the market.
struct Bidder<'a> {
    view: JobView<'a>,
    /// Position among the jobs the event looks at (the entry in the
    /// reallocation).
    pos: usize,
    /// GPUs per worker.
    gpu: f64,
    /// What one worker is charged.
    unit: Resources,
    /// Most workers it may get.
    cap: u32,
    /// Bid per machine position (shared by the bidders of one shape).
    bids: Rc<[f64]>,
    /// Workers paid for so far in this clearing.
    total: u32,
    saturated: bool,
    /// Machine positions whose other resources ran out for it, sorted.
    blocked: Vec<usize>,
    /// Its ring reservation, and the machines where it was paid for
    /// workers when it reserves one (charged as the simulator charges a
    /// placed ring).
    span: Span,
    /// Left the market: it could not use what it was given.
    excluded: bool,
    /// Rank by (arrival, id), for ties between equal remainders.
    rank: usize,
    /// Given a share since the market's last reset (module `fast`).
    dirty: bool,
    /// While dirty: the most of `total + paid` over its takes (module
    /// `fast`).
    peak: u32,
}

impl Bidder<'_> {
    fn job(&self) -> &Job {
        self.view.job()
    }

    fn is_blocked(&self, h: usize) -> bool {
        self.blocked.binary_search(&h).is_ok()
    }

    fn is_rigid(&self) -> bool {
        self.job().discipline.elasticity == Elasticity::Rigid
    }

    /// Rule 6: the workers it keeps of those paid for.
    fn count(&self) -> u32 {
        if self.total == 0 || self.is_rigid() && self.total < self.cap {
            return 0;
        }
        match &self.job().architecture {
            Architecture::RingAllReduce(r) => largest_allowed(&r.workers, self.total),
            Architecture::ParameterServer(_) => self.total,
        }
    }

    /// Rule 8: the PSs that come with `workers` workers.
    fn ps_of(&self, workers: u32) -> u32 {
        let job = self.job();
        if self.is_rigid() {
            requested_tasks(job).1
        } else if job.max_ps() > 0 {
            ps_for(job, workers)
        } else {
            0
        }
    }

    /// Rule 8: places `workers` of its workers (and their PSs) on `r`,
    /// losing workers while they do not fit; whether it placed any.
    fn place(&self, r: &mut Realloc<'_>, mut workers: u32) -> bool {
        let job = self.job();
        let rigid = self.is_rigid();
        let ps_of = |workers: u32| self.ps_of(workers);
        // A running job whose counts do not change keeps its placement if
        // it is still free.
        if workers > 0
            && self.view.tasks() == Tasks::new(workers, ps_of(workers))
            && r.keep(self.pos)
        {
            return true;
        }
        let mut tries = 0u32;
        while workers > 0 {
            if r.add(self.pos, workers, ps_of(workers)) {
                return true;
            }
            if rigid {
                return false;
            }
            tries += 1;
            let fewer = if tries > 32 { workers / 2 } else { workers - 1 };
            workers = match &job.architecture {
                Architecture::RingAllReduce(r) => largest_allowed(&r.workers, fewer),
                Architecture::ParameterServer(_) => fewer,
            };
        }
        false
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
        self.decide(view, Shortcut::Allowed, &mut ShortcutUse::default())
    }
}

impl WithShortcut for ProportionalShare {
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>> {
        let instance = view.instance();
        let jobs = recomputed(view);
        let mut realloc = Realloc::new(view, self.placement, 0, &jobs, &[]);
        // The market's GPUs: the free ones plus what the taking-part
        // running jobs hold.
        let base: Vec<Resources> = realloc.room().to_vec();
        let (mut bidders, outside) = self.bidders(&instance.cluster().machines, &jobs);
        let mut market = Market::new(&mut bidders, base.len(), shortcut);
        loop {
            // The paid bidders and their counts, in arrival order.
            let paid = market.clear_until_paid(&mut bidders, &base);
            // Where the paid workers go, in arrival order; a job that fits
            // with none leaves the market (the latest such arrival first)
            // and the market clears again without it.
            let mut unplaced = None;
            for &(i, count) in &paid {
                if count > 0 && !bidders[i].place(&mut realloc, count) {
                    unplaced = Some(i);
                }
            }
            match unplaced {
                Some(i) => {
                    bidders[i].excluded = true;
                    if market.fast() {
                        // The next clearings that would each exclude the
                        // bidder after it, all at once.
                        market.exclude_alike(&mut bidders, i);
                        realloc.restart();
                    } else {
                        realloc = Realloc::new(view, self.placement, 0, &jobs, &[]);
                    }
                }
                None => break,
            }
        }
        // The jobs outside the market, at their requested size.
        for pos in outside {
            let (w, p) = requested_tasks(jobs[pos].job());
            realloc.add(pos, w, p);
        }
        used.add(&market.used);
        Ok(realloc.into_actions())
    }
}

impl ProportionalShare {
    /// Rules 1–2: the bidders among `jobs`, and the positions of the jobs
    /// whose workers need no GPU (outside the market).
    fn bidders<'a>(
        &self,
        machines: &[Machine],
        jobs: &[JobView<'a>],
    ) -> (Vec<Bidder<'a>>, Vec<usize>) {
        let mut bidders: Vec<Bidder<'_>> = Vec::with_capacity(jobs.len());
        let mut outside = Vec::new();
        // Jobs of one shape bid alike: their bids are computed once.
        let mut bids_by_shape: HashMap<BidShape, Rc<[f64]>> = HashMap::new();
        let mut last: Option<(BidShape, Rc<[f64]>)> = None;
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
                outside.push(pos);
                continue;
            }
            let shape = BidShape::of(job, &worker, budget);
            let bids = match &last {
                // Consecutive jobs usually share a shape.
                Some((s, bids)) if *s == shape => Rc::clone(bids),
                _ => {
                    let bids = match bids_by_shape.entry(shape.clone()) {
                        Entry::Occupied(e) => Rc::clone(e.get()),
                        Entry::Vacant(e) => {
                            let bids = bids_of(machines, job, &worker, budget);
                            if e.key().shared {
                                e.insert(Rc::clone(&bids));
                            }
                            bids
                        }
                    };
                    if shape.shared {
                        last = Some((shape, Rc::clone(&bids)));
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
                unit: job.demand_for(1, 0),
                cap,
                bids,
                total: 0,
                saturated: false,
                blocked: Vec::new(),
                span: Span::new(job, []),
                excluded: false,
                rank: 0,
                dirty: false,
                peak: 0,
            });
        }
        (bidders, outside)
    }
}

/// What a job's bids depend on besides the cluster: its worker demand and
/// budget (bit for bit), when it may use every machine (`shared`); the bids
/// of a job limited to some machines are computed for it alone.
#[derive(Clone, PartialEq, Eq, Hash)]
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
                    budget * (m.capacity.gpus / capacity)
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
    /// Skip pointers over the bidders saturated for the whole event (no
    /// cap, or left the market), as `next` but never undone by a reset
    /// (module `fast`), so a run of such bidders is jumped over at once.
    perm: Vec<usize>,
    /// Unsaturated bidders.
    unsaturated: usize,
    /// Per machine position, the unsaturated bidders blocked there.
    blocked_here: Vec<usize>,
    /// The bids of every bidder when they are all the same, bit for bit:
    /// then each machine's bidders are its unsaturated, unblocked ones
    /// (or none), their shares equal ([`equal_split`]).
    uniform: Option<Rc<[f64]>>,
    /// Sums of `n` equal bids, added as `Iterator::sum` adds them: per
    /// bid's bits (one per distinct machine capacity), the sums of 1, 2, …
    sums: Vec<(u64, Vec<f64>)>,
    /// The shares of one machine (a buffer).
    given: Vec<(usize, u64)>,
    /// The room left on each machine during a clearing (a buffer).
    pool: Vec<Resources>,
    /// Fast reset (module `fast`): the writes to `next` since the last
    /// reset, `(position, old value)`.
    next_log: Vec<(usize, usize)>,
    /// Fast reset: the ranks of the bidders given a share since the last
    /// reset.
    dirty: Vec<usize>,
    /// Fast reset: unsaturated bidders right after the last reset, if a
    /// full reset was made.
    reset_unsaturated: Option<usize>,
    /// Bidder `i` has rank `i` (module `fast`).
    in_order: bool,
    /// The last clearing (module `fast`): each equal split of a machine,
    /// `(machine position, units, bidders n, q, k)`.
    splits: Vec<(usize, u64, usize, u64, usize)>,
    /// The last clearing: the fewest unsaturated bidders it saw when
    /// looking for one to pay.
    low: usize,
    /// Whether the shortcuts (module `fast`, uniform bids) may be taken.
    shortcut: Shortcut,
    /// How the shortcuts were used.
    used: ShortcutUse,
}

impl Market {
    /// Ranks `bidders` by (arrival, id).
    fn new(bidders: &mut [Bidder<'_>], machines: usize, shortcut: Shortcut) -> Self {
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
        let in_order = by_rank.iter().enumerate().all(|(r, &i)| r == i);
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
        let uniform = uniform.filter(|_| shortcut == Shortcut::Allowed);
        Market {
            next: Vec::with_capacity(bidders.len() + 1),
            perm: Vec::with_capacity(bidders.len() + 1),
            by_rank,
            unsaturated: 0,
            blocked_here: vec![0; machines],
            uniform,
            sums: Vec::new(),
            given: Vec::new(),
            pool: Vec::new(),
            next_log: Vec::new(),
            dirty: Vec::new(),
            reset_unsaturated: None,
            in_order,
            splits: Vec::new(),
            low: usize::MAX,
            shortcut,
            used: ShortcutUse::default(),
        }
    }

    /// Rules 3–5, one clearing over the room of each machine (`pool`): the
    /// rounds of shares, leaving each bidder's paid workers in `total`.
    fn clear(&mut self, bidders: &mut [Bidder<'_>], pool: &mut [Resources]) {
        self.reset(bidders);
        self.splits.clear();
        self.low = usize::MAX;
        loop {
            let mut progress = false;
            for h in 0..pool.len() {
                self.low = self.low.min(self.unsaturated);
                // Nobody left to pay (as every machine would find).
                if self.unsaturated == 0 {
                    break;
                }
                let units = units::floor_tol(pool[h].gpus.max(0.0));
                if units < 1.0 {
                    continue;
                }
                let mut given = std::mem::take(&mut self.given);
                self.shares(bidders, h, units as u64, &mut given);
                for &(i, share) in &given {
                    progress |= self.take(&mut bidders[i], h, share, pool);
                }
                self.given = given;
            }
            if !progress {
                break;
            }
        }
    }

    /// Rules 3–7: clears the market over the GPUs `base` of each machine
    /// until no bidder is left with no worker although it was paid for
    /// some (such a bidder leaves the market, the latest arrival first);
    /// the bidders paid for a worker, in rank order, with their counts
    /// (rule 6; every other bidder's count is 0).
    fn clear_until_paid(
        &mut self,
        bidders: &mut [Bidder<'_>],
        base: &[Resources],
    ) -> Vec<(usize, u32)> {
        loop {
            let mut pool = std::mem::take(&mut self.pool);
            pool.clear();
            pool.extend_from_slice(base);
            self.clear(bidders, &mut pool);
            self.pool = pool;
            let paid = if self.fast() {
                self.paid_fast(bidders)
            } else {
                self.by_rank
                    .iter()
                    .filter(|&&i| bidders[i].total > 0)
                    .map(|&i| (i, bidders[i].count()))
                    .collect()
            };
            let short = paid.iter().rev().find(|&&(_, count)| count == 0);
            match short {
                Some(&(i, _)) => bidders[i].excluded = true,
                None => return paid,
            }
        }
    }

    /// Every bidder with nothing, unsaturated unless it may have no worker
    /// or left the market.
    fn reset(&mut self, bidders: &mut [Bidder<'_>]) {
        if self.fast() && self.reset_fast(bidders) {
            return;
        }
        self.next.clear();
        self.perm.clear();
        self.unsaturated = 0;
        self.blocked_here.iter_mut().for_each(|c| *c = 0);
        for (p, &i) in self.by_rank.iter().enumerate() {
            let b = &mut bidders[i];
            b.total = 0;
            b.blocked.clear();
            // A span records its machines only when it reserves.
            if b.span.reserves() {
                b.span = Span::new(b.view.job(), []);
            }
            b.saturated = b.cap == 0 || b.excluded;
            b.dirty = false;
            self.next.push(if b.saturated { p + 1 } else { p });
            self.perm.push(if b.saturated { p + 1 } else { p });
            self.unsaturated += usize::from(!b.saturated);
        }
        self.next.push(self.by_rank.len());
        self.perm.push(self.by_rank.len());
        self.next_log.clear();
        self.dirty.clear();
        self.reset_unsaturated = Some(self.unsaturated);
    }

    /// The first unsaturated rank position at or after `p`.
    fn find(&mut self, mut p: usize) -> usize {
        loop {
            while self.perm[p] != p {
                self.perm[p] = self.perm[self.perm[p]];
                p = self.perm[p];
            }
            if self.next[p] == p {
                return p;
            }
            self.next_log.push((p, self.next[p]));
            self.next[p] = self.next[self.next[p]];
            p = self.next[p];
        }
    }

    /// Rule 3 on machine position `h` with `units` whole GPUs: the bidders
    /// given a positive share, in bidder order, with their shares, into
    /// `out`.
    fn shares(
        &mut self,
        bidders: &[Bidder<'_>],
        h: usize,
        units: u64,
        out: &mut Vec<(usize, u64)>,
    ) {
        out.clear();
        let Some(w) = self.uniform.as_ref().map(|bids| bids[h]) else {
            *out = scan_shares(bidders, h, units);
            return;
        };
        let n = self.unsaturated - self.blocked_here[h];
        // As the scan's `bid > 0` (a NaN bid is no bid).
        if w.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return;
        }
        if n == 0 {
            self.splits.push((h, units, 0, 0, 0));
            return;
        }
        let (q, k) = equal_split(units, w, self.sum_of(w, n), n);
        self.splits.push((h, units, n, q, k));
        let given = if q == 0 { k } else { n };
        self.used.splits[usize::from(given < n)] += 1;
        let mut p = self.find(0);
        while out.len() < given && p < self.by_rank.len() {
            let i = self.by_rank[p];
            if !bidders[i].is_blocked(h) {
                out.push((i, q + u64::from(out.len() < k)));
            }
            p = self.find(p + 1);
        }
        out.sort_unstable_by_key(|&(i, _)| i);
    }

    /// The sum of `n ≥ 1` bids `w`, as `Iterator::sum` adds them.
    fn sum_of(&mut self, w: f64, n: usize) -> f64 {
        let bits = w.to_bits();
        let at = match self.sums.iter().position(|(b, _)| *b == bits) {
            Some(at) => at,
            None => {
                self.sums.push((bits, Vec::new()));
                self.sums.len() - 1
            }
        };
        let sums = &mut self.sums[at].1;
        while sums.len() < n {
            sums.push(sums.last().map_or(w, |s| s + w));
        }
        sums[n - 1]
    }

    /// Rules 4–5: `b` turns a share of `share` GPUs on machine position
    /// `h` into paid workers, within its cap and the machine's other
    /// resources (`pool`, charged as the simulator charges); whether it was
    /// paid for any.
    fn take(&mut self, b: &mut Bidder<'_>, h: usize, share: u64, pool: &mut [Resources]) -> bool {
        if !b.dirty {
            b.dirty = true;
            b.peak = 0;
            self.dirty.push(b.rank);
        }
        let room = b.cap.saturating_sub(b.total);
        let paid = units::floor_tol(share as f64 / b.gpu);
        let paid = if paid >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            paid as u32
        };
        b.peak = b.peak.max(b.total.saturating_add(paid));
        let y = if !b.span.reserves() && paid.min(room) == 1 {
            // The usual case: one worker's share.
            u32::from(one_worker_fits(&b.unit, &pool[h]))
        } else {
            // What is left for workers after the ring reservation they
            // would bring (none: it does not fit).
            b.span
                .room(pool, h)
                .map_or(0, |free| paid.min(workers_fitting(&b.unit, &free, room)))
        };
        if y > 0 {
            b.total += y;
            let demand = if y == 1 {
                b.unit
            } else {
                b.job().demand_for(y, 0)
            };
            b.span.charge(h, &demand, true).apply(pool);
            if b.span.reserves() {
                b.span.record(h, true);
            }
        }
        if b.total >= b.cap {
            b.saturated = true;
            self.next_log.push((b.rank, self.next[b.rank]));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::fixtures::{Busy, assert_same_runs, busy_workload};
    use rand::rngs::ChaCha8Rng;
    use rand::seq::SliceRandom;
    use rand::{RngExt, SeedableRng};

    /// Equal bids split as [`largest_remainder`] splits them.
    #[test]
    fn equal_bids_split_as_the_largest_remainder() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let bids = [1.0 / 256.0, 1.0 / 3.0, 0.1, 2.0, 1.0 / 255.0, 1e-300, 1e300];
        let mut market = Market::new(&mut [], 0, Shortcut::Allowed);
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
        let mut splits = [0; 2];
        for seed in 0..4 {
            for busy in kinds {
                for machines in [3, 6] {
                    let used = assert_same_runs(
                        &busy_workload(seed, machines, busy),
                        || ProportionalShare {
                            weighted: busy.weighted,
                            ..ProportionalShare::default()
                        },
                        &format!("seed {seed}, {machines} machines, {busy:?}"),
                    );
                    splits[0] += used.splits[0];
                    splits[1] += used.splits[1];
                }
            }
        }
        let [all, some] = splits;
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
