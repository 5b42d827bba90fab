//! The offline batch variant of the locality-aware scheduler: the
//! hand-checkable makespan case, the weighted proxy, the sandwich
//! `T_LP ≤ OPT ≤ C_max` against HiGHS on small random instances, the
//! offline list schedules by hand, determinism and typed errors (and,
//! without the `highs` feature, the typed error of the LP steps).

mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::locality::{LocalityBatch, LocalityBatchParams};
#[cfg(feature = "highs")]
use dmlsched::model::units::{gb, gbps};
use dmlsched::model::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// A machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with `b_int` Gbit/s
/// between tasks on it.
fn machine(id: u32, b_int: f64) -> Machine {
    common::l1_machine(id, b_int, Hosting::Both)
}

/// The job of the common hand set-up: `Q = 400`, `τ = 0.5 s`,
/// `e = 125 MB`, `b = 1`, `B = 4` Gbit/s, worker `[1, 2, 8 GB, 1]`, PS
/// `[0, 2, 8 GB, 4]`, at most 4 workers.
fn job(id: u32) -> Job {
    common::l1_job(id, 0.0, 8.0, 8.0)
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

/// The parameters `verify_locality` checks a batch schedule with.
#[cfg(feature = "highs")]
fn check_params(
    inst: &Instance,
    p: &LocalityBatchParams,
) -> dmlsched::algorithms::locality::LocalityParams {
    {
        let mut built = dmlsched::algorithms::locality::LocalityParams::default();
        built.horizon = inst.horizon_slots();
        built.intra_factor = p.intra_factor;
        built.allow_local = p.allow_local;
        built
    }
}

/// Without the solver the LP-dependent steps are typed errors.
#[cfg(not(feature = "highs"))]
#[test]
fn without_highs_the_lp_steps_are_typed_errors() {
    use dmlsched::lp::LpError;
    use dmlsched::pcip::PcError;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let e = LocalityBatch::new(LocalityBatchParams::default())
        .and_then(|a| a.solve(&l6(), &mut rng))
        .unwrap_err();
    assert!(
        matches!(
            e,
            dmlsched::Error::Pc(PcError::Lp(LpError::SolverUnavailable))
        ),
        "{e:?}"
    );
}

#[cfg(feature = "highs")]
mod with_highs {
    use super::*;
    use dmlsched::algorithms::locality::{
        BatchObjective, BatchSource, InnerSolver, LocalityBaseline, LocalityError, verify_locality,
    };
    use dmlsched::online::Reservation;
    use dmlsched::schedule::verify;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    #[test]
    fn l6_offline_makespan_by_hand() {
        let inst = l6();
        let params = LocalityBatchParams::default();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let s = LocalityBatch::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rng))
            .unwrap();
        let r = &s.report;
        assert_eq!((r.t_lo, r.t_lp, r.t_hi, r.makespan), (1, 2, 2, 2));
        assert_eq!(r.heuristic, LocalityBaseline::AlwaysLocalFirstFit);
        assert_eq!(r.local_makespan, Some(2));
        assert!(
            r.attempts.is_empty(),
            "the rounding range T_LP..T_hi is empty"
        );
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
                .unwrap()
                .round_at(&inst, 2, seed)
                .unwrap()
                .expect("a schedule at T = 2");
            let c_max = plans.iter().map(|p| p.completion_slot() + 1).max().unwrap();
            assert_eq!(c_max, 2, "seed {seed}");
        }
        // T = 1 is LP-infeasible: no rounding there.
        assert!(
            LocalityBatch::new(params)
                .unwrap()
                .round_at(&inst, 1, 0)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn l6_weighted_proxy_by_hand() {
        let inst = l6();
        let mut params = LocalityBatchParams::default();
        params.objective = BatchObjective::WeightedCompletion;
        params.weights = Some(vec![1.0, 1.0]);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let s = LocalityBatch::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rng))
            .unwrap();
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

    /// A job of `N` workers and `Q = 100·N` mini-batches (one epoch), with
    /// memory `mem_w`/`mem_s` GB per worker/PS.
    fn sized_job(id: u32, n: u32, m: u32, mem_w: f64, mem_s: f64) -> Job {
        let mut j = job(id);
        if let Architecture::ParameterServer(p) = &mut j.architecture {
            p.data_chunks = n;
            p.max_workers = n;
            p.max_ps = n;
            p.minibatches_per_chunk = m;
            p.worker = p.worker.memory(gb(mem_w));
            p.ps = p.ps.memory(gb(mem_s));
        }
        j
    }

    fn solve(
        inst: &Instance,
        params: &LocalityBatchParams,
    ) -> dmlsched::Result<LocalityBatchReportSolved> {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let s = LocalityBatch::new(params.clone())?.solve(inst, &mut rng)?;
        verify(inst, &s.schedule).unwrap();
        verify_locality(inst, &check_params(inst, params), &s.schedule).unwrap();
        s.certificate.check(1e-9).unwrap();
        Ok(s)
    }

    type LocalityBatchReportSolved =
        dmlsched::algorithms::Solved<dmlsched::algorithms::locality::LocalityBatchReport>;

    #[test]
    fn offline_list_schedules_by_hand() {
        // One machine, two jobs of N = 2 and Q = 200. AlwaysLocal: both fit
        // LOCAL beside each other in slot 1 (2 GPUs each, r^L = 100).
        // AlwaysSpread (r^D = 40): job 0 runs 2, 2, 1 workers in slots 1–3
        // with one PS (NIC 2 + 4); job 1 finds NIC 4 left in slots 1–2, too
        // little for a worker and a PS, then 1 worker in slot 3 (NIC 1 + 4
        // beside job 0's 1 + 4) and 2 in slots 4 and 5: makespan 5.
        let jobs = vec![
            sized_job(0, 2, 100, 8.0, 8.0),
            sized_job(1, 2, 100, 8.0, 8.0),
        ];
        let inst = Instance::new(Cluster::new(vec![machine(0, 4.0)]), jobs, 100.0, 8).unwrap();
        let s = solve(&inst, &LocalityBatchParams::default()).unwrap();
        let r = &s.report;
        assert_eq!((r.local_makespan, r.spread_makespan), (Some(1), Some(5)));
        assert_eq!((r.t_lo, r.t_lp, r.t_hi, r.makespan), (1, 1, 1, 1));
        // κ = 1: LOCAL is no faster (r^L = 40); AlwaysLocal needs 2, 2, 1
        // workers per job in slots 1–3 (both fit side by side): makespan 3 =
        // d_min = ⌈200/(2·40)⌉.
        let mut p = LocalityBatchParams::default();
        p.intra_factor = Some(1.0);
        let s = solve(&inst, &p).unwrap();
        let r = &s.report;
        assert_eq!((r.local_makespan, r.spread_makespan), (Some(3), Some(5)));
        assert_eq!((r.t_lo, r.t_lp, r.t_hi, r.makespan), (3, 3, 3, 3));
        assert_eq!(r.heuristic, LocalityBaseline::AlwaysLocalFirstFit);
        // LOCAL disabled: only the spreading schedule runs.
        let mut p = LocalityBatchParams::default();
        p.allow_local = false;
        let s = solve(&inst, &p).unwrap();
        assert_eq!(s.report.local_makespan, None);
        assert_eq!(s.report.spread_makespan, Some(5));
        assert_eq!(s.report.heuristic, LocalityBaseline::AlwaysSpreadGreedy);
        assert!(s.report.makespan <= 5 && s.report.makespan >= s.report.t_lp);
    }

    #[test]
    fn same_seed_same_schedule() {
        let jobs = (0..4)
            .map(|i| sized_job(i, 2 + i, 100 + 50 * i, 8.0 + 4.0 * f64::from(i), 8.0))
            .collect();
        let inst = Instance::new(
            Cluster::new(vec![machine(0, 2.0), machine(1, 2.0)]),
            jobs,
            100.0,
            16,
        )
        .unwrap();
        for objective in [BatchObjective::Makespan, BatchObjective::WeightedCompletion] {
            let mut p = LocalityBatchParams::default();
            p.objective = objective;
            p.seed = Some(5);
            let a = solve(&inst, &p).unwrap();
            let b = solve(&inst, &p).unwrap();
            assert_eq!(a.schedule, b.schedule);
            assert_eq!(a.report.plans, b.report.plans);
            assert_eq!(a.report.attempts, b.report.attempts);
            assert_eq!(a.certificate.objective, b.certificate.objective);
            assert!(a.report.t_lp <= a.report.makespan);
            assert!(a.report.makespan <= a.report.t_hi);
        }
    }

    fn is_batch_error(e: &dmlsched::Error, f: impl Fn(&LocalityError) -> bool) -> bool {
        matches!(e, dmlsched::Error::Locality(l) if f(l))
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let d = LocalityBatchParams::default();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let run = |inst: &Instance, p: &LocalityBatchParams| {
            LocalityBatch::new(p.clone())
                .and_then(|a| a.solve(inst, &mut ChaCha8Rng::seed_from_u64(0)))
                .unwrap_err()
        };
        // No job.
        let empty = Instance::new(Cluster::new(vec![machine(0, 4.0)]), vec![], 100.0, 4).unwrap();
        let e = run(&empty, &d);
        assert!(
            is_batch_error(&e, |l| matches!(l, LocalityError::InvalidOption { .. })),
            "{e}"
        );
        // A job arriving after the first slot.
        let mut late = job(1);
        late.arrival_s = 150.0;
        let inst = Instance::new(
            Cluster::new(vec![machine(0, 4.0)]),
            vec![job(0), late],
            100.0,
            4,
        )
        .unwrap();
        let e = run(&inst, &d);
        assert!(is_batch_error(&e, |l| matches!(
            l,
            LocalityError::UnsupportedJob { job: JobId(1), .. }
        )));
        // A job that fits nowhere: its worker needs the GPU machine, its PS the
        // NIC of that same machine, and the two do not fit together (CPU 3).
        let small = Resources::zero().cpu_cores(3.0).memory(gb(64.0));
        let m0 = Machine::new(MachineId(0), small.nic(gbps(1.0)), gbps(4.0));
        let m1 = Machine::new(MachineId(1), small.gpus(4.0).nic(gbps(10.0)), gbps(4.0));
        let inst = Instance::new(Cluster::new(vec![m0, m1]), vec![job(0)], 100.0, 4).unwrap();
        let e = run(&inst, &d);
        assert!(
            is_batch_error(&e, |l| matches!(
                l,
                LocalityError::JobCannotFit { job: JobId(0), .. }
            )),
            "{e}"
        );
        // Slot and size caps.
        let e = run(&l6(), &{
            let mut built = d.clone();
            built.max_slots = 1;
            built
        });
        assert!(
            is_batch_error(&e, |l| matches!(
                l,
                LocalityError::BatchTooLarge { what: "slots", .. }
            )),
            "{e}"
        );
        let e = run(&l6(), &{
            let mut built = d.clone();
            built.max_columns = 10;
            built
        });
        assert!(
            is_batch_error(&e, |l| matches!(
                l,
                LocalityError::BatchTooLarge {
                    what: "columns",
                    ..
                }
            )),
            "{e}"
        );
        // A huge job: d_min beyond the slot cap, refused before any program.
        let huge = sized_job(0, 2, u32::MAX, 8.0, 8.0);
        let inst =
            Instance::new(Cluster::new(vec![machine(0, 4.0)]), vec![huge], 100.0, 1000).unwrap();
        let e = run(&inst, &d);
        assert!(
            is_batch_error(&e, |l| matches!(l, LocalityError::BatchTooLarge { .. })),
            "{e}"
        );
        // The horizon is too short for any list schedule.
        let inst = Instance::new(
            Cluster::new(vec![machine(0, 4.0)]),
            vec![job(0), job(1)],
            100.0,
            1,
        )
        .unwrap();
        let e = run(&inst, &d);
        assert!(
            is_batch_error(&e, |l| matches!(
                l,
                LocalityError::NoListSchedule { slots: 1, .. }
            )),
            "{e}"
        );
        // Bad options.
        for p in [
            {
                let mut built = d.clone();
                built.weights = Some(vec![1.0]);
                built
            },
            {
                let mut built = d.clone();
                built.weights = Some(vec![1.0, f64::NAN]);
                built
            },
            {
                let mut built = d.clone();
                built.inner = InnerSolver::ExactMip {
                    time_limit_s: f64::NAN,
                };
                built
            },
            {
                let mut built = d.clone();
                built.inner = InnerSolver::LpRound {
                    draws: 0,
                    lambdas: [1.0; 8],
                };
                built
            },
            {
                let mut built = d.clone();
                built.objective = BatchObjective::WeightedCompletion;
                built.inner = InnerSolver::exact_mip();
                built
            },
            {
                let mut built = d.clone();
                built.intra_factor = Some(f64::NAN);
                built
            },
        ] {
            let e = LocalityBatch::new(p)
                .and_then(|a| a.solve(&l6(), &mut rng))
                .unwrap_err();
            assert!(
                is_batch_error(&e, |l| matches!(l, LocalityError::InvalidOption { .. })),
                "{e}"
            );
        }
    }

    fn config(cases: u32) -> ProptestConfig {
        ProptestConfig {
            cases,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/locality_batch.txt",
            ))),
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config(16))]

        /// `T_LP ≤ OPT ≤ C_max` with the optimum proven by the exact MIP
        /// bisection; both schedules pass both checkers.
        #[test]
        fn lp_bound_exact_optimum_and_rounding_sandwich(
            machines in 1u32..3,
            b_int in prop::sample::select(vec![1.0, 2.0, 4.0]),
            specs in prop::collection::vec((1u32..5, prop::sample::select(vec![50u32, 100, 200]), 4.0f64..30.0, 4.0f64..30.0), 1..4),
            seed in any::<u64>(),
        ) {
            let ms = (0..machines).map(|i| machine(i, b_int)).collect();
            let jobs = specs
                .iter()
                .enumerate()
                .map(|(i, &(n, m, w, s))| sized_job(i as u32, n, m, w, s))
                .collect();
            let inst = Instance::new(Cluster::new(ms), jobs, 100.0, 12).unwrap();
            let mut p = LocalityBatchParams::default();
            p.seed = Some(seed);
            let round = match solve(&inst, &p) {
                Ok(s) => s,
                Err(e) => {
                    prop_assert!(matches!(e, dmlsched::Error::Locality(_)), "{e}");
                    return Ok(());
                }
            };
            prop_assert!(round.report.t_lp <= round.report.makespan);
            prop_assert!(round.report.makespan <= round.report.t_hi);
            let inner = InnerSolver::ExactMip { time_limit_s: 3.0 };
            let exact = solve(&inst, &{ let mut built = p; built.inner = inner; built }).unwrap();
            prop_assert_eq!(exact.report.t_lp, round.report.t_lp);
            match exact.report.exact_makespan {
                Some(opt) => {
                    prop_assert_eq!(exact.report.makespan, opt);
                    prop_assert!(round.report.t_lp <= opt);
                    prop_assert!(opt <= round.report.makespan);
                    prop_assert!(exact.certificate.optimum() == Some(f64::from(opt)));
                }
                None => {
                    // A MIP stopped at its limit without a point: not exact,
                    // and its proven bound still sits below both makespans.
                    let info = exact.certificate.exact.clone().unwrap();
                    prop_assert!(!info.status.proves_optimality());
                    prop_assert!(info.dual_bound <= f64::from(round.report.makespan));
                    prop_assert!(info.dual_bound >= f64::from(exact.report.t_lp));
                }
            }
        }
    }
}
