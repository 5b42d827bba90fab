//! The offline batch variant of the locality-aware scheduler: every job is
//! present in the first slot and every job must be scheduled; minimise the
//! makespan (primary) or a weighted completion-time proxy (secondary).
//!
//! # The joint program `P(T)`
//!
//! LOC-SUB's columns indexed by job, `(y^L_{i,h,t}, u_{i,h,t}, y^D_{i,h,t},
//! z^D_{i,h,t}, v_{i,t})` for slots `t = 1..T`, with bounds `Ȳ`, `Z̄` from
//! the full capacities; every job's own rows (COV, NCAP, ONE, LU, DV, BW,
//! PSN and the PS cap) and, per machine `h`, resource `r` and slot `t`, one
//! joint capacity row
//! `Σ_i (w_i^{L,r} y^L + s_i^{L,r} u + w_i^r y^D + s_i^r z^D) ≤ c_h^r`.
//! `work_{i,t} = Σ_h (r^L_{i,h} y^L_{i,h,t} + r^D_i y^D_{i,h,t})`.
//!
//! # Makespan ([`BatchObjective::Makespan`], default)
//!
//! 1. **Upper bound `T_hi`**: the better makespan of the AlwaysLocal and
//!    AlwaysSpread list schedulers in offline mode (jobs in index order,
//!    each placed as early as possible on the residual capacity the earlier
//!    ones left; ties to AlwaysLocal).
//! 2. **`T_lo = max_i d_min,i`**, `d_min = ⌈Q/(N·r^max)⌉`.
//! 3. **Bisection** on the feasibility of `P(T)`'s LP relaxation over
//!    `[T_lo, T_hi]` (feasibility is monotone in `T`: more slots only add
//!    columns). Every LP is solved by HiGHS without presolve, so an
//!    `Infeasible` answer is the solver's own, not presolve's. The smallest
//!    feasible `T` is `T_LP`, a lower bound on the optimal makespan.
//! 4. **Rounding** for `T = T_LP, …, T_hi − 1`: the LP of `P(T)` with the
//!    front-loading tie-break `min Σ_i Σ_t (t/T)·work_{i,t}/Q_i`, then
//!    `draws` attempts of structured rounding (one choice group per job
//!    and slot, as in the online rounding), PSs derived from the rounded
//!    workers, and repair by the packing–covering engine's driver with
//!    the batch's moves (joint capacity: remove a worker of the job with
//!    the most workers in the cell; covering: job by job in decreasing
//!    deficit, moves priced by normalised resource use `Σ_r d^r/c_h^r`,
//!    ties to the earlier slot). The first success is the schedule; when
//!    none succeeds (or the range is empty) the list schedule is returned.
//! 5. **Exact mode** ([`InnerSolver::ExactMip`]): the rounding is replaced
//!    by a bisection on MIP feasibility over `[T_LP, T_hi]` (HiGHS, no
//!    presolve, the inner solver's time limit per solve); the exact
//!    optimum is reported only when every step was proven.
//!
//! # Weighted completion-time proxy ([`BatchObjective::WeightedCompletion`])
//!
//! The LP of `P(T_hi)` minimising `Σ_i wt_i Σ_t t·work_{i,t}/Q_i`, rounded
//! and repaired as above with the move cost `wt_i·t/Q_i` per unit of
//! work; every one of the `draws` draws runs, and the schedule is the
//! best (by `Σ_i wt_i C_i`, ties to the earlier) of the successful draws
//! and the list schedule. Weights: [`LocalityBatchParams::weights`],
//! by default every job's [`weight`](crate::model::Job::weight).
//!
//! # Guarantee
//!
//! None. The certificate's bound is `T_LP` (makespan) or the LP optimum
//! (proxy); the ratio is measured. Randomised rounding with repair has no
//! proven ratio for this program, and the list schedulers have none in
//! this model either (jobs of different widths and two configurations).
//! The proxy's LP bound holds for every schedule that finishes within
//! `T_hi` slots: scale each job's variables in its last slot by one common
//! factor in `(0, 1]` so that its work is exactly `Q_i`; the linking rows
//! are homogeneous and the others only loosen, so the point is feasible
//! for the LP, and its `Σ_t t·work_{i,t}/Q_i` is an average of slot
//! indices `≤ C_i`.
//!
//! # Scope
//!
//! Every job must arrive in the first slot (a later arrival is refused
//! with [`LocalityError::UnsupportedJob`]); every job's window is the
//! whole horizon of the instance.
//!
//! # Errors
//!
//! [`LocalityError::JobCannotFit`], [`LocalityError::NoListSchedule`],
//! [`LocalityError::BatchTooLarge`] (more than
//! [`LocalityBatchParams::max_slots`] slots or
//! [`LocalityBatchParams::max_columns`] columns),
//! [`LocalityError::InvalidOption`] (no job, bad options),
//! [`LocalityError::UnsupportedJob`]; solver errors, including
//! [`crate::lp::LpError::SolverUnavailable`] without the `highs` feature.
//!
//! # Example
//!
//! (Needs the `highs` feature.) Two jobs that each need a whole machine
//! for one slot: the makespan is 2.
//!
//! ```
//! use dmlsched::algorithms::Algorithm;
//! use dmlsched::algorithms::locality::{LocalityBatch, LocalityBatchParams};
//! use dmlsched::model::*;
//! use dmlsched::model::units::{gb, gbps, mb};
//! use rand::SeedableRng;
//!
//! # #[cfg(feature = "highs")] {
//! let cap = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(gb(64.0)).nic(gbps(10.0));
//! let cluster = Cluster::new(vec![Machine::new(MachineId(0), cap, gbps(4.0))]);
//! let job = |id| Job::new(JobId(id), 0.0, PsJob {
//!     epochs: 1, data_chunks: 4, minibatches_per_chunk: 100,
//!     minibatch_compute_s: 0.5, gradient_bytes: mb(125.0),
//!     worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(gb(8.0)).nic(gbps(1.0)),
//!     ps: Resources::zero().cpu_cores(2.0).memory(gb(8.0)).nic(gbps(4.0)),
//!     max_workers: 4, max_ps: 4,
//!     ..PsJob::default()
//! });
//! let instance = Instance::new(cluster, vec![job(0), job(1)], 100.0, 8)?;
//! let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(7);
//! let solved = LocalityBatch::new(LocalityBatchParams::default())?.solve(&instance, &mut rng)?;
//! assert_eq!((solved.report.t_lp, solved.report.makespan), (2, 2));
//! println!("{}", solved.certificate);
//! # }
//! # Ok::<(), dmlsched::Error>(())
//! ```

