//! Pinned results of the trace-replay baselines on a small synthetic
//! workload: every job's start, finish, GPU-seconds, preemptions and
//! reconfigurations, to the last bit, folded into one digest per policy,
//! and every allocation the policy made (job, time, machines and tasks)
//! folded into a second one.
//! A change that is meant to make a policy faster must leave these digests
//! as they are; a change of behaviour updates them on purpose.
//!
//! The workload mixes what the policies treat differently: elastic and
//! rigid, preemptible and not, parameter-server jobs with several PSs,
//! rings with fixed and allowed worker counts, rings with a reserved
//! bandwidth, on machines whose free capacities end up fractional.

use dmlsched::model::*;
use dmlsched::registry::by_name;
use dmlsched::sim::{SimOptions, SimResult, simulate};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// 6 machines of 4 or 8 GPUs; 60 jobs arriving over 2,000 s.
fn workload(seed: u64) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let machines = (0..6u32)
        .map(|i| {
            let gpus = if i % 2 == 0 { 8.0 } else { 4.0 };
            Machine::new(
                MachineId(i),
                Resources::zero()
                    .gpus(gpus)
                    .cpu_cores(24.0)
                    .memory(256e9)
                    .nic(12.5e9),
                1e11,
            )
        })
        .collect();
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
    let mut jobs = Vec::new();
    for id in 0..60u32 {
        let arrival = f64::from(rng.random_range(0..2000u32)) + 0.25;
        let job = if rng.random_bool(0.4) {
            let max_workers = rng.random_range(1..=6u32);
            let ps = PsJob {
                epochs: 1,
                data_chunks: max_workers,
                minibatches_per_chunk: rng.random_range(20..300u32),
                minibatch_compute_s: 0.3 * f64::from(rng.random_range(1..=5u32)),
                gradient_bytes: 2e7,
                worker: Resources::zero()
                    .gpus(1.0)
                    .cpu_cores(1.5)
                    .memory(6e9)
                    .nic(3e8),
                ps: Resources::zero().cpu_cores(1.0).memory(4e9).nic(7e8),
                max_workers,
                max_ps: max_workers.div_ceil(2),
                ps_at_most_workers: true,
                sync: SyncMode::Synchronous,
                layers: None,
            };
            Job::new(JobId(id), arrival, Architecture::ParameterServer(ps))
                .with_discipline(disciplines[rng.random_range(0..4usize)])
        } else {
            let elastic = rng.random_bool(0.3);
            let workers = if elastic {
                WorkerCounts::Allowed(vec![1, 2, 3, 6])
            } else {
                WorkerCounts::Fixed([1, 2, 3, 4, 8, 12][rng.random_range(0..6usize)])
            };
            let reserved = rng
                .random_bool(0.3)
                .then(|| f64::from(rng.random_range(1..=3u32)) * 1.5e9);
            let ring = RarJob {
                workers,
                iterations: rng.random_range(100..2000u64),
                convergence_iterations: None,
                model_bytes: 1e8,
                minibatch_size: 32,
                forward_per_sample_s: 0.005,
                backward_per_iteration_s: 0.3,
                reserved_bandwidth_bps: reserved,
                worker: Resources::zero().gpus(1.0).cpu_cores(2.5).memory(10e9),
            };
            let job = Job::new(JobId(id), arrival, Architecture::RingAllReduce(ring));
            if elastic {
                job.with_discipline(Discipline::ELASTIC)
            } else {
                job.with_discipline(disciplines[rng.random_range(0..3usize)])
            }
        };
        let mut job = job;
        job.reconfiguration_s = f64::from(rng.random_range(0..30u32));
        jobs.push(job);
    }
    Instance::new(Cluster::new(machines), jobs, 60.0, 100_000).expect("workload")
}

/// FNV-1a over `bytes`.
fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// FNV-1a over every allocation record (its `Debug` form prints every
/// float exactly: the shortest text that reads back to the same bits).
fn allocation_digest(r: &SimResult) -> u64 {
    fnv(format!("{:?}", r.allocations).into_bytes())
}

/// FNV-1a over every job's outcome, bit for bit.
fn digest(r: &SimResult) -> u64 {
    let mut bytes = Vec::new();
    let mut eat = |x: u64| bytes.extend(x.to_le_bytes());
    for j in &r.jobs {
        eat(u64::from(j.job.0));
        eat(j.start_s.map_or(u64::MAX, f64::to_bits));
        eat(j.finish_s.map_or(u64::MAX, f64::to_bits));
        eat(j.gpu_seconds.to_bits());
        eat(u64::from(j.preemptions));
        eat(u64::from(j.reconfigurations));
        eat(u64::from(j.rejected));
    }
    fnv(bytes)
}

#[test]
fn baselines_keep_their_results() {
    // (policy, seed, digest, allocation digest, completed jobs)
    let pinned: &[(&str, u64, u64, u64, usize)] = &[
        ("fifo", 1, 5939149616065568990, 12645646671129785341, 60),
        ("sjf", 1, 12590906666818183046, 1954275848770941552, 60),
        ("tetris", 1, 5084728716336266997, 10435266758071189314, 60),
        ("tiresias", 1, 2854970020561081602, 7714226252024569296, 60),
        ("drf", 1, 15082031554891629204, 11495205787385038518, 60),
        ("optimus", 1, 16298513948588955317, 12003675075419279781, 60),
        ("rrh", 1, 15827068364720885912, 16763078309063374898, 60),
        // Changed on purpose when proportional share came to place the
        // workers its market pays for by the placement rule (best fit).
        (
            "proportional",
            1,
            10175299903304046204,
            14273506938227751776,
            60,
        ),
        ("fifo", 2, 2581578576724773949, 11274379680170063871, 60),
        ("sjf", 2, 10467376399596820745, 18263566139589932588, 60),
        ("tetris", 2, 2930604534034083630, 13646095929055570086, 60),
        ("tiresias", 2, 959538594272583608, 868824670497048334, 60),
        ("drf", 2, 8541547907242691315, 13710153276969373687, 60),
        ("optimus", 2, 13387925250250466473, 5837888102246432138, 60),
        ("rrh", 2, 9932641023200158421, 1782198600391787023, 60),
        (
            "proportional",
            2,
            4810099839408540907,
            15729780575512821323,
            60,
        ),
    ];
    let mut seen = Vec::new();
    for seed in [1, 2] {
        let inst = workload(seed);
        for name in [
            "fifo",
            "sjf",
            "tetris",
            "tiresias",
            "drf",
            "optimus",
            "rrh",
            "proportional",
        ] {
            let mut policy = by_name(name).expect("a known baseline");
            let r = simulate(&inst, &mut policy, &SimOptions::default())
                .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
            let done = r.jobs.iter().filter(|j| j.finish_s.is_some()).count();
            seen.push((name, seed, digest(&r), allocation_digest(&r), done));
        }
    }
    for line in &seen {
        println!("{line:?}");
    }
    assert_eq!(seen.as_slice(), pinned);
}
