//! Every validation rule of `Instance::new` rejects its case with its own
//! typed error, and no input makes it panic.

use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn machine(id: u32, gpus: f64) -> Machine {
    Machine::new(
        MachineId(id),
        Resources::zero()
            .gpus(gpus)
            .cpu_cores(32.0)
            .memory(gb(256.0))
            .storage(gb(1000.0))
            .nic(gbps(25.0)),
        gbps(200.0),
    )
}

fn ps_job(id: u32) -> Job {
    let ps = PsJob {
        epochs: 2,
        data_chunks: 4,
        minibatches_per_chunk: 50,
        minibatch_compute_s: 0.1,
        gradient_bytes: mb(50.0),
        worker: Resources::zero()
            .gpus(1.0)
            .cpu_cores(4.0)
            .memory(gb(16.0))
            .nic(gbps(5.0)),
        ps: Resources::zero()
            .cpu_cores(4.0)
            .memory(gb(16.0))
            .nic(gbps(5.0)),
        max_workers: 4,
        max_ps: 2,
        ..PsJob::default()
    };
    Job::new(JobId(id), 10.0, ps)
}

fn rar_job(id: u32, gpus: u32) -> Job {
    let rar = RarJob {
        workers: WorkerCounts::Fixed(gpus),
        iterations: 1000,
        convergence_iterations: Some(800),
        model_bytes: mb(100.0),
        minibatch_size: 32,
        forward_per_sample_s: 1e-3,
        backward_per_iteration_s: 0.05,
        reserved_bandwidth_bps: Some(gbps(5.0)),
        worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(gb(8.0)),
    };
    Job::new(JobId(id), 0.0, Architecture::RingAllReduce(rar))
}

fn parts() -> (Cluster, Vec<Job>) {
    (
        Cluster::new(vec![machine(0, 8.0), machine(1, 8.0)]),
        vec![ps_job(0), rar_job(1, 4)],
    )
}

fn build(c: Cluster, j: Vec<Job>) -> Result<Instance, ModelError> {
    Instance::new(c, j, 60.0, 100)
}

fn ps(job: &mut Job) -> &mut PsJob {
    match &mut job.architecture {
        Architecture::ParameterServer(p) => p,
        Architecture::RingAllReduce(_) => panic!("not a PS job"),
    }
}

fn rar(job: &mut Job) -> &mut RarJob {
    match &mut job.architecture {
        Architecture::RingAllReduce(r) => r,
        Architecture::ParameterServer(_) => panic!("not a RAR job"),
    }
}

#[test]
fn valid_instance_is_accepted() {
    let (c, j) = parts();
    let inst = build(c, j).unwrap();
    assert_eq!(inst.jobs().len(), 2);
    assert_eq!(inst.arrival_slot(&inst.jobs()[0]), 0);
    assert_eq!(inst.machine(MachineId(1)).unwrap().id, MachineId(1));
    assert_eq!(inst.job(JobId(1)).unwrap().id, JobId(1));
    assert_eq!(inst.horizon_s(), 6000.0);
}

#[test]
fn non_finite_numbers_are_rejected_with_their_field() {
    let (mut c, j) = parts();
    c.machines[1].capacity.memory_bytes = f64::NAN;
    assert!(matches!(build(c, j),
        Err(ModelError::NonFinite { entity: Entity::Machine(MachineId(1)), ref field, .. }) if field == "capacity.memory_bytes"));

    let (c, mut j) = parts();
    ps(&mut j[0]).worker.nic_bps = f64::INFINITY;
    assert!(matches!(build(c, j),
        Err(ModelError::NonFinite { entity: Entity::Job(JobId(0)), ref field, .. })
            if field == "architecture.parameter_server.worker.nic_bps"));

    let (c, mut j) = parts();
    j[1].utility = Utility::Sigmoid {
        g1: 1.0,
        g2: f64::NAN,
        g3: 2.0,
    };
    assert!(matches!(build(c, j),
        Err(ModelError::NonFinite { entity: Entity::Job(JobId(1)), ref field, .. }) if field == "utility.g2"));

    let (mut c, j) = parts();
    c.ring.reduction_speed_bps = f64::NEG_INFINITY;
    assert!(matches!(build(c, j),
        Err(ModelError::NonFinite { entity: Entity::Cluster, ref field, .. }) if field == "ring.reduction_speed_bps"));

    let (c, mut j) = parts();
    j[0].deadline_s = Some(f64::NAN);
    assert!(matches!(build(c, j),
        Err(ModelError::NonFinite { entity: Entity::Job(JobId(0)), ref field, .. }) if field == "deadline_s"));
}

