//! Heterogeneity-aware allocation policies: what fraction of time each job
//! spends on each GPU type, as certified linear programs.
//!
//! The policies are those of Gavel (Narayanan, Santhanam, Kazhamiaka,
//! Phanishayee, Zaharia, OSDI 2020), which solves them as convex programs.
//! Here each is an LP solved by HiGHS (finish-time fairness a bisection of
//! LPs), and each answer comes with a [`Certificate`]: the objective of the
//! returned allocation and a bound on the optimum from the LP's duals that
//! holds whatever the solver's tolerances ([`LinearProgram::dual_bound`](crate::lp::LinearProgram::dual_bound)).
//!
//! # The allocation
//!
//! `X[i][j]` is the fraction of time job `i` runs on GPUs of type `j`, under
//! Gavel's constraints: `X ≥ 0`; `Σ_j X[i][j] ≤ 1` (a job runs on one type
//! at a time); `Σ_i s_i·X[i][j] ≤ n_j` (type `j`'s `n_j` GPUs are not
//! over-committed on average), where `s_i` is job `i`'s scale factor (its
//! GPU count). With `T_ij` job `i`'s throughput on its `s_i` GPUs of type
//! `j` (steps per second), its effective throughput is `t_i(X) = Σ_j
//! T_ij·X[i][j]`.
//!
//! | policy | objective |
//! |---|---|
//! | [`MaxMinFairness`](AllocationPolicy::MaxMinFairness) (`max-min-fairness`) | maximise `min_i (s_i/w_i)·Σ_j X_ij` (least attained service) |
//! | [`MaxMinFairnessPerf`](AllocationPolicy::MaxMinFairnessPerf) (`max-min-fairness-perf`) | maximise `min_i (s_i/w_i)·t_i(X)/p_i`, `p_i = Σ_j T_ij·n_j/N` |
//! | [`FinishTimeFairness`](AllocationPolicy::FinishTimeFairness) (`finish-time-fairness`) | minimise `max_i ρ_i`, `ρ_i = (E_i + R_i/t_i(X))/(R_i/iso_i)` |
//! | [`MaxSumThroughput`](AllocationPolicy::MaxSumThroughput) (`max-sum-throughput`) | maximise `Σ_i t_i(X)` |
//! | [`MaxThroughputPerCost`](AllocationPolicy::MaxThroughputPerCost) (`max-throughput-per-cost`) | maximise `Σ_i Σ_j T_ij·X_ij/price_j` |
//! | [`MinMakespan`](AllocationPolicy::MinMakespan) (`min-makespan`) | minimise `max_i R_i/t_i(X)` |
//! | [`Fifo`](AllocationPolicy::Fifo), [`FifoPerf`](AllocationPolicy::FifoPerf) (`fifo`, `fifo-perf`) | none: each job in id order on one type while capacity lasts |
//!
//! `w_i` is the job's weight, `R_i` its steps remaining, `E_i` the time it
//! has spent in the system, `N = Σ_j n_j`, `m` the number of jobs, and
//! `iso_i = Σ_j T_ij·y_ij` its throughput on its isolated share `y_ij =
//! (n_j/(m·s_i)) / max(1, N/(m·s_i))`. The docs' algorithms guide (section
//! "Allocation policies") derives each LP.
//!
//! ```
//! # #[cfg(feature = "highs")] {
//! use dmlsched::allocate::{AllocationInput, AllocationJob, AllocationPolicy, allocate};
//!
//! // Two jobs, one V100 and one K80: job 0 gains 4x on the V100, job 1 2x.
//! let input = AllocationInput::new([("v100", 1), ("k80", 1)])
//!     .with_job(AllocationJob::new(0, [("v100", 4.0), ("k80", 1.0)]))
//!     .with_job(AllocationJob::new(1, [("v100", 2.0), ("k80", 1.0)]));
//! let a = allocate(AllocationPolicy::MaxSumThroughput, &input)?;
//! assert!((a.objective.unwrap() - 5.0).abs() < 1e-9); // job 0 on the V100, job 1 on the K80
//! assert!((a.fraction(0, "v100").unwrap() - 1.0).abs() < 1e-9);
//! let c = a.certificate.as_ref().unwrap();
//! assert!(c.relaxation_bound.value >= 5.0 - 1e-9); // the dual bound
//! # }
//! # Ok::<(), dmlsched::allocate::AllocationError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::certificate::Certificate;
use crate::lp::LpError;

mod fifo;
mod finish_time_fairness;
mod input;
mod max_min_fairness;
mod max_sum_throughput;
mod min_makespan;
mod program;
mod rounds;
mod throughput_per_cost;

pub use input::{AllocationInput, AllocationJob, MAX_CELLS, MAX_JOBS, MAX_TYPES};
pub use rounds::{JobRounds, RoundParams, Rounds, RoundsGaps, RoundsReport};

