//! Synthetic workload generators: job sizes and durations drawn from the
//! Microsoft Philly trace's published distributions (Jeon et al., USENIX ATC
//! 2019), Poisson and diurnal arrivals, Gavel-style jobs (Narayanan et al.,
//! OSDI 2020) and the 160-job ring-all-reduce workload of Yu et al. (ACM
//! MobiHoc 2022).
//!
//! Every generator takes the caller's RNG (`&mut impl Rng`), so the same
//! seeded generator gives the same workload on every machine:
//!
//! ```
//! use dmlsched::trace::synth::{ms160_like, philly_duration};
//! use rand::SeedableRng;
//! use rand::rngs::ChaCha8Rng;
//!
//! let jobs = ms160_like(&mut ChaCha8Rng::seed_from_u64(7));
//! assert_eq!(jobs.len(), 160);
//! assert_eq!(jobs.iter().map(|j| j.gpus).sum::<u32>(), 644);
//! let d = philly_duration(&mut ChaCha8Rng::seed_from_u64(7));
//! assert!((1.0..=4_628_226.0).contains(&d));
//! ```

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp};

use super::catalog::{
    GAVEL_JOB_TABLE, GAVEL_SCALE_FACTORS, MS160_GPU_COUNTS, MS160_MODELS,
    PHILLY_DURATION_QUANTILES, PHILLY_GPU_COUNTS, RarModel,
};
use super::{TraceError, TraceJob};
use crate::model::units::Num;

/// Options of [`philly_gpu_count`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PhillyGpuOptions {
    /// Restrict to powers of two at most this cap, renormalising the Philly
    /// job counts (a cap below 1 acts as 1). `None`: every observed size,
    /// including 12 and 24.
    pub power_of_two_cap: Option<u32>,
}

/// The distribution [`philly_gpu_count`] samples from: `(GPUs,
/// probability)`, the Philly job counts per GPU count (restricted and renormalised as the
/// options say).
///
/// ```
/// use dmlsched::trace::synth::{PhillyGpuOptions, philly_gpu_distribution};
///
/// let all = philly_gpu_distribution(&PhillyGpuOptions::default());
/// assert!((all.iter().map(|&(_, p)| p).sum::<f64>() - 1.0).abs() < 1e-12);
/// assert!(all.iter().any(|&(gpus, _)| gpus == 12)); // every observed size
/// assert!((all[0].1 - 0.932).abs() < 0.001); // 93.2% use one GPU
/// let mut opts = PhillyGpuOptions::default();
/// opts.power_of_two_cap = Some(8);
/// let capped = philly_gpu_distribution(&opts);
/// assert_eq!(capped.iter().map(|&(gpus, _)| gpus).collect::<Vec<_>>(), [1, 2, 4, 8]);
/// assert!(capped[0].1 > all[0].1); // renormalised
/// ```
pub fn philly_gpu_distribution(opts: &PhillyGpuOptions) -> Vec<(u32, f64)> {
    let sizes = philly_sizes(opts);
    let total: u64 = sizes.iter().map(|&(_, n)| n).sum();
    sizes
        .into_iter()
        .map(|(g, n)| (g, n as f64 / total as f64))
        .collect()
}

fn philly_sizes(opts: &PhillyGpuOptions) -> Vec<(u32, u64)> {
    PHILLY_GPU_COUNTS
        .iter()
        .copied()
        .filter(|&(g, _)| match opts.power_of_two_cap {
            None => true,
            Some(cap) => g.is_power_of_two() && g <= cap.max(1),
        })
        .collect()
}

