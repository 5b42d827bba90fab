//! JSON I/O of instances: bit-exact round trips of random valid instances,
//! strict input (unknown fields, format version), and validation on read.
#![cfg(feature = "serde")]

use dmlsched::Error;
use dmlsched::model::*;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// Positive finite f64 spanning many magnitudes, including awkward ones
/// whose shortest decimal form needs 17 digits.
fn pos() -> BoxedStrategy<f64> {
    prop_oneof![
        1e-6..1e6f64,
        (1u64..u64::MAX).prop_map(|b| f64::from_bits(b >> 2) + 1e-300),
        Just(0.1 + 0.2),
        Just(1.234_567_890_123_456_7e300),
        Just(f64::MIN_POSITIVE),
    ]
    .boxed()
}

fn nonneg() -> BoxedStrategy<f64> {
    prop_oneof![Just(0.0), pos()].boxed()
}

fn resources() -> BoxedStrategy<Resources> {
    (nonneg(), nonneg(), nonneg(), nonneg(), nonneg())
        .prop_map(|(a, b, c, d, e)| {
            Resources::zero()
                .gpus(a)
                .cpu_cores(b)
                .memory(c)
                .storage(d)
                .nic(e)
        })
        .boxed()
}

fn utility() -> BoxedStrategy<Utility> {
    prop_oneof![
        (nonneg(), nonneg(), -1e3..1e3f64).prop_map(|(g1, g2, g3)| Utility::Sigmoid { g1, g2, g3 }),
        (nonneg(), 0u32..100).prop_map(|(value, deadline_slots)| Utility::DeadlineStep {
            value,
            deadline_slots
        }),
        (nonneg(), nonneg()).prop_map(|(g1, slope)| Utility::Linear { g1, slope }),
        nonneg().prop_map(|value| Utility::Constant { value }),
        proptest::collection::vec(nonneg(), 1..5).prop_map(|mut values| {
            values.sort_by(|a, b| b.total_cmp(a));
            Utility::Table { values }
        }),
    ]
    .boxed()
}

fn architecture() -> BoxedStrategy<Architecture> {
    let layer = (nonneg(), nonneg(), nonneg(), nonneg()).prop_map(|(f, b, m, u)| Layer {
        forward_s: f,
        backward_s: b,
        bytes: m,
        update_s: u,
    });
    let ps = (
        (1u32..5, 1u32..5, 1u32..5, nonneg(), nonneg()),
        (1u32..4, 1u32..4, any::<bool>(), any::<bool>()),
        proptest::option::of(proptest::collection::vec(layer, 1..3)),
        resources(),
    )
        .prop_map(
            |((e, n, m, tau, grad), (w, p, rule, sync), layers, demand)| {
                Architecture::ParameterServer(PsJob {
                    epochs: e,
                    data_chunks: n,
                    minibatches_per_chunk: m,
                    minibatch_compute_s: tau,
                    gradient_bytes: grad,
                    worker: demand,
                    ps: demand,
                    max_workers: w.max(p),
                    max_ps: p,
                    ps_at_most_workers: rule,
                    sync: if sync {
                        SyncMode::Synchronous
                    } else {
                        SyncMode::Asynchronous
                    },
                    layers,
                })
            },
        );
    let rar = (
        prop_oneof![
            (1u32..3).prop_map(WorkerCounts::Fixed),
            proptest::collection::vec(1u32..3, 1..3).prop_map(WorkerCounts::Allowed)
        ],
        (1u64..1000, proptest::option::of(1u64..1000)),
        (
            nonneg(),
            1u32..64,
            nonneg(),
            nonneg(),
            proptest::option::of(pos()),
        ),
        resources(),
    )
        .prop_map(|(workers, (it, conv), (model, mb, f, b, bw), mut demand)| {
            demand.gpus = 1.0;
            Architecture::RingAllReduce(RarJob {
                workers,
                iterations: it,
                convergence_iterations: conv.map(|c| c.min(it)),
                model_bytes: model,
                minibatch_size: mb,
                forward_per_sample_s: f,
                backward_per_iteration_s: b,
                reserved_bandwidth_bps: bw,
                worker: demand,
            })
        });
    prop_oneof![ps.boxed(), rar.boxed()].boxed()
}

fn job(id: u32) -> BoxedStrategy<Job> {
    (
        0.0..3600.0f64,
        utility(),
        nonneg(),
        proptest::option::of("[a-z]{1,6}"),
        proptest::option::of(nonneg()),
        nonneg(),
        (any::<bool>(), any::<bool>()),
        architecture(),
        proptest::collection::btree_map(
            prop::sample::select(vec!["k80", "v100"]).prop_map(String::from),
            0.01..10.0f64,
            0..3,
        ),
    )
        .prop_map(
            move |(arr, u, w, tenant, deadline, reconf, (rigid, pre), arch, speeds)| Job {
                id: JobId(id),
                arrival_s: arr,
                utility: u,
                weight: w,
                tenant,
                deadline_s: deadline,
                reconfiguration_s: reconf,
                discipline: Discipline {
                    elasticity: if rigid {
                        Elasticity::Rigid
                    } else {
                        Elasticity::Elastic
                    },
                    preemptible: pre,
                },
                allowed_machines: None,
                architecture: arch,
                gpu_speeds: speeds,
            },
        )
        .boxed()
}

