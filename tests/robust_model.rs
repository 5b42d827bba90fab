//! Robustness of the model, the trace loaders, the online ledger and OASiS:
//! the reproducers of a fuzzing campaign as regression tests, then
//! fuzz-style property tests ("a result or a typed error, never a panic,
//! never a hang"), every case under the watchdog.

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::algorithms::oasis::{BoundsChoice, Oasis, OasisParams};
use dmlsched::model::units::gbps;
use dmlsched::model::*;
use dmlsched::online::{Ledger, PoolId};
use dmlsched::trace::*;

// ---------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------

/// One worker server and one PS server (vCPU and NIC only).
fn oasis_cluster() -> Cluster {
    let server = |id, hosts| {
        Machine::new(
            MachineId(id),
            Resources::new(0.0, 16.0, 0.0, 0.0, gbps(10.0)),
            gbps(10.0),
        )
        .hosting(hosts)
    };
    Cluster::new(vec![
        server(0, Hosting::Workers),
        server(1, Hosting::ParameterServers),
    ])
}

/// An OASiS job: 2 epochs of 2 chunks of 1 mini-batch of half a slot.
fn oasis_job(id: u32, utility: Utility, demand: f64) -> Job {
    Job::new(
        JobId(id),
        0.0,
        Architecture::ParameterServer(PsJob {
            epochs: 2,
            data_chunks: 2,
            minibatches_per_chunk: 1,
            minibatch_compute_s: 1800.0,
            gradient_bytes: 0.0,
            worker: Resources::new(0.0, demand, 0.0, 0.0, gbps(1.0)),
            ps: Resources::new(0.0, demand, 0.0, 0.0, gbps(1.0)),
            max_workers: 2,
            max_ps: 2,
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        }),
    )
    .with_utility(utility)
}

/// A result of OASiS is only an answer if its certificate checks.
fn oasis_result_or_typed_error(instance: &Instance, bounds: BoundsChoice) -> Result<(), String> {
    let params = OasisParams {
        bounds,
        ..OasisParams::default()
    };
    match Oasis::new(params).solve(instance) {
        Ok(solved) => {
            let c = &solved.certificate;
            if !c.objective.is_finite() {
                return Err(format!("objective {} is not finite", c.objective));
            }
            c.check(1e-9).map_err(|e| format!("certificate fails: {e}"))
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty());
            Ok(())
        }
    }
}

const EXAMPLE: &str = include_str!("../docs/instance-example.json");

// ---------------------------------------------------------------------------
// Reproducers
// ---------------------------------------------------------------------------

/// A ledger over 2³² − 1 slots allocated `machines × T × resources` cells
/// up front and aborted, even without a job.
#[test]
fn ledger_over_the_largest_horizon_without_jobs() {
    within(WATCHDOG_S, "ledger T = 2^32 - 1", || {
        let machines = (0..4).map(|i| (PoolId(i % 2), vec![8.0; 5])).collect();
        let ledger = Ledger::new(u32::MAX, 5, machines).unwrap();
        assert_eq!(ledger.horizon(), u32::MAX);
        assert_eq!(ledger.emptied().horizon(), u32::MAX);
    });
    for bounds in [
        BoundsChoice::Eta,
        BoundsChoice::ValueFloor { v_floor: Some(1.0) },
    ] {
        within(WATCHDOG_S, "OASiS T = 2^32 - 1, no job", move || {
            let inst = Instance::new(oasis_cluster(), vec![], 1.0, u32::MAX).unwrap();
            oasis_result_or_typed_error(&inst, bounds).unwrap();
        });
    }
}

