//! The layered parameter-server workload of the SMD-style scheduler's
//! evaluation (its own design after the abstract of Yu, Wu, Ji, Liu, IEEE
//! INFOCOM 2021), also the command line's `layered` trace recipe: jobs of
//! four model types on a cluster of 8-GPU machines, with Poisson arrivals at
//! a given offered GPU load ([`generate`]), or the arrivals and GPU counts
//! of trace rows ([`generate_from_trace`], [`replay_workload`]).
//!
//! **Job types.** Synthetic layer profiles whose per-model totals (forward
//! and backward time of one mini-batch on one worker, model size) are the
//! public aggregate numbers of the 160-job workload of Wang et al. (arXiv
//! 2002.10105), split over layers by fixed rules:
//!
//! | type | batch | forward / backward (ms) | size (MB) | layers | split |
//! |---|---|---|---|---|---|
//! | [`ModelType::CnnFc`] (AlexNet-like) | 256 | 45 / 85 | 235 | 8 | layers 1–5 take 85 % of the compute and 5 % of the parameters, layers 6–8 the rest, uniformly within each part |
//! | [`ModelType::ResNetLike`] | 16 | 38 / 67 | 97.7 | 50 | uniform compute; parameters weighted `2^⌊4(l−1)/L⌋` (doubling at each of four stages) |
//! | [`ModelType::InceptionLike`] | 64 | 60 / 92 | 26.7 | 22 | uniform |
//! | [`ModelType::TransformerLike`] (synthetic) | 32 | 240 / 480 | 600 | 24 | identical layers of 10 / 20 ms and 25 MB |
//!
//! **Demands.** A worker takes 1 GPU, 4 cores, 16 GB and reserves
//! 1.25·10⁹ B/s of NIC; a PS takes 4 cores, 8 GB and 1.25·10⁹ B/s. A
//! machine has 8 GPUs, 64 cores, 512 GB and 2.5·10⁹ B/s of NIC.
//!
//! **Jobs.** `W_max` is drawn from {4, 8, 16} and `P_max = W_max/2`. The
//! remaining work is drawn so that the best standalone time (the fastest
//! configuration on the empty cluster) is log-uniform between 10 minutes and
//! 10 hours. Each job also gets a requested configuration, for fixed-size
//! baselines, uniformly among (1, 1), (2, 1), (4, 2), (8, 4), (16, 4) with
//! at most `W_max` workers. Reconfiguration costs 30 s. Arrivals are
//! Poisson, at the rate that makes the offered load (mean of best standalone
//! time × its GPUs, per second of arrivals, over the cluster's GPUs) equal
//! to `load`.
//!
//! **Seeds.** Everything comes from one `u64` seed, through one ChaCha8
//! stream per concern (types, sizes, requests, arrivals), so changing the
//! load does not change the jobs' types or sizes.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::build::candidates;
use super::{SmdError, SmdParams};
use crate::model::{Cluster, Instance, Job, JobId, Layer, PsJob, Resources, SyncMode};

/// A model type of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ModelType {
    /// AlexNet-like: convolutions, then large fully connected layers.
    CnnFc,
    /// ResNet-50-like: 50 layers, parameters doubling per stage.
    ResNetLike,
    /// Inception-like (GoogLeNet numbers): 22 uniform layers.
    InceptionLike,
    /// A synthetic transformer: 24 identical layers.
    TransformerLike,
}

