//! `dmlsched replay`: a window of a real cluster trace under baselines and
//! algorithm policies.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use dmlsched::model::units::Num;
use dmlsched::replay::{
    ReplayArch, ReplayConfig, ReplayObserver, ReplayRun, replay, scale_label, utility_bound,
};
use dmlsched::trace::{GpuMix, TraceFormat};

use crate::policies::{self, BaselineFlags};
use crate::summary;
use crate::{CliError, read};

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

impl ReplayArgs {
    /// The library's options: the flags as they are, and the parameters
    /// files of the policies in the run read, each parsed first so that a
    /// bad file is named; the options that need no file are checked before
    /// any is read.
    fn config(&self) -> Result<ReplayConfig, CliError> {
        let mut c = ReplayConfig::new(&self.trace);
        c.format = self.format;
        c.arch = self.arch.map(|a| match a {
            ArchArg::Rar => ReplayArch::Rar,
            ArchArg::Ps => ReplayArch::Ps,
            ArchArg::Layered => ReplayArch::Layered,
        });
        c.start.clone_from(&self.start);
        c.jobs = self.jobs;
        c.gpus = self.gpus.clone();
        c.gpus_per_machine = self.gpus_per_machine;
        c.ps_servers = self.ps_servers;
        c.horizon.clone_from(&self.horizon);
        c.slot_length = self.slot_length;
        c.utility.clone_from(&self.utility);
        c.policies.clone_from(&self.policies);
        c.load_scales.clone_from(&self.load_scales);
        c.seeds.clone_from(&self.seeds);
        c.baselines = self.baselines.options();
        c.gavel_throughputs.clone_from(&self.gavel_throughputs);
        c.gavel_gpu.clone_from(&self.gavel_gpu);
        c.check()?;
        let names: Vec<String> = self.policies.iter().map(|p| p.trim().to_string()).collect();
        policies::check_params(&self.params, &names)?;
        for name in &names {
            let file = policies::params_file(&self.params, name)?;
            if let (Some(file), false) = (file, c.params.iter().any(|p| &p.0 == name)) {
                c.params.push((name.clone(), read(&file.to_path_buf())?));
            }
        }
        Ok(c)
    }
}

/// Prints a replay's messages as they come, and a one-line progress bar on
/// stderr, shown once the work takes more than two seconds, when stderr is
/// a terminal.
struct Progress {
    started: Instant,
    shown: bool,
}

impl ReplayObserver for Progress {
    fn message(&mut self, text: &str) {
        out!("{text}");
    }

    fn progress(&mut self, done: usize, total: usize, label: &str) {
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
        eprint!(
            "\r{} {}/{} {:<28} {:>7.1} s",
            summary::progress_bar(done, total),
            done,
            total,
            label,
            elapsed
        );
        if done == total {
            eprintln!();
        }
        let _ = std::io::stderr().flush();
    }
}

/// `dmlsched replay`.
pub(crate) fn run(args: &ReplayArgs) -> Result<(), CliError> {
    let config = args.config()?;
    let mut printer = Progress {
        started: Instant::now(),
        shown: false,
    };
    let replayed = replay(&config, &mut printer)?;
    let runs = &replayed.runs;
    summary::print_table(runs.iter().map(|r| {
        (
            &r.meta,
            &r.result,
            &replayed.instances[r.instance].instance,
            r.summary.utility_bound,
            r.summary.fairness,
        )
    }));
    summary::print_rejections(runs.iter().map(|r| (&r.meta, &r.result)));
    print_certificates(runs);
    print_notes(runs);
    for f in &replayed.failures {
        out!(
            "failed: {} (load {}, seed {}): {}",
            f.meta.policy,
            scale_label(f.meta.load_scale),
            f.meta.seed,
            f.error
        );
    }
    if let Some(dir) = &args.out {
        replayed.write(dir, &mut printer)?;
        out!("wrote CSVs and SVGs to {}", dir.display());
    }
    Ok(replayed.failed(args.out.is_some())?)
}

/// Prints the policies' own notes, one line each, after the run's label.
fn print_notes(runs: &[ReplayRun]) {
    for r in runs {
        for n in &r.notes {
            out!(
                "{} (load {}, seed {}): {n}",
                r.meta.policy,
                scale_label(r.meta.load_scale),
                r.meta.seed
            );
        }
    }
}

/// Prints one line per algorithm run: its certificate's objective, bound
/// and guarantees (a baseline has none).
fn print_certificates(runs: &[ReplayRun]) {
    for r in runs {
        let what = format!(
            "{} (load {}, seed {})",
            r.meta.policy,
            scale_label(r.meta.load_scale),
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
