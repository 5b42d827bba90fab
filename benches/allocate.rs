//! Allocation-policy benchmark: every policy of `dmlsched::allocate` at
//! 100, 1,000 and 4,000 jobs on 3 GPU types (`docs/benchmarks.md`; targets
//! at 1,000 jobs: ≤ 25 ms for each LP policy, ≤ 250 ms for finish-time
//! fairness).
//!
//! Jobs are drawn as Gavel's own measurements draw them: a (job type, scale
//! factor) uniform among those of Gavel's throughput table measured on all
//! three types (`k80`, `p100`, `v100`), its throughputs from the table,
//! weight 1 or 2, steps remaining uniform in `[10⁴, 10⁶]` × the scale
//! factor, and elapsed time uniform in `[0, 10⁵]` s (ChaCha8, seed 0). Each
//! type has `⌈m/4⌉` GPUs, so the jobs contend. Prices: 3.06, 1.46 and 0.9
//! per GPU-hour (V100, P100, K80).
//!
//! The table is read from `$DMLSCHED_TRACES/gavel-simulation_throughputs.json`
//! (default `../shared/traces`); without it the bench prints why and
//! measures nothing.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dmlsched::allocate::{AllocationInput, AllocationJob, AllocationPolicy, allocate};
use dmlsched::trace::GavelThroughputs;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

const TYPES: [&str; 3] = ["k80", "p100", "v100"];

fn table() -> Option<GavelThroughputs> {
    let dir = std::env::var_os("DMLSCHED_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/traces"));
    let path = dir.join("gavel-simulation_throughputs.json");
    if !path.exists() {
        eprintln!(
            "skipping the allocate bench: {} not found (set DMLSCHED_TRACES)",
            path.display()
        );
        return None;
    }
    Some(GavelThroughputs::load(&path).expect("Gavel's throughputs load"))
}

/// `m` jobs drawn from Gavel's table, on `⌈m/4⌉` GPUs of each type.
fn input(table: &GavelThroughputs, m: usize) -> AllocationInput {
    let entries: Vec<(&str, u32)> = table
        .job_types("v100")
        .into_iter()
        .filter(|(t, s)| TYPES.iter().all(|k| table.rate(k, t, *s).is_some()))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let count = m.div_ceil(4) as u32;
    let mut input = AllocationInput::new(TYPES.map(|t| (t, count))).with_prices([
        ("k80", 0.9),
        ("p100", 1.46),
        ("v100", 3.06),
    ]);
    for id in 0..m {
        let (job_type, scale) = entries[rng.random_range(0..entries.len())];
        let throughput = TYPES.map(|k| (k, table.rate(k, job_type, scale).unwrap()));
        input = input.with_job(
            AllocationJob::new(id as u64, throughput)
                .with_scale_factor(scale)
                .with_weight(f64::from(rng.random_range(1..=2u32)))
                .with_steps_remaining(rng.random_range(1e4..1e6) * f64::from(scale))
                .with_elapsed_s(rng.random_range(0.0..1e5)),
        );
    }
    input
}

fn bench_policies(c: &mut Criterion) {
    let Some(table) = table() else {
        return;
    };
    let mut group = c.benchmark_group("allocate");
    group.sample_size(10);
    for m in [100, 1000, 4000] {
        let inp = input(&table, m);
        for policy in AllocationPolicy::ALL {
            group.bench_with_input(BenchmarkId::new(policy.name(), m), &inp, |b, inp| {
                b.iter(|| black_box(allocate(policy, inp).expect("the policy answers")))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_policies);
criterion_main!(benches);
