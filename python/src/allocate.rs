//! `dmlsched.allocate`: a heterogeneity-aware allocation policy on an
//! input in the allocate format (docs/allocate-format.md), answered as
//! `dmlsched allocate` prints it (`Allocation::to_json`).

use dmlsched::allocate::{AllocationInput, AllocationPolicy, allocate as run_allocate};
use pyo3::prelude::*;

use crate::convert::{self, JsonArg};
use crate::errors::{self, Failure};

/// The allocation of `policy` on `input` (a dict, JSON text or a path):
/// a dict with `policy`, `objective`, `allocation`,
/// `effective_throughput` and `certificate`.
#[pyfunction]
pub fn allocate<'py>(
    py: Python<'py>,
    policy: &str,
    input: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let policy: AllocationPolicy = policy
        .parse()
        .map_err(|e| PyErr::from(Failure::allocation(&e)))?;
    let arg = JsonArg::from_py(input, "input")?;
    let parsed =
        AllocationInput::from_json(&arg.text).map_err(|e| match Failure::allocation(&e) {
            Failure::Input(m) => errors::input(arg.message(m)),
            other => other.into(),
        })?;
    let answer = py.detach(|| run_allocate(policy, &parsed).map(|a| a.to_json()));
    // As the command line, an error of a file's input names the file.
    let answer = answer.map_err(|e| match Failure::allocation(&e) {
        Failure::Input(m) => Failure::Input(arg.message(m)),
        Failure::Run(m) => Failure::Run(arg.message(m)),
        other => other,
    })?;
    convert::to_py(py, &answer)
}
