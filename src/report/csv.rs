//! Run reports as CSV tables: one row per job, one row per run, and GPU
//! utilization over time.
//!
//! Every table starts with a header row. Columns are fixed and documented on
//! each writer, so a table loads the same way into a spreadsheet, pandas or
//! R. Each row carries the run's policy label and seed, so tables of several
//! runs can be concatenated (keep the first header) and grouped.
//!
//! # Numbers
//!
//! Floats are written with Rust's `{}` formatting, which is the shortest
//! text that reads back as the same `f64` (round-trip exact, never in
//! exponent notation); infinities are written `inf` / `-inf`. A missing
//! value — a `None` (a job that never started or never finished) or a `NaN`
//! (the mean JCT of a run in which no job completed) — is an empty cell.
//! Booleans are `true` / `false`.
//!
//! # Example
//!
//! ```
//! use dmlsched::baselines::Fifo;
//! use dmlsched::model::*;
//! use dmlsched::report::RunMeta;
//! use dmlsched::report::csv::{write_jobs_csv, write_summary_csv};
//! use dmlsched::sim::{simulate, SimOptions};
//!
//! let cap = Resources::zero().gpus(1.0).cpu_cores(8.0).memory(32e9).nic(10e9);
//! let cluster = Cluster::homogeneous(1, cap, 1e10);
//! let ps = PsJob {
//!     epochs: 1, data_chunks: 1, minibatches_per_chunk: 100,
//!     minibatch_compute_s: 0.5, gradient_bytes: 0.0,
//!     worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9).nic(1e9),
//!     ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
//!     max_workers: 1, max_ps: 1, ps_at_most_workers: true,
//!     sync: SyncMode::Synchronous, layers: None,
//! };
//! let jobs = vec![Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps))];
//! let inst = Instance::new(cluster, jobs, 60.0, 10)?;
//! let result = simulate(&inst, &mut Fifo::default(), &SimOptions::default())?;
//!
//! let meta = RunMeta {
//!     policy: "fifo".into(),
//!     seed: 7,
//!     workload: "one job".into(),
//!     cluster: RunMeta::describe_cluster(inst.cluster()),
//!     load_scale: 1.0,
//! };
//! let mut jobs_csv = Vec::new();
//! write_jobs_csv(&mut jobs_csv, &meta, &result)?;
//! let text = String::from_utf8(jobs_csv).unwrap();
//! assert!(text.lines().nth(1).unwrap().starts_with("fifo,7,0,0,0,50,50,0,"));
//!
//! let mut summary_csv = Vec::new();
//! write_summary_csv(&mut summary_csv, &[(meta, result.summary())])?;
//! # Ok::<(), dmlsched::Error>(())
//! ```

use std::io::Write;

use super::{ReportError, RunMeta, utilization_steps};
use crate::sim::{JobEnd, RunSummary, SimResult, Unfinished};

/// A float cell: `{}` formatting (round-trip exact), empty for `NaN`.
fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x}")
    }
}

/// Writes the cells of long tables one at a time, each formatted into one
/// reused buffer (the same text as [`num`] and `to_string`, with
/// no string allocated per cell).
struct Cells<W: Write> {
    out: csv::Writer<W>,
    buf: String,
}

impl<W: Write> Cells<W> {
    fn new(w: W, header: &[&str]) -> Result<Self, ReportError> {
        let mut out = csv::Writer::from_writer(w);
        out.write_record(header)?;
        Ok(Cells {
            out,
            buf: String::new(),
        })
    }

    /// A cell of `{}` formatting.
    fn show(&mut self, x: impl std::fmt::Display) -> Result<(), ReportError> {
        use std::fmt::Write as _;
        self.buf.clear();
        write!(self.buf, "{x}").expect("writing to a String");
        self.out.write_field(self.buf.as_bytes())?;
        Ok(())
    }

    /// An optional float cell: empty for `None` or `NaN`, else as
    /// [`num`].
    fn opt(&mut self, x: Option<f64>) -> Result<(), ReportError> {
        match x {
            Some(x) if !x.is_nan() => self.show(x),
            _ => self.text(""),
        }
    }

    /// A float cell as [`num`] writes it.
    fn num(&mut self, x: f64) -> Result<(), ReportError> {
        self.opt(Some(x))
    }

