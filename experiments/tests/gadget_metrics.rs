//! The GADGET-style evaluation's metrics on the scheduler's and the ring
//! baselines' runs: a hand-checked metrics case, a solved run against its
//! replay, multi-server reservations, and the invariants of every ring
//! baseline (a property test: no GPU or NIC over-commitment under `verify`,
//! one allocation per job at its largest worker count, determinism, and
//! utilisations of at most 1). Moved from the library's ring-baseline
//! tests with the metrics.

#[path = "../../tests/common/mod.rs"]
mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::gadget::*;
use dmlsched::algorithms::sjf_bco::{FaFfpStrategy, RarOnlineRandom, SjfBcoOnline};
use dmlsched::baselines::FifoFirstFitBandwidth;
use dmlsched::model::*;
use dmlsched::registry::{RING_BASELINES, by_name};
use dmlsched::schedule::{Tasks, verify};
use dmlsched::sim::{Decisions, Policy, SimOptions, StopAt, simulate};
use dmlsched_experiments::gadget::GadgetMetrics;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;

const H0: MachineId = MachineId(0);
const H1: MachineId = MachineId(1);

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// FIFO-FF (strict) on two 4-GPU servers (NIC 5 per direction, 1 s slots,
/// horizon 10), stopping at convergence, `e = 0.5`:
///
/// * J0 (w 4, 4 iterations converging after 2, tenant a, constant 10) on
///   h0 in [0, 2): δ = 2, utility 10, 8 GPU-s, 8 GPU-s avoided;
/// * J1 (w 6, 2 iterations, tenant b, deadline 10 within 2 elapsed slots)
///   waits for J0, then h0 + h1 in [2, 4) reserving 2 on each: δ = 4,
///   deadline missed, 12 GPU-s, NIC 2·2·2;
/// * J2 (w 2, 1 iteration, tenant b, linear 5 − δ_elapsed) waits behind
///   J1, then h1 in [2, 3): δ = 3, utility 3, 2 GPU-s;
/// * J3 (w 8, 10 iterations, tenant c, constant 100) starts at 4 across
///   both servers and is cut by the horizon: unfinished, 48 GPU-s, NIC
///   2·2·6.
#[test]
fn metrics_by_hand() {
    let tenant = |j: Job, t: &str| Job {
        tenant: Some(t.into()),
        ..j
    };
    let mut j0 = common::fixed_ring(0, 4, 4);
    if let Architecture::RingAllReduce(r) = &mut j0.architecture {
        r.convergence_iterations = Some(2);
    }
    let jobs = vec![
        tenant(j0.with_utility(Utility::Constant { value: 10.0 }), "a"),
        tenant(
            common::fixed_ring(1, 6, 2).with_utility(Utility::DeadlineStep {
                value: 10.0,
                deadline_slots: 2,
            }),
            "b",
        ),
        tenant(
            common::fixed_ring(2, 2, 1).with_utility(Utility::Linear {
                g1: 5.0,
                slope: 1.0,
            }),
            "b",
        ),
        tenant(
            common::fixed_ring(3, 8, 10).with_utility(Utility::Constant { value: 100.0 }),
            "c",
        ),
    ];
    let inst = Instance::new(common::ring_cluster(2, 5.0), jobs, 1.0, 10).unwrap();
    let mut opts = SimOptions::default();
    opts.stop = StopAt::Horizon;
    opts.stop_at_convergence = true;
    let r = simulate(&inst, &mut FifoFirstFitBandwidth::default(), &opts).unwrap();
    let mut params = GadgetParams::default();
    params.energy_price = 0.5;
    let m = GadgetMetrics::from_sim(&inst, &r, &opts, &params).unwrap();
    println!("{m}");
    assert_eq!((m.arrived, m.admitted, m.completed), (4, 4, 3));
    assert!(close(m.admission_rate(), 1.0) && close(m.completion_rate(), 0.75));
    assert!(close(m.gross_utility, 13.0));
    assert!(close(m.gpu_slots, 70.0));
    assert!(close(m.net_utility, 13.0 - 35.0));
    let jct = m.jct_slots.unwrap();
    assert_eq!((jct.mean, jct.p50, jct.p95, jct.max), (3.0, 3.0, 4.0, 4.0));
    assert_eq!(m.jct_s.unwrap(), jct);
    assert_eq!(m.deadline_met_rate, Some(0.0));
    assert!(close(m.gpu_hours, 70.0 / 3600.0));
    assert!(close(m.excessive_training_avoided_gpu_hours, 8.0 / 3600.0));
    assert!(close(m.gpu_utilisation, 70.0 / 80.0));
    assert!(close(m.nic_utilisation, 32.0 / 100.0));
    // x = (2/2, 2/4, 1/3, 0) for jobs; (8/8, 14/14, 48/80) for tenants.
    let x: [f64; 4] = [1.0, 0.5, 1.0 / 3.0, 0.0];
    let jain = x.iter().sum::<f64>().powi(2) / (4.0 * x.iter().map(|v| v * v).sum::<f64>());
    assert!(close(m.jain_jobs.unwrap(), jain));
    assert!(close(m.jain_tenants.unwrap(), 2.6 * 2.6 / (3.0 * 2.36)));
}

