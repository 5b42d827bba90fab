//! Reallocation shared by the policies that recompute every job's size at
//! each event ([`Optimus`](super::Optimus), [`Rrh`](super::Rrh) and the
//! Dorm-like MILP): *sticky* placement over a scratch copy of the cluster,
//! and the order in which the new allocations are handed to the simulator.
//!
//! # Sticky placement
//!
//! A [`Realloc`] starts from the cluster as it is, with the allocations of
//! the *managed* jobs (the ones the policy recomputes) released. Tasks are
//! added job by job, all or nothing:
//!
//! 1. first onto the job's own current machines, up to what it holds there
//!    now (so a job whose size does not change keeps its placement, and a
//!    job that shrinks keeps a subset of it);
//! 2. the rest by the [`PlacementRule`], first on capacity that is free now
//!    (held by nobody), and only if that fails on capacity that other
//!    managed jobs give up in this decision.
//!
//! The preference for free capacity keeps the moves of a decision from
//! depending on each other, which is what makes the simulator's one-by-one
//! capacity check pass in almost every order.
//!
//! # Order of the actions
//!
//! The simulator applies the actions of a decision one at a time and checks
//! capacity after each. [`Realloc::into_actions`] emits changes greedily:
//! the first pending change (in the order the jobs were given) whose new
//! allocation fits the capacity left so far goes next. When none fits (a
//! cycle: two jobs each growing onto what the other gives up), the first
//! pending job that runs and is preemptible is paused and gets its new
//! allocation later in the same decision (one preemption and one
//! reconfiguration in the simulator's counters); if every blocked job is
//! non-preemptible, the first one whose *kept part* (its current tasks that
//! it also holds afterwards) is a valid smaller allocation is shrunk to it
//! first (one extra reconfiguration). Policies place the minimum of every
//! running non-preemptible job on its own machines first, so that kept part
//! always exists; were it not so, the blocked jobs would keep their current
//! allocations, which is always accepted.

use std::collections::BTreeMap;

use crate::model::{
    Architecture, Elasticity, FIT_TOL, Instance, Job, MachineId, ResourceKind, Resources, TaskKind,
};
use crate::schedule::Tasks;
use crate::sim::{Action, JobView, SimView};

use super::{PlacementRule, Placer};

/// Where `workers` and `ps` of `job` would go on an empty cluster by `rule`
/// (pointer at machine 0): the canonical placement the policies evaluate
/// the timing oracle on. `None` if they do not fit the empty cluster.
pub(crate) fn standalone(
    instance: &Instance,
    job: &Job,
    workers: u32,
    ps: u32,
    rule: PlacementRule,
) -> Option<Vec<(MachineId, Tasks)>> {
    let capacity: Vec<Resources> = instance
        .cluster()
        .machines
        .iter()
        .map(|m| m.capacity)
        .collect();
    Placer::new(instance, &capacity, rule).place(job, workers, ps)
}

/// The placement the timing oracle is evaluated on for `workers` and `ps`
/// of `job`: [`standalone`] when they fit the empty cluster; otherwise a
/// nominal placement that ignores capacity — all workers on the first
/// machine that may host them, all PSs on the first machine that may host
/// PSs — so that a configuration that cannot be placed still has a
/// remaining time (the timing models read counts and co-location only).
pub(crate) fn oracle_placement(
    instance: &Instance,
    job: &Job,
    workers: u32,
    ps: u32,
    rule: PlacementRule,
) -> Vec<(MachineId, Tasks)> {
    if let Some(p) = standalone(instance, job, workers, ps, rule) {
        return p;
    }
    let machines = &instance.cluster().machines;
    let host = |kind: TaskKind| {
        machines
            .iter()
            .find(|m| job.may_use(m.id) && m.hosts.allows(kind))
            .or(machines.first())
            .map(|m| m.id)
    };
    let mut out: Vec<(MachineId, Tasks)> = Vec::new();
    for (kind, n) in [(TaskKind::Worker, workers), (TaskKind::ParameterServer, ps)] {
        if n == 0 {
            continue;
        }
        let Some(m) = host(kind) else { continue };
        let t = match kind {
            TaskKind::Worker => Tasks::new(n, 0),
            TaskKind::ParameterServer => Tasks::new(0, n),
        };
        match out.iter_mut().find(|(id, _)| *id == m) {
            Some((_, u)) => *u = Tasks::new(u.workers + t.workers, u.ps + t.ps),
            None => out.push((m, t)),
        }
    }
    out
}

