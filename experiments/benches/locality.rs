//! Locality-aware scheduler timings on the default set-up of
//! `experiments::locality` (16 machines `[8 GPU, 64 vCPU, 512 GB,
//! 25 Gbit/s]`, 1800 s slots, T = 200, κ = 10, 100 jobs, instance seed
//! and run seed [`SEED`], LP rounding with the default draws and
//! scalings). The state: the prices and residuals reached after the online
//! loop decided the first 50 jobs (arrival order).
//!
//! * `locality/lp`: one LP relaxation of LOC-SUB for the 51st job at the middle
//!   deadline of its range `[a + d_min − 1, end]`
//!   ([`middle_loc_sub`]; target ≤ 50 ms);
//! * `locality/decision_next` and `locality/decision_p90_lps`: the
//!   oracle's whole decision (deadline enumeration with early stopping and
//!   the LP-bound skip, LP rounding at the deadlines not skipped; nothing
//!   committed) at that state for the 51st job, and for the one of the
//!   51st to 100th jobs whose decision solves the p90 (nearest rank) of
//!   their LP counts. Before them, every one of the 51st to 100th jobs is
//!   timed alone at that state (one solve each) and p50, p90 and the
//!   maximum are printed (target p50 ≤ 1 s);
//! * a whole online run over the 100 jobs ([`Locality::solve`], checkers
//!   included), timed [`FULL_RUNS`] times and printed: one run takes tens
//!   of seconds, so criterion's ten samples would take minutes. With
//!   `LOCALITY_BENCH_FULL_RUN=1` criterion measures it too
//!   (`locality/run_100_jobs`).
//!
//! * `locality/solve_ps_grown_100`: [`Locality::solve`] on
//!   `examples/data/instance_ps.json` grown to 100 jobs
//!   ([`common::grown_example`], 10 machines); with
//!   `LOCALITY_BENCH_FULL_RUN=1` the 1,000-job instance is also timed once
//!   and printed.
//!
//! `docs/benchmarks.md` records the numbers.

use dmlsched::algorithms::Algorithm;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use dmlsched::algorithms::locality::{Locality, LocalityJob, LocalityOracle, LocalityParams};
use dmlsched::experiments::locality_quality::middle_loc_sub;
use dmlsched::lp::SolveOptions;
use dmlsched::model::{Instance, Job};
use dmlsched::online::{Ledger, PriceBounds, PriceView, PricingOracle};
use dmlsched::pcip::{RowClass, solve_lp};
use dmlsched_experiments::locality::{LocalityWorkload, generate};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

#[path = "../../benches/common/mod.rs"]
mod common;

/// Seed of the instance and of the run.
const SEED: u64 = 2024;
/// Jobs decided before the measured state.
const PREFIX: usize = 50;
/// Whole runs timed outside criterion.
const FULL_RUNS: usize = 2;

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
    let mut params = w.params();
    params.seed = Some(SEED);
    let (mut engine, jobs) = Locality::new(params.clone())
        .unwrap()
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

/// The instance's job at arrival position `k` (the engine's `k`-th job).
fn job_at(s: &State, k: usize) -> &Job {
    &s.instance.jobs()[s.instance.arrival_order()[k]]
}

/// Every later job's decision alone at the state, printed as quantiles;
/// the position in `s.rest` of the job whose LP count is the p90 (nearest
/// rank) of the jobs' LP counts.
fn quantiles(s: &State) -> usize {
    let view = PriceView::new(&s.ledger, &s.bounds);
    let mut lps = Vec::new();
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
            let secs = t.elapsed().as_secs_f64();
            lps.push((oracle.last_call().lp_solves, k));
            secs
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
    lps.sort();
    let p90 = ((0.9 * lps.len() as f64).ceil() as usize).clamp(1, lps.len()) - 1;
    lps[p90].1
}

fn bench(c: &mut Criterion) {
    let s = state();
    let view = PriceView::new(&s.ledger, &s.bounds);
    let (program, t) = middle_loc_sub(&s.oracle, &s.rest[0], &view)
        .expect("builds")
        .expect("the job has columns at its middle deadline");
    let next = job_at(&s, PREFIX);
    let arrival = s.instance.arrival_slot(next);
    let end = (arrival + s.params.horizon - 1).min(s.instance.horizon_slots() - 1);
    println!(
        "locality/lp: {} (arrival {arrival}, end {end}), deadline {t}: {} columns, {} rows",
        next.id,
        program.n_vars(),
        [RowClass::Packing, RowClass::Covering, RowClass::Linking]
            .into_iter()
            .map(|c| program.n_rows(c))
            .sum::<usize>()
    );
    let heavy = quantiles(&s);

    let run = || {
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        Locality::new(s.params.clone())
            .and_then(|a| a.solve(&s.instance, &mut rng))
            .expect("run")
    };
    let mut runs: Vec<f64> = (0..FULL_RUNS)
        .map(|_| {
            let t = Instant::now();
            black_box(run());
            t.elapsed().as_secs_f64()
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    println!(
        "locality/run_100_jobs: {FULL_RUNS} runs, {}",
        runs.iter()
            .map(|t| format!("{t:.2} s"))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let mut group = c.benchmark_group("locality");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("lp", |b| {
        b.iter(|| black_box(solve_lp(&program, &SolveOptions::default()).expect("feasible")))
    });
    group.measurement_time(Duration::from_secs(10));
    let decide = |b: &mut criterion::Bencher<'_>, k: usize| {
        b.iter(|| {
            let mut oracle = s.oracle.clone();
            black_box(
                oracle
                    .best_response(PREFIX + k, &s.rest[k], &view)
                    .expect("decision"),
            )
        })
    };
    group.bench_function("decision_next", |b| decide(b, 0));
    println!(
        "locality/decision_p90_lps: {} ({} LPs)",
        job_at(&s, PREFIX + heavy).id,
        {
            let mut oracle = s.oracle.clone();
            oracle
                .best_response(PREFIX + heavy, &s.rest[heavy], &view)
                .expect("decision");
            oracle.last_call().lp_solves
        }
    );
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("decision_p90_lps", |b| decide(b, heavy));
    let grown = |n: usize| {
        let instance = common::grown_example("instance_ps.json", n);
        move || {
            let mut rng = ChaCha8Rng::seed_from_u64(SEED);
            Locality::new(LocalityParams::default())
                .and_then(|a| a.solve(&instance, &mut rng))
                .expect("grown run")
        }
    };
    group.measurement_time(Duration::from_secs(20));
    let run_100 = grown(100);
    group.bench_function("solve_ps_grown_100", |b| b.iter(|| black_box(run_100())));
    if std::env::var_os("LOCALITY_BENCH_FULL_RUN").is_some() {
        let run_1000 = grown(1000);
        let t = Instant::now();
        black_box(run_1000());
        println!(
            "locality/solve_ps_grown_1000: {:.2} s",
            t.elapsed().as_secs_f64()
        );
        group.measurement_time(Duration::from_secs(600));
        group.bench_function("run_100_jobs", |b| b.iter(|| black_box(run())));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
