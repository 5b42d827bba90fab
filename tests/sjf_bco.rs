//! SJF-BCO, its slot simulator and the FF, LS and RAND baselines: the
//! hand-checked model and simulator cases, the known-answer algorithm cases
//! (including the counterexample to the paper's approximation theorem),
//! a replay in the crate's simulator, and property tests.

mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::Solved;
use dmlsched::algorithms::sjf_bco::*;
use dmlsched::model::*;
use dmlsched::schedule::verify;
use dmlsched::timing::{ProgressMode, RarTiming, contention_counts, effective_contenders};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

// ---------------------------------------------------------------------------
// Hand-checkable model and simulator cases
// ---------------------------------------------------------------------------

/// Four servers of 4 GPUs; `m = 0.8`, `b_i = 20`, `b_e = 4`, `C = 40`,
/// `ξ₂ = 0.01`, `α = 0.1`, compute 0.08 (1 s slots, 1-byte data units).
fn hand_cluster(contender_ratio: f64) -> Cluster {
    let mut c = Cluster::homogeneous(4, Resources::zero().gpus(4.0), 20.0);
    c.ring = {
        let mut built = RingParams::default();
        built.external_bandwidth_bps = 4.0;
        built.reduction_speed_bps = 40.0;
        built.overhead_per_server_s = 0.01;
        built.contender_ratio = contender_ratio;
        built.degradation = Degradation::Linear { alpha: 0.1 };
        built
    };
    c
}

fn hand_job(id: u32, gpus: u32, iterations: u64) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(gpus),
            iterations,
            model_bytes: if gpus > 1 { 0.8 } else { 0.0 },
            forward_per_sample_s: 0.0,
            backward_per_iteration_s: 0.08,
            worker: Resources::zero().gpus(1.0),
            ..RarJob::default()
        },
    )
}

fn gpu(machine: u32, index: u32) -> GpuId {
    GpuId {
        machine: MachineId(machine),
        index,
    }
}

fn assign(job: u32, gpus: &[(u32, u32)], start: u64) -> RarAssignment {
    RarAssignment {
        job: JobId(job),
        gpus: gpus.iter().map(|&(m, i)| gpu(m, i)).collect(),
        provisional_start: start,
        order_key: u64::from(job),
    }
}

fn hand_run(
    jobs: Vec<Job>,
    assignments: &[RarAssignment],
    progress: ProgressMode,
    ratio: f64,
) -> Result<RarExecution, SjfBcoError> {
    let inst = Instance::new(hand_cluster(ratio), jobs, 1.0, 100).unwrap();
    let mut params = SjfBcoParams::default();
    params.progress = progress;
    simulate_assignments(&inst, assignments, &params)
}

const TWO_TWO: [(u32, u32); 4] = [(0, 0), (0, 1), (1, 0), (1, 1)];
const SHARED: [(u32, u32); 4] = [(1, 2), (1, 3), (2, 0), (2, 1)];

#[test]
fn t_m1_single_server() {
    let a = [assign(1, &[(0, 0), (0, 1), (0, 2), (0, 3)], 0)];
    for mode in [ProgressMode::Fractional, ProgressMode::Floor] {
        let e = hand_run(vec![hand_job(1, 4, 12)], &a, mode, 1.0).unwrap();
        assert_eq!(e.completion, vec![2], "{mode:?}");
    }
}

#[test]
fn t_m2_lone_multi_server_job() {
    let a = [assign(1, &TWO_TWO, 0)];
    let frac = hand_run(vec![hand_job(1, 4, 12)], &a, ProgressMode::Fractional, 1.0).unwrap();
    let floor = hand_run(vec![hand_job(1, 4, 12)], &a, ProgressMode::Floor, 1.0).unwrap();
    assert_eq!((frac.makespan, floor.makespan), (5, 6));
}

