//! The GADGET-style scheduler's side of the generic online run: the
//! framework over the usable servers with the derived bounds, the fairness
//! weights, the certificate, the report and the crate schedule with GPU
//! ids.

use crate::certificate::{Certificate, Guarantee, GuaranteeKind, GuaranteeScope};
use crate::model::{GpuId, Instance, JobId};
use crate::online::{
    BoundInputs, BoundsRule, Decision, JobOutcome, OnlineModel, OnlinePrimalDual, OnlineRun,
    PriceBounds, PricingOracle, RunReport, schedule_of, value_floor_from,
};
use crate::schedule::{Schedule, Segment};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::error::GadgetError;
use super::model::{DATA_UNIT_BYTES, GadgetCluster, GadgetJob, GadgetModel, headroom_ledger};
use super::oracle::GadgetOracle;
use super::params::{FairnessWeighting, GadgetBounds, GadgetParams};
use super::plan::GadgetPlan;
use super::report::{Admission, GadgetReport, JobRecord, RatioConditions, ServerRecord};

/// Where the `2α` statement comes from: the crate's reading of the
/// primal–dual argument for this model, never GADGET's own guarantee.
const SOURCE: &str = "crate: the online primal–dual argument of Buchbinder and Naor as used by OASiS (Bao, Peng, Wu, Li, IEEE INFOCOM 2018, Thm. 4), applied to this model; not a guarantee of GADGET (Yu, Tian, Ji, Wu, Rajan, Liu, IEEE INFOCOM 2022)";

/// The price bounds of a run and α under both rules.
#[derive(Debug, Clone)]
pub(crate) struct Bounds {
    pub(crate) bounds: PriceBounds,
    pub(crate) v_floor: Option<f64>,
    pub(crate) alpha_eta: Option<f64>,
    pub(crate) alpha_value_floor: Option<f64>,
}

/// `U` from every job's bound inputs (with `ω = 1`, an upper bound on any
/// frozen weight), `L` by `params.bounds`, then `U` scaled by
/// `params.u_scale`. With no schedulable job the value floor is 1 (no
/// price is ever used).
///
/// # Errors
///
/// Framework errors when the bounds cannot be derived (the η rule without
/// a job of positive late value) or are invalid.
pub(crate) fn price_bounds(
    cluster: &GadgetCluster,
    jobs: &[GadgetJob],
    oracle: &GadgetOracle,
    params: &GadgetParams,
) -> crate::Result<Bounds> {
    let ledger = cluster.ledger()?;
    let inputs = jobs
        .iter()
        .map(|j| oracle.bound_inputs(j, cluster.horizon))
        .collect::<crate::Result<Vec<BoundInputs>>>()?;
    let floor =
        |v: f64| PriceBounds::derive(&ledger, &inputs, BoundsRule::ValueFloor { v_floor: v });
    let default_floor = value_floor_from(&inputs, 1e-3);
    let (bounds, v_floor) = match params.bounds {
        GadgetBounds::ValueFloor { epsilon_v, v_floor } => {
            let v = v_floor
                .or_else(|| value_floor_from(&inputs, epsilon_v))
                .unwrap_or(1.0);
            (floor(v)?, Some(v))
        }
        GadgetBounds::FrameworkEta => (
            PriceBounds::derive(&ledger, &inputs, BoundsRule::Eta)?,
            None,
        ),
        GadgetBounds::Explicit { l, u_gpu, u_nic } => (
            PriceBounds::explicit(
                vec![l.ln()],
                vec![vec![Some(u_gpu.ln()), u_nic.map(f64::ln)]],
            )?,
            None,
        ),
    };
    let alpha_eta = match params.bounds {
        GadgetBounds::FrameworkEta => Some(bounds.alpha()),
        _ => PriceBounds::derive(&ledger, &inputs, BoundsRule::Eta)
            .ok()
            .map(|b| b.alpha()),
    };
    let alpha_value_floor = match params.bounds {
        GadgetBounds::ValueFloor { .. } => Some(bounds.alpha()),
        _ => default_floor.and_then(|v| floor(v).ok()).map(|b| b.alpha()),
    };
    let bounds = if params.u_scale == 1.0 {
        bounds
    } else {
        bounds.with_u_scale(params.u_scale)?
    };
    Ok(Bounds {
        bounds,
        v_floor,
        alpha_eta,
        alpha_value_floor,
    })
}

