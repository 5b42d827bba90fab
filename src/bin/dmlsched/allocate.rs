//! `dmlsched allocate`: a heterogeneity-aware allocation policy on a JSON
//! input (docs/allocate-format.md), printed as JSON.

use std::path::PathBuf;

use clap::Args;
use dmlsched::allocate::{AllocationInput, AllocationPolicy, allocate};

use crate::CliError;

#[derive(Debug, Args)]
pub(crate) struct AllocateArgs {
    /// The input: GPU types with their counts, jobs with a throughput per
    /// type, and (for max-throughput-per-cost) prices
    /// (docs/allocate-format.md).
    input: PathBuf,
    /// The policy: max-min-fairness, max-min-fairness-perf,
    /// finish-time-fairness, max-sum-throughput, max-throughput-per-cost,
    /// min-makespan, fifo or fifo-perf.
    #[arg(long, value_name = "P")]
    policy: String,
}

/// `dmlsched allocate`.
pub(crate) fn run(args: &AllocateArgs) -> Result<(), CliError> {
    let policy: AllocationPolicy = args
        .policy
        .parse()
        .map_err(|e| CliError::Input(format!("--policy: {e}")))?;
    let text = crate::read(&args.input)?;
    let input = AllocationInput::from_json(&text).map_err(|e| CliError::input(&args.input, e))?;
    let answer = allocate(policy, &input).map_err(|e| {
        let m = format!("{}: {e}", args.input.display());
        if e.is_input() {
            CliError::Input(m)
        } else {
            CliError::Run(m)
        }
    })?;
    let text = serde_json::to_string_pretty(&answer.to_json())
        .map_err(|e| CliError::Run(format!("writing the answer: {e}")))?;
    out!("{text}");
    Ok(())
}