#[test]
fn negative_numbers_are_rejected() {
    let (c, mut j) = parts();
    j[0].arrival_s = -1.0;
    assert!(matches!(build(c, j),
        Err(ModelError::Negative { entity: Entity::Job(JobId(0)), ref field, value }) if field == "arrival_s" && value == -1.0));

    let (mut c, j) = parts();
    c.machines[0].capacity.cpu_cores = -4.0;
    assert!(matches!(build(c, j),
        Err(ModelError::Negative { entity: Entity::Machine(MachineId(0)), ref field, .. }) if field == "capacity.cpu_cores"));

    let (c, mut j) = parts();
    rar(&mut j[1]).backward_per_iteration_s = -0.1;
    assert!(matches!(build(c, j),
        Err(ModelError::Negative { entity: Entity::Job(JobId(1)), ref field, .. })
            if field == "architecture.ring_all_reduce.backward_per_iteration_s"));

    let (c, mut j) = parts();
    j[1].weight = -2.0;
    assert!(
        matches!(build(c, j), Err(ModelError::Negative { ref field, .. }) if field == "weight")
    );
}

#[test]
fn zero_bandwidths_are_rejected() {
    let (mut c, j) = parts();
    c.machines[0].intra_bandwidth_bps = 0.0;
    assert!(matches!(build(c, j),
        Err(ModelError::NonPositive { entity: Entity::Machine(MachineId(0)), ref field, .. }) if field == "intra_bandwidth_bps"));
    let (mut c, j) = parts();
    c.ring.external_bandwidth_bps = 0.0;
    assert!(matches!(
        build(c, j),
        Err(ModelError::NonPositive {
            entity: Entity::Cluster,
            ..
        })
    ));
}

#[test]
fn empty_machine_rejected_but_a_single_zero_resource_is_fine() {
    let (mut c, j) = parts();
    c.machines
        .push(Machine::new(MachineId(2), Resources::zero(), gbps(1.0)));
    assert_eq!(
        build(c, j),
        Err(ModelError::EmptyMachine {
            machine: MachineId(2)
        })
    );

    // A PS-only machine without GPUs is valid.
    let (mut c, j) = parts();
    c.machines.push(
        Machine::new(
            MachineId(2),
            Resources::zero()
                .cpu_cores(16.0)
                .memory(gb(64.0))
                .nic(gbps(25.0)),
            gbps(100.0),
        )
        .hosting(Hosting::ParameterServers),
    );
    assert!(build(c, j).is_ok());
}

#[test]
fn duplicate_ids_are_rejected() {
    let (mut c, j) = parts();
    c.machines[1].id = MachineId(0);
    assert_eq!(
        build(c, j),
        Err(ModelError::DuplicateMachine {
            machine: MachineId(0)
        })
    );

    let (c, mut j) = parts();
    j[1].id = JobId(0);
    assert_eq!(build(c, j), Err(ModelError::DuplicateJob { job: JobId(0) }));

    let (mut c, j) = parts();
    c.racks = vec![
        Rack {
            id: RackId(3),
            uplink_bps: None,
        },
        Rack {
            id: RackId(3),
            uplink_bps: None,
        },
    ];
    assert_eq!(
        build(c, j),
        Err(ModelError::DuplicateRack { rack: RackId(3) })
    );
}

