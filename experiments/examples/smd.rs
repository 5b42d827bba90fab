//! The SMD-style scheduler (the crate's own design after the abstract of
//! Yu, Wu, Ji, Liu, IEEE INFOCOM 2021; not a reproduction of that paper)
//! against FIFO, Optimus-style marginal gain, DRF and Tiresias-like least
//! attained service on layered parameter-server jobs.
//!
//! * **Workload** (`experiments::smd`): AlexNet-, ResNet-, Inception- and
//!   transformer-like layer profiles on 16 machines of 8 GPUs; arrival
//!   times and GPU counts (hence the fixed-size baselines' requests and each
//!   job's worker cap) from a window of the Philly trace at
//!   `$DMLSCHED_TRACES/philly.csv`, scaled to each offered load; job types
//!   and sizes drawn with the seed. Without the trace (or with
//!   `--no-philly`) the arrivals are Poisson, and the output says so.
//! * **JCT against load**: mean JCT, p95 JCT and makespan per policy and
//!   load, means over the seeds; every epoch of the SMD-style runs gives
//!   its `J/LP`.
//! * **Selection ablation**: the SMD-style scheduler under the `Best`,
//!   `Joint`, `Prefix` and `Greedy` selections at the middle load.
//! * **Rounding quality** (with the `highs` feature): random epochs of up
//!   to 30 jobs, the rounded plan against the LP and the exact MIP.
//!
//! ```text
//! DMLSCHED_TRACES=../shared/traces cargo run --release -p dmlsched-experiments --example smd -- --out /tmp/smd
//! ```
//!
//! Run with `--help` for every option.

#[path = "../../examples/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dmlsched::report::plot::lines_svg;
use dmlsched_experiments::smd::{
    Arrivals, E2_POLICIES, SELECTION_POLICIES, SmdEpochRow, SmdRunOptions, SmdRunRow, philly_path,
    philly_window, quantiles, run_means, run_runs,
};

const USAGE: &str = "\
smd: the SMD-style scheduler against FIFO, Optimus-style, DRF and Tiresias-like on layered PS jobs

USAGE:
    smd [--out DIR] [--seeds K] [--loads LIST] [--jobs N] [--no-philly]

OPTIONS:
    --out <DIR>       output folder (created if missing)        [default: target/smd-example]
    --seeds <K>       seeds 0..K per load                       [default: 3]
    --loads <LIST>    offered GPU loads, comma-separated        [default: 0.05,0.3,0.9]
    --jobs <N>        jobs per run                              [default: 200]
    --no-philly       Poisson arrivals instead of the Philly window
    -h, --help        print this help

OUTPUT (in --out):
    smd_e2.csv        one row per run: experiment (e2 or e6), arrivals, load, seed, policy,
                      jobs, completed, mean_jct_s, p95_jct_s, makespan_s, gpu_utilization, run_s
    smd_epochs.csv    one row per epoch of the SMD-style runs: n, d, |F|, J, bound, J/LP
    smd_e5.csv        one row per random epoch: n, d, free share, LP, J, OPT, |F|, bound
    jct_vs_load.svg   mean JCT against the offered load, per policy
    e5_gap.svg        J/LP, J/OPT and bound/LP against the epoch's jobs
    summary.md        the tables
";

/// Why the joint plan alone does badly (see the selection ablation).
const JOINT_NOTE: &str = "`smd-joint` runs the joint program alone. A job's wait charge counts only the jobs \
ahead of it in shortest-first order, so a long job's charge is large and a short job's is close to its \
one-worker time: the program saves most by running the longest jobs and letting short ones wait, and does \
so again at every epoch. `smd` (Best) compares that plan with shortest-first prefix plans under the plan \
evaluator, which picks a prefix plan.\n\n";

struct Args {
    out: PathBuf,
    seeds: u64,
    loads: Vec<f64>,
    jobs: usize,
    philly: bool,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        out: PathBuf::from("target/smd-example"),
        seeds: 3,
        loads: vec![0.05, 0.3, 0.9],
        jobs: 200,
        philly: true,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--out" => a.out = PathBuf::from(value()?),
            "--seeds" => a.seeds = common::parse_count("--seeds", &value()?, 100_000)?,
            "--loads" => a.loads = common::parse_loads("--loads", &value()?)?,
            "--jobs" => a.jobs = common::parse_count("--jobs", &value()?, 100_000)? as usize,
            "--no-philly" => a.philly = false,
            other => return Err(format!("unknown argument '{other}' (see --help)")),
        }
    }
    Ok(Some(a))
}

