//! `dmlsched replay`: a window of a real cluster trace under baselines and
//! algorithm policies.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use dmlsched::baselines::BaselineParams;
use dmlsched::certificate::{Certificate, Sense};
use dmlsched::model::Instance;
use dmlsched::model::units::Num;
use dmlsched::registry;
use dmlsched::report::csv::{write_jobs_csv, write_summary_csv, write_utilization_csv_runs};
use dmlsched::report::plot::{jct_cdf_svg, jct_vs_load_svg, utility_vs_load_svg, utilization_svg};
use dmlsched::report::{ReportError, RunMeta};
use dmlsched::sim::{RunSummary, SimOptions, SimResult, simulate};
use dmlsched::trace::{
    Arch, GavelConversion, GavelThroughputs, GpuMix, RecipeOptions, ReplayHorizon, ReplayOptions,
    SkipReason, SkippedRow, TraceFormat, TraceJob, UtilityRecipe, Window, WindowStart,
    assign_gavel_speeds, guess_format, load, load_gavel_trace_with_rates, replay_instance,
    scale_arrivals, select,
};

use crate::CliError;
use crate::policies::{self, BaselineFlags};
use crate::recipe::{self, Recipe};
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
    /// The jobs the recipe builds for every policy: ring-all-reduce,
    /// parameter server, or layered parameter-server jobs (smd's); a policy
    /// that cannot schedule them is refused before the run. Without it, the baselines run on ps jobs when
    /// oasis or locality is among the policies (else rar), and every other
    /// policy on jobs of the architecture it schedules (gadget and the ring
    /// baselines on rar, oasis and locality on ps), the summary naming each
    /// recipe.
    #[arg(long, value_enum)]
    arch: Option<ArchArg>,
    /// Start of the window: a date (YYYY-MM-DD) or seconds on the trace's
    /// clock [default: the first arrival].
    #[arg(long, value_name = "WHEN")]
    start: Option<String>,
    /// Jobs in the window.
    #[arg(long, default_value_t = 500, value_name = "N")]
    jobs: usize,
    /// GPUs in the cluster: a number, or GPUs per type
    /// (`v100:36,p100:36,k80:36`; each job then gets a speed on every type
    /// from Gavel's throughputs, relative to its duration on --gavel-gpu).
    #[arg(long, default_value = "64", value_name = "N|TYPE:N,...")]
    gpus: GpuMix,
    /// GPUs per machine (must divide --gpus, and each type's count).
    #[arg(long, default_value_t = 8, value_name = "N")]
    gpus_per_machine: u32,
    /// Parameter-server-only machines added to the GPU machines (which then
    /// host workers only), as OASiS's paper model needs [default: 0: every
    /// machine hosts both roles and OASiS shares them; as many as GPU
    /// machines when oasis's parameters set `"shared_machines": false`].
    #[arg(long, value_name = "N")]
    ps_servers: Option<u32>,
    /// The horizon, slots: `after-last-arrival` (one slot past the last
    /// arrival's; simulations run until every job is done), `cover:M` (long
    /// enough for every job to finish M times its trace duration after its
    /// arrival) or a number of slots [default: cover:3 when oasis,
    /// locality or gadget is among the policies, else after-last-arrival].
    #[arg(long, value_name = "H")]
    horizon: Option<String>,
    /// Slot length, seconds, of every recipe [default: 1200 for
    /// parameter-server jobs (the OASiS testbed's), 10 for ring-all-reduce
    /// jobs, lengthened in steps of 10 s when gadget is among the policies
    /// until horizon × machines fits the GADGET-style scheduler's 2^22
    /// cells].
    #[arg(long, value_name = "S")]
    slot_length: Option<f64>,
    /// The jobs' utilities: `trace` (1 per completion, or 1 by the trace's
    /// deadline) or `sigmoid[:M[:S]]` (1/(1 + exp(S/g3·(δ − g3))) with
    /// g3 = M × the job's trace duration in slots; M = 2, S = 4 by default;
    /// M must be at least S/(S + 20))
    /// [default: sigmoid when oasis, locality or gadget is among the
    /// policies, else
    /// trace].
    #[arg(long, value_name = "U")]
    utility: Option<String>,
    /// Comma-separated policies: any baseline, the algorithms oasis,
    /// locality, gadget and smd (on the layered recipe, which builds the
    /// per-layer profiles it needs), and the allocation policies in
    /// round-based leases (gavel-max-min-fairness, gavel-max-min-fairness-perf,
    /// gavel-finish-time-fairness, gavel-max-sum-throughput,
    /// gavel-max-throughput-per-cost, gavel-min-makespan, gavel-fifo,
    /// gavel-fifo-perf) [default: every cheap baseline for the
    /// architecture].
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
    /// GPU kind of the Gavel rates (k80, p100, v100): a Gavel trace's steps
    /// become durations at its rates, and on a typed cluster (--gpus
    /// v100:36,...) every trace's durations are taken as measured on it.
    #[arg(long, default_value = "v100", value_name = "KIND")]
    gavel_gpu: String,
    /// Folder for summary.csv, jobs-<policy>-x<scale>-seed<seed>.csv,
    /// utilization.csv, certificates.json (algorithm policies), failures.csv
    /// (when a policy failed), jct_cdf.svg, jct_vs_load.svg, utility.svg and
    /// utilization.svg (created if missing).
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
    /// Layered parameter-server jobs of the SMD-style workload: the
    /// baselines beside smd on the jobs smd schedules.
    Layered,
}

