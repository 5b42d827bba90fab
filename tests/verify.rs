//! `schedule::verify`: a valid schedule passes, and each violation kind is
//! caught with its own variant and witness.

use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::*;

const M0: MachineId = MachineId(0);
const M1: MachineId = MachineId(1);
const M2: MachineId = MachineId(2);

/// m0 hosts both (4 GPUs), m1 workers only (4 GPUs), m2 PSs only (no GPU).
/// j0: elastic PS job, ≤ 4 workers, ≤ 2 PSs. j1: rigid, non-preemptible ring
/// job with 2 or 4 workers. j2: rigid non-preemptible PS job (2 workers,
/// 1 PS) arriving in slot 2.
fn instance() -> Instance {
    let cap = |g| {
        Resources::zero()
            .gpus(g)
            .cpu_cores(16.0)
            .memory(gb(128.0))
            .nic(gbps(10.0))
    };
    let cluster = Cluster::new(vec![
        Machine::new(M0, cap(4.0), gbps(100.0)),
        Machine::new(M1, cap(4.0), gbps(100.0)).hosting(Hosting::Workers),
        Machine::new(M2, cap(0.0), gbps(100.0)).hosting(Hosting::ParameterServers),
    ]);
    let ps_job = |max_workers, max_ps| PsJob {
        epochs: 1,
        data_chunks: 4,
        minibatches_per_chunk: 10,
        minibatch_compute_s: 0.1,
        gradient_bytes: mb(10.0),
        worker: Resources::zero()
            .gpus(1.0)
            .cpu_cores(2.0)
            .memory(gb(8.0))
            .nic(gbps(2.0)),
        ps: Resources::zero()
            .cpu_cores(2.0)
            .memory(gb(8.0))
            .nic(gbps(4.0)),
        max_workers,
        max_ps,
        ps_at_most_workers: true,
        sync: SyncMode::Asynchronous,
        layers: None,
    };
    let rar = RarJob {
        workers: WorkerCounts::Allowed(vec![2, 4]),
        iterations: 100,
        convergence_iterations: None,
        model_bytes: mb(50.0),
        minibatch_size: 32,
        forward_per_sample_s: 1e-3,
        backward_per_iteration_s: 0.05,
        reserved_bandwidth_bps: None,
        worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(gb(8.0)),
    };
    let jobs = vec![
        Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps_job(4, 2))),
        Job::new(JobId(1), 0.0, Architecture::RingAllReduce(rar)),
        Job::new(JobId(2), 150.0, Architecture::ParameterServer(ps_job(2, 1)))
            .with_discipline(Discipline::RIGID_GANG),
    ];
    Instance::new(cluster, jobs, 60.0, 10).unwrap()
}

fn seg(slots: std::ops::Range<u32>, placement: &[(MachineId, u32, u32)]) -> Segment {
    Segment::new(
        slots,
        placement
            .iter()
            .map(|&(m, w, p)| (m, Tasks::new(w, p)))
            .collect::<Placement>(),
    )
}

fn gpus(list: &[(MachineId, u32)]) -> Option<Vec<GpuId>> {
    Some(
        list.iter()
            .map(|&(machine, index)| GpuId { machine, index })
            .collect(),
    )
}

fn js(job: u32, segments: Vec<Segment>) -> JobSchedule {
    JobSchedule {
        job: JobId(job),
        admitted: true,
        segments,
    }
}

/// A schedule using everything: elastic j0 changes size and pauses, j1 rings
/// over two machines with GPU ids, j2 runs rigidly after its arrival.
fn valid() -> Schedule {
    let mut ring = seg(0..5, &[(M0, 1, 0), (M1, 1, 0)]);
    ring.gpus = gpus(&[(M0, 0), (M1, 0)]);
    Schedule {
        jobs: vec![
            js(
                0,
                vec![
                    seg(0..2, &[(M0, 2, 1), (M1, 2, 0)]),
                    seg(3..6, &[(M1, 2, 0), (M2, 0, 1)]),
                ],
            ),
            js(1, vec![ring]),
            js(
                2,
                vec![
                    seg(2..4, &[(M0, 1, 0), (M1, 1, 0), (M2, 0, 1)]),
                    seg(4..7, &[(M0, 1, 0), (M1, 1, 0), (M2, 0, 1)]),
                ],
            ),
        ],
    }
}

