//! The packing–covering pipeline side by side with HiGHS's MIP on the
//! engine's benchmark family (`experiments::placement`), in one run.
//!
//! ```text
//! pcip_vs_mip [--seeds N] [--long S] [--budgets 0.3,1,3] [--sizes 50x20,200x50,500x100]
//! ```
//!
//! Per size and seed: the default pipeline (objective, wall seconds); the
//! pipeline and the MIP each under every wall-clock budget; the MIP under
//! the long budget (default 60 s; its incumbent is the reference and its
//! dual bound the best known bound). Prints one line per instance and a
//! summary per size: median gap of the default pipeline to the long MIP's
//! incumbent, median time, and per budget the median gaps of both and how
//! often the pipeline is worse than the MIP. Gaps are `(objective −
//! reference) / reference` in percent.

use std::process::ExitCode;
use std::time::Instant;

use dmlsched::experiments::placement::{BENCH_SIZES, placement};
use dmlsched::pcip::{MipOptions, PcProblem, RoundingSolver, solve_exact};

const USAGE: &str =
    "usage: pcip_vs_mip [--seeds N] [--long S] [--budgets 0.3,1,3] [--sizes 50x20,200x50]";

struct Args {
    seeds: u64,
    long: f64,
    budgets: Vec<f64>,
    sizes: Vec<(usize, usize)>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seeds: 5,
        long: 60.0,
        budgets: vec![0.3, 1.0, 3.0],
        sizes: BENCH_SIZES.to_vec(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut v = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let bad = |v: &str| format!("{flag}: cannot parse {v:?}");
        match flag.as_str() {
            "--seeds" => {
                let s = v()?;
                a.seeds = s.parse().map_err(|_| bad(&s))?;
            }
            "--long" => {
                let s = v()?;
                a.long = s.parse().map_err(|_| bad(&s))?;
            }
            "--budgets" => {
                let s = v()?;
                a.budgets = s
                    .split(',')
                    .map(|b| b.parse().map_err(|_| bad(&s)))
                    .collect::<Result<_, _>>()?;
            }
            "--sizes" => {
                let s = v()?;
                a.sizes = s
                    .split(',')
                    .map(|p| {
                        let (j, m) = p.split_once('x').ok_or_else(|| bad(&s))?;
                        Ok((
                            j.parse().map_err(|_| bad(&s))?,
                            m.parse().map_err(|_| bad(&s))?,
                        ))
                    })
                    .collect::<Result<_, String>>()?;
            }
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    let positive = |t: f64| t.is_finite() && t > 0.0;
    if !positive(a.long) || !a.budgets.iter().all(|&t| positive(t)) || a.seeds == 0 {
        return Err(format!("budgets and seeds must be positive\n{USAGE}"));
    }
    Ok(a)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let k = v.len();
    if k == 0 {
        f64::NAN
    } else if k % 2 == 1 {
        v[k / 2]
    } else {
        0.5 * (v[k / 2 - 1] + v[k / 2])
    }
}

/// Objective and wall seconds of the pipeline (`None`: no point).
fn pipeline(p: &PcProblem, seed: u64, limit: Option<f64>) -> (Option<f64>, f64) {
    let s = RoundingSolver {
        seed,
        time_limit_s: limit,
        ..RoundingSolver::default()
    };
    let t = Instant::now();
    let v = s.solve(p).ok().map(|sol| sol.objective);
    (v, t.elapsed().as_secs_f64())
}

/// Incumbent, dual bound and wall seconds of the MIP under `limit`.
fn mip(p: &PcProblem, limit: f64) -> (Option<f64>, f64, f64) {
    let t = Instant::now();
    let opts = MipOptions {
        time_limit_s: limit,
        ..MipOptions::default()
    };
    match solve_exact(p, &opts) {
        Ok(e) => (e.incumbent, e.dual_bound, t.elapsed().as_secs_f64()),
        Err(_) => (None, f64::NEG_INFINITY, t.elapsed().as_secs_f64()),
    }
}

fn gap(v: Option<f64>, reference: f64) -> f64 {
    v.map_or(f64::INFINITY, |v| 100.0 * (v - reference) / reference)
}

fn main() -> ExitCode {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "size | seed | default obj | s | MIP {}s obj | bound | per budget B: pipeline gap %, MIP gap %",
        a.long
    );
    for &(jobs, machines) in &a.sizes {
        let (mut gaps, mut secs, mut bound_gaps) = (vec![], vec![], vec![]);
        let mut per_budget = vec![(vec![], vec![], 0usize); a.budgets.len()];
        for seed in 0..a.seeds {
            let p = match placement(jobs, machines, seed) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{jobs}x{machines}: {e}");
                    return ExitCode::from(2);
                }
            };
            let (obj, s) = pipeline(&p, seed, None);
            let (long, bound, _) = mip(&p, a.long);
            let reference = match (long, obj) {
                (Some(l), Some(o)) => l.min(o),
                (Some(l), None) => l,
                (None, Some(o)) => o,
                (None, None) => f64::NAN,
            };
            gaps.push(gap(obj, reference));
            secs.push(s);
            bound_gaps.push(100.0 * (reference - bound) / reference);
            let mut line = format!(
                "{jobs}x{machines} | {seed} | {} | {s:.3} | {} | {bound:.3}",
                obj.map_or("-".into(), |v| format!("{v:.3}")),
                long.map_or("-".into(), |v| format!("{v:.3}")),
            );
            for (b, &budget) in a.budgets.iter().enumerate() {
                let (ob, _) = pipeline(&p, seed, Some(budget));
                let (mb, _, _) = mip(&p, budget);
                let (g_ours, g_mip) = (gap(ob, reference), gap(mb, reference));
                per_budget[b].0.push(g_ours);
                per_budget[b].1.push(g_mip);
                if g_ours > g_mip + 1e-9 {
                    per_budget[b].2 += 1;
                }
                line += &format!(" | {budget}s: {g_ours:.3}, {g_mip:.3}");
            }
            println!("{line}");
        }
        let mut summary = format!(
            "SUMMARY {jobs}x{machines}: default median gap {:.3} % (max {:.3}), median {:.3} s; reference − MIP bound median {:.3} %",
            median(gaps.clone()),
            gaps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            median(secs),
            median(bound_gaps)
        );
        for (b, budget) in a.budgets.iter().enumerate() {
            let (ours, theirs, worse) = &per_budget[b];
            summary += &format!(
                "; {budget}s: ours {:.3} %, MIP {:.3} %, ours worse in {worse}/{}",
                median(ours.clone()),
                median(theirs.clone()),
                ours.len()
            );
        }
        println!("{summary}");
    }
    ExitCode::SUCCESS
}
