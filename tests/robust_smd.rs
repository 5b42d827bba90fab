//! Robustness of the SMD-style scheduler: every public entry point (the
//! continuous form, one epoch, the simulator policy, the slotted run) on
//! extreme and invalid inputs gives a result or a typed error, never a
//! panic, never a hang (every case under the watchdog). The knapsack
//! program, its solver, the outer selection, the plan evaluator and the
//! wait charges are crate-private; their robustness cases are unit tests
//! (`src/algorithms/smd/tests_internal.rs`).

mod common;

use common::{WATCHDOG_S, within};
#[cfg(feature = "highs")]
use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::smd::*;
use dmlsched::model::*;
use dmlsched::sim::{SimError, SimOptions, simulate};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
#[cfg(feature = "highs")]
use rand::SeedableRng;
#[cfg(feature = "highs")]
use rand::rngs::ChaCha8Rng;

fn extreme() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(5e-324),
        Just(1e-12),
        Just(1.0),
        Just(7.5),
        Just(1e12),
        Just(1e300),
        Just(f64::MAX),
        Just(f64::INFINITY),
        Just(f64::NAN),
        Just(-1.0),
    ]
}

fn params_strategy() -> impl Strategy<Value = SmdParams> {
    (
        0u8..4,
        0u8..3,
        prop_oneof![Just(0usize), Just(1), Just(5), Just(9)],
        prop_oneof![Just(0usize), Just(1), Just(10)],
        any::<bool>(),
        any::<bool>(),
        extreme(),
    )
        .prop_map(|(sel, wait, perm, passes, exact, pow, x)| {
            let mut built = SmdParams::default();
            built.selection = [
                Selection::Best,
                Selection::Joint,
                Selection::Prefix,
                Selection::Greedy,
            ][usize::from(sel)];
            built.wait_charge = match wait {
                0 => WaitCharge::Queue {
                    share_weighted: pow,
                },
                1 => WaitCharge::NextEpoch { horizon_s: x },
                _ => WaitCharge::Parametric { beta: x },
            };
            built.max_permutation_groups = perm;
            built.improvement_passes = passes;
            built.exact = if exact {
                ExactMode::IfSmall { max_columns: 200 }
            } else {
                ExactMode::Never
            };
            built.powers_of_two = pow;
            built.max_candidates_per_job = 256;
            built
        })
}

