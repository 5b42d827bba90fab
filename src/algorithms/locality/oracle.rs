//! The pricing oracle: deadline enumeration over LOC-SUB with early
//! stopping and the LP-bound skip rule, solved by LP rounding (default) or
//! exactly by the MIP solver.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::certificate::ExactStatus;
use crate::exact::Shortcut;
use crate::lp::{ExactMipLimits, SolveOptions};
use crate::model::units::ceil_tol;
use crate::online::{
    BoundInputs, DeadlineBound, OracleQuality, PriceView, PricingOracle, Reservation, Response,
    UnitDemand,
};
use crate::pcip::{LpRelaxation, MipOptions, PcError, PcProblem, solve_exact, solve_lp};

use super::error::LocalityError;
use super::model::{LocalityCluster, LocalityJob, POOL};
use super::plan::LocalityPlan;
use super::round::{self, DEFAULT_DRAWS, DEFAULT_LAMBDAS, DrawCounts, LocRounding};
use super::sub::{self, Cells, LocSub};

mod fast;
mod walk;

pub(crate) use walk::idle_walk_pace;

/// Relative MIP gap of the exact inner solver.
pub const EXACT_MIP_REL_GAP: f64 = 1e-9;
/// Default per-solve time limit of the exact inner solver, seconds.
pub const DEFAULT_MIP_TIME_LIMIT_S: f64 = 10.0;

/// Most draws per deadline [`InnerSolver::LpRound`] accepts.
pub const MAX_DRAWS: u32 = 1 << 16;

/// How LOC-SUB is solved at each deadline the LP bound does not rule out.
///
/// In JSON: `"lp_round"`, `"exact_mip"` (every field at its default) or
/// `{"lp_round": {"draws": 16}}`, `{"exact_mip": {"time_limit_s": 30}}`;
/// the CamelCase names (`"LpRound"`, `"ExactMip"`) are read too.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum InnerSolver {
    /// LP relaxation, then `draws` draws of structured rounding (one choice
    /// group per slot, scaling `λ_k = lambdas[k mod 8]`), PSs derived from
    /// the rounded workers, repair with the model's moves; the cheapest plan that passes the
    /// checker is kept, and the price-aware greedy (grow and prune from the
    /// all-IDLE point) runs when every draw fails. Responses are
    /// cost-approximate: the LP bounds give the realised factor `ρ̂_i`.
    LpRound {
        /// Draws per deadline (default 8, at most [`MAX_DRAWS`]).
        draws: u32,
        /// Scalings `λ_k ≥ 1` (default `[1.0, 1.0, 1.1, 1.1, 1.2, 1.2,
        /// 1.3, 1.3]`); draw `k` uses `lambdas[k mod 8]`.
        lambdas: [f64; 8],
    },
    /// The HiGHS MIP solver (relative gap 10⁻⁹, no presolve, one thread,
    /// deterministic), with a time limit per solve. A solve stopped by the
    /// limit makes the response cost-approximate, with the MIP dual bound
    /// as that deadline's lower bound.
    ExactMip {
        /// Time limit of one MIP solve, seconds (default 10).
        time_limit_s: f64,
    },
}

impl Default for InnerSolver {
    /// [`InnerSolver::lp_round`].
    fn default() -> Self {
        InnerSolver::lp_round()
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for InnerSolver {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        struct Round {
            draws: u32,
            lambdas: [f64; 8],
        }
        #[derive(serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        struct Exact {
            time_limit_s: f64,
        }
        impl Default for Round {
            fn default() -> Self {
                Round {
                    draws: DEFAULT_DRAWS,
                    lambdas: DEFAULT_LAMBDAS,
                }
            }
        }
        impl Default for Exact {
            fn default() -> Self {
                Exact {
                    time_limit_s: DEFAULT_MIP_TIME_LIMIT_S,
                }
            }
        }
        fn fields<T: serde::de::DeserializeOwned + Default, E: serde::de::Error>(
            name: &str,
            body: Option<serde_json::Value>,
        ) -> Result<T, E> {
            body.map_or(Ok(T::default()), |b| {
                serde_json::from_value(b).map_err(|e| E::custom(format!("{name}: {e}")))
            })
        }
        let (name, body) = crate::error::enum_variant(d, &["lp_round", "exact_mip"])?;
        Ok(if name == "lp_round" {
            let r: Round = fields::<_, D::Error>(name, body)?;
            InnerSolver::LpRound {
                draws: r.draws,
                lambdas: r.lambdas,
            }
        } else {
            let e: Exact = fields::<_, D::Error>(name, body)?;
            InnerSolver::ExactMip {
                time_limit_s: e.time_limit_s,
            }
        })
    }
}

