//! Hand cases of the shared cluster state, and random interleavings of
//! commits, releases, outside usage and clock moves checked against a shadow
//! sum kept by the test and against `schedule::verify`.

use proptest::prelude::*;

use super::*;
use crate::model::{Instance, PsJob, RarJob, WorkerCounts};
use crate::schedule::{JobSchedule, Schedule, Tasks, verify};

fn machine() -> Resources {
    Resources::zero()
        .gpus(4.0)
        .cpu_cores(16.0)
        .memory(64e9)
        .nic(1.25e9)
}

fn cluster(n: u32) -> Cluster {
    Cluster::homogeneous(n, machine(), 10e9)
}

fn ring(id: u32, workers: u32) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(workers),
            worker: Resources::zero().gpus(1.0).cpu_cores(2.0),
            ..RarJob::default()
        },
    )
}

fn ps(id: u32) -> Job {
    Job::new(
        JobId(id),
        0.0,
        PsJob {
            worker: Resources::zero().gpus(1.0).cpu_cores(4.0).nic(0.25e9),
            ps: Resources::zero().cpu_cores(2.0).nic(0.5e9),
            max_workers: 4,
            max_ps: 2,
            ..PsJob::default()
        },
    )
}

fn seg(slots: Range<u32>, m: u32, workers: u32, ps: u32) -> Segment {
    Segment::new(slots, [(MachineId(m), Tasks::new(workers, ps))])
}

#[test]
fn a_plan_holds_its_charged_demand_and_gets_gpu_ids() {
    let mut s = ClusterState::new(&cluster(2), 60.0).unwrap();
    let held = s.commit_job(&ps(0), &[seg(0..3, 1, 2, 1)]).unwrap();
    let gpus = held[0].gpus.clone().unwrap();
    assert_eq!(
        gpus,
        vec![
            GpuId {
                machine: MachineId(1),
                index: 0
            },
            GpuId {
                machine: MachineId(1),
                index: 1
            }
        ]
    );
    let used = s.used(MachineId(1), 2).unwrap();
    assert_eq!(
        (used.gpus, used.cpu_cores, used.nic_bps),
        (2.0, 10.0, 1.0e9)
    );
    assert!(s.used(MachineId(1), 3).unwrap().is_zero());
    assert!(s.used(MachineId(0), 0).unwrap().is_zero());
    // The next plan on machine 1 gets the next ids.
    let held = s.commit_job(&ring(1, 2), &[seg(1..2, 1, 2, 0)]).unwrap();
    let ids: Vec<u32> = held[0].gpus.iter().flatten().map(|g| g.index).collect();
    assert_eq!(ids, vec![2, 3]);
    s.check().unwrap();
}

#[test]
fn a_plan_that_does_not_fit_changes_nothing() {
    let mut s = ClusterState::new(&cluster(1), 60.0).unwrap();
    s.commit_job(&ring(0, 3), &[seg(0..10, 0, 3, 0)]).unwrap();
    s.commit_job(&ring(1, 1), &[seg(10..12, 0, 1, 0), seg(12..13, 0, 1, 0)])
        .unwrap();
    let before = s.clone();
    // Its first segment fits (1 + 2 GPUs in slot 11), its second does not
    // (3 + 2 in slot 9): the first one is rolled back.
    let err = s
        .commit_job(&ring(2, 2), &[seg(11..12, 0, 2, 0), seg(9..10, 0, 2, 0)])
        .unwrap_err();
    assert!(
        matches!(err, StateError::DoesNotFit { slot: 9, .. }),
        "{err}"
    );
    assert_eq!(s, before);
    assert!(!s.was_committed(JobId(2)));
    s.check().unwrap();
}

