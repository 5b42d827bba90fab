//! `dmlsched.Session`'s methods: one per protocol event, each answering
//! the protocol's reply line as a dict.

use std::path::PathBuf;
use std::sync::Mutex;

use dmlsched::model::{JobId, MachineId, Resources};
use dmlsched::protocol::{self, DEFAULT_SLOT_S, Event, OpenOptions, SessionSet};
use dmlsched::state::ClusterState;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use super::{PySession, algorithm_arg, cluster_arg, failure, lock, params_of, past_arg};
use crate::certificate::PyCertificate;
use crate::convert::{self, JsonArg};
use crate::errors::{self, Failure};

#[pymethods]
impl PySession {
    /// A new session over `cluster` (see the class's documentation).
    #[new]
    #[pyo3(
        signature = (
            cluster, algorithm = None, params = None, past = None, slot_length = None,
            window = 200, seed = 0
        ),
        text_signature = "(cluster, algorithm='gadget', params=None, past=None, \
                          slot_length=None, window=200, seed=0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        cluster: &Bound<'_, PyAny>,
        algorithm: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyAny>>,
        past: Option<&Bound<'_, PyAny>>,
        slot_length: Option<f64>,
        window: u32,
        seed: u64,
    ) -> PyResult<Self> {
        let text = match algorithm {
            Some(a) => algorithm_arg(a)?,
            None => "gadget".to_string(),
        };
        let spec = protocol::parse_algorithms(&text).map_err(failure)?;
        let (cluster, instance_jobs, instance_slot) = cluster_arg(cluster)?;
        let slot_s = slot_length.or(instance_slot).unwrap_or(DEFAULT_SLOT_S);
        let state =
            ClusterState::new(&cluster, slot_s).map_err(|e| errors::input(e.to_string()))?;
        let past = match (past.filter(|p| !p.is_none()), instance_jobs) {
            (Some(p), _) => past_arg(p)?,
            (None, Some(jobs)) => jobs,
            (None, None) => {
                return Err(errors::input(
                    "a new session needs past jobs (jobs like the ones to come, to learn price \
                     bounds from): give past=, or an instance as the cluster",
                ));
            }
        };
        let mut options = OpenOptions::default();
        options.window = window;
        options.params = params_of(params, &spec)?;
        options.seed = seed;
        let sessions = py
            .detach(move || SessionSet::open(state, &spec, &past, &options))
            .map_err(failure)?;
        Ok(PySession {
            inner: Mutex::new(sessions),
        })
    }

    /// Decides on `job` (a dict in the instance format's job shape, or
    /// its JSON text) submitted at `time` (default: its `arrival_s`, else
    /// the session's time).
    #[pyo3(signature = (job, time = None))]
    fn submit<'py>(
        &self,
        py: Python<'py>,
        job: &Bound<'py, PyAny>,
        time: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let job: Value = serde_json::from_str(&JsonArg::from_py(job, "job")?.text)
            .map_err(|e| errors::input(format!("not a job: {e}")))?;
        self.call(py, move |s| s.submit(job, time))
    }

    /// Decides again on a job its session rejected.
    fn resubmit<'py>(&self, py: Python<'py>, job: u32, time: f64) -> PyResult<Bound<'py, PyAny>> {
        self.apply(
            py,
            Event::Resubmit {
                time_s: time,
                job: JobId(job),
            },
        )
    }

    /// The job finished at `time`: the rest of its plan is released.
    fn finish<'py>(&self, py: Python<'py>, job: u32, time: f64) -> PyResult<Bound<'py, PyAny>> {
        self.apply(
            py,
            Event::Finish {
                time_s: time,
                job: JobId(job),
            },
        )
    }

    /// The job is cancelled at `time`: as finish, and it adds no utility.
    fn cancel<'py>(&self, py: Python<'py>, job: u32, time: f64) -> PyResult<Bound<'py, PyAny>> {
        self.apply(
            py,
            Event::Cancel {
                time_s: time,
                job: JobId(job),
            },
        )
    }

    /// The job still runs at its plan's end and needs about `more_s`
    /// seconds more: its last segment is extended if there is room, else
    /// it is preempted.
    fn extend<'py>(
        &self,
        py: Python<'py>,
        job: u32,
        time: f64,
        more_s: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let job = JobId(job);
        self.apply(
            py,
            Event::Extend {
                time_s: time,
                job,
                more_s,
            },
        )
    }

    /// Capacity used by something outside the sessions on `machine` from
    /// `from_s` to `to_s` (`resources`: the instance format's resources).
    fn usage<'py>(
        &self,
        py: Python<'py>,
        machine: u32,
        from_s: f64,
        to_s: f64,
        resources: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let r: Resources = serde_json::from_value(convert::to_json(resources, "resources")?)
            .map_err(|e| errors::input(format!("resources: {e}")))?;
        let machine = MachineId(machine);
        self.apply(
            py,
            Event::Usage {
                machine,
                from_s,
                to_s,
                resources: r,
            },
        )
    }

    /// The session's full certificate now (with several algorithms, name
    /// the one).
    #[pyo3(signature = (algorithm = None))]
    fn certificate(&self, py: Python<'_>, algorithm: Option<String>) -> PyResult<PyCertificate> {
        let c = py.detach(|| -> Result<_, Failure> {
            lock(&self.inner)?
                .certificate(algorithm.as_deref())
                .map_err(failure)
        })?;
        Ok(PyCertificate::new(c))
    }

    /// Every session's full certificate, by algorithm.
    fn certificates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let all = py.detach(|| -> Result<_, Failure> {
            lock(&self.inner)?.certificates().map_err(failure)
        })?;
        let d = PyDict::new(py);
        for (name, c) in all {
            d.set_item(name, Py::new(py, PyCertificate::new(c))?)?;
        }
        Ok(d)
    }

    /// A job's status ("admitted", "rejected", "finished", "cancelled",
    /// "preempted"), or None if it was never submitted.
    fn status(&self, py: Python<'_>, job: u32) -> PyResult<Option<String>> {
        let status =
            py.detach(|| -> Result<_, Failure> { Ok(lock(&self.inner)?.status(JobId(job))) })?;
        Ok(status.and_then(|st| serde_json::to_value(st).ok()?.as_str().map(str::to_string)))
    }

    /// Saves the session to `path` (the layout of `dmlsched session
    /// --state`; written beside it with the extension `.tmp`, then renamed
    /// over it).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| -> Result<(), Failure> {
            lock(&self.inner)?.save_file(&path).map_err(failure)
        })?;
        Ok(())
    }

    /// The session saved in `path` (by `save` or `dmlsched session
    /// --state`): it decides as the saved one would have.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let arg = JsonArg::from_file(&path)?;
        let shown = path.display().to_string();
        let sessions = py.detach(|| {
            SessionSet::restore(&arg.text).map_err(|e| Failure::Input(format!("{shown}: {e}")))
        })?;
        Ok(PySession {
            inner: Mutex::new(sessions),
        })
    }

    /// The session's time: the latest event's, seconds.
    #[getter]
    fn now(&self) -> PyResult<f64> {
        Ok(lock(&self.inner)?.now_s())
    }

    /// The algorithms, one per job architecture.
    #[getter]
    fn algorithms(&self) -> PyResult<Vec<String>> {
        let algorithms = lock(&self.inner)?.algorithms();
        Ok(algorithms.into_iter().map(|(_, name)| name).collect())
    }

    /// The planning window, slots.
    #[getter]
    fn window(&self) -> PyResult<u32> {
        Ok(lock(&self.inner)?.window())
    }

    /// The slot length, seconds.
    #[getter]
    fn slot_length_s(&self) -> PyResult<f64> {
        Ok(lock(&self.inner)?.slot_length_s())
    }

    fn __repr__(&self) -> String {
        match lock(&self.inner) {
            Ok(s) => format!(
                "Session({}, t = {} s)",
                s.algorithms()
                    .iter()
                    .map(|(arch, name)| format!("{}={name}", protocol::arch_name(*arch)))
                    .collect::<Vec<_>>()
                    .join(", "),
                s.now_s()
            ),
            Err(_) => "Session(poisoned)".into(),
        }
    }
}