/// From a solved run, the metrics restate the report: gross utility is
/// `ALG` (no energy price, `ω = 1`), GPU-slots are `Σ w·d`; the replay in
/// the simulator has the same utility and JCTs.
#[test]
fn metrics_of_a_solved_run_and_its_replay() {
    let inst = common::convergence_instance();
    let params = GadgetParams::default();
    let solved = Gadget::new(params.clone())
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    let m = GadgetMetrics::from_solved(&inst, &solved);
    assert!(close(m.gross_utility, solved.report.total_value()));
    assert!(close(m.gpu_slots, solved.report.gpu_slots() as f64));
    assert_eq!(m.admitted, solved.report.admitted());
    assert_eq!(m.completed, m.admitted);
    assert!(m.excessive_training_avoided_gpu_hours > 0.0);
    let mut policy = GadgetPolicy::new(&inst, &params).unwrap();
    let opts = params.sim_options();
    let r = simulate(&inst, &mut policy, &opts).unwrap();
    let s = GadgetMetrics::from_sim(&inst, &r, &opts, &params).unwrap();
    assert!(close(s.gross_utility, m.gross_utility));
    assert_eq!(s.jct_slots, m.jct_slots);
    assert_eq!(s.jain_jobs, m.jain_jobs);
    // The simulator holds GPUs for F·τ, the plans for whole slots.
    assert!(s.gpu_slots <= m.gpu_slots + 1e-9);
    assert!(close(
        s.excessive_training_avoided_gpu_hours,
        m.excessive_training_avoided_gpu_hours
    ));
}

// ------------------------------------------------------- G14 for baselines

/// `(workers, iterations, convergence %, reserves, arrival slot)`.
type Spec = (u32, u64, u64, bool, u32);

fn scenario() -> impl Strategy<Value = (Vec<f64>, f64, Vec<Spec>)> {
    let spec = (
        prop::sample::select(vec![1u32, 2, 3, 4, 6]),
        1u64..6,
        50u64..=100,
        any::<bool>(),
        0u32..6,
    );
    (
        prop::collection::vec(prop::sample::select(vec![2.0, 3.0, 4.0]), 2..=3),
        prop::sample::select(vec![1.5, 5.0, 50.0]),
        prop::collection::vec(spec, 1..=7),
    )
}

fn scenario_instance(gpus: &[f64], nic: f64, specs: &[Spec]) -> Instance {
    let mut c = Cluster::new(
        gpus.iter()
            .enumerate()
            .map(|(i, &g)| {
                Machine::new(
                    MachineId(i as u32),
                    Resources::zero().gpus(g).cpu_cores(g).nic(nic),
                    20.0,
                )
            })
            .collect(),
    );
    c.ring.overhead_per_server_s = 0.0;
    let total = gpus.iter().sum::<f64>() as u32;
    let jobs = specs
        .iter()
        .enumerate()
        .map(|(i, &(w, f, conv, reserves, a))| {
            let r = RarJob {
                workers: WorkerCounts::Fixed(w.min(total)),
                iterations: f,
                convergence_iterations: Some((f * conv).div_ceil(100)),
                backward_per_iteration_s: 0.7,
                model_bytes: 1.0,
                reserved_bandwidth_bps: reserves.then_some(2.0),
                worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
                ..RarJob::default()
            };
            Job {
                tenant: Some(format!("t{}", i % 2)),
                ..Job::new(JobId(i as u32), f64::from(a), r)
            }
        })
        .collect();
    Instance::new(c, jobs, 1.0, 30).unwrap()
}

