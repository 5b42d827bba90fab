//! The locality-aware scheduler as a session over a shared cluster state:
//! each parameter-server job decided when it is submitted, priced by the
//! whole fill of the state's cells, its plan held in the state.

use rand::{Rng, RngExt};

use crate::certificate::Certificate;
use crate::model::units::ceil_tol;
use crate::model::{Instance, Job, MachineId, Resources};
use crate::online::{
    Ledger, PriceBounds, RunReport, Session, SessionAlgorithm, SessionBounds, ps_ledger, ps_units,
};
use crate::schedule::Segment;
use crate::state::ClusterState;

use super::model::{LocalityCluster, LocalityJob, POOL};
use super::oracle::LocalityOracle;
use super::plan::LocalityPlan;
use super::{Locality, LocalityParams, bound_inputs, derive_bounds};
use crate::algorithms::Algorithm;
use crate::exact::Shortcut;

/// A session of the locality-aware scheduler ([`Locality::session`]).
pub type LocalitySession = Session<LocalitySessionModel>;

/// The locality-aware scheduler's side of a [`Session`]: its model of the
/// cluster, in the parameter-server ledger's units, and its options.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LocalitySessionModel {
    cluster: LocalityCluster,
    params: LocalityParams,
    /// The oracle's seed.
    seed: u64,
    /// Whether the oracle's shortcuts may be taken (always, but in the
    /// tests' reference runs); not saved with a session.
    #[cfg_attr(feature = "serde", serde(skip))]
    shortcut: Shortcut,
}

impl SessionAlgorithm for LocalitySessionModel {
    type Oracle = LocalityOracle;
    const NAME: &'static str = "locality";

    fn machines(&self) -> &[MachineId] {
        &self.cluster.machine_ids
    }

    fn ledger(&self, horizon: u32) -> crate::Result<Ledger> {
        ps_ledger(horizon, &self.cluster.capacity, |_| POOL)
    }

    fn amounts(&self, _k: usize, used: &Resources) -> Vec<f64> {
        ps_units(used).to_vec()
    }

    fn job(
        &mut self,
        job: &Job,
        arrival: u32,
        earliest: u32,
        end: u32,
    ) -> crate::Result<LocalityJob> {
        let j = self.model_job(job, arrival, end)?;
        // Widened by `plan_end` (counted from the first slot it may use: a
        // job decided again later keeps its first arrival slot).
        let j = if end.saturating_sub(earliest) > self.params.horizon {
            j.with_window_widened()
        } else {
            j
        };
        Ok(j.starting_at(earliest))
    }

    /// A job whose run by the greedy walk on the empty cluster needs more
    /// than half the slots its window leaves (so that at half that pace, on
    /// a busy cluster, no plan may end in the window) gets twice that run's
    /// slots after the window, and its oracle plans it by that walk, whose cost
    /// grows with its slots only (the deadline enumeration over so long a
    /// window took minutes a job). The walk's pace, not the upper bound of
    /// any plan's, decides: a job the bound lets into the window while no
    /// plan of the enumeration ends there would have no plan at all. Every
    /// other job keeps the window.
    fn plan_end(&self, job: &Job, arrival: u32, earliest: u32, end: u32) -> crate::Result<u32> {
        let j = self.model_job(job, arrival, end)?.starting_at(earliest);
        let pace = super::oracle::idle_walk_pace(&self.cluster, &j);
        if !(pace > 0.0 && pace.is_finite()) {
            return Ok(end);
        }
        let needed = ceil_tol(j.minibatches / pace).max(1.0);
        if f64::from(earliest) + 2.0 * needed <= f64::from(end) {
            return Ok(end);
        }
        let wide = f64::from(end) + 2.0 * needed;
        // Beyond what the state stores ahead no plan could be held: such a
        // job keeps its window (and is unschedulable in it).
        if wide > f64::from(earliest) + f64::from(crate::state::MAX_SPAN_SLOTS) {
            return Ok(end);
        }
        Ok(wide as u32)
    }

    fn segments(&self, plan: &LocalityPlan) -> Vec<Segment> {
        plan.segments(&self.cluster)
    }

    fn oracle(&self) -> LocalityOracle {
        LocalityOracle::new(self.cluster.clone(), self.params.inner)
            .with_seed(self.seed)
            .with_shortcut(self.shortcut)
    }

    fn unschedulable_why(&self, job: &LocalityJob) -> String {
        super::unschedulable_why(&self.cluster, Some(job))
    }

    fn certificate(&self, run: RunReport<LocalityPlan>) -> Certificate {
        let mut c = run.certificate;
        c.algorithm = Self::NAME.into();
        c.scope = Some(format!(
            "OPT is the best total utility of plans of the locality model (LOCAL or DISTRIBUTED \
             workers and parameter servers per slot, each job's utility at its completion slot) \
             over the jobs submitted, each planned within {} slots of its submission, on the \
             cluster's {} machines; a simulator's replay of the plans is not covered",
            self.params.horizon,
            self.cluster.machine_ids.len()
        ));
        c.run.seed = Some(self.seed);
        c.run.generator = Some("ChaCha8 (locality draw seeds)".into());
        c
    }
}

impl LocalitySessionModel {
    /// The model of `job`, its utility from slot `arrival`, planned up to
    /// slot `end` (exclusive), without LOCAL configurations unless the
    /// options allow them.
    fn model_job(&self, job: &Job, arrival: u32, end: u32) -> crate::Result<LocalityJob> {
        let last = end.saturating_sub(1);
        let j = LocalityJob::planned(&self.cluster, job, arrival, last, self.params.intra_factor)?;
        Ok(if self.params.allow_local {
            j
        } else {
            j.without_local()
        })
    }
}

