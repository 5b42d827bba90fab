//! Unit tests of the LP rounding's internals (modules `round` and `sub`):
//! the repair move that switches a stuck LOCAL slot to DISTRIBUTED, the
//! documented seed mix of the draws, and property tests of rounding and
//! repair on random small programs (moved here from `tests/locality.rs`
//! when the modules became crate-private); and the oracle's hand-computed
//! answers at injected prices, its role flags, LP rounding's answers on the
//! hand set-ups and the property test of its bounds on tiny instances
//! (moved from `tests/locality.rs` when the oracle's constructor, its
//! per-deadline solve and the job model became crate-private).

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::model::tests_support::{job, machine};
use super::round::{LocRounding, SEED_K1, SEED_K2, draw_seed, splitmix64};
use super::sub::{self, ColumnKind};
use super::{
    InnerSolver, Locality, LocalityCluster, LocalityJob, LocalityOracle, LocalityParams,
    LocalityPlan, SlotConfig, verify_locality,
};
use crate::algorithms::Algorithm;
use crate::model::units::{gb, gbps, mb};
use crate::model::*;
use crate::online::{OracleQuality, PriceView, PricingOracle, Reservation, realised_factor};
use crate::pcip::{RepairOptions, repair_with, solve_lp};
use crate::schedule::{JobSchedule, Schedule, verify};

const RES: usize = 5;

/// Instance, cluster and the job's model (Δ = 100 s, `T` slots).
fn setup(machines: Vec<Machine>, j: Job, horizon: u32) -> (Instance, LocalityCluster, LocalityJob) {
    let inst = Instance::new(Cluster::new(machines), vec![j], 100.0, horizon).unwrap();
    let cl = LocalityCluster::from_instance(&inst).unwrap();
    let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 64, None).unwrap();
    (inst, cl, lj)
}

fn exact() -> InnerSolver {
    InnerSolver::exact_mip()
}

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

/// One slot, two free GPUs on each machine, `b_int = b` (LOCAL is no
/// faster: 40 mini-batches per worker either way) and `Q = 160`, i.e. four
/// workers: only DISTRIBUTED covers it. From LOCAL on machine 0 with its
/// two workers (where a draw or the greedy, which opens the slot LOCAL at
/// 21 per 40 mini-batches against 26 DISTRIBUTED, ends up) no single-worker
/// move helps: there is no third GPU on machine 0, and LOCAL on machine 1
/// holds two workers too. Switching the slot to DISTRIBUTED does: two
/// workers and the PS on machine 0 (price 1: 12 per worker, 14 per PS),
/// two workers on machine 1 (price 1.1: 13.2 each), cost
/// `2·12 + 14 + 2·13.2 = 64.4` (the PS on machine 1 would cost 65.8).
#[test]
fn lp_round_repair_switches_a_stuck_local_slot_to_distributed() {
    let mut j = job(0, 8.0, 8.0);
    if let Architecture::ParameterServer(ps) = &mut j.architecture {
        ps.minibatches_per_chunk = 40;
    }
    let (inst, cl, lj) = setup(
        vec![
            machine(0, 1.0, Hosting::Both),
            machine(1, 1.0, Hosting::Both),
        ],
        j,
        1,
    );
    assert!((lj.minibatches - 160.0).abs() < 1e-9);
    assert!((lj.rate_local[0] - 40.0).abs() < 1e-9 && (lj.rate_dist - 40.0).abs() < 1e-9);
    let cap = [2.0, 16.0, 64.0, 0.0, 10.0];
    let v = PriceView::from_explicit(
        2,
        RES,
        1,
        |m, _, _| if m.0 == 0 { 1.0 } else { 1.1 },
        move |_, r, _| cap[r.0 as usize],
    );
    let cells = sub::cells(&lj, &cl, &v);
    let s = sub::build(&lj, &cells, 0).unwrap().unwrap();
    let model = LocRounding::new(&lj, &cells, &s);
    let expected = SlotConfig::Distributed {
        tasks: vec![
            (0, crate::schedule::Tasks::new(2, 1)),
            (1, crate::schedule::Tasks::new(2, 0)),
        ],
    };
    // The greedy from the all-IDLE point.
    let greedy = model.greedy().unwrap().expect("the greedy finds a plan");
    assert_eq!(greedy.plan.slots[0].config, expected);
    check_plan(&inst, &cl, &greedy.plan);
    // Repair from LOCAL(0, 2).
    let mut x = vec![0.0; s.problem.n_vars()];
    let col = |k| s.index.get(k, Some(0), 0).unwrap();
    x[col(ColumnKind::Local)] = 1.0;
    x[col(ColumnKind::LocalWorkers)] = 2.0;
    let opts = RepairOptions {
        feas_tol: 1e-9,
        ..RepairOptions::default()
    };
    let r = repair_with(&s.problem, &mut x, &opts, &model).unwrap();
    assert!((r.objective - 64.4).abs() < 1e-9, "cost {}", r.objective);
    let slots = s.decode(&lj, &x);
    assert_eq!(slots.len(), 1);
    assert_eq!(slots[0].config, expected);
    // So does the oracle, and the exact MIP agrees.
    for seed in [0, 1, 7] {
        let mut oracle = LocalityOracle::new(cl.clone(), lp_round()).with_seed(seed);
        let (plan, cost) = oracle.solve_deadline(&lj, &v, 0).unwrap().plan.unwrap();
        assert!((cost - 64.4).abs() < 1e-9, "seed {seed}: cost {cost}");
        assert_eq!(plan.slots[0].config, expected);
    }
    let mut exact = LocalityOracle::new(cl, InnerSolver::exact_mip());
    let (_, opt) = exact.solve_deadline(&lj, &v, 0).unwrap().plan.unwrap();
    assert!((opt - 64.4).abs() < 1e-9, "OPT {opt}");
}

