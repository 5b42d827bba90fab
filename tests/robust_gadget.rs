//! Robustness of the GADGET-style scheduler: extreme and random instances
//! and options give a checked schedule or a typed error, never a panic,
//! never a hang (every case under the watchdog).

mod common;

use dmlsched::algorithms::Algorithm;
use rand::SeedableRng;
use std::collections::BTreeMap;

use common::{WATCHDOG_S, within};
use dmlsched::algorithms::gadget::*;
use dmlsched::model::*;
use dmlsched::online::PdOptions;
use dmlsched::schedule::verify;
use dmlsched::timing::ProgressMode;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// `(workers, iterations, model bytes, compute seconds, reserved b/s)` of one
/// job.
type JobSpec = (u32, u64, f64, f64, Option<f64>);

/// `(what, GPUs per machine, NIC per machine, jobs, ring parameters,
/// horizon)`.
type Case = (&'static str, Vec<f64>, f64, Vec<JobSpec>, RingParams, u32);

fn instance(
    gpus: &[f64],
    nic: f64,
    jobs: &[JobSpec],
    ring: RingParams,
    horizon: u32,
) -> Option<Instance> {
    let machines = gpus
        .iter()
        .enumerate()
        .map(|(i, &g)| Machine::new(MachineId(i as u32), Resources::zero().gpus(g).nic(nic), 1e9))
        .collect();
    let mut c = Cluster::new(machines);
    c.ring = ring;
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(w, f, bytes, compute, b))| {
            let r = RarJob {
                workers: WorkerCounts::Fixed(w),
                iterations: f,
                convergence_iterations: Some(f.div_ceil(2).max(1)),
                model_bytes: bytes,
                backward_per_iteration_s: compute,
                reserved_bandwidth_bps: b,
                worker: Resources::zero().gpus(1.0),
                ..RarJob::default()
            };
            Job::new(JobId(i as u32), i as f64, r).with_utility(Utility::Sigmoid {
                g1: 1.0 + i as f64,
                g2: 0.5,
                g3: 5.0,
            })
        })
        .collect();
    Instance::new(c, jobs, 1.0, horizon).ok()
}

/// Runs the scheduler; the answer is a verified schedule with a consistent
/// certificate, or a typed error of the scheduler or the framework.
fn answers(inst: Instance, params: GadgetParams, what: String) {
    let outcome = within(WATCHDOG_S, &what.clone(), move || {
        match Gadget::new(params)
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        {
            Ok(s) => {
                verify(&inst, &s.schedule).map_err(|e| format!("verify: {e}"))?;
                s.certificate
                    .check(1e-9)
                    .map_err(|e| format!("certificate: {e}"))
            }
            Err(dmlsched::Error::Gadget(_) | dmlsched::Error::Online(_)) => Ok(()),
            Err(e) => Err(format!("untyped error: {e}")),
        }
    });
    assert!(outcome.is_ok(), "{what}: {outcome:?}");
}

fn ring() -> RingParams {
    let mut built = RingParams::default();
    built.external_bandwidth_bps = 1.0;
    built.reduction_speed_bps = 10.0;
    built.overhead_per_server_s = 1e-3;
    built.contender_ratio = 1.0;
    built.degradation = Degradation::Linear { alpha: 0.09 };
    built
}

