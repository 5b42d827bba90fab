//! `dmlsched.solve`: one algorithm on an instance, as `dmlsched solve`
//! runs it (`registry::solve`, then `schedule::verify`).

use dmlsched::registry;
use dmlsched::schedule::verify;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::certificate::PyCertificate;
use crate::convert::{self, JsonArg};
use crate::errors::Failure;
use crate::instance::instance_arg;

/// An algorithm's run: its schedule, certificate and report.
#[pyclass(frozen, name = "Solved", module = "dmlsched")]
pub struct PySolved {
    algorithm: String,
    seed: u64,
    headline: String,
    schedule: Py<PyAny>,
    certificate: Py<PyCertificate>,
    report: Py<PyAny>,
}

#[pymethods]
impl PySolved {
    /// The algorithm's name.
    #[getter]
    fn algorithm(&self) -> &str {
        &self.algorithm
    }

    /// The seed it ran with.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The schedule as a dict (the JSON of `dmlsched solve --out`'s
    /// schedule.json: `{"jobs": [{"job", "admitted", "segments"}, ...]}`).
    #[getter]
    fn schedule(&self, py: Python<'_>) -> Py<PyAny> {
        self.schedule.clone_ref(py)
    }

    /// The certificate; its `valid` includes the schedule checker's verdict.
    #[getter]
    fn certificate(&self, py: Python<'_>) -> Py<PyCertificate> {
        self.certificate.clone_ref(py)
    }

    /// The algorithm's report as a dict: `headline` (the run in one line,
    /// as `dmlsched solve` prints it), `notes` (lines about the run) and
    /// `files` (further JSON reports by file name, e.g. the SMD-style
    /// scheduler's `epochs.json`).
    #[getter]
    fn report(&self, py: Python<'_>) -> Py<PyAny> {
        self.report.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!("Solved({}: {})", self.algorithm, self.headline)
    }
}

/// Runs algorithm `algorithm` on `instance` with `params` and `seed`.
#[pyfunction]
#[pyo3(signature = (instance, algorithm, params = None, seed = 0))]
pub fn solve(
    py: Python<'_>,
    instance: &Bound<'_, PyAny>,
    algorithm: &str,
    params: Option<&Bound<'_, PyAny>>,
    seed: u64,
) -> PyResult<PySolved> {
    let instance = instance_arg(instance)?;
    let inst = std::sync::Arc::clone(&instance.get().inner);
    let params = params
        .filter(|p| !p.is_none())
        .map(|p| JsonArg::from_py(p, "params"))
        .transpose()?;
    let name = algorithm.to_string();
    let text = params.as_ref().map(|p| p.text.clone());
    let run = py.detach(move || -> Result<_, Failure> {
        let out = registry::solve(&name, &inst, text.as_deref(), seed).map_err(|e| {
            // A parameters file that is not the parameters' JSON is bad
            // input about the file, as the command line says.
            match (&e, &params) {
                (dmlsched::Error::Json(j), Some(p)) if p.path.is_some() => {
                    Failure::Input(p.message(j))
                }
                _ => Failure::lib(&e),
            }
        })?;
        let checked = verify(&inst, &out.schedule).map_err(|v| v.to_string());
        let admitted = out.schedule.jobs.iter().filter(|j| j.admitted).count();
        let headline = out
            .headline
            .clone()
            .unwrap_or_else(|| format!("{} jobs, {admitted} admitted", inst.jobs().len()));
        Ok((out, checked, headline))
    });
    let (out, checked, headline) = run?;
    let report = PyDict::new(py);
    report.set_item("headline", &headline)?;
    report.set_item("notes", &out.notes)?;
    let files = PyDict::new(py);
    for (file, value) in &out.files {
        files.set_item(*file, convert::to_py(py, value)?)?;
    }
    report.set_item("files", files)?;
    let certificate = PyCertificate {
        inner: out.certificate,
        schedule: Some(checked),
    };
    Ok(PySolved {
        algorithm: algorithm.to_string(),
        seed,
        headline,
        schedule: convert::serialize_to_py(py, &out.schedule)?.unbind(),
        certificate: Py::new(py, certificate)?,
        report: report.into_any().unbind(),
    })
}