impl ModelType {
    /// All four, in order.
    pub const ALL: [ModelType; 4] = [
        ModelType::CnnFc,
        ModelType::ResNetLike,
        ModelType::InceptionLike,
        ModelType::TransformerLike,
    ];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            ModelType::CnnFc => "cnn-fc",
            ModelType::ResNetLike => "resnet-like",
            ModelType::InceptionLike => "inception-like",
            ModelType::TransformerLike => "transformer-like",
        }
    }

    /// Samples per worker mini-batch.
    pub fn batch(self) -> u32 {
        match self {
            ModelType::CnnFc => 256,
            ModelType::ResNetLike => 16,
            ModelType::InceptionLike => 64,
            ModelType::TransformerLike => 32,
        }
    }

    /// The per-layer profile of one mini-batch on one worker, input side
    /// first (seconds and bytes).
    pub fn layers(self) -> Vec<Layer> {
        let layer = |f: f64, g: f64, mb: f64| Layer {
            forward_s: f * 1e-3,
            backward_s: g * 1e-3,
            bytes: mb * 1e6,
            update_s: 0.0,
        };
        match self {
            ModelType::CnnFc => (0..8)
                .map(|l| {
                    let (compute, params, n) = if l < 5 {
                        (0.85, 0.05, 5.0)
                    } else {
                        (0.15, 0.95, 3.0)
                    };
                    layer(45.0 * compute / n, 85.0 * compute / n, 235.0 * params / n)
                })
                .collect(),
            ModelType::ResNetLike => {
                let weight = |l: u32| f64::from(1u32 << (4 * l / 50));
                let total: f64 = (0..50).map(weight).sum();
                (0..50)
                    .map(|l| layer(38.0 / 50.0, 67.0 / 50.0, 97.7 * weight(l) / total))
                    .collect()
            }
            ModelType::InceptionLike => (0..22)
                .map(|_| layer(60.0 / 22.0, 92.0 / 22.0, 26.7 / 22.0))
                .collect(),
            ModelType::TransformerLike => (0..24).map(|_| layer(10.0, 20.0, 25.0)).collect(),
        }
    }
}

/// Options of [`generate`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SmdWorkloadOptions {
    /// Machines (8 GPUs each; default 16).
    pub machines: u32,
    /// Jobs (default 200).
    pub jobs: usize,
    /// Offered GPU load (default 0.6); finite and positive.
    pub load: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for SmdWorkloadOptions {
    fn default() -> Self {
        SmdWorkloadOptions {
            machines: 16,
            jobs: 200,
            load: 0.6,
            seed: 0,
        }
    }
}

/// One generated job with what the generator drew for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SmdJobDraw {
    /// The job.
    pub job: Job,
    /// Its model type.
    pub(crate) model: ModelType,
    /// The configuration fixed-size baselines request, `(workers, PSs)`.
    pub requested: (u32, u32),
    /// Its best standalone time on the empty cluster, seconds.
    pub best_time_s: f64,
    /// GPUs of that best configuration.
    pub(crate) best_gpus: u32,
}

/// A generated workload.
#[derive(Debug, Clone, PartialEq)]
pub struct SmdWorkload {
    /// The instance (horizon: the last arrival plus ten times the longest
    /// best standalone time, in 60 s slots).
    pub instance: Instance,
    /// Per job, in id order.
    pub draws: Vec<SmdJobDraw>,
    /// The arrival rate used, jobs per hour.
    pub(crate) arrivals_per_hour: f64,
}

/// Machine capacity of the set-up.
pub fn machine_capacity() -> Resources {
    Resources::zero()
        .gpus(8.0)
        .cpu_cores(64.0)
        .memory(512e9)
        .nic(2.5e9)
}

/// The cluster: `machines` machines of [`machine_capacity`].
pub fn cluster(machines: u32) -> Cluster {
    Cluster::homogeneous(machines, machine_capacity(), 1e11)
}

pub(crate) fn stream(seed: u64, s: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(s);
    rng
}

/// The parameter-server job of `model` with at most `w_max` workers and
/// `work` mini-batches.
fn ps_job(model: ModelType, w_max: u32, work: u32) -> PsJob {
    PsJob {
        epochs: 1,
        data_chunks: 1,
        minibatches_per_chunk: work.max(1),
        minibatch_compute_s: 0.0,
        gradient_bytes: 0.0,
        worker: Resources::zero()
            .gpus(1.0)
            .cpu_cores(4.0)
            .memory(16e9)
            .nic(1.25e9),
        ps: Resources::zero().cpu_cores(4.0).memory(8e9).nic(1.25e9),
        max_workers: w_max,
        max_ps: (w_max / 2).max(1),
        ps_at_most_workers: true,
        sync: SyncMode::Synchronous,
        layers: Some(model.layers()),
    }
}

