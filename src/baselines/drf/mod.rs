//! DRF: dominant-resource fairness by progressive filling.
//!
//! The rule is in `rule.rs` (with its filling queue in `queue.rs`), the
//! counting shortcut in `fast.rs`.

use crate::sim::{Action, Event, Policy, SimView};

use super::common::{Shortcut, ShortcutUse, WithShortcut, from_scratch, to_actions};
use crate::placement::PlacementRule;

mod fast;
mod queue;
mod rule;

/// Dominant-resource fairness (Ghodsi et al., "Dominant Resource Fairness",
/// NSDI 2011) by progressive filling, recomputed from scratch at every
/// event: the YARN/Mesos default, a baseline of the OASiS (Bao, Peng, Wu,
/// Li, IEEE INFOCOM 2018) and Optimus (Peng et al., EuroSys 2018)
/// evaluations.
///
/// # Rule
///
/// At each event, every active job that may be reallocated (see below)
/// starts from nothing on a scratch cluster: the free capacities plus what
/// those jobs hold now. Then, repeatedly, the job with the smallest
/// **dominant share** `max_r a_j^r / C^r` (its whole demand over the
/// cluster's total capacity, over the resource kinds with positive total;
/// ties to the earlier arrival, then instance order) among the jobs that
/// can still grow gets one more step:
///
/// * a parameter-server job grows by `step` workers (capped at its
///   `max_workers`), with [`ps_for`](super::ps_for) PSs for the new count (the increment
///   places the extra PSs too) — or, with [`Drf::workers_per_ps`]
///   `= Some(b)`, in bundles of `b` workers per PS: `n` workers come with
///   `⌈n/b⌉` PSs (capped at `max_ps`; never fewer than before);
/// * a ring-all-reduce job jumps to the smallest allowed worker count
///   `≥ w + step` (or, if there is none, the largest allowed count above
///   `w`);
/// * a rigid job gets its whole [`requested_tasks`](super::requested_tasks) gang in one step, or
///   nothing.
///
/// The increment is placed with [`Drf::placement`] on what is left. A job
/// whose cap is reached, or whose increment does not place, is saturated;
/// filling stops when every job is saturated.
///
/// **Placement and churn.** The counts come from the filling above; the
/// final placement then changes as little as it can. On the scratch
/// cluster, every running job first keeps the part of its current
/// placement within its new counts (a job whose counts did not change
/// keeps its placement whole; one that shrinks drops tasks where it has
/// the fewest), and then, in arrival order, the tasks a job gains are
/// placed with the rule on what is left (round robin from machine 0, so
/// equal inputs give equal placements). If some job's new tasks do not
/// place that way, the placements built during filling are used for every
/// job instead. A `SetAllocation` is emitted for each job whose placement
/// changed (an empty one pauses a running job that got nothing); the
/// simulator applies them as one transaction, so jobs may trade machines
/// without a pause. The simulator charges `reconfiguration_s` to every
/// changed job.
///
/// **Who is reallocated.** Waiting and paused jobs, and running jobs that
/// are elastic and preemptible. A running job that is not preemptible
/// keeps its allocation untouched (it may not be paused, and this policy
/// does not resize it either), and so does a running rigid gang (it may
/// not be resized, and resuming it anywhere but where it ran breaks the
/// gang rule of [`crate::schedule::verify`]); their resources are not
/// redistributed and they do not take part in the filling. Jobs holding a
/// plan are left alone.
///
/// # Parameters
///
/// * `step` (default 1): workers added per step (0 is read as 1);
/// * `workers_per_ps` (default `None`: [`ps_for`](super::ps_for)): workers per PS of an
///   elastic parameter-server job's bundles (0 is read as 1);
/// * `placement` (default [`PlacementRule::BestFit`]).
///
/// # Complexity
///
/// `O(S·(log J + P))` per event for `J` reallocated jobs and `S ≤ Σ_j
/// ⌈W_j/step⌉ + J` filling steps (the next job comes from a heap ordered
/// by dominant share), where `P` is one increment's placement (`O(step·H)`
/// on `H` machines); plus `O(J·P)` for the final placement. So a long
/// queue costs linear, not quadratic, time per event. When every job
/// takes a single step of one-GPU ring workers with whole-number demands
/// on machines with room in proportion to their free GPUs (the trace
/// recipes' case), the filling counts free GPUs in `O(J + H)` instead of
/// placing, with the same counts; its placements are then built only if
/// the final placement fails.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Drf;
/// use dmlsched::placement::PlacementRule;
/// let drf = Drf::default();
/// assert_eq!((drf.step, drf.placement), (1, PlacementRule::BestFit));
/// let coarse = Drf { step: 2, ..Drf::default() };
/// assert_eq!(coarse.step, 2);
/// // Bundles of four workers per PS: 1–4 workers with 1 PS, 5–8 with 2.
/// let bundles = Drf { workers_per_ps: Some(4), ..Drf::default() };
/// assert_eq!((Drf::default().workers_per_ps, bundles.workers_per_ps), (None, Some(4)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drf {
    /// Workers added per filling step (0 is read as 1).
    pub step: u32,
    /// How tasks are spread over machines.
    pub placement: PlacementRule,
    /// Workers per PS of a parameter-server job's bundles (`None`: the
    /// PSs of [`ps_for`](super::ps_for)).
    pub workers_per_ps: Option<u32>,
}

