//! Repair (alteration) of a rounded point to exact feasibility with unit
//! moves (`±1` steps on one integer column; [algorithms guide, section
//! 1.5](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-repair)).
//!
//! Three phases, all in the canonical minimisation (`c = −v` for the max
//! form):
//!
//! 1. **shrink**: while a Packing or Linking row is violated, decrement the
//!    integer column with the smallest key `(damage/relief, −c_j/relief, j)`
//!    (when no decrement helps, a raising step increments a column that
//!    relieves a violated linking row);
//! 2. **grow**: while a Covering row is short, increment the integer column
//!    with the smallest key `(c_j/gain, j)` among those whose increment keeps
//!    every Packing and Linking row holding (when none does, an unblocking
//!    step takes a unit off a column loading a blocking row);
//! 3. **improve** (optional): one reverse-delete pass over the columns with
//!    `c_j > 0` (most expensive first), then one greedy fill pass over the
//!    columns with `c_j < 0` (most valuable first).
//!
//! Row activities are kept incrementally: a step on column `j` touches only
//! the rows of column `j`. Consecutive unit moves of the same column are
//! taken as one batch (as many as keep its greedy key unchanged, capped by
//! its bound and the rows), so the number of steps depends on the program's
//! size, not on its magnitudes: a covering row of right-hand side `1e18`
//! costs one step, not `1e18`.

use std::cmp::Ordering;
use std::collections::BTreeSet;

mod moves;
mod shift;
mod unblock;

use moves::Phase;
pub use moves::{Move, MoveSource, repair_with};

use super::error::{PcError, RepairFailure, RowClass, RowRef, RowReport};
use super::problem::{PcProblem, RowSense, evaluate};
use crate::certificate::Sense;

/// Options of [`repair`] (its three phases: shrink, grow, improve).
///
/// ```
/// use dmlsched::pcip::RepairOptions;
/// let o = RepairOptions::default();
/// assert_eq!((o.feas_tol, o.improve, o.packing_slack), (1e-9, true, 0.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RepairOptions {
    /// Relative feasibility tolerance: a `≤` row with threshold `t` holds
    /// when `load − t ≤ feas_tol·max(1, |t|)` (mirrored for `≥` rows).
    /// Default `1e-9`; must be finite and `≥ 0`.
    pub feas_tol: f64,
    /// Run the improvement phase (reverse delete, then greedy fill).
    /// Default `true`.
    pub improve: bool,
    /// Bicriteria slack `δ ≥ 0`: packing rows are held to `(1+δ)·p_i`
    /// instead of `p_i`. Default `0.0`; must be finite and `≥ 0`.
    pub packing_slack: f64,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            feas_tol: 1e-9,
            improve: true,
            packing_slack: 0.0,
        }
    }
}

/// What [`repair`] did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RepairReport {
    /// Total number of unit steps (`shrink_moves + grow_moves + prune_moves`).
    pub(crate) moves: u64,
    /// Unit decrements of phase 1 (shrink).
    pub shrink_moves: u64,
    /// Unit increments of phase 2 (grow).
    pub grow_moves: u64,
    /// Unit steps of phase 3: reverse-delete decrements plus greedy-fill
    /// increments.
    pub prune_moves: u64,
    /// Objective of the repaired point, in the user's sense.
    pub objective: f64,
}

/// Repairs `x` in place into a point that satisfies every Packing, Covering
/// and Linking row of `p` (Linking rows are held as strictly as Packing rows),
/// using unit moves on integer columns only.
///
/// * **Start point.** Every entry is first clamped into `[0, u_j]`, and
///   integer columns are rounded to the nearest integer (halves away from
///   zero). The pipeline always passes such box points, so this changes
///   nothing there. Continuous columns are never changed afterwards.
/// * **Thresholds.** Packing rows are held to `(1+δ)·p_i` with
///   `δ = opts.packing_slack`; Covering rows to `q_k`; Linking rows to their
///   right-hand side in their own sense. A row holds within
///   `feas_tol·max(1, |threshold|)`.
/// * **Phase 1 (shrink).** While a Packing or Linking row is violated (set
///   V), decrement the integer column `j` with `x_j ≥ 1` that minimises
///   `(damage_j/relief_j, −c_j/relief_j, j)` lexicographically, where
///   `relief_j > 0` is the reduction of the total violation over V and
///   `damage_j` the increase of the total covering deficit. A decrement that
///   would break a Packing or Linking row that holds is never taken.
/// * **Phase 2 (grow).** While a Covering row is short (set D, deficits
///   `d_k`), increment the integer column `j` with `x_j < u_j` that
///   minimises `(c_j/gain_j, j)`, where `gain_j = Σ_{k∈D} min(C_kj, d_k) > 0`
///   and every Packing and Linking row still holds after the increment.
///   Since `c_j/gain_j` has the sign of `c_j`, moves that do not raise the
///   objective come first.
/// * **Batches.** In phases 1 and 2 the chosen column moves by as many units
///   at once as keep its key unchanged: in phase 2, while each short
///   covering row of `j` keeps a deficit of at least `C_kj` and stays
///   short; in phase 1, while each violated row of `j` keeps an excess of at
///   least one step's relief and stays violated, and each covering row of
///   `j` stays satisfied with room or stays short; always capped by `[0, u_j]` and the rows that must keep holding,
///   and at least one unit. With non-negative costs a phase-2 batch makes
///   exactly the unit moves the one-at-a-time greedy would make. After
///   `4·(nnz + rows + n) + 64` batches a phase gives up with
///   [`PcError::RepairFailed`]. Phase 3 moves each column by its whole
///   allowance at once, which is what its unit loop would reach.
/// * **Phase 3 (improve, if `opts.improve`).** One pass over the integer
///   columns with `c_j > 0` in order of decreasing `c_j` (ties by index):
///   decrement while every row still holds. Then one pass over those with
///   `c_j < 0` in order of increasing `c_j`: increment while `x_j < u_j` and
///   every row still holds. An unbounded column whose increments no row
///   limits is left alone (its objective would be unbounded).
///
/// The result is re-checked with the independent [`evaluate`] (packing rows
/// against `(1+δ)·p_i`); an infeasible point is never returned as `Ok`.
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{PcBuilder, RepairOptions, repair};
/// // KA1: triangle set cover; the empty point repairs to (1, 1, 0).
/// let p = PcBuilder::new(Sense::Minimise, 3)
///     .objective(vec![1.0, 1.0, 1.0])
///     .covering_row(&[(0, 1.0), (2, 1.0)], 1.0)
///     .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
///     .covering_row(&[(1, 1.0), (2, 1.0)], 1.0)
///     .build()
///     .unwrap();
/// let mut x = vec![0.0; 3];
/// let r = repair(&p, &mut x, &RepairOptions::default()).unwrap();
/// assert_eq!(x, vec![1.0, 1.0, 0.0]);
/// assert_eq!((r.grow_moves, r.objective), (2, 2.0));
/// ```
///
/// # Errors
///
/// * [`PcError::DimensionMismatch`] if `x.len() != p.n_vars()`;
/// * [`PcError::InvalidOption`] if `feas_tol` or `packing_slack` is negative
///   or not finite, or an entry of `x` is not finite (option `"x"`);
/// * [`PcError::RepairFailed`] if phase 1 stalls (`still_violated`, plus any
///   short covering rows in `uncovered`), or phase 2 stalls (`uncovered`,
///   `blocking_rows`, `saturated_cols`), or the final check fails. Then `x`
///   holds the point reached so far. `total_deficit` is the sum of the
///   deficits of all reported rows, i.e. the total covering deficit when
///   phase 2 stalls.
pub fn repair(p: &PcProblem, x: &mut [f64], opts: &RepairOptions) -> Result<RepairReport, PcError> {
    run_phases(p, x, opts, None, Search::Full, State::shrink, State::grow)
}

/// How much of the improvement phase runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// Reverse delete, greedy fill and the shift moves.
    Full,
    /// Reverse delete and greedy fill only (one ordered pass each, so the
    /// whole repair stays within a few passes over the non-zeros): for the
    /// greedy point built after a time limit.
    Quick,
}

