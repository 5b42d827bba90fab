//! The GADGET-style scheduler (the crate's own design after the abstract of
//! GADGET, Yu et al., IEEE INFOCOM 2022) against the online baselines of
//! ring-all-reduce jobs with reserved bandwidth, on the crate's synthetic
//! scenario at several loads and on a window of the Microsoft Philly trace.
//!
//! * **Synthetic** (`experiments::gadget::GadgetScenario::synthetic`): 16
//!   servers × 8 GPUs, `400 × load` jobs arriving over 10 h, a 12-h horizon
//!   of 60-s slots; loads 1, 2 and 3 by default.
//! * **Philly window** (`GadgetScenario::philly_window`): the first 1,000
//!   jobs of the Philly trace from 2017-11-01 (at most 32 GPUs and one day)
//!   on 32 servers × 8 GPUs, 300-s slots. The trace is read from `--philly
//!   PATH` or `$DMLSCHED_TRACES/philly.csv`; without either, the window is
//!   skipped with a note.
//!
//! Schedulers: `gadget` (the scheduler's offline run over the arrivals,
//! `Gadget::solve`; its schedule passes `schedule::verify` and its
//! certificate `check`), and in the simulator, with the same options
//! (reserved bandwidth, stop at convergence): `ff-bandwidth` (FIFO first
//! fit, strict), `ff-bandwidth-backfill`, `sjf-bco-online`,
//! `rar-online-random` (seeded by the run's seed) and `gadget-noprice` (the
//! scheduler's oracle with every price 0). Every run is measured by
//! `GadgetMetrics`.
//!
//! ```text
//! cargo run --release -p dmlsched-experiments --example gadget -- --out /tmp/gadget
//! cargo run --release -p dmlsched-experiments --example gadget -- --out /tmp/gadget --seeds 5 --loads 0.5,1,2,3,4
//! ```
//!
//! Run with `--help` for every option.

#[path = "../../examples/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use dmlsched::algorithms::gadget::GadgetNoPrice;
use dmlsched::algorithms::sjf_bco::RarOnlineRandom;
use dmlsched::registry::by_name;
use dmlsched::report::plot::lines_svg;
use dmlsched::schedule::verify;
use dmlsched::sim::{Policy, simulate};
use dmlsched_experiments::gadget::GadgetMetrics;
use dmlsched_experiments::gadget::{
    GadgetExperimentError, GadgetScenario, GadgetSetup, GadgetVariant, PHILLY_FILE, TRACES_ENV,
};

const USAGE: &str = "\
gadget: the GADGET-style scheduler against the online ring-all-reduce baselines

USAGE:
    gadget [--out DIR] [--loads LIST] [--seeds K] [--schedulers LIST] [--variant V]
           [--philly PATH | --no-philly] [--philly-seeds K]

OPTIONS:
    --out <DIR>             output folder (created if missing)   [default: <temp dir>/dmlsched-gadget]
    --loads <LIST>          loads of the synthetic scenario (400 × load jobs over 10 h)
                                                                 [default: 1,2,3]
    --seeds <K>             seeds 0..K per load                  [default: 5]
    --schedulers <LIST>     a subset of the schedulers below     [default: all]
    --variant <V>           base (e = 0, ω = 1), energy (e = 0.01 · median g1/(G·d^min) per
                            GPU-slot) or fairness (tenant-share weights, β = 1) [default: base]
    --philly <PATH>         the Pollux Philly CSV                [default: $DMLSCHED_TRACES/philly.csv]
    --no-philly             skip the Philly window
    --philly-seeds <K>      seeds 0..K of the Philly window      [default: 1]
    -h, --help              print this help