    fn text(&mut self, x: &str) -> Result<(), ReportError> {
        self.out.write_field(x)?;
        Ok(())
    }

    /// Ends the row.
    fn end(&mut self) -> Result<(), ReportError> {
        self.out.write_record(None::<&[u8]>)?;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ReportError> {
        self.out.flush()?;
        Ok(())
    }
}

/// Header of [`write_jobs_csv`].
pub const JOBS_HEADER: [&str; 17] = [
    "policy",
    "seed",
    "job",
    "arrival_s",
    "start_s",
    "finish_s",
    "jct_s",
    "queueing_s",
    "utility",
    "gpu_seconds",
    "preemptions",
    "reconfigurations",
    "admitted",
    "rejected",
    "completed",
    "rejection",
    "end",
];

/// Header of [`write_summary_csv`].
pub const SUMMARY_HEADER: [&str; 33] = [
    "policy",
    "seed",
    "workload",
    "cluster",
    "load_scale",
    "jobs",
    "completed",
    "rejected",
    "avg_jct_s",
    "p50_jct_s",
    "p95_jct_s",
    "p99_jct_s",
    "avg_queueing_s",
    "makespan_s",
    "gpu_utilization",
    "total_utility",
    "preemptions",
    "solver_time_s",
    "crate_version",
    "unfinished",
    "unfinished_never_admitted",
    "unfinished_no_room",
    "unfinished_horizon",
    "unfinished_stalled",
    "stalled",
    "utility_bound",
    "binding_resource",
    "binding_share",
    "ftf_rho_max",
    "ftf_rho_mean",
    "ftf_share_above_1",
    "jain_index",
    "worst_share",
];

/// Header of [`write_utilization_csv`].
pub const UTILIZATION_HEADER: [&str; 6] = [
    "policy",
    "seed",
    "time_s",
    "gpus_used",
    "gpus_total",
    "fraction",
];

/// Writes one row per job of `result`, in instance order, after the header
/// [`JOBS_HEADER`]:
///
/// | column | value |
/// |---|---|
/// | `policy`, `seed` | from `meta` |
/// | `job` | the job id (the number) |
/// | `arrival_s`, `start_s`, `finish_s` | seconds; start/finish empty if the job never started/finished |
/// | `jct_s`, `queueing_s` | `finish − arrival`, `start − arrival`; empty when undefined |
/// | `utility` | utility earned (0 if unfinished) |
/// | `gpu_seconds` | GPU-seconds held, reconfiguration included |
/// | `preemptions`, `reconfigurations` | counts |
/// | `admitted`, `rejected`, `completed` | `true` / `false` |
/// | `rejection` | why the policy rejected the job ([`Rejection`](crate::sim::Rejection)'s text), empty when it did not or did not say |
/// | `end` | the job's end state ([`JobRecord::end`](crate::sim::JobRecord::end)): `completed`, `rejected`, or why it is unfinished: `never_admitted`, `no_room`, `horizon`, `stalled` ([`Unfinished`]) |
///
/// # Errors
///
/// [`ReportError::Csv`] or [`ReportError::Io`] when writing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::RunMeta;
/// use dmlsched::sim::{SimOptions, simulate};
/// use dmlsched::report::csv::write_jobs_csv;
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 10, ..PsJob::default() }; // 10 s alone
/// let jobs = vec![Job::new(JobId(0), 0.0, work.clone()), Job::new(JobId(1), 5.0, work)];
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// let meta = RunMeta {
///     policy: "fifo".into(), seed: 7, workload: "two jobs".into(),
///     cluster: RunMeta::describe_cluster(instance.cluster()), load_scale: 1.0,
/// };
/// let mut out = Vec::new();
/// write_jobs_csv(&mut out, &meta, &result)?;
/// let text = String::from_utf8(out)?;
/// let rows: Vec<&str> = text.lines().collect();
/// assert!(rows[0].starts_with("policy,seed,job,arrival_s,start_s,finish_s,jct_s,queueing_s,"));
/// // Job 1 arrives at 5 s, waits for job 0 until 10 s, and finishes at 20 s.
/// assert_eq!(rows[2], "fifo,7,1,5,10,20,15,5,1,10,0,0,true,false,true,,completed");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_jobs_csv<W: Write>(
    w: W,
    meta: &RunMeta,
    result: &SimResult,
) -> Result<(), ReportError> {
    write_jobs_csv_runs(w, &[(meta.clone(), result)])
}

