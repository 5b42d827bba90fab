//! The validated problem type, its builder, and the independent checker
//! [`evaluate`].

use std::collections::HashSet;

use sprs::{CsMat, TriMat};

use super::error::{Field, PcError, RowClass, RowRef, RowReport};
use crate::certificate::Sense;
use crate::lp;

/// Sense of a linking row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum RowSense {
    /// `≤ rhs`.
    Le,
    /// `≥ rhs`.
    Ge,
}

/// Kind of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ColKind {
    /// Integer in `{0, 1, …, u}` (u may be unbounded).
    #[default]
    Integer,
    /// Integer with `u = 1` (or `u = 0`, which fixes it at 0).
    Binary,
    /// Real in `[0, u]`; rounding sets it to its scaled LP value and unit
    /// repair moves never change it.
    Continuous,
}

/// Optional human-readable row names, per class, for error messages.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowLabels {
    /// One per packing row (or empty).
    pub packing: Vec<String>,
    /// One per covering row (or empty).
    pub covering: Vec<String>,
    /// One per linking row (or empty).
    pub linking: Vec<String>,
}

/// One class of rows: CSR for row sums, CSC for column walks.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    csr: CsMat<f64>,
    csc: CsMat<f64>,
    rhs: Vec<f64>,
    /// Per row: integer coefficients over integer columns only.
    integral: Vec<bool>,
}

impl Block {
    fn rows(&self) -> usize {
        self.rhs.len()
    }
}

/// A validated mixed packing–covering integer program ([algorithms guide,
/// section 1.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-program)).
///
/// ```text
/// minimise c·x  (or maximise v·x)
/// subject to  P x ≤ p,  C x ≥ q,  linking rows,  x_j ∈ {0, …, u_j} (or [0, u_j] if continuous)
/// ```
///
/// Build it with [`PcBuilder`]; once built it is immutable and valid.
#[derive(Debug, Clone, PartialEq)]
pub struct PcProblem {
    sense: Sense,
    general: bool,
    objective: Vec<f64>,
    upper: Vec<f64>,
    kinds: Vec<ColKind>,
    packing: Block,
    covering: Block,
    linking: Block,
    linking_sense: Vec<RowSense>,
    row_labels: RowLabels,
    col_labels: Vec<String>,
}

impl PcProblem {
    /// Minimise or maximise.
    pub fn sense(&self) -> Sense {
        self.sense
    }

    /// Whether the objective may have any sign (built with
    /// [`PcBuilder::general`]); then no a-priori guarantee is emitted.
    pub fn is_general(&self) -> bool {
        self.general
    }

    /// Number of variables n.
    pub fn n_vars(&self) -> usize {
        self.objective.len()
    }

    /// The objective coefficients (cost `c` or value `v`) in the user's sense.
    pub fn objective(&self) -> &[f64] {
        &self.objective
    }

    /// The same program with every objective coefficient multiplied by
    /// `factor` (callers pass a power of two, so the scaling is exact and
    /// values and bounds of the scaled program divide back exactly). Used
    /// to bring costs of very different magnitude to the solver's range.
    pub fn with_objective_scaled(&self, factor: f64) -> PcProblem {
        let mut p = self.clone();
        for c in &mut p.objective {
            *c *= factor;
        }
        p
    }

    /// Upper bound of column `j` (`f64::INFINITY` when unbounded).
    pub fn upper(&self, j: usize) -> f64 {
        self.upper[j]
    }

    /// All upper bounds.
    pub fn uppers(&self) -> &[f64] {
        &self.upper
    }

    /// Kind of column `j`.
    pub fn kind(&self, j: usize) -> ColKind {
        self.kinds[j]
    }

    /// Whether column `j` must be integral.
    pub fn is_integer(&self, j: usize) -> bool {
        self.kinds[j] != ColKind::Continuous
    }

    /// Whether some column is continuous.
    pub fn has_continuous(&self) -> bool {
        self.kinds.contains(&ColKind::Continuous)
    }

    fn block(&self, class: RowClass) -> &Block {
        match class {
            RowClass::Packing => &self.packing,
            RowClass::Covering => &self.covering,
            RowClass::Linking => &self.linking,
        }
    }

    /// Number of rows of a class.
    pub fn n_rows(&self, class: RowClass) -> usize {
        self.block(class).rows()
    }