#[test]
fn t_m3_t_m4_t_s1_two_rings_share_a_server() {
    let jobs = || vec![hand_job(1, 4, 12), hand_job(2, 4, 12)];
    let a = [assign(1, &TWO_TWO, 0), assign(2, &SHARED, 0)];
    let frac = hand_run(jobs(), &a, ProgressMode::Fractional, 1.0).unwrap();
    assert_eq!(frac.completion, vec![9, 9]);
    let floor = hand_run(jobs(), &a, ProgressMode::Floor, 1.0).unwrap();
    assert_eq!(floor.completion, vec![12, 12]);
    // T-M4: a one-GPU job on the shared server changes nothing, τ = 0.09.
    let mut with_single = jobs();
    with_single.push(hand_job(3, 1, 12));
    let a3 = [a[0].clone(), a[1].clone(), assign(3, &[(1, 0)], 9)];
    let e = hand_run(with_single, &a3, ProgressMode::Fractional, 1.0).unwrap();
    assert_eq!(e.completion, vec![9, 9, 11]);
    // T-S1: J2 on J1's GPUs of server 1 waits for it: 5 slots, then 5..10.
    let later = [
        assign(1, &TWO_TWO, 0),
        assign(2, &[(1, 0), (1, 1), (2, 0), (2, 1)], 5),
    ];
    let e = hand_run(jobs(), &later, ProgressMode::Fractional, 1.0).unwrap();
    assert_eq!((e.start, e.completion), (vec![0, 5], vec![5, 10]));
}

#[test]
fn t_m5_clamped_contenders() {
    let a = [assign(1, &TWO_TWO, 0), assign(2, &SHARED, 0)];
    let jobs = vec![hand_job(1, 4, 12), hand_job(2, 4, 12)];
    let e = hand_run(jobs, &a, ProgressMode::Fractional, 0.4).unwrap();
    assert_eq!(e.completion, vec![5, 5]);
}

#[test]
fn t_m8_contention_cross_check() {
    let f = Degradation::Linear { alpha: 0.0896 }.factor(4.0);
    assert!(((675.0 / 295.0 - 1.0) / (f - 1.0) - 0.3941).abs() < 1e-4);
}

#[test]
fn t_s3_floor_without_progress() {
    // τ = 1.08 slots > 1: ⌊1/τ⌋ = 0.
    let mut job = hand_job(1, 1, 3);
    if let Architecture::RingAllReduce(r) = &mut job.architecture {
        r.backward_per_iteration_s = 1.07;
    }
    let e = hand_run(
        vec![job],
        &[assign(1, &[(0, 0)], 0)],
        ProgressMode::Floor,
        1.0,
    );
    assert!(
        matches!(e, Err(SjfBcoError::NoProgress { job: JobId(1) })),
        "{e:?}"
    );
}

#[test]
fn malformed_assignments_are_refused() {
    let jobs = || vec![hand_job(1, 4, 12)];
    for a in [
        vec![],
        vec![assign(1, &[(0, 0), (0, 0), (0, 1), (0, 2)], 0)],
        vec![assign(1, &[(0, 0), (0, 1), (0, 2)], 0)],
        vec![assign(1, &[(0, 0), (0, 1), (0, 2), (9, 0)], 0)],
        vec![assign(7, &TWO_TWO, 0)],
    ] {
        let e = hand_run(jobs(), &a, ProgressMode::Fractional, 1.0);
        assert!(
            matches!(e, Err(SjfBcoError::BadAssignment { .. })),
            "{a:?}: {e:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Known answers (fixed durations, u = 1)
// ---------------------------------------------------------------------------

/// One server of `gpus` GPUs and jobs `(G, d)` that take exactly `d` slots.
fn fixed_instance(gpus: f64, jobs: &[(u32, f64)], horizon: u32) -> Instance {
    let mut c = Cluster::homogeneous(1, Resources::zero().gpus(gpus), 1e10);
    c.ring.overhead_per_server_s = 0.0;
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(g, d))| {
            let r = RarJob {
                workers: WorkerCounts::Fixed(g),
                backward_per_iteration_s: d,
                worker: Resources::zero().gpus(1.0),
                ..RarJob::default()
            };
            Job::new(JobId(i as u32), 0.0, r)
        })
        .collect();
    Instance::new(c, jobs, 1.0, horizon).unwrap()
}

fn fixed_params() -> SjfBcoParams {
    let mut built = SjfBcoParams::default();
    built.est_upper = 1.0;
    built.est_lower = 1.0;
    built.time_model = TimeModel::FixedDuration;
    built
}

fn thetas(r: &SjfBcoReport) -> Vec<u64> {
    let mut v: Vec<u64> = r.trace.iter().map(|t| t.theta).collect();
    v.dedup();
    v
}

fn checked(inst: &Instance, s: dmlsched::Result<Solved<SjfBcoReport>>) -> Solved<SjfBcoReport> {
    let s = s.unwrap();
    verify(inst, &s.schedule).unwrap();
    s.certificate.check(1e-9).unwrap();
    assert!(s.certificate.guarantees.is_empty());
    assert!(s.report.w_hat_max <= s.report.theta_tilde.map_or(f64::INFINITY, |t| t as f64) + 1e-9);
    s
}

#[test]
fn t_c1_list_scheduling_gap() {
    let inst = fixed_instance(4.0, &[(2, 3.0), (1, 1.0), (2, 4.0)], 10);
    let s = checked(
        &inst,
        SjfBco::new(fixed_params())
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
    );
    assert_eq!(s.report.makespan_raw, 5);
    assert_eq!(s.report.theta_tilde, Some(5));
    assert_eq!(thetas(&s.report), vec![5, 2, 3, 4]);
    assert_eq!(s.report.lower_bound, 4.0);
    assert_eq!(s.certificate.relaxation_bound.value, 4.0);
    assert_eq!(s.report.execution.start, vec![0, 0, 1]);
    // T-C7: FF and LS give 5 too.
    for solved in [
        RarFf::new(fixed_params())
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        RarLs::new(fixed_params())
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
    ] {
        assert_eq!(checked(&inst, solved).report.makespan_raw, 5);
    }
    let rand = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        checked(
            &inst,
            RarRand::new(fixed_params()).and_then(|a| a.solve(&inst, &mut rng)),
        )
    };
    assert_eq!(rand(3).schedule, rand(3).schedule);
}

