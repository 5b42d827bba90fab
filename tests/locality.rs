//! The locality-aware scheduler: hand-computed oracle answers (prices
//! injected), role flags, determinism, the realised factor, and end-to-end
//! runs checked by both checkers (property tests on tiny instances).
#![cfg(feature = "highs")]

mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::locality::{
    InnerSolver, Locality, LocalityCluster, LocalityJob, LocalityOracle, LocalityParams,
    LocalityPlan, LocalityPolicy, SlotConfig, verify_locality,
};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::online::{
    BoundsChoice, DeadlineBound, OracleQuality, PriceView, PricingOracle, Reservation,
    realised_factor,
};
use dmlsched::schedule::{Configuration, verify};
use dmlsched::sim::{PsTiming, SimOptions, simulate};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

const RES: usize = 5;

/// A machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with `b_int` Gbit/s
/// between tasks on it.
fn machine(id: u32, b_int: f64, hosts: Hosting) -> Machine {
    common::l1_machine(id, b_int, hosts)
}

/// The job of the common set-up: `Q = 400`, `τ = 0.5 s`, `e = 125 MB`,
/// `b = 1`, `B = 4` Gbit/s, worker `[1, 2, mem_w, 1]`, PS `[0, 2, mem_s, 4]`,
/// `f(δ) = 100 − 10δ`.
fn job(id: u32, mem_w: f64, mem_s: f64) -> Job {
    common::l1_job(id, 0.0, mem_w, mem_s).with_utility(Utility::Linear {
        g1: 100.0,
        slope: 10.0,
    })
}

/// Instance, cluster and the job's model (Δ = 100 s, `T` slots).
fn setup(machines: Vec<Machine>, j: Job, horizon: u32) -> (Instance, LocalityCluster, LocalityJob) {
    let inst = Instance::new(Cluster::new(machines), vec![j], 100.0, horizon).unwrap();
    let cl = LocalityCluster::from_instance(&inst).unwrap();
    let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 64, None).unwrap();
    (inst, cl, lj)
}

/// Price 1 per unit on machine 0 and `p2` on machine 1 in every slot;
/// full capacity residuals.
fn view(p2: f64, horizon: u32) -> PriceView<'static> {
    let cap = [4.0, 16.0, 64.0, 0.0, 10.0];
    PriceView::from_explicit(
        2,
        RES,
        horizon,
        move |m, _, _| if m.0 == 0 { 1.0 } else { p2 },
        move |_, r, _| cap[r.0 as usize],
    )
}

fn exact() -> InnerSolver {
    InnerSolver::exact_mip()
}

#[test]
fn l1_local_wins_when_intra_bandwidth_is_high() {
    let (_, cl, lj) = setup(
        vec![
            machine(0, 4.0, Hosting::Both),
            machine(1, 4.0, Hosting::Both),
        ],
        job(0, 8.0, 8.0),
        4,
    );
    assert!((lj.rate_dist - 40.0).abs() < 1e-9);
    assert!((lj.rate_local[0] - 100.0).abs() < 1e-9);
    let mut oracle = LocalityOracle::new(cl, exact());
    let resp = oracle.best_response(0, &lj, &view(1.1, 4)).unwrap();
    assert_eq!(resp.quality, OracleQuality::Exact);
    let plan = resp.plan.expect("a plan");
    assert_eq!(plan.slots.len(), 1);
    assert_eq!(plan.slots[0].slot, 0);
    assert_eq!(
        plan.slots[0].config,
        SlotConfig::Local {
            machine: 0,
            workers: 4
        }
    );
    assert!((resp.cost - 54.0).abs() < 1e-9);
    assert!((resp.utility - resp.cost - 46.0).abs() < 1e-9);
    let lbs: Vec<(u32, f64)> = resp
        .deadline_bounds
        .iter()
        .map(|b| (b.slot, b.cost_lower_bound))
        .collect();
    assert_eq!(lbs.len(), 4);
    for (k, (t, lb)) in lbs.iter().enumerate() {
        assert_eq!(*t, k as u32);
        assert!((lb - 54.0).abs() < 1e-6, "LB({t}) = {lb}");
    }
    // Deadlines 2–4 are examined through their LPs only.
    assert_eq!(oracle.last_call().mip_solves, 1);
    assert_eq!(realised_factor(&resp.deadline_bounds, 46.0), 1.0);
}