/// A job of the workload: `model`'s layer profile, at most `w_max` workers
/// and `w_max/2` PSs (at least 1), `minibatches` mini-batches of work, the
/// workload's worker and PS demands, 30 s of reconfiguration.
///
/// ```
/// use dmlsched::algorithms::smd::workload::{ModelType, layered_job};
/// use dmlsched::model::JobId;
/// let j = layered_job(JobId(0), 5.0, ModelType::CnnFc, 8, 1000);
/// assert_eq!((j.max_workers(), j.reconfiguration_s), (8, 30.0));
/// ```
pub fn layered_job(
    id: JobId,
    arrival_s: f64,
    model: ModelType,
    w_max: u32,
    minibatches: u32,
) -> Job {
    let mut job = Job::new(id, arrival_s, ps_job(model, w_max, minibatches));
    job.reconfiguration_s = 30.0;
    job
}

/// Seconds per mini-batch of the fastest configuration of `job` on the
/// empty cluster of capacity `total`, and its workers.
fn best_per_minibatch(job: &Job, total: &Resources) -> crate::Result<(f64, u32)> {
    let c = candidates(job, 1.0, total, total, &SmdParams::default())?;
    c.iter()
        .min_by(|a, b| a.remaining_s.total_cmp(&b.remaining_s))
        .map(|k| (k.remaining_s, k.config.0))
        .ok_or_else(|| SmdError::JobNeverFits { job: job.id }.into())
}

/// The requested configurations, among which each job draws one with at
/// most `W_max` workers.
pub const REQUESTS: [(u32, u32); 5] = [(1, 1), (2, 1), (4, 2), (8, 4), (16, 4)];

pub(crate) fn bad_option(name: &'static str, reason: &str) -> crate::Error {
    SmdError::InvalidOption {
        name,
        reason: reason.into(),
    }
    .into()
}

fn check_options(opts: &SmdWorkloadOptions) -> crate::Result<()> {
    if opts.machines == 0 || opts.machines > 4096 {
        return Err(bad_option("machines", "must be in 1..=4096"));
    }
    if opts.jobs == 0 || opts.jobs > 1_000_000 {
        return Err(bad_option("jobs", "must be in 1..=1000000"));
    }
    if !(opts.load.is_finite() && opts.load > 0.0) {
        return Err(bad_option("load", "must be finite and positive"));
    }
    Ok(())
}

/// Draws `n` jobs (types, `W_max`, sizes; requests among those allowed, or
/// fixed per job by `gpus`, a trace's GPU counts), all arriving at 0.
fn draw_jobs(
    opts: &SmdWorkloadOptions,
    n: usize,
    gpus: Option<&[u32]>,
    durations: Option<&[f64]>,
    total: &Resources,
) -> crate::Result<Vec<SmdJobDraw>> {
    let (mut types, mut sizes, mut requests) = (
        stream(opts.seed, 0),
        stream(opts.seed, 1),
        stream(opts.seed, 2),
    );
    let mut draws = Vec::with_capacity(n);
    for i in 0..n {
        let model = ModelType::ALL[types.random_range(0..4)];
        let mut w_max = [4, 8, 16][types.random_range(0..3)];
        let id = JobId(u32::try_from(i).map_err(|_| bad_option("jobs", "too many jobs"))?);
        let drawn = (600f64.ln() + sizes.random::<f64>() * (36_000f64 / 600.0).ln()).exp();
        let target = durations.map_or(drawn, |d| d[i]);
        let requested = match gpus {
            Some(g) => {
                let (req, cap) = trace_request(g[i]);
                w_max = cap;
                req
            }
            None => {
                let allowed: Vec<(u32, u32)> =
                    REQUESTS.iter().copied().filter(|r| r.0 <= w_max).collect();
                allowed[requests.random_range(0..allowed.len())]
            }
        };
        let probe = Job::new(id, 0.0, ps_job(model, w_max, 1));
        let (per_mb, best_gpus) = best_per_minibatch(&probe, total)?;
        let work = (target / per_mb).ceil().clamp(1.0, f64::from(u32::MAX)) as u32;
        draws.push(SmdJobDraw {
            job: layered_job(id, 0.0, model, w_max, work),
            model,
            requested,
            best_time_s: f64::from(work) * per_mb,
            best_gpus,
        });
    }
    Ok(draws)
}

/// The requested configuration and `W_max` of a job that asked for `gpus`
/// GPUs in a trace: the listed request with the most workers `≤ gpus`
/// (at least `(1, 1)`), and the smallest of 4, 8, 16 that holds `gpus`
/// (16 above).
fn trace_request(gpus: u32) -> ((u32, u32), u32) {
    let req = REQUESTS
        .iter()
        .copied()
        .rfind(|r| r.0 <= gpus.max(1))
        .unwrap_or((1, 1));
    let cap = [4, 8, 16].into_iter().find(|&c| c >= gpus).unwrap_or(16);
    (req, cap)
}

