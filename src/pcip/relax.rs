//! The LP relaxation through the [`lp`](crate::lp) layer, its duals, and the
//! safe relaxation bound ([algorithms guide, section
//! 1.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-lp-bound)), plus the exact MIP.

use super::error::{PcError, RowClass, RowRef};
use super::problem::{PcProblem, RowSense, evaluate};
use super::repair::{RepairOptions, repair};
use super::rounding::snap;
use crate::certificate::{Bound, BoundKind, ExactInfo, ExactStatus, Sense};
use crate::lp::{
    self, ColumnKind, ExactMipLimits, LinearProgram, LpSolution, LpStatus, SolveOptions,
};

/// The LP relaxation of a [`PcProblem`]: the cleaned LP point (clamped to
/// `[0, u]`, integer columns snapped within 1e-9), the normalised duals and
/// the safe bound.
#[derive(Debug, Clone, PartialEq)]
pub struct LpRelaxation {
    /// The LP point, clamped to `[0, u_j]` and snapped to integers within
    /// `INT_TOL` = 10⁻⁹ on integer columns.
    pub x: Vec<f64>,
    /// LP optimum in the user's sense.
    pub objective: f64,
    /// `π_i ≥ 0`: price of one unit of capacity of packing row i (value per
    /// unit in the max form).
    pub packing_prices: Vec<f64>,
    /// `σ_k ≥ 0`: price of one unit of demand of covering row k.
    pub covering_prices: Vec<f64>,
    /// Linking-row multipliers, sign-normalised to ≥ 0 (for `≤` rows the
    /// price of relaxing the row, for `≥` rows of tightening it).
    pub linking_prices: Vec<f64>,
    /// Reduced costs of the canonical minimisation,
    /// `d_j = c_j − (Cᵀσ)_j + (Pᵀπ)_j` (linking rows included).
    pub reduced_costs: Vec<f64>,
    /// The bound the certificate reports: the safe dual bound
    /// `LB_safe = q·σ − p·π − Σ_j u_j ρ_j` (valid whatever the solver's
    /// tolerances), or the
    /// LP objective when the dual certificate is unusable.
    pub safe_bound: Bound,
    /// Simplex iterations, when reported.
    pub simplex_iterations: Option<i64>,
    /// Solver seconds.
    pub seconds: f64,
}

/// Canonical minimisation cost of column j: `c_j` (min) or `−v_j` (max).
pub(crate) fn canonical_costs(p: &PcProblem) -> Vec<f64> {
    let s = match p.sense() {
        Sense::Minimise => 1.0,
        Sense::Maximise => -1.0,
    };
    p.objective().iter().map(|c| s * c).collect()
}

/// Row order of the LP: packing rows, then covering, then linking.
fn row_offsets(p: &PcProblem) -> [usize; 3] {
    let np = p.n_rows(RowClass::Packing);
    let nc = p.n_rows(RowClass::Covering);
    [0, np, np + nc]
}

/// Largest objective coefficient handed to the solver, in magnitude: HiGHS
/// stops with `status Error` on some programs whose costs are far larger
/// (seen from about 1e16, well below its infinity of 1e20).
const MAX_SOLVER_COST: f64 = 1_073_741_824.0;

/// The power of two the costs are divided by before they reach the solver,
/// so that none exceeds [`MAX_SOLVER_COST`] (1 when none does). Dividing by
/// a power of two is exact (short of underflow) and changes no optimal
/// point; the solver's objective, duals and dual bound are multiplied back.
pub(crate) fn cost_scale(p: &PcProblem) -> f64 {
    let top = p.objective().iter().fold(0.0f64, |m, c| m.max(c.abs()));
    if top <= MAX_SOLVER_COST {
        return 1.0;
    }
    let mut scale = 1.0;
    while top / scale > MAX_SOLVER_COST {
        scale *= 2.0;
    }
    scale
}

