//! Policies written in Python: any object with `on_event(view, event)`
//! returning a list of actions runs in the simulator as a
//! `dmlsched::sim::Policy` ([`PyPolicy`]).
//!
//! The simulation runs without the GIL; at each event the wrapper takes
//! the GIL, copies the simulator's view into a `View` (`view.rs`: time,
//! free resources per machine, one `JobView` per active job), builds the
//! event as a dict, calls `on_event` and reads the actions back. A Python
//! exception stops the run and is raised again, as is, when `simulate`
//! returns; an answer that is not a list of actions stops it with an
//! `InputError` that names the event.

use std::cell::RefCell;

use dmlsched::model::{GpuId, JobId, MachineId};
use dmlsched::schedule::Configuration;
use dmlsched::sim::{Action, Event, Policy, SimError, SimView};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert;
use crate::errors;
use crate::instance::PyInstance;
use crate::view::{self, placement_from_py, placement_to_py, show};

pub use crate::view::{PyJobView, PyPlacer, PyView};

/// A decision of a policy about one job: run it with a placement, pause,
/// preempt or reject it.
#[pyclass(frozen, name = "Action", module = "dmlsched")]
pub struct PyAction {
    /// The library's action.
    pub inner: Action,
}

#[pymethods]
impl PyAction {
    /// Run job `job` with `placement` ((machine, workers, ps) tuples, or
    /// a dict {machine: (workers, ps)}) from now until the next change; an
    /// empty placement pauses it. `gpus`: GPU ids as (machine, index), for
    /// policies that assign them; `local`: the machine of a LOCAL
    /// configuration (one PS and its workers there, no NIC charged).
    #[staticmethod]
    #[pyo3(signature = (job, placement, gpus = None, local = None))]
    fn run(
        job: u32,
        placement: &Bound<'_, PyAny>,
        gpus: Option<Vec<(u32, u32)>>,
        local: Option<u32>,
    ) -> PyResult<Self> {
        let inner = run_action(job, placement, gpus, local).map_err(errors::input)?;
        Ok(PyAction { inner })
    }

    /// Pause job `job` (an empty allocation; a preemption if it runs).
    #[staticmethod]
    fn pause(job: u32) -> Self {
        PyAction {
            inner: Action::pause(JobId(job)),
        }
    }

    /// Stop job `job` now (it keeps its progress).
    #[staticmethod]
    fn preempt(job: u32) -> Self {
        PyAction {
            inner: Action::Preempt { job: JobId(job) },
        }
    }

    /// Turn job `job` away for good.
    #[staticmethod]
    fn reject(job: u32) -> Self {
        PyAction {
            inner: Action::Reject { job: JobId(job) },
        }
    }

    /// "run", "pause", "preempt", "reject" or "reserve".
    #[getter]
    fn kind(&self) -> &'static str {
        kind(&self.inner)
    }

    /// The job's id.
    #[getter]
    fn job(&self) -> u32 {
        self.inner.job().0
    }

    /// The placement of a "run", as (machine, workers, ps) tuples.
    #[getter]
    fn placement<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyList>>> {
        match &self.inner {
            Action::SetAllocation { placement, .. } => {
                Some(placement_to_py(py, placement)).transpose()
            }
            _ => Ok(None),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyAction>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match &self.inner {
            Action::SetAllocation { placement, .. } if !placement.is_empty() => {
                let p = placement_to_py(py, placement)
                    .map_or_else(|_| "?".to_string(), |l| show(l.as_any()));
                format!("Action.run({}, {p})", self.inner.job().0)
            }
            a => format!("Action.{}({})", kind(a), a.job().0),
        }
    }
}

/// A run action, or why its placement is not one.
fn run_action(
    job: u32,
    placement: &Bound<'_, PyAny>,
    gpus: Option<Vec<(u32, u32)>>,
    local: Option<u32>,
) -> Result<Action, String> {
    Ok(Action::SetAllocation {
        job: JobId(job),
        placement: placement_from_py(placement)?,
        gpus: gpus.map(|g| {
            g.into_iter()
                .map(|(m, index)| GpuId {
                    machine: MachineId(m),
                    index,
                })
                .collect()
        }),
        config: local.map(|m| Configuration::Local {
            machine: MachineId(m),
        }),
    })
}

