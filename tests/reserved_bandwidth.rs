//! Reserved ring bandwidth: what `verify` charges and refuses, how the
//! simulator charges, times and releases a reserving ring, and FIFO-FF on
//! the shared charge (hand-checked numbers in per-slot units, 1 s slots,
//! one data unit per byte).

use dmlsched::Error;
use dmlsched::baselines::FifoFirstFitBandwidth;
use dmlsched::model::*;
use dmlsched::schedule::*;
use dmlsched::sim::{Action, Decisions, Event, Policy, SimError, SimOptions, SimView, simulate};

const H0: MachineId = MachineId(0);
const H1: MachineId = MachineId(1);
const H2: MachineId = MachineId(2);

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// `n` servers with 4 GPUs, a NIC of `nic` per direction and internal
/// bandwidth 20; ring constants `C = 40`, `ξ₂ = 0.01`, and an external
/// bandwidth of 4 with linear degradation `α = 0.5` (what rings without a
/// reservation get).
fn cluster(n: u32, nic: f64) -> Cluster {
    let mut c = Cluster::homogeneous(
        n,
        Resources::zero().gpus(4.0).cpu_cores(16.0).nic(nic),
        20.0,
    );
    let ring = &mut c.ring;
    ring.external_bandwidth_bps = 4.0;
    ring.reduction_speed_bps = 40.0;
    ring.overhead_per_server_s = 0.01;
    ring.contender_ratio = 1.0;
    ring.degradation = Degradation::Linear { alpha: 0.5 };
    c
}

/// The common job: `m = 0.8`, `w = 4` (2 also allowed, for tests that
/// share servers), compute 0.08 per iteration,
/// reserving `b` per cross-server edge, `iterations` iterations.
fn ring(id: u32, iterations: u64, b: Option<f64>) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Allowed(vec![2, 4]),
            iterations,
            model_bytes: 0.8,
            backward_per_iteration_s: 0.08,
            reserved_bandwidth_bps: b,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
            ..RarJob::default()
        },
    )
}

fn placement(list: &[(MachineId, u32)]) -> Placement {
    list.iter().map(|&(m, w)| (m, Tasks::new(w, 0))).collect()
}

fn run_seg(slots: std::ops::Range<u32>, list: &[(MachineId, u32)]) -> Segment {
    Segment::new(slots, placement(list))
}

fn admitted(job: u32, segments: Vec<Segment>) -> JobSchedule {
    JobSchedule {
        job: JobId(job),
        admitted: true,
        segments,
    }
}

