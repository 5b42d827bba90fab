//! Simulated runs of the SMD-style scheduler against the fixed-size and
//! elastic baselines on the layered workload: mean and tail JCT against the
//! load, the selection ablation, and the per-epoch gap `J/LP`.

use std::time::Instant;

use dmlsched::algorithms::smd::{Selection, SmdEpochReport, SmdParams, SmdScheduler};
use dmlsched::baselines::{Drf, Fifo, Optimus, Tiresias};
use dmlsched::sim::{Policy, SimOptions, SimResult, simulate};
use dmlsched::trace::TraceJob;

use dmlsched::algorithms::smd::workload::{
    SmdWorkload, SmdWorkloadOptions, generate, generate_from_trace,
};

/// The policies of the JCT-against-load comparison, in output order: the
/// SMD-style scheduler (default selection) and the four baselines.
pub const E2_POLICIES: [&str; 5] = ["smd", "optimus", "drf", "fifo", "tiresias"];

/// The SMD-style scheduler under each outer selection (the ablation).
pub const SELECTION_POLICIES: [&str; 4] = ["smd", "smd-joint", "smd-prefix", "smd-greedy"];

/// Every name [`policy`] knows.
pub const ALL_POLICIES: [&str; 8] = [
    "smd",
    "smd-joint",
    "smd-prefix",
    "smd-greedy",
    "optimus",
    "drf",
    "fifo",
    "tiresias",
];

/// A policy of the experiments, by name, for `workload`:
///
/// | name | policy |
/// |---|---|
/// | `smd` | [`SmdScheduler`] with [`SmdParams::default`] (`Best` selection; `Greedy` without the `highs` feature) |
/// | `smd-joint`, `smd-prefix`, `smd-greedy` | the same with [`Selection::Joint`], [`Selection::Prefix`], [`Selection::Greedy`] |
/// | `optimus` | [`Optimus::default`]: marginal gain on the layered timing oracle, misfits skipped |
/// | `drf` | [`Drf`] with bundles of four workers per PS |
/// | `fifo` | strict [`Fifo`] (no backfill) at each job's requested configuration |
/// | `tiresias` | [`Tiresias::default`] (three queues at 3,250 and 7,200 GPU-s) at each job's requested configuration |
///
/// `None` for another name, and for `smd-joint` and `smd-prefix` without
/// the `highs` feature.
pub fn policy(name: &str, workload: &SmdWorkload) -> Option<Box<dyn Policy>> {
    let smd = |selection| -> Box<dyn Policy> {
        let mut params = SmdParams::default();
        params.selection = selection;
        Box::new(SmdScheduler::new(params))
    };
    Some(match name {
        "smd" => Box::new(SmdScheduler::new(SmdParams::default())),
        "smd-joint" => smd(Selection::Joint),
        "smd-prefix" => smd(Selection::Prefix),
        "smd-greedy" => smd(Selection::Greedy),
        "optimus" => Box::new(Optimus::default()),
        "drf" => Box::new(Drf {
            workers_per_ps: Some(4),
            ..Drf::default()
        }),
        "fifo" => Box::new(Fifo {
            requests: workload.requests(),
            ..Fifo::default()
        }),
        "tiresias" => {
            let mut t = Tiresias::default();
            t.requests = workload.requests();
            Box::new(t)
        }
        _ => return None,
    })
}

/// Runs `name` on `workload` and returns the run and, for the SMD-style
/// scheduler, its epoch reports.
///
/// # Errors
///
/// [`SmdError::InvalidOption`](dmlsched::algorithms::smd::SmdError::InvalidOption)
/// for an unknown name; the simulator's errors.
pub fn run_policy(
    workload: &SmdWorkload,
    name: &str,
) -> dmlsched::Result<(SimResult, Vec<SmdEpochReport>)> {
    let opts = SimOptions::default();
    if let Some(selection) = smd_selection(name) {
        let mut params = SmdParams::default();
        params.selection = selection;
        let mut smd = SmdScheduler::new(params);
        let r = simulate(&workload.instance, &mut smd, &opts)?;
        return Ok((r, smd.reports().to_vec()));
    }
    let mut p = policy(name, workload).ok_or_else(|| unknown(name))?;
    Ok((simulate(&workload.instance, p.as_mut(), &opts)?, Vec::new()))
}

fn unknown(name: &str) -> dmlsched::Error {
    dmlsched::algorithms::smd::SmdError::InvalidOption {
        name: "policy",
        reason: format!(
            "unknown policy '{name}' (one of {})",
            ALL_POLICIES.join(", ")
        ),
    }
    .into()
}

/// The selection of an SMD-style policy name that this build can run.
fn smd_selection(name: &str) -> Option<Selection> {
    match name {
        "smd" => Some(SmdParams::default().selection),
        "smd-joint" => Some(Selection::Joint),
        "smd-prefix" => Some(Selection::Prefix),
        "smd-greedy" => Some(Selection::Greedy),
        _ => None,
    }
}

