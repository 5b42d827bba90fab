//! Max-min fairness: raise the least normalised share.
//!
//! Agnostic (`max-min-fairness`, Gavel's least attained service): maximise
//! `min_i (s_i/w_i)·Σ_j X_ij`, every type alike. Heterogeneity-aware
//! (`max-min-fairness-perf`): maximise `min_i (s_i/w_i)·t_i(X)/p_i`, where
//! `p_i = Σ_j T_ij·n_j/N` is the job's throughput under the proportional
//! allocation `X_ij = n_j/N`. Both are the LP "maximise `z` subject to
//! `Σ_j c_ij·X_ij ≥ z` for every job" with `c_ij = s_i/w_i` or
//! `(s_i/w_i)·T_ij/p_i`.

use super::program::{self, View};
use super::{Allocation, AllocationError, AllocationPolicy};
use crate::certificate::Sense;

pub(super) fn solve(view: &View, perf: bool) -> Result<Allocation, AllocationError> {
    let policy = if perf {
        AllocationPolicy::MaxMinFairnessPerf
    } else {
        AllocationPolicy::MaxMinFairness
    };
    let n = view.total_gpus();
    let mut c = Vec::with_capacity(view.jobs());
    for i in 0..view.jobs() {
        let share = view.scale[i] / view.weight[i];
        let row: Vec<f64> = if perf {
            let p: f64 = view.tput[i]
                .iter()
                .zip(&view.counts)
                .map(|(t, nj)| t * nj / n)
                .sum();
            if p.is_nan() || p <= 0.0 {
                return Err(view.cannot_run(i, policy));
            }
            view.tput[i].iter().map(|t| share * t / p).collect()
        } else {
            vec![share; view.types.len()]
        };
        c.push(Some(row));
    }
    let solved = program::max_floor(view, policy, &c)?;
    let objective = c
        .iter()
        .zip(&solved.x)
        .map(|(row, x)| {
            let row = row.as_ref().map_or(&[][..], Vec::as_slice);
            row.iter().zip(x).map(|(a, b)| a * b).sum::<f64>()
        })
        .fold(f64::INFINITY, f64::min);
    let bound = program::safe(solved.bound);
    Ok(program::finish(
        view,
        policy,
        solved.x,
        Some((Sense::Maximise, objective, bound, solved.run)),
        None,
    ))
}
