//! The SMD-style scheduler as a simulator policy.

use crate::model::Elasticity;
use crate::placement::{PlacementRule, Placer};
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::epoch::epoch_among;
use super::window::OrderKeys;
use super::{EpochJob, SmdEpochReport, SmdParams};

/// SMD-style scheduler: the crate's own design after the abstract of Yu,
/// Wu, Ji and Liu (INFOCOM 2021); not a reproduction of that paper.
///
/// At every job arrival and completion it reconsiders every active
/// parameter-server job with a layer profile, running or waiting, and
/// picks for each a configuration `(w, p)` or "wait" by [`epoch`](super::epoch()): the sum
/// of remaining-time ratios `Σ_i V_i/θ_i(k_i)` over the candidates of the
/// layered timing model, plus reconfiguration and wait charges, as a
/// multiple-choice multi-dimensional knapsack; LP relaxation, rounding of
/// its at most `d` fractional groups, improvement pass; outer selection
/// between the joint plan and shortest-first prefix plans; first-fit
/// placement on the machines. A job whose configuration changes pays its
/// `reconfiguration_s` in the simulator.
///
/// Running jobs that may not be preempted keep their allocation (their
/// resources are subtracted before the epoch). Jobs without a layer
/// profile, ring-all-reduce jobs and rigid gangs end the run with
/// [`SmdError::UnsupportedJob`](super::SmdError::UnsupportedJob).
///
/// # Guarantee
///
/// Per epoch, on the aggregate program: `J ≤ LP + Σ_{i∈F}(ω_i − c_i^min)
/// ≤ OPT + d·max_i(ω_i − c_i^min)` with `|F| ≤ d` fractional groups (the
/// crate's theorem; see [`epoch`](super::epoch())). It is marked not valid when placement
/// changes a configuration. Nothing is claimed about the whole run's JCT.
///
/// # Complexity
///
/// Per epoch: `O(Σ_i |K_i|·L)` timing evaluations, and one LP of
/// `Σ_i(|K_i|+1)` columns and `d + n` rows per candidate plan (`n + 1`
/// plans under `Best` up to 32 jobs, `O(log n)` beyond; all in one solver,
/// warm-started), plus `O(n²·K·d)` for the plan evaluator. Past
/// [`SmdParams::window`] active jobs, `n` is the window (the others wait),
/// plus `O(N log N)` to order the `N` active jobs (a waiting job's order
/// key is computed once).
///
/// # Example
///
/// ```
/// use dmlsched::algorithms::smd::{SmdParams, SmdScheduler};
/// use dmlsched::model::*;
/// use dmlsched::sim::{SimOptions, simulate};
///
/// let layer = |f: f64, g: f64, mb: f64| Layer {
///     forward_s: f * 1e-3, backward_s: g * 1e-3, bytes: mb * 1e6, update_s: 0.0,
/// };
/// let ps = PsJob {
///     epochs: 1, data_chunks: 1, minibatches_per_chunk: 2000,
///     worker: Resources::zero().gpus(1.0).cpu_cores(2.0).nic(1e9),
///     ps: Resources::zero().cpu_cores(4.0).nic(1e9),
///     max_workers: 4, max_ps: 2, sync: SyncMode::Synchronous,
///     layers: Some(vec![layer(3.0, 6.0, 2.0), layer(3.0, 6.0, 4.0), layer(4.0, 8.0, 8.0)]),
///     ..PsJob::default()
/// };
/// let cap = Resources::zero().gpus(4.0).cpu_cores(16.0).nic(1e10);
/// let jobs = vec![Job::new(JobId(0), 0.0, ps.clone()), Job::new(JobId(1), 1.0, ps)];
/// let inst = Instance::new(Cluster::homogeneous(1, cap, 1e10), jobs, 60.0, 100)?;
/// let mut params = SmdParams::default();
/// params.selection = dmlsched::algorithms::smd::Selection::Greedy;
/// let mut smd = SmdScheduler::new(params);
/// let result = simulate(&inst, &mut smd, &SimOptions::default())?;
/// assert!(result.jobs.iter().all(|j| j.finish_s.is_some()));
/// for r in smd.reports() {
///     r.check(1e-9)?;
/// }
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SmdScheduler {
    /// Parameters.
    pub(crate) params: SmdParams,
    reports: Vec<SmdEpochReport>,
    keys: OrderKeys,
}

impl SmdScheduler {
    /// A scheduler with these parameters.
    pub fn new(params: SmdParams) -> Self {
        SmdScheduler {
            params,
            reports: Vec::new(),
            keys: OrderKeys::default(),
        }
    }

    /// The report of every epoch so far, in order.
    pub fn reports(&self) -> &[SmdEpochReport] {
        &self.reports
    }

    /// Whether a running job keeps its allocation untouched.
    fn pinned(j: &JobView<'_>) -> bool {
        j.is_running()
            && (!j.job().discipline.preemptible
                || j.has_plan()
                || j.job().discipline.elasticity == Elasticity::Rigid)
    }
}

impl Policy for SmdScheduler {
    fn name(&self) -> String {
        "smd".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        if !matches!(event, Event::Arrival { .. } | Event::Completion { .. }) {
            return Ok(Vec::new());
        }
        let managed: Vec<JobView<'_>> = view
            .active()
            .filter(|j| !Self::pinned(j) && !j.has_plan())
            .collect();
        let mut placer = Placer::new(view.instance(), view.free_all(), PlacementRule::FirstFit);
        for j in managed.iter().filter(|j| j.is_running()) {
            placer.release(j.job(), j.placement());
        }
        // The queue window: the jobs after it wait, outside the program.
        let inside = self.keys.window(view, &managed, &self.params)?;
        let (decided, outside): (Vec<&JobView<'_>>, Vec<&JobView<'_>>) = match &inside {
            Some(inside) => {
                let (a, b): (Vec<_>, Vec<_>) = managed.iter().zip(inside).partition(|&(_, &i)| i);
                (
                    a.into_iter().map(|(j, _)| j).collect(),
                    b.into_iter().map(|(j, _)| j).collect(),
                )
            }
            None => (managed.iter().collect(), Vec::new()),
        };
        let jobs: Vec<EpochJob> = decided
            .iter()
            .map(|j| EpochJob {
                job: j.id(),
                remaining_work: j.remaining_work(),
                placement: j.placement().normalised(),
            })
            .collect();
        let out = epoch_among(
            view.instance(),
            placer.free(),
            &jobs,
            &self.params,
            managed.len(),
        )?;
        let mut actions = Vec::new();
        for (j, d) in decided.iter().zip(&out.decisions) {
            if d.placement.is_empty() {
                if j.is_running() {
                    actions.push(Action::pause(j.id()));
                }
            } else if !(j.is_running() && j.placement().same_as(&d.placement)) {
                actions.push(Action::run(j.id(), d.placement.clone()));
            }
        }
        for j in outside.iter().filter(|j| j.is_running()) {
            actions.push(Action::pause(j.id()));
        }
        self.reports.push(out.report);
        Ok(actions)
    }
}
