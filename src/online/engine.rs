//! The online loop and its report and certificate ([algorithms guide,
//! section 6.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#online-loop-certificate)).

use crate::certificate::{Bound, BoundKind, Certificate, Guarantee, Sense};
use crate::error::Result;
use crate::model::units::Num;

use super::bounds::{BoundsOrigin, BoundsRule, PriceBounds};
use super::error::OnlineError;
use super::ledger::{CAPACITY_ABS_TOL, CAPACITY_REL_TOL, Cell, Ledger, PoolId, ResourceId};
use super::oracle::{OracleQuality, PricingOracle, Reservation, Response, realised_factor};
use super::prices::{PriceView, ledger_ln_price};

/// Options of the online loop.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct PdOptions {
    /// Admit iff `payoff > admission_epsilon` (default `0.0`: strict).
    pub admission_epsilon: f64,
    /// Recompute every job's best payoff at the final prices to form `D_end`
    /// (one extra oracle call per job; default `true`). When `false` the
    /// certificate's bound is the trivial `Σ_i f_i(δ_min,i)`.
    pub recompute_final_dual: bool,
    /// When the run's own utility does not show `D_0 ≤ OPT/2`, look for a
    /// witness job alone on the empty cluster (at most one oracle call per
    /// job; default `true`).
    pub verify_d0_condition: bool,
    /// `assumption_small_demands` holds iff `α_eff ≤ threshold·α` (default
    /// 1.5, a reporting choice: far above `α`, the run is outside the regime
    /// where the `2α` theorem applies).
    pub small_demand_threshold: f64,
    /// A practical variant for simulations and replays
    /// ([`SessionPolicy`](super::SessionPolicy)): a job rejected for its
    /// price or for lack of room is not turned away but waits, and is
    /// decided again ([`Session::resubmit`](super::Session::resubmit)) at
    /// the first slot boundary after each completion, until it is admitted,
    /// one planning window has passed since its arrival, or its utility is
    /// 0 for any completion from now. Default `false`: each job is decided once,
    /// at its arrival, as in the papers. The offline run (`solve`) decides
    /// every job once and ignores it.
    pub requeue_rejected: bool,
}

impl Default for PdOptions {
    fn default() -> Self {
        PdOptions {
            admission_epsilon: 0.0,
            recompute_final_dual: true,
            verify_d0_condition: true,
            small_demand_threshold: 1.5,
            requeue_rejected: false,
        }
    }
}

/// Why a job was rejected.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RejectReason {
    /// No plan exists even on the empty cluster; the oracle was not called.
    Unschedulable,
    /// No plan fits the residual capacities: the oracle found none with a
    /// positive payoff, and none at price 0 either.
    NoFeasiblePlan,
    /// The best plan's payoff was `≤ admission_epsilon`; or the oracle
    /// found no plan with a positive payoff while one fits (found at price
    /// 0), and `payoff` is that plan's at the current prices, at most 0.
    NonPositivePayoff {
        /// `utility − cost` of the best plan.
        payoff: f64,
    },
}

impl RejectReason {
    /// The simulator's [`Rejection`](crate::sim::Rejection) for this
    /// reason; `why` explains an unschedulable job (called only then).
    pub fn to_rejection(self, why: impl FnOnce() -> String) -> crate::sim::Rejection {
        match self {
            RejectReason::Unschedulable => crate::sim::Rejection::Unschedulable { why: why() },
            RejectReason::NoFeasiblePlan => crate::sim::Rejection::NoRoom,
            RejectReason::NonPositivePayoff { payoff } => {
                crate::sim::Rejection::NotWorthIt { payoff }
            }
        }
    }
}

/// The irrevocable decision on one job.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Decision<P> {
    /// The plan was committed for all its slots.
    Admitted {
        /// The committed plan.
        plan: P,
        /// `f_i(t̂ − a_i)`.
        utility: f64,
        /// `Σ p·q` at the prices before admission (recomputed).
        cost: f64,
        /// `utility − cost > admission_epsilon`.
        payoff: f64,
    },
    /// The job was rejected and is never reconsidered.
    Rejected(RejectReason),
}

/// Everything recorded about one job.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct JobOutcome<P> {
    /// Index in arrival order.
    pub index: usize,
    /// Arrival slot (0-based).
    pub arrival: u32,
    /// The decision.
    pub decision: Decision<P>,
    /// The quality of the oracle's response (`None` when not called).
    pub quality: Option<OracleQuality>,
    /// `ρ̂_i` for [`OracleQuality::CostApprox`] responses.
    pub rho_hat: Option<f64>,
    /// `f_i(δ_min)` (0 for unschedulable jobs), for the trivial bound.
    pub u_max: f64,
}