/// An action's kind.
fn kind(a: &Action) -> &'static str {
    match a {
        Action::SetAllocation { placement, .. } if placement.is_empty() => "pause",
        Action::SetAllocation { .. } => "run",
        Action::Reserve { .. } => "reserve",
        Action::Preempt { .. } => "preempt",
        Action::Reject { .. } => "reject",
    }
}

/// One action from Python: an `Action`, or a dict `{"action": "run",
/// "job": id, "placement": ..., "gpus": ..., "local": ...}` (or
/// "pause", "preempt", "reject").
fn action_from_py(obj: &Bound<'_, PyAny>) -> Result<Action, String> {
    if let Ok(a) = obj.cast::<PyAction>() {
        return Ok(a.get().inner.clone());
    }
    let Ok(d) = obj.cast::<PyDict>() else {
        return Err(format!(
            "{} is not an action (dmlsched.Action, or a dict with \"action\" and \"job\")",
            show(obj)
        ));
    };
    let get = |k: &str| d.get_item(k).ok().flatten();
    let what = get("action").or_else(|| get("kind"));
    let what: String = what
        .as_ref()
        .and_then(|w| w.extract().ok())
        .ok_or_else(|| {
            format!(
                "{}: no \"action\" (run, pause, preempt or reject)",
                show(obj)
            )
        })?;
    let job: u32 = get("job")
        .and_then(|j| j.extract().ok())
        .ok_or_else(|| format!("{}: no job id under \"job\"", show(obj)))?;
    let here = |why: String| format!("{}: {why}", show(obj));
    match what.as_str() {
        "run" => {
            let placement =
                get("placement").ok_or_else(|| here("a run needs a \"placement\"".into()))?;
            let gpus = match get("gpus").filter(|g| !g.is_none()) {
                Some(g) => Some(
                    g.extract()
                        .map_err(|_| here("gpus: expected a list of (machine, index)".into()))?,
                ),
                None => None,
            };
            let local = match get("local").filter(|l| !l.is_none()) {
                Some(l) => Some(
                    l.extract()
                        .map_err(|_| here("local: expected a machine id".into()))?,
                ),
                None => None,
            };
            run_action(job, &placement, gpus, local).map_err(here)
        }
        "pause" => Ok(Action::pause(JobId(job))),
        "preempt" => Ok(Action::Preempt { job: JobId(job) }),
        "reject" => Ok(Action::Reject { job: JobId(job) }),
        other => Err(format!(
            "{}: unknown action {other:?} (run, pause, preempt or reject)",
            show(obj)
        )),
    }
}

/// The actions of an answer: a list (or any iterable) of actions, or None
/// for no action.
fn actions_from_py(answer: &Bound<'_, PyAny>) -> Result<Vec<Action>, String> {
    if answer.is_none() {
        return Ok(Vec::new());
    }
    let not_a_list = || {
        format!(
            "expected a list of actions, got {} ({})",
            show(answer),
            convert::type_name(answer)
        )
    };
    if answer.is_instance_of::<PyString>() || answer.is_instance_of::<PyDict>() {
        return Err(not_a_list());
    }
    let items = answer.try_iter().map_err(|_| not_a_list())?;
    let mut out = Vec::new();
    for (i, item) in items.enumerate() {
        let item = item.map_err(|e| e.to_string())?;
        out.push(action_from_py(&item).map_err(|why| format!("action {i}: {why}"))?);
    }
    Ok(out)
}

/// An event in words, for messages.
fn describe(event: &Event) -> String {
    match event {
        Event::Arrival { job } => format!("the arrival of {job}"),
        Event::Completion { job } => format!("the completion of {job}"),
        Event::Tick { slot } => format!("the tick of slot {slot}"),
        Event::Wakeup => "a wakeup".to_string(),
    }
}

/// An event as a dict: `kind` ("arrival", "completion", "tick",
/// "wakeup"), `job` (its id, or None), `slot` (a tick's slot, or None) and
/// `time` (seconds).
fn event_dict<'py>(py: Python<'py>, time: f64, event: &Event) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (kind, slot) = match event {
        Event::Arrival { .. } => ("arrival", None),
        Event::Completion { .. } => ("completion", None),
        Event::Tick { slot } => ("tick", Some(*slot)),
        Event::Wakeup => ("wakeup", None),
    };
    d.set_item("kind", kind)?;
    d.set_item("job", event.job().map(|j| j.0))?;
    d.set_item("slot", slot)?;
    d.set_item("time", time)?;
    Ok(d)
}