/// The arrivals and a sentence saying where they come from.
fn arrivals(args: &Args) -> (Arrivals, String) {
    if !args.philly {
        return (Arrivals::Poisson, "Poisson arrivals (--no-philly).".into());
    }
    let Some(path) = philly_path().filter(|p| p.is_file()) else {
        return (
            Arrivals::Poisson,
            "No Philly trace ($DMLSCHED_TRACES/philly.csv): Poisson arrivals instead.".into(),
        );
    };
    match philly_window(&path, args.jobs) {
        Ok(rows) if rows.len() >= 2 => {
            let note = format!(
                "Arrival times and GPU counts of {} Philly jobs (1–16 GPUs) from {}, scaled to each load.",
                rows.len(),
                dmlsched_experiments::smd::PHILLY_START
            );
            (Arrivals::Trace(rows), note)
        }
        Ok(_) => (
            Arrivals::Poisson,
            "Philly window too small: Poisson arrivals instead.".into(),
        ),
        Err(e) => (
            Arrivals::Poisson,
            format!("Philly trace unusable ({e}): Poisson arrivals instead."),
        ),
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn runs_csv(tagged: &[(&str, &[SmdRunRow])], arrivals: &str) -> String {
    let mut csv = String::from(
        "experiment,arrivals,load,seed,policy,jobs,completed,mean_jct_s,p95_jct_s,makespan_s,gpu_utilization,run_s\n",
    );
    for (exp, rows) in tagged {
        for r in *rows {
            let _ = writeln!(
                csv,
                "{exp},{arrivals},{},{},{},{},{},{},{},{},{},{:.3}",
                r.load,
                r.seed,
                r.policy,
                r.jobs,
                r.completed,
                r.mean_jct_s,
                r.p95_jct_s,
                r.makespan_s,
                r.gpu_utilization,
                r.run_s
            );
        }
    }
    csv
}

fn epochs_csv(rows: &[SmdEpochRow]) -> String {
    let mut csv = String::from(
        "load,seed,policy,jobs,rows,fractional,objective,bound,lp_bound,j_over_bound\n",
    );
    for e in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{}",
            e.load,
            e.seed,
            e.policy,
            e.jobs,
            e.rows,
            e.fractional,
            e.objective,
            e.bound,
            e.lp,
            e.objective / e.bound
        );
    }
    csv
}

fn jct_svg(runs: &[SmdRunRow]) -> Result<String, String> {
    let means = run_means(runs);
    let points: Vec<(&str, f64, f64)> = means
        .iter()
        .map(|m| (m.policy.as_str(), m.load, m.mean_jct_s))
        .collect();
    lines_svg(
        &points,
        "Mean JCT against the offered load",
        "offered GPU load",
        "mean JCT (s)",
    )
    .map_err(|e| e.to_string())
}

fn e2_table(runs: &[SmdRunRow], out: &mut String) {
    let _ = writeln!(
        out,
        "| load | policy | seeds | mean JCT (s) | p95 JCT (s) | makespan (s) | completed |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for m in run_means(runs) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} | {:.0} | {:.0} | {:.1} % |",
            m.load,
            m.policy,
            m.seeds,
            m.mean_jct_s,
            m.p95_jct_s,
            m.makespan_s,
            100.0 * m.completed_share
        );
    }
    out.push('\n');
}

fn epoch_table(epochs: &[SmdEpochRow], out: &mut String) {
    let lp: Vec<&SmdEpochRow> = epochs
        .iter()
        .filter(|e| e.lp && e.policy == "smd")
        .collect();
    if lp.is_empty() {
        out.push_str("No LP epochs (the greedy selection has no LP bound).\n\n");
        return;
    }
    let ratio: Vec<f64> = lp.iter().map(|e| e.objective / e.bound).collect();
    let (med, p90, max) = quantiles(&ratio).unwrap_or((f64::NAN, f64::NAN, f64::NAN));
    let worst_f = lp.iter().map(|e| e.fractional).max().unwrap_or(0);
    let d = lp.iter().map(|e| e.rows).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "{} epochs with an LP: J/LP median {med:.6}, p90 {p90:.6}, max {max:.6}; largest |F| = {worst_f} (d = {d}).\n",
        lp.len()
    );
}

