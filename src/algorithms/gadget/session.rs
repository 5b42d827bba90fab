//! The GADGET-style scheduler as a session over a shared cluster state:
//! each ring-all-reduce job decided when it is submitted, priced by the
//! whole fill of the state's cells, its ring held in the state.
//!
//! The scheduler's model counts a server's usable GPUs for the worker
//! demands of the rings it was built for, and its NIC as the bandwidth left
//! for reservations. A session builds that model from the past jobs its
//! bounds are learned from, and reads the state's fill through it: a
//! server's GPU cell holds the GPUs no worker can use any more (taken, or
//! blocked by another resource running out), its NIC cell the reservations
//! the NIC can no longer carry. Tenant fairness weights are frozen at
//! submission from the GPU-slots admitted per tenant so far, as in the
//! offline run; headroom prices, when set, use the headroom of the past
//! jobs' ring shapes.

use std::collections::BTreeMap;

use crate::certificate::Certificate;
use crate::model::{Architecture, Cluster, Instance, Job, JobId, Machine, MachineId, Resources};
use crate::online::{Ledger, PriceBounds, RunReport, Session, SessionAlgorithm, SessionBounds};
use crate::schedule::Segment;
use crate::state::ClusterState;

use super::Gadget;
use super::error::GadgetError;
use super::model::{
    GadgetCluster, GadgetJob, GadgetModel, convert_job, data_per_slot, headroom_capacities,
    with_price_capacities,
};
use super::oracle::GadgetOracle;
use super::params::GadgetParams;
use super::plan::GadgetPlan;
use super::run::{TenantShares, certificate_of_run, price_bounds};
use crate::algorithms::Algorithm;
use crate::algorithms::sjf_bco::usable_gpus;

/// A session of the GADGET-style scheduler ([`Gadget::session`]).
pub type GadgetSession = Session<GadgetSessionModel>;

/// The GADGET-style scheduler's side of a [`Session`]: its model of the
/// cluster (usable GPUs and reservation bandwidth per server, for the
/// worker demands of the past jobs), the cluster and its options.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GadgetSessionModel {
    model: GadgetCluster,
    machines: Vec<MachineId>,
    /// The cluster machine of every server.
    specs: Vec<Machine>,
    /// The worker demands the usable GPUs are counted for.
    workers: Vec<Resources>,
    worker_nic: f64,
    cluster: Cluster,
    params: GadgetParams,
    /// The headroom price capacities `(GPU, NIC)` of every server, when
    /// [`GadgetParams::headroom`] is set.
    headroom: Option<Vec<[f64; 2]>>,
    /// GPU-slots admitted per tenant, for the fairness weights.
    tenants: TenantShares,
    /// The weight frozen for every job submitted.
    omegas: BTreeMap<JobId, f64>,
}

impl SessionAlgorithm for GadgetSessionModel {
    type Oracle = GadgetOracle;
    const NAME: &'static str = "gadget";

    fn machines(&self) -> &[MachineId] {
        &self.machines
    }

    fn ledger(&self, horizon: u32) -> crate::Result<Ledger> {
        let ledger = self.model_at(horizon).ledger()?;
        match &self.headroom {
            Some(caps) => with_price_capacities(ledger, caps),
            None => Ok(ledger),
        }
    }

    fn amounts(&self, k: usize, used: &Resources) -> Vec<f64> {
        let (server, spec) = (&self.model.servers[k], &self.specs[k]);
        let residual = spec.capacity.minus(used).max(&Resources::zero());
        let room = Machine {
            capacity: residual,
            ..spec.clone()
        };
        let gpus = f64::from(server.gpus);
        let fit = usable_gpus(&room, &self.workers).min(gpus);
        let left = (residual.nic_bps - fit * self.worker_nic).max(0.0);
        let nic_left = 2.0 * data_per_slot(left, self.model.slot_length_s);
        vec![gpus - fit, (server.nic - nic_left).max(0.0)]
    }

    fn job(
        &mut self,
        job: &Job,
        arrival: u32,
        earliest: u32,
        end: u32,
    ) -> crate::Result<GadgetJob> {
        let Architecture::RingAllReduce(ring) = &job.architecture else {
            return Err(GadgetError::UnsupportedJob {
                job: job.id,
                reason: "not a ring-all-reduce job".into(),
            }
            .into());
        };
        let slot = self.model.slot_length_s;
        let mut at = job.clone();
        at.arrival_s = f64::from(arrival) * slot;
        let instance = Instance::new(self.cluster.clone(), vec![at], slot, end.max(arrival + 1))?;
        self.model.horizon = end;
        let mut g = convert_job(&instance, &self.model, 0, ring, &self.params)?;
        // The weight is frozen at the first conversion (the submission); a
        // restored session converts its jobs again with the same weights.
        g.omega = match self.omegas.get(&job.id) {
            Some(&w) => w,
            None => {
                let w = self.tenants.weight(&job.tenant);
                self.omegas.insert(job.id, w);
                w
            }
        };
        Ok(g.starting_at(earliest))
    }

    fn admitted(&mut self, job: &GadgetJob, plan: &GadgetPlan) {
        self.tenants.commit(&job.tenant, plan);
    }

    fn unschedulable_why(&self, _job: &GadgetJob) -> String {
        "no ring shape embeds in the empty cluster, ends within the planning window and has a \
         positive value"
            .into()
    }

    fn certificate(&self, run: RunReport<GadgetPlan>) -> Certificate {
        let mut c =
            certificate_of_run(&run, self.params.oracle.is_exact(), self.headroom.is_some());
        c.scope = Some(format!(
            "OPT is the best total weighted utility, net of the energy price, of plans of the \
             GADGET-style model (rigid rings with reserved bandwidth, no preemption, each job's \
             utility at its completion slot) over the jobs submitted, within their planning \
             windows, on the cluster's {} usable servers; a simulator's replay of the plans is \
             not covered",
            self.machines.len()
        ));
        c
    }