/// The canonical minimisation as a [`LinearProgram`], with costs divided by
/// [`cost_scale`]; integer columns become [`ColumnKind::Integer`] (relaxed
/// by the solve options when needed).
pub(crate) fn build_lp(p: &PcProblem) -> LinearProgram {
    let mut lp = LinearProgram::new(Sense::Minimise);
    let scale = cost_scale(p);
    for (j, c) in canonical_costs(p).into_iter().enumerate() {
        let c = c / scale;
        let kind = if p.is_integer(j) {
            ColumnKind::Integer
        } else {
            ColumnKind::Continuous
        };
        lp.add_column(c, 0.0, p.upper(j), kind);
    }
    for class in [RowClass::Packing, RowClass::Covering, RowClass::Linking] {
        for i in 0..p.n_rows(class) {
            let r = RowRef { class, row: i };
            let (cols, vals) = p.row(r);
            let entries: Vec<(usize, f64)> =
                cols.iter().copied().zip(vals.iter().copied()).collect();
            let rhs = p.rhs(r);
            let idx = match p.row_sense(r) {
                RowSense::Le => lp.add_row(f64::NEG_INFINITY, rhs, &entries),
                RowSense::Ge => lp.add_row(rhs, f64::INFINITY, &entries),
            };
            if let Some(label) = p.row_label(r) {
                // Names only help messages; an error here cannot happen for a valid index.
                let _ = lp.set_row_name(idx, label);
            }
        }
    }
    lp
}

fn lp_error(status: &LpStatus) -> PcError {
    match status {
        LpStatus::Infeasible => PcError::LpInfeasible,
        LpStatus::Unbounded => PcError::LpUnbounded,
        LpStatus::UnboundedOrInfeasible => PcError::LpUnboundedOrInfeasible,
        LpStatus::Unknown(_) => PcError::LpFailed {
            status: status.clone(),
        },
        other => PcError::LpLimit {
            status: other.clone(),
        },
    }
}

/// Solves the LP relaxation and computes the safe bound ([algorithms guide,
/// section 1.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-lp-bound)).
///
/// # Errors
///
/// [`PcError::LpInfeasible`], [`PcError::LpUnbounded`],
/// [`PcError::LpUnboundedOrInfeasible`], [`PcError::LpLimit`] and
/// [`PcError::LpFailed`] for the solver outcomes (kept distinct),
/// [`PcError::Lp`] for invalid programs and solver failures —
/// including [`LpError::SolverUnavailable`](crate::lp::LpError::SolverUnavailable)
/// without the `highs` feature.
pub fn solve_lp(p: &PcProblem, opts: &SolveOptions) -> Result<LpRelaxation, PcError> {
    let lp = build_lp(p);
    let sol = lp::solve(&lp, &opts.clone().with_relax_integrality(true))?;
    if sol.status != LpStatus::Optimal {
        return Err(lp_error(&sol.status));
    }
    relaxation_from(p, &sol)
}