#[test]
fn a_release_makes_room_for_a_later_job() {
    let mut s = ClusterState::new(&cluster(1), 60.0).unwrap();
    s.commit_job(&ring(0, 4), &[seg(0..10, 0, 4, 0)]).unwrap();
    assert!(s.commit_job(&ring(1, 4), &[seg(5..8, 0, 4, 0)]).is_err());
    // Job 0 finishes at 250 s, inside slot 4: slot 4 stays held.
    s.advance(250.0).unwrap();
    let freed = s.release(JobId(0).into(), 250.0).unwrap();
    assert_eq!(freed, 4.0 * 5.0);
    assert!(s.commit_job(&ring(2, 4), &[seg(4..5, 0, 4, 0)]).is_err());
    s.commit_job(&ring(3, 4), &[seg(5..8, 0, 4, 0)]).unwrap();
    assert_eq!(s.hold(JobId(0).into()).unwrap()[0].slots, 4..5);
    s.check().unwrap();
}

#[test]
fn outside_usage_blocks_a_plan_until_released() {
    let mut s = ClusterState::new(&cluster(1), 60.0).unwrap();
    let u = s
        .record_usage(MachineId(0), 30.0, 150.0, Resources::zero().gpus(3.0))
        .unwrap();
    // 30 s..150 s overlaps slots 0, 1 and 2.
    assert_eq!(s.hold(Holder::Usage(u)).unwrap()[0].slots, 0..3);
    assert_eq!(s.free_gpus(MachineId(0), 0..3).unwrap().len(), 1);
    let err = s
        .commit_job(&ring(0, 2), &[seg(2..4, 0, 2, 0)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            StateError::DoesNotFit {
                slot: 2,
                resource: crate::model::ResourceKind::Gpu,
                ..
            }
        ),
        "{err}"
    );
    s.commit_job(&ring(1, 2), &[seg(3..4, 0, 2, 0)]).unwrap();
    s.release(Holder::Usage(u), 0.0).unwrap();
    s.commit_job(&ring(2, 2), &[seg(0..3, 0, 2, 0)]).unwrap();
    s.check().unwrap();
}

#[test]
fn ids_are_unique_for_the_state_life() {
    let mut s = ClusterState::new(&cluster(1), 60.0).unwrap();
    s.commit_job(&ring(7, 1), &[seg(0..1, 0, 1, 0)]).unwrap();
    s.advance(600.0).unwrap();
    assert!(
        s.hold(JobId(7).into()).is_none(),
        "a hold in the past is dropped"
    );
    let before = s.clone();
    let err = s
        .commit_job(&ring(7, 1), &[seg(10..11, 0, 1, 0)])
        .unwrap_err();
    assert_eq!(err, StateError::DuplicateJob { job: JobId(7) });
    assert_eq!(s, before);
    // Releasing an unknown holder frees nothing and changes nothing.
    assert_eq!(s.release(JobId(99).into(), 600.0).unwrap(), 0.0);
    assert_eq!(s, before);
}

#[test]
fn time_and_slots_are_checked() {
    let mut s = ClusterState::new(&cluster(1), 60.0).unwrap();
    s.advance(125.0).unwrap();
    assert_eq!(s.current_slot(), 2);
    for bad in [f64::NAN, f64::INFINITY, 100.0] {
        assert!(
            matches!(s.advance(bad), Err(StateError::Time { .. })),
            "{bad}"
        );
        assert!(
            matches!(
                s.release(JobId(0).into(), bad),
                Err(StateError::Time { .. })
            ),
            "{bad}"
        );
    }
    let err = s
        .commit_job(&ring(0, 1), &[seg(1..3, 0, 1, 0)])
        .unwrap_err();
    assert!(matches!(err, StateError::Slots { start: 1, .. }), "{err}");
    let err = s
        .commit_job(&ring(0, 1), &[seg(3..3, 0, 1, 0)])
        .unwrap_err();
    assert!(matches!(err, StateError::Slots { .. }), "{err}");
    let err = s
        .commit_job(&ring(0, 1), &[seg(3..3 + MAX_SPAN_SLOTS, 0, 1, 0)])
        .unwrap_err();
    assert!(matches!(err, StateError::Slots { .. }), "{err}");
    let err = s
        .commit_job(&ring(0, 1), &[seg(3..4, 5, 1, 0)])
        .unwrap_err();
    assert_eq!(
        err,
        StateError::UnknownMachine {
            machine: MachineId(5)
        }
    );
    assert!(matches!(
        s.used(MachineId(0), 1),
        Err(StateError::PastSlot {
            slot: 1,
            current: 2
        })
    ));
    assert!(ClusterState::new(&cluster(1), 0.0).is_err());
    assert!(ClusterState::new(&cluster(1), f64::NAN).is_err());
    assert!(ClusterState::new(&Cluster::new(Vec::new()), 60.0).is_err());
    let bad_usage = s.record_usage(MachineId(0), 200.0, 300.0, Resources::zero().gpus(f64::NAN));
    assert!(matches!(bad_usage, Err(StateError::Use { .. })));
    assert!(
        s.record_usage(MachineId(0), 300.0, 300.0, Resources::zero())
            .is_err()
    );
    assert!(
        s.record_usage(MachineId(0), 300.0, f64::INFINITY, Resources::zero())
            .is_err()
    );
    s.check().unwrap();
}

