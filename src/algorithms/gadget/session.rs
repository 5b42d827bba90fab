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
//! the NIC can no longer carry. Tenant fairness weights and headroom prices
//! are not used in sessions (weights are 1, prices use the capacity).

use crate::model::{Architecture, Cluster, Instance, Job, Machine, MachineId, Resources};
use crate::online::{Ledger, PriceBounds, Session, SessionAlgorithm, SessionBounds};
use crate::schedule::Segment;
use crate::state::ClusterState;

use super::Gadget;
use super::error::GadgetError;
use super::model::{GadgetCluster, GadgetJob, GadgetModel, convert_job, data_per_slot};
use super::oracle::GadgetOracle;
use super::params::GadgetParams;
use super::plan::GadgetPlan;
use super::run::price_bounds;
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
}

impl SessionAlgorithm for GadgetSessionModel {
    type Oracle = GadgetOracle;
    const NAME: &'static str = "gadget";

    fn machines(&self) -> &[MachineId] {
        &self.machines
    }

    fn ledger(&self, horizon: u32) -> crate::Result<Ledger> {
        GadgetCluster {
            horizon,
            ..self.model.clone()
        }
        .ledger()
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
        let g = convert_job(&instance, &self.model, 0, ring, &self.params)?;
        Ok(g.starting_at(earliest))
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
        let p: &GadgetParams = self.params();
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
        let built = GadgetModel::new(&instance, p)?;
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
            .map(|s| state.cluster().machines[s].clone())
            .collect();
        let model = GadgetSessionModel {
            machines: built.cluster.servers.iter().map(|s| s.machine).collect(),
            model: built.cluster.clone(),
            specs,
            workers,
            worker_nic,
            cluster: state.cluster().clone(),
            params: p.clone(),
        };
        let oracle = model.oracle();
        Ok((model, oracle, built.jobs))
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
