//! `dmlsched replay --policies gavel-…`: the Gavel trace replayed on a
//! mixed cluster under every allocation policy in round-based leases, the
//! notes under the table, Gavel's qualitative result, and the flags'
//! errors.
#![cfg(all(feature = "cli", feature = "highs"))]

mod common;

use common::{csv_fields, dmlsched_within, traces_dir};
use dmlsched::registry::ROUND_POLICIES;

const SECS: f64 = 300.0;
const PER_COST: &str = "gavel-max-throughput-per-cost";

fn path(p: std::path::PathBuf) -> String {
    p.to_string_lossy().into_owned()
}

fn gavel_args(jobs: &str, gpus: &str) -> Vec<String> {
    let t = traces_dir();
    [
        "replay",
        &path(t.join("gavel-msr-seed0-6214e9.trace")),
        "--gavel-throughputs",
        &path(t.join("gavel-simulation_throughputs.json")),
        "--gpus",
        gpus,
        "--gpus-per-machine",
        "1",
        "--jobs",
        jobs,
    ]
    .map(String::from)
    .to_vec()
}

/// `(policy, completed, avg_jct_s)` of every row of a `summary.csv`.
fn rows(csv: &str) -> Vec<(String, u64, f64)> {
    let mut lines = csv.lines();
    let header = csv_fields(lines.next().unwrap());
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (p, done, jct) = (col("policy"), col("completed"), col("avg_jct_s"));
    lines
        .map(|l| {
            let f = csv_fields(l);
            (
                f[p].clone(),
                f[done].parse().unwrap(),
                f[jct].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_gavel_trace_replays_under_every_round_based_policy() {
    let dir = std::env::temp_dir().join(format!("dmlsched-rounds-{}", std::process::id()));
    let mut args = gavel_args("100", "v100:4,p100:4,k80:4");
    let names = ROUND_POLICIES.join(",");
    let out = path(dir.clone());
    args.extend(
        [
            "--policies",
            &names,
            "--gpu-prices",
            "v100:2.48,p100:1.46,k80:0.45",
            // Hour-long rounds (the jobs last months): a tenth of the
            // rounds of 360 s, so the test binary's debug build keeps within
            // its time, and the same mean JCTs to within 2 %.
            "--round-s",
            "3600",
            "--out",
            &out,
        ]
        .map(String::from),
    );
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = dmlsched_within(SECS, &argv);
    let stdout = run.ok("every round-based policy");
    for name in ROUND_POLICIES {
        assert!(
            stdout.contains(&format!("{name} (load 1, seed 0): ")),
            "no note of {name}: {stdout}"
        );
    }
    assert!(
        stdout.contains("realised time fractions against X"),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let rows = rows(&summary);
    assert_eq!(rows.len(), ROUND_POLICIES.len(), "{summary}");
    assert!(rows.iter().all(|r| r.1 == 100), "{summary}");
    // Gavel's result (OSDI 2020, §7): the heterogeneity-aware max-min
    // fairness cuts the mean JCT of the agnostic one.
    let jct = |n: &str| rows.iter().find(|r| r.0 == n).unwrap().2;
    let (agnostic, perf) = (
        jct("gavel-max-min-fairness"),
        jct("gavel-max-min-fairness-perf"),
    );
    assert!(
        perf < 0.9 * agnostic,
        "perf {perf} against agnostic {agnostic}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_round_flags_are_refused_with_one_line() {
    let cases: [(&[&str], &str); 7] = [
        (&["--policies", "gavel-fifo", "--round-s", "0"], "--round-s"),
        (
            &["--policies", "gavel-fifo", "--round-s", "nan"],
            "--round-s",
        ),
        (
            &["--policies", "gavel-fifo", "--round-s", "1e13"],
            "--round-s",
        ),
        (
            &["--policies", "gavel-max-throughput-per-cost"],
            "needs --gpu-prices",
        ),
        (
            &["--policies", PER_COST, "--gpu-prices", "v100"],
            "--gpu-prices v100",
        ),
        (
            &["--policies", PER_COST, "--gpu-prices", "v100:1,v100:2"],
            "priced twice",
        ),
        (
            &["--policies", PER_COST, "--gpu-prices", "v100:-1,k80:1"],
            "finite price > 0",
        ),
    ];
    for (extra, want) in cases {
        let mut args = gavel_args("10", "v100:2,k80:2");
        args.extend(extra.iter().map(|s| s.to_string()));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = dmlsched_within(60.0, &argv);
        let line = run.one_error_line(want);
        assert!(line.contains(want), "{extra:?}: {line}");
    }
}

/// 2,000 Gavel jobs on 36:36:36 under max-sum throughput: one of its
/// allocations once came back from HiGHS optimal but without duals, which
/// ended the run; the bound now falls back to the columns' own bounds.
#[test]
fn two_thousand_gavel_jobs_complete_under_max_sum_throughput() {
    let mut args = gavel_args("2000", "v100:36,p100:36,k80:36");
    args.extend(["--policies", "gavel-max-sum-throughput"].map(String::from));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = dmlsched_within(SECS, &argv);
    let stdout = run.ok("2,000 jobs");
    assert!(
        stdout.contains("gavel-max-sum-throughput (load 1, seed 0): "),
        "{stdout}"
    );
}

/// `dmlsched simulate` prints a round-based policy's notes under its table.
#[test]
fn simulate_prints_the_rounds_notes() {
    let instance = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/data/instance_ring.json"
    );
    let run = dmlsched_within(
        60.0,
        &[
            "simulate",
            instance,
            "--policies",
            "fifo,gavel-max-min-fairness-perf",
        ],
    );
    let stdout = run.ok("simulate");
    let note = stdout
        .lines()
        .find(|l| l.starts_with("gavel-max-min-fairness-perf: "))
        .unwrap_or_else(|| panic!("no note: {stdout}"));
    assert!(note.contains("rounds of 360 s"), "{note}");
    assert!(note.contains("realised time fractions against X"), "{note}");
}
