//! Baselines Optimus, RRH and Dorm-like in the simulator: hand-checked
//! cases, and seeded random runs (every job completes or is rejected, no
//! machine is ever over-allocated, same seed ⇒ same result).

mod common;

use dmlsched::baselines::{Optimus, Rrh, RrhParams};
use dmlsched::model::*;
use dmlsched::schedule::Tasks;
use dmlsched::sim::{Decisions, Policy, SimOptions, SimResult, simulate};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// A PS job with `minibatches` of work, `tc` seconds per mini-batch and no
/// gradient traffic, so that `τ = tc` and `w` workers do `w/tc`
/// mini-batches per second. Worker: 1 GPU, 1 CPU; PS: 1 CPU.
/// [`common::ps_job`], asynchronous, with up to `max_workers` workers and `max_ps` PSs.
fn async_ps(minibatches: u32, tc: f64, max_workers: u32, max_ps: u32) -> PsJob {
    PsJob {
        max_workers,
        max_ps,
        sync: SyncMode::Asynchronous,
        ..common::ps_job(minibatches, tc)
    }
}

fn job(id: u32, arrival_s: f64, p: PsJob) -> Job {
    Job::new(JobId(id), arrival_s, Architecture::ParameterServer(p))
}

fn one_machine(gpus: f64) -> Cluster {
    Cluster::homogeneous(
        1,
        Resources::zero()
            .gpus(gpus)
            .cpu_cores(64.0)
            .memory(64e9)
            .nic(1e12),
        1e11,
    )
}

/// Total tasks of each allocation of `job`, in the order they ended.
fn sizes(r: &SimResult, job: u32) -> Vec<(f64, f64, Tasks)> {
    r.allocations
        .iter()
        .filter(|a| a.job == JobId(job) && a.to_s > a.from_s)
        .map(|a| (a.from_s, a.to_s, a.placement.total()))
        .collect()
}

/// Recomputes every machine's use from the allocation log at every point
/// where it changes, and checks it against the capacity.
fn assert_no_overallocation(inst: &Instance, r: &SimResult) {
    let mut times: Vec<f64> = r.allocations.iter().map(|a| a.from_s).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    for t in times {
        let mut used = vec![Resources::zero(); inst.cluster().machines.len()];
        for a in r.allocations.iter().filter(|a| a.from_s <= t && t < a.to_s) {
            let job = inst.job(a.job).unwrap();
            for &(m, tasks) in &a.placement {
                let p = inst.machine_position(m).unwrap();
                used[p] = used[p].plus(&job.demand_for(tasks.workers, tasks.ps));
            }
        }
        for (p, u) in used.iter().enumerate() {
            let cap = &inst.cluster().machines[p].capacity;
            assert!(
                u.fits_in(cap, 1e-9),
                "t = {t}: machine {p} uses {u}, capacity {cap}"
            );
        }
    }
}

fn zeroed(mut r: SimResult) -> SimResult {
    r.decision_time_s = 0.0;
    r
}

// ---------------------------------------------------------------- Optimus

/// Optimus's marginal-gain rule on a hand-computed instance: a three-layer
/// synchronous PS-W job, 2·10⁶
/// samples in mini-batches of 32 (62,500 mini-batches), B_w = B_s = 1 GB/s;
/// worker 1 GPU + 2 CPU, PS 4 CPU, cluster (4 GPU, 16 CPU). Both shares are
/// 0.25. Gains per 0.25 share (ρ hand-computed with PS-W):
///
/// | step | (w,p) | ρ      | +worker | +PS                 | applied |
/// |------|-------|--------|---------|---------------------|---------|
/// | 1    | (1,1) | 2500   | 2250    | not allowed (p ≤ w) | +worker |
/// | 2    | (2,1) | 1937.5 | 750     | 2750                | +PS     |
/// | 3    | (2,2) | 1250   | 750     | not allowed         | +worker |
/// | 4    | (3,2) | 1062.5 | 375     | 916.67, 18 CPU > 16 | +worker |
/// | 5    | (4,2) | 968.75 | 5 GPUs  | 20 CPUs             | stop    |
fn spec_example() -> Instance {
    let p = PsJob {
        minibatch_compute_s: 0.03,
        gradient_bytes: 14e6,
        ..common::layered_table_job(1e9, 8, 8, true)
    };
    // The NIC is large enough never to bind nor count in the shares.
    let cluster = Cluster::homogeneous(
        1,
        Resources::zero()
            .gpus(4.0)
            .cpu_cores(16.0)
            .memory(1e12)
            .nic(1e15),
        1e11,
    );
    Instance::new(cluster, vec![job(0, 0.0, p)], 60.0, 1000).unwrap()
}

