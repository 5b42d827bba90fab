//! Replays a researcher can read: policies checked against the run's
//! architecture before anything runs, each policy on the recipe of the
//! architecture it schedules (the SMD-style scheduler on layered jobs), a failing policy losing only its own run,
//! algorithm certificates in `certificates.json` and a bound column, and
//! the utility plot. Each command runs the built binary under the watchdog
//! of `tests/common` (time and 1 GiB peak memory).
#![cfg(feature = "cli")]

mod common;
use common::*;

use std::collections::HashMap;
use std::path::PathBuf;

use dmlsched::Certificate;

/// Ceiling of the runs: hangs only, not a performance target.
const SECS: f64 = 300.0;

fn trace(name: &str) -> String {
    traces_dir().join(name).to_string_lossy().into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dmlsched-replay-readable-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `dmlsched replay TRACE ARGS… --out DIR` with DIR a fresh scratch folder
/// named after `name`: the run and the folder.
fn replay_into(name: &str, trace_file: &str, args: &[&str]) -> (CliRun, PathBuf) {
    let dir = scratch(name);
    let d = dir.to_string_lossy().into_owned();
    let t = trace(trace_file);
    let mut full = vec!["replay", t.as_str()];
    full.extend_from_slice(args);
    full.extend(["--out", d.as_str()]);
    (dmlsched_within(SECS, &full), dir)
}

/// `summary.csv` of `dir` as one map per row.
fn summary_rows(dir: &std::path::Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).expect("summary.csv");
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            head.iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn a_forced_architecture_refuses_the_policies_that_cannot_run_it_up_front() {
    let t = trace("philly.csv");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &t,
            "--arch",
            "ps",
            "--policies",
            "fifo,gadget,sjf-bco-online",
        ],
    );
    let line = run.one_error_line("--arch ps with ring policies");
    for needle in ["gadget", "sjf-bco-online", "drop --arch"] {
        assert!(line.contains(needle), "{needle} in {line}");
    }
    assert!(!line.contains("fifo"), "{line}");
    // Refused before the trace is read: no table.
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let run = dmlsched_within(
        SECS,
        &["replay", &t, "--arch", "rar", "--policies", "oasis,smd"],
    );
    let line = run.one_error_line("--arch rar with oasis and smd");
    assert!(
        line.contains("oasis (parameter-server)") && line.contains("smd (layered)"),
        "{line}"
    );
    // A policy with a recipe of its own runs only on it.
    let run = dmlsched_within(
        SECS,
        &["replay", &t, "--arch", "ps", "--policies", "fifo,smd"],
    );
    assert!(
        run.one_error_line("--arch ps with smd")
            .contains("smd (layered)")
    );
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &t,
            "--arch",
            "layered",
            "--policies",
            "fifo,oasis,smd",
        ],
    );
    let line = run.one_error_line("--arch layered with oasis");
    assert!(
        line.contains("builds layered jobs") && line.contains("oasis"),
        "{line}"
    );
    assert!(!line.contains("smd"), "{line}");
}

