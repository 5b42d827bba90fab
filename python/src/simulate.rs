//! `dmlsched.simulate`'s Rust half: the simulator on an instance under
//! named policies (the registry's) and policies written in Python, as
//! `dmlsched simulate` runs them (`src/bin/dmlsched/simulate.rs`), once per
//! seed. The tables are the command line's CSV files, written by the
//! library's `report::csv` into memory; the Python layer reads them with
//! pandas.
//! The baselines' options are checked by the library
//! (`dmlsched::replay::BaselineOptions`, as the command line's flags), and
//! the fairness metrics' solo runs are the library's
//! (`dmlsched::replay::solo_runs`, with its size limit).

use std::collections::BTreeMap;
use std::sync::Arc;

use dmlsched::baselines::BaselineParams;
use dmlsched::model::Instance;
use dmlsched::registry::{self, ALGORITHM_POLICIES};
use dmlsched::report::RunMeta;
use dmlsched::report::csv::{write_jobs_csv_runs, write_summary_csv, write_utilization_csv_runs};
use dmlsched::sim::{Policy, SimOptions, SimResult, StopAt, simulate};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::certificate::PyCertificate;
use crate::errors::{self, Failure};
use crate::instance::instance_arg;
use crate::policy::{PyPolicy, is_policy_object};

/// A policy of the run list, before the run.
enum Planned {
    /// A registry name, built inside the run.
    Named { name: String, seed: u64 },
    /// A policy written in Python.
    Python { seed: u64, policy: Box<PyPolicy> },
}

/// A built policy.
enum Built {
    Named(Box<dyn Policy>),
    Python(Box<PyPolicy>),
}

/// One finished run.
struct Run {
    name: String,
    seed: u64,
    result: SimResult,
    certificate: Option<dmlsched::Certificate>,
}

/// What the runs give back, as text and plain data.
struct Output {
    summary_csv: String,
    jobs_csv: String,
    utilization_csv: String,
    runs: Vec<Run>,
    notes: Vec<String>,
}

/// Runs every policy of `policies` once per seed on `instance`; returns
/// the CSV tables (`summary_csv`, `jobs_csv`, `utilization_csv`), the
/// runs' `certificates`, `notes` and `runs` ((policy, seed) per row).
#[pyfunction]
#[pyo3(signature = (
    instance, policies, seeds, params, stop, stop_at_convergence, placement,
    tiresias_thresholds, tiresias_starve_factor, round_s, gpu_prices, workload
))]
#[allow(clippy::too_many_arguments)]
pub fn _simulate<'py>(
    py: Python<'py>,
    instance: &Bound<'py, PyAny>,
    policies: &Bound<'py, PyAny>,
    seeds: Vec<u64>,
    params: Option<&Bound<'py, PyAny>>,
    stop: &str,
    stop_at_convergence: bool,
    placement: &str,
    tiresias_thresholds: Option<Vec<f64>>,
    tiresias_starve_factor: Option<f64>,
    round_s: f64,
    gpu_prices: Option<&Bound<'py, PyAny>>,
    workload: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let instance = instance_arg(instance)?;
    let inst = Arc::clone(&instance.get().inner);
    let label = workload.unwrap_or_else(|| instance.get().label.clone());
    let options = sim_options(stop, stop_at_convergence)?;
    if seeds.is_empty() {
        return Err(errors::input("seeds: no seed given"));
    }
    let (names, objects) = policy_list(policies)?;
    let all: Vec<String> = names.iter().flatten().cloned().collect();
    let gpu_prices = gpu_prices
        .filter(|p| !p.is_none())
        .map(prices_text)
        .transpose()?;
    let baselines = crate::replay::baseline_options(
        placement,
        tiresias_thresholds,
        tiresias_starve_factor,
        round_s,
        gpu_prices,
    )?
    .params(&all)
    .map_err(Failure::from)?;
    let params = params_map(params)?;
    let mut planned = Vec::new();
    for &seed in &seeds {
        for (name, obj) in names.iter().zip(&objects) {
            planned.push(match (name, obj) {
                (Some(name), _) => Planned::Named {
                    name: name.clone(),
                    seed,
                },
                (None, Some(obj)) => Planned::Python {
                    seed,
                    policy: Box::new(PyPolicy::new(obj.bind(py), &instance)?),
                },
                (None, None) => unreachable!("a policy is a name or an object"),
            });
        }
    }
    let out = py.detach(move || run_all(&inst, planned, &params, &baselines, &options, &label))?;
    result_dict(py, out)
}