/// An allocation policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum AllocationPolicy {
    /// Maximise the least `(s_i/w_i)·Σ_j X_ij` (heterogeneity-agnostic
    /// least attained service).
    MaxMinFairness,
    /// Maximise the least `(s_i/w_i)·t_i(X)/p_i`, the throughput against
    /// the proportional share's.
    MaxMinFairnessPerf,
    /// Minimise the largest finish-time fairness `ρ_i` (bisection of LPs).
    FinishTimeFairness,
    /// Maximise the total effective throughput.
    MaxSumThroughput,
    /// Maximise the total throughput per dollar.
    MaxThroughputPerCost,
    /// Minimise the time until every job's remaining steps are done.
    MinMakespan,
    /// Each job in id order on the first type by name with room.
    Fifo,
    /// Each job in id order on its fastest type with room.
    FifoPerf,
}

impl AllocationPolicy {
    /// Every policy, in the order of the module's table.
    pub const ALL: [AllocationPolicy; 8] = [
        AllocationPolicy::MaxMinFairness,
        AllocationPolicy::MaxMinFairnessPerf,
        AllocationPolicy::FinishTimeFairness,
        AllocationPolicy::MaxSumThroughput,
        AllocationPolicy::MaxThroughputPerCost,
        AllocationPolicy::MinMakespan,
        AllocationPolicy::Fifo,
        AllocationPolicy::FifoPerf,
    ];

    /// The policy's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            AllocationPolicy::MaxMinFairness => "max-min-fairness",
            AllocationPolicy::MaxMinFairnessPerf => "max-min-fairness-perf",
            AllocationPolicy::FinishTimeFairness => "finish-time-fairness",
            AllocationPolicy::MaxSumThroughput => "max-sum-throughput",
            AllocationPolicy::MaxThroughputPerCost => "max-throughput-per-cost",
            AllocationPolicy::MinMakespan => "min-makespan",
            AllocationPolicy::Fifo => "fifo",
            AllocationPolicy::FifoPerf => "fifo-perf",
        }
    }

    /// Whether the policy reads each job's `steps_remaining`.
    pub fn needs_steps(self) -> bool {
        matches!(
            self,
            AllocationPolicy::FinishTimeFairness | AllocationPolicy::MinMakespan
        )
    }
}

impl fmt::Display for AllocationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AllocationPolicy {
    type Err = AllocationError;

    /// Reads a policy's command-line name.
    fn from_str(s: &str) -> Result<AllocationPolicy, AllocationError> {
        AllocationPolicy::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| AllocationError::UnknownPolicy {
                name: s.to_string(),
            })
    }
}

/// A finish-time-fairness bisection's bracket on the optimum `ρ*`: every
/// `ρ` below `infeasible_below` is proven infeasible (by an LP's dual
/// bound), and the returned allocation reaches `feasible_at`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Bracket {
    /// A lower bound on `ρ*`.
    pub infeasible_below: f64,
    /// The largest `ρ_i` of the returned allocation, an upper bound on `ρ*`.
    pub feasible_at: f64,
    /// LPs solved.
    pub steps: u32,
}

/// The answer of [`allocate`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Allocation {
    /// The policy.
    pub policy: AllocationPolicy,
    /// The GPU types, by name: the columns of [`fractions`](Self::fractions).
    pub types: Vec<String>,
    /// The jobs' ids: the rows of [`fractions`](Self::fractions), in input
    /// order.
    pub job_ids: Vec<u64>,
    /// `X[i][j]`: the fraction of time job `i` spends on type `j`; every
    /// entry in `[0, 1]` and every constraint met exactly (the solver's
    /// point is scaled down where it overshoots by its tolerance).
    pub fractions: Vec<Vec<f64>>,
    /// The policy's objective at [`fractions`](Self::fractions); `None` for
    /// `fifo` and `fifo-perf`.
    pub objective: Option<f64>,
    /// Each job's effective throughput `t_i(X)`, steps per second.
    pub effective_throughput: Vec<f64>,
    /// The LP policies' certificate: the objective, and a bound on the
    /// optimum from the LP's duals (finish-time fairness: the bracket's
    /// lower end). `None` for `fifo` and `fifo-perf`.
    pub certificate: Option<Certificate>,
    /// Finish-time fairness's bisection bracket.
    pub bracket: Option<Bracket>,
}

impl Allocation {
    /// `X` of job `id` on type `gpu_type`, if both exist.
    pub fn fraction(&self, id: u64, gpu_type: &str) -> Option<f64> {
        let i = self.job_ids.iter().position(|&j| j == id)?;
        let j = self.types.iter().position(|t| t == gpu_type)?;
        Some(self.fractions[i][j])
    }

