//! Reproduces the evaluation of SJF-BCO (Yu, Ji, Rajan, Liu, "On Scheduling
//! Ring-All-Reduce Learning Jobs in Multi-Tenant GPU Clusters with
//! Communication Contention", ACM MobiHoc 2022) on the 160-job workload,
//! under both calibrations of the timing model:
//!
//! * **E4** (Fig. 4): 20 servers, `T = 1200`: SJF-BCO (every κ, `λ = 1`),
//!   LS, FF and RAND; makespan and mean, min and max JCT;
//! * **E5** (Fig. 5): 20 servers, `T = 1200`: SJF-BCO with a fixed
//!   `κ ∈ {1, 2, 4, 8, 10, 16, 32}`;
//! * **E6** (Fig. 6): 10, 15 and 20 servers, `T = 1500`: the four policies;
//! * **E7** (Fig. 7): 20 servers, `T = 1200` (the paper does not state it):
//!   SJF-BCO with `κ = 1` and `λ ∈ {1, 2, 4, 8}`.
//!
//! Makespans are compared as the paper plots them, `min(makespan, T)`
//! (`makespan_reported`); the simulated value is kept as `makespan_raw`.
//! Every schedule is checked with `schedule::verify` and every certificate
//! with `Certificate::check`; a failure ends the run with an error.
//!
//! The default run is reduced to 3 seeds (seconds in release mode);
//! `--full` runs seeds 0..=9, the published set-up.
//!
//! ```text
//! cargo run --release -p dmlsched-experiments --example ring_allreduce                          # reduced
//! cargo run --release -p dmlsched-experiments --example ring_allreduce -- --full --out /tmp/rar  # 10 seeds, both calibrations
//! cargo run --release -p dmlsched-experiments --example ring_allreduce -- --experiment 4,6 --seeds 5 --calibration synthetic
//! ```
//!
//! Run with `--help` for every option.

#[path = "../../examples/common/mod.rs"]
mod common;

use dmlsched::algorithms::Algorithm;
use rand::SeedableRng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use dmlsched::algorithms::Solved;
use dmlsched::algorithms::sjf_bco::{
    KappaSpec, LambdaSpec, RarFf, RarLs, RarRand, SjfBco, SjfBcoParams, SjfBcoReport,
};
use dmlsched::model::{Instance, ResourceKind};
use dmlsched::report::plot::lines_svg;
use dmlsched::schedule::verify;
use dmlsched_experiments::sjf_bco::{
    Calibration, HORIZON_20, HORIZON_FIG6, paper_instance, paper_params, rand_rng,
};

const USAGE: &str = "\
ring_allreduce: reproduce the SJF-BCO paper's Figures 4 to 7 (E4 to E7)

USAGE:
    ring_allreduce [--out DIR] [--full] [--seeds K] [--experiment LIST] [--calibration C]

OPTIONS:
    --out <DIR>            output folder (created if missing)  [default: <temp dir>/dmlsched-ring-allreduce]
    --seeds <K>            seeds 0..K per point                [default: 3; --full: 10]
    --experiment <E>       4, 5, 6, 7, repeatable or a list     [default: 4,5,6,7]
    --calibration <C>      synthetic, physical or both          [default: both]
    --full                 the published set-up: seeds 0..=9 (the reduced default: 3 seeds)
    -h, --help             print this help

