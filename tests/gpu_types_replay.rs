//! Trace replays on clusters of several GPU types: `dmlsched replay --gpus
//! v100:4,p100:4,k80:4`, each job's speeds from Gavel's measured
//! throughputs, and one-type replays that equal the untyped ones.
#![cfg(feature = "cli")]

mod common;

use common::{csv_fields, dmlsched_within, traces_dir};
use dmlsched::baselines::Fifo;
use dmlsched::model::Architecture;
use dmlsched::sim::{SimOptions, simulate};
use dmlsched::trace::{
    GavelConversion, GavelThroughputs, GpuMix, ReplayOptions, TraceJob, assign_gavel_speeds,
    gavel_job_type, load_gavel_trace_with_rates, replay_instance,
};

const SECS: f64 = 120.0;

fn gavel_trace() -> String {
    path(traces_dir().join("gavel-msr-seed0-6214e9.trace"))
}

fn rates_path() -> String {
    path(traces_dir().join("gavel-simulation_throughputs.json"))
}

fn path(p: std::path::PathBuf) -> String {
    p.to_string_lossy().into_owned()
}

fn rates() -> GavelThroughputs {
    GavelThroughputs::load(rates_path()).unwrap()
}

/// The Gavel trace's rows with durations at the V100 rates, on machines of
/// one GPU (Gavel's simulator: every multi-GPU job spread).
fn gavel_rows() -> Vec<TraceJob> {
    let conv = GavelConversion {
        gpu: "v100".into(),
        gpus_per_machine: 1,
    };
    load_gavel_trace_with_rates(gavel_trace(), &rates(), &conv)
        .unwrap()
        .jobs
}