/// The GADGET-style scheduler's side of the generic online run
/// ([`OnlineRun`]): the usable servers, the
/// parameters, the price bounds, the fairness weights and the embeddings
/// counted before the final dual.
#[derive(Debug)]
pub(crate) struct GadgetOnline {
    cluster: GadgetCluster,
    params: GadgetParams,
    bounds: Bounds,
    tenants: TenantShares,
    embeddings: u64,
}

/// The fairness weights of a run: the GPU-slots committed per tenant seen
/// so far, and the rule.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(from = "SavedShares", into = "SavedShares")
)]
pub(crate) struct TenantShares {
    rule: FairnessWeighting,
    committed: BTreeMap<Option<String>, f64>,
}

/// [`TenantShares`] as JSON (a tenant may be `null`, which a JSON map key
/// cannot be).
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedShares {
    rule: FairnessWeighting,
    committed: Vec<(Option<String>, f64)>,
}

#[cfg(feature = "serde")]
impl From<SavedShares> for TenantShares {
    fn from(s: SavedShares) -> Self {
        TenantShares {
            rule: s.rule,
            committed: s.committed.into_iter().collect(),
        }
    }
}

#[cfg(feature = "serde")]
impl From<TenantShares> for SavedShares {
    fn from(t: TenantShares) -> Self {
        SavedShares {
            rule: t.rule,
            committed: t.committed.into_iter().collect(),
        }
    }
}

impl TenantShares {
    /// No tenant seen yet.
    pub fn new(rule: FairnessWeighting) -> Self {
        TenantShares {
            rule,
            committed: BTreeMap::new(),
        }
    }

    /// `ω` of a job of `tenant` arriving now: `(1 + S_v/S̄)^(−β)` over the
    /// tenants seen so far (this one included), 1 while `S̄ = 0` or
    /// without the rule.
    pub fn weight(&mut self, tenant: &Option<String>) -> f64 {
        let FairnessWeighting::TenantShare { beta } = self.rule else {
            return 1.0;
        };
        self.committed.entry(tenant.clone()).or_insert(0.0);
        let mean = self.committed.values().sum::<f64>() / self.committed.len() as f64;
        let mine = self.committed.get(tenant).copied().unwrap_or(0.0);
        if mean > 0.0 {
            (1.0 + mine / mean).powf(-beta)
        } else {
            1.0
        }
    }

    /// Records `plan`'s GPU-slots for `tenant`.
    pub fn commit(&mut self, tenant: &Option<String>, plan: &GadgetPlan) {
        *self.committed.entry(tenant.clone()).or_insert(0.0) += plan.gpu_slots() as f64;
    }
}

impl GadgetOnline {
    /// The run over `instance` and its jobs in arrival order.
    pub(crate) fn start(
        instance: &Instance,
        params: &GadgetParams,
    ) -> crate::Result<(OnlineRun<Self>, Vec<GadgetJob>)> {
        let model = GadgetModel::new(instance, params)?;
        let oracle = GadgetOracle::new(model.cluster.clone(), params.oracle);
        if params.oracle.is_exact() {
            super::params::check_exhaustive(model.cluster.servers.len())?;
        }
        let bounds = price_bounds(&model.cluster, &model.jobs, &oracle, params)?;
        let ledger = if params.headroom {
            headroom_ledger(&model.cluster, &model.jobs)?
        } else {
            model.cluster.ledger()?
        };
        let engine =
            OnlinePrimalDual::new(oracle, ledger, bounds.bounds.clone(), params.pd.clone())?;
        let state = GadgetOnline {
            cluster: model.cluster,
            params: params.clone(),
            bounds,
            tenants: TenantShares::new(params.fairness),
            embeddings: 0,
        };
        Ok((OnlineRun::new(engine, state, model.jobs.len()), model.jobs))
    }
}

impl OnlineModel for GadgetOnline {
    type Oracle = GadgetOracle;
    type Report = GadgetReport;
    const NAME: &'static str = "gadget";

    fn job_id(job: &GadgetJob) -> JobId {
        job.id
    }

    /// Freezes the job's fairness weight.
    fn before_step(&mut self, job: &mut GadgetJob) {
        job.omega = self.tenants.weight(&job.tenant);
    }

    /// Counts an admitted plan's GPU-slots for its tenant.
    fn after_step(&mut self, job: &GadgetJob, outcome: &JobOutcome<GadgetPlan>, _: &GadgetOracle) {
        if let Decision::Admitted { plan, .. } = &outcome.decision {
            self.tenants.commit(&job.tenant, plan);
        }
    }

