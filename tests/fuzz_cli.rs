//! Fuzz-style tests of the `dmlsched` command line as a user runs it:
//! `solve` under every algorithm, `simulate` under every policy and
//! `replay` of every trace format, on generated and mutated inputs with odd
//! flag values. (`pcip` has its own, `tests/fuzz_pcip.rs`.)
//!
//! The oracle, for every case:
//! - the exit code is 0 or 2, nothing else (no panic, no abort, no exit 1
//!   on an input the tool accepted);
//! - an exit 2 prints exactly one `error:` line;
//! - an exit-0 answer is checked independently of the tool: `solve`'s
//!   schedule passes `schedule::verify` against the instance it was given
//!   and its certificate passes `Certificate::check` (the bound on the
//!   right side of a finite objective); `simulate` and `replay` summaries
//!   have end states that add up (`completed + rejected + unfinished =
//!   jobs`) and finite utilities;
//! - every run answers within the watchdog's time and 1 GiB of memory.
//!
//! Cases are drawn from a fixed seed, so a failure reproduces; the failing
//! input is kept under the system's temporary folder and named in the
//! message. `DMLSCHED_FUZZ_CASES=N` runs `N` cases per subcommand instead of
//! the default (sized for CI: well under three minutes for all three).
#![cfg(feature = "cli")]

mod common;

use std::path::{Path, PathBuf};

use common::*;
use dmlsched::Certificate;
use dmlsched::model::Instance;
use dmlsched::schedule::{Schedule, verify};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::Value;

/// Seconds one case may take (a debug build; the real answers take well
/// under a second to a few seconds).
const CASE_S: f64 = 60.0;

/// Cases per subcommand: `DMLSCHED_FUZZ_CASES` or `default`.
fn cases(default: usize) -> usize {
    std::env::var("DMLSCHED_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A fresh folder for one case's files.
fn case_dir(kind: &str, case: usize) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dmlsched-fuzz-{kind}-{}-{case}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temporary folder");
    d
}

/// Numbers a fuzzer tries in a numeric field: zero, negative, tiny,
/// fractional, around 2³² and 2⁵³, and huge.
const EXTREMES: [f64; 16] = [
    0.0,
    -1.0,
    5e-324,
    1e-300,
    1e-9,
    0.5,
    1.0,
    3.0,
    4_294_967_295.0,
    4_294_967_296.0,
    9_007_199_254_740_993.0,
    1e15,
    1e20,
    1e100,
    1e300,
    1.7e308,
];

/// The paths (object keys and array indices) of every number in `v`.
fn number_paths(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Number(_) => out.push(path.clone()),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Value::from(i));
                number_paths(x, path, out);
                path.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                path.push(Value::from(k.as_str()));
                number_paths(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The value at `path` in `v`.
fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, seg| match seg {
        Value::String(k) => &mut v[k.as_str()],
        Value::Number(i) => &mut v[i.as_u64().unwrap_or(0) as usize],
        _ => v,
    })
}

/// Applies one to three random mutations to `v`: a number set to an
/// extreme, scaled, or made an integer of another size; a field removed;
/// an array shortened or one of its elements repeated.
fn mutate(rng: &mut ChaCha8Rng, v: &mut Value) {
    for _ in 0..rng.random_range(1..=3) {
        let mut paths = Vec::new();
        number_paths(v, &mut Vec::new(), &mut paths);
        if paths.is_empty() {
            return;
        }
        let path = paths[rng.random_range(0..paths.len())].clone();
        match rng.random_range(0..10) {
            0..=5 => {
                let x = EXTREMES[rng.random_range(0..EXTREMES.len())];
                *at(v, &path) = serde_json::json!(x);
            }
            6 => {
                let old = at(v, &path).as_f64().unwrap_or(1.0);
                let f = [1e-6, 1e-3, 0.1, 10.0, 1e3, 1e6][rng.random_range(0..6)];
                *at(v, &path) = serde_json::json!(old * f);
            }
            7 => {
                // Remove the field holding the number, or its object's last key.
                let (last, parent) = path.split_last().expect("a non-empty path");
                if let (Value::String(k), Value::Object(o)) = (last, at(v, parent)) {
                    o.remove(k);
                }
            }
            _ => {
                // Shorten or grow the nearest array above the number.
                if let Some(i) = path.iter().rposition(|s| s.is_number())
                    && let Value::Array(a) = at(v, &path[..i])
                {
                    if rng.random_bool(0.5) && a.len() > 1 {
                        a.truncate(rng.random_range(1..a.len()));
                    } else if !a.is_empty() && a.len() < 64 {
                        let k = rng.random_range(0..a.len());
                        let copy = a[k].clone();
                        a.push(copy);
                    }
                }
            }
        }
    }
}