#[test]
fn l1b_ratio_one_still_prefers_local_on_cost() {
    let (_, cl, lj) = setup(
        vec![
            machine(0, 1.0, Hosting::Both),
            machine(1, 1.0, Hosting::Both),
        ],
        job(0, 8.0, 8.0),
        4,
    );
    assert!((lj.rate_local[0] - lj.rate_dist).abs() < 1e-9);
    let mut oracle = LocalityOracle::new(cl, exact());
    let v = view(1.1, 4);
    let d2 = oracle.solve_deadline(&lj, &v, 1).unwrap();
    assert_eq!(d2.lower_bound, f64::INFINITY);
    assert!(d2.plan.is_none());
    let d3 = oracle.solve_deadline(&lj, &v, 2).unwrap();
    assert!(d3.proven);
    assert!(
        (d3.lower_bound - 135.0).abs() < 1e-6,
        "LB = {}",
        d3.lower_bound
    );
    let (plan, cost) = d3.plan.expect("a plan at deadline 3");
    assert!((cost - 140.0).abs() < 1e-9, "cost {cost}");
    assert!(
        plan.slots
            .iter()
            .all(|s| matches!(s.config, SlotConfig::Local { machine: 0, .. }))
    );
    assert_eq!(
        plan.slots.iter().map(|s| s.config.workers()).sum::<u32>(),
        10
    );
}

#[test]
fn l2_no_colocation_goes_distributed() {
    let (_, cl, lj) = setup(
        vec![
            machine(0, 4.0, Hosting::Both),
            machine(1, 4.0, Hosting::Both),
        ],
        job(0, 20.0, 50.0),
        4,
    );
    let mut oracle = LocalityOracle::new(cl, exact());
    let v = view(1.0, 4);
    let d3 = oracle.solve_deadline(&lj, &v, 2).unwrap();
    assert!(d3.plan.is_none() && d3.proven);
    let d4 = oracle.solve_deadline(&lj, &v, 3).unwrap();
    assert!(d4.proven);
    let (plan, cost) = d4.plan.expect("a plan at deadline 4");
    assert!((cost - 464.0).abs() < 1e-9, "cost {cost}");
    for s in &plan.slots {
        let SlotConfig::Distributed { tasks } = &s.config else {
            panic!("slot {} is not DISTRIBUTED", s.slot)
        };
        assert!(tasks.iter().all(|(_, t)| t.workers == 0 || t.ps == 0));
    }
    assert!(d3.lower_bound <= 464.0);
}

#[test]
fn l7_role_flags() {
    // Machine 0 (cheaper) hosts workers only: LOCAL and PSs go to machine 1.
    let (_, cl, lj) = setup(
        vec![
            machine(0, 4.0, Hosting::Workers),
            machine(1, 4.0, Hosting::Both),
        ],
        job(0, 8.0, 8.0),
        4,
    );
    let mut oracle = LocalityOracle::new(cl, exact());
    let plan = oracle
        .best_response(0, &lj, &view(1.1, 4))
        .unwrap()
        .plan
        .unwrap();
    assert_no_ps_on_machine_0(&plan);
    // With LOCAL too slow to win, DISTRIBUTED PSs still avoid machine 0.
    let (_, cl, lj) = setup(
        vec![
            machine(0, 4.0, Hosting::Workers),
            machine(1, 4.0, Hosting::Both),
        ],
        job(0, 20.0, 50.0).with_utility(Utility::Constant { value: 1000.0 }),
        4,
    );
    let mut oracle = LocalityOracle::new(cl, exact());
    let plan = oracle
        .best_response(0, &lj, &view(1.0, 4))
        .unwrap()
        .plan
        .unwrap();
    assert_no_ps_on_machine_0(&plan);
}

fn assert_no_ps_on_machine_0(plan: &LocalityPlan) {
    for s in &plan.slots {
        match &s.config {
            SlotConfig::Local { machine, .. } => assert_ne!(*machine, 0),
            SlotConfig::Distributed { tasks } => {
                assert!(tasks.iter().all(|(m, t)| *m != 0 || t.ps == 0))
            }
        }
    }
}

