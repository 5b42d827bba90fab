//! Task placement shared by the baselines: first fit, consolidating first
//! fit and round robin, over a scratch copy of the free capacities.

use crate::model::{FIT_TOL, Instance, Job, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};

/// How tasks are spread over machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PlacementRule {
    /// Each task on the lowest-index machine that fits it (workers first,
    /// then PSs).
    FirstFit,
    /// The lowest-index single machine that fits the whole job; otherwise
    /// first fit (the "first-fit" of FIFO-FF ring embedding).
    #[default]
    Consolidate,
    /// One task at a time on the next machine, in cyclic order from a
    /// rotating pointer, that fits it (the placement of the crate's OASiS
    /// baselines).
    RoundRobin,
}

/// Places tasks on a scratch copy of the cluster's free capacities.
///
/// Each successful [`Placer::place`] subtracts what it placed, so a policy
/// can place several jobs in one decision; a failed one leaves the
/// capacities unchanged (all or nothing).
#[derive(Debug, Clone)]
pub struct Placer<'a> {
    instance: &'a Instance,
    free: Vec<Resources>,
    rule: PlacementRule,
    pointer: usize,
}

impl<'a> Placer<'a> {
    /// A placer over `free` (one entry per machine, cluster order).
    pub fn new(instance: &'a Instance, free: &[Resources], rule: PlacementRule) -> Self {
        Placer {
            instance,
            free: free.to_vec(),
            rule,
            pointer: 0,
        }
    }

    /// Starts the round-robin pointer at a machine position (policies keep
    /// the pointer across decisions).
    pub fn with_pointer(mut self, pointer: usize) -> Self {
        self.pointer = pointer;
        self
    }

    /// The round-robin pointer after the placements so far.
    pub fn pointer(&self) -> usize {
        self.pointer
    }

    /// The free capacities left.
    pub fn free(&self) -> &[Resources] {
        &self.free
    }

    /// Gives back what an allocation holds (for policies that recompute
    /// allocations from scratch).
    pub fn release(&mut self, job: &Job, placement: &Placement) {
        for &(m, t) in placement {
            if let Some(p) = self.instance.machine_position(m) {
                self.free[p] = self.free[p].plus(&job.demand_for(t.workers, t.ps));
            }
        }
    }

    /// Takes a given placement of `job` (to keep a running job where it is,
    /// or to resume a gang where it ran) if every machine of it is known
    /// and has room; otherwise returns `false` and changes nothing.
    pub fn take(&mut self, job: &Job, placement: &Placement) -> bool {
        let mut needs: Vec<(usize, Resources)> = Vec::with_capacity(placement.len());
        for &(m, t) in placement {
            if t.is_empty() {
                continue;
            }
            let Some(p) = self.instance.machine_position(m) else {
                return false;
            };
            let need = job.demand_for(t.workers, t.ps);
            match needs.iter_mut().find(|(q, _)| *q == p) {
                Some((_, n)) => *n = n.plus(&need),
                None => needs.push((p, need)),
            }
        }
        if needs
            .iter()
            .any(|(p, need)| !need.fits_in(&self.free[*p], FIT_TOL))
        {
            return false;
        }
        for (p, need) in needs {
            self.free[p] = self.free[p].minus(&need);
        }
        true
    }

    /// Whether the free capacity of all allowed machines together could
    /// hold `workers` and `ps` (a quick necessary test).
    pub fn may_fit(&self, job: &Job, workers: u32, ps: u32) -> bool {
        let need = job.demand_for(workers, ps);
        let mut total = Resources::zero();
        for (p, m) in self.instance.cluster().machines.iter().enumerate() {
            if job.may_use(m.id) {
                total = total.plus(&self.free[p]);
            }
        }
        need.fits_in(&total, FIT_TOL)
    }

