//! Reproduces the OASiS paper's simulations (Bao et al., INFOCOM 2018):
//! Figure 3 (total utility of OASiS, FIFO, DRF, RRH and the Dorm-like MILP
//! against the number of jobs), Figure 5 (`OPT/OASiS` on small instances,
//! with the exact chunk-model MIP) and Figure 6 (OASiS with `U` misestimated
//! by a factor `φ`), under both price-bound rules.
//!
//! ```text
//! cargo run --release -p dmlsched-experiments --example oasis                       # reduced sizes, under a minute
//! cargo run --release -p dmlsched-experiments --example oasis -- --full --out /tmp/oasis   # the paper's sizes (hours)
//! cargo run --release -p dmlsched-experiments --example oasis -- --figure 3 --jobs 100,200 --seeds 3 --bounds both
//! ```
//!
//! Run with `--help` for every option. See `docs/reproduction.md` for the
//! numbers this produces next to the paper's.

#[path = "../../examples/common/mod.rs"]
mod common;

use dmlsched::algorithms::Algorithm;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use dmlsched::algorithms::oasis::{ExactOptions, Oasis, OasisParams, WorkModel, offline_optimum};
use dmlsched::baselines::{DormLike, DormParams, Drf, Fifo, Rrh};
use dmlsched::model::Instance;
use dmlsched::online::BoundsChoice;
use dmlsched::online::PdOptions;
use dmlsched::placement::PlacementRule;
use dmlsched::report::plot::lines_svg;
use dmlsched::sim::{Policy, PsTiming, SimOptions, StopAt, simulate};
use dmlsched_experiments::oasis::repro::{self, ReproParams};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

const USAGE: &str = "\
oasis: reproduce the OASiS paper's Figures 3, 5 and 6

USAGE:
    oasis [--figure 3|5|6] [--jobs N,N,...] [--seeds K] [--bounds eta|value-floor|both] [--out DIR] [--full]
          [--mip-limit S]

OPTIONS:
    --figure <F>          3, 5 or 6 (repeatable, or a list 3,6)     [default: all three]
    --jobs <N,N,...>      job counts of Figures 3 and 6             [default: 50,100; --full: 100,200,300,400]
    --seeds <K>           repetitions per point                     [default: 1; --full: 5]
    --bounds <B>          eta, value-floor or both                  [default: both]
    --out <DIR>           output folder (created if missing)        [default: oasis-out]
    --mip-limit <S>       time limit of each Fig. 5 MIP, seconds    [default: 10; --full: 120]
                          (at the limit the ratio uses the MIP's dual bound)
    --full                the paper's sizes: all Fig. 5 cells (MIPs up to 120 s each), every φ of Fig. 6
                          at every job count, Dorm 5 s per decision; takes hours
                          (reduced default: Fig. 5 servers 3, 6 and γ1 [50,100], [1,100] with 10 s MIPs;
                          Fig. 6 φ 0.2, 1, 10 at the largest job count; Dorm 1 s per decision, 10 s per run)
    -h, --help            print this help

OUTPUT (in --out), one long-format CSV (figure, point, policy, jobs, seed, bounds, phi, metric, value)
and one SVG per figure:
    fig3.csv, fig3.svg    total utility per scheduler against the number of jobs (T = 300, 50 + 50 servers)
    fig5.csv, fig5.svg    OPT/OASiS per server count and γ1 range (10 jobs, T = 10)
    fig6.csv, fig6.svg    OASiS's total utility per U scale φ against the number of jobs
    summary.md            means per point next to the paper's numbers
";

#[derive(Debug)]
struct Args {
    figures: Vec<u32>,
    jobs: Option<Vec<usize>>,
    seeds: Option<u64>,
    bounds: Vec<BoundsChoice>,
    out: PathBuf,
    full: bool,
    mip_limit_s: Option<f64>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        figures: Vec::new(),
        jobs: None,
        seeds: None,
        bounds: vec![
            BoundsChoice::Eta,
            BoundsChoice::ValueFloor { v_floor: None },
        ],
        out: PathBuf::from("oasis-out"),
        full: false,
        mip_limit_s: None,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--full" => a.full = true,
            "--figure" => {
                for f in value()?.split(',') {
                    match f.trim() {
                        "3" => a.figures.push(3),
                        "5" => a.figures.push(5),
                        "6" => a.figures.push(6),
                        other => {
                            return Err(format!("--figure: expected 3, 5 or 6, got '{other}'"));
                        }
                    }
                }
            }
            "--jobs" => {
                let v = value()?;
                let list = v
                    .split(',')
                    .map(|s| s.trim().parse::<usize>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("--jobs '{v}': {e}"))?;
                if list.is_empty() || list.contains(&0) {
                    return Err("--jobs: give positive job counts".into());
                }
                a.jobs = Some(list);
            }
            "--seeds" => a.seeds = Some(common::parse_count("--seeds", &value()?, u64::MAX)?),
            "--bounds" => {
                a.bounds = match value()?.as_str() {
                    "eta" => vec![BoundsChoice::Eta],
                    "value-floor" => vec![BoundsChoice::ValueFloor { v_floor: None }],
                    "both" => vec![
                        BoundsChoice::Eta,
                        BoundsChoice::ValueFloor { v_floor: None },
                    ],
                    other => {
                        return Err(format!(
                            "--bounds: expected eta, value-floor or both, got '{other}'"
                        ));
                    }
                }
            }
            "--out" => a.out = PathBuf::from(value()?),
            "--mip-limit" => {
                let v = value()?;
                let s: f64 = v.parse().map_err(|e| format!("--mip-limit '{v}': {e}"))?;
                if !(s.is_finite() && s > 0.0) {
                    return Err("--mip-limit: a positive number of seconds".into());
                }
                a.mip_limit_s = Some(s);
            }
            other => return Err(format!("unknown argument '{other}' (see --help)")),
        }
    }
    if a.figures.is_empty() {
        a.figures = vec![3, 5, 6];
    }
    a.figures.sort_unstable();
    a.figures.dedup();
    Ok(Some(a))
}