    fn unschedulable_why(&self, _job: Option<&GadgetJob>) -> String {
        "no ring shape embeds in the empty cluster, ends within the horizon and has a \
         positive value"
            .into()
    }

    /// One segment without GPU ids (the simulator hands them out).
    fn segments(&self, plan: &GadgetPlan) -> Vec<Segment> {
        vec![plan.segment(&self.cluster, None)]
    }

    /// One segment per admitted job with GPU ids assigned at start by
    /// lowest free local index.
    fn schedule(
        &self,
        instance: &Instance,
        _jobs: &[GadgetJob],
        outcomes: &[JobOutcome<GadgetPlan>],
    ) -> crate::Result<Schedule> {
        let plans = outcomes.iter().filter_map(|o| match &o.decision {
            Decision::Admitted { plan, .. } => Some(plan),
            Decision::Rejected(_) => None,
        });
        Ok(schedule_of_plans(&self.cluster, instance, plans)?)
    }

    fn before_finish(&mut self, oracle: &GadgetOracle) {
        self.embeddings = oracle.embeddings();
    }

    /// The per-job records, the ratio's conditions and the servers.
    fn report(
        self,
        run: RunReport<GadgetPlan>,
        stepped: Vec<GadgetJob>,
        decision_seconds: Vec<f64>,
    ) -> crate::Result<GadgetReport> {
        let cluster = self.cluster;
        let horizon = cluster.horizon;
        let jobs = stepped
            .iter()
            .zip(&run.outcomes)
            .map(|(job, o)| record(&cluster, horizon, job, o))
            .collect();
        let exact = self.params.oracle.is_exact();
        let conditions = RatioConditions {
            small_demands: run.assumption_small_demands,
            exact_oracle: exact,
            valid_constants: run.clairvoyant_bounds && run.d0_condition_verified,
            headroom: self.params.headroom,
        };
        Ok(GadgetReport {
            alpha: run.alpha,
            run,
            jobs,
            oracle: self.params.oracle,
            headroom: self.params.headroom,
            bounds: self.params.bounds,
            v_floor: self.bounds.v_floor,
            alpha_eta: self.bounds.alpha_eta,
            alpha_value_floor: self.bounds.alpha_value_floor,
            conditions,
            servers: cluster
                .servers
                .iter()
                .map(|s| ServerRecord {
                    machine: s.machine,
                    gpus: s.gpus,
                    nic: s.nic,
                })
                .collect(),
            slot_length_s: cluster.slot_length_s,
            horizon,
            data_unit_bytes: DATA_UNIT_BYTES,
            energy_price: self.params.energy_price,
            decision_seconds,
            embeddings: self.embeddings,
        })
    }

    fn certificate(report: &GadgetReport, instance: &Instance) -> Certificate {
        super::certificate_of(report, instance)
    }

    fn unknown_job(job: JobId) -> crate::Error {
        GadgetError::UnknownJob { job }.into()
    }
}

/// The record of one job from its outcome.
fn record(
    cluster: &GadgetCluster,
    horizon: u32,
    job: &GadgetJob,
    o: &JobOutcome<GadgetPlan>,
) -> JobRecord {
    let empty = job.empty_cluster(cluster, horizon);
    let best_value = empty
        .best
        .filter(|(_, ln)| ln.is_finite())
        .map(|(k, _)| job.value(job.earliest, &job.shapes[k]));
    let decision = match &o.decision {
        Decision::Admitted {
            plan,
            utility,
            cost,
            payoff,
        } => Ok(Admission {
            start: plan.start,
            slots: plan.slots,
            completion: plan.completion(),
            jct: job.jct(plan.start, plan.slots),
            workers: plan.workers,
            placement: plan
                .placement
                .iter()
                .map(|&(k, y)| (cluster.servers[k as usize].machine, y))
                .collect(),
            tau_slots: plan.tau_slots,
            iterations: plan.iterations,
            value: *utility,
            cost: *cost,
            payoff: *payoff,
        }),
        Decision::Rejected(r) => Err(*r),
    };
    JobRecord {
        job: job.id,
        tenant: job.tenant.clone(),
        arrival: job.arrival,
        omega: job.omega,
        best_value,
        min_slots: empty.fastest.map(|k| job.shapes[k].slots),
        min_workers: empty.fastest.map(|k| job.shapes[k].workers),
        iterations_requested: job.iterations_requested,
        iterations_effective: job.iterations_effective,
        decision,
    }
}

