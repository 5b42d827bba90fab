//! The baselines' one shape cache: what a baseline computes from a job's
//! per-task demands alone (and a few numbers beside them) is computed once
//! per [`Shape`] and shared by the jobs of that shape — a queue holds many
//! jobs of a few shapes.
//!
//! Proportional share uses it within one decision for the bids of each job
//! (an `O(H)` vector over the machines), Optimus and RRH for the
//! placements on the empty cluster that their timing oracle reads
//! ([`Standalone`]), and Tiresias over a run for the demands its exact
//! room bounds (each job's shape id kept by job position: jobs of one
//! shape in a row add their demands once). A cached value depends on the job only through its
//! shape and the rest of the key, bit for bit, and only for jobs that may
//! use every machine (the callers compute the others afresh), so every
//! result is the one computed afresh.

use std::borrow::Cow;
use std::hash::Hash;

use rustc_hash::FxHashMap;

use crate::model::{Instance, Job, Resources, TaskKind};
use crate::placement::{PlacementRule, Placer};
use crate::schedule::{Placement, Tasks};

/// A job's demands, bit for bit: its worker and PS demands and its ring
/// reservation. Jobs of one shape charge the same for the same tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    worker: Option<[u64; 5]>,
    ps: Option<[u64; 5]>,
    reserved: u64,
}

impl Shape {
    /// The shape of `job`.
    pub(crate) fn of(job: &Job) -> Self {
        Shape {
            worker: job.task_demand(TaskKind::Worker).map(bits),
            ps: job.task_demand(TaskKind::ParameterServer).map(bits),
            reserved: job.reserved_nic_bps(2).to_bits(),
        }
    }
}

/// The bits of every component of `r`.
pub(crate) fn bits(r: &Resources) -> [u64; 5] {
    [
        r.gpus.to_bits(),
        r.cpu_cores.to_bits(),
        r.memory_bytes.to_bits(),
        r.storage_bytes.to_bits(),
        r.nic_bps.to_bits(),
    ]
}

/// Values computed once per key (a [`Shape`] and what else the value
/// depends on), the last key looked up answered without hashing
/// (consecutive jobs of a queue usually share a shape).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ByShape<K: Eq + Hash, V> {
    index: FxHashMap<K, usize>,
    values: Vec<V>,
    last: Option<(K, usize)>,
}

impl<K: Eq + Hash, V> Default for ByShape<K, V> {
    fn default() -> Self {
        ByShape {
            index: FxHashMap::default(),
            values: Vec::new(),
            last: None,
        }
    }
}

impl<K: Clone + Eq + Hash, V> ByShape<K, V> {
    /// The value of `key`, made by `make` the first time.
    pub(crate) fn get_or_make(&mut self, key: K, make: impl FnOnce() -> V) -> &V {
        let i = self.id(key, make);
        &self.values[i]
    }

    /// The id of `key` (ids count from 0 in the order keys are first
    /// seen), its value made by `make` the first time.
    pub(crate) fn id(&mut self, key: K, make: impl FnOnce() -> V) -> usize {
        match &self.last {
            Some((k, i)) if *k == key => *i,
            _ => {
                let values = &mut self.values;
                let i = *self.index.entry(key.clone()).or_insert_with(|| {
                    values.push(make());
                    values.len() - 1
                });
                self.last = Some((key, i));
                i
            }
        }
    }

    /// The value of the key of id `id`.
    pub(crate) fn value(&self, id: usize) -> &V {
        &self.values[id]
    }

    /// Forgets every key.
    pub(crate) fn clear(&mut self) {
        self.index.clear();
        self.values.clear();
        self.last = None;
    }
}

/// Where `workers` and `ps` of `job` would go on an empty cluster by `rule`
/// (pointer at machine 0): the canonical placement the policies evaluate
/// the timing oracle on. `None` if they do not fit the empty cluster.
fn standalone(
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

/// [`standalone`] placements of one decision, shared by the jobs of the
/// same [`Shape`] and counts.
#[derive(Debug, Default)]
pub(crate) struct Standalone {
    placements: ByShape<(Shape, u32, u32), Option<Placement>>,
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
        let capacity = &mut self.capacity;
        self.placements
            .get_or_make((Shape::of(job), workers, ps), || {
                if capacity.is_empty() {
                    *capacity = capacities(instance);
                }
                Placer::new(instance, capacity, rule).place(job, workers, ps)
            })
            .as_ref()
            .map(Cow::Borrowed)
    }

    /// The placement the timing oracle is evaluated on for `workers` and
    /// `ps` of `job`: [`standalone`] (looked up) when they fit the empty
    /// cluster; otherwise a nominal placement that ignores capacity — all
    /// workers on the first machine that may host them, all PSs on the
    /// first machine that may host PSs — so that a configuration that
    /// cannot be placed still has a remaining time (the timing models read
    /// counts and co-location only).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_made_once_per_key() {
        let mut memo: ByShape<u32, u32> = ByShape::default();
        let mut made = 0;
        for key in [1, 1, 2, 1, 2, 3, 3] {
            let v = *memo.get_or_make(key, || {
                made += 1;
                key * 10
            });
            assert_eq!(v, key * 10);
        }
        assert_eq!(made, 3);
    }
}
