//! LP-layer benchmark: random placement LPs solved with HiGHS.
//!
//! n jobs × m machines, continuous `0 ≤ y_jm ≤ cap_jm`; one covering row per
//! job (`Σ_m s_jm y_jm ≥ W_j`), two packing rows per machine (GPU and
//! bandwidth capacities); costs in [1, 2]. Data come from ChaCha8 with a fixed
//! seed, and every instance is feasible by construction: each machine's
//! capacities are 1.1 × its load when every job spreads its work evenly over
//! all machines (`y_jm = W_j / (m · s_jm) ≤ 2 ≤ cap`), so packing rows bind.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dmlsched::certificate::Sense;
use dmlsched::lp::{ColumnKind, LinearProgram, LpStatus, SolveOptions, solve};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

fn placement_lp(jobs: usize, machines: usize, seed: u64) -> LinearProgram {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut lp = LinearProgram::new(Sense::Minimise);
    let cap = 8.0;
    // y[j][m], column index j * machines + m.
    let speed: Vec<Vec<f64>> = (0..jobs)
        .map(|_| (0..machines).map(|_| rng.random_range(0.5..2.0)).collect())
        .collect();
    let gpus: Vec<f64> = (0..jobs).map(|_| rng.random_range(1.0..4.0)).collect();
    let bandwidth: Vec<f64> = (0..jobs).map(|_| rng.random_range(0.1..1.0)).collect();
    for _ in 0..jobs * machines {
        lp.add_column(rng.random_range(1.0..2.0), 0.0, cap, ColumnKind::Continuous);
    }
    let mut gpu_load = vec![0.0; machines];
    let mut bw_load = vec![0.0; machines];
    for j in 0..jobs {
        let work = rng.random_range(5.0..20.0);
        let entries: Vec<(usize, f64)> = (0..machines)
            .map(|m| (j * machines + m, speed[j][m]))
            .collect();
        lp.add_row(work, f64::INFINITY, &entries);
        // Load of the even spread y_jm = W_j / (machines · s_jm).
        for m in 0..machines {
            let y = work / (machines as f64 * speed[j][m]);
            gpu_load[m] += gpus[j] * y;
            bw_load[m] += bandwidth[j] * y;
        }
    }
    for m in 0..machines {
        let gpu_row: Vec<(usize, f64)> = (0..jobs).map(|j| (j * machines + m, gpus[j])).collect();
        lp.add_row(f64::NEG_INFINITY, 1.1 * gpu_load[m], &gpu_row);
        let bw_row: Vec<(usize, f64)> = (0..jobs)
            .map(|j| (j * machines + m, bandwidth[j]))
            .collect();
        lp.add_row(f64::NEG_INFINITY, 1.1 * bw_load[m], &bw_row);
    }
    lp
}

fn bench_placement(c: &mut Criterion) {
    let mut group = c.benchmark_group("lp_placement");
    group.sample_size(10);
    let opts = SolveOptions::default();
    for (jobs, machines) in [(50, 20), (200, 50)] {
        let lp = placement_lp(jobs, machines, 7);
        // Check once, outside the timing loop, that the instance solves.
        match solve(&lp, &opts) {
            Ok(sol) if sol.status == LpStatus::Optimal => {}
            other => panic!("placement LP {jobs}x{machines} did not solve: {other:?}"),
        }
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{jobs}x{machines}")),
            &lp,
            |b, lp| b.iter(|| solve(black_box(lp), &opts)),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_placement);
criterion_main!(benches);