/// [`write_jobs_csv`] for several runs in one table: one header, then every
/// run's rows in the order given (tell runs apart by `policy` and `seed`).
///
/// # Errors
///
/// [`ReportError::Csv`] or [`ReportError::Io`] when writing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::RunMeta;
/// use dmlsched::sim::{SimOptions, simulate};
/// use dmlsched::report::csv::write_jobs_csv_runs;
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 10, ..PsJob::default() }; // 10 s alone
/// let jobs = vec![Job::new(JobId(0), 0.0, work.clone()), Job::new(JobId(1), 5.0, work)];
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// let meta = RunMeta {
///     policy: "fifo".into(), seed: 7, workload: "two jobs".into(),
///     cluster: RunMeta::describe_cluster(instance.cluster()), load_scale: 1.0,
/// };
/// let run = |seed| (RunMeta { seed, ..meta.clone() }, &result);
/// let mut out = Vec::new();
/// write_jobs_csv_runs(&mut out, &[run(1), run(2)])?;
/// let text = String::from_utf8(out)?;
/// // One header, then two rows per run, in the order given.
/// let seeds: Vec<&str> = text.lines().skip(1).map(|row| &row[5..6]).collect();
/// assert_eq!(seeds, ["1", "1", "2", "2"]); // each row starts `fifo,<seed>,`
/// assert_eq!(text.matches("policy,seed").count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_jobs_csv_runs<W: Write>(
    w: W,
    runs: &[(RunMeta, &SimResult)],
) -> Result<(), ReportError> {
    let mut out = Cells::new(w, &JOBS_HEADER)?;
    for (meta, result) in runs {
        let seed = meta.seed.to_string();
        for j in &result.jobs {
            out.text(&meta.policy)?;
            out.text(&seed)?;
            out.show(j.job.0)?;
            out.num(j.arrival_s)?;
            out.opt(j.start_s)?;
            out.opt(j.finish_s)?;
            out.opt(j.jct_s)?;
            out.opt(j.queueing_s)?;
            out.num(j.utility)?;
            out.num(j.gpu_seconds)?;
            out.show(j.preemptions)?;
            out.show(j.reconfigurations)?;
            out.show(j.admitted)?;
            out.show(j.rejected)?;
            out.show(j.finish_s.is_some())?;
            match &j.rejection {
                Some(r) => out.show(r)?,
                None => out.text("")?,
            }
            out.text(end_cell(&j.end()))?;
            out.end()?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The `end` cell of a job row.
fn end_cell(end: &JobEnd) -> &'static str {
    match end {
        JobEnd::Completed => "completed",
        JobEnd::Rejected { .. } => "rejected",
        JobEnd::Unfinished(u) => match u {
            Unfinished::NeverAdmitted => "never_admitted",
            Unfinished::NoRoom => "no_room",
            Unfinished::Horizon => "horizon",
            Unfinished::Stalled => "stalled",
        },
    }
}

/// Writes the header [`SUMMARY_HEADER`] and one row per run:
///
/// | column | value |
/// |---|---|
/// | `policy`, `seed`, `workload`, `cluster`, `load_scale` | from the [`RunMeta`] |
/// | `jobs`, `completed`, `rejected` | counts (`completed + rejected + unfinished = jobs`) |
/// | `avg_jct_s`, `p50_jct_s`, `p95_jct_s`, `p99_jct_s` | over completed jobs (nearest-rank percentiles); empty if none completed |
/// | `avg_queueing_s` | over started jobs; empty if none started |
/// | `makespan_s` | last completion − first arrival; empty if none completed |
/// | `gpu_utilization` | mean fraction of GPUs allocated |
/// | `total_utility` | sum of the jobs' utilities |
/// | `preemptions` | total |
/// | `solver_time_s` | `RunSummary::decision_time_s`: wall-clock seconds inside the policy (not reproducible) |
/// | `crate_version` | the version of `dmlsched` that wrote the row |
/// | `unfinished` | jobs neither completed nor rejected ([`RunSummary::unfinished`]) |
/// | `unfinished_never_admitted`, `unfinished_no_room`, `unfinished_horizon`, `unfinished_stalled` | the unfinished jobs by [`Unfinished`] reason (they add up to `unfinished`) |
/// | `stalled` | `true` when the run stalled ([`SimResult::stalled`]) |
/// | `utility_bound` | [`RunSummary::utility_bound`]: the policy's proven bound on the total utility in its own model (the simulator's accounting may differ: a run can realise more); empty without one |
/// | `binding_resource`, `binding_share` | `RunSummary::binding`: the resource with the largest mean share held (`GPU`, `CPU`, `memory`, `NIC`) and that share; empty without one |
/// | `ftf_rho_max`, `ftf_rho_mean`, `ftf_share_above_1`, `jain_index`, `worst_share` | `RunSummary::fairness` ([`SimResult::fairness`](crate::sim::SimResult::fairness)): the largest and mean finish-time fairness `ρ` of the completed jobs, the share of them with `ρ > 1`, Jain's index of their normalised throughputs `1/ρ`, and the worst-off job's `1/ρ`; empty without one |
///
/// The columns after `crate_version` came later; the earlier ones keep
/// their positions.
///
/// # Errors
///
/// [`ReportError::Csv`] or [`ReportError::Io`] when writing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::RunMeta;
/// use dmlsched::sim::{SimOptions, simulate};
/// use dmlsched::report::csv::write_summary_csv;
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 10, ..PsJob::default() }; // 10 s alone
/// let jobs = vec![Job::new(JobId(0), 0.0, work.clone()), Job::new(JobId(1), 5.0, work)];
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// let meta = RunMeta {
///     policy: "fifo".into(), seed: 7, workload: "two jobs".into(),
///     cluster: RunMeta::describe_cluster(instance.cluster()), load_scale: 1.0,
/// };
/// let mut out = Vec::new();
/// write_summary_csv(&mut out, &[(meta, result.summary())])?;
/// let text = String::from_utf8(out)?;
/// let rows: Vec<&str> = text.lines().collect();
/// assert!(rows[0].starts_with("policy,seed,workload,cluster,load_scale,jobs,completed,"));
/// // The cluster label holds a comma, so it is quoted; JCTs 10 and 15 s.
/// let expected = "fifo,7,two jobs,\"1 GPU, 1 per machine\",1,2,2,0,12.5,10,15,15,";
/// assert!(rows[1].starts_with(expected));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_summary_csv<W: Write>(
    w: W,
    rows: &[(RunMeta, RunSummary)],
) -> Result<(), ReportError> {
    let mut out = csv::Writer::from_writer(w);
    out.write_record(SUMMARY_HEADER)?;
    for (meta, s) in rows {
        out.write_record([
            meta.policy.clone(),
            meta.seed.to_string(),
            meta.workload.clone(),
            meta.cluster.clone(),
            num(meta.load_scale),
            s.jobs.to_string(),
            s.completed.to_string(),
            s.rejected.to_string(),
            num(s.avg_jct_s),
            num(s.p50_jct_s),
            num(s.p95_jct_s),
            num(s.p99_jct_s),
            num(s.avg_queueing_s),
            num(s.makespan_s),
            num(s.gpu_utilization),
            num(s.total_utility),
            s.preemptions.to_string(),
            num(s.decision_time_s),
            env!("CARGO_PKG_VERSION").to_string(),
            s.unfinished.to_string(),
            s.unfinished_by.never_admitted.to_string(),
            s.unfinished_by.no_room.to_string(),
            s.unfinished_by.horizon.to_string(),
            s.unfinished_by.stalled.to_string(),
            s.stalled.to_string(),
            s.utility_bound.map(num).unwrap_or_default(),
            s.binding.as_ref().map(|b| b.0.clone()).unwrap_or_default(),
            s.binding.as_ref().map(|b| num(b.1)).unwrap_or_default(),
            fair(s, |f| f.max_rho),
            fair(s, |f| f.mean_rho),
            fair(s, |f| f.share_rho_above_1),
            fair(s, |f| f.jain),
            fair(s, |f| f.worst_share),
        ])?;
    }
    out.flush()?;
    Ok(())
}

