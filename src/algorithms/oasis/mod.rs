//! OASiS: online admission and elastic scheduling of parameter-server
//! training jobs (Bao, Peng, Wu, Li, IEEE INFOCOM 2018; [algorithms guide,
//! section 7](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis)).
//!
//! # The maths
//!
//! Workers run on worker servers `H` and PSs on PS servers `K` (disjoint
//! pools). Job `i` arrives in slot `a_i`; it must train `D_i = E_i·N_i`
//! chunk-trainings, a chunk taking `ρ_i = M_i·ω_i` worker-slots with
//! `ω_i = τ_i + 2e_i/b_i` slots per mini-batch. Its utility `f_i(t̂ − a_i)`
//! depends on its completion slot `t̂`.
//!
//! Algorithm 1 is the framework of [`crate::online`] with two pools
//! ([`WORKER_POOL`], [`PS_POOL`]; a third with shared servers, below),
//! five resources ([`RESOURCES`], in GPUs,
//! vCPUs, GB, GB and Gbit/s) and prices
//! `p_h^r(t) = L_1·(U_1^r/L_1)^(g/c)`, `q_k^r(t) = L_2·(U_2^r/L_2)^(v/c)`.
//! Algorithm 2 ([`OasisOracle`]) returns, at those prices, the plan that
//! maximises `f_i(t̂ − a_i) − Σ p·w·y − Σ q·s·z` under the residual
//! capacities, the chunk model (`x_t` chunks in slot `t` need
//! `⌈x_t·ρ_i⌉ ≤ N_i` workers), and `zreq(y) = ⌈y·b_i/B_i⌉` PSs per `y`
//! workers (constraints (6), (7)). It runs the forward DP
//!
//! ```text
//! G_t(d) = min_{(x,y) ∈ O_t} C_t(y) + G_{t−1}(max(0, d − x)),   C_t(y) = WC_t(y) + PC_t(zreq(y))
//! ```
//!
//! over slots, keeps the deadline with the largest payoff `f(t − a) − G_t(D)`
//! (strictly positive, earliest on ties) and places workers and PSs on the
//! cheapest servers first. The job is admitted iff the payoff is `> 0`, and
//! its plan is reserved irrevocably.
//!
//! Where the paper is ambiguous or inconsistent the crate's decisions are
//! listed in [algorithms guide, section 7](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis).
//!
//! **Machines that host both roles.** The paper's pools are disjoint, and
//! by default a machine with `Hosting::Both` is refused. With
//! [`OasisParams::shared_machines`] such machines are shared servers: one
//! more pool whose cells both task kinds draw on (a job's workers and PSs
//! on one machine add up against its capacity; each cell is priced once,
//! by its total fill), with `U_S^r` at least the value per unit of workers
//! and of PSs and `L_S` by the same rule as the other pools. The oracle's
//! per-slot cost is then the cheapest joint placement, found by a dynamic
//! program over the shared servers, and stays exact ([algorithms guide,
//! section 7.6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-shared)).
//!
//! Beside the online algorithm ([`Oasis`], [`OasisPolicy`] for the
//! simulator, and [`Oasis::session`]: job by job over a shared
//! [`ClusterState`](crate::state::ClusterState), with price bounds learned
//! from past jobs): `offline_optimum` (feature `highs`) solves the exact
//! MIP over the chunk model (the model Algorithm 2 searches) for small
//! instances, and
//! the repository's `dmlsched-experiments` crate generates the paper's evaluation instances
//! (its `oasis` example reproduces Figures 3, 5 and 6;
//! `docs/reproduction.md` has the numbers).
//!
//! # Guarantee
//!
//! The paper's Theorem 4: `OPT ≤ 2α·ALG` with
//! `α = max(1, max_r ln(U_1^r/L_1), max_r ln(U_2^r/L_2))`, under small demands.
//! The certificate ([`crate::online::RunReport::certificate`]) carries
//! `D_end`, the online dual at the final prices, as an always-valid upper
//! bound on the chunk-model optimum; the crate's `OPT ≤ 2α_eff·ALG`; and the
//! paper's `2α`, marked valid only when its assumptions hold for the run.
//! With shared servers `α` also ranges over the shared pool, the bound is
//! over the model with shared servers, and both ratios rest on the crate's
//! extension of the paper's argument to the third pool (their sources say
//! so); they are checked on the run exactly as on a split cluster.
//!
//! # Complexity
//!
//! Per job `O(Σ_t [H log H + K log K + (H+K)·R + (D_i+1)·|O_t|])`, with
//! `|O_t| ≤ N_i + 1` options and `t` from the arrival to the last deadline
//! examined (early stop); the paper's DP is `O(T·D_i²)` `COST` calls.
//!
//! # Errors
//!
//! [`OasisError`] when the cluster is not split into worker-only and
//! PS-only servers (and [`OasisParams::shared_machines`] is not set), has no
//! machine for one of the roles, or a job is outside the model (not a
//! parameter-server job, not elastic and preemptible, a demand entry in `(0, 10⁻¹²)`,
//! `b_i ≤ 0`, `B_i < b_i`); framework errors
//! ([`crate::online::OnlineError`]) when no price bounds can be derived.
//!
//! # Limits
//!
//! The online algorithm works with prices in log space, so it accepts every
//! utility a valid [`Instance`] holds (the jobs' best utilities must sum to
//! a finite `f64`; [`crate::model::ModelError::UtilitySumNotFinite`]
//! otherwise). The exact MIP (`offline_optimum`) refuses a utility at or
//! above `EXACT_MAX_UTILITY` = 10²⁰, where HiGHS reads numbers as infinite.
//! A job needs at most `MAX_DP_CELLS` = 2²⁸ cells `T·(E·N + 1)` of the dynamic
//! program; the ledger's memory grows with the plans committed, not with
//! `T`.
//!
//! # Example
//!
//! A hand-computed instance (Example A): one worker server `(4 vCPU, 4 Gbit/s)`,
//! one PS server `(4 vCPU, 8 Gbit/s)`, two slots, five identical jobs with
//! `f(0) = 10`, `f(δ ≥ 1) = 4`.
//!
//! ```
//! use dmlsched::algorithms::Algorithm;
//! use dmlsched::algorithms::oasis::{Oasis, OasisParams};
//! use rand::SeedableRng;
//! use dmlsched::model::*;
//! use dmlsched::model::units::gbps;
//!
//! let server = |id, cpu: f64, nic: f64, hosts| {
//!     Machine::new(MachineId(id), Resources::zero().cpu_cores(cpu).nic(gbps(nic)), gbps(nic)).hosting(hosts)
//! };
//! let cluster = Cluster::new(vec![
//!     server(0, 4.0, 4.0, Hosting::Workers),
//!     server(1, 4.0, 8.0, Hosting::ParameterServers),
//! ]);
//! let slot = 3600.0;
//! let job = |id| {
//!     Job::new(JobId(id), 0.0, Architecture::ParameterServer(PsJob {
//!         epochs: 1, data_chunks: 2, minibatches_per_chunk: 1,
//!         // ω = τ + 2e/b = 0.5 + 0.5 slot
//!         minibatch_compute_s: 0.5 * slot,
//!         gradient_bytes: 0.25 * slot * gbps(1.0),
//!         worker: Resources::zero().cpu_cores(1.0).nic(gbps(1.0)),
//!         ps: Resources::zero().cpu_cores(1.0).nic(gbps(2.0)),
//!         max_workers: 2, max_ps: 2, ps_at_most_workers: true,
//!         sync: SyncMode::Asynchronous, layers: None,
//!     }))
//!     .with_utility(Utility::Table { values: vec![10.0, 4.0] })
//! };
//! let instance = Instance::new(cluster, (0..5).map(job).collect(), slot, 2)?;
//! let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
//! let solved = Oasis::new(OasisParams::default())?.solve(&instance, &mut rng)?;
//! assert_eq!(solved.certificate.objective, 28.0);
//! assert!((2.0 * solved.report.run.alpha - 10.961278).abs() < 1e-6);
//! solved.certificate.check(1e-9)?;
//! println!("{}", solved.certificate);
//! # Ok::<(), dmlsched::Error>(())
//! ```