OUTPUT (in --out):
    ring_allreduce.csv     one row per (calibration, experiment, seed, policy, setting): calibration,
                           experiment, seed, servers, total_gpus, horizon, policy, kappa, lambda,
                           makespan_raw, makespan_reported, within_horizon, mean_jct, min_jct, max_jct,
                           theta_tilde, w_hat_max, lower_bound, runtime_ms, kappa_star, trials,
                           max_duration_ratio
    e4-<cal>.svg ...       one figure per experiment and calibration (mean makespan, with the
    e7-<cal>.svg           paper's numbers and the reference values where they exist)
    summary.md             the tables, with ratios against the paper's numbers and the reference values
";

/// The four policies, in the paper's order.
const POLICIES: [&str; 4] = ["sjf-bco", "rar-ls", "rar-ff", "rar-rand"];
const KAPPAS: [u32; 7] = [1, 2, 4, 8, 10, 16, 32];
const LAMBDAS: [f64; 4] = [1.0, 2.0, 4.0, 8.0];
const SERVERS: [u32; 3] = [10, 15, 20];

/// The paper's numbers, read from its plots (about ±2%).
mod paper {
    /// Fig. 4 makespan, SJF-BCO, LS, FF, RAND.
    pub const E4_MAKESPAN: [f64; 4] = [535.0, 595.0, 715.0, 1125.0];
    /// Fig. 4 mean JCT.
    pub const E4_JCT: [f64; 4] = [178.0, 188.0, 450.0, 260.0];
    /// Fig. 5, κ = 1, 2, 4, 8, 10, 16, 32.
    pub const E5: [f64; 7] = [625.0, 565.0, 541.0, 535.0, 700.0, 749.0, 736.0];
    /// Fig. 6, per policy, at 10, 15, 20 servers.
    pub const E6: [[f64; 3]; 4] = [
        [940.0, 710.0, 535.0],
        [1160.0, 870.0, 595.0],
        [1405.0, 960.0, 715.0],
        [1490.0, 1260.0, 1125.0],
    ];
    /// Fig. 7, λ = 1, 2, 4, 8.
    pub const E7: [f64; 4] = [1040.0, 880.0, 730.0, 540.0];
}

/// Reference values of an independent reconstruction of the same set-up
/// (synthetic calibration, seeds 0..=9, another random generator).
mod reference {
    /// E4 makespan (20 servers, T = 1200).
    pub const E4_MAKESPAN: [f64; 4] = [480.0, 600.0, 605.0, 895.0];
    /// E4 mean JCT.
    pub const E4_JCT: [f64; 4] = [155.0, 171.0, 173.0, 274.0];
    /// E4 lower bound.
    pub const E4_LB: f64 = 290.0;
    /// E6 makespans at 10 and 15 servers (T = 1500), and at 20 servers with
    /// T = 1200.
    pub const E6: [[f64; 3]; 4] = [
        [870.0, 570.0, 480.0],
        [1250.0, 805.0, 600.0],
        [1240.0, 790.0, 605.0],
        [1400.0, 1060.0, 895.0],
    ];
    /// E5, κ = 1, 2, 4, 8, 10, 16, 32.
    pub const E5: [f64; 7] = [521.0, 495.0, 500.0, 594.0, 594.0, 598.0, 601.0];
    /// E7, λ = 1, 2, 4, 8.
    pub const E7: [f64; 4] = [521.0, 477.0, 493.0, 510.0];
    /// Physical calibration, E4: SJF-BCO's makespan over LS's, FF's and
    /// RAND's (none recorded for FF).
    pub const PHYSICAL_RATIOS: [Option<f64>; 3] = [Some(0.27), None, Some(0.11)];
}

#[derive(Debug)]
struct Args {
    out: PathBuf,
    full: bool,
    seeds: Option<u64>,
    experiments: Vec<u32>,
    calibrations: Vec<Calibration>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        out: std::env::temp_dir().join("dmlsched-ring-allreduce"),
        full: false,
        seeds: None,
        experiments: Vec::new(),
        calibrations: vec![Calibration::PaperSynthetic, Calibration::PhysicalMs160],
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--full" => a.full = true,
            "--out" => a.out = PathBuf::from(value()?),
            "--seeds" => a.seeds = Some(common::parse_count("--seeds", &value()?, u64::MAX)?),
            "--experiment" => {
                for e in value()?.split(',') {
                    match e.trim().trim_start_matches(['E', 'e']) {
                        "4" => a.experiments.push(4),
                        "5" => a.experiments.push(5),
                        "6" => a.experiments.push(6),
                        "7" => a.experiments.push(7),
                        other => {
                            return Err(format!(
                                "--experiment: expected 4, 5, 6 or 7, got '{other}'"
                            ));
                        }
                    }
                }
            }
            "--calibration" => {
                a.calibrations = match value()?.as_str() {
                    "synthetic" => vec![Calibration::PaperSynthetic],
                    "physical" => vec![Calibration::PhysicalMs160],
                    "both" => vec![Calibration::PaperSynthetic, Calibration::PhysicalMs160],
                    other => {
                        return Err(format!(
                            "--calibration: expected synthetic, physical or both, got '{other}'"
                        ));
                    }
                }
            }
            other => return Err(format!("unknown argument '{other}' (see --help)")),
        }
    }
    if a.experiments.is_empty() {
        a.experiments = vec![4, 5, 6, 7];
    }
    a.experiments.sort_unstable();
    a.experiments.dedup();
    Ok(Some(a))
}

