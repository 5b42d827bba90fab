//! OASiS as a session over a shared cluster state: each parameter-server
//! job decided when it is submitted, priced by the whole fill of the
//! state's cells, its plan held in the state.
//!
//! The model is the offline run's: worker servers, PS servers and, with
//! [`OasisParams::shared_machines`], shared servers, each a pool of cells
//! in the parameter-server ledger's units; the same oracle decides.

use crate::certificate::Certificate;
use crate::model::{Instance, Job, MachineId, Resources};
use crate::online::{
    Ledger, OnlineError, PriceBounds, RunReport, Session, SessionAlgorithm, SessionBounds, ps_units,
};
use crate::schedule::Segment;
use crate::state::ClusterState;

use super::model::{OasisCluster, OasisJob};
use super::oracle::OasisOracle;
use super::plan::OasisPlan;
use super::{Oasis, OasisParams, price_bounds};
use crate::algorithms::Algorithm;

/// A session of OASiS ([`Oasis::session`]).
pub type OasisSession = Session<OasisSessionModel>;

/// OASiS's side of a [`Session`]: its model of the cluster (worker, PS and
/// shared servers, capacities in the parameter-server ledger's units) and
/// its options.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OasisSessionModel {
    /// The cluster, over the planning window.
    cluster: OasisCluster,
    params: OasisParams,
}

impl SessionAlgorithm for OasisSessionModel {
    type Oracle = OasisOracle;
    const NAME: &'static str = "oasis";

    fn machines(&self) -> &[MachineId] {
        &self.cluster.machine_ids
    }

    fn ledger(&self, horizon: u32) -> crate::Result<Ledger> {
        OasisCluster {
            horizon,
            ..self.cluster.clone()
        }
        .ledger()
    }

    fn amounts(&self, _k: usize, used: &Resources) -> Vec<f64> {
        ps_units(used).to_vec()
    }

    fn job(&mut self, job: &Job, arrival: u32, earliest: u32, end: u32) -> crate::Result<OasisJob> {
        Ok(OasisJob::planned(&self.cluster, job, arrival, end)?.starting_at(earliest))
    }

    fn segments(&self, plan: &OasisPlan) -> Vec<Segment> {
        plan.segments(&self.cluster)
    }

    /// The offline run's oracle over the cluster with an unbounded horizon:
    /// each job's window (its last usable slot) and the ledger bound its
    /// plans.
    fn oracle(&self) -> OasisOracle {
        let cluster = OasisCluster {
            horizon: u32::MAX,
            ..self.cluster.clone()
        };
        OasisOracle::new(cluster, self.params.early_stop)
    }

    fn unschedulable_why(&self, job: &OasisJob) -> String {
        job.unschedulable_why(&self.cluster)
            .unwrap_or_else(|| "no plan on the empty cluster within the planning window".into())
    }

    fn certificate(&self, run: RunReport<OasisPlan>) -> Certificate {
        let shared = !self.cluster.shared_servers.is_empty();
        let machines = self.cluster.machine_ids.len();
        super::stated(run.certificate, shared, |objective| {
            format!(
                "OPT is the best {objective} over the jobs submitted, each planned within its \
                 window, on the cluster's {machines} machines; a simulator's replay of the plans \
                 is not covered"
            )
        })
    }
}

impl Oasis {
    /// A session simulating `instance` ([`OasisPolicy`](super::OasisPolicy)):
    /// its cluster and price bounds derived from the instance as
    /// [`Algorithm::solve`] derives them (clairvoyant), planning up to the
    /// instance's horizon.
    pub(crate) fn instance_session(&self, instance: &Instance) -> crate::Result<OasisSession> {
        let p = self.params();
        let cluster = OasisCluster::from_instance_with(instance, p.shared_machines)?;
        // A job beyond the exact chunk program's size is rejected when it
        // is submitted (the simulator goes on); the bounds come from the
        // others.
        let jobs = super::jobs_in_arrival_order_within_limits(instance)?;
        let (bounds, _) = price_bounds(&cluster, &jobs, p)?;
        let model = OasisSessionModel {
            cluster,
            params: p.clone(),
        };
        let oracle = model.oracle();
        let bounds = SessionBounds::clairvoyant(bounds, jobs.len());
        Session::new(
            model,
            oracle,
            instance.horizon_slots(),
            bounds,
            p.pd.clone(),
        )
    }
}

impl Oasis {
    /// A session of OASiS on `state`'s cluster, planning every job within
    /// `window` slots of its submission, with price bounds learned from
    /// `past` jobs by OASiS's own rule ([`OasisParams::bounds`], `U` scaled
    /// by [`OasisParams::u_scale`]) over a horizon of `T = window` slots,
    /// each past job as if it arrived at slot 0 (the future is unknown;
    /// jobs like yesterday's are the usual choice). A cluster with machines
    /// that host both roles needs [`OasisParams::shared_machines`].
    ///
    /// # Errors
    ///
    /// [`OasisError::UnsupportedCluster`](super::OasisError) for a cluster
    /// OASiS cannot use; [`OasisError::UnsupportedJob`](super::OasisError)
    /// for a past job outside the model; the bound rule's errors (for
    /// example no past job to set the value floor);
    /// [`OnlineError::InvalidInstance`] for an empty window.
    pub fn session(
        &self,
        state: &ClusterState,
        window: u32,
        past: &[Job],
    ) -> crate::Result<OasisSession> {
        let (mut model, oracle) = self.session_parts(state, window)?;
        let jobs = past
            .iter()
            .map(|j| model.job(j, 0, 0, window))
            .collect::<crate::Result<Vec<_>>>()?;
        let (bounds, _) = price_bounds(&model.cluster, &jobs, self.params())?;
        let bounds = SessionBounds::learned_from(bounds, past.len());
        Session::new(model, oracle, window, bounds, self.params().pd.clone())
    }

    /// [`session`](Self::session) with explicit price bounds (for example
    /// set from a declared range of utilities and demands), used as they
    /// are (`u_scale` is not applied).
    ///
    /// # Errors
    ///
    /// As [`session`](Self::session); bounds that do not have the ledger's
    /// pools (one per kind of server the cluster has: worker-only, PS-only,
    /// shared, in that order) and five resources.
    pub fn session_with_bounds(
        &self,
        state: &ClusterState,
        window: u32,
        bounds: PriceBounds,
    ) -> crate::Result<OasisSession> {
        let (model, oracle) = self.session_parts(state, window)?;
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
    ) -> crate::Result<(OasisSessionModel, OasisOracle)> {
        if window == 0 {
            return Err(OnlineError::InvalidInstance {
                reason: "the planning window must have at least one slot".into(),
            }
            .into());
        }
        let p = self.params();
        let cluster = OasisCluster::from_cluster(
            state.cluster(),
            state.slot_length_s(),
            window,
            p.shared_machines,
        )?;
        let model = OasisSessionModel {
            cluster,
            params: p.clone(),
        };
        let oracle = model.oracle();
        Ok((model, oracle))
    }
}
