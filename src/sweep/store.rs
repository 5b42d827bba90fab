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

/// Age, seconds, past which a scratch folder is a killed run's.
const PARTIAL_STALE_S: u64 = 600;

/// The tables a sweep writes into its folder (the Python package adds the
/// Parquet ones).
const TABLE_FILES: [&str; 5] = [
    "summary.csv",
    "jobs.csv",
    "timings.csv",
    "summary.parquet",
    "jobs.parquet",
];

/// Writes `text` to `path` and flushes it to disk.
fn write_synced(path: &Path, text: &str) -> Result<(), SweepError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(|e| io(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| io(path, e))?;
    f.sync_all().map_err(|e| io(path, e))
}

/// Flushes a folder's entries (a rename into it) to disk.
fn sync_dir(dir: &Path) -> Result<(), SweepError> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io(dir, e))
}

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
    /// left, those last changed more than ten minutes ago: a scratch folder
    /// lives for the few writes of one cell's files, so an older one
    /// belongs to no running sweep. Returns how many went.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when a folder cannot be removed.
    pub fn clean_partials(&self) -> Result<usize, SweepError> {
        let cells = self.dir.join("cells");
        let entries = std::fs::read_dir(&cells).map_err(|e| io(&cells, e))?;
        let mut removed = 0;
        for entry in entries.flatten() {
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > PARTIAL_STALE_S);
            if stale && entry.file_name().to_string_lossy().starts_with(".partial-") {
                let path = entry.path();
                std::fs::remove_dir_all(&path).map_err(|e| io(&path, e))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Removes the tables an earlier run wrote into the folder (`summary`,
    /// `jobs` and `timings`, CSV and Parquet): a run that will not finish
    /// the grid (a shard, a grid changed since) must not leave another
    /// grid's tables looking current. Returns how many files went.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when a file cannot be removed.
    pub fn clear_tables(&self) -> Result<usize, SweepError> {
        let mut removed = 0;
        for name in TABLE_FILES {
            let path = self.dir.join(name);
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&path, e)),
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
    /// description (a different one under the same key is not it), and its
    /// two tables have the lengths recorded when it was kept (a truncated
    /// or emptied table is not finished: the cell runs again).
    pub fn contains(&self, cell: &Cell) -> bool {
        let dir = self.cell_dir(cell.key());
        let Ok(text) = std::fs::read_to_string(dir.join("cell.json")) else {
            return false;
        };
        let Ok(meta) = serde_json::from_str::<Value>(&text) else {
            return false;
        };
        meta["spec"] == *cell.spec()
            && ["summary.csv", "jobs.csv"].iter().all(|name| {
                let recorded = meta["tables"][name]["bytes"].as_u64();
                let actual = std::fs::metadata(dir.join(name)).map(|m| m.len()).ok();
                recorded.is_some() && recorded == actual
            })
    }

    /// Keeps a successful `result` of `cell` (a failed one is not kept: it
    /// runs again on resume). The files are written and flushed to disk in
    /// a scratch folder, then renamed into place, so a crash leaves the
    /// cell whole or absent. Another worker or shard keeping the same cell
    /// first is not an error: the cell's result is the same. A damaged
    /// copy in the way is replaced.
    ///
    /// # Errors
    ///
    /// [`SweepError::Run`] when the files cannot be written.
    pub fn put(&self, cell: &Cell, result: &CellResult) -> Result<(), SweepError> {
        if result.error.is_some() {
            return Ok(());
        }
        let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
        let cells = self.dir.join("cells");
        let scratch = cells.join(format!(
            ".partial-{}-{}-{n}",
            cell.key(),
            std::process::id()
        ));
        std::fs::create_dir_all(&scratch).map_err(|e| io(&scratch, e))?;
        let record = |text: &str| serde_json::json!({ "bytes": text.len(), "fnv1a": super::fnv1a(text.as_bytes()) });
        let meta = serde_json::json!({
            "key": cell.key(),
            "spec": cell.spec(),
            "wall_s": result.wall_s,
            "crate_version": env!("CARGO_PKG_VERSION"),
            "tables": {
                "summary.csv": record(&result.summary_csv),
                "jobs.csv": record(&result.jobs_csv),
            },
        });
        // cell.json last: it is what says the cell is finished.
        for (name, text) in [
            ("summary.csv", result.summary_csv.as_str()),
            ("jobs.csv", result.jobs_csv.as_str()),
            ("cell.json", &meta.to_string()),
        ] {
            write_synced(&scratch.join(name), text)?;
        }
        sync_dir(&scratch)?;
        let target = self.cell_dir(cell.key());
        if target.exists() && !self.contains(cell) {
            // A damaged copy (a table cut short, cell.json garbled).
            std::fs::remove_dir_all(&target).map_err(|e| io(&target, e))?;
        }
        if let Err(e) = std::fs::rename(&scratch, &target) {
            // Another worker or shard finished the cell first.
            let _ = std::fs::remove_dir_all(&scratch);
            if !self.contains(cell) {
                return Err(io(&target, e));
            }
        }
        sync_dir(&cells)
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
        // Each table as kept: a file changed since (same length, other
        // bytes) is named, not joined.
        let checked = |name: &str| {
            let text = read(name)?;
            let kept = meta["tables"][name]["fnv1a"].as_str();
            if kept != Some(super::fnv1a(text.as_bytes()).as_str()) {
                return Err(SweepError::Run(format!(
                    "{}: {name} is not the table kept for cell {}: remove the folder and run the sweep again",
                    dir.display(),
                    cell.label()
                )));
            }
            Ok(text)
        };
        Ok((
            checked("summary.csv")?,
            checked("jobs.csv")?,
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
            // Whole or not at all: written aside, then renamed over.
            let path = dir.join(name);
            let aside = dir.join(format!(".{name}.{}.tmp", std::process::id()));
            write_synced(&aside, text)?;
            std::fs::rename(&aside, &path).map_err(|e| io(&path, e))?;
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

    fn finish(mut self) -> Result<String, SweepError> {
        if self.header.is_none() {
            // No cell: the leading columns alone, so that the table still
            // reads as one.
            self.out.write_record(&self.lead).map_err(bad)?;
        }
        let bytes = self.out.into_inner().map_err(bad)?;
        String::from_utf8(bytes).map_err(bad)
    }
}
