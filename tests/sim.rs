//! Simulator tests: hand-checked timelines, every kind of rejected action,
//! plans, progress modes, and invariants as properties.

mod common;

use dmlsched::Error;
use dmlsched::baselines::Fifo;
use dmlsched::model::*;
use dmlsched::schedule::{Segment, Tasks, verify};
use dmlsched::sim::*;
use dmlsched::timing::ProgressMode;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A PS job whose iteration takes exactly `compute_s` (no gradient bytes):
/// `minibatches` mini-batches, one worker GPU.
/// Job `id`: [`common::ps_job`] with up to `max_workers` workers and as many PSs.
fn elastic(id: u32, arrival_s: f64, minibatches: u32, compute_s: f64, max_workers: u32) -> Job {
    common::job(
        id,
        arrival_s,
        PsJob {
            max_workers,
            max_ps: max_workers,
            ..common::ps_job(minibatches, compute_s)
        },
    )
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

/// Applies fixed actions at given event counts (a scripted policy).
struct Script {
    steps: Vec<(usize, Vec<Action>)>,
    seen: usize,
}

impl Policy for Script {
    fn name(&self) -> String {
        "script".into()
    }
    fn on_event(&mut self, _v: &SimView<'_>, _e: &Event) -> dmlsched::Result<Vec<Action>> {
        let k = self.seen;
        self.seen += 1;
        Ok(self
            .steps
            .iter()
            .find(|(at, _)| *at == k)
            .map(|(_, a)| a.clone())
            .unwrap_or_default())
    }
}

fn script(steps: Vec<(usize, Vec<Action>)>) -> Script {
    Script { steps, seen: 0 }
}

fn sim_err(r: dmlsched::Result<SimResult>) -> SimError {
    match r {
        Err(Error::Sim(e)) => e,
        other => panic!("expected a simulator error, got {other:?}"),
    }
}

#[test]
fn fifo_two_jobs_hand_timeline() {
    // One GPU. Job 0: 100 × 0.5 s = 50 s from t = 0; job 1 arrives at 10 s,
    // waits until 50, finishes at 100. Utilization 100% over [0, 100].
    let jobs = vec![elastic(0, 0.0, 100, 0.5, 1), elastic(1, 10.0, 100, 0.5, 1)];
    let inst = Instance::new(cluster(1, 1.0), jobs, 60.0, 10).unwrap();
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].start_s, Some(0.0));
    assert_eq!(r.jobs[0].finish_s, Some(50.0));
    assert_eq!(r.jobs[1].start_s, Some(50.0));
    assert_eq!(r.jobs[1].finish_s, Some(100.0));
    assert_eq!(r.jobs[1].queueing_s, Some(40.0));
    assert_eq!(r.jobs[1].jct_s, Some(90.0));
    assert_eq!(r.jobs[1].gpu_seconds, 50.0);
    // Completion slots: 50 s is in slot 0; 100 s is in slot 1 (60–120).
    assert_eq!(r.jobs[0].completion_slot, Some(0));
    assert_eq!(r.jobs[1].completion_slot, Some(1));
    let s = r.summary();
    assert_eq!(s.completed, 2);
    assert_eq!(s.avg_jct_s, 70.0);
    assert_eq!(s.makespan_s, 100.0);
    assert!((s.gpu_utilization - 1.0).abs() < 1e-12);
    assert_eq!(s.total_utility, 2.0); // constant utility 1 by default
    assert!(!r.stalled);
}

#[test]
fn more_workers_run_faster_and_utility_uses_slots() {
    // Two workers: 100 mini-batches at 2 per 0.5 s = 25 s.
    let mut j = elastic(0, 0.0, 100, 0.5, 2);
    j.utility = Utility::DeadlineStep {
        value: 5.0,
        deadline_slots: 0,
    };
    let inst = Instance::new(cluster(1, 2.0), vec![j], 60.0, 10).unwrap();
    let mut p = script(vec![(
        0,
        vec![Action::run(
            JobId(0),
            vec![(MachineId(0), Tasks::new(2, 1))],
        )],
    )]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(25.0));
    assert_eq!(r.jobs[0].utility, 5.0);
}

