//! Synthetic generators and trace recipes: exact multisets, sampling
//! frequencies within 4 standard errors, determinism under a seed, and
//! recipe output that passes `Instance::new`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dmlsched::model::{Architecture, Instance};
use dmlsched::trace::catalog::{MS160_GPU_COUNTS, MS160_MODELS};
use dmlsched::trace::recipe::SkipReason;
use dmlsched::trace::synth::*;
use dmlsched::trace::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Asserts that `count` of `n` draws is within 4 standard errors of `p`.
fn within_4_se(what: &str, count: usize, n: usize, p: f64) {
    let n_f = n as f64;
    let se = (p * (1.0 - p) / n_f).sqrt();
    let freq = count as f64 / n_f;
    assert!(
        (freq - p).abs() <= 4.0 * se,
        "{what}: frequency {freq} vs p = {p} (4 SE = {})",
        4.0 * se
    );
}

#[test]
fn ms160_like_has_the_exact_multiset() {
    for seed in 0..5 {
        let jobs = ms160_like(&mut rng(seed));
        assert_eq!(jobs.len(), 160);
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for j in &jobs {
            *counts.entry(j.gpus).or_default() += 1;
            assert!(MS160_MODELS.contains(&j.model));
        }
        assert_eq!(counts, MS160_GPU_COUNTS.into_iter().collect());
        assert_eq!(jobs.iter().map(|j| j.gpus).sum::<u32>(), 644);
        assert_eq!(ms160_like(&mut rng(seed)), jobs);
    }
    assert_ne!(ms160_like(&mut rng(1)), ms160_like(&mut rng(2)));
    // Models are uniform: 160 × 20 draws.
    let mut by_model: BTreeMap<&str, usize> = BTreeMap::new();
    let mut r = rng(42);
    for _ in 0..20 {
        for j in ms160_like(&mut r) {
            *by_model.entry(j.model.name).or_default() += 1;
        }
    }
    for (name, count) in by_model {
        within_4_se(name, count, 3200, 1.0 / 3.0);
    }
}