/// [`repair`] (or [`repair_with`] with `source`) with the improvement
/// phase limited to `search`.
pub(crate) fn repair_within(
    p: &PcProblem,
    x: &mut [f64],
    opts: &RepairOptions,
    source: Option<&dyn MoveSource>,
    search: Search,
) -> Result<RepairReport, PcError> {
    run_phases(p, x, opts, source, search, State::shrink, State::grow)
}

/// The body of [`repair`], with the two greedy phases as parameters (the
/// tests run it with the full re-scan reference phases).
/// With a move `source`, each phase runs the source's moves first
/// ([`repair_with`]).
fn run_phases<'p>(
    p: &'p PcProblem,
    x: &mut [f64],
    opts: &RepairOptions,
    source: Option<&dyn MoveSource>,
    search: Search,
    shrink: impl FnOnce(&mut State<'p>, &mut [f64]) -> Result<u64, PcError>,
    grow: impl FnOnce(&mut State<'p>, &mut [f64]) -> Result<u64, PcError>,
) -> Result<RepairReport, PcError> {
    validate(p, x, opts)?;
    for (j, v) in x.iter_mut().enumerate() {
        let clamped = v.max(0.0).min(p.upper(j));
        *v = if p.is_integer(j) {
            clamped.round()
        } else {
            clamped
        };
    }
    let mut st = State::new(p, x, opts);
    let model = |st: &mut State<'p>, x: &mut [f64], phase| match source {
        Some(s) => st.model_phase(x, s, phase),
        None => Ok(0),
    };
    let mut shrink_moves = model(&mut st, x, Phase::Shrink)?;
    shrink_moves += match shrink(&mut st, x) {
        Ok(m) => m,
        Err(e) => st.shrink_raising(x, e)?,
    };
    let mut grow_moves = model(&mut st, x, Phase::Grow)?;
    grow_moves += match grow(&mut st, x) {
        Ok(m) => m,
        Err(e) => st.grow_unblocking(x, e)?,
    };
    let prune_moves = if opts.improve {
        let pruned = model(&mut st, x, Phase::Prune)? + st.improve(x);
        if search == Search::Full {
            pruned + st.shift(x)
        } else {
            pruned
        }
    } else {
        0
    };
    st.final_check(x)?;
    Ok(RepairReport {
        moves: shrink_moves + grow_moves + prune_moves,
        shrink_moves,
        grow_moves,
        prune_moves,
        objective: p.objective_value(x),
    })
}

fn validate(p: &PcProblem, x: &[f64], opts: &RepairOptions) -> Result<(), PcError> {
    if x.len() != p.n_vars() {
        return Err(PcError::DimensionMismatch {
            what: "repair point x",
            expected: p.n_vars(),
            got: x.len(),
        });
    }
    for (option, v) in [
        ("feas_tol", opts.feas_tol),
        ("packing_slack", opts.packing_slack),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(PcError::InvalidOption {
                option,
                reason: format!("must be finite and ≥ 0, got {v}"),
            });
        }
    }
    if let Some(j) = x.iter().position(|v| !v.is_finite()) {
        return Err(PcError::InvalidOption {
            option: "x",
            reason: format!("entry {j} is {}", x[j]),
        });
    }
    Ok(())
}

/// The row classes in storage order (`slot` indexes [`State::rows`]).
const CLASSES: [RowClass; 3] = [RowClass::Packing, RowClass::Covering, RowClass::Linking];
/// Classes whose rows are enforced as hard limits by phases 1 and 2.
const LIMITS: [RowClass; 2] = [RowClass::Packing, RowClass::Linking];

fn slot(c: RowClass) -> usize {
    match c {
        RowClass::Packing => 0,
        RowClass::Covering => 1,
        RowClass::Linking => 2,
    }
}

/// Turns `−0.0` into `+0.0`, so that `total_cmp` orders zeros as equal.
fn norm(v: f64) -> f64 {
    v + 0.0
}

/// Activities and thresholds of the rows of one class.
struct Rows {
    act: Vec<f64>,
    thr: Vec<f64>,
    slack: Vec<f64>,
    le: Vec<bool>,
}

impl Rows {
    /// Signed excess over the threshold (> 0: on the wrong side).
    fn excess(&self, i: usize, act: f64) -> f64 {
        if self.le[i] {
            act - self.thr[i]
        } else {
            self.thr[i] - act
        }
    }

    /// Whether row `i` holds at activity `act`.
    fn holds_at(&self, i: usize, act: f64) -> bool {
        self.excess(i, act) <= self.slack[i]
    }

    /// Whether row `i` holds now.
    fn holds(&self, i: usize) -> bool {
        self.holds_at(i, self.act[i])
    }

    /// Violation measure `max(0, excess)` at activity `act`.
    fn violation(&self, i: usize, act: f64) -> f64 {
        self.excess(i, act).max(0.0)
    }
}

/// Keys ordered by `f64::total_cmp` (lexicographically for pairs).
trait KeyOrd {
    fn cmp_key(&self, other: &Self) -> Ordering;
}

impl KeyOrd for f64 {
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

impl KeyOrd for (f64, f64) {
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.total_cmp(&other.1))
    }
}

/// An entry of the candidate set: key, then column (ties to the lower
/// column, exactly as a scan in column order keeping strict improvements).
#[derive(Clone, Copy)]
struct Entry<K>(K, usize);

impl<K: KeyOrd> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<K: KeyOrd> Eq for Entry<K> {}
impl<K: KeyOrd> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: KeyOrd> Ord for Entry<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp_key(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The current candidates of a greedy phase with their keys, and a visit
/// stamp to re-score each neighbour once per step.
struct Candidates<K> {
    set: BTreeSet<Entry<K>>,
    key: Vec<Option<K>>,
    stamp: Vec<u32>,
    epoch: u32,
}

impl<K: KeyOrd + Copy> Candidates<K> {
    fn new(n: usize) -> Self {
        Candidates {
            set: BTreeSet::new(),
            key: vec![None; n],
            stamp: vec![0; n],
            epoch: 0,
        }
    }

    /// Sets the key of a column not yet in the set.
    fn set(&mut self, j: usize, key: Option<K>) {
        if let Some(k) = key {
            self.set.insert(Entry(k, j));
        }
        self.key[j] = key;
    }

    /// Replaces the key of column `j` (a no-op when it is unchanged, the
    /// common case for neighbours that share only a capacity row).
    fn rescore(&mut self, j: usize, key: Option<K>) {
        let same = match (&self.key[j], &key) {
            (None, None) => true,
            (Some(a), Some(b)) => a.cmp_key(b) == Ordering::Equal,
            _ => false,
        };
        if same {
            return;
        }
        if let Some(old) = self.key[j].take() {
            self.set.remove(&Entry(old, j));
        }
        self.set(j, key);
    }

    /// Fills an empty candidate set with every column's key at once (a bulk
    /// build from sorted entries).
    fn fill(&mut self, keys: impl Iterator<Item = Option<K>>) {
        let mut entries = Vec::new();
        for (j, k) in keys.enumerate() {
            if let Some(k) = k {
                entries.push(Entry(k, j));
            }
            self.key[j] = k;
        }
        entries.sort_unstable();
        self.set = entries.into_iter().collect();
    }

    /// The column with the smallest key (ties: smallest column).
    fn best(&self) -> Option<usize> {
        self.set.first().map(|e| e.1)
    }

    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
    }

    /// Whether column `j` is seen for the first time in this epoch.
    fn first_visit(&mut self, j: usize) -> bool {
        let fresh = self.stamp[j] != self.epoch;
        self.stamp[j] = self.epoch;
        fresh
    }
}

struct State<'a> {
    p: &'a PcProblem,
    /// Canonical minimisation costs.
    cost: Vec<f64>,
    /// Per class, indexed by [`slot`].
    rows: [Rows; 3],
    feas_tol: f64,
    /// Columns phase 2 may not grow (taken off by an unblocking step);
    /// empty until the first one.
    frozen: Vec<bool>,
}

