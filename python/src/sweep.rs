//! `dmlsched.sweep`'s Rust half: the library's sweeps
//! ([`dmlsched::sweep`]), with the semantics of `dmlsched sweep`
//! (`src/bin/dmlsched/sweep.rs`). A grid is planned once
//! ([`_sweep_plan`], every cell checked); its cells run on this process's
//! threads ([`_sweep_run`], the local back end) or one by one on another
//! engine ([`_sweep_missing`] lists them as JSON, [`_sweep_run_cell`] runs
//! one anywhere, [`_sweep_put`] keeps its result: the Ray back end); the
//! store's cells are joined into the tables ([`_sweep_tables`]).
//!
//! Everything that runs cells or touches the store releases the GIL. The
//! Python layer (`dmlsched/_sweep.py`) draws the progress bar and reads
//! the tables with pandas.

use std::path::PathBuf;

use dmlsched::sweep::{
    Cell, CellResult, Grid, Plan, RunOptions, Shard, Store, SweepError, SweepObserver, run,
    run_cell, tables,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{self, Failure};

impl From<SweepError> for Failure {
    fn from(e: SweepError) -> Self {
        if e.is_input() {
            Failure::Input(e.to_string())
        } else {
            Failure::Run(e.to_string())
        }
    }
}

/// `"input"` or `"run"`: which exception a cell's error becomes.
fn kind(e: &SweepError) -> &'static str {
    if e.is_input() { "input" } else { "run" }
}

/// A sweep's grid, planned: its distinct cells and its tables' rows
/// (`dmlsched::sweep::Plan`). Made by `_sweep_plan`; used by the other
/// `_sweep_*` functions.
#[pyclass(frozen, name = "_SweepPlan", module = "dmlsched")]
pub struct PySweepPlan {
    plan: Plan,
}

#[pymethods]
impl PySweepPlan {
    /// The grid's distinct cells (rows that run the same thing share one).
    #[getter]
    fn cells(&self) -> usize {
        self.plan.cells.len()
    }

    /// The rows of the grid's tables.
    #[getter]
    fn rows(&self) -> usize {
        self.plan.rows.len()
    }

    /// Whether the grid is of instances (else of trace windows).
    #[getter]
    fn instances(&self) -> bool {
        self.plan.instances
    }

    fn __repr__(&self) -> String {
        format!(
            "<sweep plan: {} rows, {} distinct cells>",
            self.plan.rows.len(),
            self.plan.cells.len()
        )
    }
}

/// The grid of JSON `text` (relative paths from `base`), or of the file
/// `path` (relative paths from its folder), planned: every cell checked
/// before anything runs.
#[pyfunction]
#[pyo3(signature = (*, text = None, base = None, path = None))]
pub fn _sweep_plan(
    py: Python<'_>,
    text: Option<String>,
    base: Option<PathBuf>,
    path: Option<PathBuf>,
) -> PyResult<PySweepPlan> {
    let plan = py.detach(move || -> Result<Plan, Failure> {
        let grid = match (text, path) {
            (Some(text), None) => Grid::from_json(&text, &base.unwrap_or_default())?,
            (None, Some(path)) => Grid::from_file(&path)?,
            _ => return Err(Failure::Input("give the grid as text or as a path".into())),
        };
        Ok(grid.plan()?)
    })?;
    Ok(PySweepPlan { plan })
}

/// `"INDEX/COUNT"` read as the command line's `--shard`.
fn shard_arg(shard: Option<&str>) -> Result<Option<Shard>, Failure> {
    Ok(shard.map(str::parse::<Shard>).transpose()?)
}

/// `"INDEX/COUNT"` (INDEX from 0) read as the command line's `--shard`:
/// `(index, count)`, checked before anything runs.
#[pyfunction]
pub fn _sweep_shard(shard: &str) -> PyResult<(usize, usize)> {
    let s = shard.parse::<Shard>().map_err(Failure::from)?;
    Ok((s.index, s.count))
}

/// Tells Python how the run goes (`on_start(to_run, skipped)`,
/// `on_cell(done, total, label, error)`, each called with the GIL), and
/// between cells looks for a signal (Ctrl-C). A signal's exception, or
/// one a callback raised, stops the sweep once the cells under way finish,
/// and is raised.
struct Observer {
    on_start: Option<Py<PyAny>>,
    on_cell: Option<Py<PyAny>>,
    done: usize,
    total: usize,
    interrupt: Option<PyErr>,
}

impl SweepObserver for Observer {
    fn started(&mut self, to_run: usize, skipped: usize) {
        self.total = to_run;
        if self.interrupt.is_none()
            && let Some(f) = &self.on_start
            && let Err(e) = Python::attach(|py| f.bind(py).call1((to_run, skipped)).map(drop))
        {
            self.interrupt = Some(e);
        }
    }

