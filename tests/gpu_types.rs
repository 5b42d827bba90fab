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

// ------------------------------------------- the algorithms' one-speed model

/// The shipped instance `name` as it is.
#[cfg(feature = "serde")]
fn untyped(name: &str) -> Instance {
    let path = format!("{}/examples/data/{name}", env!("CARGO_MANIFEST_DIR"));
    Instance::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The shipped instance `name` with its GPU machines alternating between
/// `types` (named by the cluster) and every job at `speeds` (one per type).
#[cfg(feature = "serde")]
fn typed_example(name: &str, types: &[&str], speeds: &[f64]) -> Instance {
    let base = untyped(name);
    let mut cluster = base.cluster().clone();
    let mut k = 0;
    for m in &mut cluster.machines {
        if m.capacity.gpus > 0.0 {
            m.gpu_type = Some(types[k % types.len()].to_string());
            k += 1;
        }
    }
    cluster.gpu_types = types.iter().map(|t| t.to_string()).collect();
    let jobs = base
        .jobs()
        .iter()
        .map(|j| {
            let mut j = j.clone();
            for (t, &s) in types.iter().zip(speeds) {
                j = j.with_gpu_speed(*t, s);
            }
            j
        })
        .collect();
    Instance::new(cluster, jobs, base.slot_length_s(), base.horizon_slots()).unwrap()
}

/// Every algorithm with one compute speed per job refuses a job whose
/// speed differs between the cluster's types, naming the types; with one
/// type at speed 1 it gives exactly its untyped answer.
#[cfg(all(feature = "serde", feature = "highs"))]
#[test]
fn every_algorithm_refuses_mixed_speeds_and_keeps_one_type_answers() {
    use dmlsched::registry;
    let cases = [
        ("oasis", "instance_ps.json"),
        ("locality", "instance_ps.json"),
        ("gadget", "instance_ring.json"),
        ("sjf-bco", "instance_ring_batch.json"),
        ("rar-ff", "instance_ring_batch.json"),
        ("rar-ls", "instance_ring_batch.json"),
        ("rar-rand", "instance_ring_batch.json"),
        ("smd", "instance_layered.json"),
    ];
    for (algorithm, file) in cases {
        let mixed = typed_example(file, &["fast", "slow"], &[1.0, 0.5]);
        let err = registry::solve(algorithm, &mixed, None, 0)
            .map(|_| ())
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("different speeds on the cluster's GPU types (fast, slow)"),
            "{algorithm}: {text}"
        );
        let plain = untyped(file);
        let one = typed_example(file, &["a100"], &[1.0]);
        let (a, b) = (
            registry::solve(algorithm, &plain, None, 0).unwrap(),
            registry::solve(algorithm, &one, None, 0).unwrap(),
        );
        assert_eq!(a.schedule, b.schedule, "{algorithm}");
        assert_eq!(
            a.certificate.objective, b.certificate.objective,
            "{algorithm}"
        );
    }
}

/// One type at speed 1/2 is the untyped job with twice the compute time:
/// the algorithms take the job at its one speed.
#[cfg(all(feature = "serde", feature = "highs"))]
#[test]
fn one_type_at_half_speed_is_twice_the_compute() {
    use dmlsched::registry;
    let slow = typed_example("instance_ring_batch.json", &["k80"], &[0.5]);
    let mut doubled = slow.cluster().clone();
    for m in &mut doubled.machines {
        m.gpu_type = None;
    }
    doubled.gpu_types.clear();
    let jobs = slow
        .jobs()
        .iter()
        .map(|j| {
            let mut j = j.clone();
            j.gpu_speeds.clear();
            if let Architecture::RingAllReduce(r) = &mut j.architecture {
                r.forward_per_sample_s *= 2.0;
                r.backward_per_iteration_s *= 2.0;
            }
            j
        })
        .collect();
    let doubled = Instance::new(doubled, jobs, slow.slot_length_s(), slow.horizon_slots()).unwrap();
    for algorithm in ["sjf-bco", "rar-ff", "gadget"] {
        let a = registry::solve(algorithm, &slow, None, 0).unwrap();
        let b = registry::solve(algorithm, &doubled, None, 0).unwrap();
        assert_eq!(a.schedule, b.schedule, "{algorithm}");
        assert_eq!(
            a.certificate.objective, b.certificate.objective,
            "{algorithm}"
        );
    }
}

