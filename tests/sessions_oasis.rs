//! OASiS sessions over a shared cluster state: hand cases (a release makes
//! room, outside usage blocks a plan, shared servers hold a job's workers
//! and PS on one machine, a cluster OASiS cannot use, unknown or duplicate
//! ids), a 20-job run saved and restored half-way, and random interleavings
//! of an OASiS session (PS jobs) and a GADGET-style session (rings) on one
//! state of machines that host both roles, which never over-commit.

mod common;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::gadget::{Gadget, GadgetParams};
use dmlsched::algorithms::oasis::{Oasis, OasisError, OasisParams, OasisSession};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::online::{JobStatus, PriceBounds};
use dmlsched::schedule::{Placement, Segment, Tasks};
use dmlsched::sim::Rejection;
use dmlsched::state::{ClusterState, Holder};
use proptest::prelude::*;

/// One-hour slots (Example A of the OASiS module).
const SLOT: f64 = 3600.0;

/// A server of `cpu` vCPUs and a `nic` Gbit/s NIC, with one GPU per vCPU
/// when it hosts workers.
fn server(id: u32, cpu: f64, nic: f64, hosts: Hosting) -> Machine {
    let gpus = if hosts == Hosting::ParameterServers {
        0.0
    } else {
        cpu
    };
    Machine::new(
        MachineId(id),
        Resources::zero().gpus(gpus).cpu_cores(cpu).nic(gbps(nic)),
        gbps(nic),
    )
    .hosting(hosts)
}

/// One worker server `(4 GPU, 4 vCPU, 4 Gbit/s)` and one PS server
/// `(4 vCPU, 8 Gbit/s)`: the worker server holds 4 workers of [`job`] per slot.
fn split() -> Cluster {
    Cluster::new(vec![
        server(0, 4.0, 4.0, Hosting::Workers),
        server(1, 4.0, 8.0, Hosting::ParameterServers),
    ])
}

/// A job of `epochs` epochs of 4 chunks, one mini-batch each, `ω = 0.5 +
/// 0.5` slot, so `ρ = 1`: `y` workers train `y` chunks a slot (at most 4),
/// with `zreq(y) = ⌈y/2⌉` PSs (`b = 1`, `B = 2` Gbit/s). Worker `(1 GPU,
/// 1 vCPU, 1 Gbit/s)`, PS `(1 vCPU, 2 Gbit/s)`. Utility `1000 − 10·δ`.
fn job(id: u32, epochs: u32, workers: u32) -> Job {
    Job::new(
        JobId(id),
        0.0,
        PsJob {
            epochs,
            data_chunks: workers,
            minibatches_per_chunk: 1,
            minibatch_compute_s: 0.5 * SLOT,
            gradient_bytes: 0.25 * SLOT * gbps(1.0),
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(gbps(1.0)),
            ps: Resources::zero().cpu_cores(1.0).nic(gbps(2.0)),
            max_workers: workers,
            max_ps: workers,
            ..PsJob::default()
        },
    )
    .with_utility(Utility::Linear {
        g1: 1000.0,
        slope: 10.0,
    })
}

fn session(state: &ClusterState, window: u32, params: OasisParams) -> OasisSession {
    let past: Vec<Job> = (0..4).map(|i| job(1000 + i, 1 + i % 3, 4)).collect();
    Oasis::new(params)
        .unwrap()
        .session(state, window, &past)
        .unwrap()
}

fn slots_held(segments: &[Segment]) -> Vec<u32> {
    let mut s: Vec<u32> = segments.iter().flat_map(|sg| sg.slots.clone()).collect();
    s.sort_unstable();
    s
}

