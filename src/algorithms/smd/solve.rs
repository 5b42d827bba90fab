//! Solving one epoch program: the LP relaxation and its safe bound, the
//! rounding of the fractional groups, the improvement pass, the greedy
//! without LP, and the exact MIP for comparison.

use std::time::Instant;

use crate::certificate::{ExactInfo, ExactStatus};
use crate::lp::{
    self, ColumnKind, LinearProgram, LpSolution, MIN_COEFFICIENT, Sense, SolveOptions,
};

use super::problem::{EpochProblem, loosened};
use super::{ExactMode, SmdError, SmdParams};

/// One choice per group: `Some(k)` runs option `k`, `None` waits.
pub(crate) type Plan = Vec<Option<usize>>;

/// A value of an LP variable counts as 0 below this and as 1 above
/// `1 − FRACTION_TOL`.
pub(crate) const FRACTION_TOL: f64 = 1e-7;

/// The LP relaxation of an epoch program, as solved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LpRelaxation {
    /// The LP optimum (forced waits included), as the solver reports it.
    pub(crate) value: f64,
    /// `LB(π) = Σ_i min_k (c_i(k) + π·a_i(k)) − π·C` at the solver's
    /// capacity prices: a lower bound on the integer optimum whatever the
    /// solver's accuracy.
    pub(crate) safe_bound: f64,
    /// The capacity prices `π ≥ 0` (one per row; 0 for rows not in the LP).
    pub(crate) prices: Vec<f64>,
    /// The groups with a value strictly between 0 and 1 (by
    /// [`FRACTION_TOL`]).
    pub(crate) fractional: Vec<usize>,
    /// Capacity rows at their bound in the LP point.
    pub(crate) tight_rows: usize,
    /// Columns and rows of the LP.
    pub(crate) columns: usize,
    /// Rows of the LP (capacity rows that some option uses, plus one per
    /// group).
    pub(crate) rows: usize,
    /// Solver seconds.
    pub(crate) seconds: f64,
    /// Per group, the LP value of each option, waiting last.
    pub(crate) x: Vec<Vec<f64>>,
}

/// The result of solving one epoch program.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McmdkSolution {
    /// The plan (groups forced to wait are `None`).
    pub(crate) plan: Plan,
    /// `J`: its cost.
    pub(crate) objective: f64,
    /// The LP relaxation (`None` under the greedy).
    pub(crate) lp: Option<LpRelaxation>,
    /// `LP + Σ_{i∈F} (ω_i − c_i^min)`, the right-hand side of the additive
    /// guarantee (`None` under the greedy).
    pub(crate) guarantee_value: Option<f64>,
    /// `Σ_i c_i^min` (forced waits at `ω`): a lower bound that ignores
    /// capacity.
    pub(crate) trivial_bound: f64,
    /// The exact MIP, when run.
    pub(crate) exact: Option<ExactInfo>,
}

/// The LP model over the groups that are not forced to wait, with the
/// column of each `(group, option)` (waiting last) and the capacity rows'
/// indices.
///
/// The model is scaled by powers of two (exact in floating point) so that
/// the solver sees numbers in its range whatever the units: a capacity row
/// whose capacity is outside [`UNSCALED_CAPACITY`] is divided by about its
/// capacity (bound near 1, coefficients at most about 1), a coefficient of
/// [`MIN_COEFFICIENT`] or less is left out (which only relaxes the LP: the
/// rounding checks the true usage, and the safe bound is computed from the
/// true program), and the costs are divided by a factor that brings the
/// largest to at most [`MAX_LP_COST`]. Programs within these ranges are
/// passed as they are. Row `r`'s solver dual `y_r`
/// is the price `π_r = y_r·row_scale[r]/cost_scale`, and the solver's
/// objective divided by `cost_scale` is the program's.
struct Model {
    lp: LinearProgram,
    cols: Vec<Vec<usize>>,
    cap_rows: Vec<Option<usize>>,
    row_scale: Vec<f64>,
    cost_scale: f64,
}