/// `epochs × data_chunks × minibatches_per_chunk` at `(2³² − 1)³` overflowed.
#[test]
fn ps_workload_product_does_not_overflow() {
    within(WATCHDOG_S, "E·N·M = (2^32 - 1)^3", || {
        let mut job = oasis_job(7, Utility::default(), 1.0);
        let Architecture::ParameterServer(p) = &mut job.architecture else {
            unreachable!()
        };
        (p.epochs, p.data_chunks, p.minibatches_per_chunk) = (u32::MAX, u32::MAX, u32::MAX);
        assert_eq!(p.total_minibatches(), u64::MAX);
        let exact = u128::from(u32::MAX).pow(3);
        assert_eq!(p.total_minibatches_exact(), exact);
        let err = Instance::new(oasis_cluster(), vec![job], 3600.0, 10).unwrap_err();
        match &err {
            ModelError::WorkloadTooLarge {
                job,
                minibatches,
                limit,
            } => {
                assert_eq!(
                    (*job, *minibatches, *limit),
                    (JobId(7), exact, MAX_TOTAL_MINIBATCHES)
                );
            }
            other => panic!("expected WorkloadTooLarge, got {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("job 7") && msg.contains("epochs × data_chunks"),
            "{msg}"
        );
        assert!(msg.len() < 200, "{msg}");
        // The largest accepted workload is 2^53 mini-batches.
        let mut ok = oasis_job(8, Utility::default(), 1.0);
        let Architecture::ParameterServer(p) = &mut ok.architecture else {
            unreachable!()
        };
        (p.epochs, p.data_chunks, p.minibatches_per_chunk) = (1 << 21, 1 << 16, 1 << 16);
        assert_eq!(p.total_minibatches(), MAX_TOTAL_MINIBATCHES);
        Instance::new(oasis_cluster(), vec![ok], 3600.0, 10).unwrap();
    });
}

/// A Tiresias cluster spec of `65536,65536,8,64,256` was accepted and
/// `to_cluster` aborted allocating 2³² machines.
#[test]
fn tiresias_cluster_spec_beyond_the_size_limit() {
    within(WATCHDOG_S, "Tiresias spec 65536 × 65536", || {
        let text = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n\
                    65536,65536,8,64,256\n";
        let err = read_tiresias_cluster_spec(text.as_bytes()).unwrap_err();
        match &err {
            TraceError::Format {
                line: 2,
                column: Some(c),
                ..
            } if c == "num_node_p_switch" => {}
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("4294967296 machines"), "{err}");
        // At the limit it still loads and builds.
        let text = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n\
                    16,65536,8,64,256\n";
        let spec = read_tiresias_cluster_spec(text.as_bytes()).unwrap();
        assert_eq!(spec.machines(), MAX_CLUSTER_MACHINES);
        // A spec built by hand is refused by `to_cluster`.
        let big = TiresiasClusterSpec {
            switches: 65536,
            nodes_per_switch: 65536,
            gpus_per_node: 8,
            cpus_per_node: 64,
            memory_per_node_gb: 256.0,
        };
        assert!(matches!(
            big.to_cluster(),
            Err(TraceError::InvalidArgument { .. })
        ));
        assert!(matches!(
            gpu_cluster(u32::MAX, 1),
            Err(TraceError::InvalidArgument { .. })
        ));
    });
}

/// OASiS with two constant utilities of 1.797e308 reported an objective of
/// `inf`: the instance is now refused, and one such job gives a checked
/// result or a typed error.
#[test]
fn utilities_whose_sum_is_not_finite() {
    within(WATCHDOG_S, "two utilities of 1.797e308", || {
        let u = Utility::Constant { value: 1.797e308 };
        let jobs = vec![oasis_job(0, u.clone(), 1.0), oasis_job(1, u.clone(), 1.0)];
        let err = Instance::new(oasis_cluster(), jobs, 3600.0, 10).unwrap_err();
        assert!(
            matches!(err, ModelError::UtilitySumNotFinite { job: JobId(1), .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("1.797e308"), "{err}");
    });
    for value in [1.797e308, 1e20, 1e300] {
        for bounds in [
            BoundsChoice::Eta,
            BoundsChoice::ValueFloor { v_floor: None },
        ] {
            within(WATCHDOG_S, "one huge utility", move || {
                let u = Utility::Constant { value };
                let jobs = vec![oasis_job(0, u, 1.0), oasis_job(1, Utility::default(), 1.0)];
                let inst = Instance::new(oasis_cluster(), jobs, 3600.0, 10).unwrap();
                oasis_result_or_typed_error(&inst, bounds).unwrap();
            });
        }
    }
}

/// The exact MIP cannot represent objective coefficients at HiGHS's
/// infinity (10²⁰): it refuses them instead of solving a different model.
#[cfg(feature = "highs")]
#[test]
fn exact_oasis_refuses_utilities_at_the_solver_infinity() {
    use dmlsched::algorithms::oasis::{ExactOptions, OasisError, offline_optimum};
    within(WATCHDOG_S, "exact OASiS with a utility of 1e20", || {
        let u = Utility::Constant { value: 1e20 };
        let inst = Instance::new(oasis_cluster(), vec![oasis_job(0, u, 1.0)], 3600.0, 4).unwrap();
        let err = offline_optimum(&inst, &ExactOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                dmlsched::Error::Oasis(OasisError::UnsupportedJob { job: JobId(0), .. })
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("1e20"), "{err}");
    });
}

/// A JSON type error named the line and column but not the field.
#[cfg(feature = "serde")]
#[test]
fn json_errors_name_the_field_path() {
    within(WATCHDOG_S, "JSON field paths", || {
        let bad = EXAMPLE.replacen("\"epochs\": 20", "\"epochs\": \"x\"", 1);
        let err = Instance::from_json(&bad).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, dmlsched::Error::Json(_)), "{msg}");
        assert!(
            msg.contains("jobs[0].architecture.parameter_server.epochs: invalid type"),
            "{msg}"
        );
        assert!(msg.contains("line 47 column"), "{msg}");
        let bad = EXAMPLE.replacen("\"nic_bps\": 0.0", "\"nic_bps\": -", 1);
        let msg = Instance::from_json(&bad).unwrap_err().to_string();
        assert!(msg.contains("line"), "{msg}");
        let bad = EXAMPLE.replacen("\"gpus\": 8.0", "\"gpus\": 8.0, \"gpus\": 8.0", 1);
        let msg = Instance::from_json(&bad).unwrap_err().to_string();
        assert!(
            msg.contains("cluster.machines[0].capacity") && msg.contains("duplicate field `gpus`"),
            "{msg}"
        );
        let bad = EXAMPLE.replacen("\"horizon_slots\": 48", "\"horizon_slots\": 4294967296", 1);
        let msg = Instance::from_json(&bad).unwrap_err().to_string();
        assert!(
            msg.starts_with("JSON: horizon_slots: invalid value"),
            "{msg}"
        );
    });
}

/// Huge numbers printed with 309 digits.
#[test]
fn messages_print_huge_numbers_in_scientific_notation() {
    within(WATCHDOG_S, "huge numbers in messages", || {
        let mut job = oasis_job(0, Utility::default(), 1.0);
        job.arrival_s = -1.797e308;
        let err = Instance::new(oasis_cluster(), vec![job], 3600.0, 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "job 0: field `arrival_s` is negative (-1.797e308)"
        );
        let job = oasis_job(0, Utility::default(), 1e300);
        let msg = Instance::new(oasis_cluster(), vec![job], 3600.0, 10)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("cpu 1e300") && msg.len() < 300, "{msg}");
        let mut late = oasis_job(0, Utility::default(), 1.0);
        late.arrival_s = 1e306;
        let msg = Instance::new(oasis_cluster(), vec![late], 1e300, 10)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("1e306 s") && msg.contains("1e301 s"), "{msg}");
        let csv = "timestamp,duration,num_gpus,gpu_time,cluster\n\
                   2017-10-07 01:11:39,-1e300,1,1,vc\n";
        let msg = read_philly_pollux_csv(csv.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(msg.ends_with("found -1e300"), "{msg}");
    });
}