    /// Places `workers` workers and `ps` PSs of `job`, or returns `None` and
    /// changes nothing.
    pub fn place(&mut self, job: &Job, workers: u32, ps: u32) -> Option<Placement> {
        if !self.may_fit(job, workers, ps) {
            return None;
        }
        let machines = &self.instance.cluster().machines;
        if self.rule == PlacementRule::Consolidate {
            let need = job.demand_for(workers, ps);
            for (p, m) in machines.iter().enumerate() {
                let hosts = (workers == 0 || m.hosts.allows(TaskKind::Worker))
                    && (ps == 0 || m.hosts.allows(TaskKind::ParameterServer));
                if hosts && job.may_use(m.id) && need.fits_in(&self.free[p], FIT_TOL) {
                    self.free[p] = self.free[p].minus(&need);
                    return Some(Placement::from(vec![(m.id, Tasks::new(workers, ps))]));
                }
            }
        }
        let mut free = self.free.clone();
        let mut counts = vec![Tasks::default(); machines.len()];
        let mut pointer = self.pointer;
        let n = machines.len();
        for (kind, count) in [(TaskKind::Worker, workers), (TaskKind::ParameterServer, ps)] {
            let Some(unit) = job.task_demand(kind).copied() else {
                continue;
            };
            for _ in 0..count {
                let start = if self.rule == PlacementRule::RoundRobin {
                    pointer
                } else {
                    0
                };
                let found = (0..n).map(|k| (start + k) % n).find(|&p| {
                    let m = &machines[p];
                    job.may_use(m.id) && m.can_host(kind, &unit) && unit.fits_in(&free[p], FIT_TOL)
                })?;
                free[found] = free[found].minus(&unit);
                match kind {
                    TaskKind::Worker => counts[found].workers += 1,
                    TaskKind::ParameterServer => counts[found].ps += 1,
                }
                pointer = (found + 1) % n.max(1);
            }
        }
        self.free = free;
        self.pointer = pointer;
        Some(
            counts
                .into_iter()
                .enumerate()
                .filter(|(_, t)| !t.is_empty())
                .map(|(p, t)| (machines[p].id, t))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Architecture, Cluster, JobId, MachineId, RarJob, WorkerCounts};

    fn inst(gpus: &[f64]) -> Instance {
        let machines = gpus
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                crate::model::Machine::new(
                    MachineId(i as u32),
                    Resources::zero()
                        .gpus(g)
                        .cpu_cores(64.0)
                        .memory(1e12)
                        .nic(1e10),
                    1e10,
                )
            })
            .collect();
        let rar = RarJob {
            workers: WorkerCounts::Allowed((1..=8).collect()),
            iterations: 10,
            convergence_iterations: None,
            model_bytes: 1e6,
            minibatch_size: 1,
            forward_per_sample_s: 0.01,
            backward_per_iteration_s: 0.01,
            reserved_bandwidth_bps: None,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9),
        };
        let job = crate::model::Job::new(JobId(0), 0.0, Architecture::RingAllReduce(rar));
        Instance::new(Cluster::new(machines), vec![job], 60.0, 10).unwrap()
    }

    #[test]
    fn consolidate_prefers_one_machine() {
        let i = inst(&[2.0, 4.0, 4.0]);
        let free: Vec<_> = i.cluster().machines.iter().map(|m| m.capacity).collect();
        let mut p = Placer::new(&i, &free, PlacementRule::Consolidate);
        let job = &i.jobs()[0];
        assert_eq!(
            p.place(job, 3, 0),
            Some(Placement::from(vec![(MachineId(1), Tasks::new(3, 0))]))
        );
        // 1 free on m1, 2 on m0, 4 on m2: 4 fits m2 alone.
        assert_eq!(
            p.place(job, 4, 0),
            Some(Placement::from(vec![(MachineId(2), Tasks::new(4, 0))]))
        );
        // 3 GPUs left in total (2 + 1): spread first fit.
        assert_eq!(
            p.place(job, 3, 0),
            Some(Placement::from(vec![
                (MachineId(0), Tasks::new(2, 0)),
                (MachineId(1), Tasks::new(1, 0))
            ]))
        );
        assert_eq!(p.place(job, 1, 0), None);
        assert!(p.free().iter().all(|r| r.gpus.abs() < 1e-12));
    }

    #[test]
    fn take_is_all_or_nothing() {
        let i = inst(&[2.0, 2.0]);
        let free: Vec<_> = i.cluster().machines.iter().map(|m| m.capacity).collect();
        let mut p = Placer::new(&i, &free, PlacementRule::FirstFit);
        let job = &i.jobs()[0];
        let two = Placement::from([
            (MachineId(0), Tasks::new(1, 0)),
            (MachineId(1), Tasks::new(2, 0)),
        ]);
        assert!(p.take(job, &two));
        // Machine 1 is full: nothing is taken, not even machine 0's part.
        let before = p.free().to_vec();
        assert!(!p.take(job, &two));
        assert_eq!(p.free(), &before[..]);
        assert!(!p.take(job, &Placement::from([(MachineId(7), Tasks::new(1, 0))])));
        assert!(p.take(job, &Placement::from([(MachineId(0), Tasks::new(1, 0))])));
        p.release(job, &two);
        assert_eq!(p.free()[1].gpus, 2.0);
    }

    #[test]
    fn round_robin_rotates_and_rolls_back() {
        let i = inst(&[2.0, 2.0, 2.0]);
        let free: Vec<_> = i.cluster().machines.iter().map(|m| m.capacity).collect();
        let mut p = Placer::new(&i, &free, PlacementRule::RoundRobin);
        let job = &i.jobs()[0];
        assert_eq!(
            p.place(job, 2, 0),
            Some(Placement::from(vec![
                (MachineId(0), Tasks::new(1, 0)),
                (MachineId(1), Tasks::new(1, 0))
            ]))
        );
        assert_eq!(p.pointer(), 2);
        assert_eq!(
            p.place(job, 2, 0),
            Some(Placement::from(vec![
                (MachineId(0), Tasks::new(1, 0)),
                (MachineId(2), Tasks::new(1, 0))
            ]))
        );
        let before = p.free().to_vec();
        assert_eq!(p.place(job, 3, 0), None);
        assert_eq!(p.free(), &before[..]);
    }
}