    /// Right-hand side of a row (capacity, demand, or linking rhs).
    pub fn rhs(&self, row: RowRef) -> f64 {
        self.block(row.class).rhs[row.row]
    }

    /// Whether a row has integer coefficients over integer columns only.
    ///
    /// At an integer point such a row's activity is an exact integer (as
    /// long as its partial sums stay within [`MAX_EXACT_INTEGER`], which
    /// validation ensures for the right-hand side), so it is checked with an
    /// absolute tolerance: a relative one would let a row of right-hand side
    /// `1e15` be short by a million units.
    pub fn row_is_integral(&self, row: RowRef) -> bool {
        self.block(row.class)
            .integral
            .get(row.row)
            .copied()
            .unwrap_or(false)
    }

    /// How far row `row`'s activity may lie on the wrong side of `threshold`
    /// for the row to hold, given the relative tolerance `tol`: `tol` itself
    /// on an integral row ([`row_is_integral`](Self::row_is_integral)), far
    /// below one unit; `tol·max(1, |threshold|)` otherwise.
    pub(crate) fn row_slack(&self, row: RowRef, threshold: f64, tol: f64) -> f64 {
        if self.row_is_integral(row) {
            tol
        } else {
            tol * threshold.abs().max(1.0)
        }
    }

    /// Right-hand sides of a class.
    pub fn rhs_of(&self, class: RowClass) -> &[f64] {
        &self.block(class).rhs
    }

    /// Sense of a row: packing `Le`, covering `Ge`, linking as given.
    pub fn row_sense(&self, row: RowRef) -> RowSense {
        match row.class {
            RowClass::Packing => RowSense::Le,
            RowClass::Covering => RowSense::Ge,
            RowClass::Linking => self.linking_sense[row.row],
        }
    }

    /// Non-zero entries of a row: `(columns, coefficients)`.
    pub fn row(&self, row: RowRef) -> (&[usize], &[f64]) {
        slices(&self.block(row.class).csr, row.row)
    }

    /// Non-zero entries of column `j` in one class: `(rows within the
    /// class, coefficients)`.
    pub fn column(&self, class: RowClass, j: usize) -> (&[usize], &[f64]) {
        slices(&self.block(class).csc, j)
    }

    /// The CSR matrix of a class (rows × n).
    pub fn matrix(&self, class: RowClass) -> &CsMat<f64> {
        &self.block(class).csr
    }

    /// Stored non-zeros over all classes.
    pub fn nnz(&self) -> usize {
        self.packing.csr.nnz() + self.covering.csr.nnz() + self.linking.csr.nnz()
    }

    /// Label of a row, if labels were given.
    pub fn row_label(&self, row: RowRef) -> Option<&str> {
        let v = match row.class {
            RowClass::Packing => &self.row_labels.packing,
            RowClass::Covering => &self.row_labels.covering,
            RowClass::Linking => &self.row_labels.linking,
        };
        v.get(row.row).map(String::as_str)
    }

    /// Label of a column, if labels were given.
    pub fn col_label(&self, j: usize) -> Option<&str> {
        self.col_labels.get(j).map(String::as_str)
    }

    /// Objective of a point, in the user's sense.
    pub fn objective_value(&self, x: &[f64]) -> f64 {
        self.objective.iter().zip(x).map(|(c, v)| c * v).sum()
    }

    /// Row activities of a class at `x`.
    pub fn activities(&self, class: RowClass, x: &[f64]) -> Vec<f64> {
        let b = self.block(class);
        (0..b.rows())
            .map(|i| {
                let (cols, vals) = slices(&b.csr, i);
                cols.iter().zip(vals).map(|(&j, &a)| a * x[j]).sum()
            })
            .collect()
    }

    /// Packing width `W_P = min_i p_i / max_j P_ij` (the smallest right-hand
    /// side relative to its row's largest coefficient); `+∞` without
    /// packing rows.
    pub fn packing_width(&self) -> f64 {
        width(&self.packing, |_| true)
    }

    /// Covering width `W_C = min_k q_k / max_{j: u_j > 0} C_kj`; `+∞` without
    /// covering rows.
    pub fn covering_width(&self) -> f64 {
        width(&self.covering, |j| self.upper[j] > 0.0)
    }
}

