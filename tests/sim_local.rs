//! The simulator with LOCAL allocations: their tasks are charged no NIC
//! bandwidth (now and in reserved slots), a malformed LOCAL allocation is
//! refused with a typed error, and a LOCAL job runs at the intra-machine
//! rate `τ^L = t_c + 2S/b_int` under either `PsTiming`.

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::model::units::{gb, gbps};
use dmlsched::model::*;
use dmlsched::schedule::{Configuration, Placement, Segment, Tasks, Violation};
use dmlsched::sim::*;

const M0: MachineId = MachineId(0);
const M1: MachineId = MachineId(1);

/// Intra-machine bandwidth, bytes per second.
const B_INT: f64 = 1e10;
/// Gradient size, bytes.
const S: f64 = 1e8;
/// Compute time of one mini-batch, seconds.
const T_C: f64 = 0.1;
/// Mini-batches of a PS job: 1 epoch × 4 chunks × 100.
const WORK: f64 = 400.0;

fn ps_job() -> PsJob {
    PsJob {
        epochs: 1,
        data_chunks: 4,
        minibatches_per_chunk: 100,
        minibatch_compute_s: T_C,
        gradient_bytes: S,
        worker: Resources::zero()
            .gpus(1.0)
            .cpu_cores(2.0)
            .memory(gb(8.0))
            .nic(gbps(3.0)),
        ps: Resources::zero()
            .cpu_cores(2.0)
            .memory(gb(8.0))
            .nic(gbps(4.0)),
        max_workers: 4,
        max_ps: 2,
        ps_at_most_workers: true,
        sync: SyncMode::Synchronous,
        layers: None,
    }
}

/// Two machines (4 GPUs, 10 Gbit/s NIC, `B_INT` inside); PS jobs 0 and 1
/// (workers 3 Gbit/s, PSs 4 Gbit/s) and a ring job 2, all arriving at 0.
fn instance() -> Instance {
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(32.0)
        .memory(gb(256.0))
        .nic(gbps(10.0));
    let rar = RarJob {
        workers: WorkerCounts::Fixed(2),
        iterations: 10,
        convergence_iterations: None,
        model_bytes: 0.0,
        minibatch_size: 1,
        forward_per_sample_s: 0.0,
        backward_per_iteration_s: 1.0,
        reserved_bandwidth_bps: None,
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9),
    };
    let jobs = vec![
        Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps_job())),
        Job::new(JobId(1), 0.0, Architecture::ParameterServer(ps_job())),
        Job::new(JobId(2), 0.0, Architecture::RingAllReduce(rar)),
    ];
    Instance::new(Cluster::homogeneous(2, cap, B_INT), jobs, 60.0, 10).unwrap()
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

fn local(machine: MachineId) -> Option<Configuration> {
    Some(Configuration::Local { machine })
}

fn seg(
    slots: std::ops::Range<u32>,
    placement: &[(MachineId, u32, u32)],
    config: Option<Configuration>,
) -> Segment {
    let mut s = Segment::new(
        slots,
        placement
            .iter()
            .map(|&(m, w, p)| (m, Tasks::new(w, p)))
            .collect::<Placement>(),
    );
    s.config = config;
    s
}

fn reserve(job: u32, segments: Vec<Segment>) -> Action {
    Action::Reserve {
        job: JobId(job),
        segments,
    }
}

fn run(actions: Vec<Action>, ps_timing: PsTiming) -> dmlsched::Result<SimResult> {
    let mut opts = SimOptions::default();
    opts.ps_timing = ps_timing;
    simulate(&instance(), &mut Once(Some(actions)), &opts)
}

/// `τ^L = t_c + 2S/b_int` and the finish time of `WORK` mini-batches on `w`
/// workers at that rate, by hand.
fn local_finish_s(w: f64) -> f64 {
    let tau_local = T_C + 2.0 * S / B_INT; // 0.12 s
    WORK / w * tau_local
}

fn assert_close(got: Option<f64>, want: f64) {
    let got = got.expect("finished");
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
}