/// The replay's set-up once the defaults are resolved.
struct Setup {
    /// The recipe of the baselines (and of every algorithm that schedules
    /// it).
    arch: Arch,
    /// PS-only machines of the parameter-server recipe's cluster.
    ps_servers: u32,
    horizon: ReplayHorizon,
    utility: UtilityRecipe,
    /// Every policy with the recipe it runs on, in the order given.
    policies: Vec<(String, Recipe)>,
    baselines: BaselineParams,
    /// Gavel's throughputs, when the trace is Gavel's (its steps become
    /// durations) or the cluster names GPU types (each job's speeds).
    rates: Option<Rates>,
}

/// Gavel's throughputs and where they were read.
struct Rates {
    table: GavelThroughputs,
    path: PathBuf,
}

impl Setup {
    /// The recipes of the run, in the order of their first policy.
    fn recipes(&self) -> Vec<Recipe> {
        let mut out: Vec<Recipe> = Vec::new();
        for (_, a) in &self.policies {
            if !out.contains(a) {
                out.push(*a);
            }
        }
        out
    }

    /// PS-only machines of `recipe`'s cluster: the parameter-server recipe
    /// gets them; a ring-all-reduce recipe only when it is the run's own
    /// (`--arch rar --ps-servers N`), not beside a parameter-server one; the
    /// layered recipe never.
    fn ps_servers_for(&self, recipe: Recipe) -> u32 {
        match recipe {
            Recipe::Jobs(a) if a == Arch::ParameterServer || a == self.arch => self.ps_servers,
            _ => 0,
        }
    }
}

