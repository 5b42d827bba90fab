//! Tiresias: discretised two-dimensional least attained service.

use std::collections::BTreeMap;

use crate::model::{Elasticity, JobId};
use crate::schedule::Placement;
use crate::sim::{Action, Event, JobStatus, JobView, Policy, SimView};

use super::common::{keeps_allocation, to_actions};
use super::{PlacementRule, Placer, RequestedSizes, requested_size};

/// Least attained service over a few priority queues, after Tiresias (Gu
/// et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
/// Learning", NSDI 2019): discretised two-dimensional least attained
/// service (attained GPU-seconds). It needs no knowledge of remaining work — its main practical
/// advantage, to be stated in any comparison with oracle policies.
///
/// # Rule
///
/// * **Attained service** `S_j` is the job's GPU-seconds so far,
///   [`JobView::attained_gpu_s`] (GPUs held × time, the "2D" of 2D-LAS).
/// * **Queues** `Q_0 … Q_{K−1}` with thresholds `0 = T_0 < T_1 < … <
///   T_{K−1}`: the job is in the queue of the largest `T_k ≤ S_j`, that is
///   queue `#{k ≥ 1 : T_k ≤ S_j}`. [`Tiresias::thresholds`] lists `T_1 …
///   T_{K−1}` in increasing order (default `[3250, 7200]`: K = 3 queues,
///   the defaults of the Tiresias authors' public simulator,
///   `SymbioticLab/Tiresias`, whose queue limits are 3,250 and 7,200
///   GPU-seconds for its three queues).
/// * **Order**: lower queue first, then arrival order (ties by instance
///   order).
/// * At each event, walk that order and keep or start every job whose
///   requested size fits what is left (backfilling): its entry in
///   [`Tiresias::requests`] (a requested configuration `k^req` from a trace
///   or a generator), else [`requested_tasks`](super::requested_tasks).
///   A running job that stays selected keeps its placement; one whose
///   resources went to jobs ahead of it is preempted (the simulator charges
///   `reconfiguration_s` when it resumes). A starting job is placed with
///   [`Tiresias::placement`] on room that the running jobs behind it do
///   not hold if possible, and only otherwise on their resources, so a
///   start preempts only when it must. Jobs are never resized.
/// * **Starvation guard** (off by default): with `starve_factor = Some(f)`,
///   a paused job that has waited at least `f ×` its last run
///   ([`JobView::last_run_s`]) moves back to `Q_0`: its attained service is
///   counted again from that moment (the policy remembers the offset).
///
/// **What is never preempted.** Running jobs that are not preemptible keep
/// their allocation and are not part of the order; jobs holding a plan are
/// left alone. A rigid preemptible gang resumes only on the placement it
/// ran on (the gang rule of [`crate::schedule::verify`]: the same placement
/// in every slot it runs), which the policy remembers.
///
/// **Wake-ups.** Service grows while jobs run; the policy asks the
/// simulator ([`Policy::next_wakeup_s`]) to wake it when the next running
/// job crosses a threshold (or a paused job becomes due under the
/// starvation guard), so demotions happen exactly on time with plain
/// event-driven decisions. It also re-decides at ticks if they are on.
///
/// # Parameters
///
/// * `thresholds` (default `[3250.0, 7200.0]` GPU-seconds): `T_1 …
///   T_{K−1}` ([`Tiresias::SIMULATOR_THRESHOLDS`]);
/// * `starve_factor` (default `None`): the starvation guard;
/// * `requests` (default empty): requested sizes per job;
/// * `placement` (default [`PlacementRule::BestFit`], the consolidated
///   placement of the Tiresias simulator's default scheme).
///
/// # Complexity
///
/// `O(J log J + J·(R·P + P))` per event for `J` candidate jobs, `R ≤ J`
/// running ones and `P` one placement or take (`O((w + p)·H)`): each start
/// first tries the room that the running jobs behind it leave.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Tiresias;
/// let mut t = Tiresias::default();
/// assert_eq!(t.thresholds, vec![3250.0, 7200.0]);
/// assert_eq!(t.starve_factor, None);
/// // Two queues and a one-GPU-hour threshold, and the starvation guard.
/// t.thresholds = vec![3600.0];
/// t.starve_factor = Some(2.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Tiresias {
    /// Queue thresholds `T_1 … T_{K−1}` in GPU-seconds, increasing.
    pub thresholds: Vec<f64>,
    /// Starvation guard: a paused job that waited `≥ f ×` its last run
    /// moves back to the first queue.
    pub starve_factor: Option<f64>,
    /// How starting jobs are spread over machines.
    pub placement: PlacementRule,
    /// Requested sizes per job (default empty: every job at
    /// [`requested_tasks`](super::requested_tasks)). A run with an entry a
    /// job cannot run at ends with
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams).
    pub requests: RequestedSizes,
    /// Bookkeeping across events of one run.
    memory: Memory,
}

