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
pub const DEFAULT_MAX_COLUMNS: u64 = 20_000;

/// Limits of a MIP solve.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct MipLimits {
    /// Wall-clock limit, seconds (default [`DEFAULT_TIME_LIMIT_S`] = 60);
    /// positive and finite. A solve stopped here is reported as a limit
    /// with its dual bound, never as optimal.
    pub time_limit_s: f64,
    /// Relative gap at which the solve counts as optimal (default
    /// [`DEFAULT_MIP_REL_GAP`] = 10⁻⁹); in `[0, 1)`.
    pub mip_rel_gap: f64,
    /// Most columns (default [`DEFAULT_MAX_COLUMNS`] = 20,000); at least 1.
    pub max_columns: u64,
    /// Solver threads; `None` keeps the LP layer's default (one thread,
    /// deterministic).
    pub threads: Option<u32>,
}

impl Default for MipLimits {
    fn default() -> Self {
        MipLimits {
            time_limit_s: DEFAULT_TIME_LIMIT_S,
            mip_rel_gap: DEFAULT_MIP_REL_GAP,
            max_columns: DEFAULT_MAX_COLUMNS,
            threads: None,
        }
    }
}

impl MipLimits {
    /// The solver limits (time, gap, threads) as the lp layer's
    /// [`ExactMipLimits`], which checks them and gives the solve's options.
    pub fn exact_limits(&self) -> ExactMipLimits {
        ExactMipLimits {
            time_limit_s: self.time_limit_s,
            mip_rel_gap: self.mip_rel_gap,
            threads: self.threads,
        }
    }

    /// Checks the limits.
    ///
    /// # Errors
    ///
    /// [`FormulationError::InvalidOption`] for a time limit that is not
    /// positive and finite, a gap outside `[0, 1)`, `max_columns = 0` or
    /// `threads == Some(0)`.
    pub fn validate(&self) -> Result<(), FormulationError> {
        Ok(self
            .exact_limits()
            .validate_with_max_columns(self.max_columns)?)
    }

    /// Refuses a program of `columns` (estimated) columns above
    /// [`max_columns`](Self::max_columns).
    pub(super) fn check_columns(
        &self,
        formulation: &'static str,
        columns: u128,
    ) -> Result<(), FormulationError> {
        if columns > u128::from(self.max_columns) {
            return Err(FormulationError::TooLarge {
                formulation,
                what: "columns",
                size: columns,
                limit: self.max_columns,
            });
        }
        Ok(())
    }
}

/// How a MIP solve of a minimisation ended.
///
/// `dual_bound` is a proven lower bound on the program's optimum in every
/// case; `incumbent` is its optimum only when `optimal` is true. A solve
/// stopped at a limit has `optimal == false` and must never be reported as
/// exact: its dual bound is what it proves.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MipReport {
    /// How the solver ended.
    pub status: LpStatus,
    /// Whether the solve proved the incumbent optimal (within
    /// [`MipLimits::mip_rel_gap`]).
    pub optimal: bool,
    /// Objective of the best integer point found, if any.
    pub incumbent: Option<f64>,
    /// A proven lower bound on the program's optimum (`−∞` if the solve
    /// bounded nothing); equal to the incumbent up to the gap when optimal.
    pub dual_bound: f64,
    /// `(incumbent − dual_bound) / incumbent`, `+∞` without incumbent.
    pub rel_gap: f64,
    /// Wall-clock seconds in the solver.
    pub seconds: f64,
    /// Columns of the program.
    pub columns: usize,
    /// Rows of the program.
    pub rows: usize,
}

impl MipReport {
    /// The dual bound as a certificate [`Bound`] ([`BoundKind::MipDual`]).
    pub fn bound(&self) -> Bound {
        Bound::new(self.dual_bound, BoundKind::MipDual)
    }

    /// The solve as a certificate's [`ExactInfo`] for **this program's**
    /// optimum, as a comparison point (`returned = false`): status
    /// [`ExactStatus::Optimal`] only when [`optimal`](Self::optimal), else
    /// [`ExactStatus::Limit`] with the dual bound. Each formulation's
    /// documentation says what its optimum is an optimum (or a bound) of.
    pub fn exact_info(&self) -> ExactInfo {
        ExactInfo {
            status: if self.optimal {
                ExactStatus::Optimal
            } else {
                ExactStatus::Limit {
                    status: self.status.to_string(),
                }
            },
            incumbent: self.incumbent,
            dual_bound: self.dual_bound,
            rel_gap: self.rel_gap,
            seconds: self.seconds,
            returned: false,
        }
    }
}

/// Solves a minimisation MIP without presolve; the point (empty without
/// incumbent) and its report. Infeasible ends in
/// [`FormulationError::Infeasible`] with `hint`; statuses other than
/// optimal, a limit or infeasible in [`FormulationError::UnexpectedStatus`].
pub(super) fn solve_mip(
    lp: &LinearProgram,
    limits: &MipLimits,
    formulation: &'static str,
    hint: &str,
) -> Result<(MipReport, Vec<f64>), FormulationError> {
    // Presolve off (`proof_solve_options`): the optimum and the dual bound
    // are used as proofs.
    let sol = lp::solve(lp, &limits.exact_limits().proof_solve_options())?;
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
        status: sol.status,
        optimal,
        incumbent,
        dual_bound,
        rel_gap,
        seconds: sol.seconds,
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