/// Each policy with the recipe it runs on: its own (jobs of the
/// architecture it schedules; the layered recipe for the SMD-style
/// scheduler), else jobs of `arch`. With `--arch` given (`forced`), every
/// policy runs on that recipe, and a policy with a recipe of its own that
/// differs is refused, naming the fix.
fn policy_recipes(
    names: &[String],
    arch: Arch,
    forced: Option<(Recipe, &str)>,
) -> Result<Vec<(String, Recipe)>, CliError> {
    let mut out = Vec::new();
    let mut misfits = Vec::new();
    for n in names {
        match (forced, Recipe::own(n)) {
            (Some((f, _)), Some(r)) if r != f => misfits.push(format!("{n} ({})", r.name())),
            (Some((f, _)), _) => out.push((n.clone(), f)),
            (None, Some(r)) => out.push((n.clone(), r)),
            (None, None) => out.push((n.clone(), Recipe::Jobs(arch))),
        }
    }
    if let (false, Some((f, flag))) = (misfits.is_empty(), forced) {
        return Err(CliError::Input(format!(
            "--arch {flag} builds {} jobs, which {} cannot schedule: \
             drop --arch to run each policy on its own recipe, or leave them out of --policies",
            f.name(),
            misfits.join(", ")
        )));
    }
    Ok(out)
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
        if let Some(s) = self.slot_length.filter(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(CliError::Input(format!(
                "--slot-length: {s} is not a positive number of seconds"
            )));
        }
        policies::check_names(&self.policies)?;
        // What the named policies need of the workload: the online
        // algorithms a horizon their jobs can finish in and utilities that
        // reward finishing late a little, OASiS PS-only machines.
        let any = |f: fn(&registry::Needs) -> bool| {
            self.policies.iter().any(|p| f(&registry::needs(p.trim())))
        };
        let online = any(|n| n.horizon);
        let ps_algorithm = any(|n| n.arch == Some(Arch::ParameterServer));
        let arch = match self.arch {
            Some(ArchArg::Rar) => Arch::RingAllReduce,
            Some(ArchArg::Ps | ArchArg::Layered) => Arch::ParameterServer,
            None if ps_algorithm => Arch::ParameterServer,
            None => Arch::RingAllReduce,
        };
        let forced = self.arch.map(|a| match a {
            ArchArg::Rar => (Recipe::Jobs(Arch::RingAllReduce), "rar"),
            ArchArg::Ps => (Recipe::Jobs(Arch::ParameterServer), "ps"),
            ArchArg::Layered => (Recipe::Layered, "layered"),
        });
        // The cluster's shape is checked before the trace is read.
        self.gpus.cluster(self.gpus_per_machine).map_err(|e| {
            CliError::Input(format!(
                "--gpus {} --gpus-per-machine {}: {e}",
                self.gpus, self.gpus_per_machine
            ))
        })?;
        let machines = self.gpus.total() / self.gpus_per_machine.max(1);
        let names: Vec<String> = if self.policies.is_empty() {
            registry::cheap_baselines(arch == Arch::RingAllReduce)
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            self.policies.iter().map(|p| p.trim().to_string()).collect()
        };
        policies::check_params(&self.params, &names)?;
        // OASiS needs PS-only machines only when its parameters ask for the
        // paper's disjoint pools.
        let mut ps_only = false;
        for n in &names {
            ps_only |= policies::needs_ps_only_machines(&self.params, n)?;
        }
        let layered =
            names.iter().any(|n| registry::needs(n).layered) || self.arch == Some(ArchArg::Layered);
        if layered && matches!(self.gpus, GpuMix::Typed(_)) {
            return Err(CliError::Input(format!(
                "--gpus {}: the layered recipe builds the SMD-style workload's machines, which name no GPU type (give a number of GPUs)",
                self.gpus
            )));
        }
        if layered && self.gpus_per_machine != 8 {
            return Err(CliError::Input(format!(
                "--gpus-per-machine {}: the layered recipe uses the SMD-style workload's 8-GPU machines (give 8)",
                self.gpus_per_machine
            )));
        }
        let policies = policy_recipes(&names, arch, forced)?;
        Ok(Setup {
            arch,
            ps_servers: self
                .ps_servers
                .unwrap_or(if ps_only { machines } else { 0 }),
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
            baselines: self.baselines.params(&self.policies)?,
            rates: None,
        })
    }

    /// The trace's format: given, or guessed from its first line.
    fn format(&self) -> Result<TraceFormat, CliError> {
        match self.format {
            Some(f) => Ok(f),
            None => guess_format(&self.trace).map_err(|e| self.lib(e.into())),
        }
    }

    /// A library error about the trace file.
    fn lib(&self, e: dmlsched::Error) -> CliError {
        CliError::lib(&self.trace.display().to_string(), &e)
    }

    /// How Gavel's rates are read: at --gavel-gpu, consolidated on one
    /// machine of --gpus-per-machine GPUs.
    fn conversion(&self) -> GavelConversion {
        GavelConversion {
            gpu: self.gavel_gpu.clone(),
            gpus_per_machine: self.gpus_per_machine,
        }
    }

    /// Gavel's throughputs, read when a Gavel trace's steps need them or
    /// the cluster names GPU types.
    fn rates(&self, format: TraceFormat) -> Result<Option<Rates>, CliError> {
        if format != TraceFormat::Gavel && matches!(self.gpus, GpuMix::Untyped(_)) {
            return Ok(None);
        }
        let read = || -> dmlsched::Result<Rates> {
            let path = GavelThroughputs::locate(self.gavel_throughputs.as_deref())?;
            let table = GavelThroughputs::load(&path)?;
            Ok(Rates { table, path })
        };
        let context = if format == TraceFormat::Gavel {
            "Gavel throughputs"
        } else {
            "Gavel throughputs (the per-type speeds of --gpus)"
        };
        let rates = read().map_err(|e| CliError::lib(context, &e))?;
        // Every type of --gpus, and --gavel-gpu, must be a kind of the table.
        let types = self.gpus.types();
        if !types.is_empty() {
            assign_gavel_speeds(&[], &rates.table, &self.conversion(), &types, 0)
                .map_err(|e| CliError::lib(&format!("--gpus {}", self.gpus), &e.into()))?;
        }
        Ok(Some(rates))
    }

    /// The window's rows, and a note on the Gavel rows skipped for want of
    /// a rate (printed with the output, so an exit-2 answer keeps one
    /// `error:` line on stderr); a Gavel trace's steps become durations
    /// with Gavel's measured throughputs.
    fn rows(
        &self,
        format: TraceFormat,
        rates: Option<&Rates>,
    ) -> Result<(Vec<TraceJob>, Option<String>), CliError> {
        let lib = |e: dmlsched::Error| self.lib(e);
        let (rows, note) = match (format, rates) {
            (TraceFormat::Gavel, Some(rates)) => self.gavel_rows(rates).map_err(lib)?,
            _ => (
                load(&self.trace, Some(format)).map_err(|e| lib(e.into()))?,
                None,
            ),
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

    /// A Gavel trace's rows with durations at --gavel-gpu's rates; on a
    /// typed cluster, only those measured on every type (so that the
    /// window holds --jobs jobs that can be timed everywhere).
    fn gavel_rows(&self, rates: &Rates) -> dmlsched::Result<(Vec<TraceJob>, Option<String>)> {
        let conv = self.conversion();
        let report = load_gavel_trace_with_rates(&self.trace, &rates.table, &conv)?;
        let mut skipped = report.skipped;
        let mut jobs = report.jobs;
        let types = self.gpus.types();
        if !types.is_empty() {
            let typed = assign_gavel_speeds(&jobs, &rates.table, &conv, &types, 0)?;
            // Indices of `typed` count the converted rows: name the file's.
            // `typed` counts the converted rows: name each by its file row.
            let gone: std::collections::BTreeSet<usize> = skipped.iter().map(|s| s.index).collect();
            let converted: Vec<usize> = (0..jobs.len() + skipped.len())
                .filter(|i| !gone.contains(i))
                .collect();
            skipped.extend(typed.skipped.into_iter().map(|mut s| {
                s.index = converted[s.index];
                s
            }));
            skipped.sort_by_key(|s| s.index);
            jobs = typed.jobs;
        }
        let what = if types.is_empty() {
            format!("Gavel rows have no measured {} rate", conv.gpu)
        } else {
            format!(
                "Gavel rows have no measured rate on {} (--gavel-gpu) or on one of the cluster's types ({})",
                conv.gpu,
                types.join(", ")
            )
        };
        let note = skipped_note(&skipped, &what, &rates.path);
        Ok((jobs, note))
    }
}

/// A note on rows left out for want of a rate: how many, `what`, and the
/// first of them; `None` when none is.
fn skipped_note(skipped: &[SkippedRow], what: &str, path: &Path) -> Option<String> {
    let first = skipped.first()?;
    Some(format!(
        "{} {what} in {} and are skipped (the first: {first})",
        skipped.len(),
        path.display(),
    ))
}

/// A one-line progress bar on stderr, shown once the work takes more than
/// two seconds, when stderr is a terminal.
struct Progress {
    started: Instant,
    total: usize,
    done: usize,
    shown: bool,
}

impl Progress {
    fn tick(&mut self, label: &str) {
        // Only a person watching a terminal needs it; a log or a pipe does
        // not (and an exit-2 answer keeps its one `error:` line on stderr).
        if !std::io::stderr().is_terminal() {
            return;
        }
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
    /// The policy's certificate (`Ok(None)` for a baseline), or why it
    /// could not be made.
    certificate: Result<Option<Certificate>, String>,
    /// The policy's own notes on the run ([`dmlsched::sim::Policy::notes`]).
    notes: Vec<String>,
}

/// The certificate's bound on the total utility, when it is a valid upper
/// bound.
fn utility_bound(c: &Certificate) -> Option<f64> {
    let b = &c.relaxation_bound;
    (c.sense == Sense::Maximise && b.is_usable() && b.kind.is_valid()).then_some(b.value)
}

/// The instance of the window at one load scale and seed.
fn instance(
    rows: &[TraceJob],
    args: &ReplayArgs,
    setup: &Setup,
    recipe: Recipe,
    (scale, seed): (f64, u64),
    slot_length_s: Option<f64>,
) -> Result<Instance, CliError> {
    let lib = |e: dmlsched::Error| CliError::lib("replay instance", &e);
    let mut scaled = rows.to_vec();
    scale_arrivals(&mut scaled, 1.0 / scale).map_err(|e| lib(e.into()))?;
    let arch = match recipe {
        Recipe::Jobs(arch) => arch,
        Recipe::Layered => {
            return recipe::layered_instance(
                &scaled,
                args.gpus.total() / args.gpus_per_machine,
                seed,
            );
        }
    };
    if let Some(rates) = setup
        .rates
        .as_ref()
        .filter(|_| !args.gpus.types().is_empty())
    {
        let typed = assign_gavel_speeds(
            &scaled,
            &rates.table,
            &args.conversion(),
            &args.gpus.types(),
            seed,
        )
        .map_err(|e| lib(e.into()))?;
        let what = "trace rows have no measured rate on the cluster's GPU types";
        if let Some(note) = skipped_note(&typed.skipped, what, &rates.path) {
            out!("{note}");
        }
        scaled = typed.jobs;
    }
    let base = match arch {
        Arch::RingAllReduce => RecipeOptions::rar(),
        Arch::ParameterServer => RecipeOptions::ps(),
    };
    let mut options = base;
    options.seed = seed;
    options.slot_length_s = slot_length_s.unwrap_or(base.slot_length_s);
    let (inst, out) = replay_instance(&scaled, &{
        let mut built_ = ReplayOptions::default();
        built_.gpus = args.gpus.clone();
        built_.gpus_per_machine = args.gpus_per_machine;
        built_.recipe = options;
        built_.ps_servers = setup.ps_servers_for(recipe);
        built_.horizon = setup.horizon;
        built_.utility = setup.utility;
        built_
    })
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
            args.gpus.total()
        );
    }
    Ok(inst)
}

