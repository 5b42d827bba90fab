//! A locality-aware online scheduler for parameter-server training jobs, in
//! the spirit of Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online
//! Scheduling for Distributed Machine Learning Systems" (IEEE TNSE 2021).
//!
//! Only that paper's abstract was available to the project. The model,
//! the per-job program, the solver and the guarantee below are the crate's
//! own design, after the abstract's idea: reformulate the joint choice of
//! resources and worker–PS locality as a mixed packing–covering integer
//! program. Nothing here is that paper's algorithm, and none of its
//! guarantees is claimed.
//!
//! # The model
//!
//! Every machine may host workers and PSs of any job (role flags,
//! [`Hosting`](crate::model::Hosting), can restrict that). In each slot of
//! its window `[a_i, end_i]`, `end_i = min(T − 1, a_i + horizon − 1)`, a
//! job is in exactly one configuration:
//!
//! * **IDLE**;
//! * **LOCAL on `h`**: `y ≥ 1` workers and exactly one PS on machine `h`;
//!   gradients travel over the intra-machine bandwidth `b_int`, so a
//!   mini-batch takes `θ^L = τ + 2e/b_int` and no NIC bandwidth is reserved;
//! * **DISTRIBUTED**: workers and PSs anywhere; all traffic is charged to
//!   the NICs at the worker's reservation `b`, `θ^D = τ + 2e/b`, and the PSs
//!   carry it: `b·Σy ≤ B·Σz`, `Σz ≤ Σy`.
//!
//! A worker does `r = Δ/θ` mini-batches per slot (`Δ` the slot length), so
//! the work of a slot, `r^L·Σy^L + r^D·Σy^D`, is linear in the worker
//! counts; the job completes in the first slot where its cumulative work
//! reaches `Q_i = E·N·M` mini-batches. At most `N_i = min(data chunks,
//! max workers)` workers run per slot. By default `b_int` is each machine's
//! [`intra_bandwidth_bps`](crate::model::Machine::intra_bandwidth_bps) (so
//! `r^L` depends on the machine); [`LocalityParams::intra_factor`] `κ`
//! sets `b_int = κ·b_i` on every machine instead. Not modelled: aggregate
//! intra-machine bandwidth limits, PS compute, start-up and migration
//! costs.
//!
//! # The program
//!
//! Given unit prices `p_h^r(t)` and residual capacities, LOC-SUB(i, t̂) over
//! the slots `S = [a_i, t̂]` has integer workers `y^L_{h,t}`, `y^D_{h,t}`,
//! PSs `z^D_{h,t}` and binary selectors `u_{h,t}` (LOCAL on `h`, which
//! also counts its PS) and `v_t` (DISTRIBUTED):
//!
//! ```text
//! min  Σ π^L y^L + σ^L u + π^D y^D + σ^D z^D                (π, σ: unit prices per configuration)
//! (COV)  Σ r^L_h y^L + r^D y^D ≥ Q                            covering
//! (CAP)  w^L y^L + s^L u + w y^D + s z^D ≤ ĉ   ∀h,r,t          packing (w^L, s^L: NIC 0)
//! (NCAP) Σ_h (y^L + y^D) ≤ N,  (ONE) Σ_h u + v ≤ 1   ∀t        packing
//! (LU)   u ≤ y^L ≤ Ȳ^L u,  (DV) y^D ≤ Ȳ^D v, z^D ≤ Z̄^D v       linking
//! (BW)   b Σ y^D ≤ B Σ z^D,  (PSN) Σ z^D ≤ Σ y^D       ∀t       linking
//! ```
//!
//! plus `Σ z^D ≤ max_ps` when the job's PS cap binds. Cells where not even
//! one unit fits have no column.
//!
//! # The solver
//!
//! The online loop is the crate's primal–dual framework ([`crate::online`],
//! after OASiS): exponential prices in one pool of all machines,
//! admission iff the payoff `f_i(t̂ − a_i) − cost` is strictly positive,
//! irrevocable reservations. The oracle ([`LocalityOracle`]) enumerates
//! deadlines `t̂ = a_i + d_min − 1, …, end_i`, stopping once `f_i(t̂ − a_i)`
//! cannot beat the best payoff; at each it solves the LP relaxation
//! (HiGHS, its safe dual bound is `LB(t̂)`), skips the deadline when
//! `f − LB` cannot beat the best payoff, and otherwise solves LOC-SUB
//! with the inner solver: by default LP rounding ([`InnerSolver::LpRound`],
//! structured rounding with one choice group per slot,
//! PSs derived from the rounded workers, repair with the model's moves,
//! the cheapest of 8 draws, a price-aware greedy when all fail), or
//! exactly with the HiGHS MIP solver ([`InnerSolver::ExactMip`]: relative
//! gap 10⁻⁹, no presolve, a time limit per solve).
//!
//! # Offline batch
//!
//! [`LocalityBatch`] (module [`batch`]) schedules a batch of jobs all
//! present in the first slot, every one of them: the makespan by bisection
//! on the LP relaxation of a joint program over all jobs (a lower bound)
//! and rounding with repair, exactly by a MIP bisection on small
//! instances, or a weighted completion-time proxy.
//!
//! # Guarantee
//!
//! With every examined MIP solved to proven optimality the oracle is exact,
//! so the framework's certificate applies unchanged: `OPT ≤ 2α·ALG` (valid
//! under the framework's conditions: clairvoyant bounds, small demands,
//! `D_0 ≤ OPT/2` shown), the crate's `OPT ≤ 2α_eff·ALG`, and the online
//! dual `D_end` as an upper bound on the optimum of this model. LP
//! rounding, and a MIP stopped by its time limit, make responses
//! cost-approximate; the
//! realised factor `ρ̂_i` is then computed from the per-deadline lower
//! bounds and the guarantee becomes `2α'ρ0` with the `L` allowance `ρ0`
//! ([`LocalityParams::l_allowance`]), valid only if every `ρ̂_i ≤ ρ0`. The
//! report gives `α` under both price-bound rules.
//!
//! # Complexity
//!
//! Per job and examined deadline one LP and at most one MIP over at most
//! `|S|·(4H + 1)` columns and `|S|·(R·H + 4H + 5) + 1` rows: the exact
//! solver is for small instances.
//!
//! # Errors
//!
//! [`LocalityError`] for a job outside the model (a ring-all-reduce job, a
//! rigid or non-preemptible job, `b_i ≤ 0`, `B_i < b_i`) or invalid
//! options; framework errors when no price bounds can be derived; solver
//! errors, including [`crate::lp::LpError::SolverUnavailable`] without the
//! `highs` feature.
//!
//! # Example
//!
//! (Needs the `highs` feature.) One machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with 4 Gbit/s between
//! tasks on it; one job of `Q = 400` mini-batches, `τ = 0.5 s`,
//! `e = 125 MB`, `b = 1`, `B = 4` Gbit/s and 100 s slots: LOCAL does 100
//! mini-batches per worker and slot, DISTRIBUTED 40, so four LOCAL workers
//! finish in the arrival slot.
//!
//! ```
//! use dmlsched::algorithms::Algorithm;
//! use dmlsched::algorithms::locality::{Locality, LocalityParams, verify_locality};
//! use dmlsched::model::*;
//! use dmlsched::model::units::{gb, gbps, mb};
//! use dmlsched::schedule::{Configuration, verify};
//! use rand::SeedableRng;
//!
//! # #[cfg(feature = "highs")] {
//! let cap = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(gb(64.0)).nic(gbps(10.0));
//! let cluster = Cluster::new(vec![Machine::new(MachineId(0), cap, gbps(4.0))]);
//! let job = Job::new(JobId(0), 0.0, PsJob {
//!     epochs: 1, data_chunks: 4, minibatches_per_chunk: 100,
//!     minibatch_compute_s: 0.5, gradient_bytes: mb(125.0),
//!     worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(gb(8.0)).nic(gbps(1.0)),
//!     ps: Resources::zero().cpu_cores(2.0).memory(gb(8.0)).nic(gbps(4.0)),
//!     max_workers: 4, max_ps: 4,
//!     ..PsJob::default()
//! })
//! .with_utility(Utility::Linear { g1: 100.0, slope: 10.0 });
//! let instance = Instance::new(cluster, vec![job], 100.0, 4)?;
//! let params = LocalityParams::default();
//! let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(7);
//! let solved = Locality::new(params.clone())?.solve(&instance, &mut rng)?;
//! let seg = &solved.schedule.jobs[0].segments[0];
//! assert_eq!(seg.config, Some(Configuration::Local { machine: MachineId(0) }));
//! assert_eq!(solved.certificate.objective, 100.0);
//! verify(&instance, &solved.schedule)?;
//! verify_locality(&instance, &params, &solved.schedule)?;
//! println!("{}", solved.certificate);
//! # }
//! # Ok::<(), dmlsched::Error>(())
//! ```