#[test]
fn unknown_references_are_rejected() {
    let (mut c, j) = parts();
    c.machines[1] = c.machines[1].clone().in_rack(RackId(9));
    assert_eq!(
        build(c, j),
        Err(ModelError::UnknownRack {
            machine: MachineId(1),
            rack: RackId(9)
        })
    );

    let (mut c, j) = parts();
    c.racks.push(Rack {
        id: RackId(9),
        uplink_bps: Some(gbps(100.0)),
    });
    c.machines[1] = c.machines[1].clone().in_rack(RackId(9));
    assert!(build(c, j).is_ok());

    let (c, mut j) = parts();
    j[0].allowed_machines = Some(vec![MachineId(0), MachineId(5)]);
    assert_eq!(
        build(c, j),
        Err(ModelError::UnknownMachine {
            job: JobId(0),
            machine: MachineId(5)
        })
    );
}

#[test]
fn task_cannot_fit() {
    // A worker needs 16 GPUs; machines have 8.
    let (c, mut j) = parts();
    ps(&mut j[0]).worker.gpus = 16.0;
    match build(c, j) {
        Err(ModelError::TaskCannotFit {
            job,
            task,
            demand,
            largest_machine,
        }) => {
            assert_eq!(job, JobId(0));
            assert_eq!(task, TaskKind::Worker);
            assert_eq!(demand.gpus, 16.0);
            assert_eq!(largest_machine.map(|r| r.gpus), Some(8.0));
        }
        other => panic!("expected TaskCannotFit, got {other:?}"),
    }
    // No machine may host a PS at all.
    let (mut c, j) = parts();
    for m in &mut c.machines {
        m.hosts = Hosting::Workers;
    }
    assert!(matches!(
        build(c, j),
        Err(ModelError::TaskCannotFit {
            job: JobId(0),
            task: TaskKind::ParameterServer,
            largest_machine: None,
            ..
        })
    ));
}

#[test]
fn job_cannot_fit() {
    // Each worker fits a machine, but 20 GPUs exceed the cluster's 16.
    let (c, mut j) = parts();
    rar(&mut j[1]).workers = WorkerCounts::Fixed(20);
    match build(c, j) {
        Err(ModelError::JobCannotFit {
            job,
            demand,
            cluster,
        }) => {
            assert_eq!(job, JobId(1));
            assert_eq!(demand.gpus, 20.0);
            assert_eq!(cluster.gpus, 16.0);
        }
        other => panic!("expected JobCannotFit, got {other:?}"),
    }
    // A placement constraint shrinks the usable cluster.
    let (c, mut j) = parts();
    j[1].allowed_machines = Some(vec![MachineId(0)]);
    rar(&mut j[1]).workers = WorkerCounts::Fixed(10);
    assert!(matches!(
        build(c, j),
        Err(ModelError::JobCannotFit { job: JobId(1), .. })
    ));
}

#[test]
fn arrival_after_horizon() {
    let (c, mut j) = parts();
    j[0].arrival_s = 6000.0; // horizon is 100 slots × 60 s
    assert_eq!(
        build(c, j),
        Err(ModelError::ArrivalAfterHorizon {
            job: JobId(0),
            arrival_s: 6000.0,
            horizon_s: 6000.0
        })
    );
}

#[test]
fn zero_workload_and_zero_counts() {
    let (c, mut j) = parts();
    ps(&mut j[0]).epochs = 0;
    assert_eq!(
        build(c, j),
        Err(ModelError::ZeroWorkload {
            job: JobId(0),
            field: "epochs"
        })
    );
    let (c, mut j) = parts();
    ps(&mut j[0]).minibatches_per_chunk = 0;
    assert_eq!(
        build(c, j),
        Err(ModelError::ZeroWorkload {
            job: JobId(0),
            field: "minibatches_per_chunk"
        })
    );
    let (c, mut j) = parts();
    rar(&mut j[1]).iterations = 0;
    assert_eq!(
        build(c, j),
        Err(ModelError::ZeroWorkload {
            job: JobId(1),
            field: "iterations"
        })
    );
    let (c, mut j) = parts();
    ps(&mut j[0]).max_workers = 0;
    assert_eq!(
        build(c, j),
        Err(ModelError::ZeroCount {
            job: JobId(0),
            field: "max_workers"
        })
    );
    let (c, mut j) = parts();
    rar(&mut j[1]).workers = WorkerCounts::Allowed(vec![]);
    assert_eq!(
        build(c, j),
        Err(ModelError::ZeroCount {
            job: JobId(1),
            field: "workers"
        })
    );
}

