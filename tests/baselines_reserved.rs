//! Every simulator baseline on workloads with reserving rings: a
//! ring-all-reduce job with a reserved bandwidth `b` whose workers span
//! several machines is charged `b` of NIC on each of them, and every
//! baseline's placement must count it — so no run ends with the simulator
//! refusing an allocation, and every schedule passes `verify`. The
//! baselines are taken from the registry (`registry::BASELINES`), so a new
//! one is covered without touching this file.

use dmlsched::model::*;
use dmlsched::registry;
use dmlsched::schedule::verify;
use dmlsched::sim::{Decisions, SimOptions, simulate};
use dmlsched::timing::ProgressMode;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// What a random workload looks like.
#[derive(Debug, Clone, Copy)]
struct Mix {
    machines: u32,
    gpus: f64,
    nic: f64,
    jobs: usize,
    /// Share of reserving rings; the rest is split evenly between
    /// parameter-server jobs and rings without a reservation.
    reserving: f64,
    /// Range of the reservation `b`, bytes per second per direction.
    b: (f64, f64),
}

/// A ring of at most `most` (≤ 8) workers, reserving `b` if given.
fn ring(rng: &mut ChaCha8Rng, id: u32, arrival_s: f64, b: Option<f64>, nic: f64, most: u32) -> Job {
    let workers = if rng.random_bool(0.5) {
        WorkerCounts::Allowed([1, 2, 4, 8].into_iter().filter(|&w| w <= most).collect())
    } else {
        WorkerCounts::Fixed(rng.random_range(1..=most.min(8)))
    };
    // A worker's own NIC demand, small beside the reservation.
    let worker_nic = if rng.random_bool(0.5) {
        0.0
    } else {
        nic * rng.random_range(0.0..0.1)
    };
    let job = Job::new(
        JobId(id),
        arrival_s,
        RarJob {
            workers,
            iterations: rng.random_range(20..200),
            model_bytes: rng.random_range(1e7..5e8),
            backward_per_iteration_s: rng.random_range(0.05..0.5),
            reserved_bandwidth_bps: b,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(worker_nic),
            ..RarJob::default()
        },
    );
    if rng.random_bool(0.3) {
        job.with_discipline(Discipline::ELASTIC)
    } else {
        job
    }
}

/// A parameter-server job of at most `most` (≤ 6) workers.
fn ps_job(rng: &mut ChaCha8Rng, id: u32, arrival_s: f64, nic: f64, most: u32) -> Job {
    let max_workers = rng.random_range(1..=most.min(6));
    let job = Job::new(
        JobId(id),
        arrival_s,
        PsJob {
            minibatches_per_chunk: rng.random_range(20..200),
            minibatch_compute_s: rng.random_range(0.1..1.0),
            gradient_bytes: rng.random_range(0.0..1e8),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(1.0)
                .nic(nic * rng.random_range(0.05..0.2)),
            ps: Resources::zero()
                .cpu_cores(1.0)
                .nic(nic * rng.random_range(0.1..0.4)),
            max_workers,
            max_ps: rng.random_range(1..=2u32).min(max_workers),
            ..PsJob::default()
        },
    );
    if rng.random_bool(0.3) {
        job.with_discipline(Discipline::RIGID_GANG)
    } else {
        job
    }
}

fn instance(mix: Mix, seed: u64) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cluster = Cluster::homogeneous(
        mix.machines,
        Resources::zero()
            .gpus(mix.gpus)
            .cpu_cores(4.0 * mix.gpus)
            .nic(mix.nic),
        4.0 * mix.nic,
    );
    // Jobs fit the cluster's GPUs.
    let most = (f64::from(mix.machines) * mix.gpus) as u32;
    let jobs = (0..mix.jobs)
        .map(|i| {
            let id = i as u32;
            let arrival_s = rng.random_range(0.0..600.0);
            let u: f64 = rng.random_range(0.0..1.0);
            if u < mix.reserving {
                let b = rng.random_range(mix.b.0..=mix.b.1);
                ring(&mut rng, id, arrival_s, Some(b), mix.nic, most)
            } else if u < mix.reserving + (1.0 - mix.reserving) / 2.0 {
                ring(&mut rng, id, arrival_s, None, mix.nic, most)
            } else {
                ps_job(&mut rng, id, arrival_s, mix.nic, most)
            }
        })
        .collect();
    Instance::new(cluster, jobs, 60.0, 100_000).expect("a valid instance")
}