/// The stored entries of outer index `i` of a compressed matrix.
fn slices(m: &CsMat<f64>, i: usize) -> (&[usize], &[f64]) {
    if i >= m.outer_dims() {
        return (&[], &[]);
    }
    let r = m.indptr().outer_inds_sz(i);
    (&m.indices()[r.clone()], &m.data()[r])
}

fn width(b: &Block, usable: impl Fn(usize) -> bool) -> f64 {
    (0..b.rows())
        .filter_map(|i| {
            let (cols, vals) = slices(&b.csr, i);
            let a = cols
                .iter()
                .zip(vals)
                .filter(|(j, _)| usable(**j))
                .map(|(_, &a)| a)
                .fold(0.0, f64::max);
            (a > 0.0).then(|| b.rhs[i] / a)
        })
        .fold(f64::INFINITY, f64::min)
}

/// A row as given to the builder: class, entries, right-hand side, sense.
type PendingRow = (RowClass, Vec<(usize, f64)>, f64, RowSense);

/// A pending row with its per-class reference.
type IndexedRow<'a> = (RowRef, &'a [(usize, f64)], f64, RowSense);

/// Most variables a [`PcProblem`] may have: `2^26 = 67,108,864`.
///
/// The problem, its LP copy and the solver's copy hold a few hundred bytes
/// per column, so this keeps a problem within tens of gigabytes; a larger
/// `n_vars` is refused by [`PcBuilder::build`] before anything of that size
/// is allocated.
pub const MAX_VARS: usize = 1 << 26;

/// `2^53`: the largest magnitude up to which every integer is exact in
/// `f64`.
///
/// A row whose coefficients are integers over integer columns is checked
/// exactly (with an absolute tolerance), so its right-hand side must not
/// exceed this value; see [`PcProblem::row_is_integral`].
pub const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Builder of a [`PcProblem`]; `build` validates (rules V1–V10 of
/// [algorithms guide, section 1.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-program), in order, returning the first violation, then the magnitude rule V11).
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::PcBuilder;
/// // KA1: triangle set cover.
/// let p = PcBuilder::new(Sense::Minimise, 3)
///     .objective(vec![1.0, 1.0, 1.0])
///     .covering_row(&[(0, 1.0), (2, 1.0)], 1.0)
///     .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
///     .covering_row(&[(1, 1.0), (2, 1.0)], 1.0)
///     .build()
///     .unwrap();
/// assert_eq!(p.n_vars(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct PcBuilder {
    sense: Sense,
    general: bool,
    n: usize,
    objective: Option<Vec<f64>>,
    /// Upper bounds of the columns set so far, grown on demand (columns
    /// beyond its length keep the default `Some(1)`), so that `new` never
    /// allocates `n` entries before `build` has checked `n`.
    upper: Vec<Option<f64>>,
    /// Kinds, grown with `upper`.
    kinds: Vec<ColKind>,
    /// The largest column index `≥ n` given to a column setter.
    bad_col: Option<usize>,
    rows: Vec<PendingRow>,
    row_labels: Option<RowLabels>,
    col_labels: Option<Vec<String>>,
}

impl PcBuilder {
    /// A problem with `n_vars` integer columns, upper bound 1 each (0/1
    /// program) until set otherwise, and objective 0.
    ///
    /// Nothing of size `n_vars` is allocated here; [`build`](Self::build)
    /// checks `n_vars` against [`MAX_VARS`] and the objective's length first.
    pub fn new(sense: Sense, n_vars: usize) -> Self {
        PcBuilder {
            sense,
            general: false,
            n: n_vars,
            objective: None,
            upper: Vec::new(),
            kinds: Vec::new(),
            bad_col: None,
            rows: Vec::new(),
            row_labels: None,
            col_labels: None,
        }
    }

    /// Like [`PcBuilder::new`], but the objective may have any finite sign
    /// (no a-priori guarantee is then emitted).
    pub fn general(sense: Sense, n_vars: usize) -> Self {
        PcBuilder {
            general: true,
            ..PcBuilder::new(sense, n_vars)
        }
    }

    /// The objective coefficients, one per column.
    pub fn objective(mut self, coeffs: Vec<f64>) -> Self {
        self.objective = Some(coeffs);
        self
    }