/// The simulator's options from `stop` and `stop_at_convergence`.
fn sim_options(stop: &str, stop_at_convergence: bool) -> PyResult<SimOptions> {
    let mut options = SimOptions::default();
    options.stop = match stop.trim().replace('_', "-").as_str() {
        "all-done" => StopAt::AllDone,
        "horizon" => StopAt::Horizon,
        other => {
            return Err(errors::input(format!(
                "stop {other:?}: expected \"all-done\" or \"horizon\""
            )));
        }
    };
    options.stop_at_convergence = stop_at_convergence;
    Ok(options)
}

/// The policies: each a registry name (`Some(name)`) or a Python policy
/// object.
#[allow(clippy::type_complexity)]
fn policy_list(
    policies: &Bound<'_, PyAny>,
) -> PyResult<(Vec<Option<String>>, Vec<Option<Py<PyAny>>>)> {
    let items: Vec<Bound<'_, PyAny>> = if policies.is_instance_of::<PyString>() {
        // "fifo,sjf", as the command line's --policies.
        let text: String = policies.extract()?;
        text.split(',')
            .map(|n| PyString::new(policies.py(), n.trim()).into_any())
            .collect()
    } else {
        policies.try_iter()?.collect::<PyResult<_>>()?
    };
    if items.is_empty() {
        return Err(errors::input("policies: no policy given"));
    }
    let (mut names, mut objects) = (Vec::new(), Vec::new());
    for item in items {
        if let Ok(s) = item.cast::<PyString>() {
            names.push(Some(s.to_cow()?.trim().to_string()));
            objects.push(None);
        } else if is_policy_object(&item)? {
            names.push(None);
            objects.push(Some(item.unbind()));
        } else {
            return Err(errors::input(format!(
                "policies: {} is neither a policy name nor an object with on_event(view, event)",
                crate::view::show(&item)
            )));
        }
    }
    Ok((names, objects))
}

/// GPU prices as the command line's `TYPE:PRICE,...`, from that text or a
/// dict `{type: price}` (the library checks them).
fn prices_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut parts = Vec::new();
        for (k, v) in d.iter() {
            let entry = (|| -> PyResult<String> {
                Ok(format!(
                    "{}:{}",
                    k.extract::<String>()?,
                    v.extract::<f64>()?
                ))
            })();
            parts.push(entry.map_err(|e| errors::input(format!("gpu_prices: {e}")))?);
        }
        return Ok(parts.join(","));
    }
    obj.extract().map_err(|_| {
        errors::input("gpu_prices: expected a dict {type: price} or \"TYPE:PRICE,...\"")
    })
}

/// Parameters of the algorithm policies: `{name: params}`, each params a
/// dict, JSON text or a path.
fn params_map(params: Option<&Bound<'_, PyAny>>) -> PyResult<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let Some(params) = params.filter(|p| !p.is_none()) else {
        return Ok(out);
    };
    let d = params
        .cast::<PyDict>()
        .map_err(|_| errors::input("params: expected a dict {policy name: its parameters}"))?;
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| errors::input("params: a key is not a policy name"))?;
        if !ALGORITHM_POLICIES.contains(&name.as_str()) {
            return Err(errors::input(format!(
                "params: {name} takes no parameters (one of {})",
                ALGORITHM_POLICIES.join(", ")
            )));
        }
        let text = crate::convert::algorithm_params(&name, &v)?;
        out.insert(name, text);
    }
    Ok(out)
}

