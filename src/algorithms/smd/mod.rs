//! SMD-style scheduling of layered parameter-server jobs: the sum of
//! remaining-time ratios as a multiple-choice multi-dimensional knapsack,
//! solved by LP relaxation and rounding inside an outer job selection,
//! then placed on machines.
//!
//! **Provenance.** The crate's own design after the abstract of M. Yu,
//! C. Wu, B. Ji, J. Liu, "A Sum-of-Ratios Multi-Dimensional-Knapsack
//! Decomposition for DNN Resource Scheduling" (IEEE INFOCOM 2021). Only the
//! abstract was available: the paper's model, algorithm and theorem are
//! not reproduced here, and its guarantee is never claimed. The vertex
//! fact for multiple-choice knapsack LPs is standard.
//!
//! # The epoch program
//!
//! At an epoch (a job arrival or completion) every active job `i` gets one
//! option: a configuration `k = (w, p)` of its candidates `K_i`, or wait.
//! Candidates are all `1 ≤ w ≤ W_max`, `1 ≤ p ≤ P_max` (and `p ≤ w` under
//! the PS rule) that fit the cluster's free capacity in every row; the
//! layered timing model gives the iteration time `τ(w, p)`, the throughput
//! `θ = w/τ` (mini-batches per second) and the remaining time
//! `ρ(k) = V/θ(k)` for the remaining work `V`. An option's cost is
//! `c_i(k) = ρ_i(k) + o_i·[k ≠ k_i^cur]` (`o_i` the reconfiguration time);
//! waiting costs the wait charge `ω_i` ([`WaitCharge`]). With every ratio
//! fixed per candidate, the sum of ratios is a linear cost:
//!
//! ```text
//! minimise    Σ_i Σ_{k ∈ K_i ∪ {0}} c_i(k)·x_ik
//! subject to  Σ_i Σ_{k ∈ K_i} a_i^r(k)·x_ik ≤ C^r      r = 1..d   (capacity rows)
//!             Σ_{k ∈ K_i ∪ {0}} x_ik = 1               every i    (one option per job)
//!             x_ik ∈ {0, 1}
//! ```
//!
//! Options that another option (or waiting) beats in both usage and cost
//! are dropped first; that never changes the optimum.
//!
//! # LP, vertex property, rounding
//!
//! The LP relaxation is solved by simplex without presolve. At a vertex,
//! at most `d` groups are fractional: with one slack per capacity row, a
//! basic solution has at most `n + d` positive variables, at most
//! `n + t` of them in `x` when `t` rows are tight; every group has one
//! positive value and a fractional group two, so `n + |F| ≤ n + t ≤ n + d`.
//! Integral groups keep their option; the fractional ones, in the best of
//! all orders (up to five groups) or by decreasing regret, take their
//! cheapest option that fits what is left (waiting always fits). An
//! improvement pass then lets every job, shortest first, switch to a
//! strictly cheaper fitting option.
//!
//! # Guarantee (the crate's)
//!
//! `J ≤ LP + Σ_{i∈F}(ω_i − c_i^min) ≤ OPT + d·max_i(ω_i − c_i^min)`: each
//! rounded group pays at most `ω_i` instead of its LP mix, which costs at
//! least `c_i^min`, and the improvement pass only lowers `J`. The
//! certificate's bound is `LB(π) = Σ_i min_k(c_i(k) + π·a_i(k)) − π·C` at
//! the LP's capacity prices, a Lagrangian bound valid whatever the solver's
//! accuracy. The guarantee refers to the aggregate capacity; when the
//! per-machine placement changes a configuration it is kept but marked not
//! valid ("placement adjusted").
//!
//! # Outer selection
//!
//! Under [`Selection::Best`] the joint plan competes with prefix plans that
//! admit only the `q` jobs with the shortest best standalone time; each plan
//! is scored by [`evaluate_plan`], an event simulation of the plan without
//! further arrivals, and the smallest estimated sum of completion times
//! wins. [`Selection::Greedy`] needs no solver (the path without the
//! `highs` feature).
//!
//! [`continuous`] treats one divisible resource with concave throughputs
//! instead of discrete configurations (Frank–Wolfe with a duality gap).
//!
//! # Example
//!
//! The rounding example: one GPU row of 5 GPUs, two jobs. The LP mixes job
//! A's 2- and 4-GPU options half and half (value 10); rounding gives A its
//! 2-GPU option (cost 11, the optimum), within the additive bound
//! `10 + (20 − 4) = 26`.
//!
//! ```
//! use dmlsched::algorithms::smd::*;
//! use dmlsched::model::JobId;
//! let opt = |gpus: f64, cost: f64| EpochOption { config: (gpus as u32, 1), usage: vec![gpus], cost };
//! let a = Group::new(JobId(0), 20.0, vec![opt(1.0, 10.0), opt(2.0, 6.0), opt(4.0, 4.0)]);
//! let b = Group::new(JobId(1), 16.0, vec![opt(1.0, 8.0), opt(2.0, 5.0), opt(4.0, 3.5)]);
//! let p = EpochProblem::new(vec![5.0], vec![5.0], vec![a, b])?;
//! # #[cfg(feature = "highs")] {
//! let s = solve_mcmdk(&p, &[false, false], false, &SmdParams::default())?;
//! let lp = s.lp.as_ref().unwrap();
//! assert!((lp.value - 10.0).abs() < 1e-7); // capacity rows carry a 10⁻⁹ relative tolerance
//! assert_eq!(lp.fractional, vec![0]);
//! assert_eq!(s.objective, 11.0);
//! assert!((s.guarantee_value.unwrap() - 26.0).abs() < 1e-7);
//! # }
//! # Ok::<(), SmdError>(())
//! ```

mod build;
pub mod continuous;
mod epoch;
mod error;
mod params;
mod place;
mod policy;
mod problem;
mod run;
mod select;
mod solve;
mod window;

pub(crate) use build::build_problem;
pub use build::{Candidate, EpochJob, candidates};
pub use epoch::{GUARANTEE, SmdDecision, SmdEpoch, SmdEpochReport, epoch};
pub use error::SmdError;
pub use params::{
    DEFAULT_WINDOW, ExactMode, MAX_PERMUTATION_GROUPS, Selection, SmdParams, WaitCharge,
};
pub use policy::SmdScheduler;
pub use problem::{EpochOption, EpochProblem, Group, WaitJob, wait_charges};
pub use run::{Smd, SmdReport, check_slotted};
pub use select::{PlanMode, Selected, evaluate_plan, select};
pub use solve::{FRACTION_TOL, LpRelaxation, McmdkSolution, Plan, solve_mcmdk};
