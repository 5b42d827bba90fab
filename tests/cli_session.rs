//! `dmlsched session` end to end: the shipped transcript gets one reply per
//! event, bad lines get an error and change nothing, a process restarted
//! from `--state` replies as the uninterrupted one, and bad invocations
//! exit with code 2.
#![cfg(feature = "cli")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const CLUSTER: &str = "examples/data/session/cluster.json";
const PAST: &str = "examples/data/session/past.json";
const EVENTS: &str = "examples/data/session/events.jsonl";
const MIXED: &str = "ps=locality,rar=gadget";

/// Runs `dmlsched session` with `args`, `input` on its standard input.
fn session(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dmlsched"))
        .arg("session")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dmlsched binary runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn replies(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dmlsched-session-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn events() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(EVENTS)).unwrap()
}

/// A ring job of `workers` GPUs and `iterations`, as the shipped past jobs.
fn ring(id: u32, workers: u32, iterations: u32) -> String {
    format!(
        r#"{{"id":{id},"utility":{{"kind":"linear","g1":100.0,"slope":1.0}},"architecture":{{"ring_all_reduce":{{"workers":{{"fixed":{workers}}},"iterations":{iterations},"model_bytes":1e8,"minibatch_size":32,"forward_per_sample_s":0.002,"backward_per_iteration_s":0.1,"reserved_bandwidth_bps":2.5e8,"worker":{{"gpus":1.0,"cpu_cores":4.0,"memory_bytes":1.6e10,"nic_bps":1.25e8}}}}}}}}"#
    )
}

fn submit(t: f64, job: &str) -> String {
    format!(r#"{{"event":"submit","time_s":{t},"job":{job}}}"#)
}

#[test]
fn the_shipped_transcript_gets_one_reply_per_event() {
    let input = events();
    let r = replies(&session(
        &["--algorithm", MIXED, "--cluster", CLUSTER, "--past", PAST],
        &input,
    ));
    assert_eq!(r.len(), input.lines().count());
    let admitted = r.iter().filter(|v| v["admitted"] == true).count();
    assert!(admitted >= 3, "{r:?}");
    for v in &r {
        if v.get("admitted").is_some() {
            assert!(v["certificate"]["trivial_bound"].as_f64().unwrap() > 0.0);
            assert_eq!(
                v["admitted"] == true,
                !v["segments"].as_array().unwrap().is_empty()
            );
        }
    }
    // The line whose time goes backwards is refused; the certificate
    // event answers every session's certificate.
    assert!(r.iter().any(|v| {
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("before the session's time"))
    }));
    let certs = r.last().unwrap()["certificates"].as_array().unwrap();
    assert_eq!(certs.len(), 2);
}

