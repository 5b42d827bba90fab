//! The folder that keeps a sweep's finished cells, and the tables joined
//! from it.
//!
//! `DIR/cells/KEY/` holds one finished cell: `cell.json` (its description
//! and wall time), `summary.csv` and `jobs.csv`. A cell is written into a
//! scratch folder first and renamed into place, so a cell is in the store
//! whole or not at all: a killed sweep leaves at most scratch folders,
//! which are ignored.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::{Cell, CellResult, Plan, SweepError};

/// A sweep's folder of finished cells.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// Scratch folders of this process, numbered.
static SCRATCH: AtomicU64 = AtomicU64::new(0);

fn io(path: &Path, e: impl std::fmt::Display) -> SweepError {
    SweepError::Run(format!("{}: {e}", path.display()))
}

impl Store {
    /// Opens (creating it if missing) the store in `dir`.
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] when the folder cannot be created.
    pub fn open(dir: &Path) -> Result<Store, SweepError> {
        let cells = dir.join("cells");
        std::fs::create_dir_all(&cells)
            .map_err(|e| SweepError::Input(format!("{}: {e}", cells.display())))?;
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    /// Opens the store of a sweep that ran in `dir` (a shard's folder to
    /// merge from), refusing a folder that is not one.
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] when `dir` has no `cells` folder.
    pub fn open_existing(dir: &Path) -> Result<Store, SweepError> {
        if !dir.join("cells").is_dir() {
            return Err(SweepError::Input(format!(
                "{}: not a sweep folder (it has no cells/)",
                dir.display()
            )));
        }
        Store::open(dir)
    }

    /// Removes the scratch folders (`cells/.partial-*`) that killed runs
    /// left. Only when no sweep is writing into the store: a running one's
    /// cell under way would lose its files.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when a folder cannot be removed.
    pub fn clean_partials(&self) -> Result<usize, SweepError> {
        let cells = self.dir.join("cells");
        let entries = std::fs::read_dir(&cells).map_err(|e| io(&cells, e))?;
        let mut removed = 0;
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(".partial-") {
                let path = entry.path();
                std::fs::remove_dir_all(&path).map_err(|e| io(&path, e))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn cell_dir(&self, key: &str) -> PathBuf {
        self.dir.join("cells").join(key)
    }

    /// Whether `cell` is finished in the store: its folder holds the same
    /// description (a different one under the same key is not it).
    pub fn contains(&self, cell: &Cell) -> bool {
        let path = self.cell_dir(cell.key()).join("cell.json");
        let Ok(text) = std::fs::read_to_string(path) else {
            return false;
        };
        serde_json::from_str::<Value>(&text).is_ok_and(|v| v["spec"] == *cell.spec())
    }

    /// Keeps a successful `result` of `cell` (a failed one is not kept: it
    /// runs again on resume). Another worker or shard keeping the same
    /// cell first is not an error: the cell's result is the same.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when the files cannot be written.
    pub fn put(&self, cell: &Cell, result: &CellResult) -> Result<(), SweepError> {
        if result.error.is_some() {
            return Ok(());
        }
        let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
        let scratch = self.dir.join("cells").join(format!(
            ".partial-{}-{}-{n}",
            cell.key(),
            std::process::id()
        ));
        std::fs::create_dir_all(&scratch).map_err(|e| io(&scratch, e))?;
        let meta = serde_json::json!({
            "key": cell.key(),
            "spec": cell.spec(),
            "wall_s": result.wall_s,
            "crate_version": env!("CARGO_PKG_VERSION"),
        });
        for (name, text) in [
            ("summary.csv", result.summary_csv.as_str()),
            ("jobs.csv", result.jobs_csv.as_str()),
            ("cell.json", &meta.to_string()),
        ] {
            let path = scratch.join(name);
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        let target = self.cell_dir(cell.key());
        if let Err(e) = std::fs::rename(&scratch, &target) {
            // Another worker or shard finished the cell first.
            let _ = std::fs::remove_dir_all(&scratch);
            if !self.contains(cell) {
                return Err(io(&target, e));
            }
        }
        Ok(())
    }

    /// Copies into this store the cells of `plan` finished in `other` (a
    /// shard's own folder) and missing here; returns how many.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when a cell cannot be read or written.
    pub fn absorb(&self, other: &Store, plan: &Plan) -> Result<usize, SweepError> {
        let mut copied = 0;
        for cell in &plan.cells {
            if self.contains(cell) || !other.contains(cell) {
                continue;
            }
            let (summary_csv, jobs_csv, wall_s) = other.get(cell)?;
            let result = CellResult {
                summary_csv,
                jobs_csv,
                error: None,
                wall_s,
            };
            self.put(cell, &result)?;
            copied += 1;
        }
        Ok(copied)
    }

    /// A finished cell's summary table, per-job table and wall time.
    fn get(&self, cell: &Cell) -> Result<(String, String, f64), SweepError> {
        let dir = self.cell_dir(cell.key());
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| io(&path, e))
        };
        let meta: Value =
            serde_json::from_str(&read("cell.json")?).map_err(|e| io(&dir.join("cell.json"), e))?;
        Ok((
            read("summary.csv")?,
            read("jobs.csv")?,
            meta["wall_s"].as_f64().unwrap_or(f64::NAN),
        ))
    }
}

