//! What a run of SJF-BCO or of a baseline reports besides its certificate.

use super::formulation::MipReport;
use super::params::SjfBcoParams;
use super::sim::{RarAssignment, RarExecution};

/// One trial of the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TrialRecord {
    /// The budget `θ`.
    pub theta: u64,
    /// The κ (`None` for a baseline's single rule).
    pub(crate) kappa: Option<u32>,
    /// The trial's makespan, `None` for a failed trial.
    pub(crate) makespan: Option<u64>,
}

/// The paper's approximation claim, kept for the record and marked not
/// valid.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PaperClaim {
    /// The statement, with its source.
    pub statement: String,
    /// `n_g·u/l`: the claimed ratio with `φ = 1` (the claim multiplies it by
    /// `φ ≥ 1`, the largest ratio of one job's execution times over two
    /// schedules, which no run can observe).
    pub ratio_at_phi_one: f64,
    /// Always `false`.
    pub valid: bool,
    /// Why it is not valid.
    pub(crate) reason: String,
}

impl PaperClaim {
    /// The claim for largest job `n_g` and the run's `u`, `l`.
    pub(crate) fn new(largest_job: u32, params: &SjfBcoParams) -> Self {
        PaperClaim {
            statement: "SJF-BCO is n_g·φ·u/l-approximate for the makespan \
                        (Yu, Ji, Rajan, Liu, ACM MobiHoc 2022, Theorem 5) — paper's claim, not valid"
                .into(),
            ratio_at_phi_one: f64::from(largest_job) * params.est_upper / params.est_lower,
            valid: false,
            reason: "false as stated: its step 'least-U-first minimises the largest GPU load' \
                     fails. One server with 2 GPUs, five 1-GPU jobs of 3, 3, 2, 2, 2 slots and \
                     exact estimates (φ = u = l = 1, claimed ratio 1): SJF-BCO's makespan is 7, \
                     the optimum 6. A ratio of 1 would also solve P||Cmax, which is NP-hard, \
                     in polynomial time."
                .into(),
        }
    }
}

/// Diagnostics of a run of [`SjfBco`](super::SjfBco) or of a baseline.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct SjfBcoReport {
    /// `sjf-bco`, `rar-ff`, `rar-ls` or `rar-rand`.
    pub(crate) algorithm: String,
    /// `T`, slots.
    pub(crate) horizon: u64,
    /// The returned placement, in instance order.
    pub assignments: Vec<RarAssignment>,
    /// Its slot simulation with contention.
    pub execution: RarExecution,
    /// Simulated makespan (may exceed `T`).
    pub makespan_raw: u64,
    /// `min(makespan_raw, T)`, the value comparable with the paper's plots.
    pub makespan_reported: u64,
    /// `makespan_raw ≤ T`.
    pub within_horizon: bool,
    /// `θ̃`: the tightest budget at which the returned placement was found
    /// (`None` for RAND, which runs one trial at `θ = T`).
    pub theta_tilde: Option<u64>,
    /// κ of the returned placement (SJF-BCO only).
    pub kappa_star: Option<u32>,
    /// `max_g U[g]` of the returned trial (≤ `θ̃`).
    pub w_hat_max: f64,
    /// `max(max_j ρ̂_j/u, Σ_j G_j ρ̂_j/(uN))`: a lower bound on the makespan
    /// whenever `ρ̂_j/u ≤ ρ_j`.
    pub lower_bound: f64,
    /// The certificate's bound: the same closed form over each job's proven
    /// shortest execution time with `u = 1`, rounded up to whole slots.
    pub certified_bound: f64,
    /// Trials run.
    pub trials: u32,
    /// Trials that did not place every job.
    pub(crate) failed_trials: u32,
    /// Every trial, in order.
    pub trace: Vec<TrialRecord>,
    /// Feasibility bisection only: a feasible budget was probed below an
    /// infeasible one.
    pub(crate) non_monotone: bool,
    /// The paper's approximation claim, not valid.
    pub paper_claim: PaperClaim,
    /// The time-indexed bound, when
    /// [`SjfBcoParams::time_indexed_bound`] asked for it.
    pub time_indexed: Option<TimeIndexedBound>,
}

/// The time-indexed exact ILP over each job's proven shortest execution
/// time, solved for the certificate.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TimeIndexedBound {
    /// Its dual bound rounded up to whole slots: a lower bound on the
    /// makespan of every schedule of the instance, with or without
    /// contention.
    pub lower_bound: f64,
    /// The incumbent's makespan under the contention-free durations (the
    /// optimum of that problem when [`MipReport::optimal`]); `None` without
    /// incumbent.
    pub fixed_duration_makespan: Option<u64>,
    /// Whether that optimum is also the optimum of this run's model: only
    /// under [`TimeModel::FixedDuration`](super::TimeModel::FixedDuration)
    /// with fractional progress, where every job takes its estimate on any
    /// placement. Otherwise it is a lower bound under contention, never the
    /// optimum.
    pub exact_for_model: bool,
    /// How the MIP solve ended: whether it proved its incumbent optimal
    /// ([`MipReport::optimal`]), its unrounded dual bound, gap and seconds
    /// ([`MipReport::info`]), and the program's columns and rows.
    pub report: MipReport,
}
