//! Reallocation shared by the policies that recompute every job's size at
//! each event ([`Optimus`](super::Optimus), [`Rrh`](super::Rrh),
//! [`ProportionalShare`](super::ProportionalShare) and the Dorm-like
//! MILP): *sticky* placement over a scratch copy of the cluster, and the
//! actions that state the new allocations.
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

use std::ops::Range;

use crate::model::{FIT_TOL, Instance, Job, ResourceKind, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, JobView, SimView};

use super::{PlacementRule, Placer, Span};

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

/// Tasks per machine position, `(position, tasks)` pairs.
type Pairs = Vec<(usize, Tasks)>;

/// Tasks per machine position: sorted by position, one pair per position
/// (what a `BTreeMap<usize, Tasks>` iterates).
type Spots = Pairs;

/// Adds `t` to the tasks of `spots` at `pos` (a new pair, in order, if
/// `pos` has none).
fn bump(spots: &mut Spots, pos: usize, t: Tasks) {
    match spots.binary_search_by_key(&pos, |&(p, _)| p) {
        Ok(i) => {
            let u = &mut spots[i].1;
            u.workers += t.workers;
            u.ps += t.ps;
        }
        Err(i) => spots.insert(i, (pos, Tasks::new(t.workers, t.ps))),
    }
}

/// The tasks of `spots` at `pos`, if it has a pair there.
fn at(spots: &[(usize, Tasks)], pos: usize) -> Option<&Tasks> {
    spots
        .binary_search_by_key(&pos, |&(p, _)| p)
        .ok()
        .map(|i| &spots[i].1)
}

/// A managed job: its current and its new tasks per machine position.
#[derive(Debug, Clone)]
struct Entry<'a> {
    view: JobView<'a>,
    /// Its current tasks: `Realloc::olds[old]` (one buffer for all the
    /// entries of a decision).
    old: Range<usize>,
    /// Its new tasks, unless `kept`.
    new: Spots,
    /// Its new tasks are exactly its current ones (given back by
    /// [`Realloc::keep`]; `new` is then empty and unused).
    kept: bool,
}

/// The result of placing an increment on the ledgers: the tasks added
/// (not yet recorded in the entry) and the pointer after it.
struct Increment {
    added: Spots,
    pointer: usize,
}

/// New allocations of the managed jobs of one decision, built on a scratch
/// copy of the cluster (see the [module docs](self)).
#[derive(Debug, Clone)]
pub(crate) struct Realloc<'a> {
    instance: &'a Instance,
    pointer: usize,
    /// Capacity minus the unmanaged jobs minus the new allocations.
    scratch: Vec<Resources>,
    /// Free now, minus the new allocations placed on it (≤ `scratch`).
    unclaimed: Vec<Resources>,
    entries: Vec<Entry<'a>>,
    /// The current tasks of every entry, each a range of this buffer.
    olds: Pairs,
    /// A placer reused for the rule's placements on either ledger (its
    /// capacities are refilled before each use, so it carries nothing
    /// between them but its buffer).
    tier: Placer<'a>,
    /// The undo log of [`Realloc::plan`], kept for its buffer (empty
    /// between calls).
    log: Vec<(usize, Resources, Resources)>,
    /// The pointer and ledgers [`Realloc::new`] made, for
    /// [`Realloc::restart`].
    start: (usize, Vec<Resources>, Vec<Resources>),
    /// Entries given new tasks (or kept) since the start, in order.
    touched: Vec<usize>,
}

/// What `tasks` (per machine position) of `job` are charged on each
/// position: [`Job::demand_with_reservation`] over the positions holding
/// workers.
fn charged<'t>(
    job: &'t Job,
    tasks: &'t [(usize, Tasks)],
) -> impl Iterator<Item = (usize, Resources)> + 't {
    let spread = tasks.iter().filter(|(_, t)| t.workers > 0).count();
    tasks
        .iter()
        .map(move |&(p, t)| (p, job.demand_with_reservation(t.workers, t.ps, spread)))
}

/// The positions of `tasks` that hold workers.
fn hosts(tasks: &[(usize, Tasks)]) -> impl Iterator<Item = usize> + '_ {
    tasks.iter().filter(|(_, t)| t.workers > 0).map(|&(p, _)| p)
}

/// Appends the tasks of `p` per machine position to `out`, as [`Spots`]
/// (machines merged by position, sorted, empty tasks and unknown machines
/// left out), and returns where they are.
fn push_positions(instance: &Instance, p: &Placement, out: &mut Pairs) -> Range<usize> {
    let start = out.len();
    for &(m, t) in p {
        if t.is_empty() {
            continue;
        }
        if let Some(pos) = instance.machine_position(m) {
            match out[start..].iter_mut().find(|(q, _)| *q == pos) {
                Some((_, u)) => {
                    u.workers += t.workers;
                    u.ps += t.ps;
                }
                None => out.push((pos, Tasks::new(t.workers, t.ps))),
            }
        }
    }
    out[start..].sort_unstable_by_key(|&(q, _)| q);
    start..out.len()
}