/// Mean over the draws of best standalone time × its GPUs.
fn mean_gpu_s(draws: &[SmdJobDraw]) -> f64 {
    draws
        .iter()
        .map(|d| d.best_time_s * f64::from(d.best_gpus))
        .sum::<f64>()
        / draws.len().max(1) as f64
}

/// The instance of `draws` (arrivals set) on `cl`.
fn finish(cl: Cluster, draws: Vec<SmdJobDraw>, rate: f64) -> crate::Result<SmdWorkload> {
    let last = draws.iter().map(|d| d.job.arrival_s).fold(0.0, f64::max);
    let longest = draws.iter().map(|d| d.best_time_s).fold(0.0, f64::max);
    let slots = ((last + 10.0 * longest) / 60.0).ceil() + 1.0;
    let horizon = slots.min(f64::from(u32::MAX)) as u32;
    let jobs = draws.iter().map(|d| d.job.clone()).collect();
    let instance = Instance::new(cl, jobs, 60.0, horizon)?;
    Ok(SmdWorkload {
        instance,
        draws,
        arrivals_per_hour: rate * 3600.0,
    })
}

impl SmdWorkload {
    /// Every job's requested configuration `(workers, PSs)`, for the
    /// fixed-size baselines (the `RequestedSizes` of FIFO's and Tiresias'
    /// `requests`).
    pub fn requests(&self) -> std::collections::BTreeMap<JobId, (u32, u32)> {
        self.draws.iter().map(|d| (d.job.id, d.requested)).collect()
    }
}

/// Generates the workload of `opts`.
///
/// # Errors
///
/// [`SmdError::InvalidOption`] (as a crate error) for no machine, more
/// than 4096 machines, no job, more than 10⁶ jobs, or a load that is not
/// finite and positive; [`crate::Error::Model`] if the instance is refused.
///
/// ```
/// use dmlsched::algorithms::smd::workload::{SmdWorkloadOptions, generate};
/// let mut options = SmdWorkloadOptions::default();
/// options.machines = 2;
/// options.jobs = 5;
/// let w = generate(&options)?;
/// assert_eq!(w.instance.jobs().len(), 5);
/// for d in &w.draws {
///     assert!(d.best_time_s >= 600.0 * (1.0 - 1e-9) && d.best_time_s <= 36_000.0 * 1.01);
/// }
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn generate(opts: &SmdWorkloadOptions) -> crate::Result<SmdWorkload> {
    check_options(opts)?;
    let cl = cluster(opts.machines);
    let total = cl.total_capacity();
    let mut draws = draw_jobs(opts, opts.jobs, None, None, &total)?;
    let rate = opts.load * total.gpus / mean_gpu_s(&draws);
    let mut arrivals = stream(opts.seed, 3);
    let mut t = 0.0;
    for d in &mut draws {
        t += -(1.0 - arrivals.random::<f64>()).ln() / rate;
        d.job.arrival_s = t;
    }
    finish(cl, draws, rate)
}

