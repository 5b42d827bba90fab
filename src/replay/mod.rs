//! Replays: a window of a real cluster trace under baselines and
//! algorithm policies, at several load scales and seeds — the pipeline of
//! `dmlsched replay`, as a library call (the command line and the Python
//! package run this one).
//!
//! [`ReplayConfig`] names every option as the command line does (its
//! fields are the flags of `dmlsched replay`, and options the command line
//! reads as text are text here: `start`, `horizon`, `utility`);
//! [`replay`] reads the trace, builds one instance per load scale, seed and
//! recipe, runs every policy on its instance and returns the runs
//! ([`Replayed`]): each with its metadata, summary (resource use and
//! fairness included), per-job records, certificate and the policy's notes.
//! A policy that fails loses only its own run ([`ReplayFailure`]).
//! [`Replayed::write`] writes the command line's tables and plots.
//!
//! Messages name the options by their command-line flags (`--jobs`), so
//! that the command line and the Python package (whose keyword arguments
//! are the flags' names) answer bad input with the same words.
//!
//! ```no_run
//! use dmlsched::replay::{ReplayConfig, replay};
//!
//! let mut config = ReplayConfig::new("traces/philly.csv");
//! config.start = Some("2017-11-01".into());
//! config.jobs = 500;
//! config.policies = vec!["fifo".into(), "tiresias".into()];
//! let replayed = replay(&config, &mut ())?;
//! for run in &replayed.runs {
//!     println!("{}: mean JCT {:.0} s", run.meta.policy, run.summary.avg_jct_s);
//! }
//! # Ok::<(), dmlsched::replay::ReplayError>(())
//! ```

mod build;
mod options;
mod runs;
mod setup;
mod write;

use std::path::PathBuf;

use crate::baselines::BaselineParams;
use crate::certificate::Certificate;
use crate::model::Instance;
use crate::report::RunMeta;
use crate::sim::{RunSummary, SimResult};
use crate::trace::{GpuMix, TraceFormat};

pub use build::Recipe;
pub use options::{BaselineOptions, check_names, parse_horizon, parse_utility};
pub use runs::{FAIRNESS_MAX_CELLS, solo_runs};

/// The options of a replay: the flags of `dmlsched replay`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayConfig {
    /// The trace file: Philly CSV, ITP CSV, Gavel TSV, Tiresias CSV or
    /// Alibaba openb pods.
    pub trace: PathBuf,
    /// The trace's format; guessed from the file's first line when `None`.
    pub format: Option<TraceFormat>,
    /// The jobs every policy runs on (`--arch`); `None`: each policy on
    /// jobs of the architecture it schedules, the baselines on
    /// parameter-server jobs when an algorithm on them is among the
    /// policies, else ring-all-reduce.
    pub arch: Option<ReplayArch>,
    /// Start of the window: a date (`YYYY-MM-DD`) or seconds on the trace's
    /// clock; `None`: the first arrival.
    pub start: Option<String>,
    /// Jobs in the window (default 500).
    pub jobs: usize,
    /// GPUs in the cluster, a number or GPUs per type (default 64).
    pub gpus: GpuMix,
    /// GPUs per machine (default 8).
    pub gpus_per_machine: u32,
    /// Parameter-server-only machines; `None`: none, or as many as GPU
    /// machines when OASiS's parameters ask for disjoint pools.
    pub ps_servers: Option<u32>,
    /// The horizon as [`parse_horizon`] reads it; `None`: `cover:3` when an
    /// online algorithm is among the policies, else `after-last-arrival`.
    pub horizon: Option<String>,
    /// Slot length, seconds; `None`: the recipe's (lengthened for the
    /// GADGET-style scheduler's cell limit).
    pub slot_length: Option<f64>,
    /// The jobs' utilities as [`parse_utility`] reads them; `None`:
    /// `sigmoid` when an online algorithm is among the policies, else
    /// `trace`.
    pub utility: Option<String>,
    /// The policies, in order; empty: every cheap baseline for the
    /// architecture.
    pub policies: Vec<String>,
    /// Parameters of algorithm policies: (policy, JSON text).
    pub params: Vec<(String, String)>,
    /// Arrival-rate multipliers (default `[1]`).
    pub load_scales: Vec<f64>,
    /// Seeds, one run each (default `[0]`).
    pub seeds: Vec<u64>,
    /// The baselines' options.
    pub baselines: BaselineOptions,
    /// Gavel's throughputs file; `None`: `$DMLSCHED_TRACES/gavel-simulation_throughputs.json`.
    pub gavel_throughputs: Option<PathBuf>,
    /// GPU kind of the Gavel rates (default `v100`).
    pub gavel_gpu: String,
}

