//! Experiments of the locality-aware scheduler: when does running a job
//! LOCAL (workers and one PS on one machine) pay?
//!
//! * **L-E1**: intra-machine bandwidth ratio `κ = b_int/b` ∈ {1, 2, 5, 10, 20}
//!   on the default set-up (machines `[8 GPU, 64 vCPU, 512 GB, 25 Gbit/s]`,
//!   1800-s slots, `T = 200`, models drawn from the measured table);
//! * **L-E2**: gradient size `e` ∈ {5, 25, 100, 250, 550} MB for every job,
//!   `τ = 0.5 s`, `κ = 10`;
//! * **L-E3**: job width `N` ∈ {2, 4, 8, 16, 32} for every job (also its
//!   worker and PS caps) against 8-GPU machines, `κ = 10`; every job of a
//!   point has the same width, so the point's LOCAL share is the LOCAL
//!   share of that width;
//! * **L-E4**: offline batches (all jobs present in the first slot) of
//!   `I ∈ {5, 10}` jobs (`--full`: also 20) at `κ ∈ {1, 10}`: the makespan
//!   by LP bisection and rounding (`LocalityBatch`), by the exact MIP for
//!   `I ≤ 5`, the AlwaysLocal and AlwaysSpread list schedulers, and the
//!   weighted completion-time proxy with its LP bound;
//! * **L-E5**: rounding quality: LP rounding (four variants of draws and
//!   scalings) against the exact MIP on random single-job programs
//!   (`experiments::locality::quality`): `cost/LB`, `cost/OPT_MIP` and the
//!   cases where rounding finds no plan although the MIP does.
//!
//! Schedulers: the locality scheduler (LP rounding; with `--exact` also
//! with the exact MIP inner solver, for small sizes), NoLocality (the same
//! scheduler with LOCAL disabled), AlwaysLocalFirstFit and
//! AlwaysSpreadGreedy. Every schedule is checked with `schedule::verify`
//! and `verify_locality`; a failure ends the run with an error.
//!
//! The default run is reduced to finish in well under two minutes on two
//! cores: 4 machines, 12 jobs, 2 seeds per point (L-E5 always
//! runs its 200 cases: a few seconds). `--full` runs the published sizes:
//! 16 machines, 100 jobs, 5 seeds.
//!
//! ```text
//! cargo run --release -p dmlsched-experiments --example locality -- --out /tmp/loc          # reduced sizes
//! cargo run --release -p dmlsched-experiments --example locality -- --out /tmp/loc --full   # 16 machines, 100 jobs, 5 seeds
//! cargo run --release -p dmlsched-experiments --example locality -- --experiment 1 --seeds 5 --jobs 50 --machines 8
//! ```
//!
//! Run with `--help` for every option.

#[path = "../../examples/common/mod.rs"]
mod common;

use dmlsched::algorithms::Algorithm;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use dmlsched::algorithms::locality::{
    BatchObjective, InnerSolver, Locality, LocalityBaseline, LocalityBatch, LocalityBatchParams,
    LocalityParams, verify_locality,
};
use dmlsched::experiments::locality_quality as quality;
use dmlsched::model::{Instance, TaskKind};
use dmlsched::report::plot::lines_svg;
use dmlsched::schedule::{Configuration, Schedule, verify};
use dmlsched_experiments::locality::{LocalityWorkload, ModelProfile, generate, generate_batch};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

const USAGE: &str = "\
locality: experiments of the locality-aware scheduler (L-E1 to L-E5)

USAGE:
    locality [--out DIR] [--experiment LIST] [--seeds K] [--jobs N] [--machines H] [--cases K]
             [--exact] [--full]

