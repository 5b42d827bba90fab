//! SJF-BCO benchmark: the full search (every distinct κ, bisection of the
//! budget over `1..=T` with `T = 1200`, each trial re-simulated slot by slot
//! with contention; the paper's defaults, `λ = 1`) on three sizes built from
//! the paper's generator (`experiments::sjf_bco::paper_instance`, synthetic
//! calibration, seed 0):
//!
//! * **40 × 5**: the 5-server cluster of seed 0 with every fourth job of
//!   its 160-job workload (ids 0, 4, …, 156: 20×1, 4×2, 6×4, 8×8 and
//!   2×16 GPUs);
//! * **160 × 20**: the paper's instance, seed 0, 20 servers. Target:
//!   ≤ 200 ms on a 2-core machine;
//! * **640 × 80**: the 80-server cluster of seed 0 with the 160-job
//!   workloads of seeds 0, 1, 2 and 3 concatenated (ids renumbered), four
//!   times the paper's load on four times its servers.

use dmlsched::algorithms::Algorithm;
use rand::SeedableRng;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::algorithms::sjf_bco::SjfBco;
use dmlsched::model::{Instance, Job, JobId};
use dmlsched_experiments::sjf_bco::{Calibration, HORIZON_20, paper_instance, paper_params};

const CAL: Calibration = Calibration::PaperSynthetic;

/// The cluster of `paper_instance(0, servers)` with `jobs` renumbered.
fn with_jobs(servers: u32, jobs: Vec<Job>) -> Instance {
    let base = paper_instance(0, servers, CAL).expect("instance");
    let jobs = jobs
        .into_iter()
        .enumerate()
        .map(|(i, mut j)| {
            j.id = JobId(i as u32);
            j
        })
        .collect();
    Instance::new(
        base.cluster().clone(),
        jobs,
        base.slot_length_s(),
        base.horizon_slots(),
    )
    .expect("instance")
}

fn instances() -> Vec<(&'static str, Instance)> {
    let small: Vec<Job> = paper_instance(0, 5, CAL)
        .expect("instance")
        .jobs()
        .iter()
        .step_by(4)
        .cloned()
        .collect();
    let large: Vec<Job> = (0..4)
        .flat_map(|seed| {
            paper_instance(seed, 80, CAL)
                .expect("instance")
                .jobs()
                .to_vec()
        })
        .collect();
    vec![
        ("40_jobs_5_servers", with_jobs(5, small)),
        (
            "160_jobs_20_servers",
            paper_instance(0, 20, CAL).expect("instance"),
        ),
        ("640_jobs_80_servers", with_jobs(80, large)),
    ]
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sjf_bco_full_search");
    group.sample_size(10);
    let solver = SjfBco::new(paper_params(HORIZON_20)).expect("valid parameters");
    for (name, inst) in instances() {
        let s = solver
            .solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
            .expect("a schedule");
        eprintln!(
            "{name}: makespan {} (T = {HORIZON_20}), {} trials, θ̃ = {:?}, κ* = {:?}",
            s.report.makespan_raw, s.report.trials, s.report.theta_tilde, s.report.kappa_star
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                solver
                    .solve(
                        black_box(&inst),
                        &mut rand::rngs::ChaCha8Rng::seed_from_u64(0),
                    )
                    .expect("a schedule")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