#[test]
fn smd_replays_on_the_layered_recipe() {
    let (run, dir) = replay_into(
        "smd",
        "tiresias-60_job.csv",
        &["--jobs", "8", "--gpus", "16", "--policies", "fifo,smd"],
    );
    let out = run.ok("fifo and smd").to_string();
    assert!(out.contains("layered recipe for smd"), "{out}");
    let rows = summary_rows(&dir);
    assert_eq!(rows.len(), 2);
    let smd = rows.iter().find(|r| r["policy"] == "smd").unwrap();
    assert!(smd["workload"].contains("layered recipe"), "{smd:?}");
    assert!(smd["completed"].parse::<usize>().unwrap() > 0, "{smd:?}");
    for row in &rows {
        let n = |k: &str| row[k].parse::<usize>().unwrap();
        assert_eq!(
            n("completed") + n("rejected") + n("unfinished"),
            n("jobs"),
            "{row:?}"
        );
    }
    // Its machines are the SMD-style workload's 8-GPU machines.
    let t = trace("tiresias-60_job.csv");
    let run = dmlsched_within(
        SECS,
        &["replay", &t, "--policies", "smd", "--gpus-per-machine", "4"],
    );
    let line = run.one_error_line("smd on 4-GPU machines");
    assert!(
        line.contains("--gpus-per-machine 4") && line.contains("8"),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mixed_architectures_run_each_policy_on_its_recipe_with_certificates() {
    let (run, dir) = replay_into(
        "mixed",
        "tiresias-60_job.csv",
        &[
            "--jobs",
            "10",
            "--gpus",
            "16",
            "--policies",
            "fifo,oasis,sjf-bco-online",
        ],
    );
    let out = run.ok("fifo, oasis and a ring baseline").to_string();
    assert!(
        out.contains("ring-all-reduce recipe for sjf-bco-online"),
        "{out}"
    );
    assert!(out.contains("certificate of oasis"), "{out}");
    let rows = summary_rows(&dir);
    assert_eq!(rows.len(), 3);
    for row in &rows {
        let recipe = if row["policy"] == "sjf-bco-online" {
            "ring-all-reduce recipe"
        } else {
            "parameter-server recipe"
        };
        assert!(row["workload"].contains(recipe), "{row:?}");
        let n = |k: &str| row[k].parse::<usize>().unwrap();
        assert_eq!(
            n("completed") + n("rejected") + n("unfinished"),
            n("jobs"),
            "{row:?}"
        );
        // Only the algorithm has a bound, and it bounds its plans' utility.
        assert_eq!(
            row["utility_bound"].is_empty(),
            row["policy"] != "oasis",
            "{row:?}"
        );
    }
    let certs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("certificates.json")).unwrap())
            .unwrap();
    let certs = certs.as_array().unwrap();
    assert_eq!(certs.len(), 1);
    assert_eq!(certs[0]["policy"], "oasis");
    let c: Certificate = serde_json::from_value(certs[0]["certificate"].clone()).unwrap();
    c.check(1e-6).unwrap();
    let oasis = rows.iter().find(|r| r["policy"] == "oasis").unwrap();
    let bound: f64 = oasis["utility_bound"].parse().unwrap();
    assert!(bound >= c.objective - 1e-9, "{bound} < {}", c.objective);
    for f in ["utility.svg", "jct_cdf.svg", "jct_vs_load.svg"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let svg = std::fs::read_to_string(dir.join("utility.svg")).unwrap();
    assert!(
        svg.contains("\ntotal utility\n") && svg.contains("\noasis\n"),
        "{svg}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_policy_loses_only_its_own_run() {
    // 10-s slots over a Philly window give the GADGET-style scheduler more
    // horizon × machines than it takes: it fails, FIFO's results stay.
    let (run, dir) = replay_into(
        "partial",
        "philly.csv",
        &[
            "--jobs",
            "40",
            "--policies",
            "fifo,gadget",
            "--slot-length",
            "10",
        ],
    );
    let line = run.one_error_line("gadget fails, fifo runs").to_string();
    assert!(
        line.contains("1 of 2 runs failed") && line.contains("gadget"),
        "{line}"
    );
    assert!(run.stdout.contains("failed: gadget"), "{}", run.stdout);
    let rows = summary_rows(&dir);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["policy"], "fifo");
    assert_eq!(rows[0]["completed"], "40");
    let failures = std::fs::read_to_string(dir.join("failures.csv")).unwrap();
    let lines: Vec<&str> = failures.lines().collect();
    assert_eq!(lines.len(), 2, "{failures}");
    assert!(
        lines[1].starts_with("gadget,1,0,") && lines[1].contains(",2,"),
        "{failures}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gadget_replays_with_its_defaults() {
    // Without --slot-length the ring recipe's slots grow until the
    // scheduler takes the horizon, and the default horizon and utility let
    // its jobs finish.
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &trace("philly.csv"),
            "--jobs",
            "8",
            "--policies",
            "gadget",
        ],
    );
    let out = run.ok("gadget with its defaults");
    assert!(out.contains("slots of"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("gadget "))
        .unwrap_or_else(|| panic!("{out}"));
    let done: usize = row.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(done > 0, "{row}");
}