pub mod baselines;
pub mod batch;
mod error;
mod model;
#[cfg(feature = "highs")]
mod offline;
mod oracle;
mod plan;
mod policy;
pub(crate) mod round;
mod session;
pub(crate) mod sub;
#[cfg(all(test, feature = "highs"))]
mod tests_internal;
#[cfg(all(test, feature = "highs", feature = "serde"))]
mod tests_support;
#[cfg(all(test, feature = "highs"))]
mod tests_theory;
mod verify;

use std::time::Instant;

use rand::{Rng, RngExt};

use crate::certificate::Certificate;
use crate::exact::Shortcut;
use crate::model::{Instance, JobId};
use crate::online::{
    BoundInputs, BoundsChoice, BoundsRule, Decision, JobOutcome, OnlineModel, OnlinePrimalDual,
    OnlineRun, OracleQuality, PdOptions, PriceBounds, PricingOracle, RunReport, realised_factor,
};
use crate::schedule::Segment;

use super::{Algorithm, OnlineAlgorithm, Solved};

pub use baselines::{BaselineReport, LocalityBaseline};
pub use batch::{
    BatchAttempt, BatchObjective, BatchSource, DEFAULT_MAX_COLUMNS, DEFAULT_MAX_SLOTS,
    LocalityBatch, LocalityBatchParams, LocalityBatchReport,
};
pub use error::{LocalityError, LocalityRule};
pub(crate) use model::LocalityCluster;
pub use model::{
    DEFAULT_HORIZON, LocalityJob, NIC, POOL, RESOURCE_NAMES, RESOURCES, Vector, ledger_units,
};
#[cfg(feature = "highs")]
pub use offline::{
    DEFAULT_OFFLINE_MIP_GAP, DEFAULT_OFFLINE_TIME_LIMIT_S, OFFLINE_LIMITS, OFFLINE_MAX_COLUMNS,
    OfflineOptimum, offline_optimum,
};
pub(crate) use oracle::SolveCounters;
pub use oracle::{
    CallStats, DEFAULT_MIP_TIME_LIMIT_S, EXACT_MIP_REL_GAP, InnerSolver, LocalityOracle, MAX_DRAWS,
};
pub use plan::{LocalityPlan, SlotConfig, SlotPlan};
pub use policy::LocalityPolicy;
pub use round::{DEFAULT_DRAWS, DEFAULT_LAMBDAS};
pub use session::{LocalitySession, LocalitySessionModel};
pub use verify::{CheckedJob, LocalityCheck, verify_locality};

