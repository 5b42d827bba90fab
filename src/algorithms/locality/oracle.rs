//! The pricing oracle: deadline enumeration over LOC-SUB with early
//! stopping and the LP-bound skip rule, solved exactly by the MIP solver.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::certificate::ExactStatus;
use crate::lp::SolveOptions;
use crate::model::units::ceil_tol;
use crate::online::{
    BoundInputs, DeadlineBound, OracleQuality, PriceView, PricingOracle, Reservation, Response,
    UnitDemand,
};
use crate::pcip::{LpRelaxation, MipOptions, PcError, PcProblem, solve_exact, solve_lp};

use super::error::LocalityError;
use super::model::{LocalityCluster, LocalityJob, POOL};
use super::plan::LocalityPlan;
use super::sub::{self, Cells, LocSub};

/// Relative MIP gap of the exact inner solver.
pub const EXACT_MIP_REL_GAP: f64 = 1e-9;
/// Default per-solve time limit of the exact inner solver, seconds.
pub const DEFAULT_MIP_TIME_LIMIT_S: f64 = 10.0;

/// How LOC-SUB is solved at each deadline the LP bound does not rule out.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum InnerSolver {
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
    fn default() -> Self {
        InnerSolver::ExactMip {
            time_limit_s: DEFAULT_MIP_TIME_LIMIT_S,
        }
    }
}

impl InnerSolver {
    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`LocalityError::InvalidOption`] for a time limit that is not
    /// positive (NaN included).
    pub fn validate(&self) -> Result<(), LocalityError> {
        let InnerSolver::ExactMip { time_limit_s } = *self;
        if time_limit_s.is_nan() || time_limit_s <= 0.0 {
            return Err(LocalityError::InvalidOption {
                name: "inner",
                reason: format!("MIP time limit {time_limit_s} s is not positive"),
            });
        }
        Ok(())
    }
}

/// What one oracle call did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallStats {
    /// Deadlines whose program was looked at (built, bounded or solved).
    pub deadlines_examined: u32,
    /// LP relaxations solved (re-confirmations of infeasibility included).
    pub lp_solves: u32,
    /// MIPs solved.
    pub mip_solves: u32,
    /// MIP solves stopped by their time limit.
    pub mip_limits: u32,
    /// `(t̂, f(t̂ − a), LB(t̂))` of every examined deadline.
    pub deadline_bounds: Vec<DeadlineBound>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// LOC-SUB at one deadline, bounded and solved.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadlineSolve {
    /// The deadline (0-based slot).
    pub deadline: u32,
    /// `LB(t̂)`: the LP relaxation's safe dual bound (`+∞` when the
    /// relaxation is infeasible, re-confirmed without presolve), or the
    /// better of it and the MIP dual bound when the MIP hit its limit.
    pub lower_bound: f64,
    /// The MIP's plan and its cost at the view's prices, if it found one.
    pub plan: Option<(LocalityPlan, f64)>,
    /// Whether the MIP proved its answer optimal (or proved
    /// infeasibility); `false` when it stopped at its limit.
    pub proven: bool,
}

/// The locality oracle: for each deadline `t̂ = a_i + d_min − 1, …, end_i`
/// (stopping once `f_i(t̂ − a_i)` cannot beat the best payoff), the LP
/// bound of LOC-SUB(i, t̂); the exact MIP where `f − LB` can beat the best
/// payoff; the plan of largest payoff (strictly positive, earliest on
/// ties).
///
/// The exact solver is deterministic: the same job and view give the same
/// plan.
#[derive(Debug, Clone)]
pub struct LocalityOracle {
    cluster: LocalityCluster,
    solver: InnerSolver,
    last: CallStats,
    counters: Arc<SolveCounters>,
}

/// LP and MIP solves of an oracle over all its calls, shared with its
/// owner so that they can be read after the oracle is consumed.
#[derive(Debug, Default)]
pub struct SolveCounters {
    lp: AtomicU64,
    mip: AtomicU64,
}

impl SolveCounters {
    /// LP relaxations solved.
    pub fn lp_solves(&self) -> u64 {
        self.lp.load(Ordering::Relaxed)
    }

    /// MIPs solved.
    pub fn mip_solves(&self) -> u64 {
        self.mip.load(Ordering::Relaxed)
    }

    fn add(&self, stats: &CallStats) {
        self.lp
            .fetch_add(u64::from(stats.lp_solves), Ordering::Relaxed);
        self.mip
            .fetch_add(u64::from(stats.mip_solves), Ordering::Relaxed);
    }
}

impl LocalityOracle {
    /// An oracle over `cluster` with `solver`.
    pub fn new(cluster: LocalityCluster, solver: InnerSolver) -> Self {
        LocalityOracle {
            cluster,
            solver,
            last: CallStats::default(),
            counters: Arc::default(),
        }
    }

    /// The cluster.
    pub fn cluster(&self) -> &LocalityCluster {
        &self.cluster
    }

    /// The statistics of the latest [`best_response`](PricingOracle::best_response).
    pub fn last_call(&self) -> &CallStats {
        &self.last
    }

    /// The solve counters over all calls (shared: they stay readable
    /// after the oracle is handed to the framework).
    pub fn counters(&self) -> Arc<SolveCounters> {
        Arc::clone(&self.counters)
    }

