//! Robustness of the simulator and the baselines: every reproducer of a
//! former panic, abort or hang, each under the watchdog, and a fuzz-style
//! property over extreme but valid instances ("a result or a typed error,
//! never a panic, never a hang").

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::baselines;
use dmlsched::model::*;
use dmlsched::registry;
use dmlsched::schedule::{Segment, Tasks};
use dmlsched::sim::*;

fn ps(epochs: u32, chunks: u32, per_chunk: u32, compute_s: f64, worker_gpus: f64) -> PsJob {
    PsJob {
        epochs,
        data_chunks: chunks,
        minibatches_per_chunk: per_chunk,
        minibatch_compute_s: compute_s,
        gradient_bytes: 0.0,
        worker: Resources::zero()
            .gpus(worker_gpus)
            .cpu_cores(1.0)
            .memory(1e9)
            .nic(1e9),
        ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
        max_workers: 1,
        max_ps: 1,
        ps_at_most_workers: true,
        sync: SyncMode::Synchronous,
        layers: None,
    }
}

fn cluster(machines: u32, gpus: f64) -> Cluster {
    Cluster::homogeneous(
        machines,
        Resources::zero()
            .gpus(gpus)
            .cpu_cores(64.0)
            .memory(1e12)
            .nic(1e11),
        1e10,
    )
}

/// Answers the first event with fixed actions, then nothing.
struct Once(Option<Vec<Action>>);

impl Policy for Once {
    fn name(&self) -> String {
        "once".into()
    }
    fn on_event(&mut self, _v: &SimView<'_>, _e: &Event) -> dmlsched::Result<Vec<Action>> {
        Ok(self.0.take().unwrap_or_default())
    }
}

/// `DormLike` solves a MIP and may refuse extreme magnitudes with a typed
/// solver error (coefficients or integer bounds HiGHS cannot represent);
/// every other baseline must return a result.
fn accept<T: std::fmt::Debug>(name: &str, what: &str, r: dmlsched::Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(dmlsched::Error::Lp(e)) if name == "dorm" => {
            println!("{what}: refused: {e}");
            None
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

fn run_fifo(inst: Instance) -> dmlsched::Result<SimResult> {
    simulate(
        &inst,
        &mut baselines::Fifo::default(),
        &SimOptions::default(),
    )
}

fn rar(workers: u32, iterations: u64, backward_s: f64) -> Job {
    let r = RarJob {
        workers: WorkerCounts::Fixed(workers),
        iterations,
        convergence_iterations: None,
        model_bytes: 0.0,
        minibatch_size: 1,
        forward_per_sample_s: 0.0,
        backward_per_iteration_s: backward_s,
        reserved_bandwidth_bps: None,
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9),
    };
    Job::new(JobId(1), 0.0, Architecture::RingAllReduce(r))
}

#[test]
fn ten_billion_gpus_on_a_machine() {
    // One entry per GPU used to be allocated up front (1e10 aborted, 1e300
    // overflowed); GPU owners are now kept only for GPUs handed out.
    for gpus in [1e10, 1e300] {
        for name in registry::BASELINES {
            let what = format!("{name} with {gpus:e} GPUs");
            let r = within(WATCHDOG_S, &what.clone(), move || {
                let jobs = vec![common::job(0, 0.0, ps(1, 1, 10, 1.0, 1.0)), rar(4, 10, 1.0)];
                let inst = Instance::new(cluster(2, gpus), jobs, 60.0, 10).unwrap();
                let mut p = registry::by_name(name)?;
                Some(simulate(&inst, &mut p, &SimOptions::default()))
            });
            let Some(r) = r else { continue };
            let Some(r) = accept(name, &what, r) else {
                continue;
            };
            assert!(r.jobs.iter().all(|j| j.finish_s.is_some()), "{what}: {r:?}");
        }
    }
}

#[test]
fn a_plan_on_a_huge_horizon() {
    let r = within(WATCHDOG_S, "plan on 2^32-1 slots", || {
        let inst = Instance::new(
            cluster(64, 8.0),
            vec![common::job(0, 0.0, ps(1, 1, 10, 1.0, 1.0))],
            1.0,
            u32::MAX,
        )
        .unwrap();
        let plan = vec![Segment::new(
            0..u32::MAX,
            vec![(MachineId(3), Tasks::new(1, 1))],
        )];
        let mut p = Once(Some(vec![Action::Reserve {
            job: JobId(0),
            segments: plan,
        }]));
        simulate(&inst, &mut p, &SimOptions::default())
    });
    assert_eq!(r.unwrap().jobs[0].finish_s, Some(10.0));
}

#[test]
fn total_work_does_not_overflow() {
    // (2³²−1)³ mini-batches: the simulator's work count is taken in f64 and
    // does not overflow, and `Instance::new` refuses a workload beyond 2⁵³
    // (where the count stops being exact) with a typed error.
    let m = u32::MAX;
    let job = common::job(0, 0.0, ps(m, m, m, 1.0, 1.0));
    assert!(total_work(&job) > 7.9e28 && total_work(&job).is_finite());
    let r = within(WATCHDOG_S, "E·N·M overflow", move || {
        Instance::new(cluster(1, 1.0), vec![job], 60.0, 10)
    });
    assert!(
        matches!(r, Err(ModelError::WorkloadTooLarge { .. })),
        "{r:?}"
    );
    // The largest accepted workload runs (its finish lies far in the future).
    let r = within(WATCHDOG_S, "E·N·M = 2^53", move || {
        let big = common::job(0, 0.0, ps(1 << 21, 1 << 16, 1 << 16, 1.0, 1.0));
        assert_eq!(total_work(&big), 2f64.powi(53));
        run_fifo(Instance::new(cluster(1, 1.0), vec![big], 60.0, 10).unwrap())
    });
    match r {
        Ok(r) => assert!(r.jobs[0].finish_s.is_none_or(|f| f > 1e15)),
        Err(e) => println!("{e}"),
    }
}

#[test]
fn zero_iteration_time_finishes_at_once() {
    let r = within(WATCHDOG_S, "τ = 0", || {
        let inst = Instance::new(
            cluster(1, 1.0),
            vec![
                common::job(0, 0.0, ps(1, 1, 10, 0.0, 1.0)),
                common::job(1, 5.0, ps(1, 1, 10, 0.0, 1.0)),
            ],
            60.0,
            10,
        )
        .unwrap();
        run_fifo(inst)
    })
    .unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(0.0));
    assert_eq!(r.jobs[1].finish_s, Some(5.0));
}

