//! `schedule::verify` with LOCAL segments: the tasks are charged no NIC
//! bandwidth, and a LOCAL segment that is not one PS with its workers on the
//! named machine is refused with its own variant.

use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::*;

const M0: MachineId = MachineId(0);
const M1: MachineId = MachineId(1);
const M2: MachineId = MachineId(2);
const M3: MachineId = MachineId(3);

/// m0, m1 host both kinds, m2 workers only, m3 PSs only; 4 GPUs and a
/// 10 Gbit/s NIC each. j0: elastic PS job (≤ 4 workers at 3 Gbit/s, ≤ 2 PSs
/// at 4 Gbit/s). j1: ring job of 2 workers. j2: j0's shape, allowed on m1
/// only.
fn instance() -> Instance {
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(32.0)
        .memory(gb(256.0))
        .nic(gbps(10.0));
    let cluster = Cluster::new(vec![
        Machine::new(M0, cap, gbps(100.0)),
        Machine::new(M1, cap, gbps(100.0)),
        Machine::new(M2, cap, gbps(100.0)).hosting(Hosting::Workers),
        Machine::new(M3, cap, gbps(100.0)).hosting(Hosting::ParameterServers),
    ]);
    let ps = PsJob {
        epochs: 1,
        data_chunks: 4,
        minibatches_per_chunk: 10,
        minibatch_compute_s: 0.1,
        gradient_bytes: mb(10.0),
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
    };
    let rar = RarJob {
        workers: WorkerCounts::Fixed(2),
        iterations: 100,
        convergence_iterations: None,
        model_bytes: mb(50.0),
        minibatch_size: 32,
        forward_per_sample_s: 1e-3,
        backward_per_iteration_s: 0.05,
        reserved_bandwidth_bps: None,
        worker: Resources::zero()
            .gpus(1.0)
            .cpu_cores(2.0)
            .memory(gb(8.0))
            .nic(gbps(3.0)),
    };
    let mut j2 = Job::new(JobId(2), 0.0, Architecture::ParameterServer(ps.clone()));
    j2.allowed_machines = Some(vec![M1]);
    let jobs = vec![
        Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps)),
        Job::new(JobId(1), 0.0, Architecture::RingAllReduce(rar)),
        j2,
    ];
    Instance::new(cluster, jobs, 60.0, 10).unwrap()
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

fn local(machine: MachineId) -> Option<Configuration> {
    Some(Configuration::Local { machine })
}

/// Verifies job `job` alone with these segments.
fn check(job: u32, segments: Vec<Segment>) -> Result<(), Violation> {
    let s = Schedule {
        jobs: vec![JobSchedule {
            job: JobId(job),
            admitted: true,
            segments,
        }],
    };
    verify(&instance(), &s)
}

#[test]
fn local_segment_is_charged_no_nic() {
    // 3 workers and 1 PS on m0 demand 3·3 + 4 = 13 Gbit/s of a 10 Gbit/s NIC.
    let tasks = [(M0, 3, 1)];
    assert_eq!(check(0, vec![seg(0..4, &tasks, local(M0))]), Ok(()));
    let over = Err(Violation::CapacityExceeded {
        machine: M0,
        resource: ResourceKind::Nic,
        slot: 0,
        used: gbps(13.0),
        capacity: gbps(10.0),
    });
    assert_eq!(check(0, vec![seg(0..4, &tasks, None)]), over);
    assert_eq!(
        check(0, vec![seg(0..4, &tasks, Some(Configuration::Distributed))]),
        over
    );
    // Other resources are still charged: 4 GPUs fit, a fifth does not.
    let e = check(0, vec![seg(0..4, &[(M0, 5, 1)], local(M0))]);
    assert_eq!(
        e,
        Err(Violation::TooManyWorkers {
            job: JobId(0),
            segment: 0,
            workers: 5,
            max: 4
        })
    );
    assert_eq!(check(0, vec![seg(0..4, &[(M0, 4, 1)], local(M0))]), Ok(()));
    // A LOCAL segment next to an unconfigured one of another job on m1:
    // only the latter's NIC counts (2·3 + 4 = 10 Gbit/s fits exactly); the
    // LOCAL job charged in full would need 17 Gbit/s.
    let both = |config| Schedule {
        jobs: vec![
            JobSchedule {
                job: JobId(0),
                admitted: true,
                segments: vec![seg(0..4, &[(M1, 1, 1)], config)],
            },
            JobSchedule {
                job: JobId(2),
                admitted: true,
                segments: vec![seg(0..4, &[(M1, 2, 1)], None)],
            },
        ],
    };
    assert_eq!(verify(&instance(), &both(local(M1))), Ok(()));
    assert!(matches!(
        verify(&instance(), &both(None)),
        Err(Violation::CapacityExceeded {
            machine: M1,
            resource: ResourceKind::Nic,
            ..
        })
    ));
    // Empty entries mean nothing, also for LOCAL.
    let padded = seg(0..4, &[(M1, 0, 0), (M0, 3, 1)], local(M0));
    assert_eq!(check(0, vec![padded]), Ok(()));
}