/// Component-wise minimum, floored at zero.
fn min_floor0(a: &Resources, b: &Resources) -> Resources {
    let mut out = Resources::zero();
    for k in ResourceKind::ALL {
        *out.get_mut(k) = a.get(k).min(b.get(k)).max(0.0);
    }
    out
}

fn get(t: &Tasks, kind: TaskKind) -> u32 {
    match kind {
        TaskKind::Worker => t.workers,
        TaskKind::ParameterServer => t.ps,
    }
}

fn get_mut(t: &mut Tasks, kind: TaskKind) -> &mut u32 {
    match kind {
        TaskKind::Worker => &mut t.workers,
        TaskKind::ParameterServer => &mut t.ps,
    }
}

/// A managed job: its current and its new tasks per machine position.
#[derive(Debug, Clone)]
struct Entry<'a> {
    view: JobView<'a>,
    old: BTreeMap<usize, Tasks>,
    new: BTreeMap<usize, Tasks>,
}

/// The result of placing an increment, not yet committed.
struct Increment {
    added: Vec<(usize, Tasks)>,
    scratch: Vec<Resources>,
    unclaimed: Vec<Resources>,
    pointer: usize,
}

/// New allocations of the managed jobs of one decision, built on a scratch
/// copy of the cluster (see the [module docs](self)).
#[derive(Debug, Clone)]
pub(crate) struct Realloc<'a> {
    instance: &'a Instance,
    rule: PlacementRule,
    pointer: usize,
    /// Capacity minus the unmanaged jobs minus the new allocations.
    scratch: Vec<Resources>,
    /// Free now, minus the new allocations placed on it (≤ `scratch`).
    unclaimed: Vec<Resources>,
    /// What the simulator holds as free before the decision's actions,
    /// with the `gone` jobs released.
    free_before: Vec<Resources>,
    entries: Vec<Entry<'a>>,
}

fn positions(instance: &Instance, p: &[(MachineId, Tasks)]) -> BTreeMap<usize, Tasks> {
    let mut out: BTreeMap<usize, Tasks> = BTreeMap::new();
    for &(m, t) in p {
        if t.workers == 0 && t.ps == 0 {
            continue;
        }
        if let Some(pos) = instance.machine_position(m) {
            let e = out.entry(pos).or_default();
            e.workers += t.workers;
            e.ps += t.ps;
        }
    }
    out
}