#[test]
fn optimus_reproduces_the_spec_table() {
    let inst = spec_example();
    let r = simulate(&inst, &mut Optimus::default(), &SimOptions::default()).unwrap();
    assert_eq!(sizes(&r, 0), vec![(0.0, 968.75, Tasks::new(4, 2))]);
    assert!(close(r.jobs[0].finish_s.unwrap(), 968.75));

    let mut stop = Optimus {
        stop_at_first_misfit: true,
        ..Optimus::default()
    };
    let r = simulate(&inst, &mut stop, &SimOptions::default()).unwrap();
    assert_eq!(r.policy, "optimus-stop");
    assert_eq!(sizes(&r, 0).len(), 1);
    assert_eq!(sizes(&r, 0)[0].2, Tasks::new(3, 2));
    assert!(close(r.jobs[0].finish_s.unwrap(), 1062.5));
}

/// Two jobs on 4 GPUs, no gradient traffic (τ = 0.1 s, PS gains are 0),
/// worker share 0.25. X: 2400 mini-batches, ρ_X(w) = 240/w; Y: 1200,
/// ρ_Y(w) = 120/w. After (1,1) each: gains X 480, Y 240 → X to 2 workers;
/// X 160, Y 240 → Y to 2; the GPUs are full. Both run at 20 mini-batches/s:
/// Y finishes at 60 s; X, alone with 1200 left, grows to its cap of 4
/// workers (40/s) and finishes at 90 s.
#[test]
fn optimus_two_jobs_by_hand() {
    let jobs = vec![
        job(0, 0.0, async_ps(2400, 0.1, 4, 2)),
        job(1, 0.0, async_ps(1200, 0.1, 4, 2)),
    ];
    let inst = Instance::new(one_machine(4.0), jobs, 10.0, 100).unwrap();
    let r = simulate(&inst, &mut Optimus::default(), &SimOptions::default()).unwrap();
    assert_eq!(
        sizes(&r, 1),
        vec![(0.0, 60.0, Tasks::new(2, 1))],
        "{:?}",
        r.allocations
    );
    let x = sizes(&r, 0);
    assert_eq!(x.len(), 2);
    assert_eq!((x[0].0, x[0].2), (0.0, Tasks::new(2, 1)));
    assert!(close(x[0].1, 60.0));
    assert_eq!(x[1].2, Tasks::new(4, 1));
    assert!(close(r.jobs[0].finish_s.unwrap(), 90.0));
    assert!(close(r.jobs[1].finish_s.unwrap(), 60.0));
}

// -------------------------------------------------------------------- RRH