/// A short description of the set-up, printed and written to every row:
/// the workload and `recipe`'s cluster.
fn describe(args: &ReplayArgs, setup: &Setup, recipe: Recipe, jobs: usize) -> (String, String) {
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
    let ps_servers = setup.ps_servers_for(recipe);
    let ps = if recipe == Recipe::Layered {
        " (the SMD-style workload's machines)".to_string()
    } else if ps_servers > 0 {
        format!(" + {ps_servers} PS-only machines")
    } else {
        String::new()
    };
    let gpus = match &args.gpus {
        GpuMix::Untyped(n) => format!("{n} GPUs"),
        typed => format!("{} GPUs ({typed})", typed.total()),
    };
    let cluster = format!("{gpus}, {} per machine{ps}", args.gpus_per_machine);
    (workload, cluster)
}

/// A run that failed: its policy, load scale and seed, and why. The other
/// runs go on.
struct Failure {
    meta: RunMeta,
    error: CliError,
}

/// Prints the set-up: the workload, the cluster and recipe of the first
/// policy, then the recipe and cluster of any policy on another recipe.
fn print_setup(args: &ReplayArgs, setup: &Setup, jobs: usize) {
    let recipes = setup.recipes();
    let (workload, cluster) = describe(args, setup, recipes[0], jobs);
    let on = |recipe: Recipe| -> String {
        let names: Vec<&str> = setup
            .policies
            .iter()
            .filter(|p| p.1 == recipe)
            .map(|p| p.0.as_str())
            .collect();
        names.join(", ")
    };
    let first = if recipes.len() > 1 {
        format!(" for {}", on(recipes[0]))
    } else {
        String::new()
    };
    out!(
        "{workload}, {cluster}, {} recipe{first}, horizon {}, utility {}, {} placement, Tiresias thresholds {:?} GPU-s",
        recipes[0].name(),
        setup.horizon,
        setup.utility,
        setup.baselines.placement,
        setup.baselines.tiresias.thresholds
    );
    for &recipe in &recipes[1..] {
        let (_, cluster) = describe(args, setup, recipe, jobs);
        out!(
            "{} recipe for {} (each policy on jobs of the architecture it schedules), {cluster}",
            recipe.name(),
            on(recipe)
        );
    }
    if recipes.contains(&Recipe::Layered) {
        out!("{}", recipe::LAYERED_NOTE);
    }
}

