//! `dmlsched.Session`: the sessions API (`online::AnySession` over a
//! shared `state::ClusterState`), as `dmlsched session` drives it
//! (`src/bin/dmlsched/session.rs`, docs/session-protocol.md): one
//! algorithm, or one per job architecture (`"ps=locality,rar=gadget"`),
//! deciding job by job. The replies are the protocol's reply lines as
//! dicts, and `save` writes the command line's `--state` file, so either
//! can continue the other's session.
//!
//! The protocol's driver lives in the command line's binary (routing by
//! architecture, the time check, the job's default arrival, the reply
//! lines, the saved file's layout); it is repeated here.

use std::sync::Mutex;

use dmlsched::model::{Architecture, Cluster, Instance, Job, JobId, MachineId, Resources};
use dmlsched::online::{AnySession, Overrun, SessionDecision};
use dmlsched::registry::{self, SESSION_ALGORITHMS};
use dmlsched::state::{ClusterState, Holder};
use dmlsched::trace::Arch;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::convert::{self, JsonArg};
use crate::errors::{self, Failure};
use crate::instance::PyInstance;

/// The slot length when neither given nor an instance's, seconds (the
/// command line's default).
const DEFAULT_SLOT_S: f64 = 60.0;
/// The layout version of the saved file (the command line's).
const STATE_VERSION: u32 = 1;

/// A session of any algorithm, movable to the thread that runs it while
/// the GIL is released (the registry's sessions are `Send`).
struct SendSession(Box<dyn AnySession + Send>);

/// One algorithm's session and the architecture of the jobs it decides.
struct Route {
    arch: Arch,
    name: String,
    session: SendSession,
}

/// The sessions over one shared state.
struct Sessions {
    state: ClusterState,
    routes: Vec<Route>,
    window: u32,
}

/// The saved file: the command line's `--state` layout.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    dmlsched_session: u32,
    slot_length_s: f64,
    window: u32,
    sessions: Vec<SavedRoute>,
    state: ClusterState,
}

/// One saved session.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedRoute {
    arch: String,
    algorithm: String,
    session: Value,
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::ParameterServer => "parameter-server",
        Arch::RingAllReduce => "ring-all-reduce",
    }
}

fn arch_of(job: &Job) -> Arch {
    match job.architecture {
        Architecture::ParameterServer(_) => Arch::ParameterServer,
        Architecture::RingAllReduce(_) => Arch::RingAllReduce,
    }
}

/// `ALGORITHM` or `ps=A,rar=B`: the algorithm of each architecture (the
/// command line's `--algorithm`).
fn parse_algorithms(text: &str) -> Result<Vec<(Arch, String)>, Failure> {
    let bad = |why: String| Failure::Input(format!("algorithm {text}: {why}"));
    let mut spec: Vec<(Arch, String)> = Vec::new();
    for part in text.split(',') {
        let (key, name) = match part.split_once('=') {
            Some((k, n)) => (Some(k.trim()), n.trim()),
            None => (None, part.trim()),
        };
        if !SESSION_ALGORITHMS.contains(&name) {
            return Err(bad(format!(
                "{name:?} is not a session algorithm (one of {})",
                SESSION_ALGORITHMS.join(", ")
            )));
        }
        let Some(arch) = registry::architecture(name) else {
            return Err(bad(format!("{name} schedules no single architecture")));
        };
        if let Some(key) = key {
            let wanted = match key {
                "ps" | "parameter-server" => Arch::ParameterServer,
                "rar" | "ring-all-reduce" => Arch::RingAllReduce,
                other => return Err(bad(format!("{other:?} is not ps or rar"))),
            };
            if wanted != arch {
                return Err(bad(format!(
                    "{name} schedules {} jobs, not {key}",
                    arch_name(arch)
                )));
            }
        } else if text.contains(',') {
            return Err(bad(format!(
                "name the architecture of {name} (ps= or rar=)"
            )));
        }
        if spec.iter().any(|(a, _)| *a == arch) {
            return Err(bad(format!("two algorithms for {} jobs", arch_name(arch))));
        }
        spec.push((arch, name.to_string()));
    }
    Ok(spec)
}

