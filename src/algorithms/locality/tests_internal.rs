//! Unit tests of the LP rounding's internals (modules `round` and `sub`):
//! the repair move that switches a stuck LOCAL slot to DISTRIBUTED, the
//! documented seed mix of the draws, and property tests of rounding and
//! repair on random small programs (moved here from `tests/locality.rs`
//! when the modules became crate-private).

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::model::tests_support::{job, machine};
use super::round::{LocRounding, SEED_K1, SEED_K2, draw_seed, splitmix64};
use super::sub::{self, ColumnKind};
use super::{
    InnerSolver, LocalityCluster, LocalityJob, LocalityOracle, LocalityParams, LocalityPlan,
    SlotConfig, verify_locality,
};
use crate::model::units::{gb, gbps, mb};
use crate::model::*;
use crate::online::{PriceView, Reservation};
use crate::pcip::{RepairOptions, repair_with, solve_lp};
use crate::schedule::{JobSchedule, Schedule};

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