fn cal_name(c: Calibration) -> &'static str {
    match c {
        Calibration::PaperSynthetic => "synthetic",
        Calibration::PhysicalMs160 => "physical",
    }
}

/// One run to make.
#[derive(Debug, Clone)]
struct Task {
    calibration: Calibration,
    experiment: u32,
    seed: u64,
    servers: u32,
    horizon: u64,
    policy: &'static str,
    /// Fixed κ (`None`: every κ).
    kappa: Option<u32>,
    lambda: f64,
}

/// One CSV row.
#[derive(Debug, Clone)]
struct Row {
    task: Task,
    total_gpus: f64,
    report: ReportRow,
    runtime_ms: f64,
}

/// The parts of a report the CSV keeps.
#[derive(Debug, Clone)]
struct ReportRow {
    makespan_raw: u64,
    makespan_reported: u64,
    within_horizon: bool,
    mean_jct: f64,
    min_jct: u64,
    max_jct: u64,
    theta_tilde: Option<u64>,
    w_hat_max: f64,
    lower_bound: f64,
    kappa_star: Option<u32>,
    trials: u32,
    max_duration_ratio: f64,
}

impl ReportRow {
    fn of(r: &SjfBcoReport) -> Self {
        ReportRow {
            makespan_raw: r.makespan_raw,
            makespan_reported: r.makespan_reported,
            within_horizon: r.within_horizon,
            mean_jct: r.execution.mean_jct,
            min_jct: r.execution.min_jct,
            max_jct: r.execution.max_jct,
            theta_tilde: r.theta_tilde,
            w_hat_max: r.w_hat_max,
            lower_bound: r.lower_bound,
            kappa_star: r.kappa_star,
            trials: r.trials,
            max_duration_ratio: r.execution.max_duration_ratio,
        }
    }
}

fn tasks(args: &Args, seeds: u64) -> Vec<Task> {
    let mut out = Vec::new();
    for &calibration in &args.calibrations {
        for &experiment in &args.experiments {
            for seed in 0..seeds {
                let base = Task {
                    calibration,
                    experiment,
                    seed,
                    servers: 20,
                    horizon: HORIZON_20,
                    policy: "sjf-bco",
                    kappa: None,
                    lambda: 1.0,
                };
                match experiment {
                    4 => out.extend(POLICIES.iter().map(|&policy| Task {
                        policy,
                        ..base.clone()
                    })),
                    5 => out.extend(KAPPAS.iter().map(|&k| Task {
                        kappa: Some(k),
                        ..base.clone()
                    })),
                    6 => {
                        for servers in SERVERS {
                            out.extend(POLICIES.iter().map(|&policy| Task {
                                policy,
                                servers,
                                horizon: HORIZON_FIG6,
                                ..base.clone()
                            }));
                        }
                    }
                    _ => out.extend(LAMBDAS.iter().map(|&lambda| Task {
                        kappa: Some(1),
                        lambda,
                        ..base.clone()
                    })),
                }
            }
        }
    }
    out
}