mod program;
mod round;
mod run;

use std::time::Instant;

use rand::{Rng, RngExt};

use crate::certificate::{Bound, BoundKind, Certificate, ExactInfo, ExactStatus, Sense};
use crate::lp::{ExactMipLimits, SolveOptions};
use crate::model::Instance;
use crate::online::Reservation;
use crate::pcip::{MipOptions, PcError, solve_exact, solve_lp};
use crate::schedule::{JobSchedule, Schedule};

use crate::algorithms::Algorithm;

use super::round::draw_seed;
use super::sub::{self, Cells};
use super::{
    EXACT_MIP_REL_GAP, InnerSolver, LocalityBaseline, LocalityCluster, LocalityError, LocalityJob,
    LocalityParams, LocalityPlan, Solved, verify_locality,
};
use program::{Joint, Objective};
use round::{BatchRounding, MoveCost, round_horizon};

/// Default [`LocalityBatchParams::max_slots`].
pub const DEFAULT_MAX_SLOTS: u32 = 512;
/// Default [`LocalityBatchParams::max_columns`].
pub const DEFAULT_MAX_COLUMNS: u64 = 250_000;

/// What the offline batch minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BatchObjective {
    /// The makespan `C_max` (default).
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Makespan"))]
    Makespan,
    /// `Σ_i wt_i C_i` through the LP proxy over `T_hi` slots.
    #[cfg_attr(feature = "serde", serde(alias = "WeightedCompletion"))]
    WeightedCompletion,
}