#[test]
fn bad_lines_answer_an_error_and_change_nothing() {
    let good = [
        submit(0.0, &ring(1, 4, 3000)),
        submit(60.0, &ring(2, 8, 3000)),
    ];
    let bad = [
        "{not json".to_string(),
        r#"{"event":"reboot"}"#.to_string(),
        r#"{"event":"finish","time_s":10,"job":77}"#.to_string(),
        submit(30.0, &ring(3, 4, 3000).replace("3000", "-5")),
        submit(30.0, &ring(1, 4, 3000)),
        submit(30.0, r#"{"id":9}"#),
        r#"{"event":"usage","machine":99,"from_s":0,"to_s":60,"resources":{"gpus":1,"cpu_cores":0,"memory_bytes":0,"nic_bps":0}}"#.to_string(),
        r#"{"event":"extend","time_s":30,"job":1,"more_s":-1}"#.to_string(),
        r#"{"event":"save"}"#.to_string(),
    ];
    let args = [
        "--algorithm",
        "gadget",
        "--cluster",
        CLUSTER,
        "--past",
        PAST,
    ];
    let clean = replies(&session(&args, &format!("{}\n{}\n", good[0], good[1])));
    let input = format!("{}\n{}\n{}\n", good[0], bad.join("\n"), good[1]);
    let noisy = replies(&session(&args, &input));
    assert_eq!(noisy.len(), bad.len() + 2);
    for (line, v) in bad.iter().zip(&noisy[1..]) {
        assert!(v["error"].is_string(), "{line} -> {v}");
    }
    assert_eq!(noisy[0], clean[0]);
    assert_eq!(noisy.last(), clean.last());
}

#[test]
fn a_restart_from_the_saved_state_replies_as_the_uninterrupted_process() {
    let input = events();
    let lines: Vec<&str> = input.lines().collect();
    let dir = temp_dir("restart");
    let state = dir.join("s.json");
    let state = state.to_str().unwrap();
    let mut args = vec!["--algorithm", MIXED, "--cluster", CLUSTER, "--past", PAST];
    let whole = replies(&session(&args, &input));
    args.extend(["--state", state]);
    for cut in [1, 4, lines.len() - 1] {
        let _ = std::fs::remove_file(state);
        let first = replies(&session(&args, &(lines[..cut].join("\n") + "\n")));
        // The second process is given no --past: it loads the saved state.
        let second = replies(&session(
            &["--algorithm", MIXED, "--cluster", CLUSTER, "--state", state],
            &(lines[cut..].join("\n") + "\n"),
        ));
        let restarted: Vec<Value> = first.into_iter().chain(second).collect();
        assert_eq!(restarted, whole, "cut after {cut} events");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_invocations_exit_with_code_2() {
    let dir = temp_dir("bad");
    let saved = dir.join("s.json");
    let saved_s = saved.to_str().unwrap();
    let ok = session(
        &[
            "-a",
            "gadget",
            "--cluster",
            CLUSTER,
            "--past",
            PAST,
            "--state",
            saved_s,
        ],
        "",
    );
    assert!(ok.status.success());
    std::fs::write(dir.join("empty.json"), "").unwrap();
    let empty = dir.join("empty.json");
    for (args, says) in [
        (vec!["-a", "gadget", "--cluster", CLUSTER], "needs --past"),
        (
            vec!["-a", "fifo", "--cluster", CLUSTER, "--past", PAST],
            "not a session algorithm",
        ),
        (
            vec!["-a", "ps=gadget", "--cluster", CLUSTER, "--past", PAST],
            "not ps",
        ),
        (
            vec![
                "-a",
                "rar=gadget,rar=gadget",
                "--cluster",
                CLUSTER,
                "--past",
                PAST,
            ],
            "two algorithms",
        ),
        (
            vec!["-a", "gadget", "--cluster", PAST, "--past", PAST],
            "past.json: invalid type",
        ),
        (
            vec!["-a", "gadget", "--cluster", CLUSTER, "--past", CLUSTER],
            "list of jobs",
        ),
        // A window past what the state stores ahead (it used to run on,
        // syncing billions of slots, at the first submit).
        (
            vec![
                "-a",
                "locality",
                "--cluster",
                CLUSTER,
                "--past",
                PAST,
                "--window",
                "4000000000",
            ],
            "not in 1..=1048576",
        ),
        (
            vec!["-a", "locality", "--cluster", CLUSTER, "--state", saved_s],
            "runs gadget",
        ),
        (
            vec![
                "-a",
                "gadget",
                "--cluster",
                CLUSTER,
                "--state",
                saved_s,
                "--window",
                "7",
            ],
            "window",
        ),
        (
            vec![
                "-a",
                "gadget",
                "--cluster",
                CLUSTER,
                "--state",
                empty.to_str().unwrap(),
            ],
            "empty.json",
        ),
        (
            vec![
                "-a",
                MIXED,
                "--cluster",
                CLUSTER,
                "--past",
                PAST,
                "--params",
                "x.json",
            ],
            "name the one",
        ),
    ] {
        let out = session(&args, "");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A job id is taken once any session decided on it, even by a rejection:
/// another session over the same state refuses it (its finish would
/// otherwise reach the session that rejected it and leave the plan held).
#[test]
fn an_id_one_session_rejected_is_refused_by_the_other() {
    let worthless = worthless_ps_job(1);
    let input = [
        submit(0.0, &worthless.to_string()),
        submit(0.0, &ring(1, 4, 3000)),
        r#"{"event":"finish","time_s":120,"job":1}"#.to_string(),
    ]
    .join("\n");
    let r = replies(&session(
        &["--algorithm", MIXED, "--cluster", CLUSTER, "--past", PAST],
        &(input + "\n"),
    ));
    assert_eq!(r[0]["admitted"], false, "{}", r[0]);
    assert!(
        r[1]["error"].as_str().unwrap().contains("already"),
        "{}",
        r[1]
    );
    assert_eq!(r[2]["released"], false, "{}", r[2]);
}

/// `resubmit` decides again on a rejected job (a decision line, and the
/// guarantee marked not valid); any other job is a bad line.
#[test]
fn only_a_rejected_job_can_be_resubmitted() {
    let worthless = worthless_ps_job(1);
    let resubmit = |t: f64, job: u32| format!(r#"{{"event":"resubmit","time_s":{t},"job":{job}}}"#);
    let input = [
        submit(0.0, &worthless.to_string()),
        submit(0.0, &ring(2, 4, 3000)),
        resubmit(60.0, 1),
        resubmit(60.0, 2),
        resubmit(60.0, 99),
        resubmit(30.0, 1),
    ]
    .join("\n");
    let r = replies(&session(
        &["--algorithm", MIXED, "--cluster", CLUSTER, "--past", PAST],
        &(input + "\n"),
    ));
    assert_eq!(r[0]["admitted"], false, "{}", r[0]);
    assert_eq!(r[1]["admitted"], true, "{}", r[1]);
    assert_eq!(r[2]["admitted"], false, "{}", r[2]);
    assert_eq!(r[2]["job"], 1, "{}", r[2]);
    let lost = r[2]["certificate"]["guarantee_lost"].to_string();
    assert!(lost.contains("decided again"), "{lost}");
    let error = |v: &Value| v["error"].as_str().unwrap_or_default().to_string();
    assert!(
        error(&r[3]).contains("cannot be submitted again"),
        "{}",
        r[3]
    );
    assert!(error(&r[4]).contains("never submitted"), "{}", r[4]);
    assert!(
        error(&r[5]).contains("before the session's time"),
        "{}",
        r[5]
    );
}

/// The first shipped past parameter-server job as job `id`, worth nothing
/// (its session rejects it as not worth its cost).
fn worthless_ps_job(id: u32) -> Value {
    let ps: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(PAST)).unwrap(),
    )
    .unwrap();
    let mut job = ps[0].clone();
    job["id"] = id.into();
    job["utility"] = serde_json::json!({"kind": "constant", "value": 0.0});
    job
}
