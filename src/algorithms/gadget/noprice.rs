//! NoPrice: the GADGET-style oracle with every price 0, outside the
//! primal–dual framework (an ablation of the pricing).

use crate::model::JobId;
use crate::online::{Ledger, PriceView, Reservation};
use crate::sim::{Action, Event, Policy, SimView};

use super::error::GadgetError;
use super::model::{GadgetJob, GadgetModel};
use super::oracle::GadgetOracle;
use super::params::GadgetParams;
use super::plan::GadgetPlan;
use super::run::TenantShares;

/// NoPrice: the GADGET-style scheduler's oracle (after the abstract of
/// GADGET, Yu, Tian, Ji, Wu, Rajan, Liu, IEEE INFOCOM 2022; the crate's own
/// design) with every GPU and NIC price 0, run outside the primal–dual
/// framework (whose bounds need `U > L > 0`): the ablation that isolates
/// what pricing does.
///
/// # Rule
///
/// On arrival, the oracle enumerates the job's worker counts, server
/// counts and starts like the priced scheduler, over the GPUs and NIC
/// reservations left by the plans committed so far, and returns the
/// feasible plan of largest value `v = ω·u(δ) − e·w·d` (ties: earlier
/// completion, fewer servers, fewer workers, smaller server list). The job
/// is admitted at that plan whenever its value is positive, and rejected
/// only when no feasible plan has a positive value. Plans are irrevocable
/// and reserved without GPU ids (the simulator hands them out); fairness weights follow [`GadgetParams::fairness`]; every other
/// parameter of the model (worker counts, iterations trained, progress,
/// server cap, lookahead, energy price) is read as by the priced scheduler,
/// and the price options are ignored. Run it with
/// [`GadgetParams::sim_options`] for completions in the planned slots.
///
/// The model is built from the instance at the first event of a run (the
/// policy starts afresh when it sees another instance or time going
/// backwards), so [`crate::registry::by_name`] can make one
/// (`gadget-noprice`, default parameters).
///
/// # Errors
///
/// The model's errors (a job that is not ring-all-reduce, a size guard,
/// invalid options; see the [module
/// documentation](crate::algorithms::gadget#errors)); [`GadgetError::UnknownJob`] for an event about
/// a job outside the instance.
///
/// # Complexity
///
/// Per arrival the oracle's search ([`GadgetOracle`]).
///
/// # Example
///
/// ```
/// use dmlsched::algorithms::gadget::{GadgetNoPrice, GadgetParams};
/// use dmlsched::model::*;
/// use dmlsched::sim::simulate;
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(4.0).cpu_cores(8.0), 1e9);
/// let ring = RarJob { workers: WorkerCounts::Fixed(4), iterations: 100, ..RarJob::default() };
/// // Three jobs that each take the whole server for 2 slots (100
/// // iterations of 1.001 s, 60 s slots); the last two are worth nothing
/// // after 3 elapsed slots, so the third, which could only complete in
/// // slot 5, is rejected.
/// let deadline = Utility::DeadlineStep { value: 5.0, deadline_slots: 3 };
/// let jobs = vec![
///     Job::new(JobId(0), 0.0, ring.clone()),
///     Job::new(JobId(1), 0.0, ring.clone()).with_utility(deadline.clone()),
///     Job::new(JobId(2), 0.0, ring).with_utility(deadline),
/// ];
/// let inst = Instance::new(cluster, jobs, 60.0, 10)?;
/// let params = GadgetParams::default();
/// let mut policy = GadgetNoPrice::new(params.clone());
/// let r = simulate(&inst, &mut policy, &params.sim_options())?;
/// assert_eq!(r.jobs[0].completion_slot, Some(1));
/// assert_eq!(r.jobs[1].completion_slot, Some(3));
/// assert!(r.jobs[2].rejected);
/// assert_eq!(policy.plans().len(), 2);
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct GadgetNoPrice {
    /// The model's parameters (the price options are ignored).
    pub(crate) params: GadgetParams,
    run: Option<NoPriceRun>,
    key: Option<(usize, f64)>,
}

/// One run: the model's jobs by position, the committed plans' ledger and
/// the oracle.
#[derive(Debug)]
struct NoPriceRun {
    oracle: GadgetOracle,
    ledger: Ledger,
    by_position: Vec<Option<GadgetJob>>,
    tenants: TenantShares,
    plans: Vec<GadgetPlan>,
}

impl GadgetNoPrice {
    /// The policy with `params`.
    pub fn new(params: GadgetParams) -> Self {
        GadgetNoPrice {
            params,
            run: None,
            key: None,
        }
    }

    /// The plans admitted so far in the current run, in admission order.
    pub fn plans(&self) -> &[GadgetPlan] {
        self.run.as_ref().map_or(&[], |r| &r.plans)
    }

    /// Builds the run at its first event.
    fn start_run(&mut self, view: &SimView<'_>) -> crate::Result<()> {
        let instance = view.instance();
        let key = (std::ptr::from_ref(instance) as usize, view.now_s());
        let new = self.key.is_none_or(|(i, t)| i != key.0 || view.now_s() < t);
        self.key = Some(key);
        if !new && self.run.is_some() {
            return Ok(());
        }
        let model = GadgetModel::new(instance, &self.params)?;
        if self.params.oracle.is_exact() {
            super::params::check_exhaustive(model.cluster.servers.len())?;
        }
        let ledger = model.cluster.ledger()?;
        let mut by_position = vec![None; instance.jobs().len()];
        for j in model.jobs {
            let p = j.position;
            by_position[p] = Some(j);
        }
        self.run = Some(NoPriceRun {
            oracle: GadgetOracle::new(model.cluster, self.params.oracle),
            ledger,
            by_position,
            tenants: TenantShares::new(self.params.fairness),
            plans: Vec::new(),
        });
        Ok(())
    }

    fn decide(&mut self, view: &SimView<'_>, id: JobId) -> crate::Result<Action> {
        let Some(run) = self.run.as_mut() else {
            return Err(GadgetError::UnknownJob { job: id }.into());
        };
        let mut job = view
            .instance()
            .job_position(id)
            .and_then(|p| run.by_position.get_mut(p).and_then(Option::take))
            .ok_or(GadgetError::UnknownJob { job: id })?
            .starting_at(view.first_plannable_slot().unwrap_or(u32::MAX));
        job.omega = run.tenants.weight(&job.tenant);
        let best = run
            .oracle
            .best_plan(&job, &PriceView::unpriced(&run.ledger));
        let Some((plan, _, _)) = best else {
            return Ok(Action::Reject { job: id });
        };
        for c in plan.consumption() {
            if let Some(cell) = run.ledger.cell_index(c.machine, c.resource, c.slot) {
                run.ledger.add(cell, c.amount);
            }
        }
        run.tenants.commit(&job.tenant, &plan);
        let segment = plan.segment(run.oracle.cluster(), None);
        run.plans.push(plan);
        Ok(Action::Reserve {
            job: id,
            segments: vec![segment],
        })
    }
}

impl Policy for GadgetNoPrice {
    fn name(&self) -> String {
        "gadget-noprice".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        self.start_run(view)?;
        match event {
            Event::Arrival { job } => Ok(vec![self.decide(view, *job)?]),
            _ => Ok(Vec::new()),
        }
    }
}
