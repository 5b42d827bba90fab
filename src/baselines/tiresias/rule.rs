//! The rule of [`Tiresias`], as its docs state it: the candidates in
//! 2D-LAS order (queue by attained GPU-seconds, then arrival), each kept or
//! started where it fits what the jobs ahead of it leave (backfilling),
//! and the wake-ups at threshold crossings. The exact-arithmetic shortcut
//! that decides the same without walking the running jobs is in
//! [`fast`](super::fast).

use crate::model::{Elasticity, Job, JobId, TaskKind};
use crate::placement::Placer;
use crate::schedule::{Placement, Tasks};
use crate::sim::{JobStatus, JobView, SimView};

use super::super::common::keeps_allocation;
use super::super::requested_size;
use super::Tiresias;

/// A job in the walk's order, with its queue.
pub(super) type Ranked<'v> = (usize, JobView<'v>);

/// What a decision changes: each job and its new placement (empty: paused).
pub(super) type Changes<'v> = Vec<(JobView<'v>, Placement)>;

impl Tiresias {
    /// The rule at one event: the candidates in [`Tiresias::order`],
    /// walked on the free room plus what the running ones hold.
    pub(super) fn rule<'v>(&mut self, view: &SimView<'v>) -> crate::Result<Changes<'v>> {
        let order = self.order(view);
        let mut scratch = Placer::new(view.instance(), view.free_all(), self.placement);
        for (_, j) in order.iter().filter(|(_, j)| j.is_running()) {
            scratch.release(j.job(), j.placement());
        }
        self.walk(&order, 0, scratch, Vec::new())
    }

    /// The candidates (jobs without a plan that may be preempted) by queue,
    /// then arrival (then instance) order.
    pub(super) fn order<'v>(&mut self, view: &SimView<'v>) -> Vec<Ranked<'v>> {
        let mut ranked = Vec::new();
        for j in view.active() {
            if is_candidate(&j) {
                let s = self.service(view, &j);
                ranked.push((self.queue(s), j));
            }
        }
        by_queue(ranked, self.thresholds.len() + 1)
    }

    /// The queue of a job with attained service `s` GPU-seconds.
    pub(super) fn queue(&self, s: f64) -> usize {
        self.thresholds.iter().filter(|&&t| t <= s).count()
    }

    /// The job's service for the queues, after the starvation guard.
    pub(super) fn service(&mut self, view: &SimView<'_>, j: &JobView<'_>) -> f64 {
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

    /// Walks `order` from position `from` on `scratch`: the free room plus
    /// what the running jobs from `from` on hold (the rule of the type's
    /// docs). Running jobs are kept where they fit, and waiting jobs start
    /// on the room that the running jobs behind them leave if possible,
    /// else on `scratch`. Appends to `changes` and returns them.
    pub(super) fn walk<'v>(
        &self,
        order: &[Ranked<'v>],
        from: usize,
        mut scratch: Placer<'v>,
        mut changes: Changes<'v>,
    ) -> crate::Result<Changes<'v>> {
        // `scratch` less the running jobs behind the current one; kept
        // while neither changes (waiting jobs in a row that do not start).
        let mut spare_base: Option<Placer<'_>> = None;
        for (k, &(_, j)) in order.iter().enumerate().skip(from) {
            let job = j.job();
            if j.is_running() {
                spare_base = None;
                if !scratch.take(job, j.placement()) {
                    changes.push((j, Placement::new()));
                }
                continue;
            }
            if let Some(pin) = self.pin(&j) {
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
        Ok(changes)
    }

    /// Where a rigid gang must resume, if it ran before.
    pub(super) fn pin(&self, j: &JobView<'_>) -> Option<&Placement> {
        (j.job().discipline.elasticity == Elasticity::Rigid)
            .then(|| self.memory.pins.get(&j.id()))
            .flatten()
    }

    /// Drops stale memory and records where rigid gangs run now.
    pub(super) fn refresh(&mut self, view: &SimView<'_>) {
        let live = |id: &JobId| {
            view.job(*id)
                .is_some_and(|j| matches!(j.status(), JobStatus::Running | JobStatus::Paused))
        };
        self.memory.promoted.retain(|id, _| live(id));
        self.memory.pins.retain(|id, _| live(id));
        for j in view.active() {
            if j.is_running() && j.job().discipline.elasticity == Elasticity::Rigid {
                // Most pins are already there: no clone then.
                let placement = j.placement();
                if self.memory.pins.get(&j.id()) != Some(placement) {
                    self.memory.pins.insert(j.id(), placement.clone());
                }
            }
        }
    }

    /// The next time a running job's service crosses a queue threshold, or
    /// (with the starvation guard) a paused job becomes due for promotion:
    /// demotions and promotions then happen exactly when they are due, with
    /// no need for slot ticks.
    pub(super) fn next_wakeup(&self, view: &SimView<'_>) -> Option<f64> {
        let now = view.now_s();
        let mut next = f64::INFINITY;
        let promoted = &self.memory.promoted;
        for j in view.active() {
            let offset = if promoted.is_empty() {
                0.0
            } else {
                promoted.get(&j.id()).copied().unwrap_or(0.0)
            };
            let service = (j.attained_gpu_s() - offset).max(0.0);
            if j.is_running() {
                let t = j.tasks();
                let gpus = gpus_for(j.job(), t);
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
}

/// `job.demand_for(t.workers, t.ps).gpus` (the same operations in the same
/// order, so the same bits) without the other resources.
fn gpus_for(job: &Job, t: Tasks) -> f64 {
    let mut gpus = 0.0;
    if let Some(d) = job.task_demand(TaskKind::Worker) {
        gpus += d.gpus * f64::from(t.workers);
    }
    if let Some(d) = job.task_demand(TaskKind::ParameterServer) {
        gpus += d.gpus * f64::from(t.ps);
    }
    gpus
}

/// Whether the policy may move the job: no plan, and preemptible if it
/// runs.
pub(super) fn is_candidate(j: &JobView<'_>) -> bool {
    !j.has_plan() && !keeps_allocation(j, false)
}

/// `ranked` sorted by queue (`< queues`), stably: a counting sort.
pub(super) fn by_queue(ranked: Vec<Ranked<'_>>, queues: usize) -> Vec<Ranked<'_>> {
    if ranked.is_sorted_by_key(|&(q, _)| q) {
        return ranked;
    }
    let mut start = vec![0usize; queues + 1];
    for &(q, _) in &ranked {
        start[q + 1] += 1;
    }
    for q in 1..start.len() {
        start[q] += start[q - 1];
    }
    let mut slot = vec![0usize; ranked.len()];
    for (i, &(q, _)) in ranked.iter().enumerate() {
        slot[start[q]] = i;
        start[q] += 1;
    }
    slot.into_iter().map(|i| ranked[i]).collect()
}
