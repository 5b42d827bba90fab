//! The packing–covering pipeline side by side with HiGHS's MIP on the
//! engine's benchmark family (`tests/common/placement.rs`), in one run.
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
//! often the pipeline is worse than the MIP; and the default's certified
//! gap (`objective / bound − 1`) with the LP bound and with the MIP's dual
//! bound after each budget (what `RoundingSolver::bound_budget_s` adds).
//! Gaps are `(objective − reference) / reference` in percent. Under a
//! budget the pipeline's neighbourhood search may use what is left of it
//! (no node limit, three free columns per row).

use std::process::ExitCode;
use std::time::Instant;

#[path = "../tests/common/placement.rs"]
mod family;
use dmlsched::pcip::{MipOptions, Neighbourhood, PcProblem, RoundingSolver, solve_exact};
use family::{BENCH_SIZES, placement};

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

/// Objective, certified bound and wall seconds of the pipeline (`None`:
/// no point). Under a budget the neighbourhood search may use what is left
/// of it (no node limit, three free columns per row).
fn pipeline(p: &PcProblem, seed: u64, limit: Option<f64>) -> (Option<f64>, f64, f64) {
    let mut s = RoundingSolver {
        seed,
        time_limit_s: limit,
        ..RoundingSolver::default()
    };
    if let Some(b) = limit {
        s.neighbourhood = Some(Neighbourhood {
            max_nodes: i32::MAX as u32,
            time_limit_s: Some(b),
            free_per_row: 3.0,
        });
    }
    let t = Instant::now();
    let r = s.solve(p).ok();
    let v = r.as_ref().map(|sol| sol.objective);
    let bound = r.map_or(f64::NAN, |sol| sol.certificate.best_bound());
    (v, bound, t.elapsed().as_secs_f64())
}

/// Incumbent, dual bound and wall seconds of the MIP under `limit`.
fn mip(p: &PcProblem, limit: f64) -> (Option<f64>, f64, f64) {
    let t = Instant::now();
    let mut opts = MipOptions::default();
    opts.limits.time_limit_s = limit;
    match solve_exact(p, &opts) {
        Ok(e) => (
            e.info.incumbent,
            e.info.dual_bound,
            t.elapsed().as_secs_f64(),
        ),
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
        // Certified gaps of the default objective: against its LP bound, and
        // against the MIP's dual bound after each budget and the long run.
        let mut certified = vec![vec![]; a.budgets.len() + 2];
        for seed in 0..a.seeds {
            let p = match placement(jobs, machines, seed) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{jobs}x{machines}: {e}");
                    return ExitCode::from(2);
                }
            };
            let (obj, lp_bound, s) = pipeline(&p, seed, None);
            let (long, bound, _) = mip(&p, a.long);
            let cert = |b: f64| obj.map_or(f64::NAN, |o| 100.0 * (o / b.max(lp_bound) - 1.0));
            certified[0].push(cert(lp_bound));
            certified[a.budgets.len() + 1].push(cert(bound));
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
                let (ob, _, _) = pipeline(&p, seed, Some(budget));
                let (mb, mbound, _) = mip(&p, budget);
                certified[b + 1].push(cert(mbound));
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
        summary += &format!(
            "; certified gap of the default: LP {:.3} %",
            median(certified[0].clone())
        );
        for (b, budget) in a.budgets.iter().enumerate() {
            summary += &format!(
                ", MIP dual {budget}s {:.3} %",
                median(certified[b + 1].clone())
            );
        }
        summary += &format!(
            ", MIP dual {}s {:.3} %",
            a.long,
            median(certified[a.budgets.len() + 1].clone())
        );
        println!("{summary}");
    }
    ExitCode::SUCCESS
}
