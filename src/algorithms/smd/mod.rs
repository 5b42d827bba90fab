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
//! is scored by an event simulation of the plan without further arrivals, and the smallest estimated sum of completion times
//! wins. [`Selection::Greedy`] needs no solver (the path without the
//! `highs` feature).
//!
//! [`continuous`] treats one divisible resource with concave throughputs
//! instead of discrete configurations (Frank–Wolfe with a duality gap).
//!
//! # Example
//!
//! The rounding example: one GPU row of 5 GPUs, two jobs, wait charges 20
//! and 16.
//!
//! ```text
//! job A: 1 GPU at cost 10, 2 GPUs at 6, 4 GPUs at 4    (wait 20)
//! job B: 1 GPU at cost 8,  2 GPUs at 5, 4 GPUs at 3.5  (wait 16)
//! ```
//!
//! The LP gives B its 2-GPU option and mixes A's 2- and 4-GPU options half
//! and half (value 10, capacity price 1, one fractional group); rounding
//! gives A its 2-GPU option (cost 11, the optimum), within the additive
//! bound `10 + (20 − 4) = 26`. [`epoch`] runs this on the jobs of an
//! instance and returns the plan with its certificate.

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
#[cfg(test)]
mod tests_internal;
mod window;
pub mod workload;

pub use build::EpochJob;
pub(crate) use build::{build_problem, candidates};
pub use epoch::{GUARANTEE, SmdDecision, SmdEpoch, SmdEpochReport, epoch};
pub use error::SmdError;
pub use params::{
    DEFAULT_WINDOW, ExactMode, MAX_PERMUTATION_GROUPS, Selection, SmdParams, WaitCharge,
};
pub use policy::SmdScheduler;
pub use run::{Smd, SmdReport, check_slotted};
pub use select::PlanMode;
#[cfg(feature = "highs")]
pub(crate) use solve::solve_mcmdk;