/// Every instance of the run, built before any policy runs: one per load
/// scale, seed and recipe, in that order.
fn instances(
    rows: &[TraceJob],
    args: &ReplayArgs,
    setup: &Setup,
) -> Result<Vec<(f64, u64, Recipe, Instance)>, CliError> {
    let mut out = Vec::new();
    for &scale in &args.load_scales {
        for &seed in &args.seeds {
            for recipe in setup.recipes() {
                let inst = recipe_instance(rows, args, setup, recipe, (scale, seed))?;
                out.push((scale, seed, recipe, inst));
            }
        }
    }
    Ok(out)
}

/// The instance of `arch`'s recipe at one load scale and seed. Without
/// `--slot-length`, a ring-all-reduce recipe that the GADGET-style
/// scheduler runs gets slots long enough (in steps of the default 10 s)
/// for its horizon × machines to fit the scheduler's limit, with a note.
fn recipe_instance(
    rows: &[TraceJob],
    args: &ReplayArgs,
    setup: &Setup,
    recipe: Recipe,
    run: (f64, u64),
) -> Result<Instance, CliError> {
    let inst = instance(rows, args, setup, recipe, run, args.slot_length)?;
    // The least cell limit of the policies that run on this recipe.
    let limit = setup
        .policies
        .iter()
        .filter(|p| p.1 == recipe)
        .filter_map(|p| registry::needs(&p.0).max_cells.map(|c| (c, p.0.clone())))
        .min();
    let cells = |i: &Instance| u64::from(i.horizon_slots()) * i.cluster().machines.len() as u64;
    let Some((max_cells, limited)) = limit else {
        return Ok(inst);
    };
    if args.slot_length.is_some() || cells(&inst) <= max_cells {
        return Ok(inst);
    }
    let base = inst.slot_length_s();
    let factor = (cells(&inst) as f64 / max_cells as f64).ceil();
    let mut slot = base * factor;
    let mut inst = instance(rows, args, setup, recipe, run, Some(slot))?;
    // The horizon in slots rounds up: one more step may be needed.
    while cells(&inst) > max_cells && slot < 1e9 {
        slot += base;
        inst = instance(rows, args, setup, recipe, run, Some(slot))?;
    }
    out!(
        "note: {} recipe at load {}, seed {}: slots of {slot} s (not {base} s), so that horizon × machines fits {limited}'s limit of {max_cells} cells",
        recipe.name(),
        summary::scale_label(run.0),
        run.1
    );
    Ok(inst)
}

