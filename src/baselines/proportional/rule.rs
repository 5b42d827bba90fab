//! The rule of [`ProportionalShare`], as its docs state it: budgets and
//! bids (rules 1–2), the clearings of the market (rules 3–7: shares by the
//! largest remainder, paid workers, unused shares offered again, jobs left
//! with nothing leaving the market) and the placement of the paid workers
//! (rule 8). The market's bookkeeping (rank order, skip pointers, equal
//! splits of equal bids) is in [`market`](super::market), the fast path of
//! repeated clearings and the bids shared by jobs of one shape in
//! [`fast`](super::fast).

use std::rc::Rc;

use crate::model::{
    Architecture, Elasticity, Job, Machine, Resources, TaskKind, WorkerCounts, units,
};
use crate::placement::realloc::Realloc;
use crate::placement::{Span, one_worker_fits, workers_fitting};
use crate::schedule::Tasks;
use crate::sim::{Action, JobView, SimView};

use super::super::common::{Shortcut, ShortcutUse, recomputed};
use super::super::{ps_for, requested_tasks};
use super::ProportionalShare;
use super::fast::Bids;
use super::market::{Market, Touched};

/// One job in the market.
pub(super) struct Bidder<'a> {
    pub(super) view: JobView<'a>,
    /// Position among the jobs the event looks at (the entry in the
    /// reallocation).
    pub(super) pos: usize,
    /// GPUs per worker.
    pub(super) gpu: f64,
    /// What one worker is charged.
    pub(super) unit: Resources,
    /// Most workers it may get.
    pub(super) cap: u32,
    /// Bid per machine position (shared by the bidders of one shape).
    pub(super) bids: Rc<[f64]>,
    /// Workers paid for so far in this clearing.
    pub(super) total: u32,
    pub(super) saturated: bool,
    /// Machine positions whose other resources ran out for it, sorted.
    pub(super) blocked: Vec<usize>,
    /// Its ring reservation, and the machines where it was paid for
    /// workers when it reserves one (charged as the simulator charges a
    /// placed ring).
    pub(super) span: Span,
    /// Left the market: it could not use what it was given.
    pub(super) excluded: bool,
    /// Rank by (arrival, id), for ties between equal remainders.
    pub(super) rank: usize,
    /// The market's record of its takes since the last reset, for the
    /// fast path of repeated clearings (module `fast`).
    pub(super) touched: Touched,
}

impl Bidder<'_> {
    pub(super) fn job(&self) -> &Job {
        self.view.job()
    }

    pub(super) fn is_blocked(&self, h: usize) -> bool {
        self.blocked.binary_search(&h).is_ok()
    }

    pub(super) fn is_rigid(&self) -> bool {
        self.job().discipline.elasticity == Elasticity::Rigid
    }

    /// Rule 6: the workers it keeps of those paid for.
    pub(super) fn count(&self) -> u32 {
        if self.total == 0 || self.is_rigid() && self.total < self.cap {
            return 0;
        }
        match &self.job().architecture {
            Architecture::RingAllReduce(r) => largest_allowed(&r.workers, self.total),
            Architecture::ParameterServer(_) => self.total,
        }
    }

    /// Rule 8: the PSs that come with `workers` workers.
    pub(super) fn ps_of(&self, workers: u32) -> u32 {
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
    pub(super) fn place(&self, r: &mut Realloc<'_>, mut workers: u32) -> bool {
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

    /// Rules 4–5: turns a share of `share` GPUs on machine position `h`
    /// into paid workers, within its cap and the machine's other resources
    /// (`pool`, charged as the simulator charges): the workers the share
    /// pays for, and how many it got.
    pub(super) fn pay(&mut self, h: usize, share: u64, pool: &mut [Resources]) -> (u32, u32) {
        let room = self.cap.saturating_sub(self.total);
        let paid = units::floor_tol(share as f64 / self.gpu);
        let paid = if paid >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            paid as u32
        };
        let y = if !self.span.reserves() && paid.min(room) == 1 {
            // The usual case: one worker's share.
            u32::from(one_worker_fits(&self.unit, &pool[h]))
        } else {
            // What is left for workers after the ring reservation they
            // would bring (none: it does not fit).
            self.span
                .room(pool, h)
                .map_or(0, |free| paid.min(workers_fitting(&self.unit, &free, room)))
        };
        if y > 0 {
            self.total += y;
            let demand = if y == 1 {
                self.unit
            } else {
                self.job().demand_for(y, 0)
            };
            self.span.charge(h, &demand, true).apply(pool);
            if self.span.reserves() {
                self.span.record(h, true);
            }
        }
        (paid, y)
    }
}