#[test]
fn increasing_utility_is_rejected() {
    let (c, mut j) = parts();
    j[0].utility = Utility::Sigmoid {
        g1: 5.0,
        g2: -0.5,
        g3: 3.0,
    };
    assert_eq!(
        build(c, j),
        Err(ModelError::UtilityIncreasing {
            job: JobId(0),
            at_delay: 0
        })
    );
    let (c, mut j) = parts();
    j[1].utility = Utility::Table {
        values: vec![3.0, 3.0, 2.0, 2.5],
    };
    assert_eq!(
        build(c, j),
        Err(ModelError::UtilityIncreasing {
            job: JobId(1),
            at_delay: 2
        })
    );
    let (c, mut j) = parts();
    j[1].utility = Utility::Table { values: vec![] };
    assert_eq!(
        build(c, j),
        Err(ModelError::EmptyUtilityTable { job: JobId(1) })
    );
}

#[test]
fn slot_length_and_horizon() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let (c, j) = parts();
        assert!(matches!(
            Instance::new(c, j, bad, 10),
            Err(ModelError::BadSlotLength { .. })
        ));
    }
    let (c, j) = parts();
    assert_eq!(Instance::new(c, j, 60.0, 0), Err(ModelError::ZeroHorizon));
    assert_eq!(
        Instance::new(Cluster::new(vec![]), vec![], 60.0, 10),
        Err(ModelError::EmptyCluster)
    );
}

#[test]
fn inconsistent_fields() {
    let (c, mut j) = parts();
    ps(&mut j[0]).max_ps = 5; // > max_workers = 4 under the rule
    assert!(matches!(build(c, j),
        Err(ModelError::Inconsistent { entity: Entity::Job(JobId(0)), ref field, .. }) if field.ends_with("max_ps")));
    // Without the rule, it is fine.
    let (c, mut j) = parts();
    ps(&mut j[0]).max_ps = 5;
    ps(&mut j[0]).ps_at_most_workers = false;
    assert!(build(c, j).is_ok());

    let (c, mut j) = parts();
    rar(&mut j[1]).convergence_iterations = Some(5000);
    assert!(matches!(build(c, j),
        Err(ModelError::Inconsistent { ref field, .. }) if field.ends_with("convergence_iterations")));
    let (c, mut j) = parts();
    rar(&mut j[1]).worker.gpus = 2.0;
    assert!(
        matches!(build(c, j), Err(ModelError::Inconsistent { ref field, .. }) if field.ends_with("worker.gpus"))
    );
    let (mut c, j) = parts();
    c.ring.contender_ratio = 1.5;
    assert!(matches!(
        build(c, j),
        Err(ModelError::Inconsistent {
            entity: Entity::Cluster,
            ..
        })
    ));
}