SCHEDULERS:
    gadget                  the GADGET-style scheduler (offline run over the arrivals)
    ff-bandwidth            FIFO first fit with reserved bandwidth, strict order
    ff-bandwidth-backfill   the same, later jobs start when they fit
    sjf-bco-online          smallest job first, FA-FFP / LBSGF placement, strict order
    rar-online-random       random order, random GPUs (seeded by the run's seed)
    gadget-noprice          the GADGET-style oracle with every price 0 (ablation)

OUTPUT (in --out):
    gadget.csv              long format: scenario, load, seed, scheduler, metric, value
    utility.svg             mean gross utility against the load, per scheduler
    jct.svg                 mean completion time (slots) of completed jobs against the load
    summary.md              means over the seeds per scenario, load and scheduler

METRICS (GadgetMetrics; δ = completion slot − arrival slot + 1):
    gross_utility           Σ over jobs completed by the horizon of ω·u(δ)
    net_utility             gross − e · GPU-slots used (unfinished jobs included)
    admitted, completed     jobs admitted (not rejected) and completed by the horizon
    mean_jct_slots, p95_jct_slots   δ over completed jobs
    gpu_hours               GPU time used, unfinished jobs included
    excess_avoided_gpu_hours        GPU time of iterations past convergence not trained
    gpu_utilisation, nic_utilisation  mean share of GPUs held, of NIC bandwidth reserved
    jain_jobs, jain_tenants Jain's index of d^min/δ per job, of granted/requested per tenant
    run_s                   wall-clock time of the run, seconds
";

/// Schedulers in output order.
const SCHEDULERS: [&str; 6] = [
    "gadget",
    "ff-bandwidth",
    "ff-bandwidth-backfill",
    "sjf-bco-online",
    "rar-online-random",
    "gadget-noprice",
];

/// Metrics in output order.
const METRICS: [&str; 13] = [
    "gross_utility",
    "net_utility",
    "admitted",
    "completed",
    "mean_jct_slots",
    "p95_jct_slots",
    "gpu_hours",
    "excess_avoided_gpu_hours",
    "gpu_utilisation",
    "nic_utilisation",
    "jain_jobs",
    "jain_tenants",
    "run_s",
];

struct Args {
    out: PathBuf,
    loads: Vec<f64>,
    seeds: u64,
    schedulers: Vec<&'static str>,
    variant: (&'static str, GadgetVariant),
    philly: Philly,
    philly_seeds: u64,
}

enum Philly {
    /// `--philly PATH`: an error when missing.
    Path(PathBuf),
    /// From `$DMLSCHED_TRACES`, skipped with a note when unset.
    Env,
    Skip,
}

fn parse_schedulers(v: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for s in v.split(',') {
        let Some(name) = SCHEDULERS.iter().find(|n| **n == s.trim()) else {
            return Err(format!(
                "--schedulers: unknown '{s}' (one of {})",
                SCHEDULERS.join(", ")
            ));
        };
        if !out.contains(name) {
            out.push(*name);
        }
    }
    Ok(out)
}

fn parse_variant(v: &str) -> Result<(&'static str, GadgetVariant), String> {
    match v {
        "base" => Ok(("base", GadgetVariant::BASE)),
        "energy" => Ok(("energy", GadgetVariant::ENERGY)),
        "fairness" => Ok(("fairness", GadgetVariant::FAIRNESS)),
        other => Err(format!(
            "--variant: expected base, energy or fairness, got '{other}'"
        )),
    }
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        out: std::env::temp_dir().join("dmlsched-gadget"),
        loads: vec![1.0, 2.0, 3.0],
        seeds: 5,
        schedulers: SCHEDULERS.to_vec(),
        variant: ("base", GadgetVariant::BASE),
        philly: Philly::Env,
        philly_seeds: 1,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--out" => a.out = PathBuf::from(value()?),
            "--loads" => a.loads = common::parse_loads("--loads", &value()?)?,
            "--seeds" => a.seeds = common::parse_count("--seeds", &value()?, u64::MAX)?,
            "--philly-seeds" => {
                a.philly_seeds = common::parse_count("--philly-seeds", &value()?, u64::MAX)?
            }
            "--schedulers" => a.schedulers = parse_schedulers(&value()?)?,
            "--variant" => a.variant = parse_variant(&value()?)?,
            "--philly" => a.philly = Philly::Path(PathBuf::from(value()?)),
            "--no-philly" => a.philly = Philly::Skip,
            other => return Err(format!("unknown argument '{other}' (see --help)")),
        }
    }
    Ok(Some(a))
}

/// One run's measurements.
struct Row {
    scenario: &'static str,
    load: Option<f64>,
    seed: u64,
    scheduler: &'static str,
    values: [f64; METRICS.len()],
}

fn values(m: &GadgetMetrics, run_s: f64) -> [f64; METRICS.len()] {
    let jct = m.jct_slots.as_ref();
    [
        m.gross_utility,
        m.net_utility,
        m.admitted as f64,
        m.completed as f64,
        jct.map_or(f64::NAN, |j| j.mean),
        jct.map_or(f64::NAN, |j| j.p95),
        m.gpu_hours,
        m.excessive_training_avoided_gpu_hours,
        m.gpu_utilisation,
        m.nic_utilisation,
        m.jain_jobs.unwrap_or(f64::NAN),
        m.jain_tenants.unwrap_or(f64::NAN),
        run_s,
    ]
}

