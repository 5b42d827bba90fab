//! Solve limits and the report of a MIP solve, shared by the formulations.

use crate::certificate::{Bound, BoundKind, ExactInfo, ExactStatus};
use crate::lp::{self, ExactMipLimits, LinearProgram, LpStatus};

use super::error::FormulationError;

/// Default wall-clock limit of a MIP solve, seconds.
pub const DEFAULT_TIME_LIMIT_S: f64 = 60.0;

/// Default relative gap at which a MIP counts as solved to optimality.
pub const DEFAULT_MIP_REL_GAP: f64 = 1e-9;

/// Default most columns a formulation may build (estimated before anything
/// is allocated).
pub const DEFAULT_MAX_COLUMNS: usize = 20_000;

/// Default limits of a formulation's MIP solve: wall-clock limit
/// [`DEFAULT_TIME_LIMIT_S`] = 60 s (a solve stopped there is reported as a
/// limit with its dual bound, never as optimal), relative gap
/// [`DEFAULT_MIP_REL_GAP`] = 10⁻⁹, threads `None` (one thread,
/// deterministic) and at most [`DEFAULT_MAX_COLUMNS`] = 20,000 columns
/// (`None`: no cap).
pub const DEFAULT_LIMITS: ExactMipLimits =
    ExactMipLimits::new(DEFAULT_TIME_LIMIT_S, DEFAULT_MIP_REL_GAP, None)
        .with_max_columns(DEFAULT_MAX_COLUMNS);

/// `limits` given in part in JSON, the rest from [`DEFAULT_LIMITS`].
#[cfg(feature = "serde")]
pub(super) fn deserialize_limits<'de, D>(d: D) -> Result<ExactMipLimits, D::Error>
where
    D: serde::Deserializer<'de>,
{
    ExactMipLimits::deserialize_over(DEFAULT_LIMITS, d)
}

/// Refuses a program of `columns` (estimated) columns above `max_columns`.
pub(super) fn check_columns(
    max_columns: Option<usize>,
    formulation: &'static str,
    columns: u128,
) -> Result<(), FormulationError> {
    match lp::over_column_cap(max_columns, columns) {
        Some(limit) => Err(FormulationError::TooLarge {
            formulation,
            what: "columns",
            size: columns,
            limit,
        }),
        None => Ok(()),
    }
}

/// How a MIP solve of a minimisation ended.
///
/// [`info`](Self::info) holds the solve as a certificate's [`ExactInfo`]
/// for **this program's** optimum, as a comparison point (`returned =
/// false`): status [`ExactStatus::Optimal`] only when the solve proved its
/// incumbent optimal, else [`ExactStatus::Limit`] with the solver's status.
/// Its `dual_bound` is a proven lower bound on the program's optimum in
/// every case (`−∞` if the solve bounded nothing); its `incumbent` is the
/// optimum only when [`optimal`](Self::optimal). A solve stopped at a limit
/// must never be reported as exact: its dual bound is what it proves. Each
/// formulation's documentation says what its optimum is an optimum (or a
/// bound) of; attach `info` to a certificate with
/// [`Certificate::with_exact`](crate::certificate::Certificate::with_exact).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct MipReport {
    /// The solve: status, incumbent (objective of the best integer point
    /// found, if any), proven dual bound (equal to the incumbent up to the
    /// gap when optimal), relative gap `(incumbent − dual_bound) /
    /// incumbent` (`+∞` without incumbent) and wall-clock seconds in the
    /// solver.
    pub info: ExactInfo,
    /// How the solver ended, as it reported it.
    pub solver_status: LpStatus,
    /// Columns of the program.
    pub columns: usize,
    /// Rows of the program.
    pub rows: usize,
}

impl MipReport {
    /// Whether the solve proved the incumbent optimal (within
    /// [`ExactMipLimits::mip_rel_gap`]): [`info`](Self::info)'s status is
    /// [`ExactStatus::Optimal`].
    pub fn optimal(&self) -> bool {
        self.info.status == ExactStatus::Optimal
    }

    /// The dual bound as a certificate [`Bound`] ([`BoundKind::MipDual`]).
    pub fn bound(&self) -> Bound {
        Bound::new(self.info.dual_bound, BoundKind::MipDual)
    }
}

/// Solves a minimisation MIP without presolve; the point (empty without
/// incumbent) and its report. Infeasible ends in
/// [`FormulationError::Infeasible`] with `hint`; statuses other than
/// optimal, a limit or infeasible in [`FormulationError::UnexpectedStatus`].
pub(super) fn solve_mip(
    lp: &LinearProgram,
    limits: &ExactMipLimits,
    formulation: &'static str,
    hint: &str,
) -> Result<(MipReport, Vec<f64>), FormulationError> {
    // Presolve off (`proof_solve_options`): the optimum and the dual bound
    // are used as proofs.
    let sol = lp::solve(lp, &limits.proof_solve_options())?;
    let optimal = match sol.status {
        LpStatus::Optimal if sol.has_primal => true,
        ref s if s.is_limit() => false,
        LpStatus::Infeasible => {
            return Err(FormulationError::Infeasible {
                formulation,
                hint: hint.into(),
            });
        }
        other => {
            return Err(FormulationError::UnexpectedStatus {
                formulation,
                status: other,
            });
        }
    };
    let incumbent = if sol.has_primal { sol.objective } else { None };
    let dual_bound = match (sol.mip_dual_bound, optimal) {
        (Some(b), _) => b,
        (None, true) => incumbent.unwrap_or(f64::NEG_INFINITY),
        (None, false) => f64::NEG_INFINITY,
    };
    let rel_gap = match incumbent {
        Some(v) if v > dual_bound && v != 0.0 => (v - dual_bound) / v.abs(),
        Some(_) => 0.0,
        None => f64::INFINITY,
    };
    let report = MipReport {
        info: ExactInfo {
            status: if optimal {
                ExactStatus::Optimal
            } else {
                ExactStatus::Limit {
                    status: sol.status.to_string(),
                }
            },
            incumbent,
            dual_bound,
            rel_gap,
            seconds: sol.seconds,
            returned: false,
        },
        solver_status: sol.status,
        columns: lp.n_cols(),
        rows: lp.n_rows(),
    };
    let primal = if sol.has_primal {
        sol.primal
    } else {
        Vec::new()
    };
    Ok((report, primal))
}