#[test]
fn t_c2_counterexample_to_the_approximation_theorem() {
    let inst = fixed_instance(2.0, &[(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)], 10);
    for faffp in [FaFfpStrategy::LeastAccumulated, FaFfpStrategy::PackOccupied] {
        let mut p = fixed_params();
        p.faffp = faffp;
        let s = checked(
            &inst,
            SjfBco::new(p)
                .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        );
        assert_eq!(s.report.makespan_raw, 7, "{faffp:?}");
        assert_eq!(thetas(&s.report), vec![5, 8, 6, 7]);
        assert_eq!(s.report.theta_tilde, Some(7));
        assert_eq!(s.report.lower_bound, 6.0);
        // OPT = 6 ({3, 3} and {2, 2, 2}); the paper's claimed ratio is 1.
        let claim = &s.report.paper_claim;
        assert!(!claim.valid && claim.statement.contains("not valid"));
        assert_eq!(claim.ratio_at_phi_one, 1.0);
        assert!(s.report.makespan_raw as f64 / 6.0 > claim.ratio_at_phi_one);
    }
}

#[test]
fn t_c4_feasibility_bisection_and_reservations() {
    let inst = fixed_instance(4.0, &[(2, 3.0), (1, 1.0), (2, 4.0)], 10);
    for p in [
        {
            let mut built = fixed_params();
            built.bisection = BisectionRule::Feasibility;
            built
        },
        {
            let mut built = fixed_params();
            built.availability = Availability::BudgetOnly;
            built
        },
        {
            let mut built = fixed_params();
            built.trial_eval = TrialEval::Provisional;
            built.duration = DurationEstimate::Estimate;
            built
        },
    ] {
        let s = checked(
            &inst,
            SjfBco::new(p.clone())
                .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        );
        assert!(s.report.makespan_raw >= 4, "{p:?}");
    }
}