#[test]
fn local_plan_runs_where_the_unconfigured_plan_is_refused_for_nic() {
    // 3 workers and 1 PS on m0 demand 3·3 + 4 = 13 Gbit/s of 10.
    let ok = run(
        vec![reserve(0, vec![seg(0..1, &[(M0, 3, 1)], local(M0))])],
        PsTiming::Locality,
    )
    .unwrap();
    assert_close(ok.jobs[0].finish_s, local_finish_s(3.0));
    assert!((local_finish_s(3.0) - 16.0).abs() < 1e-9);
    for config in [None, Some(Configuration::Distributed)] {
        let err = run(
            vec![reserve(0, vec![seg(0..1, &[(M0, 3, 1)], config)])],
            PsTiming::Locality,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                dmlsched::Error::Sim(SimError::OverAllocation {
                    job: JobId(0),
                    machine: M0,
                    resource: ResourceKind::Nic,
                    ..
                })
            ),
            "{err}"
        );
    }
    // The same with a policy's allocation.
    let ok = run(
        vec![Action::run_local(JobId(0), M0, Tasks::new(3, 1))],
        PsTiming::Locality,
    )
    .unwrap();
    assert_close(ok.jobs[0].finish_s, 16.0);
    let err = run(
        vec![Action::run(JobId(0), vec![(M0, Tasks::new(3, 1))])],
        PsTiming::Locality,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            dmlsched::Error::Sim(SimError::OverAllocation {
                resource: ResourceKind::Nic,
                ..
            })
        ),
        "{err}"
    );
}

#[test]
fn a_local_job_leaves_the_nic_to_others_now_and_in_reserved_slots() {
    // Job 0 LOCAL (3 workers + 1 PS, NIC 0) and job 1 unconfigured (1 worker
    // + 1 PS, 7 Gbit/s) share m0; charged in full they need 20 Gbit/s.
    let plans = |config| {
        vec![
            reserve(0, vec![seg(1..3, &[(M0, 3, 1)], config)]),
            reserve(1, vec![seg(2..4, &[(M0, 1, 1)], None)]),
        ]
    };
    let ok = run(plans(local(M0)), PsTiming::Locality).unwrap();
    assert_close(ok.jobs[0].finish_s, 60.0 + 16.0);
    let err = run(plans(None), PsTiming::Locality).unwrap_err();
    assert!(
        matches!(
            err,
            dmlsched::Error::Sim(SimError::OverAllocation {
                machine: M0,
                resource: ResourceKind::Nic,
                ..
            })
        ),
        "{err}"
    );
    let open = vec![
        Action::run_local(JobId(0), M0, Tasks::new(3, 1)),
        Action::run(JobId(1), vec![(M0, Tasks::new(1, 1))]),
    ];
    let r = run(open, PsTiming::Locality).unwrap();
    assert!(r.jobs[..2].iter().all(|j| j.finish_s.is_some()), "{r:?}");
}