fn run(args: &Args) -> Result<(), String> {
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let (arr, note) = arrivals(args);
    println!("{note}");
    let arr_name = arr.name();
    let mut opts = SmdRunOptions::default();
    opts.jobs = args.jobs;
    opts.loads = args.loads.clone();
    opts.seeds = args.seeds;
    opts.policies = E2_POLICIES.iter().map(|s| s.to_string()).collect();
    opts.arrivals = arr;
    let e2 = run_runs(&opts).map_err(|e| format!("E2: {e}"))?;
    opts.loads = vec![args.loads[args.loads.len() / 2]];
    opts.policies = SELECTION_POLICIES.iter().map(|s| s.to_string()).collect();
    let e6 = run_runs(&opts).map_err(|e| format!("E6: {e}"))?;
    write(
        &args.out.join("smd_e2.csv"),
        &runs_csv(&[("e2", &e2.runs), ("e6", &e6.runs)], arr_name),
    )?;
    write(&args.out.join("smd_epochs.csv"), &epochs_csv(&e2.epochs))?;
    write(&args.out.join("jct_vs_load.svg"), &jct_svg(&e2.runs)?)?;
    let mut text = format!(
        "# SMD-style scheduler against the baselines\n\n{note}\n\n## Mean and p95 JCT against the offered load (means over seeds 0..{})\n\n",
        args.seeds
    );
    e2_table(&e2.runs, &mut text);
    text.push_str("## Gap to the LP bound in the simulated SMD-style epochs\n\n");
    epoch_table(&e2.epochs, &mut text);
    let _ = writeln!(text, "## Selection ablation at load {}\n", opts.loads[0]);
    e2_table(&e6.runs, &mut text);
    text.push_str(JOINT_NOTE);
    e5::section(args, &mut text)?;
    write(&args.out.join("summary.md"), &text)?;
    print!("{text}");
    println!(
        "wrote smd_e2.csv, smd_epochs.csv, smd_e5.csv, jct_vs_load.svg, e5_gap.svg and summary.md to {}",
        args.out.display()
    );
    Ok(())
}

/// Rounding quality on random epochs (needs the exact MIP).
mod e5 {
    use std::fmt::Write as _;

    use dmlsched::report::plot::lines_svg;
    use dmlsched_experiments::smd::{E5Options, E5Row, quantiles, run_e5};

    use super::{Args, write};

    fn csv(rows: &[E5Row]) -> String {
        let mut csv =
            String::from("jobs,instance,rows,free_share,lp,objective,opt,fractional,bound\n");
        for r in rows {
            let opt = r.opt.map_or(String::new(), |v| v.to_string());
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{opt},{},{}",
                r.jobs, r.instance, r.rows, r.free_share, r.lp, r.objective, r.fractional, r.bound
            );
        }
        csv
    }

    /// Per size: (n, J/LP, J/OPT, bound/LP, |F| max, d, (J−LP)/(bound−LP) max).
    fn stats(rows: &[E5Row], n: usize) -> Option<[(f64, f64, f64); 3]> {
        let of: Vec<&E5Row> = rows.iter().filter(|r| r.jobs == n).collect();
        let jl: Vec<f64> = of.iter().map(|r| r.objective / r.lp).collect();
        let jo: Vec<f64> = of
            .iter()
            .filter_map(|r| r.opt.map(|o| r.objective / o))
            .collect();
        let bl: Vec<f64> = of.iter().map(|r| r.bound / r.lp).collect();
        Some([quantiles(&jl)?, quantiles(&jo)?, quantiles(&bl)?])
    }

    pub fn section(args: &Args, text: &mut String) -> Result<(), String> {
        let opts = E5Options::default();
        let rows = run_e5(&opts).map_err(|e| format!("E5: {e}"))?;
        write(&args.out.join("smd_e5.csv"), &csv(&rows))?;
        let _ = writeln!(
            text,
            "## Rounding quality on random epochs ({} per size, joint program, exact MIP)\n\n\
             | n | J/LP median | J/LP max | J/OPT median | J/OPT max | max abs F | d | bound/LP median | max (J−LP)/(bound−LP) |\n\
             |---|---|---|---|---|---|---|---|---|",
            opts.instances
        );
        let mut points = Vec::new();
        for &n in &opts.sizes {
            let Some([jl, jo, bl]) = stats(&rows, n) else {
                continue;
            };
            let of = rows.iter().filter(|r| r.jobs == n);
            let f = of.clone().map(|r| r.fractional).max().unwrap_or(0);
            let d = of.clone().map(|r| r.rows).max().unwrap_or(0);
            let used = of
                .filter(|r| r.bound > r.lp)
                .map(|r| (r.objective - r.lp) / (r.bound - r.lp))
                .fold(0.0, f64::max);
            let _ = writeln!(
                text,
                "| {n} | {:.5} | {:.5} | {:.5} | {:.5} | {f} | {d} | {:.3} | {used:.4} |",
                jl.0, jl.2, jo.0, jo.2, bl.0
            );
            let x = n as f64;
            points.extend([
                ("J/LP median", x, jl.0),
                ("J/LP max", x, jl.2),
                ("J/OPT max", x, jo.2),
                ("bound/LP median", x, bl.0),
            ]);
        }
        text.push('\n');
        let svg = lines_svg(
            &points,
            "Rounding quality on random epochs",
            "jobs in the epoch",
            "ratio",
        )
        .map_err(|e| e.to_string())?;
        write(&args.out.join("e5_gap.svg"), &svg)
    }
}

fn main() -> ExitCode {
    common::main(USAGE, parse_args, run)
}
