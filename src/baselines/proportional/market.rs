//! The market's bookkeeping beside the rule: the bidders' rank order,
//! skip pointers over the saturated bidders, and, when every bidder bids
//! alike, each machine's bidders found in rank order with equal shares
//! ([`equal_split`]) instead of the rule's scan of every bidder
//! ([`scan_shares`]), with the same result.

use std::rc::Rc;

use crate::model::Resources;
use crate::placement::Span;

use super::super::common::{Shortcut, ShortcutUse};
use super::rule::{Bidder, scan_shares};

/// The bidders' rank order, and what lets each machine find its bidders
/// in a round without looking at every bidder.
pub(super) struct Market {
    /// Bidder indices by rank.
    pub(super) by_rank: Vec<usize>,
    /// Skip pointers over `by_rank` (one more, a sentinel): `next[p] == p`
    /// while the bidder of rank `p` is not saturated, otherwise a later
    /// position (path halving), so the unsaturated bidders are visited in
    /// rank order without the saturated ones.
    pub(super) next: Vec<usize>,
    /// Skip pointers over the bidders saturated for the whole event (no
    /// cap, or left the market), as `next` but never undone by a reset
    /// (module `fast`), so a run of such bidders is jumped over at once.
    pub(super) perm: Vec<usize>,
    /// Unsaturated bidders.
    pub(super) unsaturated: usize,
    /// Per machine position, the unsaturated bidders blocked there.
    pub(super) blocked_here: Vec<usize>,
    /// The bids of every bidder when they are all the same, bit for bit:
    /// then each machine's bidders are its unsaturated, unblocked ones
    /// (or none), their shares equal ([`equal_split`]).
    pub(super) uniform: Option<Rc<[f64]>>,
    /// Sums of `n` equal bids, added as `Iterator::sum` adds them: per
    /// bid's bits (one per distinct machine capacity), the sums of 1, 2, …
    pub(super) sums: Vec<(u64, Vec<f64>)>,
    /// The shares of one machine (a buffer).
    pub(super) given: Vec<(usize, u64)>,
    /// The room left on each machine during a clearing (a buffer).
    pub(super) pool: Vec<Resources>,
    /// Fast reset (module `fast`): the writes to `next` since the last
    /// reset, `(position, old value)`.
    pub(super) next_log: Vec<(usize, usize)>,
    /// Fast reset: the ranks of the bidders given a share since the last
    /// reset.
    pub(super) dirty: Vec<usize>,
    /// Fast reset: unsaturated bidders right after the last reset, if a
    /// full reset was made.
    pub(super) reset_unsaturated: Option<usize>,
    /// Bidder `i` has rank `i` (module `fast`).
    pub(super) in_order: bool,
    /// The last clearing (module `fast`): each equal split of a machine,
    /// `(machine position, units, bidders n, q, k)`.
    pub(super) splits: Vec<(usize, u64, usize, u64, usize)>,
    /// The last clearing: the fewest unsaturated bidders it saw when
    /// looking for one to pay.
    pub(super) low: usize,
    /// Whether the shortcuts (module `fast`, uniform bids) may be taken.
    pub(super) shortcut: Shortcut,
    /// How the shortcuts were used.
    pub(super) used: ShortcutUse,
}

/// What the market records of a bidder's takes since its last reset
/// (module `fast`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Touched {
    /// Given a share since the last reset.
    pub(super) dirty: bool,
    /// While dirty: the most of `total + paid` over its takes.
    pub(super) peak: u32,
}

impl Market {
    /// Ranks `bidders` by (arrival, id).
    pub(super) fn new(bidders: &mut [Bidder<'_>], machines: usize, shortcut: Shortcut) -> Self {
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
        let uniform = uniform.filter(|_| shortcut.taken());
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

    /// Every bidder with nothing, unsaturated unless it may have no worker
    /// or left the market.
    pub(super) fn reset(&mut self, bidders: &mut [Bidder<'_>]) {
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
            b.touched.dirty = false;
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
    pub(super) fn find(&mut self, mut p: usize) -> usize {
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
    pub(super) fn shares(
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
    pub(super) fn sum_of(&mut self, w: f64, n: usize) -> f64 {
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

    /// Rules 4–5 for `b` on machine position `h` ([`Bidder::pay`]), with
    /// the bookkeeping of a bidder whose cap is reached (saturated) or
    /// whom the machine's other resources stop (blocked there); whether it
    /// was paid for any.
    pub(super) fn take(
        &mut self,
        b: &mut Bidder<'_>,
        h: usize,
        share: u64,
        pool: &mut [Resources],
    ) -> bool {
        if !b.touched.dirty {
            b.touched.dirty = true;
            b.touched.peak = 0;
            self.dirty.push(b.rank);
        }
        let before = b.total;
        let (paid, y) = b.pay(h, share, pool);
        b.touched.peak = b.touched.peak.max(before.saturating_add(paid));
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

/// [`largest_remainder`] of `units` among `n` bit-identical weights whose
/// sum (as `Iterator::sum` adds them) is `sum`, with distinct orders:
/// `(q, k)` — every weight gets `q` units and the `k` smallest orders one
/// more.
///
/// Exactness: every weight's exact share `units · w / sum` is the same
/// float, so every floor is `q`, `given` is `n·q` (saturating, as the fold
/// of saturating additions), and every remainder is the same float: the
/// `k` spare units go to the `k` smallest orders, the tie-break.
pub(super) fn equal_split(units: u64, w: f64, sum: f64, n: usize) -> (u64, usize) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::ProportionalShare;
    use crate::baselines::fixtures::{Busy, assert_same_runs, busy_workload};
    use crate::baselines::proportional::rule::largest_remainder;
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
        let kinds = Busy::kinds();
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
}