#[test]
fn draw_seeds_follow_the_documented_mix() {
    assert_eq!(SEED_K1 % 2, 1);
    assert_eq!(SEED_K2 % 2, 1);
    let s = draw_seed(42, 3, 5, 2);
    assert_eq!(
        s,
        splitmix64(42 ^ 3u64.wrapping_mul(SEED_K1) ^ 5u64.wrapping_mul(SEED_K2) ^ 2)
    );
    assert_ne!(draw_seed(42, 3, 5, 2), draw_seed(42, 3, 5, 3));
    // splitmix64 reference value (first output of the generator seeded 0).
    assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
}

/// A random small instance (one job, `h` machines, `slots` slots) with a
/// price view of random prices and partly filled residuals; `None` when
/// the job cannot fit the cluster at all.
fn random_case(seed: u64) -> Option<(Instance, LocalityCluster, LocalityJob, PriceView<'static>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let h = rng.random_range(1..=4usize);
    let slots = rng.random_range(1..=6u32);
    let mut caps = Vec::new();
    let machines = (0..h)
        .map(|i| {
            let c = [
                f64::from(rng.random_range(2..=8u32)),
                f64::from(rng.random_range(4..=32u32)),
                f64::from(rng.random_range(16..=128u32)),
                0.0,
                f64::from(rng.random_range(4..=20u32)),
            ];
            caps.push(c);
            let hosts = match rng.random_range(0..4u8) {
                0 => Hosting::Workers,
                1 => Hosting::ParameterServers,
                _ => Hosting::Both,
            };
            let cap = Resources::zero()
                .gpus(c[0])
                .cpu_cores(c[1])
                .memory(gb(c[2]))
                .nic(gbps(c[4]));
            Machine::new(MachineId(i as u32), cap, gbps(rng.random_range(0.5..20.0))).hosting(hosts)
        })
        .collect();
    let n = rng.random_range(1..=6u32);
    let b = rng.random_range(0.5..3.0);
    let j = Job::new(
        JobId(0),
        0.0,
        PsJob {
            epochs: 1,
            data_chunks: n,
            minibatches_per_chunk: rng.random_range(20..300u32),
            minibatch_compute_s: rng.random_range(0.1..1.0),
            gradient_bytes: mb(rng.random_range(1.0..200.0)),
            worker: Resources::zero()
                .gpus(f64::from(rng.random_range(1..=2u32)))
                .cpu_cores(rng.random_range(1.0..4.0))
                .memory(gb(rng.random_range(2.0..30.0)))
                .nic(gbps(b)),
            ps: Resources::zero()
                .cpu_cores(rng.random_range(1.0..4.0))
                .memory(gb(rng.random_range(2.0..30.0)))
                .nic(gbps(b * rng.random_range(1.0..4.0))),
            max_workers: n,
            max_ps: n,
            ..PsJob::default()
        },
    )
    .with_utility(Utility::Constant { value: 1e6 });
    let inst = Instance::new(Cluster::new(machines), vec![j], 100.0, slots).ok()?;
    let cl = LocalityCluster::from_instance(&inst).unwrap();
    let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 64, None).unwrap();
    let fill: Vec<f64> = (0..h * slots as usize)
        .map(|_| rng.random_range(0.2..=1.0))
        .collect();
    let prices: Vec<f64> = (0..h * slots as usize * RES)
        .map(|_| rng.random_range(0.0..3.0))
        .collect();
    let s = slots as usize;
    let v = PriceView::from_explicit(
        h,
        RES,
        slots,
        move |m, r, t| prices[(m.0 as usize * s + t as usize) * RES + r.0 as usize],
        move |m, r, t| caps[m.0 as usize][r.0 as usize] * fill[m.0 as usize * s + t as usize],
    );
    Some((inst, cl, lj, v))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/locality.txt"))),
        ..ProptestConfig::default()
    })]

    /// L3: rounding + repair from real LP points and from arbitrary points
    /// in the bounds, any `λ ∈ [1, 2]`, gives `None` or a plan that passes
    /// `verify_locality` and fits the residuals.
    #[test]
    fn l3_rounding_never_breaks_capacity(seed in any::<u64>(), lambda in 1.0f64..=2.0, arbitrary in any::<bool>()) {
        let Some((inst, cl, lj, v)) = random_case(seed) else { return Ok(()) };
        let cells = sub::cells(&lj, &cl, &v);
        let Some(s) = sub::build(&lj, &cells, lj.end.min(v.horizon() - 1)).unwrap() else {
            return Ok(());
        };
        let model = LocRounding::new(&lj, &cells, &s);
        let structure = model.structure().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 1);
        let x: Vec<f64> = if arbitrary {
            (0..s.problem.n_vars()).map(|j| rng.random_range(0.0..=s.problem.upper(j))).collect()
        } else {
            match solve_lp(&s.problem, &Default::default()) {
                Ok(r) => r.x,
                Err(_) => return Ok(()),
            }
        };
        let drawn = model.draw(&structure, &x, lambda, &mut rng).unwrap();
        let greedy = model.greedy().unwrap();
        for d in drawn.into_iter().chain(greedy) {
            check_plan(&inst, &cl, &d.plan);
            prop_assert!(d.plan.work() >= lj.minibatches * (1.0 - 1e-9));
            let mut used = std::collections::HashMap::new();
            for c in d.plan.consumption() {
                *used.entry((c.machine, c.resource, c.slot)).or_insert(0.0) += c.amount;
            }
            for ((m, r, t), a) in used {
                let res = v.residual(m, r, t);
                prop_assert!(a <= res + 1e-9 * res.max(1.0), "{m:?} {r:?} {t}: {a} > {res}");
            }
        }
    }

    /// L4: `LB(t̂) ≤ OPT_MIP(t̂) ≤ cost_LpRound(t̂)` wherever both find a plan.
    #[test]
    fn l4_sandwich(seed in any::<u64>()) {
        let Some((_, cl, lj, v)) = random_case(seed) else { return Ok(()) };
        let mut exact_o = LocalityOracle::new(cl.clone(), exact());
        let mut round_o = LocalityOracle::new(cl, lp_round()).with_seed(seed);
        for t in lj.arrival..=lj.end.min(v.horizon() - 1) {
            let e = exact_o.solve_deadline(&lj, &v, t).unwrap();
            let r = round_o.solve_deadline(&lj, &v, t).unwrap();
            let tol = |a: f64| 1e-7 * a.abs().max(1.0);
            prop_assert!((e.lower_bound - r.lower_bound).abs() <= tol(e.lower_bound)
                || (e.lower_bound.is_infinite() && r.lower_bound.is_infinite()));
            if let (Some((_, opt)), Some((_, cost)), true) = (&e.plan, &r.plan, e.proven) {
                prop_assert!(r.lower_bound <= opt + tol(*opt), "LB {} > OPT {opt}", r.lower_bound);
                prop_assert!(*opt <= cost + tol(*cost), "OPT {opt} > rounded {cost}");
            }
            if e.proven && e.plan.is_none() {
                prop_assert!(r.plan.is_none(), "rounding found a plan the MIP proved impossible");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The oracle on the hand set-ups, and its bounds on tiny instances (moved
// from tests/locality.rs)
// ---------------------------------------------------------------------------

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
            Err(crate::Error::Online(_) | crate::Error::Locality(_)) => {}
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
