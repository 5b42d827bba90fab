//! The packing–covering engine's benchmark family: random placement
//! programs of `jobs × machines` integer worker counts, shared by the
//! engine's benchmark (`benches/pcip.rs`), its tests
//! (`tests/pcip_pipeline.rs`) and the side-by-side comparison with the MIP
//! solver (`examples/pcip_vs_mip.rs`), which include this file by path; it
//! is not part of the library's API.
//!
//! One program, for `J` jobs and `M` machines (column `j·M + m` is job `j`'s
//! worker count on machine `m`, `0 ≤ y_jm ≤ 8`):
//!
//! ```text
//! minimise   Σ_jm c_jm·y_jm
//! subject to Σ_m s_jm·y_jm ≥ W_j             for every job j      (work)
//!            Σ_j g_j·y_jm ≤ 1.3·G_m           for every machine m  (GPUs)
//!            Σ_j n_j·y_jm ≤ 1.3·N_m           for every machine m  (NIC)
//! ```
//!
//! with costs `c ∈ [1, 2)`, speeds `s ∈ [0.5, 2)`, GPU demands
//! `g ∈ [1, 4)`, NIC demands `n ∈ [0.1, 1)` and work `W ∈ [5, 20)`, all
//! uniform. `G_m` and `N_m` are machine `m`'s loads when every job spreads
//! its work evenly over all machines (`y_jm = W_j / (M·s_jm)`), so that point
//! is feasible with 30 % to spare, every program is feasible, and the packing
//! rows matter. The data are drawn from ChaCha8 seeded with the instance
//! seed, in a fixed order (speeds, GPU demands, NIC demands, costs, then per
//! job its work), so a seed names the same program on every machine.
//!
//! A 50 × 20 program has 1,000 columns and 3,000 nonzeros, and one seed
//! always names the same program (the family's tests in `tests/pcip_pipeline.rs`).

#![allow(dead_code)]

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use dmlsched::certificate::Sense;
use dmlsched::pcip::{MAX_VARS, PcBuilder, PcError, PcProblem};

/// The three sizes `(jobs, machines)` of the benchmark and of the
/// comparison with the MIP solver: 50 × 20, 200 × 50 and 500 × 100.
pub const BENCH_SIZES: [(usize, usize); 3] = [(50, 20), (200, 50), (500, 100)];

/// Upper bound of every worker count.
pub const MAX_WORKERS: u32 = 8;

/// Headroom of the capacities over the even-spread loads.
pub const CAPACITY_FACTOR: f64 = 1.3;

/// The placement program of `jobs × machines` with data drawn from `seed`
/// (module docs).
///
/// # Errors
///
/// [`PcError::InvalidOption`] (option `"jobs"` or `"machines"`) when a count
/// is zero or the program would have more than [`MAX_VARS`] columns.
pub fn placement(jobs: usize, machines: usize, seed: u64) -> Result<PcProblem, PcError> {
    for (option, v) in [("jobs", jobs), ("machines", machines)] {
        if v == 0 {
            return Err(PcError::InvalidOption {
                option,
                reason: "must be at least 1".into(),
            });
        }
    }
    let n = jobs
        .checked_mul(machines)
        .filter(|&n| n <= MAX_VARS)
        .ok_or_else(|| PcError::InvalidOption {
            option: "jobs",
            reason: format!("{jobs} × {machines} columns exceed the limit of {MAX_VARS}"),
        })?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let speed: Vec<f64> = (0..n).map(|_| rng.random_range(0.5..2.0)).collect();
    let gpu: Vec<f64> = (0..jobs).map(|_| rng.random_range(1.0..4.0)).collect();
    let nic: Vec<f64> = (0..jobs).map(|_| rng.random_range(0.1..1.0)).collect();
    let cost: Vec<f64> = (0..n).map(|_| rng.random_range(1.0..2.0)).collect();
    let mut b = PcBuilder::new(Sense::Minimise, n).objective(cost);
    for j in 0..n {
        b = b.upper(j, Some(MAX_WORKERS));
    }
    let mut gpu_load = vec![0.0; machines];
    let mut nic_load = vec![0.0; machines];
    for j in 0..jobs {
        let work = rng.random_range(5.0..20.0);
        let row: Vec<(usize, f64)> = (0..machines)
            .map(|m| (j * machines + m, speed[j * machines + m]))
            .collect();
        b = b.covering_row(&row, work);
        for m in 0..machines {
            let y = work / (machines as f64 * speed[j * machines + m]);
            gpu_load[m] += gpu[j] * y;
            nic_load[m] += nic[j] * y;
        }
    }
    for m in 0..machines {
        let g: Vec<(usize, f64)> = (0..jobs).map(|j| (j * machines + m, gpu[j])).collect();
        b = b.packing_row(&g, CAPACITY_FACTOR * gpu_load[m]);
        let w: Vec<(usize, f64)> = (0..jobs).map(|j| (j * machines + m, nic[j])).collect();
        b = b.packing_row(&w, CAPACITY_FACTOR * nic_load[m]);
    }
    b.build()
}
