//! Reallocation shared by the policies that recompute every job's size at
//! each event ([`Optimus`](super::Optimus), [`Rrh`](super::Rrh) and the
//! Dorm-like MILP): *sticky* placement over a scratch copy of the cluster,
//! and the actions that state the new allocations.
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
//! The preference for free capacity keeps jobs from moving onto what
//! others give up when they need not, which limits churn.
//!
//! Every step charges what the simulator charges, ring reservations
//! included (see [`Placer`]): releasing or keeping an allocation counts
//! its reservation, and a job's growth is charged through its [`Span`], so
//! a reserving ring that comes to span two machines is charged `b` on both
//! and on every machine added after.
//!
//! # Actions
//!
//! [`Realloc::into_actions`] states the new allocation of every managed
//! job whose allocation changes (an empty one pauses it). The simulator
//! applies one answer as a transaction, so no order is needed and moves
//! that form a cycle (two jobs swapping machines) cost no preemption.

use std::collections::{BTreeMap, HashMap};

use crate::model::{FIT_TOL, Instance, Job, ResourceKind, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, JobView, SimView};

use super::placement::Span;
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
) -> Option<Placement> {
    let capacity: Vec<Resources> = instance
        .cluster()
        .machines
        .iter()
        .map(|m| m.capacity)
        .collect();
    Placer::new(instance, &capacity, rule).place(job, workers, ps)
}

/// What [`standalone`] reads of a job and its counts, for a job that may
/// use every machine: the demands of a worker and of a PS, the ring
/// reservation, the counts. Jobs with the same shape get the same
/// standalone placement.
type Shape = (Option<[u64; 5]>, Option<[u64; 5]>, u64, u32, u32);

fn bits(r: &Resources) -> [u64; 5] {
    [
        r.gpus.to_bits(),
        r.cpu_cores.to_bits(),
        r.memory_bytes.to_bits(),
        r.storage_bytes.to_bits(),
        r.nic_bps.to_bits(),
    ]
}

/// [`standalone`] placements of one decision, shared by the jobs of the
/// same [`Shape`] (a queue holds many jobs of a few shapes).
#[derive(Debug, Default)]
pub(crate) struct Standalone {
    placements: HashMap<Shape, Option<Placement>>,
}

impl Standalone {
    /// [`standalone`], looked up by shape when the job may use every
    /// machine.
    pub(crate) fn get(
        &mut self,
        instance: &Instance,
        job: &Job,
        workers: u32,
        ps: u32,
        rule: PlacementRule,
    ) -> Option<Placement> {
        if job.allowed_machines.is_some() {
            return standalone(instance, job, workers, ps, rule);
        }
        let shape = (
            job.task_demand(TaskKind::Worker).map(bits),
            job.task_demand(TaskKind::ParameterServer).map(bits),
            job.reserved_nic_bps(2).to_bits(),
            workers,
            ps,
        );
        self.placements
            .entry(shape)
            .or_insert_with(|| standalone(instance, job, workers, ps, rule))
            .clone()
    }

    /// The placement the timing oracle is evaluated on for `workers` and `ps`
    /// of `job`: [`standalone`] (looked up) when they fit the empty cluster; otherwise a
    /// nominal placement that ignores capacity — all workers on the first
    /// machine that may host them, all PSs on the first machine that may host
    /// PSs — so that a configuration that cannot be placed still has a
    /// remaining time (the timing models read counts and co-location only).
    pub(crate) fn oracle(
        &mut self,
        instance: &Instance,
        job: &Job,
        workers: u32,
        ps: u32,
        rule: PlacementRule,
    ) -> Placement {
        match self.get(instance, job, workers, ps, rule) {
            Some(p) => p,
            None => nominal(instance, job, workers, ps),
        }
    }
}

/// The nominal placement of [`Standalone::oracle`] for counts that do not
/// fit the empty cluster.
fn nominal(instance: &Instance, job: &Job, workers: u32, ps: u32) -> Placement {
    let machines = &instance.cluster().machines;
    let host = |kind: TaskKind| {
        machines
            .iter()
            .find(|m| job.may_use(m.id) && m.hosts.allows(kind))
            .or(machines.first())
            .map(|m| m.id)
    };
    let mut out = Placement::new();
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

/// The result of placing an increment on the ledgers: the tasks added
/// (not yet recorded in the entry) and the pointer after it.
struct Increment {
    added: Vec<(usize, Tasks)>,
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
    entries: Vec<Entry<'a>>,
}

/// What `tasks` (per machine position) of `job` are charged on each
/// position: [`Job::demand_with_reservation`] over the positions holding
/// workers.
fn charged<'t>(
    job: &'t Job,
    tasks: &'t BTreeMap<usize, Tasks>,
) -> impl Iterator<Item = (usize, Resources)> + 't {
    let spread = tasks.values().filter(|t| t.workers > 0).count();
    tasks
        .iter()
        .map(move |(&p, t)| (p, job.demand_with_reservation(t.workers, t.ps, spread)))
}

/// The positions of `tasks` that hold workers.
fn hosts(tasks: &BTreeMap<usize, Tasks>) -> impl Iterator<Item = usize> + '_ {
    tasks.iter().filter(|(_, t)| t.workers > 0).map(|(&p, _)| p)
}