/// Parameters of the locality-aware scheduler.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct LocalityParams {
    /// Plan window in slots from the arrival slot (default
    /// [`DEFAULT_HORIZON`] = 64).
    pub horizon: u32,
    /// `κ`: when set, `b_int,i = κ·b_i` on every machine; `None` (default)
    /// takes each machine's intra-machine bandwidth.
    pub intra_factor: Option<f64>,
    /// How LOC-SUB is solved (default: LP rounding, 8 draws).
    pub inner: InnerSolver,
    /// How the price bounds `U`, `L` are derived (default: the value floor
    /// with its default `v_floor`).
    pub bounds: BoundsChoice,
    /// `L` allowance `ρ0 ≥ 1` for cost-approximate responses (default 1).
    pub l_allowance: f64,
    /// Run seed of LP rounding; `None` (default) draws it from the
    /// caller's RNG. The exact solver ignores it.
    pub seed: Option<u64>,
    /// Options of the online loop.
    pub pd: PdOptions,
    /// Whether jobs may run LOCAL (default true). `false` disables LOCAL
    /// (`u ≡ 0`): every plan is DISTRIBUTED and every worker runs at `r^D`
    /// (the NoLocality baseline); [`verify_locality`] then rejects LOCAL
    /// slots.
    pub allow_local: bool,
}