/// Largest cost magnitude passed to the solver: larger costs are scaled
/// down by a power of two (the solver reads costs from `10²⁰` as infinite
/// and is unreliable on badly scaled programs well before).
const MAX_LP_COST: f64 = 1e9;

/// Capacity rows whose (loosened) capacity lies in this range are passed
/// unscaled; others are scaled by [`pow2_inverse`].
const UNSCALED_CAPACITY: std::ops::RangeInclusive<f64> = 1e-3..=1e12;

/// The factor of a capacity row of capacity `c`.
fn row_scale(c: f64) -> f64 {
    if UNSCALED_CAPACITY.contains(&c) {
        1.0
    } else {
        pow2_inverse(c)
    }
}

/// `2^k` for the integer `k` nearest to `−log₂ x` (clamped so that the
/// result is a normal number): `x·pow2_inverse(x)` is in `[0.7, 1.5]`.
fn pow2_inverse(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let k = (-x.log2()).round().clamp(-1000.0, 1000.0);
    2f64.powi(k as i32)
}

fn model(p: &EpochProblem, free: &[usize], kind: ColumnKind) -> Model {
    let mut lp = LinearProgram::new(Sense::Minimise);
    let mut entries: Vec<Vec<(usize, f64)>> = vec![Vec::new(); p.rows()];
    let mut cols = vec![Vec::new(); p.groups().len()];
    let row_scale: Vec<f64> = p
        .capacity()
        .iter()
        .map(|&c| row_scale(loosened(c)))
        .collect();
    let max_cost = free
        .iter()
        .map(|&i| &p.groups()[i])
        .flat_map(|g| g.options.iter().map(|o| o.cost).chain([g.wait_cost]))
        .fold(0.0, f64::max);
    let cost_scale = if max_cost > MAX_LP_COST {
        // A power of two at most MAX_LP_COST / max_cost.
        2f64.powi((MAX_LP_COST / max_cost).log2().floor().max(-1000.0) as i32)
    } else {
        1.0
    };
    // The group rows imply x ≤ 1; the MIP states it for its integer
    // columns, the LP leaves it out (same polytope, fewer bounds).
    let upper = match kind {
        ColumnKind::Integer => 1.0,
        ColumnKind::Continuous => f64::INFINITY,
    };
    for &i in free {
        let g = &p.groups()[i];
        for o in &g.options {
            let c = lp.add_column(o.cost * cost_scale, 0.0, upper, kind);
            for (r, &a) in o.usage.iter().enumerate() {
                let a = a * row_scale[r];
                if a > MIN_COEFFICIENT {
                    entries[r].push((c, a));
                }
            }
            cols[i].push(c);
        }
        cols[i].push(lp.add_column(g.wait_cost * cost_scale, 0.0, upper, kind));
    }
    let cap_rows = entries
        .iter()
        .enumerate()
        .map(|(r, e)| {
            (!e.is_empty()).then(|| {
                let bound = loosened(p.capacity()[r]) * row_scale[r];
                lp.add_row(f64::NEG_INFINITY, bound, e)
            })
        })
        .collect();
    for &i in free {
        let e: Vec<(usize, f64)> = cols[i].iter().map(|&c| (c, 1.0)).collect();
        lp.add_row(1.0, 1.0, &e);
    }
    Model {
        lp,
        cols,
        cap_rows,
        row_scale,
        cost_scale,
    }
}

/// `LB(π)` over the free groups plus the forced waits' constant.
pub(crate) fn safe_bound(p: &EpochProblem, free: &[usize], prices: &[f64], constant: f64) -> f64 {
    let priced: f64 = free
        .iter()
        .map(|&i| {
            let g = &p.groups()[i];
            g.options
                .iter()
                .map(|o| o.cost + o.usage.iter().zip(prices).map(|(a, y)| a * y).sum::<f64>())
                .fold(g.wait_cost, f64::min)
        })
        .sum();
    let cap: f64 = p
        .capacity()
        .iter()
        .zip(prices)
        .map(|(&c, y)| loosened(c) * y)
        .sum();
    priced - cap + constant
}

