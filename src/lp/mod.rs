//! Linear and mixed-integer programs: a backend-neutral sparse model, solve
//! options, and a solution with primal values, duals and a status.
//!
//! This module is the crate's only door to an LP/MIP solver. Formulation code
//! builds a [`LinearProgram`] (sparse rows over columns with bounds, costs and
//! integrality), picks [`SolveOptions`], and calls [`solve`], which returns an
//! [`LpSolution`]. The solver itself ([HiGHS](https://highs.dev), through the
//! `highs` crate) is reached only from the private `lp::highs` adapter behind
//! the `highs` cargo feature; without that feature [`solve`] returns
//! [`LpError::SolverUnavailable`] and everything else here still works.
//! Solvers whose MIP optimum or dual bound is used as a proof take their
//! limits as an [`ExactMipLimits`], which validates them and turns them into
//! [`SolveOptions`] without presolve.
//!
//! # The model
//!
//! ```text
//! minimise or maximise   c·x + offset
//! subject to             row_lower_i ≤ Σ_j a_ij x_j ≤ row_upper_i   for every row i
//!                        col_lower_j ≤ x_j ≤ col_upper_j            for every column j
//!                        x_j integer                                for ColumnKind::Integer
//! ```
//!
//! Bounds may be `±f64::INFINITY`; a `≥` row is `(b, +∞)`, a `≤` row is
//! `(−∞, b)`, an equation is `(b, b)`.
//!
//! # Statuses are data, not errors
//!
//! Infeasible, unbounded and "unbounded or infeasible" are three different
//! [`LpStatus`] values and are never merged. A solve stopped by a time limit
//! is [`LpStatus::TimeLimit`]; if the solver has an incumbent, it is in
//! [`LpSolution::primal`] with [`LpSolution::has_primal`] set. [`solve`]
//! returns `Err` only for an invalid model or options, a failing solver call,
//! or a missing solver.
//!
//! # Dual sign convention
//!
//! Duals are reported exactly as HiGHS returns them, in the user's sense
//! (checked on HiGHS 1.15 through `highs` 2.4, see `tests/lp_highs.rs`).
//! With `y` the row duals and `d` the column duals (reduced costs), they
//! always satisfy `d = c − Aᵀy`, and `y_i` is the rate of change of the
//! optimal objective per unit increase of row `i`'s binding bound.
//!
//! | sense | binding `≥` row (at its lower bound) | binding `≤` row (at its upper bound) | column at lower bound | column at upper bound |
//! |---|---|---|---|---|
//! | [`Minimise`](Sense::Minimise) | `y_i ≥ 0` | `y_i ≤ 0` | `d_j ≥ 0` | `d_j ≤ 0` |
//! | [`Maximise`](Sense::Maximise) | `y_i ≤ 0` | `y_i ≥ 0` | `d_j ≤ 0` | `d_j ≥ 0` |
//!
//! Non-binding rows and basic columns have zero duals. For a maximisation the
//! signs are the opposite of the minimisation's: a capacity (`≤`) row of a
//! maximisation has a non-negative price.
//!
//! # Example
//!
//! ```
//! use dmlsched::lp::{ColumnKind, LinearProgram, Sense, SolveOptions};
//!
//! // minimise 2x + 3y  s.t.  x + y ≥ 4,  x + 3y ≥ 3,  0 ≤ x ≤ 3,  y ≥ 0
//! let mut lp = LinearProgram::new(Sense::Minimise);
//! let x = lp.add_column(2.0, 0.0, 3.0, ColumnKind::Continuous);
//! let y = lp.add_column(3.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
//! lp.add_row(4.0, f64::INFINITY, &[(x, 1.0), (y, 1.0)]);
//! lp.add_row(3.0, f64::INFINITY, &[(x, 1.0), (y, 3.0)]);
//! lp.validate()?;
//!
//! #[cfg(feature = "highs")]
//! {
//!     let sol = dmlsched::lp::solve(&lp, &SolveOptions::default())?;
//!     assert_eq!(sol.status, dmlsched::lp::LpStatus::Optimal);
//!     // x = 3, y = 1, objective 9; row duals (3, 0), reduced cost −1 on x.
//!     assert!((sol.objective.unwrap() - 9.0).abs() < 1e-9);
//!     assert!((sol.row_duals[0] - 3.0).abs() < 1e-9);
//!     assert!((sol.column_duals[x] + 1.0).abs() < 1e-9);
//! }
//! # let _ = SolveOptions::default();
//! # Ok::<(), dmlsched::lp::LpError>(())
//! ```

use std::fmt;

pub use crate::certificate::Sense;
use crate::model::units::Num;

#[cfg(feature = "highs")]
pub(crate) mod highs;
mod limits;

pub(crate) use limits::over_column_cap;
pub use limits::{ExactMipLimits, InvalidLimit};

/// Whether a column is continuous or must take an integer value.
///
/// A binary column is an [`Integer`](ColumnKind::Integer) column with bounds
/// `[0, 1]` (see [`LinearProgram::add_binary_column`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ColumnKind {
    /// Any real value within the column's bounds.
    #[default]
    Continuous,
    /// Any integer value within the column's bounds. Solved as continuous when
    /// `relax_integrality` is set.
    Integer,
}

/// A sparse linear (or mixed-integer) program, built column by column and row
/// by row.
///
/// Columns are added first (cost, bounds, kind); each row is then added with
/// its bounds and its non-zero entries `(column, coefficient)`. The builder
/// methods never fail: call [`validate`](Self::validate) (which [`solve`]
/// does) to get a typed error naming the offending row or column.
///
/// Entries are stored as given, grouped by row (a row-ordered triplet list);
/// [`matrix`](Self::matrix) builds a compressed sparse column matrix on
/// demand.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearProgram {
    sense: Sense,
    offset: f64,
    costs: Vec<f64>,
    col_lower: Vec<f64>,
    col_upper: Vec<f64>,
    kinds: Vec<ColumnKind>,
    row_lower: Vec<f64>,
    row_upper: Vec<f64>,
    /// `row_start[i]..row_start[i + 1]` indexes row `i`'s entries; length
    /// `n_rows + 1`.
    row_start: Vec<usize>,
    entries: Vec<(usize, f64)>,
    col_names: Vec<Option<String>>,
    row_names: Vec<Option<String>>,
}

impl LinearProgram {
    /// An empty program (no columns, no rows, offset 0) with the given sense.
    pub fn new(sense: Sense) -> Self {
        Self {
            sense,
            offset: 0.0,
            costs: Vec::new(),
            col_lower: Vec::new(),
            col_upper: Vec::new(),
            kinds: Vec::new(),
            row_lower: Vec::new(),
            row_upper: Vec::new(),
            row_start: vec![0],
            entries: Vec::new(),
            col_names: Vec::new(),
            row_names: Vec::new(),
        }
    }

    /// Adds a column with objective coefficient `cost`, bounds
    /// `lower ≤ x ≤ upper` (either may be infinite) and `kind`; returns its
    /// index (0-based, in order of addition).
    pub fn add_column(&mut self, cost: f64, lower: f64, upper: f64, kind: ColumnKind) -> usize {
        self.costs.push(cost);
        self.col_lower.push(lower);
        self.col_upper.push(upper);
        self.kinds.push(kind);
        self.costs.len() - 1
    }

    /// Adds a binary column (integer, bounds `[0, 1]`); returns its index.
    pub fn add_binary_column(&mut self, cost: f64) -> usize {
        self.add_column(cost, 0.0, 1.0, ColumnKind::Integer)
    }

    /// Adds a row `lower ≤ Σ coefficient · x_column ≤ upper` (either bound may
    /// be infinite) with the given non-zero `entries`; returns its index.
    ///
    /// Entries should reference existing columns and name each column at most
    /// once; [`validate`](Self::validate) rejects them otherwise. Exact zeros
    /// are kept here (so duplicates are still detected) and skipped when the
    /// matrix is built or passed to the solver.
    pub fn add_row(&mut self, lower: f64, upper: f64, entries: &[(usize, f64)]) -> usize {
        self.row_lower.push(lower);
        self.row_upper.push(upper);
        self.entries.extend_from_slice(entries);
        self.row_start.push(self.entries.len());
        self.row_lower.len() - 1
    }