/// A GPU count drawn from the Philly job-count distribution
/// (93.2% of the jobs use one GPU), optionally restricted to powers of
/// two up to a cap.
///
/// ```
/// use dmlsched::trace::synth::{PhillyGpuOptions, philly_gpu_count};
/// use rand::SeedableRng;
///
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(1);
/// let mut opts = PhillyGpuOptions::default();
/// opts.power_of_two_cap = Some(4);
/// let draws: Vec<u32> = (0..1000).map(|_| philly_gpu_count(&mut rng, &opts)).collect();
/// assert!(draws.iter().all(|g| [1, 2, 4].contains(g)));
/// let ones = draws.iter().filter(|&&g| g == 1).count();
/// assert!((920..985).contains(&ones)); // 95.4% of the jobs of at most 4 GPUs use one
/// ```
pub fn philly_gpu_count(rng: &mut impl Rng, opts: &PhillyGpuOptions) -> u32 {
    draw_by_count(rng, &philly_sizes(opts))
}

/// A size drawn with probability proportional to its count: `u ~ U{0..Σn}`,
/// then the first size whose cumulative count exceeds `u` (1 for an empty
/// or all-zero table).
fn draw_by_count(rng: &mut impl Rng, sizes: &[(u32, u64)]) -> u32 {
    let total: u64 = sizes.iter().map(|&(_, n)| n).sum();
    if total == 0 {
        return 1;
    }
    let mut u = rng.random_range(0..total);
    for &(g, n) in sizes {
        if u < n {
            return g;
        }
        u -= n;
    }
    1 // unreachable: u < total
}

/// A duration in seconds drawn from the Philly quantiles by log-linear
/// interpolation between p0 = 1 s, p10 = 61 s, p50 = 1,144 s, p90 =
/// 11,266 s, p99 = 254,884 s and p100 = 4,628,226 s:
/// for `u ~ U[0, 1)` in `[q_a, q_b)`, `ln d = ln d_a + (u − q_a)/(q_b − q_a)
/// · (ln d_b − ln d_a)`.
///
/// ```
/// use dmlsched::trace::synth::philly_duration;
/// use rand::SeedableRng;
///
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(7);
/// let mut d: Vec<f64> = (0..2000).map(|_| philly_duration(&mut rng)).collect();
/// d.sort_by(f64::total_cmp);
/// assert!(d.iter().all(|x| (1.0..=4_628_226.0).contains(x)));
/// assert!((800.0..1600.0).contains(&d[1000])); // the Philly median is 1,144 s
/// ```
pub fn philly_duration(rng: &mut impl Rng) -> f64 {
    philly_duration_quantile(rng.random::<f64>())
}

/// The inverse CDF behind [`philly_duration`], for `u ∈ [0, 1]`.
///
/// ```
/// use dmlsched::trace::synth::philly_duration_quantile;
///
/// assert!((philly_duration_quantile(0.5) - 1144.0).abs() < 1e-6); // the median
/// assert!((philly_duration_quantile(0.99) - 254_884.0).abs() < 1e-6);
/// // Halfway from p10 to p50, the geometric mean of 61 s and 1,144 s.
/// assert!((philly_duration_quantile(0.3) - (61.0_f64 * 1144.0).sqrt()).abs() < 1e-6);
/// assert_eq!(philly_duration_quantile(0.0), 1.0);
/// assert_eq!(philly_duration_quantile(2.0), philly_duration_quantile(1.0)); // clamped
/// ```
pub fn philly_duration_quantile(u: f64) -> f64 {
    let u = u.clamp(0.0, 1.0);
    for w in PHILLY_DURATION_QUANTILES.windows(2) {
        let ((qa, da), (qb, db)) = (w[0], w[1]);
        if u <= qb {
            let t = (u - qa) / (qb - qa);
            return (da.ln() + t * (db.ln() - da.ln())).exp();
        }
    }
    PHILLY_DURATION_QUANTILES[PHILLY_DURATION_QUANTILES.len() - 1].1
}

/// `Ok` for a finite positive rate; otherwise an invalid-argument error
/// naming `name`.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] for a rate that is not finite and
/// positive.
pub fn check_rate(name: &str, rate: f64) -> Result<(), TraceError> {
    if rate.is_finite() && rate > 0.0 {
        Ok(())
    } else {
        Err(TraceError::invalid(
            name,
            format!("must be finite and > 0, got {}", Num(rate)),
        ))
    }
}

