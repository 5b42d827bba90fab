//! Min makespan: minimise `max_i R_i/t_i(X)`, the time until every job's
//! remaining steps are done at its effective throughput.
//!
//! One LP: maximise `z` subject to `t_i(X) ≥ z·R_i` for every job with steps
//! left (rows divided by `R_i`: `Σ_j (T_ij/R_i)·X_ij ≥ z`); the makespan is
//! `1/z`, and the dual bound `z̄ ≥ z*` gives the lower bound `1/z̄` on the
//! optimal makespan. Gavel bisects on the makespan instead and stops within
//! 5 % of it.

use super::program::{self, View};
use super::{Allocation, AllocationError, AllocationPolicy};
use crate::certificate::{RunInfo, Sense};

pub(super) fn solve(view: &View) -> Result<Allocation, AllocationError> {
    let policy = AllocationPolicy::MinMakespan;
    let mut c = Vec::with_capacity(view.jobs());
    for i in 0..view.jobs() {
        let r = view.steps[i];
        if r == 0.0 {
            c.push(None);
            continue;
        }
        if view.best(i) <= 0.0 {
            return Err(view.cannot_run(i, policy));
        }
        c.push(Some(
            view.tput[i].iter().map(|t| t / r).collect::<Vec<f64>>(),
        ));
    }
    if c.iter().all(Option::is_none) {
        // Nothing left to run: a makespan of 0, proven by itself.
        let x = vec![vec![0.0; view.types.len()]; view.jobs()];
        let bound = program::safe(0.0);
        return Ok(program::finish(
            view,
            policy,
            x,
            Some((Sense::Minimise, 0.0, bound, RunInfo::new())),
            None,
        ));
    }
    let solved = program::max_floor(view, policy, &c)?;
    let t = view.effective(&solved.x);
    let objective = (0..view.jobs())
        .filter(|&i| view.steps[i] > 0.0)
        .map(|i| view.steps[i] / t[i])
        .fold(0.0, f64::max);
    let bound = program::safe(1.0 / solved.bound);
    Ok(program::finish(
        view,
        policy,
        solved.x,
        Some((Sense::Minimise, objective, bound, solved.run)),
        None,
    ))
}