/// One long-format CSV row.
struct Row {
    figure: u32,
    point: String,
    policy: String,
    jobs: usize,
    seed: u64,
    bounds: String,
    phi: f64,
    metric: &'static str,
    value: f64,
}

fn write_csv(path: &std::path::Path, rows: &[Row]) -> Result<(), String> {
    let mut w = csv::Writer::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    w.write_record([
        "figure", "point", "policy", "jobs", "seed", "bounds", "phi", "metric", "value",
    ])
    .map_err(|e| e.to_string())?;
    for r in rows {
        w.write_record([
            r.figure.to_string(),
            r.point.clone(),
            r.policy.clone(),
            r.jobs.to_string(),
            r.seed.to_string(),
            r.bounds.clone(),
            r.phi.to_string(),
            r.metric.to_string(),
            r.value.to_string(),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())
}

fn write_svg(
    path: &std::path::Path,
    svg: Result<String, impl std::fmt::Display>,
) -> Result<(), String> {
    let svg = svg.map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))
}

/// Means of `metric` per (policy, x) in first-appearance order.
fn means(rows: &[Row], metric: &str, x: impl Fn(&Row) -> f64) -> Vec<(String, f64, f64, f64)> {
    let mut keys: Vec<(String, f64)> = Vec::new();
    for r in rows.iter().filter(|r| r.metric == metric) {
        let k = (r.policy.clone(), x(r));
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(p, xv)| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.metric == metric && r.policy == p && x(r) == xv)
                .map(|r| r.value)
                .collect();
            let (m, sd) = common::mean_sd(&v);
            (p, xv, m, sd)
        })
        .collect()
}

fn sim_options() -> SimOptions {
    let mut built = SimOptions::default();
    built.ps_timing = PsTiming::NoLocality;
    built.stop = StopAt::Horizon;
    built
}

/// Total utility and admitted jobs of a baseline run.
fn run_baseline(inst: &Instance, policy: &mut dyn Policy) -> Result<(f64, usize), String> {
    let r =
        simulate(inst, policy, &sim_options()).map_err(|e| format!("{}: {e}", policy.name()))?;
    let utility = r.jobs.iter().map(|j| j.utility).sum();
    let admitted = r.jobs.iter().filter(|j| !j.rejected).count();
    Ok((utility, admitted))
}