/// The job of a submit: the instance format's job object, its
/// `arrival_s` the submission time when left out.
fn parse_job(mut job: Value, time_s: f64) -> Result<Job, Failure> {
    if let Value::Object(o) = &mut job {
        o.entry("arrival_s").or_insert(json!(time_s));
    }
    serde_json::from_value(job).map_err(|e| Failure::Input(format!("not a job: {e}")))
}

/// A decision as the protocol's reply line.
fn decision_line(d: &SessionDecision, algorithm: &str) -> Value {
    let mut v = json!({
        "job": d.job,
        "admitted": d.admitted,
        "segments": d.segments,
        "algorithm": algorithm,
        "utility": d.utility,
        "price": d.price,
        "certificate": d.snapshot,
    });
    if let Some(r) = &d.rejection {
        v["rejection"] = json!({ "kind": r.kind(), "reason": r.to_string() });
    }
    v
}

impl Sessions {
    /// Refuses a time that is not finite or before the state's.
    fn check_time(&self, time_s: f64) -> Result<(), Failure> {
        if !time_s.is_finite() || time_s < self.state.now_s() {
            return Err(Failure::Input(format!(
                "time {time_s} s is not finite or before the session's time {} s",
                self.state.now_s()
            )));
        }
        Ok(())
    }

    fn submit(&mut self, time_s: Option<f64>, job: Value) -> Result<Value, Failure> {
        let time_s = time_s
            .or_else(|| job.get("arrival_s").and_then(Value::as_f64))
            .unwrap_or_else(|| self.state.now_s());
        self.check_time(time_s)?;
        let job = parse_job(job, time_s)?;
        let arch = arch_of(&job);
        let Some(route) = self.routes.iter_mut().find(|r| r.arch == arch) else {
            return Err(Failure::Input(format!(
                "{}: no algorithm for {} jobs in this session",
                job.id,
                arch_name(arch)
            )));
        };
        let d = route.session.0.submit(&mut self.state, &job, time_s)?;
        Ok(decision_line(&d, &route.name))
    }

    /// The position of the route whose session has `job`.
    fn owner(&self, job: JobId) -> Result<usize, Failure> {
        self.routes
            .iter()
            .position(|r| r.session.0.status(job).is_some())
            .ok_or_else(|| Failure::Input(format!("{job} was never submitted")))
    }