#[test]
fn a_release_makes_room_for_a_later_job() {
    let mut state = ClusterState::new(&split(), SLOT).unwrap();
    let mut s = session(&state, 4, OasisParams::default());
    // 16 chunks at most 4 a slot: the whole worker server for slots 0..4.
    let a = s.submit(&mut state, &job(0, 4, 4), 0.0).unwrap();
    assert!(a.admitted, "{:?}", a.rejection);
    assert_eq!(slots_held(&a.segments), vec![0, 1, 2, 3]);
    // Submitted at slot 1, window 1..5: only slot 4 is free, 4 chunks < 16.
    let b = s.submit(&mut state, &job(1, 4, 4), SLOT).unwrap();
    assert!(!b.admitted);
    assert!(
        matches!(b.rejection, Some(Rejection::NoRoom)),
        "{:?}",
        b.rejection
    );
    // Job 0 finishes inside slot 1: slots 2.. are released, and the same
    // job fits slots 2..6.
    assert!(s.finish(&mut state, JobId(0), 1.5 * SLOT).unwrap());
    assert_eq!(s.status(JobId(0)), Some(JobStatus::Finished));
    let c = s.submit(&mut state, &job(2, 4, 4), 2.0 * SLOT).unwrap();
    assert!(c.admitted, "{:?}", c.rejection);
    assert_eq!(slots_held(&c.segments), vec![2, 3, 4, 5]);
    // Completion three slots after arrival, both times.
    assert_eq!((a.utility, c.utility), (970.0, 970.0));
    state.check().unwrap();
    assert_eq!(c.snapshot.alg, 1940.0);
    assert!(
        c.snapshot
            .guarantee_lost
            .iter()
            .any(|w| w.contains("released")),
        "{:?}",
        c.snapshot.guarantee_lost
    );
    // Five epochs need five slots even alone: past the 4-slot window, so
    // unschedulable, and the trivial bound does not count it.
    let e = s.submit(&mut state, &job(3, 5, 4), 2.0 * SLOT).unwrap();
    assert!(
        matches!(e.rejection, Some(Rejection::Unschedulable { .. })),
        "{:?}",
        e.rejection
    );
    assert_eq!(e.snapshot.trivial_bound, c.snapshot.trivial_bound);
    let cert = s.certificate().unwrap();
    cert.check(1e-9).unwrap();
    assert_eq!(cert.objective, 1940.0);
}

#[test]
fn outside_usage_blocks_a_plan() {
    let mut state = ClusterState::new(&split(), SLOT).unwrap();
    let mut s = session(&state, 4, OasisParams::default());
    // One vCPU of the worker server used by something else for 10 slots:
    // 3 workers a slot train 12 < 16 chunks in the window.
    let cpu = Resources::zero().cpu_cores(1.0);
    let u = state
        .record_usage(MachineId(0), 0.0, 10.0 * SLOT, cpu)
        .unwrap();
    let d = s.submit(&mut state, &job(0, 4, 4), 0.0).unwrap();
    assert!(!d.admitted);
    assert!(d.rejection.is_some());
    // Three epochs (12 chunks) still fit the 3 workers left.
    let e = s.submit(&mut state, &job(1, 3, 4), 0.0).unwrap();
    assert!(e.admitted, "{:?}", e.rejection);
    assert!(
        e.segments.iter().all(|sg| sg
            .placement
            .iter()
            .all(|(m, t)| *m != MachineId(0) || t.workers <= 3)),
        "{:?}",
        e.segments
    );
    assert_eq!(slots_held(&e.segments), vec![0, 1, 2, 3]);
    // Without the usage and job 1, four epochs fit again.
    state.release(Holder::Usage(u), 0.0).unwrap();
    assert!(s.cancel(&mut state, JobId(1), 0.0).unwrap());
    let f = s.submit(&mut state, &job(2, 4, 4), 0.0).unwrap();
    assert!(f.admitted, "{:?}", f.rejection);
    state.check().unwrap();
    assert!(
        f.snapshot
            .guarantee_lost
            .iter()
            .any(|w| w.contains("outside usage")),
        "{:?}",
        f.snapshot.guarantee_lost
    );
    s.certificate().unwrap().check(1e-9).unwrap();
}

fn shared() -> OasisParams {
    let mut built = OasisParams::default();
    built.shared_machines = true;
    built
}