#[test]
fn errors_display_their_witness() {
    let (c, mut j) = parts();
    ps(&mut j[0]).worker.gpus = 16.0;
    let msg = build(c, j).unwrap_err().to_string();
    assert!(msg.contains("job 0") && msg.contains("worker"), "{msg}");
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        -1e12..1e12f64,
        any::<f64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/model_validation.txt"))),
        ..ProptestConfig::default()
    })]

    /// Arbitrary numbers in every numeric field: `Instance::new` returns a
    /// result (ok or a typed error) and never panics.
    #[test]
    fn no_panic_on_arbitrary_numbers(
        v in proptest::collection::vec(any_f64(), 24),
        counts in proptest::collection::vec(0u32..6, 6),
        slot in any_f64(),
        horizon in 0u32..50,
    ) {
        let (mut c, mut j) = parts();
        c.machines[0].capacity = Resources::zero().gpus(v[0]).cpu_cores(v[1]).memory(v[2]).storage(v[3]).nic(v[4]);
        c.machines[1].intra_bandwidth_bps = v[5];
        c.ring.degradation = Degradation::Linear { alpha: v[6] };
        c.ring.contender_ratio = v[7];
        j[0].arrival_s = v[8];
        j[0].utility = Utility::Sigmoid { g1: v[9], g2: v[10], g3: v[11] };
        {
            let p = ps(&mut j[0]);
            p.worker = Resources::zero().gpus(v[12]).cpu_cores(v[13]).memory(v[14]).storage(v[15]).nic(v[16]);
            p.ps.nic_bps = v[17];
            p.minibatch_compute_s = v[18];
            p.epochs = counts[0];
            p.max_workers = counts[1];
            p.max_ps = counts[2];
        }
        j[1].utility = Utility::Linear { g1: v[19], slope: v[20] };
        j[1].weight = v[21];
        {
            let r = rar(&mut j[1]);
            r.model_bytes = v[22];
            r.reserved_bandwidth_bps = Some(v[23]);
            r.workers = WorkerCounts::Allowed(vec![counts[3], counts[4]]);
            r.iterations = u64::from(counts[5]);
        }
        let _ = Instance::new(c, j, slot, horizon);
    }
}

// ------------------------------------------------------------------ GPU types

/// Two machines of 8 GPUs, a v100 and a k80, named by the cluster.
fn typed_cluster() -> Cluster {
    Cluster::new(vec![
        machine(0, 8.0).with_gpu_type("v100"),
        machine(1, 8.0).with_gpu_type("k80"),
    ])
    .with_gpu_types(["v100", "k80"])
}

fn with_speeds(job: Job) -> Job {
    job.with_gpu_speed("v100", 1.0).with_gpu_speed("k80", 0.3)
}

#[test]
fn a_typed_cluster_with_speeds_is_accepted() {
    let inst = build(
        typed_cluster(),
        vec![with_speeds(ps_job(0)), with_speeds(rar_job(1, 4))],
    )
    .unwrap();
    assert!(inst.cluster().is_mixed());
    let ring = &inst.jobs()[1];
    assert_eq!(ring.pace([Some("v100"), Some("v100")]), 1.0);
    // A ring on a v100 and a k80 runs at the k80's pace.
    assert_eq!(ring.pace([Some("v100"), Some("k80")]), 0.3);
    // One named type: speeds may be left out (speed 1).
    let one = Cluster::new(vec![machine(0, 8.0).with_gpu_type("a100")]).with_gpu_types(["a100"]);
    let inst = build(one, vec![ps_job(0)]).unwrap();
    assert!(!inst.cluster().is_mixed());
    assert_eq!(inst.jobs()[0].gpu_speed(Some("a100")), 1.0);
}

