//! The SMD-style scheduler at the epoch level (placement, sticky
//! allocations, typed errors) and as a simulator policy (the queue
//! window). The invariants of simulated runs against each job's standalone
//! time read the crate-private candidate generation: they are unit tests
//! (`src/algorithms/smd/tests_internal.rs`).

use dmlsched::algorithms::smd::*;
#[cfg(feature = "highs")]
use dmlsched::algorithms::{Algorithm, Solved};
use dmlsched::model::*;
use dmlsched::schedule::{Placement, Tasks};
use dmlsched::sim::{SimOptions, simulate};
#[cfg(feature = "highs")]
use rand::SeedableRng;
#[cfg(feature = "highs")]
use rand::rngs::ChaCha8Rng;

/// A layered job of `layers` equal layers (`f`, `2f` ms, `mb` MB each).
fn layered(id: u32, arrival: f64, minibatches: u32, max_workers: u32, f_ms: f64, mb: f64) -> Job {
    let layers = (0..3)
        .map(|_| Layer {
            forward_s: f_ms * 1e-3,
            backward_s: 2.0 * f_ms * 1e-3,
            bytes: mb * 1e6,
            update_s: 0.0,
        })
        .collect();
    let ps = PsJob {
        epochs: 1,
        data_chunks: 1,
        minibatches_per_chunk: minibatches,
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(1e9),
        ps: Resources::zero().cpu_cores(4.0).nic(1e9),
        max_workers,
        max_ps: max_workers.div_ceil(2).max(1),
        sync: SyncMode::Synchronous,
        layers: Some(layers),
        ..PsJob::default()
    };
    let mut j = Job::new(JobId(id), arrival, ps);
    j.reconfiguration_s = 1.0;
    j
}

fn cluster(machines: u32, gpus: f64, cpus: f64) -> Cluster {
    let cap = Resources::zero().gpus(gpus).cpu_cores(cpus).nic(1e11);
    Cluster::homogeneous(machines, cap, 1e11)
}

fn params() -> SmdParams {
    if cfg!(feature = "highs") {
        SmdParams::default()
    } else {
        {
            let mut built = SmdParams::default();
            built.selection = Selection::Greedy;
            built
        }
    }
}

fn free_of(inst: &Instance) -> Vec<Resources> {
    inst.cluster().machines.iter().map(|m| m.capacity).collect()
}

#[test]
fn placement_that_fails_downgrades_and_voids_the_guarantee() {
    // Two machines of 1 GPU and 5 cores; a worker takes 1 GPU and 3 cores,
    // a PS 4 cores. The aggregate (2 GPUs, 10 cores) holds (2, 1), but no
    // machine has 4 cores left after its worker: (2, 1) is downgraded to
    // (1, 1) (worker on machine 0, PS on machine 1).
    let mut job = layered(0, 0.0, 100_000, 2, 20.0, 0.1);
    if let Architecture::ParameterServer(ps) = &mut job.architecture {
        ps.worker = Resources::zero().gpus(1.0).cpu_cores(3.0).nic(1e9);
        ps.max_ps = 1;
    }
    let inst = Instance::new(cluster(2, 1.0, 5.0), vec![job], 60.0, 100).unwrap();
    let jobs = vec![EpochJob::waiting(JobId(0), 100_000.0)];
    let out = epoch(&inst, &free_of(&inst), &jobs, &params()).unwrap();
    let d = &out.decisions[0];
    assert_eq!(d.planned, Some((2, 1)));
    assert_eq!(d.config, Some((1, 1)));
    assert_eq!(
        d.placement,
        Placement::from(vec![
            (MachineId(0), Tasks::new(1, 0)),
            (MachineId(1), Tasks::new(0, 1))
        ])
    );
    let r = &out.report;
    assert!(r.placement_adjusted);
    assert_eq!(r.downgraded, vec![JobId(0)]);
    for g in &r.certificate.guarantees {
        assert!(!g.valid);
        assert_eq!(g.reasons, vec!["placement adjusted".to_string()]);
    }
    assert_eq!(
        r.certificate.guarantees.is_empty(),
        cfg!(not(feature = "highs"))
    );
    r.check(1e-9).unwrap();
    assert!(r.certificate.objective > r.planned_objective);
}