#[test]
fn shared_machines_hold_a_jobs_workers_and_ps_together() {
    // One machine hosting both roles, (4 vCPU, 8 Gbit/s).
    let cl = Cluster::new(vec![server(0, 4.0, 8.0, Hosting::Both)]);
    let mut state = ClusterState::new(&cl, SLOT).unwrap();
    let mut s = session(&state, 4, shared());
    // Two chunks: 2 workers in one slot (utility 1000) beat 1 worker for
    // two (990); zreq(2) = 1 PS. 2 + 1 vCPU and 2 + 2 Gbit/s fit.
    let j = job(0, 1, 2);
    let d = s.submit(&mut state, &j, 0.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    let placement: Placement = vec![(MachineId(0), Tasks::new(2, 1))].into();
    assert_eq!(d.segments.len(), 1);
    assert_eq!(
        (d.segments[0].slots.clone(), &d.segments[0].placement),
        (0..1, &placement)
    );
    assert_eq!(d.utility, 1000.0);
    let held = vec![(j, d.segments.clone())];
    assert!(common::held_plans_verify(&state, &held));
    // A second such job fits beside it only for 1 vCPU: 1 worker and 1 PS
    // (2 vCPU) do not, so it waits for slot 1.
    let e = s.submit(&mut state, &job(1, 1, 2), 0.0).unwrap();
    assert!(e.admitted, "{:?}", e.rejection);
    assert_eq!(slots_held(&e.segments), vec![1]);
    state.check().unwrap();
    s.certificate().unwrap().check(1e-9).unwrap();
}

#[test]
fn machines_hosting_both_roles_need_the_switch() {
    let cl = Cluster::new(vec![server(0, 4.0, 8.0, Hosting::Both)]);
    let state = ClusterState::new(&cl, SLOT).unwrap();
    let past = [job(9, 1, 2)];
    let err = Oasis::new(OasisParams::default())
        .unwrap()
        .session(&state, 4, &past)
        .unwrap_err();
    assert!(
        matches!(
            err,
            dmlsched::Error::Oasis(OasisError::UnsupportedCluster { .. })
        ),
        "{err}"
    );
    // A ring is outside the model: a typed error, and nothing changes.
    let mut state = ClusterState::new(&cl, SLOT).unwrap();
    let mut s = session(&state, 4, shared());
    let before = state.clone();
    let mut r = ring(5, 1);
    if let Architecture::RingAllReduce(rar) = &mut r.architecture {
        // Small enough for this cluster's machines: only its shape is wrong.
        rar.worker = Resources::zero().gpus(1.0).cpu_cores(1.0).nic(gbps(1.0));
    }
    let err = s.submit(&mut state, &r, 0.0).unwrap_err();
    assert!(
        matches!(
            err,
            dmlsched::Error::Oasis(OasisError::UnsupportedJob { .. })
        ),
        "{err}"
    );
    assert_eq!(state, before);
    assert_eq!(s.status(JobId(5)), None);
}

#[test]
fn explicit_bounds_are_used_as_they_are() {
    let mut state = ClusterState::new(&split(), SLOT).unwrap();
    let oasis = Oasis::new(OasisParams::default()).unwrap();
    // L = 1 and U = 1000 in both pools (worker servers, PS servers).
    let u = Some(1000f64.ln());
    let bounds = |pools: usize| PriceBounds::explicit(vec![0.0; pools], vec![vec![u; 5]; pools]);
    let mut s = oasis
        .session_with_bounds(&state, 4, bounds(2).unwrap())
        .unwrap();
    // On the empty cluster every price is L = 1: 4 workers in slot 0 cost
    // 4·(1 GPU + 1 vCPU + 1 Gbit/s) and their zreq(4) = 2 PSs 2·(1 vCPU +
    // 2 Gbit/s), 18 in all, for a utility of 1000.
    let d = s.submit(&mut state, &job(0, 1, 4), 0.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    assert_eq!(slots_held(&d.segments), vec![0]);
    assert!((d.price - 18.0).abs() < 1e-9, "{}", d.price);
    assert!((d.payoff - 982.0).abs() < 1e-9, "{}", d.payoff);
    assert!(
        d.snapshot
            .guarantee_lost
            .iter()
            .any(|w| w.contains("explicit")),
        "{:?}",
        d.snapshot.guarantee_lost
    );
    s.certificate().unwrap().check(1e-9).unwrap();
    // One pool where the ledger has two, and an empty window, are refused.
    assert!(
        oasis
            .session_with_bounds(&state, 4, bounds(1).unwrap())
            .is_err()
    );
    assert!(
        oasis
            .session_with_bounds(&state, 0, bounds(2).unwrap())
            .is_err()
    );
    assert!(oasis.session(&state, 0, &[job(9, 1, 4)]).is_err());
}

#[test]
fn unknown_and_duplicate_ids_change_nothing() {
    let mut state = ClusterState::new(&split(), SLOT).unwrap();
    let mut s = session(&state, 6, OasisParams::default());
    let d = s.submit(&mut state, &job(0, 2, 4), 0.0).unwrap();
    assert!(d.admitted, "{:?}", d.rejection);
    let (before, snap) = (state.clone(), s.snapshot());
    let err = s.submit(&mut state, &job(0, 1, 4), 50.0).unwrap_err();
    assert!(err.to_string().contains("already submitted"), "{err}");
    assert!(!s.finish(&mut state, JobId(9), 50.0).unwrap());
    assert!(!s.cancel(&mut state, JobId(9), 50.0).unwrap());
    assert_eq!(state, before);
    assert_eq!(s.snapshot(), snap);
    // A cancelled job adds no utility.
    assert!(s.cancel(&mut state, JobId(0), 100.0).unwrap());
    assert_eq!(s.snapshot().alg, 0.0);
    s.certificate().unwrap().check(1e-9).unwrap();
}

/// The 20-job run of the save/restore test: job `i` arrives at `i·0.4`
/// slots on a worker server, a PS server and a shared server, with 1 to 3
/// epochs of 2 or 4 chunks; every third admitted job is finished half-way
/// through its plan, every fifth cancelled at its next arrival. After each
/// decision the snapshot is sane and the certificate passes its check.
/// Returns every decision and certificate, in order.
#[cfg(feature = "serde")]
fn run(restart_at: Option<usize>) -> Vec<String> {
    let cl = Cluster::new(vec![
        server(0, 4.0, 4.0, Hosting::Workers),
        server(1, 4.0, 8.0, Hosting::ParameterServers),
        server(2, 4.0, 8.0, Hosting::Both),
    ]);
    let mut state = ClusterState::new(&cl, SLOT).unwrap();
    let mut s = session(&state, 6, shared());
    let mut trace = Vec::new();
    let mut stops: Vec<(f64, JobId, bool)> = Vec::new();
    for i in 0..20u32 {
        if restart_at == Some(i as usize) {
            let (st, saved) = (serde_json::to_string(&state).unwrap(), s.save().unwrap());
            state = serde_json::from_str(&st).unwrap();
            s = OasisSession::restore(&saved).unwrap();
        }
        let now = f64::from(i) * 0.4 * SLOT;
        stops.sort_by(|a, b| a.0.total_cmp(&b.0));
        while stops.first().is_some_and(|&(t, _, _)| t <= now) {
            let (t, id, finish) = stops.remove(0);
            let r = if finish {
                s.finish(&mut state, id, t)
            } else {
                s.cancel(&mut state, id, t)
            };
            trace.push(format!("stop {id} at {t}: {}", r.unwrap()));
        }
        let j = job(i, 1 + i % 3, if i % 2 == 0 { 4 } else { 2 });
        let d = s.submit(&mut state, &j, now).unwrap();
        assert!(d.snapshot.alg >= 0.0 && d.snapshot.alg <= d.snapshot.trivial_bound + 1e-9);
        let cert = s.certificate().unwrap();
        cert.check(1e-9).unwrap();
        assert_eq!(cert.objective, d.snapshot.alg);
        state.check().unwrap();
        if d.admitted {
            let start = d.segments.iter().map(|sg| sg.slots.start).min().unwrap();
            let end = d.segments.iter().map(|sg| sg.slots.end).max().unwrap();
            if i % 3 == 0 {
                stops.push((f64::from(start + end) / 2.0 * SLOT, j.id, true));
            } else if i % 5 == 0 {
                stops.push((now + 0.4 * SLOT, j.id, false));
            }
        }
        trace.push(format!("{d:?} {cert:?}"));
    }
    trace
}

/// Saving the state and the session half-way and going on with the
/// restored ones decides exactly as the uninterrupted run.
#[cfg(feature = "serde")]
#[test]
fn a_saved_and_restored_session_decides_identically() {
    let whole = run(None);
    let admitted = whole
        .iter()
        .filter(|t| t.contains("admitted: true"))
        .count();
    let rejected = whole
        .iter()
        .filter(|t| t.contains("admitted: false"))
        .count();
    assert!(
        admitted >= 5 && rejected >= 1,
        "{admitted} admitted, {rejected} rejected"
    );
    assert!(
        whole
            .iter()
            .any(|t| t.starts_with("stop") && t.ends_with("true"))
    );
    let restarted = run(Some(10));
    assert_eq!(whole.len(), restarted.len());
    for (a, b) in whole.iter().zip(&restarted) {
        assert_eq!(a, b);
    }
}

/// A ring of `workers` workers of 1 GPU each, a few 100-s slots long.
fn ring(id: u32, workers: u32) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations: 1_000,
            model_bytes: mb(100.0),
            minibatch_size: 32,
            forward_per_sample_s: 0.002,
            backward_per_iteration_s: 0.1,
            reserved_bandwidth_bps: Some(gbps(2.0)),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(2.0)
                .memory(gb(8.0))
                .nic(gbps(1.0)),
            ..RarJob::default()
        },
    )
    .with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    })
}