#[test]
fn l9_realised_factor() {
    let b = [
        DeadlineBound {
            slot: 0,
            utility: 100.0,
            cost_lower_bound: 50.0,
        },
        DeadlineBound {
            slot: 1,
            utility: 90.0,
            cost_lower_bound: 40.0,
        },
    ];
    let best = (100.0_f64 - 60.0).max(90.0 - 45.0);
    assert_eq!(best, 45.0);
    let rho = realised_factor(&b, best);
    assert!((rho - 1.125).abs() < 1e-12);
    assert!(rho > 1.1 && rho <= 1.2);
}

/// A small cluster whose 6 Gbit/s NICs cannot carry a job's four workers
/// and its PS as DISTRIBUTED tasks on one machine (8 Gbit/s), while LOCAL
/// on one machine charges no NIC.
fn e2e_instance(jobs: usize) -> Instance {
    let machines = (0..2)
        .map(|i| {
            let cap = Resources::zero()
                .gpus(4.0)
                .cpu_cores(16.0)
                .memory(gb(64.0))
                .nic(gbps(6.0));
            Machine::new(MachineId(i), cap, gbps(4.0))
        })
        .collect();
    let jobs = (0..jobs)
        .map(|i| {
            let mut j = job(i as u32, 8.0, 8.0);
            j.arrival_s = 100.0 * (i / 2) as f64;
            j
        })
        .collect();
    Instance::new(Cluster::new(machines), jobs, 100.0, 6).unwrap()
}

#[test]
fn end_to_end_runs_pass_both_checkers() {
    let inst = e2e_instance(5);
    for bounds in [
        BoundsChoice::Eta,
        BoundsChoice::ValueFloor { v_floor: None },
    ] {
        let mut params = LocalityParams::default();
        params.bounds = bounds;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let solved = Locality::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rng))
            .unwrap();
        verify(&inst, &solved.schedule).unwrap();
        let check = verify_locality(&inst, &params, &solved.schedule).unwrap();
        assert!((check.total_utility - solved.certificate.objective).abs() < 1e-9);
        solved.certificate.check(1e-9).unwrap();
        // The certificate records the oracle's LP solves and the run seed.
        assert!(solved.report.lp_solves > 0);
        assert_eq!(
            u64::from(solved.certificate.run.lp_solves),
            solved.report.lp_solves
        );
        assert_eq!(solved.certificate.run.seed, Some(solved.report.seed));
        assert!(solved.report.run.outcomes[0].admitted());
        assert!(solved.report.alpha_eta.is_some() && solved.report.alpha_value_floor.is_some());
        assert_eq!(
            solved.report.max_rho_hat,
            solved
                .report
                .per_job
                .iter()
                .map(|j| j.rho_hat)
                .fold(1.0, f64::max)
        );
        for seg in solved.schedule.jobs.iter().flat_map(|j| &j.segments) {
            assert!(seg.config.is_some());
        }
        // Some LOCAL slot holds tasks whose NIC demand (4 workers · 1 Gbit/s
        // + 1 PS · 4 Gbit/s) exceeds the 6 Gbit/s NIC: only a checker that
        // charges LOCAL tasks no NIC accepts it.
        assert!(
            solved
                .schedule
                .jobs
                .iter()
                .flat_map(|j| &j.segments)
                .any(
                    |seg| matches!(seg.config, Some(Configuration::Local { .. }))
                        && seg.total().workers == 4
                ),
            "expected a LOCAL slot with four workers"
        );
        // Completion slots and utilities match the framework's decisions.
        for (c, o) in check
            .jobs
            .iter()
            .zip(solved.report.run.outcomes.iter().filter(|o| o.admitted()))
        {
            assert!((c.utility - o.utility()).abs() < 1e-9);
        }
    }
}

#[test]
fn l8_determinism_over_seeds() {
    let inst = e2e_instance(4);
    let params = LocalityParams::default();
    let run = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Locality::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rng))
            .unwrap()
    };
    let (a, b) = (run(1), run(2));
    assert_eq!(a.schedule, b.schedule);
    assert_eq!(a.report.run.outcomes, b.report.run.outcomes);
    assert_eq!(a.certificate.objective, b.certificate.objective);
    assert_eq!(
        a.certificate.relaxation_bound,
        b.certificate.relaxation_bound
    );
}

