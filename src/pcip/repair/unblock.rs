//! Phase 2's way out of a stall: when no increment can help a short
//! covering row because every helpful column is blocked by a packing (or
//! linking) row that holds at its limit, take one unit off a column that
//! loads the blocking row, freeze that column for the rest of phase 2 (so
//! the greedy cannot put the unit back, and no column is taken off twice),
//! and let phase 2 continue. A swap the one-step greedy cannot see: on
//! `x0 + x1 ≥ 2`, `x3 ≥ 1`, `x1 + x3 ≤ 2` from `x = (0, 2, 0, 0)`, a unit of
//! `x1` makes room for `x3`, and `x0` re-covers the first row.

use super::{LIMITS, State};
use crate::pcip::error::{RowClass, RowRef};

/// Most unblocking steps one repair takes (each is followed by a pass of
/// the greedy grow phase, so this bounds the work to a constant number of
/// passes).
pub(super) const MAX_UNBLOCKS: usize = 64;

impl State<'_> {
    /// Whether column `j` is frozen (taken off by an unblocking step).
    pub(super) fn frozen(&self, j: usize) -> bool {
        self.frozen.get(j).copied().unwrap_or(false)
    }

    /// One unblocking step: among the short covering rows, the helpful
    /// columns whose increment breaks a hard row, and the columns that load
    /// that row and can lose a unit without breaking another hard row,
    /// takes one unit off the one whose removal leaves the least new
    /// covering deficit (then the most expensive, then the lowest index),
    /// and freezes it. `false` when there is no such column.
    pub(super) fn unblock(&mut self, x: &mut [f64]) -> bool {
        let mut best: Option<((f64, f64, usize), usize)> = None;
        let cov = self.class(RowClass::Covering);
        for k in (0..cov.act.len()).filter(|&k| !cov.holds(k)) {
            let (cols, vals) = self.p.row(RowRef {
                class: RowClass::Covering,
                row: k,
            });
            for (&j, &a) in cols.iter().zip(vals) {
                if a <= 0.0 || !self.p.is_integer(j) || x[j] >= self.p.upper(j) || self.frozen(j) {
                    continue;
                }
                for class in LIMITS {
                    let (idx, coefs) = self.p.column(class, j);
                    let rows = self.class(class);
                    for (&i, &c) in idx.iter().zip(coefs) {
                        if rows.holds_at(i, rows.act[i] + c) {
                            continue;
                        }
                        self.best_relief(x, j, RowRef { class, row: i }, &mut best);
                    }
                }
            }
        }
        let Some((_, m)) = best else {
            return false;
        };
        if self.frozen.is_empty() {
            self.frozen = vec![false; x.len()];
        }
        self.frozen[m] = true;
        self.step(x, m, -1.0);
        true
    }

    /// Offers every column `m ≠ j` of the blocking row `row` whose decrement
    /// relieves it and keeps every other hard row holding.
    fn best_relief(
        &self,
        x: &[f64],
        j: usize,
        row: RowRef,
        best: &mut Option<((f64, f64, usize), usize)>,
    ) {
        let rows = self.class(row.class);
        let le = rows.le[row.row];
        let (cols, vals) = self.p.row(row);
        for (&m, &c) in cols.iter().zip(vals) {
            // A decrement of m relieves a `≤` row when c > 0, a `≥` row when c < 0.
            let relieves = if le { c > 0.0 } else { c < 0.0 };
            if m == j
                || !relieves
                || !self.p.is_integer(m)
                || x[m] < 1.0
                || self.frozen(m)
                || !self.keeps_others(m, row)
            {
                continue;
            }
            let key = (self.damage(m), -self.cost[m], m);
            let better = best.as_ref().is_none_or(|(b, _)| {
                key.0
                    .total_cmp(&b.0)
                    .then(key.1.total_cmp(&b.1))
                    .then(key.2.cmp(&b.2))
                    .is_lt()
            });
            if better {
                *best = Some((key, m));
            }
        }
    }

    /// Whether `x_m −= 1` keeps every hard row of column `m` that holds now
    /// holding (rows other than `blocking`, which it relieves).
    fn keeps_others(&self, m: usize, blocking: RowRef) -> bool {
        LIMITS.iter().all(|&class| {
            let (idx, val) = self.p.column(class, m);
            let rows = self.class(class);
            idx.iter().zip(val).all(|(&i, &a)| {
                (class == blocking.class && i == blocking.row)
                    || !rows.holds(i)
                    || rows.holds_at(i, rows.act[i] - a)
            })
        })
    }

    /// The covering deficit a unit decrement of column `m` adds.
    fn damage(&self, m: usize) -> f64 {
        let (idx, val) = self.p.column(RowClass::Covering, m);
        let cov = self.class(RowClass::Covering);
        idx.iter()
            .zip(val)
            .map(|(&k, &a)| {
                let (s, q) = (cov.act[k], cov.thr[k]);
                (q - (s - a)).max(0.0) - (q - s).max(0.0)
            })
            .sum()
    }
}