/// A typed outcome: anything but a panic or a hang is fine here, except
/// that a solver failure on a valid program would be a bug.
fn no_solver_failure<T>(r: &Result<T, SmdError>) -> Result<(), TestCaseError> {
    if let Err(SmdError::LpNotOptimal { status }) = r {
        return Err(TestCaseError::fail(format!("LP not optimal: {status}")));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/robust_smd.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// The continuous form on extreme numbers.
    #[test]
    fn continuous_form_on_extreme_numbers(
        jobs in proptest::collection::vec(
            (extreme(), extreme(), extreme(), proptest::collection::vec((extreme(), extreme()), 0..3)),
            0..4,
        ),
        capacity in extreme(),
        epsilon in extreme(),
        iterations in prop_oneof![Just(0usize), Just(3), Just(2000)],
    ) {
        use dmlsched::algorithms::smd::continuous::*;
        let jobs: Vec<ContinuousJob> = jobs
            .into_iter()
            .map(|(work, x_min, theta_min, segments)| ContinuousJob { work, x_min, theta_min, segments })
            .collect();
        let mut opts = ContinuousOptions::default();
        opts.epsilon = epsilon;
        opts.max_iterations = iterations;
        let r = within(WATCHDOG_S, "continuous", move || solve_continuous(&jobs, capacity, &opts));
        if let Ok(s) = r {
            prop_assert!(!s.objective.is_nan());
            prop_assert!(s.allocation.iter().all(|x| x.is_finite()));
        }
    }

    /// The simulator policy and one epoch on extreme but valid layered
    /// instances.
    #[test]
    fn scheduler_on_extreme_instances(
        machines in prop_oneof![Just(1u32), Just(3), Just(200)],
        capacity in prop_oneof![Just(1.0), Just(8.0), Just(1e300)],
        specs in proptest::collection::vec(
            (
                prop_oneof![Just(0.0), Just(1e-12), Just(1.0), Just(1e12)],
                prop_oneof![Just(0.0), Just(1.0), Just(1e9), Just(1e300)],
                prop_oneof![Just(1u32), Just(1000), Just(u32::MAX)],
                prop_oneof![Just(1u32), Just(4), Just(u32::MAX)],
                0.0f64..100.0,
            ),
            1..4,
        ),
        params in params_strategy(),
    ) {
        let cap = Resources::zero()
            .gpus(capacity)
            .cpu_cores(capacity * 8.0)
            .memory(capacity * 1e9)
            .nic(capacity * 1e9);
        let cluster = Cluster::homogeneous(machines, cap, 1e10);
        let jobs: Vec<Job> = specs
            .iter()
            .enumerate()
            .map(|(i, &(f, bytes, work, w, arrival))| {
                let layer = Layer { forward_s: f, backward_s: 2.0 * f, bytes, update_s: 0.0 };
                let ps = PsJob {
                    minibatches_per_chunk: work,
                    worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(1e8),
                    ps: Resources::zero().cpu_cores(1.0).nic(1e8),
                    max_workers: w,
                    max_ps: w,
                    sync: SyncMode::Synchronous,
                    layers: Some(vec![layer; 2]),
                    ..PsJob::default()
                };
                Job::new(JobId(i as u32), arrival, ps)
            })
            .collect();
        let Ok(inst) = Instance::new(cluster, jobs, 60.0, 1_000_000) else {
            return Ok(());
        };
        let what = format!("{machines} × {capacity:e}, {specs:?}, {params:?}");
        let (sim, ep) = within(WATCHDOG_S, &what, move || {
            let free: Vec<Resources> = inst.cluster().machines.iter().map(|m| m.capacity).collect();
            let ejobs: Vec<EpochJob> = inst
                .jobs()
                .iter()
                .map(|j| EpochJob::waiting(j.id, dmlsched::sim::total_work(j)))
                .collect();
            let ep = epoch(&inst, &free, &ejobs, &params);
            let mut smd = SmdScheduler::new(params);
            let mut opts = SimOptions::default();
            opts.max_events = 200;
            let sim = simulate(&inst, &mut smd, &opts).map(|r| (r, smd.reports().to_vec()));
            (sim, ep)
        });
        no_solver_failure(&ep)?;
        if let Ok(ep) = ep {
            ep.report.check(1e-9).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        match sim {
            Ok((r, reports)) => {
                for rep in reports {
                    rep.check(1e-9).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
                for j in &r.jobs {
                    prop_assert!(j.remaining_work >= 0.0);
                }
            }
            Err(e) => prop_assert!(
                !matches!(e, dmlsched::Error::Sim(SimError::Stalled { .. }))
                    && !matches!(e, dmlsched::Error::Smd(SmdError::LpNotOptimal { .. })),
                "{e}"
            ),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/robust_smd.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// A whole slotted run ([`Smd::solve`]) on small layered instances,
    /// short horizons (overloaded runs stop there) and extreme slot
    /// lengths: the schedule always passes the checker and the completed
    /// and unfinished jobs add up, or the instance is refused as input
    /// (never a checker failure or another run failure). Needs the LP
    /// solver (the epoch programs are LPs).
    #[cfg(feature = "highs")]
    #[test]
    fn slotted_runs_always_pass_the_checker(
        slot_s in prop_oneof![1 => Just(1e-3), 1 => Just(1.0), 4 => Just(60.0), 1 => Just(1e9), 2 => Just(1e20)],
        horizon_slots in prop_oneof![Just(1u32), Just(3), Just(50), Just(4424)],
        specs in proptest::collection::vec(
            (
                prop_oneof![2 => Just(0.0), 4 => Just(1e-3), 1 => Just(1.0), 1 => Just(1e9)],
                prop_oneof![2 => Just(0.0), 4 => Just(1e6), 1 => Just(9e15)],
                prop_oneof![Just(1u32), Just(1000), Just(u32::MAX)],
                prop_oneof![Just(1u32), Just(4), Just(16)],
                0.0f64..0.99,
            ),
            1..5,
        ),
        greedy in any::<bool>(),
    ) {
        let cap = Resources::zero().gpus(8.0).cpu_cores(64.0).memory(5e11).nic(2.5e9);
        let horizon = slot_s * f64::from(horizon_slots);
        let jobs: Vec<Job> = specs
            .iter()
            .enumerate()
            .map(|(i, &(f, bytes, work, w, at))| {
                let layer = Layer { forward_s: f, backward_s: 2.0 * f, bytes, update_s: 0.0 };
                let ps = PsJob {
                    minibatches_per_chunk: work,
                    worker: Resources::zero().gpus(1.0).cpu_cores(4.0).nic(1.25e9),
                    ps: Resources::zero().cpu_cores(4.0).nic(1.25e9),
                    max_workers: w,
                    max_ps: w.min(8),
                    sync: SyncMode::Synchronous,
                    layers: Some(vec![layer; 3]),
                    ..PsJob::default()
                };
                Job::new(JobId(i as u32), at * horizon, ps)
            })
            .collect();
        let n = jobs.len();
        let cluster = Cluster::homogeneous(2, cap, 1e11);
        let Ok(inst) = Instance::new(cluster, jobs, slot_s, horizon_slots) else {
            return Ok(());
        };
        let mut params = SmdParams::default();
        params.selection = if greedy { Selection::Greedy } else { Selection::Best };
        let what = format!("slot {slot_s}, {horizon_slots} slots, {specs:?}");
        let check = inst.clone();
        let r = within(WATCHDOG_S, &what, move || Smd::new(params).and_then(|smd| smd.solve(&inst, &mut ChaCha8Rng::seed_from_u64(0))));
        match r {
            Ok(run) => {
                dmlsched::schedule::verify(&check, &run.schedule)
                    .map_err(|v| TestCaseError::fail(format!("{what}: {v}")))?;
                prop_assert_eq!(run.report.completed() + run.report.unfinished(), n);
                for js in &run.schedule.jobs {
                    for s in &js.segments {
                        prop_assert!(s.slots.end <= horizon_slots, "{}", what);
                    }
                }
            }
            Err(e) => prop_assert!(e.is_input(), "{what}: {e}"),
        }
    }
}