    fn cell_done(&mut self, done: usize, total: usize, cell: &Cell, result: &CellResult) {
        self.done = done;
        let error = result.error.as_ref().map(|e| (kind(e), e.to_string()));
        if self.interrupt.is_none()
            && let Some(f) = &self.on_cell
            && let Err(e) = Python::attach(|py| {
                f.bind(py)
                    .call1((done, total, cell.label(), error))
                    .map(drop)
            })
        {
            self.interrupt = Some(e);
        }
    }

    fn keep_going(&mut self) -> bool {
        if self.interrupt.is_some() {
            return false;
        }
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => true,
            Err(e) => {
                self.interrupt = Some(e);
                false
            }
        }
    }
}

/// Runs the cells of `plan` (of `shard`, `"INDEX/COUNT"`) that the store
/// in `out` lacks, on `workers` threads (default: one per core), keeping
/// each in the store as it finishes: the library's `sweep::run`, with the
/// GIL released. `on_start(to_run, skipped)` is called first and
/// `on_cell(done, total, label, error)` after each cell (`error`: None or
/// `(kind, message)`, kind "input" or "run"), both with the GIL.
///
/// Returns `{"cells", "skipped", "ran", "failed"}`, `failed` a list of
/// `(label, kind, message)` in the plan's order. Ctrl-C stops the sweep
/// once the cells under way finish (they are kept) and raises, with
/// `runs_done` and `runs_total` (cells) on the exception.
#[pyfunction]
#[pyo3(signature = (plan, out, *, workers = None, shard = None, on_start = None, on_cell = None))]
pub fn _sweep_run<'py>(
    py: Python<'py>,
    plan: &Bound<'py, PySweepPlan>,
    out: PathBuf,
    workers: Option<usize>,
    shard: Option<String>,
    on_start: Option<Py<PyAny>>,
    on_cell: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let plan = &plan.get().plan;
    let report = py.detach(move || -> Result<_, Failure> {
        let mut options = RunOptions::default();
        options.workers = workers;
        options.shard = shard_arg(shard.as_deref())?;
        let store = Store::open(&out)?;
        let mut observer = Observer {
            on_start,
            on_cell,
            done: 0,
            total: 0,
            interrupt: None,
        };
        let ran = run(plan, &store, &options, &mut observer);
        match (observer.interrupt, ran) {
            (Some(err), Err(SweepError::Stopped { done, total })) => Err(Failure::Python(
                errors::stopped_after(err, done, total, "cells"),
            )),
            (Some(err), Ok(_)) => Err(Failure::Python(errors::stopped_after(
                err,
                observer.done,
                observer.total,
                "cells",
            ))),
            (Some(err), Err(_)) => Err(Failure::Python(err)),
            (None, ran) => Ok(ran?),
        }
    })?;
    // In the grid's order, not the order they ended in.
    let index: std::collections::HashMap<&str, usize> = plan
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key(), i))
        .collect();
    let mut failed: Vec<(usize, &Cell, &SweepError)> = report
        .failed
        .iter()
        .map(|(c, e)| (index.get(c.key()).copied().unwrap_or(usize::MAX), c, e))
        .collect();
    failed.sort_by_key(|f| f.0);
    let d = PyDict::new(py);
    d.set_item("cells", report.cells)?;
    d.set_item("skipped", report.skipped)?;
    d.set_item("ran", report.ran)?;
    let list = PyList::empty(py);
    for (_, cell, e) in failed {
        list.append((cell.label(), kind(e), e.to_string()))?;
    }
    d.set_item("failed", list)?;
    Ok(d)
}

/// A cell to run elsewhere: its key, its label and its JSON.
type Missing = (String, String, String);

/// The cells of `plan` (of `shard`) that the store in `out` lacks, for
/// another engine to run: `(cells, missing)`, `cells` the shard's number
/// of cells and `missing` a list of `(key, label, cell_json)` in the
/// plan's order (`cell_json` for `_sweep_run_cell` and `_sweep_put`).
#[pyfunction]
#[pyo3(signature = (plan, out, *, shard = None))]
pub fn _sweep_missing(
    py: Python<'_>,
    plan: &Bound<'_, PySweepPlan>,
    out: PathBuf,
    shard: Option<String>,
) -> PyResult<(usize, Vec<Missing>)> {
    let plan = &plan.get().plan;
    let listed = py.detach(move || -> Result<_, Failure> {
        let mine: Vec<&Cell> = match shard_arg(shard.as_deref())? {
            Some(s) => plan.shard(s),
            None => plan.cells.iter().collect(),
        };
        let store = Store::open(&out)?;
        let missing = mine
            .iter()
            .filter(|c| !store.contains(c))
            .map(|c| (c.key().to_string(), c.label(), c.to_json()))
            .collect();
        Ok((mine.len(), missing))
    })?;
    Ok(listed)
}