#[test]
fn typed_errors_for_bad_input() {
    let ok = fixed_instance(4.0, &[(2, 3.0)], 10);
    let bad_params = [
        {
            let mut built = fixed_params();
            built.est_upper = f64::NAN;
            built
        },
        {
            let mut built = fixed_params();
            built.est_upper = 0.5;
            built
        },
        {
            let mut built = fixed_params();
            built.est_lower = 0.0;
            built
        },
        {
            let mut built = fixed_params();
            built.lambda = LambdaSpec::Uniform(0.5);
            built
        },
        {
            let mut built = fixed_params();
            built.lambda = LambdaSpec::PerJob(vec![1.0, 2.0]);
            built
        },
        {
            let mut built = fixed_params();
            built.kappas = KappaSpec::Fixed(0);
            built
        },
        {
            let mut built = fixed_params();
            built.horizon = Some(0);
            built
        },
        {
            let mut built = fixed_params();
            built.estimates = Some(vec![f64::NAN]);
            built
        },
        {
            let mut built = fixed_params();
            built.estimates = Some(vec![1.0, 2.0]);
            built
        },
        {
            let mut built = fixed_params();
            built.horizon = Some(u64::MAX);
            built
        },
    ];
    for p in bad_params {
        let e = SjfBco::new(p.clone())
            .and_then(|a| a.solve(&ok, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)));
        assert!(matches!(e, Err(dmlsched::Error::SjfBco(_))), "{p:?}: {e:?}");
    }
    // A job wider than the cluster, an empty instance, a parameter-server job.
    // A worker of 4 cores beside 3-GPU jobs of no cores: every machine
    // counts the workers of every job that fit, so one usable GPU each.
    let heavy = RarJob {
        worker: Resources::zero().gpus(1.0).cpu_cores(4.0),
        ..RarJob::default()
    };
    let ring = RarJob {
        workers: WorkerCounts::Fixed(3),
        worker: Resources::zero().gpus(1.0),
        ..RarJob::default()
    };
    let wide = Instance::new(
        Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(4.0), 1e10),
        vec![
            Job::new(JobId(0), 0.0, ring),
            Job::new(JobId(1), 0.0, heavy),
        ],
        1.0,
        10,
    )
    .unwrap();
    assert!(matches!(
        SjfBco::default().solve(&wide, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::SjfBco(SjfBcoError::JobCannotFit {
            demand: 3,
            cluster_gpus: 2,
            ..
        }))
    ));
    let empty = fixed_instance(4.0, &[], 10);
    assert!(matches!(
        SjfBco::default().solve(&empty, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::SjfBco(SjfBcoError::NoJobs))
    ));
    let ps = Instance::new(
        Cluster::homogeneous(1, Resources::zero().gpus(4.0).cpu_cores(4.0), 1e10),
        vec![Job::new(JobId(0), 0.0, PsJob::default())],
        1.0,
        10,
    )
    .unwrap();
    assert!(matches!(
        RarLs::default().solve(&ps, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::SjfBco(SjfBcoError::UnsupportedJob { .. }))
    ));
    // Too tight a horizon: no trial places every job.
    let tight = fixed_instance(1.0, &[(1, 3.0), (1, 3.0)], 10);
    let mut p = fixed_params();
    p.horizon = Some(2);
    assert!(matches!(
        SjfBco::new(p).and_then(|a| a.solve(&tight, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        Err(dmlsched::Error::SjfBco(
            SjfBcoError::NoScheduleWithinHorizon { horizon: 2 }
        ))
    ));
    // A GPU count far beyond the guard.
    let huge = fixed_instance(1e12, &[(1, 3.0)], 10);
    assert!(matches!(
        SjfBco::default().solve(&huge, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::SjfBco(SjfBcoError::TooLarge { .. }))
    ));
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

/// A small random instance under a synthetic-like calibration: servers of
/// 1–4 GPUs, jobs of 1–4 GPUs (at most the cluster), `F ∈ 10..=60`.
fn small_instance(servers: &[u32], jobs: &[(u32, u64, f64)]) -> Option<Instance> {
    let total: u32 = servers.iter().sum();
    let machines = servers
        .iter()
        .enumerate()
        .map(|(i, &g)| {
            Machine::new(
                MachineId(i as u32),
                Resources::zero().gpus(f64::from(g)),
                10.0,
            )
        })
        .collect();
    let mut c = Cluster::new(machines);
    c.ring = {
        let mut built = RingParams::default();
        built.external_bandwidth_bps = 1.0;
        built.reduction_speed_bps = 10.0;
        built.overhead_per_server_s = 3e-3;
        built.contender_ratio = 1.0;
        built.degradation = Degradation::Linear { alpha: 0.09 };
        built
    };
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(g, f, tau))| {
            let r = RarJob {
                workers: WorkerCounts::Fixed(g.min(total)),
                iterations: f,
                model_bytes: 0.05 * tau,
                backward_per_iteration_s: tau,
                worker: Resources::zero().gpus(1.0),
                ..RarJob::default()
            };
            Job::new(JobId(i as u32), 0.0, r)
        })
        .collect();
    Instance::new(c, jobs, 1.0, 100_000).ok()
}