impl<'a> State<'a> {
    fn new(p: &'a PcProblem, x: &[f64], opts: &RepairOptions) -> Self {
        let cost = p
            .objective()
            .iter()
            .map(|&v| match p.sense() {
                Sense::Minimise => norm(v),
                Sense::Maximise => norm(-v),
            })
            .collect();
        let rows = CLASSES.map(|class| {
            let m = p.n_rows(class);
            let thr: Vec<f64> = p
                .rhs_of(class)
                .iter()
                .map(|&b| match class {
                    RowClass::Packing => (1.0 + opts.packing_slack) * b,
                    _ => b,
                })
                .collect();
            Rows {
                act: p.activities(class, x),
                slack: thr
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| p.row_slack(RowRef { class, row: i }, t, opts.feas_tol))
                    .collect(),
                le: (0..m)
                    .map(|i| p.row_sense(RowRef { class, row: i }) == RowSense::Le)
                    .collect(),
                thr,
            }
        });
        State {
            p,
            cost,
            rows,
            feas_tol: opts.feas_tol,
            frozen: Vec::new(),
        }
    }

    fn class(&self, c: RowClass) -> &Rows {
        &self.rows[slot(c)]
    }

    /// Applies `x_j += delta` and updates the rows of column `j`.
    fn step(&mut self, x: &mut [f64], j: usize, delta: f64) {
        x[j] += delta;
        for class in CLASSES {
            let (idx, val) = self.p.column(class, j);
            let rows = &mut self.rows[slot(class)];
            for (&i, &a) in idx.iter().zip(val) {
                rows.act[i] += delta * a;
            }
        }
    }

    /// Whether every row of `classes` in column `j` holds after
    /// `x_j += delta`.
    fn keeps(&self, classes: &[RowClass], j: usize, delta: f64) -> bool {
        classes.iter().all(|&class| {
            let (idx, val) = self.p.column(class, j);
            let rows = self.class(class);
            idx.iter()
                .zip(val)
                .all(|(&i, &a)| rows.holds_at(i, rows.act[i] + delta * a))
        })
    }

    fn report(&self, class: RowClass, i: usize) -> RowReport {
        let rows = self.class(class);
        let row = RowRef { class, row: i };
        RowReport {
            row,
            label: self.p.row_label(row).map(str::to_string),
            lhs: rows.act[i],
            rhs: rows.thr[i],
            deficit: rows.excess(i, rows.act[i]),
        }
    }

    /// Reports of the rows of `classes` that do not hold.
    fn violated(&self, classes: &[RowClass]) -> Vec<RowReport> {
        classes
            .iter()
            .flat_map(|&class| {
                let rows = self.class(class);
                (0..rows.act.len())
                    .filter(move |&i| !rows.holds(i))
                    .map(move |i| self.report(class, i))
            })
            .collect()
    }

    /// Phase 1: decrements until every Packing and Linking row holds.
    ///
    /// The candidate keys live in an ordered set; after a step only the
    /// columns that share a row with the changed column are re-scored, which
    /// gives the same choices as re-scoring every column (the reference
    /// implementation in the tests checks this).
    fn shrink(&mut self, x: &mut [f64]) -> Result<u64, PcError> {
        self.greedy(
            x,
            &LIMITS,
            -1.0,
            Self::shrink_key,
            Self::shrink_batch,
            Self::shrink_failure,
        )
    }

    /// The failure of phase 1: the rows still violated, and the short
    /// covering rows.
    fn shrink_failure(&self, _x: &[f64]) -> PcError {
        let still_violated = self.violated(&LIMITS);
        let uncovered = self.violated(&[RowClass::Covering]);
        failure(uncovered, still_violated, Vec::new(), Vec::new())
    }

    /// The greedy loop shared by phases 1 and 2: while a row of `classes`
    /// does not hold, move the best-keyed column by `delta` (ties to the
    /// lower column), then re-score its neighbours; `stuck` builds the error
    /// when no candidate is left.
    #[allow(clippy::too_many_arguments)]
    fn greedy<K: KeyOrd + Copy>(
        &mut self,
        x: &mut [f64],
        classes: &[RowClass],
        delta: f64,
        key: impl Fn(&Self, &[f64], usize) -> Option<K> + Copy,
        batch: impl Fn(&Self, &[f64], usize) -> f64,
        stuck: impl Fn(&Self, &[f64]) -> PcError,
    ) -> Result<u64, PcError> {
        let mut violated = self.count_violated(classes);
        if violated == 0 {
            return Ok(0);
        }
        let mut queue = Candidates::new(x.len());
        queue.fill((0..x.len()).map(|j| key(self, x, j)));
        let mut moves = 0u64;
        let mut steps = 0usize;
        let max_steps = self.max_steps();
        while violated > 0 {
            let Some(j) = queue.best() else {
                return Err(stuck(self, x));
            };
            if steps >= max_steps {
                return Err(stuck(self, x));
            }
            let t = batch(self, x, j);
            violated = self.step_counting(x, j, delta * t, classes, violated);
            moves = moves.saturating_add(t as u64);
            steps += 1;
            self.rescore_neighbours(x, j, &mut queue, key, delta > 0.0);
        }
        Ok(moves)
    }

    /// The most batched steps a greedy phase takes before giving up: each
    /// batch ends when a (row, column) pair changes regime, a column reaches
    /// a bound or a row its limit, so a few per non-zero suffice.
    fn max_steps(&self) -> usize {
        let rows: usize = self.rows.iter().map(|r| r.act.len()).sum();
        self.p
            .nnz()
            .saturating_add(rows)
            .saturating_add(self.p.n_vars())
            .saturating_mul(4)
            .saturating_add(64)
    }

    /// The largest `t ≤ cap` (an integer, `0` when even one step breaks a
    /// row) such that every row of `classes` in column `j` that holds now
    /// still holds after `x_j += dir·t`. Rows are linear in `t`, so each
    /// gives its limit in closed form; the result is then checked with the
    /// same arithmetic as [`State::step`] and lowered if rounding misled it.
    fn room(&self, classes: &[RowClass], j: usize, dir: f64, cap: f64) -> f64 {
        let mut t = cap.floor();
        for &class in classes {
            let (idx, val) = self.p.column(class, j);
            let rows = self.class(class);
            for (&i, &a) in idx.iter().zip(val) {
                if !rows.holds(i) {
                    continue;
                }
                // Growth of the excess per step.
                let g = if rows.le[i] { dir * a } else { -dir * a };
                if g > 0.0 {
                    let excess = rows.excess(i, rows.act[i]);
                    t = t.min(((rows.slack[i] - excess) / g).floor().max(0.0));
                }
            }
        }
        let fits = |t: f64| {
            classes.iter().all(|&class| {
                let (idx, val) = self.p.column(class, j);
                let rows = self.class(class);
                idx.iter()
                    .zip(val)
                    .all(|(&i, &a)| !rows.holds(i) || rows.holds_at(i, rows.act[i] + (dir * t) * a))
            })
        };
        let mut tries = 0;
        while t > 0.0 && !fits(t) {
            t = if t <= 16.0 || tries > 64 {
                t - 1.0
            } else {
                (t * (1.0 - 1e-9)).floor()
            };
            tries += 1;
            if tries > 256 {
                t = 0.0;
            }
        }
        if t == 0.0 && cap >= 1.0 && fits(1.0) {
            t = 1.0;
        }
        t
    }

    /// Phase-2 batch of column `j` (a candidate): as many increments as
    /// keep its key unchanged — every short covering row of `j` keeps a
    /// deficit of at least `C_kj` before each of them — capped by `u_j` and
    /// by the Packing and Linking rows; at least one.
    fn grow_batch(&self, x: &[f64], j: usize) -> f64 {
        let (idx, val) = self.p.column(RowClass::Covering, j);
        let cov = self.class(RowClass::Covering);
        let mut t = f64::INFINITY;
        for (&k, &a) in idx.iter().zip(val) {
            if !cov.holds(k) && a > 0.0 {
                // Until the deficit drops below C_kj, or the row holds.
                let d = cov.excess(k, cov.act[k]);
                t = t.min((d / a).floor()).min(((d - cov.slack[k]) / a).ceil());
            }
        }
        let cap = t.min(self.p.upper(j) - x[j]);
        self.room(&LIMITS, j, 1.0, cap).max(1.0)
    }

    /// Phase-1 batch of column `j` (a candidate): as many decrements as
    /// keep its key unchanged — each violated row of `j` keeps an excess of
    /// at least one step's relief, each covering row of `j` stays in the
    /// same regime (satisfied with room, or short) — capped by `x_j` and by
    /// the Packing and Linking rows that hold; at least one.
    fn shrink_batch(&self, x: &[f64], j: usize) -> f64 {
        let mut t = x[j];
        for class in LIMITS {
            let (idx, val) = self.p.column(class, j);
            let rows = self.class(class);
            for (&i, &a) in idx.iter().zip(val) {
                // Decrease of the excess per decrement.
                let g = if rows.le[i] { a } else { -a };
                if !rows.holds(i) && g > 0.0 {
                    // Until the excess drops below one step, or the row holds.
                    let e = rows.excess(i, rows.act[i]);
                    t = t.min((e / g).floor()).min(((e - rows.slack[i]) / g).ceil());
                }
            }
        }
        let (idx, val) = self.p.column(RowClass::Covering, j);
        let cov = self.class(RowClass::Covering);
        for (&k, &a) in idx.iter().zip(val) {
            let room = cov.act[k] - cov.thr[k];
            if room > 0.0 && a > 0.0 {
                t = t.min((room / a).floor());
            }
        }
        self.room(&LIMITS, j, -1.0, t).max(1.0)
    }

    /// Phase-1 key of column `j`: `(damage/relief, −c_j/relief)`, or `None`
    /// when `j` is not a candidate.
    fn shrink_key(&self, x: &[f64], j: usize) -> Option<(f64, f64)> {
        if !self.p.is_integer(j) || x[j] < 1.0 {
            return None;
        }
        let (damage, relief) = self.shrink_score(j)?;
        Some((norm(damage / relief), norm(-self.cost[j] / relief)))
    }

    /// Number of rows of `classes` that do not hold.
    fn count_violated(&self, classes: &[RowClass]) -> usize {
        classes
            .iter()
            .map(|&class| {
                let rows = self.class(class);
                (0..rows.act.len()).filter(|&i| !rows.holds(i)).count()
            })
            .sum()
    }

    /// [`State::step`], keeping `violated` (the number of rows of `classes`
    /// that do not hold) up to date; returns the new count.
    fn step_counting(
        &mut self,
        x: &mut [f64],
        j: usize,
        delta: f64,
        classes: &[RowClass],
        violated: usize,
    ) -> usize {
        let status = |st: &Self| -> usize {
            classes
                .iter()
                .map(|&class| {
                    let (idx, _) = st.p.column(class, j);
                    let rows = st.class(class);
                    idx.iter().filter(|&&i| !rows.holds(i)).count()
                })
                .sum()
        };
        let before = status(self);
        self.step(x, j, delta);
        violated + status(self) - before
    }

    /// Re-scores every column that shares a row (of any class) with column
    /// `j`, and `j` itself.
    ///
    /// With `growing` (phase 2, `x_j` just went up by one), a packing row's
    /// load only rose, which can turn a candidate into a non-candidate but
    /// never the reverse; so packing-row neighbours without a key are skipped
    /// (after covering and linking neighbours, which are always re-scored).
    fn rescore_neighbours<K: KeyOrd + Copy>(
        &self,
        x: &[f64],
        j: usize,
        queue: &mut Candidates<K>,
        key: impl Fn(&Self, &[f64], usize) -> Option<K>,
        growing: bool,
    ) {
        queue.next_epoch();
        let _ = queue.first_visit(j);
        queue.rescore(j, key(self, x, j));
        for class in [RowClass::Covering, RowClass::Linking, RowClass::Packing] {
            let skip_keyless = growing && class == RowClass::Packing;
            let (rows, _) = self.p.column(class, j);
            for &i in rows {
                let (cols, _) = self.p.row(RowRef { class, row: i });
                for &c in cols {
                    if skip_keyless && queue.key[c].is_none() {
                        continue;
                    }
                    if queue.first_visit(c) {
                        queue.rescore(c, key(self, x, c));
                    }
                }
            }
        }
    }

    /// `(damage, relief)` of decrementing column `j`, or `None` when the
    /// decrement gives no relief or breaks a Packing or Linking row that
    /// holds.
    fn shrink_score(&self, j: usize) -> Option<(f64, f64)> {
        let mut relief = 0.0;
        for class in LIMITS {
            let (idx, val) = self.p.column(class, j);
            let rows = self.class(class);
            for (&i, &a) in idx.iter().zip(val) {
                let before = rows.act[i];
                let after = before - a;
                if rows.holds_at(i, before) {
                    if !rows.holds_at(i, after) {
                        return None;
                    }
                } else {
                    relief += rows.violation(i, before) - rows.violation(i, after);
                }
            }
        }
        if relief <= 0.0 {
            return None;
        }
        let (idx, val) = self.p.column(RowClass::Covering, j);
        let cov = self.class(RowClass::Covering);
        let damage: f64 = idx
            .iter()
            .zip(val)
            .map(|(&k, &a)| {
                let s = cov.act[k];
                let q = cov.thr[k];
                (q - (s - a)).max(0.0) - (q - s).max(0.0)
            })
            .sum();
        Some((damage, relief))
    }

    /// `gain_j = Σ_{k∈D} min(C_kj, d_k)` over the short covering rows.
    fn gain(&self, j: usize) -> f64 {
        let (idx, val) = self.p.column(RowClass::Covering, j);
        let cov = self.class(RowClass::Covering);
        idx.iter()
            .zip(val)
            .filter(|&(&k, _)| !cov.holds(k))
            .map(|(&k, &a)| a.min(cov.excess(k, cov.act[k])))
            .sum()
    }

    /// Phase 2: increments until every Covering row holds (incremental
    /// candidate keys, as in [`State::shrink`]).
    fn grow(&mut self, x: &mut [f64]) -> Result<u64, PcError> {
        self.greedy(
            x,
            &[RowClass::Covering],
            1.0,
            Self::grow_key,
            Self::grow_batch,
            Self::grow_failure,
        )
    }

    /// Phase 2 after it stalled with `stalled`: up to
    /// [`unblock::MAX_UNBLOCKS`] times, an unblocking step
    /// ([`State::unblock`]) and phase 2 again; the first error stands when
    /// no step applies or none suffices. Returns the unit steps taken.
    fn grow_unblocking(&mut self, x: &mut [f64], stalled: PcError) -> Result<u64, PcError> {
        let mut moves = 0u64;
        for _ in 0..unblock::MAX_UNBLOCKS {
            if !self.unblock(x) {
                break;
            }
            moves = moves.saturating_add(1);
            if let Ok(m) = self.grow(x) {
                return Ok(moves.saturating_add(m));
            }
        }
        Err(stalled)
    }

    /// Phase-2 key of column `j`: `c_j/gain_j`, or `None` when `j` is not a
    /// candidate (not integer, at its bound, frozen by an unblocking step,
    /// no gain, or an increment would break a Packing or Linking row).
    fn grow_key(&self, x: &[f64], j: usize) -> Option<f64> {
        if !self.p.is_integer(j) || x[j] >= self.p.upper(j) || self.frozen(j) {
            return None;
        }
        let gain = self.gain(j);
        if gain <= 0.0 || !self.keeps(&LIMITS, j, 1.0) {
            return None;
        }
        Some(norm(self.cost[j] / gain))
    }

    /// The failure of phase 2: short rows, the rows that block helpful
    /// increments, and the helpful columns at their bounds.
    fn grow_failure(&self, x: &[f64]) -> PcError {
        let uncovered = self.violated(&[RowClass::Covering]);
        let cov = self.class(RowClass::Covering);
        let mut blocking = Vec::new();
        let mut saturated = Vec::new();
        for (j, &xj) in x.iter().enumerate() {
            let (idx, _) = self.p.column(RowClass::Covering, j);
            if !self.p.is_integer(j) || idx.iter().all(|&k| cov.holds(k)) {
                continue;
            }
            if xj >= self.p.upper(j) {
                saturated.push(j);
                continue;
            }
            for class in LIMITS {
                let (idx, val) = self.p.column(class, j);
                let rows = self.class(class);
                for (&i, &a) in idx.iter().zip(val) {
                    if !rows.holds_at(i, rows.act[i] + a) {
                        blocking.push(RowRef { class, row: i });
                    }
                }
            }
        }
        blocking.sort_unstable();
        blocking.dedup();
        failure(uncovered, Vec::new(), blocking, saturated)
    }

    /// Whether increments of column `j` are limited by some row (or its
    /// bound), so that the greedy fill terminates.
    fn fill_limited(&self, j: usize) -> bool {
        if self.p.upper(j).is_finite() {
            return true;
        }
        CLASSES.iter().any(|&class| {
            let (idx, val) = self.p.column(class, j);
            let rows = self.class(class);
            idx.iter().zip(val).any(|(&i, &a)| (a > 0.0) == rows.le[i])
        })
    }

    /// Phase 3: reverse delete over `c_j > 0`, then greedy fill over
    /// `c_j < 0`, one ordered pass each.
    fn improve(&mut self, x: &mut [f64]) -> u64 {
        let mut moves = 0u64;
        let ints: Vec<usize> = (0..x.len()).filter(|&j| self.p.is_integer(j)).collect();
        // Columns at 0 cannot be decremented: leave them out of the order.
        let mut order: Vec<usize> = ints
            .iter()
            .copied()
            .filter(|&j| self.cost[j] > 0.0 && x[j] >= 1.0)
            .collect();
        order.sort_unstable_by(|&a, &b| self.cost[b].total_cmp(&self.cost[a]).then(a.cmp(&b)));
        for &j in &order {
            // All rows hold here, so this is the unit loop's stopping point.
            let t = self.room(&CLASSES, j, -1.0, x[j]);
            if t > 0.0 {
                self.step(x, j, -t);
                moves = moves.saturating_add(t as u64);
            }
        }
        let mut order: Vec<usize> = ints
            .into_iter()
            .filter(|&j| self.cost[j] < 0.0 && self.fill_limited(j))
            .collect();
        order.sort_unstable_by(|&a, &b| self.cost[a].total_cmp(&self.cost[b]).then(a.cmp(&b)));
        for &j in &order {
            let t = self.room(&CLASSES, j, 1.0, self.p.upper(j) - x[j]);
            if t > 0.0 && t.is_finite() {
                self.step(x, j, t);
                moves = moves.saturating_add(t as u64);
            }
        }
        moves
    }

    /// Independent re-check with [`evaluate`] (packing rows against their
    /// bicriteria thresholds).
    fn final_check(&self, x: &[f64]) -> Result<(), PcError> {
        let ev = evaluate(self.p, x, self.feas_tol);
        if let Some(&(j, v)) = ev.violated_columns.first() {
            return Err(PcError::InvalidOption {
                option: "x",
                reason: format!("column {j} left its box or integrality: {v}"),
            });
        }
        let pk = self.class(RowClass::Packing);
        let mut uncovered = Vec::new();
        let mut still = Vec::new();
        for mut r in ev.violated_rows {
            match r.row.class {
                RowClass::Packing => {
                    let i = r.row.row;
                    if pk.holds_at(i, r.lhs) {
                        continue;
                    }
                    r.rhs = pk.thr[i];
                    r.deficit = pk.excess(i, r.lhs);
                    still.push(r);
                }
                RowClass::Covering => uncovered.push(r),
                RowClass::Linking => still.push(r),
            }
        }
        if uncovered.is_empty() && still.is_empty() {
            Ok(())
        } else {
            Err(failure(uncovered, still, Vec::new(), Vec::new()))
        }
    }
}