/// Solves the LP relaxation over the free groups.
fn relax(p: &EpochProblem, free: &[usize], constant: f64) -> Result<LpRelaxation, SmdError> {
    let m = model(p, free, ColumnKind::Continuous);
    let sol = lp::solve(&m.lp, &SolveOptions::default().with_presolve(false))?;
    relaxation(p, free, &m, &m.lp, &sol, (constant, constant))
}

/// The relaxation of the free groups read from a solution of `m` (whose
/// program, with its current bounds, is `lp`); `constants.0` is added to
/// the solver's (unscaled) objective, `constants.1` (the forced waits'
/// charges) to the safe bound over the free groups.
fn relaxation(
    p: &EpochProblem,
    free: &[usize],
    m: &Model,
    lp: &LinearProgram,
    sol: &LpSolution,
    constants: (f64, f64),
) -> Result<LpRelaxation, SmdError> {
    let (constant, forced_waits) = constants;
    if !sol.status.is_optimal() || !sol.has_primal || !sol.has_dual {
        return Err(SmdError::LpNotOptimal {
            status: format!("{:?}", sol.status),
        });
    }
    let prices: Vec<f64> = m
        .cap_rows
        .iter()
        .zip(&m.row_scale)
        .map(|(r, s)| r.map_or(0.0, |r| (-sol.row_duals[r]).max(0.0) * s / m.cost_scale))
        .collect();
    let mut x = vec![Vec::new(); p.groups().len()];
    let mut fractional = Vec::new();
    for &i in free {
        x[i] = m.cols[i].iter().map(|&c| sol.primal[c]).collect();
        if x[i]
            .iter()
            .any(|&v| v > FRACTION_TOL && v < 1.0 - FRACTION_TOL)
        {
            fractional.push(i);
        }
    }
    let activity = lp.row_activity(&sol.primal)?;
    let tight_rows = m
        .cap_rows
        .iter()
        .enumerate()
        .filter(|(r, row)| {
            row.is_some_and(|row| {
                // In the scaled row: its bound is near 1.
                let c = loosened(p.capacity()[*r]) * m.row_scale[*r];
                activity[row] >= c - FRACTION_TOL * c.abs().max(1.0)
            })
        })
        .count();
    Ok(LpRelaxation {
        value: sol.objective.unwrap_or(f64::NAN) / m.cost_scale + constant,
        safe_bound: safe_bound(p, free, &prices, forced_waits),
        prices,
        fractional,
        tight_rows,
        columns: lp.n_cols(),
        rows: lp.n_rows(),
        seconds: sol.seconds,
        x,
    })
}

/// The LP relaxation of a whole epoch program kept in one solver for all
/// its candidate plans (the joint plan and the prefixes): a plan's forced
/// waits fix its groups' option columns at 0, which leaves the group row
/// `x_wait = 1` (the prefix program plus the forced waits' charges in the
/// objective), and each solve starts from the previous plan's basis.
/// Without the `highs` feature every relaxation is solved afresh (and
/// fails for want of a solver).
pub(crate) struct WarmLp {
    #[cfg(feature = "highs")]
    m: Model,
    #[cfg(feature = "highs")]
    solver: Option<lp::highs::Resident>,
    #[cfg(feature = "highs")]
    forced: Vec<bool>,
}

impl WarmLp {
    /// The program of every group of `p`, loaded (nothing forced).
    ///
    /// # Errors
    ///
    /// [`SmdError::Lp`] when the solver rejects the program.
    #[cfg(feature = "highs")]
    pub(crate) fn new(p: &EpochProblem) -> Result<Self, SmdError> {
        let all: Vec<usize> = (0..p.groups().len()).collect();
        let m = model(p, &all, ColumnKind::Continuous);
        let solver = if m.lp.n_cols() > 0 {
            Some(lp::highs::Resident::new(
                m.lp.clone(),
                SolveOptions::default().with_presolve(false),
            )?)
        } else {
            None
        };
        Ok(WarmLp {
            m,
            solver,
            forced: vec![false; p.groups().len()],
        })
    }

    /// Without a solver: nothing to keep loaded.
    ///
    /// # Errors
    ///
    /// None.
    #[cfg(not(feature = "highs"))]
    pub(crate) fn new(_p: &EpochProblem) -> Result<Self, SmdError> {
        Ok(WarmLp {})
    }