impl ProportionalShare {
    /// The rule at one event (rules 1–8): the market clears, the paid
    /// workers are placed, and a job that fits with none leaves the market
    /// until every paid job fits; then the jobs outside the market start.
    pub(super) fn run(
        &self,
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
                    market.excluded(&mut bidders, i, &mut realloc, || {
                        Realloc::new(view, self.placement, 0, &jobs, &[])
                    });
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

    /// Rules 1–2: the bidders among `jobs`, and the positions of the jobs
    /// whose workers need no GPU (outside the market).
    fn bidders<'a>(
        &self,
        machines: &[Machine],
        jobs: &[JobView<'a>],
    ) -> (Vec<Bidder<'a>>, Vec<usize>) {
        let mut bidders: Vec<Bidder<'_>> = Vec::with_capacity(jobs.len());
        let mut outside = Vec::new();
        let mut bids = Bids::default();
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
            let bids = bids.of(machines, job, &worker, budget);
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
                touched: Touched::default(),
            });
        }
        (bidders, outside)
    }
}

/// Rules 1–2: `job`'s bid on each machine, `budget` split over the machines
/// it may use in proportion to their GPU capacity (all 0 when it has no
/// budget or no such machine). Depends on the job only through its allowed
/// machines, `worker` and `budget`.
pub(super) fn bids_of(
    machines: &[Machine],
    job: &Job,
    worker: &Resources,
    budget: f64,
) -> Rc<[f64]> {
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

impl Market {
    /// Rules 3–5, one clearing over the room of each machine (`pool`): the
    /// rounds of shares, leaving each bidder's paid workers in `total`.
    pub(super) fn clear(&mut self, bidders: &mut [Bidder<'_>], pool: &mut [Resources]) {
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
    pub(super) fn clear_until_paid(
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
            let paid = self.paid(bidders);
            let short = paid.iter().rev().find(|&&(_, count)| count == 0);
            match short {
                Some(&(i, _)) => bidders[i].excluded = true,
                None => return paid,
            }
        }
    }
}

impl Market {
    /// Rule 6: the bidders paid for a worker in the last clearing, in rank
    /// order, with their counts.
    pub(super) fn paid_in_rank_order(&self, bidders: &[Bidder<'_>]) -> Vec<(usize, u32)> {
        self.by_rank
            .iter()
            .filter(|&&i| bidders[i].total > 0)
            .map(|&i| (i, bidders[i].count()))
            .collect()
    }
}

/// Splits `units` among `weights` in proportion, in whole units, by the
/// largest remainder; `order` ranks equal remainders (smaller first).
/// At most `2⁵³` units are split (counts stay exact; a machine with more
/// GPUs than that hands them out over several rounds).
pub(super) fn largest_remainder<K: Ord>(units: u64, weights: &[f64], order: &[K]) -> Vec<u64> {
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

/// Rule 3 on machine position `h` by looking at every bidder (bids that
/// differ between bidders): the bidders given a positive share, in bidder
/// order, with their shares.
pub(super) fn scan_shares(bidders: &[Bidder<'_>], h: usize, units: u64) -> Vec<(usize, u64)> {
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
pub(super) fn largest_allowed(counts: &WorkerCounts, w: u32) -> u32 {
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