/// Runs one registered baseline on `inst` twice: in continuous time (the
/// default options), where the run must end without a simulator error, and
/// with decisions and progress at slot boundaries, where besides its
/// schedule is exact and must pass `verify`. A run must end normally; a
/// job left waiting forever (a ring that fits nowhere with its
/// reservation) is a normal end.
fn check(inst: &Instance, name: &str) -> Result<(), String> {
    let mut slotted = SimOptions::default();
    slotted.decisions = Decisions::SlotBoundaries;
    slotted.progress = ProgressMode::Floor;
    for (mode, options) in [("continuous", SimOptions::default()), ("slotted", slotted)] {
        let Some(mut policy) = registry::by_name(name) else {
            return Ok(());
        };
        let r = simulate(inst, &mut policy, &options).map_err(|e| format!("{mode}: {e}"))?;
        verify(inst, &r.to_schedule(inst)).or_else(|v| match mode {
            "slotted" => Err(format!("{mode}: verify: {v}")),
            _ => Ok(()),
        })?;
    }
    Ok(())
}

/// [`check`] for every registered baseline; `Err` names the first failure.
fn check_all(inst: &Instance, what: &str) -> Result<(), String> {
    registry::BASELINES
        .iter()
        .try_for_each(|name| check(inst, name).map_err(|e| format!("{what}: {name}: {e}")))
}

/// The probe that found the missing charge: 20 seeds on 4 machines of 4
/// GPUs with a NIC of 10⁹·10 B/s, 70 % reserving rings with `b` from
/// 2·10⁹ to 5·10⁹. Before the baselines' placement counted reservations,
/// most runs of DRF, proportional share and RRH ended with the simulator
/// refusing an allocation.
#[test]
fn the_probe_of_twenty_seeds_runs_clean() {
    let mix = Mix {
        machines: 4,
        gpus: 4.0,
        nic: 10e9,
        jobs: 16,
        reserving: 0.7,
        b: (2e9, 5e9),
    };
    let instances: Vec<Instance> = (0..20).map(|seed| instance(mix, seed)).collect();
    let mut report = Vec::new();
    for &name in registry::BASELINES {
        let failed: Vec<(usize, String)> = instances
            .iter()
            .enumerate()
            .filter_map(|(seed, inst)| check(inst, name).err().map(|e| (seed, e)))
            .collect();
        println!(
            "{name}: {} of {} seeds failed",
            failed.len(),
            instances.len()
        );
        if let Some((seed, e)) = failed.first() {
            report.push(format!(
                "{name}: {} failed, first seed {seed}: {e}",
                failed.len()
            ));
        }
    }
    assert!(report.is_empty(), "{report:#?}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/baselines_reserved.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Random small clusters and workloads: PS jobs, rings without a
    /// reservation, and reserving rings with `b` up to the whole NIC.
    #[test]
    fn every_baseline_counts_ring_reservations(
        seed in any::<u64>(),
        machines in 2u32..=4,
        gpus in prop::sample::select(vec![2.0, 4.0]),
        jobs in 3usize..=10,
        reserving in 0.2f64..=0.9,
        b_max in 0.1f64..=1.0,
    ) {
        let nic = 10e9;
        let mix = Mix { machines, gpus, nic, jobs, reserving, b: (0.05 * nic, b_max * nic) };
        let inst = instance(mix, seed);
        if let Err(e) = check_all(&inst, &format!("{mix:?}, seed {seed}")) {
            prop_assert!(false, "{}", e);
        }
    }
}