fn failure(
    uncovered: Vec<RowReport>,
    still_violated: Vec<RowReport>,
    blocking_rows: Vec<RowRef>,
    saturated_cols: Vec<usize>,
) -> PcError {
    let total_deficit = uncovered
        .iter()
        .chain(&still_violated)
        .map(|r| r.deficit)
        .sum();
    PcError::RepairFailed(Box::new(RepairFailure {
        uncovered,
        still_violated,
        blocking_rows,
        saturated_cols,
        total_deficit,
    }))
}

/// The straightforward O(steps × nnz) repair phases, re-scoring every
/// column at every step: the reference the incremental phases must match.
#[cfg(test)]
impl State<'_> {
    fn shrink_naive(&mut self, x: &mut [f64]) -> Result<u64, PcError> {
        let mut moves = 0;
        while self.count_violated(&LIMITS) > 0 {
            let mut best: Option<((f64, f64), usize)> = None;
            for j in 0..x.len() {
                if let Some(key) = self.shrink_key(x, j)
                    && best.is_none_or(|(b, _)| key.cmp_key(&b) == Ordering::Less)
                {
                    best = Some((key, j));
                }
            }
            let Some((_, j)) = best else {
                return Err(self.shrink_failure(x));
            };
            let t = self.shrink_batch(x, j);
            self.step(x, j, -t);
            moves += t as u64;
        }
        Ok(moves)
    }

    fn grow_naive(&mut self, x: &mut [f64]) -> Result<u64, PcError> {
        self.grow_scan(x, true)
    }

    /// Phase 2 by a full scan per move: the cheapest column grows by its
    /// batch (`batched`) or by one unit.
    fn grow_scan(&mut self, x: &mut [f64], batched: bool) -> Result<u64, PcError> {
        let mut moves = 0;
        while self.count_violated(&[RowClass::Covering]) > 0 {
            let mut best: Option<(f64, usize)> = None;
            for j in 0..x.len() {
                if let Some(key) = self.grow_key(x, j)
                    && best.is_none_or(|(b, _)| key.total_cmp(&b) == Ordering::Less)
                {
                    best = Some((key, j));
                }
            }
            let Some((_, j)) = best else {
                return Err(self.grow_failure(x));
            };
            let t = if batched { self.grow_batch(x, j) } else { 1.0 };
            self.step(x, j, t);
            moves += t as u64;
        }
        Ok(moves)
    }
}