/// One GPU, 10 s slots, every job 1 worker + 1 PS, τ = 0.1 s.
///
/// * A (t = 0, 100 s of work, not preemptible, f = 1): fits, admitted, runs
///   0–100 s.
/// * B (t = 1, 50 s, f(δ) = 100 − δ): does not fit; A completes in slot 9
///   (⌈100/10⌉ − 1), so B would start in slot 10 and complete in slot 14:
///   reward f_B(14) = 86, no admitted job waits, risk 0 → admitted.
/// * C (t = 2, 30 s = 3 slots, f(δ) = 14 − δ): starts in slot 10 at best,
///   completes in slot 12: reward 2. Risk: B waits with δ_B^run =
///   ⌈(2 + 50)/10⌉ − 1 = 5, and C would delay it 3 slots:
///   f_B(5) − f_B(8) = 95 − 92 = 3 > 2 → rejected.
/// * B runs 100–150 s (completion slot 14, utility 86).
/// * E (t = 300, 20 s): the cluster is idle, it fits, admitted, 300–320 s.
#[test]
fn rrh_rejects_risky_and_admits_fitting_jobs() {
    let a = job(0, 0.0, async_ps(1000, 0.1, 1, 1)).with_discipline(Discipline {
        elasticity: Elasticity::Elastic,
        preemptible: false,
    });
    let b = job(1, 1.0, async_ps(500, 0.1, 1, 1)).with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    });
    let c = job(2, 2.0, async_ps(300, 0.1, 1, 1)).with_utility(Utility::Linear {
        g1: 14.0,
        slope: 1.0,
    });
    let e = job(3, 300.0, async_ps(200, 0.1, 1, 1));
    let inst = Instance::new(one_machine(1.0), vec![a, b, c, e], 10.0, 1000).unwrap();
    let r = simulate(&inst, &mut Rrh::default(), &SimOptions::default()).unwrap();
    let j = &r.jobs;
    assert!(close(j[0].finish_s.unwrap(), 100.0));
    assert!(!j[1].rejected);
    assert!(close(j[1].start_s.unwrap(), 100.0));
    assert!(close(j[1].finish_s.unwrap(), 150.0));
    assert_eq!(j[1].completion_slot, Some(14));
    assert!(close(j[1].utility, 86.0));
    assert!(j[2].rejected && j[2].start_s.is_none());
    assert!(close(j[3].start_s.unwrap(), 300.0));
    assert!(close(j[3].finish_s.unwrap(), 320.0));
    assert_no_overallocation(&inst, &r);

    // A threshold above every reward turns everything away.
    let mut strict = Rrh::new({
        let mut built = RrhParams::default();
        built.theta = 1000.0;
        built
    });
    let r = simulate(&inst, &mut strict, &SimOptions::default()).unwrap();
    assert!(r.jobs.iter().all(|j| j.rejected));
    // Each says why: the admission test.
    assert!(r.jobs.iter().all(|j| {
        j.rejection
            .as_ref()
            .is_some_and(|w| w.to_string().contains("admission test"))
    }));
}

/// One GPU. A (t = 0, 100 s, f = 1, preemptible) runs; B (t = 1, 50 s,
/// f(δ) = 100 − δ) is admitted (reward f_B(14) = 86, no risk). B's urgency
/// f_B(5) − f_B(6) = 1 beats A's 0, so A is paused at 1 s and B runs
/// 1–51 s; A resumes and ends at 150 s (1 s done, 99 s left).
#[test]
fn rrh_urgency_preempts_a_patient_job() {
    let a = job(0, 0.0, async_ps(1000, 0.1, 1, 1));
    let b = job(1, 1.0, async_ps(500, 0.1, 1, 1)).with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    });
    let inst = Instance::new(one_machine(1.0), vec![a, b], 10.0, 1000).unwrap();
    let r = simulate(&inst, &mut Rrh::default(), &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].preemptions, 1);
    assert!(close(r.jobs[1].start_s.unwrap(), 1.0));
    assert!(close(r.jobs[1].finish_s.unwrap(), 51.0));
    assert!(close(r.jobs[0].finish_s.unwrap(), 150.0));
    assert_no_overallocation(&inst, &r);
}

/// A job whose fixed size does not fit the empty cluster is rejected even
/// with a negative threshold.
#[test]
fn rrh_rejects_what_can_never_fit() {
    let big = job(0, 0.0, async_ps(100, 0.1, 3, 1));
    let inst = Instance::new(one_machine(2.0), vec![big], 10.0, 100).unwrap();
    let mut p = Rrh::new({
        let mut built = RrhParams::default();
        built.theta = -1.0;
        built
    });
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert!(r.jobs[0].rejected && !r.stalled);
}

