//! Replays a window of a real cluster trace under baseline policies and
//! writes per-job and per-run CSVs and SVG plots.
//!
//! ```text
//! cargo run --release --example trace_replay -- "$DMLSCHED_TRACES/philly.csv" --out /tmp/replay \
//!     --start 2017-11-01 --jobs 500 --gpus 64 --policies fifo,sjf,drf,tetris
//! ```
//!
//! `DMLSCHED_TRACES` names the folder holding the public traces (the
//! README's "Traces" section says where each comes from). A Gavel trace
//! counts steps, not seconds: its rows get durations from Gavel's measured
//! throughputs (`--gavel-throughputs`, by default
//! `$DMLSCHED_TRACES/gavel-simulation_throughputs.json`, on `--gavel-gpu`,
//! v100 by default); rows without a measured rate are named and skipped.
//!
//! ```text
//! cargo run --release --example trace_replay -- "$DMLSCHED_TRACES/gavel-msr-seed0-6214e9.trace" \
//!     --out /tmp/gavel --jobs 2000 --policies fifo,tiresias --placement best-fit
//! ```
//!
//! Run with `--help` for every option.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use dmlsched::baselines::{self, BaselineParams, PlacementRule, Tiresias};
use dmlsched::sim::plot::{jct_cdf_svg, jct_vs_load_svg, utilization_svg};
use dmlsched::sim::report::{RunMeta, write_jobs_csv, write_summary_csv, write_utilization_csv};
use dmlsched::sim::{RunSummary, SimOptions, SimResult, simulate};
use dmlsched::trace::{
    Arch, RecipeOptions, ReplayOptions, TraceFormat, TraceJob, Window, WindowStart, guess_format,
    load, replay_instance, scale_arrivals, select,
};

const USAGE: &str = "\
trace_replay: replay a window of a cluster trace under baseline policies

USAGE:
    trace_replay <TRACE> --out <DIR> [OPTIONS]

ARGS:
    <TRACE>                   trace file (Philly CSV, ITP CSV, Gavel TSV, Tiresias CSV, Alibaba openb pods)

OPTIONS:
    --out <DIR>               output folder (created if missing)              [required]
    --format <F>              philly|itp|gavel|tiresias|alibaba               [default: guessed from the header]
    --arch <A>                rar|ps: job architecture the recipe builds      [default: rar]
    --start <WHEN>            YYYY-MM-DD or seconds on the trace's clock      [default: first arrival]
    --jobs <N>                jobs in the window                              [default: 500]
    --gpus <N>                GPUs in the cluster                             [default: 64]
    --gpus-per-machine <N>    GPUs per machine (must divide --gpus)           [default: 8]
    --policies <P,P,...>      baselines to run                                [default: every cheap policy for the arch]
    --load-scales <S,S,...>   arrival-rate multipliers: 2 halves every inter-arrival time [default: 1]
    --seed <N>                seed of the recipe's random draws               [default: 0]
    --placement <R>           best-fit|first-fit|consolidate|round-robin: how every baseline
                              that places spreads a job over machines         [default: best-fit]
    --tiresias-thresholds <T,T,...>
                              Tiresias queue thresholds, GPU-seconds, increasing
                                                                              [default: 3250,7200]
    --tiresias-starve-factor <F>
                              Tiresias starvation guard (off unless given)
    --gavel-throughputs <FILE>
                              Gavel's measured throughputs (JSON), to turn a Gavel trace's
                              steps into durations [default: $DMLSCHED_TRACES/gavel-simulation_throughputs.json]
    --gavel-gpu <KIND>        GPU kind of the Gavel rates (k80, p100, v100)   [default: v100]
    -h, --help                print this help

OUTPUT (in --out):
    summary.csv               one row per (policy, load scale): JCT mean/p50/p95/p99, makespan, utilization, ...
    jobs-<policy>-x<scale>.csv per-job arrival, start, finish, JCT, queueing, GPU-seconds, preemptions
    utilization.csv           GPU use over time at the first load scale
    jct_cdf.svg               JCT CDF per policy (first load scale)
    jct_vs_load.svg           average JCT against load scale, one line per policy
    utilization.svg           GPU utilization over time per policy (first load scale)
";

struct Args {
    trace: PathBuf,
    out: PathBuf,
    format: Option<TraceFormat>,
    arch: Arch,
    start: Option<WindowStart>,
    jobs: usize,
    gpus: u32,
    gpus_per_machine: u32,
    policies: Option<Vec<String>>,
    load_scales: Vec<f64>,
    seed: u64,
    baselines: BaselineParams,
    gavel_throughputs: Option<PathBuf>,
    gavel_gpu: String,
}