#[test]
fn given_gpu_ids_are_checked() {
    let mut s = ClusterState::new(&cluster(1), 60.0).unwrap();
    let g = |i| GpuId {
        machine: MachineId(0),
        index: i,
    };
    let with = |ids: Vec<GpuId>| Segment {
        gpus: Some(ids),
        ..seg(0..2, 0, 2, 0)
    };
    s.commit_job(&ring(0, 2), &[with(vec![g(1), g(3)])])
        .unwrap();
    for (ids, what) in [
        (vec![g(1), g(0)], "in use"),
        (vec![g(0), g(0)], "listed twice"),
        (vec![g(0), g(9)], "not a GPU"),
    ] {
        let err = s.commit_job(&ring(1, 2), &[with(ids)]).unwrap_err();
        assert!(err.to_string().contains(what), "{err}");
    }
    let err = s.commit_job(&ring(1, 2), &[with(vec![g(0)])]).unwrap_err();
    assert!(matches!(err, StateError::Use { .. }), "{err}");
    s.commit_job(&ring(1, 2), &[with(vec![g(0), g(2)])])
        .unwrap();
    s.check().unwrap();
}

#[cfg(feature = "serde")]
#[test]
fn a_saved_state_restores_exactly_and_a_bad_one_is_refused() {
    let mut s = ClusterState::new(&cluster(2), 60.0).unwrap();
    s.commit_job(&ps(0), &[seg(0..3, 1, 2, 1)]).unwrap();
    s.record_usage(
        MachineId(0),
        0.0,
        100.0,
        Resources::zero().gpus(0.1).memory(1e9 / 3.0),
    )
    .unwrap();
    s.advance(61.0).unwrap();
    s.release(JobId(0).into(), 61.0).unwrap();
    let text = serde_json::to_string(&s).unwrap();
    let back: ClusterState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
    // A cell that is not the sum of its holds.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["cells"][0]["cells"][0]["used"]["gpus"] = serde_json::json!(3.0);
    let err = serde_json::from_value::<ClusterState>(v).unwrap_err();
    assert!(err.to_string().contains("inconsistent"), "{err}");
}

/// One operation of a random interleaving.
#[derive(Debug, Clone)]
enum Op {
    /// A ring (`ps = false`) or PS job: machine, first slot offset, length,
    /// workers, PSs.
    Commit {
        ps: bool,
        m: u32,
        at: u32,
        len: u32,
        workers: u32,
        servers: u32,
    },
    Usage {
        m: u32,
        at: u32,
        len: u32,
        gpus: f64,
    },
    Release {
        pick: usize,
        after: u32,
    },
    Advance {
        by_s: f64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), 0..3u32, 0..4u32, 1..5u32, 1..4u32, 0..3u32)
            .prop_map(|(ps, m, at, len, workers, servers)| Op::Commit { ps, m, at, len, workers, servers }),
        1 => (0..3u32, 0..4u32, 1..5u32, 0..3u32).prop_map(|(m, at, len, g)| Op::Usage { m, at, len, gpus: f64::from(g) * 0.75 }),
        2 => (0..20usize, 0..3u32).prop_map(|(pick, after)| Op::Release { pick, after }),
        1 => (0.0..150.0f64).prop_map(|by_s| Op::Advance { by_s }),
    ]
}