#[test]
fn philly_gpu_count_frequencies() {
    const N: usize = 20_000;
    for opts in [PhillyGpuOptions::default(), {
        let mut built = PhillyGpuOptions::default();
        built.power_of_two_cap = Some(16);
        built
    }] {
        let mut r = rng(2024);
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for _ in 0..N {
            *counts.entry(philly_gpu_count(&mut r, &opts)).or_default() += 1;
        }
        let dist = philly_gpu_distribution(&opts);
        for &(g, p) in &dist {
            within_4_se(
                &format!("{g} GPUs ({opts:?})"),
                counts.get(&g).copied().unwrap_or(0),
                N,
                p,
            );
        }
        assert!(counts.keys().all(|g| dist.iter().any(|&(d, _)| d == *g)));
        let again: Vec<u32> = {
            let mut r = rng(2024);
            (0..100).map(|_| philly_gpu_count(&mut r, &opts)).collect()
        };
        let mut r = rng(2024);
        assert_eq!(
            again,
            (0..100)
                .map(|_| philly_gpu_count(&mut r, &opts))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn philly_duration_follows_the_quantiles() {
    const N: usize = 20_000;
    let mut r = rng(7);
    let d: Vec<f64> = (0..N).map(|_| philly_duration(&mut r)).collect();
    assert!(d.iter().all(|&x| (1.0..=4_628_226.0).contains(&x)));
    for (q, knot) in [
        (0.1, 61.0),
        (0.5, 1144.0),
        (0.9, 11_266.0),
        (0.99, 254_884.0),
    ] {
        let below = d.iter().filter(|&&x| x <= knot).count();
        within_4_se(&format!("P(d ≤ {knot})"), below, N, q);
    }
    let mut r2 = rng(7);
    assert_eq!(
        (0..N).map(|_| philly_duration(&mut r2)).collect::<Vec<_>>(),
        d
    );
}

#[test]
fn gavel_like_scale_factors_and_determinism() {
    const N: usize = 20_000;
    let jobs = gavel_like(&mut rng(3), N, 30.0).unwrap();
    for (g, p) in [(1, 0.70), (2, 0.10), (4, 0.15), (8, 0.05)] {
        within_4_se(
            &format!("{g} GPUs"),
            jobs.iter().filter(|j| j.num_gpus == g).count(),
            N,
            p,
        );
    }
    let long = jobs
        .iter()
        .filter(|j| j.duration_s.unwrap() > 60_000.0)
        .count();
    // P(60·10^U(3,4) > 60,000) = 0.2; the short branch never exceeds 60,000 s.
    within_4_se("long jobs", long, N, 0.2);
    // Mean gap ≈ 120 s at 30 jobs per hour.
    let span = jobs.last().unwrap().arrival_s;
    assert!((span / (N - 1) as f64 / 120.0 - 1.0).abs() < 0.05);
    assert_eq!(gavel_like(&mut rng(3), N, 30.0).unwrap(), jobs);
    assert!(gavel_like(&mut rng(3), 5, -1.0).is_err());
}

/// A Philly-like trace from the generators, re-based to 0.
fn philly_like(seed: u64, n: usize) -> Vec<TraceJob> {
    let mut r = rng(seed);
    let arrivals = poisson_arrivals(&mut r, n, 1.0 / 60.0).unwrap();
    arrivals
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            let mut j = TraceJob::new(
                format!("philly-like-{i}"),
                a,
                philly_gpu_count(&mut r, &PhillyGpuOptions::default()),
            );
            j.duration_s = Some(philly_duration(&mut r));
            j
        })
        .collect()
}

#[test]
fn recipes_produce_valid_instances() {
    let trace = philly_like(5, 400);
    let cluster = gpu_cluster(64, 8).unwrap();
    for opts in [RecipeOptions::rar(), RecipeOptions::ps()] {
        let mut opts = opts;
        opts.max_gpus_per_job = Some(64);
        opts.seed = 11;
        let out = to_jobs(&trace, &opts).unwrap();
        assert_eq!(out.jobs.len(), trace.len());
        let capped: Vec<usize> = trace
            .iter()
            .enumerate()
            .filter(|(_, j)| j.num_gpus > 64)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(out.capped, capped);
        for (job, origin) in out.jobs.iter().zip(&out.origins) {
            assert_eq!(job.arrival_s, trace[origin.trace_index].arrival_s);
            assert!(job.max_workers() <= 64);
            match (&job.architecture, opts.arch) {
                (Architecture::RingAllReduce(_), Arch::RingAllReduce) => {
                    assert!(origin.model.is_some())
                }
                (Architecture::ParameterServer(_), Arch::ParameterServer) => {
                    assert!(origin.model.is_none())
                }
                _ => panic!("wrong architecture"),
            }
        }
        let last = trace.iter().map(|j| j.arrival_s).fold(0.0, f64::max);
        let horizon = (last / opts.slot_length_s) as u32 + 10;
        assert_eq!(to_jobs(&trace, &opts).unwrap(), out, "same seed, same jobs");
        assert_ne!(
            to_jobs(&trace, &{
                let mut built = opts;
                built.seed = 12;
                built
            })
            .unwrap()
            .jobs,
            out.jobs
        );
        Instance::new(cluster.clone(), out.jobs, opts.slot_length_s, horizon).unwrap();
    }
}

#[test]
fn recipe_on_alibaba_like_rows_skips_what_cannot_run() {
    let mut pending = TraceJob::new("pending", 0.0, 1);
    pending.duration_s = None;
    let mut cpu = TraceJob::new("cpu", 1.0, 0);
    cpu.duration_s = Some(10.0);
    let mut shared = TraceJob::new("shared", 2.0, 1);
    shared.duration_s = Some(100.0);
    shared.gpu_fraction = Some(0.5);
    let out = to_jobs(&[pending, cpu, shared], &RecipeOptions::rar()).unwrap();
    assert_eq!(
        out.skipped,
        vec![(0, SkipReason::NoDuration), (1, SkipReason::NoGpus)]
    );
    assert_eq!(out.jobs.len(), 1);
    assert_eq!(out.origins[0].trace_id, "shared");
}

#[test]
fn recipe_on_a_real_philly_window() {
    let Some(dir) = std::env::var_os("DMLSCHED_TRACES").map(PathBuf::from) else {
        eprintln!("skipping: DMLSCHED_TRACES is not set");
        return;
    };
    let jobs = load_philly_pollux_csv(dir.join("philly.csv")).unwrap().jobs;
    let window = Window {
        start: Some(WindowStart::Date("2017-11-01".into())),
        jobs: Some(500),
        ..Window::default()
    };
    let mut w = select(&jobs, &window).unwrap();
    scale_arrivals(&mut w, 0.5).unwrap();
    let mut opts = RecipeOptions::rar();
    opts.max_gpus_per_job = Some(32);
    let out = to_jobs(&w, &opts).unwrap();
    assert_eq!(out.jobs.len(), 500);
    let last = w.last().unwrap().arrival_s;
    let horizon = (last / opts.slot_length_s) as u32 + 1;
    Instance::new(
        gpu_cluster(64, 8).unwrap(),
        out.jobs,
        opts.slot_length_s,
        horizon,
    )
    .unwrap();
    eprintln!(
        "philly window: {} of 500 jobs capped at 32 GPUs",
        out.capped.len()
    );
}