/// A naive simulator that steps one slot at a time, written from the
/// model's equations with the crate's timing primitives.
fn naive(inst: &Instance, a: &[RarAssignment]) -> Vec<u64> {
    let n = a.len();
    let (mut start, mut done) = (vec![None; n], vec![None::<u64>; n]);
    let mut progress = vec![0.0; n];
    let ring = inst.cluster().ring;
    for t in 0..100_000u64 {
        for i in 0..n {
            let ready = (0..n).all(|k| {
                (a[k].provisional_start, a[k].order_key) >= (a[i].provisional_start, a[i].order_key)
                    || !a[k].gpus.iter().any(|g| a[i].gpus.contains(g))
                    || done[k].is_some_and(|c| c <= t)
            });
            if start[i].is_none() && ready {
                start[i] = Some(t);
            }
        }
        let running: Vec<usize> = (0..n)
            .filter(|&i| start[i].is_some() && done[i].is_none())
            .collect();
        if running.is_empty() {
            break;
        }
        let servers: Vec<Vec<u32>> = running
            .iter()
            .map(|&i| a[i].gpus.iter().map(|g| g.machine.0).collect())
            .collect();
        let lists: Vec<&[u32]> = servers.iter().map(Vec::as_slice).collect();
        let p = contention_counts(&lists);
        for (k, &i) in running.iter().enumerate() {
            let job = inst.job(a[i].job).unwrap();
            let Architecture::RingAllReduce(r) = &job.architecture else {
                unreachable!()
            };
            let mut distinct = servers[k].clone();
            distinct.sort_unstable();
            distinct.dedup();
            let m = RarTiming::from_job(r, a[i].gpus.len() as u32, 10.0, &ring).unwrap();
            let tau = m.iteration_time_s(distinct.len() as u32, effective_contenders(p[k], 1.0));
            progress[i] += 1.0 / tau;
            if progress[i] >= r.iterations as f64 - 1e-9 * (r.iterations as f64).max(1.0) {
                done[i] = Some(t + 1);
            }
        }
    }
    let mut by_job = vec![0; n];
    for i in 0..n {
        by_job[inst.job_position(a[i].job).unwrap()] = done[i].unwrap();
    }
    by_job
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_policy_is_feasible_bounded_and_deterministic(
        servers in prop::collection::vec(1u32..=4, 1..=3),
        jobs in prop::collection::vec((1u32..=4, 10u64..=60, 0.01f64..0.5), 1..=6),
        seed in 0u64..1000,
    ) {
        let Some(inst) = small_instance(&servers, &jobs) else { return Ok(()) };
        let mut p = SjfBcoParams::default();
        p.horizon = Some(2_000);
        let runs = [
            SjfBco::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            RarFf::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            RarLs::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            RarRand::new(p.clone()).and_then(|a| a.solve(&inst, &mut ChaCha8Rng::seed_from_u64(seed))),
        ];
        for s in runs {
            let s = s.unwrap();
            verify(&inst, &s.schedule).unwrap();
            s.certificate.check(1e-9).unwrap();
            prop_assert_eq!(s.schedule.jobs.len(), inst.jobs().len());
            prop_assert!(s.schedule.jobs.iter().all(|j| j.segments.len() == 1));
            let m = s.report.makespan_raw as f64;
            prop_assert!(m >= s.certificate.relaxation_bound.value);
            prop_assert!(m >= s.report.lower_bound - 1e-9);
            // The event-driven simulator equals slot-by-slot stepping.
            prop_assert_eq!(naive(&inst, &s.report.assignments), s.report.execution.completion.clone());
        }
        let again = SjfBco::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))).unwrap();
        prop_assert_eq!(again.schedule, SjfBco::new(p).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))).unwrap().schedule);
    }
}