mod error;
#[cfg(feature = "highs")]
mod exact;
mod model;
mod oracle;
mod plan;
mod policy;
mod session;
mod shared;
#[cfg(test)]
mod tests_oracle;
#[cfg(test)]
mod tests_shared;
#[cfg(test)]
mod tests_support;
#[cfg(test)]
mod tests_traces;

use crate::certificate::Certificate;
use crate::model::units::Num;
use crate::model::{Hosting, Instance, JobId};
use crate::online::{
    BoundInputs, BoundsChoice, BoundsRule, OnlineModel, OnlinePrimalDual, OnlineRun, PdOptions,
    PriceBounds, PricingOracle, RunReport,
};
use crate::schedule::Segment;

use rand::Rng;

use super::{Algorithm, OnlineAlgorithm, Solved};

pub use error::OasisError;
#[cfg(feature = "highs")]
pub use exact::{
    EXACT_MAX_COLUMNS, EXACT_MAX_UTILITY, ExactOptions, OfflineSolution, WorkModel, offline_optimum,
};
pub(crate) use model::OasisCluster;
pub use model::{OasisJob, PS_POOL, RESOURCE_NAMES, RESOURCES, WORKER_POOL, spec_units};
pub use oracle::OasisOracle;
pub use plan::{OasisPlan, SlotPlan};
pub use policy::OasisPolicy;
pub use session::{OasisSession, OasisSessionModel};

