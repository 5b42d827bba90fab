//! Sweeps: a grid of replays (or simulations) — trace windows or
//! instances × clusters × parameter sets × load scales × seeds × policies —
//! run cell by cell into a folder that keeps every finished cell, so that a
//! killed sweep resumes where it stopped, and joined into one table.
//!
//! - [`Grid`] reads the grid (JSON); [`Grid::plan`] lists its [`Cell`]s
//!   and the table's rows, every cell checked before anything runs.
//! - A cell is one replay of one policy at one load scale and seed
//!   ([`run_cell`]): what `dmlsched replay --policies P --load-scales S
//!   --seeds N` with the cell's options runs. Its defaults (horizon,
//!   utilities, the jobs' architecture) are those of that one policy; set
//!   `arch`, `horizon` and `utility` in the grid's `options` to give every
//!   policy the same workload.
//! - A cell is keyed by what it runs ([`Cell::key`], a hash of its
//!   description), not by its place in the grid: a grid grown by a seed
//!   reuses every finished cell.
//! - [`Store`] keeps finished cells in a folder, each written whole or not
//!   at all; [`run`] runs the cells a store lacks, on `workers` threads,
//!   optionally one [`Shard`] of them; [`tables`] joins the store's cells
//!   into the grid's tables.
//!
//! Every cell's result is a function of its description alone, so the
//! tables are the same bytes whatever ran the cells: one worker or many,
//! one process or the shards of a batch array, this crate's threads or
//! another engine calling [`run_cell`] (the Python package's Ray back end).
//! The one wall-clock column of a run's summary (`solver_time_s`) is left
//! out of the tables; each cell's wall time is in `timings.csv`.
//!
//! ```no_run
//! use dmlsched::sweep::{Grid, RunOptions, Store, run, tables};
//!
//! let grid = Grid::from_file("grid.json".as_ref())?;
//! let plan = grid.plan()?;
//! let store = Store::open("sweep-out".as_ref())?;
//! let report = run(&plan, &store, &RunOptions::default(), &mut ())?;
//! println!("{} cells run, {} already done", report.ran, report.skipped);
//! tables(&plan, &store)?.write("sweep-out".as_ref())?;
//! # Ok::<(), dmlsched::sweep::SweepError>(())
//! ```

mod cell;
mod grid;
mod run;
mod store;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use cell::run_cell;
pub use grid::{Grid, MAX_ROWS};
pub use run::{MAX_WORKERS, RunOptions, RunReport, SweepObserver, run};
pub use store::{Store, Tables, tables};

/// Why a sweep, or one of its cells, failed: bad input (the command line
/// exits with code 2) or a run that failed on valid input (code 1).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// An invalid grid, option or file.
    #[error("{0}")]
    Input(String),
    /// A cell, or writing the results, failed on valid input.
    #[error("{0}")]
    Run(String),
    /// The observer stopped the sweep ([`SweepObserver::keep_going`]);
    /// every cell finished before is kept.
    #[error("the sweep was stopped after {done} of {total} cells")]
    Stopped {
        /// Cells finished in this run.
        done: usize,
        /// Cells this run had to run.
        total: usize,
    },
}

/// A replay's error as a cell's: bad input stays bad input.
impl From<crate::replay::ReplayError> for SweepError {
    fn from(e: crate::replay::ReplayError) -> Self {
        match e {
            crate::replay::ReplayError::Input(m) => SweepError::Input(m),
            other => SweepError::Run(other.message()),
        }
    }
}

impl SweepError {
    /// Whether the error is about the input.
    pub fn is_input(&self) -> bool {
        matches!(self, SweepError::Input(_))
    }
}

/// What a cell runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CellKind {
    /// A replay of a trace window (a trace grid).
    Replay,
    /// A simulation of an instance file (an instance grid).
    Simulate,
}

impl CellKind {
    fn name(self) -> &'static str {
        match self {
            CellKind::Replay => "replay",
            CellKind::Simulate => "simulate",
        }
    }
}

/// One cell of a sweep: one policy on one workload at one seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    key: String,
    kind: CellKind,
    /// The description: everything the cell runs, nothing else.
    spec: Value,
    /// Where the description's relative paths are read from.
    base: PathBuf,
}

