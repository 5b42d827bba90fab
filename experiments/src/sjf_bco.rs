//! The evaluation set-up of SJF-BCO (Yu, Ji, Rajan, Liu, ACM MobiHoc 2022):
//! the 160-job ring-all-reduce workload on servers of 4, 8, 16 or 32 GPUs,
//! under two calibrations of the timing model.
//!
//! * [`Calibration::PaperSynthetic`] reproduces the paper's figures. The
//!   paper samples per-iteration times directly (`τ⁰ ~ U[0.01, 0.05]` slots)
//!   and gives no physical constants, so the model is rebuilt around them: a
//!   slot is 1 s and a data unit 1 MB; `b_e = 1`, `b_i = 10`, `C = 10` data
//!   units per slot; `m_j = 0.05·τ⁰_j` (one model copy over an idle external
//!   link takes 5% of an iteration); `α = 0.09`, `ξ₁ = 1`, `ξ₂ = 3·10⁻⁴`
//!   slots per server; the compute time is what makes the uncontended
//!   single-server time exactly `τ⁰_j`. `(τ⁰, F)` with `F ~ U{1000..=6000}`
//!   are redrawn together until `τ⁰·F ∈ [50, 300]` (the paper's range of
//!   execution times, which its ranges of `τ` and `F` alone do not give).
//! * [`Calibration::PhysicalMs160`] uses the measured models of the 160-job
//!   workload of Wang, Shi, Wang, Chu (arXiv 2002.10105): resnet50,
//!   googlenet and alexnet with their batch sizes, forward and backward
//!   times and model sizes ([`MS160_MODELS`]), 10 Gbit/s Ethernet
//!   (1,250 MB/s), 10,000 MB/s inside a server, reductions at 100,000 MB/s,
//!   `α = 0.0896` (their simulator's `η/β`), `ξ₂ = 2 ms`, and 10 s slots.
//!   Communication dominates cross-server jobs here.
//!
//! [`paper_instance`] draws, from one ChaCha8 stream seeded with `seed`: the
//! servers first (`O_s` uniform in {4, 8, 16, 32}), then 160 jobs with ids
//! 0..159 in the order 80×1, 14×2, 26×4, 30×8, 8×16, 2×32 GPUs (644 GPUs),
//! each with its `(τ⁰, F)` (or its model, then `F`). All jobs arrive at slot
//! 0. The instance's horizon is 100 000 slots, far beyond the
//! search horizons `T` of the experiments (1200 and 1500 slots), so that
//! schedules ending after `T` can still be written and checked.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use dmlsched::algorithms::sjf_bco::SjfBcoParams;
use dmlsched::model::{
    Cluster, Degradation, Instance, Job, JobId, Machine, MachineId, RarJob, Resources, RingParams,
    WorkerCounts,
};
use dmlsched::trace::catalog::{MS160_GPU_COUNTS, MS160_MODELS};

/// The instance horizon of [`paper_instance`], slots.
pub(crate) const INSTANCE_HORIZON_SLOTS: u32 = 100_000;
/// `T` of the paper's Figures 4, 5 and 7 (20 servers).
pub const HORIZON_20: u64 = 1200;
/// `T` of the paper's Figure 6 (10, 15 and 20 servers).
pub const HORIZON_FIG6: u64 = 1500;
/// XORed into an instance's seed to seed RAND's generator.
pub(crate) const RAND_SEED_XOR: u64 = 0x5241_4E44;

/// Server sizes drawn uniformly.
const SERVER_GPUS: [u32; 4] = [4, 8, 16, 32];

/// The two parameter calibrations of the timing model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Calibration {
    /// The paper's sampled iteration times, in normalised units (default).
    #[default]
    PaperSynthetic,
    /// Measured models of the 160-job workload on 10 Gbit/s Ethernet.
    PhysicalMs160,
}

impl Calibration {
    /// Slot length, seconds.
    pub fn slot_s(self) -> f64 {
        match self {
            Calibration::PaperSynthetic => 1.0,
            Calibration::PhysicalMs160 => 10.0,
        }
    }

    /// `b_i`, bytes per second.
    pub fn intra_bps(self) -> f64 {
        match self {
            Calibration::PaperSynthetic => 10e6,
            Calibration::PhysicalMs160 => 10_000e6,
        }
    }

    /// Ring parameters (`b_e`, `C`, `ξ₂`, `ξ₁`, `f`), SI units.
    pub fn ring(self) -> RingParams {
        match self {
            Calibration::PaperSynthetic => {
                ring_params(1e6, 10e6, 3e-4, 1.0, Degradation::Linear { alpha: 0.09 })
            }
            Calibration::PhysicalMs160 => ring_params(
                1_250e6,
                100_000e6,
                2e-3,
                1.0,
                Degradation::Linear { alpha: 0.0896 },
            ),
        }
    }
}

