//! `dmlsched simulate`: the simulator on an instance file under baselines
//! and algorithm policies.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use dmlsched::model::Instance;
use dmlsched::report::csv::{write_jobs_csv_runs, write_summary_csv, write_utilization_csv_runs};
use dmlsched::report::plot::{jct_cdf_svg, utilization_svg};
use dmlsched::report::{ReportError, RunMeta};
use dmlsched::sim::{SimOptions, SimResult, Solo, StopAt, simulate};

use crate::policies::{self, BaselineFlags};
use crate::summary;
use crate::{CliError, read};

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The instance (JSON, `Instance::from_json`); its jobs arrive as given.
    instance: PathBuf,
    /// Comma-separated policies: any baseline (fifo, fifo-backfill, sjf, drf,
    /// tetris, tiresias, ff-bandwidth, ff-bandwidth-backfill, proportional,
    /// optimus, rrh, dorm; for ring-all-reduce jobs also sjf-bco-online,
    /// rar-online-random, gadget-noprice), the algorithms oasis, locality,
    /// gadget and smd, and the allocation policies in round-based leases
    /// (gavel-max-min-fairness, gavel-max-min-fairness-perf,
    /// gavel-finish-time-fairness, gavel-max-sum-throughput,
    /// gavel-max-throughput-per-cost, gavel-min-makespan, gavel-fifo,
    /// gavel-fifo-perf).
    #[arg(long, value_delimiter = ',', required = true)]
    policies: Vec<String>,
    /// Parameters of an algorithm policy, `NAME=PARAMS.json` (repeatable;
    /// the JSON as for `solve --params`).
    #[arg(long = "params", value_name = "NAME=PARAMS.json")]
    params: Vec<String>,
    /// When the run stops: when every job is done, or at the instance's
    /// horizon (unfinished jobs earn nothing).
    #[arg(long, value_enum, default_value_t = Stop::AllDone)]
    stop: Stop,
    /// Ring-all-reduce jobs stop at their convergence iterations, when they
    /// have one (as the GADGET-style scheduler plans them).
    #[arg(long)]
    stop_at_convergence: bool,
    /// Seed of the randomised policies (locality, rar-online-random).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    baselines: BaselineFlags,
    /// Folder for summary.csv, jobs.csv, utilization.csv, jct_cdf.svg and
    /// utilization.svg (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Stop {
    /// Run until every job completed or was rejected.
    AllDone,
    /// Stop at the instance's horizon.
    Horizon,
}

fn create(path: &Path) -> Result<BufWriter<File>, CliError> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
}

/// What identifies the run of `policy` in the reports.
fn meta(args: &SimulateArgs, inst: &Instance, label: &str, policy: &str) -> RunMeta {
    RunMeta {
        policy: policy.to_string(),
        seed: args.seed,
        workload: label.to_string(),
        cluster: RunMeta::describe_cluster(inst.cluster()),
        load_scale: 1.0,
    }
}

/// Writes the CSV tables and SVG plots of `runs` to `dir`; returns the
/// plots written (a plot that cannot be drawn is a note on stderr).
fn write_outputs(
    dir: &Path,
    inst: &Instance,
    label: &str,
    args: &SimulateArgs,
    runs: &[(String, SimResult)],
    solos: &[Option<Solo>],
) -> Result<Vec<&'static str>, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::input(dir, e))?;
    let report = |e: ReportError| CliError::Run(e.to_string());
    let meta = |policy: &str| meta(args, inst, label, policy);
    let rows: Vec<_> = runs
        .iter()
        .map(|(n, r)| {
            let s = r
                .summary()
                .with_resource_use(&r.resource_use(inst))
                .with_fairness(r.fairness(solos));
            (meta(n), s)
        })
        .collect();
    write_summary_csv(create(&dir.join("summary.csv"))?, &rows).map_err(report)?;
    let metas: Vec<(RunMeta, &SimResult)> = runs.iter().map(|(n, r)| (meta(n), r)).collect();
    write_jobs_csv_runs(create(&dir.join("jobs.csv"))?, &metas).map_err(report)?;
    write_utilization_csv_runs(create(&dir.join("utilization.csv"))?, &metas).map_err(report)?;
    let refs: Vec<(&str, &SimResult)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    let mut written = Vec::new();
    // A plot that cannot be drawn is a note: the tables are written anyway.
    let plots = [
        (
            "jct_cdf.svg",
            jct_cdf_svg(&refs, &format!("{label}: completion times")),
        ),
        (
            "utilization.svg",
            utilization_svg(&refs, &format!("{label}: GPU utilization")),
        ),
    ];
    for (name, svg) in plots {
        match svg {
            Ok(svg) => {
                write_text(&dir.join(name), &svg)?;
                written.push(name);
            }
            Err(e) => out!("note: {name} not written: {e}"),
        }
    }
    Ok(written)
}

fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
}

/// `dmlsched simulate`.
pub(crate) fn run(args: &SimulateArgs) -> Result<(), CliError> {
    let text = read(&args.instance)?;
    let inst = Instance::from_json(&text).map_err(|e| CliError::input(&args.instance, e))?;
    let mut options = SimOptions::default();
    options.stop = match args.stop {
        Stop::AllDone => StopAt::AllDone,
        Stop::Horizon => StopAt::Horizon,
    };
    options.stop_at_convergence = args.stop_at_convergence;
    // Every policy is built before any run, so a bad name fails at once.
    policies::check_names(&args.policies)?;
    let baselines = args.baselines.params(&args.policies)?;
    let mut built = Vec::with_capacity(args.policies.len());
    for name in &args.policies {
        let name = name.trim();
        let p = policies::build(name, &inst, &args.params, args.seed, &baselines)?;
        built.push((name.to_string(), p));
    }
    let label = args
        .instance
        .file_name()
        .map_or_else(|| "instance".into(), |n| n.to_string_lossy().into_owned());
    let n = inst.jobs().len();
    out!(
        "{label}: {n} {} on {}\n",
        if n == 1 { "job" } else { "jobs" },
        RunMeta::describe_cluster(inst.cluster())
    );
    let mut runs = Vec::with_capacity(built.len());
    let mut notes = Vec::new();
    for (name, mut p) in built {
        let r = simulate(&inst, p.as_mut(), &options).map_err(|e| CliError::lib(&name, &e))?;
        notes.extend(p.notes().into_iter().map(|n| format!("{name}: {n}")));
        runs.push((name, r));
    }
    let metas: Vec<RunMeta> = runs
        .iter()
        .map(|(n, _)| meta(args, &inst, &label, n))
        .collect();
    // Each job alone on the empty cluster: the fairness metrics' reference.
    let solos = summary::solo_runs(&inst);
    summary::print_table(
        metas
            .iter()
            .zip(&runs)
            .map(|(m, (_, r))| (m, r, &inst, None, r.fairness(&solos))),
    );
    summary::print_rejections(metas.iter().zip(&runs).map(|(m, (_, r))| (m, r)));
    for n in &notes {
        out!("{n}");
    }
    if let Some(dir) = &args.out {
        let plots = write_outputs(dir, &inst, &label, args, &runs, &solos)?;
        let mut files = vec!["summary.csv", "jobs.csv", "utilization.csv"];
        files.extend(plots);
        out!("\nwrote {} to {}", files.join(", "), dir.display());
    }
    Ok(())
}