#[test]
fn gpu_type_errors_name_the_machine_or_job_and_the_type() {
    let jobs = || vec![with_speeds(ps_job(0))];
    let mut c = typed_cluster();
    c.gpu_types.push("v100".into());
    assert_eq!(
        build(c, jobs()).unwrap_err(),
        ModelError::DuplicateGpuType {
            gpu_type: "v100".into()
        }
    );
    let mut c = typed_cluster();
    c.machines[1].gpu_type = Some("p100".into());
    assert_eq!(
        build(c, jobs()).unwrap_err(),
        ModelError::UnknownGpuType {
            entity: Entity::Machine(MachineId(1)),
            gpu_type: "p100".into()
        }
    );
    let mut c = typed_cluster();
    c.machines[0].gpu_type = None;
    assert_eq!(
        build(c, jobs()).unwrap_err(),
        ModelError::MissingGpuType {
            machine: MachineId(0)
        }
    );
    let mut c = typed_cluster();
    c.gpu_types[0] = String::new();
    assert!(matches!(
        build(c, jobs()),
        Err(ModelError::Inconsistent {
            entity: Entity::Cluster,
            ..
        })
    ));
    // A machine without GPUs has no type; one that names a type in an
    // untyped cluster names an unknown type.
    let mut c = typed_cluster();
    c.machines.push(
        machine(2, 0.0)
            .with_gpu_type("k80")
            .hosting(Hosting::ParameterServers),
    );
    assert!(matches!(
        build(c, jobs()),
        Err(ModelError::Inconsistent {
            entity: Entity::Machine(MachineId(2)),
            ..
        })
    ));
    let (c, _) = parts();
    let c = Cluster::new(vec![c.machines[0].clone().with_gpu_type("v100")]);
    assert!(matches!(
        build(c, vec![ps_job(0)]),
        Err(ModelError::UnknownGpuType {
            entity: Entity::Machine(MachineId(0)),
            ..
        })
    ));
}

#[test]
fn gpu_speed_errors_name_the_job_and_the_type() {
    // Several types: a speed on each.
    let job = ps_job(0).with_gpu_speed("v100", 1.0);
    assert_eq!(
        build(typed_cluster(), vec![job]).unwrap_err(),
        ModelError::MissingGpuSpeed {
            job: JobId(0),
            gpu_type: "k80".into()
        }
    );
    // A type the cluster does not have, typed or not.
    let job = with_speeds(ps_job(0)).with_gpu_speed("a100", 2.0);
    assert_eq!(
        build(typed_cluster(), vec![job]).unwrap_err(),
        ModelError::UnknownGpuType {
            entity: Entity::Job(JobId(0)),
            gpu_type: "a100".into()
        }
    );
    let (c, _) = parts();
    assert!(matches!(
        build(c, vec![ps_job(0).with_gpu_speed("v100", 1.0)]),
        Err(ModelError::UnknownGpuType {
            entity: Entity::Job(JobId(0)),
            ..
        })
    ));
    // Speeds are finite and positive, named by their field.
    for (bad, want) in [(f64::NAN, "non-finite"), (0.0, "zero"), (-1.0, "negative")] {
        let job = with_speeds(ps_job(0)).with_gpu_speed("k80", bad);
        let err = build(typed_cluster(), vec![job]).unwrap_err();
        let field = match &err {
            ModelError::NonFinite { field, .. }
            | ModelError::NonPositive { field, .. }
            | ModelError::Negative { field, .. } => field.clone(),
            other => panic!("{want}: {other:?}"),
        };
        assert_eq!(field, "gpu_speeds.k80", "{want}");
    }
}

#[cfg(feature = "serde")]
#[test]
fn gpu_types_read_from_json_and_untyped_json_is_unchanged() {
    let inst = build(
        typed_cluster(),
        vec![with_speeds(ps_job(0)), with_speeds(rar_job(1, 4))],
    )
    .unwrap();
    let text = inst.to_json().unwrap();
    assert!(text.contains("\"gpu_types\"") && text.contains("\"gpu_speeds\""));
    assert_eq!(Instance::from_json(&text).unwrap(), inst);
    // An untyped instance writes none of the new fields.
    let (c, j) = parts();
    let text = build(c, j).unwrap().to_json().unwrap();
    assert!(
        !text.contains("gpu_type") && !text.contains("gpu_speeds"),
        "{text}"
    );
    // A speed on an unknown type in JSON is the same typed error.
    let bad = text.replacen(
        "\"architecture\"",
        "\"gpu_speeds\": {\"v100\": 1.0}, \"architecture\"",
        1,
    );
    match Instance::from_json(&bad) {
        Err(dmlsched::Error::Model(ModelError::UnknownGpuType { gpu_type, .. })) => {
            assert_eq!(gpu_type, "v100")
        }
        other => panic!("{other:?}"),
    }
}