fn relaxation_from(p: &PcProblem, sol: &LpSolution) -> Result<LpRelaxation, PcError> {
    let Some(primal) = sol.primal_point() else {
        return Err(PcError::LpLimit {
            status: sol.status.clone(),
        });
    };
    let x: Vec<f64> = primal
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            let v = v.max(0.0).min(p.upper(j)) + 0.0;
            if p.is_integer(j) { snap(v) + 0.0 } else { v }
        })
        .collect();
    let off = row_offsets(p);
    // The solver saw the costs divided by `scale`: so are its duals.
    let scale = cost_scale(p);
    // Sign-normalised multipliers s_r ≥ 0 (canonical minimisation: HiGHS
    // duals are ≥ 0 on binding ≥ rows and ≤ 0 on binding ≤ rows).
    let dual = |r: RowRef| -> f64 {
        let idx = off[class_index(r.class)] + r.row;
        let y = if sol.has_dual {
            sol.row_duals.get(idx).copied().unwrap_or(0.0) * scale
        } else {
            0.0
        };
        match p.row_sense(r) {
            RowSense::Ge => y.max(0.0),
            RowSense::Le => (-y).max(0.0),
        }
    };
    let prices = |class: RowClass| -> Vec<f64> {
        (0..p.n_rows(class))
            .map(|i| dual(RowRef { class, row: i }))
            .collect()
    };
    let packing_prices = prices(RowClass::Packing);
    let covering_prices = prices(RowClass::Covering);
    let linking_prices = prices(RowClass::Linking);
    let sign = |r: RowRef| match p.row_sense(r) {
        RowSense::Ge => 1.0,
        RowSense::Le => -1.0,
    };
    let price_of = |r: RowRef| match r.class {
        RowClass::Packing => packing_prices[r.row],
        RowClass::Covering => covering_prices[r.row],
        RowClass::Linking => linking_prices[r.row],
    };
    // (Aᵀ s)_j with signs, and the dual objective's row part.
    let n = p.n_vars();
    let mut ats = vec![0.0; n];
    let mut dual_obj = 0.0;
    for class in [RowClass::Packing, RowClass::Covering, RowClass::Linking] {
        for i in 0..p.n_rows(class) {
            let r = RowRef { class, row: i };
            let s = price_of(r);
            if s == 0.0 {
                continue;
            }
            let g = sign(r);
            dual_obj += g * p.rhs(r) * s;
            let (cols, vals) = p.row(r);
            for (&j, &a) in cols.iter().zip(vals) {
                ats[j] += g * a * s;
            }
        }
    }
    let c = canonical_costs(p);
    let mut usable = true;
    let mut reduced_costs = Vec::with_capacity(n);
    for j in 0..n {
        let rho = (ats[j] - c[j]).max(0.0);
        reduced_costs.push(c[j] - ats[j]);
        if rho > 0.0 {
            if p.upper(j).is_infinite() {
                usable = false;
            } else {
                dual_obj -= p.upper(j) * rho;
            }
        }
    }
    let lp_obj_canonical = sol.objective.unwrap_or(f64::NAN) * scale;
    let to_user = |v: f64| match p.sense() {
        Sense::Minimise => v,
        Sense::Maximise => -v,
    };
    let safe_bound = if usable && sol.has_dual && dual_obj.is_finite() {
        Bound::new(to_user(dual_obj), BoundKind::LpDualSafe)
    } else {
        Bound::new(to_user(lp_obj_canonical), BoundKind::LpPrimal)
    };
    Ok(LpRelaxation {
        x,
        objective: to_user(lp_obj_canonical),
        packing_prices,
        covering_prices,
        linking_prices,
        reduced_costs,
        safe_bound,
        simplex_iterations: sol.simplex_iterations,
        seconds: sol.seconds,
    })
}

fn class_index(c: RowClass) -> usize {
    match c {
        RowClass::Packing => 0,
        RowClass::Covering => 1,
        RowClass::Linking => 2,
    }
}

/// Options of the exact MIP (the same model with integer columns, solved by
/// the [`lp`](crate::lp) layer's MIP solver): its limits and the solver's
/// seed.
///
/// ```
/// use dmlsched::pcip::MipOptions;
/// let mut opts = MipOptions::default();
/// assert_eq!((opts.limits.time_limit_s, opts.limits.threads, opts.seed), (30.0, Some(1), 0));
/// opts.limits.time_limit_s = 5.0;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MipOptions {
    /// Limits of the MIP solve: time limit in seconds (default 30; it
    /// bounds the MIP alone, while
    /// [`RoundingSolver::time_limit_s`](super::RoundingSolver::time_limit_s)
    /// bounds a whole pipeline run, LP relaxation included), relative gap
    /// at which HiGHS stops (default 1e-6) and threads (default
    /// `Some(1)`). Not validated here, except that a column cap is refused
    /// (`max_columns` must be `None`).
    pub limits: ExactMipLimits,
    /// HiGHS's random seed of the MIP solve (default 0): not the rounding
    /// seed ([`RoundingSolver::seed`](super::RoundingSolver::seed)) nor the
    /// LP relaxation's ([`RoundingSolver::lp`](super::RoundingSolver::lp)).
    pub seed: u32,
}

impl Default for MipOptions {
    fn default() -> Self {
        MipOptions {
            limits: ExactMipLimits::new(30.0, 1e-6, Some(1)),
            seed: 0,
        }
    }
}