    /// Sets the constant added to the objective (default 0). It is included
    /// in [`objective_value`](Self::objective_value) and in every objective
    /// and bound of an [`LpSolution`].
    pub fn set_objective_offset(&mut self, offset: f64) {
        self.offset = offset;
    }

    /// Changes column `col`'s objective coefficient.
    ///
    /// # Errors
    ///
    /// [`LpError::ColumnIndexOutOfRange`] if the column does not exist.
    pub fn set_cost(&mut self, col: usize, cost: f64) -> Result<(), LpError> {
        let slot = self
            .costs
            .get_mut(col)
            .ok_or(LpError::ColumnIndexOutOfRange {
                col,
                n_cols: self.kinds.len(),
            })?;
        *slot = cost;
        Ok(())
    }

    /// Changes column `col`'s bounds.
    ///
    /// # Errors
    ///
    /// [`LpError::ColumnIndexOutOfRange`] if the column does not exist.
    pub fn set_col_bounds(&mut self, col: usize, lower: f64, upper: f64) -> Result<(), LpError> {
        self.check_col(col)?;
        self.col_lower[col] = lower;
        self.col_upper[col] = upper;
        Ok(())
    }

    /// Changes row `row`'s bounds.
    ///
    /// # Errors
    ///
    /// [`LpError::RowIndexOutOfRange`] if the row does not exist.
    pub fn set_row_bounds(&mut self, row: usize, lower: f64, upper: f64) -> Result<(), LpError> {
        self.check_row(row)?;
        self.row_lower[row] = lower;
        self.row_upper[row] = upper;
        Ok(())
    }

    /// Gives column `col` a name, used in error messages.
    ///
    /// # Errors
    ///
    /// [`LpError::ColumnIndexOutOfRange`] if the column does not exist.
    pub fn set_column_name(&mut self, col: usize, name: impl Into<String>) -> Result<(), LpError> {
        self.check_col(col)?;
        if self.col_names.len() <= col {
            self.col_names.resize(col + 1, None);
        }
        self.col_names[col] = Some(name.into());
        Ok(())
    }

    /// Gives row `row` a name, used in error messages.
    ///
    /// # Errors
    ///
    /// [`LpError::RowIndexOutOfRange`] if the row does not exist.
    pub fn set_row_name(&mut self, row: usize, name: impl Into<String>) -> Result<(), LpError> {
        self.check_row(row)?;
        if self.row_names.len() <= row {
            self.row_names.resize(row + 1, None);
        }
        self.row_names[row] = Some(name.into());
        Ok(())
    }

    /// The optimisation sense.
    pub fn sense(&self) -> Sense {
        self.sense
    }

    /// Number of columns (variables).
    pub fn n_cols(&self) -> usize {
        self.kinds.len()
    }

    /// Number of rows (constraints).
    pub fn n_rows(&self) -> usize {
        self.row_lower.len()
    }

    /// Number of stored row entries, exact zeros and (invalid) duplicates
    /// included.
    pub fn nnz(&self) -> usize {
        self.entries.len()
    }

    /// The constant term of the objective.
    pub fn objective_offset(&self) -> f64 {
        self.offset
    }

    /// Column `col`'s objective coefficient, or `None` if it does not exist.
    pub fn cost(&self, col: usize) -> Option<f64> {
        self.costs.get(col).copied()
    }

    /// All objective coefficients, indexed by column.
    pub fn costs(&self) -> &[f64] {
        &self.costs
    }

    /// Column `col`'s bounds `(lower, upper)`, or `None` if it does not exist.
    pub fn col_bounds(&self, col: usize) -> Option<(f64, f64)> {
        Some((*self.col_lower.get(col)?, *self.col_upper.get(col)?))
    }

    /// Row `row`'s bounds `(lower, upper)`, or `None` if it does not exist.
    pub fn row_bounds(&self, row: usize) -> Option<(f64, f64)> {
        Some((*self.row_lower.get(row)?, *self.row_upper.get(row)?))
    }

    /// Column `col`'s kind, or `None` if it does not exist.
    pub fn column_kind(&self, col: usize) -> Option<ColumnKind> {
        self.kinds.get(col).copied()
    }

    /// Row `row`'s entries `(column, coefficient)` as given to
    /// [`add_row`](Self::add_row), or `None` if the row does not exist.
    pub fn row_entries(&self, row: usize) -> Option<&[(usize, f64)]> {
        let start = *self.row_start.get(row)?;
        let end = *self.row_start.get(row + 1)?;
        self.entries.get(start..end)
    }

    /// Column `col`'s name, if one was set.
    pub fn column_name(&self, col: usize) -> Option<&str> {
        self.col_names.get(col)?.as_deref()
    }

    /// Row `row`'s name, if one was set.
    pub fn row_name(&self, row: usize) -> Option<&str> {
        self.row_names.get(row)?.as_deref()
    }

    /// Whether any column is [`ColumnKind::Integer`].
    pub fn has_integers(&self) -> bool {
        self.kinds.contains(&ColumnKind::Integer)
    }

    /// The constraint matrix in compressed sparse column form, `n_rows ×
    /// n_cols`, built from the stored entries.
    ///
    /// Exact zeros are skipped. On a program that [`validate`](Self::validate)
    /// accepts this is the matrix the solver sees; on an invalid one, entries
    /// naming a non-existent column are skipped and duplicates are summed.
    pub fn matrix(&self) -> sprs::CsMat<f64> {
        let n_cols = self.n_cols();
        let mut tri = sprs::TriMat::with_capacity((self.n_rows(), n_cols), self.entries.len());
        for (row, entries) in self.rows() {
            for &(col, value) in entries {
                if col < n_cols && value != 0.0 {
                    tri.add_triplet(row, col, value);
                }
            }
        }
        tri.to_csc()
    }

    /// Checks the program: finite objective offset and costs, no NaN bound,
    /// `lower ≤ upper` with `lower < +∞` and `upper > −∞` for every column and
    /// row, every entry naming an existing column with a finite coefficient,
    /// and no `(row, column)` pair given twice. Returns the first problem
    /// found (columns first, then rows in order).
    ///
    /// It also refuses finite values the solver cannot represent faithfully
    /// (see [`SOLVER_INFINITY`], [`MAX_COEFFICIENT`], [`MIN_COEFFICIENT`]):
    /// a cost or a finite bound of magnitude `≥ 1e20` (the solver would read
    /// it as infinite), a coefficient of magnitude `≥ 1e15` (the solver
    /// refuses the matrix) or a non-zero one of magnitude `≤ 1e-9` (the
    /// solver would drop it). Such a program would be solved as a different
    /// one, so its answer could not be trusted.
    ///
    /// # Errors
    ///
    /// [`LpError::InvalidObjectiveOffset`], [`LpError::InvalidCost`],
    /// [`LpError::InvalidColumnBounds`], [`LpError::InvalidRowBounds`],
    /// [`LpError::EntryColumnOutOfRange`], [`LpError::InvalidCoefficient`],
    /// [`LpError::OutOfSolverRange`] or [`LpError::DuplicateEntry`].
    pub fn validate(&self) -> Result<(), LpError> {
        if !self.offset.is_finite() {
            return Err(LpError::InvalidObjectiveOffset { value: self.offset });
        }
        for col in 0..self.n_cols() {
            self.validate_column(col)?;
        }
        let mut seen_in_row: Vec<usize> = Vec::new();
        for (row, entries) in self.rows() {
            self.validate_row(row, entries)?;
            seen_in_row.clear();
            seen_in_row.extend(entries.iter().map(|&(col, _)| col));
            seen_in_row.sort_unstable();
            if let Some(w) = seen_in_row.windows(2).find(|w| w[0] == w[1]) {
                let col = w[0];
                return Err(LpError::DuplicateEntry {
                    row,
                    row_name: self.row_name(row).map(str::to_owned),
                    col,
                    col_name: self.column_name(col).map(str::to_owned),
                });
            }
        }
        Ok(())
    }

