//! `dmlsched allocate`: every policy answers the shipped input with the
//! documented JSON, and bad input is one `error:` line with exit code 2.
#![cfg(feature = "cli")]

mod common;

use common::dmlsched_within;
use dmlsched::allocate::AllocationPolicy;

const SECS: f64 = 60.0;
const EXAMPLE: &str = "examples/data/allocate.json";

fn answer(policy: &str, input: &str) -> serde_json::Value {
    let run = dmlsched_within(SECS, &["allocate", "--policy", policy, input]);
    serde_json::from_str(run.ok(policy)).unwrap()
}

#[test]
fn every_policy_answers_the_example() {
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(EXAMPLE).unwrap()).unwrap();
    for policy in AllocationPolicy::ALL {
        let out = answer(policy.name(), EXAMPLE);
        assert_eq!(out["policy"], policy.name());
        let alloc = out["allocation"].as_object().unwrap();
        assert_eq!(alloc.len(), 5, "{policy}");
        // Gavel's constraints, exactly, on the printed fractions.
        let mut used = std::collections::BTreeMap::new();
        for job in input["jobs"].as_array().unwrap() {
            let id = job["id"].to_string();
            let row = alloc[&id].as_object().unwrap();
            assert_eq!(row.len(), 3, "{policy}: job {id}");
            let sum: f64 = row.values().map(|v| v.as_f64().unwrap()).sum();
            assert!(sum <= 1.0, "{policy}: job {id} sums to {sum}");
            for (t, x) in row {
                let x = x.as_f64().unwrap();
                assert!((0.0..=1.0).contains(&x));
                *used.entry(t.clone()).or_insert(0.0) += job["scale_factor"].as_f64().unwrap() * x;
            }
            assert!(out["effective_throughput"][&id].as_f64().unwrap() >= 0.0);
        }
        for (t, u) in used {
            assert!(
                u <= input["gpu_types"][&t].as_f64().unwrap(),
                "{policy}: {t} uses {u}"
            );
        }
        let fifo = matches!(policy, AllocationPolicy::Fifo | AllocationPolicy::FifoPerf);
        assert_eq!(out["objective"].is_null(), fifo, "{policy}");
        assert_eq!(out["certificate"].is_null(), fifo, "{policy}");
        if fifo {
            continue;
        }
        let objective = out["objective"].as_f64().unwrap();
        let cert = &out["certificate"];
        assert_eq!(cert["objective"].as_f64().unwrap(), objective);
        assert_eq!(cert["relaxation_bound"]["kind"], "LpDualSafe");
        let bound = cert["relaxation_bound"]["value"].as_f64().unwrap();
        let maximise = cert["sense"] == "Maximise";
        if maximise {
            assert!(bound >= objective, "{policy}: {bound} < {objective}");
        } else {
            assert!(bound <= objective, "{policy}: {bound} > {objective}");
        }
        assert!(
            (bound - objective).abs() <= 1e-6 * objective.abs(),
            "{policy}"
        );
        assert_eq!(cert["effective_throughput"], out["effective_throughput"]);
        let ftf = policy == AllocationPolicy::FinishTimeFairness;
        assert_eq!(cert.get("bracket").is_some(), ftf, "{policy}");
    }
}

/// The example's answers by hand. Max-sum throughput: every job on its
/// fastest type would reach 4 + 2 + 7.2 + 16.2 + 28.2 = 57.6 steps/s but
/// needs 6 V100s of 4. Job 3 (4 GPUs) fills the P100s (16.2 against 13.9
/// on the V100s, which it would fill alone); the V100s go to the largest
/// gains per GPU over the K80s, jobs 4 (22.1 on 2 GPUs), 2 (3.8) and 0
/// (3.0), and job 1 (0.8 on 2 GPUs) runs on the K80s: 57.6 − 0.8 = 56.8.
#[test]
fn the_example_by_hand() {
    let out = answer("max-sum-throughput", EXAMPLE);
    assert!((out["objective"].as_f64().unwrap() - 56.8).abs() < 1e-9);
    // fifo takes the first type by name with room: k80 (4 GPUs) for jobs
    // 0, 1 (2 GPUs) and 2, then p100 for job 3 (4 GPUs), v100 for job 4.
    let fifo = answer("fifo", EXAMPLE);
    for (id, t) in [
        ("0", "k80"),
        ("1", "k80"),
        ("2", "k80"),
        ("3", "p100"),
        ("4", "v100"),
    ] {
        assert_eq!(fifo["allocation"][id][t], 1.0, "job {id}");
    }
}

#[test]
fn bad_input_is_one_error_line() {
    let dir = std::env::temp_dir().join(format!("dmlsched-allocate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let ok = r#"{"gpu_types": {"v100": 2}, "jobs": [{"id": 0, "throughput": {"v100": 1}}]}"#;
    let cases: Vec<(String, &str, &str)> = vec![
        (file("empty.json", ""), "fifo", "EOF while parsing"),
        (file("bad.json", "{"), "fifo", "not an allocation input"),
        (file("array.json", "[1]"), "fifo", "not an allocation input"),
        (
            file(
                "unknown.json",
                r#"{"gpu_types": {"a": 1}, "jobs": [], "x": 1}"#,
            ),
            "fifo",
            "unknown field `x`",
        ),
        (
            file("nojobs.json", r#"{"gpu_types": {"a": 1}, "jobs": []}"#),
            "fifo",
            "no job",
        ),
        (
            file(
                "notypes.json",
                r#"{"gpu_types": {}, "jobs": [{"id": 0, "throughput": {}}]}"#,
            ),
            "fifo",
            "no GPU type",
        ),
        (
            file(
                "missing.json",
                r#"{"gpu_types": {"a": 1, "b": 1}, "jobs": [{"id": 7, "throughput": {"a": 1}}]}"#,
            ),
            "max-min-fairness",
            "job 7: throughput.b: missing",
        ),
        (
            file(
                "negative.json",
                r#"{"gpu_types": {"a": 1}, "jobs": [{"id": 3, "throughput": {"a": -1}}]}"#,
            ),
            "max-sum-throughput",
            "job 3: throughput.a",
        ),
        (
            file(
                "dup.json",
                r#"{"gpu_types": {"a": 1}, "jobs": [{"id": 1, "throughput": {"a": 1}}, {"id": 1, "throughput": {"a": 2}}]}"#,
            ),
            "fifo",
            "job 1: the id is given twice",
        ),
        (
            file("nosteps.json", ok),
            "min-makespan",
            "job 0: steps_remaining: missing",
        ),
        (
            file("noelapsed.json", ok),
            "finish-time-fairness",
            "job 0: steps_remaining: missing",
        ),
        (
            file("noprices.json", ok),
            "max-throughput-per-cost",
            "prices: missing",
        ),
        (
            file(
                "zero.json",
                r#"{"gpu_types": {"a": 1}, "jobs": [{"id": 4, "throughput": {"a": 0}}]}"#,
            ),
            "max-min-fairness-perf",
            "job 4: throughput",
        ),
        (
            file("ok.json", ok),
            "nope",
            "unknown allocation policy `nope`",
        ),
        (
            dir.join("absent.json").to_string_lossy().into_owned(),
            "fifo",
            "absent.json",
        ),
    ];
    for (path, policy, want) in &cases {
        let run = dmlsched_within(SECS, &["allocate", "--policy", policy, path]);
        let line = run.one_error_line(&format!("{policy} {path}"));
        assert!(line.contains(want), "{policy} {path}: {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
