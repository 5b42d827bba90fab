//! Round-based leases on the Gavel trace: its first 2,000 jobs on 36 V100s,
//! 36 P100s and 36 K80s, one GPU per machine (Gavel's simulator set-up),
//! under every allocation policy in rounds of 360 s (`gavel-<policy>`), one
//! full simulation per iteration and policy. The jobs and cluster are those
//! of `dmlsched replay "$DMLSCHED_TRACES/gavel-msr-seed0-6214e9.trace"
//! --jobs 2000 --gpus v100:36,p100:36,k80:36 --gpus-per-machine 1`
//! (ring-all-reduce recipe, seed 0, speeds per type from Gavel's
//! throughputs at the V100 reference); `gavel-max-throughput-per-cost` runs
//! at `--gpu-prices v100:2.48,p100:1.46,k80:0.45`.
//!
//! The trace and throughputs are read from `$DMLSCHED_TRACES`; without the
//! variable or the files the bench prints why and measures nothing. Each
//! policy is its own benchmark, `gavel_rounds/<policy>`, with criterion's
//! minimum of 10 samples of one run (`docs/benchmarks.md`).

use std::path::PathBuf;

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::baselines::BaselineParams;
use dmlsched::model::Instance;
use dmlsched::registry::{self, ROUND_POLICIES};
use dmlsched::trace::{
    GavelConversion, GavelThroughputs, GpuMix, RecipeOptions, ReplayOptions, Window,
    assign_gavel_speeds, load_gavel_trace_with_rates, replay_instance, select,
};

const TYPES: [&str; 3] = ["v100", "p100", "k80"];

/// The instance of the replay above, or why there is none.
fn instance() -> Result<Instance, String> {
    let dir = std::env::var_os("DMLSCHED_TRACES")
        .map(PathBuf::from)
        .ok_or("DMLSCHED_TRACES is not set")?;
    let trace = dir.join("gavel-msr-seed0-6214e9.trace");
    let rates = dir.join("gavel-simulation_throughputs.json");
    for p in [&trace, &rates] {
        if !p.exists() {
            return Err(format!("{} not found", p.display()));
        }
    }
    let table = GavelThroughputs::load(&rates).map_err(|e| e.to_string())?;
    let conv = GavelConversion {
        gpu: "v100".into(),
        gpus_per_machine: 1,
    };
    let rows = load_gavel_trace_with_rates(&trace, &table, &conv)
        .map_err(|e| e.to_string())?
        .jobs;
    let window = Window {
        jobs: Some(2000),
        ..Window::default()
    };
    let rows = select(&rows, &window).map_err(|e| e.to_string())?;
    let typed = assign_gavel_speeds(&rows, &table, &conv, &TYPES, 0).map_err(|e| e.to_string())?;
    let mut opts = ReplayOptions::default();
    opts.gpus = GpuMix::Typed(TYPES.iter().map(|t| (t.to_string(), 36)).collect());
    opts.gpus_per_machine = 1;
    opts.recipe = {
        let mut built = RecipeOptions::rar();
        built.seed = 0;
        built
    };
    Ok(replay_instance(&typed.jobs, &opts)
        .map_err(|e| e.to_string())?
        .0)
}

fn bench(c: &mut Criterion) {
    let inst = match instance() {
        Ok(inst) => inst,
        Err(why) => {
            eprintln!("skipping the gavel bench: {why}");
            return;
        }
    };
    let mut params = BaselineParams::default();
    params.gpu_prices = [("v100", 2.48), ("p100", 1.46), ("k80", 0.45)]
        .map(|(t, p)| (t.to_string(), p))
        .into();
    common::whole_runs(c, "gavel_rounds", &inst, ROUND_POLICIES, |name| {
        registry::by_name_with(name, &params).expect("a round-based policy")
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