    /// The checks of [`validate`](Self::validate) on column `col`.
    fn validate_column(&self, col: usize) -> Result<(), LpError> {
        let col_name = || self.column_name(col).map(str::to_owned);
        let cost = self.costs[col];
        if !cost.is_finite() {
            return Err(LpError::InvalidCost {
                col,
                col_name: col_name(),
                value: cost,
            });
        }
        let (lower, upper) = (self.col_lower[col], self.col_upper[col]);
        if !bounds_ok(lower, upper) {
            return Err(LpError::InvalidColumnBounds {
                col,
                col_name: col_name(),
                lower,
                upper,
            });
        }
        let out = |quantity, value| LpError::OutOfSolverRange {
            quantity,
            row: None,
            row_name: None,
            col: Some(col),
            col_name: col_name(),
            value,
        };
        if cost.abs() >= SOLVER_INFINITY {
            return Err(out(LpQuantity::Cost, cost));
        }
        if let Some(b) = [lower, upper].into_iter().find(|&b| beyond_infinity(b)) {
            return Err(out(LpQuantity::ColumnBound, b));
        }
        Ok(())
    }

    /// The checks of [`validate`](Self::validate) on row `row` (bounds and
    /// entries; duplicates are checked by the caller).
    fn validate_row(&self, row: usize, entries: &[(usize, f64)]) -> Result<(), LpError> {
        let row_name = || self.row_name(row).map(str::to_owned);
        let (lower, upper) = (self.row_lower[row], self.row_upper[row]);
        if !bounds_ok(lower, upper) {
            return Err(LpError::InvalidRowBounds {
                row,
                row_name: row_name(),
                lower,
                upper,
            });
        }
        if let Some(b) = [lower, upper].into_iter().find(|&b| beyond_infinity(b)) {
            return Err(LpError::OutOfSolverRange {
                quantity: LpQuantity::RowBound,
                row: Some(row),
                row_name: row_name(),
                col: None,
                col_name: None,
                value: b,
            });
        }
        let n_cols = self.n_cols();
        for &(col, value) in entries {
            if col >= n_cols {
                return Err(LpError::EntryColumnOutOfRange {
                    row,
                    row_name: row_name(),
                    col,
                    n_cols,
                });
            }
            if !value.is_finite() {
                return Err(LpError::InvalidCoefficient {
                    row,
                    row_name: row_name(),
                    col,
                    col_name: self.column_name(col).map(str::to_owned),
                    value,
                });
            }
            if value != 0.0 && !coefficient_in_range(value) {
                return Err(LpError::OutOfSolverRange {
                    quantity: LpQuantity::Coefficient,
                    row: Some(row),
                    row_name: row_name(),
                    col: Some(col),
                    col_name: self.column_name(col).map(str::to_owned),
                    value,
                });
            }
        }
        Ok(())
    }

    /// The row activities `Σ_j a_ij x_j` of a point `x` (one value per row).
    /// Entries naming a non-existent column are ignored.
    ///
    /// # Errors
    ///
    /// [`LpError::LengthMismatch`] if `x.len() != n_cols`.
    pub fn row_activity(&self, x: &[f64]) -> Result<Vec<f64>, LpError> {
        self.check_len(x)?;
        Ok(self
            .rows()
            .map(|(_, entries)| {
                entries
                    .iter()
                    .filter_map(|&(col, a)| x.get(col).map(|&v| a * v))
                    .sum()
            })
            .collect())
    }

    /// The objective `c·x + offset` of a point `x`.
    ///
    /// # Errors
    ///
    /// [`LpError::LengthMismatch`] if `x.len() != n_cols`.
    pub fn objective_value(&self, x: &[f64]) -> Result<f64, LpError> {
        self.check_len(x)?;
        Ok(self.offset + self.costs.iter().zip(x).map(|(c, v)| c * v).sum::<f64>())
    }