/// Outcome of [`solve_exact`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExactResult {
    /// The solve as a certificate's [`ExactInfo`]: status (optimal, or
    /// stopped at a limit), the incumbent's objective in the user's sense,
    /// the solver's proven bound on OPT (lower for min, upper for max), the
    /// relative gap between them and the solver's seconds. `returned` is
    /// `false`: whether the point is the one returned is the caller's to say
    /// ([`RoundingSolver`](super::RoundingSolver)'s certificate says so).
    pub info: ExactInfo,
    /// The incumbent point (integer columns exactly integral), if any.
    pub x: Option<Vec<f64>>,
    /// The solver's own status (optimal, or which limit stopped it); or
    /// [`LpStatus::Unknown`] with the reason when its point was dropped
    /// because it broke a row once its integer columns were rounded.
    pub solver_status: LpStatus,
}

/// Solves the integer program exactly with the MIP solver (an `Infeasible`
/// status is a proof that no feasible integer point exists; at a limit the
/// incumbent, if any, and the MIP dual bound are reported).
///
/// The incumbent's integer columns are rounded to the nearest integer
/// (HiGHS returns them within its integrality tolerance) and the point is
/// re-checked with [`evaluate`]: when rounding broke a row (a coefficient
/// of `1e9` turns a tolerated `5e-9` into a violation of 5) the point is
/// repaired and the status is no longer `Optimal`, or, if repair fails, no
/// incumbent is returned. The solve runs
/// without presolve: its optimum and dual bound are used as proofs, and
/// HiGHS's MIP presolve has been seen to report a sub-optimal point as
/// optimal.
///
/// # Errors
///
/// [`PcError::IntegerInfeasible`] when the solver proves infeasibility,
/// [`PcError::LpUnbounded`]/[`PcError::LpUnboundedOrInfeasible`] for
/// unbounded outcomes, [`PcError::Lp`] for solver failures or a missing
/// solver, [`PcError::InvalidOption`] (`"max_columns"`) for a column cap.
/// A limit is not an error: the status says so, with or without an
/// incumbent.
pub fn solve_exact(p: &PcProblem, opts: &MipOptions) -> Result<ExactResult, PcError> {
    if let Some(n) = opts.limits.max_columns {
        return Err(PcError::InvalidOption {
            option: "max_columns",
            reason: format!("{n}: the exact MIP takes no column cap (use None)"),
        });
    }
    let lp = build_lp(p);
    let so = opts.limits.proof_solve_options().with_seed(opts.seed);
    let sol = lp::solve(&lp, &so)?;
    let to_user = |v: f64| match p.sense() {
        Sense::Minimise => v,
        Sense::Maximise => -v,
    };
    match sol.status {
        LpStatus::Infeasible => return Err(PcError::IntegerInfeasible),
        LpStatus::Unbounded => return Err(PcError::LpUnbounded),
        LpStatus::UnboundedOrInfeasible => return Err(PcError::LpUnboundedOrInfeasible),
        _ => {}
    }
    let x = sol.primal_point().map(|v| {
        v.iter()
            .enumerate()
            .map(|(j, &x)| {
                // `+ 0.0` turns a solver's -0.0 into 0.0.
                let x = x.max(0.0).min(p.upper(j)) + 0.0;
                if p.is_integer(j) { x.round() } else { x }
            })
            .collect::<Vec<f64>>()
    });
    let mut solver_status = sol.status.clone();
    let mut status = if sol.status == LpStatus::Optimal {
        ExactStatus::Optimal
    } else {
        ExactStatus::Limit {
            status: sol.status.to_string(),
        }
    };
    let x = match x {
        Some(x) => match checked_incumbent(p, x, opts.limits.time_limit_s) {
            Incumbent::Feasible(x) => Some(x),
            Incumbent::Repaired(x) => {
                status = ExactStatus::Limit {
                    status: format!("{REPAIRED} ({})", sol.status),
                };
                Some(x)
            }
            Incumbent::Unusable => {
                status = ExactStatus::Limit {
                    status: UNUSABLE.into(),
                };
                solver_status = LpStatus::Unknown(UNUSABLE.into());
                None
            }
        },
        None => None,
    };
    let incumbent = x.as_ref().map(|x| p.objective_value(x));
    let unknown_bound = match p.sense() {
        Sense::Minimise => f64::NEG_INFINITY,
        Sense::Maximise => f64::INFINITY,
    };
    let scale = cost_scale(p);
    let dual_bound = match (&status, sol.mip_dual_bound.map(|b| b * scale), incumbent) {
        (_, Some(b), _) => to_user(b),
        (ExactStatus::Optimal, None, Some(v)) => v,
        _ => unknown_bound,
    };
    Ok(ExactResult {
        info: ExactInfo {
            status,
            incumbent,
            dual_bound,
            rel_gap: sol.mip_gap.unwrap_or(if incumbent.is_some() {
                0.0
            } else {
                f64::INFINITY
            }),
            seconds: sol.seconds,
            returned: false,
        },
        x,
        solver_status,
    })
}