/// The certificate of a run: the framework's objective and bound (the
/// tighter of `D_end` and the trivial bound), the `2α` statement of this
/// model with its conditions, and the framework's `2α_eff` statement.
pub(crate) fn certificate(report: &GadgetReport) -> Certificate {
    certificate_of_run(&report.run, report.oracle.is_exact(), report.headroom)
}

/// [`certificate`] from the framework's report of a run (or of a session
/// now), the oracle's exactness and whether headroom prices were used.
pub(crate) fn certificate_of_run<P>(
    run: &RunReport<P>,
    exact: bool,
    headroom: bool,
) -> Certificate {
    let mut c = run.certificate.clone();
    c.algorithm = "gadget".into();
    let mut two_alpha = if exact {
        Guarantee::ratio_bound("OPT ≤ 2α·ALG", SOURCE, 2.0 * run.alpha)
    } else {
        Guarantee::new(
            "OPT ≤ 2α·ALG: no ratio for the greedy embedding (no proven payoff factor)",
            SOURCE,
            GuaranteeKind::Deterministic,
            GuaranteeScope::FinalPoint,
        )
    };
    for r in &run.reasons {
        two_alpha = two_alpha.invalid(r.clone());
    }
    if !run.assumption_small_demands {
        two_alpha = two_alpha.invalid(if headroom {
            "small demands (y_h ≪ O_h, 2b ≪ B_h) do not hold; headroom prices keep blocked plans dual-feasible, which the 2α_eff statement uses"
        } else {
            "small demands (y_h ≪ O_h, 2b ≪ B_h) do not hold, and without headroom prices blocked plans need them to be dual-feasible"
        });
    }
    let effective = c
        .guarantees
        .iter()
        .find(|g| g.expression.contains("α_eff"))
        .cloned();
    c.guarantees = std::iter::once(two_alpha).chain(effective).collect();
    c
}

/// The crate schedule of `plans` (one per admitted job; every other job of
/// `instance` rejected), GPU ids assigned at start by lowest free local
/// index (plans taken in start order, ties in the given order).
pub(crate) fn schedule_of_plans<'a>(
    cluster: &GadgetCluster,
    instance: &Instance,
    plans: impl IntoIterator<Item = &'a GadgetPlan>,
) -> Result<Schedule, GadgetError> {
    let mut plans: Vec<&GadgetPlan> = plans.into_iter().collect();
    plans.sort_by_key(|p| p.start);
    let mut gpus = GpuPool::new(cluster.servers.len());
    let admitted = plans.into_iter().map(|plan| {
        let ids: Vec<GpuId> = plan
            .placement
            .iter()
            .flat_map(|&(k, y)| {
                let machine = cluster.servers[k as usize].machine;
                gpus.take(k as usize, y, plan.start, plan.start + plan.slots)
                    .into_iter()
                    .map(move |index| GpuId { machine, index })
            })
            .collect();
        (plan.job, vec![plan.segment(cluster, Some(ids))])
    });
    schedule_of(instance, admitted).map_err(|job| GadgetError::UnknownJob { job })
}

/// Local GPU indices per server over time, handed out in start order:
/// released indices (below `fresh`) and never-used ones (`fresh..`).
struct GpuPool {
    released: Vec<BTreeSet<u32>>,
    busy: Vec<BinaryHeap<Reverse<(u32, u32)>>>,
    fresh: Vec<u32>,
}

impl GpuPool {
    fn new(servers: usize) -> Self {
        GpuPool {
            released: vec![BTreeSet::new(); servers],
            busy: vec![BinaryHeap::new(); servers],
            fresh: vec![0; servers],
        }
    }

    /// The `y` lowest indices of server `k` free at `start`, held until
    /// `end` (starts must not decrease between calls).
    fn take(&mut self, k: usize, y: u32, start: u32, end: u32) -> Vec<u32> {
        while let Some(&Reverse((until, g))) = self.busy[k].peek()
            && until <= start
        {
            self.busy[k].pop();
            self.released[k].insert(g);
        }
        let mut ids = Vec::with_capacity(y as usize);
        while ids.len() < y as usize {
            let g = match self.released[k].pop_first() {
                Some(g) => g,
                None => {
                    self.fresh[k] += 1;
                    self.fresh[k] - 1
                }
            };
            ids.push(g);
            self.busy[k].push(Reverse((end, g)));
        }
        ids
    }
}
