//! Errors of the packing–covering engine.

use std::fmt;

use crate::lp::{LpError, LpStatus};

/// Which matrix (row class) an entry or row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum RowClass {
    /// `Σ P_ij x_j ≤ p_i`, non-negative coefficients and capacity.
    Packing,
    /// `Σ C_kj x_j ≥ q_k`, non-negative coefficients, positive demand.
    Covering,
    /// Any signs, `≤` or `≥` a finite right-hand side; enforced by the LP,
    /// [`evaluate`](super::evaluate) and repair, excluded from the rounding
    /// theory.
    Linking,
}

impl fmt::Display for RowClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RowClass::Packing => "packing",
            RowClass::Covering => "covering",
            RowClass::Linking => "linking",
        })
    }
}

/// A row of one class: `(class, index within the class)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RowRef {
    /// The class.
    pub class: RowClass,
    /// Index among the rows of that class, in insertion order.
    pub row: usize,
}

/// Which numeric input a [`PcError::NonFinite`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// An objective coefficient.
    Objective,
    /// A matrix coefficient.
    Coefficient,
    /// A right-hand side.
    Rhs,
    /// An upper bound of a continuous column.
    Upper,
}

/// One violated row, as reported by repair failures and [`evaluate`](super::evaluate).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RowReport {
    /// The row.
    pub row: RowRef,
    /// Its label, if the problem has labels.
    pub label: Option<String>,
    /// Left-hand side at the point.
    pub lhs: f64,
    /// Right-hand side.
    pub rhs: f64,
    /// How far the row is from holding (> 0).
    pub deficit: f64,
}

/// Why repair could not make a point feasible (spec §6).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RepairFailure {
    /// Covering rows still short.
    pub uncovered: Vec<RowReport>,
    /// Packing or linking rows still violated (only when shrinking stalls).
    pub still_violated: Vec<RowReport>,
    /// Packing (or linking) rows that stopped an increment that would have helped.
    pub blocking_rows: Vec<RowRef>,
    /// Helpful columns already at their upper bound.
    pub saturated_cols: Vec<usize>,
    /// Total remaining covering deficit (used to pick the least-bad trial).
    pub total_deficit: f64,
}

