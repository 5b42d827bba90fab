//! Packing–covering engine benchmark (issue: pcip bench).
//!
//! Random placement programs from the library's benchmark family
//! (`tests/common/placement.rs`, included here by path): n jobs × m machines, integer
//! worker counts, one covering row per job, two packing rows per machine.
//!
//! Besides the criterion timings (LP; one rounding trial plus repair), the
//! bench prints, per size, medians over 20 instance seeds of the full
//! pipeline (16 trials, no exact MIP): LP seconds, rounding + repair seconds,
//! their ratio, and objective / LP bound. `docs/benchmarks.md` records them.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
#[path = "../tests/common/placement.rs"]
mod placement_family;
use dmlsched::lp::SolveOptions;
use dmlsched::pcip::{
    ExactMode, PcProblem, RepairOptions, RoundingSolver, repair, round_independent, scaled_point,
    solve_lp, trial_rng,
};
use placement_family::{BENCH_SIZES, placement as family};

const SIZES: [(usize, usize); 3] = BENCH_SIZES;

fn placement(jobs: usize, machines: usize, seed: u64) -> PcProblem {
    family(jobs, machines, seed).expect("the benchmark sizes are valid")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let k = v.len();
    if k % 2 == 1 {
        v[k / 2]
    } else {
        0.5 * (v[k / 2 - 1] + v[k / 2])
    }
}

/// Medians over 20 seeds of the full pipeline, printed for the docs.
fn quality() {
    println!(
        "size      | LP s (median) | round+repair s, 16 trials | ratio | obj/LP bound median | max | widths W_P, W_C"
    );
    for (jobs, machines) in SIZES {
        let (mut lp_s, mut rr_s, mut ratio, mut quality) = (vec![], vec![], vec![], vec![]);
        let mut widths = (0.0, 0.0);
        for seed in 0..20 {
            let p = placement(jobs, machines, seed);
            widths = (p.packing_width(), p.covering_width());
            let solver = RoundingSolver {
                seed,
                exact: ExactMode::Never,
                ..RoundingSolver::default()
            };
            match solver.solve(&p) {
                Ok(sol) => {
                    let stage = |name: &str| {
                        sol.certificate
                            .run
                            .stage_seconds
                            .iter()
                            .find(|(s, _)| s == name)
                            .map_or(0.0, |(_, t)| *t)
                    };
                    lp_s.push(stage("lp"));
                    rr_s.push(stage("rounding_repair"));
                    ratio.push(stage("rounding_repair") / stage("lp"));
                    quality.push(sol.certificate.achieved_ratio());
                }
                Err(e) => println!("{jobs}x{machines} seed {seed}: {e}"),
            }
        }
        let max = quality.iter().copied().fold(0.0, f64::max);
        println!(
            "{jobs}x{machines} | {:.4} | {:.5} | {:.4} | {:.4} | {:.4} | {:.1}, {:.2}",
            median(lp_s),
            median(rr_s),
            median(ratio),
            median(quality),
            max,
            widths.0,
            widths.1
        );
    }
}

fn bench(c: &mut Criterion) {
    quality();
    let mut lp_group = c.benchmark_group("pcip_lp");
    lp_group.sample_size(10);
    for (jobs, machines) in SIZES {
        let p = placement(jobs, machines, 0);
        lp_group.bench_with_input(
            BenchmarkId::from_parameter(format!("{jobs}x{machines}")),
            &p,
            |b, p| b.iter(|| black_box(solve_lp(p, &SolveOptions::default()).expect("feasible"))),
        );
    }
    lp_group.finish();

    let mut rr_group = c.benchmark_group("pcip_round_repair_one_trial");
    for (jobs, machines) in SIZES {
        let p = placement(jobs, machines, 0);
        let lp = solve_lp(&p, &SolveOptions::default()).expect("feasible");
        let y = scaled_point(&p, &lp.x, 1.0);
        let opts = RepairOptions::default();
        let mut t = 0u64;
        rr_group.bench_with_input(
            BenchmarkId::from_parameter(format!("{jobs}x{machines}")),
            &p,
            |b, p| {
                b.iter(|| {
                    t += 1;
                    let mut x = round_independent(p, &y, &mut trial_rng(0, t));
                    black_box(repair(p, &mut x, &opts).is_ok())
                })
            },
        );
    }
    rr_group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
