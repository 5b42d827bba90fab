//! Running a sweep's cells on this machine's threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::{Cell, CellResult, Plan, Shard, Store, SweepError, run_cell};

/// The most worker threads a sweep starts.
pub const MAX_WORKERS: usize = 1024;

/// How [`run`] runs a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// Cells run at once, each on its own thread; `None`: one per core
    /// ([`std::thread::available_parallelism`]).
    pub workers: Option<usize>,
    /// Only this slice of the cells; `None`: all of them.
    pub shard: Option<Shard>,
}

/// What a run of a sweep did.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct RunReport {
    /// Cells of this run (its shard) in all.
    pub cells: usize,
    /// Cells found finished in the store and not run again.
    pub skipped: usize,
    /// Cells run and kept.
    pub ran: usize,
    /// Cells that failed, with why (not kept: they run again on resume).
    pub failed: Vec<(Cell, SweepError)>,
}

/// What a sweep tells while it runs. `()` ignores it all.
pub trait SweepObserver {
    /// The run starts: `to_run` cells to run, `skipped` found finished.
    fn started(&mut self, to_run: usize, skipped: usize) {
        let _ = (to_run, skipped);
    }

    /// `done` of `total` cells finished (kept or failed); `cell` is the
    /// last, `result` its result.
    fn cell_done(&mut self, done: usize, total: usize, cell: &Cell, result: &CellResult) {
        let _ = (done, total, cell, result);
    }

    /// Asked after each cell: `false` stops the sweep once the cells under
    /// way finish (they are kept), and [`run`] returns
    /// [`SweepError::Stopped`].
    fn keep_going(&mut self) -> bool {
        true
    }
}

impl SweepObserver for () {}

/// Runs the cells of `plan` (of `options.shard`) that `store` lacks, on
/// `options.workers` threads, keeping each in `store` as it finishes.
///
/// # Errors
///
/// [`SweepError::Input`] for zero workers, [`SweepError::Run`] when a
/// result cannot be written, [`SweepError::Stopped`] when the observer
/// stops the sweep. A cell that fails does not stop the others: it is in
/// [`RunReport::failed`].
pub fn run(
    plan: &Plan,
    store: &Store,
    options: &RunOptions,
    observer: &mut dyn SweepObserver,
) -> Result<RunReport, SweepError> {
    let workers = match options.workers {
        Some(0) => return Err(SweepError::Input("--workers must be at least 1".into())),
        Some(n) if n > MAX_WORKERS => {
            return Err(SweepError::Input(format!(
                "--workers {n}: at most {MAX_WORKERS} (each runs a replay at once)"
            )));
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let mine: Vec<&Cell> = match options.shard {
        Some(s) if s.index >= s.count => {
            return Err(SweepError::Input(format!(
                "--shard {}/{}: expected INDEX/COUNT with 0 <= INDEX < COUNT",
                s.index, s.count
            )));
        }
        Some(s) => plan.shard(s),
        None => plan.cells.iter().collect(),
    };
    let todo: Vec<&Cell> = mine
        .iter()
        .copied()
        .filter(|c| !store.contains(c))
        .collect();
    let mut report = RunReport {
        cells: mine.len(),
        skipped: mine.len() - todo.len(),
        ..RunReport::default()
    };
    observer.started(todo.len(), report.skipped);
    let total = todo.len();
    let queue = Mutex::new(todo.into_iter());
    let stop = AtomicBool::new(false);
    let (send, receive) = mpsc::channel::<(&Cell, CellResult)>();
    let outcome = std::thread::scope(|scope| {
        let mut spawned = 0;
        for _ in 0..workers.min(total) {
            let send = send.clone();
            let (queue, stop) = (&queue, &stop);
            // A thread the system refuses is one worker fewer, not a panic.
            let started =
                std::thread::Builder::new().spawn_scoped(scope, move || worker(queue, stop, &send));
            if started.is_err() {
                break;
            }
            spawned += 1;
        }
        drop(send);
        if spawned == 0 && total > 0 {
            return Err(SweepError::Run("no worker thread could be started".into()));
        }
        let mut done = 0;
        let mut written = Ok(());
        for (cell, result) in receive {
            done += 1;
            if let Err(e) = store.put(cell, &result) {
                stop.store(true, Ordering::Relaxed);
                written = Err(e);
                continue;
            }
            observer.cell_done(done, total, cell, &result);
            match result.error {
                Some(e) => report.failed.push((cell.clone(), e)),
                None => report.ran += 1,
            }
            if !stop.load(Ordering::Relaxed) && !observer.keep_going() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        written.map(|()| done)
    });
    let done = outcome?;
    if stop.load(Ordering::Relaxed) && done < total {
        return Err(SweepError::Stopped { done, total });
    }
    Ok(report)
}

/// Takes cells from `queue` until it is empty or the sweep stops, and
/// sends each result; a panicking cell is a failed one.
fn worker<'a>(
    queue: &Mutex<std::vec::IntoIter<&'a Cell>>,
    stop: &AtomicBool,
    send: &mpsc::Sender<(&'a Cell, CellResult)>,
) {
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let next = match queue.lock() {
            Ok(mut q) => q.next(),
            Err(_) => return,
        };
        let Some(cell) = next else {
            return;
        };
        let result = std::panic::catch_unwind(|| run_cell(cell)).unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            CellResult {
                summary_csv: String::new(),
                jobs_csv: String::new(),
                error: Some(SweepError::Run(format!(
                    "{}: panicked: {why}",
                    cell.label()
                ))),
                wall_s: 0.0,
            }
        });
        if send.send((cell, result)).is_err() {
            return;
        }
    }
}
