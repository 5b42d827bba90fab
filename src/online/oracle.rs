//! The pricing-oracle plug-in point: the job-model-specific best response
//! at the current prices, and the realised factor of cost-approximate oracles.

use crate::error::Result;
use crate::model::MachineId;

use super::bounds::BoundInputs;
use super::ledger::ResourceId;
use super::prices::PriceView;

/// One consumption entry `q_m^r(t)` of a plan (slot 0-based).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Consumption {
    /// The machine.
    pub machine: MachineId,
    /// The resource.
    pub resource: ResourceId,
    /// The 0-based slot.
    pub slot: u32,
    /// The amount `q ≥ 0`, in the ledger's units.
    pub amount: f64,
}

/// A plan the framework can commit: its per-cell consumption and completion
/// slot. Model-specific detail (worker counts, placement) is the
/// implementor's business.
pub trait Reservation {
    /// Every consumption entry; a cell may appear several times (amounts
    /// add up).
    fn consumption(&self) -> impl Iterator<Item = Consumption> + '_;
    /// The last slot with work, 0-based (`t̂`).
    fn completion_slot(&self) -> u32;
}

/// The quality an oracle claims for one response; it decides the `ρ` of the
/// ratio `OPT ≤ 2α·ρ·ALG` (1 for `Exact`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum OracleQuality {
    /// The plan maximises the payoff over all feasible plans.
    Exact,
    /// Deterministically `payoff ≥ max payoff / rho` (`rho ≥ 1`).
    PayoffApprox {
        /// The factor `ρ ≥ 1`.
        rho: f64,
    },
    /// Cost within a realised factor of per-deadline lower bounds, given in
    /// [`Response::deadline_bounds`] (LP rounding); see [`realised_factor`].
    CostApprox,
    /// No guarantee, no bounds.
    Heuristic,
}

/// For one examined deadline (completion slot): the utility of finishing
/// there and a lower bound on the cost of any plan that does (for
/// [`realised_factor`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeadlineBound {
    /// The completion slot `t̂`, 0-based.
    pub slot: u32,
    /// `f_i(t̂ − a_i)`.
    pub utility: f64,
    /// `LB(t̂) ≥ 0`, a lower bound on the minimum cost of a plan completing
    /// at `t̂` (`+∞` when no plan does).
    pub cost_lower_bound: f64,
}

/// An oracle's answer for one job at one price view.
#[derive(Debug, Clone, PartialEq)]
pub struct Response<P> {
    /// The best plan found, or `None` when no feasible plan with positive
    /// payoff was found.
    pub plan: Option<P>,
    /// `f_i(t̂ − a_i)` of `plan` at its actual completion slot (0 if `None`).
    pub utility: f64,
    /// `Σ p·q` of `plan` at the view's prices (0 if `None`); recomputed and
    /// checked by the framework.
    pub cost: f64,
    /// The quality of this answer.
    pub quality: OracleQuality,
    /// Per-deadline bounds, required for [`OracleQuality::CostApprox`].
    pub deadline_bounds: Vec<DeadlineBound>,
}

impl<P> Response<P> {
    /// An exact answer with a plan.
    pub fn exact(plan: P, utility: f64, cost: f64) -> Self {
        Response {
            plan: Some(plan),
            utility,
            cost,
            quality: OracleQuality::Exact,
            deadline_bounds: Vec::new(),
        }
    }

    /// An exact answer: no feasible plan with positive payoff.
    pub fn none() -> Self {
        Response {
            plan: None,
            utility: 0.0,
            cost: 0.0,
            quality: OracleQuality::Exact,
            deadline_bounds: Vec::new(),
        }
    }

    /// Sets the quality.
    pub fn with_quality(mut self, quality: OracleQuality) -> Self {
        self.quality = quality;
        self
    }
}

/// The job-model-specific best-response oracle.
///
/// Requirements: maximise `utility − cost` over plans that fit the view's
/// residual capacity and the job model (slots in `[a_i, T)`), evaluate
/// `utility` at the plan's actual completion slot, never mutate anything the
/// framework owns, and be deterministic given its inputs (a randomised oracle
/// seeds its RNG from its own seed and `job_index`).
pub trait PricingOracle {
    /// The job type.
    type Job;
    /// The plan type.
    type Plan: Reservation;

    /// Bound inputs of `job` (see [`BoundInputs`]) for a horizon of `horizon` slots; called
    /// for every job when bounds are derived and again when it arrives.
    ///
    /// # Errors
    ///
    /// Whatever the job model reports for an invalid job.
    fn bound_inputs(&self, job: &Self::Job, horizon: u32) -> Result<BoundInputs>;

    /// Whether every job's [`BoundInputs::ln_u_max`] is the utility of a
    /// plan that fits the empty cluster on its own (attained, not only an
    /// upper bound). Then `OPT ≥ max_i f_i(δ_min,i)` over the jobs stepped,
    /// and [`OnlinePrimalDual::finish`](super::OnlinePrimalDual::finish)
    /// takes `D_0 ≤ OPT/2` as shown when `2·D_0` is at most that maximum,
    /// without the witness search. Default `false`.
    fn u_max_attained(&self) -> bool {
        false
    }

    /// Best plan for `job` (the `job_index`-th in arrival order) at the prices
    /// and residual capacities of `view`.
    ///
    /// # Errors
    ///
    /// The oracle's own failures; they stop the run.
    fn best_response(
        &mut self,
        job_index: usize,
        job: &Self::Job,
        view: &PriceView<'_>,
    ) -> Result<Response<Self::Plan>>;
}

/// The realised cost-approximation factor `ρ̂_i`: the smallest
/// `ρ ≥ 1` with `µ̂⁺ ≥ f(t̂) − ρ·LB(t̂)` for every examined deadline, where
/// `µ̂⁺ = max(0, best_payoff)`.
///
/// Deadlines with `LB = +∞` (no plan) are skipped; a deadline with `LB = 0`
/// and `f > µ̂⁺` gives `+∞`. Deadlines the oracle did not examine need no
/// bound when they were skipped by the rule "stop when `f ≤ µ̂⁺`".
///
/// ```
/// use dmlsched::online::{realised_factor, DeadlineBound};
/// let b = [
///     DeadlineBound { slot: 0, utility: 10.0, cost_lower_bound: 4.0 },
///     DeadlineBound { slot: 1, utility: 6.0, cost_lower_bound: f64::INFINITY },
/// ];
/// // best payoff 2: (10 − 2)/4 = 2.
/// assert_eq!(realised_factor(&b, 2.0), 2.0);
/// assert_eq!(realised_factor(&b, 7.0), 1.0);
/// ```
pub fn realised_factor(bounds: &[DeadlineBound], best_payoff: f64) -> f64 {
    let mu = best_payoff.max(0.0);
    let mut rho = 1.0_f64;
    for b in bounds {
        let lb = b.cost_lower_bound;
        if lb == f64::INFINITY || b.utility <= mu {
            continue;
        }
        if lb.is_nan() || lb <= 0.0 {
            return f64::INFINITY;
        }
        rho = rho.max((b.utility - mu) / lb);
    }
    rho
}