/// Parameters of OASiS.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct OasisParams {
    /// How `U` and `L` are derived (default: the η rule).
    pub bounds: BoundsChoice,
    /// Scale `φ` of every `U_κ^r`, keeping `L` (the misestimated `U/L` of
    /// the paper's Fig. 6, which does not say which of the two changes;
    /// default 1). Any `φ ≠ 1`
    /// makes the bounds estimates and the `2α` guarantee not valid.
    pub u_scale: f64,
    /// Stop the deadline loop when no later deadline can win (default
    /// `true`; never changes the result).
    pub early_stop: bool,
    /// Options of the online loop.
    pub pd: PdOptions,
    /// Run on machines that host workers and PSs (`Hosting::Both`) as
    /// shared servers: one pool of cells, priced once by their total fill,
    /// that a job's workers and PSs both draw on ([algorithms guide, section
    /// 7.6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-shared)).
    /// Default `false`: the paper's model, in which such a machine is
    /// refused ([`OasisError::UnsupportedCluster`]). On a cluster without
    /// such machines both values give the same results, bit for bit.
    pub shared_machines: bool,
}

impl Default for OasisParams {
    fn default() -> Self {
        OasisParams {
            bounds: BoundsChoice::Eta,
            u_scale: 1.0,
            early_stop: true,
            pd: PdOptions::default(),
            shared_machines: false,
        }
    }
}

impl OasisParams {
    /// Checks the options that need no instance.
    ///
    /// # Errors
    ///
    /// [`OasisError::InvalidOption`] for a `u_scale` that is not positive
    /// and finite. Every value of `shared_machines`, `early_stop` and `pd`
    /// is valid here (the online loop checks `pd`).
    pub fn validate(&self) -> Result<(), OasisError> {
        if !(self.u_scale.is_finite() && self.u_scale > 0.0) {
            return Err(OasisError::InvalidOption {
                name: "u_scale",
                reason: format!("{} is not positive and finite", Num(self.u_scale)),
            });
        }
        Ok(())
    }
}