// ------------------------------------------------------- random instances

/// Three 4-GPU machines and 20 jobs of every kind the policies handle:
/// elastic PS jobs (some with a layer profile, some without the PS ≤
/// workers rule, some not preemptible), rigid non-preemptible PS gangs and
/// rigid ring-all-reduce jobs, with assorted utilities.
fn random_instance(seed: u64) -> Instance {
    random_instance_with(seed, false)
}

/// [`random_instance`], with every job non-preemptible when `sticky` is set.
fn random_instance_with(seed: u64, sticky: bool) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(32.0)
        .memory(256e9)
        .nic(10e9);
    let cluster = Cluster::homogeneous(3, cap, 1e11);
    let mut jobs = Vec::new();
    for id in 0..20u32 {
        let arrival = rng.random_range(0.0..600.0);
        let kind = rng.random_range(0..20u32);
        let max_w = rng.random_range(1..=6u32);
        let mut p = PsJob {
            epochs: 1,
            data_chunks: 4,
            minibatches_per_chunk: rng.random_range(50..300),
            minibatch_compute_s: rng.random_range(0.05..0.5),
            gradient_bytes: rng.random_range(0.0..50e6),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(f64::from(rng.random_range(1..=4u32)))
                .memory(8e9)
                .nic(rng.random_range(0.5e9..2e9)),
            ps: Resources::zero()
                .cpu_cores(f64::from(rng.random_range(1..=4u32)))
                .memory(8e9)
                .nic(rng.random_range(1e9..4e9)),
            max_workers: max_w,
            max_ps: rng.random_range(1..=max_w),
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        };
        let mut discipline = Discipline::ELASTIC;
        let arch = match kind {
            10 | 11 => {
                p.sync = SyncMode::Synchronous;
                p.layers = Some(
                    (0..3)
                        .map(|_| Layer {
                            forward_s: rng.random_range(0.005..0.05),
                            backward_s: rng.random_range(0.01..0.1),
                            bytes: rng.random_range(1e6..20e6),
                            update_s: 0.0,
                        })
                        .collect(),
                );
                Architecture::ParameterServer(p)
            }
            12 | 13 => {
                p.max_workers = p.max_workers.min(3);
                p.max_ps = 1;
                discipline = Discipline::RIGID_GANG;
                Architecture::ParameterServer(p)
            }
            14 => {
                discipline.preemptible = false;
                Architecture::ParameterServer(p)
            }
            15..=17 => {
                discipline = Discipline::RIGID_GANG;
                Architecture::RingAllReduce(RarJob {
                    workers: WorkerCounts::Allowed(vec![1, 2, 4]),
                    iterations: rng.random_range(100..500),
                    convergence_iterations: None,
                    model_bytes: rng.random_range(1e6..100e6),
                    minibatch_size: 32,
                    forward_per_sample_s: 1e-3,
                    backward_per_iteration_s: rng.random_range(0.01..0.1),
                    reserved_bandwidth_bps: None,
                    worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(8e9),
                })
            }
            18 | 19 => {
                p.ps_at_most_workers = false;
                Architecture::ParameterServer(p)
            }
            _ => Architecture::ParameterServer(p),
        };
        let utility = match rng.random_range(0..4u32) {
            0 => Utility::Constant {
                value: rng.random_range(1.0..10.0),
            },
            1 => Utility::Linear {
                g1: rng.random_range(5.0..20.0),
                slope: rng.random_range(0.01..0.5),
            },
            2 => Utility::DeadlineStep {
                value: rng.random_range(1.0..10.0),
                deadline_slots: rng.random_range(5..60),
            },
            _ => Utility::Sigmoid {
                g1: rng.random_range(1.0..100.0),
                g2: rng.random_range(0.0..1.0),
                g3: rng.random_range(1.0..15.0),
            },
        };
        let mut j = Job::new(JobId(id), arrival, arch)
            .with_utility(utility)
            .with_discipline(discipline);
        if sticky {
            j.discipline.preemptible = false;
        }
        if rng.random_range(0..3u32) == 0 {
            j.reconfiguration_s = rng.random_range(0.0..2.0);
        }
        jobs.push(j);
    }
    Instance::new(cluster, jobs, 10.0, 100_000).unwrap()
}

