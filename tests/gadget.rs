//! The GADGET-style scheduler: hand-checked cases of its prices,
//! reservations and admission (G1, G2, G7, G8, G10), the invariants of
//! every run (G14, a property test), the simulator replay, and typed errors
//! on hostile input. Every schedule passes `verify` and every certificate
//! `check(1e-9)`. (G3–G6 and G11, which read the scheduler's crate-private
//! model and oracle, are the unit tests `algorithms::gadget::tests_internal`.)

mod common;

use dmlsched::algorithms::Algorithm;
use rand::SeedableRng;
use std::collections::BTreeMap;

use dmlsched::algorithms::gadget::*;
use dmlsched::model::units::ceil_tol;
use dmlsched::model::*;
use dmlsched::online::{Decision, PoolId, RejectReason, Reservation};
use dmlsched::schedule::verify;
use dmlsched::sim::{SimOptions, simulate};
use dmlsched::timing::ProgressMode;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1.0)
}

/// A server with `gpus` GPUs (and as many CPU cores), a NIC of `nic_bps`
/// per direction and internal bandwidth `intra_bps`.
fn machine(id: u32, gpus: f64, nic_bps: f64, intra_bps: f64) -> Machine {
    Machine::new(
        MachineId(id),
        Resources::zero().gpus(gpus).cpu_cores(gpus).nic(nic_bps),
        intra_bps,
    )
}

/// A ring of `w` workers training `iterations` iterations of `compute_s`
/// seconds of compute and `bytes` of model, reserving `b` bytes/s.
fn ring(w: u32, iterations: u64, bytes: f64, compute_s: f64, b: Option<f64>) -> RarJob {
    RarJob {
        workers: WorkerCounts::Fixed(w),
        iterations,
        model_bytes: bytes,
        backward_per_iteration_s: compute_s,
        reserved_bandwidth_bps: b,
        ..RarJob::default()
    }
}

fn job(id: u32, arrival_s: f64, r: RarJob, u: Utility) -> Job {
    Job::new(JobId(id), arrival_s, r).with_utility(u)
}

/// A job arriving at 0 with the constant utility `value`.
fn constant(id: u32, r: RarJob, value: f64) -> Job {
    job(id, 0.0, r, Utility::Constant { value })
}

