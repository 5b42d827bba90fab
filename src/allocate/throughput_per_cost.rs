//! Max throughput per cost: maximise `Σ_i Σ_j T_ij·X_ij / price_j`, steps
//! per second per unit of price (Gavel's prices are dollars per GPU-hour).

use super::program::{self, View};
use super::{Allocation, AllocationError, AllocationPolicy};
use crate::certificate::Sense;

pub(super) fn solve(view: &View) -> Result<Allocation, AllocationError> {
    let policy = AllocationPolicy::MaxThroughputPerCost;
    let c: Vec<Vec<f64>> = view
        .tput
        .iter()
        .map(|row| row.iter().zip(&view.prices).map(|(t, p)| t / p).collect())
        .collect();
    let solved = program::max_linear(view, policy, &c)?;
    let objective = c
        .iter()
        .zip(&solved.x)
        .map(|(row, x)| row.iter().zip(x).map(|(a, b)| a * b).sum::<f64>())
        .sum();
    let bound = program::safe(solved.bound);
    Ok(program::finish(
        view,
        policy,
        solved.x,
        Some((Sense::Maximise, objective, bound, solved.run)),
        None,
    ))
}