/// Runs `make()` on three seeded instances under two decision modes:
/// every job completes or is rejected, no machine is over-allocated, and a
/// second run gives the same result.
fn check_random_runs<P: Policy>(make: impl Fn() -> P) {
    let instances: Vec<(u64, Instance)> = (0..3).map(|s| (s, random_instance(s))).collect();
    check_runs(&instances, make);
}

/// The checks of [`check_random_runs`] on given instances.
fn check_runs<P: Policy>(instances: &[(u64, Instance)], make: impl Fn() -> P) {
    let modes = [SimOptions::default(), {
        let mut built = SimOptions::default();
        built.decisions = Decisions::SlotBoundaries;
        built
    }];
    for (seed, inst) in instances {
        let (seed, inst) = (*seed, inst);
        for opts in &modes {
            let r = simulate(inst, &mut make(), opts).unwrap();
            assert!(!r.stalled, "seed {seed}: stalled");
            for j in &r.jobs {
                assert!(
                    j.finish_s.is_some() || j.rejected,
                    "seed {seed}: {} neither finished nor rejected",
                    j.job
                );
            }
            for (j, rec) in inst.jobs().iter().zip(&r.jobs) {
                if !j.discipline.preemptible {
                    assert_eq!(rec.preemptions, 0);
                }
            }
            assert_no_overallocation(inst, &r);
            let again = simulate(inst, &mut make(), opts).unwrap();
            assert_eq!(zeroed(r), zeroed(again), "seed {seed}: not deterministic");
        }
    }
}

#[test]
fn optimus_random_runs() {
    check_random_runs(Optimus::default);
    check_random_runs(|| Optimus {
        stop_at_first_misfit: true,
        placement: dmlsched::placement::PlacementRule::RoundRobin,
    });
}

#[test]
fn rrh_random_runs() {
    check_random_runs(Rrh::default);
}

/// Seed 13 makes Optimus's from-scratch sizes form a cycle (two jobs each
/// growing onto what the other gives up): with preemptible jobs one is
/// paused first; with every job non-preemptible one is first shrunk to the
/// tasks it keeps. The simulator accepts both orders.
#[test]
fn optimus_breaks_reallocation_cycles() {
    let instances = vec![
        (13, random_instance_with(13, false)),
        (13, random_instance_with(13, true)),
        (28, random_instance_with(28, true)),
    ];
    check_runs(&instances, Optimus::default);
}

/// Every job non-preemptible: RRH keeps them running once started.
#[test]
fn rrh_non_preemptible_runs() {
    let instances: Vec<(u64, Instance)> =
        (0..3).map(|s| (s, random_instance_with(s, true))).collect();
    check_runs(&instances, Rrh::default);
}

/// Optimus never rejects; every job of the random instances finishes.
#[test]
fn optimus_completes_everything() {
    let inst = random_instance(7);
    let r = simulate(&inst, &mut Optimus::default(), &SimOptions::default()).unwrap();
    assert!(r.jobs.iter().all(|j| j.finish_s.is_some()));
}

// ---------------------------------------------------------------- Dorm

#[cfg(feature = "highs")]
mod dorm {
    use super::*;
    use dmlsched::baselines::{DormLike, DormParams};
    use dmlsched::sim::{Action, Event, JobStatus, SimView};
    use std::collections::BTreeMap;

    /// Records, for every decision, each job's workers before and after.
    struct Spy {
        inner: DormLike,
        log: Vec<Vec<(JobId, JobStatus, u32, u32)>>,
    }

    impl Policy for Spy {
        fn name(&self) -> String {
            self.inner.name()
        }

        fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> dmlsched::Result<Vec<Action>> {
            let actions = self.inner.on_event(view, event)?;
            let mut after: BTreeMap<JobId, u32> = BTreeMap::new();
            for a in &actions {
                if let Action::SetAllocation { job, placement, .. } = a {
                    after.insert(*job, placement.total().workers);
                }
            }
            self.log.push(
                view.active()
                    .map(|j| {
                        let before = j.tasks().workers;
                        let now = after.get(&j.id()).copied().unwrap_or(before);
                        (j.id(), j.status(), before, now)
                    })
                    .collect(),
            );
            Ok(actions)
        }
    }

    /// `Σ |n − n^prev|` over jobs that have run, and the bound
    /// `max(1, ⌈0.2·Σ n^prev⌉)`.
    fn adjustment(rows: &[(JobId, JobStatus, u32, u32)]) -> (u32, u32) {
        let existing = rows.iter().filter(|r| r.1 != JobStatus::Waiting);
        let moved = existing.clone().map(|r| r.2.abs_diff(r.3)).sum();
        let prev: u32 = existing.map(|r| r.2).sum();
        (moved, ((0.2 * f64::from(prev)).ceil() as u32).max(1))
    }

    /// 8 GPUs; jobs of ≤ 8 workers and 1 PS whose NIC carries 8 workers
    /// (B = 8b, so one PS serves 8 workers), long enough not to finish.
    fn two_jobs(second_at: f64) -> Instance {
        let mk = |id, t| {
            let mut p = async_ps(1_000_000, 0.1, 8, 1);
            p.ps.nic_bps = 8e9;
            job(id, t, p)
        };
        let jobs = vec![mk(0, 0.0), mk(1, second_at), mk(2, 2.0 * second_at)];
        Instance::new(one_machine(8.0), jobs, 10.0, 1_000_000).unwrap()
    }

    /// t = 0: A alone gets all 8 GPUs (8, 1). t = 10: B arrives; A has run,
    /// so |n_A − 8| ≤ max(1, ⌈0.2·8⌉) = 2; DRF splits 4/4, so fairness
    /// asks n_B ≥ ⌊0.5·4⌋ = 2 (and n_A ≥ 2); with 8 GPUs the unique optimum
    /// is A (6, 1), B (2, 1). Every later decision keeps the bound.
    #[test]
    fn dorm_respects_adjustment_and_fairness_by_hand() {
        let inst = two_jobs(10.0);
        let mut spy = Spy {
            inner: DormLike::default(),
            log: Vec::new(),
        };
        let mut opts = SimOptions::default();
        opts.stop = dmlsched::sim::StopAt::Horizon;
        let inst = Instance::new(inst.cluster().clone(), inst.jobs().to_vec(), 10.0, 5).unwrap();
        let r = simulate(&inst, &mut spy, &opts).unwrap();
        let a = sizes(&r, 0);
        assert_eq!(a[0], (0.0, 10.0, Tasks::new(8, 1)));
        assert_eq!((a[1].0, a[1].2), (10.0, Tasks::new(6, 1)));
        let b = sizes(&r, 1);
        assert_eq!((b[0].0, b[0].2), (10.0, Tasks::new(2, 1)));
        for rows in &spy.log {
            let (moved, bound) = adjustment(rows);
            assert!(moved <= bound, "{rows:?}");
        }
        // The third job (t = 20) also gets in, within the bound.
        assert!(sizes(&r, 2).first().is_some_and(|s| s.2.workers >= 1));
        let rep = *spy.inner.report();
        assert_eq!(rep.decisions, 3);
        assert_eq!((rep.fallbacks, rep.fairness_dropped), (0, 0));
        assert!(rep.milp_solves == 3 && rep.mip_time_s >= 0.0);
        assert_no_overallocation(&inst, &r);
    }

