//! Shift moves of the improvement phase: take one unit off a priced column,
//! cover what that leaves short with the cheapest columns of the same
//! covering rows, drop the units that became redundant, and keep the result
//! only when the objective fell. Every intermediate step keeps the packing
//! and linking rows holding, so a rejected attempt is undone exactly (row
//! activities are restored from a log, not recomputed) and the point stays
//! feasible throughout.

use super::{CLASSES, LIMITS, State, slot};
use crate::pcip::error::RowClass;

/// Most units a shift may add while re-covering the rows its removal left
/// short (beyond it a shift is not a local move any more).
const MAX_ADDED: usize = 4;
/// Most passes over the priced columns; each pass that changes nothing ends
/// the search.
const MAX_PASSES: usize = 3;

/// Undo record of a shift attempt: `(column, old value)` and
/// `(class slot, row, old activity)` entries, restored in reverse.
#[derive(Default)]
struct Log {
    cols: Vec<(usize, f64)>,
    rows: Vec<(usize, usize, f64)>,
}

impl State<'_> {
    /// [`State::step`] recording what it changes in `log`.
    fn step_logged(&mut self, x: &mut [f64], j: usize, delta: f64, log: &mut Log) {
        log.cols.push((j, x[j]));
        for class in CLASSES {
            let (idx, _) = self.p.column(class, j);
            let s = slot(class);
            for &i in idx {
                log.rows.push((s, i, self.rows[s].act[i]));
            }
        }
        self.step(x, j, delta);
    }

    /// Restores every value `log` recorded, newest first.
    fn undo(&mut self, x: &mut [f64], log: &mut Log) {
        while let Some((s, i, v)) = log.rows.pop() {
            self.rows[s].act[i] = v;
        }
        while let Some((j, v)) = log.cols.pop() {
            x[j] = v;
        }
    }

    /// The shift search over a feasible `x`: passes over the integer columns
    /// with `c_j > 0` and `x_j ≥ 1` (most expensive first, ties by index),
    /// each trying [`State::try_shift`]; stops after a pass without an
    /// improvement or after [`MAX_PASSES`]. Returns the unit steps kept.
    pub(super) fn shift(&mut self, x: &mut [f64]) -> u64 {
        let mut steps = 0u64;
        let mut log = Log::default();
        for _ in 0..MAX_PASSES {
            let mut order: Vec<usize> = (0..x.len())
                .filter(|&j| self.p.is_integer(j) && self.cost[j] > 0.0 && x[j] >= 1.0)
                .collect();
            order.sort_unstable_by(|&a, &b| self.cost[b].total_cmp(&self.cost[a]).then(a.cmp(&b)));
            let mut improved = false;
            for j in order {
                if x[j] >= 1.0 && self.try_shift(x, j, &mut log) {
                    steps = steps.saturating_add(log.cols.len() as u64);
                    improved = true;
                }
                log.cols.clear();
                log.rows.clear();
            }
            if !improved {
                break;
            }
        }
        steps
    }

    /// One shift attempt on column `j`: `x_j −= 1`; while a covering row of
    /// `j` is short, add one unit of the column of those rows with the
    /// smallest `c_k/gain_k` whose increment keeps every packing and linking
    /// row holding (at most [`MAX_ADDED`] units, never `j` itself); then
    /// drop units of the columns of those rows (most expensive first) while
    /// every row holds. Kept (`true`) when the objective fell by more than
    /// `10⁻⁹·max(1, c_j)`; otherwise undone exactly.
    fn try_shift(&mut self, x: &mut [f64], j: usize, log: &mut Log) -> bool {
        if !self.keeps(&LIMITS, j, -1.0) {
            return false;
        }
        let before = self.cost[j];
        self.step_logged(x, j, -1.0, log);
        let (rows, _) = self.p.column(RowClass::Covering, j);
        let rows = rows.to_vec();
        let mut added = 0;
        while rows
            .iter()
            .any(|&k| !self.class(RowClass::Covering).holds(k))
        {
            let Some(k) = (added < MAX_ADDED)
                .then(|| self.cheapest_cover(x, j, &rows))
                .flatten()
            else {
                self.undo(x, log);
                return false;
            };
            self.step_logged(x, k, 1.0, log);
            added += 1;
        }
        self.drop_redundant(x, &rows, log);
        let change = self.net_change(x, log);
        if change < -1e-9 * before.max(1.0) {
            true
        } else {
            self.undo(x, log);
            false
        }
    }

    /// The objective change of the logged steps: for each column its value
    /// now minus its value before its first logged step, times its cost.
    fn net_change(&self, x: &[f64], log: &Log) -> f64 {
        let mut first: Vec<(usize, f64)> = Vec::with_capacity(log.cols.len());
        for &(c, old) in &log.cols {
            if !first.iter().any(|&(d, _)| d == c) {
                first.push((c, old));
            }
        }
        first
            .iter()
            .map(|&(c, old)| self.cost[c] * (x[c] - old))
            .sum()
    }

    /// The column of the short rows among `rows` with the smallest
    /// `(c_k/gain_k, k)` whose increment keeps every packing and linking row
    /// holding; never `skip`.
    fn cheapest_cover(&self, x: &[f64], skip: usize, rows: &[usize]) -> Option<usize> {
        let cov = self.class(RowClass::Covering);
        let mut best: Option<(f64, usize)> = None;
        for &r in rows.iter().filter(|&&r| !cov.holds(r)) {
            let (cols, _) = self.p.row(crate::pcip::RowRef {
                class: RowClass::Covering,
                row: r,
            });
            for &k in cols {
                if k == skip || !self.p.is_integer(k) || x[k] >= self.p.upper(k) {
                    continue;
                }
                let gain = self.gain(k);
                if gain <= 0.0 || !self.keeps(&LIMITS, k, 1.0) {
                    continue;
                }
                let key = self.cost[k] / gain;
                if best.is_none_or(|(b, c)| key.total_cmp(&b).then(k.cmp(&c)).is_lt()) {
                    best = Some((key, k));
                }
            }
        }
        best.map(|(_, k)| k)
    }

    /// Drops units of the priced columns of `rows` (most expensive first,
    /// ties by index), each as far as every row keeps holding.
    fn drop_redundant(&mut self, x: &mut [f64], rows: &[usize], log: &mut Log) {
        let mut cols: Vec<usize> = Vec::new();
        for &r in rows {
            let (c, _) = self.p.row(crate::pcip::RowRef {
                class: RowClass::Covering,
                row: r,
            });
            cols.extend(
                c.iter()
                    .copied()
                    .filter(|&k| self.p.is_integer(k) && self.cost[k] > 0.0 && x[k] >= 1.0),
            );
        }
        cols.sort_unstable_by(|&a, &b| self.cost[b].total_cmp(&self.cost[a]).then(a.cmp(&b)));
        cols.dedup();
        for k in cols {
            let t = self.room(&CLASSES, k, -1.0, x[k]);
            if t > 0.0 {
                self.step_logged(x, k, -t, log);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::certificate::Sense;
    use crate::pcip::known_answers::{ka1, ka2, ka2b, ka3, ka4, ka5};
    use crate::pcip::{PcBuilder, RepairOptions, evaluate, repair};

    #[test]
    fn a_shift_replaces_an_expensive_unit() {
        // x0 + x1 ≥ 1 with costs 2 and 1, from (1, 0): reverse delete cannot
        // drop x0 (the row would break); the shift moves it to x1.
        let p = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![2.0, 1.0])
            .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .build()
            .unwrap();
        let mut x = vec![1.0, 0.0];
        let r = repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert_eq!((x, r.objective, r.prune_moves), (vec![0.0, 1.0], 1.0, 2));
        // Off with the improvement phase.
        let off = RepairOptions {
            improve: false,
            ..RepairOptions::default()
        };
        let mut x = vec![1.0, 0.0];
        repair(&p, &mut x, &off).unwrap();
        assert_eq!(x, vec![1.0, 0.0]);
    }

    #[test]
    fn shifts_respect_capacities_and_drop_redundant_units() {
        // Work 2x0 + x1 + x2 ≥ 2, costs 3, 1, 1.2; capacity x1 ≤ 1. From
        // (1, 0, 0) (cost 3): one unit of x1 (1) and one of x2 (1.2) cover
        // for 2.2 < 3; x1 alone is capped at 1.
        let program = |c2: f64| {
            PcBuilder::new(Sense::Minimise, 3)
                .objective(vec![3.0, 1.0, c2])
                .upper(1, Some(4))
                .upper(2, Some(4))
                .covering_row(&[(0, 2.0), (1, 1.0), (2, 1.0)], 2.0)
                .packing_row(&[(1, 1.0)], 1.0)
                .build()
                .unwrap()
        };
        let p = program(1.2);
        let mut x = vec![1.0, 0.0, 0.0];
        let r = repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert_eq!(x, vec![0.0, 1.0, 1.0]);
        assert!((r.objective - 2.2).abs() < 1e-12);
        assert!(evaluate(&p, &x, 1e-9).is_feasible());
        // With x2 at 2.5 a shift would cost 1 + 2.5 > 3: x stays.
        let p = program(2.5);
        let mut x = vec![1.0, 0.0, 0.0];
        repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert_eq!(x, vec![1.0, 0.0, 0.0]);
    }

    #[test]
    fn known_answers_keep_their_repaired_optima() {
        // From the zero point, repair with the improvement phase reaches a
        // feasible point no worse than without it on KA1–KA5.
        for p in [ka1(), ka2(), ka2b(), ka3(), ka4(), ka5()] {
            let off = RepairOptions {
                improve: false,
                ..RepairOptions::default()
            };
            let mut a = vec![0.0; p.n_vars()];
            let mut b = a.clone();
            let (ra, rb) = (
                repair(&p, &mut a, &off),
                repair(&p, &mut b, &RepairOptions::default()),
            );
            if let (Ok(ra), Ok(rb)) = (ra, rb) {
                let worse = match p.sense() {
                    Sense::Minimise => rb.objective > ra.objective + 1e-9,
                    Sense::Maximise => rb.objective < ra.objective - 1e-9,
                };
                assert!(!worse, "{} vs {}", rb.objective, ra.objective);
                assert!(evaluate(&p, &b, 1e-9).is_feasible());
            }
        }
    }
}