#[test]
fn zero_iteration_time_under_a_plan_and_at_boundaries() {
    // A plan starts the job at a later boundary, where it finishes at once.
    let r = within(WATCHDOG_S, "τ = 0 planned", || {
        let inst = Instance::new(
            cluster(1, 1.0),
            vec![common::job(0, 0.0, ps(1, 1, 10, 0.0, 1.0))],
            10.0,
            10,
        )
        .unwrap();
        let plan = vec![Segment::new(2..3, vec![(MachineId(0), Tasks::new(1, 1))])];
        let mut p = Once(Some(vec![Action::Reserve {
            job: JobId(0),
            segments: plan,
        }]));
        simulate(&inst, &mut p, &SimOptions::default())
    })
    .unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(20.0));
    // Decisions at slot boundaries only: it starts and ends at the first.
    let r = within(WATCHDOG_S, "τ = 0 at boundaries", || {
        let inst = Instance::new(
            cluster(1, 1.0),
            vec![common::job(0, 5.0, ps(1, 1, 10, 0.0, 1.0))],
            10.0,
            10,
        )
        .unwrap();
        let mut opts = SimOptions::default();
        opts.decisions = Decisions::SlotBoundaries;
        simulate(&inst, &mut baselines::Fifo::default(), &opts)
    })
    .unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(10.0));
}

#[test]
fn tiny_iteration_time_on_a_slot_boundary() {
    for arrival in [0.0, 60.0, 6000.0, 60.0 * 1e6] {
        let r = within(WATCHDOG_S, "τ = 1e-6 on a boundary", move || {
            let inst = Instance::new(
                cluster(1, 1.0),
                vec![common::job(0, arrival, ps(1, 1, 10, 1e-6, 1.0))],
                60.0,
                u32::MAX,
            )
            .unwrap();
            run_fifo(inst)
        })
        .unwrap();
        let f = r.jobs[0].finish_s.unwrap();
        assert!(f >= arrival && f - arrival <= 1e-5 + 1e-15 * arrival, "{f}");
    }
}

