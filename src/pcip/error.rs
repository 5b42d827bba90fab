//! Errors of the packing–covering engine.

use std::fmt;

use crate::lp::{LpError, LpStatus};
use crate::model::units::Num;

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
    /// An upper bound of a column.
    Upper,
}

/// One violated row, as reported by repair failures and [`evaluate`](super::evaluate).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
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

/// Why repair could not make a point feasible (no grow move keeps every
/// packing and linking row satisfied, or a violated row cannot be relieved).
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
                        r.row.class,
                        r.row.row,
                        Num(r.deficit)
                    ),
                    None => format!(
                        "{} row {} short by {}",
                        r.row.class,
                        r.row.row,
                        Num(r.deficit)
                    ),
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

/// A [`Field`] in words.
fn field_name(what: Field) -> &'static str {
    match what {
        Field::Objective => "objective coefficient",
        Field::Coefficient => "coefficient",
        Field::Rhs => "right-hand side",
        Field::Upper => "upper bound",
    }
}

/// `" of covering row 2 (label), column 3"`, `" of column 3"`, … or `""`.
fn place(row: Option<RowRef>, label: &Option<String>, col: Option<usize>) -> String {
    match (row, col) {
        (Some(r), Some(j)) => format!(
            " of {} row {}{}, column {j}",
            r.class,
            r.row,
            label_suffix(label)
        ),
        (Some(r), None) => format!(" of {} row {}{}", r.class, r.row, label_suffix(label)),
        (None, Some(j)) => format!(" of column {j}"),
        (None, None) => String::new(),
    }
}

/// The message of [`PcError::OutOfRange`].
fn out_of_range_message(
    what: Field,
    row: Option<RowRef>,
    label: &Option<String>,
    col: Option<usize>,
    value: f64,
    limit: f64,
) -> String {
    let place = place(row, label, col);
    let name = field_name(what);
    let why = if what == Field::Upper && limit == crate::lp::MAX_INTEGER_BOUND {
        format!(
            "the exact MIP (run first on request, or as the fallback when no rounding repairs) takes finite bounds of integer columns up to 2^30 = {} (HiGHS can loop forever on larger integer domains); use a null (infinite) bound",
            Num(limit)
        )
    } else if what == Field::Rhs && limit == super::problem::MAX_EXACT_INTEGER {
        format!(
            "the row has integer coefficients over integer columns and is checked exactly, which f64 allows only up to 2^53 = {}",
            Num(limit)
        )
    } else if limit < 1.0 {
        format!(
            "non-zero magnitudes must exceed {} (the LP solver drops smaller coefficients as zero)",
            Num(limit)
        )
    } else if what == Field::Coefficient {
        format!(
            "magnitudes must be below {} (the LP solver refuses larger coefficients)",
            Num(limit)
        )
    } else {
        format!(
            "magnitudes must be below {} (the LP solver reads larger values as infinite)",
            Num(limit)
        )
    };
    format!("{name} {}{place} is out of range: {why}", Num(value))
}

fn label_suffix(label: &Option<String>) -> String {
    label
        .as_ref()
        .map_or_else(String::new, |l| format!(" ({l})"))
}

/// What is wrong with a choice group ([`PcError::InvalidGroup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GroupIssue {
    /// The group has no member.
    Empty,
    /// A member or dependent column index is not a column of the problem.
    ColumnOutOfRange {
        /// The index.
        col: usize,
    },
    /// A member is not a binary column (integer with upper bound 1).
    MemberNotBinary {
        /// The member column.
        col: usize,
    },
    /// A column appears twice among all members and dependents of all
    /// groups.
    ColumnReused {
        /// The column.
        col: usize,
    },
    /// No packing row implies `Σ members ≤ 1`: one with a coefficient of at
    /// least its capacity on every member.
    NotPacked,
}

impl fmt::Display for GroupIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupIssue::Empty => f.write_str("it has no member"),
            GroupIssue::ColumnOutOfRange { col } => write!(f, "column {col} is out of range"),
            GroupIssue::MemberNotBinary { col } => write!(f, "member column {col} is not binary"),
            GroupIssue::ColumnReused { col } => {
                write!(f, "column {col} is already a member or dependent")
            }
            GroupIssue::NotPacked => f.write_str(
                "no packing row implies that at most one member is 1 (a row with a coefficient of at least its capacity on every member)",
            ),
        }
    }
}