impl InnerSolver {
    /// LP rounding with 8 draws and the default scalings.
    pub fn lp_round() -> Self {
        InnerSolver::LpRound {
            draws: DEFAULT_DRAWS,
            lambdas: DEFAULT_LAMBDAS,
        }
    }

    /// The exact MIP with the default time limit (10 s per solve).
    pub fn exact_mip() -> Self {
        InnerSolver::ExactMip {
            time_limit_s: DEFAULT_MIP_TIME_LIMIT_S,
        }
    }

    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`LocalityError::InvalidOption`] for a time limit that is not
    /// positive (NaN included), no draw or more than [`MAX_DRAWS`], or a
    /// scaling that is not a finite number `≥ 1`.
    pub fn validate(&self) -> Result<(), LocalityError> {
        let bad = |reason: String| LocalityError::InvalidOption {
            name: "inner",
            reason,
        };
        match *self {
            InnerSolver::ExactMip { time_limit_s } => {
                if time_limit_s.is_nan() || time_limit_s <= 0.0 {
                    return Err(bad(format!(
                        "MIP time limit {time_limit_s} s is not positive"
                    )));
                }
            }
            InnerSolver::LpRound { draws, lambdas } => {
                if draws == 0 || draws > MAX_DRAWS {
                    return Err(bad(format!("{draws} draws (1..={MAX_DRAWS} allowed)")));
                }
                if let Some(l) = lambdas.iter().find(|l| !(l.is_finite() && **l >= 1.0)) {
                    return Err(bad(format!("scaling λ = {l} is not a finite number ≥ 1")));
                }
            }
        }
        Ok(())
    }
}

/// What one oracle call did; as a run's
/// [`LocalityReport::totals`](super::LocalityReport::totals), what all of
/// them did.
///
/// ```
/// use dmlsched::algorithms::locality::CallStats;
/// let mut stats = CallStats::default();
/// assert_eq!(stats.max_cost_ratio(), 1.0);
/// stats.cost_ratios = vec![(3, 1.25), (4, 1.5)];
/// assert_eq!(stats.max_cost_ratio(), 1.5);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CallStats {
    /// Deadlines whose program was looked at (built, bounded or solved).
    pub deadlines_examined: u64,
    /// LP relaxations solved (re-confirmations of infeasibility included).
    pub lp_solves: u64,
    /// MIPs solved.
    pub mip_solves: u64,
    /// MIP solves stopped by their time limit.
    pub mip_limits: u64,
    /// `(t̂, f(t̂ − a), LB(t̂))` of every examined deadline.
    pub deadline_bounds: Vec<DeadlineBound>,
    /// LP rounding: draws run over all rounded deadlines.
    pub draws: u64,
    /// LP rounding: draws that gave a plan passing the checker.
    pub draw_plans: u64,
    /// LP rounding: draws with a plan whose repair needed covering moves.
    pub covering_repairs: u64,
    /// LP rounding: deadlines whose LP optimum equals the previous
    /// deadline's (within a relative 10⁻⁶): they keep that deadline's LP
    /// point and are not rounded again.
    pub repeated_points: u64,
    /// LP rounding: deadlines where every draw failed and the greedy
    /// fallback ran.
    pub fallbacks: u64,
    /// LP rounding: fallbacks that found a plan.
    pub fallback_plans: u64,
    /// LP rounding: `(t̂, cost/LB(t̂))` of every deadline with a rounded
    /// plan (`+∞` when `LB = 0 < cost`, 1 when both are 0).
    pub cost_ratios: Vec<(u32, f64)>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl CallStats {
    /// The largest `cost/LB(t̂)` of [`cost_ratios`](Self::cost_ratios) (1
    /// without any).
    pub fn max_cost_ratio(&self) -> f64 {
        self.cost_ratios.iter().map(|r| r.1).fold(1.0, f64::max)
    }

    /// Adds `other`'s counts and seconds, and appends its lists.
    pub(crate) fn add(&mut self, other: &CallStats) {
        self.deadlines_examined += other.deadlines_examined;
        self.lp_solves += other.lp_solves;
        self.mip_solves += other.mip_solves;
        self.mip_limits += other.mip_limits;
        self.deadline_bounds
            .extend_from_slice(&other.deadline_bounds);
        self.draws += other.draws;
        self.draw_plans += other.draw_plans;
        self.covering_repairs += other.covering_repairs;
        self.repeated_points += other.repeated_points;
        self.fallbacks += other.fallbacks;
        self.fallback_plans += other.fallback_plans;
        self.cost_ratios.extend_from_slice(&other.cost_ratios);
        self.seconds += other.seconds;
    }
}