    /// The relaxation with the groups of `forced` waiting.
    fn relax(
        &mut self,
        p: &EpochProblem,
        forced: &[bool],
        free: &[usize],
        constant: f64,
    ) -> Result<LpRelaxation, SmdError> {
        #[cfg(feature = "highs")]
        if let Some(solver) = self.solver.as_mut() {
            for (i, (&now, was)) in forced.iter().zip(self.forced.iter_mut()).enumerate() {
                if now != *was {
                    let upper = if now { 0.0 } else { f64::INFINITY };
                    let options = &self.m.cols[i];
                    for &c in &options[..options.len() - 1] {
                        solver.set_col_bounds(c, 0.0, upper)?;
                    }
                    *was = now;
                }
            }
            let sol = solver.solve()?;
            return relaxation(p, free, &self.m, solver.program(), &sol, (0.0, constant));
        }
        #[cfg(not(feature = "highs"))]
        let _ = forced;
        relax(p, free, constant)
    }
}

/// Residual capacity bookkeeping for a partial plan.
#[derive(Debug, Clone)]
pub(crate) struct Residual {
    left: Vec<f64>,
    slack: Vec<f64>,
}

impl Residual {
    /// The loosened capacity of `p`, nothing used.
    pub(crate) fn new(p: &EpochProblem) -> Self {
        Residual {
            left: p.capacity().iter().map(|&c| loosened(c)).collect(),
            slack: p
                .capacity()
                .iter()
                .map(|c| 1e-12 * c.abs().max(1.0))
                .collect(),
        }
    }

    /// Whether `usage` fits what is left.
    pub(crate) fn fits(&self, usage: &[f64]) -> bool {
        usage
            .iter()
            .zip(self.left.iter().zip(&self.slack))
            .all(|(a, (l, s))| *a <= l + s)
    }

    /// Takes (`sign = -1`) or gives back (`+1`) `usage`.
    pub(crate) fn apply(&mut self, usage: &[f64], sign: f64) {
        for (l, a) in self.left.iter_mut().zip(usage) {
            *l += sign * a;
        }
    }
}

/// The cheapest option of group `i` that fits `res` (ties: smaller
/// dominant share, then earlier option); waiting when every fitting option
/// costs more (a tie with waiting goes to running).
pub(crate) fn cheapest_fitting(p: &EpochProblem, i: usize, res: &Residual) -> Option<usize> {
    let g = &p.groups()[i];
    // No option fits where the least usage of each row does not (a quick
    // refusal for the many jobs of a full cluster).
    if g.options.is_empty() || !res.fits(p.min_usage(i)) {
        return None;
    }
    let mut best: Option<(usize, f64, f64)> = None;
    for (k, o) in g.options.iter().enumerate() {
        if !res.fits(&o.usage) {
            continue;
        }
        let share = p.share(&o.usage);
        let better = best.is_none_or(|(_, c, s)| o.cost < c || (o.cost == c && share < s));
        if better {
            best = Some((k, o.cost, share));
        }
    }
    best.filter(|&(_, c, _)| c <= g.wait_cost)
        .map(|(k, _, _)| k)
}

/// Assigns each group of `order` its cheapest fitting option, in order.
fn assign(p: &EpochProblem, order: &[usize], plan: &mut Plan, res: &mut Residual) {
    for &i in order {
        let k = cheapest_fitting(p, i, res);
        if let Some(k) = k {
            res.apply(&p.groups()[i].options[k].usage, -1.0);
        }
        plan[i] = k;
    }
}