/// Parameters of [`LocalityBatch`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct LocalityBatchParams {
    /// The objective (default: makespan).
    pub objective: BatchObjective,
    /// LP rounding (default: 8 draws per horizon, the default scalings) or
    /// the exact MIP bisection of the makespan ([`InnerSolver::ExactMip`],
    /// makespan only).
    pub inner: InnerSolver,
    /// `κ`: when set, `b_int,i = κ·b_i` on every machine; `None` (default)
    /// takes each machine's intra-machine bandwidth.
    pub intra_factor: Option<f64>,
    /// Whether jobs may run LOCAL (default true).
    pub allow_local: bool,
    /// Run seed of the rounding; `None` (default) draws it from the
    /// caller's RNG.
    pub seed: Option<u64>,
    /// Weights `wt_i` of the proxy, one per job in instance order; `None`
    /// (default) takes every job's [`weight`](crate::model::Job::weight)
    /// (1 unless set).
    pub weights: Option<Vec<f64>>,
    /// Most slots a program or list schedule may span (default
    /// [`DEFAULT_MAX_SLOTS`]).
    pub max_slots: u32,
    /// Most columns `I·T·(4H + 1)` a program may have (an estimate before
    /// pruning; default [`DEFAULT_MAX_COLUMNS`]).
    pub max_columns: u64,
}

impl Default for LocalityBatchParams {
    fn default() -> Self {
        LocalityBatchParams {
            objective: BatchObjective::Makespan,
            inner: InnerSolver::default(),
            intra_factor: None,
            allow_local: true,
            seed: None,
            weights: None,
            max_slots: DEFAULT_MAX_SLOTS,
            max_columns: DEFAULT_MAX_COLUMNS,
        }
    }
}

impl LocalityBatchParams {
    /// Checks the options that need no instance.
    ///
    /// # Errors
    ///
    /// [`LocalityError::InvalidOption`] for a bad inner solver
    /// ([`InnerSolver::validate`]), the exact solver with the weighted
    /// completion objective (the exact mode bisects the makespan only), or
    /// a size limit of 0.
    pub fn validate(&self) -> Result<(), LocalityError> {
        let bad = |name: &'static str, reason: &str| {
            Err(LocalityError::InvalidOption {
                name,
                reason: reason.into(),
            })
        };
        self.inner.validate()?;
        if self.objective == BatchObjective::WeightedCompletion
            && matches!(self.inner, InnerSolver::ExactMip { .. })
        {
            return bad("inner", "the exact mode bisects the makespan only");
        }
        if self.max_slots == 0 || self.max_columns == 0 {
            return bad("max_slots", "the size limits must be positive");
        }
        Ok(())
    }
}

/// What the rounding did at one horizon `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchAttempt {
    /// The horizon `T` (slots).
    pub slots: u32,
    /// The LP optimum of the program rounded (`None`: its LP failed).
    pub lp_objective: Option<f64>,
    /// Draws run.
    pub draws: u32,
    /// The 0-based draw that gave the schedule (makespan: the first
    /// success; proxy: the best), if any.
    pub success: Option<u32>,
}

/// Where the returned schedule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchSource {
    /// A rounded point of `P(slots)`, draw `draw`.
    Rounding {
        /// The horizon `T`.
        slots: u32,
        /// The 0-based draw.
        draw: u32,
    },
    /// The list schedule of this baseline.
    ListSchedule(LocalityBaseline),
    /// An integer point of the MIP bisection.
    ExactMip,
}

