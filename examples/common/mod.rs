//! What the reproduction examples share: the entry point with its exit
//! codes, the parsers of counts and loads, and the mean with its standard
//! deviation. Each example compiles this module on its own (`mod common;`),
//! so a helper one example does not call is not dead code in the others.
#![allow(dead_code)]

use std::process::ExitCode;

/// Runs an example: `--help` prints `usage` (exit 0); bad arguments print
/// the error and `usage` (exit 2); a failed run prints its error (exit 1).
pub fn main<A>(
    usage: &str,
    parse: impl FnOnce(std::iter::Skip<std::env::Args>) -> Result<Option<A>, String>,
    run: impl FnOnce(&A) -> Result<(), String>,
) -> ExitCode {
    match parse(std::env::args().skip(1)) {
        Ok(None) => {
            print!("{usage}");
            ExitCode::SUCCESS
        }
        Ok(Some(args)) => match run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("error: {e}\n\n{usage}");
            ExitCode::from(2)
        }
    }
}

/// A count in `1..=max` given to `flag`.
pub fn parse_count(flag: &str, v: &str, max: u64) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(0) => Err(format!("{flag}: at least 1")),
        Ok(k) if k > max => Err(format!("{flag}: {k} is more than {max}")),
        Ok(k) => Ok(k),
        Err(e) => Err(format!("{flag} '{v}': {e}")),
    }
}

/// A comma-separated list of offered loads, each in (0, 100].
pub fn parse_loads(flag: &str, v: &str) -> Result<Vec<f64>, String> {
    let mut loads = Vec::new();
    for l in v.split(',') {
        let x: f64 = l.trim().parse().map_err(|e| format!("{flag} '{l}': {e}"))?;
        if !(x.is_finite() && x > 0.0 && x <= 100.0) {
            return Err(format!("{flag}: {x} is not in (0, 100]"));
        }
        loads.push(x);
    }
    Ok(loads)
}

/// Mean and sample standard deviation of the finite values (NaN, NaN when
/// there are none; a standard deviation of 0 for one value).
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var.sqrt())
}