/// Simulates `name` on `inst`, then closes the policy's run for its
/// certificate.
fn simulate_one(
    name: &str,
    inst: &Instance,
    args: &ReplayArgs,
    setup: &Setup,
    seed: u64,
) -> Result<Simulated, CliError> {
    let mut policy = policies::build(name, inst, &args.params, seed, &setup.baselines)?;
    let result = simulate(inst, policy.as_mut(), &SimOptions::default())
        .map_err(|e| CliError::lib(name, &e))?;
    let notes = policy.notes();
    let certificate = policy.finish(inst).map_err(|e| e.to_string());
    Ok((result, certificate, notes))
}

/// A run's records, its policy's certificate (or why there is none) and
/// its policy's notes.
type Simulated = (SimResult, Result<Option<Certificate>, String>, Vec<String>);

/// Runs every policy on its instance for every load scale and seed; a
/// policy that fails loses only its own run.
fn run_all(
    args: &ReplayArgs,
    setup: &Setup,
    rows: &[TraceJob],
    insts: &[(f64, u64, Recipe, Instance)],
) -> (Vec<Run>, Vec<Failure>) {
    // Each job alone on the empty cluster, once per instance: the fairness
    // metrics' reference.
    let solos: Vec<_> = insts.iter().map(|i| summary::solo_runs(&i.3)).collect();
    let mut progress = Progress {
        started: Instant::now(),
        total: setup.policies.len() * args.load_scales.len() * args.seeds.len(),
        done: 0,
        shown: false,
    };
    let (mut runs, mut failures) = (Vec::new(), Vec::new());
    for &scale in &args.load_scales {
        for &seed in &args.seeds {
            for (name, recipe) in &setup.policies {
                let label = format!("{name} x{} seed {seed}", summary::scale_label(scale));
                progress.tick(&label);
                let Some(index) = insts
                    .iter()
                    .position(|i| (i.0, i.1, i.2) == (scale, seed, *recipe))
                else {
                    continue;
                };
                let (mut workload, cluster) = describe(args, setup, *recipe, rows.len());
                if setup.recipes().len() > 1 {
                    workload = format!("{workload}, {} recipe", recipe.name());
                }
                let meta = RunMeta {
                    policy: name.clone(),
                    seed,
                    workload,
                    cluster,
                    load_scale: scale,
                };
                match simulate_one(name, &insts[index].3, args, setup, seed) {
                    Ok((result, certificate, notes)) => {
                        let mut summary = result
                            .summary()
                            .with_resource_use(&result.resource_use(&insts[index].3))
                            .with_fairness(result.fairness(&solos[index]));
                        summary.utility_bound = certificate
                            .as_ref()
                            .ok()
                            .and_then(|c| c.as_ref())
                            .and_then(utility_bound);
                        runs.push(Run {
                            meta,
                            summary,
                            result,
                            instance_index: index,
                            certificate,
                            notes,
                        });
                    }
                    Err(error) => failures.push(Failure { meta, error }),
                }
                progress.done += 1;
                progress.tick(&label);
            }
        }
    }
    (runs, failures)
}

/// The error that ends a replay some of whose runs failed: bad input
/// (exit 2) when every failure is, a failed run (exit 1) otherwise.
fn failed(failures: &[Failure], total: usize, wrote: bool) -> Result<(), CliError> {
    let Some(first) = failures.first() else {
        return Ok(());
    };
    let text = |e: &CliError| match e {
        CliError::Input(m) | CliError::Run(m) => m.clone(),
    };
    let m = format!(
        "{} of {total} runs failed (the first: {} at load {}, seed {}: {}); the other results are printed{}",
        failures.len(),
        first.meta.policy,
        summary::scale_label(first.meta.load_scale),
        first.meta.seed,
        text(&first.error),
        if wrote { " and written" } else { "" }
    );
    if failures
        .iter()
        .all(|f| matches!(f.error, CliError::Input(_)))
    {
        Err(CliError::Input(m))
    } else {
        Err(CliError::Run(m))
    }
}

