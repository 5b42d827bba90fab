//! `dmlsched.Session`: the library's session protocol driver
//! (`dmlsched::protocol::SessionSet`, the one behind `dmlsched session`,
//! docs/session-protocol.md): one algorithm, or one per job architecture
//! (`"ps=locality,rar=gadget"`), deciding job by job over one shared
//! cluster state. The replies are the protocol's reply lines as dicts, and
//! `save` writes the command line's `--state` file, so either can continue
//! the other's session. This file only converts Python values and errors.

use std::sync::{Mutex, MutexGuard};

use dmlsched::model::{Cluster, Instance, Job};
use dmlsched::protocol::{self, Event, ProtocolError, SessionSet};
use dmlsched::registry::SESSION_ALGORITHMS;
use dmlsched::trace::Arch;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

use crate::convert::{self, JsonArg};
use crate::errors::{self, Failure};
use crate::instance::PyInstance;

/// A protocol error as the package's exception. The messages are the
/// library's: an algorithm's error without the algorithm's name before it
/// (as the other bindings raise the library's errors), the argument's
/// name before an error about the algorithm spec or the past jobs.
fn failure(e: ProtocolError) -> Failure {
    match e {
        ProtocolError::Algorithm { source, .. } => Failure::lib(&source),
        ProtocolError::Spec { .. } => Failure::Input(format!("algorithm {e}")),
        ProtocolError::PastJob(_) | ProtocolError::NoPastJob { .. } => {
            Failure::Input(format!("past: {e}"))
        }
        e if e.is_input() => Failure::Input(e.to_string()),
        e => Failure::Run(e.to_string()),
    }
}

/// Jobs decided one by one over a shared cluster state by an online
/// algorithm (or one per job architecture), as `dmlsched session` does.
///
/// `Session(cluster, algorithm="gadget", params=None, past=None,
/// slot_length=None, window=200, seed=0)`: `cluster` is the instance
/// format's cluster object (a dict, JSON text or a path) or an instance
/// (its cluster, its jobs as `past`, its slot length); `algorithm` one of
/// `SESSION_ALGORITHMS` or one per architecture (`"ps=locality,rar=gadget"`
/// or `{"ps": "locality", "rar": "gadget"}`); `params` the algorithm's
/// parameters (with several, `{algorithm: params}`); `past` jobs like the
/// ones to come, to learn the price bounds from; `slot_length` seconds
/// (default the instance's, else 60); `window` the planning window in
/// slots. Every call releases the GIL; the replies are the protocol's
/// reply lines (docs/session-protocol.md) as dicts.
#[pyclass(frozen, name = "Session", module = "dmlsched")]
pub struct PySession {
    inner: Mutex<SessionSet>,
}

impl PySession {
    /// Runs `f` on the sessions with the GIL released, and returns its
    /// answer as Python objects.
    fn call<'py>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&mut SessionSet) -> Result<Value, ProtocolError> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v = py.detach(|| -> Result<Value, Failure> {
            let mut s = lock(&self.inner)?;
            f(&mut s).map_err(failure)
        })?;
        convert::to_py(py, &v)
    }

    /// Applies `event` with the GIL released: its reply line as a dict.
    fn apply<'py>(&self, py: Python<'py>, event: Event) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, move |s| s.apply(event))
    }
}

/// The sessions, locked.
fn lock(m: &Mutex<SessionSet>) -> Result<MutexGuard<'_, SessionSet>, Failure> {
    m.lock()
        .map_err(|_| Failure::Run("the session was poisoned by a panic".into()))
}

/// The cluster argument: an `Instance` (or an instance's dict, JSON or
/// file) gives its cluster, jobs and slot length; else the instance
/// format's `cluster` object.
type ClusterArg = (Cluster, Option<Vec<Job>>, Option<f64>);

fn cluster_arg(obj: &Bound<'_, PyAny>) -> PyResult<ClusterArg> {
    if let Ok(i) = obj.cast::<PyInstance>() {
        let inst = &i.get().inner;
        return Ok(of_instance(inst));
    }
    let arg = JsonArg::from_py(obj, "cluster")?;
    let value: Value =
        serde_json::from_str(&arg.text).map_err(|e| errors::input(arg.message(e)))?;
    if value.get("jobs").is_some() && value.get("cluster").is_some() {
        let inst = Instance::from_json(&arg.text).map_err(|e| match Failure::lib(&e) {
            Failure::Input(m) => errors::input(arg.message(m)),
            other => other.into(),
        })?;
        return Ok(of_instance(&inst));
    }
    let cluster: Cluster =
        serde_json::from_value(value).map_err(|e| errors::input(arg.message(e)))?;
    Ok((cluster, None, None))
}

fn of_instance(inst: &Instance) -> ClusterArg {
    (
        inst.cluster().clone(),
        Some(inst.jobs().to_vec()),
        Some(inst.slot_length_s()),
    )
}

/// The past jobs: a list of job dicts, an instance (its jobs), JSON text
/// or a file of either.
fn past_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Job>> {
    if let Ok(i) = obj.cast::<PyInstance>() {
        return Ok(i.get().inner.jobs().to_vec());
    }
    let arg = JsonArg::from_py(obj, "past")?;
    protocol::past_jobs(&arg.text).map_err(|e| errors::input(arg.message(e)))
}

/// The parameters of the algorithms of `spec`, by name: a dict keyed by
/// algorithm names, or (with one algorithm) its parameters.
fn params_of(
    params: Option<&Bound<'_, PyAny>>,
    spec: &[(Arch, String)],
) -> PyResult<Vec<(String, String)>> {
    let Some(params) = params.filter(|p| !p.is_none()) else {
        return Ok(Vec::new());
    };
    let keyed = match params.cast::<PyDict>() {
        Ok(d) => {
            !d.is_empty()
                && d.keys().iter().all(|k| {
                    k.extract::<String>()
                        .is_ok_and(|k| SESSION_ALGORITHMS.contains(&k.as_str()))
                })
        }
        Err(_) => false,
    };
    if keyed {
        let d = params.cast::<PyDict>()?;
        let mut out = Vec::new();
        for (_, name) in spec {
            if let Some(v) = d.get_item(name)? {
                out.push((name.clone(), convert::algorithm_params(name, &v)?));
            }
        }
        return Ok(out);
    }
    if spec.len() > 1 {
        return Err(errors::input(format!(
            "params: with several algorithms, give a dict {{algorithm: its parameters}} \
             (algorithms among {})",
            SESSION_ALGORITHMS.join(", ")
        )));
    }
    let name = spec.first().map(|(_, n)| n.clone()).unwrap_or_default();
    Ok(vec![(name, JsonArg::from_py(params, "params")?.text)])
}

/// The algorithm argument: a name, `"ps=A,rar=B"`, or a dict `{"ps": A,
/// "rar": B}`.
fn algorithm_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| errors::input("algorithm: expected a name, \"ps=A,rar=B\" or a dict"))?;
    let parts: Vec<String> = d
        .iter()
        .map(|(k, v)| {
            Ok(format!(
                "{}={}",
                k.extract::<String>()?,
                v.extract::<String>()?
            ))
        })
        .collect::<PyResult<_>>()?;
    Ok(parts.join(","))
}

mod methods;