impl Default for LocalityParams {
    fn default() -> Self {
        LocalityParams {
            horizon: DEFAULT_HORIZON,
            intra_factor: None,
            inner: InnerSolver::default(),
            bounds: BoundsChoice::ValueFloor { v_floor: None },
            l_allowance: 1.0,
            seed: None,
            pd: PdOptions::default(),
            allow_local: true,
        }
    }
}

impl LocalityParams {
    /// Checks the options that need no instance.
    ///
    /// # Errors
    ///
    /// [`LocalityError::InvalidOption`] for a bad inner solver
    /// ([`InnerSolver::validate`]) or an `l_allowance` that is not a finite
    /// number `≥ 1`.
    pub fn validate(&self) -> Result<(), LocalityError> {
        self.inner.validate()?;
        if !(self.l_allowance.is_finite() && self.l_allowance >= 1.0) {
            return Err(LocalityError::InvalidOption {
                name: "l_allowance",
                reason: format!("ρ0 = {} is not a finite number ≥ 1", self.l_allowance),
            });
        }
        Ok(())
    }
}

/// What happened to one job.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JobReport {
    /// The job.
    pub job: JobId,
    /// Whether it was admitted.
    pub admitted: bool,
    /// The oracle's quality (`None`: unschedulable, oracle not called).
    pub quality: Option<OracleQuality>,
    /// `ρ̂_i` from the examined deadlines' lower bounds and the best payoff
    /// ([`realised_factor`]); 1 when the oracle was not called.
    pub rho_hat: f64,
    /// What the admission call of the oracle did.
    pub stats: CallStats,
}

/// The scheduler's diagnostics beside the certificate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LocalityReport {
    /// The framework's report: decisions and plans per job in arrival
    /// order, α, α_eff, `D_0`, `D_end`, validity flags.
    pub run: RunReport<LocalityPlan>,
    /// The jobs in arrival order (the order of `run.outcomes`).
    pub jobs: Vec<LocalityJob>,
    /// Per job, arrival order.
    pub per_job: Vec<JobReport>,
    /// `max_i ρ̂_i` (1 without jobs).
    pub max_rho_hat: f64,
    /// The bounds rule used.
    pub bounds: BoundsChoice,
    /// `v_floor` used under the value floor.
    pub v_floor: Option<f64>,
    /// α under the η rule (with the `L` allowance), when derivable.
    pub alpha_eta: Option<f64>,
    /// α under the value floor (with its default `v_floor` unless one was
    /// given, and the `L` allowance), when derivable.
    pub alpha_value_floor: Option<f64>,
    /// The run seed (unused by the exact solver).
    pub seed: u64,
    /// What the oracle did over the run: the admission calls' statistics
    /// of [`per_job`](Self::per_job) summed (lists appended in call order;
    /// the rounding counts are zeros for the exact solver, and
    /// [`CallStats::max_cost_ratio`] is the largest `cost/LB` of a rounded
    /// deadline), except [`lp_solves`](CallStats::lp_solves) and
    /// [`mip_solves`](CallStats::mip_solves), which count every solve of
    /// the run, the final re-pricing's included, and
    /// [`seconds`](CallStats::seconds), the whole run's wall-clock.
    pub totals: CallStats,
}

/// The locality-aware scheduler as an offline runner over an instance's
/// arrival sequence.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Locality {
    params: LocalityParams,
    /// Whether the oracle's shortcuts may be taken (always, but in the
    /// tests that compare them with the rule).
    shortcut: Shortcut,
}