impl<'a> Realloc<'a> {
    /// Releases the allocations of `managed` (entry `i` is `managed[i]`)
    /// and of `gone` (jobs rejected by earlier actions of the same
    /// decision, which get no action here).
    pub fn new(
        view: &SimView<'a>,
        rule: PlacementRule,
        pointer: usize,
        managed: &[JobView<'a>],
        gone: &[JobView<'a>],
    ) -> Self {
        let instance = view.instance();
        let mut free_before: Vec<Resources> = view.free_all().to_vec();
        for j in gone {
            for (pos, t) in positions(instance, j.placement()) {
                free_before[pos] = free_before[pos].plus(&j.job().demand_for(t.workers, t.ps));
            }
        }
        let mut scratch = free_before.clone();
        let entries: Vec<Entry<'a>> = managed
            .iter()
            .map(|&j| {
                let old = positions(instance, j.placement());
                for (&pos, t) in &old {
                    scratch[pos] = scratch[pos].plus(&j.job().demand_for(t.workers, t.ps));
                }
                Entry {
                    view: j,
                    old,
                    new: BTreeMap::new(),
                }
            })
            .collect();
        let unclaimed = free_before
            .iter()
            .zip(&scratch)
            .map(|(f, s)| min_floor0(f, s))
            .collect();
        let n = instance.cluster().machines.len().max(1);
        Realloc {
            instance,
            rule,
            pointer: pointer % n,
            scratch,
            unclaimed,
            free_before,
            entries,
        }
    }

    /// The job of entry `e`.
    pub fn job(&self, e: usize) -> &'a Job {
        self.entries[e].view.job()
    }

    /// The new tasks of entry `e` so far.
    pub fn total(&self, e: usize) -> Tasks {
        self.entries[e].new.values().fold(Tasks::default(), |a, t| {
            Tasks::new(a.workers + t.workers, a.ps + t.ps)
        })
    }

    /// The round-robin pointer after the placements so far.
    pub fn pointer(&self) -> usize {
        self.pointer
    }

    /// Adds `workers` workers and `ps` PSs to entry `e` (sticky first, then
    /// by the rule), or changes nothing and returns `false`.
    pub fn add(&mut self, e: usize, workers: u32, ps: u32) -> bool {
        match self.plan(e, workers, ps) {
            Some(inc) => {
                for (pos, t) in inc.added {
                    let slot = self.entries[e].new.entry(pos).or_default();
                    slot.workers += t.workers;
                    slot.ps += t.ps;
                }
                self.scratch = inc.scratch;
                self.unclaimed = inc.unclaimed;
                self.pointer = inc.pointer;
                true
            }
            None => false,
        }
    }

    /// Gives entry `e` (which holds nothing new yet) exactly its current
    /// placement again, if that capacity is still unused in the scratch
    /// state; otherwise changes nothing and returns `false`.
    pub fn keep(&mut self, e: usize) -> bool {
        let entry = &self.entries[e];
        if !entry.new.is_empty() || entry.old.is_empty() {
            return false;
        }
        let job = entry.view.job();
        let ok = entry.old.iter().all(|(&pos, t)| {
            job.demand_for(t.workers, t.ps)
                .fits_in(&self.scratch[pos], FIT_TOL)
        });
        if !ok {
            return false;
        }
        let old = entry.old.clone();
        for (&pos, t) in &old {
            self.scratch[pos] = self.scratch[pos].minus(&job.demand_for(t.workers, t.ps));
            self.unclaimed[pos] = min_floor0(&self.unclaimed[pos], &self.scratch[pos]);
        }
        self.entries[e].new = old;
        true
    }

    /// Where an increment of entry `e` would go.
    fn plan(&self, e: usize, workers: u32, ps: u32) -> Option<Increment> {
        let entry = &self.entries[e];
        let job = entry.view.job();
        let mut scratch = self.scratch.clone();
        let mut unclaimed = self.unclaimed.clone();
        let mut added: BTreeMap<usize, Tasks> = BTreeMap::new();
        let mut rest = Tasks::new(workers, ps);
        // 1. Sticky: the job's own current machines.
        for kind in [TaskKind::Worker, TaskKind::ParameterServer] {
            let need = get(&rest, kind);
            if need == 0 {
                continue;
            }
            let unit = *job.task_demand(kind)?;
            let mut left = need;
            for (&pos, old) in &entry.old {
                let now = entry.new.get(&pos).map_or(0, |t| get(t, kind))
                    + added.get(&pos).map_or(0, |t| get(t, kind));
                let mut room = get(old, kind).saturating_sub(now);
                while room > 0 && left > 0 && unit.fits_in(&scratch[pos], FIT_TOL) {
                    scratch[pos] = scratch[pos].minus(&unit);
                    unclaimed[pos] = min_floor0(&unclaimed[pos], &scratch[pos]);
                    *get_mut(added.entry(pos).or_default(), kind) += 1;
                    room -= 1;
                    left -= 1;
                }
                if left == 0 {
                    break;
                }
            }
            *get_mut(&mut rest, kind) = left;
        }
        // 2. The rest by the rule: free capacity first, then released.
        let mut pointer = self.pointer;
        if rest.workers > 0 || rest.ps > 0 {
            let mut tier1 = Placer::new(self.instance, &unclaimed, self.rule).with_pointer(pointer);
            let placed = match tier1.place(job, rest.workers, rest.ps) {
                Some(p) => {
                    pointer = tier1.pointer();
                    p
                }
                None => {
                    let mut tier2 =
                        Placer::new(self.instance, &scratch, self.rule).with_pointer(pointer);
                    let p = tier2.place(job, rest.workers, rest.ps)?;
                    pointer = tier2.pointer();
                    p
                }
            };
            for (pos, t) in positions(self.instance, &placed) {
                let d = job.demand_for(t.workers, t.ps);
                scratch[pos] = scratch[pos].minus(&d);
                unclaimed[pos] = min_floor0(&unclaimed[pos].minus(&d), &scratch[pos]);
                let slot = added.entry(pos).or_default();
                slot.workers += t.workers;
                slot.ps += t.ps;
            }
        }
        Some(Increment {
            added: added.into_iter().collect(),
            scratch,
            unclaimed,
            pointer,
        })
    }

    /// The actions that take every managed job from its current allocation
    /// to its new one, in an order the simulator accepts (see the [module
    /// docs](self)). Jobs whose allocation does not change get no action.
    pub fn into_actions(self) -> Vec<Action> {
        let instance = self.instance;
        let mut free = self.free_before;
        let mut pending: Vec<Entry<'a>> = self
            .entries
            .into_iter()
            .filter(|e| e.old != e.new)
            .collect();
        let load = |job: &Job, p: &BTreeMap<usize, Tasks>| -> Vec<(usize, Resources)> {
            p.iter()
                .map(|(&pos, t)| (pos, job.demand_for(t.workers, t.ps)))
                .collect()
        };
        let fits = |e: &Entry<'_>, target: &BTreeMap<usize, Tasks>, free: &[Resources]| {
            let job = e.view.job();
            target.iter().all(|(&pos, t)| {
                let mut room = free[pos];
                if let Some(o) = e.old.get(&pos) {
                    room = room.plus(&job.demand_for(o.workers, o.ps));
                }
                job.demand_for(t.workers, t.ps).fits_in(&room, FIT_TOL)
            })
        };
        let mut out = Vec::with_capacity(pending.len());
        let apply = |e: &mut Entry<'a>,
                     target: BTreeMap<usize, Tasks>,
                     free: &mut Vec<Resources>,
                     out: &mut Vec<Action>| {
            let job = e.view.job();
            for (pos, d) in load(job, &e.old) {
                free[pos] = free[pos].plus(&d);
            }
            for (pos, d) in load(job, &target) {
                free[pos] = free[pos].minus(&d);
            }
            let machines = &instance.cluster().machines;
            let placement: Vec<(MachineId, Tasks)> =
                target.iter().map(|(&p, &t)| (machines[p].id, t)).collect();
            out.push(if placement.is_empty() {
                Action::pause(job.id)
            } else {
                Action::run(job.id, placement)
            });
            e.old = target;
        };
        while !pending.is_empty() {
            if let Some(i) = pending.iter().position(|e| fits(e, &e.new, &free)) {
                let mut e = pending.remove(i);
                let target = e.new.clone();
                apply(&mut e, target, &mut free, &mut out);
                continue;
            }
            // A cycle: release something first.
            if let Some(e) = pending
                .iter_mut()
                .find(|e| !e.old.is_empty() && e.view.job().discipline.preemptible)
            {
                apply(e, BTreeMap::new(), &mut free, &mut out);
                continue;
            }
            let shrink = pending.iter().enumerate().find_map(|(i, e)| {
                kept_part(e.view.job(), &e.old, &e.new)
                    .filter(|k| *k != e.old)
                    .map(|k| (i, k))
            });
            match shrink {
                Some((i, kept)) => apply(&mut pending[i], kept, &mut free, &mut out),
                // Cannot happen when non-preemptible jobs keep their
                // minimum in place; the blocked jobs keep their allocation.
                None => break,
            }
        }
        out
    }
}

