//! Timing helpers shared by the decision-time benches (each bench file
//! declares `mod common;`).
#![allow(dead_code)]

use std::time::Instant;

/// For each job, the fastest of `runs` wall-clock timings of `f(job)`,
/// seconds.
pub fn best_of_each<J, T>(jobs: &[J], runs: usize, mut f: impl FnMut(&J) -> T) -> Vec<f64> {
    jobs.iter()
        .map(|j| {
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(f(j));
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

/// Prints `label: n jobs, p50 …, p90 …, max …` (milliseconds) for `times`
/// in seconds, the `q`-quantile being the value at index `⌊q·n⌋`; nothing
/// for no times.
pub fn print_quantiles(label: &str, mut times: Vec<f64>) {
    if times.is_empty() {
        return;
    }
    times.sort_by(f64::total_cmp);
    let n = times.len();
    let q = |p: f64| times[((p * n as f64) as usize).min(n - 1)] * 1e3;
    println!(
        "{label}: {n} jobs, p50 {:.3} ms, p90 {:.3} ms, max {:.3} ms",
        q(0.5),
        q(0.9),
        times[n - 1] * 1e3
    );
}
