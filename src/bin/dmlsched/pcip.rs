//! `dmlsched pcip`: a packing–covering program from a JSON file.

use std::path::PathBuf;

use clap::Args;
use dmlsched::pcip::{ExactMode, PcProblem, RoundingSolver};

use crate::{CliError, read};

#[derive(Debug, Args)]
pub(crate) struct PcipArgs {
    /// The program (JSON, the format of docs/pcip-format.md; known-answer
    /// programs are in examples/pcip/).
    problem: PathBuf,
    /// Seed of the randomised rounding.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Rounding trials [default: the solver's].
    #[arg(long, value_name = "K")]
    trials: Option<u32>,
    /// Solve the exact MIP (its optimum is returned when proven).
    #[arg(long)]
    exact: bool,
    /// Bound on the whole call (LP, MIP, rounding trials, repair and the
    /// neighbourhood search together), seconds (> 0): it answers within
    /// about max(S, 1 s). If the LP relaxation has not finished by the
    /// limit, the answer is a greedy feasible point built after it in
    /// O(nnz) time, with the trivial bound; if no greedy point exists, it
    /// exits 2 with a `time limit` error.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    time_limit: Option<String>,
    /// Skip the sub-MIP neighbourhood search around the best rounded point.
    #[arg(long)]
    no_neighbourhood: bool,
    /// Seconds to spend, after the trials, on the exact MIP's dual bound (a
    /// tighter certified bound than the LP's; its incumbent is returned when
    /// better).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    bound_budget: Option<String>,
}

/// `dmlsched pcip`: prints one JSON object `{"x", "objective", "method",
/// "certificate", "trials"}` (infinities as the string "inf").
pub(crate) fn run(args: &PcipArgs) -> Result<(), CliError> {
    let mut solver = RoundingSolver {
        seed: args.seed,
        ..RoundingSolver::default()
    };
    if let Some(k) = args.trials {
        solver.trials = k;
    }
    if args.exact {
        solver.exact = ExactMode::Always;
    }
    if args.no_neighbourhood {
        solver.neighbourhood = None;
    }
    solver.bound_budget_s = seconds("--bound-budget", args.bound_budget.as_deref())?;
    if let Some(s) = seconds("--time-limit", args.time_limit.as_deref())? {
        solver.time_limit_s = Some(s);
        solver.mip.limits.time_limit_s = s;
    }
    let text = read(&args.problem)?;
    let problem = PcProblem::from_json(&text).map_err(|e| CliError::input(&args.problem, e))?;
    let sol = solver
        .solve(&problem)
        .map_err(|e| CliError::lib(&args.problem.display().to_string(), &e.into()))?;
    let out = serde_json::json!({
        "x": sol.x,
        "objective": sol.objective,
        "method": sol.method,
        "certificate": sol.certificate,
        "trials": sol.trials,
    });
    out!("{out}");
    Ok(())
}

/// A flag's number of seconds: finite and positive, else one input error
/// naming the flag and the value as given (read here rather than by the
/// argument parser, so that `-1` is a value, not an unknown flag).
fn seconds(flag: &str, given: Option<&str>) -> Result<Option<f64>, CliError> {
    let Some(text) = given else {
        return Ok(None);
    };
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(Some(s)),
        _ => Err(CliError::Input(format!(
            "{flag} must be a positive, finite number of seconds, got `{}`",
            text.chars().take(40).collect::<String>()
        ))),
    }
}