/// What the policy remembers between events: service offsets of jobs the
/// starvation guard promoted, and where rigid gangs ran. Entries of jobs
/// that neither run nor are paused are dropped at every event, which also
/// forgets a previous run when the policy is reused.
#[derive(Debug, Clone, PartialEq, Default)]
struct Memory {
    promoted: BTreeMap<JobId, f64>,
    pins: BTreeMap<JobId, Placement>,
}

impl Default for Tiresias {
    fn default() -> Self {
        Tiresias {
            thresholds: Tiresias::SIMULATOR_THRESHOLDS.to_vec(),
            starve_factor: None,
            placement: PlacementRule::BestFit,
            requests: RequestedSizes::new(),
            memory: Memory::default(),
        }
    }
}

impl Tiresias {
    /// The queue thresholds of the Tiresias authors' public simulator
    /// (three queues, limits 3,250 and 7,200 GPU-seconds): the default.
    pub const SIMULATOR_THRESHOLDS: [f64; 2] = [3250.0, 7200.0];

    /// Checks the parameters: thresholds finite, > 0 and strictly
    /// increasing; a starvation factor finite and > 0. [`Policy::on_event`]
    /// calls it, so a run with bad parameters ends with this error.
    ///
    /// ```
    /// use dmlsched::baselines::Tiresias;
    /// let mut t = Tiresias::default();
    /// assert!(t.validate().is_ok());
    /// t.thresholds = vec![7200.0, 3250.0];
    /// assert!(t.validate().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams) naming the
    /// bad value.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |reason: String| {
            Err(crate::sim::SimError::BadParams {
                policy: "tiresias".into(),
                reason,
            }
            .into())
        };
        for (k, &t) in self.thresholds.iter().enumerate() {
            if !(t.is_finite() && t > 0.0) {
                return bad(format!(
                    "threshold {} is {t}: thresholds must be finite and > 0 GPU-seconds",
                    k + 1
                ));
            }
            if k > 0 && t <= self.thresholds[k - 1] {
                return bad(format!(
                    "thresholds must increase, found {} then {t}",
                    self.thresholds[k - 1]
                ));
            }
        }
        if let Some(f) = self.starve_factor
            && !(f.is_finite() && f > 0.0)
        {
            return bad(format!(
                "the starvation factor must be finite and > 0, found {f}"
            ));
        }
        Ok(())
    }

    /// The queue of a job with attained service `s` GPU-seconds.
    fn queue(&self, s: f64) -> usize {
        self.thresholds.iter().filter(|&&t| t <= s).count()
    }

    /// Drops stale memory and records where rigid gangs run now.
    fn refresh(&mut self, view: &SimView<'_>) {
        let live = |id: &JobId| {
            view.job(*id)
                .is_some_and(|j| matches!(j.status(), JobStatus::Running | JobStatus::Paused))
        };
        self.memory.promoted.retain(|id, _| live(id));
        self.memory.pins.retain(|id, _| live(id));
        for j in view.active() {
            if j.is_running() && j.job().discipline.elasticity == Elasticity::Rigid {
                self.memory.pins.insert(j.id(), j.placement().clone());
            }
        }
    }

    /// The job's service for the queues, after the starvation guard.
    fn service(&mut self, view: &SimView<'_>, j: &JobView<'_>) -> f64 {
        let attained = j.attained_gpu_s();
        if let Some(f) = self.starve_factor
            && j.status() == JobStatus::Paused
            && view.now_s() - j.since_s() >= f * j.last_run_s()
        {
            self.memory.promoted.insert(j.id(), attained);
        }
        let offset = self.memory.promoted.get(&j.id()).copied().unwrap_or(0.0);
        (attained - offset).max(0.0)
    }
}