fn parse_list<T: std::str::FromStr>(flag: &str, v: &str) -> Result<Vec<T>, String> {
    v.split(',')
        .map(|s| {
            s.trim()
                .parse::<T>()
                .map_err(|_| format!("{flag}: cannot parse '{s}'"))
        })
        .collect()
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut trace = None;
    let mut a = Args {
        trace: PathBuf::new(),
        out: PathBuf::new(),
        format: None,
        arch: Arch::RingAllReduce,
        start: None,
        jobs: 500,
        gpus: 64,
        gpus_per_machine: 8,
        policies: None,
        load_scales: vec![1.0],
        seed: 0,
        baselines: BaselineParams::default(),
        gavel_throughputs: None,
        gavel_gpu: "v100".into(),
    };
    let mut out = None;
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--format" => {
                let v = value("--format")?;
                a.format = Some(v.parse().map_err(|e| format!("--format: {e}"))?);
            }
            "--arch" => {
                a.arch = match value("--arch")?.as_str() {
                    "rar" => Arch::RingAllReduce,
                    "ps" => Arch::ParameterServer,
                    other => return Err(format!("--arch: expected rar or ps, got '{other}'")),
                }
            }
            "--start" => {
                let v = value("--start")?;
                a.start = Some(match v.parse::<f64>() {
                    Ok(s) => WindowStart::Seconds(s),
                    Err(_) => WindowStart::Date(v),
                });
            }
            "--jobs" => {
                a.jobs = parse_list("--jobs", &value("--jobs")?)?
                    .first()
                    .copied()
                    .unwrap_or(0)
            }
            "--gpus" => {
                a.gpus = parse_list("--gpus", &value("--gpus")?)?
                    .first()
                    .copied()
                    .unwrap_or(0)
            }
            "--gpus-per-machine" => {
                a.gpus_per_machine =
                    parse_list("--gpus-per-machine", &value("--gpus-per-machine")?)?
                        .first()
                        .copied()
                        .unwrap_or(0)
            }
            "--policies" => a.policies = Some(parse_list("--policies", &value("--policies")?)?),
            "--load-scales" => {
                a.load_scales = parse_list("--load-scales", &value("--load-scales")?)?
            }
            "--seed" => {
                a.seed = parse_list("--seed", &value("--seed")?)?
                    .first()
                    .copied()
                    .unwrap_or(0)
            }
            "--placement" => {
                a.baselines.placement = value("--placement")?
                    .parse::<PlacementRule>()
                    .map_err(|e| format!("--placement: {e}"))?
            }
            "--tiresias-thresholds" => {
                a.baselines.tiresias_thresholds =
                    parse_list("--tiresias-thresholds", &value("--tiresias-thresholds")?)?
            }
            "--tiresias-starve-factor" => {
                a.baselines.tiresias_starve_factor = parse_list(
                    "--tiresias-starve-factor",
                    &value("--tiresias-starve-factor")?,
                )?
                .first()
                .copied()
            }
            "--gavel-throughputs" => {
                a.gavel_throughputs = Some(PathBuf::from(value("--gavel-throughputs")?))
            }
            "--gavel-gpu" => a.gavel_gpu = value("--gavel-gpu")?,
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => {
                if trace.replace(PathBuf::from(s)).is_some() {
                    return Err("more than one trace file given".into());
                }
            }
        }
    }
    a.trace = trace.ok_or("missing <TRACE>")?;
    a.out = out.ok_or("missing --out <DIR>")?;
    if a.jobs == 0 {
        return Err("--jobs must be at least 1".into());
    }
    if a.load_scales.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
        return Err("--load-scales must be positive numbers".into());
    }
    let mut tiresias = Tiresias::default();
    tiresias
        .thresholds
        .clone_from(&a.baselines.tiresias_thresholds);
    tiresias.starve_factor = a.baselines.tiresias_starve_factor;
    tiresias
        .validate()
        .map_err(|e| format!("--tiresias-thresholds / --tiresias-starve-factor: {e}"))?;
    Ok(Some(a))
}

/// A one-line progress bar on stderr, shown once the work takes more than
/// two seconds.
struct Progress {
    started: Instant,
    total: usize,
    done: usize,
    shown: bool,
}