    /// A bound on the optimum from any row multipliers `y` (one per row), by
    /// weak duality: every point within the column bounds that satisfies
    /// the rows has `c·x = yᵀ(Ax) + dᵀx` with `d = c − Aᵀy`, so its
    /// objective is at most (maximisation; at least, minimisation)
    /// `offset + Σ_i max(y_i·L_i, y_i·U_i) + Σ_j max(d_j·l_j, d_j·u_j)` (min
    /// for minimisation). A multiplier that would meet an infinite row bound
    /// is taken as 0, so the duals of any solve — or any guess — give a
    /// valid bound. Unlike the solver's reported objective, this bound holds
    /// whatever the solver's tolerances; it is widened by the worst-case
    /// rounding of its own sums (`2(n + 2)·ε` times the sum of the terms'
    /// magnitudes, `n` the rows, columns and entries), so it holds in
    /// floating point too.
    ///
    /// `None` when `y` has the wrong length or a NaN, or when a column with
    /// an infinite bound keeps a reduced cost that would make the bound
    /// infinite.
    ///
    /// ```
    /// use dmlsched::lp::{ColumnKind, LinearProgram, Sense};
    /// // maximise x + y  s.t.  x + 2y ≤ 4,  0 ≤ x ≤ 3,  0 ≤ y ≤ 3   (OPT 3.5)
    /// let mut lp = LinearProgram::new(Sense::Maximise);
    /// let x = lp.add_column(1.0, 0.0, 3.0, ColumnKind::Continuous);
    /// let y = lp.add_column(1.0, 0.0, 3.0, ColumnKind::Continuous);
    /// lp.add_row(f64::NEG_INFINITY, 4.0, &[(x, 1.0), (y, 2.0)]);
    /// let near = |b: Option<f64>, v: f64| (b.unwrap() - v).abs() < 1e-12;
    /// assert!(near(lp.dual_bound(&[0.5]), 3.5)); // the optimal dual
    /// assert!(near(lp.dual_bound(&[0.0]), 6.0)); // the column bounds alone
    /// assert!(near(lp.dual_bound(&[-1.0]), 6.0)); // wrong sign: taken as 0
    /// assert!(lp.dual_bound(&[0.5]).unwrap() >= 3.5); // never below, in floating point
    /// ```
    pub fn dual_bound(&self, row_duals: &[f64]) -> Option<f64> {
        if row_duals.len() != self.n_rows() || row_duals.iter().any(|y| y.is_nan()) {
            return None;
        }
        let max = self.sense == Sense::Maximise;
        // The better end of `v·[lo, hi]` for the bound's direction.
        let extreme = |v: f64, lo: f64, hi: f64| -> f64 {
            if v == 0.0 {
                0.0
            } else if max {
                (v * lo).max(v * hi)
            } else {
                (v * lo).min(v * hi)
            }
        };
        let mut reduced = self.costs.clone();
        // Σ|c_j| + Σ|y_i·a_ij| per column, for the rounding margin.
        let mut magnitude: Vec<f64> = self.costs.iter().map(|c| c.abs()).collect();
        let mut bound = self.offset;
        let mut scale = self.offset.abs();
        for (i, entries) in self.rows() {
            let (lo, hi) = (self.row_lower[i], self.row_upper[i]);
            let y = row_duals[i];
            let usable = extreme(y, lo, hi);
            if !usable.is_finite() {
                continue;
            }
            bound += usable;
            scale += usable.abs();
            for &(j, a) in entries {
                if let Some(d) = reduced.get_mut(j) {
                    *d -= y * a;
                    magnitude[j] += (y * a).abs();
                }
            }
        }
        for (j, &d) in reduced.iter().enumerate() {
            let (lo, hi) = (self.col_lower[j], self.col_upper[j]);
            bound += extreme(d, lo, hi);
            let reach = [lo, hi]
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0, |m: f64, v| m.max(v.abs()));
            scale += magnitude[j] * reach;
        }
        let n = (self.n_rows() + self.n_cols() + self.nnz() + 2) as f64;
        let margin = 2.0 * n * f64::EPSILON * scale;
        let bound = if max { bound + margin } else { bound - margin };
        bound.is_finite().then_some(bound)
    }

    /// The largest violation of a point `x`: the maximum over column bounds,
    /// row bounds and (for integer columns) the distance to the nearest
    /// integer. Zero for a point that satisfies everything exactly; compare
    /// with a tolerance such as `1e-6` to accept solver output. NaN entries
    /// count as an infinite violation.
    ///
    /// # Errors
    ///
    /// [`LpError::LengthMismatch`] if `x.len() != n_cols`.
    pub fn max_violation(&self, x: &[f64]) -> Result<f64, LpError> {
        let activity = self.row_activity(x)?;
        let excess = |v: f64, lo: f64, hi: f64| -> f64 {
            if v.is_nan() {
                f64::INFINITY
            } else {
                (lo - v).max(v - hi).max(0.0)
            }
        };
        let mut worst: f64 = 0.0;
        for (j, &v) in x.iter().enumerate() {
            worst = worst.max(excess(v, self.col_lower[j], self.col_upper[j]));
            if self.kinds[j] == ColumnKind::Integer && v.is_finite() {
                worst = worst.max((v - v.round()).abs());
            }
        }
        for (i, &v) in activity.iter().enumerate() {
            worst = worst.max(excess(v, self.row_lower[i], self.row_upper[i]));
        }
        Ok(worst)
    }

    /// The extra check of a MIP solve: every finite bound of an integer
    /// column within [`MAX_INTEGER_BOUND`] in magnitude, and with presolve
    /// (which turns a one-entry row into a column bound) every bound implied
    /// by a one-entry row on an integer column too.
    fn validate_mip_domains(&self, presolve: bool) -> Result<(), LpError> {
        let too_big = |b: f64| b.is_finite() && b.abs() > MAX_INTEGER_BOUND;
        for col in 0..self.n_cols() {
            if self.kinds[col] != ColumnKind::Integer {
                continue;
            }
            if let Some(b) = [self.col_lower[col], self.col_upper[col]]
                .into_iter()
                .find(|&b| too_big(b))
            {
                return Err(LpError::OutOfSolverRange {
                    quantity: LpQuantity::IntegerBound,
                    row: None,
                    row_name: None,
                    col: Some(col),
                    col_name: self.column_name(col).map(str::to_owned),
                    value: b,
                });
            }
        }
        if !presolve {
            return Ok(());
        }
        for (row, entries) in self.rows() {
            let nonzero: Vec<&(usize, f64)> = entries.iter().filter(|e| e.1 != 0.0).collect();
            let &[&(col, a)] = nonzero.as_slice() else {
                continue;
            };
            if self.kinds.get(col) != Some(&ColumnKind::Integer) {
                continue;
            }
            if let Some(b) = [self.row_lower[row], self.row_upper[row]]
                .into_iter()
                .map(|b| b / a)
                .find(|&b| too_big(b))
            {
                return Err(LpError::OutOfSolverRange {
                    quantity: LpQuantity::IntegerBound,
                    row: Some(row),
                    row_name: self.row_name(row).map(str::to_owned),
                    col: Some(col),
                    col_name: self.column_name(col).map(str::to_owned),
                    value: b,
                });
            }
        }
        Ok(())
    }

    /// Iterates over rows as `(index, entries)`.
    fn rows(&self) -> impl Iterator<Item = (usize, &[(usize, f64)])> {
        self.row_start
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i, self.entries.get(w[0]..w[1]).unwrap_or(&[])))
    }

    fn check_col(&self, col: usize) -> Result<(), LpError> {
        if col < self.n_cols() {
            Ok(())
        } else {
            Err(LpError::ColumnIndexOutOfRange {
                col,
                n_cols: self.n_cols(),
            })
        }
    }

    fn check_row(&self, row: usize) -> Result<(), LpError> {
        if row < self.n_rows() {
            Ok(())
        } else {
            Err(LpError::RowIndexOutOfRange {
                row,
                n_rows: self.n_rows(),
            })
        }
    }

    fn check_len(&self, x: &[f64]) -> Result<(), LpError> {
        if x.len() == self.n_cols() {
            Ok(())
        } else {
            Err(LpError::LengthMismatch {
                what: "point",
                expected: self.n_cols(),
                got: x.len(),
            })
        }
    }
}

/// `lower ≤ upper`, neither NaN, `lower < +∞`, `upper > −∞`.
fn bounds_ok(lower: f64, upper: f64) -> bool {
    lower <= upper && lower < f64::INFINITY && upper > f64::NEG_INFINITY
}

/// Magnitude from which the solver reads a cost or a bound as infinite
/// (HiGHS's `infinite_cost` and `infinite_bound`, `1e20`). Costs and finite
/// bounds must stay below it; use `±f64::INFINITY` for a missing bound.
pub const SOLVER_INFINITY: f64 = 1e20;

/// Magnitude from which the solver refuses a constraint coefficient
/// (HiGHS's `large_matrix_value`, `1e15`): coefficients must stay below it.
pub const MAX_COEFFICIENT: f64 = 1e15;

/// Magnitude up to which the solver drops a constraint coefficient as zero
/// (HiGHS's `small_matrix_value`, `1e-9`): non-zero coefficients must exceed
/// it.
pub const MIN_COEFFICIENT: f64 = 1e-9;

/// Whether a non-zero finite coefficient lies strictly between
/// [`MIN_COEFFICIENT`] and [`MAX_COEFFICIENT`] in magnitude.
pub fn coefficient_in_range(value: f64) -> bool {
    let a = value.abs();
    a > MIN_COEFFICIENT && a < MAX_COEFFICIENT
}

/// Largest magnitude of a finite bound of an integer column in a MIP solve:
/// `2^30`.
///
/// HiGHS walks integer domains with 32-bit integers during its root
/// reduced-cost fixing; a finite integer bound near or beyond `2^31` (for
/// instance `u32::MAX`) makes that loop overflow and spin forever, whatever
/// the time limit. Such MIPs are refused (LPs and relaxations are not
/// concerned); use an infinite bound instead.
pub const MAX_INTEGER_BOUND: f64 = 1_073_741_824.0;

/// A finite bound the solver would read as infinite.
fn beyond_infinity(b: f64) -> bool {
    b.is_finite() && b.abs() >= SOLVER_INFINITY
}

/// How to solve: limits, tolerances, determinism and presolve.
///
/// Build with [`Default`] and the `with_*` setters:
///
/// ```
/// use dmlsched::lp::SolveOptions;
/// let opts = SolveOptions::default().with_time_limit(2.5).with_mip_rel_gap(1e-4);
/// assert_eq!(opts.time_limit_s, Some(2.5));
/// assert_eq!(opts.threads, 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
#[non_exhaustive]
pub struct SolveOptions {
    /// Wall-clock limit in seconds; `None` (default) means no limit. A solve
    /// that reaches it ends with [`LpStatus::TimeLimit`], not an error.
    pub time_limit_s: Option<f64>,
    /// Relative MIP gap at which branch and bound stops with
    /// [`LpStatus::Optimal`] (HiGHS `mip_rel_gap`); default `1e-6`.
    pub mip_rel_gap: f64,
    /// Solver threads; default 1 (deterministic, and safe to call from a
    /// thread pool). With 1, HiGHS's `parallel` option is also turned off.
    pub threads: u32,
    /// Solver random seed (HiGHS `random_seed`), `0..=2³¹−1`; default 0.
    pub seed: u32,
    /// Run presolve (default `true`).
    pub presolve: bool,
    /// Solve integer columns as continuous, i.e. the LP relaxation (default
    /// `false`).
    pub relax_integrality: bool,
    /// Let the solver print its log to the console (default `false`: quiet).
    pub verbose: bool,
    /// Most branch-and-bound nodes of a MIP solve (HiGHS `mip_max_nodes`),
    /// `1..=2³¹−1`; `None` (default) means no limit. Unlike a time limit it
    /// stops every run at the same point, so a node-limited solve is
    /// repeatable. A solve that reaches it ends with a limit status
    /// ([`LpStatus::SolutionLimit`] in HiGHS 1.15), not an error.
    pub mip_max_nodes: Option<u32>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            time_limit_s: None,
            mip_rel_gap: 1e-6,
            threads: 1,
            seed: 0,
            presolve: true,
            relax_integrality: false,
            verbose: false,
            mip_max_nodes: None,
        }
    }
}