impl<P> JobOutcome<P> {
    /// The admitted utility, 0 when rejected.
    pub fn utility(&self) -> f64 {
        match &self.decision {
            Decision::Admitted { utility, .. } => *utility,
            Decision::Rejected(_) => 0.0,
        }
    }

    /// Whether the job was admitted.
    pub fn admitted(&self) -> bool {
        matches!(self.decision, Decision::Admitted { .. })
    }
}

/// The report of a run ([algorithms guide, section
/// 6.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#online-loop-certificate)) and its [`Certificate`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunReport<P> {
    /// Per-job outcomes in arrival order.
    pub outcomes: Vec<JobOutcome<P>>,
    /// `P = Σ` admitted utility (`ALG`).
    pub total_utility: f64,
    /// `α` of the bounds actually used (under an `L` allowance `ρ0`, the `α'`
    /// of the shrunk `L`).
    pub alpha: f64,
    /// α of the η rule on the same job list, when derivable (reported beside
    /// the value floor's).
    pub(crate) alpha_eta_rule: Option<f64>,
    /// `α_eff = max(α, max (e^{α_cell·x} − 1)/x)` over committed increments
    /// (`α_cell = ln(U/L)·c/c'` in cells with headroom prices).
    pub alpha_eff: f64,
    /// Largest fill fraction `x = Δg/c` one job added to one cell.
    pub(crate) x_max: f64,
    /// The approximation factor in the guarantee (`1` exact, `ρ` payoff
    /// approximations, `ρ0` cost approximations); `None` for heuristics.
    pub rho: Option<f64>,
    /// `max_i ρ̂_i` over cost-approximate responses.
    pub max_rho_hat: Option<f64>,
    /// `D_0 = T·Σ_κ L_κ·C_κ`.
    pub dual_initial: f64,
    /// The running dual `Σ µ̂_i + Σ c·p_final` (the paper's `D`); an upper
    /// bound on `OPT` only when [`running_dual_feasible`](Self::running_dual_feasible).
    pub dual_running: f64,
    /// `D_end`: final prices, every job's `µ` recomputed as its best payoff
    /// over all plans fitting the empty cluster (`None` when not recomputed).
    pub dual_end: Option<f64>,
    /// Whether `D_end` is a proven upper bound on `OPT` (false for heuristic
    /// oracles or an infinite realised factor).
    pub dual_end_valid: bool,
    /// `Σ_i f_i(δ_min,i)` over schedulable jobs: a trivial upper bound.
    pub trivial_bound: f64,
    /// Every recomputed `µ_i ≤` the running `µ̂_i`, so the running dual is
    /// feasible (`None` when not recomputed or with cost approximations).
    pub running_dual_feasible: Option<bool>,
    /// `α_eff ≤ threshold·α`.
    pub assumption_small_demands: bool,
    /// Bounds derived from the job list with `u_scale = 1`.
    pub(crate) clairvoyant_bounds: bool,
    /// `D_0 ≤ OPT/2` was shown (by `ALG ≥ 2·D_0`, by an attained `f_i(δ_min,i)
    /// ≥ 2·D_0` when the oracle declares
    /// [`u_max_attained`](PricingOracle::u_max_attained), or by a witness job).
    pub d0_condition_verified: bool,
    /// Why the `2αρ` guarantee is not valid (empty when valid).
    pub reasons: Vec<String>,
    /// The crate-wide certificate built from this report.
    pub certificate: Certificate,
}

/// Committed increment of one cell by one plan.
struct CellIncrement {
    index: Cell,
    pool: PoolId,
    resource: ResourceId,
    capacity: f64,
    /// The capacity `c'` in the price exponent.
    price_capacity: f64,
    amount: f64,
}

/// The generic online primal–dual admission loop ([algorithms guide,
/// section 6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#online)).
///
/// See the [module documentation](super) for the maths and an example.
#[derive(Debug)]
pub struct OnlinePrimalDual<O: PricingOracle> {
    oracle: O,
    ledger: Ledger,
    bounds: PriceBounds,
    opts: PdOptions,
    outcomes: Vec<JobOutcome<O::Plan>>,
    last_arrival: u32,
    mu_running: f64,
    alpha_eff: f64,
    x_max: f64,
    /// Why the bounds do not cover the last job stepped, if they do not.
    last_uncovered: Option<String>,
}

/// Everything of an [`OnlinePrimalDual`] but its oracle: what a saved
/// session keeps of its engine.
#[cfg(feature = "serde")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct EngineParts<P> {
    ledger: Ledger,
    bounds: PriceBounds,
    opts: PdOptions,
    outcomes: Vec<JobOutcome<P>>,
    last_arrival: u32,
    mu_running: f64,
    /// Infinite once a cell with no room under its price capacity is used
    /// (JSON has no infinity: saved as `"inf"`).
    #[serde(with = "crate::certificate::serde_inf::serde_f64")]
    alpha_eff: f64,
    x_max: f64,
}