/// A logged statistic, not asserted (list scheduling has anomalies): on 200
/// seeded small instances, how often one more GPU on every server makes
/// SJF-BCO fail where it succeeded (no placement, or a makespan past `T`),
/// with `T` the makespan of the original cluster, and how often the
/// makespan grows.
#[test]
fn more_capacity_rarely_hurts_logged() {
    use rand::RngExt;
    let (mut compared, mut fails, mut worse, mut better) = (0, 0, 0, 0);
    for seed in 0..200u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let servers: Vec<u32> = (0..rng.random_range(1..=3))
            .map(|_| rng.random_range(1..=4))
            .collect();
        let total: u32 = servers.iter().sum();
        let jobs: Vec<(u32, u64, f64)> = (0..rng.random_range(1..=6))
            .map(|_| {
                let g: u32 = rng.random_range(1..=4);
                (
                    g.min(total),
                    rng.random_range(10..=60),
                    rng.random_range(0.01..0.5),
                )
            })
            .collect();
        let bigger: Vec<u32> = servers.iter().map(|g| g + 1).collect();
        let (Some(small), Some(large)) = (
            small_instance(&servers, &jobs),
            small_instance(&bigger, &jobs),
        ) else {
            continue;
        };
        let mut loose = SjfBcoParams::default();
        loose.horizon = Some(2_000);
        let Ok(base) = SjfBco::new(loose)
            .and_then(|a| a.solve(&small, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        else {
            continue;
        };
        let mut p = SjfBcoParams::default();
        p.horizon = Some(base.report.makespan_raw);
        let Ok(before) = SjfBco::new(p.clone())
            .and_then(|a| a.solve(&small, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        else {
            continue;
        };
        if !before.report.within_horizon {
            continue;
        }
        compared += 1;
        match SjfBco::new(p)
            .and_then(|a| a.solve(&large, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        {
            Ok(after) => {
                verify(&large, &after.schedule).unwrap();
                if !after.report.within_horizon {
                    fails += 1;
                }
                let (a, b) = (after.report.makespan_raw, before.report.makespan_raw);
                worse += usize::from(a > b);
                better += usize::from(a < b);
            }
            Err(_) => fails += 1,
        }
    }
    println!(
        "one more GPU per server, {compared} instances: SJF-BCO fails where it succeeded on \
         {fails}; makespan longer on {worse}, shorter on {better}"
    );
    assert!(compared > 0);
}

// ---------------------------------------------------------------------------
// The optional time-indexed bound
// ---------------------------------------------------------------------------

fn with_time_indexed(p: SjfBcoParams) -> SjfBcoParams {
    let mut built = p;
    built.time_indexed_bound = Some(formulation::TimeIndexedOptions::default());
    built
}

#[cfg(feature = "highs")]
#[test]
fn time_indexed_bound_proves_the_counterexample_optimum() {
    let inst = fixed_instance(2.0, &[(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)], 10);
    let s = checked(
        &inst,
        SjfBco::new(with_time_indexed(fixed_params()))
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
    );
    let ti = s.report.time_indexed.as_ref().unwrap();
    assert!(ti.report.optimal() && ti.exact_for_model, "{ti:?}");
    assert_eq!(ti.fixed_duration_makespan, Some(6));
    assert_eq!(ti.lower_bound, 6.0);
    // The closed form is 6 too: the bound stays the closed form's, and the
    // exact optimum is the comparison point.
    assert_eq!(s.certificate.relaxation_bound.value, 6.0);
    assert_eq!(s.certificate.optimum(), Some(6.0));
    assert!(!s.certificate.exact.as_ref().unwrap().returned);
    assert_eq!(s.report.makespan_raw, 7);
    assert!((s.certificate.achieved_ratio() - 7.0 / 6.0).abs() < 1e-12);
}

#[cfg(feature = "highs")]
#[test]
fn time_indexed_bound_lifts_the_closed_form_under_contention() {
    // Two 12-GPU jobs on 16 GPUs cannot overlap: the closed form is
    // 1.5·ρ^min, the time-indexed bound 2·⌈ρ^min⌉.
    let inst = Instance::new(
        hand_cluster(1.0),
        vec![hand_job(0, 12, 50), hand_job(1, 12, 50)],
        1.0,
        1000,
    )
    .unwrap();
    let plain = checked(
        &inst,
        SjfBco::default().solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
    );
    let s = checked(
        &inst,
        SjfBco::new(with_time_indexed(SjfBcoParams::default()))
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
    );
    assert_eq!(s.schedule, plain.schedule);
    let ti = s.report.time_indexed.as_ref().unwrap();
    assert!(ti.report.optimal() && !ti.exact_for_model, "{ti:?}");
    let closed = plain.certificate.relaxation_bound.value;
    let d = ti.fixed_duration_makespan.unwrap() / 2;
    assert_eq!(ti.lower_bound, 2.0 * d as f64);
    assert!(ti.lower_bound > closed, "{} vs {closed}", ti.lower_bound);
    assert_eq!(s.certificate.relaxation_bound.value, ti.lower_bound);
    assert_eq!(
        s.certificate.relaxation_bound.kind,
        dmlsched::certificate::BoundKind::MipDual
    );
    assert_eq!(s.report.certified_bound, ti.lower_bound);
    // Under contention it is a bound, never the optimum.
    assert!(s.certificate.exact.is_none());
    assert!(s.report.makespan_raw as f64 >= ti.lower_bound);
}

#[test]
fn time_indexed_bound_errors_are_typed() {
    let many: Vec<(u32, f64)> = (0..9).map(|_| (1, 1.0)).collect();
    let inst = fixed_instance(2.0, &many, 20);
    let err = SjfBco::new(with_time_indexed(fixed_params()))
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            dmlsched::Error::SjfBco(SjfBcoError::TimeIndexedBound(e))
                if matches!(**e, formulation::FormulationError::TooLarge { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("time-indexed"), "{err}");
    #[cfg(not(feature = "highs"))]
    {
        let inst = fixed_instance(2.0, &[(1, 1.0)], 5);
        let err = SjfBco::new(with_time_indexed(fixed_params()))
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
            .unwrap_err();
        assert!(matches!(
            err,
            dmlsched::Error::SjfBco(SjfBcoError::TimeIndexedBound(_))
        ));
    }
}

/// Servers of `gpus[s]` GPUs and jobs `(G, d)` that take exactly `d` slots
/// under [`TimeModel::FixedDuration`].
#[cfg(feature = "highs")]
fn fixed_multi(gpus: &[u32], jobs: &[(u32, u32)]) -> Option<Instance> {
    let total: u32 = gpus.iter().sum();
    let mut c = Cluster::homogeneous(gpus.len() as u32, Resources::zero().gpus(1.0), 1e10);
    for (m, &g) in c.machines.iter_mut().zip(gpus) {
        m.capacity = Resources::zero().gpus(f64::from(g));
    }
    c.ring.overhead_per_server_s = 0.0;
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, &(g, d))| {
            let r = RarJob {
                workers: WorkerCounts::Fixed(g.min(total)),
                backward_per_iteration_s: f64::from(d),
                worker: Resources::zero().gpus(1.0),
                ..RarJob::default()
            };
            Job::new(JobId(i as u32), 0.0, r)
        })
        .collect();
    Instance::new(c, jobs, 1.0, 200).ok()
}

#[cfg(feature = "highs")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Under fixed durations the time-indexed ILP's optimum is the exact
    /// optimum: every algorithm's makespan is at least it, and the
    /// certificate's check holds with it as the comparison point.
    #[test]
    fn no_algorithm_beats_the_exact_optimum_under_fixed_durations(
        gpus in prop::collection::vec(1u32..=3, 1..=2),
        jobs in prop::collection::vec((1u32..=3, 1u32..=4), 1..=5),
        seed in 0u64..1000,
    ) {
        let Some(inst) = fixed_multi(&gpus, &jobs) else { return Ok(()) };
        let p = with_time_indexed(fixed_params());
        let runs = [
            SjfBco::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            RarFf::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            RarLs::new(p.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            RarRand::new(p.clone()).and_then(|a| a.solve(&inst, &mut ChaCha8Rng::seed_from_u64(seed))),
        ];
        for s in runs {
            let s = s.unwrap();
            verify(&inst, &s.schedule).unwrap();
            s.certificate.check(1e-9).unwrap();
            let ti = s.report.time_indexed.as_ref().unwrap();
            prop_assert!(ti.report.optimal() && ti.exact_for_model);
            let opt = s.certificate.optimum().unwrap();
            prop_assert_eq!(Some(opt as u64), ti.fixed_duration_makespan);
            prop_assert!(s.report.makespan_raw as f64 >= opt);
            prop_assert!(opt >= s.report.lower_bound - 1e-9);
        }
    }
}