    /// Upper bound of integer column `j` (`None`: unbounded). Default `Some(1)`.
    /// An out-of-range `j` is reported by `build`.
    pub fn upper(mut self, j: usize, u: Option<u32>) -> Self {
        self.set_column(j, u.map(f64::from), None);
        self
    }

    /// Makes column `j` continuous in `[0, u]` (`f64::INFINITY`: unbounded).
    pub fn continuous(mut self, j: usize, u: f64) -> Self {
        let u = if u == f64::INFINITY { None } else { Some(u) };
        self.set_column(j, u, Some(ColKind::Continuous));
        self
    }

    /// Makes column `j` binary (integer with upper bound 1).
    pub fn binary(mut self, j: usize) -> Self {
        self.set_column(j, Some(1.0), Some(ColKind::Binary));
        self
    }

    /// Sets column `j`'s upper bound (and kind, if given); remembers an
    /// out-of-range `j` for `build` to report (V1).
    fn set_column(&mut self, j: usize, u: Option<f64>, kind: Option<ColKind>) {
        if j >= self.n {
            self.bad_col = Some(self.bad_col.map_or(j, |b| b.max(j)));
            return;
        }
        if j >= self.upper.len() {
            self.upper.resize(j + 1, Some(1.0));
            self.kinds.resize(j + 1, ColKind::Integer);
        }
        self.upper[j] = u;
        if let Some(k) = kind {
            self.kinds[j] = k;
        }
    }

    /// Adds a packing row `Σ entries ≤ rhs`.
    pub fn packing_row(mut self, entries: &[(usize, f64)], rhs: f64) -> Self {
        self.rows
            .push((RowClass::Packing, entries.to_vec(), rhs, RowSense::Le));
        self
    }

    /// Adds a covering row `Σ entries ≥ rhs`.
    pub fn covering_row(mut self, entries: &[(usize, f64)], rhs: f64) -> Self {
        self.rows
            .push((RowClass::Covering, entries.to_vec(), rhs, RowSense::Ge));
        self
    }

    /// Adds a linking row (any signs) `Σ entries ≤ rhs` or `≥ rhs`.
    pub fn linking_row(mut self, entries: &[(usize, f64)], sense: RowSense, rhs: f64) -> Self {
        self.rows
            .push((RowClass::Linking, entries.to_vec(), rhs, sense));
        self
    }

    /// Row and column labels for messages (each list empty or complete).
    pub fn labels(mut self, rows: RowLabels, cols: Vec<String>) -> Self {
        self.row_labels = Some(rows);
        self.col_labels = Some(cols);
        self
    }

    /// Validates and builds the problem.
    ///
    /// # Errors
    ///
    /// [`PcError::TooLarge`] when `n_vars` exceeds [`MAX_VARS`] (checked
    /// before anything of that size is allocated); then the first violation
    /// of the validation rules V1–V10, or [`PcError::InvalidUpper`] for an integer
    /// column with a fractional bound; then [`PcError::OutOfRange`] (V11)
    /// for a finite number the LP solver cannot represent or, on a row of
    /// integer coefficients over integer columns, a right-hand side beyond
    /// [`MAX_EXACT_INTEGER`].
    pub fn build(self) -> Result<PcProblem, PcError> {
        let n = self.n;
        self.check_sizes()?;
        let labels = self.row_labels.clone().unwrap_or_default();
        let indexed = index_rows(&self.rows);
        let label_of = |r: RowRef| -> Option<String> {
            let v = match r.class {
                RowClass::Packing => &labels.packing,
                RowClass::Covering => &labels.covering,
                RowClass::Linking => &labels.linking,
            };
            v.get(r.row).cloned()
        };
        self.check_labels(&labels, &indexed)?;
        // Sizes are checked: materialise the columns.
        let objective = self.objective.clone().unwrap_or_else(|| vec![0.0; n]);
        let mut upper = self.upper.clone();
        upper.resize(n, Some(1.0));
        let mut kinds = self.kinds.clone();
        kinds.resize(n, ColKind::Integer);

        check_finite(&objective, &upper, &indexed)?;
        check_duplicates(&indexed, &label_of)?;
        check_kinds(&upper, &kinds)?;
        check_signs(&indexed, &label_of)?;
        // V8: objective signs.
        if !self.general
            && let Some(j) = objective.iter().position(|v| *v < 0.0)
        {
            return Err(PcError::NegativeObjective {
                col: j,
                value: objective[j],
            });
        }
        let upper: Vec<f64> = upper.iter().map(|u| u.unwrap_or(f64::INFINITY)).collect();
        check_reachable(&indexed, &upper, &label_of)?;
        if self.sense == Sense::Maximise {
            check_bounded(&indexed, &objective, &upper)?;
        }
        check_magnitudes(&objective, &upper, &kinds, &indexed, &label_of)?;

        let [packing, covering, linking] =
            [RowClass::Packing, RowClass::Covering, RowClass::Linking]
                .map(|class| make_block(class, n, &indexed, &kinds));
        let linking_sense = indexed
            .iter()
            .filter(|x| x.0.class == RowClass::Linking)
            .map(|x| x.3)
            .collect();
        Ok(PcProblem {
            sense: self.sense,
            general: self.general,
            objective,
            upper,
            kinds,
            packing,
            covering,
            linking,
            linking_sense,
            row_labels: labels,
            col_labels: self.col_labels.unwrap_or_default(),
        })
    }