/// The improvement pass: in shortest-remaining-first order, each group of
/// `free` switches to its cheapest fitting option if strictly cheaper (or
/// as cheap, from waiting to running);
/// repeated until nothing changes, at most `passes` times.
pub(crate) fn improve(p: &EpochProblem, free: &[bool], plan: &mut Plan, passes: usize) {
    let mut res = Residual::new(p);
    for (g, c) in p.groups().iter().zip(plan.iter()) {
        if let Some(k) = c {
            res.apply(&g.options[*k].usage, -1.0);
        }
    }
    for _ in 0..passes {
        let mut changed = false;
        for &i in p.srpt_order() {
            if !free[i] {
                continue;
            }
            let g = &p.groups()[i];
            if let Some(k) = plan[i] {
                res.apply(&g.options[k].usage, 1.0);
            }
            let k = cheapest_fitting(p, i, &res);
            // Strictly cheaper, or as cheap and running instead of waiting:
            // (cost, waiting jobs) falls lexicographically at every switch.
            let (new, old) = (g.cost_of(k), g.cost_of(plan[i]));
            let k = if new < old || (new == old && k.is_some() && plan[i].is_none()) {
                changed = true;
                k
            } else {
                plan[i]
            };
            if let Some(k) = k {
                res.apply(&g.options[k].usage, -1.0);
            }
            plan[i] = k;
        }
        if !changed {
            break;
        }
    }
}

/// Rounds an LP point: integral groups keep their option, the fractional
/// ones (and any integral group that no longer fits, numerically) take
/// their cheapest fitting option in the best of all orders (up to
/// `max_permutation_groups` of them) or by decreasing regret. Returns the
/// plan and the groups rounded.
fn round(p: &EpochProblem, free: &[usize], x: &[Vec<f64>], max_perm: usize) -> (Plan, Vec<usize>) {
    let mut plan: Plan = vec![None; p.groups().len()];
    let mut res = Residual::new(p);
    let mut rounded = Vec::new();
    for &i in free {
        let g = &p.groups()[i];
        let last = g.options.len();
        let whole = x[i].iter().position(|&v| v >= 1.0 - FRACTION_TOL);
        let integral = whole.filter(|_| {
            x[i].iter()
                .all(|&v| v <= FRACTION_TOL || v >= 1.0 - FRACTION_TOL)
        });
        match integral {
            Some(k) if k == last => plan[i] = None,
            Some(k) if res.fits(&g.options[k].usage) => {
                res.apply(&g.options[k].usage, -1.0);
                plan[i] = Some(k);
            }
            _ => rounded.push(i),
        }
    }
    let job = |i: usize| p.groups()[i].job;
    if rounded.len() <= max_perm {
        rounded.sort_by_key(|&i| (job(i), i));
        let mut order = rounded.clone();
        let mut best: Option<(f64, Plan)> = None;
        loop {
            let (mut trial, mut r) = (plan.clone(), res.clone());
            assign(p, &order, &mut trial, &mut r);
            let cost = p.cost(&trial);
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, trial));
            }
            if !next_permutation(&mut order, |a, b| (job(*a), *a).cmp(&(job(*b), *b))) {
                break;
            }
        }
        if let Some((_, b)) = best {
            plan = b;
        }
    } else {
        let mut order = rounded.clone();
        let regret = |i: usize| p.groups()[i].wait_cost - p.groups()[i].min_cost();
        order.sort_by(|&a, &b| {
            regret(b)
                .total_cmp(&regret(a))
                .then((job(a), a).cmp(&(job(b), b)))
        });
        assign(p, &order, &mut plan, &mut res);
    }
    (plan, rounded)
}

/// `Σ_i max(0, c_i(k_i) − Σ_k c_ik x_ik)` over the groups rounding kept
/// (integral up to [`FRACTION_TOL`]): what their tiny LP remainders on
/// other options saved the LP, so that `J ≤ LP + Σ_F(ω − c^min) + this`
/// holds exactly (it is of the order of `FRACTION_TOL` times the costs).
fn near_integral_excess(
    p: &EpochProblem,
    free: &[usize],
    rounded: &[usize],
    x: &[Vec<f64>],
    plan: &Plan,
) -> f64 {
    free.iter()
        .filter(|i| !rounded.contains(i))
        .map(|&i| {
            let g = &p.groups()[i];
            let costs = g.options.iter().map(|o| o.cost).chain([g.wait_cost]);
            let mix: f64 = costs.zip(&x[i]).map(|(c, v)| c * v).sum();
            (g.cost_of(plan[i]) - mix).max(0.0)
        })
        .sum()
}

