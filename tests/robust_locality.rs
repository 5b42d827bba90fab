//! Robustness of the locality-aware scheduler with its default LP-rounding
//! inner solver (and the exact one): fuzz-style property tests on tiny and
//! extreme (NaN-free) instances — a result whose schedule both checkers
//! accept, or a typed error; never a panic, never a hang. Every case runs
//! under the watchdog.
#![cfg(feature = "highs")]

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::locality::{
    BatchObjective, InnerSolver, Locality, LocalityBatch, LocalityBatchParams, LocalityParams,
    OFFLINE_LIMITS, offline_optimum, verify_locality,
};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::verify;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/robust_locality.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// One job of the extreme strategy: utility, (worker demand, NIC demand in
/// Gbit/s), compute time as a fraction of the slot, (epochs, chunks,
/// mini-batches), gradient MB, late arrival.
type JobSpec = (Utility, (f64, f64), f64, (u32, u32, u32), f64, bool);

fn utility() -> impl Strategy<Value = Utility> {
    prop::sample::select(vec![
        Utility::Constant { value: 0.0 },
        Utility::Constant { value: 5e-324 },
        Utility::Constant { value: 1.0 },
        Utility::Constant { value: 1e19 },
        Utility::Constant { value: 1e300 },
        Utility::Sigmoid {
            g1: 1e300,
            g2: 50.0,
            g3: 0.0,
        },
        Utility::Table {
            values: vec![1e300, 0.0],
        },
        Utility::Linear {
            g1: 1e20,
            slope: 1e19,
        },
    ])
}

fn job_spec() -> impl Strategy<Value = JobSpec> {
    (
        utility(),
        (
            prop::sample::select(vec![1e-12, 1e-6, 1.0, 64.0]),
            prop::sample::select(vec![1e-12, 1e-3, 1.0]),
        ),
        prop::sample::select(vec![1e-9, 0.5, 3.0]),
        (1u32..4, 1u32..4, 1u32..3),
        prop::sample::select(vec![0.0, 1e-6, 125.0, 1e9]),
        any::<bool>(),
    )
}

/// Machines (CPU, NIC Gbit/s, intra-machine Gbit/s, role) and jobs.
fn extreme_instance() -> impl Strategy<Value = (Cluster, Vec<Job>, f64, u32)> {
    let horizon = prop::sample::select(vec![1u32, 2, 7, 300]);
    let slot = prop::sample::select(vec![1e-3, 1.0, 3600.0, 1e12]);
    let machine = (
        prop::sample::select(vec![1e-9, 64.0, 1e15, 1e300]),
        prop::sample::select(vec![1.0, 100.0, 1e12]),
        prop::sample::select(vec![1e-6, 1.0, 1e6]),
        0u8..4,
    );
    (
        horizon,
        slot,
        prop::collection::vec(machine, 1..4),
        prop::collection::vec(job_spec(), 0..3),
    )
        .prop_map(|(horizon, slot, machines, jobs)| {
            let machines = machines
                .into_iter()
                .enumerate()
                .map(|(i, (cpu, nic, intra, role))| {
                    let hosts = match role {
                        0 => Hosting::Workers,
                        1 => Hosting::ParameterServers,
                        _ => Hosting::Both,
                    };
                    let cap = Resources::zero().cpu_cores(cpu).nic(gbps(nic));
                    Machine::new(MachineId(i as u32), cap, gbps(intra)).hosting(hosts)
                })
                .collect();
            let jobs = jobs
                .into_iter()
                .enumerate()
                .map(|(i, spec)| job(i as u32, spec, slot, horizon))
                .collect();
            (Cluster::new(machines), jobs, slot, horizon)
        })
}

fn job(id: u32, spec: JobSpec, slot: f64, horizon: u32) -> Job {
    let (u, (d, b), omega, (e, n, m), grad_mb, late) = spec;
    let mut j = Job::new(
        JobId(id),
        0.0,
        PsJob {
            epochs: e,
            data_chunks: n,
            minibatches_per_chunk: m,
            minibatch_compute_s: omega * slot,
            gradient_bytes: mb(grad_mb),
            worker: Resources::zero().cpu_cores(d).nic(gbps(b)),
            ps: Resources::zero().cpu_cores(d).nic(gbps(b)),
            max_workers: n,
            max_ps: n,
            ..PsJob::default()
        },
    )
    .with_utility(u);
    if late {
        j.arrival_s = slot * (f64::from(horizon) - 1.0);
    }
    j
}