impl Default for Drf {
    fn default() -> Self {
        Drf {
            step: 1,
            placement: PlacementRule::BestFit,
            workers_per_ps: None,
        }
    }
}

impl Policy for Drf {
    fn name(&self) -> String {
        "drf".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.decide(view, Shortcut::Allowed, &mut ShortcutUse::default())
    }
}

impl WithShortcut for Drf {
    /// The rule ([`Drf::rule`]), its filling's counts found by counting
    /// free GPUs ([`Drf::fill_counts`]) when that is allowed and exact.
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>> {
        let instance = view.instance();
        let total = instance.cluster().total_capacity();
        let (jobs, scratch) = from_scratch(view, self.placement);
        let counted = (shortcut.taken())
            .then(|| self.fill_counts(instance, &jobs, scratch.free()))
            .flatten();
        used.taken += u64::from(counted.is_some());
        let placements = match counted {
            Some(counts) => self.place_counted(&jobs, scratch, &counts, &total),
            None => self.rule(&jobs, &scratch, &total),
        };
        let changes: Vec<_> = jobs
            .iter()
            .zip(placements)
            .filter(|(j, p)| !j.placement().same_as(p))
            .map(|(j, p)| (*j, p))
            .collect();
        Ok(to_actions(changes))
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{
        Architecture, Cluster, Discipline, Hosting, Instance, Job, JobId, Machine, MachineId,
        PsJob, RarJob, Resources, SyncMode, WorkerCounts,
    };
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    pub(super) fn ring(counts: WorkerCounts, discipline: Discipline) -> Job {
        Job::new(
            JobId(0),
            0.0,
            Architecture::RingAllReduce(RarJob {
                workers: counts,
                iterations: 10,
                convergence_iterations: None,
                model_bytes: 0.0,
                minibatch_size: 1,
                forward_per_sample_s: 0.0,
                backward_per_iteration_s: 1.0,
                reserved_bandwidth_bps: None,
                worker: Resources::zero().gpus(1.0),
            }),
        )
        .with_discipline(discipline)
    }

    /// Rings of fixed sizes on five machines, busy enough that jobs wait
    /// and span machines: whole-number demands (`kind` 0: the counting
    /// case), a CPU demand of 1.5 (1), some rings reserving bandwidth (2),
    /// some rigid gangs and parameter-server jobs (3), two whole-number
    /// worker shapes (4: counting too), some rings with several allowed
    /// counts (5), or a machine that hosts only PSs (6).
    pub(super) fn workload(seed: u64, kind: u32) -> Instance {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let machines = (0..5u32)
            .map(|i| {
                let gpus = if i == 3 { 4.0 } else { 8.0 };
                let m = Machine::new(
                    MachineId(i),
                    Resources::zero()
                        .gpus(gpus)
                        .cpu_cores(8.0 * gpus)
                        .memory(64e9 * gpus)
                        .nic(1.25e9),
                    1e10,
                );
                if kind == 6 && i == 1 {
                    m.hosting(Hosting::ParameterServers)
                } else {
                    m
                }
            })
            .collect();
        let cpu = if kind == 1 { 1.5 } else { 4.0 };
        let jobs = (0..60u32)
            .map(|id| {
                let arrival = f64::from(rng.random_range(0..2000u32));
                let size = [1, 1, 1, 2, 4, 8, 12, 16][rng.random_range(0..8usize)];
                let counts = if kind == 5 && rng.random_bool(0.3) {
                    WorkerCounts::Allowed(vec![1, 2, 4, 8])
                } else {
                    WorkerCounts::Fixed(size)
                };
                let mut job = ring(counts, Discipline::ELASTIC);
                job.id = JobId(id);
                job.arrival_s = arrival;
                if let Architecture::RingAllReduce(r) = &mut job.architecture {
                    r.iterations = rng.random_range(100..3000u64);
                    r.worker = Resources::zero().gpus(1.0).cpu_cores(cpu).memory(16e9);
                    if kind == 4 && rng.random_bool(0.5) {
                        r.worker = Resources::zero().gpus(1.0).cpu_cores(2.0).memory(32e9);
                    }
                    if kind == 2 && rng.random_bool(0.3) {
                        r.reserved_bandwidth_bps = Some(2e8);
                    }
                }
                if kind == 3 && rng.random_bool(0.3) {
                    job = job.with_discipline(Discipline::RIGID_GANG);
                }
                if kind == 3 && rng.random_bool(0.2) {
                    job.architecture = Architecture::ParameterServer(PsJob {
                        epochs: 1,
                        data_chunks: 4,
                        minibatches_per_chunk: rng.random_range(20..300u32),
                        minibatch_compute_s: 1.0,
                        gradient_bytes: 2e7,
                        worker: Resources::zero()
                            .gpus(1.0)
                            .cpu_cores(2.0)
                            .memory(6e9)
                            .nic(3e8),
                        ps: Resources::zero().cpu_cores(1.0).memory(4e9).nic(7e8),
                        max_workers: 4,
                        max_ps: 2,
                        ps_at_most_workers: true,
                        sync: SyncMode::Synchronous,
                        layers: None,
                    });
                }
                job
            })
            .collect();
        Instance::new(Cluster::new(machines), jobs, 60.0, 100_000).expect("workload")
    }
}