/// CSV reading errors gave two different line numbers (the file's and the
/// csv crate's record count) and no column.
#[test]
fn csv_errors_give_one_line_and_the_column() {
    let cases: [(TraceFormat, &[u8], &str); 5] = [
        (
            TraceFormat::Philly,
            b"timestamp,duration,num_gpus,gpu_time,cluster\r\n\r\n2017-10-07 01:11:39,1\xff0,1,10,vc\r\n",
            "duration",
        ),
        (
            TraceFormat::Itp,
            b"job_id,submission_time,duration,num_gpu\r\n\r\na,5,1\xff,1\r\n",
            "duration",
        ),
        (
            TraceFormat::Tiresias,
            b"job_id,num_gpu,submit_time,iterations,model_name,duration,interval\r\n\r\n1,8,30,133,vgg\xff,147,23\r\n",
            "model_name",
        ),
        (
            TraceFormat::Alibaba,
            b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\r\n\r\np1,1,1,1,\xff,,LS,Running,1,2,1\r\n",
            "gpu_milli",
        ),
        (
            TraceFormat::Gavel,
            b"A3C\tc\t-s\t1\t100\t5\t1\r\n\r\nA3C\tc\t-s\t1\t1\xff00\t5\t1\r\n",
            "total_steps",
        ),
    ];
    for (format, text, column) in cases {
        within(WATCHDOG_S, "CSV UTF-8 error", move || {
            let err = read_format(text, format, None).unwrap_err();
            match &err {
                TraceError::Format {
                    line: 3,
                    column: Some(c),
                    ..
                } if c == column => {}
                other => panic!("{format}: {other:?}"),
            }
            let msg = err.to_string();
            assert_eq!(msg.matches("line").count(), 1, "{msg}");
            assert!(!msg.contains("record"), "{msg}");
        });
    }
}