/// The workload of `opts` with the arrival times and GPU counts of trace
/// rows (for example a window of the Philly trace).
///
/// The first `opts.jobs` rows (all of them if fewer) become jobs, in
/// order. Types and sizes are drawn as in [`generate`] (same seed, same
/// streams). A row's GPU count `g` sets the job's request, the listed
/// configuration with the most workers `≤ g` ((1, 1), (2, 1), (4, 2),
/// (8, 4), (16, 4)), and its `W_max`, the smallest of 4, 8 and 16 that
/// holds `g`. The rows' arrival times, re-based to start at 0, are scaled
/// by one factor so that the mean arrival rate (jobs over the span of the
/// arrivals) gives the offered load `opts.load` as in [`generate`]; so the
/// trace keeps its burstiness and the load is comparable.
///
/// ```
/// use dmlsched::algorithms::smd::workload::{SmdWorkloadOptions, generate_from_trace};
/// use dmlsched::trace::TraceJob;
/// let rows: Vec<TraceJob> = [(0.0, 1), (10.0, 8), (400.0, 2)]
///     .iter()
///     .enumerate()
///     .map(|(i, &(t, g))| TraceJob::new(i.to_string(), t, g))
///     .collect();
/// let mut options = SmdWorkloadOptions::default();
/// options.machines = 2;
/// options.jobs = 3;
/// let w = generate_from_trace(&rows, &options)?;
/// assert_eq!(w.draws[1].requested, (8, 4));
/// assert_eq!(w.draws[1].job.max_workers(), 8);
/// assert_eq!(w.draws[0].job.arrival_s, 0.0);
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// As [`generate`]; [`SmdError::InvalidOption`] for fewer than two rows,
/// a row with no GPU or a non-finite arrival, or arrivals that span no
/// time.
pub fn generate_from_trace(
    rows: &[crate::trace::TraceJob],
    opts: &SmdWorkloadOptions,
) -> crate::Result<SmdWorkload> {
    check_options(opts)?;
    let rows = &rows[..rows.len().min(opts.jobs)];
    if rows.len() < 2 {
        return Err(bad_option("rows", "at least two trace rows are needed"));
    }
    if rows
        .iter()
        .any(|r| r.num_gpus == 0 || !r.arrival_s.is_finite())
    {
        return Err(bad_option(
            "rows",
            "every row needs a GPU and a finite arrival",
        ));
    }
    let first = rows
        .iter()
        .map(|r| r.arrival_s)
        .fold(f64::INFINITY, f64::min);
    let span = rows.iter().map(|r| r.arrival_s).fold(first, f64::max) - first;
    if span.is_nan() || span <= 0.0 {
        return Err(bad_option("rows", "the arrivals span no time"));
    }
    let cl = cluster(opts.machines);
    let total = cl.total_capacity();
    let gpus: Vec<u32> = rows.iter().map(|r| r.num_gpus).collect();
    let mut draws = draw_jobs(opts, rows.len(), Some(&gpus), None, &total)?;
    let rate = opts.load * total.gpus / mean_gpu_s(&draws);
    // `n` arrivals at `rate` span about `n / rate` seconds.
    let factor = rows.len() as f64 / rate / span;
    for (d, r) in draws.iter_mut().zip(rows) {
        d.job.arrival_s = (r.arrival_s - first) * factor;
    }
    finish(cl, draws, rate)
}