/// Phase 2 one unit at a time, the greedy before batches: with
/// non-negative costs its choices are those of the batched phase.
#[cfg(test)]
impl State<'_> {
    fn grow_unit(&mut self, x: &mut [f64]) -> Result<u64, PcError> {
        self.grow_scan(x, false)
    }
}

/// [`repair`] with the reference phases.
#[cfg(test)]
fn repair_naive(
    p: &PcProblem,
    x: &mut [f64],
    opts: &RepairOptions,
) -> Result<RepairReport, PcError> {
    run_phases(
        p,
        x,
        opts,
        None,
        Search::Full,
        State::shrink_naive,
        State::grow_naive,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcip::PcBuilder;
    use crate::pcip::known_answers::{ka1, ka2, ka2b, ka3, ka4, ka5};

    fn opts() -> RepairOptions {
        RepairOptions::default()
    }

    /// Runs repair from `start`; returns the final point and the result.
    fn run(
        p: &PcProblem,
        start: &[f64],
        o: &RepairOptions,
    ) -> (Vec<f64>, Result<RepairReport, PcError>) {
        let mut x = start.to_vec();
        let r = repair(p, &mut x, o);
        if r.is_ok() {
            let ev = evaluate(p, &x, o.feas_tol);
            let bad: Vec<_> = ev
                .violated_rows
                .iter()
                .filter(|r| {
                    r.row.class != RowClass::Packing || {
                        let t = (1.0 + o.packing_slack) * r.rhs;
                        r.lhs - t > o.feas_tol * t.max(1.0)
                    }
                })
                .collect();
            assert!(bad.is_empty(), "Ok with violated rows {bad:?} at {x:?}");
            assert!(ev.violated_columns.is_empty(), "{x:?}");
        }
        (x, r)
    }

    fn ok(p: &PcProblem, start: &[f64]) -> (Vec<f64>, RepairReport) {
        let (x, r) = run(p, start, &opts());
        (x, r.unwrap_or_else(|e| panic!("{start:?}: {e}")))
    }

    fn failed(p: &PcProblem, start: &[f64]) -> (Vec<f64>, RepairFailure) {
        match run(p, start, &opts()) {
            (x, Err(PcError::RepairFailed(f))) => (x, *f),
            (x, r) => panic!("{start:?} → {x:?}: expected RepairFailed, got {r:?}"),
        }
    }

    /// All integer points of the box `∏ {0..=u_j}`.
    fn box_points(u: &[u32]) -> Vec<Vec<f64>> {
        let mut out = vec![Vec::new()];
        for &uj in u {
            out = out
                .into_iter()
                .flat_map(|v| {
                    (0..=uj).map(move |t| {
                        let mut w = v.clone();
                        w.push(f64::from(t));
                        w
                    })
                })
                .collect();
        }
        out
    }

    #[test]
    fn ka1_mapping() {
        let p = ka1();
        let table: [([f64; 3], [f64; 3]); 8] = [
            ([0.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
            ([0.0, 0.0, 1.0], [1.0, 0.0, 1.0]),
            ([0.0, 1.0, 0.0], [1.0, 1.0, 0.0]),
            ([1.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
            ([1.0, 1.0, 1.0], [0.0, 1.0, 1.0]),
            // Feasible points stay as they are.
            ([0.0, 1.0, 1.0], [0.0, 1.0, 1.0]),
            ([1.0, 0.0, 1.0], [1.0, 0.0, 1.0]),
            ([1.0, 1.0, 0.0], [1.0, 1.0, 0.0]),
        ];
        for (start, want) in table {
            let (x, r) = ok(&p, &start);
            assert_eq!(x, want, "from {start:?}");
            assert_eq!(r.objective, 2.0, "the final objective is always 2");
        }
    }

    #[test]
    fn ka2_every_point_repairs_to_the_unique_optimum() {
        let p = ka2();
        for start in box_points(&[1, 1, 1]) {
            let (x, r) = ok(&p, &start);
            assert_eq!(x, vec![1.0, 1.0, 1.0], "from {start:?}");
            assert_eq!(r.objective, 10.0);
        }
    }

    #[test]
    fn ka2b_rounded_c_repairs_to_two() {
        let p = ka2b();
        // Phase 2 picks C because 4/2 < 3/1.
        for start in [[0.0, 0.0, 1.0], [0.0, 0.0, 2.0]] {
            let (x, r) = ok(&p, &start);
            assert_eq!(x, vec![0.0, 0.0, 2.0], "from {start:?}");
            assert_eq!(r.objective, 8.0);
        }
        let (_, r) = ok(&p, &[0.0, 0.0, 1.0]);
        assert_eq!((r.grow_moves, r.prune_moves), (1, 0));
    }

    #[test]
    fn ka3_phase_3_removes_the_surplus() {
        let p = ka3();
        for start in [
            [2.0, 1.0, 0.0, 0.0],
            [3.0, 1.0, 0.0, 0.0],
            [3.0, 2.0, 0.0, 0.0],
        ] {
            let (x, r) = ok(&p, &start);
            assert_eq!(x, vec![2.0, 1.0, 0.0, 0.0], "from {start:?}");
            assert_eq!(r.objective, 6.0);
        }
    }

    #[test]
    fn ka4_mapping_and_beta_half_probabilities() {
        let p = ka4();
        // β = 1: x2 rounds down → 13 (the fill adds nothing); up → x1 dropped → 15.
        let (x, r) = ok(&p, &[1.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            (x, r.objective, r.moves),
            (vec![1.0, 0.0, 0.0, 1.0], 13.0, 0)
        );
        let (x, r) = ok(&p, &[1.0, 1.0, 0.0, 1.0]);
        assert_eq!((x, r.objective), (vec![0.0, 1.0, 0.0, 1.0], 15.0));
        assert_eq!((r.shrink_moves, r.prune_moves), (1, 0));
        // β = 1/2: y = (1/2, 1/4, 0, 1/2); P[final 15] = 5/8, P[feasible] = 7/8.
        let (mut p15, mut pfeas) = (0.0, 0.0);
        for x1 in [0.0, 1.0] {
            for x2 in [0.0, 1.0] {
                for x4 in [0.0, 1.0] {
                    let w = 0.5 * if x2 == 1.0 { 0.25 } else { 0.75 } * 0.5;
                    let start = [x1, x2, 0.0, x4];
                    if evaluate(&p, &start, 1e-9).is_feasible() {
                        pfeas += w;
                    }
                    let (_, r) = ok(&p, &start);
                    assert!(r.objective == 13.0 || r.objective == 15.0);
                    if r.objective == 15.0 {
                        p15 += w;
                    }
                }
            }
        }
        assert_eq!((p15, pfeas), (5.0 / 8.0, 7.0 / 8.0));
    }

    #[test]
    fn ka5_mapping() {
        let p = ka5();
        // Every start point repairs to the optimum. From the first four the
        // greedy phase 2 stalls (x2 first, 3/1 being cheapest, then x4 is
        // blocked by M2) and an unblocking step takes a unit off x1.
        let oks: [[f64; 4]; 8] = [
            [0.0, 1.0, 2.0, 0.0],
            [0.0, 2.0, 2.0, 0.0],
            [0.0, 2.0, 2.0, 1.0],
            [1.0, 2.0, 2.0, 0.0],
            [0.0, 1.0, 2.0, 1.0],
            [1.0, 1.0, 2.0, 0.0],
            [1.0, 1.0, 2.0, 1.0],
            [1.0, 2.0, 2.0, 1.0],
        ];
        for start in oks {
            let (x, r) = ok(&p, &start);
            assert_eq!(x, vec![1.0, 1.0, 2.0, 1.0], "from {start:?}");
            assert_eq!(r.objective, 15.0);
        }
    }

    #[test]
    fn ka5_success_probabilities_for_other_betas() {
        let p = ka5();
        // Each column: (value, probability) pairs of the rounded outcome.
        let success = |cols: [&[(f64, f64)]; 4]| {
            let mut prob = 0.0;
            for &(a, pa) in cols[0] {
                for &(b, pb) in cols[1] {
                    for &(c, pc) in cols[2] {
                        for &(d, pd) in cols[3] {
                            let (x, r) = run(&p, &[a, b, c, d], &opts());
                            if let Ok(r) = r {
                                assert_eq!((x, r.objective), (vec![1.0, 1.0, 2.0, 1.0], 15.0));
                                prob += pa * pb * pc * pd;
                            }
                        }
                    }
                }
            }
            prob
        };
        let half = [(0.0, 0.5), (1.0, 0.5)];
        // With the unblocking step of phase 2, every rounding outcome
        // repairs to the optimum (before it, 1/2, 9/16 and 7/16 of them).
        // β = 1: x = (0|1, 1|2, 2, 0|1).
        assert_eq!(
            success([&half, &[(1.0, 0.5), (2.0, 0.5)], &[(2.0, 1.0)], &half]),
            1.0
        );
        // β = 3/2: y = (3/4, 2, 2, 3/4).
        let q = [(0.0, 0.25), (1.0, 0.75)];
        assert_eq!(success([&q, &[(2.0, 1.0)], &[(2.0, 1.0)], &q]), 1.0);
        // β = 1/2: y = (1/4, 3/4, 1, 1/4).
        let r = [(0.0, 0.75), (1.0, 0.25)];
        assert_eq!(success([&r, &q, &[(1.0, 1.0)], &r]), 1.0);
    }

    #[test]
    fn report_counts_moves() {
        let (_, r) = ok(&ka1(), &[0.0, 0.0, 0.0]);
        assert_eq!(
            (r.moves, r.shrink_moves, r.grow_moves, r.prune_moves),
            (2, 0, 2, 0)
        );
        let (_, r) = ok(&ka1(), &[1.0, 1.0, 1.0]);
        assert_eq!(
            (r.moves, r.shrink_moves, r.grow_moves, r.prune_moves),
            (1, 0, 0, 1)
        );
        let (_, r) = ok(&ka5(), &[1.0, 2.0, 2.0, 1.0]);
        assert_eq!(
            (r.moves, r.shrink_moves, r.grow_moves, r.prune_moves),
            (1, 1, 0, 0)
        );
        let (_, r) = ok(&ka3(), &[3.0, 2.0, 0.0, 0.0]);
        assert_eq!((r.moves, r.prune_moves), (2, 2));
        // KA2 from 0: C (gain 4), then A, then B.
        let (_, r) = ok(&ka2(), &[0.0, 0.0, 0.0]);
        assert_eq!((r.moves, r.grow_moves, r.objective), (3, 3, 10.0));
    }

    #[test]
    fn improve_can_be_switched_off() {
        let o = RepairOptions {
            improve: false,
            ..opts()
        };
        let (x, r) = run(&ka1(), &[1.0, 1.0, 1.0], &o);
        assert_eq!((x, r.unwrap().objective), (vec![1.0, 1.0, 1.0], 3.0));
        let (x, r) = run(&ka4(), &[0.0, 0.0, 0.0, 0.0], &o);
        assert_eq!((x, r.unwrap().moves), (vec![0.0; 4], 0));
    }

    fn pure_packing(sense: Sense) -> PcProblem {
        PcBuilder::new(sense, 3)
            .objective(vec![3.0, 2.0, 0.0])
            .upper(0, Some(2))
            .upper(2, Some(3))
            .packing_row(&[(0, 2.0), (1, 1.0), (2, 1.0)], 3.0)
            .packing_row(&[(0, 1.0), (2, 2.0)], 4.0)
            .packing_row(&[(1, 3.0), (2, 1.0)], 2.0)
            .packing_row(&[(2, 1.0)], 0.0)
            .build()
            .unwrap()
    }

    #[test]
    fn pure_packing_repairs_from_every_box_point() {
        for sense in [Sense::Minimise, Sense::Maximise] {
            let p = pure_packing(sense);
            for start in box_points(&[2, 1, 3]) {
                let (x, r) = ok(&p, &start);
                assert_eq!(x[2], 0.0, "capacity 0 forces x3 = 0");
                if sense == Sense::Minimise {
                    assert_eq!((x.clone(), r.objective), (vec![0.0; 3], 0.0));
                } else {
                    // The fill ends at a maximal point: no unit increment fits.
                    for j in 0..2 {
                        let mut y = x.clone();
                        y[j] += 1.0;
                        assert!(y[j] > p.upper(j) || !evaluate(&p, &y, 1e-9).is_feasible());
                    }
                }
            }
        }
    }

    #[test]
    fn pure_covering_repairs_from_every_box_point() {
        let p = PcBuilder::new(Sense::Minimise, 4)
            .objective(vec![3.0, 1.0, 2.0, 0.0])
            .upper(0, Some(2))
            .upper(2, Some(3))
            .upper(3, None)
            .covering_row(&[(0, 1.0), (1, 2.0)], 3.0)
            .covering_row(&[(1, 1.0), (2, 1.0)], 2.0)
            .covering_row(&[(0, 3.0), (2, 1.0)], 4.0)
            .covering_row(&[(2, 0.5), (3, 0.25)], 1.5)
            .build()
            .unwrap();
        for start in box_points(&[2, 1, 3, 4]) {
            let (x, r) = ok(&p, &start);
            // Reverse delete leaves a minimal point for the priced columns.
            for j in 0..3 {
                if x[j] > 0.0 {
                    let mut y = x.clone();
                    y[j] -= 1.0;
                    assert!(!evaluate(&p, &y, 1e-9).is_feasible(), "{x:?} not minimal");
                }
            }
            assert_eq!(r.objective, p.objective_value(&x));
        }
    }

    #[test]
    fn linking_rows_are_never_broken() {
        // x1 ≤ x0 (Ge: x0 − x1 ≥ 0); packing x0 + x1 ≤ 1; covering x0 + x1 ≥ 1.
        let p = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![5.0, 1.0])
            .packing_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .linking_row(&[(0, 1.0), (1, -1.0)], RowSense::Ge, 0.0)
            .build()
            .unwrap();
        // Phase 1: the cost key prefers dropping x0 (−5 < −1), which would
        // break the linking row; x1 is dropped instead.
        let (x, r) = ok(&p, &[1.0, 1.0]);
        assert_eq!((x, r.shrink_moves), (vec![1.0, 0.0], 1));
        // Phase 2: x1 is cheaper (1/1 < 5/1) but would break it.
        let (x, r) = ok(&p, &[0.0, 0.0]);
        assert_eq!((x, r.grow_moves), (vec![1.0, 0.0], 1));
        // The same row written as x1 − x0 ≤ 0 behaves identically.
        let q = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![5.0, 1.0])
            .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .linking_row(&[(0, -1.0), (1, 1.0)], RowSense::Le, 0.0)
            .build()
            .unwrap();
        // Phase 3: deleting x0 (the most expensive) would break it; x1 goes.
        let (x, r) = ok(&q, &[1.0, 1.0]);
        assert_eq!((x, r.prune_moves), (vec![1.0, 0.0], 1));
        let (x, _) = ok(&q, &[0.0, 0.0]);
        assert_eq!(x, vec![1.0, 0.0]);
        // A violated linking row is repaired by shrinking: (0, 1) violates
        // x1 ≤ x0; only x1 relieves it.
        let (x, r) = ok(&q, &[0.0, 1.0]);
        assert_eq!((x, r.shrink_moves, r.grow_moves), (vec![1.0, 0.0], 1, 1));
        // Greedy fill (max form): x1 (value 5) cannot enter before x0.
        let m = PcBuilder::new(Sense::Maximise, 2)
            .objective(vec![1.0, 5.0])
            .packing_row(&[(0, 1.0), (1, 1.0)], 2.0)
            .linking_row(&[(0, 1.0), (1, -1.0)], RowSense::Ge, 0.0)
            .build()
            .unwrap();
        let (x, _) = ok(&m, &[0.0, 0.0]);
        assert_eq!(x, vec![1.0, 0.0], "one ordered pass: x1 is not revisited");
        let (x, _) = ok(&m, &[1.0, 1.0]);
        assert_eq!(x, vec![1.0, 1.0]);
        // Shrinking stalls when every relieving move breaks a linking row:
        // x0 ≥ 1 (linking) against packing x0 ≤ 0.5.
        let s = PcBuilder::new(Sense::Minimise, 1)
            .objective(vec![1.0])
            .packing_row(&[(0, 1.0)], 0.5)
            .linking_row(&[(0, 1.0)], RowSense::Ge, 1.0)
            .build()
            .unwrap();
        let (x, f) = failed(&s, &[1.0]);
        assert_eq!(x, vec![1.0]);
        assert_eq!(
            f.still_violated
                .iter()
                .map(|r| (r.row, r.deficit))
                .collect::<Vec<_>>(),
            vec![(
                RowRef {
                    class: RowClass::Packing,
                    row: 0
                },
                0.5
            )]
        );
        assert_eq!(f.total_deficit, 0.5);
    }

    #[test]
    fn linking_rows_block_growth_and_are_reported() {
        // Covering x0 ≥ 1 but linking x0 − x1 ≤ 0 and x1 ≤ 0 (linking Le).
        let p = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![1.0, 1.0])
            .covering_row(&[(0, 1.0)], 1.0)
            .linking_row(&[(0, 1.0), (1, -1.0)], RowSense::Le, 0.0)
            .linking_row(&[(1, 1.0)], RowSense::Le, 0.0)
            .build()
            .unwrap();
        let (x, f) = failed(&p, &[0.0, 0.0]);
        assert_eq!(x, vec![0.0, 0.0]);
        assert_eq!(
            f.blocking_rows,
            vec![RowRef {
                class: RowClass::Linking,
                row: 0
            }]
        );
        assert!(f.saturated_cols.is_empty());
        assert_eq!(f.total_deficit, 1.0);
    }

    #[test]
    fn continuous_columns_are_untouched() {
        // x2 ∈ [0, 2.5] continuous.
        let p = PcBuilder::new(Sense::Minimise, 3)
            .objective(vec![1.0, 1.0, 0.5])
            .continuous(2, 2.5)
            .covering_row(&[(0, 1.0), (1, 1.0), (2, 1.0)], 2.0)
            .packing_row(&[(0, 1.0), (2, 1.0)], 2.0)
            .build()
            .unwrap();
        let (x, r) = ok(&p, &[0.0, 0.0, 0.7]);
        // x0 first (tie on 1/1, lower index), then x0 is blocked by the
        // packing row and x1 covers the remaining 0.3.
        assert_eq!(x, vec![1.0, 1.0, 0.7]);
        assert_eq!(x[2].to_bits(), 0.7f64.to_bits());
        assert_eq!((r.grow_moves, r.objective), (2, 2.35));
        // Only the continuous column overloads the row: nothing to shrink.
        let (x, f) = failed(&p, &[0.0, 1.0, 2.5]);
        assert_eq!(x, vec![0.0, 1.0, 2.5]);
        assert_eq!(f.still_violated.len(), 1);
        assert_eq!(f.still_violated[0].row.class, RowClass::Packing);
        // A continuous column with negative canonical cost is not filled.
        let m = PcBuilder::new(Sense::Maximise, 2)
            .objective(vec![1.0, 1.0])
            .continuous(1, 1.0)
            .packing_row(&[(0, 1.0), (1, 1.0)], 3.0)
            .build()
            .unwrap();
        let (x, _) = ok(&m, &[0.0, 0.25]);
        assert_eq!(x, vec![1.0, 0.25]);
    }

    #[test]
    fn packing_slack_accepts_loads_up_to_the_bicriteria_threshold() {
        let p = PcBuilder::new(Sense::Maximise, 3)
            .objective(vec![1.0, 1.0, 1.0])
            .packing_row(&[(0, 1.0), (1, 1.0), (2, 1.0)], 2.0)
            .build()
            .unwrap();
        let with = |d: f64| RepairOptions {
            packing_slack: d,
            ..opts()
        };
        // δ = 0: all three keys tie, the lowest index is dropped.
        let (x, r) = run(&p, &[1.0, 1.0, 1.0], &with(0.0));
        assert_eq!((x, r.unwrap().shrink_moves), (vec![0.0, 1.0, 1.0], 1));
        // δ = 1/2: threshold 3, the point is accepted as is.
        let (x, r) = run(&p, &[1.0, 1.0, 1.0], &with(0.5));
        let r = r.unwrap();
        assert_eq!((x, r.moves, r.objective), (vec![1.0; 3], 0, 3.0));
        // …and the fill uses the relaxed threshold too.
        let (x, r) = run(&p, &[0.0, 0.0, 0.0], &with(0.5));
        assert_eq!((x, r.unwrap().prune_moves), (vec![1.0; 3], 3));
        // δ = 0.4: threshold 2.8 < 3.
        let (x, r) = run(&p, &[1.0, 1.0, 1.0], &with(0.4));
        assert_eq!((x, r.unwrap().shrink_moves), (vec![0.0, 1.0, 1.0], 1));
    }

    #[test]
    fn invalid_inputs_are_rejected() {
        let p = ka1();
        let mut x = vec![0.0; 2];
        assert!(matches!(
            repair(&p, &mut x, &opts()),
            Err(PcError::DimensionMismatch {
                expected: 3,
                got: 2,
                ..
            })
        ));
        for (tol, slack, name) in [
            (-1e-9, 0.0, "feas_tol"),
            (f64::NAN, 0.0, "feas_tol"),
            (1e-9, -0.1, "packing_slack"),
            (1e-9, f64::NAN, "packing_slack"),
            (1e-9, f64::INFINITY, "packing_slack"),
        ] {
            let o = RepairOptions {
                feas_tol: tol,
                packing_slack: slack,
                improve: true,
            };
            let mut x = vec![0.0; 3];
            match repair(&p, &mut x, &o) {
                Err(PcError::InvalidOption { option, .. }) => assert_eq!(option, name),
                r => panic!("{r:?}"),
            }
        }
        let mut x = vec![0.0, f64::NAN, 1.0];
        assert!(matches!(
            repair(&p, &mut x, &opts()),
            Err(PcError::InvalidOption { option: "x", .. })
        ));
    }

    #[test]
    fn start_points_are_clamped_and_rounded() {
        let p = ka5();
        // (−1, 0.6, 7, 1.4) → (0, 1, 2, 1) → (1, 1, 2, 1).
        let (x, r) = ok(&p, &[-1.0, 0.6, 7.0, 1.4]);
        assert_eq!((x, r.objective), (vec![1.0, 1.0, 2.0, 1.0], 15.0));
    }

    /// A tiny deterministic generator for the soundness sweep.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    /// A placement-like program large enough that many steps re-score
    /// overlapping neighbourhoods: the incremental phases make exactly the
    /// reference's choices.
    #[test]
    fn incremental_phases_match_the_reference_on_placements() {
        let mut g = Lcg(7);
        for case in 0..6 {
            let (jobs, machines) = (12 + case, 6 + case % 3);
            let n = jobs * machines;
            let mut b = PcBuilder::new(Sense::Minimise, n)
                .objective((0..n).map(|_| 1.0 + g.below(5) as f64).collect());
            for j in 0..n {
                b = b.upper(j, Some(3));
            }
            for job in 0..jobs {
                let row: Vec<(usize, f64)> = (0..machines)
                    .map(|m| (job * machines + m, 1.0 + g.below(3) as f64))
                    .collect();
                b = b.covering_row(&row, 3.0 + g.below(6) as f64);
            }
            for m in 0..machines {
                let row: Vec<(usize, f64)> = (0..jobs)
                    .map(|job| (job * machines + m, 1.0 + g.below(2) as f64))
                    .collect();
                b = b.packing_row(&row, (jobs as f64) * 1.2);
            }
            let p = b.build().unwrap();
            let mut shrunk = 0;
            for it in 0..6 {
                // Random start points from sparse (short) to dense (overloaded).
                let start: Vec<f64> = (0..n)
                    .map(|_| {
                        if g.below(4) <= it % 4 {
                            g.below(4) as f64
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let (mut a, mut r) = (start.clone(), start.clone());
                let fast = repair(&p, &mut a, &opts());
                let slow = repair_naive(&p, &mut r, &opts());
                assert_eq!(fast, slow);
                assert_eq!(a, r);
                // Batches make the moves of the unit greedy (costs ≥ 0).
                let mut u = start.clone();
                let unit = run_phases(
                    &p,
                    &mut u,
                    &opts(),
                    None,
                    Search::Full,
                    State::shrink,
                    State::grow_unit,
                );
                assert_eq!(fast, unit);
                assert_eq!(a, u);
                shrunk += u64::from(fast.is_ok_and(|f| f.shrink_moves > 0));
            }
            assert!(shrunk > 0, "case {case}: phase 1 never ran");
        }
    }

    #[test]
    fn never_ok_with_an_infeasible_point() {
        let mut g = Lcg(42);
        let mut checked = 0;
        for case in 0..200 {
            let n = 1 + g.below(4) as usize;
            let sense = if case % 2 == 0 {
                Sense::Minimise
            } else {
                Sense::Maximise
            };
            let u: Vec<u32> = (0..n).map(|_| 1 + g.below(2) as u32).collect();
            let mut b =
                PcBuilder::new(sense, n).objective((0..n).map(|_| g.below(6) as f64).collect());
            for (j, &uj) in u.iter().enumerate() {
                b = b.upper(j, Some(uj));
            }
            let row = |g: &mut Lcg, signed: bool| -> Vec<(usize, f64)> {
                let mut e: Vec<(usize, f64)> = (0..n)
                    .filter_map(|j| {
                        let a = g.below(4) as f64 - if signed { 2.0 } else { 0.0 };
                        (a != 0.0).then_some((j, a))
                    })
                    .collect();
                if e.is_empty() {
                    e.push((g.below(n as u64) as usize, 1.0));
                }
                e
            };
            // 0: all classes, 1: packing only, 2: covering only, 3: packing and covering.
            let mixed = case % 4;
            for _ in 0..g.below(3) {
                if mixed != 2 {
                    b = b.packing_row(&row(&mut g, false), g.below(7) as f64);
                }
            }
            for _ in 0..g.below(3) {
                if mixed != 1 {
                    b = b.covering_row(&row(&mut g, false), 1.0 + g.below(6) as f64);
                }
            }
            if mixed == 0 {
                let s = if g.below(2) == 0 {
                    RowSense::Le
                } else {
                    RowSense::Ge
                };
                b = b.linking_row(&row(&mut g, true), s, g.below(3) as f64 - 1.0);
            }
            let Ok(p) = b.build() else { continue };
            let pure = p.n_rows(RowClass::Linking) == 0
                && (p.n_rows(RowClass::Packing) == 0 || p.n_rows(RowClass::Covering) == 0);
            for start in box_points(&u) {
                let (x, r) = run(&p, &start, &opts()); // `run` asserts feasibility on Ok
                // The incremental phases choose exactly as the full re-scans.
                let mut y = start.clone();
                let naive = repair_naive(&p, &mut y, &opts());
                assert_eq!(r, naive, "incremental and reference repair differ");
                if r.is_ok() {
                    assert_eq!(x, y, "incremental and reference repair differ");
                }
                match r {
                    Ok(_) => {}
                    Err(PcError::RepairFailed(_)) => assert!(!pure, "pure instance failed"),
                    Err(e) => panic!("{e}"),
                }
                checked += 1;
            }
        }
        assert!(checked > 500, "{checked}");
    }
}