#[test]
fn denormal_demands_under_every_baseline() {
    for name in registry::BASELINES {
        let r = within(WATCHDOG_S, name, move || {
            let inst = Instance::new(
                cluster(2, 4.0),
                vec![
                    common::job(0, 0.0, ps(1, 1, 10, 1.0, 5e-324)),
                    common::job(1, 0.0, ps(1, 1, 10, 1.0, 1.0)),
                ],
                60.0,
                10,
            )
            .unwrap();
            let mut p = registry::by_name(name)?;
            Some(simulate(&inst, &mut p, &SimOptions::default()))
        });
        if let Some(r) = r.and_then(|r| accept(name, name, r)) {
            assert!(r.jobs.iter().all(|j| j.finish_s.is_some()), "{name}: {r:?}");
        }
    }
}

/// `jobs` on one machine of 4 GPUs and 64 CPUs under proportional share,
/// within the watchdog; the run, every job done.
fn proportional_on_one_machine(what: &str, jobs: Vec<Job>) -> SimResult {
    let r = within(WATCHDOG_S, what, move || {
        let inst = Instance::new(cluster(1, 4.0), jobs, 60.0, 10).unwrap();
        let mut p = registry::by_name("proportional").unwrap();
        simulate(&inst, &mut p, &SimOptions::default())
    })
    .unwrap();
    assert!(r.jobs.iter().all(|j| j.finish_s.is_some()), "{what}: {r:?}");
    r
}

/// Proportional share and a job of near-zero GPUs per worker with a cap of
/// 10⁸ workers: its 2-GPU share would pay for 2·10⁹, the machine's 64 CPUs
/// hold 64 (a worker needs one), and its placement with a PS keeps 63; the
/// run ends in bounded time with every job done.
#[test]
fn proportional_share_with_a_huge_paid_count() {
    let many = PsJob {
        data_chunks: 100_000_000,
        max_workers: 100_000_000,
        ..ps(1, 100_000_000, 1, 1.0, 1e-9)
    };
    let r = proportional_on_one_machine(
        "proportional, 10⁸ paid workers",
        vec![
            common::job(0, 0.0, many),
            common::job(1, 0.0, ps(1, 1, 10, 1.0, 1.0)),
        ],
    );
    let most = r
        .allocations
        .iter()
        .filter(|a| a.job == JobId(0))
        .map(|a| a.placement.total().workers)
        .max();
    assert!(most.is_some_and(|w| (1..=63).contains(&w)), "{most:?}");
}

/// Proportional share pays a job of near-zero GPUs (and no CPU) per worker
/// for 3·10⁹ workers (its 3-GPU share), but its PS (1 CPU) fits nowhere while
/// a job that may not be preempted holds every CPU: the placement gives up
/// after a bounded number of tries (one worker at a time, then halving),
/// not 3·10⁹, and the job runs once the CPUs are free.
#[test]
fn proportional_share_gives_up_a_huge_count_in_bounded_tries() {
    let many = PsJob {
        data_chunks: 4_000_000_000,
        max_workers: 4_000_000_000,
        worker: Resources::zero().gpus(1e-9).nic(1.0),
        ..ps(1, 4_000_000_000, 1, 1.0, 1e-9)
    };
    let holder = PsJob {
        worker: Resources::zero().gpus(1.0).cpu_cores(63.0).nic(1e3),
        ..ps(1, 1, 10, 1.0, 1.0)
    };
    let r = proportional_on_one_machine(
        "proportional, 4·10⁹ workers, no room",
        vec![
            common::job(0, 1.0, many),
            common::job(1, 0.0, holder).with_discipline(Discipline {
                elasticity: Elasticity::Elastic,
                preemptible: false,
            }),
        ],
    );
    let first = r.allocations.iter().find(|a| a.job == JobId(0));
    assert!(first.is_some_and(|a| a.from_s >= 10.0), "{first:?}");
}