#[cfg(feature = "serde")]
impl<P> EngineParts<P> {
    /// The number of jobs stepped.
    pub(crate) fn outcomes_len(&self) -> usize {
        self.outcomes.len()
    }
}

#[cfg(feature = "serde")]
impl<O: PricingOracle> OnlinePrimalDual<O>
where
    O::Plan: Clone,
{
    /// The engine's state without its oracle.
    pub(crate) fn parts(&self) -> EngineParts<O::Plan> {
        EngineParts {
            ledger: self.ledger.clone(),
            bounds: self.bounds.clone(),
            opts: self.opts.clone(),
            outcomes: self.outcomes.clone(),
            last_arrival: self.last_arrival,
            mu_running: self.mu_running,
            alpha_eff: self.alpha_eff,
            x_max: self.x_max,
        }
    }

    /// The engine of saved `parts` with `oracle`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new) for bounds that do not fit the ledger.
    pub(crate) fn from_parts(oracle: O, parts: EngineParts<O::Plan>) -> Result<Self> {
        let mut e = Self::new(oracle, parts.ledger, parts.bounds, parts.opts)?;
        e.outcomes = parts.outcomes;
        e.last_arrival = parts.last_arrival;
        e.mu_running = parts.mu_running;
        e.alpha_eff = parts.alpha_eff;
        e.x_max = parts.x_max;
        Ok(e)
    }
}