#[test]
fn local_on_two_machines_is_refused() {
    let e = check(0, vec![seg(0..4, &[(M0, 2, 1), (M1, 1, 0)], local(M0))]);
    assert_eq!(
        e,
        Err(Violation::LocalNotOneMachine {
            job: JobId(0),
            segment: 0,
            machine: M0,
            entries: 2
        })
    );
    let e = check(0, vec![seg(0..4, &[(M0, 0, 0)], local(M0))]);
    assert!(
        matches!(e, Err(Violation::LocalNotOneMachine { entries: 0, .. })),
        "{e:?}"
    );
}

#[test]
fn local_needs_exactly_one_ps() {
    for ps in [0, 2] {
        let e = check(0, vec![seg(0..4, &[(M0, 3, ps)], local(M0))]);
        assert_eq!(
            e,
            Err(Violation::LocalPsCount {
                job: JobId(0),
                segment: 0,
                machine: M0,
                ps
            })
        );
    }
}

#[test]
fn local_needs_a_worker() {
    let e = check(0, vec![seg(0..4, &[(M0, 0, 1)], local(M0))]);
    assert_eq!(
        e,
        Err(Violation::LocalNoWorkers {
            job: JobId(0),
            segment: 0,
            machine: M0
        })
    );
}

#[test]
fn local_on_another_machine_than_named_is_refused() {
    let e = check(0, vec![seg(0..4, &[(M1, 2, 1)], local(M0))]);
    assert_eq!(
        e,
        Err(Violation::LocalOtherMachine {
            job: JobId(0),
            segment: 0,
            machine: M0,
            placed: M1
        })
    );
}

#[test]
fn local_machine_must_host_both_kinds_and_be_allowed() {
    let e = check(0, vec![seg(0..4, &[(M2, 2, 1)], local(M2))]);
    assert_eq!(
        e,
        Err(Violation::HostingNotAllowed {
            job: JobId(0),
            segment: 0,
            machine: M2,
            task: TaskKind::ParameterServer
        })
    );
    let e = check(0, vec![seg(0..4, &[(M3, 2, 1)], local(M3))]);
    assert_eq!(
        e,
        Err(Violation::HostingNotAllowed {
            job: JobId(0),
            segment: 0,
            machine: M3,
            task: TaskKind::Worker
        })
    );
    let e = check(2, vec![seg(0..4, &[(M0, 2, 1)], local(M0))]);
    assert_eq!(
        e,
        Err(Violation::MachineNotAllowed {
            job: JobId(2),
            segment: 0,
            machine: M0
        })
    );
    assert_eq!(check(2, vec![seg(0..4, &[(M1, 2, 1)], local(M1))]), Ok(()));
    let e = check(
        0,
        vec![seg(0..4, &[(MachineId(9), 2, 1)], local(MachineId(9)))],
    );
    assert!(matches!(e, Err(Violation::UnknownMachine { .. })), "{e:?}");
}

#[test]
fn local_is_refused_for_a_ring_job() {
    let e = check(1, vec![seg(0..4, &[(M0, 2, 0)], local(M0))]);
    assert_eq!(
        e,
        Err(Violation::LocalForRingJob {
            job: JobId(1),
            segment: 0
        })
    );
    // The same ring without a configuration, or DISTRIBUTED, is fine.
    assert_eq!(check(1, vec![seg(0..4, &[(M0, 2, 0)], None)]), Ok(()));
    let d = Some(Configuration::Distributed);
    assert_eq!(check(1, vec![seg(0..4, &[(M0, 2, 0)], d)]), Ok(()));
}

#[test]
fn local_errors_name_job_segment_and_reason() {
    let segs = vec![
        seg(0..2, &[(M0, 1, 1)], local(M0)),
        seg(2..4, &[(M0, 3, 2)], local(M0)),
    ];
    let e = check(0, segs).unwrap_err();
    assert_eq!(
        e.to_string(),
        "job 0, segment 1: LOCAL on machine 0 needs exactly one parameter server, got 2"
    );
    let e = check(1, vec![seg(0..4, &[(M0, 2, 0)], local(M0))]).unwrap_err();
    assert!(e.to_string().contains("ring-all-reduce"), "{e}");
    let e = check(0, vec![seg(0..4, &[(M1, 2, 1)], local(M0))]).unwrap_err();
    assert!(e.to_string().contains("segment 0"), "{e}");
    assert!(e.to_string().contains("machine 1"), "{e}");
}

#[test]
fn check_configured_allocation_applies_the_local_rules() {
    let inst = instance();
    let job = inst.job(JobId(0)).unwrap();
    let p = Placement::from(vec![(M0, Tasks::new(2, 2))]);
    assert_eq!(check_allocation(&inst, job, &p, None), Ok(()));
    assert_eq!(
        check_configured_allocation(&inst, job, &p, None, Some(Configuration::Distributed)),
        Ok(())
    );
    assert!(matches!(
        check_configured_allocation(&inst, job, &p, None, local(M0)),
        Err(Violation::LocalPsCount { ps: 2, .. })
    ));
    let p = Placement::from(vec![(M0, Tasks::new(2, 1))]);
    assert_eq!(
        check_configured_allocation(&inst, job, &p, None, local(M0)),
        Ok(())
    );
}
