//! The baselines of the GADGET-style scheduler and its metrics: stopping
//! at convergence in the simulator (replays match the offline plans),
//! FIFO-FF's tie rule and registry names (its hand-checked two-server case
//! is `fifo_ff_on_two_servers` in `tests/reserved_bandwidth.rs`),
//! SJF-BCO-online and Random on hand-checked cases, NoPrice's admissions
//! and Jain's index. (The evaluation's metrics and the property test of
//! every ring baseline's invariants are in the experiments crate's
//! `gadget_metrics` tests, with the metrics.)

mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::gadget::*;
use dmlsched::algorithms::sjf_bco::{FaFfpStrategy, RarOnlineRandom, SjfBcoOnline};
use dmlsched::baselines::FifoFirstFitBandwidth;
use dmlsched::model::*;
use dmlsched::registry::{RING_BASELINES, by_name};
use dmlsched::schedule::verify;
use dmlsched::sim::{Policy, SimOptions, SimResult, simulate, work_to_train};
use rand::SeedableRng;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// `(start, finish)` of every job, instance order.
fn times(r: &SimResult) -> Vec<(Option<f64>, Option<f64>)> {
    r.jobs.iter().map(|j| (j.start_s, j.finish_s)).collect()
}

/// The GPU ids of a job's (only) allocation.
fn gpus_of(r: &SimResult, job: u32) -> Vec<(u32, u32)> {
    let a = r.allocations.iter().find(|a| a.job == JobId(job)).unwrap();
    a.gpus
        .as_ref()
        .unwrap()
        .iter()
        .map(|g| (g.machine.0, g.index))
        .collect()
}

fn run(inst: &Instance, p: &mut dyn Policy) -> SimResult {
    let r = simulate(inst, p, &SimOptions::default()).unwrap();
    verify(inst, &r.to_schedule(inst)).unwrap();
    r
}

// ------------------------------------------------------ stop at convergence

#[test]
fn the_simulator_stops_at_convergence_when_asked() {
    let job = Job::new(
        JobId(0),
        0.0,
        RarJob {
            iterations: 10,
            convergence_iterations: Some(4),
            ..RarJob::default()
        },
    );
    assert_eq!(work_to_train(&job, true), 4.0);
    let inst = Instance::new(common::ring_cluster(1, 5.0), vec![job], 1.0, 20).unwrap();
    let fifo = |stop| {
        let mut opts = SimOptions::default();
        opts.stop_at_convergence = stop;
        simulate(&inst, &mut dmlsched::baselines::Fifo::default(), &opts).unwrap()
    };
    assert_eq!(fifo(false).jobs[0].finish_s, Some(10.0));
    assert_eq!(fifo(true).jobs[0].finish_s, Some(4.0));
}

#[test]
fn replays_match_the_plans_when_stopping_at_convergence() {
    let inst = common::convergence_instance();
    let params = GadgetParams::default();
    let solved = Gadget::new(params.clone())
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    let multi = solved
        .report
        .jobs
        .iter()
        .filter_map(|j| j.decision.as_ref().ok())
        .filter(|a| a.servers() >= 2)
        .count();
    assert!(multi >= 2 && solved.report.admitted() >= 6, "{multi}");
    assert!(
        solved
            .report
            .jobs
            .iter()
            .all(|j| j.iterations_effective < j.iterations_requested)
    );
    let mut policy = GadgetPolicy::new(&inst, &params).unwrap();
    let opts = params.sim_options();
    assert!(opts.stop_at_convergence);
    let r = simulate(&inst, &mut policy, &opts).unwrap();
    common::same_ring_decisions(policy.decisions(), &solved.report.jobs);
    for rec in &solved.report.jobs {
        let sim = r.jobs.iter().find(|j| j.job == rec.job).unwrap();
        match &rec.decision {
            Ok(a) => {
                assert_eq!(sim.completion_slot, Some(a.completion), "{}", rec.job);
                assert_eq!(sim.start_s, Some(f64::from(a.start) * 60.0));
            }
            Err(_) => assert!(sim.rejected),
        }
    }
    // Training the requested iterations instead, the plans run out first.
    let mut policy = GadgetPolicy::new(&inst, &params).unwrap();
    let r = simulate(&inst, &mut policy, &SimOptions::default()).unwrap();
    let late = solved.report.jobs.iter().filter(|rec| {
        let sim = r.jobs.iter().find(|j| j.job == rec.job).unwrap();
        rec.decision
            .as_ref()
            .is_ok_and(|a| sim.completion_slot != Some(a.completion))
    });
    assert!(late.count() >= 1);
}

