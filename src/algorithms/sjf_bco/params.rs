//! Parameters of SJF-BCO and its baselines, with their defaults.

use super::error::SjfBcoError;
use super::formulation::TimeIndexedOptions;
use super::model::TimeModel;
use super::sim::StartRule;
use crate::timing::ProgressMode;

/// How FA-FFP picks GPUs among the candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum FaFfpStrategy {
    /// The `G_j` candidates with least `U`, ties by server then local index
    /// (the paper's pseudo-code; default).
    #[default]
    LeastAccumulated,
    /// The paper's stated intent: servers already running a job first, then
    /// the server with the fewest candidates that still holds the job (best
    /// fit), then index; all GPUs from the first server that holds the job,
    /// else server by server, least `U` first inside each server.
    PackOccupied,
}

/// Which GPUs are candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Availability {
    /// Idle at the trial's clock and within budget (default): a job waits
    /// for running jobs to finish.
    #[default]
    IdleAndBudget,
    /// Within budget only (reservations): a job starts when the last of its
    /// GPUs frees, and a trial fails as soon as too few GPUs have budget.
    BudgetOnly,
}

/// Provisional duration of a job when a trial places it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum DurationEstimate {
    /// `⌈F_j·τ_j⌉` (or `⌈F_j/⌊1/τ_j⌋⌉` in `Floor` mode) with `τ_j` for the
    /// chosen GPUs and the contention of the jobs active at placement
    /// (default).
    #[default]
    AtPlacement,
    /// `⌈ρ̂_j⌉`.
    Estimate,
}

/// How a successful trial is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum TrialEval {
    /// Re-simulate the placement slot by slot with contention (default).
    #[default]
    Resimulate,
    /// The largest provisional end (the paper's literal `max T_j`).
    Provisional,
}

/// How the budget `θ` is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BisectionRule {
    /// The paper's rule: move to smaller budgets only on a strict
    /// improvement of the best makespan (default).
    #[default]
    PaperImprovement,
    /// Smallest budget at which some trial places every job, by standard
    /// bisection (assumes monotonicity; the report says when a probe
    /// contradicted it).
    Feasibility,
}

/// The LBSGF spreading factor `λ_j ≥ 1`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum LambdaSpec {
    /// The same `λ` for every job (default `Uniform(1.0)`).
    Uniform(f64),
    /// One `λ` per job, in instance order.
    PerJob(Vec<f64>),
}

impl Default for LambdaSpec {
    fn default() -> Self {
        LambdaSpec::Uniform(1.0)
    }
}

/// The κ values searched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum KappaSpec {
    /// Every `κ ∈ 1..=n_g`, run as `{1} ∪ {distinct G_j}` (the other values
    /// split the jobs the same way as the next smaller of these; default).
    #[default]
    All,
    /// One κ.
    Fixed(u32),
    /// These κ values (each ≥ 1), in ascending order.
    List(Vec<u32>),
}

/// Parameters of [`SjfBco`](super::SjfBco) and of the baselines
/// ([`RarFf`](super::RarFf), [`RarLs`](super::RarLs),
/// [`RarRand`](super::RarRand), which ignore κ, λ and the FA-FFP strategy).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct SjfBcoParams {
    /// `u ≥ 1`: estimates satisfy `ρ̂_j/u ≤ ρ_j` (default 1.15).
    pub est_upper: f64,
    /// `l ∈ (0, 1]`: `l·ρ_j ≤ ρ̂_j` (reported only; default 0.85).
    pub est_lower: f64,
    /// LBSGF's `λ`.
    pub lambda: LambdaSpec,
    /// κ values searched.
    pub kappas: KappaSpec,
    /// FA-FFP's GPU choice.
    pub faffp: FaFfpStrategy,
    /// Candidate rule.
    pub availability: Availability,
    /// Provisional durations.
    pub duration: DurationEstimate,
    /// How trials are scored.
    pub trial_eval: TrialEval,
    /// Budget search.
    pub bisection: BisectionRule,
    /// Progress per slot.
    pub progress: ProgressMode,
    /// Slot simulator start rule.
    pub start_rule: StartRule,
    /// How `τ` is computed.
    pub time_model: TimeModel,
    /// `T`: the bisection's upper end and the "nothing better" sentinel,
    /// slots (`None`: the instance's horizon).
    pub horizon: Option<u64>,
    /// Slot simulator guard (`None`: `100·T`).
    pub max_sim_slots: Option<u64>,
    /// `ρ̂_j` in slots, one per job in instance order (`None`: `F_j·τ⁰_j`,
    /// the uncontended single-server time on the fastest machine).
    pub estimates: Option<Vec<f64>>,
    /// Also solve the time-indexed exact ILP
    /// ([`solve_time_indexed`](super::formulation::solve_time_indexed), at
    /// most [`TimeIndexedOptions::max_jobs`] jobs, HiGHS without presolve)
    /// over each job's proven shortest execution time, and certify its dual
    /// bound when it beats the closed form (`None`, the default: closed form
    /// only). Its optimum is under contention-free durations: a **lower
    /// bound** on the contention model's optimum, exact only under
    /// [`TimeModel::FixedDuration`] with fractional progress.
    pub time_indexed_bound: Option<TimeIndexedOptions>,
}

