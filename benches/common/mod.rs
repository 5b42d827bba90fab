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

/// `examples/data/<name>` (an instance in JSON) grown to `n` jobs: job `k`
/// is a copy of the example's job `k mod m` (`m` its job count) with id
/// `k` and arrival `⌊k·⌊0.75·horizon_s⌋/n⌋` s, so the arrivals spread
/// evenly over the first three quarters of the horizon. Deterministic; the
/// cluster, slot length and horizon are the example's. (`docs/benchmarks.md`
/// measures the command line on the same instances written to a file.)
#[cfg(feature = "serde")]
pub fn grown_example(name: &str, n: usize) -> dmlsched::model::Instance {
    use dmlsched::model::{Instance, JobId};
    // The repository's `examples/data`, also from the experiments crate.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if root.join("examples/data").is_dir() {
        root
    } else {
        root.parent().expect("the repository root")
    };
    let path = root.join("examples/data").join(name);
    let text = std::fs::read_to_string(&path).expect("example instance");
    let base = Instance::from_json(&text).expect("example instance parses");
    let spread = (0.75 * base.horizon_s()) as u64;
    let jobs = (0..n)
        .map(|k| {
            let mut job = base.jobs()[k % base.jobs().len()].clone();
            job.id = JobId(k as u32);
            job.arrival_s = (k as u64 * spread / n as u64) as f64;
            job
        })
        .collect();
    Instance::new(
        base.cluster().clone(),
        jobs,
        base.slot_length_s(),
        base.horizon_slots(),
    )
    .expect("grown instance is valid")
}

/// One benchmark per name in group `group`: criterion's minimum of 10 flat
/// samples of one whole simulation of `inst` by the policy `make(name)`
/// builds, each run printing its jobs done, mean JCT, events and wall time.
pub fn whole_runs(
    c: &mut criterion::Criterion,
    group: &str,
    inst: &dmlsched::model::Instance,
    names: &[&str],
    make: impl Fn(&str) -> Box<dyn dmlsched::sim::Policy>,
) {
    use dmlsched::sim::{SimOptions, simulate};
    let mut group = c.benchmark_group(group);
    group
        .sample_size(10)
        .sampling_mode(criterion::SamplingMode::Flat)
        .warm_up_time(std::time::Duration::from_millis(1))
        .measurement_time(std::time::Duration::from_secs(10));
    for &name in names {
        group.bench_function(name, |b| {
            b.iter(|| {
                let t = Instant::now();
                let r = simulate(inst, &mut make(name), &SimOptions::default()).expect("run");
                let s = r.summary();
                eprintln!(
                    "{name}: {} of {} jobs done, avg JCT {:.0} s, {} events, {:.2} s",
                    s.completed,
                    s.jobs,
                    s.avg_jct_s,
                    r.events,
                    t.elapsed().as_secs_f64()
                );
                std::hint::black_box(r)
            })
        });
    }
    group.finish();
}
