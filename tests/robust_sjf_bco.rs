//! Robustness of SJF-BCO and its baselines: extreme and random instances
//! and options give a checked schedule or a typed error, never a panic,
//! never a hang (every case under the watchdog).

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::sjf_bco::*;
use dmlsched::model::*;
use dmlsched::schedule::verify;
use dmlsched::timing::ProgressMode;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// `(workers, iterations, model bytes, compute seconds)` of one job.
type JobSpec = (u32, u64, f64, f64);

/// `(what, GPUs per machine, jobs, ring parameters, horizon)`.
type Case = (&'static str, Vec<f64>, Vec<JobSpec>, RingParams, u32);

fn instance(gpus: &[f64], jobs: &[JobSpec], ring: RingParams, horizon: u32) -> Option<Instance> {
    let machines = gpus
        .iter()
        .enumerate()
        .map(|(i, &g)| Machine::new(MachineId(i as u32), Resources::zero().gpus(g), 1e9))
        .collect();
    let mut c = Cluster::new(machines);
    c.ring = ring;
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(w, f, bytes, compute))| {
            let r = RarJob {
                workers: WorkerCounts::Fixed(w),
                iterations: f,
                model_bytes: bytes,
                backward_per_iteration_s: compute,
                worker: Resources::zero().gpus(1.0),
                ..RarJob::default()
            };
            Job::new(JobId(i as u32), 0.0, r)
        })
        .collect();
    Instance::new(c, jobs, 1.0, horizon).ok()
}

/// Runs SJF-BCO and the three baselines; each answer is a verified
/// schedule with a consistent certificate, or a typed SJF-BCO error.
fn all_answer(inst: Instance, params: SjfBcoParams, what: String) {
    let outcomes = within(WATCHDOG_S, &what.clone(), move || {
        let rng = || ChaCha8Rng::seed_from_u64(7);
        let v = vec![
            SjfBco::new(params.clone()).and_then(|a| a.solve(&inst, &mut rng())),
            RarFf::new(params.clone()).and_then(|a| a.solve(&inst, &mut rng())),
            RarLs::new(params.clone()).and_then(|a| a.solve(&inst, &mut rng())),
            RarRand::new(params.clone()).and_then(|a| a.solve(&inst, &mut rng())),
        ];
        v.into_iter()
            .map(|r| match r {
                Ok(s) => {
                    verify(&inst, &s.schedule).map_err(|e| format!("verify: {e}"))?;
                    s.certificate
                        .check(1e-9)
                        .map_err(|e| format!("certificate: {e}"))
                }
                Err(dmlsched::Error::SjfBco(_)) => Ok(()),
                Err(e) => Err(format!("untyped error: {e}")),
            })
            .collect::<Vec<_>>()
    });
    for o in outcomes {
        assert!(o.is_ok(), "{what}: {o:?}");
    }
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
            vec![(1, 10, 0.0, 0.5)],
            ring(),
            100,
        ),
        ("1e6 GPUs", vec![1e6], vec![(1, 10, 0.0, 0.5)], ring(), 100),
        (
            "u32::MAX horizon",
            vec![4.0],
            vec![(2, 10, 0.1, 0.5)],
            ring(),
            u32::MAX,
        ),
        (
            "zero iteration time",
            vec![4.0],
            vec![(1, 10, 0.0, 0.0)],
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
            vec![(1, 10, 0.0, 1e-300)],
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
            vec![(1, u64::MAX, 0.0, 1.0)],
            ring(),
            100,
        ),
        (
            "huge model",
            vec![2.0, 2.0],
            vec![(4, 10, 1e300, 1.0)],
            ring(),
            100,
        ),
        (
            "tiny external bandwidth",
            vec![2.0, 2.0],
            vec![(4, 10, 1.0, 1.0)],
            {
                let mut built = ring();
                built.external_bandwidth_bps = 1e-300;
                built
            },
            100,
        ),
        ("horizon 1", vec![4.0], vec![(2, 1000, 0.1, 0.5)], ring(), 1),
        (
            "many one-GPU machines",
            vec![1.0; 200],
            (0..50).map(|i| (1 + i % 8, 50, 0.1, 0.02)).collect(),
            ring(),
            10_000,
        ),
    ];
    for (what, gpus, jobs, ring, horizon) in cases {
        let Some(inst) = instance(&gpus, &jobs, ring, horizon) else {
            continue;
        };
        all_answer(inst, SjfBcoParams::default(), what.to_string());
        let mut floor = SjfBcoParams::default();
        floor.progress = ProgressMode::Floor;
        all_answer(
            instance(&gpus, &jobs, ring, horizon).unwrap(),
            floor,
            format!("{what}, Floor"),
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_instances_and_options(
        gpus in prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..6.0, Just(1e9)], 1..=4),
        jobs in prop::collection::vec((1u32..=6, 1u64..=3000, 0.0f64..10.0, 0.0f64..3.0), 0..=6),
        horizon in prop_oneof![Just(1u32), 1u32..500, Just(u32::MAX)],
        t in prop::option::of(prop_oneof![Just(1u64), 1u64..2000, Just(u64::MAX)]),
        u in prop_oneof![Just(1.0), 0.5f64..3.0, Just(f64::NAN)],
        floor in any::<bool>(),
        fixed in any::<bool>(),
        feasibility in any::<bool>(),
        budget_only in any::<bool>(),
        kappa in prop::option::of(0u32..8),
        lambda in prop_oneof![Just(1.0), 0.5f64..9.0],
    ) {
        let Some(inst) = instance(&gpus, &jobs, ring(), horizon) else { return Ok(()) };
        let mut params = SjfBcoParams::default();
        params.est_upper = u;
        params.horizon = t;
        params.progress = if floor { ProgressMode::Floor } else { ProgressMode::Fractional };
        params.time_model = if fixed { TimeModel::FixedDuration } else { TimeModel::Rar };
        params.bisection = if feasibility { BisectionRule::Feasibility } else { BisectionRule::PaperImprovement };
        params.availability = if budget_only { Availability::BudgetOnly } else { Availability::IdleAndBudget };
        params.kappas = kappa.map_or(KappaSpec::All, KappaSpec::Fixed);
        params.lambda = LambdaSpec::Uniform(lambda);
        all_answer(inst, params, format!("{gpus:?} {jobs:?} horizon {horizon} T {t:?} u {u}"));
    }
}