fn positions(instance: &Instance, p: &Placement) -> Pairs {
    let mut out = Pairs::new();
    push_positions(instance, p, &mut out);
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
        let mut olds = Pairs::with_capacity(managed.len());
        let entries: Vec<Entry<'a>> = managed
            .iter()
            .map(|&j| {
                let old = push_positions(instance, j.placement(), &mut olds);
                for (pos, d) in charged(j.job(), &olds[old.clone()]) {
                    scratch[pos] = scratch[pos].plus(&d);
                }
                Entry {
                    view: j,
                    old,
                    new: Spots::new(),
                    kept: false,
                }
            })
            .collect();
        let unclaimed: Vec<Resources> = free_before
            .iter()
            .zip(&scratch)
            .map(|(f, s)| min_floor0(f, s))
            .collect();
        let n = instance.cluster().machines.len().max(1);
        Realloc {
            instance,
            pointer: pointer % n,
            start: (pointer % n, scratch.clone(), unclaimed.clone()),
            scratch,
            unclaimed,
            entries,
            olds,
            tier: Placer::new(instance, &[], rule),
            log: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// Undoes every placement since [`Realloc::new`]: afterwards the
    /// reallocation is what `new` made (same ledgers, pointer and entries,
    /// each holding nothing new), in time `O(H)` plus the entries placed
    /// since, instead of `new`'s `O(H + J)` over all `J` managed jobs.
    pub(crate) fn restart(&mut self) {
        let (pointer, scratch, unclaimed) = &self.start;
        self.pointer = *pointer;
        self.scratch.clone_from(scratch);
        self.unclaimed.clone_from(unclaimed);
        for e in self.touched.drain(..) {
            let entry = &mut self.entries[e];
            entry.new = Spots::new();
            entry.kept = false;
        }
    }

    /// The current tasks of entry `e`.
    fn old(&self, e: usize) -> &[(usize, Tasks)] {
        &self.olds[self.entries[e].old.clone()]
    }

    /// The new tasks of entry `e` so far.
    fn new_tasks(&self, e: usize) -> &[(usize, Tasks)] {
        if self.entries[e].kept {
            self.old(e)
        } else {
            self.entries[e].new.as_slice()
        }
    }

    /// The job of entry `e`.
    pub fn job(&self, e: usize) -> &'a Job {
        self.entries[e].view.job()
    }

    /// The new tasks of entry `e` so far.
    pub fn total(&self, e: usize) -> Tasks {
        self.new_tasks(e)
            .iter()
            .fold(Tasks::default(), |a, (_, t)| {
                Tasks::new(a.workers + t.workers, a.ps + t.ps)
            })
    }

    /// The room per machine position: capacity minus the unmanaged jobs
    /// minus the new allocations so far (before any, the free room plus
    /// what the managed jobs hold).
    pub(crate) fn room(&self) -> &[Resources] {
        &self.scratch
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
                if self.entries[e].kept {
                    let old = self.old(e).to_vec();
                    let entry = &mut self.entries[e];
                    entry.new = old;
                    entry.kept = false;
                }
                for &(pos, t) in inc.added.as_slice() {
                    bump(&mut self.entries[e].new, pos, t);
                }
                self.pointer = inc.pointer;
                self.touched.push(e);
                true
            }
            None => false,
        }
    }

    /// Gives entry `e` (which holds nothing new yet) exactly its current
    /// placement again, if that capacity is still unused in the scratch
    /// state; otherwise changes nothing and returns `false`.
    pub fn keep(&mut self, e: usize) -> bool {
        let Realloc {
            scratch,
            unclaimed,
            entries,
            olds,
            ..
        } = self;
        let entry = &mut entries[e];
        let old = &olds[entry.old.clone()];
        if entry.kept || !entry.new.is_empty() || old.is_empty() {
            return false;
        }
        let job = entry.view.job();
        let ok = charged(job, old).all(|(pos, d)| d.fits_in(&scratch[pos], FIT_TOL));
        if !ok {
            return false;
        }
        for (pos, d) in charged(job, old) {
            scratch[pos] = scratch[pos].minus(&d);
            unclaimed[pos] = min_floor0(&unclaimed[pos], &scratch[pos]);
        }
        entry.kept = true;
        self.touched.push(e);
        true
    }

    /// Places an increment of entry `e` on the ledgers and returns where it
    /// went and the pointer after it; or restores every ledger entry it
    /// changed (from a log of the old values, instead of working on
    /// copies) and returns `None`.
    fn plan(&mut self, e: usize, workers: u32, ps: u32) -> Option<Increment> {
        let mut log = std::mem::take(&mut self.log);
        let out = self.plan_logged(e, workers, ps, &mut log);
        if out.is_none() {
            for &(p, s, u) in log.iter().rev() {
                self.scratch[p] = s;
                self.unclaimed[p] = u;
            }
        }
        log.clear();
        self.log = log;
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
            pointer: start,
            scratch,
            unclaimed,
            entries,
            olds,
            tier,
            ..
        } = self;
        let entry = &entries[e];
        let job = entry.view.job();
        let old = &olds[entry.old.clone()];
        let new: &[(usize, Tasks)] = if entry.kept {
            old
        } else {
            entry.new.as_slice()
        };
        let mut added = Spots::new();
        let mut span = Span::new(job, hosts(new));
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
            for &(pos, ref held) in old {
                let now = at(new, pos).map_or(0, |t| get(t, kind))
                    + at(added.as_slice(), pos).map_or(0, |t| get(t, kind));
                let mut room = get(held, kind).saturating_sub(now);
                while room > 0 && left > 0 {
                    let c = span.charge(pos, &unit, worker);
                    if !c.fits(scratch) {
                        break;
                    }
                    for (p, _) in c.parts() {
                        // The first value of a run of changes to one
                        // position is enough to restore it (the log is
                        // undone backwards), so a job's many tasks on one
                        // machine log one entry.
                        if log.last().is_none_or(|l| l.0 != p) {
                            log.push((p, scratch[p], unclaimed[p]));
                        }
                    }
                    c.apply(scratch);
                    span.record(pos, worker);
                    for (p, _) in c.parts() {
                        unclaimed[p] = min_floor0(&unclaimed[p], &scratch[p]);
                    }
                    let one = match kind {
                        TaskKind::Worker => Tasks::new(1, 0),
                        TaskKind::ParameterServer => Tasks::new(0, 1),
                    };
                    bump(&mut added, pos, one);
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
            // Free capacity first, then the released capacity too: the
            // same placer, refilled, is `Placer::new` on each ledger.
            tier.refill(unclaimed, pointer);
            let placed = match tier.grow_span(job, span.clone(), rest.workers, rest.ps) {
                Some(p) => p,
                None => {
                    tier.refill(scratch, pointer);
                    tier.grow_span(job, span.clone(), rest.workers, rest.ps)?
                }
            };
            pointer = tier.pointer();
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
                bump(&mut added, pos, t);
            }
        }
        Some(Increment { added, pointer })
    }

    /// The actions that take every managed job from its current allocation
    /// to its new one (see the [module docs](self)), in the order the jobs
    /// were given. Jobs whose allocation does not change get no action.
    pub fn into_actions(self) -> Vec<Action> {
        let machines = &self.instance.cluster().machines;
        let olds = &self.olds;
        self.entries
            .into_iter()
            .filter(|e| !e.kept && olds[e.old.clone()] != *e.new.as_slice())
            .map(|e| {
                let placement: Placement = e
                    .new
                    .as_slice()
                    .iter()
                    .map(|&(p, t)| (machines[p].id, t))
                    .collect();
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
    use crate::model::MachineId;
    use crate::placement::dominant_share;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    /// What a `BTreeMap<usize, Tasks>` iterates.
    fn pairs(m: &BTreeMap<usize, Tasks>) -> Pairs {
        m.iter().map(|(&p, &t)| (p, t)).collect()
    }

    #[test]
    fn spots_agree_with_a_btree_map() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..500 {
            let mut spots = Spots::new();
            let mut map: BTreeMap<usize, Tasks> = BTreeMap::new();
            for _ in 0..rng.random_range(0..8) {
                let pos = rng.random_range(0..6);
                let t = Tasks::new(rng.random_range(0..3), rng.random_range(0..2));
                bump(&mut spots, pos, t);
                let e = map.entry(pos).or_default();
                e.workers += t.workers;
                e.ps += t.ps;
                assert_eq!(spots.as_slice(), &pairs(&map)[..]);
                assert_eq!(spots.is_empty(), map.is_empty());
                let copy = spots.clone();
                assert_eq!(copy.as_slice(), spots.as_slice());
                for q in 0..6 {
                    assert_eq!(at(spots.as_slice(), q), map.get(&q));
                }
            }
        }
    }

    #[test]
    fn positions_merge_and_sort_like_a_btree_map() {
        let machines = (0..5)
            .map(|i| {
                crate::model::Machine::new(MachineId(10 + i), Resources::zero().gpus(8.0), 1e10)
            })
            .collect();
        let cluster = crate::model::Cluster::new(machines);
        let inst = Instance::new(cluster, vec![], 60.0, 10).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut arena = Pairs::new();
        for _ in 0..500 {
            let placement: Placement = (0..rng.random_range(0..6))
                .map(|_| {
                    let m = MachineId(rng.random_range(8..16));
                    (
                        m,
                        Tasks::new(rng.random_range(0..3), rng.random_range(0..2)),
                    )
                })
                .collect();
            let mut map: BTreeMap<usize, Tasks> = BTreeMap::new();
            for &(m, t) in &placement {
                if t.is_empty() {
                    continue;
                }
                if let Some(pos) = inst.machine_position(m) {
                    let e = map.entry(pos).or_default();
                    e.workers += t.workers;
                    e.ps += t.ps;
                }
            }
            let r = push_positions(&inst, &placement, &mut arena);
            assert_eq!(&arena[r], &pairs(&map)[..]);
        }
    }

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
