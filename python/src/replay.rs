//! `dmlsched.replay`'s Rust half: the library's replay
//! ([`dmlsched::replay`]), the pipeline `dmlsched replay` runs, with the
//! options named after the command's flags. The tables are the command's
//! CSV files, written into memory by the same code; the Python layer reads
//! them with pandas.

use std::path::PathBuf;

use dmlsched::replay::{
    BaselineOptions, ReplayArch, ReplayConfig, ReplayError, ReplayObserver, Replayed, replay,
};
use dmlsched::report::csv::{write_jobs_csv, write_summary_csv};
use dmlsched::trace::{GpuMix, TraceFormat};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::certificate::PyCertificate;
use crate::errors::{self, Failure};

impl From<ReplayError> for Failure {
    fn from(e: ReplayError) -> Self {
        if e.is_input() {
            Failure::Input(e.message())
        } else {
            Failure::Run(e.message())
        }
    }
}

/// Collects a replay's messages (the set-up's description and notes, in
/// the order the command prints them), and between runs looks for a
/// signal (Ctrl-C): its exception stops the replay and is raised.
#[derive(Default)]
struct Messages {
    lines: Vec<String>,
    interrupt: Option<PyErr>,
}

impl ReplayObserver for Messages {
    fn message(&mut self, text: &str) {
        self.lines.push(text.to_string());
    }

    fn keep_going(&mut self) -> bool {
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => true,
            Err(e) => {
                self.interrupt = Some(e);
                false
            }
        }
    }
}

/// What a replay gives back, as text and plain data, before the GIL is
/// taken again.
struct Output {
    replayed: Replayed,
    summary_csv: String,
    /// Per run: its per-job table.
    jobs_csv: Vec<String>,
    certificates_json: Option<String>,
    messages: Vec<String>,
    /// The replay's error when some runs failed.
    failed: Option<ReplayError>,
}

/// Runs a replay; every option is the `dmlsched replay` flag of the same
/// name (`--gpus-per-machine` is `gpus_per_machine`). Returns the tables
/// as CSV text and the runs' certificates, notes and failures.
#[pyfunction]
#[pyo3(signature = (
    trace, *, format, arch, start, jobs, gpus, gpus_per_machine, ps_servers, horizon,
    slot_length, utility, policies, params, load_scales, seeds, placement,
    tiresias_thresholds, tiresias_starve_factor, round_s, gpu_prices, gavel_throughputs,
    gavel_gpu, out
))]
#[allow(clippy::too_many_arguments)]
pub fn _replay<'py>(
    py: Python<'py>,
    trace: PathBuf,
    format: Option<String>,
    arch: Option<String>,
    start: Option<String>,
    jobs: usize,
    gpus: String,
    gpus_per_machine: u32,
    ps_servers: Option<u32>,
    horizon: Option<String>,
    slot_length: Option<f64>,
    utility: Option<String>,
    policies: Vec<String>,
    params: Vec<(String, Bound<'py, PyAny>)>,
    load_scales: Vec<f64>,
    seeds: Vec<u64>,
    placement: String,
    tiresias_thresholds: Option<Vec<f64>>,
    tiresias_starve_factor: Option<f64>,
    round_s: f64,
    gpu_prices: Option<String>,
    gavel_throughputs: Option<PathBuf>,
    gavel_gpu: String,
    out: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut c = ReplayConfig::new(trace);
    c.format = format
        .map(|f| f.parse::<TraceFormat>())
        .transpose()
        .map_err(|e| errors::input(format!("--format: {e}")))?;
    c.arch = arch
        .map(|a| a.parse::<ReplayArch>())
        .transpose()
        .map_err(Failure::from)?;
    c.start = start;
    c.jobs = jobs;
    c.gpus = gpus
        .parse::<GpuMix>()
        .map_err(|e| errors::input(format!("--gpus {gpus}: {e}")))?;
    c.gpus_per_machine = gpus_per_machine;
    c.ps_servers = ps_servers;
    c.horizon = horizon;
    c.slot_length = slot_length;
    c.utility = utility;
    c.policies = policies;
    for (name, value) in &params {
        c.params
            .push((name.clone(), crate::convert::algorithm_params(name, value)?));
    }
    c.load_scales = load_scales;
    c.seeds = seeds;
    c.baselines = baseline_options(
        &placement,
        tiresias_thresholds,
        tiresias_starve_factor,
        round_s,
        gpu_prices,
    )?;
    c.gavel_throughputs = gavel_throughputs;
    c.gavel_gpu = gavel_gpu;
    let output = py.detach(move || run(&c, out.as_deref()))?;
    result_dict(py, output)
}