/// The offline batch's diagnostics beside the certificate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LocalityBatchReport {
    /// The objective.
    pub(crate) objective: BatchObjective,
    /// The jobs in instance order, in the model's terms.
    pub jobs: Vec<LocalityJob>,
    /// Every job's plan, instance order.
    pub plans: Vec<LocalityPlan>,
    /// `T_lo = max_i d_min,i`.
    pub t_lo: u32,
    /// `T_hi`: the better list schedule's makespan.
    pub t_hi: u32,
    /// `T_LP`: the smallest horizon whose LP relaxation is feasible.
    pub t_lp: u32,
    /// The list scheduler that gave `T_hi`.
    pub heuristic: LocalityBaseline,
    /// AlwaysLocal's offline makespan (`None`: it does not finish).
    pub local_makespan: Option<u32>,
    /// AlwaysSpread's offline makespan (`None`: it does not finish).
    pub spread_makespan: Option<u32>,
    /// The rounding per horizon, in the order tried.
    pub attempts: Vec<BatchAttempt>,
    /// Where the schedule comes from.
    pub source: BatchSource,
    /// `C_max`: the last slot with work (1-based).
    pub makespan: u32,
    /// The optimal makespan, when proven (the exact bisection, or
    /// `C_max = T_LP`).
    pub exact_makespan: Option<u32>,
    /// The weights `wt_i`, instance order.
    pub(crate) weights: Vec<f64>,
    /// Every job's completion slot `C_i` (1-based), instance order.
    pub completions: Vec<u32>,
    /// `Σ_i wt_i C_i`.
    pub weighted_completion: f64,
    /// The proxy's LP optimum (its safe dual bound), for
    /// [`BatchObjective::WeightedCompletion`].
    pub proxy_lp_bound: Option<f64>,
    /// LP relaxations solved.
    pub lp_solves: u32,
    /// MIPs solved.
    pub mip_solves: u32,
    /// The run seed.
    pub(crate) seed: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The offline batch variant (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LocalityBatch {
    params: LocalityBatchParams,
}

/// The validated inputs of one run.
struct Setup {
    cluster: LocalityCluster,
    jobs: Vec<LocalityJob>,
    weights: Vec<f64>,
    /// The parameters [`verify_locality`] checks with.
    check: LocalityParams,
}

/// LP and MIP solves of a run.
#[derive(Default)]
struct Tally {
    lp: u32,
    mip: u32,
}

/// The list schedule that gives `T_hi`.
struct Upper {
    plans: Vec<LocalityPlan>,
    baseline: LocalityBaseline,
    t_hi: u32,
    local: Option<u32>,
    spread: Option<u32>,
}

/// `C_max` of plans: the last slot with work, 1-based (0 without work).
fn makespan(plans: &[LocalityPlan]) -> u32 {
    plans
        .iter()
        .filter(|p| !p.slots.is_empty())
        .map(|p| p.completion_slot() + 1)
        .max()
        .unwrap_or(0)
}

/// `Σ_i wt_i C_i` (1-based completions).
fn weighted(plans: &[LocalityPlan], w: &[f64]) -> f64 {
    plans
        .iter()
        .zip(w)
        .map(|(p, w)| w * f64::from(p.completion_slot() + 1))
        .sum()
}

impl Algorithm for LocalityBatch {
    const NAME: &'static str = "locality-batch";
    type Params = LocalityBatchParams;
    type Report = LocalityBatchReport;

    /// The offline batch with `params` ([`LocalityBatchParams::validate`]).
    fn new(params: LocalityBatchParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(LocalityBatch { params })
    }

    fn params(&self) -> &LocalityBatchParams {
        &self.params
    }

    /// Schedules every job of `instance` (see the [module
    /// documentation](self)); the schedule is checked with
    /// [`schedule::verify`](crate::schedule::verify) and
    /// [`verify_locality`] before it is returned. `rng` seeds the rounding
    /// when [`LocalityBatchParams::seed`] is `None`.
    ///
    /// # Errors
    ///
    /// See the [module documentation](self#errors).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        rng: &mut R,
    ) -> crate::Result<Solved<LocalityBatchReport>> {
        let start = Instant::now();
        let seed = self.params.seed.unwrap_or_else(|| rng.random());
        let s = self.setup(instance)?;
        let mut tally = Tally::default();
        let (t_lo, cap) = self.slot_limits(&s)?;
        let up = self.upper(&s, cap)?;
        let cells: Vec<Cells> = s
            .jobs
            .iter()
            .map(|j| sub::full_capacity_cells(j, &s.cluster, up.t_hi - 1))
            .collect();
        let t_lo = t_lo.min(up.t_hi);
        let t_lp = self.lp_bisection(&s, &cells, t_lo, up.t_hi, &mut tally)?;
        let mut run = Outcome {
            plans: up.plans.clone(),
            source: BatchSource::ListSchedule(up.baseline),
            attempts: Vec::new(),
            exact: None,
            proxy_bound: None,
        };
        match (self.params.objective, self.params.inner) {
            (BatchObjective::Makespan, InnerSolver::ExactMip { time_limit_s }) => {
                self.exact_bisection(
                    &s,
                    &cells,
                    (t_lp, up.t_hi),
                    time_limit_s,
                    &mut run,
                    &mut tally,
                )?;
            }
            (BatchObjective::Makespan, _) => {
                for t in t_lp..up.t_hi {
                    let (plans, attempt) = self.round_at_with(&s, &cells, t, seed, &mut tally)?;
                    let done = plans.is_some();
                    if let Some(plans) = plans {
                        run.source = BatchSource::Rounding {
                            slots: t,
                            draw: attempt.success.unwrap_or(0),
                        };
                        run.plans = plans;
                    }
                    run.attempts.push(attempt);
                    if done {
                        break;
                    }
                }
            }
            (BatchObjective::WeightedCompletion, _) => {
                self.proxy(&s, &cells, up.t_hi, seed, &mut run, &mut tally)?;
            }
        }
        let bounds = (t_lo, t_lp, seed, start);
        self.finish(instance, s, up, run, bounds, tally)
    }
}

