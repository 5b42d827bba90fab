//! `dmlsched sweep`: a grid of replays (or simulations), resumable, on
//! this machine's cores or as one shard of a batch array.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use dmlsched::sweep::{
    Cell, CellResult, Grid, RunOptions, Shard, Store, SweepError, SweepObserver, run, tables,
};

use crate::CliError;

#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// The grid (JSON): `trace` with `windows`, or `instances`; `policies`;
    /// optionally `load_scales`, `seeds`, `clusters`, `params` (named sets)
    /// and `options` (any `dmlsched replay` flag, `-` written `_`).
    /// docs/python.md, "Sweeps", describes every field.
    grid: PathBuf,
    /// The sweep's folder: finished cells are kept in DIR/cells as they
    /// end, and skipped when the sweep runs again; summary.csv, jobs.csv
    /// and timings.csv are written once every cell is finished.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Cells run at once, each on a thread [default: one per core].
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Run only slice INDEX of COUNT (INDEX from 0), e.g. a Slurm array
    /// task's `$SLURM_ARRAY_TASK_ID/COUNT`; the slices are disjoint and
    /// cover the grid. `--merge` joins them.
    #[arg(long, value_name = "INDEX/COUNT")]
    shard: Option<String>,
    /// Run nothing: copy the finished cells of every --from folder into
    /// --out and write the tables (every cell must be finished).
    #[arg(long, conflicts_with_all = ["shard", "workers"])]
    merge: bool,
    /// With --merge: another sweep folder of the same grid (a shard's own
    /// --out); repeatable.
    #[arg(long = "from", value_name = "DIR", requires = "merge")]
    from: Vec<PathBuf>,
}

impl From<SweepError> for CliError {
    fn from(e: SweepError) -> Self {
        if e.is_input() {
            CliError::Input(e.to_string())
        } else {
            CliError::Run(e.to_string())
        }
    }
}

/// A progress bar with the rate and the time left, on stderr when it is
/// a terminal, else a line on stdout at every tenth of the cells (a batch
/// job's log); failed cells are named on stdout as they fail.
struct Progress {
    started: Instant,
    tty: bool,
}

impl SweepObserver for Progress {
    fn started(&mut self, to_run: usize, skipped: usize) {
        out!("{to_run} cells to run, {skipped} already finished");
    }

    fn cell_done(&mut self, done: usize, total: usize, cell: &Cell, result: &CellResult) {
        if let Some(e) = &result.error {
            self.clear();
            out!("failed: {} (cell {}): {e}", cell.label(), cell.key());
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        let rate = done as f64 / elapsed.max(1e-9);
        let left = (total - done) as f64 / rate;
        if !self.tty {
            // Each tenth of the cells once, as a line of the output (stderr
            // keeps only an error's line).
            if done * 10 / total.max(1) > (done - 1) * 10 / total.max(1) {
                out!(
                    "{done}/{total} cells, {rate:.2}/s, {} elapsed, ETA {}",
                    clock(elapsed),
                    clock(left)
                );
            }
            return;
        }
        eprint!(
            "\r{} {done}/{total} cells, {rate:.2}/s, {} elapsed, ETA {}   ",
            crate::summary::progress_bar(done, total),
            clock(elapsed),
            clock(left)
        );
        if done == total {
            eprintln!();
        }
        let _ = std::io::stderr().flush();
    }
}

impl Progress {
    /// Ends the bar's line, so that a message starts on its own line.
    fn clear(&self) {
        if self.tty {
            eprintln!();
        }
    }
}

/// `h:mm:ss`.
fn clock(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "?".into();
    }
    let s = seconds.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// `dmlsched sweep`.
pub(crate) fn run_command(args: &SweepArgs) -> Result<(), CliError> {
    // Read here, not by clap, so that a bad value is one `error:` line.
    let shard = args.shard.as_deref().map(str::parse::<Shard>).transpose()?;
    let grid = Grid::from_file(&args.grid)?;
    let plan = grid.plan()?;
    let store = Store::open(&args.out)?;
    // Tables from an earlier run of this folder would look current until
    // this run writes its own, which it may not (a shard, failed cells).
    store.clear_tables()?;
    out!(
        "{}: {} rows, {} distinct cells",
        args.grid.display(),
        plan.rows.len(),
        plan.cells.len()
    );
    if args.merge {
        for dir in &args.from {
            let other = Store::open_existing(dir)?;
            let n = store.absorb(&other, &plan)?;
            out!("{n} cells copied from {}", dir.display());
        }
    } else {
        let options = {
            let mut o = RunOptions::default();
            o.workers = args.workers;
            o.shard = shard;
            o
        };
        let mut progress = Progress {
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
        };
        let report = run(&plan, &store, &options, &mut progress)?;
        let took = progress.started.elapsed().as_secs_f64();
        out!(
            "ran {} cells in {took:.1} s ({:.2} cells/s){}",
            report.ran,
            report.ran as f64 / took.max(1e-9),
            match shard {
                Some(s) => format!(", shard {}/{}", s.index, s.count),
                None => String::new(),
            }
        );
        if !report.failed.is_empty() {
            let input = report.failed.iter().all(|(_, e)| e.is_input());
            let m = format!(
                "{} of {} cells failed (each named above; finished cells are kept, and the failed ones run again when the sweep runs again)",
                report.failed.len(),
                report.cells
            );
            return Err(if input {
                CliError::Input(m)
            } else {
                CliError::Run(m)
            });
        }
        if shard.is_some() {
            let finished = plan.cells.iter().filter(|c| store.contains(c)).count();
            if finished < plan.cells.len() {
                out!(
                    "{finished} of {} cells of the grid are finished; `dmlsched sweep {} --out {} --merge` writes the tables once every shard has run",
                    plan.cells.len(),
                    args.grid.display(),
                    args.out.display()
                );
                return Ok(());
            }
        }
    }
    tables(&plan, &store)?.write(&args.out)?;
    // Every cell is finished: what killed runs left half-written goes.
    store.clean_partials()?;
    out!(
        "wrote summary.csv, jobs.csv and timings.csv to {}",
        args.out.display()
    );
    Ok(())
}