fn with(f: impl FnOnce(&mut Schedule)) -> Result<(), Violation> {
    let mut s = valid();
    f(&mut s);
    verify(&instance(), &s)
}

#[test]
fn valid_schedule_passes() {
    assert_eq!(verify(&instance(), &valid()), Ok(()));
    assert_eq!(verify(&instance(), &Schedule::default()), Ok(()));
    let s = valid();
    assert_eq!(s.job(JobId(0)).unwrap().start_slot(), Some(0));
    assert_eq!(s.job(JobId(0)).unwrap().last_slot(), Some(5));
    assert_eq!(s.job(JobId(0)).unwrap().worker_slots(), 2 * 4 + 2 * 3);
}

#[test]
fn unknown_and_duplicate_jobs() {
    assert_eq!(
        with(|s| s.jobs.push(js(9, vec![]))),
        Err(Violation::UnknownJob { job: JobId(9) })
    );
    assert_eq!(
        with(|s| s.jobs.push(JobSchedule::rejected(JobId(0)))),
        Err(Violation::DuplicateJob { job: JobId(0) })
    );
}

#[test]
fn rejected_job_may_not_run() {
    assert_eq!(
        with(|s| s.jobs[0].admitted = false),
        Err(Violation::NotAdmittedButRuns { job: JobId(0) })
    );
}

#[test]
fn slot_ranges() {
    assert!(matches!(
        with(|s| s.jobs[0].segments[1].slots = 4..4),
        Err(Violation::EmptySlotRange {
            job: JobId(0),
            segment: 1,
            ..
        })
    ));
    assert_eq!(
        with(|s| s.jobs[0].segments[1].slots = 3..11),
        Err(Violation::BeyondHorizon {
            job: JobId(0),
            segment: 1,
            end: 11,
            horizon: 10
        })
    );
    assert_eq!(
        with(|s| s.jobs[2].segments[0].slots = 1..4),
        Err(Violation::BeforeArrival {
            job: JobId(2),
            segment: 0,
            start: 1,
            arrival_slot: 2
        })
    );
}