/// LOC-SUB at one deadline, bounded and solved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeadlineSolve {
    /// The deadline (0-based slot).
    pub(crate) deadline: u32,
    /// `LB(t̂)`: the LP relaxation's safe dual bound (`+∞` when the
    /// relaxation is infeasible, re-confirmed without presolve), or the
    /// better of it and the MIP dual bound when the MIP hit its limit.
    pub(crate) lower_bound: f64,
    /// The plan and its cost at the view's prices, if one was found.
    pub(crate) plan: Option<(LocalityPlan, f64)>,
    /// Whether the MIP proved its answer optimal (or proved
    /// infeasibility); `false` when it stopped at its limit, and always
    /// `false` for LP rounding.
    pub(crate) proven: bool,
    /// What the LP rounding's draws did (`None` for the exact solver or
    /// when the deadline was not rounded).
    pub(crate) rounding: Option<DrawCounts>,
}

/// The locality oracle: for each deadline `t̂ = a_i + d_min − 1, …, end_i`
/// (stopping once `f_i(t̂ − a_i)` cannot beat the best payoff), the LP
/// bound of LOC-SUB(i, t̂); the exact MIP where `f − LB` can beat the best
/// payoff; the plan of largest payoff (strictly positive, earliest on
/// ties).
///
/// Both solvers are deterministic: the same job, position, view (and,
/// for LP rounding, run seed) give the same plan.
///
/// The scheduler builds it: [`Locality::engine`](super::Locality::engine)
/// hands out the engine's, which answers
/// [`PricingOracle::best_response`] and reports its latest call
/// ([`last_call`](Self::last_call)).
#[derive(Debug, Clone)]
pub struct LocalityOracle {
    cluster: LocalityCluster,
    solver: InnerSolver,
    seed: u64,
    /// Whether the deadline enumeration and the rounding's PS choice may
    /// take their shortcuts (modules `fast`).
    shortcut: Shortcut,
    last: CallStats,
    counters: Arc<SolveCounters>,
}

/// LP and MIP solves of an oracle over all its calls, shared with its
/// owner so that they can be read after the oracle is consumed.
#[derive(Debug, Default)]
pub(crate) struct SolveCounters {
    lp: AtomicU64,
    mip: AtomicU64,
}

impl SolveCounters {
    /// LP relaxations solved.
    pub(crate) fn lp_solves(&self) -> u64 {
        self.lp.load(Ordering::Relaxed)
    }

    /// MIPs solved.
    pub(crate) fn mip_solves(&self) -> u64 {
        self.mip.load(Ordering::Relaxed)
    }

    fn add(&self, stats: &CallStats) {
        self.lp.fetch_add(stats.lp_solves, Ordering::Relaxed);
        self.mip.fetch_add(stats.mip_solves, Ordering::Relaxed);
    }
}