/// The baselines' options from the keyword arguments.
pub(crate) fn baseline_options(
    placement: &str,
    tiresias_thresholds: Option<Vec<f64>>,
    tiresias_starve_factor: Option<f64>,
    round_s: f64,
    gpu_prices: Option<String>,
) -> PyResult<BaselineOptions> {
    let mut o = BaselineOptions::default();
    o.placement = crate::view::parse_rule(placement)?;
    if let Some(t) = tiresias_thresholds {
        o.tiresias_thresholds = t;
    }
    o.tiresias_starve_factor = tiresias_starve_factor;
    o.round_s = round_s;
    o.gpu_prices = gpu_prices;
    Ok(o)
}

/// The replay and its tables, without the GIL.
fn run(c: &ReplayConfig, out: Option<&std::path::Path>) -> Result<Output, Failure> {
    let mut messages = Messages::default();
    let replayed = match replay(c, &mut messages) {
        Ok(r) => r,
        Err(e) => {
            return Err(match (messages.interrupt, e) {
                (Some(err), ReplayError::Stopped { done, total }) => {
                    Failure::Python(errors::stopped(err, done, total))
                }
                (Some(err), _) => Failure::Python(err),
                (None, e) => e.into(),
            });
        }
    };
    if let Some(dir) = out {
        replayed.write(dir, &mut messages)?;
    }
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|e| Failure::Run(e.to_string()));
    let mut summary = Vec::new();
    write_summary_csv(&mut summary, &replayed.summary_rows())
        .map_err(|e| Failure::Run(format!("summary table: {e}")))?;
    let mut jobs_csv = Vec::with_capacity(replayed.runs.len());
    for r in &replayed.runs {
        let mut buf = Vec::new();
        write_jobs_csv(&mut buf, &r.meta, &r.result)
            .map_err(|e| Failure::Run(format!("jobs table: {e}")))?;
        jobs_csv.push(text(buf)?);
    }
    let certificates_json = replayed.certificates_json().map(|v| v.to_string());
    let failed = replayed.failed(out.is_some()).err();
    Ok(Output {
        summary_csv: text(summary)?,
        jobs_csv,
        certificates_json,
        messages: messages.lines,
        failed,
        replayed,
    })
}

/// The output as a dict of plain Python values.
fn result_dict(py: Python<'_>, out: Output) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary_csv", &out.summary_csv)?;
    let runs = PyList::empty(py);
    let certificates = PyList::empty(py);
    for (r, jobs) in out.replayed.runs.iter().zip(&out.jobs_csv) {
        let run = PyDict::new(py);
        run.set_item("policy", &r.meta.policy)?;
        run.set_item("load_scale", r.meta.load_scale)?;
        run.set_item("seed", r.meta.seed)?;
        run.set_item("workload", &r.meta.workload)?;
        run.set_item("cluster", &r.meta.cluster)?;
        run.set_item("jobs_csv", jobs)?;
        run.set_item("notes", &r.notes)?;
        match &r.certificate {
            Ok(Some(c)) => {
                let cert = Py::new(py, PyCertificate::new(c.clone()))?;
                run.set_item("certificate", &cert)?;
                let entry = PyDict::new(py);
                entry.set_item("policy", &r.meta.policy)?;
                entry.set_item("load_scale", r.meta.load_scale)?;
                entry.set_item("seed", r.meta.seed)?;
                entry.set_item("workload", &r.meta.workload)?;
                entry.set_item("cluster", &r.meta.cluster)?;
                entry.set_item("certificate", cert)?;
                certificates.append(entry)?;
            }
            Ok(None) => run.set_item("certificate", py.None())?,
            Err(e) => {
                run.set_item("certificate", py.None())?;
                run.set_item("certificate_error", e)?;
            }
        }
        runs.append(run)?;
    }
    d.set_item("runs", runs)?;
    d.set_item("certificates", certificates)?;
    d.set_item("certificates_json", out.certificates_json)?;
    let failures = PyList::empty(py);
    for f in &out.replayed.failures {
        let row = PyDict::new(py);
        row.set_item("policy", &f.meta.policy)?;
        row.set_item("load_scale", f.meta.load_scale)?;
        row.set_item("seed", f.meta.seed)?;
        row.set_item("workload", &f.meta.workload)?;
        row.set_item("cluster", &f.meta.cluster)?;
        row.set_item("exit", if f.error.is_input() { 2 } else { 1 })?;
        row.set_item("error", f.error.message())?;
        failures.append(row)?;
    }
    d.set_item("failures", failures)?;
    d.set_item("messages", out.messages)?;
    match out.failed {
        Some(e) => d.set_item(
            "error",
            (if e.is_input() { "input" } else { "run" }, e.message()),
        )?,
        None => d.set_item("error", py.None())?,
    }
    Ok(d)
}