impl Progress {
    fn tick(&mut self, label: &str) {
        let elapsed = self.started.elapsed().as_secs_f64();
        if elapsed < 2.0 && !self.shown {
            return;
        }
        self.shown = true;
        let width = 30;
        let filled = width * self.done / self.total.max(1);
        eprint!(
            "\r[{}{}] {}/{} {:<28} {:>7.1} s",
            "#".repeat(filled),
            "-".repeat(width - filled),
            self.done,
            self.total,
            label,
            elapsed
        );
        if self.done == self.total {
            eprintln!();
        }
        let _ = std::io::stderr().flush();
    }
}

/// The trace's rows; a Gavel trace's steps become durations with Gavel's
/// measured throughputs (rows without a rate are named on stderr).
fn load_rows(a: &Args) -> dmlsched::Result<Vec<TraceJob>> {
    let format = match a.format {
        Some(f) => f,
        None => guess_format(&a.trace)?,
    };
    if format != TraceFormat::Gavel {
        return Ok(load(&a.trace, Some(format))?);
    }
    load_gavel(a)
}

#[cfg(feature = "serde")]
fn load_gavel(a: &Args) -> dmlsched::Result<Vec<TraceJob>> {
    use dmlsched::trace::{GavelConversion, GavelThroughputs, load_gavel_trace_with_rates};
    let path = GavelThroughputs::locate(a.gavel_throughputs.as_deref())?;
    let rates = GavelThroughputs::load(&path)?;
    let conv = GavelConversion {
        gpu: a.gavel_gpu.clone(),
        gpus_per_machine: a.gpus_per_machine,
    };
    let report = load_gavel_trace_with_rates(&a.trace, &rates, &conv)?;
    if !report.skipped.is_empty() {
        eprintln!(
            "warning: {} Gavel rows have no measured {} rate in {} and are skipped:",
            report.skipped.len(),
            conv.gpu,
            path.display()
        );
        for s in &report.skipped {
            eprintln!("  {s}");
        }
    }
    Ok(report.jobs)
}

#[cfg(not(feature = "serde"))]
fn load_gavel(_: &Args) -> dmlsched::Result<Vec<TraceJob>> {
    Err(dmlsched::trace::TraceError::InvalidArgument {
        name: "trace".into(),
        reason: "a Gavel trace needs Gavel's throughput table (JSON): build with the serde feature"
            .into(),
    }
    .into())
}