/// The instance's parameter-server jobs in arrival order under `params`
/// ([`Locality::jobs`]).
pub(crate) fn jobs_of(
    params: &LocalityParams,
    instance: &Instance,
    cluster: &LocalityCluster,
) -> Result<Vec<LocalityJob>, LocalityError> {
    instance
        .arrival_order()
        .into_iter()
        .map(|p| {
            let job = LocalityJob::from_job(
                instance,
                cluster,
                &instance.jobs()[p],
                params.horizon,
                params.intra_factor,
            )?;
            Ok(if params.allow_local {
                job
            } else {
                job.without_local()
            })
        })
        .collect()
}

/// Every job's bound inputs.
fn bound_inputs(
    oracle: &LocalityOracle,
    jobs: &[LocalityJob],
    horizon: u32,
) -> crate::Result<Vec<BoundInputs>> {
    jobs.iter()
        .map(|j| oracle.bound_inputs(j, horizon))
        .collect()
}

/// The bounds of `choice` (with the `L` allowance) and the `v_floor` used.
fn derive_bounds(
    cluster: &LocalityCluster,
    inputs: &[BoundInputs],
    choice: BoundsChoice,
    l_allowance: f64,
) -> crate::Result<(PriceBounds, Option<f64>)> {
    let ledger = cluster.ledger()?;
    let (rule, v) = match choice {
        BoundsChoice::Eta => (BoundsRule::Eta, None),
        BoundsChoice::ValueFloor { v_floor } => {
            let v = match v_floor {
                Some(v) => v,
                // No job can be admitted (each is rejected up front as
                // unschedulable): the floor is never used.
                None if !inputs.iter().any(|b| b.schedulable) => 1.0,
                None => {
                    crate::online::default_v_floor(inputs).ok_or(LocalityError::InvalidOption {
                        name: "bounds",
                        reason: "no schedulable job with positive utility to set the value floor"
                            .into(),
                    })?
                }
            };
            (BoundsRule::ValueFloor { v_floor: v }, Some(v))
        }
    };
    let mut bounds = PriceBounds::derive(&ledger, inputs, rule)?;
    if l_allowance != 1.0 {
        bounds = bounds.with_l_allowance(l_allowance)?;
    }
    Ok((bounds, v))
}

impl Algorithm for Locality {
    const NAME: &'static str = "locality";
    type Params = LocalityParams;
    type Report = LocalityReport;

    /// The scheduler with `params` ([`LocalityParams::validate`]).
    fn new(params: LocalityParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(Locality {
            params,
            shortcut: Shortcut::Allowed,
        })
    }

    fn params(&self) -> &LocalityParams {
        &self.params
    }

    /// Runs the scheduler over the jobs of `instance` in arrival order and
    /// returns the schedule (every segment with its configuration), the
    /// framework's certificate and the report. `rng` seeds randomised inner
    /// solvers when [`LocalityParams::seed`] is `None`; the exact solver is
    /// deterministic, so its result does not depend on it.
    ///
    /// The schedule is checked with [`schedule::verify`](crate::schedule::verify)
    /// and [`verify_locality`] before it is returned.
    ///
    /// # Errors
    ///
    /// See the [module documentation](self#errors); a schedule that either
    /// checker rejects is returned as its error (a bug).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        rng: &mut R,
    ) -> crate::Result<Solved<LocalityReport>> {
        let (run, jobs) = LocalityOnline::start(&self.params, self.shortcut, instance, rng)?;
        let (schedule, certificate, report) = run.solve(jobs, instance)?;
        verify_locality(instance, &self.params, &schedule)?;
        Ok(Solved {
            schedule,
            certificate,
            report,
        })
    }
}

impl OnlineAlgorithm for Locality {
    type Policy = LocalityPolicy;

    fn policy<R: Rng>(&self, instance: &Instance, rng: &mut R) -> crate::Result<LocalityPolicy> {
        crate::online::SessionPolicy::from_session(instance, self.instance_session(instance, rng)?)
    }
}