/// The committed jobs with their segments as the test tracks them (clipped
/// at releases and at the clock), as a crate schedule for `verify`.
fn shadow_schedule(jobs: &[(Job, Vec<Segment>)], origin: u32) -> (Instance, Schedule) {
    let inst = Instance::new(
        cluster(3),
        jobs.iter().map(|(j, _)| j.clone()).collect(),
        60.0,
        1 << 20,
    )
    .unwrap();
    let sched = Schedule {
        jobs: jobs
            .iter()
            .map(|(j, segs)| {
                let segments: Vec<Segment> = segs
                    .iter()
                    .filter(|s| s.slots.end > origin)
                    .map(|s| Segment {
                        slots: s.slots.start.max(origin)..s.slots.end,
                        ..s.clone()
                    })
                    .collect();
                JobSchedule {
                    job: j.id,
                    admitted: !segments.is_empty(),
                    segments,
                }
            })
            .collect(),
    };
    (inst, sched)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random interleavings never over-commit: every refused operation
    /// changes nothing, the state adds up, and the jobs' remaining plans
    /// (plus outside usage, which `verify` does not know, kept apart)
    /// pass `verify`.
    #[test]
    fn interleavings_never_over_commit(ops in proptest::collection::vec(op(), 1..40)) {
        let mut s = ClusterState::new(&cluster(3), 60.0).unwrap();
        let mut jobs: Vec<(Job, Vec<Segment>)> = Vec::new();
        let mut next = 0;
        for o in ops {
            let before = s.clone();
            let origin = s.current_slot();
            let result = match o {
                Op::Commit { ps: is_ps, m, at, len, workers, servers } => {
                    let job = if is_ps { ps(next) } else { ring(next, workers) };
                    next += 1;
                    let servers = if is_ps { 1 + servers.min(workers - 1).min(1) } else { 0 };
                    let plan = [seg(origin + at..origin + at + len, m, workers, servers)];
                    s.commit_job(&job, &plan).map(|held| jobs.push((job, held)))
                }
                Op::Usage { m, at, len, gpus } => {
                    let from = f64::from(origin + at) * 60.0;
                    s.record_usage(MachineId(m), from, from + f64::from(len) * 60.0, Resources::zero().gpus(gpus)).map(|_| ())
                }
                Op::Release { pick, after } => match jobs.get_mut(pick) {
                    Some((job, segs)) => {
                        let from = s.now_s() + f64::from(after) * 60.0;
                        let cut = s.slot_from(from);
                        s.release(job.id.into(), from).map(|_| {
                            for sg in segs.iter_mut() {
                                sg.slots.end = sg.slots.end.min(cut.max(sg.slots.start));
                            }
                            segs.retain(|sg| !sg.slots.is_empty());
                        })
                    }
                    None => Ok(()),
                },
                Op::Advance { by_s } => s.advance(s.now_s() + by_s),
            };
            if result.is_err() {
                prop_assert_eq!(&s, &before, "a refused operation changed the state");
            }
            s.check().unwrap();
            let (inst, sched) = shadow_schedule(&jobs, s.current_slot());
            verify(&inst, &sched).unwrap();
            // The state's holds are the test's own record of the plans.
            for (job, segs) in &jobs {
                let want: f64 = segs
                    .iter()
                    .map(|sg| f64::from(sg.total().workers) * f64::from(sg.slots.end.saturating_sub(sg.slots.start.max(s.current_slot()))))
                    .sum();
                let got: f64 = s
                    .hold(job.id.into())
                    .unwrap_or_default()
                    .iter()
                    .map(|u| u.resources.gpus * f64::from(u.slots.end - u.slots.start))
                    .sum();
                prop_assert_eq!(got, want, "{}", job.id);
            }
            for &m in s.machines() {
                for t in s.current_slot()..s.current_slot() + 12 {
                    let mut want = Resources::zero();
                    for (_, uses) in s.holds() {
                        for u in uses.iter().filter(|u| u.machine == m && u.slots.contains(&t)) {
                            want = want.plus(&u.resources);
                        }
                    }
                    prop_assert!(near(&s.used(m, t).unwrap(), &want));
                }
            }
        }
    }
}