impl ReplayConfig {
    /// The command line's defaults for `trace`.
    pub fn new(trace: impl Into<PathBuf>) -> Self {
        ReplayConfig {
            trace: trace.into(),
            format: None,
            arch: None,
            start: None,
            jobs: 500,
            gpus: GpuMix::Untyped(64),
            gpus_per_machine: 8,
            ps_servers: None,
            horizon: None,
            slot_length: None,
            utility: None,
            policies: Vec::new(),
            params: Vec::new(),
            load_scales: vec![1.0],
            seeds: vec![0],
            baselines: BaselineOptions::default(),
            gavel_throughputs: None,
            gavel_gpu: "v100".into(),
        }
    }
}

/// The jobs every policy of a replay runs on (`--arch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplayArch {
    /// Ring-all-reduce jobs.
    Rar,
    /// Parameter-server jobs.
    Ps,
    /// Layered parameter-server jobs of the SMD-style workload.
    Layered,
}

impl std::str::FromStr for ReplayArch {
    type Err = ReplayError;

    /// `rar`, `ps` or `layered`.
    fn from_str(s: &str) -> Result<Self, ReplayError> {
        match s {
            "rar" => Ok(ReplayArch::Rar),
            "ps" => Ok(ReplayArch::Ps),
            "layered" => Ok(ReplayArch::Layered),
            _ => Err(ReplayError::Input(format!(
                "--arch {s}: expected rar, ps or layered"
            ))),
        }
    }
}

/// Why a replay, or one of its runs, failed: bad input (the command line
/// exits with code 2) or a run that failed on valid input (code 1).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A file that cannot be read or parsed, an invalid option or
    /// parameters, a job or cluster outside a policy's model.
    #[error("{0}")]
    Input(String),
    /// A policy or a check failed on valid input.
    #[error("{0}")]
    Run(String),
    /// The observer stopped the replay ([`ReplayObserver::keep_going`])
    /// after this many of its runs.
    #[error("the replay was stopped after {done} of {total} runs")]
    Stopped {
        /// Runs finished.
        done: usize,
        /// Runs in all.
        total: usize,
    },
}

impl ReplayError {
    /// A library error in `context`: bad input when
    /// [`crate::Error::is_input`] says so, a failed run otherwise.
    pub(crate) fn lib(context: &str, e: &crate::Error) -> Self {
        let m = format!("{context}: {e}");
        if e.is_input() {
            ReplayError::Input(m)
        } else {
            ReplayError::Run(m)
        }
    }

    /// Whether the error is about the input.
    pub fn is_input(&self) -> bool {
        matches!(self, ReplayError::Input(_))
    }

    /// The message.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

/// What a replay tells while it runs: notes on the set-up and the
/// instances (rows skipped, slots lengthened, …), in order, and its
/// progress. `()` ignores both.
pub trait ReplayObserver {
    /// A line of the set-up's description or a note.
    fn message(&mut self, text: &str) {
        let _ = text;
    }

    /// `done` of `total` runs finished; `label` names the next or last.
    fn progress(&mut self, done: usize, total: usize, label: &str) {
        let _ = (done, total, label);
    }

    /// Asked before each run: `false` stops the replay there (a binding's
    /// interrupt, a deadline), and [`replay`] returns
    /// [`ReplayError::Stopped`]. A run under way is not stopped.
    fn keep_going(&mut self) -> bool {
        true
    }
}

impl ReplayObserver for () {}

/// Collects the messages.
impl ReplayObserver for Vec<String> {
    fn message(&mut self, text: &str) {
        self.push(text.to_string());
    }
}

/// One instance of a replay: a load scale, a seed and a recipe.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayInstance {
    /// The arrival-rate multiplier.
    pub load_scale: f64,
    /// The seed of the recipe's draws.
    pub seed: u64,
    /// The recipe.
    pub recipe: Recipe,
    /// The instance.
    pub instance: Instance,
}