#[test]
fn unchanged_configurations_keep_their_placement() {
    let inst = Instance::new(
        cluster(2, 4.0, 32.0),
        vec![layered(0, 0.0, 100_000, 2, 20.0, 1.0)],
        60.0,
        100,
    )
    .unwrap();
    // Running (2, 1) on machine 1; with capacity for only that much, the
    // plan keeps (2, 1) and the placement stays on machine 1.
    let placement = Placement::from(vec![(MachineId(1), Tasks::new(2, 1))]);
    let e = EpochJob {
        job: JobId(0),
        remaining_work: 100_000.0,
        placement: placement.clone(),
    };
    assert_eq!(e.current(), Some((2, 1)));
    let out = epoch(&inst, &free_of(&inst), &[e], &params()).unwrap();
    let d = &out.decisions[0];
    assert_eq!(d.config, Some((2, 1)));
    assert_eq!(d.placement, placement);
    out.report.check(1e-9).unwrap();
    assert!(!out.report.placement_adjusted);
    // Waiting, the same job is placed by first fit on machine 0.
    let out = epoch(
        &inst,
        &free_of(&inst),
        &[EpochJob::waiting(JobId(0), 100_000.0)],
        &params(),
    )
    .unwrap();
    assert_eq!(out.decisions[0].placement[0].0, MachineId(0));
}

#[test]
fn non_preemptible_running_jobs_keep_their_allocation() {
    // Job 0 (long, non-preemptible) starts alone; jobs 1 and 2 arrive later
    // and are shorter: the scheduler may not move, resize or pause job 0.
    let mut long = layered(0, 0.0, 200_000, 4, 20.0, 1.0);
    long.discipline.preemptible = false;
    let jobs = vec![
        long,
        layered(1, 10.0, 2_000, 4, 20.0, 1.0),
        layered(2, 20.0, 2_000, 4, 20.0, 1.0),
    ];
    let inst = Instance::new(cluster(2, 4.0, 32.0), jobs, 60.0, 100_000).unwrap();
    let mut smd = SmdScheduler::new(params());
    let r = simulate(&inst, &mut smd, &SimOptions::default()).unwrap();
    assert!(r.jobs.iter().all(|j| j.finish_s.is_some()));
    assert_eq!((r.jobs[0].preemptions, r.jobs[0].reconfigurations), (0, 0));
    let allocations: Vec<_> = r.allocations.iter().filter(|a| a.job == JobId(0)).collect();
    assert_eq!(allocations.len(), 1, "{allocations:?}");
    for rep in smd.reports() {
        rep.check(1e-9).unwrap();
    }
    // Its arrival epoch decided it alone; later epochs left it out.
    assert!(smd.reports().len() >= 5);
}

