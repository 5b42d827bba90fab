//! Robustness of the model, the trace loaders, the online ledger and OASiS:
//! the reproducers of a fuzzing campaign as regression tests, then
//! fuzz-style property tests ("a result or a typed error, never a panic,
//! never a hang"), every case under the watchdog.

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::oasis::{Oasis, OasisParams};
use dmlsched::model::units::gbps;
use dmlsched::model::*;
use dmlsched::online::BoundsChoice;
use dmlsched::online::{Ledger, PoolId};
use dmlsched::trace::*;
use rand::SeedableRng;

// ---------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------

/// One worker server and one PS server (vCPU and NIC only).
fn oasis_cluster() -> Cluster {
    let server = |id, hosts| {
        Machine::new(
            MachineId(id),
            Resources::zero().cpu_cores(16.0).nic(gbps(10.0)),
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
            worker: Resources::zero().cpu_cores(demand).nic(gbps(1.0)),
            ps: Resources::zero().cpu_cores(demand).nic(gbps(1.0)),
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
    let mut params = OasisParams::default();
    params.bounds = bounds;
    match Oasis::new(params)
        .and_then(|o| o.solve(instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
    {
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

#[cfg(feature = "serde")]
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
    for value in [f64::MAX, 1.797e308, 1e20, 1e300, 5e-324] {
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

/// The exact MIP allocated one capacity cell per (machine, slot, resource)
/// and a utility column per slot to the horizon: 2²⁵ slots (a horizon the
/// online DP still accepts for this job) needed gigabytes per machine. It
/// now estimates its size first and refuses with a typed error.
#[cfg(feature = "highs")]
#[test]
fn exact_oasis_on_a_huge_horizon() {
    use dmlsched::algorithms::oasis::{
        EXACT_MAX_COLUMNS, ExactOptions, OasisError, offline_optimum,
    };
    within(WATCHDOG_S, "exact OASiS over 2^25 slots", || {
        let u = Utility::Constant { value: 1.0 };
        let inst =
            Instance::new(oasis_cluster(), vec![oasis_job(0, u, 1.0)], 1.0, 1 << 25).unwrap();
        let err = offline_optimum(&inst, &ExactOptions::default()).unwrap_err();
        match err {
            dmlsched::Error::Oasis(OasisError::ExactTooLarge { columns, limit }) => {
                assert_eq!(limit, EXACT_MAX_COLUMNS);
                assert!(columns >= 1 << 25, "{columns}");
            }
            e => panic!("{e:?}"),
        }
        // Without jobs the program is empty, whatever the horizon.
        let empty = Instance::new(oasis_cluster(), vec![], 1.0, u32::MAX).unwrap();
        let opt = offline_optimum(&empty, &ExactOptions::default()).unwrap();
        assert!(opt.schedule.jobs.is_empty());
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
        let err = Oasis::default()
            .solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
            .unwrap_err();
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

// ---------------------------------------------------------------------------
// Fuzz-style properties
// ---------------------------------------------------------------------------

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

/// `cases` proptest cases, failures kept in
/// `proptest-regressions/robust_model.txt`.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/robust_model.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// Raw tokens a mutated number or field may become (some are not valid
/// JSON or CSV numbers on purpose).
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "1e300",
    "-1e300",
    "5e-324",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1e400",
    "-0",
    "1.5",
    "NaN",
    "inf",
    "\"NaN\"",
    "\"\"",
    "null",
    "true",
    "[]",
    "{}",
    "-",
    "99999999999999999999999999999999999999999999",
];

/// One mutation of a JSON document, applied to the `node`-th node (in a
/// depth-first listing) or the `line`-th line of its pretty text.
#[cfg(feature = "serde")]
#[derive(Debug, Clone)]
enum JsonMutation {
    Replace(Index, Index),
    Delete(Index),
    Empty(Index),
    Huge(Index),
    Duplicate(Index),
}

#[cfg(feature = "serde")]
fn json_mutation() -> impl Strategy<Value = JsonMutation> {
    prop_oneof![
        4 => (any::<Index>(), any::<Index>()).prop_map(|(n, t)| JsonMutation::Replace(n, t)),
        2 => any::<Index>().prop_map(JsonMutation::Delete),
        1 => any::<Index>().prop_map(JsonMutation::Empty),
        1 => any::<Index>().prop_map(JsonMutation::Huge),
        1 => any::<Index>().prop_map(JsonMutation::Duplicate),
    ]
}

#[cfg(feature = "serde")]
mod json_tree {
    use serde_json::Value;

    /// A step from a JSON node to a child.
    #[derive(Debug, Clone)]
    pub enum Seg {
        Key(String),
        At(usize),
    }

    /// Every node below the root, depth first.
    pub fn paths(v: &Value) -> Vec<Vec<Seg>> {
        fn walk(v: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
            match v {
                Value::Object(map) => {
                    for (k, child) in map {
                        prefix.push(Seg::Key(k.clone()));
                        out.push(prefix.clone());
                        walk(child, prefix, out);
                        prefix.pop();
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        prefix.push(Seg::At(i));
                        out.push(prefix.clone());
                        walk(child, prefix, out);
                        prefix.pop();
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(v, &mut Vec::new(), &mut out);
        out
    }

    /// The parent of the node at `path` and the node's last step.
    pub fn parent_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<(&'a mut Value, Seg)> {
        let (last, init) = path.split_last()?;
        let mut node = v;
        for seg in init {
            node = match seg {
                Seg::Key(k) => node.get_mut(k.as_str())?,
                Seg::At(i) => node.get_mut(*i)?,
            };
        }
        Some((node, last.clone()))
    }

    pub fn child_mut<'a>(parent: &'a mut Value, seg: &Seg) -> Option<&'a mut Value> {
        match seg {
            Seg::Key(k) => parent.get_mut(k.as_str()),
            Seg::At(i) => parent.get_mut(*i),
        }
    }
}

/// Applies `mutations` to the documented example and returns the text.
#[cfg(feature = "serde")]
fn mutated_example(mutations: &[JsonMutation]) -> String {
    use json_tree::*;
    use serde_json::Value;
    let mut doc: Value = serde_json::from_str(EXAMPLE).unwrap();
    let mut raw = Vec::new();
    let mut duplicates = Vec::new();
    for m in mutations {
        let paths = paths(&doc);
        let node = |i: &Index| paths[i.index(paths.len())].clone();
        match m {
            JsonMutation::Replace(n, t) => {
                let p = node(n);
                if let Some((parent, seg)) = parent_mut(&mut doc, &p)
                    && let Some(child) = child_mut(parent, &seg)
                {
                    *child = Value::String(format!("@@{}@@", raw.len()));
                    raw.push(TOKENS[t.index(TOKENS.len())]);
                }
            }
            JsonMutation::Delete(n) => {
                let p = node(n);
                if let Some((parent, seg)) = parent_mut(&mut doc, &p) {
                    match (parent, seg) {
                        (Value::Object(map), Seg::Key(k)) => {
                            map.remove(&k);
                        }
                        (Value::Array(items), Seg::At(i)) if i < items.len() => {
                            items.remove(i);
                        }
                        _ => {}
                    }
                }
            }
            JsonMutation::Empty(n) | JsonMutation::Huge(n) => {
                let p = node(n);
                if let Some((parent, seg)) = parent_mut(&mut doc, &p)
                    && let Some(Value::Array(items)) = child_mut(parent, &seg)
                {
                    if matches!(m, JsonMutation::Empty(_)) {
                        items.clear();
                    } else if let Some(first) = items.first().cloned() {
                        items.resize(2000, first);
                    }
                }
            }
            JsonMutation::Duplicate(line) => duplicates.push(*line),
        }
    }
    let mut text = serde_json::to_string_pretty(&doc).unwrap();
    for (i, token) in raw.iter().enumerate() {
        text = text.replace(&format!("\"@@{i}@@\""), token);
    }
    for line in duplicates {
        let lines: Vec<&str> = text.lines().collect();
        let keyed: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim_start().starts_with('"') && lines[i].ends_with(','))
            .collect();
        if keyed.is_empty() {
            continue;
        }
        let at = keyed[line.index(keyed.len())];
        let mut out: Vec<&str> = lines.clone();
        out.insert(at, lines[at]);
        text = out.join("\n");
    }
    text
}

#[cfg(feature = "serde")]
proptest! {
    #![proptest_config(config(96))]

    /// `Instance::from_json` on mutated valid instances: a result (which
    /// round-trips) or a typed error, never a panic or a hang.
    #[test]
    fn from_json_on_mutated_instances(mutations in prop::collection::vec(json_mutation(), 1..4)) {
        let text = mutated_example(&mutations);
        within(WATCHDOG_S, "Instance::from_json on a mutated instance", move || {
            match Instance::from_json(&text) {
                Ok(inst) => {
                    let back = Instance::from_json(&inst.to_json().unwrap()).unwrap();
                    assert_eq!(back, inst);
                }
                Err(e) => {
                    let msg = e.to_string();
                    assert!(!msg.is_empty() && msg.len() < 2000, "{msg}");
                }
            }
        });
    }
}

/// A valid input of every trace format (header, if any, and three rows).
fn trace_sample(format: TraceFormat) -> &'static str {
    match format {
        TraceFormat::Philly => {
            "timestamp,duration,num_gpus,gpu_time,cluster\n\
             2017-10-07 01:11:39,193256.0,8,1546048.0,ee9e8c\n\
             2017-10-07 00:10:00,60.0,1,60.0,6214e9\n\
             2017-10-08 10:00:00,3600,2,7200,vc\n"
        }
        TraceFormat::Itp => {
            "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n\
             a,5010,7628,bert,5985,64,1,1265\n\
             b,5016,100,resnet50,9000,32,2,2066\n\
             c,6000,10,vgg16,7000,16,4,30\n"
        }
        TraceFormat::Gavel => {
            "Transformer (batch size 128)\tcd %s/translation && python3 train.py\t-step\t1\t20851471\t0.000000\t1\n\
             A3C\tc\t-s\t0\t5\t10.5\t2\n\
             ResNet-50 (batch size 64)\tpython3 main.py\t--num_steps\t1\t1000\t20\t4\n"
        }
        TraceFormat::Tiresias => {
            "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n\
             0,1,0,606,vgg19,164,30\n\
             1,8,30,133,vgg11,147,23\n\
             2,2,54,157,inception4,127,26\n"
        }
        TraceFormat::Alibaba => {
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
             openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n\
             openb-pod-0002,8000,30000,2,1000,V100M16|V100M32,BE,Pending,500000,500100,\n\
             openb-pod-0003,4000,1024,0,0,,Burstable,Succeeded,10,100,20\n"
        }
    }
}

/// Extra field contents for trace mutations (bytes, some not UTF-8).
const TRACE_TOKENS: &[&[u8]] = &[
    b"",
    b"\xff\xfe",
    b"\"",
    b"\"a,b\"",
    b"\xef\xbc\x91",
    b"0x10",
    b"2017-13-45 25:61:61",
    b"9999-12-31 23:59:59",
    b"0000-01-01 00:00:00",
    b"Running",
    b"A3C (batch size 0)",
    b"A3C (batch size 4294967296)",
    b"99999999999999999999999999999999999999999999999999999999999999",
];

/// One mutation of a delimited trace, on a line, a field or a byte.
#[derive(Debug, Clone)]
enum TraceMutation {
    Replace(Index, Index, Index),
    DeleteField(Index, Index),
    DuplicateField(Index, Index),
    DuplicateLine(Index),
    DeleteLine(Index),
    BlankLine(Index),
    Crlf,
    Bom,
    Truncate(Index),
    InsertByte(Index, u8),
}

fn trace_mutation() -> impl Strategy<Value = TraceMutation> {
    let byte = prop_oneof![
        Just(b'\xff'),
        Just(b'"'),
        Just(b'\t'),
        Just(b','),
        Just(b'\n'),
        Just(b'\r'),
        Just(b'-'),
        Just(b'9'),
        Just(0u8),
    ];
    prop_oneof![
        6 => (any::<Index>(), any::<Index>(), any::<Index>())
            .prop_map(|(l, f, t)| TraceMutation::Replace(l, f, t)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(l, f)| TraceMutation::DeleteField(l, f)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(l, f)| TraceMutation::DuplicateField(l, f)),
        1 => any::<Index>().prop_map(TraceMutation::DuplicateLine),
        1 => any::<Index>().prop_map(TraceMutation::DeleteLine),
        1 => any::<Index>().prop_map(TraceMutation::BlankLine),
        1 => Just(TraceMutation::Crlf),
        1 => Just(TraceMutation::Bom),
        1 => any::<Index>().prop_map(TraceMutation::Truncate),
        2 => (any::<Index>(), byte).prop_map(|(i, b)| TraceMutation::InsertByte(i, b)),
    ]
}

/// Applies `mutations` to `text` (fields split at `delimiter`).
fn mutate_trace(text: &str, delimiter: u8, mutations: &[TraceMutation]) -> Vec<u8> {
    let mut lines: Vec<Vec<Vec<u8>>> = text
        .lines()
        .map(|l| {
            l.as_bytes()
                .split(|b| *b == delimiter)
                .map(<[u8]>::to_vec)
                .collect()
        })
        .collect();
    let mut eol: &[u8] = b"\n";
    let mut bom = false;
    let mut byte_edits = Vec::new();
    for m in mutations {
        let n = lines.len();
        match m {
            TraceMutation::Replace(l, f, t) if n > 0 => {
                let line = &mut lines[l.index(n)];
                if !line.is_empty() {
                    let k = f.index(line.len());
                    let all = TOKENS.len() + TRACE_TOKENS.len();
                    let i = t.index(all);
                    line[k] = if i < TOKENS.len() {
                        TOKENS[i].as_bytes().to_vec()
                    } else {
                        TRACE_TOKENS[i - TOKENS.len()].to_vec()
                    };
                }
            }
            TraceMutation::DeleteField(l, f) if n > 0 => {
                let line = &mut lines[l.index(n)];
                if !line.is_empty() {
                    line.remove(f.index(line.len()));
                }
            }
            TraceMutation::DuplicateField(l, f) if n > 0 => {
                let line = &mut lines[l.index(n)];
                if !line.is_empty() {
                    let k = f.index(line.len());
                    let v = line[k].clone();
                    line.insert(k, v);
                }
            }
            TraceMutation::DuplicateLine(l) if n > 0 => {
                let k = l.index(n);
                lines.insert(k, lines[k].clone());
            }
            TraceMutation::DeleteLine(l) if n > 0 => {
                lines.remove(l.index(n));
            }
            TraceMutation::BlankLine(l) => {
                lines.insert(l.index(n + 1), vec![Vec::new()]);
            }
            TraceMutation::Crlf => eol = b"\r\n",
            TraceMutation::Bom => bom = true,
            TraceMutation::Truncate(_) | TraceMutation::InsertByte(..) => {
                byte_edits.push(m.clone())
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if bom {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    for line in &lines {
        out.extend_from_slice(&line.join(&delimiter));
        out.extend_from_slice(eol);
    }
    for m in byte_edits {
        match m {
            TraceMutation::Truncate(i) => out.truncate(i.index(out.len() + 1)),
            TraceMutation::InsertByte(i, b) => out.insert(i.index(out.len() + 1), b),
            _ => {}
        }
    }
    out
}

/// A temp file holding `bytes`, removed on drop.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(bytes: &[u8]) -> TempFile {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("dmlsched-robust-{}-{n}.csv", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A loader's answer is a result with jobs, or a typed error whose line
/// (when it names one) is a line of the input.
fn check_load(result: Result<Vec<TraceJob>, TraceError>, bytes: &[u8]) {
    let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    match result {
        Ok(jobs) => assert!(!jobs.is_empty()),
        Err(e) => {
            if let TraceError::Format { line, .. } = &e {
                assert!((1..=lines).contains(line), "line {line} of {lines}: {e}");
            }
            let msg = e.to_string();
            assert!(
                !msg.is_empty() && msg.matches(" line ").count() <= 1,
                "{msg}"
            );
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Every trace loader on mutated rows and headers: a result or a typed
    /// error naming a line of the input, never a panic or a hang.
    #[test]
    fn trace_loaders_on_mutated_inputs(
        f in 0..TraceFormat::ALL.len(),
        mutations in prop::collection::vec(trace_mutation(), 1..5),
    ) {
        let format = TraceFormat::ALL[f];
        let delimiter = if format == TraceFormat::Gavel { b'\t' } else { b',' };
        let bytes = mutate_trace(trace_sample(format), delimiter, &mutations);
        within(WATCHDOG_S, "trace::load on a mutated input", move || {
            let file = TempFile::new(&bytes);
            check_load(load(&file.0, Some(format)), &bytes);
            check_load(load(&file.0, None), &bytes);
            check_load(read_format(&bytes[..], format, None).map(|r| r.jobs), &bytes);
        });
    }

    /// The cluster descriptions (Tiresias spec, Alibaba nodes) on mutated
    /// inputs.
    #[test]
    fn cluster_loaders_on_mutated_inputs(mutations in prop::collection::vec(trace_mutation(), 1..4)) {
        let spec = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n2,16,4,40,256\n";
        let nodes = "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0001,64000,262144,2,G2\nopenb-node-0002,96000,786432,8,V100M32\n";
        let spec = mutate_trace(spec, b',', &mutations);
        let nodes = mutate_trace(nodes, b',', &mutations);
        within(WATCHDOG_S, "cluster loaders on a mutated input", move || {
            if let Ok(s) = read_tiresias_cluster_spec(&spec[..]) {
                let cluster = s.to_cluster().unwrap();
                assert_eq!(cluster.machines.len() as u64, s.machines());
            }
            if let Ok(n) = read_alibaba_nodes(&nodes[..]) {
                assert!(!n.is_empty());
            }
        });
    }
}

/// Extreme but valid instances for OASiS: long horizons, huge and tiny
/// utilities, tiny demands, tiny and huge capacities.
fn extreme_instance() -> impl Strategy<Value = (Cluster, Vec<Job>, f64, u32)> {
    let horizon = prop::sample::select(vec![1u32, 2, 7, 300, 1 << 16, u32::MAX]);
    let slot = prop::sample::select(vec![1e-3, 1.0, 3600.0, 1e12]);
    let cpu = prop::sample::select(vec![1e-9, 64.0, 1e15, 1e300]);
    let nic = prop::sample::select(vec![1.0, 100.0, 1e12]);
    let utility = prop::sample::select(vec![
        Utility::Constant { value: 0.0 },
        Utility::Constant { value: 5e-324 },
        Utility::Constant { value: 1.0 },
        Utility::Constant { value: 1e19 },
        Utility::Constant { value: 1e300 },
        Utility::Sigmoid {
            g1: 1e300,
            g2: 50.0,
            g3: 0.0,
        },
        Utility::Table {
            values: vec![1e300, 0.0],
        },
        Utility::Linear {
            g1: 1e20,
            slope: 1e19,
        },
    ]);
    let demand = prop::sample::select(vec![1e-12, 1e-6, 1.0, 64.0]);
    let nic_demand = prop::sample::select(vec![1e-12, 1e-3, 1.0]);
    let omega = prop::sample::select(vec![1e-9, 0.5, 3.0]);
    let counts = (1u32..4, 1u32..4, 1u32..3);
    let job = (utility, (demand, nic_demand), omega, counts, any::<bool>());
    (horizon, slot, (cpu, nic), prop::collection::vec(job, 0..3)).prop_map(
        |(horizon, slot, (cpu, nic), jobs)| {
            let server = |id, hosts| {
                Machine::new(
                    MachineId(id),
                    Resources::zero().cpu_cores(cpu).nic(gbps(nic)),
                    gbps(1.0),
                )
                .hosting(hosts)
            };
            let cluster = Cluster::new(vec![
                server(0, Hosting::Workers),
                server(1, Hosting::ParameterServers),
            ]);
            let jobs = jobs
                .into_iter()
                .enumerate()
                .map(|(i, (u, (d, b), omega, (e, n, m), late))| {
                    let mut job = oasis_job(i as u32, u, d);
                    let Architecture::ParameterServer(p) = &mut job.architecture else {
                        unreachable!()
                    };
                    (p.epochs, p.data_chunks, p.minibatches_per_chunk) = (e, n, m);
                    (p.max_workers, p.max_ps) = (n, n);
                    p.minibatch_compute_s = omega * slot;
                    p.worker.nic_bps = gbps(b);
                    p.ps.nic_bps = gbps(b);
                    if late {
                        job.arrival_s = slot * (f64::from(horizon) - 1.0);
                    }
                    job
                })
                .collect();
            (cluster, jobs, slot, horizon)
        },
    )
}

proptest! {
    #![proptest_config(config(48))]

    /// OASiS (both bound rules) on valid but extreme instances: a result
    /// whose certificate checks, or a typed error.
    #[test]
    fn oasis_on_extreme_instances((cluster, jobs, slot, horizon) in extreme_instance()) {
        within(WATCHDOG_S, "OASiS on an extreme instance", move || {
            let Ok(inst) = Instance::new(cluster, jobs, slot, horizon) else {
                return;
            };
            for bounds in [BoundsChoice::Eta, BoundsChoice::ValueFloor { v_floor: None }] {
                oasis_result_or_typed_error(&inst, bounds).unwrap();
            }
        });
    }
}
