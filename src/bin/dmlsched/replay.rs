//! `dmlsched replay`: a window of a real cluster trace under baselines and
//! algorithm policies.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use dmlsched::baselines::{self, BaselineParams};
use dmlsched::model::Instance;
use dmlsched::sim::plot::{jct_cdf_svg, jct_vs_load_svg, utilization_svg};
use dmlsched::sim::report::{
    ReportError, RunMeta, write_jobs_csv, write_summary_csv, write_utilization_csv_runs,
};
use dmlsched::sim::{RunSummary, SimOptions, SimResult, simulate};
use dmlsched::trace::{
    Arch, GavelConversion, GavelThroughputs, RecipeOptions, ReplayHorizon, ReplayOptions,
    SkipReason, TraceFormat, TraceJob, UtilityRecipe, Window, WindowStart, guess_format, load,
    load_gavel_trace_with_rates, replay_instance, scale_arrivals, select,
};

use crate::CliError;
use crate::policies::{self, BaselineFlags};
use crate::summary;

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The trace file: Philly CSV, ITP CSV, Gavel TSV, Tiresias CSV or
    /// Alibaba openb pods (the README's "Traces" section says where each
    /// comes from).
    trace: PathBuf,
    /// The trace's format (philly, itp, gavel, tiresias, alibaba); guessed
    /// from the header when not given.
    #[arg(long, value_name = "FORMAT")]
    format: Option<TraceFormat>,
    /// The job architecture the recipe builds: ring-all-reduce or parameter
    /// server [default: ps when oasis, locality or smd is among the
    /// policies, else rar].
    #[arg(long, value_enum)]
    arch: Option<ArchArg>,
    /// Start of the window: a date (YYYY-MM-DD) or seconds on the trace's
    /// clock [default: the first arrival].
    #[arg(long, value_name = "WHEN")]
    start: Option<String>,
    /// Jobs in the window.
    #[arg(long, default_value_t = 500, value_name = "N")]
    jobs: usize,
    /// GPUs in the cluster.
    #[arg(long, default_value_t = 64, value_name = "N")]
    gpus: u32,
    /// GPUs per machine (must divide --gpus).
    #[arg(long, default_value_t = 8, value_name = "N")]
    gpus_per_machine: u32,
    /// Parameter-server-only machines added to the GPU machines (which then
    /// host workers only), as OASiS's cluster model needs [default: as many
    /// as GPU machines when oasis is among the policies, else 0].
    #[arg(long, value_name = "N")]
    ps_servers: Option<u32>,
    /// The horizon, slots: `after-last-arrival` (one slot past the last
    /// arrival's; simulations run until every job is done), `cover:M` (long
    /// enough for every job to finish M times its trace duration after its
    /// arrival) or a number of slots [default: cover:3 when oasis or
    /// locality is among the policies, else after-last-arrival].
    #[arg(long, value_name = "H")]
    horizon: Option<String>,
    /// The jobs' utilities: `trace` (1 per completion, or 1 by the trace's
    /// deadline) or `sigmoid[:M[:S]]` (1/(1 + exp(S/g3·(δ − g3))) with
    /// g3 = M × the job's trace duration in slots; M = 2, S = 4 by default;
    /// M must be at least S/(S + 20))
    /// [default: sigmoid when oasis or locality is among the policies, else
    /// trace].
    #[arg(long, value_name = "U")]
    utility: Option<String>,
    /// Comma-separated policies: any baseline and the algorithms oasis,
    /// locality and gadget (smd needs per-layer job profiles, which the
    /// replay recipes do not build: run it on a layered instance with
    /// `simulate`) [default: every cheap baseline for the architecture].
    #[arg(long, value_delimiter = ',', value_name = "P,P,...")]
    policies: Vec<String>,
    /// Parameters of an algorithm policy, `NAME=PARAMS.json` (repeatable;
    /// the JSON as for `solve --params`).
    #[arg(long = "params", value_name = "NAME=PARAMS.json")]
    params: Vec<String>,
    /// Arrival-rate multipliers: 2 halves every inter-arrival time.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1",
        value_name = "S,S,..."
    )]
    load_scales: Vec<f64>,
    /// Seeds of the recipe's random draws and of randomised policies; one
    /// run per seed.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0",
        value_name = "N,N,..."
    )]
    seeds: Vec<u64>,
    #[command(flatten)]
    baselines: BaselineFlags,
    /// Gavel's measured throughputs (JSON), to turn a Gavel trace's steps
    /// into durations [default: $DMLSCHED_TRACES/gavel-simulation_throughputs.json].
    #[arg(long, value_name = "FILE")]
    gavel_throughputs: Option<PathBuf>,
    /// GPU kind of the Gavel rates (k80, p100, v100).
    #[arg(long, default_value = "v100", value_name = "KIND")]
    gavel_gpu: String,
    /// Folder for summary.csv, jobs-<policy>-x<scale>-seed<seed>.csv,
    /// utilization.csv, jct_cdf.svg, jct_vs_load.svg and utilization.svg
    /// (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// `--arch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ArchArg {
    /// Ring-all-reduce jobs.
    Rar,
    /// Parameter-server jobs.
    Ps,
}