#[test]
fn machine_references_and_roles() {
    assert_eq!(
        with(|s| s.jobs[0].segments[0]
            .placement
            .push((MachineId(7), Tasks::new(1, 0)))),
        Err(Violation::UnknownMachine {
            job: JobId(0),
            segment: 0,
            machine: MachineId(7)
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[0].placement.push((M0, Tasks::new(1, 0)))),
        Err(Violation::DuplicatePlacement {
            job: JobId(0),
            segment: 0,
            machine: M0
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[0].placement[1].1.ps = 1),
        Err(Violation::HostingNotAllowed {
            job: JobId(0),
            segment: 0,
            machine: M1,
            task: TaskKind::ParameterServer
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[1].placement[1].1.workers = 1),
        Err(Violation::HostingNotAllowed {
            job: JobId(0),
            segment: 1,
            machine: M2,
            task: TaskKind::Worker
        })
    );
    // allowed_machines
    let mut inst_jobs = instance().jobs().to_vec();
    inst_jobs[0].allowed_machines = Some(vec![M0, M2]);
    let inst = Instance::new(instance().cluster().clone(), inst_jobs, 60.0, 10).unwrap();
    assert_eq!(
        verify(&inst, &valid()),
        Err(Violation::MachineNotAllowed {
            job: JobId(0),
            segment: 0,
            machine: M1
        })
    );
}

#[test]
fn task_counts() {
    assert_eq!(
        with(|s| s.jobs[0].segments[0] = seg(0..2, &[(M2, 0, 1)])),
        Err(Violation::NoWorkers {
            job: JobId(0),
            segment: 0
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[0] = seg(0..2, &[(M0, 2, 0)])),
        Err(Violation::WorkersWithoutPs {
            job: JobId(0),
            segment: 0
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[0] = seg(0..2, &[(M0, 1, 1), (M1, 4, 0)])),
        Err(Violation::TooManyWorkers {
            job: JobId(0),
            segment: 0,
            workers: 5,
            max: 4
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[1] = seg(3..6, &[(M1, 3, 0), (M2, 0, 3)])),
        Err(Violation::TooManyPs {
            job: JobId(0),
            segment: 1,
            ps: 3,
            max: 2
        })
    );
    assert_eq!(
        with(|s| s.jobs[0].segments[1] = seg(3..6, &[(M1, 1, 0), (M2, 0, 2)])),
        Err(Violation::PsExceedsWorkers {
            job: JobId(0),
            segment: 1,
            ps: 2,
            workers: 1
        })
    );
    assert_eq!(
        with(|s| s.jobs[1].segments[0].placement[0].1.ps = 1),
        Err(Violation::PsForRingJob {
            job: JobId(1),
            segment: 0
        })
    );
    assert_eq!(
        with(|s| {
            s.jobs[1].segments[0] = seg(0..5, &[(M0, 3, 0)]);
        }),
        Err(Violation::WorkerCountNotAllowed {
            job: JobId(1),
            segment: 0,
            workers: 3
        })
    );
}

#[test]
fn rigid_gang_and_placement() {
    assert_eq!(
        with(|s| s.jobs[2].segments[0] = seg(2..4, &[(M0, 1, 0), (M2, 0, 1)])),
        Err(Violation::GangViolated {
            job: JobId(2),
            segment: 0,
            workers: 1,
            ps: 1,
            expected_workers: 2,
            expected_ps: 1
        })
    );
    assert_eq!(
        with(|s| s.jobs[2].segments[1] = seg(4..7, &[(M1, 2, 0), (M2, 0, 1)])),
        Err(Violation::PlacementChanged {
            job: JobId(2),
            slot: 4
        })
    );
    // Same placement listed in another order is not a change.
    assert_eq!(with(|s| s.jobs[2].segments[1].placement.reverse()), Ok(()));
    // A rigid ring job may not swap GPUs.
    assert_eq!(
        with(|s| {
            let mut later = s.jobs[1].segments[0].clone();
            s.jobs[1].segments[0].slots = 0..2;
            later.slots = 2..5;
            later.gpus = gpus(&[(M0, 1), (M1, 0)]);
            s.jobs[1].segments.push(later);
        }),
        Err(Violation::PlacementChanged {
            job: JobId(1),
            slot: 2
        })
    );
}

#[test]
fn overlap_and_preemption() {
    assert_eq!(
        with(|s| s.jobs[0].segments[1].slots = 1..6),
        Err(Violation::OverlappingSegments {
            job: JobId(0),
            slot: 1
        })
    );
    // Elastic j0 may pause (slot 2 is idle); non-preemptible j2 may not.
    assert_eq!(
        with(|s| s.jobs[2].segments[1].slots = 5..7),
        Err(Violation::Preempted {
            job: JobId(2),
            gap: 4..5
        })
    );
}

#[test]
fn capacity_per_machine_resource_and_slot() {
    // m0 has 4 GPUs: j0 3 + j1 1 in slots 0..2 fills it exactly.
    assert_eq!(
        with(|s| {
            s.jobs[0].segments[0].placement[0].1.workers = 3;
            s.jobs[0].segments[0].placement[1].1.workers = 1;
        }),
        Ok(())
    );
    // m1: j0 3 + j1 1 + j2 1 = 5 GPUs from slot 3.
    let e = with(|s| s.jobs[0].segments[1] = seg(3..6, &[(M1, 3, 0), (M2, 0, 2)]));
    assert_eq!(
        e,
        Err(Violation::CapacityExceeded {
            machine: M1,
            resource: ResourceKind::Gpu,
            slot: 3,
            used: 5.0,
            capacity: 4.0
        })
    );
    let e = with(|s| s.jobs[0].segments[1] = seg(4..6, &[(M1, 3, 0), (M2, 0, 2)]));
    match e {
        Err(Violation::CapacityExceeded {
            machine,
            resource,
            slot,
            used,
            capacity,
        }) => {
            assert_eq!((machine, resource, slot), (M1, ResourceKind::Gpu, 4));
            assert_eq!((used, capacity), (5.0, 4.0));
        }
        other => panic!("{other:?}"),
    }
    let e = with(|s| {
        s.jobs[0].segments[1] = seg(5..7, &[(M0, 1, 0), (M2, 0, 1)]);
        s.jobs[0]
            .segments
            .push(seg(7..9, &[(M0, 2, 0), (M2, 0, 2)]));
        s.jobs[2].segments[1].slots = 4..8;
    });
    assert_eq!(
        e,
        Err(Violation::CapacityExceeded {
            machine: M2,
            resource: ResourceKind::Nic,
            slot: 7,
            used: gbps(12.0),
            capacity: gbps(10.0)
        })
    );
    // Back-to-back use of the same capacity is fine (ranges are end-exclusive).
    assert_eq!(
        with(|s| {
            s.jobs[0].segments = vec![
                seg(0..2, &[(M0, 1, 1), (M1, 3, 0)]),
                seg(2..3, &[(M0, 1, 1), (M1, 3, 0)]),
            ];
            s.jobs[2].segments = vec![seg(3..5, &[(M0, 1, 0), (M1, 1, 0), (M2, 0, 1)])];
        }),
        Ok(())
    );
}

#[test]
fn gpu_ids() {
    assert!(matches!(
        with(|s| s.jobs[1].segments[0].gpus = gpus(&[(M0, 0), (M1, 4)])),
        Err(Violation::InvalidGpu {
            job: JobId(1),
            segment: 0,
            gpu: GpuId {
                machine: M1,
                index: 4
            }
        })
    ));
    assert!(matches!(
        with(|s| s.jobs[1].segments[0].gpus = gpus(&[(M0, 0), (M2, 0)])),
        Err(Violation::InvalidGpu { .. })
    ));
    assert_eq!(
        with(|s| s.jobs[1].segments[0] = Segment {
            gpus: gpus(&[(M0, 1), (M0, 1)]),
            ..seg(0..5, &[(M0, 2, 0)])
        }),
        Err(Violation::DuplicateGpu {
            job: JobId(1),
            segment: 0,
            gpu: GpuId {
                machine: M0,
                index: 1
            }
        })
    );
    assert_eq!(
        with(|s| s.jobs[1].segments[0].gpus = gpus(&[(M0, 0), (M0, 1)])),
        Err(Violation::GpuCountMismatch {
            job: JobId(1),
            segment: 0,
            machine: M0,
            expected: 1.0,
            got: 2
        })
    );
    // Two jobs on one GPU in overlapping slots.
    assert_eq!(
        with(|s| {
            s.jobs[1].segments[0].gpus = gpus(&[(M0, 0), (M1, 1)]);
            // j0's segment 0 now carries ids too.
            s.jobs[0].segments[0] = Segment {
                gpus: gpus(&[(M0, 2), (M0, 3), (M1, 1), (M1, 2)]),
                ..seg(0..2, &[(M0, 2, 1), (M1, 2, 0)])
            };
        }),
        Err(Violation::GpuConflict {
            gpu: GpuId {
                machine: M1,
                index: 1
            },
            slot: 0,
            first: JobId(0),
            second: JobId(1)
        })
    );
}

#[test]
fn violations_name_their_witness() {
    let e = with(|s| s.jobs[0].segments[1] = seg(3..6, &[(M1, 3, 0), (M2, 0, 2)])).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("machine 1") && msg.contains("slot 3") && msg.contains("gpus"),
        "{msg}"
    );
}