/// Where the arrivals of a run come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// Poisson arrivals ([`generate`]).
    Poisson,
    /// The arrival times and GPU counts of trace rows
    /// ([`generate_from_trace`]), e.g. a Philly window.
    Trace(Vec<TraceJob>),
}

impl Arrivals {
    /// `"poisson"` or `"trace"`.
    pub fn name(&self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Trace(_) => "trace",
        }
    }
}

/// Options of [`run_runs`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SmdRunOptions {
    /// Machines of 8 GPUs (default 16).
    pub machines: u32,
    /// Jobs per run (default 60).
    pub jobs: usize,
    /// Offered loads (default 0.3, 0.6, 0.9).
    pub loads: Vec<f64>,
    /// Seeds `0..seeds` per load (default 3).
    pub seeds: u64,
    /// Policies, names of [`ALL_POLICIES`] (default [`E2_POLICIES`]).
    pub policies: Vec<String>,
    /// The arrivals (default Poisson).
    pub arrivals: Arrivals,
}

impl Default for SmdRunOptions {
    fn default() -> Self {
        SmdRunOptions {
            machines: 16,
            jobs: 60,
            loads: vec![0.3, 0.6, 0.9],
            seeds: 3,
            policies: E2_POLICIES.iter().map(|s| s.to_string()).collect(),
            arrivals: Arrivals::Poisson,
        }
    }
}

/// One simulated run.
#[derive(Debug, Clone, PartialEq)]
pub struct SmdRunRow {
    /// The offered load.
    pub load: f64,
    /// The seed.
    pub seed: u64,
    /// The policy's name.
    pub policy: String,
    /// Jobs in the run.
    pub jobs: usize,
    /// Jobs completed.
    pub completed: usize,
    /// Mean JCT of the completed jobs, seconds.
    pub mean_jct_s: f64,
    /// 95th percentile JCT (nearest rank), seconds.
    pub p95_jct_s: f64,
    /// Last completion minus first arrival, seconds.
    pub makespan_s: f64,
    /// Mean share of GPUs allocated.
    pub gpu_utilization: f64,
    /// Wall-clock seconds of the run.
    pub run_s: f64,
}

/// One epoch of an SMD-style run: the gap of its rounded plan to the LP.
#[derive(Debug, Clone, PartialEq)]
pub struct SmdEpochRow {
    /// The offered load.
    pub load: f64,
    /// The seed.
    pub seed: u64,
    /// The policy's name.
    pub policy: String,
    /// Jobs in the epoch program (`n`).
    pub jobs: usize,
    /// Capacity rows (`d`).
    pub rows: usize,
    /// Fractional groups of the LP (`|F|`).
    pub fractional: usize,
    /// The plan's cost `J` (as placed).
    pub objective: f64,
    /// The certificate's lower bound (the safe LP bound; the trivial
    /// bound without LP).
    pub bound: f64,
    /// Whether the bound is the LP's.
    pub lp: bool,
}

/// What [`run_runs`] returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmdRuns {
    /// One row per (load, seed, policy).
    pub runs: Vec<SmdRunRow>,
    /// One row per epoch of every SMD-style run.
    pub epochs: Vec<SmdEpochRow>,
}

/// The workload of `opts` at `load` and `seed`.
///
/// # Errors
///
/// As [`generate`] and [`generate_from_trace`].
pub fn workload(opts: &SmdRunOptions, load: f64, seed: u64) -> dmlsched::Result<SmdWorkload> {
    let mut w = SmdWorkloadOptions::default();
    w.machines = opts.machines;
    w.jobs = opts.jobs;
    w.load = load;
    w.seed = seed;
    match &opts.arrivals {
        Arrivals::Poisson => generate(&w),
        Arrivals::Trace(rows) => generate_from_trace(rows, &w),
    }
}

/// Runs every policy of `opts` at every load and seed on the workload of
/// [`workload`], and records every epoch of the SMD-style runs.
///
/// ```
/// use dmlsched_experiments::smd::{SmdRunOptions, run_runs};
/// let mut opts = SmdRunOptions::default();
/// opts.machines = 2;
/// opts.jobs = 4;
/// opts.loads = vec![0.5];
/// opts.seeds = 1;
/// opts.policies = vec!["smd".into(), "fifo".into()];
/// let out = run_runs(&opts)?;
/// assert_eq!(out.runs.len(), 2);
/// assert!(out.epochs.iter().all(|e| e.objective >= e.bound * (1.0 - 1e-9)));
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// An unknown policy name; the workload's and the simulator's errors.
pub fn run_runs(opts: &SmdRunOptions) -> dmlsched::Result<SmdRuns> {
    for name in &opts.policies {
        if smd_selection(name).is_none() && !ALL_POLICIES[4..].contains(&name.as_str()) {
            return Err(unknown(name));
        }
    }
    let mut out = SmdRuns::default();
    for &load in &opts.loads {
        for seed in 0..opts.seeds {
            let w = workload(opts, load, seed)?;
            for name in &opts.policies {
                let start = Instant::now();
                let (r, reports) = run_policy(&w, name)?;
                out.runs.push(run_row(load, seed, name, &r, start));
                out.epochs
                    .extend(reports.iter().map(|rep| epoch_row(load, seed, name, rep)));
            }
        }
    }
    Ok(out)
}