    fn segments(&self, plan: &GadgetPlan) -> Vec<Segment> {
        vec![plan.segment(&self.model, None)]
    }

    /// The oracle over the model with an unbounded horizon: the planning
    /// window is the ledger's.
    fn oracle(&self) -> GadgetOracle {
        GadgetOracle::new(self.model_at(u32::MAX), self.params.oracle)
    }
}

impl Gadget {
    /// A session of this scheduler on `state`'s cluster, planning every
    /// ring within `window` slots of its submission. The model of the
    /// cluster (usable GPUs per server) and the price bounds come from the
    /// `past` ring-all-reduce jobs, each as if it arrived at slot 0 of a
    /// window, by [`GadgetParams::bounds`] over `T = window` slots.
    ///
    /// # Errors
    ///
    /// [`GadgetError::NoJobs`] without past jobs, the errors of a past job
    /// outside the model (not a ring), of a cluster with no usable server,
    /// and of the bound rule; an empty window.
    pub fn session(
        &self,
        state: &ClusterState,
        window: u32,
        past: &[Job],
    ) -> crate::Result<GadgetSession> {
        let (model, oracle, jobs) = self.session_parts(state, window, past)?;
        let bounds = price_bounds(&model.model_at(window), &jobs, &oracle, self.params())?.bounds;
        let bounds = SessionBounds::learned_from(bounds, past.len());
        Session::new(model, oracle, window, bounds, self.params().pd.clone())
    }

    /// [`session`](Self::session) with explicit price bounds (one pool, the
    /// GPU and NIC resources); `past` still sets the model of the cluster.
    ///
    /// # Errors
    ///
    /// As [`session`](Self::session); bounds that do not fit the ledger.
    pub fn session_with_bounds(
        &self,
        state: &ClusterState,
        window: u32,
        past: &[Job],
        bounds: PriceBounds,
    ) -> crate::Result<GadgetSession> {
        let (model, oracle, _) = self.session_parts(state, window, past)?;
        Session::new(
            model,
            oracle,
            window,
            SessionBounds::explicit(bounds),
            self.params().pd.clone(),
        )
    }

    fn session_parts(
        &self,
        state: &ClusterState,
        window: u32,
        past: &[Job],
    ) -> crate::Result<(GadgetSessionModel, GadgetOracle, Vec<GadgetJob>)> {
        let at_zero: Vec<Job> = past
            .iter()
            .map(|j| Job {
                arrival_s: 0.0,
                ..j.clone()
            })
            .collect();
        let instance = Instance::new(
            state.cluster().clone(),
            at_zero,
            state.slot_length_s(),
            window.max(1),
        )?;
        let built = GadgetModel::new(&instance, self.params())?;
        let model = self.session_model(&instance, &built);
        let oracle = model.oracle();
        Ok((model, oracle, built.jobs))
    }

    /// The session's model of `instance`'s cluster for the jobs of
    /// `built`, its conversion of `instance`.
    fn session_model(&self, instance: &Instance, built: &GadgetModel) -> GadgetSessionModel {
        let p: &GadgetParams = self.params();
        let workers: Vec<Resources> = instance
            .jobs()
            .iter()
            .filter_map(|j| match &j.architecture {
                Architecture::RingAllReduce(r) => Some(r.worker),
                Architecture::ParameterServer(_) => None,
            })
            .collect();
        let worker_nic = workers.iter().map(|w| w.nic_bps).fold(0.0, f64::max);
        let specs = built
            .model_servers()
            .map(|s| instance.cluster().machines[s].clone())
            .collect();
        GadgetSessionModel {
            machines: built.cluster.servers.iter().map(|s| s.machine).collect(),
            model: built.cluster.clone(),
            specs,
            workers,
            worker_nic,
            cluster: instance.cluster().clone(),
            params: p.clone(),
            headroom: p
                .headroom
                .then(|| headroom_capacities(&built.cluster, &built.jobs)),
            tenants: TenantShares::new(p.fairness),
            omegas: BTreeMap::new(),
        }
    }

    /// A session simulating `instance` ([`GadgetPolicy`](super::GadgetPolicy)):
    /// its model and price bounds built from the instance's rings as
    /// [`Algorithm::solve`] builds them (clairvoyant), planning up to the
    /// instance's horizon.
    pub(crate) fn instance_session(&self, instance: &Instance) -> crate::Result<GadgetSession> {
        let p: &GadgetParams = self.params();
        let built = GadgetModel::new(instance, p)?;
        if p.oracle.is_exact() {
            super::params::check_exhaustive(built.cluster.servers.len())?;
        }
        let oracle = GadgetOracle::new(built.cluster.clone(), p.oracle);
        let bounds = price_bounds(&built.cluster, &built.jobs, &oracle, p)?.bounds;
        let model = self.session_model(instance, &built);
        let bounds = SessionBounds::clairvoyant(bounds, built.jobs.len());
        let oracle = model.oracle();
        Session::new(
            model,
            oracle,
            instance.horizon_slots(),
            bounds,
            p.pd.clone(),
        )
    }
}

impl GadgetSessionModel {
    fn model_at(&self, horizon: u32) -> GadgetCluster {
        GadgetCluster {
            horizon,
            ..self.model.clone()
        }
    }
}

impl GadgetModel {
    /// The cluster position of every server, in server order.
    fn model_servers(&self) -> impl Iterator<Item = usize> + '_ {
        self.cluster.servers.iter().map(|s| s.position)
    }
}