/// The simulator policy of a baseline, with the setup's parameters where
/// it takes them.
fn baseline(name: &str, setup: &GadgetSetup, seed: u64) -> Result<Box<dyn Policy>, String> {
    Ok(match name {
        "gadget-noprice" => Box::new(GadgetNoPrice::new(setup.params.clone())),
        "rar-online-random" => Box::new(RarOnlineRandom::new(seed)),
        other => by_name(other).ok_or_else(|| format!("no baseline named {other}"))?,
    })
}

/// Runs `scheduler` on `setup` and measures it.
fn measure(scheduler: &str, setup: &GadgetSetup, seed: u64) -> Result<GadgetMetrics, String> {
    let inst = &setup.instance;
    if scheduler == "gadget" {
        let solved = setup.solve().map_err(|e| format!("gadget: {e}"))?;
        verify(inst, &solved.schedule).map_err(|e| format!("gadget schedule: {e}"))?;
        solved
            .certificate
            .check(1e-9)
            .map_err(|e| format!("gadget certificate: {e}"))?;
        return Ok(GadgetMetrics::from_solved(inst, &solved));
    }
    let options = setup.params.sim_options();
    let mut policy = baseline(scheduler, setup, seed)?;
    let result =
        simulate(inst, policy.as_mut(), &options).map_err(|e| format!("{scheduler}: {e}"))?;
    GadgetMetrics::from_sim(inst, &result, &options, &setup.params)
        .map_err(|e| format!("{scheduler} metrics: {e}"))
}

/// Every scheduler of `args` on one generated set-up.
fn run_setup(
    args: &Args,
    setup: &GadgetSetup,
    scenario: &'static str,
    load: Option<f64>,
    seed: u64,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    for &scheduler in &args.schedulers {
        let start = Instant::now();
        let m = measure(scheduler, setup, seed)?;
        let run_s = start.elapsed().as_secs_f64();
        eprintln!(
            "{scenario} load {} seed {seed} {scheduler:<22} utility {:>9.1}  admitted {:>4}  completed {:>4}  ({run_s:.2} s)",
            load.map_or("-".into(), |l| format!("{l}")),
            m.gross_utility,
            m.admitted,
            m.completed
        );
        rows.push(Row {
            scenario,
            load,
            seed,
            scheduler,
            values: values(&m, run_s),
        });
    }
    Ok(())
}

fn run_synthetic(args: &Args, rows: &mut Vec<Row>) -> Result<(), String> {
    for &load in &args.loads {
        for seed in 0..args.seeds {
            let setup = GadgetScenario::synthetic(load)
                .generate(seed, args.variant.1)
                .map_err(|e| format!("synthetic load {load} seed {seed}: {e}"))?;
            run_setup(args, &setup, "synthetic", Some(load), seed, rows)?;
        }
    }
    Ok(())
}

/// The Philly window; `Ok(Some(note))` when it is skipped.
fn run_philly(args: &Args, rows: &mut Vec<Row>) -> Result<Option<String>, String> {
    let path = match &args.philly {
        Philly::Skip => return Ok(Some("Philly window skipped (--no-philly).".into())),
        Philly::Path(p) => Some(p.clone()),
        Philly::Env if std::env::var_os(TRACES_ENV).is_none() => {
            return Ok(Some(format!(
                "Philly window skipped: pass --philly PATH or set {TRACES_ENV} to the folder holding {PHILLY_FILE}."
            )));
        }
        Philly::Env => None,
    };
    let scenario = GadgetScenario::philly_window(path);
    for seed in 0..args.philly_seeds {
        let setup = match scenario.generate(seed, args.variant.1) {
            Ok(s) => s,
            Err(e @ GadgetExperimentError::TraceMissing { .. })
                if matches!(args.philly, Philly::Env) =>
            {
                return Ok(Some(format!("Philly window skipped: {e}.")));
            }
            Err(e) => return Err(format!("Philly window seed {seed}: {e}")),
        };
        run_setup(args, &setup, "philly", None, seed, rows)?;
    }
    Ok(None)
}

fn write_csv(rows: &[Row], path: &Path) -> Result<(), String> {
    let mut csv = String::from("scenario,load,seed,scheduler,metric,value\n");
    for r in rows {
        let load = r.load.map_or(String::new(), |l| format!("{l}"));
        for (metric, v) in METRICS.iter().zip(r.values) {
            let value = if v.is_finite() {
                format!("{v}")
            } else {
                String::new()
            };
            let _ = writeln!(
                csv,
                "{},{load},{},{},{metric},{value}",
                r.scenario, r.seed, r.scheduler
            );
        }
    }
    std::fs::write(path, csv).map_err(|e| format!("{}: {e}", path.display()))
}