/// The replay's set-up once the defaults are resolved.
struct Setup {
    arch: Arch,
    ps_servers: u32,
    horizon: ReplayHorizon,
    utility: UtilityRecipe,
    policies: Vec<String>,
    baselines: BaselineParams,
}

/// Parses `--horizon`.
fn parse_horizon(v: &str) -> Result<ReplayHorizon, CliError> {
    let bad = || {
        CliError::Input(format!(
            "--horizon {v}: expected after-last-arrival, cover:M or a number of slots"
        ))
    };
    if v == "after-last-arrival" {
        return Ok(ReplayHorizon::AfterLastArrival);
    }
    if let Some(m) = v.strip_prefix("cover:") {
        let multiple: f64 = m.parse().map_err(|_| bad())?;
        return Ok(ReplayHorizon::Cover { multiple });
    }
    v.parse::<u32>()
        .map(ReplayHorizon::Slots)
        .map_err(|_| bad())
}

/// Parses `--utility`.
fn parse_utility(v: &str) -> Result<UtilityRecipe, CliError> {
    let bad = || CliError::Input(format!("--utility {v}: expected trace or sigmoid[:M[:S]]"));
    if v == "trace" {
        return Ok(UtilityRecipe::Trace);
    }
    let mut parts = v.split(':');
    if parts.next() != Some("sigmoid") {
        return Err(bad());
    }
    let mut num = |default: f64| -> Result<f64, CliError> {
        parts
            .next()
            .map_or(Ok(default), |s| s.parse::<f64>().map_err(|_| bad()))
    };
    let multiple = num(2.0)?;
    let steepness = num(4.0)?;
    if parts.next().is_some() {
        return Err(bad());
    }
    let recipe = UtilityRecipe::Sigmoid {
        multiple,
        steepness,
    };
    recipe
        .validate()
        .map_err(|e| CliError::Input(format!("--utility {v}: {e}")))?;
    Ok(recipe)
}