    /// V1, the part that must come before any allocation of size `n`:
    /// `n ≤ MAX_VARS`, the objective's length, and column indices given to
    /// the column setters.
    fn check_sizes(&self) -> Result<(), PcError> {
        let n = self.n;
        if n > MAX_VARS {
            return Err(PcError::TooLarge {
                what: "n_vars (number of variables)",
                size: n,
                limit: MAX_VARS,
            });
        }
        if let Some(obj) = &self.objective
            && obj.len() != n
        {
            return Err(PcError::DimensionMismatch {
                what: "objective",
                expected: n,
                got: obj.len(),
            });
        }
        if let Some(j) = self.bad_col {
            return Err(PcError::DimensionMismatch {
                what: "column index of a bound",
                expected: n,
                got: j,
            });
        }
        Ok(())
    }

    /// V1: label counts and entry column indices.
    fn check_labels(&self, labels: &RowLabels, indexed: &[IndexedRow<'_>]) -> Result<(), PcError> {
        let n = self.n;
        let count = |c: RowClass| indexed.iter().filter(|r| r.0.class == c).count();
        for (what, given, expected) in [
            (
                "packing labels",
                labels.packing.len(),
                count(RowClass::Packing),
            ),
            (
                "covering labels",
                labels.covering.len(),
                count(RowClass::Covering),
            ),
            (
                "linking labels",
                labels.linking.len(),
                count(RowClass::Linking),
            ),
        ] {
            if self.row_labels.is_some() && given != 0 && given != expected {
                return Err(PcError::DimensionMismatch {
                    what,
                    expected,
                    got: given,
                });
            }
        }
        if let Some(cols) = &self.col_labels
            && !cols.is_empty()
            && cols.len() != n
        {
            return Err(PcError::DimensionMismatch {
                what: "column labels",
                expected: n,
                got: cols.len(),
            });
        }
        for (_, entries, _, _) in indexed {
            if let Some(&(j, _)) = entries.iter().find(|(j, _)| *j >= n) {
                return Err(PcError::DimensionMismatch {
                    what: "column index of an entry",
                    expected: n,
                    got: j,
                });
            }
        }
        Ok(())
    }
}

/// The pending rows with their per-class indices, in insertion order.
fn index_rows(rows: &[PendingRow]) -> Vec<IndexedRow<'_>> {
    let mut next = [0usize; 3];
    rows.iter()
        .map(|(class, entries, rhs, sense)| {
            let slot = class_slot(*class);
            let r = RowRef {
                class: *class,
                row: next[slot],
            };
            next[slot] += 1;
            (r, entries.as_slice(), *rhs, *sense)
        })
        .collect()
}

