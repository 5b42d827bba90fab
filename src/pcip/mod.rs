//! Generic mixed packing–covering integer programs
//! (`specs/packing-covering.md`): validation, LP relaxation with a safe dual
//! bound, independent randomized rounding, per-instance a-priori guarantees,
//! repair to exact feasibility, best-of-k trials with an exact-MIP fallback,
//! and a [`Certificate`](crate::Certificate) for every result.

mod error;
mod problem;
mod relax;
mod rounding;

pub use error::{Field, PcError, RepairFailure, RowClass, RowRef, RowReport};
pub use problem::{ColKind, Evaluation, PcBuilder, PcProblem, RowLabels, RowSense, evaluate};
pub use relax::{ExactResult, LpRelaxation, MipOptions, solve_exact, solve_lp};
pub use rounding::{
    INT_TOL, draw_uniforms, round_independent, round_with_uniforms, scaled_point, snap, trial_rng,
    uniform,
};