/// Runs one cell (JSON from `_sweep_missing`), with the GIL released:
/// what a Ray task runs. Returns `{"summary_csv", "jobs_csv", "wall_s",
/// "error"}`, `error` None or `(kind, message)`; the same cell gives the
/// same tables on any machine.
#[pyfunction]
pub fn _sweep_run_cell<'py>(py: Python<'py>, cell_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cell = Cell::from_json(cell_json).map_err(Failure::from)?;
    let result = py.detach(|| {
        std::panic::catch_unwind(|| run_cell(&cell)).unwrap_or_else(|panic| {
            // As the library's thread pool: a panicking cell is a failed
            // one, not a crashed worker.
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            let mut r = CellResult::default();
            r.error = Some(SweepError::Run(format!(
                "{}: panicked: {why}",
                cell.label()
            )));
            r
        })
    });
    let d = PyDict::new(py);
    d.set_item("summary_csv", &result.summary_csv)?;
    d.set_item("jobs_csv", &result.jobs_csv)?;
    d.set_item("wall_s", result.wall_s)?;
    d.set_item(
        "error",
        result.error.as_ref().map(|e| (kind(e), e.to_string())),
    )?;
    Ok(d)
}

/// Keeps a finished cell's tables (from `_sweep_run_cell`) in the store
/// in `out`, written whole or not at all (`Store::put`).
#[pyfunction]
pub fn _sweep_put(
    py: Python<'_>,
    out: PathBuf,
    cell_json: &str,
    summary_csv: String,
    jobs_csv: String,
    wall_s: f64,
) -> PyResult<()> {
    let cell = Cell::from_json(cell_json).map_err(Failure::from)?;
    py.detach(move || -> Result<(), Failure> {
        let mut result = CellResult::default();
        result.summary_csv = summary_csv;
        result.jobs_csv = jobs_csv;
        result.wall_s = wall_s;
        Ok(Store::open(&out)?.put(&cell, &result)?)
    })?;
    Ok(())
}

/// Copies into the store in `out` the cells of `plan` finished in the
/// sweep folder `other` (`Store::absorb`, as `dmlsched sweep --merge
/// --from`); returns how many. A folder that holds no store is bad input.
#[pyfunction]
pub fn _sweep_absorb(
    py: Python<'_>,
    plan: &Bound<'_, PySweepPlan>,
    out: PathBuf,
    other: PathBuf,
) -> PyResult<usize> {
    let plan = &plan.get().plan;
    let copied = py.detach(move || -> Result<usize, Failure> {
        let other = Store::open_existing(&other)?;
        let store = Store::open(&out)?;
        Ok(store.absorb(&other, plan)?)
    })?;
    Ok(copied)
}

/// The grid's tables from the store in `out`: `{"summary_csv",
/// "jobs_csv", "timings_csv", "complete", "finished"}`. When every cell is
/// finished, the library's `sweep::tables`, also written into `out` (the
/// command's summary.csv, jobs.csv and timings.csv) when `write`; else the
/// same tables of the finished cells' rows only, written nowhere.
#[pyfunction]
#[pyo3(signature = (plan, out, *, write))]
pub fn _sweep_tables<'py>(
    py: Python<'py>,
    plan: &Bound<'py, PySweepPlan>,
    out: PathBuf,
    write: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let plan = &plan.get().plan;
    let (t, finished) = py.detach(move || -> Result<_, Failure> {
        let store = Store::open(&out)?;
        let finished = finished_part(plan, &store);
        let complete = finished.cells.len() == plan.cells.len();
        let t = tables(if complete { plan } else { &finished }, &store)?;
        if complete && write {
            t.write(&out)?;
            // Every cell is finished: what killed runs left half-written goes.
            store.clean_partials()?;
        }
        Ok((t, finished.cells.len()))
    })?;
    let d = PyDict::new(py);
    d.set_item("summary_csv", &t.summary_csv)?;
    d.set_item("jobs_csv", &t.jobs_csv)?;
    d.set_item("timings_csv", &t.timings_csv)?;
    d.set_item("complete", finished == plan.cells.len())?;
    d.set_item("finished", finished)?;
    Ok(d)
}

/// The part of `plan` finished in `store`: its finished cells, and the
/// rows of those cells, in the plan's order.
fn finished_part(plan: &Plan, store: &Store) -> Plan {
    let mut part = plan.clone();
    let mut index = vec![None; plan.cells.len()];
    part.cells.clear();
    for (i, c) in plan.cells.iter().enumerate() {
        if store.contains(c) {
            index[i] = Some(part.cells.len());
            part.cells.push(c.clone());
        }
    }
    part.rows.retain_mut(|r| match index[r.cell] {
        Some(i) => {
            r.cell = i;
            true
        }
        None => false,
    });
    part
}