OPTIONS:
    --out <DIR>           output folder (created if missing)   [default: <temp dir>/dmlsched-locality]
    --experiment <E>      1 (κ sweep), 2 (gradient size sweep), 3 (job width sweep),
                          4 (offline batches), 5 (rounding quality),
                          repeatable or a list 1,2,3,4,5        [default: 1,2,3,4,5]
    --seeds <K>           seeds per point                       [default: 2; --full: 5]
    --jobs <N>            jobs per instance                     [default: 12; --full: 100]
    --machines <H>        machines per cluster                  [default: 4; --full: 16]
    --cases <K>           L-E5: random single-job programs      [default: 200]
    --exact               L-E1 to L-E3 also run the locality scheduler with the exact MIP
                          inner solver (locality_exact; small sizes only: slow)
    --full                the published sizes: 16 machines, 100 jobs, 5 seeds
    -h, --help            print this help

OUTPUT (in --out), long format (experiment, point, scheduler, seed, metric, value):
    l-e1.csv, l-e1.svg    mean total utility per scheduler against κ
    l-e2.csv, l-e2.svg    mean total utility per scheduler against the gradient size (MB)
    l-e3.csv, l-e3.svg    mean total utility per scheduler against the job width N
    l-e4.csv, l-e4.svg    makespan C_max, C_max/T_LP, exact optimum (I ≤ 5), weighted proxy, runtime
                          per batch size I, κ ∈ {1, 10} and scheduler; mean C_max against I
    l-e5.csv, l-e5.svg    cost/LB, cost/OPT_MIP and misses per case and rounding variant;
                          the distribution (share of cases ≤ x) of cost/OPT_MIP
    summary.md            mean ± sd of every metric per point and scheduler

METRICS:
    total_utility         Σ f_i(t̂_i − a_i) over admitted jobs (recomputed by verify_locality)
    acceptance            admitted jobs / jobs
    mean_delay_slots      mean completion delay t̂_i − a_i over admitted jobs, slots
    local_share           active job-slots run LOCAL / active job-slots
    nic_utilisation       NIC bandwidth reserved / (machines · NIC · T)
    decision_ms           wall-clock time of the run / jobs, milliseconds
";

/// Schedulers in output order.
const SCHEDULERS: [&str; 5] = [
    "locality",
    "locality_exact",
    "no_locality",
    "always_local_first_fit",
    "always_spread_greedy",
];

/// Metrics in output order.
const METRICS: [&str; 6] = [
    "total_utility",
    "acceptance",
    "mean_delay_slots",
    "local_share",
    "nic_utilisation",
    "decision_ms",
];

struct Args {
    out: PathBuf,
    experiments: Vec<u32>,
    seeds: Option<u64>,
    jobs: Option<usize>,
    machines: Option<u32>,
    cases: Option<u64>,
    exact: bool,
    full: bool,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        out: std::env::temp_dir().join("dmlsched-locality"),
        experiments: Vec::new(),
        seeds: None,
        jobs: None,
        machines: None,
        cases: None,
        exact: false,
        full: false,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--full" => a.full = true,
            "--exact" => a.exact = true,
            "--out" => a.out = PathBuf::from(value()?),
            "--experiment" => {
                for e in value()?.split(',') {
                    match e.trim().trim_start_matches("L-E").trim_start_matches("l-e") {
                        "1" => a.experiments.push(1),
                        "2" => a.experiments.push(2),
                        "3" => a.experiments.push(3),
                        "4" => a.experiments.push(4),
                        "5" => a.experiments.push(5),
                        other => {
                            return Err(format!("--experiment: expected 1 to 5, got '{other}'"));
                        }
                    }
                }
            }
            "--seeds" => a.seeds = Some(common::parse_count("--seeds", &value()?, u64::MAX)?),
            "--jobs" => {
                let v = value()?;
                let n: usize = v.parse().map_err(|e| format!("--jobs '{v}': {e}"))?;
                if n == 0 {
                    return Err("--jobs: at least 1".into());
                }
                a.jobs = Some(n);
            }
            "--cases" => {
                let v = value()?;
                let k: u64 = v.parse().map_err(|e| format!("--cases '{v}': {e}"))?;
                if k == 0 {
                    return Err("--cases: at least 1".into());
                }
                a.cases = Some(k);
            }
            "--machines" => {
                let v = value()?;
                let h: u32 = v.parse().map_err(|e| format!("--machines '{v}': {e}"))?;
                if h == 0 {
                    return Err("--machines: at least 1".into());
                }
                a.machines = Some(h);
            }
            other => return Err(format!("unknown argument '{other}' (see --help)")),
        }
    }
    if a.experiments.is_empty() {
        a.experiments = vec![1, 2, 3, 4, 5];
    }
    a.experiments.sort_unstable();
    a.experiments.dedup();
    Ok(Some(a))
}

