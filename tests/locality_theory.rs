//! The locality-aware scheduler against theory: the exact offline optimum
//! (hand-computed answers, `ALG ≤ OPT` on tiny random instances), the
//! reduction to OASiS's per-job oracle, admission at an empty cluster, and
//! the online framework's invariants on random runs.
#![cfg(feature = "highs")]

mod common;

#[allow(unused_imports)]
use common::{WATCHDOG_S, within};
use dmlsched::algorithms::locality::{
    InnerSolver, Locality, LocalityParams, OfflineLimits, OfflineOptimum, SlotConfig,
    offline_optimum, verify_locality,
};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::verify;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

#[allow(dead_code)]
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/locality_theory.txt",
        ))),
        ..ProptestConfig::default()
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// A machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with 4 Gbit/s between
/// tasks on it.
fn l1_machine(id: u32) -> Machine {
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(16.0)
        .memory(gb(64.0))
        .nic(gbps(10.0));
    Machine::new(MachineId(id), cap, gbps(4.0))
}

/// The job of the common hand set-up (L1): `Q = 400`, `τ = 0.5 s`,
/// `e = 125 MB`, `b = 1`, `B = 4` Gbit/s, worker `[1, 2, 8 GB, 1]`, PS
/// `[0, 2, 8 GB, 4]`, `N = 4`; with 100-s slots `r^L = 100` (b_int = 4)
/// and `r^D = 40`; utility `f(δ) = g1 − slope·δ`.
fn l1_job(id: u32, g1: f64, slope: f64) -> Job {
    Job::new(
        JobId(id),
        0.0,
        PsJob {
            epochs: 1,
            data_chunks: 4,
            minibatches_per_chunk: 100,
            minibatch_compute_s: 0.5,
            gradient_bytes: mb(125.0),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(2.0)
                .memory(gb(8.0))
                .nic(gbps(1.0)),
            ps: Resources::zero()
                .cpu_cores(2.0)
                .memory(gb(8.0))
                .nic(gbps(4.0)),
            max_workers: 4,
            max_ps: 4,
            ..PsJob::default()
        },
    )
    .with_utility(Utility::Linear { g1, slope })
}

/// Both checkers accept the optimum's schedule, its plans agree with it,
/// and the checker's utilities add up to the objective.
fn check_optimum(inst: &Instance, params: &LocalityParams, opt: &OfflineOptimum) {
    verify(inst, &opt.schedule).unwrap();
    let check = verify_locality(inst, params, &opt.schedule).unwrap();
    assert!(
        close(check.total_utility, opt.objective, 1e-9),
        "checker {} vs objective {}",
        check.total_utility,
        opt.objective
    );
    assert!(opt.upper_bound >= opt.objective);
    for ((id, plan), (cid, done)) in opt.plans.iter().zip(&opt.completion) {
        assert_eq!(id, cid);
        assert_eq!(plan.as_ref().map(|p| p.slots.last().unwrap().slot), *done);
        if let Some(p) = plan {
            let checked = check.jobs.iter().find(|j| j.job == *id).unwrap();
            assert_eq!(checked.completion, p.slots.last().unwrap().slot);
        }
    }
}

// ---------------------------------------------------------------------------
// The exact offline optimum: hand-computed answers
// ---------------------------------------------------------------------------

/// Two L1 jobs on one machine: each needs the machine's 4 GPUs as LOCAL
/// workers for one slot (400 mini-batches at `r^L = 100`; DISTRIBUTED does
/// at most `4·40 = 160` per slot), so at most one job finishes per slot.
/// `f_A(δ) = 100 − 10δ`, `f_B(δ) = 80 − 40δ`.
///
/// * `T = 1`: one job, the better one: `OPT = f_A(0) = 100`.
/// * `T = 2`: A first gives `100 + f_B(1) = 140`, B first
///   `f_B(0) + f_A(1) = 80 + 90 = 170`, both late `90 + 40`: `OPT = 170`,
///   with B in slot 0 and A in slot 1, each LOCAL with 4 workers. The
///   online scheduler (arrival order A, B) cannot know B is coming and
///   gets at most 140.
#[test]
fn two_jobs_compete_for_one_slot() {
    let params = LocalityParams {
        inner: InnerSolver::exact_mip(),
        ..LocalityParams::default()
    };
    let jobs = vec![l1_job(0, 100.0, 10.0), l1_job(1, 80.0, 40.0)];
    let inst1 = Instance::new(Cluster::new(vec![l1_machine(0)]), jobs.clone(), 100.0, 1).unwrap();
    let opt = offline_optimum(&inst1, &params, &OfflineLimits::default()).unwrap();
    assert!(opt.optimal, "{:?}", opt.status);
    assert!(close(opt.objective, 100.0, 1e-9), "{}", opt.objective);
    assert_eq!(opt.completion, vec![(JobId(0), Some(0)), (JobId(1), None)]);
    check_optimum(&inst1, &params, &opt);

    let inst2 = Instance::new(Cluster::new(vec![l1_machine(0)]), jobs, 100.0, 2).unwrap();
    let opt = offline_optimum(&inst2, &params, &OfflineLimits::default()).unwrap();
    assert!(opt.optimal, "{:?}", opt.status);
    assert!(close(opt.objective, 170.0, 1e-9), "{}", opt.objective);
    assert!(opt.upper_bound <= 170.0 * (1.0 + 1e-9) + 1e-9);
    assert_eq!(
        opt.completion,
        vec![(JobId(0), Some(1)), (JobId(1), Some(0))]
    );
    for (_, plan) in &opt.plans {
        let plan = plan.as_ref().unwrap();
        assert_eq!(plan.slots.len(), 1);
        assert_eq!(
            plan.slots[0].config,
            SlotConfig::Local {
                machine: 0,
                workers: 4
            }
        );
    }
    check_optimum(&inst2, &params, &opt);
    assert!(opt.columns > 0 && opt.rows > 0);
    let info = opt.exact_info();
    assert_eq!(info.optimum(), Some(opt.objective));

    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let alg = Locality::new(params.clone())
        .solve(&inst2, &mut rng)
        .unwrap();
    let alg_u = alg.report.run.total_utility;
    assert!(alg_u <= 140.0 + 1e-9, "ALG {alg_u}");
    assert!(alg_u <= opt.upper_bound * (1.0 + 1e-7));
    eprintln!(
        "two jobs, T = 2: OPT {} ALG {alg_u} ({} columns, {} rows, {:.3} s)",
        opt.objective, opt.columns, opt.rows, opt.seconds
    );
}

