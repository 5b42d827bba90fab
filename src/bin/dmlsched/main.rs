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
//! exits with code 1.

mod simulate;
mod solve;

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