impl fmt::Display for RepairFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |rows: &[RowReport]| {
            rows.iter()
                .map(|r| match &r.label {
                    Some(l) => format!(
                        "{} row {} ({l}) short by {}",
                        r.row.class, r.row.row, r.deficit
                    ),
                    None => format!("{} row {} short by {}", r.row.class, r.row.row, r.deficit),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        write!(f, "uncovered: [{}]", list(&self.uncovered))?;
        if !self.still_violated.is_empty() {
            write!(f, "; still violated: [{}]", list(&self.still_violated))?;
        }
        if !self.blocking_rows.is_empty() {
            let b: Vec<String> = self
                .blocking_rows
                .iter()
                .map(|r| format!("{} row {}", r.class, r.row))
                .collect();
            write!(f, "; blocked by [{}]", b.join(", "))?;
        }
        if !self.saturated_cols.is_empty() {
            write!(f, "; saturated columns {:?}", self.saturated_cols)?;
        }
        Ok(())
    }
}

fn label_suffix(label: &Option<String>) -> String {
    label
        .as_ref()
        .map_or_else(String::new, |l| format!(" ({l})"))
}

/// Errors of [`crate::pcip`]: invalid problems (V1–V10 of the spec, checked
/// in that order), LP outcomes that stop the pipeline, integer
/// infeasibility, repair failures and solver problems.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PcError {
    /// V1: a length differs from the number of variables or rows, or an
    /// entry's column index is out of range.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// What has the wrong size.
        what: &'static str,
        /// Expected size (or bound).
        expected: usize,
        /// Actual size (or index).
        got: usize,
    },
    /// V2: a cost, coefficient, right-hand side or bound is NaN or infinite.
    #[error("non-finite {what:?} (row {row:?}, column {col:?})")]
    NonFinite {
        /// Which input.
        what: Field,
        /// Row within its class, if any.
        row: Option<RowRef>,
        /// Column, if any.
        col: Option<usize>,
    },
    /// V3: the same (row, column) appears twice.
    #[error(
        "duplicate entry in {matrix} row {row}{}, column {col}",
        label_suffix(label)
    )]
    DuplicateEntry {
        /// Row class.
        matrix: RowClass,
        /// Row within the class.
        row: usize,
        /// Row label.
        label: Option<String>,
        /// Column.
        col: usize,
    },
    /// V4: a packing or covering coefficient is negative.
    #[error(
        "negative coefficient {value} in {matrix} row {row}{}, column {col}",
        label_suffix(label)
    )]
    NegativeCoefficient {
        /// Row class.
        matrix: RowClass,
        /// Row within the class.
        row: usize,
        /// Row label.
        label: Option<String>,
        /// Column.
        col: usize,
        /// The coefficient.
        value: f64,
    },
    /// V5: a packing capacity is negative.
    #[error(
        "negative capacity {value} of packing row {row}{}",
        label_suffix(label)
    )]
    NegativeCapacity {
        /// Packing row.
        row: usize,
        /// Row label.
        label: Option<String>,
        /// The capacity.
        value: f64,
    },
    /// V6: a covering demand is ≤ 0 (a vacuous row).
    #[error(
        "non-positive demand {value} of covering row {row}{}",
        label_suffix(label)
    )]
    NonPositiveDemand {
        /// Covering row.
        row: usize,
        /// Row label.
        label: Option<String>,
        /// The demand.
        value: f64,
    },
    /// V7: a row has no non-zero coefficient.
    #[error(
        "{matrix} row {row}{} has no non-zero coefficient",
        label_suffix(label)
    )]
    EmptyRow {
        /// Row class.
        matrix: RowClass,
        /// Row within the class.
        row: usize,
        /// Row label.
        label: Option<String>,
    },
    /// V8: a cost (min) or value (max) is negative outside `PcBuilder::general`.
    #[error("negative objective coefficient {value} of column {col}")]
    NegativeObjective {
        /// Column.
        col: usize,
        /// The coefficient.
        value: f64,
    },
    /// V9: a covering row cannot be met even with every column at its upper
    /// bound.
    #[error(
        "covering row {row}{} unreachable: at most {max_lhs} < {rhs}",
        label_suffix(label)
    )]
    CoveringUnreachable {
        /// Covering row.
        row: usize,
        /// Row label.
        label: Option<String>,
        /// Left-hand side with every column at its upper bound.
        max_lhs: f64,
        /// The demand.
        rhs: f64,
    },
    /// V10 (max form): a column with positive value, no upper bound and no
    /// positive packing coefficient makes the objective unbounded.
    #[error("column {col} has positive value, no upper bound and no packing row: unbounded")]
    UnboundedColumn {
        /// Column.
        col: usize,
    },
    /// An integer column has a non-integral or negative upper bound, or a
    /// binary column an upper bound other than 1.
    #[error("column {col}: invalid upper bound {value} for its kind")]
    InvalidUpper {
        /// Column.
        col: usize,
        /// The bound.
        value: f64,
    },
    /// The LP relaxation is infeasible, so the integer program is too.
    #[error("the LP relaxation is infeasible (so is the integer program)")]
    LpInfeasible,
    /// The LP relaxation is unbounded.
    #[error("the LP relaxation is unbounded")]
    LpUnbounded,
    /// The solver could not tell infeasible from unbounded.
    #[error("the LP relaxation is unbounded or infeasible")]
    LpUnboundedOrInfeasible,
    /// The LP stopped at a limit.
    #[error("the LP relaxation stopped at a limit: {status}")]
    LpLimit {
        /// The solver status.
        status: LpStatus,
    },
    /// The exact MIP proved that no integer point is feasible.
    #[error("the integer program is infeasible (proved by the MIP solver)")]
    IntegerInfeasible,
    /// The exact MIP stopped at a limit without any feasible point.
    #[error("the MIP stopped at a limit ({status}) without a feasible point")]
    MipNoIncumbent {
        /// The solver status.
        status: LpStatus,
    },
    /// Repair could not reach a feasible point (and no exact fallback ran
    /// or succeeded).
    #[error("repair failed: {0}")]
    RepairFailed(Box<RepairFailure>),
    /// An option is out of range.
    #[error("invalid option `{option}`: {reason}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why.
        reason: String,
    },
    /// The LP layer failed (solver call failure or solver not built).
    #[error(transparent)]
    Lp(#[from] LpError),
}