impl Policy for Tiresias {
    fn name(&self) -> String {
        "tiresias".into()
    }

    /// The next time a running job's service crosses a queue threshold, or
    /// (with the starvation guard) a paused job becomes due for promotion:
    /// demotions and promotions then happen exactly when they are due, with
    /// no need for slot ticks.
    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        let now = view.now_s();
        let mut next = f64::INFINITY;
        for j in view.active() {
            let offset = self.memory.promoted.get(&j.id()).copied().unwrap_or(0.0);
            let service = (j.attained_gpu_s() - offset).max(0.0);
            if j.is_running() {
                let t = j.tasks();
                let gpus = j.job().demand_for(t.workers, t.ps).gpus;
                if let Some(&th) = self.thresholds.iter().find(|&&th| th > service)
                    && gpus > 0.0
                {
                    next = next.min(now + (th - service) / gpus);
                }
            } else if let Some(f) = self.starve_factor
                && j.status() == JobStatus::Paused
            {
                next = next.min(j.since_s() + f * j.last_run_s());
            }
        }
        (next.is_finite() && next > now).then_some(next)
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.validate()?;
        self.refresh(view);
        let instance = view.instance();
        let candidates: Vec<JobView<'_>> = view
            .active()
            .filter(|j| !j.has_plan() && !keeps_allocation(j, false))
            .collect();
        let mut order: Vec<(usize, JobView<'_>)> = Vec::with_capacity(candidates.len());
        for j in candidates {
            let s = self.service(view, &j);
            let q = self.queue(s);
            order.push((q, j));
        }
        // Stable: arrival (then instance) order within a queue.
        order.sort_by_key(|&(q, _)| q);

        let mut scratch = Placer::new(instance, view.free_all(), self.placement);
        for (_, j) in order.iter().filter(|(_, j)| j.is_running()) {
            scratch.release(j.job(), j.placement());
        }
        let mut changes = Vec::new();
        // `scratch` less the running jobs behind the current one; kept
        // while neither changes (waiting jobs in a row that do not start).
        let mut spare_base: Option<Placer<'_>> = None;
        for (k, &(_, j)) in order.iter().enumerate() {
            let job = j.job();
            if j.is_running() {
                spare_base = None;
                if !scratch.take(job, j.placement()) {
                    changes.push((j, Placement::new()));
                }
                continue;
            }
            let pin = (job.discipline.elasticity == Elasticity::Rigid)
                .then(|| self.memory.pins.get(&j.id()))
                .flatten();
            if let Some(pin) = pin {
                if scratch.take(job, pin) {
                    spare_base = None;
                    changes.push((j, pin.clone()));
                }
                continue;
            }
            let (w, p) = requested_size(job, &self.requests, "tiresias")?;
            // What does not fit the total of `scratch` fits neither there
            // nor on `spare` (less room): skip building `spare`.
            if !scratch.may_fit(job, w, p) {
                continue;
            }
            let mut spare = spare_base
                .get_or_insert_with(|| {
                    let mut spare = scratch.clone();
                    for (_, later) in order[k + 1..].iter().filter(|(_, l)| l.is_running()) {
                        spare.take(later.job(), later.placement());
                    }
                    spare
                })
                .clone();
            if let Some(placement) = spare.place(job, w, p) {
                if scratch.take(job, &placement) {
                    spare_base = None;
                    changes.push((j, placement));
                }
            } else if let Some(placement) = scratch.place(job, w, p) {
                spare_base = None;
                changes.push((j, placement));
            }
        }
        Ok(to_actions(changes))
    }
}