/// `n` arrival times of a Poisson process with `rate_per_s` arrivals per
/// second: the first job arrives at 0 and the gaps are exponential with
/// mean `1 / rate_per_s`.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless the rate is finite and > 0.
///
/// ```
/// use dmlsched::trace::synth::poisson_arrivals;
/// use rand::SeedableRng;
///
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let t = poisson_arrivals(&mut rng, 1000, 0.1)?; // one job per 10 s on average
/// assert_eq!((t.len(), t[0]), (1000, 0.0));
/// assert!(t.windows(2).all(|w| w[0] <= w[1]));
/// assert!((8.5..11.5).contains(&(t[999] / 999.0))); // the mean gap
/// assert!(poisson_arrivals(&mut rng, 10, 0.0).is_err());
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn poisson_arrivals(
    rng: &mut impl Rng,
    n: usize,
    rate_per_s: f64,
) -> Result<Vec<f64>, TraceError> {
    check_rate("arrival rate", rate_per_s)?;
    let exp =
        Exp::new(rate_per_s).map_err(|e| TraceError::invalid("arrival rate", e.to_string()))?;
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if i > 0 {
            t += exp.sample(rng);
        }
        out.push(t);
    }
    Ok(out)
}

/// `n` arrival times of a Poisson process whose rate follows a day cycle,
/// `λ(t) = λ̄·(1 + A·sin(2πt / P))`, drawn by thinning (a day-cycle variant of
/// the Poisson arrivals). The first job arrives at 0.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless the mean rate and period are
/// finite and > 0 and `0 ≤ A ≤ 1`.
///
/// ```
/// use dmlsched::trace::synth::diurnal_arrivals;
/// use rand::SeedableRng;
///
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let day = 86_400.0;
/// // One job per 100 s on average, at a rate peaking 6 h into each day and
/// // falling to 0 at 18 h.
/// let t = diurnal_arrivals(&mut rng, 1500, 0.01, 1.0, day)?;
/// assert_eq!(t[0], 0.0);
/// let between = |a: f64, b: f64| t.iter().filter(|&&x| a <= x && x < b).count();
/// assert!(between(0.0, day / 2.0) > 3 * between(day / 2.0, day));
/// assert!(diurnal_arrivals(&mut rng, 10, 0.01, 1.5, day).is_err()); // amplitude above 1
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn diurnal_arrivals(
    rng: &mut impl Rng,
    n: usize,
    mean_rate_per_s: f64,
    amplitude: f64,
    period_s: f64,
) -> Result<Vec<f64>, TraceError> {
    check_rate("arrival rate", mean_rate_per_s)?;
    check_rate("diurnal period", period_s)?;
    if !(0.0..=1.0).contains(&amplitude) {
        return Err(TraceError::invalid(
            "diurnal amplitude",
            format!("must be in [0, 1], got {}", Num(amplitude)),
        ));
    }
    let peak = mean_rate_per_s * (1.0 + amplitude);
    let exp = Exp::new(peak).map_err(|e| TraceError::invalid("arrival rate", e.to_string()))?;
    let rate =
        |t: f64| mean_rate_per_s * (1.0 + amplitude * (std::f64::consts::TAU * t / period_s).sin());
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    if n > 0 {
        out.push(0.0);
    }
    while out.len() < n {
        t += exp.sample(rng);
        if rng.random::<f64>() * peak < rate(t) {
            out.push(t);
        }
    }
    Ok(out)
}