    fn resubmit(&mut self, time_s: f64, job: JobId) -> Result<Value, Failure> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let d = route.session.0.resubmit(state, job, time_s)?;
        Ok(decision_line(&d, &route.name))
    }

    fn stop(&mut self, time_s: f64, job: JobId, cancel: bool) -> Result<Value, Failure> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let released = if cancel {
            route.session.0.cancel(state, job, time_s)?
        } else {
            route.session.0.finish(state, job, time_s)?
        };
        Ok(json!({
            "ok": true,
            "event": if cancel { "cancel" } else { "finish" },
            "job": job,
            "released": released,
            "status": route.session.0.status(job),
        }))
    }

    fn extend(&mut self, time_s: f64, job: JobId, more_s: f64) -> Result<Value, Failure> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let r = route.session.0.overrun(state, job, time_s, more_s)?;
        let mut v = json!({ "ok": true, "event": "extend", "job": job });
        match r {
            Overrun::Extended { segment, utility } => {
                v["extended"] = true.into();
                v["segments"] = json!([segment]);
                v["utility"] = utility.into();
            }
            Overrun::Preempted { reason } => {
                v["extended"] = false.into();
                v["preempted"] = reason.into();
            }
        }
        v["certificate"] = json!(route.session.0.snapshot());
        Ok(v)
    }

    fn usage(
        &mut self,
        machine: MachineId,
        from_s: f64,
        to_s: f64,
        resources: Resources,
    ) -> Result<Value, Failure> {
        let id = self
            .state
            .record_usage(machine, from_s, to_s, resources)
            .map_err(|e| Failure::Input(e.to_string()))?;
        let uses = self.state.hold(Holder::Usage(id)).unwrap_or(&[]);
        let held: Vec<Value> = uses
            .iter()
            .map(|u| json!({ "slots": u.slots, "gpus": u.gpus }))
            .collect();
        Ok(json!({ "ok": true, "event": "usage", "usage": id.0, "machine": machine, "held": held }))
    }

    /// The saved file's text.
    fn save_text(&self) -> Result<String, Failure> {
        let mut sessions = Vec::new();
        for r in &self.routes {
            let text = r.session.0.save()?;
            let session: Value = serde_json::from_str(&text)
                .map_err(|e| Failure::Run(format!("{}: {e}", r.name)))?;
            sessions.push(SavedRoute {
                arch: arch_name(r.arch).into(),
                algorithm: r.name.clone(),
                session,
            });
        }
        let saved = Saved {
            dmlsched_session: STATE_VERSION,
            slot_length_s: self.state.slot_length_s(),
            window: self.window,
            sessions,
            state: self.state.clone(),
        };
        serde_json::to_string(&saved).map_err(|e| Failure::Run(e.to_string()))
    }

    /// The sessions of a saved file's text; `path` names it in errors.
    fn restore(text: &str, path: &str) -> Result<Sessions, Failure> {
        let bad = |e: &dyn std::fmt::Display| Failure::Input(format!("{path}: {e}"));
        let saved: Saved = serde_json::from_str(text).map_err(|e| bad(&e))?;
        if saved.dmlsched_session != STATE_VERSION {
            return Err(bad(&format!(
                "the saved session has layout {} (this build reads {STATE_VERSION})",
                saved.dmlsched_session
            )));
        }
        let mut routes = Vec::new();
        for r in saved.sessions {
            let session = registry::restore_session(&r.algorithm, &r.session.to_string())
                .map_err(|e| bad(&e))?;
            let arch = registry::architecture(&r.algorithm)
                .ok_or_else(|| bad(&format!("{} schedules no single architecture", r.algorithm)))?;
            routes.push(Route {
                arch,
                name: r.algorithm,
                session: SendSession(session),
            });
        }
        Ok(Sessions {
            state: saved.state,
            routes,
            window: saved.window,
        })
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
    inner: Mutex<Sessions>,
}

impl PySession {
    /// Runs `f` on the sessions with the GIL released, and returns its
    /// answer as Python objects.
    fn call<'py>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&mut Sessions) -> Result<Value, Failure> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v = py.detach(|| {
            let mut s = self
                .inner
                .lock()
                .map_err(|_| Failure::Run("the session was poisoned by a panic".into()))?;
            f(&mut s)
        })?;
        convert::to_py(py, &v)
    }
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
    let value: Value =
        serde_json::from_str(&arg.text).map_err(|e| errors::input(arg.message(e)))?;
    let jobs = match value {
        Value::Object(mut o) if o.contains_key("jobs") => o.remove("jobs").unwrap_or(Value::Null),
        v => v,
    };
    serde_json::from_value(jobs).map_err(|e| {
        errors::input(arg.message(format!("expected a list of jobs or an instance: {e}")))
    })
}

/// The parameters of each algorithm of `spec`: a dict keyed by algorithm
/// names, or (with one algorithm) its parameters.
fn params_of(
    params: Option<&Bound<'_, PyAny>>,
    spec: &[(Arch, String)],
) -> PyResult<Vec<Option<String>>> {
    let Some(params) = params.filter(|p| !p.is_none()) else {
        return Ok(vec![None; spec.len()]);
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
        return spec
            .iter()
            .map(|(_, name)| match d.get_item(name)? {
                Some(v) => Ok(Some(JsonArg::from_py(&v, "params")?.text)),
                None => Ok(None),
            })
            .collect();
    }
    if spec.len() > 1 {
        return Err(errors::input(format!(
            "params: with several algorithms, give a dict {{algorithm: its parameters}} \
             (algorithms among {})",
            SESSION_ALGORITHMS.join(", ")
        )));
    }
    Ok(vec![Some(JsonArg::from_py(params, "params")?.text)])
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
