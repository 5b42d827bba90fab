//! `dmlsched simulate`: the simulator on an instance file under baselines
//! and algorithm policies.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use dmlsched::algorithms::gadget::{GadgetParams, GadgetPolicy};
use dmlsched::algorithms::locality::{LocalityParams, LocalityPolicy};
use dmlsched::algorithms::oasis::{OasisParams, OasisPolicy};
use dmlsched::baselines::{NAMES, RING_NAMES, by_name};
use dmlsched::model::Instance;
use dmlsched::sim::plot::{jct_cdf_svg, utilization_svg};
use dmlsched::sim::report::{RunMeta, write_jobs_csv, write_summary_csv, write_utilization_csv};
use dmlsched::sim::{Policy, SimOptions, SimResult, StopAt, simulate};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::solve::params;
use crate::{CliError, read};

/// The algorithms that also act as simulator policies.
const ALGORITHM_POLICIES: [&str; 3] = ["oasis", "locality", "gadget"];

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The instance (JSON, `Instance::from_json`); its jobs arrive as given.
    instance: PathBuf,
    /// Comma-separated policies: any baseline (fifo, fifo-backfill, sjf, drf,
    /// tetris, tiresias, ff-bandwidth, ff-bandwidth-backfill, proportional,
    /// optimus, rrh, dorm; for ring-all-reduce jobs also sjf-bco-online,
    /// rar-online-random, gadget-noprice) and the algorithms oasis, locality
    /// and gadget.
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

/// The parameters file given for `policy`, if any.
fn params_file<'a>(args: &'a SimulateArgs, policy: &str) -> Result<Option<&'a Path>, CliError> {
    let mut found = None;
    for p in &args.params {
        let Some((name, file)) = p.split_once('=') else {
            return Err(CliError::Input(format!(
                "--params {p}: expected NAME=PARAMS.json"
            )));
        };
        if !ALGORITHM_POLICIES.contains(&name) {
            return Err(CliError::Input(format!(
                "--params {p}: {name} takes no parameters file (one of {})",
                ALGORITHM_POLICIES.join(", ")
            )));
        }
        if name == policy {
            found = Some(Path::new(file));
        }
    }
    Ok(found)
}

/// The policy named `name` for `inst`.
fn policy(args: &SimulateArgs, name: &str, inst: &Instance) -> Result<Box<dyn Policy>, CliError> {
    let file = params_file(args, name)?;
    let build = |e: dmlsched::Error| CliError::Run(format!("{name}: {e}"));
    Ok(match name {
        "oasis" => Box::new(OasisPolicy::new(inst, &params::<OasisParams>(file)?).map_err(build)?),
        "locality" => {
            let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
            Box::new(
                LocalityPolicy::new(inst, &params::<LocalityParams>(file)?, &mut rng)
                    .map_err(build)?,
            )
        }
        "gadget" => {
            Box::new(GadgetPolicy::new(inst, &params::<GadgetParams>(file)?).map_err(build)?)
        }
        "rar-online-random" => Box::new(dmlsched::baselines::RarOnlineRandom::new(args.seed)),
        other => by_name(other).ok_or_else(|| {
            CliError::Input(format!(
                "unknown policy {other} (baselines: {}, {}; algorithms: {})",
                NAMES.join(", "),
                RING_NAMES.join(", "),
                ALGORITHM_POLICIES.join(", ")
            ))
        })?,
    })
}

fn create(path: &Path) -> Result<BufWriter<File>, CliError> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
}