impl ReplayArgs {
    /// The set-up with every default resolved, checked before the trace is
    /// read.
    fn setup(&self) -> Result<Setup, CliError> {
        if self.jobs == 0 {
            return Err(CliError::Input("--jobs must be at least 1".into()));
        }
        if self.seeds.is_empty() {
            return Err(CliError::Input("--seeds needs at least one seed".into()));
        }
        if let Some(s) = self
            .load_scales
            .iter()
            .find(|s| !(s.is_finite() && **s > 0.0))
        {
            return Err(CliError::Input(format!(
                "--load-scales: {s} is not a positive number"
            )));
        }
        policies::check_names(&self.policies)?;
        let has = |n: &str| self.policies.iter().any(|p| p.trim() == n);
        let oasis = has("oasis");
        // The online algorithms need a horizon their jobs can finish in and
        // utilities that reward finishing late a little: OASiS and locality
        // get the same defaults.
        let online = oasis || has("locality");
        let ps_algorithm = oasis || has("locality") || has("smd");
        let arch = match self.arch {
            Some(ArchArg::Rar) => Arch::RingAllReduce,
            Some(ArchArg::Ps) => Arch::ParameterServer,
            None if ps_algorithm => Arch::ParameterServer,
            None => Arch::RingAllReduce,
        };
        let machines = self.gpus / self.gpus_per_machine.max(1);
        let policies = if self.policies.is_empty() {
            baselines::cheap_for(arch == Arch::RingAllReduce)
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            self.policies.iter().map(|p| p.trim().to_string()).collect()
        };
        Ok(Setup {
            arch,
            ps_servers: self.ps_servers.unwrap_or(if oasis { machines } else { 0 }),
            horizon: match &self.horizon {
                Some(h) => parse_horizon(h)?,
                None if online => ReplayHorizon::Cover { multiple: 3.0 },
                None => ReplayHorizon::AfterLastArrival,
            },
            utility: match &self.utility {
                Some(u) => parse_utility(u)?,
                None if online => parse_utility("sigmoid")?,
                None => UtilityRecipe::Trace,
            },
            policies,
            baselines: self.baselines.params()?,
        })
    }

    /// The window's rows, and a note on the Gavel rows skipped for want of
    /// a rate (printed with the output, so an exit-2 answer keeps one
    /// `error:` line on stderr); a Gavel trace's steps become durations
    /// with Gavel's measured throughputs.
    fn rows(&self) -> Result<(Vec<TraceJob>, Option<String>), CliError> {
        let lib = |e: dmlsched::Error| CliError::lib(&self.trace.display().to_string(), &e);
        let format = match self.format {
            Some(f) => f,
            None => guess_format(&self.trace).map_err(|e| lib(e.into()))?,
        };
        let (rows, note) = if format == TraceFormat::Gavel {
            self.gavel_rows().map_err(lib)?
        } else {
            (
                load(&self.trace, Some(format)).map_err(|e| lib(e.into()))?,
                None,
            )
        };
        let window = Window {
            start: self.start.as_ref().map(|v| match v.parse::<f64>() {
                Ok(s) => WindowStart::Seconds(s),
                Err(_) => WindowStart::Date(v.clone()),
            }),
            jobs: Some(self.jobs),
            ..Window::default()
        };
        Ok((select(&rows, &window).map_err(|e| lib(e.into()))?, note))
    }

