//! Unit tests of the scheduler's model and oracle (the job's shapes,
//! iteration times, durations and values; the greedy and exhaustive
//! embeddings at injected prices; the bound inputs behind `L`), moved here
//! from `tests/gadget.rs` when the model and the oracle's own API became
//! crate-private. The builders are those of the integration tests.

use std::collections::BTreeMap;

use rand::SeedableRng;

use super::model::{GadgetJob, GadgetModel, Shape};
use super::*;
use crate::algorithms::Algorithm;
use crate::model::*;
use crate::online::{PriceView, PricingOracle, RejectReason};
use crate::schedule::verify;
use crate::timing::ProgressMode;

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
fn solve(instance: &Instance, params: &GadgetParams) -> crate::algorithms::Solved<GadgetReport> {
    let solved = Gadget::new(params.clone())
        .and_then(|a| a.solve(instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    verify(instance, &solved.schedule).unwrap();
    solved.certificate.check(1e-9).unwrap();
    solved
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

/// The hand-checked timing parameters (slots of 1 s): `C = 40`,
/// `ξ2 = 0.01`.
fn hand_ring_params() -> RingParams {
    RingParams {
        external_bandwidth_bps: 1.0,
        reduction_speed_bps: 40.0,
        overhead_per_server_s: 0.01,
        contender_ratio: 1.0,
        degradation: Degradation::FairShare,
    }
}

/// Three 4-GPU servers with `b^int = 20`, the common job of G3–G6
/// (`m = 0.8`, `w = 4`, `b_i = 4`, `K = 0.08`) with `F^req = req`,
/// `F^conv = conv`.
fn hand_instance(req: u64, conv: Option<u64>, extra_job: bool) -> Instance {
    let mut cluster = Cluster::new((0..3).map(|i| machine(i, 4.0, 1e3, 20.0)).collect());
    cluster.ring = hand_ring_params();
    let mut r = ring(4, req, 0.8, 0.08, Some(4.0));
    r.convergence_iterations = conv;
    let mut jobs = vec![constant(0, r.clone(), 10.0)];
    if extra_job {
        jobs.push(constant(1, r, 10.0));
    }
    Instance::new(cluster, jobs, 1.0, 20).unwrap()
}

fn shape_of(model: &GadgetModel, job: usize, n: u32) -> Shape {
    *model.jobs[job]
        .shapes
        .iter()
        .find(|s| s.servers == n)
        .unwrap()
}

#[test]
fn g3_iteration_times() {
    let params = GadgetParams::default();
    let model = GadgetModel::new(&hand_instance(12, None, false), &params).unwrap();
    for (n, tau) in [(1, 0.165), (2, 0.415), (3, 0.425)] {
        assert!(
            close(shape_of(&model, 0, n).tau_slots, tau, 1e-12),
            "n = {n}"
        );
    }
    // Another job on the same servers changes nothing: no contention.
    let two = GadgetModel::new(&hand_instance(12, None, true), &params).unwrap();
    assert_eq!(two.jobs[0].shapes, model.jobs[0].shapes);
    assert_eq!(two.jobs[1].shapes, model.jobs[0].shapes);
}

#[test]
fn g4_durations() {
    let model = |req, conv, params: &GadgetParams| {
        GadgetModel::new(&hand_instance(req, conv, false), params).unwrap()
    };
    let frac = model(12, None, &GadgetParams::default());
    let d = |m: &GadgetModel, n| shape_of(m, 0, n).slots;
    assert_eq!((d(&frac, 1), d(&frac, 2), d(&frac, 3)), (2, 5, 6));
    let floor = GadgetParams {
        progress: ProgressMode::Floor,
        ..GadgetParams::default()
    };
    assert_eq!(d(&model(12, None, &floor), 2), 6);
    let stop = model(20, Some(12), &GadgetParams::default());
    assert_eq!(stop.jobs[0].iterations_effective, 12);
    assert_eq!(d(&stop, 1), 2);
    let requested = GadgetParams {
        excessive_training: ExcessiveTraining::TrainRequested,
        ..GadgetParams::default()
    };
    assert_eq!(d(&model(20, Some(12), &requested), 1), 4);
}

#[test]
fn g5_values() {
    // The sigmoid 10/(1 + e^{δ − 5}) over the delay δ = t̂ − a + 1 is the
    // crate's sigmoid of the elapsed slots with g3 = 4.
    let s = Utility::Sigmoid {
        g1: 10.0,
        g2: 1.0,
        g3: 4.0,
    };
    assert!(close(utility_at_jct(&s, 5), 5.0, 1e-12));
    assert!(close(
        utility_at_jct(&s, 3),
        10.0 / (1.0 + (-2.0f64).exp()),
        1e-12
    ));
    assert!(close(utility_at_jct(&s, 3), 8.8080, 1e-4));
    assert!(close(
        ln_utility_at_jct(&s, 3),
        utility_at_jct(&s, 3).ln(),
        1e-12
    ));
    // Deadline 4 over δ is the crate's deadline step at 3 elapsed slots.
    let d = Utility::DeadlineStep {
        value: 7.0,
        deadline_slots: 3,
    };
    assert_eq!((utility_at_jct(&d, 4), utility_at_jct(&d, 5)), (7.0, 0.0));
    // v = ω·u − e·w·d with e = 0.1, w = 4, d = 2 (the n = 1 shape of G4).
    let params = GadgetParams {
        energy_price: 0.1,
        ..GadgetParams::default()
    };
    let mut model = GadgetModel::new(&hand_instance(12, None, false), &params).unwrap();
    let j = &mut model.jobs[0];
    j.utility = s.clone();
    let one = shape_of_job(j, 1);
    assert_eq!(one.slots, 2);
    // Start 1: δ = 1 + 2 − 0 = 3.
    assert!(close(j.value(1, &one), utility_at_jct(&s, 3) - 0.8, 1e-12));
    j.omega = 0.5;
    assert!(close(
        j.value(1, &one),
        0.5 * utility_at_jct(&s, 3) - 0.8,
        1e-12
    ));
}

fn shape_of_job(j: &GadgetJob, n: u32) -> Shape {
    *j.shapes.iter().find(|s| s.servers == n).unwrap()
}

/// G6's instance: three 4-GPU servers with ample NIC, a 6-worker job with
/// `2b = 4` data units per slot and durations `d(6,2) = 3`, `d(6,3) = 4`.
fn g6_model(table: &[((u32, u32), u32)]) -> GadgetModel {
    let cluster = Cluster::new((0..3).map(|i| machine(i, 4.0, 1e9, 1e9)).collect());
    let r = ring(6, 1, 0.0, 1.0, Some(2e6));
    let instance = Instance::new(cluster, vec![constant(0, r, 100.0)], 1.0, 6).unwrap();
    let params = GadgetParams {
        durations: BTreeMap::from([(JobId(0), DurationTable::new(table.iter().copied()))]),
        ..GadgetParams::default()
    };
    GadgetModel::new(&instance, &params).unwrap()
}

fn g6_view() -> PriceView<'static> {
    PriceView::from_explicit(
        3,
        2,
        6,
        |m, r, _| {
            if r == GPU {
                [1.0, 2.0, 3.0][m.0 as usize]
            } else {
                [0.5, 0.1, 0.1][m.0 as usize]
            }
        },
        |_, r, _| if r == GPU { 4.0 } else { 1e3 },
    )
}

#[test]
fn g6_greedy_and_exhaustive_embedding() {
    let view = g6_view();
    let model = g6_model(&[((6, 2), 3), ((6, 3), 4)]);
    assert_eq!(model.jobs[0].ring_nic, 4.0);
    for kind in [EmbeddingOracle::Greedy, EmbeddingOracle::Exhaustive] {
        let mut oracle = GadgetOracle::new(model.cluster.clone(), kind);
        let (plan, value, cost) = oracle.best_plan(&model.jobs[0], &view).unwrap();
        assert_eq!(plan.placement, vec![(0, 4), (1, 2)], "{kind:?}");
        assert_eq!((plan.start, plan.slots, value), (0, 3, 100.0));
        assert!(close(cost, 31.2, 1e-12));
        assert!(close(value - cost, 68.8, 1e-12));
        let resp = oracle.best_response(0, &model.jobs[0], &view).unwrap();
        assert_eq!(
            resp.quality == crate::online::OracleQuality::Exact,
            kind.is_exact()
        );
    }
    // The other pairs, exhaustively: {h0, h2} 37.2, {h1, h2} 44.4.
    for (allowed, cost) in [([true, false, true], 37.2), ([false, true, true], 44.4)] {
        let mut job = model.jobs[0].clone();
        job.allowed = Some(allowed.to_vec());
        let mut oracle = GadgetOracle::new(model.cluster.clone(), EmbeddingOracle::Exhaustive);
        let (_, _, c) = oracle.best_plan(&job, &view).unwrap();
        assert!(close(c, cost, 1e-12), "{allowed:?}: {c}");
    }
    // n = 3 alone: y = (4, 1, 1), cost 47.2.
    let three = g6_model(&[((6, 3), 4)]);
    let mut oracle = GadgetOracle::new(three.cluster.clone(), EmbeddingOracle::Greedy);
    let (plan, _, cost) = oracle.best_plan(&three.jobs[0], &view).unwrap();
    assert_eq!(plan.placement, vec![(0, 4), (1, 1), (2, 1)]);
    assert!(close(cost, 47.2, 1e-12));
}

#[test]
fn g11_initial_dual() {
    let instance = first_admission_instance();
    let vf = solve(&instance, &GadgetParams::default());
    let v_floor = vf.report.v_floor.unwrap();
    let r = &vf.report;
    let capacity: f64 = r.servers.iter().map(|s| f64::from(s.gpus) + s.nic).sum();
    let l = r.run.dual_initial / (f64::from(r.horizon) * capacity);
    assert!(close(r.run.dual_initial, v_floor / 4.0, 1e-12));
    assert!(l > 0.0);
    let best = r
        .jobs
        .iter()
        .filter_map(|j| j.best_value)
        .fold(0.0, f64::max);
    assert!(v_floor <= best);
    let eta = solve(
        &instance,
        &GadgetParams {
            bounds: GadgetBounds::FrameworkEta,
            ..GadgetParams::default()
        },
    );
    let model = GadgetModel::new(&instance, &GadgetParams::default()).unwrap();
    let oracle = GadgetOracle::new(model.cluster.clone(), EmbeddingOracle::Greedy);
    let min_late = model
        .jobs
        .iter()
        .map(|j| oracle.bound_inputs(j, instance.horizon_slots()).unwrap())
        .filter(|b| b.schedulable && b.ln_u_min.is_finite())
        .map(|b| b.ln_u_min.exp())
        .fold(f64::INFINITY, f64::min);
    assert!(eta.report.run.dual_initial <= min_late / 4.0 * (1.0 + 1e-12));
}

#[test]
fn a_job_without_reservation_uses_one_server() {
    let cluster = Cluster::new((0..2).map(|i| machine(i, 4.0, 1e9, 1e9)).collect());
    let jobs = vec![
        constant(0, ring(6, 10, 1e6, 0.1, None), 10.0),
        constant(1, ring(4, 10, 1e6, 0.1, None), 10.0),
    ];
    let instance = Instance::new(cluster, jobs, 1.0, 10).unwrap();
    let model = GadgetModel::new(&instance, &GadgetParams::default()).unwrap();
    assert!(
        model
            .jobs
            .iter()
            .all(|j| j.shapes.iter().all(|s| s.servers == 1))
    );
    let r = solve(&instance, &GadgetParams::default()).report;
    assert!(!r.jobs[0].admitted() && r.jobs[1].admitted());
    assert_eq!(r.jobs[0].decision, Err(RejectReason::Unschedulable));
}

/// `fastest_shapes` gives `d^min`, the fewest slots among the shapes that
/// fit the empty cluster, and `packed_iteration_slots` the iteration time of
/// the requested workers on the fewest servers, both read from the model's
/// shapes by hand (the GADGET-style evaluation calibrates its jobs with
/// them).
#[test]
fn durations_for_generators_match_the_model_shapes() {
    let cluster = Cluster::new((0..3).map(|i| machine(i, 8.0, 1.25e9, 1e10)).collect());
    let jobs = [2, 6, 12, 16]
        .iter()
        .enumerate()
        .map(|(i, &w)| constant(i as u32, ring(w, 500, 1e8, 0.2, Some(1e8)), 10.0))
        .collect();
    let inst = Instance::new(cluster, jobs, 60.0, 400).unwrap();
    let params = GadgetParams::default();
    let model = GadgetModel::new(&inst, &params).unwrap();
    let fastest_of = fastest_shapes(&inst, &params).unwrap();
    let packed = packed_iteration_slots(&inst, &params, 8).unwrap();
    for j in &model.jobs {
        let fastest = j
            .shapes
            .iter()
            .filter(|s| s.servers * 8 >= s.workers && s.servers <= 3)
            .map(|s| s.slots)
            .min();
        assert_eq!(
            fastest_of[j.position].map(|(d, _)| d),
            fastest,
            "job {}",
            j.id
        );
        let g = j.requested_workers;
        let tau = j
            .shapes
            .iter()
            .find(|s| s.workers == g && s.servers == g.div_ceil(8))
            .map(|s| s.tau_slots);
        assert_eq!(packed[j.position], tau, "job {}", j.id);
    }
    // Reserving, the 16-worker job spans two servers; every job fits.
    assert!(fastest_of.iter().all(Option::is_some));
    assert!(packed[3].is_some());
}