/// Runs one task and checks its schedule and certificate.
fn run_task(t: &Task) -> Result<Row, String> {
    let ctx = || {
        format!(
            "E{} {} seed {} {} servers {}",
            t.experiment,
            cal_name(t.calibration),
            t.seed,
            t.servers,
            t.policy
        )
    };
    let inst = paper_instance(t.seed, t.servers, t.calibration)
        .map_err(|e| format!("{}: instance: {e}", ctx()))?;
    let mut params: SjfBcoParams = paper_params(t.horizon);
    if let Some(k) = t.kappa {
        params.kappas = KappaSpec::Fixed(k);
    }
    params.lambda = LambdaSpec::Uniform(t.lambda);
    let clock = Instant::now();
    let solved: dmlsched::Result<Solved<SjfBcoReport>> = match t.policy {
        "sjf-bco" => SjfBco::new(params)
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        "rar-ls" => RarLs::new(params)
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        "rar-ff" => RarFf::new(params)
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))),
        _ => RarRand::new(params).and_then(|a| a.solve(&inst, &mut rand_rng(t.seed))),
    };
    let runtime_ms = clock.elapsed().as_secs_f64() * 1e3;
    let solved = solved.map_err(|e| format!("{}: {e}", ctx()))?;
    check(&inst, &solved).map_err(|e| format!("{}: {e}", ctx()))?;
    Ok(Row {
        task: t.clone(),
        total_gpus: inst.cluster().total_capacity().get(ResourceKind::Gpu),
        report: ReportRow::of(&solved.report),
        runtime_ms,
    })
}

fn check(inst: &Instance, solved: &Solved<SjfBcoReport>) -> Result<(), String> {
    verify(inst, &solved.schedule).map_err(|e| format!("verify: {e}"))?;
    solved
        .certificate
        .check(1e-9)
        .map_err(|e| format!("certificate: {e}"))
}

/// Runs every task on all cores, in task order.
fn run_all(tasks: &[Task]) -> Result<Vec<Row>, String> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Row, String>>>> =
        tasks.iter().map(|_| Mutex::new(None)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(tasks.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(t) = tasks.get(i) else { break };
                    let r = run_task(t);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .map_err(|_| "a worker thread panicked".to_string())?
                .ok_or_else(|| "a run did not finish".to_string())?
        })
        .collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn write_csv(path: &Path, rows: &[Row]) -> Result<(), String> {
    let mut w = csv::Writer::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    w.write_record([
        "calibration",
        "experiment",
        "seed",
        "servers",
        "total_gpus",
        "horizon",
        "policy",
        "kappa",
        "lambda",
        "makespan_raw",
        "makespan_reported",
        "within_horizon",
        "mean_jct",
        "min_jct",
        "max_jct",
        "theta_tilde",
        "w_hat_max",
        "lower_bound",
        "runtime_ms",
        "kappa_star",
        "trials",
        "max_duration_ratio",
    ])
    .map_err(|e| e.to_string())?;
    for r in rows {
        let (t, p) = (&r.task, &r.report);
        // κ and λ are SJF-BCO's; the baselines have neither.
        let sjf = |v: String| {
            if t.policy == "sjf-bco" {
                v
            } else {
                String::new()
            }
        };
        w.write_record([
            cal_name(t.calibration).to_string(),
            format!("E{}", t.experiment),
            t.seed.to_string(),
            t.servers.to_string(),
            r.total_gpus.to_string(),
            t.horizon.to_string(),
            t.policy.to_string(),
            sjf(t.kappa.map_or_else(|| "all".into(), |k| k.to_string())),
            sjf(t.lambda.to_string()),
            p.makespan_raw.to_string(),
            p.makespan_reported.to_string(),
            p.within_horizon.to_string(),
            format!("{:.3}", p.mean_jct),
            p.min_jct.to_string(),
            p.max_jct.to_string(),
            opt(p.theta_tilde),
            format!("{:.3}", p.w_hat_max),
            format!("{:.3}", p.lower_bound),
            format!("{:.3}", r.runtime_ms),
            opt(p.kappa_star),
            p.trials.to_string(),
            format!("{:.4}", p.max_duration_ratio),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())
}

/// The rows of one (calibration, experiment) matching `keep`.
fn select<'a>(
    rows: &'a [Row],
    cal: Calibration,
    e: u32,
    keep: impl Fn(&Task) -> bool + 'a,
) -> impl Iterator<Item = &'a Row> + 'a {
    rows.iter()
        .filter(move |r| r.task.calibration == cal && r.task.experiment == e && keep(&r.task))
}

/// Statistics of one cell: mean and sd of the reported makespan, mean raw
/// makespan, mean JCT, runs past `T`, runs.
struct Cell {
    makespan: (f64, f64),
    raw: f64,
    jct: f64,
    lb: f64,
    censored: usize,
    n: usize,
}

fn cell<'a>(rows: impl Iterator<Item = &'a Row>) -> Cell {
    let rows: Vec<&Row> = rows.collect();
    let col =
        |f: &dyn Fn(&ReportRow) -> f64| -> Vec<f64> { rows.iter().map(|r| f(&r.report)).collect() };
    Cell {
        makespan: common::mean_sd(&col(&|p| p.makespan_reported as f64)),
        raw: common::mean_sd(&col(&|p| p.makespan_raw as f64)).0,
        jct: common::mean_sd(&col(&|p| p.mean_jct)).0,
        lb: common::mean_sd(&col(&|p| p.lower_bound)).0,
        censored: rows.iter().filter(|r| !r.report.within_horizon).count(),
        n: rows.len(),
    }
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}", a / b)
}