/// `n` jobs in the manner of Gavel's `generate_job` (Narayanan et al., OSDI 2020):
/// Poisson arrivals at `rate_per_hour` (first at 0), a job type uniform
/// over Gavel's 26-entry job table, 1/2/4/8 GPUs with probability
/// 0.70/0.10/0.15/0.05, and a duration of `60·10^U(1.5, 3)` s with
/// probability 0.8, else `60·10^U(3, 4)` s. Ids are `gavel-like-<i>`;
/// iterations are unknown (Gavel converts with its throughput tables).
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless the rate is finite and > 0.
///
/// ```
/// use dmlsched::trace::synth::gavel_like;
/// use rand::SeedableRng;
///
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let jobs = gavel_like(&mut rng, 200, 60.0)?; // one job a minute on average
/// assert_eq!((jobs[0].arrival_s, jobs[199].id.as_str()), (0.0, "gavel-like-199"));
/// assert!(jobs.iter().all(|j| [1, 2, 4, 8].contains(&j.num_gpus)));
/// // 60·10^1.5 s (about 32 min) to 60·10^4 s (about a week).
/// assert!(jobs.iter().all(|j| j.duration_s.is_some_and(|d| (1897.0..=600_000.0).contains(&d))));
/// assert!(jobs.iter().all(|j| j.model.is_some() && j.model_is_synthetic));
/// assert!(jobs.iter().all(|j| j.iterations.is_none())); // Gavel converts with its tables
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn gavel_like(
    rng: &mut impl Rng,
    n: usize,
    rate_per_hour: f64,
) -> Result<Vec<TraceJob>, TraceError> {
    check_rate("arrival rate", rate_per_hour)?;
    let arrivals = poisson_arrivals(rng, n, rate_per_hour / 3600.0)?;
    let mut out = Vec::with_capacity(n);
    for (i, arrival) in arrivals.into_iter().enumerate() {
        let kind = GAVEL_JOB_TABLE[rng.random_range(0..GAVEL_JOB_TABLE.len())];
        let u: f64 = rng.random();
        let mut acc = 0.0;
        let mut gpus = GAVEL_SCALE_FACTORS[0].0;
        for &(g, p) in &GAVEL_SCALE_FACTORS {
            acc += p;
            gpus = g;
            if u < acc {
                break;
            }
        }
        let exponent = if rng.random::<f64>() < 0.8 {
            rng.random_range(1.5..3.0)
        } else {
            rng.random_range(3.0..4.0)
        };
        let mut job = TraceJob::new(format!("gavel-like-{i}"), arrival, gpus);
        job.duration_s = Some(60.0 * 10f64.powf(exponent));
        job.model = Some(kind.model.to_string());
        job.batch_size = kind.batch_size;
        job.model_is_synthetic = true;
        out.push(job);
    }
    Ok(out)
}

/// One job of [`ms160_like`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ms160Job {
    /// GPUs (= ring workers).
    pub gpus: u32,
    /// The model, from [`MS160_MODELS`].
    pub model: RarModel,
}

/// The 160-job ring-all-reduce workload of Yu et al. (ACM MobiHoc 2022) as a
/// distribution: exactly the GPU multiset 80×1, 14×2, 26×4, 30×8, 8×16, 2×32 (644
/// GPUs), in that order, each job's model drawn uniformly and independently
/// from resnet50, googlenet and alexnet.
///
/// ```
/// use dmlsched::trace::synth::ms160_like;
/// use rand::SeedableRng;
///
/// let jobs = ms160_like(&mut rand::rngs::ChaCha8Rng::seed_from_u64(1));
/// assert_eq!(jobs.len(), 160);
/// assert_eq!(jobs.iter().map(|j| j.gpus).sum::<u32>(), 644);
/// assert_eq!((jobs[0].gpus, jobs[79].gpus, jobs[80].gpus, jobs[159].gpus), (1, 1, 2, 32));
/// let models = ["resnet50", "googlenet", "alexnet"];
/// assert!(jobs.iter().all(|j| models.contains(&j.model.name)));
/// ```
pub fn ms160_like(rng: &mut impl Rng) -> Vec<Ms160Job> {
    let mut out = Vec::with_capacity(160);
    for &(gpus, count) in &MS160_GPU_COUNTS {
        for _ in 0..count {
            let model = MS160_MODELS[rng.random_range(0..MS160_MODELS.len())];
            out.push(Ms160Job { gpus, model });
        }
    }
    out
}