    /// The fractions as `id → type → x`.
    pub fn by_id(&self) -> BTreeMap<u64, BTreeMap<String, f64>> {
        self.job_ids
            .iter()
            .zip(&self.fractions)
            .map(|(&id, row)| {
                (
                    id,
                    self.types
                        .iter()
                        .cloned()
                        .zip(row.iter().copied())
                        .collect(),
                )
            })
            .collect()
    }

    /// The answer as `dmlsched allocate` prints it
    /// (docs/allocate-format.md): `policy`, `objective` (`null` for the
    /// FIFO policies), `allocation` (`"<id>": {"<type>": x}`),
    /// `effective_throughput` (`"<id>": t_i`) and `certificate` (`null`
    /// for the FIFO policies; else the certificate's fields, each job's
    /// effective throughput, and finish-time fairness's `bracket`).
    #[cfg(feature = "serde")]
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{Value, json};
        let effective: serde_json::Map<String, Value> = self
            .job_ids
            .iter()
            .zip(&self.effective_throughput)
            .map(|(id, t)| (id.to_string(), json!(t)))
            .collect();
        let allocation: serde_json::Map<String, Value> = self
            .by_id()
            .into_iter()
            .map(|(id, row)| (id.to_string(), json!(row)))
            .collect();
        let certificate = self.certificate.as_ref().map(|c| {
            let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut v {
                map.insert(
                    "effective_throughput".into(),
                    Value::Object(effective.clone()),
                );
                if let Some(b) = &self.bracket {
                    map.insert("bracket".into(), json!(b));
                }
            }
            v
        });
        json!({
            "policy": self.policy.name(),
            "objective": self.objective,
            "allocation": allocation,
            "effective_throughput": effective,
            "certificate": certificate,
        })
    }
}

/// Why [`allocate`] gave no allocation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AllocationError {
    /// A field of the input is missing or out of range.
    #[error("{what}: {reason}")]
    InvalidInput {
        /// The field, e.g. `job 3: throughput.k80`.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No policy has this name.
    #[error(
        "unknown allocation policy `{name}` (known: max-min-fairness, max-min-fairness-perf, finish-time-fairness, max-sum-throughput, max-throughput-per-cost, min-makespan, fifo, fifo-perf)"
    )]
    UnknownPolicy {
        /// The name given.
        name: String,
    },
    /// The input is not valid JSON of the allocation format.
    #[cfg(feature = "serde")]
    #[error("not an allocation input: {0}")]
    Json(#[from] serde_json::Error),
    /// The LP could not be built or solved (including a missing solver
    /// without the `highs` feature).
    #[error("linear programming: {0}")]
    Lp(#[from] LpError),
    /// The solver ended without an optimal point.
    #[error("the solver ended with status {status} on the {policy} LP")]
    Solver {
        /// The policy.
        policy: AllocationPolicy,
        /// The solver's status, in words.
        status: String,
    },
}

impl AllocationError {
    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> AllocationError {
        AllocationError::InvalidInput {
            what: what.into(),
            reason: reason.into(),
        }
    }

    /// Whether the error is about the input (a user's fix), not a run.
    pub fn is_input(&self) -> bool {
        match self {
            AllocationError::InvalidInput { .. } | AllocationError::UnknownPolicy { .. } => true,
            #[cfg(feature = "serde")]
            AllocationError::Json(_) => true,
            AllocationError::Lp(e) => !matches!(e, LpError::SolverUnavailable),
            AllocationError::Solver { .. } => false,
        }
    }
}

/// The allocation of `policy` on `input`.
///
/// # Errors
///
/// [`AllocationError::InvalidInput`] naming the job and field when the
/// input does not fit the policy (see [`AllocationInput::validate`]);
/// [`AllocationError::Lp`] or [`AllocationError::Solver`] when the LP
/// cannot be solved (without the `highs` feature, every LP policy returns
/// [`LpError::SolverUnavailable`]).
pub fn allocate(
    policy: AllocationPolicy,
    input: &AllocationInput,
) -> Result<Allocation, AllocationError> {
    input.validate(policy)?;
    let view = program::View::new(input);
    match policy {
        AllocationPolicy::MaxMinFairness => max_min_fairness::solve(&view, false),
        AllocationPolicy::MaxMinFairnessPerf => max_min_fairness::solve(&view, true),
        AllocationPolicy::FinishTimeFairness => finish_time_fairness::solve(&view),
        AllocationPolicy::MaxSumThroughput => max_sum_throughput::solve(&view),
        AllocationPolicy::MaxThroughputPerCost => throughput_per_cost::solve(&view),
        AllocationPolicy::MinMakespan => min_makespan::solve(&view),
        AllocationPolicy::Fifo => Ok(fifo::solve(&view, false)),
        AllocationPolicy::FifoPerf => Ok(fifo::solve(&view, true)),
    }
}