/// A fairness metric of `s`, or an empty cell.
fn fair(s: &RunSummary, metric: fn(&crate::sim::Fairness) -> f64) -> String {
    s.fairness
        .as_ref()
        .map(|f| num(metric(f)))
        .unwrap_or_default()
}

/// Writes GPU use over time as a step function, after the header
/// [`UTILIZATION_HEADER`]: each row starts a step (`time_s` in seconds,
/// `gpus_used` of `gpus_total`, and `fraction = gpus_used / gpus_total`,
/// empty for a cluster without GPUs) that lasts until the next row. A final
/// row at the run's end ([`SimResult::end_s`]) repeats the last step's use,
/// so the step function can be drawn from the table alone.
///
/// # Errors
///
/// [`ReportError::Csv`] or [`ReportError::Io`] when writing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::RunMeta;
/// use dmlsched::sim::{SimOptions, simulate};
/// use dmlsched::report::csv::write_utilization_csv;
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 10, ..PsJob::default() }; // 10 s alone
/// let jobs = vec![Job::new(JobId(0), 0.0, work.clone()), Job::new(JobId(1), 5.0, work)];
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// let meta = RunMeta {
///     policy: "fifo".into(), seed: 7, workload: "two jobs".into(),
///     cluster: RunMeta::describe_cluster(instance.cluster()), load_scale: 1.0,
/// };
/// let mut out = Vec::new();
/// write_utilization_csv(&mut out, &meta, &result)?;
/// let text = String::from_utf8(out)?;
/// // One GPU held from the first arrival until the last job finishes at 20 s.
/// assert_eq!(text, "policy,seed,time_s,gpus_used,gpus_total,fraction\n\
///                   fifo,7,0,1,1,1\n\
///                   fifo,7,20,0,1,0\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_utilization_csv<W: Write>(
    w: W,
    meta: &RunMeta,
    result: &SimResult,
) -> Result<(), ReportError> {
    write_utilization_csv_runs(w, &[(meta.clone(), result)])
}