#[test]
fn ring_jobs_and_bad_bandwidth_are_typed_errors() {
    let mut j = job(0, 8.0, 8.0);
    if let Architecture::ParameterServer(p) = &mut j.architecture {
        p.ps.nic_bps = gbps(0.5);
    }
    let inst = Instance::new(
        Cluster::new(vec![machine(0, 4.0, Hosting::Both)]),
        vec![j],
        100.0,
        4,
    )
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let err = Locality::default().solve(&inst, &mut rng).unwrap_err();
    assert!(matches!(
        err,
        dmlsched::Error::Locality(
            dmlsched::algorithms::locality::LocalityError::UnsupportedJob { .. }
        )
    ));
}

// ---------------------------------------------------------------------------
// Property tests on tiny instances
// ---------------------------------------------------------------------------

/// The simulator policy and the runner agree: same admissions, completion
/// slots within one slot, same utilities when the slots agree, on slot
/// boundary arrivals and on arrivals inside slots (which may start only
/// at the next boundary in both).
#[test]
fn policy_in_the_simulator_matches_the_runner() {
    for offset in [0.0, 30.0] {
        let mut inst = e2e_instance(5);
        let mut jobs = inst.jobs().to_vec();
        for j in jobs.iter_mut().skip(1) {
            j.arrival_s += offset;
        }
        inst = Instance::new(inst.cluster().clone(), jobs, 100.0, 6).unwrap();
        let params = LocalityParams::default();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let solved = Locality::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rng))
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut policy = LocalityPolicy::new(&inst, &params, &mut rng).unwrap();
        let mut opts = SimOptions::default();
        opts.ps_timing = PsTiming::NoLocality;
        let sim = simulate(&inst, &mut policy, &opts).unwrap();
        let alg = policy.session().snapshot().alg;
        let check = verify_locality(&inst, &params, &solved.schedule).unwrap();
        let mut sim_total = 0.0;
        for js in &solved.schedule.jobs {
            let rec = sim.jobs.iter().find(|r| r.job == js.job).unwrap();
            let done = rec.finish_s.is_some();
            assert_eq!(done, js.admitted, "{} offset {offset}", js.job);
            sim_total += rec.utility;
            if let Some(c) = check.jobs.iter().find(|c| c.job == js.job) {
                let s = rec.completion_slot.unwrap();
                assert!(
                    s.abs_diff(c.completion) <= 1,
                    "{}: {s} vs {}",
                    js.job,
                    c.completion
                );
                if s == c.completion {
                    assert!((rec.utility - c.utility).abs() < 1e-9);
                }
            }
        }
        if offset == 0.0 {
            assert!((sim_total - solved.certificate.objective).abs() < 1e-9);
            assert_eq!(alg, solved.report.run.total_utility);
        }
        // The policy's own total (utilities from the arrival slots) is what
        // the simulator measured.
        assert!((alg - sim_total).abs() < 1e-9);
        assert!(check.jobs.len() >= 2);
    }
}

#[derive(Debug, Clone)]
struct TinyJob {
    arrival: u32,
    n: u32,
    m: u32,
    tau: f64,
    e_mb: f64,
    mem_w: f64,
    mem_s: f64,
    g1: f64,
}

fn tiny_job() -> impl Strategy<Value = TinyJob> {
    (
        0u32..3,
        1u32..5,
        20u32..200,
        0.1f64..1.0,
        1.0f64..200.0,
        4.0f64..30.0,
        4.0f64..30.0,
        10.0f64..200.0,
    )
        .prop_map(|(arrival, n, m, tau, e_mb, mem_w, mem_s, g1)| TinyJob {
            arrival,
            n,
            m,
            tau,
            e_mb,
            mem_w,
            mem_s,
            g1,
        })
}