/// The name of a policy object: its `name` attribute (a str, or a method
/// returning one), else its type's name.
pub fn policy_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    match obj.getattr_opt("name")? {
        Some(n) if n.is_callable() => n.call0()?.extract(),
        Some(n) if n.is_instance_of::<PyString>() => n.extract(),
        _ => Ok(convert::type_name(obj)),
    }
}

/// Whether `obj` is a policy object (has a callable `on_event`).
pub fn is_policy_object(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj
        .getattr_opt("on_event")?
        .is_some_and(|f| f.is_callable()))
}

/// A policy written in Python, as a simulator policy.
pub struct PyPolicy {
    obj: Py<PyAny>,
    name: String,
    instance: Py<PyInstance>,
    wakeup: bool,
    notes: bool,
    /// The first exception the Python code raised (or the first malformed
    /// answer), which ends the run.
    error: RefCell<Option<PyErr>>,
}

impl PyPolicy {
    /// The policy of `obj` over `instance`.
    pub fn new(obj: &Bound<'_, PyAny>, instance: &Py<PyInstance>) -> PyResult<Self> {
        let callable = |n: &str| -> PyResult<bool> {
            Ok(obj.getattr_opt(n)?.is_some_and(|f| f.is_callable()))
        };
        Ok(PyPolicy {
            obj: obj.clone().unbind(),
            name: policy_name(obj)?,
            instance: instance.clone_ref(obj.py()),
            wakeup: callable("next_wakeup")?,
            notes: callable("notes")?,
            error: RefCell::new(None),
        })
    }

    /// Calls the object's `reset()`, if it has one, before a run.
    pub fn reset(&self) -> PyResult<()> {
        Python::attach(|py| {
            let obj = self.obj.bind(py);
            match obj.getattr_opt("reset")? {
                Some(f) if f.is_callable() => f.call0().map(drop),
                _ => Ok(()),
            }
        })
    }

    /// The policy's name in reports.
    pub fn label(&self) -> &str {
        &self.name
    }

    /// The exception that ended the run, if any.
    pub fn take_error(&self) -> Option<PyErr> {
        self.error.borrow_mut().take()
    }

    /// The error the simulator gets when the Python code failed (never
    /// shown: the Python exception is raised instead).
    fn abort(&self) -> dmlsched::Error {
        SimError::BadParams {
            policy: self.name.clone(),
            reason: "the Python policy raised an exception".into(),
        }
        .into()
    }

    /// Records `e` (the first one wins).
    fn fail(&self, e: PyErr) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    fn decide(&self, py: Python<'_>, view: &SimView<'_>, event: &Event) -> PyResult<Vec<Action>> {
        let v = view::build(py, view, &self.instance)?;
        let e = event_dict(py, view.now_s(), event)?;
        let answer = self.obj.bind(py).call_method1("on_event", (v, e))?;
        actions_from_py(&answer).map_err(|why| {
            errors::input(format!(
                "policy {}: its answer to {} at t = {} s: {why}",
                self.name,
                describe(event),
                view.now_s()
            ))
        })
    }
}

impl Policy for PyPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> dmlsched::Result<Vec<Action>> {
        if self.error.borrow().is_some() {
            return Err(self.abort());
        }
        match Python::attach(|py| self.decide(py, view, event)) {
            Ok(actions) => Ok(actions),
            Err(e) => {
                self.fail(e);
                Err(self.abort())
            }
        }
    }

    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        if !self.wakeup || self.error.borrow().is_some() {
            return None;
        }
        let asked = Python::attach(|py| -> PyResult<Option<f64>> {
            let v = view::build(py, view, &self.instance)?;
            self.obj
                .bind(py)
                .call_method1("next_wakeup", (v,))?
                .extract()
        });
        asked.unwrap_or_else(|e| {
            self.fail(e);
            None
        })
    }

    fn notes(&self) -> Vec<String> {
        if !self.notes || self.error.borrow().is_some() {
            return Vec::new();
        }
        let notes = Python::attach(|py| -> PyResult<Vec<String>> {
            self.obj.bind(py).call_method0("notes")?.extract()
        });
        notes.unwrap_or_else(|e| {
            self.fail(e);
            Vec::new()
        })
    }
}