/// Runs the scheduler; panics (caught by the watchdog) on an untyped
/// outcome or a schedule a checker rejects.
fn run_case(inst: &Instance, params: &LocalityParams) {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    match Locality::new(params.clone()).and_then(|a| a.solve(inst, &mut rng)) {
        Ok(s) => {
            verify(inst, &s.schedule).unwrap();
            verify_locality(inst, params, &s.schedule).unwrap();
            assert!(s.report.max_rho_hat >= 1.0);
            assert!(
                s.report
                    .totals
                    .cost_ratios
                    .iter()
                    .all(|r| r.1 >= 1.0 - 1e-7)
            );
        }
        Err(
            dmlsched::Error::Locality(_)
            | dmlsched::Error::Online(_)
            | dmlsched::Error::Pc(_)
            | dmlsched::Error::Lp(_)
            | dmlsched::Error::Model(_),
        ) => {}
        Err(e) => panic!("unexpected error kind: {e:?}"),
    }
}

/// Runs the offline batch; panics (caught by the watchdog) on an untyped
/// outcome, a schedule a checker rejects or an inconsistent certificate.
fn run_batch(inst: &Instance, params: &LocalityBatchParams) {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    match LocalityBatch::new(params.clone()).and_then(|a| a.solve(inst, &mut rng)) {
        Ok(s) => {
            verify(inst, &s.schedule).unwrap();
            let mut check = LocalityParams::default();
            check.horizon = inst.horizon_slots();
            check.intra_factor = params.intra_factor;
            check.allow_local = params.allow_local;
            verify_locality(inst, &check, &s.schedule).unwrap();
            s.certificate.check(1e-6).unwrap();
            assert!(s.report.t_lp <= s.report.makespan);
            assert!(s.report.makespan <= s.report.t_hi);
        }
        Err(
            dmlsched::Error::Locality(_)
            | dmlsched::Error::Pc(_)
            | dmlsched::Error::Lp(_)
            | dmlsched::Error::Model(_),
        ) => {}
        Err(e) => panic!("unexpected error kind: {e:?}"),
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// The offline batch (makespan by LP rounding or the exact MIP
    /// bisection, and the weighted proxy) on the same extreme instances:
    /// a result both checkers accept, or a typed error.
    #[test]
    fn locality_batch_on_extreme_instances(
        (cluster, jobs, slot, horizon) in extreme_instance(),
        seed in any::<u64>(),
        mode in 0u8..3,
    ) {
        within(WATCHDOG_S, "locality batch on an extreme instance", move || {
            // Mostly true batches (every job in the first slot); a quarter
            // keep their late arrivals, which the batch refuses.
            let jobs: Vec<Job> = if seed % 4 == 0 {
                jobs
            } else {
                jobs.into_iter().map(|mut j| { j.arrival_s = 0.0; j }).collect()
            };
            let Ok(inst) = Instance::new(cluster, jobs, slot, horizon) else {
                return;
            };
            let (objective, inner) = match mode {
                0 => (BatchObjective::Makespan, InnerSolver::lp_round()),
                1 => (BatchObjective::Makespan, InnerSolver::ExactMip { time_limit_s: 2.0 }),
                _ => (BatchObjective::WeightedCompletion, InnerSolver::lp_round()),
            };
            let mut params = LocalityBatchParams::default();
            params.objective = objective;
            params.inner = inner;
            params.seed = Some(seed);
            run_batch(&inst, &params);
        });
    }

    /// The scheduler (LP rounding, random run seed; and the exact MIP) on
    /// valid but extreme instances: a result both checkers accept, or a
    /// typed error.
    #[test]
    fn locality_on_extreme_instances(
        (cluster, jobs, slot, horizon) in extreme_instance(),
        seed in any::<u64>(),
        exact in any::<bool>(),
    ) {
        within(WATCHDOG_S, "locality on an extreme instance", move || {
            let Ok(inst) = Instance::new(cluster, jobs, slot, horizon) else {
                return;
            };
            let inner = if exact { InnerSolver::exact_mip() } else { InnerSolver::lp_round() };
            let mut params = LocalityParams::default();
            params.inner = inner;
            params.seed = Some(seed);
            run_case(&inst, &params);
        });
    }

    /// The offline batch on tiny ordinary instances with odd rounding
    /// options (one draw, large scalings), random weights, both objectives.
    #[test]
    fn locality_batch_with_odd_rounding_options(
        draws in 1u32..4,
        lambda in 1.0f64..4.0,
        n in 1u32..6,
        mem in 2.0f64..40.0,
        machines in 1u32..4,
        jobs in 1u32..5,
        weighted in any::<bool>(),
        weight in 0.0f64..1e6,
    ) {
        within(WATCHDOG_S, "locality batch with odd rounding options", move || {
            let ms = (0..machines)
                .map(|i| {
                    let cap = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(gb(64.0)).nic(gbps(10.0));
                    Machine::new(MachineId(i), cap, gbps(2.0))
                })
                .collect();
            let jobs = (0..jobs)
                .map(|i| {
                    let mut j = job(i, (Utility::Linear { g1: 100.0, slope: 10.0 }, (1.0, 1.0), 0.005, (1, n + i % 2, 100), 125.0, false), 100.0, 24);
                    if let Architecture::ParameterServer(p) = &mut j.architecture {
                        p.worker = p.worker.gpus(1.0).memory(gb(mem));
                        p.ps = p.ps.memory(gb(mem));
                    }
                    j.weight = weight * f64::from(i);
                    j
                })
                .collect();
            let Ok(inst) = Instance::new(Cluster::new(ms), jobs, 100.0, 24) else { return };
            let mut params = LocalityBatchParams::default();
            params.objective = if weighted { BatchObjective::WeightedCompletion } else { BatchObjective::Makespan };
            params.inner = InnerSolver::LpRound { draws, lambdas: [lambda; 8] };
            run_batch(&inst, &params);
        });
    }

    /// Tiny ordinary instances with odd rounding options (one draw, large
    /// scalings) and a random `L` allowance.
    #[test]
    fn locality_with_odd_rounding_options(
        draws in 1u32..4,
        lambda in 1.0f64..4.0,
        rho0 in 1.0f64..3.0,
        n in 1u32..5,
        mem in 2.0f64..40.0,
        machines in 1u32..4,
    ) {
        within(WATCHDOG_S, "locality with odd rounding options", move || {
            let ms = (0..machines)
                .map(|i| {
                    let cap = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(gb(64.0)).nic(gbps(10.0));
                    Machine::new(MachineId(i), cap, gbps(2.0))
                })
                .collect();
            let jobs = (0..3)
                .map(|i| {
                    let mut j = job(i, (Utility::Linear { g1: 100.0, slope: 10.0 }, (1.0, 1.0), 0.005, (1, n, 100), 125.0, false), 100.0, 6);
                    if let Architecture::ParameterServer(p) = &mut j.architecture {
                        p.worker = p.worker.gpus(1.0).memory(gb(mem));
                        p.ps = p.ps.memory(gb(mem));
                    }
                    j
                })
                .collect();
            let Ok(inst) = Instance::new(Cluster::new(ms), jobs, 100.0, 6) else { return };
            let mut params = LocalityParams::default();
            params.inner = InnerSolver::LpRound { draws, lambdas: [lambda; 8] };
            params.l_allowance = rho0;
            run_case(&inst, &params);
        });
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// The exact offline benchmark on the same extreme instances, with LOCAL
    /// allowed or not and a short time limit: a result whose schedule both
    /// checkers accept (with `objective ≤ upper_bound`), or a typed error
    /// (the size limit included).
    #[test]
    fn offline_optimum_on_extreme_instances(
        (cluster, jobs, slot, horizon) in extreme_instance(),
        allow_local in any::<bool>(),
        window in prop::sample::select(vec![1u32, 3, 64]),
    ) {
        within(WATCHDOG_S, "locality offline optimum on an extreme instance", move || {
            let Ok(inst) = Instance::new(cluster, jobs, slot, horizon) else {
                return;
            };
            let mut params = LocalityParams::default();
            params.allow_local = allow_local;
            params.horizon = window;
            let mut limits = OFFLINE_LIMITS;
            limits.time_limit_s = 5.0;
            match offline_optimum(&inst, &params, &limits) {
                Ok(opt) => {
                    verify(&inst, &opt.schedule).unwrap();
                    verify_locality(&inst, &params, &opt.schedule).unwrap();
                    assert!(opt.upper_bound >= opt.objective, "{} < {}", opt.upper_bound, opt.objective);
                    assert!(opt.objective >= 0.0 && opt.rel_gap >= 0.0);
                }
                // `Pc`: a per-job program the engine refuses (e.g. a
                // coefficient below its range, from a tiny demand).
                Err(
                    dmlsched::Error::Locality(_)
                    | dmlsched::Error::Lp(_)
                    | dmlsched::Error::Pc(_)
                    | dmlsched::Error::Model(_),
                ) => {}
                Err(e) => panic!("unexpected error kind: {e:?}"),
            }
        });
    }
}