fn run_row(load: f64, seed: u64, name: &str, r: &SimResult, start: Instant) -> SmdRunRow {
    let s = r.summary();
    SmdRunRow {
        load,
        seed,
        policy: name.to_string(),
        jobs: s.jobs,
        completed: s.completed,
        mean_jct_s: s.avg_jct_s,
        p95_jct_s: s.p95_jct_s,
        makespan_s: s.makespan_s,
        gpu_utilization: s.gpu_utilization,
        run_s: start.elapsed().as_secs_f64(),
    }
}

fn epoch_row(load: f64, seed: u64, name: &str, rep: &SmdEpochReport) -> SmdEpochRow {
    let c = &rep.certificate;
    SmdEpochRow {
        load,
        seed,
        policy: name.to_string(),
        jobs: rep.lp_rows.saturating_sub(rep.capacity_rows),
        rows: rep.capacity_rows,
        fractional: rep.fractional_groups,
        objective: c.objective,
        bound: c.relaxation_bound.value,
        lp: c.relaxation_bound.kind == dmlsched::certificate::BoundKind::LpDualSafe,
    }
}

/// Means over the seeds of one (load, policy).
#[derive(Debug, Clone, PartialEq)]
pub struct SmdRunMean {
    /// The offered load.
    pub load: f64,
    /// The policy's name.
    pub policy: String,
    /// Runs averaged.
    pub seeds: usize,
    /// Mean over the seeds of the mean JCT, seconds.
    pub mean_jct_s: f64,
    /// Mean over the seeds of the p95 JCT, seconds.
    pub p95_jct_s: f64,
    /// Mean over the seeds of the makespan, seconds.
    pub makespan_s: f64,
    /// Completed jobs over all runs, as a share of the jobs.
    pub completed_share: f64,
}

/// The means over seeds of `runs`, per load (in first-seen order) and
/// policy (in first-seen order).
///
/// ```
/// use dmlsched_experiments::smd::{SmdRunRow, run_means};
/// let row = |seed, jct| SmdRunRow {
///     load: 0.5, seed, policy: "smd".into(), jobs: 2, completed: 2, mean_jct_s: jct,
///     p95_jct_s: jct, makespan_s: jct, gpu_utilization: 0.5, run_s: 0.0,
/// };
/// let m = run_means(&[row(0, 10.0), row(1, 20.0)]);
/// assert_eq!((m.len(), m[0].seeds, m[0].mean_jct_s), (1, 2, 15.0));
/// ```
pub fn run_means(runs: &[SmdRunRow]) -> Vec<SmdRunMean> {
    let mut keys: Vec<(f64, &str)> = Vec::new();
    for r in runs {
        if !keys.iter().any(|&(l, p)| l == r.load && p == r.policy) {
            keys.push((r.load, &r.policy));
        }
    }
    keys.iter()
        .map(|&(load, policy)| {
            let of: Vec<&SmdRunRow> = runs
                .iter()
                .filter(|r| r.load == load && r.policy == policy)
                .collect();
            let mean =
                |f: fn(&SmdRunRow) -> f64| of.iter().map(|r| f(r)).sum::<f64>() / of.len() as f64;
            let jobs: usize = of.iter().map(|r| r.jobs).sum();
            let done: usize = of.iter().map(|r| r.completed).sum();
            SmdRunMean {
                load,
                policy: policy.to_string(),
                seeds: of.len(),
                mean_jct_s: mean(|r| r.mean_jct_s),
                p95_jct_s: mean(|r| r.p95_jct_s),
                makespan_s: mean(|r| r.makespan_s),
                completed_share: done as f64 / jobs.max(1) as f64,
            }
        })
        .collect()
}

/// The median, 90th percentile (nearest rank) and maximum of the finite
/// `values`; `None` when there is none.
///
/// ```
/// use dmlsched_experiments::smd::quantiles;
/// assert_eq!(quantiles(&[3.0, 1.0, 2.0, f64::NAN]), Some((2.0, 3.0, 3.0)));
/// assert_eq!(quantiles(&[]), None);
/// ```
pub fn quantiles(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let last = *v.last()?;
    let q = dmlsched::sim::percentile;
    Some((q(&v, 0.5), q(&v, 0.9), last))
}