/// Mean of metric `k` over the rows of (scenario, load, scheduler), ignoring
/// missing values; `None` when no row has a value.
fn mean(rows: &[Row], scenario: &str, load: Option<f64>, scheduler: &str, k: usize) -> Option<f64> {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.scenario == scenario && r.load == load && r.scheduler == scheduler)
        .map(|r| r.values[k])
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn write_svg(
    args: &Args,
    rows: &[Row],
    metric: usize,
    file: &str,
    title: &str,
    y: &str,
) -> Result<(), String> {
    let mut points = Vec::new();
    for &s in &args.schedulers {
        for &load in &args.loads {
            if let Some(v) = mean(rows, "synthetic", Some(load), s, metric) {
                points.push((s, load, v));
            }
        }
    }
    let svg =
        lines_svg(&points, title, "load (× 400 jobs over 10 h)", y).map_err(|e| e.to_string())?;
    let path = args.out.join(file);
    std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))
}

/// Columns of the summary tables: (metric index, header, decimals).
const SUMMARY: [(usize, &str, usize); 8] = [
    (0, "gross utility", 1),
    (1, "net utility", 1),
    (2, "admitted", 1),
    (3, "completed", 1),
    (4, "mean JCT (slots)", 1),
    (6, "GPU-hours", 1),
    (10, "Jain (jobs)", 3),
    (12, "run (s)", 2),
];

fn summary_table(args: &Args, rows: &[Row], scenario: &str, load: Option<f64>, out: &mut String) {
    let _ = write!(out, "| scheduler |");
    for (_, h, _) in SUMMARY {
        let _ = write!(out, " {h} |");
    }
    let _ = writeln!(out, "\n|---|{}", "---|".repeat(SUMMARY.len()));
    for &s in &args.schedulers {
        let _ = write!(out, "| {s} |");
        for (k, _, d) in SUMMARY {
            match mean(rows, scenario, load, s, k) {
                Some(v) => {
                    let _ = write!(out, " {v:.d$} |");
                }
                None => {
                    let _ = write!(out, " – |");
                }
            }
        }
        out.push('\n');
    }
    out.push('\n');
}

fn summary(args: &Args, rows: &[Row], note: Option<&str>) -> String {
    let mut out = format!(
        "# GADGET-style scheduler against the online baselines (variant {})\n\n",
        args.variant.0
    );
    if args.variant.0 == "fairness" {
        out.push_str(
            "Under the fairness variant the GADGET-style scheduler's utilities are weighted by its \
             tenant-share weights ω ≤ 1 (`GadgetMetrics::from_solved`), the simulator's are not: \
             compare completions, JCT and Jain's indices across schedulers, not utilities.\n\n",
        );
    }
    for &load in &args.loads {
        let _ = writeln!(
            out,
            "## Synthetic, load {load} ({} jobs), means over seeds 0..{}\n",
            (400.0 * load).round(),
            args.seeds
        );
        summary_table(args, rows, "synthetic", Some(load), &mut out);
    }
    match note {
        Some(n) => {
            let _ = writeln!(out, "{n}\n");
        }
        None => {
            let _ = writeln!(
                out,
                "## Philly window (1,000 jobs from 2017-11-01, 32 × 8 GPUs), means over seeds 0..{}\n",
                args.philly_seeds
            );
            summary_table(args, rows, "philly", None, &mut out);
        }
    }
    out
}

fn run(args: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut rows = Vec::new();
    run_synthetic(args, &mut rows)?;
    let note = run_philly(args, &mut rows)?;
    write_csv(&rows, &args.out.join("gadget.csv"))?;
    write_svg(
        args,
        &rows,
        0,
        "utility.svg",
        "Gross utility against the load (synthetic)",
        "mean gross utility",
    )?;
    write_svg(
        args,
        &rows,
        4,
        "jct.svg",
        "Completion time against the load (synthetic)",
        "mean JCT of completed jobs (slots)",
    )?;
    let text = summary(args, &rows, note.as_deref());
    let path = args.out.join("summary.md");
    std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    print!("{text}");
    println!(
        "the GADGET-style schedules passed schedule::verify and their certificates check; wrote gadget.csv, utility.svg, jct.svg and summary.md to {}",
        args.out.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    common::main(USAGE, parse_args, run)
}