impl Locality {
    /// A session simulating `instance` ([`LocalityPolicy`](super::LocalityPolicy)):
    /// its window the plan window [`LocalityParams::horizon`], its price
    /// bounds derived from the instance's jobs as [`Algorithm::solve`]
    /// derives them (clairvoyant), the oracle's seed
    /// [`LocalityParams::seed`] or drawn from `rng`.
    pub(crate) fn instance_session<R: Rng>(
        &self,
        instance: &Instance,
        rng: &mut R,
    ) -> crate::Result<LocalitySession> {
        let p = self.params();
        let seed = p.seed.unwrap_or_else(|| rng.random());
        let cluster = LocalityCluster::from_instance(instance)?;
        let jobs = self.jobs(instance, &cluster)?;
        let model = LocalitySessionModel {
            cluster,
            params: p.clone(),
            seed,
            shortcut: self.shortcut,
        };
        let oracle = model.oracle();
        let inputs = bound_inputs(&oracle, &jobs, model.cluster.horizon)?;
        let (bounds, _) = derive_bounds(&model.cluster, &inputs, p.bounds, p.l_allowance)?;
        let bounds = SessionBounds::clairvoyant(bounds, jobs.len());
        Session::new(model, oracle, p.horizon, bounds, p.pd.clone())
    }
}

impl Locality {
    /// A session of this scheduler on `state`'s cluster, planning every job within `window`
    /// slots of its submission, with price bounds learned from `past` jobs
    /// by [`LocalityParams::bounds`] over a horizon of `T = window` slots
    /// (the future is unknown; jobs like yesterday's are the usual
    /// choice). The oracle's seed is [`LocalityParams::seed`], or drawn
    /// from `rng`.
    ///
    /// # Errors
    ///
    /// [`LocalityError::UnsupportedCluster`](super::LocalityError) for a
    /// cluster the scheduler cannot use; the errors of a past job outside
    /// the model; the bound rule's errors (no past job with a positive
    /// value); an empty window.
    pub fn session<R: Rng>(
        &self,
        state: &ClusterState,
        window: u32,
        past: &[Job],
        rng: &mut R,
    ) -> crate::Result<LocalitySession> {
        let (mut model, oracle) = self.session_parts(state, window, rng)?;
        let jobs = past
            .iter()
            .map(|j| model.job(j, 0, 0, window))
            .collect::<crate::Result<Vec<_>>>()?;
        let inputs = bound_inputs(&oracle, &jobs, window)?;
        let (bounds, _) = derive_bounds(
            &model.cluster,
            &inputs,
            self.params().bounds,
            self.params().l_allowance,
        )?;
        let bounds = SessionBounds::learned_from(bounds, past.len());
        Session::new(model, oracle, window, bounds, self.params().pd.clone())
    }

    /// [`session`](Self::session) with explicit price bounds (for example
    /// set from a declared range of utilities and demands).
    ///
    /// # Errors
    ///
    /// As [`session`](Self::session); bounds that do not have the ledger's
    /// one pool and five resources.
    pub fn session_with_bounds<R: Rng>(
        &self,
        state: &ClusterState,
        window: u32,
        bounds: PriceBounds,
        rng: &mut R,
    ) -> crate::Result<LocalitySession> {
        let (model, oracle) = self.session_parts(state, window, rng)?;
        Session::new(
            model,
            oracle,
            window,
            SessionBounds::explicit(bounds),
            self.params().pd.clone(),
        )
    }

    fn session_parts<R: Rng>(
        &self,
        state: &ClusterState,
        window: u32,
        rng: &mut R,
    ) -> crate::Result<(LocalitySessionModel, LocalityOracle)> {
        let p = self.params();
        let model_cluster =
            LocalityCluster::from_cluster(state.cluster(), state.slot_length_s(), window)?;
        let model = LocalitySessionModel {
            cluster: model_cluster,
            // The session's window is its plan window.
            params: LocalityParams {
                horizon: window,
                ..p.clone()
            },
            seed: p.seed.unwrap_or_else(|| rng.random()),
            shortcut: self.shortcut,
        };
        let oracle = model.oracle();
        Ok((model, oracle))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::locality::model::tests_support::l1_instance;
    use crate::model::Hosting;
    use crate::state::ClusterState;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    /// A job decided again later keeps its first arrival slot: its window,
    /// counted from the first slot it may use, is not taken for a widened
    /// one (which the greedy walk would plan).
    #[test]
    fn a_job_decided_again_is_not_taken_for_a_widened_one() {
        let instance = l1_instance(Hosting::Both);
        let job = &instance.jobs()[0];
        let state = ClusterState::new(instance.cluster(), 100.0).unwrap();
        let params = LocalityParams {
            horizon: 4,
            ..LocalityParams::default()
        };
        let session = Locality::new(params)
            .unwrap()
            .session(
                &state,
                4,
                std::slice::from_ref(job),
                &mut ChaCha8Rng::seed_from_u64(1),
            )
            .unwrap();
        let mut model = session.algorithm().clone();
        assert!(!model.job(job, 1, 1, 5).unwrap().widened);
        // Decided again in slot 10, still counted from slot 1.
        assert!(!model.job(job, 1, 10, 14).unwrap().widened);
        assert!(model.job(job, 1, 1, 9).unwrap().widened);
    }
}