/// Every baseline runs on a mixed cluster: placing by its rule, with the
/// simulator's timing at the pace of the slowest GPU type; the schedule
/// passes the checker and jobs start.
#[cfg(feature = "serde")]
#[test]
fn every_baseline_runs_on_a_mixed_cluster() {
    use dmlsched::registry::{BASELINES, RING_BASELINES, by_name};
    use dmlsched::schedule::verify;
    for (file, names) in [
        ("instance_ps.json", BASELINES),
        ("instance_layered.json", BASELINES),
        ("instance_ring.json", RING_BASELINES),
    ] {
        let mixed = typed_example(file, &["fast", "slow"], &[1.0, 0.5]);
        let mut opts = SimOptions::default();
        opts.stop = dmlsched::sim::StopAt::Horizon;
        // Decisions on slot boundaries: the run is an exact slotted schedule.
        opts.decisions = dmlsched::sim::Decisions::SlotBoundaries;
        for name in names {
            let Some(mut policy) = by_name(name) else {
                panic!("{name}: not in the registry")
            };
            let r = match simulate(&mixed, &mut policy, &opts) {
                Ok(r) => r,
                // A policy may refuse the jobs of another architecture;
                // only GADGET's oracle without prices, the scheduler's own
                // model, refuses mixed speeds as the scheduler does.
                Err(e) => {
                    let speeds = e.to_string().contains("different speeds");
                    assert_eq!(speeds, *name == "gadget-noprice", "{name} on {file}: {e}");
                    continue;
                }
            };
            verify(&mixed, &r.to_schedule(&mixed)).unwrap();
            // It starts jobs whenever it does on the untyped cluster.
            let mut again = by_name(name).unwrap();
            let plain = simulate(&untyped(file), &mut again, &opts).unwrap();
            let started = |r: &SimResult| r.jobs.iter().any(|j| j.start_s.is_some());
            assert_eq!(started(&r), started(&plain), "{name} on {file}");
            assert!(
                started(&r) || file == "instance_layered.json",
                "{name} on {file}"
            );
        }
    }
}

// ------------------------------------- one type is the untyped cluster, drawn

mod one_type_property {
    use super::*;
    use dmlsched::registry::{BASELINES, RING_BASELINES, by_name};
    use dmlsched::trace::{GpuMix, RecipeOptions, ReplayOptions, TraceJob, replay_instance};
    use proptest::prelude::*;

    /// Rows of `(arrival, GPUs, duration)`; with `speed`, each row runs at
    /// that speed on type `t` (`None`: the row gives no speed).
    fn rows(draws: &[(f64, u32, f64)], speed: Option<f64>) -> Vec<TraceJob> {
        draws
            .iter()
            .enumerate()
            .map(|(i, &(arrival, gpus, duration))| {
                let mut r = TraceJob::new(format!("r{i}"), arrival, gpus);
                r.duration_s = Some(duration);
                if let Some(s) = speed {
                    r.gpu_speeds.insert("t".into(), s);
                }
                r
            })
            .collect()
    }

    fn instance(rows: &[TraceJob], gpus: GpuMix, ps: bool) -> Instance {
        let mut opts = ReplayOptions::default();
        opts.gpus = gpus;
        opts.gpus_per_machine = 4;
        if ps {
            opts.recipe = RecipeOptions::ps();
        }
        replay_instance(rows, &opts).unwrap().0
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// A cluster of one named type, its jobs at speed 1 (given or
        /// left out), runs every baseline exactly as the untyped cluster:
        /// the same job records and allocations, bit for bit.
        #[test]
        fn one_named_type_at_speed_one_equals_untyped(
            draws in prop::collection::vec((0.0..3000.0f64, 1u32..=8, 60.0..20_000.0f64), 1..12),
            given in any::<bool>(),
            ps in any::<bool>(),
        ) {
            let plain = instance(&rows(&draws, None), GpuMix::Untyped(16), ps);
            let speed = given.then_some(1.0);
            let typed = instance(&rows(&draws, speed), GpuMix::Typed(vec![("t".into(), 16)]), ps);
            prop_assert!(typed.cluster().machines.iter().all(|m| m.gpu_type.as_deref() == Some("t")));
            let names: Vec<&str> = if ps {
                BASELINES.to_vec()
            } else {
                BASELINES.iter().chain(RING_BASELINES).copied().collect()
            };
            // `dorm` needs HiGHS.
            let names: Vec<&str> = names.into_iter().filter(|n| by_name(n).is_some()).collect();
            prop_assert!(names.len() >= BASELINES.len() - 1);
            for name in names {
                let run = |inst: &Instance| {
                    let mut policy = by_name(name).unwrap();
                    simulate(inst, &mut policy, &SimOptions::default()).map_err(|e| e.to_string())
                };
                match (run(&plain), run(&typed)) {
                    (Ok(a), Ok(b)) => {
                        prop_assert_eq!(&a.jobs, &b.jobs, "{}", name);
                        prop_assert_eq!(&a.allocations, &b.allocations, "{}", name);
                    }
                    (a, b) => prop_assert_eq!(a.err(), b.err(), "{}", name),
                }
            }
        }
    }
}