impl<O: PricingOracle> OnlinePrimalDual<O> {
    /// A loop over an empty `ledger` with the given bounds.
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidPriceBounds`] when the bounds do not have the
    /// ledger's pools and resources, or the options are not finite.
    pub fn new(oracle: O, ledger: Ledger, bounds: PriceBounds, opts: PdOptions) -> Result<Self> {
        bounds.fits(&ledger)?;
        if !opts.admission_epsilon.is_finite() || !opts.small_demand_threshold.is_finite() {
            return Err(OnlineError::InvalidInstance {
                reason: "admission_epsilon and small_demand_threshold must be finite".into(),
            }
            .into());
        }
        let alpha = bounds.alpha();
        Ok(OnlinePrimalDual {
            oracle,
            ledger,
            bounds,
            opts,
            outcomes: Vec::new(),
            last_arrival: 0,
            mu_running: 0.0,
            alpha_eff: alpha,
            x_max: 0.0,
            last_uncovered: None,
        })
    }

    /// A loop whose bounds are derived from the whole job list (clairvoyant)
    /// by `rule`, from the oracle's [`bound_inputs`](PricingOracle::bound_inputs).
    ///
    /// # Errors
    ///
    /// The oracle's errors, and those of [`PriceBounds::derive`].
    pub fn with_derived_bounds(
        oracle: O,
        ledger: Ledger,
        jobs: &[O::Job],
        rule: BoundsRule,
        opts: PdOptions,
    ) -> Result<Self> {
        let inputs = jobs
            .iter()
            .map(|j| oracle.bound_inputs(j, ledger.horizon()))
            .collect::<Result<Vec<_>>>()?;
        let bounds = PriceBounds::derive(&ledger, &inputs, rule)?;
        Self::new(oracle, ledger, bounds, opts)
    }

    /// The ledger (committed amounts so far).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The options of the online loop.
    pub fn options(&self) -> &PdOptions {
        &self.opts
    }

    /// The price bounds.
    pub fn bounds(&self) -> &PriceBounds {
        &self.bounds
    }

    /// The current prices and residuals.
    pub fn view(&self) -> PriceView<'_> {
        PriceView::new(&self.ledger, &self.bounds)
    }

    /// Why the last job stepped was rejected, as the simulator records it
    /// (`None` when it was admitted or no job was stepped); `why` explains
    /// an unschedulable job (called only then).
    pub fn last_rejection(&self, why: impl FnOnce() -> String) -> Option<crate::sim::Rejection> {
        match self.outcomes.last().map(|o| &o.decision) {
            Some(Decision::Rejected(r)) => Some(r.to_rejection(why)),
            _ => None,
        }
    }

    /// Why the bounds do not cover the last job stepped
    /// ([`PriceBounds::uncovered`]), if they do not.
    pub(crate) fn last_uncovered(&self) -> Option<&str> {
        self.last_uncovered.as_deref()
    }

    /// The outcomes so far.
    pub fn outcomes(&self) -> &[JobOutcome<O::Plan>] {
        &self.outcomes
    }

    /// The oracle.
    pub fn oracle(&self) -> &O {
        &self.oracle
    }

    /// `α_eff` over the increments committed so far.
    pub fn alpha_eff_so_far(&self) -> f64 {
        self.alpha_eff
    }

    /// Processes the next arriving job: rejects it if unschedulable, else asks
    /// the oracle and admits iff `payoff > admission_epsilon`, committing the
    /// whole plan irrevocably.
    ///
    /// # Errors
    ///
    /// * [`OnlineError::InvalidInstance`]: invalid bound inputs or an arrival
    ///   earlier than the previous job's;
    /// * [`OnlineError::OracleViolatedCapacity`],
    ///   [`OnlineError::OracleInvalidPlan`],
    ///   [`OnlineError::OracleCostMismatch`]: an oracle bug (the ledger is
    ///   unchanged);
    /// * the oracle's own errors.
    pub fn step(&mut self, job: &O::Job) -> Result<&JobOutcome<O::Plan>> {
        self.step_in_order(job, true)
    }

    /// [`step`](Self::step) for a job decided again (a session's
    /// [`resubmit`](super::Session::resubmit)): its utility counts from an
    /// arrival that may precede the previous job's, so the arrival order is
    /// not checked.
    pub(crate) fn step_again(&mut self, job: &O::Job) -> Result<&JobOutcome<O::Plan>> {
        self.step_in_order(job, false)
    }

    fn step_in_order(&mut self, job: &O::Job, ordered: bool) -> Result<&JobOutcome<O::Plan>> {
        let index = self.outcomes.len();
        let inputs = self.oracle.bound_inputs(job, self.ledger.horizon())?;
        inputs.validate(index, &self.ledger)?;
        self.last_uncovered = self.bounds.uncovered(&inputs);
        if ordered && index > 0 && inputs.arrival < self.last_arrival {
            return Err(OnlineError::InvalidInstance {
                reason: format!(
                    "job {index} arrives in slot {} before the previous job (slot {})",
                    inputs.arrival, self.last_arrival
                ),
            }
            .into());
        }
        self.last_arrival = self.last_arrival.max(inputs.arrival);
        let mut outcome = JobOutcome {
            index,
            arrival: inputs.arrival,
            decision: Decision::Rejected(RejectReason::Unschedulable),
            quality: None,
            rho_hat: None,
            u_max: 0.0,
        };
        if !inputs.schedulable {
            self.outcomes.push(outcome);
            return self.last();
        }
        outcome.u_max = inputs.ln_u_max.exp();
        let view = PriceView::new(&self.ledger, &self.bounds);
        let resp = self.oracle.best_response(index, job, &view)?;
        let checked = check_response(
            &self.ledger,
            &self.bounds,
            index,
            inputs.arrival,
            &resp,
            false,
        )?;
        outcome.quality = Some(resp.quality);
        if resp.quality == OracleQuality::CostApprox {
            let best = checked.as_ref().map_or(0.0, |(_, payoff)| *payoff);
            outcome.rho_hat = Some(realised_factor(&resp.deadline_bounds, best));
        }
        outcome.decision = match (resp.plan, checked) {
            (Some(plan), Some((cells, payoff))) if payoff > self.opts.admission_epsilon => {
                let cost = resp.utility - payoff;
                self.commit(&cells);
                self.mu_running += payoff;
                Decision::Admitted {
                    plan,
                    utility: resp.utility,
                    cost,
                    payoff,
                }
            }
            (Some(_), Some((_, payoff))) => {
                Decision::Rejected(RejectReason::NonPositivePayoff { payoff })
            }
            _ => Decision::Rejected(self.why_no_plan(index, job)?),
        };
        self.outcomes.push(outcome);
        self.last()
    }

    fn last(&self) -> Result<&JobOutcome<O::Plan>> {
        self.outcomes.last().ok_or_else(|| {
            OnlineError::InvalidInstance {
                reason: "no job was processed".into(),
            }
            .into()
        })
    }

    /// Applies checked increments and updates `α_eff` and `x_max`.
    fn commit(&mut self, cells: &[CellIncrement]) {
        for c in cells {
            if c.capacity > 0.0 && c.amount > 0.0 {
                let x = c.amount / c.capacity;
                self.x_max = self.x_max.max(x);
                // With headroom the exponent runs over c' ≤ c: the cell's
                // constant is ln(U/L)·c/c' (infinite for c' = 0).
                let a = match self.bounds.alpha_cell(c.pool, c.resource) {
                    a if a > 0.0 && c.price_capacity < c.capacity => {
                        if c.price_capacity > 0.0 {
                            a * c.capacity / c.price_capacity
                        } else {
                            f64::INFINITY
                        }
                    }
                    a => a,
                };
                if a > 0.0 {
                    self.alpha_eff = self.alpha_eff.max((a * x).exp_m1() / x);
                }
            }
            self.ledger.add(c.index, c.amount);
        }
    }

    /// Why the oracle found no plan with a positive payoff: asked again at
    /// price 0 over the same residual capacities, an oracle that finds a
    /// plan there shows that one fits, so the job was priced out
    /// ([`RejectReason::NonPositivePayoff`], with that plan's payoff at the
    /// current prices, at most 0); else no plan fits
    /// ([`RejectReason::NoFeasiblePlan`]). The decision is the same either
    /// way; only its reason depends on this second call.
    fn why_no_plan(&mut self, index: usize, job: &O::Job) -> Result<RejectReason> {
        let view = PriceView::unpriced(&self.ledger);
        let witness = self.oracle.best_response(index, job, &view)?;
        let Some(plan) = witness.plan else {
            return Ok(RejectReason::NoFeasiblePlan);
        };
        let cost = PriceView::new(&self.ledger, &self.bounds).cost_of(plan.consumption());
        let payoff = witness.utility - cost;
        Ok(RejectReason::NonPositivePayoff {
            payoff: if payoff.is_nan() {
                0.0
            } else {
                payoff.min(0.0)
            },
        })
    }

    /// The ledger, for a session that syncs it from the shared cluster
    /// state before each decision.
    pub(crate) fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    /// Turns the last admission into a rejection for `NoFeasiblePlan` (a
    /// plan the shared state refused): its payoff leaves the running dual;
    /// its ledger amounts stay until the session's next sync. `α_eff` and
    /// `x_max` keep what the commit raised them to (both only bound from
    /// above). Returns whether there was an admission to undo.
    pub(crate) fn retract_last(&mut self) -> bool {
        let Some(o) = self.outcomes.last_mut() else {
            return false;
        };
        if let Decision::Admitted { payoff, .. } = o.decision {
            self.mu_running -= payoff;
            o.decision = Decision::Rejected(RejectReason::NoFeasiblePlan);
            return true;
        }
        false
    }

    /// Runs `jobs` (in arrival order) and [`finish`](Self::finish)es.
    ///
    /// # Errors
    ///
    /// As [`step`](Self::step) and [`finish`](Self::finish).
    pub fn run(mut self, jobs: &[O::Job]) -> Result<RunReport<O::Plan>> {
        for job in jobs {
            self.step(job)?;
        }
        self.finish(jobs)
    }

    /// Builds the report and certificate after the last [`step`](Self::step);
    /// `jobs` are the jobs that were stepped, in the same order (they are
    /// re-priced at the final prices for `D_end`).
    ///
    /// # Errors
    ///
    /// [`OnlineError::JobCountMismatch`], and the oracle's errors or bugs
    /// during the final re-pricing and the `D_0` witness search.
    pub fn finish(mut self, jobs: &[O::Job]) -> Result<RunReport<O::Plan>> {
        let mut report = self.report_now(jobs)?;
        report.outcomes = self.outcomes;
        Ok(report)
    }

    /// The report and certificate [`finish`](Self::finish) would give now,
    /// without the outcomes (left empty: they stay in the engine), the
    /// engine kept for more steps.
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish).
    pub(crate) fn report_now(&mut self, jobs: &[O::Job]) -> Result<RunReport<O::Plan>> {
        if jobs.len() != self.outcomes.len() {
            return Err(OnlineError::JobCountMismatch {
                given: jobs.len(),
                stepped: self.outcomes.len(),
            }
            .into());
        }
        let ledger = &self.ledger;
        let bounds = &self.bounds;
        let alpha = bounds.alpha();
        let total_utility: f64 = self.outcomes.iter().map(JobOutcome::utility).sum();
        let trivial_bound: f64 = self.outcomes.iter().map(|o| o.u_max).sum();
        let dual_initial = initial_dual(ledger, bounds);
        let price_mass = ledger.price_mass(bounds);
        let dual_running = self.mu_running + price_mass;

        // Qualities of the admission responses.
        let Qualities {
            rho,
            max_rho_hat,
            any_cost,
            mut reasons,
        } = qualities(&self.outcomes, bounds);

        // D_end at final prices over all plans that fit the empty cluster.
        let mut dual_end = None;
        let mut dual_end_valid = false;
        let mut running_dual_feasible = None;
        if self.opts.recompute_final_dual {
            let (d, valid, feasible) = final_dual(
                &mut self.oracle,
                ledger,
                bounds,
                &self.outcomes,
                jobs,
                price_mass,
            )?;
            dual_end = Some(d);
            dual_end_valid = valid;
            running_dual_feasible = (!any_cost && valid).then_some(feasible);
        }

        // D_0 ≤ OPT/2: by ALG, or by a witness job alone on the empty cluster.
        let d0_needed = 2.0 * dual_initial * bounds.l_allowance();
        let mut d0_condition_verified = total_utility >= d0_needed
            || (self.oracle.u_max_attained() && self.outcomes.iter().any(|o| o.u_max >= d0_needed));
        if !d0_condition_verified && self.opts.verify_d0_condition {
            d0_condition_verified = d0_witness(
                &mut self.oracle,
                ledger,
                bounds,
                &self.outcomes,
                jobs,
                d0_needed,
            )?;
        }

        let clairvoyant =
            matches!(bounds.origin(), BoundsOrigin::Derived(_)) && bounds.u_scale() == 1.0;
        if matches!(bounds.origin(), BoundsOrigin::Explicit) {
            reasons.push("EstimatedBounds: explicit price bounds".into());
        }
        if bounds.u_scale() != 1.0 {
            reasons.push(format!("ScaledU: φ = {}", Num(bounds.u_scale())));
        }
        let assumption_small_demands = self.alpha_eff <= self.opts.small_demand_threshold * alpha;
        if !d0_condition_verified {
            reasons.push(format!(
                "D0Condition: no witness that OPT ≥ 2·D_0 = {}",
                Num(d0_needed)
            ));
        }
        let mut eff_reasons: Vec<String> = reasons
            .iter()
            .filter(|r| !r.starts_with("EstimatedBounds") && !r.starts_with("ScaledU"))
            .cloned()
            .collect();
        if !assumption_small_demands {
            reasons.push(format!(
                "SmallDemandAssumption: α_eff = {} > {}·α = {}",
                Num(self.alpha_eff),
                Num(self.opts.small_demand_threshold),
                Num(self.opts.small_demand_threshold * alpha)
            ));
        }
        match running_dual_feasible {
            Some(true) => {}
            Some(false) => eff_reasons.push(
                "RunningDualInfeasible: some job's best payoff at final prices exceeds its µ̂"
                    .into(),
            ),
            None => eff_reasons
                .push("RunningDualUnchecked: D_end not recomputed, or approximate costs".into()),
        }

        let rho_val = rho.unwrap_or(1.0);
        let mut g_alpha = Guarantee::ratio_bound(
            "OPT ≤ 2α·ρ·ALG",
            "Bao, Peng, Wu, Li, IEEE INFOCOM 2018, Thm. 4 (OASiS); ρ: crate (a payoff-approximate oracle's factor, or the L allowance ρ0 that bounds a cost-approximate oracle's realised factors)",
            2.0 * alpha * rho_val,
        );
        for r in &reasons {
            g_alpha = g_alpha.invalid(r.clone());
        }
        let mut g_eff = Guarantee::ratio_bound(
            "OPT ≤ 2α_eff·ρ·ALG",
            "crate (α_eff makes the discrete allocation–cost relation hold for every committed increment, so the ratio holds whenever the running dual is feasible and D_0 ≤ OPT/2)",
            2.0 * self.alpha_eff * rho_val,
        );
        for r in &eff_reasons {
            g_eff = g_eff.invalid(r.clone());
        }
        // Both are upper bounds on OPT; the certificate carries the
        // tighter one. `D_end` can be far above the trivial bound
        // when full cells are priced at `U` (e.g. a GPU server filled by
        // one job), and an invalid `D_end` proves nothing.
        let bound = match dual_end {
            Some(d) if dual_end_valid && d <= trivial_bound => {
                Bound::new(d, BoundKind::OnlineDual { valid: true })
            }
            _ => Bound::new(trivial_bound, BoundKind::Trivial),
        };
        let certificate =
            Certificate::new("online::primal_dual", Sense::Maximise, total_utility, bound)
                .with_guarantee(g_alpha)
                .with_guarantee(g_eff);

        Ok(RunReport {
            total_utility,
            alpha,
            alpha_eta_rule: bounds.alpha_eta_rule(),
            alpha_eff: self.alpha_eff,
            x_max: self.x_max,
            rho,
            max_rho_hat,
            dual_initial,
            dual_running,
            dual_end,
            dual_end_valid,
            trivial_bound,
            running_dual_feasible,
            assumption_small_demands,
            clairvoyant_bounds: clairvoyant,
            d0_condition_verified,
            reasons,
            certificate,
            outcomes: Vec::new(),
        })
    }
}

/// `D_0 = T·Σ_κ L_κ·C_κ`, computed in log space.
fn initial_dual(ledger: &Ledger, bounds: &PriceBounds) -> f64 {
    let t = f64::from(ledger.horizon());
    (0..ledger.pools())
        .map(|k| {
            let pool = PoolId(k as u16);
            (bounds.ln_l(pool) + (t * ledger.pool_capacity_sum(pool)).ln()).exp()
        })
        .sum()
}

/// What the admission responses' qualities imply for the guarantee.
struct Qualities {
    /// The approximation factor of the guarantee (`None` for heuristics).
    rho: Option<f64>,
    /// `max_i ρ̂_i` over cost-approximate responses.
    max_rho_hat: Option<f64>,
    /// Whether some response was cost-approximate.
    any_cost: bool,
    /// Why the `2αρ` guarantee is not valid, so far.
    reasons: Vec<String>,
}

/// The qualities of the admission responses: the guarantee's factor ρ and
/// the reasons it may not hold.
fn qualities<P>(outcomes: &[JobOutcome<P>], bounds: &PriceBounds) -> Qualities {
    let mut rho_payoff = 1.0_f64;
    let (mut any_cost, mut any_heuristic, mut any_payoff_approx) = (false, false, false);
    let mut max_rho_hat: Option<f64> = None;
    let mut reasons = Vec::new();
    for o in outcomes {
        match o.quality {
            Some(OracleQuality::PayoffApprox { rho }) => {
                any_payoff_approx = true;
                rho_payoff = rho_payoff.max(if rho.is_nan() { f64::INFINITY } else { rho });
            }
            Some(OracleQuality::CostApprox) => any_cost = true,
            Some(OracleQuality::Heuristic) => any_heuristic = true,
            _ => {}
        }
        if let Some(rh) = o.rho_hat {
            max_rho_hat = Some(max_rho_hat.map_or(rh, |m: f64| m.max(rh)));
            if rh > bounds.l_allowance() * (1.0 + 1e-9) {
                reasons.push(format!(
                    "RealisedFactorExceedsAllowance: job {} (in arrival order) has ρ̂ = {:.4} > ρ0 = {}",
                    o.index,
                    Num(rh),
                    Num(bounds.l_allowance())
                ));
            }
        }
    }
    if any_heuristic {
        reasons.push("HeuristicOracle: a response had no quality guarantee".into());
    }
    if any_cost && any_payoff_approx {
        reasons
            .push("MixedApproximations: payoff- and cost-approximate responses in one run".into());
    }
    let rho =
        (!any_heuristic).then(|| rho_payoff * if any_cost { bounds.l_allowance() } else { 1.0 });
    Qualities {
        rho,
        max_rho_hat,
        any_cost,
        reasons,
    }
}

/// `D_end`: every job's best payoff at the final prices over all
/// plans that fit the empty cluster, plus the price mass; with whether it is
/// a valid bound and whether the running dual is feasible.
fn final_dual<O: PricingOracle>(
    oracle: &mut O,
    ledger: &Ledger,
    bounds: &PriceBounds,
    outcomes: &[JobOutcome<O::Plan>],
    jobs: &[O::Job],
    price_mass: f64,
) -> Result<(f64, bool, bool)> {
    let view = PriceView::with_full_capacity(ledger, bounds);
    let (mut mu_sum, mut price_scale, mut valid, mut feasible) = (0.0, 1.0_f64, true, true);
    for (o, job) in outcomes.iter().zip(jobs) {
        if o.quality.is_none() {
            continue; // unschedulable: no plan, µ = 0
        }
        let resp = oracle.best_response(o.index, job, &view)?;
        let checked = check_response(ledger, bounds, o.index, o.arrival, &resp, true)?;
        let mu_hat = checked.map_or(0.0, |(_, p)| p).max(0.0);
        let mu = match resp.quality {
            OracleQuality::Exact => mu_hat,
            OracleQuality::PayoffApprox { rho } => rho.max(1.0) * mu_hat,
            OracleQuality::CostApprox => {
                price_scale = price_scale.max(realised_factor(&resp.deadline_bounds, mu_hat));
                mu_hat
            }
            OracleQuality::Heuristic => {
                valid = false;
                mu_hat
            }
        };
        let mu_run = match (&o.decision, o.quality) {
            (Decision::Admitted { payoff, .. }, Some(OracleQuality::PayoffApprox { rho })) => {
                rho.max(1.0) * payoff
            }
            (Decision::Admitted { payoff, .. }, _) => *payoff,
            _ => 0.0,
        };
        if mu > mu_run + 1e-9 * mu_run.abs().max(1.0) {
            feasible = false;
        }
        mu_sum += mu;
    }
    if !price_scale.is_finite() {
        valid = false;
        price_scale = 1.0;
    }
    Ok((mu_sum + price_scale * price_mass, valid, feasible))
}

/// Whether some job alone on the empty cluster reaches utility
/// `≥ d0_needed` (a witness that `D_0 ≤ OPT/2`).
fn d0_witness<O: PricingOracle>(
    oracle: &mut O,
    ledger: &Ledger,
    bounds: &PriceBounds,
    outcomes: &[JobOutcome<O::Plan>],
    jobs: &[O::Job],
    d0_needed: f64,
) -> Result<bool> {
    let empty = ledger.emptied();
    let view = PriceView::with_full_capacity(&empty, bounds);
    for (o, job) in outcomes.iter().zip(jobs) {
        if o.quality.is_none() {
            continue;
        }
        let resp = oracle.best_response(o.index, job, &view)?;
        let checked = check_response(&empty, bounds, o.index, o.arrival, &resp, true)?;
        if checked.is_some() && resp.utility >= d0_needed {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Checks a response's plan against the ledger and the oracle contract:
/// cells inside the ledger, slots in
/// `[arrival, T)`, amounts `≥ 0`, fit in the residual (or the capacity when
/// `full_capacity`), the declared cost, and a finite non-negative utility.
/// Returns the aggregated increments and the payoff, `None` without a plan.
fn check_response<P: Reservation>(
    ledger: &Ledger,
    bounds: &PriceBounds,
    job: usize,
    arrival: u32,
    resp: &Response<P>,
    full_capacity: bool,
) -> Result<Option<(Vec<CellIncrement>, f64)>, OnlineError> {
    let Some(plan) = &resp.plan else {
        return Ok(None);
    };
    let invalid = |reason: String| OnlineError::OracleInvalidPlan { job, reason };
    if !(resp.utility.is_finite() && resp.utility >= 0.0) {
        return Err(invalid(format!(
            "utility {} is not finite and ≥ 0",
            Num(resp.utility)
        )));
    }
    if let OracleQuality::PayoffApprox { rho } = resp.quality
        && !(rho >= 1.0 && rho.is_finite())
    {
        return Err(invalid(format!(
            "declared payoff factor ρ = {} is not a finite number ≥ 1",
            Num(rho)
        )));
    }
    let done = plan.completion_slot();
    if done < arrival || done >= ledger.horizon() {
        return Err(invalid(format!(
            "completion slot {done} is not in {arrival}..{}",
            ledger.horizon()
        )));
    }
    let mut entries: Vec<(Cell, PoolId, ResourceId, u32, f64, crate::model::MachineId)> =
        Vec::new();
    for c in plan.consumption() {
        let Some(i) = ledger.cell_index(c.machine, c.resource, c.slot) else {
            return Err(invalid(format!(
                "cell ({}, {}, slot {}) is outside the ledger",
                c.machine, c.resource, c.slot
            )));
        };
        if c.slot < arrival {
            return Err(invalid(format!(
                "consumption in slot {} before the arrival slot {arrival}",
                c.slot
            )));
        }
        if !(c.amount.is_finite() && c.amount >= 0.0) {
            return Err(invalid(format!(
                "amount {} at ({}, {}, slot {}) is not finite and ≥ 0",
                Num(c.amount),
                c.machine,
                c.resource,
                c.slot
            )));
        }
        let pool = ledger.pool_of(c.machine).unwrap_or(PoolId(0));
        entries.push((i, pool, c.resource, c.slot, c.amount, c.machine));
    }
    entries.sort_by_key(|e| e.0);
    let mut cells: Vec<CellIncrement> = Vec::new();
    let mut cost = 0.0;
    let mut last: Option<Cell> = None;
    for (i, pool, r, slot, amount, m) in entries {
        cost += amount * ledger_ln_price(ledger, bounds, m, r, slot).exp();
        if last == Some(i) {
            if let Some(c) = cells.last_mut() {
                c.amount += amount;
            }
        } else {
            cells.push(CellIncrement {
                index: i,
                pool,
                resource: r,
                capacity: ledger.capacity(m, r),
                price_capacity: ledger.price_capacity(m, r),
                amount,
            });
            last = Some(i);
        }
        // Check the running total of this cell.
        if let Some(c) = cells.last() {
            let g = if full_capacity {
                0.0
            } else {
                ledger.committed(m, r, slot)
            };
            let limit = c.capacity * (1.0 + CAPACITY_REL_TOL) + CAPACITY_ABS_TOL;
            if g + c.amount > limit {
                return Err(OnlineError::OracleViolatedCapacity {
                    job,
                    machine: m,
                    resource: r,
                    slot,
                    excess: g + c.amount - c.capacity,
                });
            }
        }
    }
    if (resp.cost - cost).abs() > 1e-9 * cost.max(1.0) || resp.cost.is_nan() {
        return Err(OnlineError::OracleCostMismatch {
            job,
            declared: resp.cost,
            recomputed: cost,
        });
    }
    Ok(Some((cells, resp.utility - cost)))
}
