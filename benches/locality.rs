//! Locality-aware scheduler timings on the default set-up of
//! `experiments::locality` (16 machines `[8 GPU, 64 vCPU, 512 GB,
//! 25 Gbit/s]`, 1800 s slots, T = 200, κ = 10, 100 jobs, instance seed
//! [`SEED`], run seed [`SEED`], LP rounding with the default draws and
//! scalings):
//!
//! * `lp`: one LP relaxation of LOC-SUB for job 51 (arrival order) at the
//!   middle deadline of its range `[a + d_min − 1, end]`, at the prices and
//!   residuals reached after the online loop decided the first 50 jobs
//!   (target ≤ 50 ms);
//! * `decision`: the oracle's whole decision for job 51 at that state
//!   (deadline enumeration with early stopping and the LP-bound skip, LP
//!   rounding at the deadlines not skipped; nothing committed; target
//!   p50 ≤ 1 s);
//! * `run_100_jobs`: a whole online run over the 100 jobs
//!   ([`Locality::solve`], checkers included).
//!
//! The bench also times the decision of each of the jobs 51–100 alone at
//! the state after 50 jobs (one solve each) and prints p50, p90 and the
//! maximum, with the LP's size; `docs/benchmarks.md` records them.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::algorithms::locality::{Locality, LocalityJob, LocalityOracle, LocalityParams, sub};
use dmlsched::experiments::locality::{LocalityWorkload, generate};
use dmlsched::lp::SolveOptions;
use dmlsched::model::Instance;
use dmlsched::online::{Ledger, PriceBounds, PriceView, PricingOracle};
use dmlsched::pcip::{PcProblem, RowClass, solve_lp};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// Seed of the instance and of the run.
const SEED: u64 = 2024;
/// Jobs decided before the measured state.
const PREFIX: usize = 50;

struct State {
    instance: Instance,
    params: LocalityParams,
    oracle: LocalityOracle,
    ledger: Ledger,
    bounds: PriceBounds,
    rest: Vec<LocalityJob>,
}

fn state() -> State {
    let w = LocalityWorkload::default();
    let instance = generate(&mut ChaCha8Rng::seed_from_u64(SEED), &w).expect("generator");
    let params = LocalityParams {
        seed: Some(SEED),
        ..w.params()
    };
    let (mut engine, jobs) = Locality::new(params.clone())
        .engine(&instance, &mut ChaCha8Rng::seed_from_u64(SEED))
        .expect("engine");
    for j in &jobs[..PREFIX] {
        engine.step(j).expect("step");
    }
    State {
        instance,
        params,
        oracle: engine.oracle().clone(),
        ledger: engine.ledger().clone(),
        bounds: engine.bounds().clone(),
        rest: jobs[PREFIX..].to_vec(),
    }
}

/// LOC-SUB of `job` at the middle deadline of its range, and that deadline.
fn middle_program(
    oracle: &LocalityOracle,
    job: &LocalityJob,
    view: &PriceView<'_>,
) -> (PcProblem, u32) {
    let cluster = oracle.cluster();
    let cells = sub::cells(job, cluster, view);
    let first = job.arrival + job.delta_min(cluster);
    let last = job.end.min(view.horizon() - 1);
    let t = first + (last.max(first) - first) / 2;
    let s = sub::build(job, &cells, t)
        .expect("builds")
        .expect("the job has columns at its middle deadline");
    (s.problem, t)
}

/// Every later job's decision alone at the state, printed as quantiles.
fn quantiles(s: &State) {
    let view = PriceView::new(&s.ledger, &s.bounds);
    let mut times: Vec<f64> = s
        .rest
        .iter()
        .enumerate()
        .map(|(k, j)| {
            let mut oracle = s.oracle.clone();
            let t = Instant::now();
            black_box(
                oracle
                    .best_response(PREFIX + k, j, &view)
                    .expect("decision"),
            );
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let q = |p: f64| times[((p * times.len() as f64) as usize).min(times.len() - 1)];
    println!(
        "locality/decision after {PREFIX} jobs: {} jobs, p50 {:.3} s, p90 {:.3} s, max {:.3} s",
        times.len(),
        q(0.5),
        q(0.9),
        times[times.len() - 1]
    );
}

fn bench(c: &mut Criterion) {
    let s = state();
    let view = PriceView::new(&s.ledger, &s.bounds);
    let next = &s.rest[0];
    let (program, t) = middle_program(&s.oracle, next, &view);
    println!(
        "locality/lp: job {} (arrival {}, end {}), deadline {t}: {} columns, {} rows",
        next.id,
        next.arrival,
        next.end,
        program.n_vars(),
        [RowClass::Packing, RowClass::Covering, RowClass::Linking]
            .into_iter()
            .map(|c| program.n_rows(c))
            .sum::<usize>()
    );
    quantiles(&s);

    let mut group = c.benchmark_group("locality");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("lp", |b| {
        b.iter(|| black_box(solve_lp(&program, &SolveOptions::default()).expect("feasible")))
    });
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("decision", |b| {
        b.iter(|| {
            let mut oracle = s.oracle.clone();
            black_box(oracle.best_response(PREFIX, next, &view).expect("decision"))
        })
    });
    group.measurement_time(Duration::from_secs(60));
    group.bench_function("run_100_jobs", |b| {
        b.iter(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(SEED);
            black_box(
                Locality::new(s.params.clone())
                    .solve(&s.instance, &mut rng)
                    .expect("run"),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
