//! Online sessions over a shared cluster state: hand cases (a release makes
//! room, outside usage blocks a plan, an unknown or duplicate id changes
//! nothing) and random interleavings of submit, finish, cancel and outside
//! usage by two sessions on one state, which never over-commit a machine by
//! `schedule::verify`'s rules and whose certificates pass their check.
#![cfg(feature = "highs")]

mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::locality::{Locality, LocalityParams, LocalitySession};
use dmlsched::model::units::gb;
use dmlsched::model::*;
use dmlsched::online::{JobStatus, Overrun};
use dmlsched::schedule::Segment;
use dmlsched::state::{ClusterState, Holder};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// 100-s slots.
const SLOT: f64 = 100.0;

fn cluster(n: u32) -> Cluster {
    Cluster::new(
        (0..n)
            .map(|i| common::l1_machine(i, 4.0, Hosting::Both))
            .collect(),
    )
}

/// The locality tests' job with `epochs` epochs (400 mini-batches each:
/// one slot on a whole machine run LOCAL, 4 workers at 100 per slot).
fn job(id: u32, epochs: u32) -> Job {
    let mut j = common::l1_job(id, 0.0, 8.0, 8.0).with_utility(Utility::Linear {
        g1: 100.0,
        slope: 10.0,
    });
    if let Architecture::ParameterServer(p) = &mut j.architecture {
        p.epochs = epochs;
    }
    j
}

