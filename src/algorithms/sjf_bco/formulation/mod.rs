//! Exact and bounding formulations of ring-all-reduce gang scheduling on
//! small instances, against which SJF-BCO (Yu, Ji, Rajan, Liu, ACM MobiHoc
//! 2022) is measured. They are this crate's own compact forms; none appears
//! in the paper.
//!
//! All work on a [`FormulationInput`]: servers with `O_s` GPUs (`N = Σ_s O_s`),
//! rigid jobs with `G_j` GPUs and an estimated execution time `ρ̂_j` (slots),
//! and the estimate bound `u ≥ 1` with the contract `ρ̂_j/u ≤ ρ_j` (the true
//! execution time under any placement and contention). The *load* of job
//! `j` is `ρ̂_j/u`.
//!
//! An input is given explicitly ([`FormulationInput::new`],
//! [`FormulationInput::from_counts`]) or converted from an instance by
//! SJF-BCO's own model ([`FormulationInput::from_instance`]
//! and [`FormulationInput::from_instance_with_estimates`]): the servers are
//! the machines with usable GPUs `O_s ≥ 1`, the jobs and `G_j` are
//! SJF-BCO's, and [`FormulationInput::from_instance`] takes as `ρ̂_j` each
//! job's proven shortest execution time, for which `u = 1` satisfies the
//! contract. The formulations and SJF-BCO thus bound and solve the same
//! problem.
//!
//! | Formulation | What its optimum is | Relation |
//! |---|---|---|
//! | [`lower_bound_closed_form`] (`LB`, no solver) | LP relaxation of the compact ILP | `LB ≤ θ*_agg` |
//! | [`solve_server_aggregated`] (`θ*_agg`) | relaxation ignoring packing inside a server | `θ*_agg ≤ θ*_ILP` |
//! | [`solve_compact_ilp`] (`θ*_ILP`) | tightest per-GPU budget on estimated busy time | `θ*_ILP ≤` every makespan, and `≤ max_g U[g]` of any assignment |
//! | [`solve_time_indexed`] (`OPT_TI`) | optimal makespan under contention-free durations `⌈ρ̂_j/u⌉` | `OPT_TI ≤` optimal makespan under contention |
//!
//! Every one of them is a **lower bound** on the makespan of the contention
//! model (under the estimate contract); `OPT_TI` is an exact optimum only of
//! the fixed-duration problem. `LB ≤ OPT_TI` holds with the default
//! durations.
//!
//! # Solving
//!
//! Building a program ([`build_compact`], [`build_server_aggregated`],
//! [`build_time_indexed`]) needs no solver. Solving uses HiGHS through
//! [`crate::lp`] under the `highs` feature; without it every solving
//! function returns [`FormulationError::Lp`] wrapping
//! [`LpError::SolverUnavailable`](crate::lp::LpError::SolverUnavailable).
//! MIPs run **without presolve**, as their optima and dual bounds are used
//! as proofs. A MIP stopped at a limit is reported as such
//! ([`MipReport::optimal`] false), with its dual bound, never as exact.
//! Limits are an [`ExactMipLimits`](crate::lp::ExactMipLimits), by default
//! [`DEFAULT_LIMITS`]. Sizes are checked before anything is allocated
//! ([`ExactMipLimits::max_columns`](crate::lp::ExactMipLimits::max_columns),
//! [`MAX_INPUT_JOBS`], [`MAX_INPUT_GPUS`], [`MAX_HORIZON_SLOTS`],
//! [`TimeIndexedOptions::max_jobs`]).
//!
//! # Example
//!
//! Two servers with 2 GPUs; jobs `(G, ρ̂) = (3, 4)` and `(2, 4)`, `u = 1`.
//! `LB = max(4, 20/4) = 5`, but the 3-GPU job forces one GPU to carry both
//! jobs, so `θ*_ILP = 8`; the jobs cannot run together either, so the
//! time-indexed optimum is 8 too.
//!
//! ```
//! use dmlsched::algorithms::sjf_bco::formulation::*;
//!
//! let input = FormulationInput::from_counts(&[2, 2], &[(3, 4.0), (2, 4.0)], 1.0)?;
//! assert_eq!(lower_bound_closed_form(&input), 5.0);
//! # #[cfg(feature = "highs")]
//! # {
//! let ilp = solve_compact_ilp(&input, &CompactOptions::default())?;
//! assert!(ilp.report.optimal());
//! assert!((ilp.theta.unwrap() - 8.0).abs() < 1e-9);
//! let ti = solve_time_indexed(&input, &TimeIndexedOptions::default())?;
//! assert_eq!(ti.makespan, Some(8));
//! # }
//! # Ok::<(), FormulationError>(())
//! ```

mod compact;
mod error;
mod input;
mod report;
#[cfg(test)]
mod tests;
mod time_indexed;

pub use compact::{
    AggregatedSolution, CompactForm, CompactOptions, CompactSolution, LoadModel, LpBoundReport,
    Symmetry, area_lower_bound, build_compact, build_server_aggregated, lower_bound_closed_form,
    lp_lower_bound, solve_compact_ilp, solve_server_aggregated,
};
pub use error::FormulationError;
pub(crate) use input::EstimateSource;
pub use input::{
    FormulationInput, FormulationJob, FormulationServer, MAX_ESTIMATE_SLOTS, MAX_INPUT_GPUS,
    MAX_INPUT_JOBS, MIN_ESTIMATE_SLOTS,
};
pub use report::{
    DEFAULT_LIMITS, DEFAULT_MAX_COLUMNS, DEFAULT_MIP_REL_GAP, DEFAULT_TIME_LIMIT_S, MipReport,
};
pub use time_indexed::{
    DEFAULT_TIME_INDEXED_MAX_JOBS, MAX_HORIZON_SLOTS, TimeIndexedModel, TimeIndexedOptions,
    TimeIndexedSolution, TimedJob, build_time_indexed, default_durations, list_schedule_makespan,
    solve_time_indexed,
};