/// The layered jobs of trace rows as a replay sees them: each row keeps
/// its arrival (re-based to start at 0) and its duration, on `machines`
/// machines of [`cluster`].
///
/// Types are drawn as in [`generate`] (seed `seed`), and a row's GPU count
/// sets the request and `W_max` as in [`generate_from_trace`]; the work is
/// set so that the job, run alone at its best configuration on the empty
/// cluster, lasts the row's duration (at least one mini-batch). The
/// horizon is [`generate`]'s (60-s slots past the last arrival plus ten
/// times the longest job).
///
/// ```
/// use dmlsched::algorithms::smd::workload::replay_workload;
/// use dmlsched::trace::TraceJob;
/// let rows: Vec<TraceJob> = [(100.0, 1, 3600.0), (160.0, 8, 7200.0)]
///     .iter()
///     .enumerate()
///     .map(|(i, &(t, g, d))| TraceJob { duration_s: Some(d), ..TraceJob::new(i.to_string(), t, g) })
///     .collect();
/// let w = replay_workload(&rows, 2, 0)?;
/// assert_eq!(w.draws[1].job.arrival_s, 60.0);
/// for (d, r) in w.draws.iter().zip(&rows) {
///     let want = r.duration_s.unwrap();
///     assert!((d.best_time_s - want).abs() <= 0.01 * want, "{} vs {want}", d.best_time_s);
/// }
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// [`SmdError::InvalidOption`] for no row, more than 10⁶ rows, a row with
/// no GPU, no positive finite duration or a non-finite arrival, or
/// `machines` outside `1..=4096`.
pub fn replay_workload(
    rows: &[crate::trace::TraceJob],
    machines: u32,
    seed: u64,
) -> crate::Result<SmdWorkload> {
    let opts = SmdWorkloadOptions {
        machines,
        jobs: rows.len(),
        seed,
        ..SmdWorkloadOptions::default()
    };
    check_options(&opts)?;
    let durations: Vec<f64> = rows
        .iter()
        .map(|r| match r.duration_s {
            Some(d) if d.is_finite() && d > 0.0 && r.num_gpus > 0 && r.arrival_s.is_finite() => {
                Ok(d)
            }
            _ => Err(bad_option(
                "rows",
                "every row needs a GPU, a positive duration and a finite arrival",
            )),
        })
        .collect::<crate::Result<_>>()?;
    let cl = cluster(machines);
    let total = cl.total_capacity();
    let gpus: Vec<u32> = rows.iter().map(|r| r.num_gpus).collect();
    let mut draws = draw_jobs(&opts, rows.len(), Some(&gpus), Some(&durations), &total)?;
    let first = rows
        .iter()
        .map(|r| r.arrival_s)
        .fold(f64::INFINITY, f64::min);
    let last = rows.iter().map(|r| r.arrival_s).fold(first, f64::max);
    for (d, r) in draws.iter_mut().zip(rows) {
        d.job.arrival_s = r.arrival_s - first;
    }
    let rate = if last > first {
        rows.len() as f64 / (last - first)
    } else {
        0.0
    };
    finish(cl, draws, rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_profiles_add_up_to_the_model_totals() {
        let totals = [
            (ModelType::CnnFc, 45.0, 85.0, 235.0, 8),
            (ModelType::ResNetLike, 38.0, 67.0, 97.7, 50),
            (ModelType::InceptionLike, 60.0, 92.0, 26.7, 22),
            (ModelType::TransformerLike, 240.0, 480.0, 600.0, 24),
        ];
        for (m, f, g, mb, n) in totals {
            let l = m.layers();
            assert_eq!(l.len(), n, "{}", m.name());
            let sum = |x: fn(&Layer) -> f64| l.iter().map(x).sum::<f64>();
            assert!(
                (sum(|l| l.forward_s) - f * 1e-3).abs() < 1e-12,
                "{}",
                m.name()
            );
            assert!(
                (sum(|l| l.backward_s) - g * 1e-3).abs() < 1e-12,
                "{}",
                m.name()
            );
            assert!((sum(|l| l.bytes) - mb * 1e6).abs() < 1e-3, "{}", m.name());
        }
        // AlexNet-like: the five conv layers hold 5 % of the parameters.
        let conv: f64 = ModelType::CnnFc.layers()[..5].iter().map(|l| l.bytes).sum();
        assert!((conv - 0.05 * 235e6).abs() < 1e-3);
        // ResNet-like: parameters double at each of four stages.
        let r = ModelType::ResNetLike.layers();
        assert!((r[49].bytes / r[0].bytes - 8.0).abs() < 1e-12);
        assert!((r[13].bytes / r[12].bytes - 2.0).abs() < 1e-12);
    }

    #[test]
    fn generation_is_seeded_and_bounded() {
        let o = SmdWorkloadOptions {
            machines: 4,
            jobs: 40,
            ..SmdWorkloadOptions::default()
        };
        let a = generate(&o).unwrap();
        assert_eq!(a, generate(&o).unwrap());
        let b = generate(&SmdWorkloadOptions { load: 1.2, ..o }).unwrap();
        // Same types and sizes at another load; arrivals twice as dense.
        for (x, y) in a.draws.iter().zip(&b.draws) {
            assert_eq!(
                (x.model, x.requested, x.best_time_s),
                (y.model, y.requested, y.best_time_s)
            );
            assert!(
                (y.job.arrival_s - 0.5 * x.job.arrival_s).abs() < 1e-6 * x.job.arrival_s.max(1.0)
            );
        }
        for d in &a.draws {
            assert!(d.best_time_s >= 600.0 * (1.0 - 1e-9) && d.best_time_s < 36_000.0 * 1.01);
            assert!(d.requested.0 <= d.job.max_workers());
            assert_eq!(d.job.reconfiguration_s, 30.0);
        }
        assert_ne!(a, generate(&SmdWorkloadOptions { seed: 1, ..o }).unwrap());
        for bad in [
            SmdWorkloadOptions { machines: 0, ..o },
            SmdWorkloadOptions { jobs: 0, ..o },
            SmdWorkloadOptions {
                load: f64::NAN,
                ..o
            },
            SmdWorkloadOptions { load: 0.0, ..o },
        ] {
            assert!(generate(&bad).is_err());
        }
    }
}
