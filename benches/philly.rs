//! The whole Philly trace (82,247 jobs) on 256 machines × 8 GPUs under the
//! trace-replay baselines: the jobs and cluster of `dmlsched replay
//! "$DMLSCHED_TRACES/philly.csv" --jobs 100000 --gpus 2048` (ring-all-reduce
//! recipe, seed 0, every baseline at its default parameters, best-fit
//! placement), one full simulation per iteration and policy.
//!
//! Targets on a 2-core machine: FIFO, SJF, Tetris and Tiresias ≤ 2 s each;
//! DRF, Optimus, RRH and proportional share (which reallocate at every
//! event) ≤ 10 s each (`docs/benchmarks.md`).
//!
//! The trace is read once from `$DMLSCHED_TRACES/philly.csv`; without the
//! variable or the file the bench prints why and measures nothing. Each
//! policy is its own benchmark, `philly_whole/<policy>`, and takes
//! criterion's minimum of 10 samples of one run.
//!
//! **Default set.** A plain `cargo bench --bench philly` measures only the
//! policies whose run takes a few seconds (FIFO, SJF, Tetris, Tiresias;
//! about two minutes in all). DRF, Optimus, RRH and proportional share
//! take about 6–7 s per run (so 10 samples take over a minute each) and
//! are measured only when asked for: name them in
//! the filter, e.g. `cargo bench --bench philly -- 'philly_whole/(drf|rrh)'`,
//! or set `DMLSCHED_PHILLY_ALL=1` for all eight.

use std::path::PathBuf;

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::baselines::BaselineParams;
use dmlsched::model::Instance;
use dmlsched::registry;
use dmlsched::trace::{RecipeOptions, ReplayOptions, Window, load, replay_instance, select};

/// The policies, in the order of the benchmarks table.
const POLICIES: [&str; 8] = [
    "fifo",
    "sjf",
    "tetris",
    "tiresias",
    "drf",
    "optimus",
    "rrh",
    "proportional",
];

/// The policies measured without being asked for (a run of each takes a
/// few seconds).
const DEFAULT: [&str; 4] = ["fifo", "sjf", "tetris", "tiresias"];

/// Whether to register `name`'s benchmark: a default policy, or one the
/// command line names (in a filter), or all under `DMLSCHED_PHILLY_ALL=1`.
fn wanted(name: &str) -> bool {
    DEFAULT.contains(&name)
        || std::env::var("DMLSCHED_PHILLY_ALL").is_ok_and(|v| v == "1")
        || std::env::args().skip(1).any(|a| a.contains(name))
}

/// The instance of `dmlsched replay --jobs 100000 --gpus 2048`, or why there
/// is none.
fn instance() -> Result<Instance, String> {
    let dir = std::env::var_os("DMLSCHED_TRACES")
        .map(PathBuf::from)
        .ok_or("DMLSCHED_TRACES is not set")?;
    let path = dir.join("philly.csv");
    if !path.exists() {
        return Err(format!("{} not found", path.display()));
    }
    let rows = load(&path, None).map_err(|e| e.to_string())?;
    let window = Window {
        jobs: Some(100_000),
        ..Window::default()
    };
    let rows = select(&rows, &window).map_err(|e| e.to_string())?;
    let mut opts = ReplayOptions::default();
    opts.gpus = 2048.into();
    opts.gpus_per_machine = 8;
    opts.recipe = {
        let mut built = RecipeOptions::rar();
        built.seed = 0;
        built
    };
    Ok(replay_instance(&rows, &opts).map_err(|e| e.to_string())?.0)
}

fn bench(c: &mut Criterion) {
    let inst = match instance() {
        Ok(inst) => inst,
        Err(why) => {
            eprintln!("skipping the philly bench: {why}");
            return;
        }
    };
    let params = BaselineParams::default();
    let names: Vec<&str> = POLICIES.into_iter().filter(|n| wanted(n)).collect();
    common::whole_runs(c, "philly_whole", &inst, &names, |name| {
        registry::by_name_with(name, &params).expect("a known baseline")
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