// ------------------------------------------------------------------ FIFO-FF

/// Ties in arrival go by job id, not instance order; the registry makes
/// both variants (G13 on them: `fifo_ff_on_two_servers` in
/// `tests/reserved_bandwidth.rs`, repeated here through the names).
#[test]
fn fifo_ff_ties_by_id_and_registry_names() {
    let jobs = vec![common::fixed_ring(1, 4, 2), common::fixed_ring(0, 4, 1)];
    let inst = Instance::new(common::ring_cluster(1, 5.0), jobs, 1.0, 20).unwrap();
    let r = run(&inst, &mut FifoFirstFitBandwidth::default());
    assert_eq!(
        times(&r),
        vec![(Some(1.0), Some(3.0)), (Some(0.0), Some(1.0))]
    );
    // G13: A (w 4, 3 slots), B (w 6, 2), C (w 2, 1), b = 2, NIC 5 per
    // direction on two 4-GPU servers.
    let jobs = vec![
        common::fixed_ring(0, 4, 3),
        common::fixed_ring(1, 6, 2),
        common::fixed_ring(2, 2, 1),
    ];
    let inst = Instance::new(common::ring_cluster(2, 5.0), jobs, 1.0, 20).unwrap();
    let strict = run(&inst, &mut by_name("ff-bandwidth").unwrap());
    assert_eq!(strict.policy, "fifo-ff");
    let s = |a: f64, b: f64| (Some(a), Some(b));
    assert_eq!(times(&strict), vec![s(0.0, 3.0), s(3.0, 5.0), s(3.0, 4.0)]);
    let backfill = run(&inst, &mut by_name("ff-bandwidth-backfill").unwrap());
    assert_eq!(backfill.policy, "fifo-ff-backfill");
    assert_eq!(
        times(&backfill),
        vec![s(0.0, 3.0), s(3.0, 5.0), s(0.0, 1.0)]
    );
}

// ----------------------------------------------------------- SJF-BCO-online