fn tiny_instance(machines: &[(f64, u8)], jobs: &[TinyJob], slots: u32) -> Instance {
    let ms = machines
        .iter()
        .enumerate()
        .map(|(i, &(b_int, role))| {
            let hosts = match role {
                0 => Hosting::Workers,
                1 => Hosting::ParameterServers,
                _ => Hosting::Both,
            };
            let cap = Resources::zero()
                .gpus(4.0)
                .cpu_cores(16.0)
                .memory(gb(64.0))
                .nic(gbps(1000.0));
            Machine::new(MachineId(i as u32), cap, gbps(b_int)).hosting(hosts)
        })
        .collect();
    let js = jobs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Job::new(
                JobId(i as u32),
                100.0 * f64::from(t.arrival.min(slots - 1)),
                PsJob {
                    epochs: 1,
                    data_chunks: t.n,
                    minibatches_per_chunk: t.m,
                    minibatch_compute_s: t.tau,
                    gradient_bytes: mb(t.e_mb),
                    worker: Resources::zero()
                        .gpus(1.0)
                        .cpu_cores(2.0)
                        .memory(gb(t.mem_w))
                        .nic(gbps(1.0)),
                    ps: Resources::zero()
                        .cpu_cores(2.0)
                        .memory(gb(t.mem_s))
                        .nic(gbps(2.0)),
                    max_workers: t.n,
                    max_ps: t.n,
                    ..PsJob::default()
                },
            )
            .with_utility(Utility::Linear {
                g1: t.g1,
                slope: t.g1 / 8.0,
            })
        })
        .collect();
    Instance::new(Cluster::new(ms), js, 100.0, slots).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/locality.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn tiny_runs_pass_both_checkers_and_lp_bounds_hold(
        machines in prop::collection::vec((0.5f64..20.0, 0u8..4), 1..=3),
        jobs in prop::collection::vec(tiny_job(), 1..=3),
        slots in 1u32..=4,
        prices in prop::collection::vec(0.0f64..3.0, 3 * 4),
    ) {
        prop_assume!(machines.iter().any(|m| m.1 != 1) && machines.iter().any(|m| m.1 != 0));
        let inst = tiny_instance(&machines, &jobs, slots);
        let params = LocalityParams::default();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        match Locality::new(params.clone()).and_then(|a| a.solve(&inst, &mut rng)) {
            Ok(solved) => {
                verify(&inst, &solved.schedule).unwrap();
                verify_locality(&inst, &params, &solved.schedule).unwrap();
                solved.certificate.check(1e-9).unwrap();
            }
            // No schedulable job with a positive late utility: no bounds.
            Err(dmlsched::Error::Online(_) | dmlsched::Error::Locality(_)) => {}
            Err(e) => panic!("{e}"),
        }
        // LB(t̂) ≤ exact cost at every deadline, first job, random prices.
        let cl = LocalityCluster::from_instance(&inst).unwrap();
        let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 64, None).unwrap();
        let h = machines.len();
        let p = prices.clone();
        let v = PriceView::from_explicit(h, RES, slots, move |m, r, t| p[(m.0 as usize * 4 + t as usize) % p.len()] * (1.0 + f64::from(r.0)), |_, r, _| [4.0, 16.0, 64.0, 0.0, 1000.0][r.0 as usize]);
        let mut oracle = LocalityOracle::new(cl, InnerSolver::exact_mip());
        for t in lj.arrival..=lj.end {
            let d = oracle.solve_deadline(&lj, &v, t).unwrap();
            if let Some((plan, cost)) = &d.plan {
                prop_assert!(d.lower_bound <= cost * (1.0 + 1e-7) + 1e-7, "LB {} > cost {}", d.lower_bound, cost);
                prop_assert!(plan.completion_slot() <= t);
                prop_assert!(plan.work() >= lj.minibatches * (1.0 - 1e-9));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// LP rounding (the default inner solver)
// ---------------------------------------------------------------------------

use dmlsched::schedule::{JobSchedule, Schedule};

fn lp_round() -> InnerSolver {
    InnerSolver::lp_round()
}

/// The plan of the instance's only job checked by `verify_locality`.
fn check_plan(inst: &Instance, cl: &LocalityCluster, plan: &LocalityPlan) {
    let sched = Schedule {
        jobs: vec![JobSchedule {
            job: plan.job,
            admitted: true,
            segments: plan.segments(cl),
        }],
    };
    verify_locality(inst, &LocalityParams::default(), &sched).unwrap();
}

#[test]
fn l1_lp_round_same_plan_any_seed() {
    let (_, cl, lj) = setup(
        vec![
            machine(0, 4.0, Hosting::Both),
            machine(1, 4.0, Hosting::Both),
        ],
        job(0, 8.0, 8.0),
        4,
    );
    for seed in [0, 1, 7, 0xDEAD_BEEF, u64::MAX] {
        let mut oracle = LocalityOracle::new(cl.clone(), lp_round()).with_seed(seed);
        let resp = oracle.best_response(3, &lj, &view(1.1, 4)).unwrap();
        assert_eq!(resp.quality, OracleQuality::CostApprox);
        let plan = resp.plan.expect("a plan");
        assert_eq!(plan.slots.len(), 1);
        assert_eq!(
            plan.slots[0].config,
            SlotConfig::Local {
                machine: 0,
                workers: 4
            }
        );
        assert!((resp.cost - 54.0).abs() < 1e-9, "cost {}", resp.cost);
        let lbs: Vec<f64> = resp
            .deadline_bounds
            .iter()
            .map(|b| b.cost_lower_bound)
            .collect();
        assert_eq!(lbs.len(), 4);
        assert!(lbs.iter().all(|lb| (lb - 54.0).abs() < 1e-6), "{lbs:?}");
        assert_eq!(realised_factor(&resp.deadline_bounds, 46.0), 1.0);
        let stats = oracle.last_call();
        // Only deadline 1 is rounded; the LP bounds skip 2–4.
        assert_eq!((stats.mip_solves, stats.draws, stats.fallbacks), (0, 8, 0));
        assert_eq!(stats.cost_ratios.len(), 1);
        assert!((stats.cost_ratios[0].1 - 1.0).abs() < 1e-9);
    }
}

#[test]
fn l1b_lp_round_prunes_to_all_local() {
    let (inst, cl, lj) = setup(
        vec![
            machine(0, 1.0, Hosting::Both),
            machine(1, 1.0, Hosting::Both),
        ],
        job(0, 8.0, 8.0),
        4,
    );
    for seed in [0, 1, 2, 3, 99] {
        let mut oracle = LocalityOracle::new(cl.clone(), lp_round()).with_seed(seed);
        let v = view(1.1, 4);
        let d2 = oracle.solve_deadline(&lj, &v, 1).unwrap();
        assert_eq!(d2.lower_bound, f64::INFINITY);
        assert!(d2.plan.is_none());
        let d3 = oracle.solve_deadline(&lj, &v, 2).unwrap();
        assert!(!d3.proven);
        assert!(
            (d3.lower_bound - 135.0).abs() < 1e-6,
            "LB {}",
            d3.lower_bound
        );
        let (plan, cost) = d3.plan.expect("a plan at deadline 3");
        assert!((cost - 140.0).abs() < 1e-9, "seed {seed}: cost {cost}");
        assert!(
            plan.slots
                .iter()
                .all(|s| matches!(s.config, SlotConfig::Local { .. }))
        );
        check_plan(&inst, &cl, &plan);
    }
}

#[test]
fn l2_lp_round_fails_at_3_and_goes_distributed_at_4() {
    let (inst, cl, lj) = setup(
        vec![
            machine(0, 4.0, Hosting::Both),
            machine(1, 4.0, Hosting::Both),
        ],
        job(0, 20.0, 50.0),
        4,
    );
    for seed in [0, 5, 11] {
        let mut oracle = LocalityOracle::new(cl.clone(), lp_round()).with_seed(seed);
        let v = view(1.0, 4);
        let d3 = oracle.solve_deadline(&lj, &v, 2).unwrap();
        assert!(
            (d3.lower_bound - 380.0).abs() < 1e-6,
            "LB {}",
            d3.lower_bound
        );
        assert!(d3.plan.is_none());
        let counts = d3.rounding.expect("deadline 3 is rounded");
        assert_eq!(
            (counts.plans, counts.fallback, counts.fallback_plan),
            (0, true, false)
        );
        let d4 = oracle.solve_deadline(&lj, &v, 3).unwrap();
        let (plan, cost) = d4.plan.expect("a plan at deadline 4");
        assert!(cost >= 464.0 - 1e-9, "cost {cost}");
        assert!(d4.lower_bound <= cost);
        assert!(
            plan.slots
                .iter()
                .all(|s| matches!(s.config, SlotConfig::Distributed { .. }))
        );
        check_plan(&inst, &cl, &plan);
    }
}

#[test]
fn lp_round_options_are_validated() {
    for bad in [
        InnerSolver::LpRound {
            draws: 0,
            lambdas: [1.0; 8],
        },
        InnerSolver::LpRound {
            draws: 8,
            lambdas: [1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0],
        },
        InnerSolver::LpRound {
            draws: 8,
            lambdas: [f64::NAN; 8],
        },
        InnerSolver::ExactMip {
            time_limit_s: f64::NAN,
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
        let mut params = LocalityParams::default();
        params.inner = bad;
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(matches!(
            Locality::new(params).and_then(|a| a.solve(&e2e_instance(1), &mut rng)),
            Err(dmlsched::Error::Locality(_))
        ));
    }
    assert_eq!(LocalityParams::default().inner, InnerSolver::lp_round());
}

#[test]
fn l8_lp_round_same_seed_same_run() {
    let inst = e2e_instance(5);
    let run = |seed: Option<u64>, rng_seed| {
        let mut params = LocalityParams::default();
        params.seed = seed;
        let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
        let s = Locality::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rng))
            .unwrap();
        verify(&inst, &s.schedule).unwrap();
        verify_locality(&inst, &params, &s.schedule).unwrap();
        s
    };
    let (a, b) = (run(Some(17), 0), run(Some(17), 1));
    assert_eq!(a.schedule, b.schedule);
    assert_eq!(a.report.run.outcomes, b.report.run.outcomes);
    assert_eq!(a.certificate.objective, b.certificate.objective);
    assert_eq!(
        a.certificate.relaxation_bound,
        b.certificate.relaxation_bound
    );
    assert_eq!(a.certificate.guarantees, b.certificate.guarantees);
    assert_eq!(
        a.report.per_job,
        b.report
            .per_job
            .iter()
            .map(|j| {
                let mut j = j.clone();
                j.stats.seconds = a
                    .report
                    .per_job
                    .iter()
                    .find(|k| k.job == j.job)
                    .unwrap()
                    .stats
                    .seconds;
                j
            })
            .collect::<Vec<_>>()
    );
    // The seed from the caller's RNG: same RNG, same run.
    let (c, d) = (run(None, 5), run(None, 5));
    assert_eq!(c.schedule, d.schedule);
    assert_eq!(c.report.seed, d.report.seed);
    // Other seeds still verify (inside `run`).
    for s in 0..4 {
        run(Some(s), 0);
    }
}

/// L9 on a run: one job on two machines with `b_int = 1.5` Gbit/s; LP
/// rounding's plan costs 12/11 of the LP bound, so `max ρ̂ = 12/11 ≈ 1.0909`
/// whatever the allowance: the certificate's realised-factor condition
/// fails with `ρ0 = 1.05` and holds with `ρ0 = 1.1`.
#[test]
fn l9_lp_round_certificate_follows_the_allowance() {
    let (inst, _, _) = setup(
        vec![
            machine(0, 1.5, Hosting::Both),
            machine(1, 1.5, Hosting::Both),
        ],
        job(0, 8.0, 8.0),
        6,
    );
    let run = |rho0: f64| {
        let mut params = LocalityParams::default();
        params.l_allowance = rho0;
        params.seed = Some(1);
        let s = Locality::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut ChaCha8Rng::seed_from_u64(0)))
            .unwrap();
        verify_locality(&inst, &params, &s.schedule).unwrap();
        s
    };
    for (rho0, exceeds) in [(1.0, true), (1.05, true), (1.1, false), (1.2, false)] {
        let s = run(rho0);
        let r = &s.report;
        assert!(
            (r.max_rho_hat - 12.0 / 11.0).abs() < 1e-9,
            "ρ̂ {}",
            r.max_rho_hat
        );
        assert_eq!(r.run.max_rho_hat, Some(r.max_rho_hat));
        assert_eq!(r.run.rho, Some(rho0));
        assert_eq!(r.per_job[0].quality, Some(OracleQuality::CostApprox));
        assert!((r.rounding.max_cost_ratio - 12.0 / 11.0).abs() < 1e-9);
        assert_eq!(r.rounding.fallbacks, 0);
        let flagged = r
            .run
            .reasons
            .iter()
            .any(|m| m.starts_with("RealisedFactorExceedsAllowance"));
        assert_eq!(flagged, exceeds, "ρ0 = {rho0}: {:?}", r.run.reasons);
        let g = &s.certificate.guarantees[0];
        assert!(!g.valid); // the job's demands are not small here
        assert_eq!(
            g.reasons
                .iter()
                .any(|m| m.starts_with("RealisedFactorExceedsAllowance")),
            exceeds
        );
    }
}