/// The E4 table: our means, the paper's numbers and the reference values,
/// with ratios.
fn e4_table(rows: &[Row], cal: Calibration) -> String {
    let cells: Vec<Cell> = POLICIES
        .iter()
        .map(|&p| cell(select(rows, cal, 4, move |t| t.policy == p)))
        .collect();
    let synthetic = cal == Calibration::PaperSynthetic;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "E4, {} calibration, 20 servers, T = {HORIZON_20}, {} seeds\n",
        cal_name(cal),
        cells[0].n
    );
    let _ = writeln!(
        s,
        "| policy | makespan (sd) | raw | > T | ours/paper | ours/ref | mean JCT | ours/paper | ours/ref |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for (i, c) in cells.iter().enumerate() {
        let (pm, pj) = (paper::E4_MAKESPAN[i], paper::E4_JCT[i]);
        let (rm, rj) = (reference::E4_MAKESPAN[i], reference::E4_JCT[i]);
        let refs = |x: f64, r: f64| if synthetic { ratio(x, r) } else { "–".into() };
        let _ = writeln!(
            s,
            "| {} | {:.1} ({:.1}) | {:.1} | {}/{} | {} (paper {pm}) | {} | {:.1} | {} (paper {pj}) | {} |",
            POLICIES[i],
            c.makespan.0,
            c.makespan.1,
            c.raw,
            c.censored,
            c.n,
            ratio(c.makespan.0, pm),
            refs(c.makespan.0, rm),
            c.jct,
            ratio(c.jct, pj),
            refs(c.jct, rj),
        );
    }
    let (sjf, sjf_raw) = (cells[0].makespan.0, cells[0].raw);
    let _ = writeln!(
        s,
        "\n| SJF-BCO / | ours | ours, raw | paper | reference |\n|---|---|---|---|---|"
    );
    for (i, name) in [(1, "LS"), (2, "FF"), (3, "RAND")] {
        let refs = if synthetic {
            ratio(reference::E4_MAKESPAN[0], reference::E4_MAKESPAN[i])
        } else {
            reference::PHYSICAL_RATIOS[i - 1].map_or_else(|| "–".into(), |r| format!("≈ {r}"))
        };
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {refs} |",
            ratio(sjf, cells[i].makespan.0),
            ratio(sjf_raw, cells[i].raw),
            ratio(paper::E4_MAKESPAN[0], paper::E4_MAKESPAN[i]),
        );
    }
    let wins = (0..cells[0].n as u64)
        .filter(|&seed| {
            let get = |p: &str| {
                select(rows, cal, 4, |t| t.policy == p && t.seed == seed)
                    .next()
                    .map(|r| r.report.makespan_reported)
            };
            get("sjf-bco") <= get("rar-ls")
        })
        .count();
    let _ = writeln!(
        s,
        "\nSJF-BCO ≤ LS on {wins} of {} seeds; lower bound max(max ρ̂/u, Σ G ρ̂/(uN)) mean {:.1}, \
         {:.1} with u = 1{}.",
        cells[0].n,
        cells[0].lb,
        cells[0].lb * paper_params(HORIZON_20).est_upper,
        if synthetic {
            format!(" (reference {:.0})", reference::E4_LB)
        } else {
            String::new()
        }
    );
    s
}