/// Replays Philly CSV text under every cheap baseline for both recipes:
/// per policy, a result or a typed error.
fn replay_philly(csv: &'static str) -> Vec<(String, dmlsched::Result<SimResult>)> {
    use dmlsched::trace::{
        Arch, RecipeOptions, ReplayOptions, Window, read_philly_pollux_csv, replay_instance, select,
    };
    let rows = read_philly_pollux_csv(csv.as_bytes()).unwrap().jobs;
    let rows = select(&rows, &Window::default()).unwrap();
    let mut out = Vec::new();
    for arch in [Arch::RingAllReduce, Arch::ParameterServer] {
        let recipe = match arch {
            Arch::RingAllReduce => RecipeOptions::rar(),
            Arch::ParameterServer => RecipeOptions::ps(),
        };
        let mut opts = ReplayOptions::default();
        opts.recipe = recipe;
        let inst = match replay_instance(&rows, &opts) {
            Ok((inst, _)) => inst,
            Err(e) => {
                out.push((format!("{arch:?}"), Err(e)));
                continue;
            }
        };
        for name in registry::cheap_baselines(arch == Arch::RingAllReduce) {
            let what = format!("{arch:?} {name}");
            let inst = inst.clone();
            let r = within(WATCHDOG_S, &what.clone(), move || {
                let mut p = registry::by_name(name).expect("a cheap baseline");
                simulate(&inst, &mut p, &SimOptions::default())
            });
            out.push((what, r));
        }
    }
    out
}

/// Every replay of `csv` returns; every job finishes, or the run says it
/// stalled (a policy that cannot place a job, such as FIFO behind a gang
/// that never fits), which ring-all-reduce replays never do here.
fn assert_replays_end(csv: &'static str) {
    for (what, r) in replay_philly(csv) {
        let r = r.unwrap_or_else(|e| panic!("{what}: {e}"));
        let done = r.jobs.iter().all(|j| j.finish_s.is_some() || j.rejected);
        assert!(done || r.stalled, "{what}: {:?}", r.jobs);
        assert!(done || !what.starts_with("RingAllReduce"), "{what}");
    }
}

#[test]
fn philly_job_of_1e10_seconds_then_a_minute() {
    let csv = "timestamp,duration,num_gpus,gpu_time,cluster\n\
               2017-11-21 03:15:57,10000000000.0,64,640000000000.0,a\n\
               2017-11-21 03:20:00,60.0,1,60.0,b\n";
    assert_replays_end(csv);
}

#[test]
fn philly_rows_seventeen_years_apart() {
    let csv = "timestamp,duration,num_gpus,gpu_time,cluster\n\
               2017-11-21 03:15:57,23.0,1,23.0,a\n\
               2000-02-29 00:00:00,2435.0,1,2435.0,b\n";
    assert_replays_end(csv);
}

#[test]
fn philly_durations_beyond_what_a_job_counts_are_refused() {
    use dmlsched::trace::{
        RecipeOptions, ReplayOptions, Window, read_philly_pollux_csv, replay_instance, select,
    };
    let instance = |d: f64, recipe: RecipeOptions| {
        let csv = format!(
            "timestamp,duration,num_gpus,gpu_time,cluster\n2017-11-21 03:15:57,{d:.1},1,{d:.1},a\n"
        );
        let rows = read_philly_pollux_csv(csv.as_bytes()).unwrap().jobs;
        let rows = select(&rows, &Window::default()).unwrap();
        let mut opts = ReplayOptions::default();
        opts.recipe = recipe;
        replay_instance(&rows, &opts).map(|(inst, _)| inst)
    };
    for recipe in [RecipeOptions::rar(), RecipeOptions::ps()] {
        for d in [1e21, 1e25, 1e300] {
            match instance(d, recipe) {
                Err(e) => assert!(e.to_string().contains("trace duration"), "{e}"),
                Ok(_) => panic!("{d} s accepted"),
            }
        }
        // Below the limit, a longer job takes longer: no saturation.
        let jct = |d: f64| {
            let inst = instance(d, recipe).unwrap();
            within(WATCHDOG_S, "long job", move || run_fifo(inst))
                .unwrap()
                .jobs[0]
                .jct_s
                .unwrap()
        };
        let (a, b) = (jct(1e12), jct(2e12));
        assert!(b > 1.5 * a, "{a} {b}");
    }
}

// ------------------------------------------------------------ fuzz-style

mod fuzz {
    use super::*;
    use dmlsched::timing::ProgressMode;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    /// One job of a fuzz case.
    #[derive(Debug, Clone)]
    struct JobSpec {
        ring: bool,
        arrival_frac: f64,
        work: u32,
        compute_s: f64,
        gpus: f64,
        workers: u32,
    }