/// Status text of an incumbent that needed repair after rounding.
const REPAIRED: &str = "the solver's point broke a row once its integer columns were rounded; repaired, so not proven optimal";
/// Status text of an incumbent that could not be used.
const UNUSABLE: &str =
    "the solver's point broke a row once its integer columns were rounded, and repair failed";

/// What became of the solver's point after rounding its integer columns.
enum Incumbent {
    /// Feasible as it is.
    Feasible(Vec<f64>),
    /// Infeasible (the solver accepts integer values within a tolerance,
    /// which a large coefficient turns into a real violation), then
    /// repaired.
    Repaired(Vec<f64>),
    /// Infeasible, and repair failed.
    Unusable,
}

/// Checks the rounded incumbent with the independent checker, and repairs
/// it when a row broke: a point that fails the check is never returned.
/// Repair moves integer columns only, so on a program with continuous
/// columns their values are first recomputed for the rounded integer part
/// ([`complete_continuous`]): the solver's continuous values fit its own
/// integer values, which rounding moved by up to its tolerance.
fn checked_incumbent(p: &PcProblem, mut x: Vec<f64>, time_limit_s: f64) -> Incumbent {
    let opts = RepairOptions::default();
    if evaluate(p, &x, opts.feas_tol).is_feasible() {
        return Incumbent::Feasible(x);
    }
    let mut completed = x.clone();
    if complete_continuous(p, &mut completed, time_limit_s) {
        if evaluate(p, &completed, opts.feas_tol).is_feasible() {
            return Incumbent::Repaired(completed);
        }
        if repair(p, &mut completed, &opts).is_ok() {
            return Incumbent::Repaired(completed);
        }
    }
    match repair(p, &mut x, &opts) {
        Ok(_) => Incumbent::Repaired(x),
        Err(_) => Incumbent::Unusable,
    }
}

/// Recomputes the continuous columns of `x` for its integer columns: the LP
/// with every integer column fixed at its value in `x`, solved within
/// `time_limit_s`. `false` (and `x` unchanged) when the program has no
/// continuous column or that LP has no optimal point.
fn complete_continuous(p: &PcProblem, x: &mut [f64], time_limit_s: f64) -> bool {
    if !p.has_continuous() {
        return false;
    }
    let mut model = build_lp(p);
    for j in (0..p.n_vars()).filter(|&j| p.is_integer(j)) {
        if model.set_col_bounds(j, x[j], x[j]).is_err() {
            return false;
        }
    }
    let opts = SolveOptions::default()
        .with_relax_integrality(true)
        .with_time_limit(time_limit_s);
    let Ok(sol) = lp::solve(&model, &opts) else {
        return false;
    };
    let Some(point) = sol
        .primal_point()
        .filter(|_| sol.status == LpStatus::Optimal)
    else {
        return false;
    };
    for j in (0..p.n_vars()).filter(|&j| !p.is_integer(j)) {
        x[j] = point[j].max(0.0).min(p.upper(j)) + 0.0;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solver_outcomes_stay_distinct() {
        assert_eq!(lp_error(&LpStatus::Infeasible), PcError::LpInfeasible);
        assert_eq!(
            lp_error(&LpStatus::TimeLimit),
            PcError::LpLimit {
                status: LpStatus::TimeLimit
            }
        );
        // A status without a conclusion is not called a limit.
        let unknown = LpStatus::Unknown("HiGHS stopped without a conclusion".into());
        let e = lp_error(&unknown);
        assert_eq!(
            e,
            PcError::LpFailed {
                status: unknown.clone()
            }
        );
        assert_eq!(
            e.to_string(),
            "the LP relaxation ended without a conclusion: unknown solver status (HiGHS stopped without a conclusion)"
        );
    }
}