/// One long-format CSV row.
struct Row {
    point: f64,
    scheduler: &'static str,
    seed: u64,
    metric: &'static str,
    value: f64,
}

/// What one checked run gives.
struct RunMetrics {
    values: [f64; 6],
}

/// Checks `schedule` with both checkers and computes the metrics from it.
/// `reported` is the scheduler's own total utility, which must agree with
/// the checker's.
fn measure(
    inst: &Instance,
    check_params: &LocalityParams,
    schedule: &Schedule,
    reported: f64,
    seconds: f64,
) -> Result<RunMetrics, String> {
    verify(inst, schedule).map_err(|e| format!("schedule::verify: {e}"))?;
    let check = verify_locality(inst, check_params, schedule)
        .map_err(|e| format!("verify_locality: {e}"))?;
    let tol = 1e-6 * check.total_utility.abs().max(1.0);
    if (check.total_utility - reported).abs() > tol {
        return Err(format!(
            "reported total utility {reported} differs from the checker's {}",
            check.total_utility
        ));
    }
    let n = inst.jobs().len() as f64;
    let mut delay = 0.0;
    for j in &check.jobs {
        let p = inst
            .job_position(j.job)
            .ok_or_else(|| format!("{} is not in the instance", j.job))?;
        delay += f64::from(j.completion - inst.arrival_slot(&inst.jobs()[p]));
    }
    let admitted = check.jobs.len() as f64;
    let (mut local, mut active, mut nic) = (0.0, 0.0, 0.0);
    for js in schedule.jobs.iter().filter(|js| js.admitted) {
        let p = inst
            .job_position(js.job)
            .ok_or_else(|| format!("{} is not in the instance", js.job))?;
        let job = &inst.jobs()[p];
        let bw = |k| job.task_demand(k).map_or(0.0, |d| d.nic_bps);
        let (b, big_b) = (bw(TaskKind::Worker), bw(TaskKind::ParameterServer));
        for seg in &js.segments {
            let slots = f64::from(seg.slots.end - seg.slots.start);
            active += slots;
            if matches!(seg.config, Some(Configuration::Local { .. })) {
                local += slots;
            } else {
                let t = seg.placement.total();
                nic += slots * (f64::from(t.workers) * b + f64::from(t.ps) * big_b);
            }
        }
    }
    let nic_cap: f64 = inst
        .cluster()
        .machines
        .iter()
        .map(|m| m.capacity.nic_bps)
        .sum();
    let nic_total = nic_cap * f64::from(inst.horizon_slots());
    Ok(RunMetrics {
        values: [
            check.total_utility,
            admitted / n,
            if admitted > 0.0 {
                delay / admitted
            } else {
                f64::NAN
            },
            if active > 0.0 {
                local / active
            } else {
                f64::NAN
            },
            if nic_total > 0.0 {
                nic / nic_total
            } else {
                0.0
            },
            1e3 * seconds / n,
        ],
    })
}

