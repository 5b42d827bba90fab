//! The `dmlsched` command line on the shipped instance files: every
//! algorithm runs and its schedule passes the checker, `--out` writes JSON
//! that reads back, bad input exits with code 2 and a one-line message.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::{Command, Output};

use dmlsched::Certificate;
use dmlsched::schedule::Schedule;

fn dmlsched(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dmlsched"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the dmlsched binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const PS: &str = "examples/data/instance_ps.json";
const RING: &str = "examples/data/instance_ring.json";
const RING_BATCH: &str = "examples/data/instance_ring_batch.json";
const LAYERED: &str = "examples/data/instance_layered.json";

#[test]
fn every_algorithm_solves_its_instance_file() {
    for (algorithm, file) in [
        ("oasis", PS),
        ("locality", PS),
        ("gadget", RING),
        ("gadget", RING_BATCH),
        ("sjf-bco", RING_BATCH),
        ("rar-ff", RING_BATCH),
        ("rar-ls", RING_BATCH),
        ("rar-rand", RING_BATCH),
    ] {
        let out = dmlsched(&["solve", "--algorithm", algorithm, file, "--seed", "3"]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{algorithm}: {}", text(&out.stderr));
        assert!(
            stdout.starts_with(&format!("{algorithm} on {file}: 10 jobs"))
                || stdout.starts_with(&format!("{algorithm} on {file}: 8 jobs")),
            "{stdout}"
        );
        assert!(
            stdout.contains("the schedule passed schedule::verify"),
            "{stdout}"
        );
        assert!(stdout.contains("\n  scope: OPT is"), "{stdout}");
        assert!(stdout.contains("job 0:"), "{stdout}");
    }
}

#[test]
fn smd_runs_over_the_arrivals_with_a_certificate_per_epoch() {
    let dir = std::env::temp_dir().join(format!("dmlsched-cli-smd-{}", std::process::id()));
    let out = dmlsched(&[
        "solve",
        "-a",
        "smd",
        LAYERED,
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.starts_with(&format!(
            "smd on {LAYERED}: 12 jobs, 12 completed, 0 unfinished (horizon); \
             the schedule passed schedule::verify"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("every certificate checked"), "{stdout}");
    let schedule: Schedule =
        serde_json::from_str(&std::fs::read_to_string(dir.join("schedule.json")).unwrap()).unwrap();
    assert_eq!(schedule.jobs.len(), 12);
    let epochs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("epochs.json")).unwrap()).unwrap();
    let epochs = epochs.as_array().unwrap();
    assert!(!epochs.is_empty());
    for e in epochs {
        let groups = e["fractional_groups"].as_u64().unwrap();
        assert!(groups <= e["capacity_rows"].as_u64().unwrap(), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // SMD needs layered jobs: other instances are bad input.
    let out = dmlsched(&["solve", "-a", "smd", PS]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // ... and it runs as a simulator policy too.
    let out = dmlsched(&["simulate", LAYERED, "--policies", "fifo,smd,optimus"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn out_writes_schedule_and_certificate_that_read_back() {
    let dir = std::env::temp_dir().join(format!("dmlsched-cli-test-{}", std::process::id()));
    let out = dmlsched(&[
        "solve",
        "-a",
        "gadget",
        RING,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let schedule: Schedule =
        serde_json::from_str(&std::fs::read_to_string(dir.join("schedule.json")).unwrap()).unwrap();
    let cert: Certificate =
        serde_json::from_str(&std::fs::read_to_string(dir.join("certificate.json")).unwrap())
            .unwrap();
    let inst =
        dmlsched::model::Instance::from_json(&std::fs::read_to_string(RING).unwrap()).unwrap();
    dmlsched::schedule::verify(&inst, &schedule).unwrap();
    cert.check(1e-9).unwrap();
    assert_eq!(cert.algorithm, "gadget");
    assert!(text(&out.stdout).contains("gadget (maximise)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parameters_change_the_run() {
    let dir = std::env::temp_dir().join(format!("dmlsched-cli-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let params = dir.join("params.json");
    std::fs::write(&params, r#"{"oracle": "exhaustive", "headroom": true}"#).unwrap();
    let out = dmlsched(&[
        "solve",
        "-a",
        "gadget",
        RING,
        "--params",
        params.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The exhaustive oracle has a ratio; the greedy default has none.
    assert!(
        !stdout.contains("no ratio for the greedy embedding"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_with_code_two_and_one_line() {
    let dir = std::env::temp_dir().join(format!("dmlsched-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let bad_params = dir.join("bad.json");
    std::fs::write(&bad_params, r#"{"no_such_option": 1}"#).unwrap();
    let nan = dir.join("nan.json");
    let inst = std::fs::read_to_string(RING).unwrap();
    std::fs::write(
        &nan,
        inst.replacen("\"slot_length_s\": 60.0", "\"slot_length_s\": -1.0", 1),
    )
    .unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["solve", "-a", "gadget", "/no/such/file.json"],
        vec!["solve", "-a", "gadget", empty.to_str().unwrap()],
        vec!["solve", "-a", "gadget", nan.to_str().unwrap()],
        vec![
            "solve",
            "-a",
            "gadget",
            RING,
            "--params",
            bad_params.to_str().unwrap(),
        ],
        vec!["solve", "-a", "no-such-algorithm", RING],
        vec!["solve", RING],
        vec!["no-such-command"],
        vec!["simulate", RING, "--policies", "no-such-policy"],
        vec![
            "simulate",
            RING,
            "--policies",
            "gadget",
            "--params",
            "fifo=x.json",
        ],
        vec!["simulate", RING],
        // A job or cluster outside the algorithm's model is bad input too.
        vec!["solve", "-a", "oasis", RING],
        vec!["replay", "/no/such/trace.csv"],
        vec!["replay", RING, "--jobs", "0"],
        vec!["replay", RING, "--load-scales", "NaN"],
        vec!["replay", RING, "--horizon", "soon"],
        vec!["replay", RING, "--utility", "sigmoid:x"],
        vec!["replay", RING, "--policies", "no-such-policy"],
        vec!["replay", RING, "--tiresias-thresholds", "7200,3250"],
        vec!["pcip", "/no/such/problem.json"],
        vec!["pcip", "examples/pcip/ka5.json", "--time-limit", "0"],
        vec!["pcip", "examples/pcip/ka5.json", "--bound-budget", "-1"],
        // An infeasible program has no answer: bad input, not a failed run.
        vec!["pcip", "examples/pcip/ka6.json"],
    ];
    for args in cases {
        let out = dmlsched(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("Error {") && !stderr.contains("Some("),
            "{args:?}: {stderr}"
        );
    }
    assert!(Path::new(RING).is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_subcommand_has_help() {
    for args in [
        vec!["--help"],
        vec!["solve", "--help"],
        vec!["simulate", "--help"],
        vec!["replay", "--help"],
        vec!["pcip", "--help"],
    ] {
        let out = dmlsched(&args);
        assert!(out.status.success());
        assert!(text(&out.stdout).contains("Usage: dmlsched"), "{args:?}");
    }
}

#[test]
fn simulate_runs_baselines_and_algorithm_policies_and_writes_reports() {
    let dir = std::env::temp_dir().join(format!("dmlsched-cli-sim-{}", std::process::id()));
    let out = dmlsched(&[
        "simulate",
        RING,
        "--policies",
        "fifo,ff-bandwidth,sjf-bco-online,gadget",
        "--stop",
        "horizon",
        "--stop-at-convergence",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for p in ["fifo", "ff-bandwidth", "sjf-bco-online", "gadget"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{p} "))),
            "{stdout}"
        );
    }
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 5, "{summary}");
    let jobs = std::fs::read_to_string(dir.join("jobs.csv")).unwrap();
    assert_eq!(jobs.lines().filter(|l| l.starts_with("policy,")).count(), 1);
    assert_eq!(jobs.lines().count(), 1 + 4 * 10, "{jobs}");
    for f in ["utilization.csv", "jct_cdf.svg", "utilization.svg"] {
        assert!(std::fs::metadata(dir.join(f)).unwrap().len() > 0, "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();

    let out = dmlsched(&["simulate", PS, "--policies", "oasis,locality,drf"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A small Philly-format trace: `n` jobs, one every 10 minutes, of 1, 2 or 4
/// GPUs lasting 20 minutes to 2 hours.
fn philly_trace(dir: &Path, n: usize) -> std::path::PathBuf {
    let mut csv = String::from("timestamp,duration,num_gpus,gpu_time,cluster\n");
    for i in 0..n {
        let (h, m) = (i / 6, (i % 6) * 10);
        let duration = 1200 + 600 * (i % 10);
        let gpus = [1, 2, 4][i % 3];
        csv.push_str(&format!(
            "2017-10-09 {h:02}:{m:02}:00,{duration}.0,{gpus},{}.0,abc\n",
            duration * gpus
        ));
    }
    let path = dir.join("philly.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn replay_runs_baselines_and_oasis_on_a_trace_and_writes_reports() {
    let dir = std::env::temp_dir().join(format!("dmlsched-cli-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = philly_trace(&dir, 30);
    let out_dir = dir.join("out");
    let out = dmlsched(&[
        "replay",
        trace.to_str().unwrap(),
        "--jobs",
        "30",
        "--gpus",
        "16",
        "--policies",
        "fifo,tiresias,oasis",
        "--seeds",
        "0,1",
        "--load-scales",
        "1,2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // OASiS among the policies: PS jobs on machines that host both roles
    // (no PS-only machines), a horizon that covers the jobs and sigmoid
    // utilities, said in the header.
    let header = stdout.lines().next().unwrap();
    assert!(!header.contains("PS-only"), "{header}");
    for part in [
        "16 GPUs, 8 per machine",
        "parameter-server recipe",
        "horizon cover:3",
        "utility sigmoid:2:4",
    ] {
        assert!(header.contains(part), "{header}");
    }
    let summary = std::fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + 3 * 2 * 2, "{summary}");
    let oasis_rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("oasis,"))
        .collect();
    assert_eq!(oasis_rows.len(), 4);
    // OASiS completes jobs and earns utility on the replay.
    let utility_col = summary
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|h| h == "total_utility")
        .unwrap();
    // The label columns before it hold commas inside quotes: count from
    // the end, where every cell is a plain number or word.
    let from_end = summary.lines().next().unwrap().split(',').count() - utility_col;
    let utility = |row: &str| -> f64 {
        let cols: Vec<&str> = row.split(',').collect();
        cols[cols.len() - from_end].parse().unwrap()
    };
    assert!(oasis_rows.iter().all(|r| utility(r) > 0.0), "{summary}");
    for f in [
        "jobs-oasis-x1-seed0.csv",
        "jobs-fifo-x2-seed1.csv",
        "utilization.csv",
        "jct_cdf.svg",
        "jct_vs_load.svg",
        "utilization.svg",
    ] {
        assert!(std::fs::metadata(out_dir.join(f)).unwrap().len() > 0, "{f}");
    }
    // Every job OASiS rejected says why, in the per-job table and the
    // printed summary.
    let jobs = std::fs::read_to_string(out_dir.join("jobs-oasis-x1-seed0.csv")).unwrap();
    for row in jobs.lines().skip(1) {
        let cols: Vec<&str> = row.split(',').collect();
        let (rejected, why) = (cols[13], cols[15]);
        assert_eq!(rejected == "true", !why.is_empty(), "{row}");
    }
    if jobs.lines().any(|l| l.contains(",true,false,")) {
        assert!(stdout.contains("rejected\n"), "{stdout}");
    }
    // The printed table names the share of each resource held.
    assert!(stdout.contains("GPU") && stdout.contains("CPU") && stdout.contains("NIC"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn pcip_solves_the_known_answer_programs() {
    for (name, opt) in [("ka1", 2.0), ("ka4", 15.0), ("ka5", 15.0)] {
        let out = dmlsched(&["pcip", &format!("examples/pcip/{name}.json"), "--exact"]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["objective"].as_f64(), Some(opt), "{name}");
        assert_eq!(v["certificate"]["exact"]["status"], "Optimal", "{name}");
    }
    // The pipeline with a bound budget certifies ka5's optimum too.
    let out = dmlsched(&[
        "pcip",
        "examples/pcip/ka5.json",
        "--bound-budget",
        "5",
        "--no-neighbourhood",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["objective"].as_f64(), Some(15.0));
    assert_eq!(v["certificate"]["exact"]["dual_bound"].as_f64(), Some(15.0));
}
