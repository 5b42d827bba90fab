//! Finish-time fairness (Themis, Mahajan et al., NSDI 2020, in Gavel's
//! form): minimise `max_i ρ_i`, where `ρ_i = (E_i + R_i/t_i(X)) /
//! (R_i/iso_i)` compares the job's finish time under `X` with its run time
//! on its isolated share `y_ij = (n_j/(m·s_i)) / max(1, N/(m·s_i))`,
//! `iso_i = Σ_j T_ij·y_ij`.
//!
//! `R_i/t_i` is convex, so this is not an LP; but for a fixed `ρ` the
//! allocations with every `ρ_i ≤ ρ` are those with `t_i(X)·f_i(ρ) ≥ 1`,
//! `f_i(ρ) = (ρ − c_i)/iso_i` and `c_i = E_i·iso_i/R_i`: linear in `X`.
//! Each step solves "maximise `z` subject to `t_i(X)·f_i(ρ) ≥ z`" for the
//! middle `ρ` of the bracket `[lo, hi]`:
//!
//! - the returned point's own `ρ(X) = max_i ρ_i` is reachable: `hi ←
//!   min(hi, ρ(X))`;
//! - when the dual bound `z̄` is below 1, no `ρ' < min_i (c_i + (ρ −
//!   c_i)/z̄)` is reachable (an `X` reaching `ρ'` would have `t_i·f_i(ρ) ≥
//!   f_i(ρ)/f_i(ρ') > z̄` for every job): `lo` moves there, past `ρ`.
//!
//! It starts from `lo = max_i (c_i + iso_i/max_j T_ij)` (no job runs
//! faster than on its best type all the time) and `hi = ρ(y)` (the
//! isolated shares are feasible), and stops when `hi ≤ lo·(1 + 10⁻⁶)`.
//! Gavel ignores the weights here; so does this policy.

use super::program::{self, View};
use super::{Allocation, AllocationError, AllocationPolicy, Bracket};
use crate::certificate::{RunInfo, Sense};

/// The bracket's target relative width.
pub const RELATIVE_WIDTH: f64 = 1e-6;
/// Most LPs one bisection solves.
const MAX_STEPS: u32 = 200;

pub(super) fn solve(view: &View) -> Result<Allocation, AllocationError> {
    let policy = AllocationPolicy::FinishTimeFairness;
    let (m, k) = (view.jobs(), view.types.len());
    let n = view.total_gpus();
    // The isolated shares y and throughputs iso.
    let y: Vec<Vec<f64>> = (0..m)
        .map(|i| {
            let fair = n / (m as f64 * view.scale[i]);
            (0..k)
                .map(|j| view.counts[j] / (m as f64 * view.scale[i]) / fair.max(1.0))
                .collect()
        })
        .collect();
    let iso = view.effective(&y);
    for (i, &v) in iso.iter().enumerate() {
        if v.is_nan() || v <= 0.0 {
            return Err(view.cannot_run(i, policy));
        }
    }
    let c: Vec<f64> = (0..m)
        .map(|i| view.elapsed[i] * iso[i] / view.steps[i])
        .collect();
    let rho_of = |x: &[Vec<f64>]| -> f64 {
        let t = view.effective(x);
        (0..m).map(|i| c[i] + iso[i] / t[i]).fold(0.0, f64::max)
    };
    let mut lo = (0..m)
        .map(|i| c[i] + iso[i] / view.best(i))
        .fold(0.0, f64::max);
    // y made exactly feasible: its sums can exceed 1 or n_j by rounding.
    let mut best = program::repair(view, &y.concat());
    let mut hi = rho_of(&best);
    let start = std::time::Instant::now();
    let mut run = RunInfo::new();
    let mut steps = 0;
    while hi > lo * (1.0 + RELATIVE_WIDTH) && steps < MAX_STEPS {
        let rho = 0.5 * (lo + hi);
        let rows: Vec<Option<Vec<f64>>> = (0..m)
            .map(|i| {
                let f = (rho - c[i]) / iso[i];
                Some(view.tput[i].iter().map(|t| t * f).collect())
            })
            .collect();
        let solved = program::max_floor(view, policy, &rows)?;
        steps += 1;
        run.lp_solves += 1;
        run.lp_iterations += solved.run.lp_iterations;
        let (before_lo, before_hi) = (lo, hi);
        let reached = rho_of(&solved.x);
        if reached < hi {
            hi = reached;
            best = solved.x;
        }
        if solved.bound < 1.0 {
            let jump = if solved.bound > 0.0 {
                (0..m)
                    .map(|i| c[i] + (rho - c[i]) / solved.bound)
                    .fold(f64::INFINITY, f64::min)
            } else {
                rho
            };
            lo = lo.max(jump.min(hi));
        }
        if (lo, hi) == (before_lo, before_hi) {
            // Neither end moved: the solver's tolerance decides no more.
            break;
        }
    }
    run.add_stage("bisection", start.elapsed().as_secs_f64());
    let bracket = Bracket {
        infeasible_below: lo,
        feasible_at: hi,
        steps,
    };
    let bound = program::safe(lo);
    Ok(program::finish(
        view,
        policy,
        best,
        Some((Sense::Minimise, hi, bound, run)),
        Some(bracket),
    ))
}
