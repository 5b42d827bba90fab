//! `dmlsched::replay` as a library call: the same tables as `dmlsched
//! replay` writes, its messages in the order the command prints them,
//! and bad options answered with typed input errors before the trace is
//! read.
#![cfg(feature = "cli")]

mod common;
use common::*;

use dmlsched::replay::{ReplayConfig, ReplayError, replay};

fn philly() -> std::path::PathBuf {
    traces_dir().join("philly.csv")
}

/// The table in `path` as rows of fields, without the one that measures
/// wall-clock time (`solver_time_s`, not reproducible), every other field
/// as written.
fn reproducible(path: &std::path::Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let timed = rows[0].iter().position(|h| h == "solver_time_s");
    rows.into_iter()
        .map(|mut r| {
            if let Some(i) = timed {
                r.remove(i);
            }
            r
        })
        .collect()
}

/// A 120-job Philly window under FIFO and Tiresias at two load scales:
/// the library's `summary.csv` and per-job tables are byte for byte the
/// command line's, and its messages open the command's output.
#[test]
fn library_replay_writes_what_the_command_writes() {
    let mut config = ReplayConfig::new(philly());
    config.start = Some("2017-11-01".into());
    config.jobs = 120;
    config.policies = vec!["fifo".into(), "tiresias".into()];
    config.load_scales = vec![1.0, 2.0];
    let mut messages: Vec<String> = Vec::new();
    let replayed = replay(&config, &mut messages).expect("replay");
    assert_eq!(replayed.runs.len(), 4);
    assert!(replayed.failures.is_empty());
    let lib_dir = std::env::temp_dir().join(format!("dmlsched-replay-lib-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&lib_dir);
    replayed.write(&lib_dir, &mut ()).expect("write");

    let cli_dir = std::env::temp_dir().join(format!("dmlsched-replay-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cli_dir);
    let trace = philly().to_string_lossy().into_owned();
    let out = cli_dir.to_string_lossy().into_owned();
    let run = dmlsched_within(
        300.0,
        &[
            "replay",
            &trace,
            "--start",
            "2017-11-01",
            "--jobs",
            "120",
            "--policies",
            "fifo,tiresias",
            "--load-scales",
            "1,2",
            "--out",
            &out,
        ],
    );
    let stdout = run.ok("replay");
    for name in [
        "summary.csv",
        "jobs-fifo-x1-seed0.csv",
        "jobs-tiresias-x2-seed0.csv",
    ] {
        let a = reproducible(&lib_dir.join(name));
        let b = reproducible(&cli_dir.join(name));
        assert!(a == b, "{name} differs between the library and the command");
    }
    let printed: Vec<&str> = stdout.lines().take(messages.len()).collect();
    assert_eq!(printed, messages, "the messages open the command's output");
    let _ = std::fs::remove_dir_all(&lib_dir);
    let _ = std::fs::remove_dir_all(&cli_dir);
}

/// A change to a configuration.
type Edit = dyn Fn(&mut ReplayConfig);

/// Bad options are input errors naming the flag, before the trace is read
/// (the trace here does not exist).
#[test]
fn bad_options_are_input_errors() {
    let base = ReplayConfig::new("/nonexistent/trace.csv");
    let cases: Vec<(Box<Edit>, &str)> = vec![
        (Box::new(|c| c.jobs = 0), "--jobs must be at least 1"),
        (
            Box::new(|c| c.seeds.clear()),
            "--seeds needs at least one seed",
        ),
        (
            Box::new(|c| c.load_scales = vec![f64::NAN]),
            "--load-scales: NaN",
        ),
        (
            Box::new(|c| c.slot_length = Some(-1.0)),
            "--slot-length: -1",
        ),
        (
            Box::new(|c| c.policies = vec!["nope".into()]),
            "unknown policy nope",
        ),
        (
            Box::new(|c| c.horizon = Some("cover:x".into())),
            "--horizon cover:x",
        ),
        (
            Box::new(|c| c.utility = Some("step".into())),
            "--utility step",
        ),
        (
            Box::new(|c| c.gpus_per_machine = 7),
            "--gpus 64 --gpus-per-machine 7",
        ),
        (
            Box::new(|c| c.baselines.round_s = f64::NAN),
            "--round-s NaN",
        ),
        (
            Box::new(|c| c.params = vec![("fifo".into(), "{}".into())]),
            "--params fifo",
        ),
        (
            Box::new(|c| {
                c.policies = vec!["oasis".into()];
                c.params = vec![("oasis".into(), "{\"nope\": 1}".into())];
            }),
            "oasis: JSON",
        ),
    ];
    for (edit, want) in cases {
        let mut c = base.clone();
        edit(&mut c);
        match replay(&c, &mut ()) {
            Err(ReplayError::Input(m)) => assert!(m.contains(want), "{m:?} lacks {want:?}"),
            other => panic!("{want}: expected an input error, got {other:?}"),
        }
    }
    // Good options, missing trace: an input error naming the file.
    match replay(&base, &mut ()) {
        Err(ReplayError::Input(m)) => assert!(m.contains("/nonexistent/trace.csv"), "{m}"),
        other => panic!("missing trace: {other:?}"),
    }
}

/// A horizon in slots beyond the GADGET-style scheduler's cell limit is
/// refused at once (longer slots cannot shrink it: the lengthening loop
/// once ran for hours), and the command reads only the parameters files
/// of the policies in its run.
#[test]
fn horizon_in_slots_beyond_the_cell_limit_and_unused_params_files() {
    let mut c = ReplayConfig::new(philly());
    c.jobs = 40;
    c.policies = vec!["gadget".into()];
    c.horizon = Some("10000000".into());
    match replay(&c, &mut ()) {
        Err(ReplayError::Input(m)) => assert!(m.starts_with("--horizon 10000000: "), "{m}"),
        other => panic!("expected an input error, got {other:?}"),
    }
    let trace = philly().to_string_lossy().into_owned();
    let run = dmlsched_within(
        300.0,
        &[
            "replay",
            &trace,
            "--jobs",
            "5",
            "--policies",
            "fifo",
            "--params",
            "oasis=/nonexistent/params.json",
        ],
    );
    run.ok("an unused parameters file");
}