fn instance() -> impl Strategy<Value = Instance> {
    (
        1usize..4,
        0usize..4,
        pos(),
        pos(),
        0.0..1.0f64,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(n_m, n_j, intra, ext, alpha, racked, typed)| {
            let jobs: Vec<_> = (0..n_j as u32).map(job).collect();
            (Just((n_m, intra, ext, alpha, racked, typed)), jobs)
        })
        .prop_map(|((n_m, intra, ext, alpha, racked, typed), mut jobs)| {
            // Machines big enough for every generated demand (≤ 3 workers + 3 PSs
            // of at most f64::MAX/4 each would overflow; demands stay far below).
            let big = 1e307;
            let machines = (0..n_m as u32)
                .map(|i| {
                    let m = Machine::new(
                        MachineId(i),
                        Resources::zero()
                            .gpus(big)
                            .cpu_cores(big)
                            .memory(big)
                            .storage(big)
                            .nic(big),
                        intra,
                    );
                    let m = if racked { m.in_rack(RackId(0)) } else { m };
                    // A typed cluster alternates its two types.
                    if typed {
                        m.with_gpu_type(["k80", "v100"][i as usize % 2])
                    } else {
                        m
                    }
                })
                .collect();
            let mut cluster = Cluster::new(machines);
            if typed {
                cluster.gpu_types = vec!["k80".into(), "v100".into()];
                // Two named types: every job gives a speed on each.
                for j in &mut jobs {
                    for t in ["k80", "v100"] {
                        j.gpu_speeds.entry(t.into()).or_insert(1.0);
                    }
                }
            } else {
                for j in &mut jobs {
                    j.gpu_speeds.clear();
                }
            }
            if racked {
                cluster.racks.push(Rack {
                    id: RackId(0),
                    uplink_bps: Some(ext),
                });
            }
            cluster.ring.external_bandwidth_bps = ext;
            cluster.ring.degradation = Degradation::Linear { alpha };
            Instance::new(cluster, jobs, 60.0, 61).expect("generator makes valid instances")
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/serde_roundtrip.txt"))),
        ..ProptestConfig::default()
    })]

    /// JSON → Instance → JSON is the identity, bit for bit.
    #[test]
    fn roundtrip_is_bit_exact(inst in instance()) {
        let text = inst.to_json().unwrap();
        let back = Instance::from_json(&text).unwrap();
        prop_assert_eq!(&back, &inst);
        // PartialEq treats 0.0 == -0.0; the text comparison is bit-exact.
        prop_assert_eq!(back.to_json().unwrap(), text);
    }
}

const EXAMPLE: &str = include_str!("../docs/instance-example.json");

#[test]
fn documented_example_parses() {
    let inst = Instance::from_json(EXAMPLE).unwrap();
    assert_eq!(inst.cluster().machines.len(), 3);
    assert_eq!(inst.jobs().len(), 2);
    assert_eq!(inst.slot_length_s(), 3600.0);
}

#[test]
fn unknown_fields_are_rejected() {
    let bad = EXAMPLE.replacen("\"slot_length_s\"", "\"colour\": 1, \"slot_length_s\"", 1);
    let err = Instance::from_json(&bad).unwrap_err();
    assert!(matches!(err, Error::Json(_)), "{err}");
    assert!(err.to_string().contains("colour"), "{err}");

    let bad = EXAMPLE.replacen("\"gpus\"", "\"gpu_count\": 1, \"gpus\"", 1);
    assert!(matches!(Instance::from_json(&bad), Err(Error::Json(_))));
}

#[test]
fn wrong_format_version_is_rejected() {
    let bad = EXAMPLE.replacen("\"format_version\": 1", "\"format_version\": 2", 1);
    match Instance::from_json(&bad) {
        Err(Error::Model(ModelError::UnsupportedFormatVersion {
            found: 2,
            supported: 1,
        })) => {}
        other => panic!("expected UnsupportedFormatVersion, got {other:?}"),
    }
    let missing = EXAMPLE.replacen("\"format_version\": 1,", "", 1);
    assert!(matches!(Instance::from_json(&missing), Err(Error::Json(_))));
}

#[test]
fn json_input_is_validated() {
    let bad = EXAMPLE.replacen("\"arrival_s\": 0.0", "\"arrival_s\": -5.0", 1);
    assert!(matches!(
        Instance::from_json(&bad),
        Err(Error::Model(ModelError::Negative { ref field, .. })) if field == "arrival_s"
    ));
    // serde_json::from_str on the Instance type validates too.
    let via_serde: Result<Instance, _> = serde_json::from_str(&bad);
    assert!(via_serde.unwrap_err().to_string().contains("negative"));
}