/// Errors of [`crate::pcip`]: sizes beyond the limits, invalid problems
/// (V1–V10 of [algorithms guide, section 1.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-program), checked in
/// that order, then the magnitude rule V11), LP outcomes that stop the pipeline, integer infeasibility, repair
/// failures, time limits and solver problems.
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
    #[error("non-finite {}{}", field_name(*.what), place(*.row, &None, *.col))]
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
        "negative coefficient {} in {matrix} row {row}{}, column {col}",
        Num(*.value),
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
        "negative capacity {} of packing row {row}{}",
        Num(*.value),
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
        "non-positive demand {} of covering row {row}{}",
        Num(*.value),
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
    #[error("negative objective coefficient {} of column {col}", Num(*.value))]
    NegativeObjective {
        /// Column.
        col: usize,
        /// The coefficient.
        value: f64,
    },
    /// V9: a covering row cannot be met even with every column at its upper
    /// bound.
    #[error(
        "covering row {row}{} unreachable: at most {} < {}",
        label_suffix(label),
        Num(*.max_lhs),
        Num(*.rhs)
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
    /// binary column an upper bound other than 0 or 1.
    #[error("upper[{col}]: invalid upper bound {} for the column's kind (integer: a whole number from 0 to 2^32 − 1 or null; binary: 0, 1 or null; continuous: ≥ 0 or null)", Num(*.value))]
    InvalidUpper {
        /// Column.
        col: usize,
        /// The bound.
        value: f64,
    },
    /// A size exceeds what the engine accepts (checked before anything of
    /// that size is allocated).
    #[error("{what} is {size}, above the limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// The size given.
        size: usize,
        /// The largest accepted size.
        limit: usize,
    },
    /// V11: a finite number the engine cannot solve or check faithfully: an
    /// objective coefficient, upper bound or right-hand side at or beyond
    /// the LP solver's infinity (`1e20`), a coefficient outside the solver's
    /// range (`1e-9 < |a| < 1e15`), or the right-hand side of a row of
    /// integer coefficients over integer columns beyond `2^53` (where
    /// integers stop being exact in `f64`); or, when the exact MIP runs
    /// first, a finite upper bound of an integer column beyond
    /// [`MAX_INTEGER_BOUND`](crate::lp::MAX_INTEGER_BOUND) (`2^30`).
    #[error("{}", out_of_range_message(*.what, *.row, .label, *.col, *.value, *.limit))]
    OutOfRange {
        /// Which input.
        what: Field,
        /// The row, for a coefficient or a right-hand side.
        row: Option<RowRef>,
        /// Its label, if the problem has labels.
        label: Option<String>,
        /// The column, for an objective coefficient, a bound or a
        /// coefficient.
        col: Option<usize>,
        /// The value.
        value: f64,
        /// The limit it crosses (an upper limit on the magnitude, or for a
        /// tiny coefficient the lower one).
        limit: f64,
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
    /// The LP solver ended without a conclusion (neither an answer nor a
    /// limit), for instance after numerical trouble; the status says what
    /// it reported.
    #[error("the LP relaxation ended without a conclusion: {status}")]
    LpFailed {
        /// The solver status.
        status: LpStatus,
    },
    /// The whole solve reached its time limit
    /// ([`RoundingSolver::time_limit_s`](super::RoundingSolver::time_limit_s))
    /// before any feasible point was found.
    #[error("time limit of {} s reached at the {stage} stage without a feasible point", Num(*.limit_s))]
    TimeLimit {
        /// The stage that was running or about to run.
        stage: &'static str,
        /// The limit, in seconds.
        limit_s: f64,
    },
    /// The exact MIP proved that no integer point is feasible.
    #[error("the integer program is infeasible (proved by the MIP solver)")]
    IntegerInfeasible,
    /// The exact MIP ended without a usable feasible point: it stopped at a
    /// limit without one, or its point broke a row once its integer columns
    /// were rounded and repair could not fix it.
    #[error("the MIP ended without a usable feasible point ({status})")]
    MipNoIncumbent {
        /// The solver status.
        status: LpStatus,
    },
    /// Repair could not reach a feasible point (and no exact fallback ran
    /// or succeeded).
    #[error("repair failed: {0}")]
    RepairFailed(Box<RepairFailure>),
    /// A choice group of a [`Structure`](super::Structure) is invalid for
    /// its problem.
    #[error("choice group {group} is invalid: {issue}")]
    InvalidGroup {
        /// The group, in declaration order.
        group: usize,
        /// What is wrong with it.
        issue: GroupIssue,
    },
    /// A repair move supplied by a [`MoveSource`](super::MoveSource) is
    /// malformed (an unknown column, a column listed twice, a non-finite
    /// change or objective, or a fractional change of an integer column).
    #[error("invalid repair move {index} in the {phase} phase: {reason}")]
    InvalidMove {
        /// The phase that asked for it (`"shrink"`, `"grow"` or `"prune"`).
        phase: &'static str,
        /// Its position in the list the source returned.
        index: usize,
        /// Why it was refused.
        reason: String,
    },
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

impl PcError {
    /// Whether the error is about the problem or options given — an
    /// invalid or too large problem, a bad option, group or move, a
    /// problem that has no answer (its LP relaxation or the integer program
    /// is infeasible, or the LP is unbounded), or a time limit (an option)
    /// reached without a feasible point — rather than a failure to solve a
    /// valid problem (a failed repair, a solver error).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            PcError::DimensionMismatch { .. }
                | PcError::NonFinite { .. }
                | PcError::DuplicateEntry { .. }
                | PcError::NegativeCoefficient { .. }
                | PcError::NegativeCapacity { .. }
                | PcError::NonPositiveDemand { .. }
                | PcError::EmptyRow { .. }
                | PcError::NegativeObjective { .. }
                | PcError::CoveringUnreachable { .. }
                | PcError::UnboundedColumn { .. }
                | PcError::InvalidUpper { .. }
                | PcError::TooLarge { .. }
                | PcError::OutOfRange { .. }
                | PcError::InvalidGroup { .. }
                | PcError::InvalidMove { .. }
                | PcError::InvalidOption { .. }
                | PcError::LpInfeasible
                | PcError::LpUnbounded
                | PcError::LpUnboundedOrInfeasible
                | PcError::IntegerInfeasible
                | PcError::TimeLimit { .. }
                | PcError::LpLimit {
                    status: LpStatus::TimeLimit
                }
                | PcError::MipNoIncumbent {
                    status: LpStatus::TimeLimit
                }
        )
    }
}
