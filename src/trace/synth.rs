//! Synthetic workload generators (`workloads.md` §7).
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
    self, GAVEL_JOB_TABLE, GAVEL_SCALE_FACTORS, MS160_GPU_COUNTS, MS160_MODELS,
    PHILLY_DURATION_QUANTILES, PHILLY_GPU_COUNTS, RarModel,
};
use super::{TraceError, TraceJob};
use crate::model::units::{GB, MB, Num, ceil_tol, gbps};
use crate::model::{Architecture, Job, JobId, PsJob, Resources, SyncMode, Utility};

/// Options of [`philly_gpu_count`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PhillyGpuOptions {
    /// Restrict to powers of two at most this cap, renormalising the §5
    /// job counts (a cap below 1 acts as 1). `None`: every observed size,
    /// including 12 and 24.
    pub power_of_two_cap: Option<u32>,
}

/// The distribution [`philly_gpu_count`] samples from: `(GPUs,
/// probability)`, the §5 job counts (restricted and renormalised as the
/// options say).
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
/// (`workloads.md` §5: 93.2% one GPU), optionally restricted to powers of
/// two up to a cap.
pub fn philly_gpu_count(rng: &mut impl Rng, opts: &PhillyGpuOptions) -> u32 {
    let sizes = philly_sizes(opts);
    let total: u64 = sizes.iter().map(|&(_, n)| n).sum();
    let mut u = rng.random_range(0..total);
    for (g, n) in &sizes {
        if u < *n {
            return *g;
        }
        u -= n;
    }
    1 // unreachable: u < total
}

/// A duration in seconds drawn from the Philly quantiles by log-linear
/// interpolation between p0 = 1 s, p10 = 61 s, p50 = 1,144 s, p90 =
/// 11,266 s, p99 = 254,884 s and p100 = 4,628,226 s (`workloads.md` §7.1):
/// for `u ~ U[0, 1)` in `[q_a, q_b)`, `ln d = ln d_a + (u − q_a)/(q_b − q_a)
/// · (ln d_b − ln d_a)`.
pub fn philly_duration(rng: &mut impl Rng) -> f64 {
    philly_duration_quantile(rng.random::<f64>())
}

/// The inverse CDF behind [`philly_duration`], for `u ∈ [0, 1]`.
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

