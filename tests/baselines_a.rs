//! Baselines SJF, Tetris, DRF, Tiresias, FIFO-FF with reserved bandwidth and
//! proportional share: hand-checked runs through the simulator, and
//! random-instance runs (completion, capacity, `verify`, determinism).

mod common;

use dmlsched::baselines::{
    Drf, Fifo, FifoFirstFitBandwidth, ProportionalShare, Sjf, Tetris, Tiresias,
};
use dmlsched::model::*;
use dmlsched::placement::PlacementRule;
use dmlsched::schedule::{Tasks, verify};
use dmlsched::sim::{Decisions, Policy, SimOptions, SimResult, simulate};
use dmlsched::timing::ProgressMode;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

// ---------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------

/// A parameter-server job with `gradient_bytes = 0`, so one iteration of
/// `w` workers takes exactly `tc` seconds and does `w` mini-batches of the
/// `work` in total. The NIC demands are set to 10⁻³ B/s per worker and
/// 1 B/s per PS (the timing model needs positive bandwidths; the ratio
/// makes `ps_for` 1, and the shares are negligible against 10¹⁰ B/s).
fn ps_job(
    id: u32,
    arrival_s: f64,
    work: u32,
    tc: f64,
    max_workers: u32,
    mut worker: Resources,
    mut ps: Resources,
) -> Job {
    worker.nic_bps = 1e-3;
    ps.nic_bps = 1.0;
    common::job(
        id,
        arrival_s,
        PsJob {
            worker,
            ps,
            max_workers,
            ..common::ps_job(work, tc)
        },
    )
}

/// One GPU and one CPU per worker, one CPU per PS.
fn gpu_worker() -> Resources {
    Resources::zero().gpus(1.0).cpu_cores(1.0)
}

fn small_ps() -> Resources {
    Resources::zero().cpu_cores(1.0)
}

/// A simple PS job: `max_workers` one-GPU workers, `tc` = 1 s.
fn simple(id: u32, arrival_s: f64, work: u32, max_workers: u32) -> Job {
    ps_job(
        id,
        arrival_s,
        work,
        1.0,
        max_workers,
        gpu_worker(),
        small_ps(),
    )
}

/// One machine with `gpus` GPUs and `cpus` CPUs.
fn one_machine(gpus: f64, cpus: f64) -> Cluster {
    Cluster::homogeneous(
        1,
        Resources::zero()
            .gpus(gpus)
            .cpu_cores(cpus)
            .memory(64e9)
            .nic(1e10),
        1e10,
    )
}

fn instance(cluster: Cluster, jobs: Vec<Job>) -> Instance {
    Instance::new(cluster, jobs, 10.0, 1000).unwrap()
}

fn run<P: Policy + ?Sized>(inst: &Instance, policy: &mut P, decisions: Decisions) -> SimResult {
    let mut opts = SimOptions::default();
    opts.decisions = decisions;
    simulate(inst, policy, &opts).unwrap()
}