impl Locality {
    /// The scheduler with its oracle's shortcuts switched by `shortcut`
    /// (the tests' reference runs turn them off).
    #[cfg_attr(
        not(all(test, feature = "highs")),
        allow(dead_code, reason = "the tests' reference runs use it")
    )]
    pub(crate) fn with_shortcut(mut self, shortcut: Shortcut) -> Self {
        self.shortcut = shortcut;
        self
    }

    /// The instance's parameter-server jobs in arrival order (ties by
    /// position), in the model's terms.
    ///
    /// # Errors
    ///
    /// As [`LocalityJob::from_job`].
    pub(crate) fn jobs(
        &self,
        instance: &Instance,
        cluster: &LocalityCluster,
    ) -> Result<Vec<LocalityJob>, LocalityError> {
        jobs_of(&self.params, instance, cluster)
    }

    /// The framework engine the scheduler runs over `instance` (the ledger
    /// of its cluster, the price bounds derived from all its jobs, the
    /// oracle with the inner solver and the run seed — from `rng` when
    /// [`LocalityParams::seed`] is `None`), before any job, with the jobs
    /// in arrival order (ties by position): for driving the online loop job
    /// by job, e.g. to read the prices between decisions.
    /// [`Locality::solve`] steps the same engine over every job, in that
    /// order.
    ///
    /// # Errors
    ///
    /// As [`Locality::solve`], before any decision.
    pub fn engine(
        &self,
        instance: &Instance,
        rng: &mut impl Rng,
    ) -> crate::Result<(OnlinePrimalDual<LocalityOracle>, Vec<LocalityJob>)> {
        let (run, jobs) = LocalityOnline::start(&self.params, self.shortcut, instance, rng)?;
        Ok((run.into_engine(), jobs))
    }
}

/// The locality-aware scheduler's side of the generic online run
/// ([`OnlineRun`]): the cluster,
/// the oracle's counters, the per-job records and the price-bound
/// diagnostics of the report.
#[derive(Debug)]
pub struct LocalityOnline {
    cluster: LocalityCluster,
    counters: std::sync::Arc<SolveCounters>,
    per_job: Vec<JobReport>,
    bounds: BoundsChoice,
    v_floor: Option<f64>,
    alpha_eta: Option<f64>,
    alpha_value_floor: Option<f64>,
    seed: u64,
    start: Instant,
}

impl LocalityOnline {
    /// The run over `instance` (price bounds from all its jobs) and its
    /// jobs in arrival order.
    pub(crate) fn start(
        p: &LocalityParams,
        shortcut: Shortcut,
        instance: &Instance,
        rng: &mut impl Rng,
    ) -> crate::Result<(OnlineRun<Self>, Vec<LocalityJob>)> {
        let start = Instant::now();
        let seed = p.seed.unwrap_or_else(|| rng.random());
        p.validate()?;
        let cluster = LocalityCluster::from_instance(instance)?;
        let jobs = jobs_of(p, instance, &cluster)?;
        let oracle = LocalityOracle::new(cluster.clone(), p.inner)
            .with_seed(seed)
            .with_shortcut(shortcut);
        let inputs = bound_inputs(&oracle, &jobs, cluster.horizon)?;
        let (bounds, v_floor) = derive_bounds(&cluster, &inputs, p.bounds, p.l_allowance)?;
        let alpha_of = |c| {
            derive_bounds(&cluster, &inputs, c, p.l_allowance)
                .ok()
                .map(|b| b.0.alpha())
        };
        let alpha_eta = alpha_of(BoundsChoice::Eta);
        let alpha_value_floor = match p.bounds {
            BoundsChoice::ValueFloor { .. } => Some(bounds.alpha()),
            BoundsChoice::Eta => alpha_of(BoundsChoice::ValueFloor { v_floor: None }),
        };
        let counters = oracle.counters();
        let engine = OnlinePrimalDual::new(oracle, cluster.ledger()?, bounds, p.pd.clone())?;
        let model = LocalityOnline {
            cluster,
            counters,
            per_job: Vec::with_capacity(jobs.len()),
            bounds: p.bounds,
            v_floor,
            alpha_eta,
            alpha_value_floor,
            seed,
            start,
        };
        Ok((OnlineRun::new(engine, model, jobs.len()), jobs))
    }
}

impl OnlineModel for LocalityOnline {
    type Oracle = LocalityOracle;
    type Report = LocalityReport;
    const NAME: &'static str = "locality";

