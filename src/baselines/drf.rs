//! DRF: dominant-resource fairness by progressive filling.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::{
    Architecture, Elasticity, Instance, Job, ResourceKind, Resources, TaskKind, WorkerCounts,
};
use crate::schedule::Placement;
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::{Shortcut, ShortcutUse, WithShortcut, from_scratch, to_actions, trim};
use super::{ps_for, requested_tasks};
use crate::placement::dominant_share;
use crate::placement::{PlacementRule, Placer};

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
///   `max_workers`), with [`ps_for`] PSs for the new count (the increment
///   places the extra PSs too) — or, with [`Drf::workers_per_ps`]
///   `= Some(b)`, in bundles of `b` workers per PS: `n` workers come with
///   `⌈n/b⌉` PSs (capped at `max_ps`; never fewer than before);
/// * a ring-all-reduce job jumps to the smallest allowed worker count
///   `≥ w + step` (or, if there is none, the largest allowed count above
///   `w`);
/// * a rigid job gets its whole [`requested_tasks`] gang in one step, or
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
/// * `workers_per_ps` (default `None`: [`ps_for`]): workers per PS of an
///   elastic parameter-server job's bundles (0 is read as 1);
/// * `placement` (default [`PlacementRule::BestFit`]; the crate's OASiS
///   reproduction used [`PlacementRule::RoundRobin`] before best fit
///   became every baseline's default).
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
    /// PSs of [`ps_for`]).
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

/// The next size `(w, p)` with the PSs of bundles of `wps` workers per PS
/// for an elastic parameter-server job that has `now` PSs: `⌈w/wps⌉`, at
/// most `max_ps`, at least `now`.
fn bundled(job: &Job, (w, p): (u32, u32), now: u32, wps: Option<u32>) -> (u32, u32) {
    match (&job.architecture, wps) {
        (Architecture::ParameterServer(ps), Some(b))
            if job.discipline.elasticity != Elasticity::Rigid =>
        {
            (w, w.div_ceil(b.max(1)).clamp(1, ps.max_ps.max(1)).max(now))
        }
        _ => (w, p),
    }
}

/// The job's next size `(w, p)` after `w` workers and `p` PSs, or `None`
/// when it cannot grow.
fn next_size(job: &Job, w: u32, p: u32, step: u32) -> Option<(u32, u32)> {
    if job.discipline.elasticity == Elasticity::Rigid {
        return (w == 0).then(|| requested_tasks(job));
    }
    match &job.architecture {
        Architecture::ParameterServer(ps) => {
            if w >= ps.max_workers {
                return None;
            }
            let w2 = w.saturating_add(step).min(ps.max_workers);
            Some((w2, ps_for(job, w2).max(p)))
        }
        Architecture::RingAllReduce(r) => {
            let want = w.saturating_add(step);
            let w2 = match &r.workers {
                WorkerCounts::Fixed(g) => (*g > w).then_some(*g),
                WorkerCounts::Allowed(v) => v
                    .iter()
                    .copied()
                    .filter(|&c| c >= want)
                    .min()
                    .or_else(|| v.iter().copied().filter(|&c| c > w).max()),
            }?;
            Some((w2, 0))
        }
    }
}

/// A dominant share, totally ordered (by `f64::total_cmp`) for the heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Share(f64);

impl Eq for Share {}

impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Share {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// One job's state during progressive filling.
/// The queue of progressive filling: the job with the smallest key
/// `(share, index)` next. Every job starts at share 0 and gets one more key
/// after each step it takes, so the queue is the indices `next..n`, each
/// at share 0 and in index order, merged with a min-heap of the keys pushed
/// since: the same order as one heap of every key (keys are distinct, as a
/// job has one key at a time), without sifting every job through the heap
/// (most jobs of a long queue take no step).
struct FillQueue {
    next: usize,
    n: usize,
    heap: BinaryHeap<Reverse<(Share, usize)>>,
}

impl FillQueue {
    /// Jobs `0..n`, each at share 0.
    fn new(n: usize) -> Self {
        FillQueue {
            next: 0,
            n,
            heap: BinaryHeap::new(),
        }
    }

    /// The job with the smallest key, taken off the queue.
    fn pop(&mut self) -> Option<usize> {
        let fresh = (self.next < self.n).then_some((Share(0.0), self.next));
        match (fresh, self.heap.peek()) {
            (Some(f), Some(Reverse(h))) if *h < f => self.heap.pop().map(|Reverse((_, i))| i),
            (Some((_, i)), _) => {
                self.next += 1;
                Some(i)
            }
            (None, _) => self.heap.pop().map(|Reverse((_, i))| i),
        }
    }

    /// Job `i` (off the queue) back at `share`.
    fn push(&mut self, share: f64, i: usize) {
        self.heap.push(Reverse((Share(share), i)));
    }
}

struct Fill {
    workers: u32,
    ps: u32,
    placement: Placement,
}

impl Drf {
    /// The step job `job` takes from `w` workers and `p` PSs, or `None`
    /// when it cannot grow (its cap is reached).
    fn next_step(&self, job: &Job, w: u32, p: u32) -> Option<(u32, u32)> {
        next_size(job, w, p, self.step.max(1))
            .map(|size| bundled(job, size, p, self.workers_per_ps))
            .filter(|&(w2, _)| w2 > w)
    }

    /// Progressive filling on `placer`, placing every step: each job's
    /// counts and placement.
    fn fill(&self, jobs: &[JobView<'_>], mut placer: Placer<'_>, total: &Resources) -> Vec<Fill> {
        let mut fill: Vec<Fill> = jobs
            .iter()
            .map(|_| Fill {
                workers: 0,
                ps: 0,
                placement: Placement::new(),
            })
            .collect();
        // The job with the smallest dominant share next (ties: the earlier
        // in `jobs`, i.e. arrival order), a job's entry pushed again after
        // each step it takes.
        let mut queue = FillQueue::new(jobs.len());
        while let Some(i) = queue.pop() {
            let job = jobs[i].job();
            let f = &mut fill[i];
            let grown = self.next_step(job, f.workers, f.ps).and_then(|(w, p)| {
                placer
                    .grow(job, &f.placement, w - f.workers, p.saturating_sub(f.ps))
                    .map(|part| (w, p.max(f.ps), part))
            });
            // A job that cannot grow is saturated: it takes no further step.
            if let Some((w, p, part)) = grown {
                f.workers = w;
                f.ps = p;
                f.placement.merge(&part);
                let share = dominant_share(&job.demand_for(w, f.ps), total);
                queue.push(share, i);
            }
        }
        fill
    }

    /// The counts [`Drf::fill`] gives every job, found by counting free
    /// GPUs instead of placing, when that provably gives the same counts;
    /// otherwise `None`.
    ///
    /// **When.** Every job is a ring-all-reduce job that reserves no
    /// bandwidth, may use every machine, takes exactly one step (to `w_j`
    /// workers, no PS: a fixed count or a rigid gang) and whose worker
    /// demand `u_j` has exactly 1 GPU and whole-number other components;
    /// `U` is their componentwise maximum. Every machine `p` of `free` has
    /// a whole number `g_p ∈ [0, 1024]` of free GPUs and, for every other
    /// resource `r`, `free_r ≥ g_p·U_r`; a machine with `g_p ≥ 1` hosts
    /// workers and can host `U`; and `G·U_r < 2⁵²` for `G = Σ_p g_p`. So
    /// every `g·U_r` below is a whole number under 2⁵², exact in floating
    /// point.
    ///
    /// **Claim.** Then [`Drf::fill`] grows the jobs in order (every job is
    /// taken at share 0 first, in index order, and a job taken again has
    /// no step left), and job `j`'s grow succeeds iff `w_j ≤ G_j`, the
    /// free GPUs left by the jobs before it; `G_j` drops by `w_j` when it
    /// does. By induction over the grows, the invariant above holds on the
    /// placer (with `G_j`): a grow that places `n ≤ g_p` workers on `p`
    /// leaves `g_p − n` (exact) and subtracts `n·u_r` (at once, as a
    /// product, or worker by worker) from `free_r`; the exact result is
    /// `≥ g_p·U_r − n·U_r = (g_p − n)·U_r`, a float, so the rounded result
    /// is too. And the grow decides as claimed: with whole free GPUs below
    /// 10⁹ every GPU test `d ≤ g + tol·max(g, 1)` is `d ≤ g` exactly. If
    /// `w_j > G_j`: no machine takes `w_j` GPUs, the total-room test fails
    /// or the worker-by-worker pass runs out of GPUs (a worker takes a
    /// GPU), so the grow fails and changes nothing. If `w_j ≤ G_j`: the
    /// single-machine search may succeed; otherwise the total-room test
    /// passes (the float sums of `free_r ≥ g_p·U_r` are at least the exact
    /// sum `G_j·U_r ≥ w_j·u_r`: rounding is monotone, each exact partial
    /// sum is a float) and the worker-by-worker pass puts a worker on any
    /// machine with a free GPU (`free_r ≥ g_p·U_r ≥ u_r`), so it places all
    /// `w_j`. The placements themselves do not matter for the counts.
    fn fill_counts(
        &self,
        instance: &Instance,
        jobs: &[JobView<'_>],
        free: &[Resources],
    ) -> Option<Vec<(u32, u32)>> {
        use crate::exact::{TWO_40, TWO_52};
        let mut most = Resources::zero();
        let mut steps = Vec::with_capacity(jobs.len());
        for j in jobs {
            let job = j.job();
            let unit = match &job.architecture {
                Architecture::RingAllReduce(r) => r.worker,
                Architecture::ParameterServer(_) => return None,
            };
            let whole = |x: f64| crate::exact::whole_up_to(x, TWO_40).is_some();
            if job.allowed_machines.is_some()
                || job.reserved_nic_bps(2) != 0.0
                || unit.gpus != 1.0
                || !ResourceKind::ALL.into_iter().all(|k| whole(unit.get(k)))
            {
                return None;
            }
            let first = self.next_step(job, 0, 0);
            if let Some((w, p)) = first
                && (p != 0 || self.next_step(job, w, p).is_some())
            {
                return None;
            }
            most = most.max(&unit);
            steps.push(first.map_or(0, |(w, _)| w));
        }
        let machines = &instance.cluster().machines;
        let mut gpus = 0.0;
        for (m, r) in machines.iter().zip(free) {
            let g = r.gpus;
            crate::exact::whole_up_to(g, 1024.0)?;
            let room = ResourceKind::ALL
                .into_iter()
                .filter(|&k| k != ResourceKind::Gpu)
                .all(|k| r.get(k) >= g * most.get(k));
            let hosts = g < 1.0
                || (m.hosts.allows(TaskKind::Worker) && m.can_host(TaskKind::Worker, &most));
            if !(room && hosts) {
                return None;
            }
            gpus += g;
        }
        if !ResourceKind::ALL
            .into_iter()
            .all(|k| gpus * most.get(k) < TWO_52)
        {
            return None;
        }
        Some(
            steps
                .into_iter()
                .map(|w| {
                    let fits = w > 0 && f64::from(w) <= gpus;
                    if fits {
                        gpus -= f64::from(w);
                    }
                    if fits { (w, 0) } else { (0, 0) }
                })
                .collect(),
        )
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
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>> {
        let instance = view.instance();
        let total = instance.cluster().total_capacity();
        let (jobs, scratch) = from_scratch(view, self.placement);

        // Progressive filling: by counting GPUs when that is exact (the
        // placements it would make are needed only if the final placement
        // below fails), else placing every step. Many increments go on the
        // filling's placer: keep it indexed.
        let counted = (shortcut == Shortcut::Allowed)
            .then(|| self.fill_counts(instance, &jobs, scratch.free()))
            .flatten();
        used.taken += u64::from(counted.is_some());
        let mut fill = match &counted {
            Some(counts) => counts
                .iter()
                .map(|&(workers, ps)| Fill {
                    workers,
                    ps,
                    placement: Placement::new(),
                })
                .collect(),
            None => self.fill(&jobs, scratch.clone().indexed(), &total),
        };

        // Final placement: a running job keeps what it can of its current
        // placement, and the tasks it gains are placed on what is left.
        let mut sticky = if counted.is_some() {
            // A few increments at most: no index to build.
            scratch.clone()
        } else {
            scratch.clone().indexed()
        };
        let mut placements: Vec<Placement> = jobs
            .iter()
            .zip(&fill)
            .map(|(j, f)| trim(j.placement(), f.workers, f.ps))
            .collect();
        let mut ok = jobs
            .iter()
            .zip(&placements)
            .all(|(j, kept)| sticky.take(j.job(), kept));
        for ((j, f), placement) in jobs.iter().zip(&fill).zip(placements.iter_mut()) {
            if !ok {
                break;
            }
            let kept = placement.total();
            let (dw, dp) = (
                f.workers.saturating_sub(kept.workers),
                f.ps.saturating_sub(kept.ps),
            );
            if dw == 0 && dp == 0 {
                continue;
            }
            match sticky.grow(j.job(), placement, dw, dp) {
                Some(extra) => placement.merge(&extra),
                None => ok = false,
            }
        }
        if !ok {
            if let Some(counts) = &counted {
                fill = self.fill(&jobs, scratch.indexed(), &total);
                debug_assert!(
                    fill.iter()
                        .zip(counts)
                        .all(|(f, &c)| (f.workers, f.ps) == c)
                );
            }
            placements = fill.into_iter().map(|f| f.placement).collect();
        }

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
    use super::*;
    use crate::baselines::fixtures::assert_same_runs;
    use crate::model::{
        Cluster, Discipline, Hosting, JobId, Machine, MachineId, PsJob, RarJob, Resources, SyncMode,
    };
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    fn ring(counts: WorkerCounts, discipline: Discipline) -> Job {
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
    fn workload(seed: u64, kind: u32) -> Instance {
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

    /// Counting free GPUs decides as placing every step, for every rule,
    /// step and workload, and the counting case is exercised.
    #[test]
    fn counting_fill_decides_as_the_placing_fill() {
        let mut counted = 0;
        for seed in 0..4 {
            for kind in 0..7 {
                let instance = workload(seed, kind);
                for (placement, _) in PlacementRule::ALL {
                    let used = assert_same_runs(
                        &instance,
                        || Drf {
                            step: 1 + (seed % 2) as u32,
                            placement,
                            ..Drf::default()
                        },
                        &format!("seed {seed}, kind {kind}, {placement}"),
                    );
                    counted += used.taken;
                }
            }
        }
        assert!(counted > 100, "counting hardly exercised");
    }

    #[test]
    fn fill_queue_pops_as_one_heap() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..300 {
            let n = rng.random_range(0..12);
            let mut queue = FillQueue::new(n);
            let mut heap: BinaryHeap<Reverse<(Share, usize)>> =
                (0..n).map(|i| Reverse((Share(0.0), i))).collect();
            loop {
                let want = heap.pop().map(|Reverse((_, i))| i);
                assert_eq!(queue.pop(), want);
                let Some(i) = want else { break };
                if rng.random_range(0..3) > 0 {
                    // Shares as DRF makes them, ties and zeros included.
                    let share = [0.0, -0.0, 0.25, 0.5, 1.0][rng.random_range(0..5)];
                    queue.push(share, i);
                    heap.push(Reverse((Share(share), i)));
                }
            }
        }
    }

    #[test]
    fn ring_jobs_step_through_allowed_counts() {
        let j = ring(WorkerCounts::Allowed(vec![1, 2, 4, 8]), Discipline::ELASTIC);
        assert_eq!(next_size(&j, 0, 0, 1), Some((1, 0)));
        assert_eq!(next_size(&j, 2, 0, 1), Some((4, 0)));
        assert_eq!(next_size(&j, 2, 0, 3), Some((8, 0)));
        // No allowed count ≥ 4 + 5: the largest above 4.
        assert_eq!(next_size(&j, 4, 0, 5), Some((8, 0)));
        assert_eq!(next_size(&j, 8, 0, 1), None);
        let fixed = ring(WorkerCounts::Fixed(4), Discipline::ELASTIC);
        assert_eq!(next_size(&fixed, 0, 0, 1), Some((4, 0)));
        assert_eq!(next_size(&fixed, 4, 0, 1), None);
        // A rigid gang: its requested size in one step, then nothing.
        let gang = ring(WorkerCounts::Allowed(vec![2, 4]), Discipline::RIGID_GANG);
        assert_eq!(next_size(&gang, 0, 0, 1), Some((4, 0)));
        assert_eq!(next_size(&gang, 4, 0, 1), None);
    }
}