fn events() -> Decisions {
    Decisions::EventDriven { ticks: false }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

#[track_caller]
fn assert_times(r: &SimResult, job: usize, start: f64, finish: f64) {
    let rec = &r.jobs[job];
    assert!(
        close(rec.start_s, start) && close(rec.finish_s, finish),
        "job {job}: start {:?} finish {:?}, expected {start} and {finish}",
        rec.start_s,
        rec.finish_s
    );
}

/// Workers of `job` in the allocation that covers time `t`.
fn workers_at(r: &SimResult, job: u32, t: f64) -> u32 {
    r.allocations
        .iter()
        .filter(|a| a.job == JobId(job) && a.from_s <= t && t < a.to_s)
        .map(|a| a.placement.total().workers)
        .sum()
}

// ---------------------------------------------------------------------------
// SJF
// ---------------------------------------------------------------------------

/// One 4-GPU machine; every job asks for 4 workers (τ = 1 s, so a job with
/// work `W` runs `W/4` seconds alone).
///
/// * J0 at 0, W = 40 → 0–10.
/// * J1 at 1, W = 400 (100 s); J2 at 2, W = 80 (20 s).
///
/// FIFO: J1 10–110, J2 110–130. SJF at t = 10 ranks J2 (20 s) before J1
/// (100 s): J2 10–30, J1 30–130.
#[test]
fn sjf_runs_the_short_job_first_where_fifo_does_not() {
    let inst = instance(
        one_machine(4.0, 32.0),
        vec![
            simple(0, 0.0, 40, 4),
            simple(1, 1.0, 400, 4),
            simple(2, 2.0, 80, 4),
        ],
    );
    let fifo = run(&inst, &mut Fifo::default(), events());
    assert_times(&fifo, 0, 0.0, 10.0);
    assert_times(&fifo, 1, 10.0, 110.0);
    assert_times(&fifo, 2, 110.0, 130.0);

    for mut sjf in [
        Sjf::default(),
        Sjf {
            backfill: false,
            ..Sjf::default()
        },
    ] {
        let r = run(&inst, &mut sjf, events());
        assert_times(&r, 0, 0.0, 10.0);
        assert_times(&r, 2, 10.0, 30.0);
        assert_times(&r, 1, 30.0, 130.0);
        assert!(r.jobs.iter().all(|j| j.preemptions == 0));
    }
}

/// Backfill: one 4-GPU machine, J0 (4 workers, 10 s) runs from 0.
/// At 1, J1 arrives (4 workers, W = 400: 100 s) and J2 (2 workers, W = 20:
/// 10 s at 2 workers) — J2 is shorter and goes first at 10. Then J3 (1
/// worker, W = 300: 300 s, longest) arrives at 11 while J2 runs: strict
/// SJF ranks J1 before J3 and J1 does not fit beside J2, so J3 waits
/// (J1 20–120, J3 120–420); with backfill J3 starts at 11 beside J2, and
/// J1 waits for J3 (11–311): J1 311–411.
#[test]
fn sjf_backfill_starts_what_fits() {
    let inst = instance(
        one_machine(4.0, 32.0),
        vec![
            simple(0, 0.0, 40, 4),
            simple(1, 1.0, 400, 4),
            simple(2, 1.0, 20, 2),
            simple(3, 11.0, 300, 1),
        ],
    );
    let strict = run(
        &inst,
        &mut Sjf {
            backfill: false,
            ..Sjf::default()
        },
        events(),
    );
    assert_times(&strict, 0, 0.0, 10.0);
    assert_times(&strict, 2, 10.0, 20.0);
    assert_times(&strict, 1, 20.0, 120.0);
    assert_times(&strict, 3, 120.0, 420.0);
    let backfill = run(&inst, &mut Sjf::default(), events());
    assert_times(&backfill, 2, 10.0, 20.0);
    assert_times(&backfill, 3, 11.0, 311.0);
    assert_times(&backfill, 1, 311.0, 411.0);
}

// ---------------------------------------------------------------------------
// Tetris
// ---------------------------------------------------------------------------

/// One machine with 4 GPUs and 16 CPUs (memory and NIC demands are 0, so
/// only GPU and CPU enter the score). τ = 1 s.
///
/// * J0 at 0: 2 workers (1 GPU + 1 CPU each) + 1 PS (1 CPU): (2 GPU, 3 CPU);
///   W = 40 → 0–20.
/// * J1 at 1: the same shape (2, 3), W = 20 (10 s); normalised (0.5, 0.1875).
/// * J2 at 1: 1 worker (1 GPU + 10 CPU) + 1 PS: (1, 11), W = 10 (10 s);
///   normalised (0.25, 0.6875).
///
/// At t = 1 the free vector is (2, 13), normalised (0.5, 0.8125): score(J1)
/// = 0.25 + 0.15234375 = 0.40234375 and score(J2) = 0.125 + 0.55859375 =
/// 0.68359375, so Tetris starts J2 (1–11); J1 then needs 2 GPUs where 1 is
/// free and waits until 11 (11–21). FIFO starts J1 at 1 (1–11) and J2 at 11.
#[test]
fn tetris_starts_the_aligned_job() {
    let cpu_worker = Resources::zero().gpus(1.0).cpu_cores(10.0);
    let inst = instance(
        one_machine(4.0, 16.0),
        vec![
            simple(0, 0.0, 40, 2),
            simple(1, 1.0, 20, 2),
            ps_job(2, 1.0, 10, 1.0, 1, cpu_worker, small_ps()),
        ],
    );
    let t = run(&inst, &mut Tetris::default(), events());
    assert_times(&t, 0, 0.0, 20.0);
    assert_times(&t, 2, 1.0, 11.0);
    assert_times(&t, 1, 11.0, 21.0);
    let f = run(&inst, &mut Fifo::default(), events());
    assert_times(&f, 1, 1.0, 11.0);
    assert_times(&f, 2, 11.0, 21.0);
}

// ---------------------------------------------------------------------------
// DRF
// ---------------------------------------------------------------------------

/// DRF's hand example: two identical jobs on 4 GPUs end with 2
/// workers each. Jobs of up to 4 workers, W = 100, τ = 1 s.
///
/// J0 alone 0–10 with 4 workers: 40 done. From 10 both have 2 workers: J0's
/// last 60 take 30 s (finish 40); J1 does 60 by 40, then runs alone with 4
/// workers: 40 more in 10 s (finish 50).
#[test]
fn drf_splits_evenly_between_identical_jobs() {
    let inst = instance(
        one_machine(4.0, 32.0),
        vec![simple(0, 0.0, 100, 4), simple(1, 10.0, 100, 4)],
    );
    for mut drf in [
        Drf::default(),
        Drf {
            step: 2,
            ..Drf::default()
        },
    ] {
        let r = run(&inst, &mut drf, events());
        assert_times(&r, 0, 0.0, 40.0);
        assert_times(&r, 1, 10.0, 50.0);
        assert_eq!(workers_at(&r, 0, 5.0), 4);
        assert_eq!(workers_at(&r, 0, 20.0), 2);
        assert_eq!(workers_at(&r, 1, 20.0), 2);
        assert_eq!(workers_at(&r, 1, 45.0), 4);
        assert_eq!(r.jobs[0].preemptions, 0);
    }
}

/// DRF equalises *dominant* shares. One machine with 8 GPUs and 4 CPUs;
/// PSs need nothing. J0's workers take 1 GPU + 2 CPUs (dominant: CPU, 1/2
/// per worker), J1's 1 GPU (1/8 per worker). Filling: J0 → 1 (0.5); J1 →
/// 1, 2, 3, 4 (0.5); tie, J0 (earlier) → 2 (1.0: the CPUs are full); J1 →
/// 5, 6 (0.75), then no GPU is left. So J0 gets 2 workers and J1 gets 6.
/// With W = 40 and 120 (τ = 1 s) both finish at 20.
#[test]
fn drf_equalises_dominant_shares() {
    let free_ps = Resources::zero();
    let inst = instance(
        Cluster::homogeneous(
            1,
            Resources::zero()
                .gpus(8.0)
                .cpu_cores(4.0)
                .memory(64e9)
                .nic(1e10),
            1e10,
        ),
        vec![
            ps_job(
                0,
                0.0,
                40,
                1.0,
                8,
                Resources::zero().gpus(1.0).cpu_cores(2.0),
                free_ps,
            ),
            ps_job(1, 0.0, 120, 1.0, 8, Resources::zero().gpus(1.0), free_ps),
        ],
    );
    let r = run(&inst, &mut Drf::default(), events());
    assert_eq!(workers_at(&r, 0, 1.0), 2);
    assert_eq!(workers_at(&r, 1, 1.0), 6);
    assert_times(&r, 0, 0.0, 20.0);
    assert_times(&r, 1, 0.0, 20.0);
}

// ---------------------------------------------------------------------------
// Tiresias
// ---------------------------------------------------------------------------

/// One 4-GPU machine, 10-s slots, threshold T₁ = 40 GPU-s. J0 (4 workers,
/// W = 400: 100 s alone) starts at 0. J1 (4 workers, W = 40: 10 s) arrives
/// at 5, when J0 has 20 GPU-s: both in Q0, J0 first (earlier arrival), J1
/// waits.
///
/// With ticks: at the tick of t = 10 J0 has 40 GPU-s and drops to Q1, so J1
/// (Q0) preempts it: J1 10–20. J0 resumes at 20 with 400 − 40 = 360 left:
/// 90 s, finish 110, one preemption.
///
/// Without ticks the policy's wake-up at 10 s (when J0's service reaches
/// 40 GPU-s) gives the same timeline. With T₁ = 30 the crossing falls inside
/// a slot, at 7.5 s: J1 preempts J0 then; at 15 s J1 reaches 30 GPU-s too,
/// both are in Q1 and the earlier arrival J0 preempts J1: J0 runs 15–107.5
/// (370 left at 4 per second), J1 finishes its last 10 at 107.5–110.
#[test]
fn tiresias_preempts_a_job_that_crossed_the_threshold() {
    let inst = instance(
        one_machine(4.0, 32.0),
        vec![simple(0, 0.0, 400, 4), simple(1, 5.0, 40, 4)],
    );
    let mut t = Tiresias::default();
    t.thresholds = vec![40.0];
    let r = run(
        &inst,
        &mut t.clone(),
        Decisions::EventDriven { ticks: true },
    );
    assert_times(&r, 0, 0.0, 110.0);
    assert_times(&r, 1, 10.0, 20.0);
    assert_eq!(r.jobs[0].preemptions, 1);
    assert_eq!(workers_at(&r, 0, 15.0), 0);
    let r = run(&inst, &mut t.clone(), events());
    assert_times(&r, 0, 0.0, 110.0);
    assert_times(&r, 1, 10.0, 20.0);
    assert_eq!(r.jobs[0].preemptions, 1);
    t.thresholds = vec![30.0];
    let r = run(&inst, &mut t, events());
    assert_times(&r, 0, 0.0, 107.5);
    assert_times(&r, 1, 7.5, 110.0);
    assert_eq!(r.jobs[0].preemptions, 1);
    assert_eq!(r.jobs[1].preemptions, 1);
}

/// Starvation guard. One 4-GPU machine, 10-s slots, T₁ = 40 GPU-s; J0
/// (W = 400) at 0 and J1 (W = 400) at 5, 4 workers each (100 s alone).
///
/// Without the guard: at 10 J0 (40 GPU-s, Q1) is preempted by J1 (Q0).
/// At 20 J1 has 40 GPU-s too: both in Q1, J0 (earlier arrival) takes the
/// machine back and keeps it: J0 20–110 (360 left at 20), J1 110–200.
///
/// With `starve_factor = 2`: J1, paused at 20 after a 10-s run, has waited
/// 2 × 10 s at the tick of 40 and is promoted to Q0 (service counted from
/// 40 GPU-s): it preempts J0 (which ran 20–40) and runs 40–50, when its new
/// service reaches 40 and J0 (paused at 40 after a 20-s run, waited only
/// 10 < 40) wins again. So every 30 s J0 runs 20 s and J1 10 s: J0 0–10
/// (40), 20–40, 50–70, 80–100, 110–130 (4 × 80) and 140–150 (the last 40):
/// done at 150; J1 10–20, 40–50, 70–80, 100–110, 130–140 (5 × 40 = 200),
/// then alone 150–200 for the other 200.
#[test]
fn tiresias_starvation_guard_promotes_a_waiting_job() {
    let inst = instance(
        one_machine(4.0, 32.0),
        vec![simple(0, 0.0, 400, 4), simple(1, 5.0, 400, 4)],
    );
    let mut t = Tiresias::default();
    t.thresholds = vec![40.0];
    let ticks = Decisions::EventDriven { ticks: true };
    let plain = run(&inst, &mut t.clone(), ticks);
    assert_times(&plain, 0, 0.0, 110.0);
    assert_times(&plain, 1, 10.0, 200.0);
    assert_eq!(workers_at(&plain, 1, 45.0), 0);
    assert_eq!(plain.jobs[0].preemptions + plain.jobs[1].preemptions, 2);

    t.starve_factor = Some(2.0);
    let guarded = run(&inst, &mut t, ticks);
    for (job, t, w) in [
        (0, 35.0, 4),
        (1, 45.0, 4),
        (0, 45.0, 0),
        (0, 55.0, 4),
        (1, 75.0, 4),
        (0, 85.0, 4),
        (1, 105.0, 4),
        (0, 115.0, 4),
        (1, 135.0, 4),
        (0, 145.0, 4),
        (1, 155.0, 4),
    ] {
        assert_eq!(workers_at(&guarded, job, t), w, "job {job} at {t}");
    }
    assert_times(&guarded, 0, 0.0, 150.0);
    assert_times(&guarded, 1, 10.0, 200.0);
}

/// A preempted rigid gang resumes only where it ran. Two 2-GPU machines,
/// T₁ = 40 GPU-s, 10-s slots with ticks; 2-worker jobs run at 2 mini-batches
/// per second, 4-worker ones at 4.
///
/// * J0 (2 workers, W = 400) starts at 0 on machine 0 and is in Q1 from the
///   tick of 20 (40 GPU-s).
/// * J1 (4 workers, W = 40) arrives at 25 in Q0: it needs both machines,
///   so J0 is preempted (50 done, 350 left); J1 runs 25–35.
/// * J2 (2 workers, W = 40) arrives at 30 and waits; at 35 it starts (Q0
///   first) on machine 0, the first that holds it.
///
/// A rigid preemptible J0 may only resume on machine 0: it waits for J2
/// (35–55) and runs 55–230. An elastic J0 resumes at 35 on machine 1 and
/// finishes at 210.
#[test]
fn tiresias_resumes_a_rigid_gang_where_it_ran() {
    let two = Cluster::homogeneous(
        2,
        Resources::zero()
            .gpus(2.0)
            .cpu_cores(16.0)
            .memory(64e9)
            .nic(1e10),
        1e10,
    );
    let jobs = |d: Discipline| {
        vec![
            simple(0, 0.0, 400, 2).with_discipline(d),
            simple(1, 25.0, 40, 4),
            simple(2, 30.0, 40, 2),
        ]
    };
    let mut t = Tiresias::default();
    t.thresholds = vec![40.0];
    let ticks = Decisions::EventDriven { ticks: true };
    let rigid = Discipline {
        elasticity: Elasticity::Rigid,
        preemptible: true,
    };
    let r = run(&instance(two.clone(), jobs(rigid)), &mut t.clone(), ticks);
    assert_times(&r, 1, 25.0, 35.0);
    assert_times(&r, 2, 35.0, 55.0);
    assert_times(&r, 0, 0.0, 230.0);
    assert!(
        r.allocations
            .iter()
            .filter(|a| a.job == JobId(0))
            .all(|a| a.placement == vec![(MachineId(0), Tasks::new(2, 1))])
    );
    let r = run(&instance(two, jobs(Discipline::ELASTIC)), &mut t, ticks);
    assert_times(&r, 0, 0.0, 210.0);
    assert_eq!(workers_at(&r, 0, 40.0), 2);
}

// ---------------------------------------------------------------------------
// FIFO-FF with reserved bandwidth
// ---------------------------------------------------------------------------

/// A ring-all-reduce job with `gpus` workers, τ = 1 s (model bytes 0 and no
/// per-server overhead in [`ring_cluster`]), `iterations` iterations.
fn ring_job(id: u32, arrival_s: f64, gpus: u32, iterations: u64, b: Option<f64>) -> Job {
    Job::new(
        JobId(id),
        arrival_s,
        Architecture::RingAllReduce(RarJob {
            workers: WorkerCounts::Fixed(gpus),
            iterations,
            convergence_iterations: None,
            model_bytes: 0.0,
            minibatch_size: 1,
            forward_per_sample_s: 0.0,
            backward_per_iteration_s: 1.0,
            reserved_bandwidth_bps: b,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
        }),
    )
}

/// `n` servers with 2 GPUs and a 10 GB/s NIC (per direction) each.
fn ring_cluster(n: u32) -> Cluster {
    let mut c = Cluster::homogeneous(
        n,
        Resources::zero()
            .gpus(2.0)
            .cpu_cores(16.0)
            .memory(64e9)
            .nic(10e9),
        1e10,
    );
    c.ring.overhead_per_server_s = 0.0;
    c
}

/// Two 2-GPU servers. J0 needs 4 GPUs (two servers) and reserves 20 GB/s
/// per ring edge, more than any NIC has: it never starts. J1 (2 GPUs, one
/// server) arrives at 1, 10 iterations. Strict FIFO: J1 is blocked behind
/// J0 and the run stalls; with backfill J1 runs 1–11 on GPUs 0 and 1 of
/// server 0.
#[test]
fn ff_bandwidth_refuses_a_ring_without_nic() {
    let inst = instance(
        ring_cluster(2),
        vec![
            ring_job(0, 0.0, 4, 10, Some(20e9)),
            ring_job(1, 1.0, 2, 10, None),
        ],
    );
    let strict = run(&inst, &mut FifoFirstFitBandwidth::default(), events());
    assert!(strict.stalled);
    assert!(strict.jobs.iter().all(|j| j.start_s.is_none()));
    let backfill = run(
        &inst,
        &mut FifoFirstFitBandwidth { backfill: true },
        events(),
    );
    assert!(backfill.stalled);
    assert_eq!(backfill.jobs[0].start_s, None);
    assert_times(&backfill, 1, 1.0, 11.0);
    let a = &backfill.allocations[0];
    assert_eq!(a.placement, vec![(MachineId(0), Tasks::new(2, 0))]);
    let ids: Vec<u32> = a.gpus.iter().flatten().map(|g| g.index).collect();
    assert_eq!(ids, vec![0, 1]);
}

/// Three 2-GPU servers with 10 GB/s NICs. J0 (3 GPUs, b = 6 GB/s) at 0: no
/// server has 3 GPUs, so it takes server 0's two and server 1's one,
/// reserving 6 GB/s each way on both. J1 (3 GPUs, b = 6 GB/s) at 1: server
/// 0 is full, server 1 has a GPU but only 4 GB/s of NIC left, server 2
/// gives two GPUs — not enough, so J1 waits although 3 GPUs are free, and
/// starts when J0 completes at 10 (10–20). Without a reservation J1 starts
/// at 1 on servers 1 and 2 (1–11).
#[test]
fn ff_bandwidth_reservation_blocks_a_second_ring() {
    let jobs = |b1| {
        vec![
            ring_job(0, 0.0, 3, 10, Some(6e9)),
            ring_job(1, 1.0, 3, 10, b1),
        ]
    };
    let r = run(
        &instance(ring_cluster(3), jobs(Some(6e9))),
        &mut FifoFirstFitBandwidth::default(),
        events(),
    );
    assert_times(&r, 0, 0.0, 10.0);
    assert_times(&r, 1, 10.0, 20.0);
    let j0 = r.allocations.iter().find(|a| a.job == JobId(0)).unwrap();
    assert_eq!(
        j0.placement,
        vec![
            (MachineId(0), Tasks::new(2, 0)),
            (MachineId(1), Tasks::new(1, 0))
        ]
    );
    let ids: Vec<(u32, u32)> = j0
        .gpus
        .iter()
        .flatten()
        .map(|g| (g.machine.0, g.index))
        .collect();
    assert_eq!(ids, vec![(0, 0), (0, 1), (1, 0)]);

    let r = run(
        &instance(ring_cluster(3), jobs(None)),
        &mut FifoFirstFitBandwidth::default(),
        events(),
    );
    assert_times(&r, 1, 1.0, 11.0);
    let j1 = r.allocations.iter().find(|a| a.job == JobId(1)).unwrap();
    assert_eq!(
        j1.placement,
        vec![
            (MachineId(1), Tasks::new(1, 0)),
            (MachineId(2), Tasks::new(2, 0))
        ]
    );
    let ids: Vec<(u32, u32)> = j1
        .gpus
        .iter()
        .flatten()
        .map(|g| (g.machine.0, g.index))
        .collect();
    assert_eq!(ids, vec![(1, 1), (2, 0), (2, 1)]);
}

// ---------------------------------------------------------------------------
// Proportional share
// ---------------------------------------------------------------------------

/// Equal budgets split 4 GPUs 2/2; budgets 3:1 (weights, `weighted`) split
/// them 3/1. W = 100 each, τ = 1 s, up to 4 workers.
///
/// * Equal: J0 alone 0–10 (40 done); 2/2 until J0's last 60 are done at
///   40; J1 did 60 by then and finishes its last 40 alone at 50.
/// * 3:1: J0 (weight 3) 0–10 (40 done), then 3 workers: 60 in 20 s, finish
///   30; J1 (weight 1) 1 worker 10–30 (20 done), then 4: 80 in 20 s,
///   finish 50.
#[test]
fn proportional_share_follows_budgets() {
    let equal = instance(
        one_machine(4.0, 32.0),
        vec![simple(0, 0.0, 100, 4), simple(1, 10.0, 100, 4)],
    );
    let r = run(&equal, &mut ProportionalShare::default(), events());
    assert_times(&r, 0, 0.0, 40.0);
    assert_times(&r, 1, 10.0, 50.0);
    assert_eq!(workers_at(&r, 0, 20.0), 2);
    assert_eq!(workers_at(&r, 1, 20.0), 2);

    let weighted = instance(
        one_machine(4.0, 32.0),
        vec![
            simple(0, 0.0, 100, 4).with_weight(3.0),
            simple(1, 10.0, 100, 4).with_weight(1.0),
        ],
    );
    let mut p = ProportionalShare {
        weighted: true,
        ..ProportionalShare::default()
    };
    let r = run(&weighted, &mut p, events());
    assert_times(&r, 0, 0.0, 30.0);
    assert_times(&r, 1, 10.0, 50.0);
    assert_eq!(workers_at(&r, 0, 20.0), 3);
    assert_eq!(workers_at(&r, 1, 20.0), 1);
    // Unweighted, the weights do not matter.
    let r = run(&weighted, &mut ProportionalShare::default(), events());
    assert_eq!(workers_at(&r, 0, 20.0), 2);
    // A huge finite budget splits as a small one.
    let mut huge = ProportionalShare {
        budget: 1e300,
        weighted: true,
        ..ProportionalShare::default()
    };
    let r = run(&weighted, &mut huge, events());
    assert_eq!(workers_at(&r, 0, 20.0), 3);
    assert_eq!(workers_at(&r, 1, 20.0), 1);
}

/// Unused shares are offered again: J0 may use 1 worker only, so of its
/// 2-GPU share one GPU returns to the machine and J1 (up to 4) gets 3.
/// W = 30 each, τ = 1: J1 finishes at 10 with 3 workers; J0 at 30.
#[test]
fn proportional_share_reoffers_unused_gpus() {
    let inst = instance(
        one_machine(4.0, 32.0),
        vec![simple(0, 0.0, 30, 1), simple(1, 0.0, 30, 4)],
    );
    let r = run(&inst, &mut ProportionalShare::default(), events());
    assert_eq!(workers_at(&r, 0, 1.0), 1);
    assert_eq!(workers_at(&r, 1, 1.0), 3);
    assert_times(&r, 1, 0.0, 10.0);
    assert_times(&r, 0, 0.0, 30.0);
}

/// Two 4-GPU machines; two jobs of up to 4 workers (W = 400, τ = 1) at 0.
/// Each machine's GPUs are split 2/2, so the market pays each job for 4
/// workers; where they go is the placement rule's: best fit puts each
/// job's 4 on one machine (J0, the earlier, on machine 0), round robin
/// spreads them over both. Both finish at 100.
#[test]
fn proportional_share_places_paid_workers_by_the_rule() {
    let cluster = Cluster::homogeneous(
        2,
        Resources::zero()
            .gpus(4.0)
            .cpu_cores(32.0)
            .memory(64e9)
            .nic(1e10),
        1e10,
    );
    let inst = instance(
        cluster,
        vec![simple(0, 0.0, 400, 4), simple(1, 0.0, 400, 4)],
    );
    // (machine, workers) of the job's allocation at t = 1.
    let workers_on = |r: &SimResult, job: u32| -> Vec<(u32, u32)> {
        r.allocations
            .iter()
            .filter(|a| a.job == JobId(job) && a.from_s <= 1.0 && 1.0 < a.to_s)
            .flat_map(|a| a.placement.iter())
            .filter(|(_, t)| t.workers > 0)
            .map(|(m, t)| (m.0, t.workers))
            .collect()
    };
    let r = run(&inst, &mut ProportionalShare::default(), events());
    assert_eq!(workers_on(&r, 0), vec![(0, 4)]);
    assert_eq!(workers_on(&r, 1), vec![(1, 4)]);
    assert_times(&r, 0, 0.0, 100.0);
    assert_times(&r, 1, 0.0, 100.0);

    let mut spread = ProportionalShare {
        placement: PlacementRule::RoundRobin,
        ..ProportionalShare::default()
    };
    let r = run(&inst, &mut spread, events());
    for job in [0, 1] {
        let on = workers_on(&r, job);
        assert_eq!(on.len(), 2, "job {job}: {on:?}");
        assert_eq!(on.iter().map(|(_, w)| w).sum::<u32>(), 4);
    }
}

/// A share pays only for workers the machine's other resources hold, and
/// the GPUs it cannot pay for are offered again. One machine, 4 GPUs, 4
/// CPUs; every PS needs no CPU.
///
/// * J2 at 0 (1 worker of 1 GPU + 2 CPUs, not preemptible, W = 50) runs
///   0–50 and keeps its allocation.
/// * J0 (up to 2 workers of 1 GPU + 2 CPUs, W = 300) and J1 (up to 4
///   workers of 1 GPU and no CPU, W = 300) at 1 share the 3 free GPUs:
///   J0's share is 2 (the spare GPU goes to the lower id) but the 2 free
///   CPUs pay for 1 worker; the GPU left is offered again and J1, paid 1
///   in the first round, gets it: J1 runs 2 workers, J0 1. (Paid for 2,
///   J0 would lose one at its placement and leave that GPU idle; J1 would
///   run 1.)
#[test]
fn proportional_share_pays_only_for_workers_that_fit() {
    let two_cpus = Resources::zero().gpus(1.0).cpu_cores(2.0);
    let no_cpu = Resources::zero().gpus(1.0);
    let free_ps = Resources::zero();
    let inst = instance(
        one_machine(4.0, 4.0),
        vec![
            ps_job(0, 1.0, 300, 1.0, 2, two_cpus, free_ps),
            ps_job(1, 1.0, 300, 1.0, 4, no_cpu, free_ps),
            ps_job(2, 0.0, 50, 1.0, 1, two_cpus, free_ps).with_discipline(Discipline {
                elasticity: Elasticity::Elastic,
                preemptible: false,
            }),
        ],
    );
    let r = run(&inst, &mut ProportionalShare::default(), events());
    assert_eq!(workers_at(&r, 2, 10.0), 1);
    assert_eq!(workers_at(&r, 0, 10.0), 1);
    assert_eq!(workers_at(&r, 1, 10.0), 2);
    assert!(r.jobs.iter().all(|j| j.finish_s.is_some()));
}

/// A job whose paid workers fit with none leaves the market and its GPUs
/// go to the others. Two machines of 2 GPUs and 3 CPUs; every PS needs no
/// CPU; all at 0.
///
/// * Shares: each machine's 2 GPUs go 1 each to J0 and J1 (the earliest;
///   J2 gets none): J0 (up to 2 workers of 1 GPU + 1 CPU) is paid 2, J1 (a
///   rigid gang of 2 workers of 1 GPU + 2 CPUs) 2, each with one worker
///   per machine.
/// * Placement, best fit: J0's 2 go on machine 0 (leaving 1 CPU, no GPU);
///   J1 needs 4 CPUs and machine 1 has 3: it fits with none and leaves.
///   Cleared again, J0 and J2 (up to 4 workers of 1 GPU + 1 CPU) are paid
///   2 each: J0 on machine 0, J2 on machine 1. Without the exclusion J2
///   would get nothing while J1's GPUs stayed idle.
#[test]
fn proportional_share_gives_away_what_a_job_cannot_place() {
    let cluster = Cluster::homogeneous(
        2,
        Resources::zero()
            .gpus(2.0)
            .cpu_cores(3.0)
            .memory(64e9)
            .nic(1e10),
        1e10,
    );
    let two_cpus = Resources::zero().gpus(1.0).cpu_cores(2.0);
    let free_ps = Resources::zero();
    let inst = instance(
        cluster,
        vec![
            ps_job(0, 0.0, 400, 1.0, 2, gpu_worker(), free_ps),
            ps_job(1, 0.0, 100, 1.0, 2, two_cpus, free_ps).with_discipline(Discipline::RIGID_GANG),
            ps_job(2, 0.0, 400, 1.0, 4, gpu_worker(), free_ps),
        ],
    );
    let r = run(&inst, &mut ProportionalShare::default(), events());
    assert_eq!(workers_at(&r, 0, 1.0), 2);
    assert_eq!(workers_at(&r, 1, 1.0), 0);
    assert_eq!(workers_at(&r, 2, 1.0), 2);
    assert!(r.jobs.iter().all(|j| j.finish_s.is_some()));
}

// ---------------------------------------------------------------------------
// Random instances
// ---------------------------------------------------------------------------

/// A random instance: 4 machines with 4 GPUs each, ~30 jobs mixing
/// parameter-server jobs (all four disciplines) and ring-all-reduce jobs
/// (some with reserved bandwidth, some elastic with allowed counts).
fn random_instance(seed: u64, jobs: u32) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cluster = Cluster::homogeneous(
        4,
        Resources::zero()
            .gpus(4.0)
            .cpu_cores(16.0)
            .memory(128e9)
            .nic(10e9),
        1e11,
    );
    let disciplines = [
        Discipline::ELASTIC,
        Discipline::RIGID_GANG,
        Discipline {
            elasticity: Elasticity::Rigid,
            preemptible: true,
        },
        Discipline {
            elasticity: Elasticity::Elastic,
            preemptible: false,
        },
    ];
    let mut out = Vec::new();
    for id in 0..jobs {
        let arrival = f64::from(rng.random_range(0..200u32)) * 10.0;
        let job = if rng.random_bool(0.6) {
            let max_workers = rng.random_range(1..=8u32);
            Job::new(
                JobId(id),
                arrival,
                Architecture::ParameterServer(PsJob {
                    epochs: 1,
                    data_chunks: max_workers,
                    minibatches_per_chunk: rng.random_range(20..200u32),
                    minibatch_compute_s: f64::from(rng.random_range(1..=5u32)),
                    gradient_bytes: 1e7,
                    worker: Resources::zero()
                        .gpus(1.0)
                        .cpu_cores(2.0)
                        .memory(8e9)
                        .nic(1e8),
                    ps: Resources::zero().cpu_cores(2.0).memory(8e9).nic(2e8),
                    max_workers,
                    max_ps: max_workers.div_ceil(2),
                    ps_at_most_workers: true,
                    sync: SyncMode::Synchronous,
                    layers: None,
                }),
            )
            .with_discipline(disciplines[rng.random_range(0..4usize)])
            .with_weight(f64::from(rng.random_range(1..=3u32)))
        } else {
            let elastic = rng.random_bool(0.3);
            let workers = if elastic {
                WorkerCounts::Allowed(vec![1, 2, 4])
            } else {
                WorkerCounts::Fixed([1, 2, 4, 8][rng.random_range(0..4usize)])
            };
            let b = rng
                .random_bool(0.5)
                .then(|| f64::from(rng.random_range(1..=4u32)) * 1e9);
            let job = Job::new(
                JobId(id),
                arrival,
                Architecture::RingAllReduce(RarJob {
                    workers,
                    iterations: rng.random_range(50..500u64),
                    convergence_iterations: None,
                    model_bytes: 1e8,
                    minibatch_size: 32,
                    forward_per_sample_s: 0.01,
                    backward_per_iteration_s: 0.5,
                    reserved_bandwidth_bps: b,
                    worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(8e9),
                }),
            );
            if elastic {
                job.with_discipline(Discipline::ELASTIC)
            } else {
                job
            }
        };
        out.push(job);
    }
    Instance::new(cluster, out, 60.0, 100_000).unwrap()
}