#[track_caller]
fn assert_nic_exceeded(
    r: Result<(), Violation>,
    machine: MachineId,
    slot: u32,
    used: f64,
    capacity: f64,
) {
    match r {
        Err(Violation::CapacityExceeded {
            machine: m,
            resource: ResourceKind::Nic,
            slot: s,
            used: u,
            capacity: c,
        }) => assert!(
            m == machine && s == slot && close(u, used) && close(c, capacity),
            "{m}, slot {s}: used {u} of {c}; expected {machine}, slot {slot}, {used} of {capacity}"
        ),
        other => panic!("expected a NIC capacity violation, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// The charge and verify
// ---------------------------------------------------------------------------

/// `w = 4`, `b = 2`: all four on one server reserves nothing; 2+2 reserves
/// 2 per direction (4 of the both-directions pool) on each server; 2+1+1
/// the same on each of the three.
#[test]
fn reservation_per_server_follows_the_ring_edges() {
    let job = ring(0, 1, Some(2.0));
    for (list, per_server) in [
        (vec![(H0, 4)], 0.0),
        (vec![(H0, 2), (H1, 2)], 2.0),
        (vec![(H0, 2), (H1, 1), (H2, 1)], 2.0),
    ] {
        let p = placement(&list);
        let n = p.worker_machines();
        assert_eq!(n, list.len());
        assert_eq!(job.reserved_nic_bps(n), per_server);
        for &(_, t) in p.iter() {
            let d = job.demand_with_reservation(t.workers, 0, n);
            // Both directions together: 2b on a multi-server ring, 0 alone.
            assert_eq!(2.0 * d.nic_bps, 2.0 * per_server);
            assert_eq!(d.gpus, f64::from(t.workers));
        }
        // verify sees the same numbers: it accepts the ring on NICs of
        // exactly `b` per direction and names the reservation when the NIC
        // is a little smaller.
        let inst = |nic| Instance::new(cluster(3, nic), vec![job.clone()], 1.0, 10).unwrap();
        let s = Schedule {
            jobs: vec![admitted(0, vec![Segment::new(0..3, p.clone())])],
        };
        assert_eq!(verify(&inst(2.0), &s), Ok(()));
        if per_server > 0.0 {
            assert_nic_exceeded(verify(&inst(1.5), &s), H0, 0, 2.0, 1.5);
        } else {
            assert_eq!(verify(&inst(0.0), &s), Ok(()));
        }
    }
    // No reservation, or a parameter-server job: nothing reserved anywhere.
    assert_eq!(ring(1, 1, None).reserved_nic_bps(3), 0.0);
    let ps = Job::new(JobId(2), 0.0, PsJob::default());
    assert_eq!(ps.reserved_nic_bps(3), 0.0);
    assert_eq!(
        ps.demand_with_reservation(2, 1, 3),
        ps.demand_for(2, 1),
        "a PS job is charged its tasks only"
    );
}

/// A reservation that is not a finite positive number is refused when the
/// instance is built, naming the job and the field.
#[test]
fn reservations_must_be_finite_and_positive() {
    for b in [-1.0, 0.0, f64::NAN, f64::INFINITY] {
        let err = Instance::new(cluster(2, 5.0), vec![ring(7, 1, Some(b))], 1.0, 10).unwrap_err();
        let (entity, field) = match &err {
            ModelError::NonFinite { entity, field, .. }
            | ModelError::Negative { entity, field, .. }
            | ModelError::NonPositive { entity, field, .. } => (*entity, field.as_str()),
            other => panic!("b = {b}: unexpected {other:?}"),
        };
        assert_eq!(entity, Entity::Job(JobId(7)), "b = {b}");
        assert!(
            field.ends_with("reserved_bandwidth_bps"),
            "b = {b}: {field}"
        );
    }
}

/// Two rings reserving 3 each way share server h1 (NIC 5 per direction):
/// fine while they do not overlap in time, refused in the first slot they
/// do, with the use per direction `3 + 3` against 5. The workers' own NIC
/// demand adds to the reservation.
#[test]
fn verify_refuses_over_reserved_nics() {
    let jobs = vec![ring(0, 1, Some(3.0)), ring(1, 1, Some(3.0))];
    let inst = Instance::new(cluster(3, 5.0), jobs, 1.0, 20).unwrap();
    let schedule = |second: std::ops::Range<u32>| Schedule {
        jobs: vec![
            admitted(0, vec![run_seg(0..4, &[(H0, 2), (H1, 2)])]),
            admitted(1, vec![run_seg(second, &[(H1, 2), (H2, 2)])]),
        ],
    };
    assert_eq!(verify(&inst, &schedule(4..8)), Ok(()));
    assert_nic_exceeded(verify(&inst, &schedule(2..6)), H1, 2, 6.0, 5.0);
    // One of them on a single server reserves nothing: no conflict.
    let single = Schedule {
        jobs: vec![
            admitted(0, vec![run_seg(0..4, &[(H0, 2), (H1, 2)])]),
            admitted(1, vec![run_seg(2..6, &[(H1, 2)])]),
        ],
    };
    assert_eq!(verify(&inst, &single), Ok(()));

    // Workers that declare 1 each of NIC: 2·1 + 3 = 5 fits, a third
    // worker's 1 does not.
    let mut heavy = ring(0, 1, Some(3.0));
    if let Architecture::RingAllReduce(r) = &mut heavy.architecture {
        r.workers = WorkerCounts::Allowed(vec![4, 5]);
        r.worker.nic_bps = 1.0;
    }
    let inst = Instance::new(cluster(2, 5.0), vec![heavy], 1.0, 20).unwrap();
    let s = |list: &[(MachineId, u32)]| Schedule {
        jobs: vec![admitted(0, vec![run_seg(0..2, list)])],
    };
    assert_eq!(verify(&inst, &s(&[(H0, 2), (H1, 2)])), Ok(()));
    assert_nic_exceeded(verify(&inst, &s(&[(H0, 3), (H1, 2)])), H0, 0, 6.0, 5.0);
    // On one server the workers' 4 alone are charged.
    assert_eq!(verify(&inst, &s(&[(H0, 4)])), Ok(()));
}

/// A parameter-server task's NIC demand and a ring's reservation share the
/// machine's NIC.
#[test]
fn reservations_shrink_the_nic_left_to_other_tasks() {
    let ps = Job::new(
        JobId(1),
        0.0,
        PsJob {
            worker: Resources::zero().gpus(1.0).nic(1.0),
            ps: Resources::zero().cpu_cores(1.0).nic(2.0),
            ..PsJob::default()
        },
    );
    let inst = Instance::new(cluster(2, 5.0), vec![ring(0, 1, Some(3.0)), ps], 1.0, 20).unwrap();
    let s = Schedule {
        jobs: vec![
            admitted(0, vec![run_seg(0..4, &[(H0, 2), (H1, 2)])]),
            admitted(1, vec![Segment::new(0..4, vec![(H1, Tasks::new(1, 1))])]),
        ],
    };
    // h1: 3 (reservation) + 1 (worker) + 2 (PS) = 6 > 5.
    assert_nic_exceeded(verify(&inst, &s), H1, 0, 6.0, 5.0);
}

// ---------------------------------------------------------------------------
// The simulator
// ---------------------------------------------------------------------------

/// Runs scripted answers: at the first event at or after each time, its
/// actions (the script wakes itself at those times), and at each listed
/// job's completion, its actions; records what the view shows at every
/// event.
struct Script {
    steps: Vec<(f64, Vec<Action>)>,
    on_completion: Vec<(JobId, Vec<Action>)>,
    /// `(time, free NIC per direction of each machine)` at every event.
    seen: Vec<(f64, Vec<f64>)>,
    /// Jobs and placements whose rate the view is asked at every event.
    rates: Vec<(JobId, Placement)>,
    /// The rates, one list per event.
    rate_log: Vec<Vec<f64>>,
}

impl Script {
    fn new(steps: Vec<(f64, Vec<Action>)>) -> Self {
        Script {
            steps,
            on_completion: Vec::new(),
            seen: Vec::new(),
            rates: Vec::new(),
            rate_log: Vec::new(),
        }
    }

    /// The free NIC of each machine seen at the last event at `t`.
    fn free_nic_at(&self, t: f64) -> &[f64] {
        &self
            .seen
            .iter()
            .rev()
            .find(|(s, _)| close(*s, t))
            .unwrap_or_else(|| panic!("no event at {t}: {:?}", self.seen))
            .1
    }
}

impl Policy for Script {
    fn name(&self) -> String {
        "script".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, e: &Event) -> dmlsched::Result<Vec<Action>> {
        let now = view.now_s();
        self.seen
            .push((now, view.free_all().iter().map(|r| r.nic_bps).collect()));
        let mut rates = Vec::new();
        for (id, p) in &self.rates {
            let job = view.instance().job(*id).expect("known job");
            rates.push(view.rate(job, p)?);
        }
        self.rate_log.push(rates);
        let mut out = Vec::new();
        while self.steps.first().is_some_and(|(t, _)| *t <= now) {
            out.extend(self.steps.remove(0).1);
        }
        if let Event::Completion { job } = e
            && let Some(k) = self.on_completion.iter().position(|(j, _)| j == job)
        {
            out.extend(self.on_completion.remove(k).1);
        }
        Ok(out)
    }

    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        self.steps
            .first()
            .map(|(t, _)| *t)
            .filter(|&t| t > view.now_s())
    }
}

fn sim(inst: &Instance, policy: &mut Script) -> dmlsched::Result<dmlsched::sim::SimResult> {
    simulate(inst, policy, &SimOptions::default())
}

fn start(job: u32, list: &[(MachineId, u32)]) -> Action {
    Action::run(JobId(job), placement(list))
}

/// The per-iteration times of the common job with `b = 4`: 0.165 on one
/// server (internal bandwidth), 0.415 on two and 0.425 on three (the
/// reserved rate, without contention); 12 iterations take 1.98, 4.98 and
/// 5.1 seconds. The view's rate oracle agrees.
#[test]
fn a_reserving_ring_runs_at_its_reserved_rate() {
    for (list, tau) in [
        (vec![(H0, 4)], 0.165),
        (vec![(H0, 2), (H1, 2)], 0.415),
        (vec![(H0, 2), (H1, 1), (H2, 1)], 0.425),
    ] {
        let inst = Instance::new(cluster(3, 10.0), vec![ring(0, 12, Some(4.0))], 1.0, 20).unwrap();
        let mut policy = Script::new(vec![(0.0, vec![start(0, &list)]), (1.0, vec![])]);
        policy.rates = vec![(JobId(0), placement(&list))];
        let r = sim(&inst, &mut policy).unwrap();
        let finish = r.jobs[0].finish_s.unwrap();
        assert!(
            close(finish, 12.0 * tau),
            "{list:?}: finished at {finish}, expected {}",
            12.0 * tau
        );
        assert!(close(policy.rate_log[0][0], 1.0 / tau));
        // While it runs, each of its servers has 10 − 4 per direction left
        // when it spans several; a single server keeps all 10. The
        // completion releases the reservation.
        let left = if list.len() >= 2 { 6.0 } else { 10.0 };
        let mut expected = vec![10.0; 3];
        for &(m, _) in &list {
            expected[m.0 as usize] = left;
        }
        assert_eq!(policy.free_nic_at(1.0), expected.as_slice());
        assert_eq!(policy.free_nic_at(finish), &[10.0; 3]);
    }
}

/// Two reserving rings on the same two servers (2+2 each): neither slows
/// the other (both 12 × 0.415), and each server's NIC shows 10 − 2·4 = 2
/// per direction while both run. Two rings without a reservation on the
/// same servers contend (`k = 2`, `f = 2.5`: τ = 1.2·2.5/4 + 0.115 = 0.865);
/// a reserving ring beside a contending one leaves the latter at `k = 1`
/// (τ = 1.2/4 + 0.115 = 0.415, the external bandwidth being 4 too).
#[test]
fn reserving_rings_neither_suffer_nor_cause_contention() {
    let both = [(H0, 2), (H1, 2)];
    let case = |b0: Option<f64>, b1: Option<f64>| {
        let inst = Instance::new(
            cluster(2, 10.0),
            vec![ring(0, 12, b0), ring(1, 24, b1)],
            1.0,
            40,
        )
        .unwrap();
        let mut policy = Script::new(vec![(0.0, vec![start(0, &both), start(1, &both)])]);
        policy.rates = vec![(JobId(0), placement(&both))];
        let r = sim(&inst, &mut policy).unwrap();
        (r, policy)
    };
    // Both reserve.
    let (r, policy) = case(Some(4.0), Some(4.0));
    assert!(close(r.jobs[0].finish_s.unwrap(), 12.0 * 0.415));
    assert!(close(r.jobs[1].finish_s.unwrap(), 24.0 * 0.415));
    // At job 0's completion job 1 still holds 4 on each.
    assert_eq!(policy.free_nic_at(12.0 * 0.415), &[6.0, 6.0]);
    // Neither reserves: both contend, k = 2, until job 0 finishes at
    // 12 × 0.865; job 1 then did 12 iterations and runs its last 12 alone.
    let (r, _) = case(None, None);
    assert!(close(r.jobs[0].finish_s.unwrap(), 12.0 * 0.865));
    assert!(close(
        r.jobs[1].finish_s.unwrap(),
        12.0 * 0.865 + 12.0 * 0.415
    ));
    // Job 0 reserves, job 1 does not: job 1 is the only contender.
    let (r, _) = case(Some(4.0), None);
    assert!(close(r.jobs[0].finish_s.unwrap(), 12.0 * 0.415));
    assert!(close(r.jobs[1].finish_s.unwrap(), 24.0 * 0.415));
    // The rate oracle of a reserving ring ignores contending rings.
    let inst = Instance::new(
        cluster(2, 10.0),
        vec![ring(0, 12, Some(4.0)), ring(1, 24, None), ring(2, 24, None)],
        1.0,
        40,
    )
    .unwrap();
    let mut policy = Script::new(vec![(
        0.0,
        vec![start(1, &[(H0, 1), (H1, 1)]), start(2, &[(H0, 1), (H1, 1)])],
    )]);
    policy.rates = vec![(JobId(0), placement(&both))];
    policy.steps.push((1.0, vec![]));
    let r = sim(&inst, &mut policy).unwrap();
    assert_eq!(r.jobs[0].start_s, None);
    // The event at 1 s, after the two contending rings started.
    assert!(policy.rate_log.len() >= 2);
    assert!(policy.rate_log.iter().all(|r| close(r[0], 1.0 / 0.415)));
}

/// NIC 10 per direction: a ring reserving 6 on h0 and h1 leaves 4, so a
/// second one there is refused with the machine, the NIC use per direction
/// and the capacity — in one answer or later. Once the first completes, or
/// is preempted in the same answer, the second starts.
#[test]
fn the_simulator_refuses_over_reserved_nics_and_releases_reservations() {
    let two = [(H0, 2), (H1, 2)];
    let inst = |second_arrival: f64| {
        let mut jobs = vec![ring(0, 12, Some(6.0)), ring(1, 12, Some(6.0))];
        jobs[1].arrival_s = second_arrival;
        jobs[0].discipline = Discipline {
            elasticity: Elasticity::Rigid,
            preemptible: true,
        };
        Instance::new(cluster(2, 10.0), jobs, 1.0, 40).unwrap()
    };
    let refused = |r: dmlsched::Result<dmlsched::sim::SimResult>| match r {
        Err(Error::Sim(SimError::OverAllocation {
            job,
            machine,
            resource: ResourceKind::Nic,
            used,
            capacity,
            ..
        })) => {
            assert_eq!((job, machine), (JobId(1), H0));
            assert!(
                close(used, 12.0) && close(capacity, 10.0),
                "{used} of {capacity}"
            );
        }
        other => panic!("expected a NIC over-allocation, got {other:?}"),
    };
    // Both at once.
    let mut p = Script::new(vec![(0.0, vec![start(0, &two), start(1, &two)])]);
    refused(sim(&inst(0.0), &mut p));
    // The second when the first runs.
    let mut p = Script::new(vec![
        (0.0, vec![start(0, &two)]),
        (1.0, vec![start(1, &two)]),
    ]);
    refused(sim(&inst(1.0), &mut p));
    // Without the reservation the same two 2+2 rings fit (GPUs and CPUs
    // allow them; the workers declare no NIC).
    let mut plain = inst(0.0);
    let mut jobs = plain.jobs().to_vec();
    for j in &mut jobs {
        if let Architecture::RingAllReduce(r) = &mut j.architecture {
            r.reserved_bandwidth_bps = None;
        }
    }
    plain = Instance::new(plain.cluster().clone(), jobs, 1.0, 40).unwrap();
    let mut p = Script::new(vec![(0.0, vec![start(0, &two), start(1, &two)])]);
    assert!(sim(&plain, &mut p).is_ok());

    // After the first completes (12 iterations of 1.2/6 + 0.115 = 0.315),
    // the second fits.
    let t0 = 12.0 * 0.315;
    let mut p = Script::new(vec![(0.0, vec![start(0, &two)])]);
    p.on_completion = vec![(JobId(0), vec![start(1, &two)])];
    let r = sim(&inst(1.0), &mut p).unwrap();
    assert!(close(r.jobs[1].start_s.unwrap(), t0));
    assert_eq!(p.free_nic_at(1.0), &[4.0, 4.0]);
    // Preempting the first in the same answer frees its reservation; it
    // resumes where it ran when the second completes.
    let mut p = Script::new(vec![
        (0.0, vec![start(0, &two)]),
        (1.0, vec![Action::Preempt { job: JobId(0) }, start(1, &two)]),
    ]);
    p.on_completion = vec![(JobId(1), vec![start(0, &two)])];
    let r = sim(&inst(1.0), &mut p).unwrap();
    assert!(close(r.jobs[1].finish_s.unwrap(), 1.0 + t0));
    // 1 s of its work before the pause, the rest after it: 2·t0 in all.
    assert!(close(r.jobs[0].finish_s.unwrap(), 2.0 * t0));
    assert_eq!(r.jobs[0].preemptions, 1);
}

/// Plans carry their reservations into future slots: two plans reserving 6
/// on h0 and h1 may follow each other but not overlap.
#[test]
fn plans_reserve_in_their_future_slots() {
    let inst = Instance::new(
        cluster(2, 10.0),
        vec![ring(0, 12, Some(6.0)), ring(1, 12, Some(6.0))],
        1.0,
        40,
    )
    .unwrap();
    let plan = |job: u32, slots: std::ops::Range<u32>| Action::Reserve {
        job: JobId(job),
        segments: vec![run_seg(slots, &[(H0, 2), (H1, 2)])],
    };
    let mut p = Script::new(vec![(0.0, vec![plan(0, 0..5), plan(1, 5..10)])]);
    let r = sim(&inst, &mut p).unwrap();
    assert!(close(r.jobs[1].start_s.unwrap(), 5.0));
    // τ = 1.2/6 + 0.115 = 0.315 at the reserved 6.
    assert!(close(r.jobs[1].finish_s.unwrap(), 5.0 + 12.0 * 0.315));
    let mut p = Script::new(vec![(0.0, vec![plan(0, 0..5), plan(1, 3..8)])]);
    match sim(&inst, &mut p) {
        Err(Error::Sim(SimError::OverAllocation {
            job: JobId(1),
            resource: ResourceKind::Nic,
            slot: 3,
            used,
            capacity,
            ..
        })) => assert!(close(used, 12.0) && close(capacity, 10.0)),
        other => panic!("expected a NIC over-allocation in slot 3, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// FIFO-FF
// ---------------------------------------------------------------------------

/// A ring of `w` workers that runs exactly `d` slots on any placement:
/// no model bytes, no per-server overhead (see [`ff_cluster`]), one
/// iteration of compute per slot.
fn ff_job(id: u32, w: u32, d: u64) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(w),
            iterations: d,
            backward_per_iteration_s: 1.0,
            reserved_bandwidth_bps: Some(2.0),
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
            ..RarJob::default()
        },
    )
}

/// Two servers with 4 GPUs and a NIC of 5 per direction (a
/// both-directions pool of 10); no per-server overhead.
fn ff_cluster() -> Cluster {
    let mut c = Cluster::homogeneous(
        2,
        Resources::zero().gpus(4.0).cpu_cores(16.0).nic(5.0),
        20.0,
    );
    c.ring.overhead_per_server_s = 0.0;
    c
}

/// FIFO-FF, recording the free NIC it is shown at each event.
struct Watched {
    inner: FifoFirstFitBandwidth,
    seen: Vec<(f64, Vec<f64>)>,
}

impl Policy for Watched {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn on_event(&mut self, view: &SimView<'_>, e: &Event) -> dmlsched::Result<Vec<Action>> {
        self.seen.push((
            view.now_s(),
            view.free_all().iter().map(|r| r.nic_bps).collect(),
        ));
        self.inner.on_event(view, e)
    }
}

fn allocation_of(r: &dmlsched::sim::SimResult, job: u32) -> Placement {
    r.allocations
        .iter()
        .find(|a| a.job == JobId(job))
        .map(|a| a.placement.clone())
        .unwrap_or_default()
}

/// A (w = 4, 3 slots), B (w = 6, 2 slots), C (w = 2, 1 slot) at slot 0, in
/// that order, `b = 2`. Strict: A on h0 in [0, 3); B needs 6 GPUs and waits;
/// C waits behind it; at 3, B takes h0's 4 and h1's 2 (reserving 2 per
/// direction, 4 of the pool, on each) in [3, 5), and C the 2 GPUs left on
/// h1 in [3, 4) (one server: no reservation). With backfill C runs on h1
/// in [0, 1).
#[test]
fn fifo_ff_on_two_servers() {
    let jobs = vec![ff_job(0, 4, 3), ff_job(1, 6, 2), ff_job(2, 2, 1)];
    let inst = Instance::new(ff_cluster(), jobs, 1.0, 20).unwrap();
    let mut opts = SimOptions::default();
    opts.decisions = Decisions::EventDriven { ticks: false };
    let times = |r: &dmlsched::sim::SimResult| -> Vec<(f64, f64)> {
        r.jobs
            .iter()
            .map(|j| (j.start_s.unwrap(), j.finish_s.unwrap()))
            .collect()
    };

    let mut strict = Watched {
        inner: FifoFirstFitBandwidth::default(),
        seen: Vec::new(),
    };
    let r = simulate(&inst, &mut strict, &opts).unwrap();
    assert_eq!(times(&r), vec![(0.0, 3.0), (3.0, 5.0), (3.0, 4.0)]);
    assert_eq!(allocation_of(&r, 0), placement(&[(H0, 4)]));
    assert_eq!(allocation_of(&r, 1), placement(&[(H0, 4), (H1, 2)]));
    assert_eq!(allocation_of(&r, 2), placement(&[(H1, 2)]));
    // At C's completion (4) B holds 2 per direction on each server: 5 − 2.
    let at4 = strict.seen.iter().find(|(t, _)| *t == 4.0).unwrap();
    assert_eq!(at4.1, vec![3.0, 3.0]);
    // The run is a valid schedule.
    verify(&inst, &r.to_schedule(&inst)).unwrap();

    let mut backfill = Watched {
        inner: FifoFirstFitBandwidth { backfill: true },
        seen: Vec::new(),
    };
    let r = simulate(&inst, &mut backfill, &opts).unwrap();
    assert_eq!(times(&r), vec![(0.0, 3.0), (3.0, 5.0), (0.0, 1.0)]);
    assert_eq!(allocation_of(&r, 2), placement(&[(H1, 2)]));
    assert_eq!(allocation_of(&r, 1), placement(&[(H0, 4), (H1, 2)]));
    verify(&inst, &r.to_schedule(&inst)).unwrap();
}

/// With NIC 1.5 per direction (pool 3 < 2b = 4) B can never be embedded
/// across the two servers: strict FIFO stalls behind it, backfill runs A
/// and C and leaves B waiting.
#[test]
fn fifo_ff_skips_servers_without_room_for_the_reservation() {
    let mut c = ff_cluster();
    for m in &mut c.machines {
        m.capacity.nic_bps = 1.5;
    }
    let jobs = vec![ff_job(0, 4, 3), ff_job(1, 6, 2), ff_job(2, 2, 1)];
    let inst = Instance::new(c, jobs, 1.0, 20).unwrap();
    let r = simulate(
        &inst,
        &mut FifoFirstFitBandwidth::default(),
        &SimOptions::default(),
    )
    .unwrap();
    assert!(r.stalled);
    assert_eq!(r.jobs[1].start_s, None);
    assert_eq!(r.jobs[2].start_s, None);
    let r = simulate(
        &inst,
        &mut FifoFirstFitBandwidth { backfill: true },
        &SimOptions::default(),
    )
    .unwrap();
    assert!(r.stalled);
    assert_eq!(r.jobs[1].start_s, None);
    assert_eq!(
        (r.jobs[2].start_s, r.jobs[2].finish_s),
        (Some(0.0), Some(1.0))
    );
}
