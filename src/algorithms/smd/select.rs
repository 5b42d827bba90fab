//! The outer job selection: candidate plans (joint, prefixes of the
//! shortest-remaining-first order) scored by a plan evaluator.

use super::problem::EpochProblem;
use super::solve::{
    McmdkSolution, Plan, Residual, WarmLp, cheapest_fitting, solve_mcmdk, solve_with,
};
use super::{Selection, SmdError, SmdParams};

/// Which candidate plan an epoch chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PlanMode {
    /// One program over all active jobs.
    Joint,
    /// The `q` shortest jobs keep their options; the others wait.
    Prefix {
        /// How many jobs are admitted.
        q: usize,
    },
    /// The greedy without LP.
    Greedy,
}

/// The estimated sum of completion times of a plan, seconds from the
/// epoch: a deterministic event simulation without further arrivals.
/// Running jobs keep their option until they finish (after their cost
/// `c_i(k_i)`); at each completion, waiting jobs, in
/// shortest-remaining-first order, start on their cheapest option that
/// fits what is left. Waiting jobs never start at time 0. `+∞` when some
/// waiting job can never start.
///
/// # Panics
///
/// If `plan` is shorter than the groups or names a missing option.
pub(crate) fn evaluate_plan(p: &EpochProblem, plan: &[Option<usize>]) -> f64 {
    let mut res = Residual::new(p);
    let mut running: Vec<(usize, f64, usize)> = Vec::new();
    for (i, (g, c)) in p.groups().iter().zip(plan).enumerate() {
        if let Some(k) = *c {
            res.apply(&g.options[k].usage, -1.0);
            running.push((i, g.options[k].cost, k));
        }
    }
    let mut waiting: Vec<usize> = p
        .srpt_order()
        .iter()
        .copied()
        .filter(|&i| plan[i].is_none())
        .collect();
    let (mut t, mut total) = (0.0_f64, 0.0_f64);
    loop {
        if running.is_empty() {
            if waiting.is_empty() {
                return total;
            }
            return f64::INFINITY;
        }
        let delta = running.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
        t += delta;
        let eps = 1e-12 * t.max(1.0);
        let mut still = Vec::with_capacity(running.len());
        for (i, phi, k) in running {
            let phi = phi - delta;
            if phi <= eps {
                total += t;
                res.apply(&p.groups()[i].options[k].usage, 1.0);
            } else {
                still.push((i, phi, k));
            }
        }
        running = still;
        waiting.retain(|&i| match cheapest_fitting(p, i, &res) {
            Some(k) => {
                let o = &p.groups()[i].options[k];
                res.apply(&o.usage, -1.0);
                running.push((i, o.cost, k));
                false
            }
            None => true,
        });
    }
}

/// The chosen plan of an epoch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selected {
    /// Which candidate plan.
    pub(crate) mode: PlanMode,
    /// Its solution (plan, cost, LP, bounds).
    pub(crate) solution: McmdkSolution,
    /// Its [`evaluate_plan`] value.
    pub(crate) estimate_s: f64,
    /// Candidate plans solved and evaluated.
    pub(crate) evaluated: usize,
}

/// The prefix sizes tried below `n` (the groups of the program) when
/// `active` jobs are active: all of `1..n` up to 32 active jobs, else the
/// powers of two below `n` (refined around the best later). `n` itself is
/// the joint plan, or the window's plan when the program holds only the
/// first `n < active` jobs.
fn prefix_sizes(active: usize, n: usize) -> Vec<usize> {
    if active <= 32 {
        (1..n).collect()
    } else {
        std::iter::successors(Some(1usize), |q| q.checked_mul(2))
            .take_while(|&q| q < n)
            .collect()
    }
}

/// Solves the prefix plan with the first `q` jobs of the order admitted.
fn prefix(
    p: &EpochProblem,
    q: usize,
    params: &SmdParams,
    warm: &mut WarmLp,
) -> Result<McmdkSolution, SmdError> {
    let mut forced = vec![true; p.groups().len()];
    for &i in p.srpt_order().iter().take(q) {
        forced[i] = false;
    }
    solve_with(p, &forced, false, params, Some(warm))
}