/// A job alone on one GPU of each type lasts its steps at that type's
/// measured rate, but for the recipe's per-iteration overhead (2 ms a
/// server), which no GPU type speeds up: Gavel's throughputs reach the
/// simulator.
#[test]
fn a_gavel_job_alone_on_a_type_lasts_its_steps_at_that_types_rate() {
    let table = rates();
    let rows = gavel_rows();
    let conv = GavelConversion {
        gpu: "v100".into(),
        gpus_per_machine: 1,
    };
    let mut checked = 0;
    for row in rows.iter().filter(|r| r.num_gpus == 1).take(12) {
        for kind in ["v100", "p100", "k80"] {
            let typed =
                assign_gavel_speeds(std::slice::from_ref(row), &table, &conv, &[kind], 0).unwrap();
            let mut one = typed.jobs[0].clone();
            one.arrival_s = 0.0;
            let mut opts = ReplayOptions::default();
            opts.gpus = GpuMix::Typed(vec![(kind.into(), 1)]);
            opts.gpus_per_machine = 1;
            let (inst, _) = replay_instance(&[one], &opts).unwrap();
            let run = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
            let jct = run.jobs[0].jct_s.unwrap();
            let job_type = gavel_job_type(row).unwrap();
            let steps = row.iterations.unwrap() as f64;
            let at_v100 = steps / table.rate("v100", &job_type, 1).unwrap();
            let gavel = steps / table.rate(kind, &job_type, 1).unwrap();
            // The ring's compute, at the reference speed; the rest of the
            // V100 duration is the overhead.
            let Architecture::RingAllReduce(r) = &inst.jobs()[0].architecture else {
                unreachable!()
            };
            let compute = r.iterations as f64
                * (r.forward_per_sample_s * f64::from(r.minibatch_size)
                    + r.backward_per_iteration_s);
            let speed = typed.jobs[0].gpu_speeds[kind];
            let want = compute / speed + (at_v100 - compute);
            assert!(
                (jct - want).abs() <= 1e-6 * want,
                "{} ({job_type}) on a {kind}: {jct} s, want {want} s",
                row.id
            );
            // Within 2 % of the steps at the type's own rate.
            assert!(
                (jct - gavel).abs() <= 0.02 * gavel,
                "{} ({job_type}) on a {kind}: {jct} s, {gavel} s at Gavel's rate",
                row.id
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 36);
}

/// Every row of the Gavel trace that is measured on all three types gets a
/// speed per type equal to the ratio of Gavel's rates, unconsolidated for
/// a job larger than a machine.
#[test]
fn gavel_rows_get_the_ratio_of_gavels_rates() {
    let table = rates();
    let rows = gavel_rows();
    for gpm in [1, 4] {
        let conv = GavelConversion {
            gpu: "v100".into(),
            gpus_per_machine: gpm,
        };
        let out = assign_gavel_speeds(&rows, &table, &conv, &["v100", "p100", "k80"], 0).unwrap();
        assert_eq!(out.jobs.len() + out.skipped.len(), rows.len());
        // Gavel has no K80 rate for ResNet-50 with batch 64 or 128 on
        // several GPUs: those rows, and only those, are left out.
        for s in &out.skipped {
            let row = &rows[s.index];
            assert!(row.num_gpus > 1, "{s}");
            assert!(
                gavel_job_type(row)
                    .unwrap()
                    .starts_with("ResNet-50 (batch size"),
                "{s}"
            );
        }
        assert!(out.jobs.len() > rows.len() * 9 / 10);
        for job in &out.jobs {
            let jt = gavel_job_type(job).unwrap();
            let suffix = if job.num_gpus > gpm {
                "_unconsolidated"
            } else {
                ""
            };
            let rate = |t: &str| {
                table
                    .rate(&format!("{t}{suffix}"), &jt, job.num_gpus)
                    .unwrap()
            };
            for t in ["v100", "p100", "k80"] {
                assert_eq!(
                    job.gpu_speeds[t],
                    rate(t) / rate("v100"),
                    "{} on {t}",
                    job.id
                );
            }
            let row = rows.iter().find(|r| r.id == job.id).unwrap();
            assert_eq!((&job.model, job.batch_size), (&row.model, row.batch_size));
            assert_eq!(job.duration_s, row.duration_s);
        }
    }
}

/// `--gpus` with per-type counts on the Gavel trace: every baseline runs,
/// the cluster is named with its types, and the replay differs from one on
/// as many V100s (the K80s and P100s are slower for most jobs).
#[test]
fn the_gavel_trace_replays_on_a_mixed_cluster_under_every_baseline() {
    let dir = std::env::temp_dir().join(format!("dmlsched-typed-{}", std::process::id()));
    let run = |gpus: &str, out: &std::path::Path| {
        dmlsched_within(
            SECS,
            &[
                "replay",
                &gavel_trace(),
                "--gavel-throughputs",
                &rates_path(),
                "--gpus",
                gpus,
                "--gpus-per-machine",
                "1",
                "--jobs",
                "60",
                "--out",
                &path(out.to_path_buf()),
            ],
        )
    };
    let mixed = run("v100:4,p100:4,k80:4", &dir.join("mixed"));
    let stdout = mixed.ok("mixed");
    assert!(
        stdout.contains("12 GPUs (v100:4,p100:4,k80:4), 1 per machine"),
        "{stdout}"
    );
    assert!(stdout.contains("GPU types v100, p100, k80"), "{stdout}");
    let v100 = run("v100:12", &dir.join("v100"));
    v100.ok("v100");
    let summary = |d: &str| std::fs::read_to_string(dir.join(d).join("summary.csv")).unwrap();
    let (mixed, v100) = (summary("mixed"), summary("v100"));
    // Eleven baselines, each with all 60 jobs done.
    assert_eq!(mixed.lines().count(), 12, "{mixed}");
    let jct = |csv: &str| -> Vec<f64> {
        let mut lines = csv.lines();
        let header = csv_fields(lines.next().unwrap());
        let col = |n: &str| header.iter().position(|h| h == n).unwrap();
        let (done, avg) = (col("completed"), col("avg_jct_s"));
        lines
            .map(|l| {
                let f = csv_fields(l);
                assert_eq!(f[done], "60", "{l}");
                f[avg].parse().unwrap()
            })
            .collect()
    };
    let (jm, jv) = (jct(&mixed), jct(&v100));
    let slower = jm.iter().zip(&jv).filter(|(m, v)| m > v).count();
    assert!(slower >= 8, "mixed {jm:?} against v100 {jv:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A CSV table without its `solver_time_s` column (wall-clock time).
fn without_solver_time(csv: &str) -> Vec<Vec<String>> {
    let rows: Vec<Vec<String>> = csv.lines().map(csv_fields).collect();
    let col = rows[0].iter().position(|h| h == "solver_time_s");
    rows.into_iter()
        .map(|mut r| {
            if let Some(c) = col {
                r.remove(c);
            }
            r
        })
        .collect()
}

/// One named type at the reference kind's rates is the untyped cluster:
/// the same tables, bit for bit, but for the cluster's name.
#[test]
fn one_type_replays_equal_untyped_ones() {
    let dir = std::env::temp_dir().join(format!("dmlsched-onetype-{}", std::process::id()));
    let philly = path(traces_dir().join("philly.csv"));
    for (trace, gpm) in [(&philly, "8"), (&gavel_trace(), "1")] {
        let run = |gpus: &str, out: &str| {
            dmlsched_within(
                SECS,
                &[
                    "replay",
                    trace,
                    "--gavel-throughputs",
                    &rates_path(),
                    "--gpus",
                    gpus,
                    "--gpus-per-machine",
                    gpm,
                    "--jobs",
                    "200",
                    "--policies",
                    "fifo,sjf,tiresias",
                    "--seeds",
                    "0,1",
                    "--out",
                    &path(dir.join(out)),
                ],
            )
            .ok(out)
            .to_string()
        };
        run("64", "untyped");
        run("v100:64", "typed");
        let mut names: Vec<_> = std::fs::read_dir(dir.join("untyped"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".csv"))
            .collect();
        names.sort();
        assert!(names.len() >= 7, "{names:?}");
        for name in names {
            let read = |d: &str| std::fs::read_to_string(dir.join(d).join(&name)).unwrap();
            let typed = read("typed").replace("64 GPUs (v100:64)", "64 GPUs");
            assert_eq!(
                without_solver_time(&read("untyped")),
                without_solver_time(&typed),
                "{trace}: {name:?}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Philly rows have no model: each gets a Gavel job type drawn per seed,
/// and every baseline runs them on a mixed cluster.
#[test]
fn philly_replays_on_a_mixed_cluster_with_drawn_job_types() {
    let philly = path(traces_dir().join("philly.csv"));
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &philly,
            "--start",
            "2017-10-01",
            "--gpus",
            "v100:16,p100:16,k80:16",
            "--jobs",
            "300",
        ],
    );
    let stdout = run.ok("philly mixed");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(3) == Some("300"))
        .collect();
    assert_eq!(rows.len(), 11, "{stdout}");
}

/// Bad `--gpus` values are one `error:` line with exit code 2, before the
/// trace is read; so are types the throughput table does not have, a
/// typed cluster for the layered recipe, and a missing table.
#[test]
fn bad_typed_clusters_are_refused_in_words() {
    let philly = path(traces_dir().join("philly.csv"));
    let rates = rates_path();
    // Values the argument parser refuses: its error, exit code 2.
    for (gpus, want) in [
        ("v100:8,v100:8", "named twice"),
        ("v100:8,k80", "is not <type>:<count>"),
        ("v100:0", "not a count"),
    ] {
        let run = dmlsched_within(SECS, &["replay", philly.as_str(), "--gpus", gpus]);
        assert_eq!(run.code, Some(2), "{gpus}: {run:?}");
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") && first.contains(want),
            "{gpus}: {first}"
        );
    }
    let cases: [(&[&str], &str); 4] = [
        (
            &["--gpus", "v100:12,k80:16"],
            "GPU type `v100`: 12 GPUs is not a whole number",
        ),
        (&["--gpus", "v100:8,a100:8"], "no `a100` rates"),
        (
            &["--gpus", "v100:8,k80:8", "--policies", "smd"],
            "the layered recipe",
        ),
        (
            &[
                "--gpus",
                "v100:8,k80:8",
                "--gavel-throughputs",
                "/nonexistent/rates.json",
            ],
            "/nonexistent/rates.json",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["replay", philly.as_str(), "--jobs", "5"];
        if !extra.contains(&"--gavel-throughputs") {
            args.extend(["--gavel-throughputs", rates.as_str()]);
        }
        args.extend_from_slice(extra);
        let run = dmlsched_within(SECS, &args);
        let line = run.one_error_line(&format!("{extra:?}"));
        assert!(line.contains(want), "{extra:?}: {line}");
    }
}

/// The algorithms with one compute speed per job refuse a mixed cluster's
/// jobs in words; the baselines beside them still run.
#[test]
fn one_speed_algorithms_refuse_a_mixed_replay_in_words() {
    let philly = path(traces_dir().join("philly.csv"));
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &philly,
            "--gavel-throughputs",
            &rates_path(),
            "--gpus",
            "v100:16,k80:16",
            "--jobs",
            "10",
            "--policies",
            "fifo,gadget,oasis,locality",
        ],
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    for name in ["gadget", "oasis", "locality"] {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("failed: {name} ")))
            .unwrap_or_else(|| panic!("{name}: {}", run.stdout));
        assert!(
            line.contains("runs at different speeds on the cluster's GPU types (v100, k80)"),
            "{line}"
        );
    }
    assert!(
        run.stdout.lines().any(|l| l.starts_with("fifo ")),
        "{}",
        run.stdout
    );
}
