//! `dmlsched`: the crate's algorithms on files, from the command line.
//!
//! ```text
//! dmlsched solve --algorithm gadget instance.json [--params params.json] [--seed N] [--out DIR]
//! dmlsched simulate instance.json --policies fifo,gadget [--out DIR]
//! ```
//!
//! Run `dmlsched --help` and `dmlsched <command> --help` for every option.
//! Bad input (a missing or malformed file, invalid parameters, an invalid
//! instance) exits with code 2 and a one-line message; a run that fails
//! exits with code 1. A reader that stops reading (`| head`) ends the
//! output quietly: the rest of the output is dropped, the run finishes.

/// `println!` for a command's output (use it instead of `println!`): once
/// standard output is closed (`dmlsched … | head`), output is dropped
/// quietly instead of panicking on `EPIPE`.
macro_rules! out {
    () => {
        $crate::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for a command's output (no newline), with [`out!`]'s handling
/// of a closed standard output.
macro_rules! out_raw {
    ($($arg:tt)*) => {
        $crate::write_out(format_args!($($arg)*))
    };
}

mod allocate;
mod pcip;
mod policies;
mod replay;
mod session;
mod simulate;
mod solve;
mod summary;
mod sweep;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Scheduling algorithms for distributed machine-learning jobs on shared GPU
/// clusters, with certificates.
#[derive(Debug, Parser)]
#[command(name = "dmlsched", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one algorithm on an instance file: the schedule is verified, and
    /// the schedule and its certificate are printed (and written as JSON
    /// with --out).
    Solve(solve::SolveArgs),
    /// Run the simulator on an instance file (its jobs arriving as given)
    /// under baselines and algorithm policies: a summary table, and CSV
    /// tables and SVG plots with --out.
    Simulate(simulate::SimulateArgs),
    /// Replay a window of a real cluster trace (Philly, ITP, Gavel,
    /// Tiresias, Alibaba) under baselines and algorithm policies, OASiS
    /// included: a summary table, and CSV tables and SVG plots with --out.
    Replay(Box<replay::ReplayArgs>),
    /// Run a grid of replays (trace windows × clusters × parameter sets ×
    /// load scales × seeds × policies) or simulations, resumable: finished
    /// cells are kept in --out and skipped on the next run; --shard runs one
    /// slice of a batch array, --merge joins the slices into one table.
    Sweep(Box<sweep::SweepArgs>),
    /// Solve a packing–covering program from a JSON file (the format of
    /// docs/pcip-format.md) with the crate's rounding pipeline, or exactly
    /// with --exact.
    Pcip(pcip::PcipArgs),
    /// Allocate GPU types to jobs with a heterogeneity-aware policy (max-min
    /// fairness, finish-time fairness, max-sum throughput, throughput per
    /// cost, min makespan, FIFO) from a JSON input
    /// (docs/allocate-format.md): the time fractions and their certificate,
    /// as JSON.
    Allocate(allocate::AllocateArgs),
    /// Decide jobs one by one over a shared cluster state, as a line
    /// protocol: one JSON event per line on standard input (submit, finish,
    /// cancel, extend, usage, certificate, save), one JSON line per event
    /// on standard output (docs/session-protocol.md).
    Session(session::SessionArgs),
}

/// Why a command failed: bad input (exit code 2) or a failed run (1).
#[derive(Debug)]
pub(crate) enum CliError {
    /// A file that cannot be read or parsed, invalid parameters or an
    /// invalid instance.
    Input(String),
    /// The algorithm or a check failed on valid input.
    Run(String),
}

impl CliError {
    /// Bad input about `path`.
    pub(crate) fn input(path: &std::path::Path, e: impl std::fmt::Display) -> Self {
        CliError::Input(format!("{}: {e}", path.display()))
    }

    /// A library error in `context`: bad input when [`dmlsched::Error::is_input`]
    /// says so (a job or cluster outside the algorithm's model, an invalid
    /// option), a failed run otherwise.
    pub(crate) fn lib(context: &str, e: &dmlsched::Error) -> Self {
        let m = format!("{context}: {e}");
        if e.is_input() {
            CliError::Input(m)
        } else {
            CliError::Run(m)
        }
    }
}

impl From<dmlsched::replay::ReplayError> for CliError {
    fn from(e: dmlsched::replay::ReplayError) -> Self {
        if e.is_input() {
            CliError::Input(e.message())
        } else {
            CliError::Run(e.message())
        }
    }
}

/// Set once standard output is closed: further output is dropped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `args` to standard output ([`out!`], [`out_raw!`]). A closed
/// pipe (`EPIPE`) drops this and every later write quietly, so the command
/// still finishes (and writes its `--out` files); any other write error
/// is reported once on standard error and also drops the output.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("note: standard output: {e}; the rest of the output is dropped");
        }
    }
}

/// Reads `path` as UTF-8 text.
pub(crate) fn read(path: &PathBuf) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::input(path, e))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Solve(args) => solve::run(&args),
        Command::Simulate(args) => simulate::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Sweep(args) => sweep::run_command(&args),
        Command::Pcip(args) => pcip::run(&args),
        Command::Session(args) => session::run(&args),
        Command::Allocate(args) => allocate::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Run(m)) => {
            eprintln!("error: {m}");
            ExitCode::FAILURE
        }
    }
}