/// Runs the outer selection of `params.selection` on the epoch program.
///
/// `Best` solves the joint plan and the prefix plans and keeps the one with
/// the smallest [`evaluate_plan`] value (ties: smaller cost, the joint plan
/// before prefixes, smaller prefix).
///
/// The program may hold only the first `n` of `active` jobs of the
/// shortest-remaining-first order (the queue window; the others wait).
/// With `n < active` the joint plan is the window's prefix plan
/// `Prefix { q: n }` (tried first, and kept on ties as the joint plan is),
/// and the prefix sizes follow the active count.
///
/// # Errors
///
/// As [`solve_mcmdk`].
pub(crate) fn select_among(
    p: &EpochProblem,
    params: &SmdParams,
    active: usize,
) -> Result<Selected, SmdError> {
    let n = p.groups().len();
    let windowed = n < active;
    let top = if windowed {
        PlanMode::Prefix { q: n }
    } else {
        PlanMode::Joint
    };
    let no_force = vec![false; n];
    let mut best: Option<Selected> = None;
    let mut evaluated = 0;
    let mut consider = |mode: PlanMode, s: McmdkSolution, best: &mut Option<Selected>| {
        evaluated += 1;
        let estimate_s = evaluate_plan(p, &s.plan);
        let better = best.as_ref().is_none_or(|b| {
            let same = estimate_s == b.estimate_s;
            let smaller_q = matches!(
                (mode, b.mode),
                (PlanMode::Prefix { q: x }, PlanMode::Prefix { q: y }) if x < y && (y < n || !windowed)
            );
            estimate_s < b.estimate_s
                || (same && s.objective < b.solution.objective)
                || (same && s.objective == b.solution.objective && smaller_q)
        });
        if better {
            *best = Some(Selected {
                mode,
                solution: s,
                estimate_s,
                evaluated: 0,
            });
        }
    };
    match params.selection {
        Selection::Greedy => consider(
            PlanMode::Greedy,
            solve_mcmdk(p, &no_force, true, params)?,
            &mut best,
        ),
        Selection::Joint => consider(
            PlanMode::Joint,
            solve_mcmdk(p, &no_force, false, params)?,
            &mut best,
        ),
        Selection::Best | Selection::Prefix => {
            // One solver for every candidate plan's LP, each warm-started.
            let mut warm = WarmLp::new(p)?;
            if params.selection == Selection::Best || n == 0 || windowed {
                let s = solve_with(p, &no_force, false, params, Some(&mut warm))?;
                consider(top, s, &mut best);
            }
            let mut sizes = prefix_sizes(active, n);
            if params.selection == Selection::Prefix && n > 0 && !windowed {
                sizes.push(n);
            }
            let mut done = Vec::new();
            for q in sizes {
                consider(
                    PlanMode::Prefix { q },
                    prefix(p, q, params, &mut warm)?,
                    &mut best,
                );
                done.push(q);
            }
            if active > 32
                && let Some(Selected {
                    mode: PlanMode::Prefix { q },
                    ..
                }) = best
                && (q < n || !windowed)
            {
                for r in [q - 1, q + 1] {
                    if r >= 1 && r < n && !done.contains(&r) {
                        consider(
                            PlanMode::Prefix { q: r },
                            prefix(p, r, params, &mut warm)?,
                            &mut best,
                        );
                    }
                }
            }
        }
    }
    let mut s = best.ok_or_else(|| SmdError::InvalidInput {
        name: "selection",
        reason: "no candidate plan".into(),
    })?;
    s.evaluated = evaluated;
    Ok(s)
}

/// [`select_among`] on a program of every active job.
#[cfg(test)]
pub(crate) fn select(p: &EpochProblem, params: &SmdParams) -> Result<Selected, SmdError> {
    select_among(p, params, p.groups().len())
}

/// A plan's choices by job, for reports.
pub(crate) fn choices(p: &EpochProblem, plan: &Plan) -> Vec<Option<(u32, u32)>> {
    p.groups()
        .iter()
        .zip(plan)
        .map(|(g, c)| c.map(|k| g.options[k].config))
        .collect()
}
