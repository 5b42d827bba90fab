//! Solve a mixed packing–covering integer program from a JSON file.
//!
//! ```text
//! pcip_solve <PROBLEM.json> [--seed N] [--trials K] [--exact] [--time-limit S]
//! ```
//!
//! The input format is in `docs/pcip-format.md`; known-answer instances are
//! in `examples/pcip/`. On success it prints one JSON object
//! `{"x", "objective", "method", "certificate", "trials"}` to stdout
//! (infinities as the string "inf"); on failure a JSON object
//! `{"error", "message"}` to stderr and exit code 2.
//!
//! `--exact` forces the exact MIP (its optimum is returned when proven);
//! `--time-limit` bounds the whole solve (LP, MIP and trials together).

use std::process::ExitCode;

use dmlsched::pcip::{ExactMode, PcProblem, RoundingSolver};

const USAGE: &str =
    "usage: pcip_solve <PROBLEM.json> [--seed N] [--trials K] [--exact] [--time-limit S]";

fn fail(kind: &str, message: impl std::fmt::Display) -> ExitCode {
    let err = serde_json::json!({ "error": kind, "message": message.to_string() });
    eprintln!("{err}");
    ExitCode::from(2)
}

fn value<T: std::str::FromStr>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
) -> Result<T, String> {
    let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse().map_err(|_| format!("{flag}: cannot parse {v:?}"))
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut solver = RoundingSolver::default();
    while let Some(a) = args.next() {
        let parsed = match a.as_str() {
            "--seed" => value(&mut args, "--seed").map(|v| solver.seed = v),
            "--trials" => value(&mut args, "--trials").map(|v| solver.trials = v),
            "--exact" => {
                solver.exact = ExactMode::Always;
                Ok(())
            }
            "--time-limit" => value::<f64>(&mut args, "--time-limit").and_then(|s| {
                if s.is_finite() && s > 0.0 {
                    solver.time_limit_s = Some(s);
                    solver.mip.time_limit_s = s;
                    Ok(())
                } else {
                    Err(format!(
                        "--time-limit must be a positive number of seconds, got {s}"
                    ))
                }
            }),
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other if other.starts_with('-') => Err(format!("unknown option {other}")),
            other if path.is_none() => {
                path = Some(other.to_string());
                Ok(())
            }
            other => Err(format!("unexpected argument {other}")),
        };
        if let Err(e) = parsed {
            return fail("usage", format!("{e}\n{USAGE}"));
        }
    }
    let Some(path) = path else {
        return fail("usage", USAGE);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return fail("io", format!("{path}: {e}")),
    };
    let problem = match PcProblem::from_json(&text) {
        Ok(p) => p,
        Err(e) => return fail("input", e),
    };
    match solver.solve(&problem) {
        Ok(sol) => {
            let out = serde_json::json!({
                "x": sol.x,
                "objective": sol.objective,
                "method": sol.method,
                "certificate": sol.certificate,
                "trials": sol.trials,
            });
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => fail("solve", e),
    }
}
