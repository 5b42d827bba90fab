//! Round-based leases (`allocate::Rounds`): hand-computed runs on one and
//! two GPU types, the realised fractions against the allocation, and a
//! property test that every policy's rounds run every job to completion
//! under the simulator's own capacity checks.
#![cfg(feature = "highs")]

mod common;

use dmlsched::allocate::{AllocationPolicy, RoundParams, Rounds};
use dmlsched::model::*;
use dmlsched::sim::{Policy, SimOptions, SimResult, simulate};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A one-worker, one-PS job of `seconds` of work at speed 1 (mini-batches
/// of 0.5 s, nothing to send).
fn job(id: u32, arrival_s: f64, seconds: u32) -> Job {
    let ps = PsJob {
        epochs: 1,
        data_chunks: 1,
        gradient_bytes: 0.0,
        max_workers: 1,
        max_ps: 1,
        ps_at_most_workers: true,
        layers: None,
        ..common::ps_job(2 * seconds, 0.5)
    };
    common::job(id, arrival_s, ps)
}

/// One machine of `gpus` GPUs per entry, of the entry's type.
fn cluster(types: &[(&str, f64)]) -> Cluster {
    let machines = types
        .iter()
        .enumerate()
        .map(|(i, (t, g))| {
            Machine::new(
                MachineId(i as u32),
                Resources::zero()
                    .gpus(*g)
                    .cpu_cores(8.0)
                    .memory(32e9)
                    .nic(1e10),
                1e11,
            )
            .with_gpu_type(*t)
        })
        .collect();
    let mut names: Vec<&str> = types.iter().map(|t| t.0).collect();
    names.dedup();
    Cluster::new(machines).with_gpu_types(names)
}

fn run(inst: &Instance, policy: AllocationPolicy) -> (SimResult, Rounds) {
    let mut rounds = Rounds::new(RoundParams::new(policy));
    let result = simulate(inst, &mut rounds, &SimOptions::default()).unwrap();
    (result, rounds)
}

#[test]
fn max_sum_throughput_puts_each_job_on_its_type_then_moves_the_last_to_the_fast_one() {
    // Job 0 gains 4x on the V100, job 1 only 2x: the allocation gives job
    // 0 the V100 and job 1 the K80, then job 1 the V100 once job 0 is done.
    let jobs = vec![
        job(0, 0.0, 1000)
            .with_gpu_speed("v100", 1.0)
            .with_gpu_speed("k80", 0.25),
        job(1, 1.0, 1000)
            .with_gpu_speed("v100", 1.0)
            .with_gpu_speed("k80", 0.5),
    ];
    let inst = Instance::new(cluster(&[("v100", 1.0), ("k80", 1.0)]), jobs, 60.0, 1000).unwrap();
    let (result, rounds) = run(&inst, AllocationPolicy::MaxSumThroughput);
    // Round 0 (t = 0): job 0 alone, on the V100 until it is done at 1000.
    assert_eq!(result.jobs[0].finish_s, Some(1000.0));
    // Job 1 waits for the round at 360, runs on the K80 at half speed
    // until the round at 1080 (360 s of work), then 640 s on the V100.
    assert_eq!(result.jobs[1].finish_s, Some(1720.0));
    let report = rounds.report();
    assert_eq!(report.types, vec!["v100".to_string(), "k80".to_string()]);
    assert_eq!(report.allocations, 3); // at 0, 360 and 1080
    let row = report.jobs.iter().find(|r| r.job == JobId(1)).unwrap();
    let life = 1719.0;
    assert_eq!(row.in_system_s, life);
    for (got, want) in row.realised.iter().zip([640.0 / life, 720.0 / life]) {
        assert!((got - want).abs() < 1e-12, "{:?}", row.realised);
    }
    // X followed exactly: the same fractions, no gap, and the work promised
    // is the work done.
    for (a, r) in row.allocated.iter().zip(&row.realised) {
        assert!(
            (a - r).abs() < 1e-9,
            "{:?} vs {:?}",
            row.allocated,
            row.realised
        );
    }
    assert!(row.fraction_gap() < 1e-9);
    assert!((row.throughput_ratio().unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(rounds.notes().len(), 1);
    assert!(
        rounds.notes()[0].contains("allocations"),
        "{:?}",
        rounds.notes()
    );
}

#[test]
fn fifo_runs_jobs_in_arrival_order_without_sharing() {
    let jobs = vec![job(0, 0.0, 1000), job(1, 1.0, 1000)];
    let inst = Instance::new(cluster(&[("v100", 1.0)]), jobs, 60.0, 1000).unwrap();
    let (result, _) = run(&inst, AllocationPolicy::Fifo);
    assert_eq!(result.jobs[0].finish_s, Some(1000.0));
    // Job 1 starts at the first round after job 0's completion.
    assert_eq!(result.jobs[1].finish_s, Some(1080.0 + 1000.0));
    assert_eq!(result.jobs[0].preemptions, 0);
}

#[test]
fn rigid_gangs_that_may_not_be_preempted_run_to_completion_once_started() {
    // Max-min fairness would share the GPU by rounds; non-preemptible gangs
    // keep it, so the rounds run them one after the other.
    let jobs = vec![
        job(0, 0.0, 1000).with_discipline(Discipline::RIGID_GANG),
        job(1, 1.0, 1000).with_discipline(Discipline::RIGID_GANG),
    ];
    let inst = Instance::new(cluster(&[("v100", 1.0)]), jobs, 60.0, 1000).unwrap();
    let (result, _) = run(&inst, AllocationPolicy::MaxMinFairness);
    assert_eq!(result.jobs[0].finish_s, Some(1000.0));
    assert_eq!(result.jobs[0].preemptions, 0);
    assert_eq!(result.jobs[1].finish_s, Some(1080.0 + 1000.0));
}

#[test]
fn a_rigid_gang_resumes_only_on_the_type_it_ran_on() {
    // Max-sum throughput gives job 0 the V100 and job 1 (a rigid,
    // preemptible gang) the K80; once job 0 is done, X moves job 1 to the
    // V100, where it may not resume: it keeps the K80, at half speed from
    // 360 s, and finishes at 360 + 2000.
    let jobs = vec![
        job(0, 0.0, 1000)
            .with_gpu_speed("v100", 1.0)
            .with_gpu_speed("k80", 0.1),
        job(1, 1.0, 1000)
            .with_gpu_speed("v100", 1.0)
            .with_gpu_speed("k80", 0.5)
            .with_discipline(Discipline {
                elasticity: Elasticity::Rigid,
                preemptible: true,
            }),
    ];
    let inst = Instance::new(cluster(&[("v100", 1.0), ("k80", 1.0)]), jobs, 60.0, 1000).unwrap();
    let (result, rounds) = run(&inst, AllocationPolicy::MaxSumThroughput);
    assert_eq!(result.jobs[0].finish_s, Some(1000.0));
    assert_eq!(result.jobs[1].finish_s, Some(2360.0));
    let row = rounds
        .report()
        .jobs
        .iter()
        .find(|r| r.job == JobId(1))
        .unwrap();
    assert_eq!(row.realised[0], 0.0); // never on the V100
}

#[test]
fn a_job_wider_than_a_types_whole_gpus_is_rejected() {
    // Three workers of half a GPU fit the 1.5-GPU machine, but take a scale
    // factor of 2 whole GPUs, which the type (1 whole GPU) never has.
    let mut wide = job(1, 0.0, 10);
    if let Architecture::ParameterServer(p) = &mut wide.architecture {
        p.max_workers = 3;
        p.worker = p.worker.gpus(0.5);
    }
    let inst = Instance::new(
        cluster(&[("v100", 1.5)]),
        vec![job(0, 0.0, 10), wide],
        60.0,
        100,
    )
    .unwrap();
    let (result, _) = run(&inst, AllocationPolicy::MaxMinFairness);
    assert!(result.jobs[0].finish_s.is_some());
    assert_eq!(
        result.jobs[1].rejection.as_ref().map(|r| r.kind()),
        Some("unschedulable")
    );
}

#[test]
fn a_job_of_weight_zero_ends_the_run_with_a_typed_error() {
    let inst = Instance::new(
        cluster(&[("v100", 1.0)]),
        vec![job(0, 0.0, 10).with_weight(0.0)],
        60.0,
        100,
    )
    .unwrap();
    let mut rounds = Rounds::new(RoundParams::new(AllocationPolicy::MaxMinFairness));
    let err = simulate(&inst, &mut rounds, &SimOptions::default()).unwrap_err();
    assert!(err.to_string().contains("weight 0"), "{err}");
}

#[test]
fn a_job_that_fits_no_single_type_is_rejected_with_its_reason() {
    // Two workers of one GPU each fit the cluster only across both types.
    let mut two = job(1, 0.0, 10);
    if let Architecture::ParameterServer(p) = &mut two.architecture {
        p.max_workers = 2;
    }
    let two = two.with_gpu_speed("v100", 1.0).with_gpu_speed("k80", 1.0);
    let one = job(0, 0.0, 10)
        .with_gpu_speed("v100", 1.0)
        .with_gpu_speed("k80", 1.0);
    let inst = Instance::new(
        cluster(&[("v100", 1.0), ("k80", 1.0)]),
        vec![one, two],
        60.0,
        100,
    )
    .unwrap();
    let (result, _) = run(&inst, AllocationPolicy::MaxMinFairness);
    assert!(result.jobs[0].finish_s.is_some());
    let why = result.jobs[1].rejection.as_ref().expect("rejected");
    assert_eq!(why.kind(), "unschedulable");
}

#[test]
fn a_bad_round_length_ends_the_run_with_a_typed_error() {
    let inst = Instance::new(cluster(&[("v100", 1.0)]), vec![job(0, 0.0, 10)], 60.0, 100).unwrap();
    for bad in [0.0, -1.0, 1e-7, 1e13, f64::NAN, f64::INFINITY] {
        let mut rounds = Rounds::new(RoundParams::new(AllocationPolicy::Fifo).with_round_s(bad));
        let err = simulate(&inst, &mut rounds, &SimOptions::default()).unwrap_err();
        assert!(err.to_string().contains("round length"), "{err}");
    }
}

#[test]
fn throughput_per_cost_needs_a_price_per_type() {
    let inst = Instance::new(
        cluster(&[("v100", 1.0), ("k80", 1.0)]),
        vec![
            job(0, 0.0, 10)
                .with_gpu_speed("v100", 1.0)
                .with_gpu_speed("k80", 0.5),
        ],
        60.0,
        100,
    )
    .unwrap();
    let mut rounds = Rounds::new(RoundParams::new(AllocationPolicy::MaxThroughputPerCost));
    let err = simulate(&inst, &mut rounds, &SimOptions::default()).unwrap_err();
    assert!(err.is_input(), "{err}");
    let mut params = RoundParams::new(AllocationPolicy::MaxThroughputPerCost);
    // A price for a type the cluster lacks is ignored.
    params.prices = [("v100", 3.0), ("k80", 0.5), ("a100", 4.0)]
        .map(|(t, p)| (t.to_string(), p))
        .into();
    // Per dollar, the K80 (0.5/0.5) beats the V100 (1/3): X puts the job
    // on the K80 only.
    let mut rounds = Rounds::new(params);
    let result = simulate(&inst, &mut rounds, &SimOptions::default()).unwrap();
    let row = &rounds.report().jobs[0];
    assert_eq!(row.allocated, vec![0.0, 1.0]);
    // But the rounds conserve work, as Gavel's do: the V100, visited
    // first and wanted by no one, takes the job at priority 0, and it
    // runs 10 s of work at speed 1 there.
    assert_eq!(result.jobs[0].finish_s, Some(10.0));
    assert_eq!(row.realised, vec![1.0, 0.0]);
    assert!((row.fraction_gap() - 1.0).abs() < 1e-12);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/rounds.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Any policy, any small mixed cluster of one or two machines a type,
    /// jobs of one to three one-GPU workers: the simulator (which checks
    /// every allocation against capacity, GPUs per type included) accepts
    /// every round; a job completes exactly when some type has as many
    /// GPUs as it has workers, and is otherwise rejected as unschedulable;
    /// each job's realised and allocated fractions are fractions of its
    /// time.
    #[test]
    fn every_policy_completes_every_job_that_fits_a_type(
        machines in prop::collection::vec(prop::collection::vec(1u32..4, 1..3), 1..4),
        jobs in prop::collection::vec((0u32..2000, 1u32..900, 0.1f64..1.0, 1u32..4), 1..7),
        policy in 0usize..8,
    ) {
        let names = ["v100", "p100", "k80"];
        let types: Vec<(&str, f64)> = machines
            .iter()
            .enumerate()
            .flat_map(|(i, ms)| ms.iter().map(move |g| (names[i], f64::from(*g))))
            .collect();
        let per_type: Vec<u32> = machines.iter().map(|ms| ms.iter().sum()).collect();
        let jobs: Vec<Job> = jobs
            .iter()
            .enumerate()
            .map(|(i, &(at, secs, slow, workers))| {
                let mut j = job(i as u32, f64::from(at), secs);
                if let Architecture::ParameterServer(p) = &mut j.architecture {
                    p.max_workers = workers;
                }
                for (k, t) in names.iter().enumerate().take(machines.len()) {
                    j = j.with_gpu_speed(*t, if k == 0 { 1.0 } else { slow / k as f64 });
                }
                j
            })
            .collect();
        let widths: Vec<u32> = jobs
            .iter()
            .map(|j| match &j.architecture {
                Architecture::ParameterServer(p) => p.max_workers,
                Architecture::RingAllReduce(_) => unreachable!(),
            })
            .collect();
        let inst = Instance::new(cluster(&types), jobs, 60.0, 100_000).unwrap();
        let policy = AllocationPolicy::ALL[policy];
        let mut params = RoundParams::new(policy);
        params.prices = names.iter().map(|t| (t.to_string(), 1.0)).collect();
        let mut rounds = Rounds::new(params);
        let result = simulate(&inst, &mut rounds, &SimOptions::default()).unwrap();
        let fits = |w: u32| per_type.iter().any(|&n| w <= n);
        for (record, &w) in result.jobs.iter().zip(&widths) {
            if fits(w) {
                prop_assert!(record.finish_s.is_some(), "{policy}: {record:?}");
            } else {
                prop_assert_eq!(record.rejection.as_ref().map(|r| r.kind()), Some("unschedulable"));
            }
        }
        let done = widths.iter().filter(|w| fits(**w)).count();
        prop_assert_eq!(rounds.report().jobs.len(), done);
        for row in &rounds.report().jobs {
            let realised: f64 = row.realised.iter().sum();
            let allocated: f64 = row.allocated.iter().sum();
            prop_assert!((0.0..=1.0 + 1e-9).contains(&realised), "{row:?}");
            prop_assert!((0.0..=1.0 + 1e-9).contains(&allocated), "{row:?}");
        }
    }
}