/// `dmlsched replay`.
pub(crate) fn run(args: &ReplayArgs) -> Result<(), CliError> {
    let mut setup = args.setup()?;
    let format = args.format()?;
    setup.rates = args.rates(format)?;
    let (rows, note) = args.rows(format, setup.rates.as_ref())?;
    print_setup(args, &setup, rows.len());
    if let (Some(rates), false) = (&setup.rates, args.gpus.types().is_empty()) {
        out!(
            "GPU types {}: each job's speed on each type from Gavel's throughputs in {}, relative to its duration on {} (--gavel-gpu); rows without a Gavel job type get one drawn per seed",
            args.gpus.types().join(", "),
            rates.path.display(),
            args.gavel_gpu
        );
    }
    if let Some(note) = note {
        out!("{note}");
    }
    let insts = instances(&rows, args, &setup)?;
    let (runs, failures) = run_all(args, &setup, &rows, &insts);
    summary::print_table(runs.iter().map(|r| {
        (
            &r.meta,
            &r.result,
            &insts[r.instance_index].3,
            r.summary.utility_bound,
            r.summary.fairness,
        )
    }));
    summary::print_rejections(runs.iter().map(|r| (&r.meta, &r.result)));
    print_certificates(&runs);
    print_notes(&runs);
    for f in &failures {
        out!(
            "failed: {} (load {}, seed {}): {}",
            f.meta.policy,
            summary::scale_label(f.meta.load_scale),
            f.meta.seed,
            match &f.error {
                CliError::Input(m) | CliError::Run(m) => m,
            }
        );
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, &runs, &failures)?;
        out!("wrote CSVs and SVGs to {}", dir.display());
    }
    failed(&failures, runs.len() + failures.len(), args.out.is_some())
}

/// Writes the tables and plots of `runs` to `dir`.
fn write_outputs(dir: &Path, runs: &[Run], failures: &[Failure]) -> Result<(), CliError> {
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
    if let Some(json) = certificates_json(runs) {
        crate::solve::write_json(dir, "certificates.json", &json)?;
    }
    if !failures.is_empty() {
        write_failures(create("failures.csv")?, failures)
            .map_err(|e| CliError::Run(format!("{}: {e}", dir.join("failures.csv").display())))?;
    }
    let Some(run0) = runs.first() else {
        return Ok(());
    };
    // The utilization plots and table: the first load scale and seed.
    let first: Vec<&Run> = runs
        .iter()
        .filter(|r| (r.meta.load_scale, r.meta.seed) == (run0.meta.load_scale, run0.meta.seed))
        .collect();
    let metas: Vec<(RunMeta, &SimResult)> =
        first.iter().map(|r| (r.meta.clone(), &r.result)).collect();
    write_utilization_csv_runs(create("utilization.csv")?, &metas).map_err(report)?;
    let plots: Vec<(&str, &SimResult)> = first
        .iter()
        .map(|r| (r.meta.policy.as_str(), &r.result))
        .collect();
    let (scale, seed) = (summary::scale_label(run0.meta.load_scale), run0.meta.seed);
    // A plot that cannot be drawn is a note: the tables are written anyway.
    let mut svgs = Vec::new();
    match utilization_svg(
        &plots,
        &format!("GPU utilization, load x{scale}, seed {seed}"),
    ) {
        Ok(svg) => svgs.push(("utilization.svg", svg)),
        Err(e) => out!("note: utilization.svg not written: {e}"),
    }
    match jct_cdf_svg(&plots, &format!("JCT CDF, load x{scale}, seed {seed}")) {
        Ok(svg) => svgs.push(("jct_cdf.svg", svg)),
        Err(e) => out!("note: jct_cdf.svg not written: {e}"),
    }
    let by_load =
        |metric: fn(&RunSummary) -> f64| -> Vec<(String, f64, f64)> { mean_by_load(runs, metric) };
    let jct = by_load(|s| s.avg_jct_s);
    let jct: Vec<(&str, f64, f64)> = jct.iter().map(|(p, s, v)| (p.as_str(), *s, *v)).collect();
    match jct_vs_load_svg(&jct, "Average JCT against load (mean over seeds)") {
        Ok(svg) => svgs.push(("jct_vs_load.svg", svg)),
        Err(e) => out!("note: jct_vs_load.svg not written: {e}"),
    }
    let utility = by_load(|s| s.total_utility);
    let utility: Vec<(&str, f64, f64)> = utility
        .iter()
        .map(|(p, s, v)| (p.as_str(), *s, *v))
        .collect();
    match utility_vs_load_svg(&utility, "Total utility against load (mean over seeds)") {
        Ok(svg) => svgs.push(("utility.svg", svg)),
        Err(e) => out!("note: utility.svg not written: {e}"),
    }
    for (name, svg) in svgs {
        std::fs::write(dir.join(name), svg)
            .map_err(|e| CliError::Run(format!("{}: {e}", dir.join(name).display())))?;
    }
    Ok(())
}