/// A partial `ring` object was refused although every field has a
/// documented default.
#[cfg(feature = "serde")]
#[test]
fn partial_ring_objects_take_the_documented_defaults() {
    within(WATCHDOG_S, "partial ring", || {
        let start = EXAMPLE.find("\"ring\": {").unwrap();
        let end = start + EXAMPLE[start..].find('}').unwrap() + 1;
        let end = end + EXAMPLE[end..].find('}').unwrap() + 1;
        let with_ring =
            |ring: &str| format!("{}\"ring\": {ring}{}", &EXAMPLE[..start], &EXAMPLE[end..]);
        let defaults = RingParams::default();
        let inst = Instance::from_json(&with_ring("{}")).unwrap();
        assert_eq!(inst.cluster().ring, defaults);
        assert_eq!(defaults.external_bandwidth_bps, gbps(25.0));
        assert_eq!(defaults.reduction_speed_bps, 1e11);
        assert_eq!(defaults.overhead_per_server_s, 0.001);
        assert_eq!(defaults.contender_ratio, 1.0);
        assert_eq!(defaults.degradation, Degradation::Linear { alpha: 0.09 });
        let inst = Instance::from_json(&with_ring(
            r#"{"contender_ratio": 0.5, "degradation": {"kind": "linear"}}"#,
        ))
        .unwrap();
        let ring = inst.cluster().ring;
        assert_eq!(ring.contender_ratio, 0.5);
        assert_eq!(ring.degradation, Degradation::Linear { alpha: 0.09 });
        assert_eq!(ring.external_bandwidth_bps, defaults.external_bandwidth_bps);
        let inst =
            Instance::from_json(&with_ring(r#"{"degradation": {"kind": "fair_share"}}"#)).unwrap();
        assert_eq!(inst.cluster().ring.degradation, Degradation::FairShare);
        // Unknown fields are still refused.
        let err = Instance::from_json(&with_ring(r#"{"speed": 1}"#)).unwrap_err();
        assert!(err.to_string().contains("cluster.ring"), "{err}");
    });
}

/// A demand entry far below the price bounds' smallest positive demand is
/// refused by OASiS naming the job, not deep in the framework.
#[test]
fn oasis_refuses_demands_below_the_smallest_positive_demand() {
    within(WATCHDOG_S, "demand 1e-300", || {
        let jobs = vec![oasis_job(3, Utility::default(), 1e-300)];
        let inst = Instance::new(oasis_cluster(), jobs, 3600.0, 10).unwrap();
        let err = Oasis::default().solve(&inst).unwrap_err();
        assert!(
            matches!(
                err,
                dmlsched::Error::Oasis(dmlsched::algorithms::oasis::OasisError::UnsupportedJob {
                    job: JobId(3),
                    ..
                })
            ),
            "{err}"
        );
        assert!(err.to_string().contains("vcpu = 1e-300"), "{err}");
        // At the smallest accepted demand OASiS runs and certifies.
        let jobs = vec![oasis_job(3, Utility::default(), 1e-12)];
        let inst = Instance::new(oasis_cluster(), jobs, 3600.0, 10).unwrap();
        oasis_result_or_typed_error(&inst, BoundsChoice::Eta).unwrap();
    });
}