/// The new policies by name, plus the non-default variants.
fn policies(seed: u64) -> Vec<(String, Box<dyn Policy>)> {
    let mut out: Vec<(String, Box<dyn Policy>)> = RING_BASELINES
        .iter()
        .map(|n| (n.to_string(), by_name(n).unwrap()))
        .collect();
    let mut variant = SjfBcoOnline::default();
    (variant.kappa, variant.lambda) = (2, 2.0);
    (variant.faffp, variant.backfill) = (FaFfpStrategy::PackOccupied, true);
    out.push((
        "sjf-bco-online pack, κ 2, λ 2, backfill".into(),
        Box::new(variant),
    ));
    out.push((
        format!("random seed {seed}"),
        Box::new(RarOnlineRandom::new(seed)),
    ));
    out.push((
        "ff-bandwidth-backfill".into(),
        by_name("ff-bandwidth-backfill").unwrap(),
    ));
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/gadget_metrics.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Decisions at slot boundaries (so the run is an exact slotted
    /// schedule): `verify` finds no GPU or NIC over-commitment (ring
    /// reservations included) and no broken gang; every started job holds
    /// one allocation of its largest worker count until it completes its
    /// `F^eff` iterations or the horizon; equal inputs give equal runs.
    #[test]
    fn g14_new_policies((gpus, nic, specs) in scenario(), seed in 0u64..1000) {
        let inst = scenario_instance(&gpus, nic, &specs);
        let mut opts = SimOptions::default();
        opts.decisions = Decisions::SlotBoundaries;
        opts.stop = StopAt::Horizon;
        opts.stop_at_convergence = true;
        for ((name, mut p), (_, mut q)) in policies(seed).into_iter().zip(policies(seed)) {
            let r = simulate(&inst, &mut p, &opts).unwrap();
            verify(&inst, &r.to_schedule(&inst)).unwrap();
            for j in &r.jobs {
                let job = inst.job(j.job).unwrap();
                let held: Vec<_> = r.allocations.iter().filter(|a| a.job == j.job).collect();
                prop_assert!(held.len() <= 1, "{name}: {held:?}");
                if let Some(a) = held.first() {
                    let w: u32 = a.placement.iter().map(|(_, t): &(MachineId, Tasks)| t.workers).sum();
                    prop_assert_eq!(w, job.max_workers(), "{}", name);
                }
                if let (Some(s), Some(f)) = (j.start_s, j.finish_s) {
                    // One contiguous run of all its workers.
                    prop_assert!(j.remaining_work == 0.0);
                    let w = f64::from(job.max_workers());
                    prop_assert!(close(j.gpu_seconds, w * (f - s)), "{}: {:?}", name, j);
                }
            }
            let again = simulate(&inst, &mut q, &opts).unwrap();
            prop_assert_eq!(&again.jobs, &r.jobs, "{}", name);
            prop_assert_eq!(&again.allocations, &r.allocations, "{}", name);
            let m = GadgetMetrics::from_sim(&inst, &r, &opts, &GadgetParams::default()).unwrap();
            prop_assert!(m.gpu_utilisation <= 1.0 + 1e-9 && m.nic_utilisation <= 1.0 + 1e-9, "{}", m);
        }
    }
}

#[test]
fn names_and_multi_server_reservations_in_the_metrics() {
    // One 6-worker ring on two 4-GPU servers under every new policy that
    // admits it: NIC utilisation is b on both servers while it runs.
    let inst = Instance::new(
        common::ring_cluster(2, 5.0),
        vec![common::fixed_ring(0, 6, 2)],
        1.0,
        4,
    )
    .unwrap();
    let opts = GadgetParams::default().sim_options();
    for name in RING_BASELINES {
        let mut p = by_name(name).unwrap();
        let r = simulate(&inst, &mut p, &opts).unwrap();
        let m = GadgetMetrics::from_sim(&inst, &r, &opts, &GadgetParams::default()).unwrap();
        assert_eq!(m.completed, 1, "{name}");
        assert!(
            close(m.nic_utilisation, (2.0 * 2.0 * 2.0) / (10.0 * 4.0)),
            "{name}: {m}"
        );
        let placed: Vec<MachineId> = r.allocations[0].placement.iter().map(|(m, _)| *m).collect();
        assert_eq!(placed, vec![H0, H1], "{name}");
    }
}
