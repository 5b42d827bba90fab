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
    /// Bound on the whole solve (LP, MIP, trials and the neighbourhood
    /// search together), seconds. If the LP relaxation does not finish in
    /// time, the answer is a greedy feasible point with the trivial bound.
    #[arg(long, value_name = "S")]
    time_limit: Option<f64>,
    /// Skip the sub-MIP neighbourhood search around the best rounded point.
    #[arg(long)]
    no_neighbourhood: bool,
    /// Seconds to spend, after the trials, on the exact MIP's dual bound (a
    /// tighter certified bound than the LP's; its incumbent is returned when
    /// better).
    #[arg(long, value_name = "S")]
    bound_budget: Option<f64>,
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
    solver.bound_budget_s = args.bound_budget;
    if let Some(s) = args.time_limit {
        if !(s.is_finite() && s > 0.0) {
            return Err(CliError::Input(format!(
                "--time-limit must be a positive number of seconds, got {s}"
            )));
        }
        solver.time_limit_s = Some(s);
        solver.mip.time_limit_s = s;
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