/// A sweep table: rows by setting with paper and reference columns.
fn sweep_table(
    title: &str,
    x_name: &str,
    xs: &[(String, Cell)],
    paper: &[f64],
    refs: Option<&[f64]>,
) -> String {
    let mut s = format!("{title}\n\n| {x_name} | makespan (sd) | raw | > T | paper | ours/paper |");
    s.push_str(if refs.is_some() {
        " reference | ours/ref |\n|---|---|---|---|---|---|---|---|\n"
    } else {
        "\n|---|---|---|---|---|---|\n"
    });
    for (i, (x, c)) in xs.iter().enumerate() {
        let _ = write!(
            s,
            "| {x} | {:.1} ({:.1}) | {:.1} | {}/{} | {} | {} |",
            c.makespan.0,
            c.makespan.1,
            c.raw,
            c.censored,
            c.n,
            paper[i],
            ratio(c.makespan.0, paper[i])
        );
        if let Some(r) = refs {
            let _ = write!(s, " {} | {} |", r[i], ratio(c.makespan.0, r[i]));
        }
        s.push('\n');
    }
    s
}

fn write_svg(path: &Path, points: &[(&str, f64, f64)], title: &str, x: &str) -> Result<(), String> {
    let svg = lines_svg(points, title, x, "mean makespan (slots, ≤ T)")
        .map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))
}

/// Summary section and SVG of one experiment under one calibration.
fn report(args: &Args, rows: &[Row], cal: Calibration, e: u32) -> Result<String, String> {
    if select(rows, cal, e, |_| true).next().is_none() {
        return Ok(String::new());
    }
    let synthetic = cal == Calibration::PaperSynthetic;
    let svg = args.out.join(format!("e{e}-{}.svg", cal_name(cal)));
    let mut pts: Vec<(String, f64, f64)> = Vec::new();
    let text = match e {
        4 => {
            for (i, &p) in POLICIES.iter().enumerate() {
                let c = cell(select(rows, cal, 4, move |t| t.policy == p));
                let x = (i + 1) as f64;
                pts.push(("ours: makespan".into(), x, c.makespan.0));
                pts.push(("ours: mean JCT".into(), x, c.jct));
                pts.push(("paper: makespan".into(), x, paper::E4_MAKESPAN[i]));
                pts.push(("paper: mean JCT".into(), x, paper::E4_JCT[i]));
                if synthetic {
                    pts.push(("reference: makespan".into(), x, reference::E4_MAKESPAN[i]));
                }
            }
            e4_table(rows, cal)
        }
        5 | 7 => {
            let xs: Vec<(String, Cell)> = if e == 5 {
                KAPPAS
                    .iter()
                    .map(|&k| {
                        (
                            k.to_string(),
                            cell(select(rows, cal, 5, move |t| t.kappa == Some(k))),
                        )
                    })
                    .collect()
            } else {
                LAMBDAS
                    .iter()
                    .map(|&l| {
                        (
                            l.to_string(),
                            cell(select(rows, cal, 7, move |t| t.lambda == l)),
                        )
                    })
                    .collect()
            };
            let (paper, refs, name) = if e == 5 {
                (&paper::E5[..], &reference::E5[..], "κ")
            } else {
                (&paper::E7[..], &reference::E7[..], "λ")
            };
            for (i, (x, c)) in xs.iter().enumerate() {
                let xv: f64 = x.parse().unwrap_or(f64::NAN);
                pts.push(("ours: SJF-BCO".into(), xv, c.makespan.0));
                pts.push(("paper".into(), xv, paper[i]));
                if synthetic {
                    pts.push(("reference".into(), xv, refs[i]));
                }
            }
            let title = format!(
                "E{e}, {} calibration, 20 servers, T = {HORIZON_20}, SJF-BCO {}",
                cal_name(cal),
                if e == 5 {
                    "with fixed κ, λ = 1"
                } else {
                    "with κ = 1"
                }
            );
            sweep_table(&title, name, &xs, paper, synthetic.then_some(refs))
        }
        _ => {
            let mut s = String::new();
            for (i, &p) in POLICIES.iter().enumerate() {
                let xs: Vec<(String, Cell)> = SERVERS
                    .iter()
                    .map(|&n| {
                        (
                            n.to_string(),
                            cell(select(rows, cal, 6, move |t| {
                                t.policy == p && t.servers == n
                            })),
                        )
                    })
                    .collect();
                for (j, (_, c)) in xs.iter().enumerate() {
                    let x = f64::from(SERVERS[j]);
                    pts.push((format!("ours: {p}"), x, c.makespan.0));
                    pts.push((format!("paper: {p}"), x, paper::E6[i][j]));
                }
                let title = format!("E6, {} calibration, T = {HORIZON_FIG6}, {p}", cal_name(cal));
                s.push_str(&sweep_table(
                    &title,
                    "servers",
                    &xs,
                    &paper::E6[i],
                    synthetic.then_some(&reference::E6[i][..]),
                ));
                s.push('\n');
            }
            if synthetic {
                s.push_str(
                    "The reference value at 20 servers is for T = 1200 (none is given for T = 1500).\n",
                );
            }
            s
        }
    };
    let points: Vec<(&str, f64, f64)> = pts.iter().map(|(l, x, y)| (l.as_str(), *x, *y)).collect();
    let (title, x) = match e {
        4 => (
            "Fig. 4: makespan and mean JCT by policy",
            "policy (1 SJF-BCO, 2 LS, 3 FF, 4 RAND)",
        ),
        5 => ("Fig. 5: SJF-BCO makespan by κ", "κ"),
        6 => ("Fig. 6: makespan by cluster size", "servers"),
        _ => ("Fig. 7: SJF-BCO (κ = 1) makespan by λ", "λ"),
    };
    write_svg(&svg, &points, &format!("{title} ({})", cal_name(cal)), x)?;
    Ok(text)
}