/// One simulated run of a replay.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayRun {
    /// Policy, seed, workload, cluster and load scale.
    pub meta: RunMeta,
    /// The run's summary, with resource use, fairness and the
    /// certificate's bound on the total utility.
    pub summary: RunSummary,
    /// The per-job records.
    pub result: SimResult,
    /// The run's instance, in [`Replayed::instances`].
    pub instance: usize,
    /// The policy's certificate (`Ok(None)` for a baseline), or why it
    /// could not be made.
    pub certificate: Result<Option<Certificate>, String>,
    /// The policy's own notes ([`crate::sim::Policy::notes`]).
    pub notes: Vec<String>,
}

/// A run that failed; the other runs went on.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayFailure {
    /// Policy, seed, workload, cluster and load scale.
    pub meta: RunMeta,
    /// Why.
    pub error: ReplayError,
}

/// The runs of a replay.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Replayed {
    /// Every instance, by load scale, seed and recipe.
    pub instances: Vec<ReplayInstance>,
    /// The runs that finished, by load scale, seed and policy.
    pub runs: Vec<ReplayRun>,
    /// The runs that failed.
    pub failures: Vec<ReplayFailure>,
}

impl Replayed {
    /// The error that ends a replay some of whose runs failed: bad input
    /// when every failure is, a failed run otherwise; `written` says
    /// whether the tables were written.
    pub fn failed(&self, written: bool) -> Result<(), ReplayError> {
        runs::failed(
            &self.failures,
            self.runs.len() + self.failures.len(),
            written,
        )
    }

    /// The summary table: one row per run, as `summary.csv`.
    pub fn summary_rows(&self) -> Vec<(RunMeta, RunSummary)> {
        self.runs
            .iter()
            .map(|r| (r.meta.clone(), r.summary.clone()))
            .collect()
    }

    /// `certificates.json`: every algorithm run's certificate with its
    /// policy, load scale, seed, workload and cluster; `None` when no run
    /// has one.
    pub fn certificates_json(&self) -> Option<serde_json::Value> {
        write::certificates_json(&self.runs)
    }
}

/// A load scale as a short label for tables, titles and file names: `{}`
/// formatting (`1`, `0.5`) when that is at most 12 characters, else
/// exponent notation (`1e300`, `1.234567e-20`).
pub fn scale_label(x: f64) -> String {
    let plain = format!("{}", x + 0.0);
    if plain.len() <= 12 {
        plain
    } else {
        format!("{:e}", x + 0.0)
    }
}

/// The certificate's bound on the total utility, when it is a valid upper
/// bound.
pub fn utility_bound(c: &Certificate) -> Option<f64> {
    let b = &c.relaxation_bound;
    (c.sense == crate::certificate::Sense::Maximise && b.is_usable() && b.kind.is_valid())
        .then_some(b.value)
}

/// Replays `config`: every policy on its instance for every load scale and
/// seed. Set-up lines and notes go to `observer` as they come.
///
/// # Errors
///
/// [`ReplayError::Input`] for an invalid option, an unreadable or
/// malformed trace or parameters, a window with no job; the runs' own
/// failures are in [`Replayed::failures`] (see [`Replayed::failed`]).
pub fn replay(
    config: &ReplayConfig,
    observer: &mut dyn ReplayObserver,
) -> Result<Replayed, ReplayError> {
    let mut setup = setup::Setup::resolve(config)?;
    let format = setup::format(config)?;
    setup.rates = setup::rates(config, format)?;
    let (rows, note) = setup::rows(config, format, setup.rates.as_ref())?;
    setup::describe_setup(config, &setup, rows.len(), observer);
    if let (Some(rates), false) = (&setup.rates, config.gpus.types().is_empty()) {
        observer.message(&format!(
            "GPU types {}: each job's speed on each type from Gavel's throughputs in {}, relative to its duration on {} (--gavel-gpu); rows without a Gavel job type get one drawn per seed",
            config.gpus.types().join(", "),
            rates.path.display(),
            config.gavel_gpu
        ));
    }
    if let Some(note) = note {
        observer.message(&note);
    }
    let instances = build::instances(&rows, config, &setup, observer)?;
    let (runs, failures) = runs::run_all(config, &setup, rows.len(), &instances, observer)?;
    Ok(Replayed {
        instances,
        runs,
        failures,
    })
}

/// The baselines' parameters of `config`, checked against its policies.
pub(crate) fn baseline_params(config: &ReplayConfig) -> Result<BaselineParams, ReplayError> {
    config.baselines.params(&config.policies)
}
