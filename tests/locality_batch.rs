//! The offline batch variant of the locality-aware scheduler: the
//! hand-checkable makespan case, the weighted proxy, the sandwich
//! `T_LP ≤ OPT ≤ C_max` against HiGHS on small random instances, the
//! offline list schedules by hand, determinism and typed errors.
#![cfg(feature = "highs")]

use dmlsched::algorithms::locality::{
    BatchObjective, BatchSource, InnerSolver, LocalityBaseline, LocalityBatch,
    LocalityBatchParams, LocalityError, LocalityParams, verify_locality,
};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::online::Reservation;
use dmlsched::schedule::verify;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// A machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with `b_int` Gbit/s
/// between tasks on it.
fn machine(id: u32, b_int: f64) -> Machine {
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(16.0)
        .memory(gb(64.0))
        .nic(gbps(10.0));
    Machine::new(MachineId(id), cap, gbps(b_int))
}

/// The job of the common hand set-up: `Q = 400`, `τ = 0.5 s`,
/// `e = 125 MB`, `b = 1`, `B = 4` Gbit/s, worker `[1, 2, 8 GB, 1]`, PS
/// `[0, 2, 8 GB, 4]`, at most 4 workers.
fn job(id: u32) -> Job {
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
}

/// L6: one machine as in L1 (`b_int = 4`, so `r^L = 100`), two L1 jobs,
/// Δ = 100 s.
fn l6() -> Instance {
    Instance::new(
        Cluster::new(vec![machine(0, 4.0)]),
        vec![job(0), job(1)],
        100.0,
        8,
    )
    .unwrap()
}

fn check_params(inst: &Instance, p: &LocalityBatchParams) -> LocalityParams {
    LocalityParams {
        horizon: inst.horizon_slots(),
        intra_factor: p.intra_factor,
        allow_local: p.allow_local,
        ..LocalityParams::default()
    }
}

#[test]
fn l6_offline_makespan_by_hand() {
    let inst = l6();
    let params = LocalityBatchParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let s = LocalityBatch::new(params.clone()).solve(&inst, &mut rng).unwrap();
    let r = &s.report;
    assert_eq!((r.t_lo, r.t_lp, r.t_hi, r.makespan), (1, 2, 2, 2));
    assert_eq!(r.heuristic, LocalityBaseline::AlwaysLocalFirstFit);
    assert_eq!(r.local_makespan, Some(2));
    assert!(r.attempts.is_empty(), "the rounding range T_LP..T_hi is empty");
    assert_eq!(
        r.source,
        BatchSource::ListSchedule(LocalityBaseline::AlwaysLocalFirstFit)
    );
    assert_eq!(r.exact_makespan, Some(2));
    assert_eq!(s.certificate.objective, 2.0);
    assert_eq!(s.certificate.relaxation_bound.value, 2.0);
    assert_eq!(s.certificate.achieved_ratio(), 1.0);
    assert!(s.certificate.guarantees.is_empty());
    assert!(s.certificate.run.lp_solves >= 1);
    s.certificate.check(1e-9).unwrap();
    verify(&inst, &s.schedule).unwrap();
    verify_locality(&inst, &check_params(&inst, &params), &s.schedule).unwrap();
    // The rounding step itself at T = 2 succeeds with C_max = 2, any seed.
    for seed in 0..20 {
        let plans = LocalityBatch::new(params.clone())
            .round_at(&inst, 2, seed)
            .unwrap()
            .expect("a schedule at T = 2");
        let c_max = plans.iter().map(|p| p.completion_slot() + 1).max().unwrap();
        assert_eq!(c_max, 2, "seed {seed}");
    }
    // T = 1 is LP-infeasible: no rounding there.
    assert!(
        LocalityBatch::new(params)
            .round_at(&inst, 1, 0)
            .unwrap()
            .is_none()
    );
}

#[test]
fn l6_weighted_proxy_by_hand() {
    let inst = l6();
    let params = LocalityBatchParams {
        objective: BatchObjective::WeightedCompletion,
        weights: Some(vec![1.0, 1.0]),
        ..LocalityBatchParams::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let s = LocalityBatch::new(params.clone()).solve(&inst, &mut rng).unwrap();
    let lp = s.report.proxy_lp_bound.unwrap();
    assert!((lp - 3.0).abs() < 1e-7, "LP value {lp}");
    assert_eq!(s.report.weighted_completion, 3.0);
    let mut c = s.report.completions.clone();
    c.sort();
    assert_eq!(c, vec![1, 2]);
    assert!((s.certificate.achieved_ratio() - 1.0).abs() < 1e-7);
    s.certificate.check(1e-7).unwrap();
    verify(&inst, &s.schedule).unwrap();
    verify_locality(&inst, &check_params(&inst, &params), &s.schedule).unwrap();
}