fn run(args: &Args) -> Result<(), String> {
    let started = Instant::now();
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let seeds = args.seeds.unwrap_or(if args.full { 10 } else { 3 });
    let tasks = tasks(args, seeds);
    eprintln!("{} runs on {seeds} seeds ...", tasks.len());
    let rows = run_all(&tasks)?;
    write_csv(&args.out.join("ring_allreduce.csv"), &rows)?;
    let mut summary = String::from("# SJF-BCO reproduction (examples/ring_allreduce.rs)\n\n");
    let _ = writeln!(
        summary,
        "crate {} · seeds 0..{seeds} · experiments {:?} · full {} · {} runs, every schedule verified\n",
        env!("CARGO_PKG_VERSION"),
        args.experiments,
        args.full,
        rows.len()
    );
    summary.push_str(
        "Makespans are `min(makespan, T)` as in the paper's plots (`raw`: the simulated value; \
         `> T`: runs past T). Paper: numbers read from the paper's plots (about ±2%). Reference: an \
         independent reconstruction of the same set-up with another random generator (synthetic \
         calibration only; ±10% is the expected agreement).\n\n",
    );
    for &cal in &args.calibrations {
        let _ = writeln!(summary, "## {} calibration\n", cal_name(cal));
        for &e in &args.experiments {
            let text = report(args, &rows, cal, e)?;
            if !text.is_empty() {
                summary.push_str(&text);
                summary.push('\n');
            }
        }
    }
    let total_ms: f64 = rows.iter().map(|r| r.runtime_ms).sum();
    let _ = writeln!(
        summary,
        "Solver time {:.1} s over {} runs; wall clock {:.1} s.",
        total_ms / 1e3,
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    std::fs::write(args.out.join("summary.md"), &summary).map_err(|e| e.to_string())?;
    if args.experiments.contains(&4) {
        for &cal in &args.calibrations {
            println!("{}", e4_table(&rows, cal));
        }
    }
    println!(
        "wrote ring_allreduce.csv, SVGs and summary.md to {} ({:.1} s)",
        args.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    common::main(USAGE, parse_args, run)
}