/// Two L1 jobs on one machine with LOCAL disabled, `f_A(δ) = 100 − 10δ`,
/// `f_B(δ) = 80 − 10δ`, `T = 5`. DISTRIBUTED does `r^D = 40` per worker, so
/// each job needs 10 worker-slots, at most 4 per slot (4 GPUs). A job alone
/// in a slot runs 4 workers and one PS (NIC `4·1 + 4 = 8 ≤ 10`); two jobs
/// in one slot need two PSs (NIC 8), leaving room for 2 workers in all.
/// Both finishing needs 20 worker-slots in 5 slots, so every slot must run
/// 4 workers of one job alone, and each job's total is a multiple of 4 —
/// never 10 (and 12 + 8 misses one). So at most one job finishes: A alone
/// at full width (4, 4, 2) completes in slot 2, `OPT = f_A(2) = 80`
/// (B alone: 60). Without the joint NIC row both would fit (A 4, 4, 2; B
/// 2, 4, 4 in slots 2–4).
#[test]
fn without_local_the_shared_nic_admits_one_job() {
    let params = LocalityParams {
        allow_local: false,
        ..LocalityParams::default()
    };
    let jobs = vec![l1_job(0, 100.0, 10.0), l1_job(1, 80.0, 10.0)];
    let inst = Instance::new(Cluster::new(vec![l1_machine(0)]), jobs, 100.0, 5).unwrap();
    let opt = offline_optimum(&inst, &params, &OfflineLimits::default()).unwrap();
    assert!(opt.optimal, "{:?}", opt.status);
    assert!(close(opt.objective, 80.0, 1e-9), "{}", opt.objective);
    assert_eq!(opt.completion, vec![(JobId(0), Some(2)), (JobId(1), None)]);
    check_optimum(&inst, &params, &opt);
    let plan = opt.plans[0].1.as_ref().unwrap();
    assert_eq!(plan.local_slots(), 0);
}

#[test]
fn limits_and_size_are_typed_errors() {
    use dmlsched::algorithms::locality::{LocalityError, OFFLINE_MAX_COLUMNS};
    let jobs = vec![l1_job(0, 100.0, 10.0), l1_job(1, 80.0, 40.0)];
    let inst = Instance::new(Cluster::new(vec![l1_machine(0)]), jobs, 100.0, 2).unwrap();
    let params = LocalityParams::default();
    let bad = [
        OfflineLimits {
            time_limit_s: 0.0,
            ..OfflineLimits::default()
        },
        OfflineLimits {
            time_limit_s: f64::NAN,
            ..OfflineLimits::default()
        },
        OfflineLimits {
            mip_rel_gap: 1.0,
            ..OfflineLimits::default()
        },
        OfflineLimits {
            max_columns: 0,
            ..OfflineLimits::default()
        },
        OfflineLimits {
            threads: Some(0),
            ..OfflineLimits::default()
        },
    ];
    for l in &bad {
        assert!(
            matches!(
                offline_optimum(&inst, &params, l),
                Err(dmlsched::Error::Locality(
                    LocalityError::InvalidOption { .. }
                ))
            ),
            "{l:?}"
        );
    }
    // 2 jobs × (2 slots × (4·1 + 2) + 1) = 26 columns estimated.
    let tight = OfflineLimits {
        max_columns: 25,
        ..OfflineLimits::default()
    };
    assert!(matches!(
        offline_optimum(&inst, &params, &tight),
        Err(dmlsched::Error::Locality(LocalityError::OfflineTooLarge {
            columns: 26,
            limit: 25
        }))
    ));
    // 7 jobs on 4 machines over 8 slots: 7·(8·18 + 1) = 1015 ≤ 1024; 8
    // jobs are refused by default.
    let machines: Vec<Machine> = (0..4).map(l1_machine).collect();
    let many = |n: u32| {
        let jobs = (0..n).map(|i| l1_job(i, 100.0, 10.0)).collect();
        Instance::new(Cluster::new(machines.clone()), jobs, 100.0, 8).unwrap()
    };
    assert_eq!(OFFLINE_MAX_COLUMNS, 1024);
    assert!(matches!(
        offline_optimum(&many(8), &params, &OfflineLimits::default()),
        Err(dmlsched::Error::Locality(LocalityError::OfflineTooLarge {
            columns: 1160,
            ..
        }))
    ));
}