/// The `Violation` a refused run carries.
fn violation(r: dmlsched::Result<SimResult>) -> Violation {
    match r {
        Err(dmlsched::Error::Sim(SimError::InvalidAllocation { violation, .. })) => violation,
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_local_plans_are_refused() {
    let plan = |job, segments| violation(run(vec![reserve(job, segments)], PsTiming::Locality));
    let ok_first = seg(0..1, &[(M0, 1, 1)], local(M0));
    let v = plan(
        0,
        vec![ok_first, seg(1..2, &[(M0, 2, 1), (M1, 1, 0)], local(M0))],
    );
    assert_eq!(
        v,
        Violation::LocalNotOneMachine {
            job: JobId(0),
            segment: 1,
            machine: M0,
            entries: 2
        }
    );
    let v = plan(0, vec![seg(0..1, &[(M0, 2, 2)], local(M0))]);
    assert!(matches!(v, Violation::LocalPsCount { ps: 2, .. }), "{v:?}");
    let v = plan(0, vec![seg(0..1, &[(M0, 2, 0)], local(M0))]);
    assert!(matches!(v, Violation::LocalPsCount { ps: 0, .. }), "{v:?}");
    let v = plan(0, vec![seg(0..1, &[(M0, 0, 1)], local(M0))]);
    assert!(matches!(v, Violation::LocalNoWorkers { .. }), "{v:?}");
    let v = plan(0, vec![seg(0..1, &[(M1, 2, 1)], local(M0))]);
    assert!(
        matches!(
            v,
            Violation::LocalOtherMachine {
                machine: M0,
                placed: M1,
                ..
            }
        ),
        "{v:?}"
    );
    let v = plan(2, vec![seg(0..1, &[(M0, 2, 0)], local(M0))]);
    assert_eq!(
        v,
        Violation::LocalForRingJob {
            job: JobId(2),
            segment: 0
        }
    );
}

#[test]
fn malformed_local_allocations_are_refused() {
    let set = |job, placement: Vec<(MachineId, Tasks)>| {
        violation(run(
            vec![Action::run_in(
                JobId(job),
                placement,
                Configuration::Local { machine: M0 },
            )],
            PsTiming::Locality,
        ))
    };
    let v = set(0, vec![(M0, Tasks::new(1, 1)), (M1, Tasks::new(1, 0))]);
    assert!(
        matches!(v, Violation::LocalNotOneMachine { entries: 2, .. }),
        "{v:?}"
    );
    let v = set(0, vec![(M0, Tasks::new(2, 2))]);
    assert!(matches!(v, Violation::LocalPsCount { ps: 2, .. }), "{v:?}");
    let v = set(0, vec![(M0, Tasks::new(0, 1))]);
    assert!(matches!(v, Violation::LocalNoWorkers { .. }), "{v:?}");
    let v = set(0, vec![(M1, Tasks::new(1, 1))]);
    assert!(matches!(v, Violation::LocalOtherMachine { .. }), "{v:?}");
    let v = set(2, vec![(M0, Tasks::new(2, 0))]);
    assert!(matches!(v, Violation::LocalForRingJob { .. }), "{v:?}");
    // A pause ignores the configuration.
    let pause = Action::SetAllocation {
        job: JobId(0),
        placement: Placement::new(),
        gpus: None,
        config: local(M1),
    };
    assert!(run(vec![pause], PsTiming::Locality).is_ok());
}

#[test]
fn local_job_runs_at_the_intra_machine_rate_under_both_timings() {
    // 2 workers, 1 PS (2·3 + 4 = 10 Gbit/s: fits unconfigured too).
    // LOCAL: τ^L = 0.1 + 2·10⁸/10¹⁰ = 0.12 s; 400 mini-batches / 2 workers
    // = 200 iterations = 24 s, under either timing.
    let want = local_finish_s(2.0);
    assert!((want - 24.0).abs() < 1e-9);
    for timing in [PsTiming::Locality, PsTiming::NoLocality] {
        let planned = vec![reserve(0, vec![seg(0..1, &[(M0, 2, 1)], local(M0))])];
        assert_close(run(planned, timing).unwrap().jobs[0].finish_s, want);
        let open = vec![Action::run_local(JobId(0), M0, Tasks::new(2, 1))];
        assert_close(run(open, timing).unwrap().jobs[0].finish_s, want);
    }
    // Unconfigured, the placement-level model gives the same placement the
    // same rate; the locality-free one charges the NIC: τ^D = 0.1 + 2·10⁸ /
    // (3 Gbit/s = 3.75·10⁸ B/s), 200 iterations.
    let unconfigured = || vec![Action::run(JobId(0), vec![(M0, Tasks::new(2, 1))])];
    let r = run(unconfigured(), PsTiming::Locality).unwrap();
    assert_close(r.jobs[0].finish_s, want);
    let r = run(unconfigured(), PsTiming::NoLocality).unwrap();
    assert_close(r.jobs[0].finish_s, 200.0 * (T_C + 2.0 * S / gbps(3.0)));
}

/// Switches job 0 from unconfigured to LOCAL on the same placement after
/// its first 12 s, and checks what the policy sees.
struct Switch;

impl Policy for Switch {
    fn name(&self) -> String {
        "switch".into()
    }
    fn on_event(&mut self, v: &SimView<'_>, e: &Event) -> dmlsched::Result<Vec<Action>> {
        let job = v.job(JobId(0)).expect("job 0");
        match e {
            Event::Arrival { job: JobId(0) } => {
                Ok(vec![Action::run(JobId(0), vec![(M0, Tasks::new(2, 1))])])
            }
            Event::Wakeup => {
                assert_eq!(job.config(), None);
                let p = Placement::from(vec![(M0, Tasks::new(2, 1))]);
                let tau_local = T_C + 2.0 * S / B_INT;
                let rate = v.rate_in(job.job(), &p, local(M0))?;
                assert!((rate - 2.0 / tau_local).abs() < 1e-9, "{rate}");
                Ok(vec![Action::run_local(JobId(0), M0, Tasks::new(2, 1))])
            }
            _ => {
                if job.is_running() && v.now_s() > 12.0 {
                    assert_eq!(job.config(), local(M0));
                }
                Ok(Vec::new())
            }
        }
    }
    fn next_wakeup_s(&self, v: &SimView<'_>) -> Option<f64> {
        (v.now_s() < 12.0).then_some(12.0)
    }
}

#[test]
fn changing_only_the_configuration_is_a_reconfiguration() {
    let mut opts = SimOptions::default();
    opts.ps_timing = PsTiming::NoLocality;
    let r = simulate(&instance(), &mut Switch, &opts).unwrap();
    // 12 s at τ^D then the rest at τ^L (no reconfiguration delay is set).
    let tau_d = T_C + 2.0 * S / gbps(3.0);
    let tau_l = T_C + 2.0 * S / B_INT;
    let done = 12.0 * 2.0 / tau_d;
    assert_close(r.jobs[0].finish_s, 12.0 + (WORK - done) / 2.0 * tau_l);
    assert_eq!(r.jobs[0].reconfigurations, 1);
    assert_eq!(r.jobs[0].preemptions, 0);
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    fn config() -> impl Strategy<Value = Option<Configuration>> {
        prop_oneof![
            2 => Just(None),
            1 => Just(Some(Configuration::Distributed)),
            3 => (0u32..3).prop_map(|m| Some(Configuration::Local { machine: MachineId(m) })),
        ]
    }

    fn segment() -> impl Strategy<Value = Segment> {
        (
            0u32..12,
            1u32..4,
            proptest::collection::vec((0u32..3, 0u32..5, 0u32..3), 0..3),
            config(),
        )
            .prop_map(|(start, len, tasks, config)| {
                seg(
                    start..start.saturating_add(len),
                    &tasks
                        .into_iter()
                        .map(|(m, w, p)| (MachineId(m), w, p))
                        .collect::<Vec<_>>(),
                    config,
                )
            })
    }

    fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            (0u32..3, proptest::collection::vec(segment(), 0..3)).prop_map(|(j, s)| reserve(j, s)),
            (0u32..3, segment()).prop_map(|(j, s)| Action::SetAllocation {
                job: JobId(j),
                placement: s.placement,
                gpus: None,
                config: s.config,
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 64,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/sim_local.txt",
            ))),
            ..ProptestConfig::default()
        })]

        /// Random plans and allocations with random configurations on random
        /// segments (machine 2 does not exist): a result or a typed error,
        /// never a panic, never a hang.
        #[test]
        fn random_configurations_give_a_result_or_a_typed_error(
            actions in proptest::collection::vec(action(), 1..4),
            timing in prop_oneof![Just(PsTiming::Locality), Just(PsTiming::NoLocality)],
        ) {
            let what = format!("{actions:?}");
            let r = within(WATCHDOG_S, &what.clone(), move || run(actions, timing));
            match r {
                Ok(r) => {
                    for j in &r.jobs {
                        if let Some(f) = j.finish_s {
                            prop_assert!(f.is_finite() && f >= 0.0, "{what}: {j:?}");
                        }
                    }
                }
                Err(e) => prop_assert!(
                    matches!(e, dmlsched::Error::Sim(_)),
                    "{e} ({what})"
                ),
            }
        }
    }
}