/// Prints the policies' own notes, one line each, after the run's label.
fn print_notes(runs: &[Run]) {
    for r in runs {
        for n in &r.notes {
            out!(
                "{} (load {}, seed {}): {n}",
                r.meta.policy,
                summary::scale_label(r.meta.load_scale),
                r.meta.seed
            );
        }
    }
}

/// Prints one line per algorithm run: its certificate's objective, bound
/// and guarantees (a baseline has none).
fn print_certificates(runs: &[Run]) {
    for r in runs {
        let what = format!(
            "{} (load {}, seed {})",
            r.meta.policy,
            summary::scale_label(r.meta.load_scale),
            r.meta.seed
        );
        match &r.certificate {
            Ok(None) => {}
            Err(e) => out!("certificate of {what}: not available: {e}"),
            Ok(Some(c)) => {
                let bound = match utility_bound(c) {
                    Some(b) => format!("bound {:.4} ({})", Num(b), c.relaxation_bound.kind),
                    None => format!("no valid bound ({})", c.relaxation_bound.kind),
                };
                let guarantees: Vec<String> = c
                    .guarantees
                    .iter()
                    .map(|g| {
                        let status = if g.valid { "holds" } else { "not valid here" };
                        match g.ratio_bound {
                            Some(x) => {
                                format!("{} with ratio {:.4}: {status}", g.expression, Num(x))
                            }
                            None => format!("{}: {status}", g.expression),
                        }
                    })
                    .collect();
                out!(
                    "certificate of {what}: objective {:.4} (its plans' utility), {bound}; {}",
                    Num(c.objective),
                    if guarantees.is_empty() {
                        "no a-priori guarantee".to_string()
                    } else {
                        guarantees.join("; ")
                    }
                );
            }
        }
    }
}

/// `certificates.json`: every algorithm run's certificate with its policy,
/// load scale, seed, workload and cluster.
fn certificates_json(runs: &[Run]) -> Option<serde_json::Value> {
    let list: Vec<serde_json::Value> = runs
        .iter()
        .filter_map(|r| {
            let c = r.certificate.as_ref().ok()?.as_ref()?;
            Some(serde_json::json!({
                "policy": r.meta.policy,
                "load_scale": r.meta.load_scale,
                "seed": r.meta.seed,
                "workload": r.meta.workload,
                "cluster": r.meta.cluster,
                "certificate": c,
            }))
        })
        .collect();
    (!list.is_empty()).then_some(serde_json::Value::Array(list))
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// `failures.csv`: one row per failed run, with the error.
fn write_failures(mut w: impl Write, failures: &[Failure]) -> std::io::Result<()> {
    writeln!(w, "policy,load_scale,seed,workload,cluster,exit,error")?;
    for f in failures {
        let (exit, m) = match &f.error {
            CliError::Input(m) => (2, m),
            CliError::Run(m) => (1, m),
        };
        writeln!(
            w,
            "{},{},{},{},{},{exit},{}",
            csv_field(&f.meta.policy),
            f.meta.load_scale,
            f.meta.seed,
            csv_field(&f.meta.workload),
            csv_field(&f.meta.cluster),
            csv_field(m)
        )?;
    }
    w.flush()
}

/// Mean over seeds of `metric` for every (policy, load scale); runs whose
/// metric is not finite (an average JCT with no job done) are left out.
fn mean_by_load(runs: &[Run], metric: impl Fn(&RunSummary) -> f64) -> Vec<(String, f64, f64)> {
    let mut points: Vec<(String, f64, f64, usize)> = Vec::new();
    for r in runs {
        let v = metric(&r.summary);
        if !v.is_finite() {
            continue;
        }
        let key = (&r.meta.policy, r.meta.load_scale);
        match points.iter_mut().find(|p| (&p.0, p.1) == key) {
            Some(p) => {
                p.2 += v;
                p.3 += 1;
            }
            None => points.push((r.meta.policy.clone(), r.meta.load_scale, v, 1)),
        }
    }
    points
        .into_iter()
        .map(|(p, s, sum, n)| (p, s, sum / n as f64))
        .collect()
}