    fn job_spec() -> impl Strategy<Value = JobSpec> {
        (
            any::<bool>(),
            prop_oneof![Just(0.0), Just(0.5), 0.0f64..1.0],
            prop_oneof![Just(1u32), Just(1000), Just(u32::MAX)],
            prop_oneof![
                Just(0.0),
                Just(1e-12),
                Just(1e-6),
                Just(1.0),
                Just(1e12),
                Just(1e300)
            ],
            prop_oneof![Just(1.0), Just(1e-300), Just(5e-324)],
            prop_oneof![Just(1u32), Just(4)],
        )
            .prop_map(
                |(ring, arrival_frac, work, compute_s, gpus, workers)| JobSpec {
                    ring,
                    arrival_frac,
                    work,
                    compute_s,
                    gpus,
                    workers,
                },
            )
    }

    fn make_job(id: u32, s: &JobSpec, horizon_s: f64) -> Job {
        // Arrivals inside the horizon, some exactly on slot boundaries.
        let arrival = (s.arrival_frac * horizon_s).min(horizon_s * 0.999);
        let arch = if s.ring {
            // Ring workers hold exactly one GPU.
            Architecture::RingAllReduce(RarJob {
                workers: WorkerCounts::Allowed(vec![1, s.workers]),
                iterations: u64::from(s.work),
                convergence_iterations: None,
                model_bytes: 0.0,
                minibatch_size: 1,
                forward_per_sample_s: 0.0,
                backward_per_iteration_s: s.compute_s,
                reserved_bandwidth_bps: None,
                worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9),
            })
        } else {
            let mut p = ps(1, 1, s.work, s.compute_s, s.gpus);
            p.max_workers = s.workers;
            p.max_ps = s.workers;
            Architecture::ParameterServer(p)
        };
        Job::new(JobId(id), arrival, arch).with_discipline(Discipline::ELASTIC)
    }

    /// Simulator options `k`; `max_events` keeps a debug build's case
    /// short (the event limit is a typed error, a fine outcome).
    fn options(k: u8, max_events: u64) -> SimOptions {
        let mut base = SimOptions::default();
        base.max_events = max_events;
        match k % 4 {
            0 => base,
            1 => {
                let mut built = base;
                built.decisions = Decisions::EventDriven { ticks: true };
                built
            }
            2 => {
                let mut built = base;
                built.decisions = Decisions::SlotBoundaries;
                built
            }
            _ => {
                let mut built = base;
                built.decisions = Decisions::SlotBoundaries;
                built.progress = ProgressMode::Floor;
                built
            }
        }
    }

    /// `machines` machines of `capacity` GPUs (8 cores, 1 GB and 1 GB/s of
    /// NIC per GPU).
    fn fuzz_cluster(machines: u32, capacity: f64) -> Cluster {
        let cap = Resources::zero()
            .gpus(capacity)
            .cpu_cores(capacity * 8.0)
            .memory(capacity * 1e9)
            .nic(capacity * 1e9);
        Cluster::homogeneous(machines, cap, 1e10)
    }

    /// Every run ended well: times in order, finishes after arrivals, no
    /// negative work left; an error is typed and never the loop guard.
    fn check_outcomes(
        outcomes: Vec<(&str, dmlsched::Result<SimResult>)>,
        what: &str,
    ) -> Result<(), TestCaseError> {
        for (name, r) in outcomes {
            match r {
                Ok(r) => {
                    prop_assert!(r.end_s >= r.start_s, "{name}: {what}");
                    for j in &r.jobs {
                        if let Some(f) = j.finish_s {
                            prop_assert!(f >= j.arrival_s && f.is_finite(), "{name}: {j:?}");
                        }
                        prop_assert!(j.remaining_work >= 0.0, "{name}: {j:?}");
                    }
                }
                Err(e) => prop_assert!(
                    !matches!(e, dmlsched::Error::Sim(SimError::Stalled { .. })),
                    "{name}: {e} ({what})"
                ),
            }
        }
        Ok(())
    }

    /// One ring of a fuzz case for the ring-only baselines: a job spec, a
    /// reservation (or none) and a convergence estimate (or none).
    fn ring_job(id: u32, s: &JobSpec, reserve: Option<f64>, converge: bool, horizon_s: f64) -> Job {
        let mut j = make_job(
            id,
            &JobSpec {
                ring: true,
                ..s.clone()
            },
            horizon_s,
        );
        if let Architecture::RingAllReduce(r) = &mut j.architecture {
            r.reserved_bandwidth_bps = reserve;
            if converge {
                r.convergence_iterations = Some(r.iterations.div_ceil(2));
            }
        }
        j
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 40,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/robust_sim.txt",
            ))),
            ..ProptestConfig::default()
        })]

        /// The ring-only baselines ([`registry::RING_BASELINES`]) on extreme
        /// but valid ring instances, with and without reservations and
        /// stopping at convergence: a result or a typed error, never a
        /// panic, never a hang, never the loop guard.
        #[test]
        fn ring_baselines_on_extreme_instances(
            machines in prop_oneof![1 => Just(0u32), 3 => Just(1), 3 => Just(3), 2 => Just(10_000)],
            capacity in prop_oneof![Just(8.0), Just(1e300)],
            slot_s in prop_oneof![Just(1e-3), Just(60.0), Just(1e6)],
            horizon in prop_oneof![Just(1u32), Just(10), Just(1_000_000_000)],
            specs in proptest::collection::vec(
                (job_spec(), prop_oneof![Just(None), Just(Some(1e-3)), Just(Some(1e9)), Just(Some(1e300))], any::<bool>()),
                1..5,
            ),
            opts in 0u8..4,
            stop in any::<bool>(),
        ) {
            let cluster = fuzz_cluster(machines, capacity);
            let horizon_s = slot_s * f64::from(horizon);
            let jobs: Vec<Job> = specs
                .iter()
                .enumerate()
                .map(|(i, (s, b, c))| ring_job(i as u32, s, *b, *c, horizon_s))
                .collect();
            let inst = match Instance::new(cluster, jobs, slot_s, horizon) {
                Ok(inst) => inst,
                Err(_) => return Ok(()),
            };
            let what = format!("{machines} machines, capacity {capacity:e}, slot {slot_s} s, {horizon} slots, {specs:?}, options {opts}, stop {stop}");
            let outcomes = within(WATCHDOG_S, &what.clone(), move || {
                let mut opts = options(opts, if machines > 100 { 40 } else { 2_000 });
                opts.stop_at_convergence = stop;
                registry::RING_BASELINES
                    .iter()
                    .chain(&["ff-bandwidth", "ff-bandwidth-backfill"])
                    .filter_map(|name| {
                        let mut p = registry::by_name(name)?;
                        Some((*name, simulate(&inst, &mut p, &opts)))
                    })
                    .collect::<Vec<_>>()
            });
            check_outcomes(outcomes, &what)?;
        }


        /// Every baseline on extreme but valid instances: a result or a
        /// typed error, never a panic, never a hang (each case under the
        /// watchdog). `DormLike` may refuse; the loop guard never fires.
        #[test]
        fn every_baseline_on_extreme_instances(
            machines in prop_oneof![2 => Just(0u32), 3 => Just(1), 3 => Just(3), 2 => Just(10_000)],
            capacity in prop_oneof![Just(8.0), Just(1e300)],
            slot_s in prop_oneof![Just(1e-3), Just(60.0), Just(1e6)],
            horizon in prop_oneof![Just(1u32), Just(10), Just(1_000_000_000)],
            specs in proptest::collection::vec(job_spec(), 1..5),
            opts in 0u8..4,
        ) {
            let cluster = fuzz_cluster(machines, capacity);
            let horizon_s = slot_s * f64::from(horizon);
            let jobs: Vec<Job> = specs
                .iter()
                .enumerate()
                .map(|(i, s)| make_job(i as u32, s, horizon_s))
                .collect();
            let inst = match Instance::new(cluster, jobs, slot_s, horizon) {
                Ok(inst) => inst,
                // A typed refusal of the instance is a fine outcome.
                Err(_) => return Ok(()),
            };
            let what = format!("{machines} machines, capacity {capacity:e}, slot {slot_s} s, {horizon} slots, {specs:?}, options {opts}");
            let outcomes = within(WATCHDOG_S, &what.clone(), move || {
                // Every event costs O(machines): fewer of them on 10⁴.
                let opts = options(opts, if machines > 100 { 40 } else { 2_000 });
                registry::BASELINES
                    .iter()
                    .filter_map(|name| {
                        let mut p = registry::by_name(name)?;
                        Some((*name, simulate(&inst, &mut p, &opts)))
                    })
                    .collect::<Vec<_>>()
            });
            check_outcomes(outcomes, &what)?;
        }
    }
}