impl State<'_> {
    /// Phase 1 after it stalled with `stalled`: phase 1 only decrements, so
    /// a violated linking row that only an increment relieves (a `≥` row
    /// with a positive coefficient, a `≤` row with a negative one — say
    /// `4294967295·x2 − 6·x0 ≥ 2` at `x2 = 0`) stops it. Up to
    /// [`MAX_UNBLOCKS`] times, a raising step ([`State::raise`]) and phase 1
    /// again; the first error stands when no step applies or none suffices.
    pub(super) fn shrink_raising(
        &mut self,
        x: &mut [f64],
        stalled: crate::pcip::PcError,
    ) -> Result<u64, crate::pcip::PcError> {
        let mut moves = 0u64;
        for _ in 0..MAX_UNBLOCKS {
            let Some(t) = self.raise(x) else {
                break;
            };
            moves = moves.saturating_add(t);
            if let Ok(m) = self.shrink(x) {
                return Ok(moves.saturating_add(m));
            }
        }
        Err(stalled)
    }

    /// One raising step: among the violated hard rows, the integer columns
    /// whose increment relieves one, by as many units as close its excess
    /// (at least one, within the column's bound and without breaking a hard
    /// row that holds), the one with the smallest cost per unit of relief
    /// (ties to the lower index) is incremented. The units taken, or `None`
    /// when no column qualifies.
    fn raise(&mut self, x: &mut [f64]) -> Option<u64> {
        let mut best: Option<(f64, usize, f64)> = None;
        for class in LIMITS {
            let rows = self.class(class);
            for i in (0..rows.act.len()).filter(|&i| !rows.holds(i)) {
                let le = rows.le[i];
                let excess = rows.excess(i, rows.act[i]);
                let need = (excess - rows.slack[i]).max(0.0);
                let (cols, vals) = self.p.row(RowRef { class, row: i });
                for (&m, &a) in cols.iter().zip(vals) {
                    // An increment of m lowers the excess of a `≤` row when
                    // a < 0, of a `≥` row when a > 0.
                    let helps = if le { a < 0.0 } else { a > 0.0 };
                    if !helps || !self.p.is_integer(m) || x[m] >= self.p.upper(m) {
                        continue;
                    }
                    let want = (need / a.abs()).ceil().max(1.0).min(self.p.upper(m) - x[m]);
                    let t = self.room(&LIMITS, m, 1.0, want);
                    if !(t >= 1.0 && t.is_finite()) {
                        continue;
                    }
                    let relief = excess.min(a.abs() * t);
                    let key = self.cost[m] * t / relief;
                    if best.is_none_or(|(k, b, _)| key.total_cmp(&k).then(m.cmp(&b)).is_lt()) {
                        best = Some((key, m, t));
                    }
                }
            }
        }
        let (_, m, t) = best?;
        self.step(x, m, t);
        Some(t as u64)
    }
}
