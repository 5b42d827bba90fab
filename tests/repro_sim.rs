//! Regression tests of the fuzz reproducers about the simulator's reports:
//! stalled runs shown as such, one end state per job adding up in every
//! summary, the SJF-BCO family and the online ring baselines rejecting a
//! ring whose reserved bandwidth cannot fit, plot and file-name problems
//! as notes with every table written.
#![cfg(feature = "cli")]

mod common;
use common::*;
use dmlsched::algorithms::Algorithm;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A fresh output folder for one test.
fn out_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("dmlsched-repro-sim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The rows of a CSV table as maps from column to cell.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut rd = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = rd.headers().unwrap().clone();
    rd.records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn count(row: &HashMap<String, String>, col: &str) -> usize {
    row.get(col)
        .unwrap_or_else(|| panic!("no column {col} in {row:?}"))
        .parse()
        .unwrap_or_else(|e| panic!("{col}: {e} in {row:?}"))
}

/// Every row of `summary.csv` counts each job once: completed + rejected +
/// unfinished = jobs, and the reasons add up to the unfinished. Returns
/// the rows by policy.
fn summary_by_policy(dir: &Path) -> HashMap<String, HashMap<String, String>> {
    let mut out = HashMap::new();
    for row in rows(&dir.join("summary.csv")) {
        let (c, r, u) = (
            count(&row, "completed"),
            count(&row, "rejected"),
            count(&row, "unfinished"),
        );
        assert_eq!(c + r + u, count(&row, "jobs"), "{row:?}");
        let reasons: usize = [
            "unfinished_never_admitted",
            "unfinished_no_room",
            "unfinished_horizon",
            "unfinished_stalled",
        ]
        .iter()
        .map(|c| count(&row, c))
        .sum();
        assert_eq!(reasons, u, "{row:?}");
        out.insert(row["policy"].clone(), row);
    }
    out
}

/// The `end` cells of `jobs.csv`-style rows agree with their `completed`
/// and `rejected` cells; returns the number of rows per end, per policy.
fn ends(path: &Path) -> HashMap<(String, String), usize> {
    let mut out = HashMap::new();
    for row in rows(path) {
        let end = row["end"].clone();
        assert_eq!(row["completed"] == "true", end == "completed", "{row:?}");
        if end == "rejected" {
            assert_eq!(row["rejected"], "true", "{row:?}");
        }
        *out.entry((row["policy"].clone(), end)).or_insert(0) += 1;
    }
    out
}

#[test]
fn layered_instance_stalls_are_reported_with_end_states() {
    let dir = out_dir("layered");
    let d = dir.to_string_lossy();
    let run = dmlsched_within(
        120.0,
        &[
            "simulate",
            "examples/data/instance_layered.json",
            "--policies",
            "fifo,sjf,tetris,tiresias,ff-bandwidth,drf",
            "--out",
            &d,
        ],
    );
    let out = run.ok("simulate layered").to_string();
    let summary = summary_by_policy(&dir);
    for p in ["fifo", "sjf", "tetris", "tiresias", "ff-bandwidth"] {
        let row = &summary[p];
        // Each job asks for a gang of 16 workers and 8 PSs that never fits
        // the 2 machines: nothing done, nothing rejected, all 12 unfinished
        // and the run stalled — said in the table and under it.
        assert_eq!(count(row, "completed"), 0, "{row:?}");
        assert_eq!(count(row, "unfinished"), 12, "{row:?}");
        assert_eq!(row["stalled"], "true", "{row:?}");
        assert_eq!(row["avg_jct_s"], "", "{row:?}");
        let note = out
            .lines()
            .find(|l| l.starts_with(&format!("note: {p} ")))
            .unwrap_or_else(|| panic!("no note for {p}: {out}"));
        assert!(
            note.contains("stalled") && note.contains("12 of 12 jobs unfinished"),
            "{note}"
        );
        assert!(note.contains("no JCT statistics"), "{note}");
    }
    let drf = &summary["drf"];
    assert_eq!(count(drf, "completed"), 12, "{drf:?}");
    assert_eq!(drf["stalled"], "false");
    assert!(!out.contains("note: drf"), "{out}");
    // The printed table has the unfinished column and no NaN.
    assert!(out.contains("unfin."), "{out}");
    assert!(!out.contains("NaN"), "{out}");
    let ends = ends(&dir.join("jobs.csv"));
    assert_eq!(ends[&("drf".to_string(), "completed".to_string())], 12);
    assert_eq!(
        ends[&("fifo".to_string(), "never_admitted".to_string())],
        12
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// FIFO stalls behind a gang that its all-or-nothing placement cannot fit:
/// with one parameter-server-only machine the capped 4-GPU job's 4 PSs
/// exceed that machine, while DRF starts it smaller. (Without `--ps-servers`
/// the recipe puts each job's PSs beside its workers and every job fits.)
#[test]
fn replay_fifo_stall_is_reported_and_its_jct_count_shown() {
    let dir = out_dir("tiresias-stall");
    let d = dir.to_string_lossy();
    let f = reproducer("replay-tiresias-fifo-stall-unreported.csv");
    let run = dmlsched_within(
        120.0,
        &[
            "replay",
            &f,
            "--gpus",
            "4",
            "--gpus-per-machine",
            "1",
            "--arch",
            "ps",
            "--ps-servers",
            "1",
            "--policies",
            "fifo,drf",
            "--out",
            &d,
        ],
    );
    let out = run.ok("replay fifo stall").to_string();
    let summary = summary_by_policy(&dir);
    let fifo = &summary["fifo"];
    assert_eq!(count(fifo, "completed"), 1, "{fifo:?}");
    assert_eq!(count(fifo, "unfinished"), 2, "{fifo:?}");
    assert_eq!(fifo["stalled"], "true");
    assert_eq!(count(&summary["drf"], "completed"), 3);
    // The mean JCT of one job says it is over one job, on the screen.
    let note = out
        .lines()
        .find(|l| l.starts_with("note: fifo "))
        .unwrap_or_else(|| panic!("no note for fifo: {out}"));
    assert!(note.contains("stalled"), "{note}");
    assert!(note.contains("2 of 3 jobs unfinished"), "{note}");
    assert!(note.contains("over the 1 job done only"), "{note}");
    let ends = ends(&dir.join("jobs-fifo-x1-seed0.csv"));
    assert_eq!(ends[&("fifo".to_string(), "completed".to_string())], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sjf_bco_family_rejects_a_ring_whose_reservation_cannot_fit() {
    let f = reproducer("rar-reserved-bandwidth-over-nic-infeasible.json");
    for algo in ["sjf-bco", "rar-ff", "rar-ls", "rar-rand"] {
        let run = dmlsched_within(60.0, &["solve", "-a", algo, &f]);
        let line = run.one_error_line(algo);
        // The field, its value and the limit (the NIC of 3.125e9 B/s).
        assert!(line.contains("job 0"), "{line}");
        assert!(line.contains("reserved_bandwidth_bps 5000000000"), "{line}");
        assert!(line.contains("3125000000"), "{line}");
    }
    // A batch whose rings fit still solves, and its schedule passes the
    // checker (solve says so).
    let run = dmlsched_within(
        60.0,
        &[
            "solve",
            "-a",
            "sjf-bco",
            "examples/data/instance_ring_batch.json",
        ],
    );
    assert!(
        run.ok("ring batch").contains("passed schedule::verify"),
        "{run:?}"
    );
}

#[test]
fn online_ring_baselines_reject_the_ring_and_fifo_reports_no_room() {
    let dir = out_dir("rar-sim");
    let d = dir.to_string_lossy();
    let f = reproducer("rar-reserved-bandwidth-over-nic-infeasible.json");
    let run = dmlsched_within(
        120.0,
        &[
            "simulate",
            &f,
            "--policies",
            "fifo,sjf-bco-online,gadget,rar-online-random",
            "--out",
            &d,
        ],
    );
    let out = run.ok("simulate rar").to_string();
    let summary = summary_by_policy(&dir);
    for p in ["sjf-bco-online", "gadget", "rar-online-random"] {
        assert_eq!(count(&summary[p], "rejected"), 1, "{p}: {:?}", summary[p]);
    }
    assert_eq!(count(&summary["fifo"], "unfinished_no_room"), 1);
    assert!(
        out.lines()
            .any(|l| l.starts_with("note: fifo ") && l.contains("1 no room")),
        "{out}"
    );
    for row in rows(&dir.join("jobs.csv")) {
        if row["policy"] == "sjf-bco-online" || row["policy"] == "rar-online-random" {
            assert_eq!(row["end"], "rejected");
            assert!(
                row["rejection"].contains("reserved_bandwidth_bps"),
                "{row:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The tables `simulate --out` writes.
const SIM_TABLES: [&str; 3] = ["summary.csv", "jobs.csv", "utilization.csv"];

#[test]
fn utilization_plot_beyond_1e15_is_a_note_and_the_tables_are_written() {
    let dir = out_dir("plot-1e15");
    let d = dir.to_string_lossy();
    let f = reproducer("sim-utilization-plot-beyond-1e15-exit1.json");
    let run = dmlsched_within(60.0, &["simulate", &f, "--policies", "fifo", "--out", &d]);
    run.ok("plot beyond 1e15");
    assert!(
        run.stdout.contains("note: utilization.svg not written"),
        "{run:?}"
    );
    for t in SIM_TABLES {
        assert!(dir.join(t).is_file(), "{t} missing");
    }
    let summary = summary_by_policy(&dir);
    assert_eq!(count(&summary["fifo"], "completed"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn zero_gpu_cluster_plots_are_notes_and_no_negative_zero() {
    let dir = out_dir("zero-gpu");
    let d = dir.to_string_lossy();
    let f = reproducer("sim-zero-gpu-cluster-utilization-plot-exit1.json");
    let run = dmlsched_within(60.0, &["simulate", &f, "--policies", "fifo", "--out", &d]);
    let out = run.ok("zero GPU cluster").to_string();
    assert!(out.contains("0 jobs on 0 GPUs, 0 per machine"), "{out}");
    assert!(!out.contains("-0"), "{out}");
    for t in SIM_TABLES {
        assert!(dir.join(t).is_file(), "{t} missing");
    }
    let summary = summary_by_policy(&dir);
    assert_eq!(count(&summary["fifo"], "jobs"), 0);
    assert_eq!(summary["fifo"]["total_utility"], "0");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_load_scale_1e300_writes_short_file_names() {
    let dir = out_dir("scale-1e300");
    let d = dir.to_string_lossy();
    let trace = traces_dir().join("tiresias-60_job.csv");
    let t = trace.to_string_lossy();
    let run = dmlsched_within(
        120.0,
        &[
            "replay",
            &t,
            "--jobs",
            "5",
            "--gpus",
            "16",
            "--policies",
            "fifo",
            "--load-scales",
            "1e300",
            "--out",
            &d,
        ],
    );
    let out = run.ok("load scale 1e300").to_string();
    assert!(
        out.lines()
            .any(|l| l.starts_with("fifo") && l.contains("1e300")),
        "{out}"
    );
    for t in [
        "summary.csv",
        "utilization.csv",
        "jobs-fifo-x1e300-seed0.csv",
    ] {
        assert!(dir.join(t).is_file(), "{t} missing: {run:?}");
    }
    let summary = summary_by_policy(&dir);
    assert_eq!(summary["fifo"]["load_scale"], format!("{}", 1e300));
    assert_eq!(count(&summary["fifo"], "completed"), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two servers of 8 GPUs with NIC 1e9: a 4-worker ring without a
/// reservation, then an 8-worker ring reserving 5e9 per direction when it
/// spans (more than a NIC). The least-loaded GPUs after the first ring are
/// split over both servers; the reserving ring must go on one server.
fn reserving_ring_batch() -> dmlsched::model::Instance {
    use dmlsched::model::*;
    let cap = Resources::zero()
        .gpus(8.0)
        .cpu_cores(64.0)
        .memory(512e9)
        .nic(1e9);
    let cluster = Cluster::homogeneous(2, cap, 1.5e11);
    let ring = |id: u32, workers: u32, reserve: Option<f64>| {
        let r = RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations: 100,
            model_bytes: 1e8,
            reserved_bandwidth_bps: reserve,
            worker: Resources::zero().gpus(1.0).cpu_cores(4.0),
            ..RarJob::default()
        };
        Job::new(JobId(id), 0.0, r)
    };
    let jobs = vec![ring(0, 4, None), ring(1, 8, Some(5e9))];
    Instance::new(cluster, jobs, 60.0, 240).unwrap()
}

#[test]
fn sjf_bco_family_keeps_a_reserving_ring_on_one_server_when_one_holds_it() {
    use dmlsched::algorithms::sjf_bco::{RarFf, RarLs, RarRand, SjfBco, SjfBcoParams};
    use rand::SeedableRng;
    let inst = reserving_ring_batch();
    let solved = within(WATCHDOG_S, "sjf-bco family", move || {
        let p = SjfBcoParams::default();
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(3);
        vec![
            (
                "sjf-bco",
                SjfBco::new(p.clone())
                    .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            ),
            (
                "rar-ff",
                RarFf::new(p.clone())
                    .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            ),
            (
                "rar-ls",
                RarLs::new(p.clone())
                    .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
            ),
            (
                "rar-rand",
                RarRand::new(p).and_then(|a| a.solve(&inst, &mut rng)),
            ),
        ]
    });
    let inst = reserving_ring_batch();
    for (name, r) in solved {
        let s = r.unwrap_or_else(|e| panic!("{name}: {e}"));
        dmlsched::schedule::verify(&inst, &s.schedule).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ring = s.schedule.jobs.iter().find(|j| j.job.0 == 1).unwrap();
        for seg in &ring.segments {
            assert_eq!(seg.placement.len(), 1, "{name}: {:?}", seg.placement);
        }
    }
}
