//! A fast path of the market's repeated clearings within one event
//! (rule 7 and the placement's "leaves the market, clears again"): each
//! clearing after the first resets only what the previous one touched,
//! lists only the bidders it paid, and the reallocation undoes only the
//! placements made since its start, so a clearing costs time in the
//! shares it gives instead of in all `J` bidders. Without it an event in
//! which many paid jobs fit nowhere, one after the other (a long queue on
//! a cluster whose NICs hold one job per machine), costs `O(J)` per
//! exclusion, `O(J²)` in all.
//!
//! Why the results are the same, bit for bit:
//!
//! * **Reset.** The full reset ([`Market::reset`]) gives every bidder
//!   `total = 0`, no blocked machine, a fresh span when it reserves,
//!   `saturated = cap == 0 || excluded`, and rebuilds the skip pointers
//!   `next` and the count of unsaturated bidders. Between two resets a
//!   bidder's `total`, `blocked`, `span` and `saturated` change only in
//!   [`Market::take`], which records the bidder as *dirty*; `excluded` is
//!   set only for bidders paid in the last clearing (dirty); and `next`
//!   changes only in `take` and [`Market::find`], which log each write
//!   with the old value. So undoing the log backwards restores `next` as
//!   the last reset left it, and re-resetting the dirty bidders alone
//!   (their pointer and the count follow their new `saturated`) gives
//!   exactly the state of a full reset. `blocked_here` is zeroed as the
//!   full reset does (`O(H)`).
//! * **Bidders out for the event.** A bidder with no cap or that left the
//!   market stays saturated until the event ends, so the second skip
//!   list `perm` over them is never undone; [`Market::find`] jumps it
//!   first. Any skip pointers over saturated positions give the same
//!   answer (the first unsaturated position), so this changes no
//!   decision, only how many pointers are followed: without it each
//!   clearing walks every bidder excluded so far in the event again.
//! * **Paid list.** A bidder with `total = 0` has count 0 (rule 6), and
//!   `total > 0` only for bidders given a share (dirty), so the paid
//!   bidders are the dirty ones with `total > 0`, sorted by rank — the
//!   list the full scan in rank order makes.
//! * **Reallocation.** [`Realloc::restart`](super::Realloc::restart)
//!   restores the ledgers and pointer `Realloc::new` made and empties the
//!   entries given tasks since, which is what a new `Realloc` over the
//!   same view and jobs holds.
//!
//! `tests::incremental_clearings_decide_as_full_ones` runs busy workloads
//! with the fast path forced off and on and asserts identical runs.

use super::{Bidder, Market, Span};

/// Whether the fast path is on (tests force it off).
pub(super) fn enabled() -> bool {
    #[cfg(test)]
    return !tests::FORCED_OFF.with(std::cell::Cell::get);
    #[cfg(not(test))]
    true
}

impl Market {
    /// The reset of [`Market::reset`] from the previous one, touching only
    /// the bidders given a share since (see the [module docs](self));
    /// `false` (nothing done) before the first full reset.
    pub(super) fn reset_fast(&mut self, bidders: &mut [Bidder<'_>]) -> bool {
        let Some(mut unsaturated) = self.reset_unsaturated else {
            return false;
        };
        for &(p, old) in self.next_log.iter().rev() {
            self.next[p] = old;
        }
        self.next_log.clear();
        self.blocked_here.iter_mut().for_each(|c| *c = 0);
        for rank in self.dirty.drain(..) {
            let b = &mut bidders[self.by_rank[rank]];
            b.dirty = false;
            b.total = 0;
            b.blocked.clear();
            if b.span.reserves() {
                b.span = Span::new(b.view.job(), []);
            }
            // Saturated at the last reset iff its pointer skips it.
            let was = self.next[rank] != rank;
            b.saturated = b.cap == 0 || b.excluded;
            self.next[rank] = if b.saturated { rank + 1 } else { rank };
            if b.saturated {
                // It left the market: saturated for the rest of the event.
                self.perm[rank] = rank + 1;
            }
            unsaturated = unsaturated + usize::from(was) - usize::from(b.saturated);
        }
        self.unsaturated = unsaturated;
        self.reset_unsaturated = Some(unsaturated);
        #[cfg(test)]
        tests::FAST_RESETS.with(|c| c.set(c.get() + 1));
        true
    }

    /// The bidders paid for a worker in the last clearing, in rank order,
    /// with their counts (see the [module docs](self)).
    pub(super) fn paid_fast(&self, bidders: &[Bidder<'_>]) -> Vec<(usize, u32)> {
        let mut ranks: Vec<usize> = self.dirty.clone();
        ranks.sort_unstable();
        ranks
            .into_iter()
            .map(|r| self.by_rank[r])
            .filter(|&i| bidders[i].total > 0)
            .map(|i| (i, bidders[i].count()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use crate::baselines::ProportionalShare;
    use crate::baselines::fixtures::{Busy, assert_same_runs, busy_workload};

    thread_local! {
        /// Forces [`super::enabled`] off on this thread.
        pub(super) static FORCED_OFF: Cell<bool> = const { Cell::new(false) };
        /// Resets done the fast way.
        pub(super) static FAST_RESETS: Cell<u64> = const { Cell::new(0) };
    }

    /// Clearings that reset only what the previous one touched, and a
    /// reallocation restarted instead of rebuilt, decide as full ones on
    /// busy clusters (gangs, rings, PS jobs, reservations, fractions,
    /// restricted machines, weights).
    #[test]
    fn incremental_clearings_decide_as_full_ones() {
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
        for seed in 0..4 {
            for busy in kinds {
                for machines in [3, 6] {
                    assert_same_runs(
                        &busy_workload(seed, machines, busy),
                        || ProportionalShare {
                            weighted: busy.weighted,
                            ..ProportionalShare::default()
                        },
                        |slow| FORCED_OFF.with(|s| s.set(slow)),
                        &format!("seed {seed}, {machines} machines, {busy:?}"),
                    );
                }
            }
        }
        assert!(FAST_RESETS.with(Cell::get) > 0, "no clearing was repeated");
    }
}
