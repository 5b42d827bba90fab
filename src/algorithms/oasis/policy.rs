//! OASiS as a simulator [`Policy`]: every arrival is priced and either
//! reserved for good ([`Action::Reserve`]) or rejected.

use std::time::Instant;

use crate::model::{Instance, JobId};
use crate::online::{Decision, OnlinePrimalDual};
use crate::sim::{Action, Event, Policy, SimView};

use super::error::OasisError;
use super::model::{OasisCluster, OasisJob};
use super::oracle::OasisOracle;
use super::{OasisParams, OasisReport, jobs_in_arrival_order, ln_u_over_l, price_bounds};

/// OASiS in the simulator.
///
/// The price bounds are derived from the whole instance when the policy is
/// built (clairvoyant, as the theory requires, D30). A job arriving inside
/// a slot may use slots from the next boundary on (the simulator does not
/// let a plan start in a slot that has begun); its utility still counts
/// from its arrival slot. After the run, [`report`](Self::report) finishes
/// the framework and returns the certificate's report.
///
/// ```
/// # use dmlsched::model::*;
/// # use dmlsched::model::units::gbps;
/// use dmlsched::algorithms::oasis::{OasisParams, OasisPolicy};
/// use dmlsched::sim::{simulate, SimOptions, PsTiming};
/// # let server = |id, cpu: f64, nic: f64, hosts| {
/// #     Machine::new(MachineId(id), Resources::new(0.0, cpu, 0.0, 0.0, gbps(nic)), gbps(nic)).hosting(hosts)
/// # };
/// # let cluster = Cluster::new(vec![server(0, 4.0, 4.0, Hosting::Workers), server(1, 4.0, 8.0, Hosting::ParameterServers)]);
/// # let job = |id| Job::new(JobId(id), 0.0, Architecture::ParameterServer(PsJob {
/// #     epochs: 1, data_chunks: 2, minibatches_per_chunk: 1, minibatch_compute_s: 1800.0,
/// #     gradient_bytes: 900.0 * gbps(1.0),
/// #     worker: Resources::new(0.0, 1.0, 0.0, 0.0, gbps(1.0)), ps: Resources::new(0.0, 1.0, 0.0, 0.0, gbps(2.0)),
/// #     max_workers: 2, max_ps: 2, ps_at_most_workers: true, sync: SyncMode::Asynchronous, layers: None,
/// # })).with_utility(Utility::Table { values: vec![10.0, 4.0] });
/// # let instance = Instance::new(cluster, (0..5).map(job).collect(), 3600.0, 2)?;
/// let mut policy = OasisPolicy::new(&instance, &OasisParams::default())?;
/// let opts = SimOptions { ps_timing: PsTiming::NoLocality, ..SimOptions::default() };
/// let result = simulate(&instance, &mut policy, &opts)?;
/// let report = policy.report()?;
/// assert_eq!(report.admitted(), 4);
/// assert_eq!(result.jobs.iter().filter(|j| j.finish_s.is_some()).count(), 4);
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug)]
pub struct OasisPolicy {
    engine: OnlinePrimalDual<OasisOracle>,
    cluster: OasisCluster,
    /// Every job of the instance by position.
    by_position: Vec<OasisJob>,
    /// The jobs stepped so far, in order.
    stepped: Vec<OasisJob>,
    params: OasisParams,
    v_floor: Option<f64>,
    decision_seconds: Vec<f64>,
}

impl OasisPolicy {
    /// The policy for `instance`.
    ///
    /// # Errors
    ///
    /// As [`Oasis::solve`](super::Oasis::solve).
    pub fn new(instance: &Instance, params: &OasisParams) -> crate::Result<Self> {
        let cluster = OasisCluster::from_instance(instance)?;
        let jobs = jobs_in_arrival_order(instance)?;
        let (bounds, v_floor) = price_bounds(&cluster, &jobs, params)?;
        let by_position = instance
            .jobs()
            .iter()
            .map(|j| OasisJob::from_job(instance, j))
            .collect::<Result<Vec<_>, _>>()?;
        let oracle = OasisOracle::new(cluster.clone(), params.early_stop);
        let engine = OnlinePrimalDual::new(oracle, cluster.ledger()?, bounds, params.pd.clone())?;
        Ok(OasisPolicy {
            engine,
            cluster,
            by_position,
            stepped: Vec::new(),
            params: params.clone(),
            v_floor,
            decision_seconds: Vec::new(),
        })
    }

    /// Finishes the framework (final dual, certificate) over the jobs that
    /// arrived.
    ///
    /// # Errors
    ///
    /// The framework's errors.
    pub fn report(self) -> crate::Result<OasisReport> {
        let ratios = ln_u_over_l(self.engine.bounds());
        let run = self.engine.finish(&self.stepped)?;
        Ok(OasisReport {
            run,
            jobs: self.stepped,
            bounds: self.params.bounds,
            v_floor: self.v_floor,
            ln_u_over_l: ratios,
            decision_seconds: self.decision_seconds,
        })
    }

    fn decide(&mut self, view: &SimView<'_>, id: JobId) -> crate::Result<Action> {
        let position = view
            .instance()
            .job_position(id)
            .ok_or(OasisError::UnknownJob { job: id })?;
        let job = self
            .by_position
            .get(position)
            .ok_or(OasisError::UnknownJob { job: id })?;
        let slot_len = self.cluster.slot_length_s;
        let boundary = f64::from(view.slot()) * slot_len;
        let on_boundary = (view.now_s() - boundary).abs() <= 1e-9 * slot_len.max(1.0);
        let earliest = if on_boundary {
            view.slot()
        } else {
            view.slot().saturating_add(1)
        };
        let job = job.clone().starting_at(earliest);
        let start = Instant::now();
        let outcome = self.engine.step(&job)?;
        let action = match &outcome.decision {
            Decision::Admitted { plan, .. } => Action::Reserve {
                job: id,
                segments: plan.segments(&self.cluster),
            },
            Decision::Rejected(_) => Action::Reject { job: id },
        };
        self.decision_seconds.push(start.elapsed().as_secs_f64());
        self.stepped.push(job);
        Ok(action)
    }
}

impl Policy for OasisPolicy {
    fn name(&self) -> String {
        "oasis".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        match event {
            Event::Arrival { job } => Ok(vec![self.decide(view, *job)?]),
            _ => Ok(Vec::new()),
        }
    }
}
