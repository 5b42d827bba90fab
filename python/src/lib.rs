//! `dmlsched._native`: the Rust half of the `dmlsched` Python package.
//!
//! The bindings drive the same library calls as the `dmlsched` command
//! line (`src/bin/dmlsched/`) and keep the library's error messages. Every
//! run (solve, allocate, simulate, replay, a session call, a sweep)
//! releases the GIL (`Python::detach`); a simulation reattaches only to
//! call a policy written in Python, a sweep only to report a finished
//! cell. The Python layer (`python/dmlsched/`) re-exports this module and
//! turns the simulator's CSV tables into pandas frames.
//!
//! | file | binds |
//! |---|---|
//! | `errors.rs` | `DmlschedError`, `InputError`, `RunError` |
//! | `convert.rs` | Python objects ⇄ JSON, and dict / JSON text / path arguments |
//! | `instance.rs` | `Instance` |
//! | `certificate.rs` | `Certificate`, `Bound`, `Guarantee` |
//! | `solve.rs` | `solve`, `Solved` |
//! | `allocate.rs` | `allocate` |
//! | `simulate.rs` | `_simulate` (wrapped by `dmlsched.simulate`) |
//! | `replay.rs` | `_replay` (wrapped by `dmlsched.replay`) |
//! | `sweep.rs` | `_sweep_plan`, `_sweep_run`, `_sweep_missing`, `_sweep_run_cell`, `_sweep_put`, `_sweep_absorb`, `_sweep_tables`, `_sweep_shard`, `_SweepPlan` (wrapped by `dmlsched.sweep`) |
//! | `policy.rs` | policies written in Python: `View`, `JobView`, `Placer`, `Action` |
//! | `session.rs` | `Session` |

mod allocate;
mod certificate;
mod convert;
mod errors;
mod instance;
mod policy;
mod replay;
mod session;
mod simulate;
mod solve;
mod sweep;
mod view;

use pyo3::prelude::*;

/// The Rust extension of the `dmlsched` package (import `dmlsched`, not
/// this module).
#[pymodule(name = "_native")]
mod native {
    use pyo3::prelude::*;

    #[pymodule_export]
    use super::errors::{DmlschedError, InputError, RunError};

    #[pymodule_export]
    use super::instance::PyInstance;

    #[pymodule_export]
    use super::certificate::{PyBound, PyCertificate, PyGuarantee};

    #[pymodule_export]
    use super::solve::{PySolved, solve};

    #[pymodule_export]
    use super::allocate::allocate;

    #[pymodule_export]
    use super::simulate::_simulate;

    #[pymodule_export]
    use super::replay::_replay;

    #[pymodule_export]
    use super::sweep::{
        _sweep_absorb, _sweep_missing, _sweep_plan, _sweep_put, _sweep_run, _sweep_run_cell,
        _sweep_shard, _sweep_tables, PySweepPlan,
    };

    #[pymodule_export]
    use super::policy::{PyAction, PyJobView, PyPlacer, PyView};

    #[pymodule_export]
    use super::session::PySession;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        super::add_names(m)
    }
}

/// The registry's names, as tuples of strings.
fn add_names(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use dmlsched::registry;
    let py = m.py();
    let tuple = |names: &[&str]| pyo3::types::PyTuple::new(py, names);
    m.add("ALGORITHMS", tuple(&registry::ALGORITHMS)?)?;
    m.add("ALGORITHM_POLICIES", tuple(&registry::ALGORITHM_POLICIES)?)?;
    m.add("SESSION_ALGORITHMS", tuple(&registry::SESSION_ALGORITHMS)?)?;
    m.add("BASELINES", tuple(registry::BASELINES)?)?;
    m.add("RING_BASELINES", tuple(registry::RING_BASELINES)?)?;
    m.add("ROUND_POLICIES", tuple(registry::ROUND_POLICIES)?)?;
    let allocation: Vec<&str> = dmlsched::allocate::AllocationPolicy::ALL
        .iter()
        .map(|p| p.name())
        .collect();
    m.add("ALLOCATION_POLICIES", tuple(&allocation)?)?;
    let rules: Vec<&str> = dmlsched::placement::PlacementRule::ALL
        .iter()
        .map(|(_, n)| *n)
        .collect();
    m.add("PLACEMENT_RULES", tuple(&rules)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