/// Largest objective coefficient handed to the solver, `2²⁰`: prices set
/// by huge utilities (10¹⁵) give costs of 10¹⁴ and more beside
/// coefficients near 1, where HiGHS stops with `status Error`.
const MAX_SOLVER_COST: f64 = 1_048_576.0;

/// `(s, program)`: the power of two `s ≤ 1` that brings the largest cost of
/// `problem` to at most [`MAX_SOLVER_COST`], and the program with its
/// objective multiplied by `s` when `s < 1` (`None`: use `problem`). A
/// bound of the scaled program divided by `s` is the original's, exactly.
fn objective_in_range(problem: &PcProblem) -> (f64, Option<PcProblem>) {
    let max = problem
        .objective()
        .iter()
        .map(|c| c.abs())
        .filter(|c| c.is_finite())
        .fold(0.0, f64::max);
    if max <= MAX_SOLVER_COST {
        return (1.0, None);
    }
    let scale = (MAX_SOLVER_COST / max).log2().floor().exp2();
    if scale.is_nan() || scale <= 0.0 {
        return (1.0, None);
    }
    (scale, Some(problem.with_objective_scaled(scale)))
}

impl LocalityOracle {
    /// An oracle over `cluster` with `solver` (run seed 0).
    pub(crate) fn new(cluster: LocalityCluster, solver: InnerSolver) -> Self {
        LocalityOracle {
            cluster,
            solver,
            seed: 0,
            shortcut: Shortcut::Allowed,
            last: CallStats::default(),
            counters: Arc::default(),
        }
    }

    /// The oracle with run seed `seed` for LP rounding (draw `k` of the job
    /// at position `i` at deadline `t̂` is seeded with
    /// `splitmix64(seed ⊕ i·K1 ⊕ t̂·K2 ⊕ k)`, `K1`, `K2` two fixed odd
    /// constants).
    pub(crate) fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The oracle with its shortcuts switched by `shortcut`.
    pub(crate) fn with_shortcut(mut self, shortcut: Shortcut) -> Self {
        self.shortcut = shortcut;
        self
    }

    /// The cluster.
    pub(crate) fn cluster(&self) -> &LocalityCluster {
        &self.cluster
    }

    /// The statistics of the latest [`best_response`](PricingOracle::best_response).
    pub fn last_call(&self) -> &CallStats {
        &self.last
    }

    /// The solve counters over all calls (shared: they stay readable
    /// after the oracle is handed to the framework).
    pub(crate) fn counters(&self) -> Arc<SolveCounters> {
        Arc::clone(&self.counters)
    }