fn figure3(
    args: &Args,
    jobs: &[usize],
    seeds: u64,
    rows: &mut Vec<Row>,
    cert: &mut Option<String>,
) -> Result<(), String> {
    for &n in jobs {
        for seed in 0..seeds {
            let mut rng = ChaCha8Rng::seed_from_u64(repro::seed_for(3, n as u64, seed));
            let g =
                repro::generate(&mut rng, &ReproParams::figure3(n)).map_err(|e| e.to_string())?;
            let inst = &g.instance;
            let mut push = |policy: &str, bounds: &str, metric: &'static str, value: f64| {
                rows.push(Row {
                    figure: 3,
                    point: n.to_string(),
                    policy: policy.into(),
                    jobs: n,
                    seed,
                    bounds: bounds.into(),
                    phi: 1.0,
                    metric,
                    value,
                });
            };
            push("generator", "", "redraw_rate", g.redraw_rate());
            for b in &args.bounds {
                let t = Instant::now();
                let solved = Oasis::new({
                    let mut built = OasisParams::default();
                    built.bounds = *b;
                    built
                })
                .and_then(|o| o.solve(inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
                .map_err(|e| format!("OASiS: {e}"))?;
                solved
                    .certificate
                    .check(1e-9)
                    .map_err(|e| format!("certificate: {e}"))?;
                let rep = &solved.report;
                let label = format!("oasis ({})", b.name());
                push(&label, b.name(), "total_utility", rep.run.total_utility);
                push(&label, b.name(), "admission_rate", rep.admission_rate());
                push(&label, b.name(), "alpha", rep.run.alpha);
                push(&label, b.name(), "alpha_eff", rep.run.alpha_eff);
                push(&label, b.name(), "seconds", t.elapsed().as_secs_f64());
                if cert.is_none() {
                    *cert = Some(format!(
                        "Figure 3, {n} jobs, seed {seed}, {} bounds:\n{}",
                        b.name(),
                        solved.certificate
                    ));
                }
            }
            let mut sized_rng =
                ChaCha8Rng::seed_from_u64(repro::seed_for(3, n as u64, seed) ^ 0xF1F0);
            let fixed = repro::fixed_sizes(inst, &mut sized_rng).map_err(|e| e.to_string())?;
            let dorm_limits = if args.full {
                (5.0, None)
            } else {
                (1.0, Some(10.0))
            };
            let mut runs: Vec<(&str, &Instance, Box<dyn Policy>)> = vec![
                (
                    "fifo",
                    &fixed,
                    Box::new(Fifo {
                        backfill: false,
                        placement: PlacementRule::RoundRobin,
                        ..Fifo::default()
                    }),
                ),
                ("drf", inst, Box::new(Drf::default())),
                ("rrh", &fixed, Box::new(Rrh::default())),
                (
                    "dorm",
                    inst,
                    Box::new(DormLike::new({
                        let mut built = DormParams::default();
                        built.time_limit_s = dorm_limits.0;
                        built.total_budget_s = dorm_limits.1;
                        built
                    })),
                ),
            ];
            for (name, instance, policy) in &mut runs {
                let t = Instant::now();
                let (utility, admitted) = run_baseline(instance, policy.as_mut())?;
                push(name, "", "total_utility", utility);
                push(
                    name,
                    "",
                    "admission_rate",
                    admitted as f64 / instance.jobs().len().max(1) as f64,
                );
                push(name, "", "seconds", t.elapsed().as_secs_f64());
            }
            eprintln!("  fig 3: {n} jobs, seed {seed} done");
        }
    }
    Ok(())
}

fn figure5(args: &Args, seeds: u64, rows: &mut Vec<Row>) -> Result<(), String> {
    let (servers, ranges, default_limit): (Vec<u32>, Vec<(f64, f64)>, f64) = if args.full {
        (
            vec![3, 6, 9, 12],
            vec![(50.0, 100.0), (75.0, 100.0), (1.0, 100.0), (25.0, 100.0)],
            120.0,
        )
    } else {
        (vec![3, 6], vec![(50.0, 100.0), (1.0, 100.0)], 10.0)
    };
    let limit = args.mip_limit_s.unwrap_or(default_limit);
    for &n in &servers {
        for (gi, &g1) in ranges.iter().enumerate() {
            let point = format!("n{n}-g{}-{}", g1.0, g1.1);
            for seed in 0..seeds {
                let mut rng = ChaCha8Rng::seed_from_u64(repro::seed_for(
                    5,
                    u64::from(n) * 10 + gi as u64,
                    seed,
                ));
                let g = repro::generate(&mut rng, &ReproParams::figure5(n, g1))
                    .map_err(|e| e.to_string())?;
                let inst = &g.instance;
                let exact = offline_optimum(inst, &{
                    let mut built = ExactOptions::default();
                    built.limits.time_limit_s = limit;
                    built.work_model = WorkModel::Chunks;
                    built
                })
                .map_err(|e| format!("exact MIP: {e}"))?;
                for b in &args.bounds {
                    let solved = Oasis::new({
                        let mut built = OasisParams::default();
                        built.bounds = *b;
                        built
                    })
                    .and_then(|o| o.solve(inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
                    .map_err(|e| format!("OASiS: {e}"))?;
                    let mut cert = solved.certificate.clone();
                    cert.exact = Some(exact.exact_info());
                    cert.check(1e-6)
                        .map_err(|e| format!("certificate with OPT: {e}"))?;
                    let alg = solved.report.run.total_utility;
                    let label = format!("oasis ({})", b.name());
                    let mut push = |metric: &'static str, value: f64| {
                        rows.push(Row {
                            figure: 5,
                            point: point.clone(),
                            policy: label.clone(),
                            jobs: inst.jobs().len(),
                            seed,
                            bounds: b.name().into(),
                            phi: 1.0,
                            metric,
                            value,
                        });
                    };
                    push("servers", f64::from(n));
                    push("gamma1_low", g1.0);
                    push("alg", alg);
                    push("opt", exact.objective);
                    push("opt_upper", exact.upper_bound);
                    push("optimal", if exact.optimal { 1.0 } else { 0.0 });
                    push("mip_seconds", exact.seconds);
                    push("alpha", solved.report.run.alpha);
                    if exact.upper_bound > 0.0 {
                        // Upper bound on OPT/ALG (the MIP's dual bound when
                        // the limit was hit) and the incumbent's ratio.
                        push("ratio", exact.ratio_bound_over(alg));
                        if alg > 0.0 {
                            push("ratio_incumbent", exact.objective / alg);
                        }
                    } else {
                        push("opt_zero", 1.0);
                    }
                }
            }
            eprintln!("  fig 5: {point} done");
        }
    }
    Ok(())
}

fn figure6(args: &Args, jobs: &[usize], seeds: u64, rows: &mut Vec<Row>) -> Result<(), String> {
    let phis: Vec<f64> = if args.full {
        vec![0.2, 0.5, 1.0, 3.0, 5.0, 10.0]
    } else {
        vec![0.2, 1.0, 10.0]
    };
    // Reduced run: the largest job count only (the paper's differences
    // appear under load).
    let jobs: Vec<usize> = if args.full || args.jobs.is_some() {
        jobs.to_vec()
    } else {
        jobs.iter().copied().max().into_iter().collect()
    };
    for &n in &jobs {
        for seed in 0..seeds {
            let mut rng = ChaCha8Rng::seed_from_u64(repro::seed_for(6, n as u64, seed));
            let g =
                repro::generate(&mut rng, &ReproParams::figure6(n)).map_err(|e| e.to_string())?;
            for b in &args.bounds {
                for &phi in &phis {
                    // Figure 6 needs no final dual: the certificate keeps the
                    // trivial bound, which is the tighter one on these
                    // instances anyway (docs/benchmarks.md).
                    let mut pd = PdOptions::default();
                    pd.recompute_final_dual = false;
                    let solved = Oasis::new({
                        let mut built = OasisParams::default();
                        built.bounds = *b;
                        built.u_scale = phi;
                        built.pd = pd;
                        built
                    })
                    .and_then(|o| {
                        o.solve(&g.instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
                    })
                    .map_err(|e| format!("OASiS: {e}"))?;
                    solved
                        .certificate
                        .check(1e-9)
                        .map_err(|e| format!("certificate: {e}"))?;
                    let label = format!("{} φ={phi}", b.name());
                    for (metric, value) in [
                        ("total_utility", solved.report.run.total_utility),
                        ("admission_rate", solved.report.admission_rate()),
                        ("alpha", solved.report.run.alpha),
                    ] {
                        rows.push(Row {
                            figure: 6,
                            point: n.to_string(),
                            policy: label.clone(),
                            jobs: n,
                            seed,
                            bounds: b.name().into(),
                            phi,
                            metric,
                            value,
                        });
                    }
                }
            }
            eprintln!("  fig 6: {n} jobs, seed {seed} done");
        }
    }
    Ok(())
}

fn run(args: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let jobs = args.jobs.clone().unwrap_or_else(|| {
        if args.full {
            vec![100, 200, 300, 400]
        } else {
            vec![50, 100]
        }
    });
    let seeds = args.seeds.unwrap_or(if args.full { 5 } else { 1 });
    let mut summary = String::from("# OASiS reproduction (examples/oasis.rs)\n\n");
    let _ = writeln!(
        summary,
        "crate {} · seeds {seeds} · jobs {jobs:?} · full {}\n",
        env!("CARGO_PKG_VERSION"),
        args.full
    );
    let mut certificate = None;
    for &f in &args.figures {
        let t = Instant::now();
        let mut rows = Vec::new();
        let (title, x_desc, y_desc, metric): (&str, &str, &str, &str) = match f {
            3 => {
                figure3(args, &jobs, seeds, &mut rows, &mut certificate)?;
                (
                    "OASiS Fig. 3: total utility (T = 300)",
                    "jobs",
                    "total utility",
                    "total_utility",
                )
            }
            5 => {
                figure5(args, seeds, &mut rows)?;
                (
                    "OASiS Fig. 5: OPT / OASiS (10 jobs, T = 10)",
                    "servers",
                    "OPT / ALG",
                    "ratio",
                )
            }
            _ => {
                figure6(args, &jobs, seeds, &mut rows)?;
                (
                    "OASiS Fig. 6: total utility with U scaled by φ",
                    "jobs",
                    "total utility",
                    "total_utility",
                )
            }
        };
        write_csv(&args.out.join(format!("fig{f}.csv")), &rows)?;
        let x = |r: &Row| -> f64 {
            if f == 5 {
                r.point
                    .trim_start_matches('n')
                    .split('-')
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(f64::NAN)
            } else {
                r.jobs as f64
            }
        };
        let table = if f == 5 {
            // One line per (policy, γ1 range).
            let mut keyed: Vec<Row> = Vec::new();
            for r in rows.iter().filter(|r| r.metric == "ratio") {
                let g = r.point.split_once('-').map_or("", |(_, g)| g);
                keyed.push(Row {
                    policy: format!("{} {g}", r.policy),
                    point: r.point.clone(),
                    bounds: r.bounds.clone(),
                    ..*r
                });
            }
            means(&keyed, metric, x)
        } else {
            means(&rows, metric, x)
        };
        let points: Vec<(&str, f64, f64)> = table
            .iter()
            .map(|(p, x, m, _)| (p.as_str(), *x, *m))
            .collect();
        write_svg(
            &args.out.join(format!("fig{f}.svg")),
            lines_svg(&points, title, x_desc, y_desc),
        )?;
        let _ = writeln!(
            summary,
            "## Figure {f} ({:.1} s)\n\n| series | x | mean {metric} | sd |\n|---|---|---|---|",
            t.elapsed().as_secs_f64()
        );
        for (p, xv, m, sd) in &table {
            let _ = writeln!(summary, "| {p} | {xv} | {m:.3} | {sd:.3} |");
        }
        summary.push('\n');
        eprintln!("figure {f}: {:.1} s", t.elapsed().as_secs_f64());
    }
    std::fs::write(args.out.join("summary.md"), &summary).map_err(|e| e.to_string())?;
    print!("{summary}");
    if let Some(c) = certificate {
        println!("Certificate of one run (checked):\n{c}");
    }
    println!("wrote CSV, SVG and summary.md to {}", args.out.display());
    Ok(())
}

fn main() -> ExitCode {
    common::main(USAGE, parse_args, run)
}