/// The tasks a job holds both before and after (per machine, the smaller
/// count), reduced to a valid allocation of the job: PSs cut to the worker
/// count under the PS ≤ workers rule, ring workers cut to an allowed
/// count. `None` if no valid allocation remains or the job is a rigid gang.
fn kept_part(
    job: &Job,
    old: &BTreeMap<usize, Tasks>,
    new: &BTreeMap<usize, Tasks>,
) -> Option<BTreeMap<usize, Tasks>> {
    if job.discipline.elasticity == Elasticity::Rigid {
        return None;
    }
    let mut kept: BTreeMap<usize, Tasks> = BTreeMap::new();
    for (&pos, o) in old {
        let n = new.get(&pos).copied().unwrap_or_default();
        let t = Tasks::new(o.workers.min(n.workers), o.ps.min(n.ps));
        if t.workers > 0 || t.ps > 0 {
            kept.insert(pos, t);
        }
    }
    let total = kept.values().fold(Tasks::default(), |a, t| {
        Tasks::new(a.workers + t.workers, a.ps + t.ps)
    });
    let target = match &job.architecture {
        Architecture::ParameterServer(p) => {
            let ps = if p.ps_at_most_workers {
                total.ps.min(total.workers)
            } else {
                total.ps
            };
            Tasks::new(total.workers, ps)
        }
        Architecture::RingAllReduce(r) => {
            let w = (1..=total.workers).rev().find(|&w| r.workers.allows(w))?;
            Tasks::new(w, 0)
        }
    };
    if target.workers == 0
        || (matches!(job.architecture, Architecture::ParameterServer(_)) && target.ps == 0)
    {
        return None;
    }
    // Drop the surplus from the last machines.
    let mut drop = Tasks::new(total.workers - target.workers, total.ps - target.ps);
    for t in kept.values_mut().rev() {
        let dw = drop.workers.min(t.workers);
        t.workers -= dw;
        drop.workers -= dw;
        let dp = drop.ps.min(t.ps);
        t.ps -= dp;
        drop.ps -= dp;
    }
    kept.retain(|_, t| t.workers > 0 || t.ps > 0);
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::dominant_share;
    use crate::model::{Discipline, JobId, PsJob, RarJob, SyncMode};

    fn ps_job(rule: bool) -> Job {
        let r = Resources::new(1.0, 1.0, 0.0, 0.0, 1.0);
        Job::new(
            JobId(0),
            0.0,
            Architecture::ParameterServer(PsJob {
                epochs: 1,
                data_chunks: 1,
                minibatches_per_chunk: 1,
                minibatch_compute_s: 1.0,
                gradient_bytes: 0.0,
                worker: r,
                ps: r,
                max_workers: 8,
                max_ps: 8,
                ps_at_most_workers: rule,
                sync: SyncMode::Asynchronous,
                layers: None,
            }),
        )
    }

    fn map(v: &[(usize, u32, u32)]) -> BTreeMap<usize, Tasks> {
        v.iter().map(|&(m, w, p)| (m, Tasks::new(w, p))).collect()
    }

    #[test]
    fn kept_part_is_a_valid_subset() {
        let job = ps_job(true);
        // In common: (1 worker, 3 PSs) on m0 and 1 worker on m1; the PSs
        // are cut to the 2 workers, from the last machine holding PSs.
        let old = map(&[(0, 2, 3), (1, 1, 1)]);
        let new = map(&[(0, 1, 3), (1, 2, 0), (2, 0, 1)]);
        assert_eq!(
            kept_part(&job, &old, &new),
            Some(map(&[(0, 1, 2), (1, 1, 0)]))
        );
        // Without the PS ≤ workers rule the PSs stay.
        let free = ps_job(false);
        assert_eq!(
            kept_part(&free, &old, &new),
            Some(map(&[(0, 1, 3), (1, 1, 0)]))
        );
        // Nothing in common: no valid kept part.
        assert_eq!(kept_part(&job, &old, &map(&[(3, 3, 3)])), None);
        // A rigid gang has none.
        let gang = job.clone().with_discipline(Discipline::RIGID_GANG);
        assert_eq!(kept_part(&gang, &old, &new), None);
    }

    #[test]
    fn kept_part_of_a_ring_is_an_allowed_count() {
        let rar = RarJob {
            workers: crate::model::WorkerCounts::Allowed(vec![1, 2, 4]),
            iterations: 1,
            convergence_iterations: None,
            model_bytes: 0.0,
            minibatch_size: 1,
            forward_per_sample_s: 0.0,
            backward_per_iteration_s: 0.0,
            reserved_bandwidth_bps: None,
            worker: Resources::new(1.0, 0.0, 0.0, 0.0, 0.0),
        };
        let job = Job::new(JobId(1), 0.0, Architecture::RingAllReduce(rar))
            .with_discipline(Discipline::ELASTIC);
        let old = map(&[(0, 2, 0), (1, 2, 0)]);
        let new = map(&[(0, 2, 0), (1, 1, 0), (2, 1, 0)]);
        // 3 in common, cut to 2 (from the last machine).
        assert_eq!(kept_part(&job, &old, &new), Some(map(&[(0, 2, 0)])));
    }

    #[test]
    fn dominant_share_ignores_empty_resources() {
        let total = Resources::new(4.0, 0.0, 16.0, 0.0, 0.0);
        assert_eq!(
            dominant_share(&Resources::new(1.0, 5.0, 8.0, 0.0, 0.0), &total),
            0.5
        );
        assert_eq!(dominant_share(&Resources::zero(), &total), 0.0);
    }
}