/// Whether `run` is an exit 0 (`Ok(true)`) or an exit 2 with one `error:`
/// line (`Ok(false)`); anything else is a finding.
fn exit_0_or_one_line_2(run: &CliRun) -> Result<bool, String> {
    match run.code {
        Some(0) => Ok(true),
        Some(2) => {
            let lines: Vec<&str> = run.stderr.lines().collect();
            if lines.len() == 1 && lines[0].starts_with("error: ") {
                Ok(false)
            } else {
                Err(format!(
                    "exit 2 without exactly one `error:` line: {:?}",
                    run.stderr.chars().take(2000).collect::<String>()
                ))
            }
        }
        _ => Err(format!(
            "exit {:?}, stderr: {}",
            run.code,
            run.stderr.chars().take(2000).collect::<String>()
        )),
    }
}

/// The findings of a fuzz run: every failing case, its command and the
/// input kept on disk. Fails the test listing them all (the first 20).
#[derive(Default)]
struct Findings {
    failures: Vec<String>,
    answers: usize,
    rejections: usize,
}

impl Findings {
    /// Records one case: `Ok(true)` an answer that passed its checks,
    /// `Ok(false)` a one-line rejection, `Err` a finding (its input is
    /// kept, else the case's folder is removed).
    fn record(&mut self, what: &str, dir: &Path, outcome: Result<bool, String>) {
        match outcome {
            Ok(true) => self.answers += 1,
            Ok(false) => self.rejections += 1,
            Err(e) => {
                self.failures.push(format!(
                    "{what}\n    input kept in {}\n    {e}",
                    dir.display()
                ));
                return;
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Prints the counts and fails the test if any case failed.
    fn finish(self, kind: &str) {
        eprintln!(
            "{kind}: {} answers checked, {} one-line rejections, {} findings",
            self.answers,
            self.rejections,
            self.failures.len()
        );
        assert!(
            self.failures.is_empty(),
            "{kind}: {} of {} cases failed:\n{}",
            self.failures.len(),
            self.answers + self.rejections + self.failures.len(),
            self.failures
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Reads a CSV file as rows of (header → value).
fn read_csv(path: &Path) -> Result<Vec<std::collections::HashMap<String, String>>, String> {
    let err = |e: csv::Error| format!("{}: {e}", path.display());
    let mut r = csv::Reader::from_path(path).map_err(err)?;
    let headers = r.headers().map_err(err)?.clone();
    r.records()
        .map(|rec| {
            let rec = rec.map_err(err)?;
            Ok(headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect())
        })
        .collect()
}

/// Checks a `summary.csv`: end states adding up to the jobs in every row,
/// a finite total utility.
fn check_summary(path: &Path) -> Result<(), String> {
    if !path.is_file() {
        return Err(format!("no {}", path.display()));
    }
    for row in read_csv(path)? {
        let n = |k: &str| -> Result<f64, String> {
            row.get(k)
                .ok_or_else(|| format!("summary.csv has no column {k}: {row:?}"))?
                .parse::<f64>()
                .map_err(|e| format!("summary.csv {k}: {e}: {row:?}"))
        };
        if n("completed")? + n("rejected")? + n("unfinished")? != n("jobs")? {
            return Err(format!("end states do not add up: {row:?}"));
        }
        if !n("total_utility")?.is_finite() {
            return Err(format!("a non-finite total utility: {row:?}"));
        }
    }
    Ok(())
}

/// The shipped instance each algorithm is fuzzed from.
const SOLVE_SEEDS: [(&str, &str); 10] = [
    ("oasis", "examples/data/instance_ps.json"),
    ("locality", "examples/data/instance_ps.json"),
    ("locality-batch", "examples/data/instance_ps.json"),
    ("gadget", "examples/data/instance_ring.json"),
    ("gadget", "examples/data/instance_ring_batch.json"),
    ("sjf-bco", "examples/data/instance_ring_batch.json"),
    ("rar-ff", "examples/data/instance_ring_batch.json"),
    ("rar-ls", "examples/data/instance_ring_batch.json"),
    ("rar-rand", "examples/data/instance_ring_batch.json"),
    ("smd", "examples/data/instance_layered.json"),
];

/// Reads `file` (relative to the crate's root) as JSON.
fn json_file(file: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    serde_json::from_str(&std::fs::read_to_string(&p).expect("a shipped file"))
        .expect("shipped JSON")
}

/// Reads `dir/name` as JSON of type `T`.
fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<T, String> {
    let text = std::fs::read_to_string(dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))
}

/// Checks `solve --out DIR`'s files against the instance it was given: the
/// schedule passes `verify`, every certificate passes its check.
fn check_solve_answer(inst_text: &str, dir: &Path, algorithm: &str) -> Result<(), String> {
    let inst = Instance::from_json(inst_text)
        .map_err(|e| format!("the tool accepted an instance the library refuses: {e}"))?;
    let schedule: Schedule = read_json(dir, "schedule.json")?;
    verify(&inst, &schedule).map_err(|v| format!("the schedule fails verify: {v}"))?;
    let certificates: Vec<Certificate> = if algorithm == "smd" {
        let epochs: Vec<Value> = read_json(dir, "epochs.json")?;
        epochs
            .into_iter()
            .map(|e| serde_json::from_value(e["certificate"].clone()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("epochs.json: a certificate: {e}"))?
    } else {
        vec![read_json(dir, "certificate.json")?]
    };
    for (k, c) in certificates.iter().enumerate() {
        c.check(1e-6)
            .map_err(|v| format!("certificate {k} fails its check: {v}"))?;
    }
    Ok(())
}

#[test]
fn solve_answers_every_mutated_instance_with_a_checked_answer_or_one_error_line() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5017e);
    let mut findings = Findings::default();
    for case in 0..cases(40) {
        let (algorithm, file) = SOLVE_SEEDS[case % SOLVE_SEEDS.len()];
        let mut v = json_file(file);
        mutate(&mut rng, &mut v);
        let dir = case_dir("solve", case);
        let input = dir.join("instance.json");
        let text = serde_json::to_string_pretty(&v).expect("JSON");
        std::fs::write(&input, &text).expect("a written case");
        let out = dir.join("out");
        let seed = rng.random_range(0..4u64).to_string();
        let args = [
            "solve",
            "-a",
            algorithm,
            input.to_str().expect("a UTF-8 path"),
            "--seed",
            &seed,
            "--out",
            out.to_str().expect("a UTF-8 path"),
        ];
        let what = format!("case {case}: dmlsched {}", args.join(" "));
        let outcome = dmlsched_watched(CASE_S, &args)
            .and_then(|run| exit_0_or_one_line_2(&run))
            .and_then(|ok| Ok(ok && check_solve_answer(&text, &out, algorithm).map(|()| true)?));
        findings.record(&what, &dir, outcome);
    }
    findings.finish("solve");
}

/// Simulator policies by architecture of the instance fuzzed.
const PS_POLICIES: [&str; 12] = [
    "fifo",
    "sjf",
    "drf",
    "tetris",
    "tiresias",
    "optimus",
    "rrh",
    "dorm",
    "proportional",
    "oasis",
    "locality",
    "smd",
];
const RING_POLICIES: [&str; 8] = [
    "fifo",
    "sjf",
    "drf",
    "tiresias",
    "ff-bandwidth",
    "sjf-bco-online",
    "gadget",
    "gadget-noprice",
];

#[test]
fn simulate_answers_every_mutated_instance_with_end_states_that_add_up() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x51b);
    let mut findings = Findings::default();
    let files = [
        "examples/data/instance_ps.json",
        "examples/data/instance_layered.json",
        "examples/data/instance_ring.json",
        "examples/data/instance_ring_batch.json",
    ];
    for case in 0..cases(30) {
        let file = files[case % files.len()];
        let pool: &[&str] = if file.contains("ring") {
            &RING_POLICIES
        } else {
            &PS_POLICIES
        };
        let mut v = json_file(file);
        mutate(&mut rng, &mut v);
        let dir = case_dir("simulate", case);
        let input = dir.join("instance.json");
        std::fs::write(&input, serde_json::to_string_pretty(&v).expect("JSON"))
            .expect("a written case");
        let k = rng.random_range(1..=3);
        let policies: Vec<&str> = (0..k)
            .map(|_| pool[rng.random_range(0..pool.len())])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let policies = policies.join(",");
        let out = dir.join("out");
        let mut args = vec![
            "simulate",
            input.to_str().expect("a UTF-8 path"),
            "--policies",
            &policies,
            "--out",
            out.to_str().expect("a UTF-8 path"),
        ];
        if rng.random_bool(0.3) {
            args.extend(["--stop", "horizon"]);
        }
        let what = format!("case {case}: dmlsched {}", args.join(" "));
        let outcome = dmlsched_watched(CASE_S, &args)
            .and_then(|run| exit_0_or_one_line_2(&run))
            .and_then(|ok| Ok(ok && check_summary(&out.join("summary.csv")).map(|()| true)?));
        findings.record(&what, &dir, outcome);
    }
    findings.finish("simulate");
}

/// A few consecutive data rows of a real trace (`skip` rows after the
/// header), with the header; `None` for a header-less format.
fn trace_rows(file: &str, header: bool, skip: usize, n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(traces_dir().join(file)).expect("a trace file");
    let mut lines = text.lines();
    let mut out = Vec::new();
    if header {
        out.push(lines.next().expect("a header").to_string());
    }
    out.extend(lines.skip(skip).take(n).map(str::to_string));
    out
}

/// Mutates one field of one data row: a number made extreme, an empty
/// field, or text where a number belongs.
fn mutate_row(rng: &mut ChaCha8Rng, rows: &mut [String], first_data: usize, sep: char) {
    if rows.len() <= first_data {
        return;
    }
    let r = rng.random_range(first_data..rows.len());
    let mut fields: Vec<String> = rows[r].split(sep).map(str::to_string).collect();
    let f = rng.random_range(0..fields.len());
    fields[f] = match rng.random_range(0..6) {
        0 => String::new(),
        1 => "abc".to_string(),
        2 => "-1".to_string(),
        3 => "0".to_string(),
        _ => format!("{}", EXTREMES[rng.random_range(0..EXTREMES.len())]),
    };
    rows[r] = fields.join(&sep.to_string());
}

#[test]
fn replay_answers_every_mutated_trace_and_odd_flags_with_end_states_that_add_up() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7e91a);
    let mut findings = Findings::default();
    let throughputs = traces_dir().join("gavel-simulation_throughputs.json");
    let alibaba = std::fs::read_to_string(reproducer("replay-alibaba-cpu-only-oasis-exit1.csv"))
        .expect("the Alibaba reproducer");
    for case in 0..cases(30) {
        let n = rng.random_range(1..=20);
        // (format, rows, first data row, separator)
        let (format, mut rows, first, sep) = match case % 5 {
            0 => (
                "philly",
                trace_rows("philly.csv", true, rng.random_range(0..80_000), n),
                1,
                ',',
            ),
            1 => (
                "itp",
                trace_rows("itp-cluster02.csv", true, rng.random_range(0..5_700), n),
                1,
                ',',
            ),
            2 => (
                "tiresias",
                trace_rows("tiresias-60_job.csv", true, rng.random_range(0..50), n),
                1,
                ',',
            ),
            3 => (
                "gavel",
                trace_rows(
                    "gavel-msr-seed0-6214e9.trace",
                    false,
                    rng.random_range(0..1_980),
                    n,
                ),
                0,
                '\t',
            ),
            _ => (
                "alibaba",
                alibaba.lines().map(str::to_string).collect(),
                1,
                ',',
            ),
        };
        if rng.random_bool(0.6) {
            mutate_row(&mut rng, &mut rows, first, sep);
        }
        let dir = case_dir("replay", case);
        let input = dir.join(format!("trace.{format}"));
        std::fs::write(&input, rows.join("\n") + "\n").expect("a written case");
        let out = dir.join("out");
        let pick = |rng: &mut ChaCha8Rng, xs: &[&'static str]| xs[rng.random_range(0..xs.len())];
        let gpus = pick(&mut rng, &["1", "4", "8", "16", "64", "256"]);
        let per = pick(&mut rng, &["1", "2", "4", "8"]);
        let jobs = rng.random_range(1..=20).to_string();
        let mut policies: Vec<&str> = (0..rng.random_range(1..=3))
            .map(|_| {
                pick(
                    &mut rng,
                    &[
                        "fifo", "sjf", "drf", "tetris", "tiresias", "optimus", "rrh", "oasis",
                        "locality", "gadget",
                    ],
                )
            })
            .collect();
        policies.sort_unstable();
        policies.dedup();
        let policies = policies.join(",");
        let mut args: Vec<String> = [
            "replay",
            input.to_str().expect("a UTF-8 path"),
            "--format",
            format,
            "--jobs",
            &jobs,
            "--gpus",
            gpus,
            "--gpus-per-machine",
            per,
            "--policies",
            &policies,
            "--out",
            out.to_str().expect("a UTF-8 path"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if format == "gavel" {
            args.extend([
                "--gavel-throughputs".into(),
                throughputs.to_string_lossy().into(),
            ]);
        }
        if rng.random_bool(0.3) {
            let h = pick(
                &mut rng,
                &["cover:3", "1", "5", "after-last-arrival", "cover:0.5"],
            );
            args.extend(["--horizon".into(), h.into()]);
        }
        if rng.random_bool(0.3) {
            let u = pick(
                &mut rng,
                &["trace", "sigmoid", "sigmoid:2:4", "sigmoid:1e-3:4"],
            );
            args.extend(["--utility".into(), u.into()]);
        }
        if rng.random_bool(0.3) {
            let s = pick(&mut rng, &["0.5", "2", "1e-3", "1e3", "1,2"]);
            args.extend(["--load-scales".into(), s.into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let what = format!("case {case}: dmlsched {}", args.join(" "));
        let outcome = dmlsched_watched(CASE_S, &args)
            .and_then(|run| exit_0_or_one_line_2(&run))
            .and_then(|ok| Ok(ok && check_summary(&out.join("summary.csv")).map(|()| true)?));
        findings.record(&what, &dir, outcome);
    }
    findings.finish("replay");
}
