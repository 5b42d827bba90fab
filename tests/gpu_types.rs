//! GPU types in the simulator's timing: a job on GPUs of several types runs
//! at the pace of its slowest, a PS job's iteration time follows its
//! machine's type, and a cluster of one named type at speed 1 runs exactly
//! as an untyped one.

use dmlsched::baselines::Fifo;
use dmlsched::model::*;
use dmlsched::sim::{SimOptions, SimResult, simulate};

/// `types` machines of 2 GPUs each (untyped when `None`).
fn cluster(types: &[Option<&str>]) -> Cluster {
    let machines = types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let m = Machine::new(
                MachineId(i as u32),
                Resources::zero().gpus(2.0).cpu_cores(8.0).nic(1e10),
                1e11,
            );
            match t {
                Some(t) => m.with_gpu_type(*t),
                None => m,
            }
        })
        .collect();
    let mut named: Vec<&str> = types.iter().flatten().copied().collect();
    named.sort_unstable();
    named.dedup();
    Cluster::new(machines).with_gpu_types(named)
}

/// A 4-worker ring reserving 1 Gbit/s, 100 iterations of `backward_s`.
fn ring(backward_s: f64) -> RarJob {
    RarJob {
        workers: WorkerCounts::Fixed(4),
        iterations: 100,
        model_bytes: 1e6,
        backward_per_iteration_s: backward_s,
        reserved_bandwidth_bps: Some(1.25e8),
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
        ..RarJob::default()
    }
}

fn run(cluster: Cluster, jobs: Vec<Job>) -> SimResult {
    let inst = Instance::new(cluster, jobs, 60.0, 1000).unwrap();
    simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn a_ring_on_a_v100_and_a_k80_runs_at_the_k80s_pace() {
    let typed = run(
        cluster(&[Some("v100"), Some("k80")]),
        vec![
            Job::new(JobId(0), 0.0, ring(0.1))
                .with_gpu_speed("v100", 1.0)
                .with_gpu_speed("k80", 0.25),
        ],
    );
    // The same ring with the k80's compute time, on untyped GPUs.
    let slow = run(
        cluster(&[None, None]),
        vec![Job::new(JobId(0), 0.0, ring(0.4))],
    );
    let fast = run(
        cluster(&[None, None]),
        vec![Job::new(JobId(0), 0.0, ring(0.1))],
    );
    let jct = |r: &SimResult| r.jobs[0].jct_s.unwrap();
    assert!(
        close(jct(&typed), jct(&slow)),
        "{} vs {}",
        jct(&typed),
        jct(&slow)
    );
    assert!(jct(&typed) > 2.0 * jct(&fast));
}

#[test]
fn a_ps_jobs_iteration_time_follows_its_machines_type() {
    let ps = |compute_s| PsJob {
        epochs: 1,
        data_chunks: 1,
        minibatches_per_chunk: 600,
        minibatch_compute_s: compute_s,
        gradient_bytes: 0.0,
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
        ps: Resources::zero().cpu_cores(1.0),
        max_workers: 1,
        max_ps: 1,
        ..PsJob::default()
    };
    for (speed, want) in [(1.0, 0.5), (0.5, 1.0), (2.0, 0.25)] {
        let typed = run(
            cluster(&[Some("k80")]),
            vec![Job::new(JobId(0), 0.0, ps(0.5)).with_gpu_speed("k80", speed)],
        );
        let plain = run(cluster(&[None]), vec![Job::new(JobId(0), 0.0, ps(want))]);
        assert!(
            close(typed.jobs[0].jct_s.unwrap(), plain.jobs[0].jct_s.unwrap()),
            "speed {speed}"
        );
    }
}

#[test]
fn one_named_type_at_speed_one_runs_as_an_untyped_cluster() {
    let jobs = || {
        vec![
            Job::new(JobId(0), 0.0, ring(0.1)),
            Job::new(JobId(1), 30.0, ring(0.2)),
        ]
    };
    let named = run(cluster(&[Some("a100"), Some("a100")]), jobs());
    let plain = run(cluster(&[None, None]), jobs());
    assert_eq!(named.jobs, plain.jobs);
    assert_eq!(named.allocations, plain.allocations);
}