    fn gavel_rows(&self) -> dmlsched::Result<(Vec<TraceJob>, Option<String>)> {
        let path = GavelThroughputs::locate(self.gavel_throughputs.as_deref())?;
        let rates = GavelThroughputs::load(&path)?;
        let conv = GavelConversion {
            gpu: self.gavel_gpu.clone(),
            gpus_per_machine: self.gpus_per_machine,
        };
        let report = load_gavel_trace_with_rates(&self.trace, &rates, &conv)?;
        let note = report.skipped.first().map(|first| {
            format!(
                "{} Gavel rows have no measured {} rate in {} and are skipped (the first: {first})",
                report.skipped.len(),
                conv.gpu,
                path.display()
            )
        });
        Ok((report.jobs, note))
    }
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

/// One simulated run.
struct Run {
    meta: RunMeta,
    summary: RunSummary,
    result: SimResult,
    instance_index: usize,
}

/// The instance of the window at one load scale and seed.
fn instance(
    rows: &[TraceJob],
    args: &ReplayArgs,
    setup: &Setup,
    scale: f64,
    seed: u64,
) -> Result<Instance, CliError> {
    let lib = |e: dmlsched::Error| CliError::lib("replay instance", &e);
    let mut scaled = rows.to_vec();
    scale_arrivals(&mut scaled, 1.0 / scale).map_err(|e| lib(e.into()))?;
    let recipe = RecipeOptions {
        seed,
        ..match setup.arch {
            Arch::RingAllReduce => RecipeOptions::rar(),
            Arch::ParameterServer => RecipeOptions::ps(),
        }
    };
    let (inst, out) = replay_instance(
        &scaled,
        &ReplayOptions {
            gpus: args.gpus,
            gpus_per_machine: args.gpus_per_machine,
            recipe,
            ps_servers: setup.ps_servers,
            horizon: setup.horizon,
            utility: setup.utility,
        },
    )
    .map_err(lib)?;
    if !out.skipped.is_empty() {
        let count = |r: SkipReason| out.skipped.iter().filter(|s| s.1 == r).count();
        out!(
            "{} trace rows produced no job and are skipped ({} without a duration, {} asking for no whole GPU); {} jobs remain",
            out.skipped.len(),
            count(SkipReason::NoDuration),
            count(SkipReason::NoGpus),
            inst.jobs().len()
        );
    }
    if !out.capped.is_empty() {
        out!(
            "{} jobs asked for more than {} GPUs and were capped",
            out.capped.len(),
            args.gpus
        );
    }
    Ok(inst)
}

/// A short description of the set-up, printed and written to every row.
fn describe(args: &ReplayArgs, setup: &Setup, jobs: usize) -> (String, String) {
    let name = args
        .trace
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("trace");
    let from = args
        .start
        .as_ref()
        .map(|s| format!(" from {s}"))
        .unwrap_or_default();
    let workload = format!("{name} ({jobs} jobs{from})");
    let ps = if setup.ps_servers > 0 {
        format!(" + {} PS-only machines", setup.ps_servers)
    } else {
        String::new()
    };
    let cluster = format!(
        "{} GPUs, {} per machine{ps}",
        args.gpus, args.gpus_per_machine
    );
    (workload, cluster)
}

/// `dmlsched replay`.
pub(crate) fn run(args: &ReplayArgs) -> Result<(), CliError> {
    let setup = args.setup()?;
    let (rows, note) = args.rows()?;
    let (workload, cluster) = describe(args, &setup, rows.len());
    out!(
        "{workload}, {cluster}, {} recipe, horizon {}, utility {}, {} placement, Tiresias thresholds {:?} GPU-s",
        match setup.arch {
            Arch::RingAllReduce => "ring-all-reduce",
            Arch::ParameterServer => "parameter-server",
        },
        setup.horizon,
        setup.utility,
        setup.baselines.placement,
        setup.baselines.tiresias_thresholds
    );
    if let Some(note) = note {
        out!("{note}");
    }
    let mut progress = Progress {
        started: Instant::now(),
        total: setup.policies.len() * args.load_scales.len() * args.seeds.len(),
        done: 0,
        shown: false,
    };
    let mut runs = Vec::new();
    let mut instances = Vec::new();
    for &scale in &args.load_scales {
        for &seed in &args.seeds {
            let inst = instance(&rows, args, &setup, scale, seed)?;
            for name in &setup.policies {
                progress.tick(&format!(
                    "{name} x{} seed {seed}",
                    summary::scale_label(scale)
                ));
                let mut policy =
                    policies::build(name, &inst, &args.params, seed, &setup.baselines)?;
                let result = simulate(&inst, policy.as_mut(), &SimOptions::default())
                    .map_err(|e| CliError::lib(name, &e))?;
                let meta = RunMeta {
                    policy: name.clone(),
                    seed,
                    workload: workload.clone(),
                    cluster: cluster.clone(),
                    load_scale: scale,
                };
                runs.push(Run {
                    meta,
                    summary: result.summary(),
                    result,
                    instance_index: instances.len(),
                });
                progress.done += 1;
                progress.tick(&format!(
                    "{name} x{} seed {seed}",
                    summary::scale_label(scale)
                ));
            }
            instances.push(inst);
        }
    }
    summary::print_table(
        runs.iter()
            .map(|r| (&r.meta, &r.result, &instances[r.instance_index])),
    );
    summary::print_rejections(runs.iter().map(|r| (&r.meta, &r.result)));
    if let Some(dir) = &args.out {
        write_outputs(dir, &runs)?;
        out!("wrote CSVs and SVGs to {}", dir.display());
    }
    Ok(())
}

/// Writes the tables and plots of `runs` to `dir`.
fn write_outputs(dir: &Path, runs: &[Run]) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::input(dir, e))?;
    let report = |e: ReportError| CliError::Run(e.to_string());
    let create = |name: &str| {
        std::fs::File::create(dir.join(name))
            .map(std::io::BufWriter::new)
            .map_err(|e| CliError::Run(format!("{}: {e}", dir.join(name).display())))
    };
    let rows: Vec<(RunMeta, RunSummary)> = runs
        .iter()
        .map(|r| (r.meta.clone(), r.summary.clone()))
        .collect();
    write_summary_csv(create("summary.csv")?, &rows).map_err(report)?;
    for r in runs {
        let name = format!(
            "jobs-{}-x{}-seed{}.csv",
            r.meta.policy,
            summary::scale_label(r.meta.load_scale),
            r.meta.seed
        );
        write_jobs_csv(create(&name)?, &r.meta, &r.result).map_err(report)?;
    }
    // The utilization plots and table: the first load scale and seed.
    let first: Vec<&Run> = runs
        .iter()
        .filter(|r| r.instance_index == runs[0].instance_index)
        .collect();
    let metas: Vec<(RunMeta, &SimResult)> =
        first.iter().map(|r| (r.meta.clone(), &r.result)).collect();
    write_utilization_csv_runs(create("utilization.csv")?, &metas).map_err(report)?;
    let plots: Vec<(&str, &SimResult)> = first
        .iter()
        .map(|r| (r.meta.policy.as_str(), &r.result))
        .collect();
    let (scale, seed) = (
        summary::scale_label(runs[0].meta.load_scale),
        runs[0].meta.seed,
    );
    // A plot that cannot be drawn is a note: the tables are written anyway.
    let mut svgs = Vec::new();
    match utilization_svg(
        &plots,
        &format!("GPU utilization, load x{scale}, seed {seed}"),
    ) {
        Ok(svg) => svgs.push(("utilization.svg", svg)),
        Err(e) => eprintln!("note: utilization.svg not written: {e}"),
    }
    match jct_cdf_svg(&plots, &format!("JCT CDF, load x{scale}, seed {seed}")) {
        Ok(svg) => svgs.push(("jct_cdf.svg", svg)),
        Err(e) => eprintln!("note: jct_cdf.svg not written: {e}"),
    }
    let points = mean_jct_by_load(runs);
    let refs: Vec<(&str, f64, f64)> = points
        .iter()
        .map(|(p, s, j)| (p.as_str(), *s, *j))
        .collect();
    match jct_vs_load_svg(&refs, "Average JCT against load (mean over seeds)") {
        Ok(svg) => svgs.push(("jct_vs_load.svg", svg)),
        Err(e) => eprintln!("note: jct_vs_load.svg not written: {e}"),
    }
    for (name, svg) in svgs {
        std::fs::write(dir.join(name), svg)
            .map_err(|e| CliError::Run(format!("{}: {e}", dir.join(name).display())))?;
    }
    Ok(())
}

/// Mean over seeds of every (policy, load scale)'s average JCT (runs that
/// completed no job are left out).
fn mean_jct_by_load(runs: &[Run]) -> Vec<(String, f64, f64)> {
    let mut points: Vec<(String, f64, f64, usize)> = Vec::new();
    for r in runs.iter().filter(|r| r.summary.avg_jct_s.is_finite()) {
        let key = (&r.meta.policy, r.meta.load_scale);
        match points.iter_mut().find(|p| (&p.0, p.1) == key) {
            Some(p) => {
                p.2 += r.summary.avg_jct_s;
                p.3 += 1;
            }
            None => points.push((
                r.meta.policy.clone(),
                r.meta.load_scale,
                r.summary.avg_jct_s,
                1,
            )),
        }
    }
    points
        .into_iter()
        .map(|(p, s, sum, n)| (p, s, sum / n as f64))
        .collect()
}