impl SolveOptions {
    /// Largest accepted `seed` (HiGHS takes a non-negative
    /// 32-bit signed integer).
    pub const MAX_SEED: u32 = i32::MAX as u32;

    /// Sets a wall-clock time limit in seconds (`f64::INFINITY` means none).
    pub fn with_time_limit(mut self, seconds: f64) -> Self {
        self.time_limit_s = Some(seconds);
        self
    }

    /// Removes the time limit.
    pub fn without_time_limit(mut self) -> Self {
        self.time_limit_s = None;
        self
    }

    /// Sets the relative MIP gap.
    pub fn with_mip_rel_gap(mut self, gap: f64) -> Self {
        self.mip_rel_gap = gap;
        self
    }

    /// Sets the number of solver threads (at least 1).
    pub fn with_threads(mut self, threads: u32) -> Self {
        self.threads = threads;
        self
    }

    /// Sets the solver's random seed.
    pub fn with_seed(mut self, seed: u32) -> Self {
        self.seed = seed;
        self
    }

    /// Turns presolve on or off.
    pub fn with_presolve(mut self, presolve: bool) -> Self {
        self.presolve = presolve;
        self
    }

    /// Solves integer columns as continuous (the LP relaxation) when `true`.
    pub fn with_relax_integrality(mut self, relax: bool) -> Self {
        self.relax_integrality = relax;
        self
    }

    /// Sets the MIP node limit.
    pub fn with_mip_max_nodes(mut self, nodes: u32) -> Self {
        self.mip_max_nodes = Some(nodes);
        self
    }

    /// Lets the solver log to the console when `true`.
    pub fn with_verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Checks the options: a time limit that is positive and not NaN, a
    /// finite non-negative MIP gap, at least one thread, a seed at most
    /// [`MAX_SEED`](Self::MAX_SEED), a node limit of at least one.
    ///
    /// # Errors
    ///
    /// [`LpError::InvalidOption`] naming the option.
    pub fn validate(&self) -> Result<(), LpError> {
        if let Some(t) = self.time_limit_s
            && (t.is_nan() || t <= 0.0)
        {
            return Err(LpError::InvalidOption {
                option: "time_limit_s",
                reason: format!("must be positive, got {t}"),
            });
        }
        if !(self.mip_rel_gap.is_finite() && self.mip_rel_gap >= 0.0) {
            return Err(LpError::InvalidOption {
                option: "mip_rel_gap",
                reason: format!("must be finite and non-negative, got {}", self.mip_rel_gap),
            });
        }
        if self.threads == 0 || self.threads > i32::MAX as u32 {
            return Err(LpError::InvalidOption {
                option: "threads",
                reason: format!("must be between 1 and {}, got {}", i32::MAX, self.threads),
            });
        }
        if let Some(n) = self.mip_max_nodes
            && (n == 0 || n > i32::MAX as u32)
        {
            return Err(LpError::InvalidOption {
                option: "mip_max_nodes",
                reason: format!("must be between 1 and {}, got {n}", i32::MAX),
            });
        }
        if self.seed > Self::MAX_SEED {
            return Err(LpError::InvalidOption {
                option: "seed",
                reason: format!("must be at most {}, got {}", Self::MAX_SEED, self.seed),
            });
        }
        Ok(())
    }
}

/// How a solve ended. Statuses are results, not errors: only
/// [`Optimal`](Self::Optimal) proves optimality, and a limit status may still
/// come with a feasible point ([`LpSolution::has_primal`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum LpStatus {
    /// Solved to optimality (for a MIP: within [`SolveOptions::mip_rel_gap`]).
    Optimal,
    /// Proven infeasible: no point satisfies the rows, bounds and
    /// integrality.
    Infeasible,
    /// Proven unbounded: the objective improves without limit (the program
    /// has feasible points).
    Unbounded,
    /// The solver proved that the program is infeasible or unbounded but not
    /// which one (typically from presolve, or a dual-infeasible LP whose
    /// primal feasibility was not settled). Re-solving with presolve off
    /// usually tells them apart.
    UnboundedOrInfeasible,
    /// Stopped at [`SolveOptions::time_limit_s`].
    TimeLimit,
    /// Stopped at an iteration limit.
    IterationLimit,
    /// Stopped at a limit on the number of improving solutions (MIP).
    SolutionLimit,
    /// Stopped because the solver ran out of memory.
    MemoryLimit,
    /// Stopped because the objective reached a prescribed bound.
    ObjectiveBound,
    /// Stopped because the objective reached a prescribed target.
    ObjectiveTarget,
    /// Stopped by an interrupt (user callback).
    Interrupted,
    /// A status this crate does not map; the text names what the solver said.
    Unknown(String),
}

impl LpStatus {
    /// Whether the solve ended at a proven optimum.
    pub fn is_optimal(&self) -> bool {
        matches!(self, Self::Optimal)
    }

    /// Whether the solve stopped early at a limit or interrupt (time,
    /// iterations, solutions, memory, objective bound/target).
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            Self::TimeLimit
                | Self::IterationLimit
                | Self::SolutionLimit
                | Self::MemoryLimit
                | Self::ObjectiveBound
                | Self::ObjectiveTarget
                | Self::Interrupted
        )
    }
}

impl fmt::Display for LpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Self::Optimal => "optimal",
            Self::Infeasible => "infeasible",
            Self::Unbounded => "unbounded",
            Self::UnboundedOrInfeasible => "unbounded or infeasible",
            Self::TimeLimit => "time limit reached",
            Self::IterationLimit => "iteration limit reached",
            Self::SolutionLimit => "solution limit reached",
            Self::MemoryLimit => "memory limit reached",
            Self::ObjectiveBound => "objective bound reached",
            Self::ObjectiveTarget => "objective target reached",
            Self::Interrupted => "interrupted",
            Self::Unknown(what) => return write!(f, "unknown solver status ({what})"),
        };
        f.write_str(text)
    }
}

/// The outcome of [`solve`]: status, primal point, duals, objective and MIP
/// bound information, all in the user's sense and including the objective
/// offset.
///
/// Values are the solver's raw output (no rounding of integer columns, no
/// clamping to bounds); check them independently with
/// [`LinearProgram::max_violation`] if needed.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct LpSolution {
    /// How the solve ended.
    pub status: LpStatus,
    /// Whether [`primal`](Self::primal) holds a point the solver considers
    /// feasible: the optimum, an incumbent under a limit, or a feasible point
    /// of an unbounded program.
    pub has_primal: bool,
    /// Column values, one per column, when [`has_primal`](Self::has_primal);
    /// empty otherwise.
    pub primal: Vec<f64>,
    /// Whether [`row_duals`](Self::row_duals) and
    /// [`column_duals`](Self::column_duals) hold a dual-feasible solution (an
    /// optimal one when the status is [`LpStatus::Optimal`]). Always `false`
    /// for a MIP.
    pub has_dual: bool,
    /// Row duals, one per row, when [`has_dual`](Self::has_dual); empty
    /// otherwise. Sign convention: see the [module docs](self).
    pub row_duals: Vec<f64>,
    /// Column duals (reduced costs `c − Aᵀy`), one per column, when
    /// [`has_dual`](Self::has_dual); empty otherwise.
    pub column_duals: Vec<f64>,
    /// Objective of [`primal`](Self::primal) (offset included), `None` when
    /// there is no primal point.
    pub objective: Option<f64>,
    /// MIP only: the solver's proven bound on the optimum (a lower bound for
    /// minimisation, an upper bound for maximisation), offset included.
    /// `None` for an LP or when the bound is not finite.
    pub mip_dual_bound: Option<f64>,
    /// MIP only: the relative gap between incumbent and dual bound, as a
    /// fraction (`0.01` = 1 %). `None` for an LP or when not finite (no
    /// incumbent).
    pub mip_gap: Option<f64>,
    /// Whether the program was solved as a MIP (it has integer columns and
    /// `relax_integrality` was off).
    pub is_mip: bool,
    /// Wall-clock seconds spent in the solver adapter (building the solver's
    /// model and solving).
    pub seconds: f64,
    /// Simplex iterations, for an LP when the solver reports them.
    pub simplex_iterations: Option<i64>,
}