#[test]
fn extreme_instances() {
    let cases: Vec<Case> = vec![
        (
            "1e300 GPUs",
            vec![1e300],
            1e9,
            vec![(1, 10, 0.0, 0.5, None)],
            ring(),
            100,
        ),
        (
            "1e6 GPUs",
            vec![1e6],
            1e9,
            vec![(1, 10, 0.0, 0.5, None)],
            ring(),
            100,
        ),
        (
            "u32::MAX horizon",
            vec![4.0],
            1e9,
            vec![(2, 10, 0.1, 0.5, Some(1e6))],
            ring(),
            u32::MAX,
        ),
        (
            "zero iteration time",
            vec![4.0, 4.0],
            1e9,
            vec![(1, 10, 0.0, 0.0, None)],
            {
                let mut built = ring();
                built.overhead_per_server_s = 0.0;
                built
            },
            100,
        ),
        (
            "1e-300 compute",
            vec![4.0],
            1e9,
            vec![(1, 10, 0.0, 1e-300, None)],
            {
                let mut built = ring();
                built.overhead_per_server_s = 0.0;
                built
            },
            100,
        ),
        (
            "huge F",
            vec![4.0],
            1e9,
            vec![(1, u64::MAX, 0.0, 1.0, None)],
            ring(),
            100,
        ),
        (
            "huge model",
            vec![2.0, 2.0],
            1e9,
            vec![(4, 10, 1e300, 1.0, Some(1e9))],
            ring(),
            100,
        ),
        (
            "tiny reservation",
            vec![2.0, 2.0],
            1e9,
            vec![(4, 10, 1.0, 1.0, Some(1e-300))],
            ring(),
            100,
        ),
        (
            "reservation above the NIC",
            vec![2.0, 2.0],
            1.0,
            vec![(4, 10, 1.0, 0.01, Some(1e6))],
            ring(),
            100,
        ),
        (
            "no NIC",
            vec![2.0, 2.0, 2.0],
            0.0,
            vec![(4, 10, 1.0, 0.01, Some(1.0)), (2, 10, 1.0, 0.01, Some(1.0))],
            ring(),
            100,
        ),
        (
            "horizon 1",
            vec![4.0],
            1e9,
            vec![(2, 1000, 0.1, 0.5, None)],
            ring(),
            1,
        ),
        (
            "many one-GPU machines",
            vec![1.0; 200],
            1e9,
            (0..50)
                .map(|i| (1 + i % 8, 50, 0.1, 0.02, Some(1e3)))
                .collect(),
            ring(),
            2_000,
        ),
    ];
    for (what, gpus, nic, jobs, ring, horizon) in cases {
        let Some(inst) = instance(&gpus, nic, &jobs, ring, horizon) else {
            continue;
        };
        answers(inst, GadgetParams::default(), what.to_string());
        let mut floor = GadgetParams::default();
        floor.progress = ProgressMode::Floor;
        floor.bounds = GadgetBounds::FrameworkEta;
        let inst = instance(&gpus, nic, &jobs, ring, horizon).unwrap();
        answers(inst, floor, format!("{what}, Floor, η rule"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/robust_gadget.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_instances_and_options(
        gpus in prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..6.0, Just(1e9)], 1..=4),
        nic in prop_oneof![Just(0.0), 1.0f64..100.0, Just(1e12)],
        jobs in prop::collection::vec(
            (1u32..=6, 1u64..=3000, 0.0f64..10.0, 0.0f64..3.0, prop::option::of(0.5f64..50.0)),
            0..=6,
        ),
        horizon in prop_oneof![Just(1u32), 1u32..300, Just(u32::MAX)],
        exact in any::<bool>(),
        floor in any::<bool>(),
        eta in any::<bool>(),
        energy in prop_oneof![Just(0.0), 0.0f64..1.0, Just(f64::NAN)],
        beta in prop::option::of(prop_oneof![0.0f64..3.0, Just(f64::INFINITY)]),
        choice in 0u8..3,
        samples in any::<bool>(),
        lookahead in prop::option::of(0u32..20),
        max_servers in 0u32..10,
        u_scale in prop_oneof![Just(1.0), 0.1f64..10.0],
        table in prop::option::of((1u32..=6, 1u32..=4, 0u32..20)),
    ) {
        let Some(inst) = instance(&gpus, nic, &jobs, ring(), horizon) else { return Ok(()) };
        let durations = table
            .map(|(w, n, d)| BTreeMap::from([(JobId(0), DurationTable::new([((w, n), d)]))]))
            .unwrap_or_default();
        let mut params = GadgetParams::default();
        params.oracle = if exact { EmbeddingOracle::Exhaustive } else { EmbeddingOracle::Greedy };
        params.bounds = if eta { GadgetBounds::FrameworkEta } else { GadgetBounds::default() };
        params.progress = if floor { ProgressMode::Floor } else { ProgressMode::Fractional };
        params.energy_price = energy;
        params.fairness = beta.map_or(FairnessWeighting::None, |beta| FairnessWeighting::TenantShare { beta });
        params.worker_choice = [WorkerChoice::Requested, WorkerChoice::PowersOfTwo, WorkerChoice::Allowed][choice as usize];
        params.work_unit = if samples { WorkUnit::Samples } else { WorkUnit::Iterations };
        params.lookahead = lookahead;
        params.max_servers = max_servers;
        params.u_scale = u_scale;
        params.durations = durations;
        params.pd = PdOptions::default();
        answers(inst, params, format!("{gpus:?} nic {nic} {jobs:?} horizon {horizon}"));
    }
}