fn run(a: &Args) -> dmlsched::Result<()> {
    let rows = load_rows(a)?;
    let window = Window {
        start: a.start.clone(),
        jobs: Some(a.jobs),
        ..Window::default()
    };
    let rows = select(&rows, &window)?;
    let policies: Vec<String> = match &a.policies {
        Some(p) => p.clone(),
        None => baselines::cheap_for(a.arch == Arch::RingAllReduce)
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    for p in &policies {
        if baselines::by_name_with(p, &a.baselines).is_none() {
            return Err(dmlsched::trace::TraceError::InvalidArgument {
                name: "--policies".into(),
                reason: format!(
                    "unknown policy '{p}' (known: {})",
                    baselines::NAMES
                        .iter()
                        .chain(baselines::RING_NAMES)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
            .into());
        }
    }
    std::fs::create_dir_all(&a.out).map_err(dmlsched::sim::report::ReportError::Io)?;
    let recipe = RecipeOptions {
        seed: a.seed,
        ..match a.arch {
            Arch::RingAllReduce => RecipeOptions::rar(),
            Arch::ParameterServer => RecipeOptions::ps(),
        }
    };
    let cluster_name = format!("{} GPUs, {} per machine", a.gpus, a.gpus_per_machine);
    let workload = format!(
        "{} ({} jobs{})",
        a.trace
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or("trace"),
        rows.len(),
        a.start
            .as_ref()
            .map(|s| match s {
                WindowStart::Date(d) => format!(" from {d}"),
                WindowStart::Seconds(x) => format!(" from {x} s"),
            })
            .unwrap_or_default()
    );
    println!(
        "{workload}, {cluster_name}, {} recipe, seed {}, {} placement, Tiresias thresholds {:?} GPU-s",
        if a.arch == Arch::RingAllReduce {
            "ring-all-reduce"
        } else {
            "parameter-server"
        },
        a.seed,
        a.baselines.placement,
        a.baselines.tiresias_thresholds
    );

    let mut progress = Progress {
        started: Instant::now(),
        total: policies.len() * a.load_scales.len(),
        done: 0,
        shown: false,
    };
    let mut summaries = Vec::new();
    let mut load_points: Vec<(String, f64, f64)> = Vec::new();
    let mut first_scale: Vec<(String, SimResult)> = Vec::new();
    for (k, &scale) in a.load_scales.iter().enumerate() {
        let mut scaled = rows.clone();
        scale_arrivals(&mut scaled, 1.0 / scale)?;
        let (inst, out) = replay_instance(
            &scaled,
            &ReplayOptions {
                gpus: a.gpus,
                gpus_per_machine: a.gpus_per_machine,
                recipe,
            },
        )?;
        if k == 0 && !out.capped.is_empty() {
            println!(
                "{} jobs asked for more than {} GPUs and were capped",
                out.capped.len(),
                a.gpus
            );
        }
        for name in &policies {
            progress.tick(&format!("{name} x{scale}"));
            let mut policy = baselines::by_name_with(name, &a.baselines).ok_or_else(|| {
                dmlsched::trace::TraceError::InvalidArgument {
                    name: "--policies".into(),
                    reason: format!("unknown policy '{name}'"),
                }
            })?;
            let result = simulate(&inst, &mut policy, &SimOptions::default())?;
            let meta = RunMeta {
                policy: name.clone(),
                seed: a.seed,
                workload: workload.clone(),
                cluster: cluster_name.clone(),
                load_scale: scale,
            };
            let path = a.out.join(format!("jobs-{name}-x{scale}.csv"));
            let file =
                std::fs::File::create(&path).map_err(dmlsched::sim::report::ReportError::Io)?;
            write_jobs_csv(file, &meta, &result)?;
            let s = result.summary();
            load_points.push((name.clone(), scale, s.avg_jct_s));
            summaries.push((meta, s));
            if k == 0 {
                first_scale.push((name.clone(), result));
            }
            progress.done += 1;
            progress.tick(&format!("{name} x{scale}"));
        }
    }

    write_outputs(a, &summaries, &load_points, &first_scale)
}

/// Writes the summary and utilization tables and the plots, and prints the
/// table of results.
fn write_outputs(
    a: &Args,
    summaries: &[(RunMeta, RunSummary)],
    load_points: &[(String, f64, f64)],
    first_scale: &[(String, SimResult)],
) -> dmlsched::Result<()> {
    let file = std::fs::File::create(a.out.join("summary.csv"))
        .map_err(dmlsched::sim::report::ReportError::Io)?;
    write_summary_csv(file, summaries)?;
    let runs: Vec<(&str, &SimResult)> = first_scale.iter().map(|(n, r)| (n.as_str(), r)).collect();
    // One utilization table for all policies: every run's rows under one header.
    let mut table = Vec::new();
    for (k, ((_, result), (meta, _))) in first_scale.iter().zip(summaries).enumerate() {
        let mut buf = Vec::new();
        write_utilization_csv(&mut buf, meta, result)?;
        let skip = if k == 0 {
            0
        } else {
            buf.iter()
                .position(|&b| b == b'\n')
                .map_or(buf.len(), |i| i + 1)
        };
        table.extend_from_slice(&buf[skip..]);
    }
    std::fs::write(a.out.join("utilization.csv"), table)
        .map_err(dmlsched::sim::report::ReportError::Io)?;
    let scale0 = a.load_scales[0];
    let svgs = [
        (
            "jct_cdf.svg",
            jct_cdf_svg(&runs, &format!("JCT CDF, load x{scale0}"))?,
        ),
        (
            "utilization.svg",
            utilization_svg(&runs, &format!("GPU utilization, load x{scale0}"))?,
        ),
        (
            "jct_vs_load.svg",
            jct_vs_load_svg(
                &load_points
                    .iter()
                    .map(|(p, s, j)| (p.as_str(), *s, *j))
                    .collect::<Vec<_>>(),
                "Average JCT against load",
            )?,
        ),
    ];
    for (name, svg) in svgs {
        std::fs::write(a.out.join(name), svg).map_err(dmlsched::sim::report::ReportError::Io)?;
    }

    println!(
        "{:<16} {:>6} {:>9} {:>12} {:>12} {:>12} {:>12} {:>7} {:>8}",
        "policy",
        "load",
        "completed",
        "avg JCT s",
        "p50 JCT s",
        "p99 JCT s",
        "makespan s",
        "util",
        "preempt"
    );
    for (m, s) in summaries {
        println!(
            "{:<16} {:>6} {:>9} {:>12.0} {:>12.0} {:>12.0} {:>12.0} {:>7.3} {:>8}",
            m.policy,
            m.load_scale,
            s.completed,
            s.avg_jct_s,
            s.p50_jct_s,
            s.p99_jct_s,
            s.makespan_s,
            s.gpu_utilization,
            s.preemptions
        );
    }
    println!("wrote CSVs and SVGs to {}", a.out.display());
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