#[test]
fn over_allocation_names_job_machine_and_resource() {
    let inst = Instance::new(cluster(1, 1.0), vec![elastic(3, 0.0, 10, 1.0, 2)], 60.0, 10).unwrap();
    let mut p = script(vec![(
        0,
        vec![Action::run(
            JobId(3),
            vec![(MachineId(0), Tasks::new(2, 1))],
        )],
    )]);
    match sim_err(simulate(&inst, &mut p, &SimOptions::default())) {
        SimError::OverAllocation {
            job,
            machine,
            resource,
            used,
            capacity,
            ..
        } => {
            assert_eq!(job, JobId(3));
            assert_eq!(machine, MachineId(0));
            assert_eq!(resource, ResourceKind::Gpu);
            assert_eq!((used, capacity), (2.0, 1.0));
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn invalid_allocations_are_typed_errors() {
    let inst = Instance::new(cluster(1, 4.0), vec![elastic(0, 0.0, 10, 1.0, 2)], 60.0, 10).unwrap();
    // Workers without a PS.
    let mut p = script(vec![(
        0,
        vec![Action::run(
            JobId(0),
            vec![(MachineId(0), Tasks::new(1, 0))],
        )],
    )]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::InvalidAllocation { .. }
    ));
    // Unknown job.
    let mut p = script(vec![(0, vec![Action::Reject { job: JobId(9) }])]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::UnknownJob { .. }
    ));
}

#[test]
fn action_before_arrival_is_rejected() {
    let jobs = vec![elastic(0, 0.0, 10, 1.0, 1), elastic(1, 100.0, 10, 1.0, 1)];
    let inst = Instance::new(cluster(1, 4.0), jobs, 60.0, 10).unwrap();
    let mut p = script(vec![(
        0,
        vec![Action::run(
            JobId(1),
            vec![(MachineId(0), Tasks::new(1, 1))],
        )],
    )]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::NotArrived { job: JobId(1), .. }
    ));
}

#[test]
fn non_preemptible_and_rigid_rules() {
    let mut j = elastic(0, 0.0, 100, 1.0, 2);
    j.discipline = Discipline::RIGID_GANG;
    let j2 = elastic(1, 5.0, 10, 1.0, 1);
    let inst = Instance::new(cluster(2, 4.0), vec![j, j2], 60.0, 10).unwrap();
    let start = Action::run(JobId(0), vec![(MachineId(0), Tasks::new(2, 2))]);
    // Preempting a non-preemptible job at the next event.
    let mut p = script(vec![
        (0, vec![start.clone()]),
        (1, vec![Action::Preempt { job: JobId(0) }]),
    ]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::NotPreemptible { job: JobId(0), .. }
    ));
    // Moving a running rigid job to another machine.
    let mut p = script(vec![
        (0, vec![start]),
        (
            1,
            vec![Action::run(
                JobId(0),
                vec![(MachineId(1), Tasks::new(2, 2))],
            )],
        ),
    ]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::RigidResize { job: JobId(0), .. }
    ));
}

#[test]
fn preemption_and_reconfiguration_are_charged() {
    // Elastic job: 2 workers from 0 to 10 s (20 mini-batches at 1 s each per
    // worker → 20 done), then shrunk to 1 worker at 10 s with a 5 s
    // reconfiguration: 80 left at 1 per second after 15 s → finishes at 95.
    let mut j = elastic(0, 0.0, 100, 1.0, 2);
    j.reconfiguration_s = 5.0;
    let other = elastic(1, 10.0, 1, 1.0, 1);
    let inst = Instance::new(cluster(1, 2.0), vec![j, other], 60.0, 10).unwrap();
    let mut p = script(vec![
        (
            0,
            vec![Action::run(
                JobId(0),
                vec![(MachineId(0), Tasks::new(2, 2))],
            )],
        ),
        (
            1,
            vec![Action::run(
                JobId(0),
                vec![(MachineId(0), Tasks::new(1, 1))],
            )],
        ),
    ]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(95.0));
    assert_eq!(r.jobs[0].reconfigurations, 1);
    assert_eq!(r.jobs[0].preemptions, 0);
    // Job 1 never ran: the run ends stalled with it unfinished.
    assert!(r.stalled);
    assert_eq!(r.jobs[1].finish_s, None);
    assert_eq!(r.jobs[1].utility, 0.0);
}

#[test]
fn pause_counts_a_preemption() {
    let j = elastic(0, 0.0, 100, 1.0, 1);
    let other = elastic(1, 10.0, 10, 1.0, 1);
    let inst = Instance::new(cluster(1, 1.0), vec![j, other], 60.0, 10).unwrap();
    // At job 1's arrival, pause job 0 and run job 1 (10 s); job 0 never
    // resumes in this script.
    let mut p = script(vec![
        (
            0,
            vec![Action::run(
                JobId(0),
                vec![(MachineId(0), Tasks::new(1, 1))],
            )],
        ),
        (
            1,
            vec![
                Action::Preempt { job: JobId(0) },
                Action::run(JobId(1), vec![(MachineId(0), Tasks::new(1, 1))]),
            ],
        ),
    ]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].preemptions, 1);
    assert_eq!(r.jobs[0].remaining_work, 90.0);
    assert_eq!(r.jobs[1].finish_s, Some(20.0));
}

fn rar_job(id: u32, workers: u32, iterations: u64) -> Job {
    let rar = RarJob {
        workers: WorkerCounts::Fixed(workers),
        iterations,
        convergence_iterations: None,
        model_bytes: 1e8,
        minibatch_size: 32,
        forward_per_sample_s: 0.002,
        backward_per_iteration_s: 0.1,
        reserved_bandwidth_bps: None,
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9),
    };
    Job::new(JobId(id), 0.0, Architecture::RingAllReduce(rar))
}