/// Per-machine use, recomputed from the allocation log at every instant
/// where it changes, never exceeds capacity.
#[track_caller]
fn assert_no_over_allocation(inst: &Instance, r: &SimResult) {
    let mut times: Vec<f64> = r
        .allocations
        .iter()
        .flat_map(|a| [a.from_s, a.to_s])
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    for w in times.windows(2) {
        let mid = 0.5 * (w[0] + w[1]);
        for (p, m) in inst.cluster().machines.iter().enumerate() {
            let mut used = Resources::zero();
            for a in r
                .allocations
                .iter()
                .filter(|a| a.from_s <= mid && mid < a.to_s)
            {
                let job = inst.job(a.job).unwrap();
                for &(mid_m, t) in &a.placement {
                    if mid_m == m.id {
                        used = used.plus(&job.demand_for(t.workers, t.ps));
                    }
                }
            }
            assert!(
                used.fits_in(&m.capacity, 1e-9),
                "{}: machine {p} over capacity at t = {mid}: {used} > {}",
                r.policy,
                m.capacity
            );
        }
    }
}

fn policies() -> Vec<(Box<dyn Policy>, Decisions)> {
    let events = Decisions::EventDriven { ticks: false };
    vec![
        (Box::new(Sjf::default()), events),
        (
            Box::new(Sjf {
                backfill: false,
                ..Sjf::default()
            }),
            events,
        ),
        (Box::new(Tetris::default()), events),
        (Box::new(Drf::default()), events),
        (
            Box::new(Drf {
                step: 2,
                ..Drf::default()
            }),
            events,
        ),
        (
            Box::new(Tiresias::default()),
            Decisions::EventDriven { ticks: true },
        ),
        (
            Box::new({
                let mut t = Tiresias::default();
                t.thresholds = vec![600.0, 6000.0];
                t.starve_factor = Some(2.0);
                t
            }),
            Decisions::EventDriven { ticks: true },
        ),
        (Box::new(FifoFirstFitBandwidth::default()), events),
        (Box::new(FifoFirstFitBandwidth { backfill: true }), events),
        (Box::new(ProportionalShare::default()), events),
        (
            Box::new(ProportionalShare {
                weighted: true,
                ..ProportionalShare::default()
            }),
            events,
        ),
    ]
}