/// Ring parameters `(b_e, C, ξ₂, f, degradation)`, SI units.
fn ring_params(
    external_bandwidth_bps: f64,
    reduction_speed_bps: f64,
    overhead_per_server_s: f64,
    contender_ratio: f64,
    degradation: Degradation,
) -> RingParams {
    let mut p = RingParams::default();
    p.external_bandwidth_bps = external_bandwidth_bps;
    p.reduction_speed_bps = reduction_speed_bps;
    p.overhead_per_server_s = overhead_per_server_s;
    p.contender_ratio = contender_ratio;
    p.degradation = degradation;
    p
}

/// SJF-BCO's parameters for the paper's experiments: the defaults with
/// horizon `T`.
pub fn paper_params(horizon: u64) -> SjfBcoParams {
    let mut p = SjfBcoParams::default();
    p.horizon = Some(horizon);
    p
}

/// RAND's generator for the instance drawn with `seed`.
pub fn rand_rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ RAND_SEED_XOR)
}

/// The paper's instance on `servers` servers (see the module
/// documentation).
///
/// # Errors
///
/// [`dmlsched::Error::Model`] for `servers = 0` (an empty cluster).
pub fn paper_instance(
    seed: u64,
    servers: u32,
    calibration: Calibration,
) -> dmlsched::Result<Instance> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let machines = (0..servers)
        .map(|i| {
            let gpus = SERVER_GPUS[rng.random_range(0..SERVER_GPUS.len())];
            Machine::new(
                MachineId(i),
                Resources::zero().gpus(f64::from(gpus)),
                calibration.intra_bps(),
            )
        })
        .collect();
    let mut cluster = Cluster::new(machines);
    cluster.ring = calibration.ring();
    let mut jobs = Vec::with_capacity(160);
    for &(gpus, count) in &MS160_GPU_COUNTS {
        for _ in 0..count {
            let ring = match calibration {
                Calibration::PaperSynthetic => synthetic_job(&mut rng, gpus, &cluster.ring),
                Calibration::PhysicalMs160 => physical_job(&mut rng, gpus),
            };
            jobs.push(Job::new(JobId(jobs.len() as u32), 0.0, ring));
        }
    }
    Ok(Instance::new(
        cluster,
        jobs,
        calibration.slot_s(),
        INSTANCE_HORIZON_SLOTS,
    )?)
}

/// A job of the synthetic calibration: `(τ⁰, F)` redrawn until
/// `τ⁰·F ∈ [50, 300]`, `m = 0.05·τ⁰` MB, compute making the uncontended
/// single-server time `τ⁰`.
fn synthetic_job(rng: &mut ChaCha8Rng, gpus: u32, ring: &RingParams) -> RarJob {
    let (tau0, iterations) = loop {
        let tau0: f64 = rng.random_range(0.01..0.05);
        let f: u64 = rng.random_range(1000..=6000);
        let rho = tau0 * f as f64;
        if (50.0..=300.0).contains(&rho) {
            break (tau0, f);
        }
    };
    let w = f64::from(gpus);
    let m_mb = 0.05 * tau0;
    let share = (w - 1.0) / w;
    let b_i = Calibration::PaperSynthetic.intra_bps() / 1e6;
    let c = ring.reduction_speed_bps / 1e6;
    let compute = tau0 - (2.0 * share * m_mb / b_i + share * m_mb / c + ring.overhead_per_server_s);
    RarJob {
        workers: WorkerCounts::Fixed(gpus),
        iterations,
        model_bytes: m_mb * 1e6,
        minibatch_size: 1,
        forward_per_sample_s: 0.0,
        backward_per_iteration_s: compute,
        worker: Resources::zero().gpus(1.0),
        ..RarJob::default()
    }
}

/// A job of the physical calibration: a model drawn uniformly, then `F`.
fn physical_job(rng: &mut ChaCha8Rng, gpus: u32) -> RarJob {
    let model = MS160_MODELS[rng.random_range(0..MS160_MODELS.len())];
    let iterations: u64 = rng.random_range(1000..=6000);
    RarJob {
        workers: WorkerCounts::Fixed(gpus),
        iterations,
        model_bytes: model.size_mb * 1e6,
        minibatch_size: model.batch_size,
        forward_per_sample_s: model.forward_per_sample_s(),
        backward_per_iteration_s: model.backward_per_iteration_s(),
        worker: Resources::zero().gpus(1.0),
        ..RarJob::default()
    }
}