/// Runs every scheduler on one instance and appends its rows.
fn run_point(
    w: &LocalityWorkload,
    (point, seed, exact): (f64, u64, bool),
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let inst = generate(&mut rng, w).map_err(|e| format!("workload: {e}"))?;
    let mut params = w.params();
    params.seed = Some(seed);
    for &name in SCHEDULERS
        .iter()
        .filter(|&&n| exact || n != "locality_exact")
    {
        let ctx = |e: String| format!("{name}, seed {seed}: {e}");
        let t = Instant::now();
        let (schedule, reported, check_params) = match name {
            "locality" | "locality_exact" => {
                let mut p = params.clone();
                p.inner = if name == "locality" {
                    params.inner
                } else {
                    InnerSolver::exact_mip()
                };
                let s = Locality::new(p.clone())
                    .and_then(|l| l.solve(&inst, &mut rng))
                    .map_err(|e| ctx(e.to_string()))?;
                (s.schedule, s.certificate.objective, p)
            }
            _ => {
                let b = match name {
                    "no_locality" => LocalityBaseline::NoLocality,
                    "always_local_first_fit" => LocalityBaseline::AlwaysLocalFirstFit,
                    _ => LocalityBaseline::AlwaysSpreadGreedy,
                };
                let s = b.solve(&inst, &params).map_err(|e| ctx(e.to_string()))?;
                let mut check = params.clone();
                check.allow_local = b == LocalityBaseline::AlwaysLocalFirstFit;
                (s.schedule, s.report.total_utility, check)
            }
        };
        let seconds = t.elapsed().as_secs_f64();
        let m = measure(&inst, &check_params, &schedule, reported, seconds).map_err(ctx)?;
        for (metric, value) in METRICS.iter().zip(m.values) {
            rows.push(Row {
                point,
                scheduler: name,
                seed,
                metric,
                value,
            });
        }
    }
    Ok(())
}

/// One sweep: its id, title, the swept quantity and its workloads.
struct Sweep {
    id: &'static str,
    title: &'static str,
    x_desc: &'static str,
    points: Vec<(f64, LocalityWorkload)>,
}

fn sweeps(args: &Args) -> Vec<Sweep> {
    let jobs = args.jobs.unwrap_or(if args.full { 100 } else { 12 });
    let machines = args.machines.unwrap_or(if args.full { 16 } else { 4 });
    let base = LocalityWorkload {
        jobs,
        machines,
        ..LocalityWorkload::default()
    };
    let mut out = Vec::new();
    for &e in &args.experiments {
        match e {
            1 => out.push(Sweep {
                id: "l-e1",
                title: "L-E1: total utility against κ = b_int / b",
                x_desc: "κ",
                points: [1.0, 2.0, 5.0, 10.0, 20.0]
                    .into_iter()
                    .map(|k| {
                        let w = LocalityWorkload {
                            intra_factor: k,
                            ..base.clone()
                        };
                        (k, w)
                    })
                    .collect(),
            }),
            2 => out.push(Sweep {
                id: "l-e2",
                title: "L-E2: total utility against gradient size (τ = 0.5 s, κ = 10)",
                x_desc: "gradient size e (MB)",
                points: [5.0, 25.0, 100.0, 250.0, 550.0]
                    .into_iter()
                    .map(|e| {
                        let w = LocalityWorkload {
                            intra_factor: 10.0,
                            models: vec![ModelProfile {
                                name: "fixed",
                                compute_s: 0.5,
                                size_mb: e,
                            }],
                            ..base.clone()
                        };
                        (e, w)
                    })
                    .collect(),
            }),
            3 => out.push(Sweep {
                id: "l-e3",
                title: "L-E3: total utility against job width N (8-GPU machines, κ = 10)",
                x_desc: "job width N (workers)",
                points: [2u32, 4, 8, 16, 32]
                    .into_iter()
                    .map(|n| {
                        let w = LocalityWorkload {
                            intra_factor: 10.0,
                            chunks: (n, n),
                            ..base.clone()
                        };
                        (f64::from(n), w)
                    })
                    .collect(),
            }),
            _ => {}
        }
    }
    out
}

/// The rows of one (point, seed), or its error.
type PointResult = Result<Vec<Row>, String>;

