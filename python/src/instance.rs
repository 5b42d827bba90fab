//! `dmlsched.Instance`: a validated instance (cluster, jobs, horizon),
//! read from a dict, JSON text or a file as `Instance::from_json` reads it.

use std::path::PathBuf;
use std::sync::Arc;

use dmlsched::model::{Instance, JobId};
use pyo3::prelude::*;

use crate::convert::{self, JsonArg};
use crate::errors;

/// An instance: a cluster, jobs with their arrivals, a slot length and a
/// horizon, validated once when read.
#[pyclass(frozen, name = "Instance", module = "dmlsched")]
pub struct PyInstance {
    /// The instance, shared with the runs that read it.
    pub inner: Arc<Instance>,
    /// What reports call it: the file's name, or `"instance"`.
    pub label: String,
}

impl PyInstance {
    /// The instance of `arg`, as `Instance::from_json` reads it; an error
    /// about a file names the file.
    fn parse(arg: &JsonArg) -> PyResult<Self> {
        let inner = Instance::from_json(&arg.text).map_err(|e| {
            let failure = crate::errors::Failure::lib(&e);
            match failure {
                crate::errors::Failure::Input(m) => errors::input(arg.message(m)),
                other => other.into(),
            }
        })?;
        Ok(PyInstance {
            inner: Arc::new(inner),
            label: arg.file_name().unwrap_or_else(|| "instance".into()),
        })
    }
}

/// The instance an argument stands for: an `Instance`, a dict, JSON text
/// or a path.
pub fn instance_arg(obj: &Bound<'_, PyAny>) -> PyResult<Py<PyInstance>> {
    if let Ok(i) = obj.cast::<PyInstance>() {
        return Ok(i.clone().unbind());
    }
    let parsed = PyInstance::parse(&JsonArg::from_py(obj, "instance")?)?;
    Py::new(obj.py(), parsed)
}

#[pymethods]
impl PyInstance {
    /// An instance from a dict, JSON text or a file path.
    #[new]
    fn new(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(i) = source.cast::<PyInstance>() {
            let i = i.get();
            return Ok(PyInstance {
                inner: Arc::clone(&i.inner),
                label: i.label.clone(),
            });
        }
        PyInstance::parse(&JsonArg::from_py(source, "instance")?)
    }

    /// An instance from a dict in the instance format.
    #[staticmethod]
    fn from_dict(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = convert::to_json(data, "instance")?;
        PyInstance::parse(&JsonArg {
            text: value.to_string(),
            path: None,
        })
    }

    /// An instance from JSON text in the instance format.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        PyInstance::parse(&JsonArg {
            text: text.to_string(),
            path: None,
        })
    }

    /// An instance from a JSON file in the instance format.
    #[staticmethod]
    fn from_file(path: PathBuf) -> PyResult<Self> {
        PyInstance::parse(&JsonArg::from_file(&path)?)
    }

    /// The instance as a dict (the instance format, with `format_version`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serialize_to_py(py, &*self.inner)
    }

    /// The instance as pretty JSON text (the instance format).
    fn to_json(&self) -> PyResult<String> {
        self.inner.to_json().map_err(|e| errors::lib(&e))
    }

    /// The number of jobs.
    #[getter]
    fn n_jobs(&self) -> usize {
        self.inner.jobs().len()
    }

    /// The number of machines.
    #[getter]
    fn n_machines(&self) -> usize {
        self.inner.cluster().machines.len()
    }

    /// The jobs' ids, in the instance's order.
    #[getter]
    fn job_ids(&self) -> Vec<u32> {
        self.inner.jobs().iter().map(|j| j.id.0).collect()
    }

    /// The machines' ids, in the cluster's order (a machine's position in
    /// this list is its position in `View.free`).
    #[getter]
    fn machine_ids(&self) -> Vec<u32> {
        self.inner
            .cluster()
            .machines
            .iter()
            .map(|m| m.id.0)
            .collect()
    }

    /// The horizon, in slots.
    #[getter]
    fn horizon_slots(&self) -> u32 {
        self.inner.horizon_slots()
    }

    /// The horizon, in seconds.
    #[getter]
    fn horizon_s(&self) -> f64 {
        self.inner.horizon_s()
    }

    /// The slot length, in seconds.
    #[getter]
    fn slot_length_s(&self) -> f64 {
        self.inner.slot_length_s()
    }

    /// The cluster's GPU types: those it names (`cluster.gpu_types`), else
    /// the types its machines with GPUs name, in machine order (empty for a
    /// cluster that does not model types).
    #[getter]
    fn gpu_types(&self) -> Vec<String> {
        let cluster = self.inner.cluster();
        if !cluster.gpu_types.is_empty() {
            return cluster.gpu_types.clone();
        }
        cluster
            .gpu_types_present()
            .into_iter()
            .flatten()
            .map(str::to_string)
            .collect()
    }

    /// The cluster's GPUs, all machines together.
    #[getter]
    fn total_gpus(&self) -> f64 {
        self.inner.cluster().total_capacity().gpus
    }

    /// What reports call the instance: its file's name, or `"instance"`.
    #[getter]
    fn label(&self) -> &str {
        &self.label
    }

    /// The job with id `id` as a dict (the instance format), or None.
    fn job<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .job(JobId(id))
            .map(|j| convert::serialize_to_py(py, j))
            .transpose()
    }

    /// The cluster as a dict (the instance format's `cluster` object).
    fn cluster<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serialize_to_py(py, self.inner.cluster())
    }

    fn __len__(&self) -> usize {
        self.inner.jobs().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Instance({:?}: {} jobs on {} machines, {} slots of {} s)",
            self.label,
            self.inner.jobs().len(),
            self.inner.cluster().machines.len(),
            self.inner.horizon_slots(),
            self.inner.slot_length_s()
        )
    }
}