/// Writes the CSV tables and SVG plots of `runs` to `dir`.
fn write_outputs(
    dir: &Path,
    inst: &Instance,
    label: &str,
    args: &SimulateArgs,
    runs: &[(String, SimResult)],
) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::input(dir, e))?;
    let report = |e: dmlsched::sim::report::ReportError| CliError::Run(e.to_string());
    let meta = |policy: &str| RunMeta {
        policy: policy.to_string(),
        seed: args.seed,
        workload: label.to_string(),
        cluster: RunMeta::describe_cluster(inst.cluster()),
        load_scale: 1.0,
    };
    let rows: Vec<_> = runs.iter().map(|(n, r)| (meta(n), r.summary())).collect();
    write_summary_csv(create(&dir.join("summary.csv"))?, &rows).map_err(report)?;
    let mut jobs = create(&dir.join("jobs.csv"))?;
    let mut util = create(&dir.join("utilization.csv"))?;
    for (i, (n, r)) in runs.iter().enumerate() {
        // The writers emit a header per call: keep the first one only.
        let mut j = Vec::new();
        write_jobs_csv(&mut j, &meta(n), r).map_err(report)?;
        let mut u = Vec::new();
        write_utilization_csv(&mut u, &meta(n), r).map_err(report)?;
        append_csv(&mut jobs, &j, i > 0).map_err(|e| CliError::Run(format!("jobs.csv: {e}")))?;
        append_csv(&mut util, &u, i > 0)
            .map_err(|e| CliError::Run(format!("utilization.csv: {e}")))?;
    }
    let refs: Vec<(&str, &SimResult)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    let title = format!("{label}: completion times");
    match jct_cdf_svg(&refs, &title) {
        Ok(svg) => write_text(&dir.join("jct_cdf.svg"), &svg)?,
        Err(e) => eprintln!("note: jct_cdf.svg not written: {e}"),
    }
    let svg = utilization_svg(&refs, &format!("{label}: GPU utilization")).map_err(report)?;
    write_text(&dir.join("utilization.svg"), &svg)
}

/// Appends CSV `bytes`, without its header line when `skip_header`.
fn append_csv(w: &mut impl std::io::Write, bytes: &[u8], skip_header: bool) -> std::io::Result<()> {
    let body = if skip_header {
        bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&bytes[bytes.len()..], |i| &bytes[i + 1..])
    } else {
        bytes
    };
    w.write_all(body)
}

fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
}

/// `dmlsched simulate`.
pub(crate) fn run(args: &SimulateArgs) -> Result<(), CliError> {
    let text = read(&args.instance)?;
    let inst = Instance::from_json(&text).map_err(|e| CliError::input(&args.instance, e))?;
    let options = SimOptions {
        stop: match args.stop {
            Stop::AllDone => StopAt::AllDone,
            Stop::Horizon => StopAt::Horizon,
        },
        stop_at_convergence: args.stop_at_convergence,
        ..SimOptions::default()
    };
    // Every policy is built before any run, so a bad name fails at once.
    let mut policies = Vec::with_capacity(args.policies.len());
    for name in &args.policies {
        policies.push((name.trim().to_string(), policy(args, name.trim(), &inst)?));
    }
    let label = args
        .instance
        .file_name()
        .map_or_else(|| "instance".into(), |n| n.to_string_lossy().into_owned());
    println!(
        "{label}: {} jobs on {}\n",
        inst.jobs().len(),
        RunMeta::describe_cluster(inst.cluster())
    );
    println!(
        "{:<24} {:>9} {:>9} {:>12} {:>12} {:>12} {:>8} {:>12}",
        "policy",
        "completed",
        "rejected",
        "mean JCT s",
        "p95 JCT s",
        "makespan s",
        "GPU use",
        "utility"
    );
    let mut runs = Vec::with_capacity(policies.len());
    for (name, mut p) in policies {
        let r = simulate(&inst, p.as_mut(), &options)
            .map_err(|e| CliError::Run(format!("{name}: {e}")))?;
        let s = r.summary();
        println!(
            "{name:<24} {:>9} {:>9} {:>12.1} {:>12.1} {:>12.1} {:>8.3} {:>12.2}",
            s.completed,
            s.rejected,
            s.avg_jct_s,
            s.p95_jct_s,
            s.makespan_s,
            s.gpu_utilization,
            s.total_utility
        );
        runs.push((name, r));
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, &inst, &label, args, &runs)?;
        println!(
            "\nwrote summary.csv, jobs.csv, utilization.csv and the plots to {}",
            dir.display()
        );
    }
    Ok(())
}