/// The locality tests' PS job with `epochs` epochs (one GPU per worker).
fn gpu_ps_job(id: u32, epochs: u32) -> Job {
    let mut j = common::l1_job(id, 0.0, 8.0, 8.0).with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    });
    if let Architecture::ParameterServer(p) = &mut j.architecture {
        p.epochs = epochs;
    }
    j
}

/// One step of a random interleaving.
#[derive(Debug, Clone)]
enum Op {
    Submit { ring: bool, size: u32, after_s: f64 },
    Finish { pick: usize, after_s: f64 },
    Cancel { pick: usize },
    Usage { machine: u32, slots: u32, gpus: u32 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<bool>(), 1..4u32, 0.0..100.0f64).prop_map(|(ring, size, after_s)| Op::Submit { ring, size, after_s }),
        2 => (0..12usize, 0.0..150.0f64).prop_map(|(pick, after_s)| Op::Finish { pick, after_s }),
        1 => (0..12usize).prop_map(|pick| Op::Cancel { pick }),
        1 => (0..2u32, 1..4u32, 1..3u32).prop_map(|(machine, slots, gpus)| Op::Usage { machine, slots, gpus }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// An OASiS session (PS jobs) and a GADGET-style session (rings) with
    /// outside usage on one state of machines hosting both roles never
    /// over-commit: the held plans pass `verify`, the state adds up, and
    /// both certificates pass their check.
    #[test]
    fn oasis_and_gadget_sessions_never_over_commit(ops in proptest::collection::vec(op(), 1..24)) {
        const S: f64 = 100.0;
        let cl = Cluster::new((0..2).map(|i| common::l1_machine(i, 4.0, Hosting::Both)).collect());
        let mut state = ClusterState::new(&cl, S).unwrap();
        let past: Vec<Job> = (0..4).map(|i| gpu_ps_job(1000 + i, 1 + i % 3)).collect();
        let mut oasis = Oasis::new(shared()).unwrap().session(&state, 16, &past).unwrap();
        let rings: Vec<Job> = (0..4).map(|i| ring(2000 + i, 1 << (i % 3))).collect();
        let mut gadget = Gadget::new(GadgetParams::default()).unwrap().session(&state, 16, &rings).unwrap();
        let mut held: Vec<(Job, Vec<Segment>)> = Vec::new();
        for o in ops {
            let now = state.now_s();
            match o {
                Op::Submit { ring: r, size, after_s } => {
                    let id = held.len() as u32;
                    let (j, d) = if r {
                        let j = ring(id, 1 << (size - 1));
                        let d = gadget.submit(&mut state, &j, now + after_s).unwrap();
                        (j, d)
                    } else {
                        let j = gpu_ps_job(id, size);
                        let d = oasis.submit(&mut state, &j, now + after_s).unwrap();
                        (j, d)
                    };
                    prop_assert_eq!(d.admitted, !d.segments.is_empty());
                    held.push((j, d.segments));
                }
                Op::Finish { pick, after_s } if pick < held.len() => {
                    let id = held[pick].0.id;
                    let stopped = if is_ring(&held[pick].0) {
                        gadget.finish(&mut state, id, now + after_s)
                    } else {
                        oasis.finish(&mut state, id, now + after_s)
                    };
                    if stopped.unwrap() {
                        common::cut_at(&state, &mut held[pick].1, now + after_s);
                    }
                }
                Op::Cancel { pick } if pick < held.len() => {
                    let id = held[pick].0.id;
                    let stopped = if is_ring(&held[pick].0) {
                        gadget.cancel(&mut state, id, now)
                    } else {
                        oasis.cancel(&mut state, id, now)
                    };
                    if stopped.unwrap() {
                        common::cut_at(&state, &mut held[pick].1, now);
                    }
                }
                Op::Finish { .. } | Op::Cancel { .. } => {}
                Op::Usage { machine, slots, gpus } => {
                    let r = Resources::zero().gpus(f64::from(gpus)).memory(gb(1.0));
                    let _ = state.record_usage(MachineId(machine), now, now + f64::from(slots) * S, r);
                }
            }
            state.check().unwrap();
            prop_assert!(common::held_plans_verify(&state, &held));
        }
        oasis.certificate().unwrap().check(1e-9).unwrap();
        gadget.certificate().unwrap().check(1e-9).unwrap();
    }
}

fn is_ring(j: &Job) -> bool {
    matches!(j.architecture, Architecture::RingAllReduce(_))
}

#[test]
fn an_oasis_session_is_send() {
    fn send<T: Send>() {}
    send::<OasisSession>();
}