fn zeroed(mut r: SimResult) -> SimResult {
    r.decision_time_s = 0.0;
    r
}

#[test]
fn random_instances_complete_within_capacity_and_are_deterministic() {
    for seed in 0..3 {
        let inst = random_instance(seed, 30);
        for (mut policy, decisions) in policies() {
            let mut opts = SimOptions::default();
            opts.decisions = decisions;
            let r = simulate(&inst, &mut policy, &opts)
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", policy.name()));
            assert!(!r.stalled, "{} seed {seed} stalled", r.policy);
            assert!(
                r.jobs.iter().all(|j| j.finish_s.is_some()),
                "{} seed {seed}: unfinished jobs",
                r.policy
            );
            assert_no_over_allocation(&inst, &r);
            // The same policy value again (its memory must not leak between
            // runs), and a fresh one: identical results.
            let again = simulate(&inst, &mut policy, &opts).unwrap();
            assert_eq!(zeroed(r.clone()), zeroed(again), "{} seed {seed}", r.policy);
        }
        for ((mut a, decisions), (mut b, _)) in policies().into_iter().zip(policies()) {
            let mut opts = SimOptions::default();
            opts.decisions = decisions;
            let ra = simulate(&inst, &mut a, &opts).unwrap();
            let rb = simulate(&inst, &mut b, &opts).unwrap();
            assert_eq!(zeroed(ra), zeroed(rb));
        }
    }
}

/// With decisions at slot boundaries and whole iterations per slot, every
/// allocation starts and ends on a slot boundary, so the run converts
/// exactly to a schedule that [`verify`] accepts.
#[test]
fn random_instances_verify_at_slot_boundaries() {
    for seed in 10..13 {
        let inst = random_instance(seed, 30);
        for (mut policy, _) in policies() {
            let mut opts = SimOptions::default();
            opts.decisions = Decisions::SlotBoundaries;
            opts.progress = ProgressMode::Floor;
            let r = simulate(&inst, &mut policy, &opts)
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", policy.name()));
            assert!(!r.stalled, "{} seed {seed} stalled", r.policy);
            assert!(
                r.jobs.iter().all(|j| j.finish_s.is_some()),
                "{} seed {seed}: unfinished jobs",
                r.policy
            );
            assert_no_over_allocation(&inst, &r);
            let schedule = r.to_schedule(&inst);
            verify(&inst, &schedule).unwrap_or_else(|v| panic!("{} seed {seed}: {v}", r.policy));
        }
    }
}