    /// `LB(t̂)` of a built program: the safe dual bound of its LP
    /// relaxation (at least 0), `+∞` when the relaxation is infeasible. An
    /// infeasibility found with presolve is re-confirmed without it.
    fn lp_bound(&mut self, problem: &PcProblem, stats: &mut CallStats) -> crate::Result<f64> {
        let opts = SolveOptions::default();
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
            Ok(r) => Ok(r.safe_bound.value.max(0.0)),
            // Costs are non-negative, so "unbounded or infeasible" is infeasible.
            Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => Ok(f64::INFINITY),
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
        let InnerSolver::ExactMip { time_limit_s } = self.solver;
        let opts = MipOptions {
            time_limit_s,
            mip_rel_gap: EXACT_MIP_REL_GAP,
            threads: 1,
            seed: 0,
        };
        stats.mip_solves += 1;
        let res = match solve_exact(&sub.problem, &opts) {
            Err(PcError::IntegerInfeasible) => return Ok((None, true, f64::INFINITY)),
            Err(e) => return Err(e.into()),
            Ok(r) => r,
        };
        let proven = res.status == ExactStatus::Optimal;
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
        Ok((plan, proven, res.dual_bound))
    }

    /// Bounds and solves LOC-SUB(i, t̂) at `deadline` for `job` at the
    /// prices of `view` (for tests and measurements; the oracle applies
    /// the skip rule before solving the MIP).
    ///
    /// # Errors
    ///
    /// Solver failures ([`crate::Error::Pc`]), including a missing solver
    /// without the `highs` feature.
    pub fn solve_deadline(
        &mut self,
        job: &LocalityJob,
        view: &PriceView<'_>,
        deadline: u32,
    ) -> crate::Result<DeadlineSolve> {
        let cells = sub::cells(job, &self.cluster, view);
        let mut stats = CallStats::default();
        let out = self.deadline(job, &cells, view, deadline, None, &mut stats);
        self.counters.add(&stats);
        out
    }

    /// One deadline: build, bound, and (unless `skip_at` says the bound
    /// cannot beat that payoff) solve exactly.
    fn deadline(
        &mut self,
        job: &LocalityJob,
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
            proven: true,
        };
        let Some(sub) = sub::build(job, cells, deadline)? else {
            return Ok(out);
        };
        out.lower_bound = self.lp_bound(&sub.problem, stats)?;
        let f = job.utility_at(deadline);
        if out.lower_bound == f64::INFINITY
            || skip_at.is_some_and(|best| f - out.lower_bound <= best)
        {
            return Ok(out);
        }
        let (plan, proven, dual) = self.exact(job, &sub, view, stats)?;
        out.plan = plan;
        out.proven = proven;
        if !proven && dual.is_finite() {
            out.lower_bound = out.lower_bound.max(dual);
        }
        Ok(out)
    }

    /// The best plan of `job` at `view`: `(plan, utility, cost)` when one
    /// has a strictly positive payoff, with the call's statistics and
    /// whether every solve was proven.
    ///
    /// # Errors
    ///
    /// Solver failures.
    #[allow(clippy::type_complexity)]
    pub fn best_plan(
        &mut self,
        job: &LocalityJob,
        view: &PriceView<'_>,
    ) -> crate::Result<(Option<(LocalityPlan, f64, f64)>, CallStats, bool)> {
        let start = Instant::now();
        let mut stats = CallStats::default();
        let cells = sub::cells(job, &self.cluster, view);
        let last = job.end.min(view.horizon().saturating_sub(1));
        let first = job.arrival.saturating_add(job.delta_min(&self.cluster));
        let (mut best, mut best_payoff, mut all_proven) = (None, 0.0_f64, true);
        let mut t = first;
        while t <= last {
            let f = job.utility_at(t);
            if f <= best_payoff {
                break; // costs are ≥ 0 and f does not increase
            }
            stats.deadlines_examined += 1;
            let d = self.deadline(job, &cells, view, t, Some(best_payoff), &mut stats)?;
            all_proven &= d.proven;
            stats.deadline_bounds.push(DeadlineBound {
                slot: t,
                utility: f,
                cost_lower_bound: d.lower_bound,
            });
            if let Some((plan, cost)) = d.plan {
                let utility = job.utility_at(plan.completion_slot());
                if utility - cost > best_payoff {
                    best_payoff = utility - cost;
                    best = Some((plan, utility, cost));
                }
            }
            t += 1;
        }
        stats.seconds = start.elapsed().as_secs_f64();
        self.counters.add(&stats);
        Ok((best, stats, all_proven))
    }
}

impl PricingOracle for LocalityOracle {
    type Job = LocalityJob;
    type Plan = LocalityPlan;

    /// The bound inputs: `schedulable` when a simple plan on the empty
    /// cluster ([`LocalityJob::empty_cluster_pace`]) finishes within the
    /// window; `ln f(δ_min)` with `δ_min = d_min − 1`;
    /// `ln f(end_i − a_i)`; four unit kinds in the one pool (DISTRIBUTED
    /// worker and PS, LOCAL worker and PS with NIC 0; kinds without a
    /// positive entry are left out); the normaliser
    /// `m_i = W^D·(Σ_r w^r + Σ_r s^r)`.
    fn bound_inputs(&self, job: &LocalityJob, horizon: u32) -> crate::Result<BoundInputs> {
        let pace = job.empty_cluster_pace(&self.cluster);
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
        Ok(BoundInputs {
            arrival: job.arrival,
            schedulable,
            ln_u_max: job.utility.ln_value(job.delta_min(&self.cluster)),
            ln_u_min: job.utility.ln_value(job.end - job.arrival),
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
        _job_index: usize,
        job: &LocalityJob,
        view: &PriceView<'_>,
    ) -> crate::Result<Response<LocalityPlan>> {
        let (best, stats, proven) = self.best_plan(job, view)?;
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
