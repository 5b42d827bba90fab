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

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;

use crate::model::{FIT_TOL, Instance, Job, ResourceKind, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, JobView, SimView};

use super::{PlacementRule, Placer, Span};

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
    Placer::new(instance, &capacities(instance), rule).place(job, workers, ps)
}

/// The capacity of every machine, in cluster order.
fn capacities(instance: &Instance) -> Vec<Resources> {
    instance
        .cluster()
        .machines
        .iter()
        .map(|m| m.capacity)
        .collect()
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

/// A fast hasher for the small integer keys of one decision's tables
/// (FxHash's rotate–xor–multiply per 8 bytes). Hash values only pick
/// buckets, so no result depends on it.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Fx(u64);

/// Builds [`Fx`] hashers.
pub(crate) type FxBuild = BuildHasherDefault<Fx>;

impl Fx {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(b));
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }

    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
}

/// [`standalone`] placements of one decision, shared by the jobs of the
/// same [`Shape`] (a queue holds many jobs of a few shapes).
#[derive(Debug, Default)]
pub(crate) struct Standalone {
    placements: HashMap<Shape, Option<Placement>, FxBuild>,
    /// [`capacities`], from the first placement computed on (empty
    /// before).
    capacity: Vec<Resources>,
}

impl Standalone {
    /// [`standalone`], looked up by shape when the job may use every
    /// machine (borrowed from the table then).
    pub(crate) fn get(
        &mut self,
        instance: &Instance,
        job: &Job,
        workers: u32,
        ps: u32,
        rule: PlacementRule,
    ) -> Option<Cow<'_, Placement>> {
        if job.allowed_machines.is_some() {
            return standalone(instance, job, workers, ps, rule).map(Cow::Owned);
        }
        let shape = (
            job.task_demand(TaskKind::Worker).map(bits),
            job.task_demand(TaskKind::ParameterServer).map(bits),
            job.reserved_nic_bps(2).to_bits(),
            workers,
            ps,
        );
        let capacity = &mut self.capacity;
        self.placements
            .entry(shape)
            .or_insert_with(|| {
                if capacity.is_empty() {
                    *capacity = capacities(instance);
                }
                Placer::new(instance, capacity, rule).place(job, workers, ps)
            })
            .as_ref()
            .map(Cow::Borrowed)
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
    ) -> Cow<'_, Placement> {
        match self.get(instance, job, workers, ps, rule) {
            Some(p) => p,
            None => Cow::Owned(nominal(instance, job, workers, ps)),
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

/// Tasks per machine position, `(position, tasks)` pairs.
type Pairs = Vec<(usize, Tasks)>;

/// How many pairs [`Spots`] keeps without allocating.
const INLINE: usize = 2;

/// Tasks per machine position: sorted by position, one pair per position
/// (what a `BTreeMap<usize, Tasks>` iterates), kept inline up to
/// [`INLINE`] positions — most jobs hold one or two machines — so that most
/// entries of a decision allocate nothing.
///
/// Invariant: while `heap` is empty the pairs are `inline[..len]`;
/// once it is not, they are all in `heap` (and `len` is 0).
#[derive(Debug, Clone, Default)]
struct Spots {
    inline: [(usize, Tasks); INLINE],
    len: usize,
    heap: Pairs,
}

impl Spots {
    /// `pairs` (sorted, one per position).
    fn from_slice(pairs: &[(usize, Tasks)]) -> Self {
        let mut out = Spots::default();
        if pairs.len() <= INLINE {
            out.inline[..pairs.len()].copy_from_slice(pairs);
            out.len = pairs.len();
        } else {
            out.heap = pairs.to_vec();
        }
        out
    }

    fn as_slice(&self) -> &[(usize, Tasks)] {
        if self.heap.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Adds `t` to the tasks at `pos` (a new pair, in order, if `pos` has
    /// none).
    fn bump(&mut self, pos: usize, t: Tasks) {
        match self.as_slice().binary_search_by_key(&pos, |&(p, _)| p) {
            Ok(i) => {
                let u = if self.heap.is_empty() {
                    &mut self.inline[i].1
                } else {
                    &mut self.heap[i].1
                };
                u.workers += t.workers;
                u.ps += t.ps;
            }
            Err(i) => {
                let pair = (pos, Tasks::new(t.workers, t.ps));
                if self.heap.is_empty() && self.len < INLINE {
                    self.inline.copy_within(i..self.len, i + 1);
                    self.inline[i] = pair;
                    self.len += 1;
                } else {
                    if self.heap.is_empty() {
                        self.heap.extend_from_slice(&self.inline[..self.len]);
                        self.len = 0;
                    }
                    self.heap.insert(i, pair);
                }
            }
        }
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
                    new: Spots::default(),
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
            entry.new = Spots::default();
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
                    let old = Spots::from_slice(self.old(e));
                    let entry = &mut self.entries[e];
                    entry.new = old;
                    entry.kept = false;
                }
                for &(pos, t) in inc.added.as_slice() {
                    self.entries[e].new.bump(pos, t);
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
        let mut added = Spots::default();
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
                    added.bump(pos, one);
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
                added.bump(pos, t);
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
            let mut spots = Spots::default();
            let mut map: BTreeMap<usize, Tasks> = BTreeMap::new();
            for _ in 0..rng.random_range(0..8) {
                let pos = rng.random_range(0..6);
                let t = Tasks::new(rng.random_range(0..3), rng.random_range(0..2));
                spots.bump(pos, t);
                let e = map.entry(pos).or_default();
                e.workers += t.workers;
                e.ps += t.ps;
                assert_eq!(spots.as_slice(), &pairs(&map)[..]);
                assert_eq!(spots.is_empty(), map.is_empty());
                let copy = Spots::from_slice(spots.as_slice());
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
