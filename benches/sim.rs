//! Simulator benchmark: replay 5,000 Philly jobs (the window starting
//! 2017-11-01, ring-all-reduce recipe, seed 0) on 512 GPUs (64 machines of
//! 8) under FIFO, SJF and Tetris. Target: ≤ 2 s per policy run on a 2-core
//! machine (`docs/benchmarks.md`).
//!
//! A second group, independent of the trace, measures DRF with a long
//! queue: 10,000 parameter-server jobs arriving every 10 ms on 8 machines
//! of 8 GPUs, stopped after 2,000 events (the queue grows to 2,000 jobs),
//! so that a cost per event growing with the square of the queue shows.
//!
//! A third group measures proportional share on
//! `examples/data/instance_layered.json` grown to 300, 1,000 and 3,000
//! jobs (`common::grown_example`: 2 machines of 8 GPUs whose NICs hold one
//! job each, so most paid jobs fit nowhere and leave the market; target
//! ≤ 10 s of CPU at 3,000 jobs, `docs/benchmarks.md`).
//!
//! The trace is read from `$DMLSCHED_TRACES/philly.csv` (default
//! `../shared/traces`); without it the bench prints why and measures
//! nothing.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::baselines;
use dmlsched::model::Instance;
use dmlsched::registry;
use dmlsched::sim::{SimOptions, simulate};
use dmlsched::trace::{ReplayOptions, Window, WindowStart, load, replay_instance, select};

mod common;

fn instance() -> Option<Instance> {
    let dir = std::env::var_os("DMLSCHED_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/traces"));
    let path = dir.join("philly.csv");
    if !path.exists() {
        eprintln!(
            "skipping the sim bench: {} not found (set DMLSCHED_TRACES)",
            path.display()
        );
        return None;
    }
    let rows = load(&path, None).expect("philly.csv loads");
    let window = Window {
        start: Some(WindowStart::Date("2017-11-01".into())),
        jobs: Some(5000),
        ..Window::default()
    };
    let rows = select(&rows, &window).expect("window");
    let mut opts = ReplayOptions::default();
    opts.gpus = 512.into();
    opts.gpus_per_machine = 8;
    Some(replay_instance(&rows, &opts).expect("instance").0)
}

fn bench(c: &mut Criterion) {
    let Some(inst) = instance() else {
        return;
    };
    let mut group = c.benchmark_group("sim_philly_5000_jobs_512_gpus");
    group.sample_size(10);
    for name in ["fifo", "sjf", "tetris"] {
        let make = || registry::by_name(name).expect("a known baseline");
        let r = simulate(&inst, &mut make(), &SimOptions::default()).expect("run");
        let s = r.summary();
        println!(
            "{name}: {} of {} jobs done, avg JCT {:.0} s, p99 {:.0} s, makespan {:.0} s, utilization {:.3}, {} events",
            s.completed,
            s.jobs,
            s.avg_jct_s,
            s.p99_jct_s,
            s.makespan_s,
            s.gpu_utilization,
            r.events
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut p = make();
                black_box(simulate(&inst, &mut p, &SimOptions::default()).expect("run"))
            })
        });
    }
    group.finish();
}

/// The long-queue instance of the DRF group.
fn queue_instance() -> Instance {
    use dmlsched::model::*;
    let cap = Resources::zero()
        .gpus(8.0)
        .cpu_cores(64.0)
        .memory(512e9)
        .nic(1e11);
    let cluster = Cluster::homogeneous(8, cap, 1e10);
    let jobs: Vec<Job> = (0..10_000u32)
        .map(|i| {
            let ps = PsJob {
                epochs: 1,
                data_chunks: 1,
                minibatches_per_chunk: 1000 + (i % 7) * 100,
                minibatch_compute_s: 1.0,
                gradient_bytes: 0.0,
                worker: Resources::zero()
                    .gpus(1.0)
                    .cpu_cores(1.0)
                    .memory(1e9)
                    .nic(1e9),
                ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
                max_workers: 4,
                max_ps: 4,
                ps_at_most_workers: true,
                sync: SyncMode::Synchronous,
                layers: None,
            };
            let arrival = f64::from(i) * 0.01;
            Job::new(JobId(i), arrival, Architecture::ParameterServer(ps))
        })
        .collect();
    Instance::new(cluster, jobs, 60.0, 100_000).expect("queue instance")
}

fn bench_drf_queue(c: &mut Criterion) {
    let inst = queue_instance();
    let mut opts = SimOptions::default();
    opts.max_events = 2_000;
    let mut group = c.benchmark_group("drf_queue_10000_jobs_8_machines");
    group.sample_size(10);
    group.bench_function("drf_2000_events", |b| {
        b.iter(|| {
            let mut p = baselines::Drf::default();
            // The event limit ends the run with a typed error, by design.
            black_box(simulate(&inst, &mut p, &opts).is_err())
        })
    });
    group.finish();
}

/// Without `serde` the grown instances cannot be read from the example
/// files, so there is nothing to measure.
#[cfg(not(feature = "serde"))]
fn bench_proportional_grown(_: &mut Criterion) {}

#[cfg(feature = "serde")]
fn bench_proportional_grown(c: &mut Criterion) {
    let run = |inst: &Instance| {
        let mut p = registry::by_name("proportional").expect("a known baseline");
        simulate(inst, &mut p, &SimOptions::default()).expect("run")
    };
    let mut group = c.benchmark_group("proportional_grown_layered");
    group.sample_size(10);
    for n in [300, 1000, 3000] {
        let inst = common::grown_example("instance_layered.json", n);
        let r = run(&inst);
        println!(
            "proportional_grown_layered/{n}: {} of {n} jobs done, {} events",
            r.summary().completed,
            r.events
        );
        group.bench_function(n.to_string(), |b| b.iter(|| black_box(run(&inst))));
    }
    group.finish();
}

criterion_group!(benches, bench, bench_drf_queue, bench_proportional_grown);
criterion_main!(benches);