#[test]
fn bad_epochs_are_typed_errors() {
    let ring = Job::new(JobId(1), 0.0, RarJob::default());
    let plain = Job::new(JobId(2), 0.0, PsJob::default());
    let inst = Instance::new(
        cluster(1, 4.0, 32.0),
        vec![layered(0, 0.0, 100, 2, 5.0, 1.0), ring, plain],
        60.0,
        100,
    )
    .unwrap();
    let free = free_of(&inst);
    let p = params();
    let ok = EpochJob::waiting(JobId(0), 100.0);
    let one = [ok.clone()];
    let err = |jobs: &[EpochJob], free: &[Resources], p: &SmdParams| {
        epoch(&inst, free, jobs, p).unwrap_err()
    };
    for bad in [f64::NAN, -1.0, f64::INFINITY] {
        let e = err(&[EpochJob::waiting(JobId(0), bad)], &free, &p);
        assert!(matches!(e, SmdError::InvalidInput { .. }), "{e}");
    }
    assert!(matches!(err(&one, &[], &p), SmdError::InvalidInput { .. }));
    let nan = vec![Resources::zero().gpus(f64::NAN)];
    assert!(matches!(err(&one, &nan, &p), SmdError::InvalidInput { .. }));
    let twice = [ok.clone(), ok.clone()];
    assert!(matches!(
        err(&twice, &free, &p),
        SmdError::InvalidInput { .. }
    ));
    let unknown = EpochJob::waiting(JobId(9), 1.0);
    assert!(matches!(
        err(&[unknown], &free, &p),
        SmdError::InvalidInput { .. }
    ));
    for id in [1, 2] {
        let e = err(&[EpochJob::waiting(JobId(id), 1.0)], &free, &p);
        assert!(matches!(e, SmdError::UnsupportedJob { .. }), "{e}");
    }
    let beta = {
        let mut built = p;
        built.wait_charge = WaitCharge::Parametric { beta: f64::NAN };
        built
    };
    assert!(matches!(
        err(&one, &free, &beta),
        SmdError::InvalidOption { .. }
    ));
    // A candidate guard.
    let mut tiny = p;
    tiny.max_candidates_per_job = 1;
    assert!(matches!(err(&one, &free, &tiny), SmdError::TooLarge { .. }));
}

#[cfg(all(feature = "highs", feature = "serde"))]
#[path = "../benches/common/mod.rs"]
mod bench_common;

/// The queue window bounds every epoch's program at `d + window` rows past
/// `window` active jobs, where the whole queue gives larger programs; the
/// run stays checked (schedule verified, every certificate checked). Fails
/// if the window is not applied (the 200-job run's queue exceeds 32 jobs).
#[cfg(all(feature = "highs", feature = "serde"))]
#[test]
fn the_queue_window_bounds_the_epoch_program() {
    let inst = bench_common::grown_example("instance_layered.json", 200);
    let rows = |run: &Solved<SmdReport>| {
        run.report
            .epochs
            .iter()
            .map(|r| r.lp_rows)
            .max()
            .unwrap_or(0)
    };
    let whole = Smd::new(SmdParams::default())
        .and_then(|smd| smd.solve(&inst, &mut ChaCha8Rng::seed_from_u64(0)))
        .expect("whole queue");
    let windowed = Smd::new({
        let mut built = SmdParams::default();
        built.window = Some(DEFAULT_WINDOW);
        built
    })
    .and_then(|smd| smd.solve(&inst, &mut ChaCha8Rng::seed_from_u64(0)))
    .expect("window");
    let d = windowed.report.epochs[0].capacity_rows;
    assert!(rows(&whole) > d + DEFAULT_WINDOW, "{}", rows(&whole));
    assert!(rows(&windowed) <= d + DEFAULT_WINDOW, "{}", rows(&windowed));
    assert_eq!(
        windowed.report.completed() + windowed.report.unfinished(),
        inst.jobs().len()
    );
}

/// A window at least the job count never applies: the run is the whole
/// queue's, record for record.
#[cfg(all(feature = "highs", feature = "serde"))]
#[test]
fn a_window_as_large_as_the_queue_changes_nothing() {
    let inst = bench_common::grown_example("instance_layered.json", 40);
    let run = |window| {
        Smd::new({
            let mut built = SmdParams::default();
            built.window = window;
            built
        })
        .and_then(|smd| smd.solve(&inst, &mut ChaCha8Rng::seed_from_u64(0)))
        .expect("run")
    };
    let (whole, wide) = (run(None), run(Some(40)));
    assert_eq!(whole.report.result.jobs, wide.report.result.jobs);
    assert_eq!(whole.schedule, wide.schedule);
}

#[test]
fn an_empty_window_is_an_invalid_option() {
    let mut p = SmdParams::default();
    p.window = Some(0);
    assert!(matches!(
        p.validate(),
        Err(SmdError::InvalidOption { name: "window", .. })
    ));
}