impl Default for SjfBcoParams {
    fn default() -> Self {
        SjfBcoParams {
            est_upper: 1.15,
            est_lower: 0.85,
            lambda: LambdaSpec::default(),
            kappas: KappaSpec::All,
            faffp: FaFfpStrategy::LeastAccumulated,
            availability: Availability::IdleAndBudget,
            duration: DurationEstimate::AtPlacement,
            trial_eval: TrialEval::Resimulate,
            bisection: BisectionRule::PaperImprovement,
            progress: ProgressMode::Fractional,
            start_rule: StartRule::PerGpuFifo,
            time_model: TimeModel::Rar,
            horizon: None,
            max_sim_slots: None,
            estimates: None,
            time_indexed_bound: None,
        }
    }
}

fn invalid(name: &'static str, reason: impl Into<String>) -> SjfBcoError {
    SjfBcoError::InvalidOption {
        name,
        reason: reason.into(),
    }
}

impl SjfBcoParams {
    /// Checks the options that do not depend on the instance.
    ///
    /// # Errors
    ///
    /// [`SjfBcoError::InvalidOption`].
    pub fn validate(&self) -> Result<(), SjfBcoError> {
        if !(self.est_upper.is_finite() && self.est_upper >= 1.0) {
            return Err(invalid(
                "est_upper",
                format!("u = {} is not ≥ 1", self.est_upper),
            ));
        }
        if !(self.est_lower > 0.0 && self.est_lower <= 1.0) {
            return Err(invalid(
                "est_lower",
                format!("l = {} is not in (0, 1]", self.est_lower),
            ));
        }
        let lambdas: &[f64] = match &self.lambda {
            LambdaSpec::Uniform(l) => std::slice::from_ref(l),
            LambdaSpec::PerJob(v) => v,
        };
        if let Some(l) = lambdas.iter().find(|l| !(l.is_finite() && **l >= 1.0)) {
            return Err(invalid("lambda", format!("λ = {l} is not finite and ≥ 1")));
        }
        match &self.kappas {
            KappaSpec::Fixed(0) => return Err(invalid("kappas", "κ must be ≥ 1")),
            KappaSpec::List(v) if v.is_empty() || v.contains(&0) => {
                return Err(invalid("kappas", "a non-empty list of κ ≥ 1"));
            }
            _ => {}
        }
        if self.horizon == Some(0) {
            return Err(invalid("horizon", "T must be ≥ 1"));
        }
        if self.max_sim_slots == Some(0) {
            return Err(invalid("max_sim_slots", "must be ≥ 1"));
        }
        if let Some(t) = &self.time_indexed_bound {
            // Checked here, before any run, not when the bound is solved.
            t.limits.validate().map_err(|e| {
                invalid(
                    "time_indexed_bound.limits",
                    e.to_string()
                        .trim_start_matches("invalid option ")
                        .to_string(),
                )
            })?;
            if t.max_jobs == 0 {
                return Err(invalid("time_indexed_bound.max_jobs", "must be ≥ 1"));
            }
        }
        Ok(())
    }

    /// `λ_j` of the job at instance position `j`.
    pub(crate) fn lambda_of(&self, j: usize) -> f64 {
        match &self.lambda {
            LambdaSpec::Uniform(l) => *l,
            LambdaSpec::PerJob(v) => v.get(j).copied().unwrap_or(1.0),
        }
    }
}