/// A GPU count drawn from the 160-job ring-all-reduce mix as a
/// distribution: 1, 2, 4, 8, 16, 32 GPUs with probability 80, 14, 26, 30, 8,
/// 2 in 160 (50, 8.75, 16.25, 18.75, 5 and 1.25%), one uniform draw each.
///
/// ```
/// use dmlsched::trace::synth::ms160_gpu_count;
/// use rand::SeedableRng;
/// use rand::rngs::ChaCha8Rng;
///
/// let mut rng = ChaCha8Rng::seed_from_u64(3);
/// let ones = (0..4000).filter(|_| ms160_gpu_count(&mut rng) == 1).count();
/// assert!((1800..2200).contains(&ones));
/// ```
pub fn ms160_gpu_count(rng: &mut impl Rng) -> u32 {
    let sizes = MS160_GPU_COUNTS.map(|(g, n)| (g, n as u64));
    draw_by_count(rng, &sizes)
}

/// A uniform draw in `[lo, hi]` (inclusive integers).
pub fn uniform_u32(rng: &mut impl Rng, (lo, hi): (u32, u32)) -> u32 {
    rng.random_range(lo..=hi)
}

/// A uniform draw in `[lo, hi]`.
pub fn uniform_f64(rng: &mut impl Rng, (lo, hi): (f64, f64)) -> f64 {
    if hi > lo {
        lo + (hi - lo) * rng.random::<f64>()
    } else {
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    #[test]
    fn duration_quantiles_hit_the_knots() {
        for (q, d) in PHILLY_DURATION_QUANTILES {
            assert!((philly_duration_quantile(q) - d).abs() < 1e-6 * d, "{q}");
        }
        let mid = philly_duration_quantile(0.3);
        assert!((mid - (61f64 * 1144.0).sqrt()).abs() < 1e-6);
    }

    #[test]
    fn capped_distribution_renormalises() {
        let d = philly_gpu_distribution(&PhillyGpuOptions {
            power_of_two_cap: Some(8),
        });
        assert_eq!(d.iter().map(|&(g, _)| g).collect::<Vec<_>>(), [1, 2, 4, 8]);
        assert!((d.iter().map(|&(_, p)| p).sum::<f64>() - 1.0).abs() < 1e-12);
        let one = philly_gpu_distribution(&PhillyGpuOptions {
            power_of_two_cap: Some(0),
        });
        assert_eq!(one, [(1, 1.0)]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1000 {
            let g = philly_gpu_count(
                &mut rng,
                &PhillyGpuOptions {
                    power_of_two_cap: Some(8),
                },
            );
            assert!([1, 2, 4, 8].contains(&g));
        }
    }

    #[test]
    fn arrivals() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let a = poisson_arrivals(&mut rng, 20_000, 2.0).unwrap();
        assert_eq!(a[0], 0.0);
        assert!(a.windows(2).all(|w| w[1] >= w[0]));
        let mean_gap = a[a.len() - 1] / (a.len() - 1) as f64;
        assert!((mean_gap - 0.5).abs() < 0.02, "{mean_gap}");
        assert!(poisson_arrivals(&mut rng, 3, 0.0).is_err());
        let d = diurnal_arrivals(&mut rng, 20_000, 1.0, 0.9, 100.0).unwrap();
        assert_eq!(d.len(), 20_000);
        let mean_gap = d[d.len() - 1] / (d.len() - 1) as f64;
        assert!((mean_gap - 1.0).abs() < 0.05, "{mean_gap}");
        assert!(diurnal_arrivals(&mut rng, 3, 1.0, 1.5, 100.0).is_err());
    }

    #[test]
    fn gavel_like_jobs() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let jobs = gavel_like(&mut rng, 2000, 60.0).unwrap();
        assert_eq!(jobs.len(), 2000);
        for j in &jobs {
            assert!([1, 2, 4, 8].contains(&j.num_gpus));
            let d = j.duration_s.unwrap();
            assert!((60.0 * 10f64.powf(1.5)..=600_000.0).contains(&d));
            assert!(j.model_is_synthetic && j.model.is_some());
        }
        let ones = jobs.iter().filter(|j| j.num_gpus == 1).count() as f64 / 2000.0;
        assert!((ones - 0.7).abs() < 0.05, "{ones}");
    }
}