/// OASiS's diagnostics beside the certificate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OasisReport {
    /// The framework's report: decisions and plans per job in arrival
    /// order, α, α_eff, `D_0`, `D_end`, validity flags.
    pub run: RunReport<OasisPlan>,
    /// The jobs in arrival order (the order of `run.outcomes`).
    pub jobs: Vec<JobId>,
    /// The bounds rule used.
    pub bounds: BoundsChoice,
    /// `v_floor` actually used under the value floor.
    pub v_floor: Option<f64>,
    /// `ln(U_κ^r / L_κ)` per kind of server (`0` worker-only, `1` PS-only,
    /// `2` shared; all `None` for a kind the cluster does not have) and
    /// resource (`None` where `U` is undefined): with sigmoid utilities `L`
    /// can be effectively 0 and α run into the thousands, so the report
    /// shows it.
    pub ln_u_over_l: [[Option<f64>; RESOURCES]; 3],
    /// Wall-clock seconds of every admission decision, arrival order.
    pub decision_seconds: Vec<f64>,
}

impl OasisReport {
    /// Admitted jobs.
    pub fn admitted(&self) -> usize {
        self.run.outcomes.iter().filter(|o| o.admitted()).count()
    }

    /// Admitted jobs / arrived jobs; 0 without jobs.
    pub fn admission_rate(&self) -> f64 {
        if self.run.outcomes.is_empty() {
            0.0
        } else {
            self.admitted() as f64 / self.run.outcomes.len() as f64
        }
    }
}

/// OASiS as an offline runner over an instance's arrival sequence.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Oasis {
    params: OasisParams,
}

/// The jobs of `instance` in arrival order (ties by position), in OASiS's
/// terms.
///
/// # Errors
///
/// [`OasisError::UnsupportedJob`] for a job outside the model.
pub(crate) fn jobs_in_arrival_order(instance: &Instance) -> Result<Vec<OasisJob>, OasisError> {
    instance
        .arrival_order()
        .into_iter()
        .map(|p| OasisJob::from_job(instance, &instance.jobs()[p]))
        .collect()
}

/// As [`jobs_in_arrival_order`], leaving out the jobs beyond the exact
/// chunk program's size ([`OasisError::JobTooLarge`]).
pub(crate) fn jobs_in_arrival_order_within_limits(
    instance: &Instance,
) -> Result<Vec<OasisJob>, OasisError> {
    instance
        .arrival_order()
        .into_iter()
        .map(|p| OasisJob::from_job(instance, &instance.jobs()[p]))
        .filter(|j| !matches!(j, Err(OasisError::JobTooLarge { .. })))
        .collect()
}

/// Every job's bound inputs for the price bounds `U`, `L`.
fn bound_inputs(cluster: &OasisCluster, jobs: &[OasisJob]) -> crate::Result<Vec<BoundInputs>> {
    let oracle = OasisOracle::new(cluster.clone(), true);
    jobs.iter()
        .map(|j| oracle.bound_inputs(j, cluster.horizon))
        .collect()
}

/// The price bounds of a run: derived by `params.bounds` from every job's
/// bound inputs, then `U` scaled by `params.u_scale`. Returns the bounds and
/// the `v_floor` used.
///
/// # Errors
///
/// Framework errors when the bounds cannot be derived;
/// [`OasisError::InvalidOption`] for an invalid `u_scale` or no positive
/// default `v_floor`.
pub(crate) fn price_bounds(
    cluster: &OasisCluster,
    jobs: &[OasisJob],
    params: &OasisParams,
) -> crate::Result<(PriceBounds, Option<f64>)> {
    params.validate()?;
    let ledger = cluster.ledger()?;
    let inputs = bound_inputs(cluster, jobs)?;
    let (rule, v_floor) = match params.bounds {
        BoundsChoice::Eta => (BoundsRule::Eta, None),
        BoundsChoice::ValueFloor { v_floor } => {
            let v = match v_floor {
                Some(v) => v,
                // No job can be admitted (each is rejected up front as
                // unschedulable): the floor is never used.
                None if !inputs.iter().any(|b| b.schedulable) => 1.0,
                None => {
                    crate::online::default_v_floor(&inputs).ok_or(OasisError::InvalidOption {
                        name: "bounds",
                        reason: "no schedulable job with positive utility to set the value floor"
                            .into(),
                    })?
                }
            };
            (BoundsRule::ValueFloor { v_floor: v }, Some(v))
        }
    };
    let mut bounds = PriceBounds::derive(&ledger, &inputs, rule)?;
    if params.u_scale != 1.0 {
        bounds = bounds.with_u_scale(params.u_scale)?;
    }
    Ok((bounds, v_floor))
}