/// V2: finiteness of the objective, the bounds, the coefficients and the
/// right-hand sides.
fn check_finite(
    objective: &[f64],
    upper: &[Option<f64>],
    indexed: &[IndexedRow<'_>],
) -> Result<(), PcError> {
    if let Some(j) = objective.iter().position(|v| !v.is_finite()) {
        return Err(PcError::NonFinite {
            what: Field::Objective,
            row: None,
            col: Some(j),
        });
    }
    if let Some(j) = upper.iter().position(|u| u.is_some_and(|u| !u.is_finite())) {
        return Err(PcError::NonFinite {
            what: Field::Upper,
            row: None,
            col: Some(j),
        });
    }
    for (r, entries, rhs, _) in indexed {
        if let Some(&(j, _)) = entries.iter().find(|(_, a)| !a.is_finite()) {
            return Err(PcError::NonFinite {
                what: Field::Coefficient,
                row: Some(*r),
                col: Some(j),
            });
        }
        if !rhs.is_finite() {
            return Err(PcError::NonFinite {
                what: Field::Rhs,
                row: Some(*r),
                col: None,
            });
        }
    }
    Ok(())
}

/// V3: the same (row, column) given twice.
fn check_duplicates(
    indexed: &[IndexedRow<'_>],
    label_of: &impl Fn(RowRef) -> Option<String>,
) -> Result<(), PcError> {
    for (r, entries, _, _) in indexed {
        let mut seen = HashSet::with_capacity(entries.len());
        for &(j, _) in entries.iter() {
            if !seen.insert(j) {
                return Err(PcError::DuplicateEntry {
                    matrix: r.class,
                    row: r.row,
                    label: label_of(*r),
                    col: j,
                });
            }
        }
    }
    Ok(())
}

/// Upper bounds must suit the column kind.
fn check_kinds(upper: &[Option<f64>], kinds: &[ColKind]) -> Result<(), PcError> {
    for (j, (u, k)) in upper.iter().zip(kinds).enumerate() {
        match (k, u) {
            (_, Some(u)) if *u < 0.0 => {
                return Err(PcError::InvalidUpper { col: j, value: *u });
            }
            (ColKind::Integer, Some(u)) if u.fract() != 0.0 => {
                return Err(PcError::InvalidUpper { col: j, value: *u });
            }
            // A binary column is bounded by 1, or fixed at 0.
            (ColKind::Binary, u) if *u != Some(1.0) && *u != Some(0.0) => {
                return Err(PcError::InvalidUpper {
                    col: j,
                    value: u.unwrap_or(f64::INFINITY),
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// V4 (negative packing/covering coefficients), V5 (negative capacities),
/// V6 (non-positive demands) and V7 (empty rows), each over all rows in turn.
fn check_signs(
    indexed: &[IndexedRow<'_>],
    label_of: &impl Fn(RowRef) -> Option<String>,
) -> Result<(), PcError> {
    for (r, entries, _, _) in indexed {
        if r.class == RowClass::Linking {
            continue;
        }
        if let Some(&(j, a)) = entries.iter().find(|(_, a)| *a < 0.0) {
            return Err(PcError::NegativeCoefficient {
                matrix: r.class,
                row: r.row,
                label: label_of(*r),
                col: j,
                value: a,
            });
        }
    }
    for (r, _, rhs, _) in indexed {
        match r.class {
            RowClass::Packing if *rhs < 0.0 => {
                return Err(PcError::NegativeCapacity {
                    row: r.row,
                    label: label_of(*r),
                    value: *rhs,
                });
            }
            RowClass::Covering if *rhs <= 0.0 => {
                return Err(PcError::NonPositiveDemand {
                    row: r.row,
                    label: label_of(*r),
                    value: *rhs,
                });
            }
            _ => {}
        }
    }
    // Exact zeros are dropped, so a row of zeros is empty.
    for (r, entries, _, _) in indexed {
        if entries.iter().all(|(_, a)| *a == 0.0) {
            return Err(PcError::EmptyRow {
                matrix: r.class,
                row: r.row,
                label: label_of(*r),
            });
        }
    }
    Ok(())
}

/// V9: every covering row is reachable with the columns at their upper
/// bounds.
fn check_reachable(
    indexed: &[IndexedRow<'_>],
    upper: &[f64],
    label_of: &impl Fn(RowRef) -> Option<String>,
) -> Result<(), PcError> {
    for (r, entries, rhs, _) in indexed {
        if r.class != RowClass::Covering {
            continue;
        }
        let max_lhs: f64 = entries
            .iter()
            .map(|&(j, a)| if a > 0.0 { a * upper[j] } else { 0.0 })
            .sum();
        if max_lhs < *rhs {
            return Err(PcError::CoveringUnreachable {
                row: r.row,
                label: label_of(*r),
                max_lhs,
                rhs: *rhs,
            });
        }
    }
    Ok(())
}

/// V10 (max form): no column with positive value, no upper bound and no
/// positive packing coefficient.
fn check_bounded(
    indexed: &[IndexedRow<'_>],
    objective: &[f64],
    upper: &[f64],
) -> Result<(), PcError> {
    let mut packed = vec![false; objective.len()];
    for (r, entries, _, _) in indexed {
        if r.class == RowClass::Packing {
            for &(j, a) in entries.iter() {
                if a > 0.0 {
                    packed[j] = true;
                }
            }
        }
    }
    match (0..objective.len()).find(|&j| objective[j] > 0.0 && upper[j].is_infinite() && !packed[j])
    {
        Some(j) => Err(PcError::UnboundedColumn { col: j }),
        None => Ok(()),
    }
}

/// Whether a row's coefficients are all integers over integer columns (its
/// activity at an integer point is then an exact integer while it stays
/// within [`MAX_EXACT_INTEGER`]).
fn is_integral_row(entries: &[(usize, f64)], kinds: &[ColKind]) -> bool {
    entries
        .iter()
        .all(|&(j, a)| a.fract() == 0.0 && kinds[j] != ColKind::Continuous)
}

/// V11: magnitudes the engine can solve and check faithfully. Objective
/// coefficients and finite upper bounds below [`lp::SOLVER_INFINITY`],
/// non-zero coefficients strictly between [`lp::MIN_COEFFICIENT`] and
/// [`lp::MAX_COEFFICIENT`], right-hand sides below [`lp::SOLVER_INFINITY`]
/// and, on integral rows, at most [`MAX_EXACT_INTEGER`].
///
/// With these limits no sum the engine forms can overflow: `|c_j| < 1e20`,
/// `u_j < 1e20` and `n ≤ 2^26` keep `Σ|c_j|·u_j` below `1e48`.
fn check_magnitudes(
    objective: &[f64],
    upper: &[f64],
    kinds: &[ColKind],
    indexed: &[IndexedRow<'_>],
    label_of: &impl Fn(RowRef) -> Option<String>,
) -> Result<(), PcError> {
    let out = |what, row: Option<RowRef>, col, value, limit| PcError::OutOfRange {
        what,
        row,
        label: row.and_then(label_of),
        col,
        value,
        limit,
    };
    if let Some(j) = objective
        .iter()
        .position(|c| c.abs() >= lp::SOLVER_INFINITY)
    {
        return Err(out(
            Field::Objective,
            None,
            Some(j),
            objective[j],
            lp::SOLVER_INFINITY,
        ));
    }
    if let Some(j) = upper
        .iter()
        .position(|u| u.is_finite() && *u >= lp::SOLVER_INFINITY)
    {
        return Err(out(
            Field::Upper,
            None,
            Some(j),
            upper[j],
            lp::SOLVER_INFINITY,
        ));
    }
    for (r, entries, rhs, _) in indexed {
        if let Some(&(j, a)) = entries
            .iter()
            .find(|(_, a)| *a != 0.0 && !lp::coefficient_in_range(*a))
        {
            let limit = if a.abs() >= lp::MAX_COEFFICIENT {
                lp::MAX_COEFFICIENT
            } else {
                lp::MIN_COEFFICIENT
            };
            return Err(out(Field::Coefficient, Some(*r), Some(j), a, limit));
        }
        if rhs.abs() >= lp::SOLVER_INFINITY {
            return Err(out(Field::Rhs, Some(*r), None, *rhs, lp::SOLVER_INFINITY));
        }
        if rhs.abs() > MAX_EXACT_INTEGER && is_integral_row(entries, kinds) {
            return Err(out(Field::Rhs, Some(*r), None, *rhs, MAX_EXACT_INTEGER));
        }
    }
    Ok(())
}

/// The rows of one class as a [`Block`] (exact zeros dropped).
fn make_block(class: RowClass, n: usize, indexed: &[IndexedRow<'_>], kinds: &[ColKind]) -> Block {
    let rows: Vec<&IndexedRow<'_>> = indexed.iter().filter(|x| x.0.class == class).collect();
    let mut tri = TriMat::new((rows.len(), n));
    let mut rhs = Vec::with_capacity(rows.len());
    let mut integral = Vec::with_capacity(rows.len());
    for (r, entries, b, _) in rows {
        for &(j, a) in entries.iter() {
            if a != 0.0 {
                tri.add_triplet(r.row, j, a);
            }
        }
        rhs.push(*b);
        integral.push(is_integral_row(entries, kinds));
    }
    Block {
        csr: tri.to_csr(),
        csc: tri.to_csc(),
        rhs,
        integral,
    }
}

fn class_slot(c: RowClass) -> usize {
    match c {
        RowClass::Packing => 0,
        RowClass::Covering => 1,
        RowClass::Linking => 2,
    }
}

/// Result of [`evaluate`]: the objective, every row's activity, and every
/// violation beyond the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Objective in the user's sense.
    pub objective: f64,
    /// Packing loads `P x`.
    pub packing: Vec<f64>,
    /// Covering levels `C x`.
    pub covering: Vec<f64>,
    /// Linking activities.
    pub linking: Vec<f64>,
    /// Violated rows (beyond `tol · max(1, |rhs|)`, or beyond `tol` on an
    /// integral row, see [`PcProblem::row_is_integral`]).
    pub violated_rows: Vec<RowReport>,
    /// Columns outside `[0, u_j]` or not integral (integer columns), with
    /// their value.
    pub violated_columns: Vec<(usize, f64)>,
}

impl Evaluation {
    /// Whether nothing is violated.
    pub fn is_feasible(&self) -> bool {
        self.violated_rows.is_empty() && self.violated_columns.is_empty()
    }

    /// Largest absolute row violation (0 when feasible).
    pub fn max_violation(&self) -> f64 {
        self.violated_rows
            .iter()
            .map(|r| r.deficit)
            .fold(0.0, f64::max)
    }
}

/// Independent checker (PC-7): evaluates `x` against every row and bound of
/// `p`, with relative tolerance `tol` (`1e-9` is the engine's default);
/// rows of integer coefficients over integer columns get the absolute
/// tolerance `tol` ([`PcProblem::row_is_integral`]).
///
/// It recomputes everything from the problem's rows; it does not trust any
/// load kept by rounding or repair.
///
/// # Panics
///
/// Never; a point of the wrong length is reported as a violation of every
/// missing column (value NaN).
pub fn evaluate(p: &PcProblem, x: &[f64], tol: f64) -> Evaluation {
    let n = p.n_vars();
    let mut full: Vec<f64> = x.iter().copied().take(n).collect();
    full.resize(n, f64::NAN);
    let mut violated_columns = Vec::new();
    for (j, &v) in full.iter().enumerate() {
        let u = p.upper(j);
        // Integer columns have integer bounds: an absolute tolerance.
        let above = if p.is_integer(j) {
            tol
        } else {
            tol * u.abs().max(1.0)
        };
        let bad_bounds = !(v >= -tol && v <= u + above);
        let bad_integrality = p.is_integer(j) && (v - v.round()).abs() > tol;
        if bad_bounds || bad_integrality || v.is_nan() {
            violated_columns.push((j, v));
        }
    }
    let mut violated_rows = Vec::new();
    let mut acts = [Vec::new(), Vec::new(), Vec::new()];
    for class in [RowClass::Packing, RowClass::Covering, RowClass::Linking] {
        let act = p.activities(class, &full);
        for (i, &lhs) in act.iter().enumerate() {
            let row = RowRef { class, row: i };
            let rhs = p.rhs(row);
            let slack = p.row_slack(row, rhs, tol);
            let deficit = match p.row_sense(row) {
                RowSense::Le => lhs - rhs,
                RowSense::Ge => rhs - lhs,
            };
            if deficit > slack || lhs.is_nan() {
                violated_rows.push(RowReport {
                    row,
                    label: p.row_label(row).map(str::to_string),
                    lhs,
                    rhs,
                    deficit,
                });
            }
        }
        acts[class_slot(class)] = act;
    }
    let [packing, covering, linking] = acts;
    Evaluation {
        objective: p.objective_value(&full),
        packing,
        covering,
        linking,
        violated_rows,
        violated_columns,
    }
}