/// Solves, verifies the schedule and checks the certificate.
fn solve(instance: &Instance, params: &GadgetParams) -> dmlsched::algorithms::Solved<GadgetReport> {
    let solved = Gadget::new(params.clone())
        .and_then(|a| a.solve(instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    verify(instance, &solved.schedule).unwrap();
    solved.certificate.check(1e-9).unwrap();
    solved
}

#[test]
fn g1_price_function() {
    // One 8-GPU server, L = 1, U = 100: two 4-GPU jobs over the whole
    // horizon fill it to 4, then 8.
    let cluster = Cluster::new(vec![machine(0, 8.0, 1e9, 1e9)]);
    let jobs = (0..2)
        .map(|i| constant(i, ring(4, 1, 0.0, 1.0, None), 1e6))
        .collect();
    let instance = Instance::new(cluster, jobs, 1.0, 4).unwrap();
    let table = DurationTable::new([((4, 1), 4)]);
    let mut params = GadgetParams::default();
    params.bounds = GadgetBounds::Explicit {
        l: 1.0,
        u_gpu: 100.0,
        u_nic: None,
    };
    params.durations = BTreeMap::from([(JobId(0), table.clone()), (JobId(1), table)]);
    let (mut engine, jobs) = Gadget::new(params.clone())
        .unwrap()
        .engine(&instance)
        .unwrap();
    let price =
        |e: &dmlsched::online::OnlinePrimalDual<GadgetOracle>| e.view().price(MachineId(0), GPU, 2);
    let direct = |g: f64| 1.0 * 100f64.powf(g / 8.0);
    assert_eq!(price(&engine), 1.0);
    for (j, g) in jobs.iter().zip([4.0, 8.0]) {
        assert!(engine.step(j).unwrap().admitted());
        let ln = engine.view().ln_price(MachineId(0), GPU, 2);
        assert!(close(ln.exp(), direct(g), 1e-12), "P({g}) = {}", ln.exp());
    }
    assert!(close(price(&engine), 100.0, 1e-12));
    solve(&instance, &params);
}

#[test]
fn g2_ring_reservations() {
    let plan = |placement: Vec<(u32, u32)>, nic: f64| GadgetPlan {
        job: JobId(0),
        start: 0,
        slots: 1,
        workers: 4,
        placement,
        nic_per_server: nic,
        tau_slots: 1.0,
        iterations: 1,
    };
    let nic = |p: &GadgetPlan| -> Vec<f64> {
        p.consumption()
            .filter(|c| c.resource == NIC)
            .map(|c| c.amount)
            .collect()
    };
    assert!(nic(&plan(vec![(0, 4)], 0.0)).is_empty());
    assert_eq!(nic(&plan(vec![(0, 2), (1, 2)], 4.0)), vec![4.0, 4.0]);
    assert_eq!(
        nic(&plan(vec![(0, 2), (1, 1), (2, 1)], 4.0)),
        vec![4.0, 4.0, 4.0]
    );
}

/// Jobs on two 4-GPU servers with a NIC of 10 Gbit/s, sigmoid or linear
/// utilities with positive late values.
fn first_admission_instance() -> Instance {
    let cluster = Cluster::new((0..2).map(|i| machine(i, 4.0, 1.25e9, 1e10)).collect());
    let jobs = (0..4)
        .map(|i| {
            let r = ring(2 + 2 * (i % 2), 200, 1e8, 0.2, Some(2.5e8));
            let u = Utility::Linear {
                g1: 10.0 + f64::from(i),
                slope: 0.1,
            };
            job(i, 0.0, r, u)
        })
        .collect();
    Instance::new(cluster, jobs, 60.0, 40).unwrap()
}

#[test]
fn g7_first_admission() {
    let instance = first_admission_instance();
    let vf = solve(&instance, &GadgetParams::default());
    let v_floor = vf.report.v_floor.unwrap();
    let first = &vf.report.jobs[0];
    let best = first.best_value.unwrap();
    assert!(best > v_floor / 4.0);
    assert!(first.payoff() >= best - v_floor / 4.0 - 1e-9);
    let mut eta_params = GadgetParams::default();
    eta_params.bounds = GadgetBounds::FrameworkEta;
    let (engine, _) = Gadget::new(eta_params.clone())
        .unwrap()
        .engine(&instance)
        .unwrap();
    let eta = engine.bounds().ln_eta(PoolId(0)).unwrap().exp();
    let eta_run = solve(&instance, &eta_params);
    let first = &eta_run.report.jobs[0];
    assert!(first.payoff() >= (1.0 - 1.0 / (4.0 * eta)) * first.best_value.unwrap() - 1e-9);
    // α under both rules is reported either way.
    assert!(vf.report.alpha_eta.is_some() && eta_run.report.alpha_value_floor.is_some());
}

#[test]
fn g8_rejection_threshold() {
    // One 2-GPU server, L = 1, U = 100; job 0 holds one GPU in every slot.
    let cluster = Cluster::new(vec![machine(0, 2.0, 1e9, 1e9)]);
    let jobs = vec![
        constant(0, ring(1, 1, 0.0, 1.0, None), 1e6),
        constant(1, ring(1, 1, 0.0, 1.0, None), 25.0),
        constant(2, ring(1, 1, 0.0, 1.0, None), 35.0),
    ];
    let instance = Instance::new(cluster, jobs, 1.0, 6).unwrap();
    let mut params = GadgetParams::default();
    params.bounds = GadgetBounds::Explicit {
        l: 1.0,
        u_gpu: 100.0,
        u_nic: None,
    };
    params.durations = BTreeMap::from([
        (JobId(0), DurationTable::new([((1, 1), 6)])),
        (JobId(1), DurationTable::new([((1, 1), 3)])),
        (JobId(2), DurationTable::new([((1, 1), 3)])),
    ]);
    let (mut engine, jobs) = Gadget::new(params.clone())
        .unwrap()
        .engine(&instance)
        .unwrap();
    assert!(engine.step(&jobs[0]).unwrap().admitted());
    for t in 0..6 {
        assert!(close(
            engine.view().price(MachineId(0), GPU, t),
            10.0,
            1e-12
        ));
    }
    // 25 − 3·10 = −5: no plan with a positive payoff, while one fits (the
    // free GPU): priced out, with that plan's payoff.
    match &engine.step(&jobs[1]).unwrap().decision {
        Decision::Rejected(RejectReason::NonPositivePayoff { payoff }) => {
            assert!(close(*payoff, -5.0, 1e-9), "{payoff}");
        }
        d => panic!("expected a priced-out rejection, got {d:?}"),
    }
    match &engine.step(&jobs[2]).unwrap().decision {
        Decision::Admitted { payoff, plan, .. } => {
            assert!(close(*payoff, 5.0, 1e-9));
            assert_eq!((plan.start, plan.slots), (0, 3));
        }
        d => panic!("job 2 not admitted: {d:?}"),
    }
    for t in 0..3 {
        assert!(close(
            engine.view().price(MachineId(0), GPU, t),
            100.0,
            1e-12
        ));
    }
    let solved = solve(&instance, &params);
    assert_eq!(solved.report.admitted(), 2);
    assert!(!solved.report.jobs[1].admitted());
}

#[test]
fn g10_small_demand_factor() {
    // One 64-GPU server, U/L = 10⁴: one job of w GPUs for one slot.
    let alpha_eff = |w: u32| {
        let cluster = Cluster::new(vec![machine(0, 64.0, 1e9, 1e9)]);
        let jobs = vec![constant(0, ring(w, 1, 0.0, 1.0, None), 1e9)];
        let instance = Instance::new(cluster, jobs, 1.0, 2).unwrap();
        let mut params = GadgetParams::default();
        params.bounds = GadgetBounds::Explicit {
            l: 1.0,
            u_gpu: 1e4,
            u_nic: None,
        };
        params.durations = BTreeMap::from([(JobId(0), DurationTable::new([((w, 1), 1)]))]);
        let solved = solve(&instance, &params);
        assert!(close(solved.report.alpha, 1e4f64.ln(), 1e-12));
        assert!(close(solved.report.alpha, 9.2103, 1e-4));
        solved.report.run.alpha_eff
    };
    assert!(close(alpha_eff(1), 9.906, 1e-3));
    assert!(close(alpha_eff(8), 17.30, 1e-3));
    assert!(close(alpha_eff(64), 9999.0, 1e-9));
}

#[test]
fn fairness_weights_freeze_at_arrival() {
    let cluster = Cluster::new((0..2).map(|i| machine(i, 4.0, 1e9, 1e9)).collect());
    let tenant = |j: Job, t: &str| Job {
        tenant: Some(t.into()),
        ..j
    };
    let u = Utility::Constant { value: 10.0 };
    let jobs = vec![
        tenant(job(0, 0.0, ring(2, 1, 0.0, 1.0, None), u.clone()), "a"),
        tenant(job(1, 1.0, ring(2, 1, 0.0, 1.0, None), u.clone()), "a"),
        tenant(job(2, 2.0, ring(2, 1, 0.0, 1.0, None), u), "b"),
    ];
    let instance = Instance::new(cluster, jobs, 1.0, 10).unwrap();
    let mut params = GadgetParams::default();
    params.fairness = FairnessWeighting::TenantShare { beta: 1.0 };
    let r = solve(&instance, &params).report;
    assert_eq!(r.admitted(), 3);
    let omega: Vec<f64> = r.jobs.iter().map(|j| j.omega).collect();
    // a alone: S̄ = S_a, ω = 1/2; then b arrives with S_b = 0: ω = 1.
    assert_eq!(omega, vec![1.0, 0.5, 1.0]);
    assert!(close(
        r.jobs[1].decision.as_ref().unwrap().value,
        5.0,
        1e-12
    ));
}

#[test]
fn greedy_certificate_has_no_ratio_and_exact_small_demands_do() {
    let instance = first_admission_instance();
    let greedy = solve(&instance, &GadgetParams::default());
    let g = &greedy.certificate.guarantees[0];
    assert!(g.ratio_bound.is_none() && !g.valid);
    assert!(!greedy.report.conditions.exact_oracle);
    // Many 1-worker jobs on two 64-GPU servers: small demands.
    let cluster = Cluster::new((0..2).map(|i| machine(i, 64.0, 1.25e9, 1e10)).collect());
    let jobs = (0..40)
        .map(|i| {
            let r = ring(1, 100, 1e7, 0.5, Some(1.25e7));
            let u = Utility::Linear {
                g1: 5.0 + f64::from(i % 7),
                slope: 0.05,
            };
            job(i, f64::from(i) * 30.0, r, u)
        })
        .collect();
    let instance = Instance::new(cluster, jobs, 60.0, 40).unwrap();
    let exact = solve(&instance, &{
        let mut built = GadgetParams::default();
        built.oracle = EmbeddingOracle::Exhaustive;
        built
    });
    let c = exact.report.conditions;
    assert!(c.all(), "{c:?}: {:?}", exact.report.run.reasons);
    let g = &exact.certificate.guarantees[0];
    assert!(g.valid && g.ratio_bound == Some(2.0 * exact.report.alpha));
    assert!(exact.report.run.dual_end_valid);
}

#[test]
fn headroom_exponent_capacities() {
    // Two 8-GPU servers (B_h = 20 data units); rings of up to 6 workers
    // reserving 2b = 4 and 2b = 8.
    let cluster = Cluster::new((0..2).map(|i| machine(i, 8.0, 1e7, 1e9)).collect());
    let jobs = vec![
        constant(0, ring(6, 10, 1e3, 0.1, Some(2e6)), 10.0),
        constant(1, ring(4, 10, 1e3, 0.1, Some(4e6)), 10.0),
    ];
    let instance = Instance::new(cluster, jobs, 1.0, 10).unwrap();
    let mut params = GadgetParams::default();
    params.headroom = true;
    let (engine, _) = Gadget::new(params.clone())
        .unwrap()
        .engine(&instance)
        .unwrap();
    for m in 0..2 {
        assert_eq!(engine.ledger().price_capacity(MachineId(m), GPU), 3.0);
        assert!(close(
            engine.ledger().price_capacity(MachineId(m), NIC),
            12.0,
            1e-12
        ));
        assert!(close(
            engine.ledger().capacity(MachineId(m), NIC),
            20.0,
            1e-12
        ));
    }
    let solved = solve(&instance, &params);
    assert!(solved.report.headroom && solved.report.admitted() == 2);
    // The first 6-GPU job alone adds x = 6/8 on a cell with c/c' = 8/3.
    assert!(solved.report.run.alpha_eff > 1e3);
}

#[test]
fn simulator_replay_matches_the_schedule() {
    // Single-server rings (their speed in the simulator is the planned one)
    // training their requested iterations; F·τ is never a whole number.
    let cluster = Cluster::new((0..2).map(|i| machine(i, 4.0, 1e9, 1e9)).collect());
    let jobs = (0..6)
        .map(|i| {
            let r = ring(1 + (i % 4), 70 + 13 * u64::from(i), 1e6, 0.9, None);
            job(
                i,
                f64::from(i / 2) * 60.0,
                r,
                Utility::Linear {
                    g1: 20.0,
                    slope: 1.0,
                },
            )
        })
        .collect();
    let instance = Instance::new(cluster, jobs, 60.0, 30).unwrap();
    let params = GadgetParams::default();
    let solved = solve(&instance, &params);
    let mut policy = GadgetPolicy::new(&instance, &params).unwrap();
    let result = simulate(&instance, &mut policy, &SimOptions::default()).unwrap();
    common::same_ring_decisions(policy.decisions(), &solved.report.jobs);
    assert!(solved.report.admitted() >= 4);
    for rec in &solved.report.jobs {
        let sim = result.jobs.iter().find(|j| j.job == rec.job).unwrap();
        match &rec.decision {
            Ok(a) => assert_eq!(sim.completion_slot, Some(a.completion), "{}", rec.job),
            Err(_) => assert!(sim.rejected),
        }
    }
}

#[test]
fn hostile_input_gives_typed_errors() {
    let cluster = || Cluster::new((0..2).map(|i| machine(i, 4.0, 1e9, 1e9)).collect());
    let one = |r: RarJob| vec![constant(0, r, 1.0)];
    let inst = |jobs, horizon| Instance::new(cluster(), jobs, 1.0, horizon).unwrap();
    let base = inst(one(ring(2, 10, 0.0, 0.1, Some(1e6))), 10);
    let err = |instance: &Instance, params: GadgetParams| {
        Gadget::new(params)
            .and_then(|a| a.solve(instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
            .err()
            .unwrap()
    };
    let gadget = |e: dmlsched::Error| match e {
        dmlsched::Error::Gadget(g) => g,
        e => panic!("untyped: {e}"),
    };
    for params in [
        {
            let mut built = GadgetParams::default();
            built.energy_price = f64::NAN;
            built
        },
        {
            let mut built = GadgetParams::default();
            built.u_scale = f64::INFINITY;
            built
        },
        {
            let mut built = GadgetParams::default();
            built.max_servers = 0;
            built
        },
        {
            let mut built = GadgetParams::default();
            built.fairness = FairnessWeighting::TenantShare { beta: -1.0 };
            built
        },
        {
            let mut built = GadgetParams::default();
            built.bounds = GadgetBounds::ValueFloor {
                epsilon_v: f64::NAN,
                v_floor: None,
            };
            built
        },
        {
            let mut built = GadgetParams::default();
            built.bounds = GadgetBounds::Explicit {
                l: 2.0,
                u_gpu: 1.0,
                u_nic: None,
            };
            built
        },
        {
            let mut built = GadgetParams::default();
            built.durations = BTreeMap::from([(JobId(9), DurationTable::default())]);
            built
        },
        {
            let mut built = GadgetParams::default();
            built.durations = BTreeMap::from([(JobId(0), DurationTable::new([((2, 1), 0)]))]);
            built
        },
        {
            let mut built = GadgetParams::default();
            built.durations = BTreeMap::from([(JobId(0), DurationTable::new([((3, 1), 2)]))]);
            built
        },
    ] {
        assert!(matches!(
            gadget(err(&base, params)),
            GadgetError::InvalidOption { .. }
        ));
    }
    let empty = Instance::new(cluster(), vec![], 1.0, 10).unwrap();
    assert_eq!(
        gadget(err(&empty, GadgetParams::default())),
        GadgetError::NoJobs
    );
    let huge = inst(one(ring(2, 10, 0.0, 0.1, None)), u32::MAX);
    assert!(matches!(
        gadget(err(&huge, GadgetParams::default())),
        GadgetError::TooLarge { .. }
    ));
    let ps = Instance::new(
        Cluster::new(vec![machine(0, 4.0, 1e9, 1e9)]),
        vec![Job::new(JobId(0), 0.0, PsJob::default())],
        1.0,
        10,
    )
    .unwrap();
    assert!(matches!(
        gadget(err(&ps, GadgetParams::default())),
        GadgetError::UnsupportedJob { .. }
    ));
    let slow = inst(one(ring(2, 10, 0.0, 1.5, None)), 100);
    let mut floor = GadgetParams::default();
    floor.progress = ProgressMode::Floor;
    assert!(matches!(
        gadget(err(&slow, floor)),
        GadgetError::NoProgress { .. }
    ));
    let wide = inst(one(ring(2, 10, 1e6, 0.1, Some(2e9))), 10);
    assert!(matches!(
        gadget(err(&wide, GadgetParams::default())),
        GadgetError::UnsupportedJob { .. }
    ));
    let nine = Instance::new(
        Cluster::new((0..9).map(|i| machine(i, 4.0, 1e9, 1e9)).collect()),
        one(ring(2, 10, 0.0, 0.1, None)),
        1.0,
        10,
    )
    .unwrap();
    let mut exhaustive = GadgetParams::default();
    exhaustive.oracle = EmbeddingOracle::Exhaustive;
    assert!(matches!(
        gadget(err(&nine, exhaustive)),
        GadgetError::InvalidOption { name: "oracle", .. }
    ));
}

// ----- G14: invariants of every run.

/// `(workers, iterations, model bytes, compute s, b, arrival slot, utility kind, g1)`.
type JobSpec = (u32, u64, f64, f64, Option<f64>, u32, u8, f64);

fn utility(kind: u8, g1: f64) -> Utility {
    match kind % 4 {
        0 => Utility::Constant { value: g1 },
        1 => Utility::Linear {
            g1,
            slope: g1 / 10.0,
        },
        2 => Utility::Sigmoid {
            g1,
            g2: 1.0,
            g3: 4.0,
        },
        _ => Utility::DeadlineStep {
            value: g1,
            deadline_slots: 5,
        },
    }
}

fn scenario() -> impl Strategy<Value = (Vec<f64>, u32, Vec<JobSpec>)> {
    let spec = (
        prop::sample::select(vec![1u32, 2, 3, 4, 6]),
        1u64..20,
        0.0f64..0.5,
        0.05f64..0.8,
        prop::option::of(1.0f64..5.0),
        0u32..6,
        0u8..4,
        1.0f64..50.0,
    );
    (
        prop::collection::vec(prop::sample::select(vec![2.0, 3.0, 4.0]), 2..=3),
        6u32..14,
        prop::collection::vec(spec, 1..=6),
    )
}

fn scenario_instance(gpus: &[f64], horizon: u32, jobs: &[JobSpec]) -> Instance {
    let mut cluster = Cluster::new(
        gpus.iter()
            .enumerate()
            .map(|(i, &g)| machine(i as u32, g, 10.0, 100.0))
            .collect(),
    );
    cluster.ring = {
        let mut built = RingParams::default();
        built.external_bandwidth_bps = 10.0;
        built.reduction_speed_bps = 100.0;
        built.overhead_per_server_s = 0.01;
        built.contender_ratio = 1.0;
        built.degradation = Degradation::default();
        built
    };
    let total = gpus.iter().sum::<f64>() as u32;
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(w, f, bytes, compute, b, a, kind, g1))| {
            let r = ring(w.min(total), f, bytes, compute, b);
            let mut j = job(i as u32, f64::from(a), r, utility(kind, g1));
            j.tenant = Some(format!("t{}", i % 2));
            j
        })
        .collect();
    Instance::new(cluster, jobs, 1.0, horizon).unwrap()
}

/// Per-server, per-slot GPU and NIC use of the admitted plans never exceeds
/// `O_h` and `B_h`; every admitted plan trains `F^eff(w)` in `d`
/// contiguous slots with `d = ⌈F·τ⌉`, at a positive payoff.
fn check_invariants(instance: &Instance, solved: &dmlsched::algorithms::Solved<GadgetReport>) {
    let r = &solved.report;
    let t = r.horizon as usize;
    let mut gpu = vec![vec![0.0; t]; r.servers.len()];
    let mut nic = vec![vec![0.0; t]; r.servers.len()];
    for o in &r.run.outcomes {
        if let Decision::Admitted { plan, payoff, .. } = &o.decision {
            assert!(*payoff > 0.0);
            assert!(plan.slots as f64 >= ceil_tol(plan.iterations as f64 * plan.tau_slots));
            assert_eq!(
                plan.slots as f64,
                ceil_tol(plan.iterations as f64 * plan.tau_slots).max(1.0)
            );
            for c in plan.consumption() {
                let cells = if c.resource == GPU {
                    &mut gpu
                } else {
                    &mut nic
                };
                cells[c.machine.0 as usize][c.slot as usize] += c.amount;
            }
        }
    }
    for (k, s) in r.servers.iter().enumerate() {
        for slot in 0..t {
            assert!(gpu[k][slot] <= f64::from(s.gpus) + 1e-9);
            assert!(nic[k][slot] <= s.nic * (1.0 + 1e-9) + 1e-12);
        }
    }
    for js in &solved.schedule.jobs {
        let rec = r.jobs.iter().find(|j| j.job == js.job).unwrap();
        match &rec.decision {
            Ok(a) => {
                assert_eq!(js.segments.len(), 1);
                assert_eq!(js.segments[0].slots, a.start..a.start + a.slots);
                assert_eq!(a.iterations, rec.iterations_effective);
            }
            Err(_) => assert!(js.segments.is_empty()),
        }
    }
    verify(instance, &solved.schedule).unwrap();
    solved.certificate.check(1e-9).unwrap();
}

/// Property-test configuration: `cases` cases, failures recorded in
/// `proptest-regressions/gadget.txt`.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/gadget.txt",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn g14_invariants((gpus, horizon, jobs) in scenario(), exact in any::<bool>(), energy in any::<bool>(), fair in any::<bool>()) {
        let instance = scenario_instance(&gpus, horizon, &jobs);
        let mut params = GadgetParams::default();
        params.oracle = if exact { EmbeddingOracle::Exhaustive } else { EmbeddingOracle::Greedy };
        params.energy_price = if energy { 0.05 } else { 0.0 };
        params.fairness = if fair { FairnessWeighting::TenantShare { beta: 1.0 } } else { FairnessWeighting::None };
        let solved = Gadget::new(params.clone()).and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))).unwrap();
        check_invariants(&instance, &solved);
        // Determinism.
        let again = Gadget::new(params.clone()).and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))).unwrap();
        prop_assert_eq!(&again.schedule, &solved.schedule);
        prop_assert_eq!(&again.report.jobs, &solved.report.jobs);
        // Prices never fall along the run.
        let (mut engine, stepped) = Gadget::new(params).unwrap().engine(&instance).unwrap();
        let cells = |e: &dmlsched::online::OnlinePrimalDual<GadgetOracle>| -> Vec<f64> {
            let v = e.view();
            (0..gpus.len() as u32)
                .flat_map(|m| (0..horizon).flat_map(move |t| [(m, GPU, t), (m, NIC, t)]))
                .map(|(m, r, t)| v.price(MachineId(m), r, t))
                .collect()
        };
        let mut before = cells(&engine);
        for j in &stepped {
            engine.step(j).unwrap();
            let after = cells(&engine);
            prop_assert!(before.iter().zip(&after).all(|(b, a)| a >= b));
            before = after;
        }
    }

    #[test]
    fn headroom_makes_the_running_dual_feasible((gpus, horizon, jobs) in scenario(), eta in any::<bool>()) {
        let instance = scenario_instance(&gpus, horizon, &jobs);
        let mut params = GadgetParams::default();
        params.oracle = EmbeddingOracle::Exhaustive;
        params.headroom = true;
        params.bounds = if eta { GadgetBounds::FrameworkEta } else { GadgetBounds::default() };
        let solved = match Gadget::new(params).and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))) {
            Ok(s) => s,
            // The η rule needs a job with a positive late value.
            Err(dmlsched::Error::Online(_)) if eta => return Ok(()),
            Err(e) => panic!("{e}"),
        };
        check_invariants(&instance, &solved);
        let run = &solved.report.run;
        prop_assert!(solved.report.conditions.headroom);
        // Without headroom this fails on small cases (a plan blocked by a
        // partly full cell keeps a positive payoff at the final prices).
        prop_assert_eq!(run.running_dual_feasible, Some(true));
        prop_assert!(run.dual_end_valid);
        let eff = &solved.certificate.guarantees[1];
        prop_assert!(eff.expression.contains("α_eff"));
        prop_assert_eq!(eff.valid, run.d0_condition_verified, "{:?}", eff.reasons);
        prop_assert!(run.total_utility >= (run.dual_running - run.dual_initial) / run.alpha_eff - 1e-9);
    }

    #[test]
    fn greedy_is_exhaustive_on_two_servers((_, horizon, jobs) in scenario()) {
        let instance = scenario_instance(&[4.0, 4.0], horizon, &jobs);
        let run = |oracle| Gadget::new({ let mut built = GadgetParams::default(); built.oracle = oracle; built }).and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
            .unwrap();
        let (g, e) = (run(EmbeddingOracle::Greedy), run(EmbeddingOracle::Exhaustive));
        prop_assert_eq!(&g.schedule, &e.schedule);
        check_invariants(&instance, &g);
        check_invariants(&instance, &e);
    }
}