/// The next permutation in lexicographic order under `cmp`; `false` (and
/// `v` sorted back) after the last one.
fn next_permutation<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::Less;
    if v.len() < 2 {
        return false;
    }
    let mut i = v.len() - 1;
    while i > 0 && cmp(&v[i - 1], &v[i]) != Less {
        i -= 1;
    }
    if i == 0 {
        v.reverse();
        return false;
    }
    let mut j = v.len() - 1;
    while cmp(&v[i - 1], &v[j]) != Less {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// Solves the epoch program with the groups of `forced` waiting: LP,
/// rounding and improvement (`greedy = false`), or the greedy and
/// improvement; then the exact MIP if `params.exact` asks for it.
///
/// # Errors
///
/// [`SmdError::Lp`] (for example no solver without the `highs` feature,
/// unless `greedy`), [`SmdError::LpNotOptimal`].
pub(crate) fn solve_mcmdk(
    p: &EpochProblem,
    forced: &[bool],
    greedy: bool,
    params: &SmdParams,
) -> Result<McmdkSolution, SmdError> {
    solve_with(p, forced, greedy, params, None)
}

/// [`solve_mcmdk`], its LP relaxation solved in `warm` when given (the
/// epoch program's solver kept across its candidate plans).
pub(crate) fn solve_with(
    p: &EpochProblem,
    forced: &[bool],
    greedy: bool,
    params: &SmdParams,
    warm: Option<&mut WarmLp>,
) -> Result<McmdkSolution, SmdError> {
    let n = p.groups().len();
    if forced.len() != n {
        return Err(SmdError::InvalidInput {
            name: "forced",
            reason: format!("{} entries for {n} groups", forced.len()),
        });
    }
    let free: Vec<usize> = (0..n).filter(|&i| !forced[i]).collect();
    let is_free: Vec<bool> = forced.iter().map(|f| !f).collect();
    let constant: f64 = (0..n)
        .filter(|&i| forced[i])
        .map(|i| p.groups()[i].wait_cost)
        .sum();
    let trivial_bound = constant + free.iter().map(|&i| p.groups()[i].min_cost()).sum::<f64>();
    let (mut plan, lp, guarantee_value) = if greedy || free.is_empty() {
        let mut plan = vec![None; n];
        let order: Vec<usize> = p
            .srpt_order()
            .iter()
            .copied()
            .filter(|&i| is_free[i])
            .collect();
        assign(p, &order, &mut plan, &mut Residual::new(p));
        (plan, None, None)
    } else {
        let lp = match warm {
            Some(w) => w.relax(p, forced, &free, constant)?,
            None => relax(p, &free, constant)?,
        };
        let (plan, rounded) = round(p, &free, &lp.x, params.max_permutation_groups);
        let loss: f64 = rounded
            .iter()
            .map(|&i| p.groups()[i].wait_cost - p.groups()[i].min_cost())
            .sum();
        let value = lp.value + loss + near_integral_excess(p, &free, &rounded, &lp.x, &plan);
        (plan, Some(lp), Some(value))
    };
    improve(p, &is_free, &mut plan, params.improvement_passes);
    let objective = p.cost(&plan);
    let columns = p.columns();
    let run_exact = match params.exact {
        ExactMode::Never => false,
        ExactMode::Always => true,
        ExactMode::IfSmall { max_columns } => columns <= max_columns,
    };
    let exact = if run_exact && !free.is_empty() {
        Some(exact(p, &free, constant, objective, params)?)
    } else {
        None
    };
    Ok(McmdkSolution {
        plan,
        objective,
        lp,
        guarantee_value,
        trivial_bound,
        exact,
    })
}

/// The exact MIP over the free groups, as a comparison point.
///
/// A lower bound cannot exceed a feasible cost, so the solver's dual bound
/// is capped at the rounded plan's cost `j`. A solve that reports
/// optimality with an incumbent dearer than `j` stopped within its absolute
/// gap, not at the optimum: it is reported as stopped at a limit, never as
/// exact.
fn exact(
    p: &EpochProblem,
    free: &[usize],
    constant: f64,
    j: f64,
    params: &SmdParams,
) -> Result<ExactInfo, SmdError> {
    let start = Instant::now();
    let m = model(p, free, ColumnKind::Integer);
    let sol: LpSolution = lp::solve(&m.lp, &params.mip.proof_solve_options())?;
    let seconds = start.elapsed().as_secs_f64();
    let dual = sol
        .mip_dual_bound
        .map_or(f64::NEG_INFINITY, |b| b / m.cost_scale + constant)
        .min(j);
    let gap = sol.mip_gap.unwrap_or(f64::INFINITY);
    Ok(match sol.objective.filter(|_| sol.has_primal) {
        Some(obj) => {
            let inc = obj / m.cost_scale + constant;
            // Sums of the same costs in another order differ in the last bits.
            let optimal = sol.status.is_optimal() && inc <= j + 1e-10 * j.abs();
            let status = if sol.status.is_optimal() && !optimal {
                "optimal within the solver's absolute gap only".to_string()
            } else {
                format!("{:?}", sol.status)
            };
            // At optimality the incumbent is the bound.
            let dual = if optimal { dual.min(inc) } else { dual };
            ExactInfo::comparison(optimal, status, (inc, dual, gap), seconds)
        }
        None => ExactInfo {
            status: ExactStatus::Limit {
                status: format!("{:?}", sol.status),
            },
            incumbent: None,
            dual_bound: dual,
            rel_gap: f64::INFINITY,
            seconds,
            returned: false,
        },
    })
}

#[cfg(all(test, feature = "highs"))]
mod tests {
    use super::*;
    use crate::algorithms::smd::problem::{EpochOption, Group};
    use crate::model::JobId;

    /// A program of `n` jobs over two rows with a seeded mix of options.
    fn program(n: usize, seed: u64) -> EpochProblem {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let groups = (0..n)
            .map(|i| {
                let options: Vec<EpochOption> = (0..1 + next(4))
                    .map(|k| EpochOption {
                        config: (k as u32 + 1, 1),
                        usage: vec![1.0 + next(5) as f64, 1.0 + next(5) as f64],
                        cost: 1.0 + next(10) as f64,
                    })
                    .collect();
                Group::new(JobId(i as u32), 12.0 + next(5) as f64, options)
            })
            .collect();
        EpochProblem::new(vec![7.0, 6.0], vec![20.0, 20.0], groups).expect("program")
    }

    /// The warm-started relaxation of every prefix program (solved in one
    /// solver, in the order of the outer selection, then back again) has
    /// the value and the safe bound of the same program solved afresh:
    /// fails if fixing the waiting groups' columns did not give the prefix
    /// program.
    #[test]
    fn warm_prefix_relaxations_match_fresh_ones() {
        for seed in 0..20 {
            let p = program(9, seed);
            let n = p.groups().len();
            let mut warm = WarmLp::new(&p).expect("warm");
            for q in [n, 1, 2, 4, 8, 3, 5, n, 1] {
                let mut forced = vec![true; n];
                for &i in p.srpt_order().iter().take(q) {
                    forced[i] = false;
                }
                let free: Vec<usize> = (0..n).filter(|&i| !forced[i]).collect();
                let constant: f64 = (0..n)
                    .filter(|&i| forced[i])
                    .map(|i| p.groups()[i].wait_cost)
                    .sum();
                let hot = warm.relax(&p, &forced, &free, constant).expect("warm LP");
                let cold = relax(&p, &free, constant).expect("fresh LP");
                let tol = 1e-7 * cold.value.abs().max(1.0);
                assert!((hot.value - cold.value).abs() <= tol, "seed {seed} q {q}");
                assert!(hot.safe_bound <= hot.value + tol, "seed {seed} q {q}");
                assert!(
                    (hot.safe_bound - cold.safe_bound).abs() <= 1e-6 * cold.value.abs().max(1.0),
                    "seed {seed} q {q}: {} vs {}",
                    hot.safe_bound,
                    cold.safe_bound
                );
                assert!(hot.fractional.len() <= 2, "seed {seed} q {q}");
            }
        }
    }
}