impl Cell {
    fn new(spec: Value, base: &Path) -> Result<Cell, SweepError> {
        let kind = match spec["kind"].as_str() {
            Some("replay") => CellKind::Replay,
            Some("simulate") => CellKind::Simulate,
            _ => {
                return Err(SweepError::Input(
                    "a cell must be a replay or a simulation".into(),
                ));
            }
        };
        Ok(Cell {
            key: key(&spec),
            kind,
            spec,
            base: base.to_path_buf(),
        })
    }

    /// The cell's key: 16 hexadecimal digits hashing its description
    /// (FNV-1a, 64 bits, over the description's JSON with sorted keys).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What the cell runs.
    pub fn kind(&self) -> CellKind {
        self.kind
    }

    /// The cell's description (JSON): `kind`, `trace` or `instance`,
    /// `options`, `policy`, `params`, `load_scale` (replays), `seed` and
    /// `version` (the crate's: another release runs the cell again).
    pub fn spec(&self) -> &Value {
        &self.spec
    }

    /// The cell as JSON text, to send to another process or machine
    /// ([`Cell::from_json`] reads it back).
    pub fn to_json(&self) -> String {
        serde_json::json!({ "spec": self.spec, "base": self.base }).to_string()
    }

    /// Reads a cell written by [`Cell::to_json`].
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] for text that is not such a cell.
    pub fn from_json(text: &str) -> Result<Cell, SweepError> {
        let bad = |e: String| SweepError::Input(format!("cell JSON: {e}"));
        let v: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let base = v["base"].as_str().ok_or_else(|| bad("no `base`".into()))?;
        Cell::new(v["spec"].clone(), Path::new(base))
    }
}

/// The key of a description: FNV-1a (64 bits) of its canonical JSON text
/// ([`canonical`]).
fn key(spec: &Value) -> String {
    let mut text = String::new();
    canonical(spec, &mut text);
    fnv1a(text.as_bytes())
}

/// FNV-1a, 64 bits, as 16 hexadecimal digits.
pub(crate) fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// `v` as JSON text with every object's keys sorted, whatever order the
/// map keeps them in.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&o[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A finished cell: its summary row and per-job rows as CSV (each with its
/// header), or why it failed, and its wall time.
///
/// Built by [`run_cell`]; a result that crossed to another process (as
/// text) is built again from [`CellResult::default`], its fields set.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct CellResult {
    /// The summary's header and row, without `solver_time_s`.
    pub summary_csv: String,
    /// The per-job table's header and rows.
    pub jobs_csv: String,
    /// Why the cell failed (then both tables are empty).
    pub error: Option<SweepError>,
    /// Wall time of the run, seconds.
    pub wall_s: f64,
}

/// One row of a sweep's table: its cell and its labels on the axes that
/// are not columns of a run's summary already.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanRow {
    /// Index of the row's cell in [`Plan::cells`].
    pub cell: usize,
    /// The window's label (a trace grid), or the instance's path.
    pub source: String,
    /// The cluster's label (empty without a `clusters` axis).
    pub cluster: String,
    /// The parameter set's name.
    pub params: String,
}

/// A grid's cells, each once, and the table's rows in the grid's order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// The distinct cells, in the order of their first row.
    pub cells: Vec<Cell>,
    /// The rows of the grid's tables.
    pub rows: Vec<PlanRow>,
    /// Whether the grid is of instances (else of trace windows).
    pub instances: bool,
}

impl Plan {
    /// The cells of `shard`: every `count`-th cell from the `index`-th, in
    /// the plan's order (round robin, so that each shard gets its share of
    /// every policy).
    pub fn shard(&self, shard: Shard) -> Vec<&Cell> {
        if shard.count == 0 {
            return Vec::new();
        }
        self.cells
            .iter()
            .enumerate()
            .filter(|(i, _)| i % shard.count == shard.index)
            .map(|(_, c)| c)
            .collect()
    }
}

/// One of `count` slices of a sweep's cells (`--shard INDEX/COUNT`,
/// `INDEX` from 0): the slices are disjoint and together cover the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, from 0.
    pub index: usize,
    /// How many slices.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = SweepError;

    fn from_str(s: &str) -> Result<Shard, SweepError> {
        let bad = || {
            SweepError::Input(format!(
                "--shard {s}: expected INDEX/COUNT with 0 <= INDEX < COUNT (e.g. 0/4)"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}