    fn job_id(job: &LocalityJob) -> JobId {
        job.id
    }

    /// Records the job's quality, realised factor and oracle call.
    fn after_step(
        &mut self,
        job: &LocalityJob,
        outcome: &JobOutcome<LocalityPlan>,
        oracle: &LocalityOracle,
    ) {
        let payoff = match &outcome.decision {
            Decision::Admitted { payoff, .. } => *payoff,
            _ => 0.0,
        };
        let (admitted, quality) = (outcome.admitted(), outcome.quality);
        let stats = if quality.is_some() {
            oracle.last_call().clone()
        } else {
            CallStats::default()
        };
        self.per_job.push(JobReport {
            job: job.id,
            admitted,
            quality,
            rho_hat: realised_factor(&stats.deadline_bounds, payoff),
            stats,
        });
    }

    fn unschedulable_why(&self, job: Option<&LocalityJob>) -> String {
        unschedulable_why(&self.cluster, job)
    }

    fn segments(&self, plan: &LocalityPlan) -> Vec<Segment> {
        plan.segments(&self.cluster)
    }

    fn report(
        self,
        run: RunReport<LocalityPlan>,
        jobs: Vec<LocalityJob>,
        _decision_seconds: Vec<f64>,
    ) -> crate::Result<LocalityReport> {
        let max_rho_hat = self.per_job.iter().map(|j| j.rho_hat).fold(1.0, f64::max);
        let mut totals = CallStats::default();
        for j in &self.per_job {
            totals.add(&j.stats);
        }
        totals.lp_solves = self.counters.lp_solves();
        totals.mip_solves = self.counters.mip_solves();
        Ok(LocalityReport {
            run,
            jobs,
            per_job: self.per_job,
            max_rho_hat,
            bounds: self.bounds,
            v_floor: self.v_floor,
            alpha_eta: self.alpha_eta,
            alpha_value_floor: self.alpha_value_floor,
            seed: self.seed,
            totals: CallStats {
                seconds: self.start.elapsed().as_secs_f64(),
                ..totals
            },
        })
    }

    fn certificate(report: &LocalityReport, instance: &Instance) -> Certificate {
        certificate_of(report, instance)
    }

    fn unknown_job(job: JobId) -> crate::Error {
        LocalityError::UnsupportedJob {
            job,
            reason: "not a job of the instance the policy was built for, or decided twice".into(),
        }
        .into()
    }
}

/// The certificate of a run over the jobs of `instance`: the framework's,
/// named and scoped, with the oracle's LP solves and seed.
pub(crate) fn certificate_of(
    report: &LocalityReport,
    instance: &Instance,
) -> crate::certificate::Certificate {
    let mut certificate = report.run.certificate.clone();
    certificate.algorithm = "locality".into();
    certificate.scope = Some(super::plan_scope(
        "total utility of plans of the locality model (LOCAL or DISTRIBUTED workers and \
         parameter servers per slot, each job's utility at its completion slot)",
        instance,
    ));
    // The framework's run information knows nothing of the oracle's
    // solves and seed: record them.
    certificate.run.lp_solves = u32::try_from(report.totals.lp_solves).unwrap_or(u32::MAX);
    certificate.run.seed = Some(report.seed);
    certificate.run.generator = Some("ChaCha8 (locality draw seeds)".into());
    certificate
}

/// Why `job` has no plan on the empty `cluster` within its window.
pub(crate) fn unschedulable_why(cluster: &LocalityCluster, job: Option<&LocalityJob>) -> String {
    let window = job.map_or(String::new(), |j| {
        if j.arrival >= cluster.horizon {
            format!(
                ": it starts at slot {}, at or past the horizon of {} slots",
                j.arrival, cluster.horizon
            )
        } else {
            format!(
                ", slots {}..={} (the plan window, `horizon` slots from the arrival, \
                 within the instance's horizon of {} slots)",
                j.arrival, j.end, cluster.horizon
            )
        }
    });
    format!(
        "even the fastest pace on the empty cluster cannot finish its work within its \
         window{window}"
    )
}
