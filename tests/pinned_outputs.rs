//! Pinned outputs of the command line: a digest of every file `dmlsched
//! solve` writes for every algorithm on every shipped instance it accepts
//! (and of the one-line refusal where it does not), and of the CSV tables
//! of the replays CI runs. Wall-clock fields (`*seconds*`, `solver_time_s`)
//! are left out; everything else must stay the same to the last bit.
//!
//! A refactor must leave every digest as it is. A change that is meant to
//! change a result regenerates the table on purpose, and says why in its
//! commit:
//!
//! ```sh
//! DMLSCHED_UPDATE_PINS=1 cargo test --release --features cli --test pinned_outputs
//! ```
//!
//! Release builds only: the replays take minutes in a debug build.
#![cfg(all(feature = "cli", not(debug_assertions)))]

mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The pins, one `name digest` line each.
const PINS: &str = "tests/pins/outputs.txt";

/// Ceiling of one command: hangs only.
const SECS: f64 = 900.0;

const ALGORITHMS: [&str; 9] = [
    "oasis",
    "locality",
    "locality-batch",
    "gadget",
    "sjf-bco",
    "rar-ff",
    "rar-ls",
    "rar-rand",
    "smd",
];

/// FNV-1a, 64 bits.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Drops every wall-clock field of a JSON value.
fn without_clock(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .into_iter()
            .filter(|(k, _)| !k.contains("seconds") && k != "solver_time_s")
            .map(|(k, v)| (k, without_clock(v)))
            .collect(),
        serde_json::Value::Array(a) => a.into_iter().map(without_clock).collect(),
        other => other,
    }
}

/// A file's digest: JSON without its wall-clock fields; CSV without its
/// `solver_time_s` column; anything else as it is.
fn file_digest(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.to_string_lossy();
    if name.ends_with(".json") {
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON output");
        fnv(without_clock(v).to_string().as_bytes())
    } else if name.ends_with(".csv") {
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let head = r.headers().expect("CSV header").clone();
        let keep: Vec<usize> = (0..head.len())
            .filter(|&i| &head[i] != "solver_time_s")
            .collect();
        let mut out = String::new();
        for rec in std::iter::once(Ok(head)).chain(r.records()) {
            let rec = rec.expect("CSV row");
            let cells: Vec<&str> = keep.iter().map(|&i| rec.get(i).unwrap_or("")).collect();
            out.push_str(&cells.join("\u{1f}"));
            out.push('\n');
        }
        fnv(out.as_bytes())
    } else {
        fnv(text.as_bytes())
    }
}

/// Digests of every file in `dir`, by file name.
fn dir_digests(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("output folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "csv"))
        .collect();
    names.sort();
    for p in names {
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        out.insert(
            format!("{prefix}/{file}"),
            format!("{:016x}", file_digest(&p)),
        );
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dmlsched-pins-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `solve` of every algorithm on every shipped instance.
fn solve_digests(out: &mut BTreeMap<String, String>) {
    let mut instances: Vec<PathBuf> = std::fs::read_dir("examples/data")
        .expect("examples/data")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("instance_"))
        })
        .collect();
    instances.sort();
    for a in ALGORITHMS {
        for inst in &instances {
            let stem = inst.file_stem().unwrap().to_string_lossy().into_owned();
            let dir = scratch(&format!("{a}-{stem}"));
            let d = dir.to_string_lossy().into_owned();
            let file = inst.to_string_lossy().into_owned();
            let run = dmlsched_within(SECS, &["solve", "-a", a, &file, "--out", &d]);
            let key = format!("solve {a} {stem}");
            match run.code {
                Some(0) => dir_digests(&dir, &key, out),
                Some(2) => {
                    let line = run.one_error_line(&key);
                    out.insert(
                        format!("{key}/refusal"),
                        format!("{:016x}", fnv(line.as_bytes())),
                    );
                }
                _ => panic!("{key}: {run:?}"),
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// The replays CI runs.
fn replay_digests(out: &mut BTreeMap<String, String>) {
    let philly = traces_dir()
        .join("philly.csv")
        .to_string_lossy()
        .into_owned();
    let gavel = traces_dir()
        .join("gavel-msr-seed0-6214e9.trace")
        .to_string_lossy()
        .into_owned();
    let rates = traces_dir()
        .join("gavel-simulation_throughputs.json")
        .to_string_lossy()
        .into_owned();
    let runs: [(&str, Vec<&str>); 4] = [
        (
            "philly-baselines",
            vec![
                &philly,
                "--start",
                "2017-11-01",
                "--jobs",
                "500",
                "--policies",
                "fifo,sjf,drf,tetris",
                "--seeds",
                "0,1",
            ],
        ),
        (
            "philly-oasis",
            vec![
                &philly,
                "--start",
                "2017-11-01",
                "--jobs",
                "300",
                "--policies",
                "fifo,tiresias,oasis",
            ],
        ),
        (
            "philly-every-algorithm",
            vec![
                &philly,
                "--start",
                "2017-11-15",
                "--jobs",
                "100",
                "--policies",
                "fifo,tiresias,oasis,locality,gadget,smd",
            ],
        ),
        (
            "gavel",
            vec![
                &gavel,
                "--gavel-throughputs",
                &rates,
                "--jobs",
                "300",
                "--policies",
                "fifo,tiresias",
            ],
        ),
    ];
    for (name, args) in runs {
        let dir = scratch(name);
        let d = dir.to_string_lossy().into_owned();
        let mut full = vec!["replay"];
        full.extend(args);
        full.extend(["--out", &d]);
        dmlsched_within(SECS, &full).ok(name);
        dir_digests(&dir, &format!("replay {name}"), out);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn command_line_outputs_match_their_pins() {
    let mut got = BTreeMap::new();
    solve_digests(&mut got);
    replay_digests(&mut got);
    let table: String = got.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if std::env::var_os("DMLSCHED_UPDATE_PINS").is_some() {
        std::fs::write(PINS, &table).expect("write the pins");
        return;
    }
    let pinned = std::fs::read_to_string(PINS).expect("tests/pins/outputs.txt");
    let want: BTreeMap<String, String> = pinned
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut diffs = Vec::new();
    for k in want
        .keys()
        .chain(got.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        if want.get(k) != got.get(k) {
            diffs.push(format!(
                "{k}: pinned {}, now {}",
                want.get(k).map_or("-", String::as_str),
                got.get(k).map_or("-", String::as_str)
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} outputs differ from their pins:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