    /// With φ = 1, B would need n_B ≥ 4 while A may give up only 2: the
    /// fairness rows are infeasible, dropped, and the program solved again
    /// under the adjustment bound alone.
    #[test]
    fn dorm_drops_infeasible_fairness_rows() {
        let inst = two_jobs(10.0);
        let inst =
            Instance::new(inst.cluster().clone(), inst.jobs()[..2].to_vec(), 10.0, 3).unwrap();
        let mut spy = Spy {
            inner: DormLike::new({
                let mut built = DormParams::default();
                built.fairness_fraction = 1.0;
                built
            }),
            log: Vec::new(),
        };
        let mut opts = SimOptions::default();
        opts.stop = dmlsched::sim::StopAt::Horizon;
        let r = simulate(&inst, &mut spy, &opts).unwrap();
        let rep = *spy.inner.report();
        assert_eq!(rep.fairness_dropped, 1);
        assert_eq!(rep.milp_solves, 3);
        for rows in &spy.log {
            let (moved, bound) = adjustment(rows);
            assert!(moved <= bound, "{rows:?}");
        }
        let a = sizes(&r, 0);
        assert!(a[1].2.workers >= 6);
        assert_no_overallocation(&inst, &r);
    }

    /// A zero budget: no solve at all, every decision is the DRF allocation
    /// (A alone: 8 workers; then 4 and 4), and each is counted.
    #[test]
    fn dorm_zero_budget_falls_back_to_drf() {
        let inst = two_jobs(10.0);
        let inst =
            Instance::new(inst.cluster().clone(), inst.jobs()[..2].to_vec(), 10.0, 3).unwrap();
        let mut p = DormLike::new({
            let mut built = DormParams::default();
            built.total_budget_s = Some(0.0);
            built
        });
        let mut opts = SimOptions::default();
        opts.stop = dmlsched::sim::StopAt::Horizon;
        let r = simulate(&inst, &mut p, &opts).unwrap();
        let rep = *p.report();
        assert_eq!((rep.decisions, rep.fallbacks, rep.milp_solves), (2, 2, 0));
        assert_eq!(sizes(&r, 0)[0].2, Tasks::new(8, 1));
        assert_eq!(sizes(&r, 0)[1].2, Tasks::new(4, 1));
        assert_eq!(sizes(&r, 1)[0].2, Tasks::new(4, 1));
        assert_no_overallocation(&inst, &r);
    }

    #[test]
    fn dorm_rejects_bad_parameters() {
        let inst = two_jobs(10.0);
        let mut p = DormLike::new({
            let mut built = DormParams::default();
            built.fairness_fraction = f64::NAN;
            built
        });
        assert!(simulate(&inst, &mut p, &SimOptions::default()).is_err());
        let mut p = DormLike::new({
            let mut built = DormParams::default();
            built.time_limit_s = 0.0;
            built
        });
        assert!(simulate(&inst, &mut p, &SimOptions::default()).is_err());
    }

    #[test]
    fn dorm_random_runs() {
        check_random_runs(DormLike::default);
        let sticky: Vec<(u64, Instance)> = (25..27)
            .map(|s| (s, random_instance_with(s, true)))
            .collect();
        check_runs(&sticky, DormLike::default);
    }

    /// A tiny per-solve limit or a small budget still gives valid runs:
    /// each decision uses an optimum, an incumbent or the DRF fallback.
    #[test]
    fn dorm_time_limits_stay_valid() {
        let inst = random_instance(3);
        for p in [
            DormLike::new({
                let mut built = DormParams::default();
                built.time_limit_s = 1e-6;
                built
            }),
            DormLike::new({
                let mut built = DormParams::default();
                built.total_budget_s = Some(0.01);
                built
            }),
        ] {
            let mut p = p;
            let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
            assert!(r.jobs.iter().all(|j| j.finish_s.is_some()));
            assert_no_overallocation(&inst, &r);
            let rep = p.report();
            assert!(rep.decisions > 0 && rep.milp_solves + rep.fallbacks >= rep.decisions);
        }
    }
}