fn session(state: &ClusterState, window: u32) -> LocalitySession {
    let past: Vec<Job> = (0..4).map(|i| job(1000 + i, 1 + i % 3)).collect();
    Locality::new(LocalityParams::default())
        .unwrap()
        .session(state, window, &past, &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap()
}

#[test]
fn a_release_makes_room_for_a_later_job() {
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut s = session(&state, 4);
    // Four epochs fill the machine for slots 0..4 (more than half the
    // window: its window is widened and the walk plans it, as fast as the
    // machine allows).
    let a = s.submit(&mut state, &job(0, 4), 0.0).unwrap();
    assert!(a.admitted, "{:?}", a.rejection);
    let held: u32 = a.segments.iter().map(|sg| sg.slots.len() as u32).sum();
    assert_eq!(held, 4, "{:?}", a.segments);
    // Two epochs need two whole slots of the machine; its window (slots
    // 1..5) has one free.
    let b = s.submit(&mut state, &job(1, 2), 100.0).unwrap();
    assert!(!b.admitted, "no room while job 0 holds the machine");
    // Job 0 finishes inside slot 1: slots 2.. are released.
    assert!(s.finish(&mut state, JobId(0), 150.0).unwrap());
    assert_eq!(s.status(JobId(0)), Some(JobStatus::Finished));
    let c = s.submit(&mut state, &job(2, 2), 200.0).unwrap();
    assert!(c.admitted, "{:?}", c.rejection);
    assert!(c.segments.iter().all(|sg| sg.slots.start >= 2));
    state.check().unwrap();
    assert_eq!(c.snapshot.alg, a.utility + c.utility);
    assert!(
        c.snapshot
            .guarantee_lost
            .iter()
            .any(|w| w.contains("released")),
        "{:?}",
        c.snapshot.guarantee_lost
    );
    let cert = s.certificate().unwrap();
    cert.check(1e-9).unwrap();
    assert_eq!(cert.objective, c.snapshot.alg);
}

/// A job submitted inside a slot whose plan starts at the next boundary
/// also holds its first placement for the rest of the slot in progress
/// where there is room (a head start), and only then; the plan's utility
/// and price are the algorithm's either way.
#[test]
fn a_job_submitted_inside_a_slot_gets_a_head_start_where_there_is_room() {
    // Empty cluster: the plan from slot 2 is widened back to slot 1.
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut s = session(&state, 4);
    let d = s.submit(&mut state, &job(0, 1), 150.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    let first = d.segments.iter().map(|sg| sg.slots.start).min().unwrap();
    assert_eq!(first, 1, "{:?}", d.segments);
    state.check().unwrap();
    let cert = s.certificate().unwrap();
    cert.check(1e-9).unwrap();
    assert_eq!(cert.objective, d.utility);
    // The same plan without room in slot 1 (one GPU used there): no head
    // start, the same utility and price.
    let mut busy = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut t = session(&busy, 4);
    busy.record_usage(MachineId(0), 100.0, 200.0, Resources::zero().gpus(1.0))
        .unwrap();
    let e = t.submit(&mut busy, &job(0, 1), 150.0).unwrap();
    assert!(e.admitted, "{:?}", e.rejection);
    let first = e.segments.iter().map(|sg| sg.slots.start).min().unwrap();
    assert_eq!(first, 2, "{:?}", e.segments);
    assert_eq!((e.utility, e.price), (d.utility, d.price));
    busy.check().unwrap();
    // On a boundary there is no slot in progress to start in.
    let mut on = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut u = session(&on, 4);
    let f = u.submit(&mut on, &job(0, 1), 200.0).unwrap();
    assert_eq!(f.segments.iter().map(|sg| sg.slots.start).min(), Some(2));
}

#[test]
fn outside_usage_blocks_a_plan() {
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut s = session(&state, 4);
    // Every GPU used by something else for slots 0..10: no plan of one
    // epoch (a slot of the whole machine) fits the 4-slot window.
    let u = state
        .record_usage(MachineId(0), 0.0, 1000.0, Resources::zero().gpus(4.0))
        .unwrap();
    let d = s.submit(&mut state, &job(0, 1), 0.0).unwrap();
    assert!(!d.admitted);
    assert!(d.rejection.is_some());
    state.release(Holder::Usage(u), 0.0).unwrap();
    let d = s.submit(&mut state, &job(1, 1), 0.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    state.check().unwrap();
    s.certificate().unwrap().check(1e-9).unwrap();
}

#[test]
fn unknown_and_duplicate_ids_change_nothing() {
    let mut state = ClusterState::new(&cluster(2), SLOT).unwrap();
    let mut s = session(&state, 6);
    let d = s.submit(&mut state, &job(0, 2), 0.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    let (before, snap) = (state.clone(), s.snapshot());
    let err = s.submit(&mut state, &job(0, 1), 50.0).unwrap_err();
    assert!(err.to_string().contains("already submitted"), "{err}");
    assert!(!s.finish(&mut state, JobId(9), 50.0).unwrap());
    assert!(!s.cancel(&mut state, JobId(9), 50.0).unwrap());
    assert_eq!(state, before);
    assert_eq!(s.snapshot(), snap);
    // A time before the state's is refused.
    state.advance(300.0).unwrap();
    let before = state.clone();
    assert!(s.submit(&mut state, &job(1, 1), 200.0).is_err());
    assert_eq!(state, before);
    // A cancelled job adds no utility.
    assert!(s.cancel(&mut state, JobId(0), 300.0).unwrap());
    assert_eq!(s.snapshot().alg, 0.0);
    s.certificate().unwrap().check(1e-9).unwrap();
}

/// A job an instance would refuse is refused by `submit` with the model's
/// typed error, naming the job, and changes nothing; so is one larger than
/// every machine.
#[test]
fn invalid_jobs_are_refused_with_the_models_error() {
    let mut state = ClusterState::new(&cluster(2), SLOT).unwrap();
    let mut s = session(&state, 6);
    let (before, snap) = (state.clone(), s.snapshot());
    let mut nan = job(0, 2);
    let mut huge = job(1, 2);
    if let Architecture::ParameterServer(p) = &mut nan.architecture {
        p.minibatch_compute_s = f64::NAN;
    }
    if let Architecture::ParameterServer(p) = &mut huge.architecture {
        p.worker.gpus = 1e6;
    }
    let unbounded = job(2, 2).with_utility(Utility::Linear {
        g1: f64::INFINITY,
        slope: 1.0,
    });
    for bad in [&nan, &huge, &unbounded] {
        let err = s.submit(&mut state, bad, 0.0).unwrap_err();
        assert!(matches!(err, dmlsched::Error::Model(_)), "{err}");
        assert!(err.is_input(), "{err}");
        assert!(err.to_string().contains(&bad.id.to_string()), "{err}");
        assert_eq!(state, before);
        assert_eq!(s.snapshot(), snap);
    }
    // The ids of refused jobs stay free.
    assert!(s.submit(&mut state, &job(0, 2), 0.0).unwrap().admitted);
}

/// One step of a random interleaving.
#[derive(Debug, Clone)]
enum Op {
    Submit {
        session: usize,
        epochs: u32,
        after_s: f64,
    },
    Finish {
        pick: usize,
        after_s: f64,
    },
    Cancel {
        pick: usize,
    },
    Overrun {
        pick: usize,
        more_s: f64,
    },
    Usage {
        machine: u32,
        slots: u32,
        gpus: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..2usize, 1..9u32, 0.0..100.0f64).prop_map(|(session, epochs, after_s)| Op::Submit { session, epochs, after_s }),
        2 => (0..12usize, 0.0..150.0f64).prop_map(|(pick, after_s)| Op::Finish { pick, after_s }),
        1 => (0..12usize).prop_map(|pick| Op::Cancel { pick }),
        1 => (0..12usize, 1.0..300.0f64).prop_map(|(pick, more_s)| Op::Overrun { pick, more_s }),
        1 => (0..2u32, 1..4u32, 1..3u32).prop_map(|(machine, slots, gpus)| Op::Usage { machine, slots, gpus }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Two sessions and outside usage on one state never over-commit: the
    /// held plans pass `verify` on their own, the state adds up with the
    /// outside usage, and every certificate passes its check.
    #[test]
    fn two_sessions_never_over_commit(ops in proptest::collection::vec(op(), 1..24)) {
        let cl = cluster(2);
        let mut state = ClusterState::new(&cl, SLOT).unwrap();
        let mut sessions = [session(&state, 6), session(&state, 8)];
        let mut owner: Vec<(Job, usize)> = Vec::new();
        let mut held: Vec<(Job, Vec<Segment>)> = Vec::new();
        for o in ops {
            let now = state.now_s();
            match o {
                Op::Submit { session, epochs, after_s } => {
                    let j = job(owner.len() as u32, epochs);
                    let d = sessions[session].submit(&mut state, &j, now + after_s).unwrap();
                    prop_assert_eq!(d.admitted, !d.segments.is_empty());
                    held.push((j.clone(), d.segments));
                    owner.push((j, session));
                }
                Op::Finish { pick, after_s } => {
                    if let Some((j, k)) = owner.get(pick)
                        && sessions[*k].finish(&mut state, j.id, now + after_s).unwrap()
                    {
                        common::cut_at(&state, &mut held[pick].1, now + after_s);
                    }
                }
                Op::Cancel { pick } => {
                    if let Some((j, k)) = owner.get(pick)
                        && sessions[*k].cancel(&mut state, j.id, now).unwrap()
                    {
                        common::cut_at(&state, &mut held[pick].1, now);
                    }
                }
                Op::Overrun { pick, more_s } => {
                    if let Some((j, k)) = owner.get(pick)
                        && let Ok(Overrun::Extended { segment, .. }) =
                            sessions[*k].overrun(&mut state, j.id, now, more_s)
                    {
                        held[pick].1.push(segment);
                    }
                }
                Op::Usage { machine, slots, gpus } => {
                    let r = Resources::zero().gpus(f64::from(gpus)).memory(gb(1.0));
                    let _ = state.record_usage(MachineId(machine), now, now + f64::from(slots) * SLOT, r);
                }
            }
            state.check().unwrap();
            prop_assert!(common::held_plans_verify(&state, &held));
        }
        for s in &mut sessions {
            s.certificate().unwrap().check(1e-9).unwrap();
        }
    }
}

#[test]
fn a_late_job_is_extended_where_there_is_room_and_preempted_where_not() {
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut s = session(&state, 6);
    let a = s.submit(&mut state, &job(0, 2), 0.0).unwrap();
    assert!(a.admitted, "{:?}", a.rejection);
    let end = a.segments.iter().map(|sg| sg.slots.end).max().unwrap();
    // Still running at its plan's end: 150 s more is two more slots on the
    // same machine, tasks and GPUs.
    let more = s
        .overrun(&mut state, JobId(0), f64::from(end) * SLOT - 10.0, 150.0)
        .unwrap();
    let Overrun::Extended { segment, utility } = more else {
        panic!("{more:?}")
    };
    assert_eq!(segment.slots, end..end + 2);
    let last = a.segments.iter().max_by_key(|sg| sg.slots.end).unwrap();
    assert_eq!(segment.placement, last.placement);
    assert_eq!(segment.gpus, last.gpus);
    // Linear utility 100 − 10·(slots to completion): two slots later.
    assert!(
        (a.utility - utility - 20.0).abs() < 1e-9,
        "{} vs {utility}",
        a.utility
    );
    assert!((s.snapshot().alg - utility).abs() < 1e-9);
    state.check().unwrap();
    // Another job takes the whole machine after the extension; the first
    // overruns again and finds no room: preempted, no utility.
    let b = s
        .submit(&mut state, &job(1, 4), f64::from(end) * SLOT)
        .unwrap();
    assert!(b.admitted, "{:?}", b.rejection);
    let again = s
        .overrun(&mut state, JobId(0), f64::from(end + 1) * SLOT, 100.0)
        .unwrap();
    assert!(matches!(again, Overrun::Preempted { .. }), "{again:?}");
    assert_eq!(s.status(JobId(0)), Some(JobStatus::Preempted));
    assert!((s.snapshot().alg - b.utility).abs() < 1e-9);
    // A preempted or unknown job cannot overrun again.
    assert!(
        s.overrun(&mut state, JobId(0), f64::from(end + 1) * SLOT, 100.0)
            .is_err()
    );
    assert!(
        s.overrun(&mut state, JobId(7), f64::from(end + 1) * SLOT, 100.0)
            .is_err()
    );
    assert!(
        s.snapshot()
            .guarantee_lost
            .iter()
            .any(|w| w.contains("extended"))
    );
    state.check().unwrap();
    s.certificate().unwrap().check(1e-9).unwrap();
}

/// Bounds learned from past jobs keep the `2α` premise while the jobs
/// submitted look like them; a job worth ten times more per unit than any
/// past one is named in the reasons, and the certificate's `2α` is then
/// not valid.
#[test]
fn learned_bounds_hold_while_they_cover_the_jobs_submitted() {
    let mut state = ClusterState::new(&cluster(2), SLOT).unwrap();
    let mut s = session(&state, 6);
    for (i, epochs) in [(0, 1), (1, 2), (2, 1)] {
        let d = s.submit(&mut state, &job(i, epochs), 0.0).unwrap();
        assert!(
            d.snapshot.guarantee_lost.is_empty(),
            "{:?}",
            d.snapshot.guarantee_lost
        );
    }
    let c = s.certificate().unwrap();
    c.check(1e-9).unwrap();
    let two_alpha = &c.guarantees[0];
    assert!(
        c.scope
            .as_deref()
            .unwrap()
            .ends_with("price bounds learned from 4 past jobs")
    );
    // Only the small-demand condition fails (a job fills a machine here).
    assert!(
        two_alpha
            .reasons
            .iter()
            .all(|r| r.starts_with("SmallDemandAssumption")),
        "{:?}",
        two_alpha.reasons
    );
    let rich = job(3, 1).with_utility(Utility::Linear {
        g1: 1000.0,
        slope: 10.0,
    });
    let d = s.submit(&mut state, &rich, 0.0).unwrap();
    assert!(
        d.snapshot
            .guarantee_lost
            .iter()
            .any(|w| w.contains("do not cover job 3")),
        "{:?}",
        d.snapshot.guarantee_lost
    );
    let c = s.certificate().unwrap();
    c.check(1e-9).unwrap();
    assert!(c.guarantees.iter().all(|g| !g.valid));
}

/// A job whose fastest run is longer than the planning window gets the
/// window's slots after that run, planned by the greedy walk: six epochs
/// need six slots of the whole machine run LOCAL (4 workers × 100
/// mini-batches a slot against 2,400), which a 4-slot window used to
/// refuse as unschedulable. The walk's plan is those six slots; the walk
/// has no quality guarantee, so the certificate's guarantees are marked
/// not valid, with the reason. A short job after it keeps its own window,
/// and a saved and restored session decides it identically.
#[test]
fn a_job_longer_than_the_window_is_planned_past_it_by_the_walk() {
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut s = session(&state, 4);
    let long = s.submit(&mut state, &job(0, 6), 0.0).unwrap();
    assert!(long.admitted, "{:?}", long.rejection);
    let slots: Vec<_> = long.segments.iter().map(|sg| sg.slots.clone()).collect();
    assert_eq!(
        slots.iter().map(|r| r.start).min(),
        Some(0),
        "{:?}",
        long.segments
    );
    assert_eq!(
        slots.iter().map(|r| r.end).max(),
        Some(6),
        "{:?}",
        long.segments
    );
    let c = s.certificate().unwrap();
    c.check(1e-9).unwrap();
    assert!(c.guarantees.iter().all(|g| !g.valid));
    assert!(
        c.guarantees
            .iter()
            .any(|g| g.reasons.iter().any(|r| r.starts_with("HeuristicOracle"))),
        "{:?}",
        c.guarantees
    );
    let mut restored = LocalitySession::restore(&s.save().unwrap()).unwrap();
    let mut state2 = state.clone();
    let short = s.submit(&mut state, &job(1, 1), 0.0).unwrap();
    let short2 = restored.submit(&mut state2, &job(1, 1), 0.0).unwrap();
    assert_eq!(short.admitted, short2.admitted);
    assert_eq!(short.segments, short2.segments);
    if short.admitted {
        let end = short.segments.iter().map(|sg| sg.slots.end).max().unwrap();
        assert!(end <= 4, "{:?}", short.segments);
    }
}

/// GPU ids fragmented across slots: over slots 0 and 1 three of the
/// machine's four GPUs are free in each, but GPU 0 is taken in slot 0 and
/// GPU 1 in slot 1, so only two ids are free in both. A plan of three
/// GPUs over both slots fits the counts; the state cannot give it the same
/// three ids in both slots, so the session commits it slot by slot (each
/// slot with its own free ids) instead of refusing the admitted plan.
#[test]
fn a_plan_over_gpu_ids_fragmented_across_slots_is_committed_slot_by_slot() {
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let gpu = |n: f64| Resources::zero().gpus(n);
    let a = state
        .record_usage(MachineId(0), 0.0, 2.0 * SLOT, gpu(1.0))
        .unwrap();
    state
        .record_usage(MachineId(0), SLOT, 2.0 * SLOT, gpu(1.0))
        .unwrap();
    state.release(Holder::Usage(a), SLOT).unwrap();
    let mut s = session(&state, 4);
    // Three chunks of 200 mini-batches, at most three workers: 300
    // mini-batches a slot LOCAL, so the fastest plan runs three workers in
    // slots 0 and 1 (one segment of the plan).
    let mut three = job(0, 1);
    if let Architecture::ParameterServer(p) = &mut three.architecture {
        (p.data_chunks, p.minibatches_per_chunk) = (3, 200);
        (p.max_workers, p.max_ps) = (3, 3);
    }
    let d = s.submit(&mut state, &three, 0.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    let held: Vec<_> = d
        .segments
        .iter()
        .map(|sg| {
            let mut ids: Vec<u32> = sg.gpus.iter().flatten().map(|g| g.index).collect();
            ids.sort_unstable();
            (sg.slots.clone(), ids)
        })
        .collect();
    assert_eq!(held, vec![(0..1, vec![1, 2, 3]), (1..2, vec![0, 2, 3])]);
    state.check().unwrap();
    s.certificate().unwrap().check(1e-9).unwrap();
}

/// A job too long for the state to hold (a run of 2²⁰ slots on the whole
/// machine, beyond `MAX_SPAN_SLOTS` once doubled) keeps its window and is
/// rejected as unschedulable in it, at once: its window is not widened to
/// millions of slots.
#[test]
fn a_job_longer_than_the_state_holds_is_unschedulable_not_widened() {
    common::within(common::WATCHDOG_S, "a job of 2^20 slots", || {
        let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
        let mut s = session(&state, 4);
        let d = s.submit(&mut state, &job(0, 1 << 20), 0.0).unwrap();
        assert!(!d.admitted);
        let why = d.rejection.expect("a reason").to_string();
        assert!(why.starts_with("unschedulable"), "{why}");
    });
}

/// A planning window longer than the state stores ahead is refused when
/// the session is built (no plan could be held past it, and syncing it
/// would run on), as is an empty one.
#[test]
fn a_window_past_what_the_state_holds_is_refused() {
    use dmlsched::state::MAX_SPAN_SLOTS;
    let state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let past: Vec<Job> = (0..2).map(|i| job(1000 + i, 1)).collect();
    let build = |w: u32| {
        Locality::new(LocalityParams::default()).unwrap().session(
            &state,
            w,
            &past,
            &mut ChaCha8Rng::seed_from_u64(1),
        )
    };
    let Err(err) = build(MAX_SPAN_SLOTS + 1) else {
        panic!("a window of 2^20 + 1 slots is refused")
    };
    assert!(err.to_string().contains("planning window"), "{err}");
    assert!(build(0).is_err());
}

/// A rejected job decided again once capacity is released: admitted, with
/// its utility counted from its first submission's slot, and the guarantee
/// marked not valid; only a rejected job can be decided again.
#[test]
fn a_rejected_job_is_decided_again_after_a_release() {
    let mut state = ClusterState::new(&cluster(1), SLOT).unwrap();
    let mut s = session(&state, 4);
    assert!(s.submit(&mut state, &job(0, 4), 0.0).unwrap().admitted);
    let b = s.submit(&mut state, &job(1, 2), 100.0).unwrap();
    assert!(!b.admitted, "no room while job 0 holds the machine");
    // Still no room at the same time: rejected again, nothing held.
    let again = s.resubmit(&mut state, JobId(1), 100.0).unwrap();
    assert!(!again.admitted);
    assert_eq!(s.status(JobId(1)), Some(JobStatus::Rejected));
    assert!(s.finish(&mut state, JobId(0), 150.0).unwrap());
    let c = s.resubmit(&mut state, JobId(1), 200.0).unwrap();
    assert!(c.admitted, "{:?}", c.rejection);
    assert_eq!(s.status(JobId(1)), Some(JobStatus::Admitted));
    assert!(c.segments.iter().all(|sg| sg.slots.start >= 2));
    // Its utility counts from slot 1, where it was first submitted.
    let last = c.segments.iter().map(|sg| sg.slots.end).max().unwrap() - 1;
    assert_eq!(c.utility, job(1, 2).utility.value(last - 1));
    assert!(
        c.snapshot
            .guarantee_lost
            .iter()
            .any(|w| w.contains("decided again")),
        "{:?}",
        c.snapshot.guarantee_lost
    );
    state.check().unwrap();
    let cert = s.certificate().unwrap();
    cert.check(1e-9).unwrap();
    assert_eq!(cert.objective, c.snapshot.alg);
    // Admitted, unknown: refused with a typed error, nothing changes.
    let before = s.snapshot();
    for id in [JobId(1), JobId(0), JobId(77)] {
        let e = s.resubmit(&mut state, id, 200.0).unwrap_err();
        assert!(e.to_string().contains("cannot be submitted again"), "{e}");
    }
    assert_eq!(s.snapshot(), before);
    assert!(s.resubmit(&mut state, JobId(1), f64::NAN).is_err());
}

/// In the simulator a policy with `requeue_rejected` keeps a job rejected
/// for lack of room waiting and admits it at the first boundary after a
/// completion; without it the job is turned away at arrival.
#[test]
fn a_waiting_job_runs_after_a_completion_in_the_simulator() {
    use dmlsched::algorithms::locality::LocalityPolicy;
    use dmlsched::online::PdOptions;
    use dmlsched::sim::{SimOptions, simulate};
    let mut late = job(1, 2);
    late.arrival_s = 100.0;
    // Worth something only if done within two slots of its arrival: it
    // waits, and gives up once no completion can earn anything.
    let mut urgent = job(2, 1).with_utility(Utility::DeadlineStep {
        value: 50.0,
        deadline_slots: 2,
    });
    urgent.arrival_s = 150.0;
    let instance = Instance::new(cluster(1), vec![job(0, 4), late, urgent], SLOT, 20).unwrap();
    let run = |requeue: bool| {
        let mut params = LocalityParams::default();
        params.horizon = 4;
        params.pd = {
            let mut built_ = PdOptions::default();
            built_.requeue_rejected = requeue;
            built_
        };
        let mut policy =
            LocalityPolicy::new(&instance, &params, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        let result = simulate(&instance, &mut policy, &SimOptions::default()).unwrap();
        let decisions: Vec<(JobId, bool)> = policy
            .decisions()
            .iter()
            .map(|d| (d.job, d.admitted))
            .collect();
        (result, decisions)
    };
    let (paper, decided) = run(false);
    assert_eq!(
        decided,
        vec![(JobId(0), true), (JobId(1), false), (JobId(2), false)]
    );
    assert!(paper.jobs[1].rejected, "{:?}", paper.jobs[1]);
    let (queued, decided) = run(true);
    assert_eq!(
        decided,
        vec![
            (JobId(0), true),
            (JobId(1), false),
            (JobId(2), false),
            (JobId(1), true)
        ]
    );
    let gave_up = queued.jobs[2].rejection.as_ref().map(ToString::to_string);
    let gave_up = gave_up.unwrap_or_default();
    assert!(gave_up.contains("its utility is 0"), "{gave_up}");
    let done = &queued.jobs[1];
    assert!(!done.rejected && done.finish_s.is_some(), "{done:?}");
    let first = queued.jobs[0].finish_s.unwrap();
    assert!(done.finish_s.unwrap() > first, "{:?}", queued.jobs);
    let total = |r: &dmlsched::sim::SimResult| r.jobs.iter().map(|j| j.utility).sum::<f64>();
    assert!(total(&queued) > total(&paper));
}