fn ln_u_over_l(bounds: &PriceBounds, cluster: &OasisCluster) -> [[Option<f64>; RESOURCES]; 3] {
    let mut out = [[None; RESOURCES]; 3];
    let pools = [
        cluster.worker_pool(),
        cluster.ps_pool(),
        cluster.shared_pool(),
    ];
    for (k, pool) in pools.into_iter().enumerate() {
        let Some(pool) = pool else {
            continue;
        };
        for (r, cell) in out[k].iter_mut().enumerate() {
            *cell = bounds
                .ln_u(pool, crate::online::ResourceId(r as u8))
                .map(|u| u - bounds.ln_l(pool));
        }
    }
    out
}

/// OASiS's side of the generic online run ([`OnlineRun`]): the split
/// cluster and the price-bound
/// diagnostics of the report.
#[derive(Debug)]
pub(crate) struct OasisOnline {
    cluster: OasisCluster,
    bounds: BoundsChoice,
    v_floor: Option<f64>,
    ln_u_over_l: [[Option<f64>; RESOURCES]; 3],
}

impl OasisOnline {
    /// The run over `instance` (its split cluster's ledger, the price
    /// bounds of `params`) and its jobs in arrival order.
    fn start(
        instance: &Instance,
        params: &OasisParams,
    ) -> crate::Result<(OnlineRun<Self>, Vec<OasisJob>)> {
        let cluster = OasisCluster::from_instance_with(instance, params.shared_machines)?;
        let jobs = jobs_in_arrival_order(instance)?;
        let (bounds, v_floor) = price_bounds(&cluster, &jobs, params)?;
        let ratios = ln_u_over_l(&bounds, &cluster);
        let oracle = OasisOracle::new(cluster.clone(), params.early_stop);
        let engine = OnlinePrimalDual::new(oracle, cluster.ledger()?, bounds, params.pd.clone())?;
        let model = OasisOnline {
            cluster,
            bounds: params.bounds,
            v_floor,
            ln_u_over_l: ratios,
        };
        Ok((OnlineRun::new(engine, model, jobs.len()), jobs))
    }
}

impl OnlineModel for OasisOnline {
    type Oracle = OasisOracle;
    type Report = OasisReport;
    const NAME: &'static str = "oasis";

    fn job_id(job: &OasisJob) -> JobId {
        job.id
    }

    fn unschedulable_why(&self, job: Option<&OasisJob>) -> String {
        job.and_then(|j| j.unschedulable_why(&self.cluster))
            .unwrap_or_else(|| "no plan on the empty cluster".into())
    }

    fn segments(&self, plan: &OasisPlan) -> Vec<Segment> {
        plan.segments(&self.cluster)
    }

    fn report(
        self,
        run: RunReport<OasisPlan>,
        jobs: Vec<OasisJob>,
        decision_seconds: Vec<f64>,
    ) -> crate::Result<OasisReport> {
        Ok(OasisReport {
            run,
            jobs: jobs.iter().map(|j| j.id).collect(),
            bounds: self.bounds,
            v_floor: self.v_floor,
            ln_u_over_l: self.ln_u_over_l,
            decision_seconds,
        })
    }

    fn certificate(report: &OasisReport, instance: &Instance) -> Certificate {
        certificate_of(report, instance)
    }

    fn unknown_job(job: JobId) -> crate::Error {
        OasisError::UnknownJob { job }.into()
    }
}

impl Algorithm for Oasis {
    const NAME: &'static str = "oasis";
    type Params = OasisParams;
    type Report = OasisReport;