impl LocalityBatch {
    /// Builds `P(slots)` with the front-loading objective, solves its LP
    /// and runs the rounding's draws at that horizon (the makespan's
    /// rounding step, for tests and measurements): every job's plan from
    /// the first draw that succeeds, `None` when none does or the LP of
    /// `P(slots)` is infeasible. Draw `k` uses the stream
    /// `draw_seed(seed, 0, slots, k)`.
    ///
    /// # Errors
    ///
    /// As [`solve`](Self::solve), before its list schedules.
    pub fn round_at(
        &self,
        instance: &Instance,
        slots: u32,
        seed: u64,
    ) -> crate::Result<Option<Vec<LocalityPlan>>> {
        let s = self.setup(instance)?;
        if slots == 0 || slots > self.params.max_slots.min(instance.horizon_slots()) {
            return Err(LocalityError::InvalidOption {
                name: "slots",
                reason: format!("{slots} slots: 1..=min(max_slots, horizon) allowed"),
            }
            .into());
        }
        let cells: Vec<Cells> = s
            .jobs
            .iter()
            .map(|j| sub::full_capacity_cells(j, &s.cluster, slots - 1))
            .collect();
        let mut tally = Tally::default();
        Ok(self.round_at_with(&s, &cells, slots, seed, &mut tally)?.0)
    }
}

/// The schedule chosen so far and what led to it.
struct Outcome {
    plans: Vec<LocalityPlan>,
    source: BatchSource,
    attempts: Vec<BatchAttempt>,
    /// The exact solve's result, when one ran or the bound proves it.
    exact: Option<ExactInfo>,
    proxy_bound: Option<Bound>,
}