/// Builds every policy (so a bad name fails before any run), runs each,
/// and writes the tables.
fn run_all(
    inst: &Instance,
    planned: Vec<Planned>,
    params: &BTreeMap<String, String>,
    baselines: &BaselineParams,
    options: &SimOptions,
    label: &str,
) -> Result<Output, Failure> {
    let mut built = Vec::with_capacity(planned.len());
    for p in planned {
        built.push(match p {
            Planned::Named { name, seed } => {
                let text = params.get(&name).map(String::as_str);
                let policy = registry::policy(&name, inst, text, seed, baselines)?;
                (name, seed, Built::Named(policy))
            }
            Planned::Python { seed, policy } => {
                (policy.label().to_string(), seed, Built::Python(policy))
            }
        });
    }
    let mut runs = Vec::with_capacity(built.len());
    let mut notes = Vec::new();
    let total = built.len();
    for (done, (name, seed, policy)) in built.into_iter().enumerate() {
        // A signal (Ctrl-C) stops the runs between two of them.
        Python::attach(|py| py.check_signals())
            .map_err(|e| Failure::Python(errors::stopped(e, done, total)))?;
        let (result, certificate) = match policy {
            Built::Named(mut p) => {
                let r = simulate(inst, p.as_mut(), options)?;
                notes.extend(p.notes().into_iter().map(|n| format!("{name}: {n}")));
                let certificate = p.finish(inst).unwrap_or_else(|e| {
                    notes.push(format!(
                        "certificate of {name} (seed {seed}): not available: {e}"
                    ));
                    None
                });
                (r, certificate)
            }
            Built::Python(mut p) => {
                p.reset().map_err(Failure::Python)?;
                let r = simulate(inst, p.as_mut(), options);
                if let Some(e) = p.take_error() {
                    return Err(Failure::Python(e));
                }
                let r = r?;
                notes.extend(p.notes().into_iter().map(|n| format!("{name}: {n}")));
                if let Some(e) = p.take_error() {
                    return Err(Failure::Python(e));
                }
                (r, None)
            }
        };
        runs.push(Run {
            name,
            seed,
            result,
            certificate,
        });
    }
    let solos = dmlsched::replay::solo_runs(inst, &mut notes);
    let meta = |r: &Run| RunMeta {
        policy: r.name.clone(),
        seed: r.seed,
        workload: label.to_string(),
        cluster: RunMeta::describe_cluster(inst.cluster()),
        load_scale: 1.0,
    };
    let rows: Vec<_> = runs
        .iter()
        .map(|r| {
            let s = r
                .result
                .summary()
                .with_resource_use(&r.result.resource_use(inst))
                .with_fairness(r.result.fairness(&solos));
            (meta(r), s)
        })
        .collect();
    let metas: Vec<(RunMeta, &SimResult)> = runs.iter().map(|r| (meta(r), &r.result)).collect();
    let report = |e: dmlsched::report::ReportError| Failure::Run(e.to_string());
    let mut summary = Vec::new();
    write_summary_csv(&mut summary, &rows).map_err(report)?;
    let mut jobs = Vec::new();
    write_jobs_csv_runs(&mut jobs, &metas).map_err(report)?;
    let mut utilization = Vec::new();
    write_utilization_csv_runs(&mut utilization, &metas).map_err(report)?;
    let text = |b: Vec<u8>| String::from_utf8(b).map_err(|e| Failure::Run(e.to_string()));
    Ok(Output {
        summary_csv: text(summary)?,
        jobs_csv: text(jobs)?,
        utilization_csv: text(utilization)?,
        runs,
        notes,
    })
}

/// The runs' output as a dict for the Python layer.
fn result_dict(py: Python<'_>, out: Output) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary_csv", out.summary_csv)?;
    d.set_item("jobs_csv", out.jobs_csv)?;
    d.set_item("utilization_csv", out.utilization_csv)?;
    d.set_item("notes", out.notes)?;
    let certificates = PyList::empty(py);
    let runs = PyList::empty(py);
    for r in out.runs {
        match r.certificate {
            Some(c) => certificates.append(Py::new(py, PyCertificate::new(c))?)?,
            None => certificates.append(py.None())?,
        }
        runs.append((r.name, r.seed))?;
    }
    d.set_item("certificates", certificates)?;
    d.set_item("runs", runs)?;
    Ok(d)
}