/// A (w 6, 2 slots), B (w 2, 3), C (w 4, 1) at 0, `b = 2`, two 4-GPU
/// servers with NIC 5 per direction. Queue by G: B, C, A. FA-FFP (least
/// U, ties by index): B on h0's GPUs 0–1 (`U = 3` each); C on the four
/// least-U GPUs h0:2–3 and h1:0–1, across both servers (each keeps 5 − 2
/// of NIC); A finds two free GPUs and blocks. At 1, C is done: A takes the
/// six free GPUs h0:2–3, h1:0–3. With κ = 2, C (4 > κ) uses LBSGF: h1
/// (average U 0) before h0 (1.5) holds all four, so C runs on h1 alone.
#[test]
fn sjf_bco_online_by_hand() {
    let jobs = vec![
        common::fixed_ring(0, 6, 2),
        common::fixed_ring(1, 2, 3),
        common::fixed_ring(2, 4, 1),
    ];
    let inst = Instance::new(common::ring_cluster(2, 5.0), jobs, 1.0, 20).unwrap();
    let s = |a: f64, b: f64| (Some(a), Some(b));

    let r = run(&inst, &mut by_name("sjf-bco-online").unwrap());
    assert_eq!(r.policy, "sjf-bco-online");
    assert_eq!(times(&r), vec![s(1.0, 3.0), s(0.0, 3.0), s(0.0, 1.0)]);
    assert_eq!(gpus_of(&r, 1), vec![(0, 0), (0, 1)]);
    assert_eq!(gpus_of(&r, 2), vec![(0, 2), (0, 3), (1, 0), (1, 1)]);
    assert_eq!(
        gpus_of(&r, 0),
        vec![(0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]
    );

    let mut lbsgf = SjfBcoOnline::default();
    lbsgf.kappa = 2;
    let r = run(&inst, &mut lbsgf);
    assert_eq!(times(&r), vec![s(1.0, 3.0), s(0.0, 3.0), s(0.0, 1.0)]);
    assert_eq!(gpus_of(&r, 2), vec![(1, 0), (1, 1), (1, 2), (1, 3)]);
    assert_eq!(
        gpus_of(&r, 0),
        vec![(0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]
    );
}

/// The same jobs with NIC 1.5 per direction (below `b = 2`): no ring may
/// span servers. Least U splits C across the servers, so C's candidates
/// shrink to none and the strict queue blocks behind it (B alone runs);
/// packing puts C on the unoccupied h1 instead (servers already running a
/// job first needs 4 candidates there, h0 has 2). A (6 workers) fits no
/// server and may not span: it is rejected on arrival, with the reason.
#[test]
fn sjf_bco_online_keeps_rings_on_one_server_without_nic_room() {
    let jobs = vec![
        common::fixed_ring(0, 6, 2),
        common::fixed_ring(1, 2, 3),
        common::fixed_ring(2, 4, 1),
    ];
    let inst = Instance::new(common::ring_cluster(2, 1.5), jobs, 1.0, 20).unwrap();
    let r = run(&inst, &mut SjfBcoOnline::default());
    assert!(r.stalled);
    assert!(r.jobs[0].rejected);
    let why = r.jobs[0].rejection.as_ref().unwrap().to_string();
    assert!(why.contains("reserved_bandwidth_bps"), "{why}");
    assert_eq!(
        times(&r),
        vec![(None, None), (Some(0.0), Some(3.0)), (None, None)]
    );
    let mut pack = SjfBcoOnline::default();
    pack.faffp = FaFfpStrategy::PackOccupied;
    let r = run(&inst, &mut pack);
    assert!(!r.stalled && r.jobs[0].rejected);
    assert_eq!(
        times(&r),
        vec![(None, None), (Some(0.0), Some(3.0)), (Some(0.0), Some(1.0))]
    );
    assert_eq!(gpus_of(&r, 2), vec![(1, 0), (1, 1), (1, 2), (1, 3)]);
    // Typed errors: a bad option, a parameter-server job.
    let mut bad = SjfBcoOnline::default();
    bad.lambda = 0.5;
    let e = simulate(&inst, &mut bad, &SimOptions::default()).unwrap_err();
    assert!(matches!(
        e,
        dmlsched::Error::Gadget(GadgetError::InvalidOption { name: "lambda", .. })
    ));
}

#[test]
fn ring_baselines_refuse_parameter_server_jobs() {
    let ps = common::job(0, 0.0, common::ps_job(1, 1.0));
    let big = Resources::zero()
        .gpus(4.0)
        .cpu_cores(16.0)
        .memory(1e12)
        .nic(1e10);
    let inst = Instance::new(Cluster::homogeneous(1, big, 1e10), vec![ps], 1.0, 10).unwrap();
    for name in RING_BASELINES {
        let e = simulate(&inst, &mut by_name(name).unwrap(), &SimOptions::default());
        assert!(
            matches!(
                e,
                Err(dmlsched::Error::Gadget(GadgetError::UnsupportedJob { .. }))
            ),
            "{name}: {e:?}"
        );
    }
}

// ------------------------------------------------------------------- Random

/// Three 4-worker jobs on one 4-GPU server: they run one after the other
/// in a uniformly random order; equal seeds give equal runs.
#[test]
fn random_order_is_uniform_and_seeded() {
    let jobs = (0..3).map(|i| common::fixed_ring(i, 4, 1)).collect();
    let inst = Instance::new(common::ring_cluster(1, 5.0), jobs, 1.0, 20).unwrap();
    let mut first = [0u32; 3];
    for seed in 0..300 {
        let r = run(&inst, &mut RarOnlineRandom::new(seed));
        let mut starts: Vec<f64> = r.jobs.iter().map(|j| j.start_s.unwrap()).collect();
        let i = starts.iter().position(|&s| s == 0.0).unwrap();
        first[i] += 1;
        starts.sort_by(f64::total_cmp);
        assert_eq!(starts, vec![0.0, 1.0, 2.0]);
        let again = run(&inst, &mut RarOnlineRandom::new(seed));
        assert_eq!((&again.jobs, &again.allocations), (&r.jobs, &r.allocations));
    }
    // 100 expected each; a 5σ band.
    assert!(first.iter().all(|&n| (60..=140).contains(&n)), "{first:?}");
}

/// Two servers with 2 GPUs and NIC 1.5 per direction (below `b = 2`): a
/// 4-worker ring never starts (every draw spans both servers), a 2-worker
/// ring that starts runs on one server (draws across both are redrawn).
/// With room for the reservation, draws across servers are kept.
#[test]
fn random_redraws_rings_without_nic_room() {
    let m = |i| {
        Machine::new(
            MachineId(i),
            Resources::zero().gpus(2.0).cpu_cores(4.0).nic(1.5),
            20.0,
        )
    };
    let mut c = Cluster::new(vec![m(0), m(1)]);
    c.ring.overhead_per_server_s = 0.0;
    let jobs = vec![
        common::fixed_ring(0, 4, 1),
        common::fixed_ring(1, 2, 1),
        common::fixed_ring(2, 2, 1),
    ];
    let inst = Instance::new(c.clone(), jobs.clone(), 1.0, 20).unwrap();
    let mut spread = 0;
    for seed in 0..40 {
        let r = run(&inst, &mut RarOnlineRandom::new(seed));
        assert_eq!(r.jobs[0].start_s, None);
        for a in &r.allocations {
            assert_eq!(a.placement.len(), 1, "seed {seed}: {a:?}");
        }
        let mut wide = c.clone();
        for machine in &mut wide.machines {
            machine.capacity.nic_bps = 5.0;
        }
        let inst = Instance::new(wide, jobs.clone(), 1.0, 20).unwrap();
        let r = run(&inst, &mut RarOnlineRandom::new(seed));
        spread += r
            .allocations
            .iter()
            .filter(|a| a.placement.len() == 2)
            .count();
    }
    assert!(spread > 0);
}

// ------------------------------------------------------------------ NoPrice

/// On a cluster with room for everyone, NoPrice admits every job at its
/// best value: the earliest start and its fastest shape. A job whose
/// deadline no plan meets, or whose energy cost exceeds its utility, is
/// rejected.
#[test]
fn noprice_admits_every_job_of_positive_value() {
    let mut jobs: Vec<Job> = (0..4)
        .map(|i| common::fixed_ring(i, [2, 4, 6, 8][i as usize], 3))
        .collect();
    jobs.push(
        common::fixed_ring(4, 4, 5).with_utility(Utility::DeadlineStep {
            value: 10.0,
            deadline_slots: 2,
        }),
    );
    let inst = Instance::new(common::ring_cluster(8, 5.0), jobs, 1.0, 20).unwrap();
    let params = GadgetParams::default();
    let mut p = GadgetNoPrice::new(params.clone());
    let r = simulate(&inst, &mut p, &params.sim_options()).unwrap();
    verify(&inst, &r.to_schedule(&inst)).unwrap();
    for j in &r.jobs[..4] {
        assert_eq!((j.start_s, j.finish_s), (Some(0.0), Some(3.0)), "{j:?}");
    }
    assert!(r.jobs[4].rejected);
    assert_eq!(p.plans().len(), 4);
    // Every admitted plan is on as few servers as its workers need.
    for plan in p.plans() {
        assert_eq!(plan.servers(), plan.workers.div_ceil(4));
    }
    // An energy price above every job's value rejects everything.
    let mut costly = GadgetParams::default();
    costly.energy_price = 1.0;
    let mut p = GadgetNoPrice::new(costly.clone());
    let r = simulate(&inst, &mut p, &costly.sim_options()).unwrap();
    assert!(r.jobs.iter().all(|j| j.rejected));
}

/// Overload: one 4-GPU server, five 4-worker jobs of 3 slots arriving at
/// 0, horizon 12. NoPrice admits the four that fit back to back
/// ([0,3), [3,6), [6,9), [9,12)) and rejects the fifth (no room before the
/// horizon); the priced scheduler admits no more than NoPrice.
#[test]
fn noprice_fills_the_horizon() {
    let jobs = (0..5).map(|i| common::fixed_ring(i, 4, 3)).collect();
    let inst = Instance::new(common::ring_cluster(1, 5.0), jobs, 1.0, 12).unwrap();
    let params = GadgetParams::default();
    let mut p = GadgetNoPrice::new(params.clone());
    let r = simulate(&inst, &mut p, &params.sim_options()).unwrap();
    let done: Vec<Option<u32>> = r.jobs.iter().map(|j| j.completion_slot).collect();
    assert_eq!(done, vec![Some(2), Some(5), Some(8), Some(11), None]);
    assert!(r.jobs[4].rejected);
    let priced = Gadget::new(params)
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    assert!(priced.report.admitted() <= 4);
}

// ------------------------------------------------------ metrics and Jain

#[test]
fn g9_jain_index() {
    assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
    assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
    assert!(close(jain_index(&[1.0, 0.5]).unwrap(), 0.9));
    assert_eq!(jain_index(&[]), None);
}