    /// OASiS with `params` ([`OasisParams::validate`]).
    fn new(params: OasisParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(Oasis { params })
    }

    fn params(&self) -> &OasisParams {
        &self.params
    }

    /// Runs OASiS over the jobs of `instance` in arrival order (each job
    /// usable from its arrival slot) and returns the verified schedule, the
    /// certificate and the report. OASiS draws no random numbers: `rng` is
    /// not used.
    ///
    /// # Errors
    ///
    /// See the [module documentation](self#errors); a schedule that
    /// [`verify`](crate::schedule::verify) rejects is reported as [`crate::Error::Schedule`] (a bug).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        _rng: &mut R,
    ) -> crate::Result<Solved<OasisReport>> {
        let (run, jobs) = OasisOnline::start(instance, &self.params)?;
        let (schedule, certificate, report) = run.solve(jobs, instance)?;
        Ok(Solved {
            schedule,
            certificate,
            report,
        })
    }
}

impl OnlineAlgorithm for Oasis {
    type Policy = OasisPolicy;

    fn policy<R: Rng>(&self, instance: &Instance, _rng: &mut R) -> crate::Result<OasisPolicy> {
        OasisPolicy::new(instance, &self.params)
    }
}

impl Oasis {
    /// The framework engine OASiS runs over `instance` (its split cluster's
    /// ledger, the price bounds derived by `params.bounds` and scaled by
    /// `params.u_scale`, the oracle with `params.early_stop`, `params.pd`),
    /// before any job, with the jobs in arrival order (ties by position):
    /// for driving the online loop job by job, e.g. to read the prices
    /// between decisions. [`Oasis::solve`] steps the same engine over
    /// every job.
    ///
    /// # Errors
    ///
    /// As [`Oasis::solve`], before any decision.
    pub fn engine(
        &self,
        instance: &Instance,
    ) -> crate::Result<(OnlinePrimalDual<OasisOracle>, Vec<OasisJob>)> {
        let (run, jobs) = OasisOnline::start(instance, &self.params)?;
        Ok((run.into_engine(), jobs))
    }
}

/// The certificate of a run over the jobs of `instance`: the framework's,
/// named and scoped.
pub(crate) fn certificate_of(
    report: &OasisReport,
    instance: &Instance,
) -> crate::certificate::Certificate {
    let shared = instance
        .cluster()
        .machines
        .iter()
        .any(|m| m.hosts == Hosting::Both);
    let over = |objective: &str| super::plan_scope(objective, instance);
    stated(report.run.certificate.clone(), shared, over)
}

/// The framework's certificate `certificate` as OASiS states it: named,
/// scoped by `over` (the objective in words → the scope), and with shared
/// servers, the shared pool's source on its ratio guarantees.
pub(crate) fn stated(
    mut certificate: crate::certificate::Certificate,
    shared: bool,
    over: impl Fn(&str) -> String,
) -> crate::certificate::Certificate {
    certificate.algorithm = "oasis".into();
    if !shared {
        certificate.scope = Some(over(
            "total utility of plans of the OASiS model (workers and parameter servers per slot, \
             each job's utility at its completion slot)",
        ));
        return certificate;
    }
    certificate.scope = Some(over(
        "total utility of plans of the OASiS model with shared servers (workers and parameter \
         servers per slot, a machine hosting both roles holding a job's workers and PSs within \
         one capacity, each job's utility at its completion slot)",
    ));
    for g in &mut certificate.guarantees {
        g.source.push_str(SHARED_POOL_SOURCE);
    }
    certificate
}

/// Appended to the sources of the ratio guarantees of a run with shared
/// servers: the third pool is the crate's extension of the paper's proof.
const SHARED_POOL_SOURCE: &str = "; shared servers: crate (a third pool of cells whose U^r covers \
     the value per unit of workers and of PSs, its L by the same rule with the divisor max(4, 2P); \
     the allocation–cost relation is per cell and D_0 ≤ OPT/2 is checked on the run)";