/// Runs every (point, seed) of `sweep` on all cores; rows in point, seed
/// order.
fn run_sweep(sweep: &Sweep, seeds: u64, exact: bool) -> Result<Vec<Row>, String> {
    let tasks: Vec<(f64, &LocalityWorkload, u64)> = sweep
        .points
        .iter()
        .flat_map(|(x, w)| (0..seeds).map(move |seed| (*x, w, seed)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<PointResult>>> = tasks.iter().map(|_| Mutex::new(None)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(tasks.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(x, w, seed)) = tasks.get(i) else {
                        break;
                    };
                    let mut rows = Vec::new();
                    let r = run_point(w, (x, seed, exact), &mut rows)
                        .map(|()| rows)
                        .map_err(|e| format!("{} at {} = {x}: {e}", sweep.id, sweep.x_desc));
                    if r.is_ok() {
                        eprintln!("  {} {} = {x}, seed {seed} done", sweep.id, sweep.x_desc);
                    }
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    let mut rows = Vec::new();
    for r in results {
        let r = r
            .into_inner()
            .map_err(|_| "a worker thread panicked".to_string())?
            .ok_or_else(|| "a run did not finish".to_string())?;
        rows.extend(r?);
    }
    Ok(rows)
}

fn write_csv(path: &Path, experiment: &str, rows: &[Row]) -> Result<(), String> {
    let err = |e: csv::Error| format!("{}: {e}", path.display());
    let mut w = csv::Writer::from_path(path).map_err(err)?;
    w.write_record([
        "experiment",
        "point",
        "scheduler",
        "seed",
        "metric",
        "value",
    ])
    .map_err(err)?;
    for r in rows {
        w.write_record([
            experiment.to_string(),
            r.point.to_string(),
            r.scheduler.to_string(),
            r.seed.to_string(),
            r.metric.to_string(),
            r.value.to_string(),
        ])
        .map_err(err)?;
    }
    w.flush().map_err(|e| format!("{}: {e}", path.display()))
}

fn stat(rows: &[Row], point: f64, scheduler: &str, metric: &str) -> (f64, f64) {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.point == point && r.scheduler == scheduler && r.metric == metric)
        .map(|r| r.value)
        .collect();
    common::mean_sd(&v)
}

/// L-E4 schedulers (CSV names) at κ = 1 and at κ = 10, in the same order.
const BATCH_SCHEDULERS: [[&str; 5]; 2] = [
    [
        "makespan_lp_rounding_k1",
        "makespan_exact_k1",
        "always_local_list_k1",
        "always_spread_list_k1",
        "proxy_lp_rounding_k1",
    ],
    [
        "makespan_lp_rounding_k10",
        "makespan_exact_k10",
        "always_local_list_k10",
        "always_spread_list_k10",
        "proxy_lp_rounding_k10",
    ],
];

/// The L-E4 rows of one batch (`jobs`, `κ`, seed): the makespan by LP
/// bisection and rounding (and by the exact MIP for `jobs ≤ 5`), both list
/// schedulers' makespans, and the weighted completion-time proxy.
fn run_batch(args: &Args, jobs: usize, kappa: f64, seed: u64) -> Result<Vec<Row>, String> {
    let w = LocalityWorkload {
        jobs,
        machines: args.machines.unwrap_or(if args.full { 16 } else { 4 }),
        intra_factor: kappa,
        ..LocalityWorkload::default()
    };
    let inst = generate_batch(&mut ChaCha8Rng::seed_from_u64(seed), &w)
        .map_err(|e| format!("workload: {e}"))?;
    let names = &BATCH_SCHEDULERS[usize::from(kappa != 1.0)];
    let mut rows = Vec::new();
    let mut push = |scheduler: &'static str, metric: &'static str, value: f64| {
        rows.push(Row {
            point: jobs as f64,
            scheduler,
            seed,
            metric,
            value,
        });
    };
    let mut modes = vec![(names[0], BatchObjective::Makespan, InnerSolver::lp_round())];
    if jobs <= 5 {
        modes.push((names[1], BatchObjective::Makespan, InnerSolver::exact_mip()));
    }
    modes.push((
        names[4],
        BatchObjective::WeightedCompletion,
        InnerSolver::lp_round(),
    ));
    for (label, objective, inner) in modes {
        let mut params = LocalityBatchParams::default();
        params.objective = objective;
        params.inner = inner;
        params.intra_factor = Some(kappa);
        params.seed = Some(seed);
        let s = LocalityBatch::new(params.clone())
            .and_then(|b| b.solve(&inst, &mut ChaCha8Rng::seed_from_u64(seed)))
            .map_err(|e| format!("{label}, {jobs} jobs, seed {seed}: {e}"))?;
        verify(&inst, &s.schedule).map_err(|e| format!("{label}: schedule::verify: {e}"))?;
        let mut check = LocalityParams::default();
        check.intra_factor = Some(kappa);
        check.allow_local = params.allow_local;
        check.horizon = inst.horizon_slots();
        verify_locality(&inst, &check, &s.schedule)
            .map_err(|e| format!("{label}: verify_locality: {e}"))?;
        let r = &s.report;
        if objective == BatchObjective::Makespan {
            push(label, "c_max", f64::from(r.makespan));
            push(label, "t_lp", f64::from(r.t_lp));
            push(
                label,
                "c_max_over_t_lp",
                f64::from(r.makespan) / f64::from(r.t_lp.max(1)),
            );
            if let Some(x) = r.exact_makespan {
                push(label, "exact_optimum", f64::from(x));
            }
            if inner == InnerSolver::lp_round() {
                let list = [(names[2], r.local_makespan), (names[3], r.spread_makespan)];
                for (l, m) in list {
                    if let Some(m) = m {
                        push(l, "c_max", f64::from(m));
                        push(
                            l,
                            "c_max_over_t_lp",
                            f64::from(m) / f64::from(r.t_lp.max(1)),
                        );
                    }
                }
            }
        } else {
            push(label, "weighted_completion", r.weighted_completion);
            if let Some(b) = r.proxy_lp_bound.filter(|b| *b > 0.0) {
                push(label, "proxy_lp_bound", b);
                push(label, "weighted_over_lp_bound", r.weighted_completion / b);
            }
        }
        push(label, "seconds", r.seconds);
    }
    Ok(rows)
}

/// L-E4: offline batches `I ∈ {5, 10}` (`--full`: also 20) at `κ ∈ {1,
/// 10}`; writes `l-e4.csv`, `l-e4.svg` (mean `C_max` against `I`) and the
/// summary.
fn run_batches(args: &Args, seeds: u64, summary: &mut String) -> Result<(), String> {
    let t = Instant::now();
    let sizes: &[usize] = if args.full { &[5, 10, 20] } else { &[5, 10] };
    let mut rows = Vec::new();
    for &kappa in &[1.0, 10.0] {
        for &jobs in sizes {
            for seed in 0..seeds {
                rows.extend(run_batch(args, jobs, kappa, seed)?);
                eprintln!("  l-e4 I = {jobs}, κ = {kappa}, seed {seed} done");
            }
        }
    }
    write_csv(&args.out.join("l-e4.csv"), "l-e4", &rows)?;
    let _ = writeln!(
        summary,
        "## L-E4: offline batches ({:.1} s)\n\nAll jobs present in the first slot. C_max: \
         makespan (slots); T_LP: the LP bisection's lower bound; ΣwC: the weighted \
         completion proxy and its LP bound.\n\n| I | scheduler | C_max | C_max/T_LP | exact \
         optimum | ΣwC | ΣwC/LP bound | seconds |\n|---|---|---|---|---|---|---|---|",
        t.elapsed().as_secs_f64()
    );
    let metrics = [
        "c_max",
        "c_max_over_t_lp",
        "exact_optimum",
        "weighted_completion",
        "weighted_over_lp_bound",
        "seconds",
    ];
    let mut names: Vec<&'static str> = rows.iter().map(|r| r.scheduler).collect();
    names.sort_unstable();
    names.dedup();
    let mut points = Vec::new();
    for &jobs in sizes {
        let x = jobs as f64;
        for &s in &names {
            if !rows.iter().any(|r| r.point == x && r.scheduler == s) {
                continue; // the exact MIP runs only for I ≤ 5
            }
            let _ = write!(summary, "| {jobs} | {s} |");
            for m in metrics {
                let (mean, sd) = stat(&rows, x, s, m);
                if mean.is_finite() {
                    let _ = write!(summary, " {mean:.2} ± {sd:.2} |");
                } else {
                    summary.push_str(" – |");
                }
            }
            summary.push('\n');
            let (c, _) = stat(&rows, x, s, "c_max");
            if c.is_finite() {
                points.push((s, x, c));
            }
        }
    }
    summary.push('\n');
    let svg_path = args.out.join("l-e4.svg");
    let svg = lines_svg(
        &points,
        "L-E4: makespan of offline batches",
        "jobs I",
        "mean C_max (slots)",
    )
    .map_err(|e| format!("{}: {e}", svg_path.display()))?;
    std::fs::write(&svg_path, svg).map_err(|e| format!("{}: {e}", svg_path.display()))?;
    eprintln!("l-e4: {:.1} s", t.elapsed().as_secs_f64());
    Ok(())
}

/// Short CSV names of the L-E5 variants, in `quality::default_variants` order.
const VARIANT_IDS: [&str; 4] = ["default", "1_draw_lambda_1", "8_draws_lambda_1", "32_draws"];

/// L-E5: LP rounding against the exact MIP on random single-job programs;
/// writes `l-e5.csv` and `l-e5.svg` (the distribution of `cost/OPT_MIP`)
/// and appends the summary.
fn run_quality(args: &Args, summary: &mut String) -> Result<(), String> {
    let mut opts = quality::QualityOptions::default();
    opts.cases = args.cases.unwrap_or(200);
    let variants = quality::default_variants();
    let rep = quality::measure(&opts, &variants).map_err(|e| format!("l-e5: {e}"))?;
    eprint!("{rep}");
    if !rep.violations.is_empty() {
        return Err(format!("l-e5: {}", rep.violations.join("; ")));
    }
    let mut rows = Vec::new();
    let mut cdf: Vec<(&str, f64, f64)> = Vec::new();
    let _ = writeln!(
        summary,
        "## L-E5: rounding quality ({} cases, {:.1} s)\n\n{} cases drawn; the MIP proved {} \
         optimal ({} skipped at its limit), with a plan in {}.\n\n\
         | variant | cases with both plans | cost/LB mean / p95 / max | cost/OPT mean / p95 / max \
         | all draws failed | no plan where the MIP has one |\n|---|---|---|---|---|---|",
        rep.cases,
        rep.seconds,
        rep.cases,
        rep.proven(),
        rep.unproven,
        rep.mip_plans
    );
    for (i, (name, t)) in rep.variants.iter().enumerate() {
        let id = VARIANT_IDS.get(i).copied().unwrap_or("variant");
        for r in &t.ratios {
            for (metric, value) in [("cost_over_lb", r.vs_lb), ("cost_over_opt", r.vs_opt)] {
                rows.push(Row {
                    point: r.case as f64,
                    scheduler: id,
                    seed: r.case,
                    metric,
                    value,
                });
            }
        }
        for &k in &t.missed {
            rows.push(Row {
                point: k as f64,
                scheduler: id,
                seed: k,
                metric: "missed",
                value: 1.0,
            });
        }
        let mut v: Vec<f64> = t.ratios.iter().map(|r| r.vs_opt).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len() as f64;
        cdf.extend(
            v.iter()
                .enumerate()
                .map(|(j, &x)| (id, x, (j + 1) as f64 / n)),
        );
        let (lm, lp, lx) = t.vs_lb();
        let (om, op, ox) = t.vs_opt();
        let _ = writeln!(
            summary,
            "| {name} | {} | {lm:.4} / {lp:.4} / {lx:.4} | {om:.4} / {op:.4} / {ox:.4} | {} | {} ({:.1} %) |",
            t.ratios.len(),
            t.fallbacks,
            t.missed.len(),
            100.0 * t.missed.len() as f64 / f64::from(rep.mip_plans.max(1))
        );
    }
    summary.push('\n');
    write_csv(&args.out.join("l-e5.csv"), "l-e5", &rows)?;
    let svg_path = args.out.join("l-e5.svg");
    let title = "L-E5: distribution of cost/OPT_MIP per rounding variant";
    let svg = lines_svg(&cdf, title, "cost / OPT_MIP", "share of cases ≤ x")
        .map_err(|e| format!("{}: {e}", svg_path.display()))?;
    std::fs::write(&svg_path, svg).map_err(|e| format!("{}: {e}", svg_path.display()))
}

fn run(args: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let sweeps = sweeps(args);
    let seeds = args.seeds.unwrap_or(if args.full { 5 } else { 2 });
    let (jobs, machines) = sweeps
        .first()
        .and_then(|s| s.points.first())
        .map_or((0, 0), |p| (p.1.jobs, p.1.machines));
    let mut summary = String::from("# Locality experiments (examples/locality.rs)\n\n");
    let _ = writeln!(
        summary,
        "crate {} · {} machines · {} jobs per instance · {} seeds per point · full {}\n",
        env!("CARGO_PKG_VERSION"),
        machines,
        jobs,
        seeds,
        args.full
    );
    summary.push_str(
        "Mean ± sd over seeds. Utility: total; acceptance: admitted share; delay: mean \
         t̂ − a (slots); LOCAL: share of active job-slots run LOCAL; NIC: reserved share of \
         all NIC capacity; ms/job: decision time per job.\n\n",
    );
    for sweep in &sweeps {
        let t = Instant::now();
        let rows = run_sweep(sweep, seeds, args.exact)?;
        write_csv(&args.out.join(format!("{}.csv", sweep.id)), sweep.id, &rows)?;
        let mut points: Vec<(&str, f64, f64)> = Vec::new();
        let _ = writeln!(
            summary,
            "## {} ({:.1} s)\n\n| {} | scheduler | utility | acceptance | delay | LOCAL | NIC | ms/job |\n\
             |---|---|---|---|---|---|---|---|",
            sweep.title,
            t.elapsed().as_secs_f64(),
            sweep.x_desc
        );
        for (x, _) in &sweep.points {
            for &s in &SCHEDULERS {
                if !rows.iter().any(|r| r.point == *x && r.scheduler == s) {
                    continue; // locality_exact runs only with --exact
                }
                let _ = write!(summary, "| {x} | {s} |");
                for (i, metric) in METRICS.iter().enumerate() {
                    let (m, sd) = stat(&rows, *x, s, metric);
                    let digits = if i == 0 || i == 5 { 1 } else { 3 };
                    if m.is_finite() {
                        let _ = write!(summary, " {m:.digits$} ± {sd:.digits$} |");
                    } else {
                        summary.push_str(" – |");
                    }
                    if i == 0 {
                        points.push((s, *x, m));
                    }
                }
                summary.push('\n');
            }
        }
        summary.push('\n');
        let svg_path = args.out.join(format!("{}.svg", sweep.id));
        let svg = lines_svg(&points, sweep.title, sweep.x_desc, "mean total utility")
            .map_err(|e| format!("{}: {e}", svg_path.display()))?;
        std::fs::write(&svg_path, svg).map_err(|e| format!("{}: {e}", svg_path.display()))?;
        eprintln!("{}: {:.1} s", sweep.id, t.elapsed().as_secs_f64());
    }
    if args.experiments.contains(&4) {
        run_batches(args, seeds, &mut summary)?;
    }
    if args.experiments.contains(&5) {
        run_quality(args, &mut summary)?;
    }
    let path = args.out.join("summary.md");
    std::fs::write(&path, &summary).map_err(|e| format!("{}: {e}", path.display()))?;
    print!("{summary}");
    println!(
        "every schedule passed schedule::verify and verify_locality; wrote CSV, SVG and summary.md to {}",
        args.out.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    common::main(USAGE, parse_args, run)
}
