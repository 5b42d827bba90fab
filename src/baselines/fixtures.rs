//! Workloads for the baselines' unit tests (tests only).

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::model::{
    Architecture, Cluster, Discipline, Elasticity, Instance, Job, JobId, Machine, MachineId, PsJob,
    RarJob, Resources, SyncMode, WorkerCounts,
};
use crate::sim::{Action, Event, Policy, Rejection, SimOptions, SimView, simulate};

use super::common::{Shortcut, ShortcutUse, WithShortcut};

/// What varies in [`busy_workload`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Busy {
    /// Workers need 1.5 CPU cores instead of 2 (sums that are not whole
    /// numbers).
    pub(crate) fraction: bool,
    /// Some jobs may use only some machines.
    pub(crate) restricted: bool,
    /// Jobs of different weights.
    pub(crate) weighted: bool,
}

impl Busy {
    /// The four variations the equality tests run: none, then each one
    /// alone.
    pub(crate) fn kinds() -> [Busy; 4] {
        [
            Busy::default(),
            Busy {
                fraction: true,
                ..Busy::default()
            },
            Busy {
                restricted: true,
                ..Busy::default()
            },
            Busy {
                weighted: true,
                ..Busy::default()
            },
        ]
    }
}

/// A busy cluster for `seed`: machines of 8, 4, 8, 4, 16 and 2 GPUs
/// (`machines` of them, at most 6) and 60 jobs arriving over 1,500 s —
/// parameter-server jobs and rings (fixed and allowed counts, some
/// reserving bandwidth), elastic, rigid gangs and rigid preemptible.
pub(crate) fn busy_workload(seed: u64, machines: usize, busy: Busy) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gpus = [8.0, 4.0, 8.0, 4.0, 16.0, 2.0];
    let machines: Vec<Machine> = (0..machines.min(gpus.len()))
        .map(|i| {
            Machine::new(
                MachineId(i as u32),
                Resources::zero()
                    .gpus(gpus[i])
                    .cpu_cores(6.0 * gpus[i])
                    .memory(256e9)
                    .nic(12.5e9),
                1e11,
            )
        })
        .collect();
    let ids: Vec<MachineId> = machines.iter().map(|m| m.id).collect();
    let disciplines = [
        Discipline::ELASTIC,
        Discipline::RIGID_GANG,
        Discipline {
            elasticity: Elasticity::Rigid,
            preemptible: true,
        },
    ];
    let cpu = if busy.fraction { 1.5 } else { 2.0 };
    let jobs = (0..60u32)
        .map(|id| {
            let arrival = f64::from(rng.random_range(0..1500u32));
            let architecture = if rng.random_bool(0.3) {
                let max_workers = rng.random_range(1..=6u32);
                Architecture::ParameterServer(PsJob {
                    epochs: 1,
                    data_chunks: max_workers,
                    minibatches_per_chunk: rng.random_range(20..300u32),
                    minibatch_compute_s: f64::from(rng.random_range(1..=3u32)),
                    gradient_bytes: 2e7,
                    worker: Resources::zero()
                        .gpus(1.0)
                        .cpu_cores(cpu)
                        .memory(6e9)
                        .nic(3e8),
                    ps: Resources::zero().cpu_cores(1.0).memory(4e9).nic(7e8),
                    max_workers,
                    max_ps: max_workers.div_ceil(2),
                    ps_at_most_workers: true,
                    sync: SyncMode::Synchronous,
                    layers: None,
                })
            } else {
                let workers = if rng.random_bool(0.5) {
                    WorkerCounts::Fixed([1, 2, 4, 6, 8][rng.random_range(0..5usize)])
                } else {
                    WorkerCounts::Allowed(vec![1, 2, 4, 8])
                };
                Architecture::RingAllReduce(RarJob {
                    workers,
                    iterations: rng.random_range(100..2000u64),
                    convergence_iterations: None,
                    model_bytes: 1e8,
                    minibatch_size: 32,
                    forward_per_sample_s: 0.005,
                    backward_per_iteration_s: 0.3,
                    reserved_bandwidth_bps: rng.random_bool(0.3).then_some(3e9),
                    worker: Resources::zero().gpus(1.0).cpu_cores(cpu).memory(10e9),
                })
            };
            let mut job = Job::new(JobId(id), arrival, architecture)
                .with_discipline(disciplines[rng.random_range(0..3usize)]);
            if busy.weighted {
                job = job.with_weight(f64::from(rng.random_range(1..=3u32)));
            }
            if busy.restricted && rng.random_bool(0.2) {
                let skip = rng.random_range(0..ids.len());
                job.allowed_machines = Some(
                    ids.iter()
                        .enumerate()
                        .filter(|&(i, _)| i != skip)
                        .map(|(_, &m)| m)
                        .collect(),
                );
            }
            job
        })
        .collect();
    Instance::new(Cluster::new(machines), jobs, 60.0, 100_000).expect("busy workload")
}

/// `inner` deciding with its shortcut as `shortcut` allows, counting its
/// use in `used`.
pub(crate) struct Forced<P> {
    pub(crate) inner: P,
    pub(crate) shortcut: Shortcut,
    pub(crate) used: ShortcutUse,
}

impl<P: Policy + WithShortcut> Policy for Forced<P> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.inner.decide(view, self.shortcut, &mut self.used)
    }

    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        self.inner.next_wakeup_s(view)
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.inner.rejection(job)
    }
}

/// Runs the policy `make` builds on `instance` with its rule alone (the
/// reference) and with its shortcut allowed, asserts that both give the
/// same jobs, allocations and utilisation (and that some job completes),
/// and returns how the shortcut was used.
pub(crate) fn assert_same_runs<P: Policy + WithShortcut>(
    instance: &Instance,
    make: impl Fn() -> P,
    at: &str,
) -> ShortcutUse {
    let opts = SimOptions::default();
    let run = |shortcut| {
        let mut policy = Forced {
            inner: make(),
            shortcut,
            used: ShortcutUse::default(),
        };
        let result = simulate(instance, &mut policy, &opts).expect("run");
        (result, policy.used)
    };
    let (slow, _) = run(Shortcut::Off);
    let (fast, used) = run(Shortcut::Allowed);
    assert!(
        slow.jobs.iter().any(|j| j.finish_s.is_some()),
        "{at}: no job completes"
    );
    assert_eq!(slow.jobs, fast.jobs, "{at}");
    assert_eq!(slow.allocations, fast.allocations, "{at}");
    assert_eq!(slow.utilization, fast.utilization, "{at}");
    used
}