fn positions(instance: &Instance, p: &Placement) -> BTreeMap<usize, Tasks> {
    let mut out: BTreeMap<usize, Tasks> = BTreeMap::new();
    for &(m, t) in p {
        if t.is_empty() {
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
            for (pos, d) in charged(j.job(), &positions(instance, j.placement())) {
                free_before[pos] = free_before[pos].plus(&d);
            }
        }
        let mut scratch = free_before.clone();
        let entries: Vec<Entry<'a>> = managed
            .iter()
            .map(|&j| {
                let old = positions(instance, j.placement());
                for (pos, d) in charged(j.job(), &old) {
                    scratch[pos] = scratch[pos].plus(&d);
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
        let ok = charged(job, &entry.old).all(|(pos, d)| d.fits_in(&self.scratch[pos], FIT_TOL));
        if !ok {
            return false;
        }
        let old = entry.old.clone();
        for (pos, d) in charged(job, &old) {
            self.scratch[pos] = self.scratch[pos].minus(&d);
            self.unclaimed[pos] = min_floor0(&self.unclaimed[pos], &self.scratch[pos]);
        }
        self.entries[e].new = old;
        true
    }

    /// Places an increment of entry `e` on the ledgers and returns where it
    /// went and the pointer after it; or restores every ledger entry it
    /// changed (from a log of the old values, instead of working on
    /// copies) and returns `None`.
    fn plan(&mut self, e: usize, workers: u32, ps: u32) -> Option<Increment> {
        let mut log: Vec<(usize, Resources, Resources)> = Vec::new();
        let out = self.plan_logged(e, workers, ps, &mut log);
        if out.is_none() {
            for (p, s, u) in log.into_iter().rev() {
                self.scratch[p] = s;
                self.unclaimed[p] = u;
            }
        }
        out
    }

    /// [`Realloc::plan`], logging the old value of every ledger entry
    /// before it changes.
    fn plan_logged(
        &mut self,
        e: usize,
        workers: u32,
        ps: u32,
        log: &mut Vec<(usize, Resources, Resources)>,
    ) -> Option<Increment> {
        let Realloc {
            instance,
            rule,
            pointer: start,
            scratch,
            unclaimed,
            entries,
        } = self;
        let entry = &entries[e];
        let job = entry.view.job();
        let mut added: BTreeMap<usize, Tasks> = BTreeMap::new();
        let mut span = Span::new(job, hosts(&entry.new));
        let mut rest = Tasks::new(workers, ps);
        // 1. Sticky: the job's own current machines.
        for kind in [TaskKind::Worker, TaskKind::ParameterServer] {
            let need = get(&rest, kind);
            if need == 0 {
                continue;
            }
            let unit = *job.task_demand(kind)?;
            let worker = kind == TaskKind::Worker;
            let mut left = need;
            for (&pos, old) in &entry.old {
                let now = entry.new.get(&pos).map_or(0, |t| get(t, kind))
                    + added.get(&pos).map_or(0, |t| get(t, kind));
                let mut room = get(old, kind).saturating_sub(now);
                while room > 0 && left > 0 {
                    let c = span.charge(pos, &unit, worker);
                    if !c.fits(scratch) {
                        break;
                    }
                    for (p, _) in c.parts() {
                        log.push((p, scratch[p], unclaimed[p]));
                    }
                    c.apply(scratch);
                    span.record(pos, worker);
                    for (p, _) in c.parts() {
                        unclaimed[p] = min_floor0(&unclaimed[p], &scratch[p]);
                    }
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
        let mut pointer = *start;
        if rest.workers > 0 || rest.ps > 0 {
            let mut tier1 = Placer::new(instance, unclaimed, *rule).with_pointer(pointer);
            let placed = match tier1.grow_span(job, span.clone(), rest.workers, rest.ps) {
                Some(p) => {
                    pointer = tier1.pointer();
                    p
                }
                None => {
                    let mut tier2 = Placer::new(instance, scratch, *rule).with_pointer(pointer);
                    let p = tier2.grow_span(job, span.clone(), rest.workers, rest.ps)?;
                    pointer = tier2.pointer();
                    p
                }
            };
            // The placer checked these charges against its tier; they are
            // recomputed here for both ledgers.
            for (pos, t) in positions(instance, &placed) {
                let c = span.charge(pos, &job.demand_for(t.workers, t.ps), t.workers > 0);
                for (p, d) in c.parts() {
                    log.push((p, scratch[p], unclaimed[p]));
                    scratch[p] = scratch[p].minus(&d);
                    unclaimed[p] = min_floor0(&unclaimed[p].minus(&d), &scratch[p]);
                }
                span.record(pos, t.workers > 0);
                let slot = added.entry(pos).or_default();
                slot.workers += t.workers;
                slot.ps += t.ps;
            }
        }
        Some(Increment {
            added: added.into_iter().collect(),
            pointer,
        })
    }

    /// The actions that take every managed job from its current allocation
    /// to its new one (see the [module docs](self)), in the order the jobs
    /// were given. Jobs whose allocation does not change get no action.
    pub fn into_actions(self) -> Vec<Action> {
        let machines = &self.instance.cluster().machines;
        self.entries
            .into_iter()
            .filter(|e| e.old != e.new)
            .map(|e| {
                let placement: Placement =
                    e.new.iter().map(|(&p, &t)| (machines[p].id, t)).collect();
                if placement.is_empty() {
                    Action::pause(e.view.id())
                } else {
                    Action::run(e.view.id(), placement)
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::dominant_share;

    #[test]
    fn dominant_share_ignores_empty_resources() {
        let total = Resources::zero().gpus(4.0).memory(16.0);
        assert_eq!(
            dominant_share(
                &Resources::zero().gpus(1.0).cpu_cores(5.0).memory(8.0),
                &total
            ),
            0.5
        );
        assert_eq!(dominant_share(&Resources::zero(), &total), 0.0);
    }
}
