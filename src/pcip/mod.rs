//! Generic mixed packing–covering integer programs: validation, LP
//! relaxation with a safe dual bound, independent randomized rounding, per-instance a-priori guarantees,
//! repair to exact feasibility, best-of-k trials with an exact-MIP fallback,
//! and a [`Certificate`](crate::Certificate) for every result.

mod bounds;
mod error;
#[cfg(feature = "serde")]
mod io;
/// The known-answer programs KA1–KA6, test fixtures in one file shared
/// with the integration tests (KA6 is used by those only).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../tests/common/known_answers.rs"]
pub(crate) mod known_answers;
mod neighbourhood;
mod problem;
mod relax;
mod repair;
mod rounding;
mod solver;
mod structure;

#[cfg(test)]
use crate::certificate::Sense;

pub use bounds::{Beta, RowBounds};
pub use error::{Field, GroupIssue, PcError, RepairFailure, RowClass, RowRef, RowReport};
#[cfg(feature = "serde")]
pub use io::PC_FORMAT_VERSION;
pub use neighbourhood::Neighbourhood;
pub use problem::{
    ColKind, Evaluation, MAX_EXACT_INTEGER, MAX_VARS, PcBuilder, PcProblem, RowLabels, RowSense,
    evaluate,
};
pub use relax::{ExactResult, LpRelaxation, MipOptions, solve_exact, solve_lp};
pub use repair::{Move, MoveSource, RepairOptions, RepairReport, repair, repair_with};
pub(crate) use rounding::uniform;
pub use rounding::{round_independent, scaled_point, trial_rng};
pub use solver::{ExactMode, Hooks, Method, PcSolution, RoundingSolver, TrialOutcome, TrialRecord};
pub use structure::{ChoiceGroup, Derive, MIN_MEMBER_VALUE, Member, Structure, round_structured};
