//! The fairness metrics of a run: finish-time fairness `ρ` against each
//! job's solo run on its `1/n` share, Jain's index and the worst-off
//! share, by hand and as properties.

use dmlsched::baselines::{Fifo, solo_runs};
use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
use dmlsched::sim::{SimOptions, simulate};
use proptest::prelude::*;

/// One machine of `gpus` GPUs; jobs of 10 s alone on one GPU.
fn instance(gpus: f64, arrivals: &[f64]) -> Instance {
    let cluster = Cluster::homogeneous(1, Resources::zero().gpus(gpus).cpu_cores(4.0 * gpus), 1e10);
    let work = PsJob {
        minibatches_per_chunk: 10,
        ..PsJob::default()
    };
    let jobs = arrivals
        .iter()
        .enumerate()
        .map(|(i, &a)| Job::new(JobId(i as u32), a, work.clone()))
        .collect();
    Instance::new(cluster, jobs, 60.0, 10).unwrap()
}

/// Two 10-s jobs on one GPU, the second arriving at 5 s: FIFO runs it from
/// 10 to 20 s (JCT 15). Job 0 arrives alone (n = 1): ρ = 10/10 = 1. Job 1
/// finds job 0 present (n = 2), so its fair time is 10 × 2 = 20 s: ρ =
/// 0.75. Jain of (1, 4/3) = (7/3)²/(2·(1 + 16/9)) = 49/50.
#[test]
fn two_jobs_on_one_gpu_by_hand() {
    let inst = instance(1.0, &[0.0, 5.0]);
    let solo = solo_runs(&inst);
    assert_eq!(solo.len(), 2);
    for s in solo.iter().flatten() {
        assert!(
            (s.duration_s - 10.0).abs() < 1e-9 && (s.gpus - 1.0).abs() < 1e-9,
            "{s:?}"
        );
    }
    let run = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    let f = run.fairness(&solo).unwrap();
    assert_eq!(f.jobs, 2);
    assert!((f.max_rho - 1.0).abs() < 1e-9, "{f:?}");
    assert!((f.mean_rho - 0.875).abs() < 1e-9, "{f:?}");
    assert_eq!(f.share_rho_above_1, 0.0);
    assert!((f.jain - 0.98).abs() < 1e-9, "{f:?}");
    assert!((f.worst_share - 1.0).abs() < 1e-9, "{f:?}");
    // A third job at 5 s waits until 20 s: JCT 25 on a fair 30 s (n = 3).
    let inst = instance(1.0, &[0.0, 5.0, 5.0]);
    let run = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    let f = run.fairness(&solo_runs(&inst)).unwrap();
    assert!((f.max_rho - 1.0).abs() < 1e-9, "{f:?}");
    // The summary carries them once set; a wrong length gives none.
    let s = run.summary().with_fairness(Some(f));
    assert_eq!(s.fairness, Some(f));
    assert_eq!(run.fairness(&[]), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// On a cluster with room for everyone, every job runs at once: ρ = 1
    /// for all, Jain 1. On any cluster, Jain lies in (0, 1], the worst
    /// share is 1/max ρ, and the mean lies between the extremes.
    #[test]
    fn fairness_is_bounded_and_exact_with_room(
        arrivals in prop::collection::vec(0.0..100.0f64, 1..8),
        gpus in 1u32..4,
    ) {
        let roomy = instance(arrivals.len() as f64, &arrivals);
        let run = simulate(&roomy, &mut Fifo::default(), &SimOptions::default()).unwrap();
        let f = run.fairness(&solo_runs(&roomy)).unwrap();
        prop_assert!((f.max_rho - 1.0).abs() < 1e-9 && (f.jain - 1.0).abs() < 1e-9, "{:?}", f);
        let tight = instance(f64::from(gpus), &arrivals);
        let run = simulate(&tight, &mut Fifo::default(), &SimOptions::default()).unwrap();
        let f = run.fairness(&solo_runs(&tight)).unwrap();
        prop_assert_eq!(f.jobs, arrivals.len());
        prop_assert!(f.jain > 0.0 && f.jain <= 1.0 + 1e-12, "{:?}", f);
        prop_assert!((f.worst_share * f.max_rho - 1.0).abs() < 1e-12);
        prop_assert!(f.mean_rho <= f.max_rho + 1e-12 && f.mean_rho > 0.0);
        prop_assert!((0.0..=1.0).contains(&f.share_rho_above_1));
    }
}

/// `dmlsched replay` prints the fairness columns, and leaves them empty,
/// with a note, where the solo runs would cost too much (the whole Philly
/// trace on 256 machines).
#[cfg(feature = "cli")]
#[test]
fn replays_report_fairness_within_the_limit() {
    #[path = "common/mod.rs"]
    mod common;
    let philly = common::traces_dir().join("philly.csv");
    let philly = philly.to_string_lossy();
    let dir = std::env::temp_dir().join(format!("dmlsched-fairness-{}", std::process::id()));
    let run = |jobs: &str, gpus: &str, out: &str| {
        let out = dir.join(out);
        let run = common::dmlsched_within(
            120.0,
            &[
                "replay",
                &philly,
                "--jobs",
                jobs,
                "--gpus",
                gpus,
                "--policies",
                "fifo",
                "--out",
                &out.to_string_lossy(),
            ],
        );
        let stdout = run.ok(jobs).to_string();
        let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
        let cell = |name: &str| {
            // The cluster cell is quoted and holds one comma.
            row[header.iter().position(|h| *h == name).unwrap() + 1].to_string()
        };
        (stdout, cell("ftf_rho_max"), cell("jain_index"))
    };
    let (stdout, rho, jain) = run("500", "64", "small");
    assert!(
        stdout.contains("max ρ") && !stdout.contains("no fairness metrics"),
        "{stdout}"
    );
    assert!(rho.parse::<f64>().unwrap() >= 1.0, "{rho}");
    let jain: f64 = jain.parse().unwrap();
    assert!(jain > 0.0 && jain <= 1.0, "{jain}");
    let (stdout, rho, jain) = run("100000", "2048", "whole");
    assert!(
        stdout.contains("note: no fairness metrics: 82247 jobs × 256 machines"),
        "{stdout}"
    );
    assert_eq!((rho.as_str(), jain.as_str()), ("", ""));
    let _ = std::fs::remove_dir_all(&dir);
}
