//! Max-sum throughput: maximise `Σ_i t_i(X) = Σ_i Σ_j T_ij·X_ij` (no
//! weights, no scale factor in the objective, as Gavel's).

use super::program::{self, View};
use super::{Allocation, AllocationError, AllocationPolicy};
use crate::certificate::Sense;

pub(super) fn solve(view: &View) -> Result<Allocation, AllocationError> {
    let policy = AllocationPolicy::MaxSumThroughput;
    let solved = program::max_linear(view, policy, &view.tput)?;
    let objective = view.effective(&solved.x).iter().sum();
    let bound = program::safe(solved.bound);
    Ok(program::finish(
        view,
        policy,
        solved.x,
        Some((Sense::Maximise, objective, bound, solved.run)),
        None,
    ))
}