/// A sweep's tables: every row of the grid with its axes as columns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Tables {
    /// One row per grid row: `cell`, the source (`window` or `instance`),
    /// `cluster_spec` and `params`, then a run's summary columns (policy,
    /// seed, load scale among them) without `solver_time_s`.
    pub summary_csv: String,
    /// Every job of every row: the same leading columns and `load_scale`,
    /// then the per-job table's.
    pub jobs_csv: String,
    /// `cell,wall_s`, once per cell: the one table that differs run to run.
    pub timings_csv: String,
}

impl Tables {
    /// Writes `summary.csv`, `jobs.csv` and `timings.csv` into `dir`.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when a file cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), SweepError> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        for (name, text) in [
            ("summary.csv", &self.summary_csv),
            ("jobs.csv", &self.jobs_csv),
            ("timings.csv", &self.timings_csv),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        Ok(())
    }
}

/// The cells of `plan` that `store` lacks.
pub(crate) fn missing<'a>(plan: &'a Plan, store: &Store) -> Vec<&'a Cell> {
    plan.cells.iter().filter(|c| !store.contains(c)).collect()
}

/// Joins the store's cells into the grid's tables.
///
/// # Errors
///
/// [`SweepError::Run`] when a cell of the grid is not in the store (a
/// shard not run yet, a cell that failed), naming how many and the first.
pub fn tables(plan: &Plan, store: &Store) -> Result<Tables, SweepError> {
    let lacking = missing(plan, store);
    if let Some(first) = lacking.first() {
        return Err(SweepError::Run(format!(
            "{} of {} cells are not finished in {} (the first: {}); run the sweep (or its missing shards) to finish them",
            lacking.len(),
            plan.cells.len(),
            store.dir().display(),
            first.label()
        )));
    }
    let mut cells = Vec::with_capacity(plan.cells.len());
    for c in &plan.cells {
        cells.push(store.get(c)?);
    }
    let source = if plan.instances { "instance" } else { "window" };
    let mut summary = Joined::new(&["cell", source, "cluster_spec", "params"]);
    let mut jobs = Joined::new(&["cell", source, "cluster_spec", "params", "load_scale"]);
    for row in &plan.rows {
        let cell = &plan.cells[row.cell];
        let (s, j, _) = &cells[row.cell];
        let lead = [cell.key(), &row.source, &row.cluster, &row.params];
        summary.add(&lead, s)?;
        let scale = cell.spec()["load_scale"].as_f64().unwrap_or(1.0);
        let scale = crate::replay::scale_label(scale);
        jobs.add(&[lead[0], lead[1], lead[2], lead[3], &scale], j)?;
    }
    let mut timings = String::from("cell,wall_s\n");
    for (c, (_, _, wall)) in plan.cells.iter().zip(&cells) {
        let _ = writeln!(timings, "{},{wall}", c.key());
    }
    Ok(Tables {
        summary_csv: summary.finish()?,
        jobs_csv: jobs.finish()?,
        timings_csv: timings,
    })
}

/// A table joined from cells' CSV tables, each row led by the row's axes.
struct Joined {
    lead: Vec<String>,
    header: Option<csv::StringRecord>,
    out: csv::Writer<Vec<u8>>,
}

fn bad(e: impl std::fmt::Display) -> SweepError {
    SweepError::Run(format!("joining the tables: {e}"))
}

impl Joined {
    fn new(lead: &[&str]) -> Joined {
        Joined {
            lead: lead.iter().map(|s| s.to_string()).collect(),
            header: None,
            out: csv::Writer::from_writer(Vec::new()),
        }
    }

    /// Adds the rows of `table` (CSV with its header), led by `lead`.
    fn add(&mut self, lead: &[&str], table: &str) -> Result<(), SweepError> {
        let mut reader = csv::Reader::from_reader(table.as_bytes());
        let header = reader.headers().map_err(bad)?.clone();
        match &self.header {
            None => {
                let names = self.lead.iter().map(String::as_str).chain(header.iter());
                self.out.write_record(names).map_err(bad)?;
                self.header = Some(header);
            }
            Some(h) if *h != header => {
                return Err(bad("two cells' tables have different columns"));
            }
            Some(_) => {}
        }
        for record in reader.records() {
            let record = record.map_err(bad)?;
            self.out
                .write_record(lead.iter().copied().chain(record.iter()))
                .map_err(bad)?;
        }
        Ok(())
    }

    fn finish(self) -> Result<String, SweepError> {
        let bytes = self.out.into_inner().map_err(bad)?;
        String::from_utf8(bytes).map_err(bad)
    }
}