fn ring_cluster() -> Cluster {
    let mut c = cluster(2, 2.0);
    c.ring = {
        let mut built = RingParams::default();
        built.external_bandwidth_bps = 1.25e9;
        built.reduction_speed_bps = 2e10;
        built.overhead_per_server_s = 0.005;
        built.contender_ratio = 1.0;
        built.degradation = Degradation::Linear { alpha: 0.1 };
        built
    };
    c
}

#[test]
fn ring_contention_slows_both_rings() {
    // Two 2-GPU rings, each with one worker on each of the two servers:
    // p = 2, f = 2 + 0.1 = 2.1, B = 1.25e9 / 2.1.
    // τ = 2·(1e8/2)·1/B + (1e8/2)/2e10 + 2·0.005 + 0.064 + 0.1
    //   = 0.168 + 0.0025 + 0.01 + 0.164 = 0.3445 s; 1000 iterations = 344.5 s.
    let inst = Instance::new(
        ring_cluster(),
        vec![rar_job(0, 2, 1000), rar_job(1, 2, 1000)],
        60.0,
        100,
    )
    .unwrap();
    let spread = vec![
        (MachineId(0), Tasks::new(1, 0)),
        (MachineId(1), Tasks::new(1, 0)),
    ];
    let mut p = script(vec![(
        1,
        vec![
            Action::run(JobId(0), spread.clone()),
            Action::run(JobId(1), spread),
        ],
    )]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    for j in &r.jobs {
        assert!((j.finish_s.unwrap() - 344.5).abs() < 1e-9, "{j:?}");
    }
    // Alone: f = 1, τ = 0.08 + 0.0025 + 0.01 + 0.164 = 0.2565 → 256.5 s.
    let inst = Instance::new(ring_cluster(), vec![rar_job(0, 2, 1000)], 60.0, 100).unwrap();
    let spread = vec![
        (MachineId(0), Tasks::new(1, 0)),
        (MachineId(1), Tasks::new(1, 0)),
    ];
    let mut p = script(vec![(0, vec![Action::run(JobId(0), spread)])]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert!((r.jobs[0].finish_s.unwrap() - 256.5).abs() < 1e-9);
}

#[test]
fn contention_changes_when_a_ring_finishes() {
    // Ring 0 (100 iterations) and ring 1 (1000) share both servers:
    // τ = 0.3445 while both run; ring 0 ends at 34.45 s, having let ring 1 do
    // 100 iterations; ring 1 then runs alone at 0.2565: 900 × 0.2565 = 230.85.
    let inst = Instance::new(
        ring_cluster(),
        vec![rar_job(0, 2, 100), rar_job(1, 2, 1000)],
        60.0,
        100,
    )
    .unwrap();
    let spread = vec![
        (MachineId(0), Tasks::new(1, 0)),
        (MachineId(1), Tasks::new(1, 0)),
    ];
    let mut p = script(vec![(
        1,
        vec![
            Action::run(JobId(0), spread.clone()),
            Action::run(JobId(1), spread),
        ],
    )]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert!((r.jobs[0].finish_s.unwrap() - 34.45).abs() < 1e-9);
    assert!((r.jobs[1].finish_s.unwrap() - (34.45 + 230.85)).abs() < 1e-9);
}

#[test]
fn plans_run_by_slot_and_are_checked() {
    // Slot 10 s. Job 0 needs 40 mini-batches at 1 s: plan 2 workers in
    // slot 0 (20 done), nothing in slot 1, 2 workers in slot 2 → done at 30 s.
    let inst = Instance::new(cluster(1, 2.0), vec![elastic(0, 0.0, 40, 1.0, 2)], 10.0, 5).unwrap();
    let plan = vec![
        Segment::new(0..1, vec![(MachineId(0), Tasks::new(2, 1))]),
        Segment::new(2..3, vec![(MachineId(0), Tasks::new(2, 1))]),
    ];
    let mut p = script(vec![(
        0,
        vec![Action::Reserve {
            job: JobId(0),
            segments: plan,
        }],
    )]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(30.0));
    assert_eq!(r.jobs[0].gpu_seconds, 40.0);
    assert_eq!(r.jobs[0].preemptions, 0);
    let sched = r.to_schedule(&inst);
    assert_eq!(sched.jobs[0].segments.len(), 2);
    verify(&inst, &sched).unwrap();

    // Two plans that overlap on the GPU: the second is refused with its slot.
    let jobs = vec![elastic(0, 0.0, 40, 1.0, 2), elastic(1, 0.0, 40, 1.0, 2)];
    let inst = Instance::new(cluster(1, 2.0), jobs, 10.0, 5).unwrap();
    let a = vec![Segment::new(0..2, vec![(MachineId(0), Tasks::new(2, 1))])];
    let b = vec![Segment::new(1..3, vec![(MachineId(0), Tasks::new(1, 1))])];
    let mut p = script(vec![(
        0,
        vec![
            Action::Reserve {
                job: JobId(0),
                segments: a,
            },
            Action::Reserve {
                job: JobId(1),
                segments: b,
            },
        ],
    )]);
    match sim_err(simulate(&inst, &mut p, &SimOptions::default())) {
        SimError::OverAllocation {
            job,
            slot,
            resource,
            ..
        } => {
            assert_eq!((job, slot, resource), (JobId(1), 1, ResourceKind::Gpu));
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn plans_may_swap_machines_at_a_boundary() {
    // Two 2-GPU machines, slot 10 s. Job 0 runs on machine 0 then machine 1,
    // job 1 the other way round: every slot fits, but whichever plan is
    // switched first meets the other's old load unless both are released
    // first.
    let jobs = vec![elastic(0, 0.0, 40, 1.0, 2), elastic(1, 0.0, 40, 1.0, 2)];
    let inst = Instance::new(cluster(2, 2.0), jobs, 10.0, 5).unwrap();
    let on = |m: u32, slots: std::ops::Range<u32>| {
        Segment::new(slots, vec![(MachineId(m), Tasks::new(2, 1))])
    };
    let mut p = script(vec![(
        0,
        vec![
            Action::Reserve {
                job: JobId(0),
                segments: vec![on(0, 0..1), on(1, 1..2)],
            },
            Action::Reserve {
                job: JobId(1),
                segments: vec![on(1, 0..1), on(0, 1..2)],
            },
        ],
    )]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    for j in &r.jobs {
        assert_eq!(j.finish_s, Some(20.0));
        assert_eq!(j.preemptions, 0);
        assert_eq!(j.reconfigurations, 1);
    }
    verify(&inst, &r.to_schedule(&inst)).unwrap();
}

#[test]
fn plans_cannot_start_in_the_past_or_pass_the_horizon() {
    let jobs = vec![elastic(0, 0.0, 40, 1.0, 2), elastic(1, 15.0, 40, 1.0, 2)];
    let inst = Instance::new(cluster(1, 2.0), jobs, 10.0, 5).unwrap();
    // Job 1 arrives at 15 s (inside slot 1): slot 0 is over.
    let late = vec![Segment::new(0..2, vec![(MachineId(0), Tasks::new(1, 1))])];
    let mut p = script(vec![(
        1,
        vec![Action::Reserve {
            job: JobId(1),
            segments: late,
        }],
    )]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::BadPlan { job: JobId(1), .. }
    ));
    // The slot in progress may be planned: the job runs from 15 s, for the
    // 5 s left of slot 1 and all of slot 2.
    let now = vec![Segment::new(1..3, vec![(MachineId(0), Tasks::new(1, 1))])];
    let mut p = script(vec![(
        1,
        vec![Action::Reserve {
            job: JobId(1),
            segments: now,
        }],
    )]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[1].start_s, Some(15.0));
    let long = vec![Segment::new(2..9, vec![(MachineId(0), Tasks::new(1, 1))])];
    let mut p = script(vec![(
        1,
        vec![Action::Reserve {
            job: JobId(1),
            segments: long,
        }],
    )]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::InvalidAllocation { .. }
    ));
}

#[test]
fn floor_mode_counts_whole_iterations_per_slot() {
    // τ = 3 s, slot 10 s: 3 iterations per slot (not 3.33). 10 mini-batches
    // with one worker → 4 slots (3+3+3+1), finishing at the end of slot 3.
    let inst = Instance::new(cluster(1, 1.0), vec![elastic(0, 0.0, 10, 3.0, 1)], 10.0, 10).unwrap();
    let mut opts = SimOptions::default();
    opts.progress = ProgressMode::Floor;
    opts.decisions = Decisions::SlotBoundaries;
    let r = simulate(&inst, &mut Fifo::default(), &opts).unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(40.0));
    // Fractional: 30 s.
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(30.0));
    // τ longer than a slot: no progress is an error, not an endless loop.
    let inst = Instance::new(
        cluster(1, 1.0),
        vec![elastic(0, 0.0, 10, 30.0, 1)],
        10.0,
        10,
    )
    .unwrap();
    assert!(matches!(
        sim_err(simulate(&inst, &mut Fifo::default(), &opts)),
        SimError::NoProgress { job: JobId(0), .. }
    ));
    // Floor without slot decisions is refused.
    let mut bad = SimOptions::default();
    bad.progress = ProgressMode::Floor;
    assert!(matches!(
        sim_err(simulate(&inst, &mut Fifo::default(), &bad)),
        SimError::BadOptions { .. }
    ));
}

#[test]
fn slot_decisions_wait_for_the_boundary() {
    // Job arrives at 5 s; decisions only at boundaries of 10 s: starts at 10.
    let inst = Instance::new(cluster(1, 1.0), vec![elastic(0, 5.0, 10, 1.0, 1)], 10.0, 10).unwrap();
    let mut opts = SimOptions::default();
    opts.decisions = Decisions::SlotBoundaries;
    let r = simulate(&inst, &mut Fifo::default(), &opts).unwrap();
    assert_eq!(r.jobs[0].start_s, Some(10.0));
    assert_eq!(r.jobs[0].finish_s, Some(20.0));
}

#[test]
fn horizon_stop_leaves_jobs_unfinished() {
    let inst = Instance::new(cluster(1, 1.0), vec![elastic(0, 0.0, 100, 1.0, 1)], 10.0, 5).unwrap();
    let mut opts = SimOptions::default();
    opts.stop = StopAt::Horizon;
    let r = simulate(&inst, &mut Fifo::default(), &opts).unwrap();
    assert_eq!(r.end_s, 50.0);
    assert_eq!(r.jobs[0].finish_s, None);
    assert_eq!(r.jobs[0].remaining_work, 50.0);
    assert_eq!(r.jobs[0].gpu_seconds, 50.0);
}

// ---------------------------------------------------------------- properties

fn random_instance(seed: u64, n: usize, machines: u32, slot_s: f64) -> Instance {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut jobs = Vec::new();
    for i in 0..n {
        // Arrivals and iteration times on slot-friendly values.
        let arrival = f64::from(rng.random_range(0u32..20)) * slot_s;
        let w: u32 = rng.random_range(1..=4);
        let mut j = elastic(i as u32, arrival, rng.random_range(1..40) * w, 1.0, w);
        if rng.random_range(0..2) == 0 {
            j.discipline = Discipline::RIGID_GANG;
        }
        jobs.push(j);
    }
    Instance::new(cluster(machines, 4.0), jobs, slot_s, 10_000).unwrap()
}

/// Per machine and instant, the sum of demands from the allocation log.
fn max_overuse(inst: &Instance, r: &SimResult) -> f64 {
    let mut times: Vec<f64> = r
        .allocations
        .iter()
        .flat_map(|a| [a.from_s, a.to_s])
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut worst = 0.0f64;
    for w in times.windows(2) {
        let mid = 0.5 * (w[0] + w[1]);
        for m in &inst.cluster().machines {
            let mut used = Resources::zero();
            for a in r
                .allocations
                .iter()
                .filter(|a| a.from_s <= mid && mid < a.to_s)
            {
                let job = inst.job(a.job).unwrap();
                for (mm, t) in &a.placement {
                    if *mm == m.id {
                        used = used.plus(&job.demand_for(t.workers, t.ps));
                    }
                }
            }
            for (k, v) in used.iter() {
                worst = worst.max(v - m.capacity.get(k));
            }
        }
    }
    worst
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/sim.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn invariants_hold_under_fifo_backfill(seed in 0u64..10_000, n in 1usize..25, machines in 1u32..4) {
        let inst = random_instance(seed, n, machines, 7.0);
        let mut policy = Fifo { backfill: true, ..Fifo::default() };
        let r = simulate(&inst, &mut policy, &SimOptions::default()).unwrap();
        // No over-allocation at any instant.
        prop_assert!(max_overuse(&inst, &r) <= 1e-9);
        for (job, rec) in inst.jobs().iter().zip(&r.jobs) {
            // Every job fits an empty machine of 4 GPUs, so all complete.
            let f = rec.finish_s.unwrap();
            prop_assert!(rec.start_s.unwrap() >= job.arrival_s);
            prop_assert!(f > rec.start_s.unwrap());
            // Whole workload done: Σ over the job's allocations of
            // workers × duration / τ (τ = 1 s) = its mini-batches.
            let done: f64 = r.allocations.iter().filter(|a| a.job == job.id)
                .map(|a| f64::from(a.placement.total().workers) * (a.to_s - a.from_s))
                .sum();
            prop_assert!((done - total_work(job)).abs() <= 1e-6 * total_work(job));
            prop_assert_eq!(rec.remaining_work, 0.0);
        }
        // Time is monotone: the utilization steps and allocation ends.
        prop_assert!(r.utilization.windows(2).all(|w| w[0].time_s <= w[1].time_s));
        prop_assert!(r.allocations.iter().all(|a| a.from_s <= a.to_s));
        // Same input, same result.
        let mut again = simulate(&inst, &mut Fifo { backfill: true, ..Fifo::default() }, &SimOptions::default()).unwrap();
        again.decision_time_s = r.decision_time_s;
        prop_assert_eq!(&again, &r);
    }

    #[test]
    fn slot_aligned_runs_pass_verify(seed in 0u64..10_000, n in 1usize..15) {
        // τ = 1 s, slot 1 s and integral work: every change is on a boundary.
        let inst = random_instance(seed, n, 2, 1.0);
        let mut opts = SimOptions::default();
        opts.decisions = Decisions::SlotBoundaries;
        let r = simulate(&inst, &mut Fifo::default(), &opts).unwrap();
        prop_assert!(r.jobs.iter().all(|j| j.finish_s.is_some()));
        let sched = r.to_schedule(&inst);
        prop_assert!(verify(&inst, &sched).is_ok(), "{:?}", verify(&inst, &sched));
    }
}

#[test]
fn rigid_job_resumes_only_where_it_ran() {
    // A rigid preemptible job paused on machine 0 may not resume on machine 1.
    let mut j = elastic(0, 0.0, 100, 1.0, 1);
    j.discipline = Discipline {
        elasticity: Elasticity::Rigid,
        preemptible: true,
    };
    let other = elastic(1, 5.0, 10, 1.0, 1);
    let inst = Instance::new(cluster(2, 1.0), vec![j, other], 60.0, 10).unwrap();
    let mut p = script(vec![
        (
            0,
            vec![Action::run(
                JobId(0),
                vec![(MachineId(0), Tasks::new(1, 1))],
            )],
        ),
        (
            1,
            vec![
                Action::pause(JobId(0)),
                Action::run(JobId(0), vec![(MachineId(1), Tasks::new(1, 1))]),
            ],
        ),
    ]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::RigidResize { job: JobId(0), .. }
    ));
    // Resuming on the same machine is fine.
    let mut p = script(vec![
        (
            0,
            vec![Action::run(
                JobId(0),
                vec![(MachineId(0), Tasks::new(1, 1))],
            )],
        ),
        (
            1,
            vec![
                Action::pause(JobId(0)),
                Action::run(JobId(0), vec![(MachineId(0), Tasks::new(1, 1))]),
            ],
        ),
    ]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    // A decision is a transaction and the last action for a job counts:
    // pausing and resuming on the same placement in one answer changes
    // nothing (no preemption, no reconfiguration).
    assert_eq!(r.jobs[0].preemptions, 0);
    assert_eq!(r.jobs[0].reconfigurations, 0);
    assert_eq!(r.jobs[0].finish_s, Some(100.0));
}

#[test]
fn zero_nic_is_fine_without_gradients_and_an_error_with_them() {
    let mut j = elastic(0, 0.0, 10, 1.0, 1);
    if let Architecture::ParameterServer(p) = &mut j.architecture {
        p.worker.nic_bps = 0.0;
    }
    let inst = Instance::new(cluster(1, 1.0), vec![j.clone()], 60.0, 10).unwrap();
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].finish_s, Some(10.0));
    if let Architecture::ParameterServer(p) = &mut j.architecture {
        p.gradient_bytes = 1e6;
    }
    let inst = Instance::new(cluster(1, 1.0), vec![j], 60.0, 10).unwrap();
    assert!(matches!(
        simulate(&inst, &mut Fifo::default(), &SimOptions::default()),
        Err(Error::Timing(_))
    ));
}

// ------------------------------------------------ decisions as transactions

/// Jobs `0..n` arrive at 0 with 100 mini-batches of 1 s on one GPU each;
/// job `n` arrives at 10 s as the trigger of the decision under test.
fn transaction_instance(n: u32) -> Instance {
    let mut jobs: Vec<Job> = (0..n).map(|i| elastic(i, 0.0, 100, 1.0, 1)).collect();
    jobs.push(elastic(n, 10.0, 100, 1.0, 1));
    Instance::new(cluster(n, 1.0), jobs, 60.0, 10).unwrap()
}

fn on(job: u32, machine: u32) -> Action {
    Action::run(JobId(job), vec![(MachineId(machine), Tasks::new(1, 1))])
}

#[test]
fn two_jobs_swap_machines_in_one_decision() {
    let inst = transaction_instance(2);
    // Event 1 (job 1's arrival) starts both; event 2 (job 2's arrival)
    // swaps them, job 0 first: one by one it would meet job 1's old load.
    let mut p = script(vec![
        (1, vec![on(0, 0), on(1, 1)]),
        (
            2,
            vec![on(0, 1), on(1, 0), Action::Reject { job: JobId(2) }],
        ),
    ]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    for j in &r.jobs[..2] {
        assert_eq!(j.finish_s, Some(100.0));
        assert_eq!(j.preemptions, 0);
        assert_eq!(j.reconfigurations, 1);
    }
    assert!(r.jobs[2].rejected);
    assert!(max_overuse(&inst, &r) <= 1e-9);
    let moves: Vec<(f64, f64, MachineId)> = r
        .allocations
        .iter()
        .filter(|a| a.job == JobId(0))
        .map(|a| (a.from_s, a.to_s, a.placement[0].0))
        .collect();
    assert_eq!(
        moves,
        vec![(0.0, 10.0, MachineId(0)), (10.0, 100.0, MachineId(1))]
    );
}

#[test]
fn three_jobs_rotate_in_one_decision() {
    let inst = transaction_instance(3);
    let mut p = script(vec![
        (2, vec![on(0, 0), on(1, 1), on(2, 2)]),
        (
            3,
            vec![
                on(0, 1),
                on(1, 2),
                on(2, 0),
                Action::Reject { job: JobId(3) },
            ],
        ),
    ]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    for j in &r.jobs[..3] {
        assert_eq!(j.finish_s, Some(100.0));
        assert_eq!((j.preemptions, j.reconfigurations), (0, 1));
    }
    assert!(max_overuse(&inst, &r) <= 1e-9);
}

#[test]
fn an_over_allocating_batch_is_refused_with_its_witness() {
    let inst = transaction_instance(2);
    // Job 0 moves onto job 1's machine, which job 1 keeps.
    let mut p = script(vec![(1, vec![on(0, 0), on(1, 1)]), (2, vec![on(0, 1)])]);
    match sim_err(simulate(&inst, &mut p, &SimOptions::default())) {
        SimError::OverAllocation {
            job,
            machine,
            resource,
            used,
            capacity,
            time_s,
            ..
        } => {
            assert_eq!(
                (job, machine, resource),
                (JobId(0), MachineId(1), ResourceKind::Gpu)
            );
            assert_eq!((used, capacity, time_s), (2.0, 1.0, 10.0));
        }
        e => panic!("{e:?}"),
    }
    // The swap itself fits; the third job, added last, does not: it is the
    // witness, whatever the order of the moves before it.
    let mut p = script(vec![
        (1, vec![on(0, 0), on(1, 1)]),
        (2, vec![on(1, 0), on(0, 1), on(2, 0)]),
    ]);
    match sim_err(simulate(&inst, &mut p, &SimOptions::default())) {
        SimError::OverAllocation {
            job,
            machine,
            resource,
            ..
        } => assert_eq!(
            (job, machine, resource),
            (JobId(2), MachineId(0), ResourceKind::Gpu)
        ),
        e => panic!("{e:?}"),
    }
}

#[test]
fn actions_after_a_reject_of_the_same_job_are_refused() {
    let inst = transaction_instance(1);
    let mut p = script(vec![(0, vec![Action::Reject { job: JobId(0) }, on(0, 0)])]);
    assert!(matches!(
        sim_err(simulate(&inst, &mut p, &SimOptions::default())),
        SimError::JobClosed {
            job: JobId(0),
            state: "rejected",
            ..
        }
    ));
    // The last action counts: a run then a pause leaves the job waiting.
    let mut p = script(vec![(0, vec![on(0, 0), Action::pause(JobId(0))])]);
    let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
    assert_eq!(r.jobs[0].start_s, None);
}

// ------------------------------------------------------- one end per job

/// The end states of a run agree with its records and with how the run
/// ended, and its summary (and `summary.csv`) counts them: completed +
/// rejected + unfinished = jobs.
fn check_end_states(inst: &Instance, r: &SimResult, stop: StopAt) -> Result<(), TestCaseError> {
    let mut by = UnfinishedCounts::default();
    let (mut done, mut rejected) = (0, 0);
    for (job, rec) in inst.jobs().iter().zip(&r.jobs) {
        let end = rec.end();
        prop_assert_eq!(end.is_completed(), rec.finish_s.is_some(), "{:?}", rec);
        prop_assert_eq!(end.is_rejected(), rec.rejected && rec.finish_s.is_none());
        prop_assert_eq!(end.unfinished(), rec.unfinished, "{:?}", rec);
        match end {
            JobEnd::Completed => done += 1,
            JobEnd::Rejected { reason } => {
                prop_assert_eq!(&reason, &rec.rejection);
                rejected += 1;
            }
            JobEnd::Unfinished(u) => {
                match u {
                    Unfinished::NoRoom => {
                        prop_assert!(!rec.admitted && !fits_empty_cluster(job, inst.cluster()));
                    }
                    Unfinished::Horizon => {
                        prop_assert!(stop == StopAt::Horizon && !r.stalled, "{:?}", rec);
                    }
                    Unfinished::Stalled => prop_assert!(r.stalled && rec.admitted),
                    Unfinished::NeverAdmitted => prop_assert!(r.stalled && !rec.admitted),
                }
                match u {
                    Unfinished::NeverAdmitted => by.never_admitted += 1,
                    Unfinished::NoRoom => by.no_room += 1,
                    Unfinished::Horizon => by.horizon += 1,
                    Unfinished::Stalled => by.stalled += 1,
                }
            }
        }
    }
    let s = r.summary();
    prop_assert_eq!(s.completed + s.rejected + s.unfinished, s.jobs);
    prop_assert_eq!(
        (s.completed, s.rejected, s.unfinished_by),
        (done, rejected, by)
    );
    prop_assert_eq!(s.unfinished, by.total());
    prop_assert_eq!(s.stalled, r.stalled);
    // A run that stalls leaves some job unfinished.
    prop_assert!(!r.stalled || s.unfinished > 0);
    // summary.csv says the same.
    #[cfg(feature = "report")]
    summary_csv_adds_up(&r.policy, &s)?;
    Ok(())
}

/// `summary.csv` of a run's summary counts its jobs as the summary does.
#[cfg(feature = "report")]
fn summary_csv_adds_up(policy: &str, s: &RunSummary) -> Result<(), TestCaseError> {
    let meta = dmlsched::report::RunMeta {
        policy: policy.to_string(),
        seed: 0,
        workload: "w".into(),
        cluster: "c".into(),
        load_scale: 1.0,
    };
    let mut buf = Vec::new();
    dmlsched::report::csv::write_summary_csv(&mut buf, &[(meta, s.clone())]).unwrap();
    let mut rd = csv::Reader::from_reader(buf.as_slice());
    let header = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let col = |name: &str| -> usize {
        let k = header.iter().position(|h| h == name).unwrap();
        row[k].parse().unwrap()
    };
    prop_assert_eq!(
        col("completed") + col("rejected") + col("unfinished"),
        col("jobs")
    );
    prop_assert_eq!(
        col("unfinished_never_admitted")
            + col("unfinished_no_room")
            + col("unfinished_horizon")
            + col("unfinished_stalled"),
        col("unfinished")
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/sim.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn end_states_add_up_and_agree_with_the_records(
        seed in 0u64..10_000,
        n in 1usize..15,
        machines in 1u32..3,
        wide in 0u32..3,
        horizon in prop::option::of(25u32..60),
        policy in 0usize..3,
    ) {
        // Random jobs, plus `wide` rings as wide as the cluster, every
        // other one reserving more bandwidth than a NIC has (no room when
        // it must span machines).
        let base = random_instance(seed, n, machines, 7.0);
        let mut jobs = base.jobs().to_vec();
        for k in 0..wide {
            let reserve = (k % 2 == 0).then_some(2e11);
            jobs.push(ring((n as u32) + k, 7.0 * f64::from(k), 4 * machines, reserve));
        }
        let slots = horizon.unwrap_or(10_000);
        let inst = Instance::new(base.cluster().clone(), jobs, 7.0, slots).unwrap();
        let stop = if horizon.is_some() { StopAt::Horizon } else { StopAt::AllDone };
        let mut opts = SimOptions::default();
        opts.stop = stop;
        let mut p: Box<dyn Policy> = match policy {
            0 => Box::new(Fifo::default()),
            1 => Box::new(Fifo { backfill: true, ..Fifo::default() }),
            _ => dmlsched::registry::by_name("tiresias").unwrap(),
        };
        let r = simulate(&inst, p.as_mut(), &opts).unwrap();
        check_end_states(&inst, &r, stop)?;
    }
}

/// A ring of `workers` one-GPU workers, 20 iterations of 1 s, reserving
/// `reserve` bytes per second when it spans machines.
fn ring(id: u32, arrival_s: f64, workers: u32, reserve: Option<f64>) -> Job {
    let r = RarJob {
        workers: WorkerCounts::Fixed(workers),
        iterations: 20,
        reserved_bandwidth_bps: reserve,
        worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
        ..RarJob::default()
    };
    Job::new(JobId(id), arrival_s, r)
}

#[test]
fn a_ring_that_cannot_fit_its_reservation_has_no_room_and_one_behind_it_is_never_admitted() {
    // Two machines of 4 GPUs and NIC 1e11: a ring of 8 must span both and
    // reserve 2e11 on each, more than a NIC has. Strict FIFO leaves the
    // small job behind it waiting too.
    let wide = ring(0, 0.0, 8, Some(2e11));
    assert!(!fits_empty_cluster(&wide, &cluster(2, 4.0)));
    assert!(fits_empty_cluster(
        &ring(0, 0.0, 8, Some(1e10)),
        &cluster(2, 4.0)
    ));
    let small = elastic(1, 1.0, 10, 1.0, 1);
    let inst = Instance::new(cluster(2, 4.0), vec![wide.clone(), small], 7.0, 100).unwrap();
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    assert!(r.stalled);
    assert_eq!(r.jobs[0].end(), JobEnd::Unfinished(Unfinished::NoRoom));
    assert_eq!(
        r.jobs[1].end(),
        JobEnd::Unfinished(Unfinished::NeverAdmitted)
    );
    let s = r.summary();
    assert_eq!((s.completed, s.rejected, s.unfinished), (0, 0, 2));
    assert_eq!(
        (s.unfinished_by.no_room, s.unfinished_by.never_admitted),
        (1, 1)
    );
    // At the horizon instead: backfill runs the long job, which the
    // horizon cuts.
    let long = elastic(1, 1.0, 10_000, 1.0, 1);
    let inst = Instance::new(cluster(2, 4.0), vec![wide, long], 7.0, 10).unwrap();
    let mut opts = SimOptions::default();
    opts.stop = StopAt::Horizon;
    let mut backfill = Fifo {
        backfill: true,
        ..Fifo::default()
    };
    let r = simulate(&inst, &mut backfill, &opts).unwrap();
    assert!(!r.stalled);
    assert_eq!(r.jobs[0].end(), JobEnd::Unfinished(Unfinished::NoRoom));
    assert_eq!(r.jobs[1].end(), JobEnd::Unfinished(Unfinished::Horizon));
}

#[cfg(feature = "serde")]
#[test]
fn records_without_an_end_state_still_read() {
    let inst = Instance::new(cluster(1, 4.0), vec![elastic(0, 0.0, 10, 1.0, 1)], 7.0, 100).unwrap();
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    let mut v = serde_json::to_value(&r.jobs[0]).unwrap();
    v.as_object_mut().unwrap().remove("unfinished");
    v["finish_s"] = serde_json::Value::Null;
    let old: JobRecord = serde_json::from_value(v).unwrap();
    assert_eq!(old.unfinished, None);
    assert_eq!(old.end(), JobEnd::Unfinished(Unfinished::Stalled));
}