impl LpSolution {
    /// The primal point if there is one.
    pub fn primal_point(&self) -> Option<&[f64]> {
        self.has_primal.then_some(self.primal.as_slice())
    }
}

/// Errors of the LP layer: an invalid model or options, a failing solver
/// call, or no solver compiled in. Solver *outcomes* (infeasible, unbounded,
/// limits) are not errors; they are [`LpStatus`] values.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LpError {
    /// The objective offset is NaN or infinite.
    #[error("objective offset must be finite, got {}", Num(*.value))]
    InvalidObjectiveOffset {
        /// The offending value.
        value: f64,
    },
    /// A cost is NaN or infinite.
    #[error("{} has cost {}; costs must be finite", label("column", *.col, .col_name), Num(*.value))]
    InvalidCost {
        /// Column index.
        col: usize,
        /// Column name, if set.
        col_name: Option<String>,
        /// The offending cost.
        value: f64,
    },
    /// Column bounds are NaN, crossed (`lower > upper`), or empty at infinity
    /// (`lower = +∞` or `upper = −∞`).
    #[error(
        "{} has invalid bounds [{}, {}] (need lower ≤ upper, no NaN, lower < +inf, upper > -inf)",
        label("column", *.col, .col_name), Num(*.lower), Num(*.upper)
    )]
    InvalidColumnBounds {
        /// Column index.
        col: usize,
        /// Column name, if set.
        col_name: Option<String>,
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// Row bounds are NaN, crossed (`lower > upper`), or empty at infinity.
    #[error(
        "{} has invalid bounds [{}, {}] (need lower ≤ upper, no NaN, lower < +inf, upper > -inf)",
        label("row", *.row, .row_name), Num(*.lower), Num(*.upper)
    )]
    InvalidRowBounds {
        /// Row index.
        row: usize,
        /// Row name, if set.
        row_name: Option<String>,
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// A row entry names a column that does not exist.
    #[error("{} has an entry for column {col}, but there are only {n_cols} columns", label("row", *.row, .row_name))]
    EntryColumnOutOfRange {
        /// Row index.
        row: usize,
        /// Row name, if set.
        row_name: Option<String>,
        /// The non-existent column.
        col: usize,
        /// Number of columns.
        n_cols: usize,
    },
    /// A coefficient is NaN or infinite.
    #[error(
        "{} has coefficient {} on {}; coefficients must be finite",
        label("row", *.row, .row_name),
        Num(*.value),
        label("column", *.col, .col_name)
    )]
    InvalidCoefficient {
        /// Row index.
        row: usize,
        /// Row name, if set.
        row_name: Option<String>,
        /// Column index.
        col: usize,
        /// Column name, if set.
        col_name: Option<String>,
        /// The offending coefficient.
        value: f64,
    },
    /// A finite cost, bound or coefficient lies outside the range the
    /// solver represents faithfully (see [`LinearProgram::validate`]).
    #[error("{}", out_of_range_message(*.quantity, *.row, .row_name, *.col, .col_name, *.value))]
    OutOfSolverRange {
        /// Which kind of value.
        quantity: LpQuantity,
        /// Row index, for a row bound or a coefficient.
        row: Option<usize>,
        /// Row name, if set.
        row_name: Option<String>,
        /// Column index, for a cost, a column bound or a coefficient.
        col: Option<usize>,
        /// Column name, if set.
        col_name: Option<String>,
        /// The offending value.
        value: f64,
    },
    /// The same column appears twice in one row.
    #[error(
        "{} has two entries for {}",
        label("row", *.row, .row_name),
        label("column", *.col, .col_name)
    )]
    DuplicateEntry {
        /// Row index.
        row: usize,
        /// Row name, if set.
        row_name: Option<String>,
        /// Column index.
        col: usize,
        /// Column name, if set.
        col_name: Option<String>,
    },
    /// A column index passed to a setter does not exist.
    #[error("column {col} does not exist (there are {n_cols} columns)")]
    ColumnIndexOutOfRange {
        /// The requested column.
        col: usize,
        /// Number of columns.
        n_cols: usize,
    },
    /// A row index passed to a setter does not exist.
    #[error("row {row} does not exist (there are {n_rows} rows)")]
    RowIndexOutOfRange {
        /// The requested row.
        row: usize,
        /// Number of rows.
        n_rows: usize,
    },
    /// A vector has the wrong length.
    #[error("{what} has length {got}, expected {expected}")]
    LengthMismatch {
        /// What the vector is.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A [`SolveOptions`] field is out of range.
    #[error("invalid solve option {option}: {reason}")]
    InvalidOption {
        /// The option's field name.
        option: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A solver call failed (building the model, setting an option, running
    /// the solve) or the solver ended in an error state.
    #[error("solver failed at {stage}: {message}")]
    Solver {
        /// The step that failed (`"build"`, `"load"`, `"options"`, `"solve"`).
        stage: String,
        /// What the solver reported.
        message: String,
    },
    /// The crate was built without a solver (the `highs` feature is off).
    #[error("no LP solver available: build dmlsched with the `highs` feature")]
    SolverUnavailable,
}

/// Which kind of value an [`LpError::OutOfSolverRange`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LpQuantity {
    /// An objective coefficient (cost) of a column.
    Cost,
    /// A finite lower or upper bound of a column.
    ColumnBound,
    /// A finite lower or upper bound of a row.
    RowBound,
    /// A constraint coefficient.
    Coefficient,
    /// A finite bound of an integer column in a MIP solve (given, or implied
    /// by a one-entry row when presolve is on); see [`MAX_INTEGER_BOUND`].
    IntegerBound,
}

/// The message of [`LpError::OutOfSolverRange`].
fn out_of_range_message(
    quantity: LpQuantity,
    row: Option<usize>,
    row_name: &Option<String>,
    col: Option<usize>,
    col_name: &Option<String>,
    value: f64,
) -> String {
    let col = col
        .map(|c| label("column", c, col_name))
        .unwrap_or_default();
    let row = row.map(|r| label("row", r, row_name)).unwrap_or_default();
    let v = Num(value);
    match quantity {
        LpQuantity::Cost => format!(
            "{col} has cost {v}, beyond the solver's range: costs must be below {} in magnitude (the solver reads larger ones as infinite)",
            Num(SOLVER_INFINITY)
        ),
        LpQuantity::ColumnBound | LpQuantity::RowBound => format!(
            "{}{} has bound {v}, beyond the solver's range: finite bounds must be below {} in magnitude (the solver reads larger ones as infinite; use an infinite bound for none)",
            col,
            row,
            Num(SOLVER_INFINITY)
        ),
        LpQuantity::IntegerBound => format!(
            "integer {col}{} has bound {v}, beyond what the MIP solver handles: finite bounds of integer columns (including those implied by a one-entry row under presolve) must be at most {} in magnitude (HiGHS can loop forever on larger integer domains); use an infinite bound",
            if row.is_empty() {
                String::new()
            } else {
                format!(" (from {row})")
            },
            Num(MAX_INTEGER_BOUND)
        ),
        LpQuantity::Coefficient if value.abs() >= MAX_COEFFICIENT => format!(
            "{row} has coefficient {v} on {col}, beyond the solver's range: coefficients must be below {} in magnitude (the solver refuses larger ones)",
            Num(MAX_COEFFICIENT)
        ),
        LpQuantity::Coefficient => format!(
            "{row} has coefficient {v} on {col}, below the solver's range: non-zero coefficients must exceed {} in magnitude (the solver drops smaller ones as zero)",
            Num(MIN_COEFFICIENT)
        ),
    }
}

/// `"column 3"` or `"column 3 (\"name\")"`.
fn label(kind: &str, index: usize, name: &Option<String>) -> String {
    match name {
        Some(name) => format!("{kind} {index} ({name:?})"),
        None => format!("{kind} {index}"),
    }
}

/// Solves `lp` with `opts`.
///
/// Validates the program and the options, then calls the solver (HiGHS when
/// the `highs` feature is on). The returned [`LpSolution`] carries the
/// status; infeasible, unbounded and limit outcomes are `Ok`.
///
/// # Errors
///
/// * a validation error from [`LinearProgram::validate`] or
///   [`SolveOptions::validate`];
/// * [`LpError::OutOfSolverRange`] with [`LpQuantity::IntegerBound`] for a
///   MIP with an integer column bounded beyond [`MAX_INTEGER_BOUND`];
/// * [`LpError::Solver`] if a solver call fails or the solver ends in an
///   error state;
/// * [`LpError::SolverUnavailable`] without the `highs` feature.
///
/// # Example
///
/// ```
/// use dmlsched::lp::{solve, ColumnKind, LinearProgram, LpStatus, Sense, SolveOptions};
///
/// // maximise x + y  s.t.  x + y ≤ 1, x, y ≥ 0 and x + y ≥ 2: infeasible.
/// let mut lp = LinearProgram::new(Sense::Maximise);
/// let x = lp.add_column(1.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
/// let y = lp.add_column(1.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
/// lp.add_row(f64::NEG_INFINITY, 1.0, &[(x, 1.0), (y, 1.0)]);
/// lp.add_row(2.0, f64::INFINITY, &[(x, 1.0), (y, 1.0)]);
/// match solve(&lp, &SolveOptions::default()) {
///     Ok(sol) => {
///         assert_eq!(sol.status, LpStatus::Infeasible);
///         assert!(!sol.has_primal && sol.objective.is_none());
///     }
///     Err(e) => assert!(cfg!(not(feature = "highs")), "{e}"),
/// }
/// ```
pub fn solve(lp: &LinearProgram, opts: &SolveOptions) -> Result<LpSolution, LpError> {
    lp.validate()?;
    opts.validate()?;
    if lp.has_integers() && !opts.relax_integrality {
        lp.validate_mip_domains(opts.presolve)?;
    }
    #[cfg(feature = "highs")]
    {
        highs::solve(lp, opts)
    }
    #[cfg(not(feature = "highs"))]
    {
        Err(LpError::SolverUnavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_by_two() -> LinearProgram {
        let mut lp = LinearProgram::new(Sense::Minimise);
        let x = lp.add_column(2.0, 0.0, 3.0, ColumnKind::Continuous);
        let y = lp.add_column(3.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
        lp.add_row(4.0, f64::INFINITY, &[(x, 1.0), (y, 1.0)]);
        lp.add_row(6.0, f64::INFINITY, &[(x, 1.0), (y, 3.0)]);
        lp
    }

    #[test]
    fn builder_and_getters() {
        let mut lp = two_by_two();
        lp.set_objective_offset(1.5);
        assert_eq!(lp.sense(), Sense::Minimise);
        assert_eq!((lp.n_cols(), lp.n_rows(), lp.nnz()), (2, 2, 4));
        assert_eq!(lp.cost(1), Some(3.0));
        assert_eq!(lp.cost(2), None);
        assert_eq!(lp.costs(), &[2.0, 3.0]);
        assert_eq!(lp.col_bounds(0), Some((0.0, 3.0)));
        assert_eq!(lp.col_bounds(1), Some((0.0, f64::INFINITY)));
        assert_eq!(lp.row_bounds(1), Some((6.0, f64::INFINITY)));
        assert_eq!(lp.row_bounds(2), None);
        assert_eq!(lp.column_kind(0), Some(ColumnKind::Continuous));
        assert_eq!(lp.row_entries(1), Some(&[(0, 1.0), (1, 3.0)][..]));
        assert_eq!(lp.row_entries(2), None);
        assert_eq!(lp.objective_offset(), 1.5);
        assert!(!lp.has_integers());
        let b = lp.add_binary_column(5.0);
        assert_eq!(lp.column_kind(b), Some(ColumnKind::Integer));
        assert_eq!(lp.col_bounds(b), Some((0.0, 1.0)));
        assert!(lp.has_integers());
        assert!(lp.validate().is_ok());
    }

    #[test]
    fn setters_check_indices() {
        let mut lp = two_by_two();
        lp.set_cost(0, 7.0).unwrap();
        lp.set_col_bounds(1, -1.0, 1.0).unwrap();
        lp.set_row_bounds(0, f64::NEG_INFINITY, 2.0).unwrap();
        assert_eq!(lp.cost(0), Some(7.0));
        assert_eq!(lp.col_bounds(1), Some((-1.0, 1.0)));
        assert_eq!(lp.row_bounds(0), Some((f64::NEG_INFINITY, 2.0)));
        assert_eq!(
            lp.set_cost(2, 1.0),
            Err(LpError::ColumnIndexOutOfRange { col: 2, n_cols: 2 })
        );
        assert_eq!(
            lp.set_row_bounds(5, 0.0, 1.0),
            Err(LpError::RowIndexOutOfRange { row: 5, n_rows: 2 })
        );
        assert!(lp.set_column_name(2, "z").is_err());
        assert!(lp.set_row_name(2, "r").is_err());
        lp.set_column_name(1, "y").unwrap();
        lp.set_row_name(0, "cover").unwrap();
        assert_eq!(lp.column_name(1), Some("y"));
        assert_eq!(lp.column_name(0), None);
        assert_eq!(lp.row_name(0), Some("cover"));
        assert_eq!(lp.row_name(1), None);
    }

    #[test]
    fn matrix_is_csc_and_skips_zeros() {
        let mut lp = two_by_two();
        lp.add_row(0.0, 1.0, &[(1, 0.0), (0, -2.5)]);
        let m = lp.matrix();
        assert!(m.is_csc());
        assert_eq!(m.shape(), (3, 2));
        assert_eq!(m.nnz(), 5);
        assert_eq!(lp.nnz(), 6);
        assert_eq!(m.get(1, 1), Some(&3.0));
        assert_eq!(m.get(2, 0), Some(&-2.5));
        assert_eq!(m.get(2, 1), None);
        let dense = m.to_dense();
        assert_eq!(dense[[0, 0]], 1.0);
        assert_eq!(dense[[1, 0]], 1.0);
    }

    #[test]
    fn matrix_of_invalid_program_does_not_panic() {
        let mut lp = two_by_two();
        lp.add_row(0.0, 1.0, &[(9, 1.0), (0, 1.0), (0, 2.0)]);
        let m = lp.matrix();
        assert_eq!(m.get(2, 0), Some(&3.0));
        assert_eq!(m.nnz(), 5);
    }

    #[test]
    fn activity_objective_and_violation() {
        let mut lp = two_by_two();
        lp.set_objective_offset(-1.0);
        let x = [3.0, 1.0];
        assert_eq!(lp.row_activity(&x).unwrap(), vec![4.0, 6.0]);
        assert_eq!(lp.objective_value(&x).unwrap(), 8.0);
        assert_eq!(lp.max_violation(&x).unwrap(), 0.0);
        // x = 3.5 breaks its upper bound by 0.5; row 1 is 3.5 + 0 < 6 by 2.5.
        assert_eq!(lp.max_violation(&[3.5, 0.0]).unwrap(), 2.5);
        assert_eq!(lp.max_violation(&[f64::NAN, 1.0]).unwrap(), f64::INFINITY);
        assert_eq!(
            lp.row_activity(&[1.0]),
            Err(LpError::LengthMismatch {
                what: "point",
                expected: 2,
                got: 1
            })
        );
        assert!(lp.objective_value(&[1.0, 2.0, 3.0]).is_err());
        let z = lp.add_column(0.0, 0.0, 10.0, ColumnKind::Integer);
        assert_eq!(z, 2);
        let v = lp.max_violation(&[3.0, 1.0, 2.25]).unwrap();
        assert!((v - 0.25).abs() < 1e-15);
    }

    #[test]
    fn validate_rejects_nan_cost() {
        let mut lp = two_by_two();
        lp.set_cost(1, f64::NAN).unwrap();
        lp.set_column_name(1, "y").unwrap();
        let err = lp.validate().unwrap_err();
        assert!(matches!(
            err,
            LpError::InvalidCost { col: 1, ref col_name, value } if value.is_nan() && col_name.as_deref() == Some("y")
        ));
        assert_eq!(
            err.to_string(),
            "column 1 (\"y\") has cost NaN; costs must be finite"
        );
        lp.set_cost(1, f64::INFINITY).unwrap();
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidCost { col: 1, .. })
        ));
    }

    #[test]
    fn validate_rejects_bad_bounds() {
        let mut lp = two_by_two();
        lp.set_col_bounds(0, 2.0, 1.0).unwrap();
        assert_eq!(
            lp.validate(),
            Err(LpError::InvalidColumnBounds {
                col: 0,
                col_name: None,
                lower: 2.0,
                upper: 1.0
            })
        );
        lp.set_col_bounds(0, f64::INFINITY, f64::INFINITY).unwrap();
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidColumnBounds { col: 0, .. })
        ));
        lp.set_col_bounds(0, 0.0, f64::NAN).unwrap();
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidColumnBounds { col: 0, .. })
        ));
        lp.set_col_bounds(0, 0.0, 3.0).unwrap();
        lp.set_row_bounds(1, 5.0, 4.0).unwrap();
        lp.set_row_name(1, "demand").unwrap();
        let err = lp.validate().unwrap_err();
        assert_eq!(
            err,
            LpError::InvalidRowBounds {
                row: 1,
                row_name: Some("demand".into()),
                lower: 5.0,
                upper: 4.0
            }
        );
        assert!(
            err.to_string()
                .starts_with("row 1 (\"demand\") has invalid bounds [5, 4]")
        );
        lp.set_row_bounds(1, f64::NEG_INFINITY, f64::NEG_INFINITY)
            .unwrap();
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidRowBounds { row: 1, .. })
        ));
        // Free rows, free columns and equalities are fine.
        lp.set_row_bounds(1, f64::NEG_INFINITY, f64::INFINITY)
            .unwrap();
        lp.set_col_bounds(1, f64::NEG_INFINITY, f64::INFINITY)
            .unwrap();
        lp.set_row_bounds(0, 2.0, 2.0).unwrap();
        assert!(lp.validate().is_ok());
    }

    #[test]
    fn validate_rejects_bad_entries() {
        let mut lp = two_by_two();
        lp.add_row(0.0, 1.0, &[(0, 1.0), (1, 2.0), (0, 0.0)]);
        assert_eq!(
            lp.validate(),
            Err(LpError::DuplicateEntry {
                row: 2,
                row_name: None,
                col: 0,
                col_name: None
            })
        );
        assert_eq!(
            lp.validate().unwrap_err().to_string(),
            "row 2 has two entries for column 0"
        );

        let mut lp = two_by_two();
        lp.add_row(0.0, 1.0, &[(0, 1.0), (2, 2.0)]);
        let err = lp.validate().unwrap_err();
        assert_eq!(
            err,
            LpError::EntryColumnOutOfRange {
                row: 2,
                row_name: None,
                col: 2,
                n_cols: 2
            }
        );
        assert_eq!(
            err.to_string(),
            "row 2 has an entry for column 2, but there are only 2 columns"
        );

        let mut lp = two_by_two();
        lp.add_row(0.0, 1.0, &[(1, f64::NEG_INFINITY)]);
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidCoefficient { row: 2, col: 1, .. })
        ));
        let mut lp = two_by_two();
        lp.add_row(0.0, 1.0, &[(1, f64::NAN)]);
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidCoefficient { row: 2, col: 1, .. })
        ));

        let mut lp = two_by_two();
        lp.set_objective_offset(f64::NAN);
        assert!(matches!(
            lp.validate(),
            Err(LpError::InvalidObjectiveOffset { .. })
        ));
    }

    #[test]
    fn empty_program_is_valid() {
        let lp = LinearProgram::new(Sense::Maximise);
        assert!(lp.validate().is_ok());
        assert_eq!(lp.matrix().shape(), (0, 0));
        assert_eq!(lp.row_activity(&[]).unwrap(), Vec::<f64>::new());
    }

    #[test]
    fn options_defaults_setters_and_validation() {
        let d = SolveOptions::default();
        assert_eq!(d.time_limit_s, None);
        assert_eq!(d.mip_rel_gap, 1e-6);
        assert_eq!(d.threads, 1);
        assert_eq!(d.seed, 0);
        assert!(d.presolve && !d.relax_integrality && !d.verbose);
        assert!(d.validate().is_ok());
        let o = d
            .clone()
            .with_time_limit(0.5)
            .with_mip_rel_gap(0.01)
            .with_threads(2)
            .with_seed(7)
            .with_presolve(false)
            .with_relax_integrality(true)
            .with_verbose(true);
        assert_eq!(o.time_limit_s, Some(0.5));
        assert_eq!((o.mip_rel_gap, o.threads, o.seed), (0.01, 2, 7));
        assert!(!o.presolve && o.relax_integrality && o.verbose);
        assert_eq!(o.clone().without_time_limit().time_limit_s, None);
        assert!(o.validate().is_ok());
        assert!(d.clone().with_time_limit(f64::INFINITY).validate().is_ok());
        assert_eq!(d.mip_max_nodes, None);
        assert_eq!(d.clone().with_mip_max_nodes(9).mip_max_nodes, Some(9));
        assert!(d.clone().with_mip_max_nodes(1).validate().is_ok());
        for bad in [
            d.clone().with_mip_max_nodes(0),
            d.clone().with_mip_max_nodes(u32::MAX),
        ] {
            assert!(matches!(
                bad.validate(),
                Err(LpError::InvalidOption {
                    option: "mip_max_nodes",
                    ..
                })
            ));
        }
        for bad in [
            d.clone().with_time_limit(0.0),
            d.clone().with_time_limit(f64::NAN),
            d.clone().with_mip_rel_gap(-1e-3),
            d.clone().with_mip_rel_gap(f64::NAN),
            d.clone().with_threads(0),
            d.clone().with_seed(SolveOptions::MAX_SEED + 1),
        ] {
            assert!(
                matches!(bad.validate(), Err(LpError::InvalidOption { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn solve_validates_first() {
        let mut lp = two_by_two();
        lp.set_cost(0, f64::NAN).unwrap();
        assert!(matches!(
            solve(&lp, &SolveOptions::default()),
            Err(LpError::InvalidCost { col: 0, .. })
        ));
        let lp = two_by_two();
        assert!(matches!(
            solve(&lp, &SolveOptions::default().with_threads(0)),
            Err(LpError::InvalidOption {
                option: "threads",
                ..
            })
        ));
    }

    #[cfg(not(feature = "highs"))]
    #[test]
    fn solve_without_solver_is_unavailable() {
        assert_eq!(
            solve(&two_by_two(), &SolveOptions::default()),
            Err(LpError::SolverUnavailable)
        );
    }

    #[test]
    fn status_helpers_and_display() {
        assert!(LpStatus::Optimal.is_optimal());
        assert!(!LpStatus::TimeLimit.is_optimal());
        assert!(LpStatus::TimeLimit.is_limit());
        assert!(!LpStatus::Infeasible.is_limit());
        assert_eq!(
            LpStatus::UnboundedOrInfeasible.to_string(),
            "unbounded or infeasible"
        );
        assert_eq!(
            LpStatus::Unknown("kFoo".into()).to_string(),
            "unknown solver status (kFoo)"
        );
        assert_eq!(
            LpError::SolverUnavailable.to_string(),
            "no LP solver available: build dmlsched with the `highs` feature"
        );
    }
}