fn check_rate(name: &str, rate: f64) -> Result<(), TraceError> {
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
/// `λ(t) = λ̄·(1 + A·sin(2πt / P))`, drawn by thinning (`workloads.md` §7.4's
/// diurnal option). The first job arrives at 0.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless the mean rate and period are
/// finite and > 0 and `0 ≤ A ≤ 1`.
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

/// `n` jobs in the manner of Gavel's `generate_job` (`workloads.md` §7.2):
/// Poisson arrivals at `rate_per_hour` (first at 0), a job type uniform
/// over Gavel's 26-entry job table, 1/2/4/8 GPUs with probability
/// 0.70/0.10/0.15/0.05, and a duration of `60·10^U(1.5, 3)` s with
/// probability 0.8, else `60·10^U(3, 4)` s. Ids are `gavel-like-<i>`;
/// iterations are unknown (Gavel converts with its throughput tables).
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless the rate is finite and > 0.
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

/// The 160-job ring-all-reduce workload as a distribution (`workloads.md`
/// §2): exactly the GPU multiset 80×1, 14×2, 26×4, 30×8, 8×16, 2×32 (644
/// GPUs), in that order, each job's model drawn uniformly and independently
/// from resnet50, googlenet and alexnet.
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

/// Parameters of [`oasis_like_ps_jobs`].
#[derive(Debug, Clone, PartialEq)]
pub struct OasisParams {
    /// Jobs to generate (fewer if arrivals pass the horizon).
    pub jobs: usize,
    /// Horizon `T`, slots (OASiS: 100–300).
    pub horizon_slots: u32,
    /// Slot length, seconds (default 1200 s, the OASiS testbed's 20 min).
    pub slot_length_s: f64,
    /// Mean arrivals per slot of the Poisson arrival process.
    pub arrivals_per_slot: f64,
    /// Diurnal amplitude `A ∈ [0, 1]` of the arrival rate (0: plain
    /// Poisson); see [`diurnal_arrivals`].
    pub diurnal_amplitude: f64,
    /// Period of the diurnal cycle, slots (default 72 = one day of 20-min
    /// slots).
    pub diurnal_period_slots: f64,
    /// Range of the utility priority `γ1` (OASiS: [1, 100]; its small study
    /// also used [50, 100], [75, 100], [25, 100]).
    pub gamma1: (f64, f64),
    /// Redraw a job until its fastest possible duration fits before the
    /// horizon (`workloads.md` §4).
    pub feasible_only: bool,
    /// Most redraws per job before giving up.
    pub max_redraws: u32,
}

impl Default for OasisParams {
    /// 100 jobs, `T = 200` slots of 1200 s, one arrival per slot on
    /// average, no diurnal cycle, `γ1 ∈ [1, 100]`, feasible only, up to
    /// 100,000 redraws.
    fn default() -> Self {
        OasisParams {
            jobs: 100,
            horizon_slots: 200,
            slot_length_s: catalog::oasis::SLOT_LENGTH_S,
            arrivals_per_slot: 1.0,
            diurnal_amplitude: 0.0,
            diurnal_period_slots: 72.0,
            gamma1: catalog::oasis::GAMMA1,
            feasible_only: true,
            max_redraws: 100_000,
        }
    }
}

/// A uniform draw in `[lo, hi]` (inclusive integers).
fn uniform_u32(rng: &mut impl Rng, (lo, hi): (u32, u32)) -> u32 {
    rng.random_range(lo..=hi)
}

/// A uniform draw in `[lo, hi]`.
pub(crate) fn uniform_f64(rng: &mut impl Rng, (lo, hi): (f64, f64)) -> f64 {
    if hi > lo {
        lo + (hi - lo) * rng.random::<f64>()
    } else {
        lo
    }
}

/// The fastest possible duration of an OASiS job in slots: with one worker
/// per data chunk, each worker processes `E·M` mini-batches, each taking
/// `τ + 2e/b` (compute, then push and pull of the gradient).
pub fn oasis_fastest_slots(ps: &PsJob, slot_length_s: f64) -> f64 {
    let per_minibatch_s = ps.minibatch_compute_s + 2.0 * ps.gradient_bytes / ps.worker.nic_bps;
    f64::from(ps.epochs) * f64::from(ps.minibatches_per_chunk) * per_minibatch_s / slot_length_s
}

/// The workload and demands of one OASiS job, drawn uniformly from the
/// [`catalog::oasis`] ranges in this order: worker demand (GPUs, vCPUs,
/// memory, storage, bandwidth `b`), PS demand (vCPUs, memory, storage,
/// bandwidth `B`), chunks `N` from `chunks`, epochs `E`, mini-batches per
/// chunk `M`, compute `τ` (slots, converted with `slot_length_s`) and
/// gradient size `e`. `N` is also the worker and PS cap; asynchronous, no
/// layer profile.
pub(crate) fn oasis_ps_job(rng: &mut impl Rng, slot_length_s: f64, chunks: (u32, u32)) -> PsJob {
    use catalog::oasis as o;
    let worker = Resources::new(
        f64::from(uniform_u32(rng, o::WORKER_GPUS)),
        f64::from(uniform_u32(rng, o::VCPUS)),
        uniform_f64(rng, o::MEMORY_GB) * GB,
        uniform_f64(rng, o::STORAGE_GB) * GB,
        gbps(uniform_f64(rng, o::WORKER_GBPS)),
    );
    let ps = Resources::new(
        0.0,
        f64::from(uniform_u32(rng, o::VCPUS)),
        uniform_f64(rng, o::MEMORY_GB) * GB,
        uniform_f64(rng, o::STORAGE_GB) * GB,
        gbps(uniform_f64(rng, o::PS_GBPS)),
    );
    let chunks = uniform_u32(rng, chunks);
    PsJob {
        epochs: uniform_u32(rng, o::EPOCHS),
        data_chunks: chunks,
        minibatches_per_chunk: uniform_u32(rng, o::MINIBATCHES),
        minibatch_compute_s: uniform_f64(rng, o::TAU_SLOTS) * slot_length_s,
        gradient_bytes: uniform_f64(rng, o::GRADIENT_MB) * MB,
        worker,
        ps,
        max_workers: chunks,
        max_ps: chunks,
        ps_at_most_workers: true,
        sync: SyncMode::Asynchronous,
        layers: None,
    }
}

fn oasis_job(rng: &mut impl Rng, p: &OasisParams) -> (PsJob, Utility) {
    use catalog::oasis as o;
    let job = oasis_ps_job(rng, p.slot_length_s, o::CHUNKS);
    let (insensitive, sensitive, _) = o::CLASS_SHARES;
    let class: f64 = rng.random();
    let g2 = if class < insensitive {
        0.0
    } else if class < insensitive + sensitive {
        uniform_f64(rng, o::GAMMA2_SENSITIVE)
    } else {
        uniform_f64(rng, o::GAMMA2_CRITICAL)
    };
    let utility = Utility::Sigmoid {
        g1: uniform_f64(rng, p.gamma1),
        g2,
        g3: uniform_f64(rng, o::GAMMA3),
    };
    (job, utility)
}

/// OASiS-style parameter-server jobs (`workloads.md` §4, §7.4).
///
/// Arrivals: Poisson with `arrivals_per_slot` (optionally diurnal), the
/// first at 0; generation stops early at the first arrival at or after the
/// horizon, so fewer than `jobs` jobs may come back. Each job then draws,
/// uniformly (integers for counts), from the §4 ranges: worker demand
/// (0–4 GPUs, 1–10 vCPUs, 2–32 GB memory, 5–10 GB storage, bandwidth
/// 0.1–5 Gbit/s), PS demand (no GPU, 1–10 vCPUs, 2–32 GB, 5–10 GB, 5–20
/// Gbit/s), epochs `E` 50–200, chunks `N` 5–100 (also the worker and PS
/// cap), mini-batches per chunk `M` 10–100, compute `τ` 0.001–0.1 slots and
/// gradient `e` 30–575 MB; and a sigmoid utility `γ1 / (1 + exp(γ2(δ −
/// γ3)))` with `γ1` from [`OasisParams::gamma1`], `γ3 ∈ [1, 15]` slots and
/// `γ2` by class: 0 (10%), `[0.01, 1]` (55%), `[4, 6]` (35%). Jobs are
/// asynchronous, elastic and preemptible, ids `0..`.
///
/// With `feasible_only`, a job is redrawn (everything but its arrival)
/// until `⌈E·M·(τ + 2e/b)⌉ ≤ T − a` slots ([`oasis_fastest_slots`] with one
/// worker per chunk).
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] for invalid parameters, or when
/// `max_redraws` draws in a row are infeasible.
pub fn oasis_like_ps_jobs(rng: &mut impl Rng, p: &OasisParams) -> Result<Vec<Job>, TraceError> {
    if p.horizon_slots == 0 {
        return Err(TraceError::invalid("horizon_slots", "must be ≥ 1"));
    }
    check_rate("slot_length_s", p.slot_length_s)?;
    let (g_lo, g_hi) = p.gamma1;
    if !(g_lo.is_finite() && g_hi.is_finite() && 0.0 <= g_lo && g_lo <= g_hi) {
        return Err(TraceError::invalid(
            "gamma1",
            format!("need 0 ≤ low ≤ high, got [{}, {}]", Num(g_lo), Num(g_hi)),
        ));
    }
    let rate = p.arrivals_per_slot / p.slot_length_s;
    let arrivals = if p.diurnal_amplitude == 0.0 {
        poisson_arrivals(rng, p.jobs, rate)?
    } else {
        diurnal_arrivals(
            rng,
            p.jobs,
            rate,
            p.diurnal_amplitude,
            p.diurnal_period_slots * p.slot_length_s,
        )?
    };
    let horizon_s = f64::from(p.horizon_slots) * p.slot_length_s;
    let mut jobs = Vec::new();
    for (i, arrival_s) in arrivals.into_iter().enumerate() {
        if arrival_s >= horizon_s {
            break;
        }
        let arrival_slot = (arrival_s / p.slot_length_s).floor();
        let left = f64::from(p.horizon_slots) - arrival_slot;
        let mut draws = 0u32;
        let (ps, utility) = loop {
            let (ps, utility) = oasis_job(rng, p);
            draws += 1;
            if !p.feasible_only || ceil_tol(oasis_fastest_slots(&ps, p.slot_length_s)) <= left {
                break (ps, utility);
            }
            if draws >= p.max_redraws {
                return Err(TraceError::invalid(
                    "OASiS parameters",
                    format!(
                        "no feasible job for arrival slot {arrival_slot} after {draws} draws (horizon {} slots)",
                        p.horizon_slots
                    ),
                ));
            }
        };
        let id = u32::try_from(i).map_err(|_| TraceError::invalid("jobs", "too many jobs"))?;
        jobs.push(
            Job::new(JobId(id), arrival_s, Architecture::ParameterServer(ps)).with_utility(utility),
        );
    }
    Ok(jobs)
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

    #[test]
    fn oasis_jobs_are_feasible_and_valid() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let p = OasisParams {
            jobs: 60,
            horizon_slots: 150,
            ..OasisParams::default()
        };
        let jobs = oasis_like_ps_jobs(&mut rng, &p).unwrap();
        assert!(!jobs.is_empty());
        for j in &jobs {
            let Architecture::ParameterServer(ps) = &j.architecture else {
                panic!("not a PS job")
            };
            let a = (j.arrival_s / p.slot_length_s).floor();
            assert!(ceil_tol(oasis_fastest_slots(ps, p.slot_length_s)) <= 150.0 - a);
            assert!((50..=200).contains(&ps.epochs));
            assert!(ps.worker.gpus <= 4.0 && ps.ps.gpus == 0.0);
            assert!(matches!(j.utility, Utility::Sigmoid { .. }));
            assert!(j.utility.check().is_ok());
        }
    }
}