/// [`write_utilization_csv`] for several runs in one table: one header,
/// then every run's steps in the order given.
///
/// # Errors
///
/// [`ReportError::Csv`] or [`ReportError::Io`] when writing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::RunMeta;
/// use dmlsched::sim::{SimOptions, simulate};
/// use dmlsched::report::csv::write_utilization_csv_runs;
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 10, ..PsJob::default() }; // 10 s alone
/// let jobs = vec![Job::new(JobId(0), 0.0, work.clone()), Job::new(JobId(1), 5.0, work)];
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// let meta = RunMeta {
///     policy: "fifo".into(), seed: 7, workload: "two jobs".into(),
///     cluster: RunMeta::describe_cluster(instance.cluster()), load_scale: 1.0,
/// };
/// let run = |policy: &str| (RunMeta { policy: policy.into(), ..meta.clone() }, &result);
/// let mut out = Vec::new();
/// write_utilization_csv_runs(&mut out, &[run("a"), run("b")])?;
/// let text = String::from_utf8(out)?;
/// // One header, then each run's steps, in the order given.
/// let policies: Vec<&str> = text.lines().skip(1).map(|row| &row[..1]).collect();
/// assert_eq!(policies, ["a", "a", "b", "b"]);
/// assert_eq!(text.matches("policy,seed").count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_utilization_csv_runs<W: Write>(
    w: W,
    runs: &[(RunMeta, &SimResult)],
) -> Result<(), ReportError> {
    let mut out = Cells::new(w, &UTILIZATION_HEADER)?;
    for (meta, result) in runs {
        let seed = meta.seed.to_string();
        let total = result.gpus_total;
        for (time_s, used) in utilization_steps(result) {
            out.text(&meta.policy)?;
            out.text(&seed)?;
            out.num(time_s)?;
            out.num(used)?;
            out.num(total)?;
            out.opt((total > 0.0).then(|| used / total))?;
            out.end()?;
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::JobId;
    use crate::sim::{JobRecord, UtilizationPoint};

    fn record(id: u32, finish: Option<f64>) -> JobRecord {
        JobRecord {
            job: JobId(id),
            arrival_s: 0.1,
            admitted: finish.is_some(),
            rejected: false,
            start_s: finish.map(|_| 0.30000000000000004),
            finish_s: finish,
            jct_s: finish.map(|f| f - 0.1),
            queueing_s: finish.map(|_| 0.20000000000000004),
            completion_slot: finish.map(|_| 0),
            utility: if finish.is_some() { 1.0 } else { 0.0 },
            gpu_seconds: 1.5,
            preemptions: 0,
            reconfigurations: 2,
            remaining_work: 0.0,
            rejection: None,
            unfinished: finish.is_none().then_some(crate::sim::Unfinished::Stalled),
        }
    }

    fn result() -> SimResult {
        SimResult {
            policy: "p".into(),
            jobs: vec![record(0, Some(2.5)), record(1, None)],
            utilization: vec![
                UtilizationPoint {
                    time_s: 0.1,
                    gpus_used: 1.0,
                },
                UtilizationPoint {
                    time_s: 2.5,
                    gpus_used: 0.0,
                },
            ],
            allocations: Vec::new(),
            gpus_total: 4.0,
            start_s: 0.1,
            end_s: 3.0,
            events: 3,
            stalled: true,
            decision_time_s: 0.0,
        }
    }

    fn meta() -> RunMeta {
        RunMeta {
            policy: "fifo, strict".into(),
            seed: 3,
            workload: "w".into(),
            cluster: "4 GPUs, 4 per machine".into(),
            load_scale: 0.5,
        }
    }

    #[test]
    fn jobs_csv_quotes_rounds_trip_and_leaves_missing_empty() {
        let mut buf = Vec::new();
        write_jobs_csv(&mut buf, &meta(), &result()).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], JOBS_HEADER.join(","));
        assert_eq!(
            lines[1],
            "\"fifo, strict\",3,0,0.1,0.30000000000000004,2.5,2.4,0.20000000000000004,1,1.5,0,2,true,false,true,,completed"
        );
        assert_eq!(
            lines[2],
            "\"fifo, strict\",3,1,0.1,,,,,0,1.5,0,2,false,false,false,,stalled"
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn summary_nan_is_empty_and_version_is_written() {
        let mut s = result().summary();
        s.avg_jct_s = f64::NAN;
        s.p99_jct_s = f64::INFINITY;
        let mut buf = Vec::new();
        write_summary_csv(&mut buf, &[(meta(), s)]).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let header = rd.headers().unwrap().clone();
        assert_eq!(header.iter().collect::<Vec<_>>(), SUMMARY_HEADER);
        let row = rd.records().next().unwrap().unwrap();
        let col = |name: &str| {
            let k = SUMMARY_HEADER.iter().position(|h| *h == name).unwrap();
            row.get(k).unwrap().to_string()
        };
        assert_eq!(col("avg_jct_s"), "");
        assert_eq!(col("p99_jct_s"), "inf");
        assert_eq!(col("p50_jct_s"), "2.4");
        assert_eq!(col("load_scale"), "0.5");
        assert_eq!(col("crate_version"), env!("CARGO_PKG_VERSION"));
        assert_eq!(col("policy"), "fifo, strict");
        // One completed, one unfinished (stalled) of two.
        assert_eq!(col("jobs"), "2");
        assert_eq!(col("completed"), "1");
        assert_eq!(col("rejected"), "0");
        assert_eq!(col("unfinished"), "1");
        assert_eq!(col("unfinished_stalled"), "1");
        assert_eq!(col("unfinished_never_admitted"), "0");
        assert_eq!(col("stalled"), "true");
    }

    #[test]
    fn utilization_csv_is_closed_at_the_end() {
        let mut buf = Vec::new();
        write_utilization_csv(&mut buf, &meta(), &result()).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "policy,seed,time_s,gpus_used,gpus_total,fraction");
        assert_eq!(lines[1], "\"fifo, strict\",3,0.1,1,4,0.25");
        assert_eq!(lines[2], "\"fifo, strict\",3,2.5,0,4,0");
        assert_eq!(lines[3], "\"fifo, strict\",3,3,0,4,0");
        assert_eq!(lines.len(), 4);
        // No GPUs: the fraction is undefined.
        let mut r = result();
        r.gpus_total = 0.0;
        let mut buf = Vec::new();
        write_utilization_csv(&mut buf, &meta(), &r).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.lines().nth(1).unwrap().ends_with(",0,"));
    }

    #[test]
    fn failing_writer_is_an_error_not_a_panic() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Err(std::io::Error::other("disk full"))
            }
        }
        let e = write_jobs_csv(Broken, &meta(), &result()).unwrap_err();
        assert!(
            matches!(e, ReportError::Csv(_) | ReportError::Io(_)),
            "{e:?}"
        );
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