    /// `LB(t̂)` of a built program and the LP point: the safe dual bound
    /// of its LP relaxation (at least 0), `+∞` (and no point) when the
    /// relaxation is infeasible. An infeasibility found with presolve is
    /// re-confirmed without it.
    fn lp_bound(
        &mut self,
        problem: &PcProblem,
        stats: &mut CallStats,
    ) -> crate::Result<(f64, Option<Vec<f64>>)> {
        let opts = SolveOptions::default();
        let (scale, scaled) = objective_in_range(problem);
        let problem = scaled.as_ref().unwrap_or(problem);
        stats.lp_solves += 1;
        let first = solve_lp(problem, &opts);
        let relax: Result<LpRelaxation, PcError> = match first {
            Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => {
                stats.lp_solves += 1;
                solve_lp(problem, &opts.with_presolve(false))
            }
            other => other,
        };
        match relax {
            Ok(r) => Ok((r.safe_bound.value.max(0.0) / scale, Some(r.x))),
            // Costs are non-negative, so "unbounded or infeasible" is infeasible.
            Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => {
                Ok((f64::INFINITY, None))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The exact MIP of a built program; `(plan and cost, proven, MIP dual
    /// bound)`.
    #[allow(clippy::type_complexity)]
    fn exact(
        &mut self,
        job: &LocalityJob,
        sub: &LocSub,
        view: &PriceView<'_>,
        stats: &mut CallStats,
    ) -> crate::Result<(Option<(LocalityPlan, f64)>, bool, f64)> {
        let time_limit_s = match self.solver {
            InnerSolver::ExactMip { time_limit_s } => time_limit_s,
            InnerSolver::LpRound { .. } => DEFAULT_MIP_TIME_LIMIT_S,
        };
        let opts = MipOptions {
            limits: ExactMipLimits::new(time_limit_s, EXACT_MIP_REL_GAP, Some(1)),
            seed: 0,
        };
        stats.mip_solves += 1;
        let (scale, scaled) = objective_in_range(&sub.problem);
        let res = match solve_exact(scaled.as_ref().unwrap_or(&sub.problem), &opts) {
            Err(PcError::IntegerInfeasible) => return Ok((None, true, f64::INFINITY)),
            Err(e) => return Err(e.into()),
            Ok(r) => r,
        };
        let proven = res.info.status == ExactStatus::Optimal;
        if !proven {
            stats.mip_limits += 1;
        }
        let plan = res.x.as_ref().and_then(|x| {
            let slots = sub.decode(job, x);
            (!slots.is_empty()).then(|| {
                let plan = LocalityPlan {
                    job: job.id,
                    slots,
                    worker: job.worker,
                    ps: job.ps,
                };
                let cost = view.cost_of(plan.consumption());
                (plan, cost)
            })
        });
        Ok((plan, proven, res.info.dual_bound / scale))
    }

    /// Bounds and solves LOC-SUB(i, t̂) at `deadline` for `job` at the
    /// prices of `view` (for tests and measurements; the oracle applies
    /// the skip rule before solving). LP rounding draws with the streams of
    /// job position 0.
    ///
    /// # Errors
    ///
    /// Solver failures ([`crate::Error::Pc`]), including a missing solver
    /// without the `highs` feature.
    pub(crate) fn solve_deadline(
        &mut self,
        job: &LocalityJob,
        view: &PriceView<'_>,
        deadline: u32,
    ) -> crate::Result<DeadlineSolve> {
        let cells = sub::cells(job, &self.cluster, view);
        let mut stats = CallStats::default();
        let out = self.deadline((0, job), &cells, view, deadline, None, &mut stats);
        self.counters.add(&stats);
        out
    }

    /// The LP rounding of a built program with LP point `lp_x`.
    fn rounded(
        &self,
        (index, job): (u64, &LocalityJob),
        cells: &Cells,
        sub: &LocSub,
        view: &PriceView<'_>,
        lp_x: &[f64],
        (draws, lambdas): (u32, &[f64]),
    ) -> crate::Result<(Option<(LocalityPlan, f64)>, DrawCounts)> {
        let model = LocRounding::new(job, cells, sub).with_shortcut(self.shortcut);
        let seed = self.seed;
        let t = sub.deadline;
        let seed_of = |k| round::draw_seed(seed, index, t, k);
        Ok(round::round_deadline(
            &model, view, lp_x, draws, lambdas, seed_of,
        )?)
    }

    /// One deadline: build, bound, and (unless `skip_at` says the bound
    /// cannot beat that payoff) solve with the inner solver.
    fn deadline(
        &mut self,
        job: (u64, &LocalityJob),
        cells: &Cells,
        view: &PriceView<'_>,
        deadline: u32,
        skip_at: Option<f64>,
        stats: &mut CallStats,
    ) -> crate::Result<DeadlineSolve> {
        let mut out = DeadlineSolve {
            deadline,
            lower_bound: f64::INFINITY,
            plan: None,
            proven: matches!(self.solver, InnerSolver::ExactMip { .. }),
            rounding: None,
        };
        let Some(sub) = sub::build(job.1, cells, deadline)? else {
            return Ok(out);
        };
        let (lb, lp_x) = self.lp_bound(&sub.problem, stats)?;
        out.lower_bound = lb;
        let f = job.1.utility_at(deadline);
        let Some(lp_x) = lp_x.filter(|_| !skip_at.is_some_and(|best| f - lb <= best)) else {
            return Ok(out);
        };
        if let InnerSolver::LpRound { draws, lambdas } = self.solver {
            let (plan, counts) = self.rounded(job, cells, &sub, view, &lp_x, (draws, &lambdas))?;
            count_draws(stats, &counts);
            if let Some((_, cost)) = &plan {
                stats.cost_ratios.push((deadline, cost_ratio(*cost, lb)));
            }
            out.plan = plan;
            out.rounding = Some(counts);
            return Ok(out);
        }
        let (plan, proven, dual) = self.exact(job.1, &sub, view, stats)?;
        out.plan = plan;
        out.proven = proven;
        if !proven && dual.is_finite() {
            out.lower_bound = out.lower_bound.max(dual);
        }
        Ok(out)
    }

    /// The best plan of the job at position `index`, `job`, at `view`:
    /// `(plan, utility, cost)` when one has a strictly positive payoff,
    /// with the call's statistics and whether every solve was proven
    /// (never for LP rounding). LP rounding draws with the streams of
    /// position `index`.
    ///
    /// # Errors
    ///
    /// Solver failures.
    #[allow(clippy::type_complexity)]
    fn best_plan_at(
        &mut self,
        index: u64,
        job: &LocalityJob,
        view: &PriceView<'_>,
    ) -> crate::Result<(Option<(LocalityPlan, f64, f64)>, CallStats, bool)> {
        let start = Instant::now();
        let mut e = Enumeration {
            index,
            job,
            cells: sub::cells(job, &self.cluster, view),
            lps: BTreeMap::new(),
            best: None,
            best_payoff: 0.0,
            prev_lb: None,
            all_proven: matches!(self.solver, InnerSolver::ExactMip { .. }),
            stats: CallStats::default(),
        };
        let last = job.end.min(view.horizon().saturating_sub(1));
        let first = job.arrival.saturating_add(job.delta_min(&self.cluster));
        if self.shortcut.taken() {
            fast::enumerate(self, &mut e, view, first, last)?;
        } else {
            let mut t = first;
            while t <= last {
                let f = job.utility_at(t);
                if f <= e.best_payoff {
                    break; // costs are ≥ 0 and f does not increase
                }
                self.lp_at(&mut e, t)?;
                self.examine(&mut e, view, t, f)?;
                t += 1;
            }
        }
        let mut stats = e.stats;
        stats.seconds = start.elapsed().as_secs_f64();
        self.counters.add(&stats);
        Ok((e.best, stats, e.all_proven))
    }

    /// Builds and bounds LOC-SUB at `t` into `e`'s cache (once).
    fn lp_at(&mut self, e: &mut Enumeration<'_>, t: u32) -> crate::Result<()> {
        if e.lps.contains_key(&t) {
            return Ok(());
        }
        let lp = match sub::build(e.job, &e.cells, t)? {
            None => DeadlineLp {
                sub: None,
                lb: f64::INFINITY,
                x: None,
            },
            Some(sub) => {
                let (lb, x) = self.lp_bound(&sub.problem, &mut e.stats)?;
                DeadlineLp {
                    sub: Some(sub),
                    lb,
                    x,
                }
            }
        };
        e.lps.insert(t, lp);
        Ok(())
    }

    /// Examines deadline `t` (utility `f`, its LP in `e`'s cache): records
    /// its bound; with LP rounding, a deadline whose LP optimum equals the
    /// previous deadline's keeps that deadline's point, which was rounded
    /// already (or skipped), and is not rounded again; otherwise, unless
    /// the skip rule `f − LB ≤ best payoff` applies, solves it with the
    /// inner solver and keeps the plan if its payoff is strictly better.
    fn examine(
        &mut self,
        e: &mut Enumeration<'_>,
        view: &PriceView<'_>,
        t: u32,
        f: f64,
    ) -> crate::Result<()> {
        let Some(lp) = e.lps.remove(&t) else {
            return Ok(());
        };
        e.lps.retain(|&s, _| s > t);
        e.stats.deadlines_examined += 1;
        let rounding = matches!(self.solver, InnerSolver::LpRound { .. });
        let repeated = rounding && e.prev_lb.is_some_and(|p| same_bound(p, lp.lb));
        e.prev_lb = Some(lp.lb);
        let mut lower_bound = lp.lb;
        let (sub, x) = match (lp.sub, lp.x) {
            (Some(sub), Some(x)) if !repeated && f - lp.lb > e.best_payoff => (sub, x),
            _ => {
                e.stats.repeated_points += u64::from(repeated && lp.lb.is_finite());
                e.record(t, f, lower_bound);
                return Ok(());
            }
        };
        let plan = if let InnerSolver::LpRound { draws, lambdas } = self.solver {
            let job = (e.index, e.job);
            let (plan, counts) = self.rounded(job, &e.cells, &sub, view, &x, (draws, &lambdas))?;
            count_draws(&mut e.stats, &counts);
            if let Some((_, cost)) = &plan {
                e.stats.cost_ratios.push((t, cost_ratio(*cost, lp.lb)));
            }
            plan
        } else {
            let (plan, proven, dual) = self.exact(e.job, &sub, view, &mut e.stats)?;
            e.all_proven &= proven;
            if !proven && dual.is_finite() {
                lower_bound = lower_bound.max(dual);
            }
            plan
        };
        e.record(t, f, lower_bound);
        if let Some((plan, cost)) = plan {
            let utility = e.job.utility_at(plan.completion_slot());
            if utility - cost > e.best_payoff {
                e.best_payoff = utility - cost;
                e.best = Some((plan, utility, cost));
            }
        }
        Ok(())
    }
}

/// Adds one rounded deadline's draw counts to `stats`.
fn count_draws(stats: &mut CallStats, counts: &DrawCounts) {
    stats.draws += u64::from(counts.draws);
    stats.draw_plans += u64::from(counts.plans);
    stats.covering_repairs += u64::from(counts.covering_repairs);
    stats.fallbacks += u64::from(counts.fallback);
    stats.fallback_plans += u64::from(counts.fallback_plan);
}

/// Relative tolerance under which two deadlines' LP bounds count as the
/// same optimum (the later LP contains the earlier one's points, so the
/// earlier point is optimal for it up to this tolerance).
pub const SAME_BOUND_REL: f64 = 1e-6;

/// Whether `a` and `b` are the same LP optimum: both `+∞`, or both
/// positive and within [`SAME_BOUND_REL`] of the larger (a bound of 0 may
/// be a safe bound clamped at 0, which says nothing of the optimum).
fn same_bound(a: f64, b: f64) -> bool {
    if a == f64::INFINITY || b == f64::INFINITY {
        return a == b;
    }
    a > 0.0 && b > 0.0 && (a - b).abs() <= SAME_BOUND_REL * a.max(b)
}

/// One deadline's program, LP bound and LP point.
struct DeadlineLp {
    /// The program (`None` when no plan can finish by the deadline).
    sub: Option<LocSub>,
    /// `LB(t̂)` (`+∞` when infeasible).
    lb: f64,
    /// The LP point.
    x: Option<Vec<f64>>,
}

/// The state of one oracle call's deadline enumeration.
struct Enumeration<'a> {
    /// The job's position (for the draw seeds).
    index: u64,
    job: &'a LocalityJob,
    cells: Cells,
    /// Programs built and bounded but not examined yet, by deadline.
    lps: BTreeMap<u32, DeadlineLp>,
    /// `(plan, utility, cost)` of the best payoff so far.
    best: Option<(LocalityPlan, f64, f64)>,
    best_payoff: f64,
    /// `LB` of the previous deadline.
    prev_lb: Option<f64>,
    all_proven: bool,
    stats: CallStats,
}

impl Enumeration<'_> {
    /// Records an examined deadline's bound.
    fn record(&mut self, slot: u32, utility: f64, cost_lower_bound: f64) {
        self.stats.deadline_bounds.push(DeadlineBound {
            slot,
            utility,
            cost_lower_bound,
        });
    }
}

/// `cost/LB`: `+∞` when `LB = 0 < cost`, 1 when both are 0.
fn cost_ratio(cost: f64, lb: f64) -> f64 {
    if lb > 0.0 {
        cost / lb
    } else if cost > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

impl PricingOracle for LocalityOracle {
    type Job = LocalityJob;
    type Plan = LocalityPlan;

    /// The bound inputs: `schedulable` unless even an upper bound on the
    /// pace of any plan on the empty cluster (the job model's
    /// `pace_upper_bound`) cannot finish the work within
    /// the window (so a job is left out of the bounds only when it has no
    /// plan at all); `ln f(δ_min)` with `δ_min = d_min − 1`;
    /// `ln f(end_i − a_i)`; four unit kinds in the one pool (DISTRIBUTED
    /// worker and PS, LOCAL worker and PS with NIC 0; kinds without a
    /// positive entry are left out); the normaliser
    /// `m_i = W^D·(Σ_r w^r + Σ_r s^r)`.
    fn bound_inputs(&self, job: &LocalityJob, horizon: u32) -> crate::Result<BoundInputs> {
        let pace = job.pace_upper_bound(&self.cluster);
        let schedulable = pace > 0.0 && job.arrival < horizon && {
            let needed = ceil_tol(job.minibatches / pace).max(1.0);
            f64::from(job.arrival) + needed - 1.0 <= f64::from(job.end)
        };
        let unit_demands = [job.worker, job.ps, job.worker_local(), job.ps_local()]
            .into_iter()
            .filter(|d| d.iter().any(|v| *v > 0.0))
            .map(|d| UnitDemand {
                pool: POOL,
                demand: d.to_vec(),
            })
            .collect();
        let m =
            job.dist_worker_slots() * (job.worker.iter().sum::<f64>() + job.ps.iter().sum::<f64>());
        // A job planned from a slot at or past the horizon (a simulator
        // that runs on after it) cannot be scheduled: it is rejected
        // without the oracle, and its arrival is kept inside the horizon
        // as the framework requires.
        Ok(BoundInputs {
            arrival: job.arrival.min(horizon.saturating_sub(1)),
            schedulable,
            ln_u_max: job.utility.ln_value(job.delta_min(&self.cluster)),
            ln_u_min: job.utility.ln_value(job.end.saturating_sub(job.arrival)),
            unit_demands,
            normalisers: if m > 0.0 && m.is_finite() {
                vec![(POOL, m)]
            } else {
                Vec::new()
            },
        })
    }

    fn best_response(
        &mut self,
        job_index: usize,
        job: &LocalityJob,
        view: &PriceView<'_>,
    ) -> crate::Result<Response<LocalityPlan>> {
        if job.widened {
            self.last = CallStats::default();
            return Ok(match walk::walk_plan(&self.cluster, job, view) {
                Some((plan, utility, cost)) => Response::exact(plan, utility, cost),
                None => Response::none(),
            }
            .with_quality(OracleQuality::Heuristic));
        }
        let (best, stats, proven) = self.best_plan_at(job_index as u64, job, view)?;
        let quality = if proven {
            OracleQuality::Exact
        } else {
            OracleQuality::CostApprox
        };
        let mut resp = match best {
            Some((plan, utility, cost)) => Response::exact(plan, utility, cost),
            None => Response::none(),
        }
        .with_quality(quality);
        resp.deadline_bounds = stats.deadline_bounds.clone();
        self.last = stats;
        Ok(resp)
    }
}

#[cfg(all(test, feature = "highs"))]
impl LocalityOracle {
    /// The best plan of `job` at `view` as the job at position 0 (the
    /// tests' entry to the deadline enumeration; [`PricingOracle::best_response`]
    /// uses the job's position): `(plan, utility, cost)`, the call's
    /// statistics and whether every solve was proven.
    #[allow(clippy::type_complexity)]
    pub(crate) fn best_plan(
        &mut self,
        job: &LocalityJob,
        view: &PriceView<'_>,
    ) -> crate::Result<(Option<(LocalityPlan, f64, f64)>, CallStats, bool)> {
        self.best_plan_at(0, job, view)
    }
}
