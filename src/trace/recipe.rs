//! Recipes: trace rows → [`Job`]s, seeded and
//! documented, plus a matching homogeneous GPU cluster.
//!
//! A trace gives each job an arrival, a GPU count and a run time, but no
//! model, no per-iteration time and no communication volume. A recipe fills
//! those in and chooses the amount of work so that the job, run alone at its
//! full (possibly capped) size, takes as long as the trace says (exactly,
//! on the fewest machines for ring-all-reduce jobs, and on the fewest
//! machines with a PS beside every worker for parameter-server jobs).
//!
//! # Ring-all-reduce ([`Arch::RingAllReduce`])
//!
//! - model: uniform from the 160-job catalogue ([`MS160_MODELS`]: resnet50,
//!   googlenet, alexnet), whatever the trace says about models;
//! - workers: exactly `G` (the rigid worker option `{G_j}`, the crate's
//!   default: a ring's work is a number of
//!   iterations, so under weak scaling fewer workers would not slow it and
//!   more would only add communication), with `G = num_gpus` capped at
//!   [`RecipeOptions::max_gpus_per_job`];
//! - worker demand: 1 GPU, 4 cores, 16 GB memory, no storage, no NIC
//!   reservation (ring traffic is modelled by the cluster's
//!   [`RingParams`], not by reservations);
//! - **a job placed as it ran runs its trace duration.** The trace ran the
//!   job on its `G` GPUs; the recipe assumes they sat on the fewest
//!   machines that hold them, `n = ⌈G / gpus_per_machine⌉`
//!   ([`RecipeOptions::gpus_per_machine`]), with no other ring competing.
//!   `τ_c` is the iteration time RAR-C gives that placement on a
//!   [`gpu_cluster`] (physical ring calibration, [`physical_ring_params`]:
//!   exchange inside or across machines, per-machine overhead `ξ2`, and the
//!   model's compute `τ⁰ = (forward + backward) ms per mini-batch / 1000`
//!   s), and `F = max(1, round(duration_s / τ_c))` iterations (fewer if
//!   their communication alone would outlast the duration). The compute is
//!   then scaled so that `F` iterations take `duration_s` exactly (the
//!   iteration time moves by a factor within `1 ± 1/(2F − 1)` in the first
//!   case): run alone on `n` machines,
//!   the job lasts its trace duration (to floating-point rounding). On one
//!   machine more than needed, or beside other cross-machine rings
//!   (contention), it runs longer, by the timing model; when it fits fewer
//!   machines than the trace's GPU count needs (a cluster with larger
//!   machines than the recipe assumed), faster. A row shorter than one
//!   iteration's communication (a few milliseconds) keeps no compute, runs
//!   longer than the trace, and is listed in [`RecipeOutput::too_short`].
//!
//! # Parameter server ([`Arch::ParameterServer`])
//!
//! **The reference placement.** The trace ran a job of `G` GPUs as `G`
//! workers; the recipe assumes they sat on the fewest machines that hold
//! them, `n = ⌈G / gpus_per_machine⌉`, filled in order, each machine with as
//! many PSs as workers (`P = G`, [`ps_reference_placement`]): parameter
//! servers are sharded over the machines the job used, not on machines the
//! trace never had.
//!
//! **Demands: a GPU's share, halved.** A [`gpu_cluster`] machine gives
//! each GPU 8 cores, 64 GB and `1/gpus_per_machine` of its NIC; a worker and
//! its PS split that share, so the reference placement always fits and no
//! machine or link binds that the trace job did not use. Draws, uniformly
//! within the OASiS simulation ranges (Bao, Peng, Wu, Li, IEEE INFOCOM
//! 2018; see [`catalog::oasis`]) capped at the half share:
//!
//! - worker: 1 GPU, 1–10 cores (≤ 4), 2–32 GB memory, 5–10 GB storage, NIC
//!   `b_w` 0.1–5 Gbit/s (≤ the machine NIC / `gpus_per_machine` / 2);
//! - PS: no GPU, 1–10 cores (≤ 4), 2–32 GB, 5–10 GB, and the worker's NIC
//!   `b_w` (so a scheduler that sizes PSs by bandwidth, `⌈w·b_w/B_s⌉`, gives
//!   the job as many PSs as workers);
//! - gradient `S` 30–575 MB, chunks `N` 5–100, mini-batches per chunk `M`
//!   10–100, and a compute `τ` of 0.001–0.1 slots (× `slot_length_s`) that
//!   only sizes the counts, raised to `4S/b_w` where that is longer (see
//!   below).
//!
//! **A job placed as it ran runs its trace duration, exactly.** On the
//! reference placement one mini-batch per worker takes `t_c + c`, where `c`
//! is the communication of the simulator's timing (PS-L's placement-level
//! form on a [`gpu_cluster`], at its intra-machine bandwidth). With `τ_d =
//! τ + c` the duration `d` allows `K = G·d/τ_d` mini-batches. **OASiS's
//! model stays near the trace:** OASiS times a mini-batch as `t_c + 2S/b_w`
//! (its compute, then a push and a pull over the worker's NIC) however the
//! PSs are placed; with `τ ≥ 4S/b_w`, and so `t_c ≥ τ` below, that is at
//! most 1.5 times the simulator's `t_c + c`, so a job's fastest run in
//! OASiS's model stays within a small multiple of its trace duration
//! (without it, a job with a large gradient and a thin NIC lasted 7 times
//! longer in OASiS's model, past the replay's `cover:3` horizon). **The chunk
//! grid fits the slot:** OASiS's model trains whole chunks, and times a
//! mini-batch as `ω = τ + 2S/b_w`; a job whose one worker cannot train a chunk within a slot
//! (`M·ω` longer than the slot `L`) is unschedulable there when `M·ω > G·L`
//! (Bao et al.'s rejection "too slow for the slot"). So `M ←
//! min(M, ⌊L/(2·(τ + c + 2S/b_w))⌋)` (at least 1): even at twice the drawn
//! mini-batch time, one worker trains a chunk per slot. Then `N ← max(N,
//! G)` (each worker needs a chunk: OASiS caps workers at `N`), raised to
//! `⌈K/(200·M)⌉` if more than 200 epochs (the top of OASiS's epoch range)
//! would be needed, `E = clamp(⌊K/(N·M)⌋, 1, 200)` and `M ← max(1,
//! ⌊K/(E·N)⌋)`, so `K/2 < E·N·M ≤ K` (for `K < max(N, G)`: `E = M = 1` and
//! `N = max(G, ⌊K⌋)`): a mini-batch takes between `τ_d` and `2·τ_d`. The
//! compute is then set so that the `E·N·M`
//! mini-batches take `d` exactly: `t_c = d·G/(E·N·M) − c`. A duration too
//! short for that (`t_c < 0`) gets one mini-batch per worker, `t_c = d − c`;
//! a row shorter than one mini-batch's communication (a few seconds at
//! most) keeps no compute, runs longer than the trace, and is listed in
//! [`RecipeOutput::too_short`]. Run alone on its reference placement, the
//! job lasts its trace duration (to floating-point rounding; a test checks
//! every row of every trace within `10⁻⁹`). Placed otherwise (PSs on other
//! machines, workers spread wider), the timing model makes it slower.
//! `max_workers = G`, `max_ps = G` (PS ≤ workers), asynchronous.
//!
//! # Both architectures
//!
//! Ids are `0..` in output order; `arrival_s`, `tenant` and `deadline_s` come
//! from the trace (re-base first, e.g. with [`select`](super::select)); the
//! discipline is [`Discipline::ELASTIC`] so that every scheduler, rigid or
//! elastic, may run the job; the utility is `Constant { value: 1 }`, or, with
//! a deadline, `DeadlineStep { value: 1, deadline_slots: max(1, ⌈(deadline −
//! arrival)/slot⌉) − 1 }` (a deadline of `n` slots counted from 1, read
//! with δ counted from 0).
//! Jobs without a duration (Alibaba Pending) or without a whole GPU are
//! skipped and listed. Each trace row draws from its own ChaCha8 stream
//! (`seed`, stream = row index), so skipping or capping one row never
//! changes another's draws.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::TraceError;
use super::TraceJob;
use super::catalog::{self, MS160_MODELS};
use super::synth::uniform_f64;
use crate::model::units::{GB, MB, Num, ceil_tol, gbps};
use crate::model::{
    Architecture, Cluster, Degradation, Discipline, Job, JobId, PsJob, RarJob, Resources,
    RingParams, SyncMode, Utility, WorkerCounts,
};
use crate::timing::{IterationTime, PsLocality, PsPlacement};

/// CPU cores per GPU of a [`gpu_cluster`] machine.
pub const CPU_PER_GPU: f64 = 8.0;
/// Memory per GPU of a [`gpu_cluster`] machine, bytes (64 GB).
pub const MEMORY_PER_GPU_BYTES: f64 = 64.0 * GB;
/// Storage per GPU of a [`gpu_cluster`] machine, bytes (500 GB).
pub const STORAGE_PER_GPU_BYTES: f64 = 500.0 * GB;
/// NIC bandwidth of a [`gpu_cluster`] machine: 10 Gbit/s = 1.25·10⁹ B/s.
pub const NIC_BPS: f64 = 1.25e9;
/// Intra-machine bandwidth of a [`gpu_cluster`] machine: 10⁴ MB/s.
pub const INTRA_BPS: f64 = 1e10;

/// The physical ring calibration (the crate's): `b^e` = 1,250 MB/s (10 Gbit/s
/// Ethernet), `C` = 100,000 MB/s (the reduction term is negligible), `ξ2` =
/// 2 ms per server, `ξ1` = 1 and linear degradation with `α = 0.0896` (the
/// contention constants of the public simulator of Wang, Shi, Wang, Chu,
/// arXiv 2002.10105: `k·7.8125 + (k−1)·0.7` ms per MB for `k` concurrent
/// transfers, so `α = 0.7/7.8125`).
///
/// ```
/// use dmlsched::model::Degradation;
/// use dmlsched::trace::recipe::physical_ring_params;
///
/// let ring = physical_ring_params();
/// assert_eq!(ring.external_bandwidth_bps, 1.25e9); // 10 Gbit/s
/// assert_eq!((ring.overhead_per_server_s, ring.contender_ratio), (0.002, 1.0));
/// assert_eq!(ring.degradation, Degradation::Linear { alpha: 0.0896 });
/// // The clusters of trace replays use it.
/// assert_eq!(dmlsched::trace::gpu_cluster(16, 8)?.ring, ring);
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn physical_ring_params() -> RingParams {
    RingParams {
        external_bandwidth_bps: NIC_BPS,
        reduction_speed_bps: 1e5 * MB,
        overhead_per_server_s: 0.002,
        contender_ratio: 1.0,
        degradation: Degradation::Linear { alpha: 0.0896 },
    }
}

/// A homogeneous GPU cluster of `total_gpus / gpus_per_machine` machines,
/// each with `gpus_per_machine` GPUs, 8 cores, 64 GB memory and 500 GB
/// storage per GPU, a 10 Gbit/s NIC, 10⁴ MB/s inside the machine, hosting
/// workers and parameter servers, and the physical ring calibration
/// ([`physical_ring_params`]).
///
/// ```
/// let c = dmlsched::trace::gpu_cluster(64, 8).unwrap();
/// assert_eq!(c.machines.len(), 8);
/// assert_eq!(c.total_capacity().gpus, 64.0);
/// ```
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless both counts are ≥ 1,
/// `gpus_per_machine` divides `total_gpus`, and the cluster has at most
/// [`MAX_CLUSTER_MACHINES`](super::MAX_CLUSTER_MACHINES) machines.
pub fn gpu_cluster(total_gpus: u32, gpus_per_machine: u32) -> Result<Cluster, TraceError> {
    if gpus_per_machine == 0 || total_gpus == 0 {
        return Err(TraceError::invalid(
            "cluster size",
            format!(
                "need ≥ 1 GPU and ≥ 1 GPU per machine, got {total_gpus} and {gpus_per_machine}"
            ),
        ));
    }
    if !total_gpus.is_multiple_of(gpus_per_machine) {
        return Err(TraceError::invalid(
            "cluster size",
            format!("{total_gpus} GPUs is not a whole number of {gpus_per_machine}-GPU machines"),
        ));
    }
    let machines = total_gpus / gpus_per_machine;
    if u64::from(machines) > super::MAX_CLUSTER_MACHINES {
        return Err(TraceError::invalid(
            "cluster size",
            format!(
                "{machines} machines exceeds the limit of {}",
                super::MAX_CLUSTER_MACHINES
            ),
        ));
    }
    let g = f64::from(gpus_per_machine);
    let capacity = Resources::zero()
        .gpus(g)
        .cpu_cores(CPU_PER_GPU * g)
        .memory(MEMORY_PER_GPU_BYTES * g)
        .storage(STORAGE_PER_GPU_BYTES * g)
        .nic(NIC_BPS);
    let mut cluster = Cluster::homogeneous(machines, capacity, INTRA_BPS);
    cluster.ring = physical_ring_params();
    Ok(cluster)
}

/// The job architecture a recipe produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// Ring-all-reduce (SJF-BCO, GADGET).
    RingAllReduce,
    /// Parameter server (OASiS, locality, SMD).
    ParameterServer,
}

/// Options of [`to_jobs`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RecipeOptions {
    /// Ring-all-reduce or parameter server.
    pub arch: Arch,
    /// Slot length, seconds: converts deadlines to slots and (PS) the OASiS
    /// compute range (in slots) to seconds.
    pub slot_length_s: f64,
    /// Seed of the recipe's random draws.
    pub seed: u64,
    /// Cap on GPUs per job; capped rows are listed in
    /// [`RecipeOutput::capped`].
    pub max_gpus_per_job: Option<u32>,
    /// GPUs per machine of the target cluster ([`gpu_cluster`]): a
    /// ring-all-reduce job's work is set by its iteration time on the
    /// fewest such machines, and PS task demands are capped to fit one.
    pub gpus_per_machine: u32,
}

impl RecipeOptions {
    /// Ring-all-reduce with 10 s slots (so that the catalogue models' `τ`
    /// falls in the 0.01–0.05-slot range of Yu, Ji, Rajan, Liu, ACM MobiHoc
    /// 2022), seed 0, no cap, 8 GPUs per machine.
    ///
    /// ```
    /// use dmlsched::trace::{Arch, RecipeOptions};
    ///
    /// let rar = RecipeOptions::rar();
    /// assert_eq!((rar.arch, rar.slot_length_s), (Arch::RingAllReduce, 10.0));
    /// assert_eq!((rar.seed, rar.max_gpus_per_job, rar.gpus_per_machine), (0, None, 8));
    /// ```
    pub fn rar() -> RecipeOptions {
        RecipeOptions {
            arch: Arch::RingAllReduce,
            slot_length_s: 10.0,
            seed: 0,
            max_gpus_per_job: None,
            gpus_per_machine: 8,
        }
    }

    /// Parameter server with 1200 s slots (the OASiS testbed), seed 0, no
    /// cap, 8 GPUs per machine.
    ///
    /// ```
    /// use dmlsched::trace::{Arch, RecipeOptions};
    ///
    /// let ps = RecipeOptions::ps();
    /// assert_eq!((ps.arch, ps.slot_length_s), (Arch::ParameterServer, 1200.0));
    /// assert_eq!((ps.seed, ps.max_gpus_per_job, ps.gpus_per_machine), (0, None, 8));
    /// ```
    pub fn ps() -> RecipeOptions {
        RecipeOptions {
            arch: Arch::ParameterServer,
            slot_length_s: catalog::oasis::SLOT_LENGTH_S,
            ..RecipeOptions::rar()
        }
    }
}

impl Default for RecipeOptions {
    /// [`RecipeOptions::rar`].
    fn default() -> Self {
        RecipeOptions::rar()
    }
}

/// Why a trace row produced no job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// The row has no duration (it never ran).
    NoDuration,
    /// The row asks for no whole GPU (CPU-only or GPU-sharing pod with
    /// `num_gpus = 0`).
    NoGpus,
}

/// Where a produced job came from.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOrigin {
    /// Index of the row in the input trace.
    pub trace_index: usize,
    /// The trace row's id.
    pub trace_id: String,
    /// GPUs the row asked for (before capping).
    pub requested_gpus: u32,
    /// The catalogue model assigned (ring-all-reduce only).
    pub model: Option<&'static str>,
}

/// What [`to_jobs`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeOutput {
    /// The jobs, ids `0..`, in trace order.
    pub jobs: Vec<Job>,
    /// For each job, its source row.
    pub origins: Vec<JobOrigin>,
    /// Trace indices of rows whose GPU count was capped.
    pub capped: Vec<usize>,
    /// Trace indices of rows that produced no job, with the reason.
    pub skipped: Vec<(usize, SkipReason)>,
    /// Trace indices of rows shorter than one iteration's communication on
    /// their reference placement (a few milliseconds for a ring, a few
    /// seconds at most for a parameter-server job): their job has no
    /// compute and runs that one iteration, longer than the trace.
    pub too_short: Vec<usize>,
}

/// Turns trace rows into jobs; see the [module docs](self) for the recipe.
///
/// ```
/// use dmlsched::trace::{to_jobs, RecipeOptions, TraceJob};
/// use dmlsched::model::Architecture;
///
/// let mut row = TraceJob::new("a", 0.0, 4);
/// row.duration_s = Some(1050.0);
/// let mut options = RecipeOptions::rar();
/// options.max_gpus_per_job = Some(2);
/// let out = to_jobs(&[row], &options)?;
/// assert_eq!(out.capped, vec![0]);
/// let Architecture::RingAllReduce(r) = &out.jobs[0].architecture else { unreachable!() };
/// assert_eq!(r.workers.max(), 2);
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] for a slot length that is not positive and
/// finite, `gpus_per_machine` or a cap of 0, a row whose arrival is negative
/// or not finite or whose deadline is not finite, or more than `u32::MAX`
/// jobs.
pub fn to_jobs(trace: &[TraceJob], opts: &RecipeOptions) -> Result<RecipeOutput, TraceError> {
    if !(opts.slot_length_s.is_finite() && opts.slot_length_s > 0.0) {
        return Err(TraceError::invalid(
            "slot_length_s",
            format!("must be finite and > 0, got {}", Num(opts.slot_length_s)),
        ));
    }
    if opts.gpus_per_machine == 0 || opts.max_gpus_per_job == Some(0) {
        return Err(TraceError::invalid(
            "recipe options",
            "gpus_per_machine and max_gpus_per_job must be ≥ 1",
        ));
    }
    let mut out = RecipeOutput {
        jobs: Vec::new(),
        origins: Vec::new(),
        capped: Vec::new(),
        skipped: Vec::new(),
        too_short: Vec::new(),
    };
    for (index, row) in trace.iter().enumerate() {
        if !(row.arrival_s.is_finite() && row.arrival_s >= 0.0) {
            return Err(TraceError::invalid(
                "trace arrival",
                format!(
                    "job `{}` arrives at {} (re-base the trace first)",
                    super::shown(&row.id),
                    Num(row.arrival_s)
                ),
            ));
        }
        if row.deadline_s.is_some_and(|d| !d.is_finite()) {
            return Err(TraceError::invalid(
                "trace deadline",
                format!("job `{}` has a non-finite deadline", super::shown(&row.id)),
            ));
        }
        let Some(duration) = row.duration_s.filter(|d| d.is_finite()) else {
            out.skipped.push((index, SkipReason::NoDuration));
            continue;
        };
        if row.num_gpus == 0 {
            out.skipped.push((index, SkipReason::NoGpus));
            continue;
        }
        let gpus = match opts.max_gpus_per_job {
            Some(cap) if row.num_gpus > cap => {
                out.capped.push(index);
                cap
            }
            _ => row.num_gpus,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
        rng.set_stream(index as u64);
        let (architecture, model) = match opts.arch {
            Arch::RingAllReduce => rar_job(&mut rng, gpus, duration, opts.gpus_per_machine).map(
                |(job, model, too_short)| {
                    if too_short {
                        out.too_short.push(index);
                    }
                    (Architecture::RingAllReduce(job), Some(model))
                },
            ),
            Arch::ParameterServer => {
                ps_job(&mut rng, gpus, duration, opts).map(|(job, too_short)| {
                    if too_short {
                        out.too_short.push(index);
                    }
                    (Architecture::ParameterServer(job), None)
                })
            }
        }
        .ok_or_else(|| {
            TraceError::invalid(
                "trace duration",
                format!(
                    "job `{}` lasts {} s: more work than the recipe's job can count",
                    super::shown(&row.id),
                    crate::model::units::Num(duration)
                ),
            )
        })?;
        let id = u32::try_from(out.jobs.len())
            .map_err(|_| TraceError::invalid("trace", "more than u32::MAX jobs"))?;
        let mut job = Job::new(JobId(id), row.arrival_s, architecture)
            .with_discipline(Discipline::ELASTIC)
            .with_utility(utility(row, opts.slot_length_s));
        job.tenant = row.tenant.clone();
        job.deadline_s = row.deadline_s;
        job.gpu_speeds = row.gpu_speeds.clone();
        out.jobs.push(job);
        out.origins.push(JobOrigin {
            trace_index: index,
            trace_id: row.id.clone(),
            requested_gpus: row.num_gpus,
            model,
        });
    }
    Ok(out)
}

fn utility(row: &TraceJob, slot_length_s: f64) -> Utility {
    match row.deadline_s {
        None => Utility::Constant { value: 1.0 },
        Some(d) => {
            let slots = ceil_tol((d - row.arrival_s) / slot_length_s).max(1.0);
            Utility::DeadlineStep {
                value: 1.0,
                deadline_slots: (slots - 1.0).min(f64::from(u32::MAX)) as u32,
            }
        }
    }
}

/// A ring-all-reduce job of `gpus` workers whose iterations take exactly
/// `duration_s` on the fewest machines of `gpus_per_machine` GPUs, alone
/// ([module docs](self)), with the model it was drawn with and whether the
/// duration is shorter than one iteration's communication (then it runs
/// one iteration of communication alone, longer than the trace). `None`
/// when the duration needs more iterations than a `u64` counts.
fn rar_job(
    rng: &mut ChaCha8Rng,
    gpus: u32,
    duration_s: f64,
    gpus_per_machine: u32,
) -> Option<(RarJob, &'static str, bool)> {
    let model = MS160_MODELS[rng.random_range(0..MS160_MODELS.len())];
    let mut job = RarJob {
        workers: WorkerCounts::Fixed(gpus),
        iterations: 1,
        convergence_iterations: None,
        model_bytes: model.model_bytes(),
        minibatch_size: model.batch_size,
        forward_per_sample_s: model.forward_per_sample_s(),
        backward_per_iteration_s: model.backward_per_iteration_s(),
        reserved_bandwidth_bps: None,
        worker: Resources::zero().gpus(1.0).cpu_cores(4.0).memory(16.0 * GB),
    };
    let (tau, compute) = consolidated_tau(&job, gpus, gpus_per_machine)?;
    let communication = tau - compute;
    let mut n = (duration_s / tau).round().max(1.0);
    if communication > 0.0 {
        // Never more iterations than their communication alone fits.
        n = n.min((duration_s / communication).floor().max(1.0));
    }
    if n >= u64::MAX as f64 {
        return None;
    }
    job.iterations = n as u64;
    // Scale the compute so that the iterations take `duration_s` exactly
    // (τ moves by a factor within 1 ± 1/(2n − 1) when n = round(duration / τ)).
    let wanted = duration_s / job.iterations as f64 - communication;
    let too_short = wanted < 0.0;
    let scale = if compute > 0.0 {
        wanted.max(0.0) / compute
    } else {
        1.0
    };
    job.forward_per_sample_s *= scale;
    job.backward_per_iteration_s *= scale;
    Some((job, model.name, too_short))
}

/// `(τ, t_c)` of `job` with `gpus` workers on the fewest machines of
/// `gpus_per_machine` GPUs of a [`gpu_cluster`], without contention: the
/// iteration time RAR-C gives a ring that runs alone on
/// `⌈gpus / gpus_per_machine⌉` machines, and its compute part. `None` only
/// if the catalogue model were invalid.
fn consolidated_tau(job: &RarJob, gpus: u32, gpus_per_machine: u32) -> Option<(f64, f64)> {
    let timing =
        crate::timing::RarTiming::from_job(job, gpus, INTRA_BPS, &physical_ring_params()).ok()?;
    let servers = gpus.div_ceil(gpus_per_machine.max(1)).max(1);
    Some((timing.iteration_time_s(servers, 1.0), timing.compute_s))
}

/// A uniform draw in `[lo, min(hi, cap)]` (just `cap` when `cap < lo`).
fn capped(rng: &mut ChaCha8Rng, (lo, hi): (f64, f64), cap: f64) -> f64 {
    if cap < lo {
        cap
    } else {
        uniform_f64(rng, (lo, hi.min(cap)))
    }
}

/// Whole cores: uniform integer in `[lo, min(hi, cap)]`.
fn capped_cores(rng: &mut ChaCha8Rng, (lo, hi): (u32, u32), cap: f64) -> f64 {
    let hi = f64::from(hi).min(cap.floor()).max(f64::from(lo)) as u32;
    f64::from(rng.random_range(lo..=hi))
}

/// The reference placement of a parameter-server job of `gpus` workers on
/// machines of `gpus_per_machine` GPUs: the fewest machines, filled in
/// order, each with as many PSs as workers.
///
/// ```
/// use dmlsched::trace::ps_reference_placement;
///
/// // 10 workers on 8-GPU machines: one full machine and 2 workers on a second,
/// // a PS beside every worker.
/// let p = ps_reference_placement(10, 8);
/// assert_eq!(p.machines, [(8, 8), (2, 2)]);
/// assert_eq!((p.workers(), p.ps(), p.machines_used()), (10, 10, 2));
/// assert_eq!(ps_reference_placement(16, 8).machines, [(8, 8), (8, 8)]);
/// ```
pub fn ps_reference_placement(gpus: u32, gpus_per_machine: u32) -> PsPlacement {
    let per = gpus_per_machine.max(1);
    let full = gpus / per;
    let mut machines = vec![(per, per); full as usize];
    if !gpus.is_multiple_of(per) {
        machines.push((gpus % per, gpus % per));
    }
    PsPlacement { machines }
}

/// A parameter-server job of `gpus` workers whose mini-batches take exactly
/// `duration_s` alone on its [reference placement](ps_reference_placement)
/// under the simulator's timing ([module docs](self)), and whether the
/// duration is shorter than one mini-batch's communication there (the job
/// then has no compute and runs longer than the trace). `None` when the
/// duration needs more mini-batches per chunk than a `u32` counts.
fn ps_job(
    rng: &mut ChaCha8Rng,
    gpus: u32,
    duration_s: f64,
    opts: &RecipeOptions,
) -> Option<(PsJob, bool)> {
    use catalog::oasis as o;
    let per_machine = f64::from(opts.gpus_per_machine);
    // A GPU's share of the machine, halved between its worker and its PS.
    let cores = CPU_PER_GPU / 2.0;
    let memory_gb = MEMORY_PER_GPU_BYTES / 2.0 / GB;
    let nic_gbps = NIC_BPS / per_machine / 2.0 / gbps(1.0);
    let worker = Resources::zero()
        .gpus(1.0)
        .cpu_cores(capped_cores(rng, o::VCPUS, cores))
        .memory(capped(rng, o::MEMORY_GB, memory_gb) * GB)
        .storage(uniform_f64(rng, o::STORAGE_GB) * GB)
        .nic(gbps(capped(rng, o::WORKER_GBPS, nic_gbps)));
    // The PS reserves what its worker does on the NIC, so that a scheduler
    // sizing PSs by bandwidth gives the job as many PSs as workers.
    let ps = Resources::zero()
        .cpu_cores(capped_cores(rng, o::VCPUS, cores))
        .memory(capped(rng, o::MEMORY_GB, memory_gb) * GB)
        .storage(uniform_f64(rng, o::STORAGE_GB) * GB)
        .nic(worker.nic_bps);
    let drawn_tau_s = uniform_f64(rng, o::TAU_SLOTS) * opts.slot_length_s;
    let gradient_bytes = uniform_f64(rng, o::GRADIENT_MB) * MB;
    let drawn_chunks = rng.random_range(o::CHUNKS.0..=o::CHUNKS.1);
    let drawn_minibatches = rng.random_range(o::MINIBATCHES.0..=o::MINIBATCHES.1);
    let mut job = PsJob {
        epochs: 1,
        data_chunks: 1,
        minibatches_per_chunk: 1,
        minibatch_compute_s: 0.0,
        gradient_bytes,
        worker,
        ps,
        max_workers: gpus,
        max_ps: gpus,
        ps_at_most_workers: true,
        sync: SyncMode::Asynchronous,
        layers: None,
    };
    // The communication of one mini-batch on the reference placement.
    let cfg = ps_reference_placement(gpus, opts.gpus_per_machine);
    let comm_s = PsLocality::from_job(&job, INTRA_BPS)
        .ok()?
        .placement_level()
        .iteration_time_s(&cfg)
        .ok()?;
    // OASiS's model times a mini-batch as its compute plus a push and a
    // pull over the worker's NIC, `τ + 2S/b_w`, where the simulator charges
    // the placement's communication. A compute of at least `4S/b_w` keeps
    // OASiS's mini-batch within 1.5 times the simulator's, so that OASiS's
    // model of a job is not many times slower than the trace (a job it
    // would plan past the replay's horizon).
    let push_pull_s = 2.0 * gradient_bytes / worker.nic_bps;
    let tau_s = drawn_tau_s.max(2.0 * push_pull_s);
    // At twice OASiS's mini-batch (the counts below make a mini-batch up to
    // twice as long as `τ`) one worker still trains a whole chunk of
    // `M ≤ chunk_cap` mini-batches within a slot.
    let oasis_minibatch_s = tau_s + comm_s + push_pull_s;
    let chunk_cap = floor_count(opts.slot_length_s / (2.0 * oasis_minibatch_s));
    let (epochs, chunks, minibatches) = ps_counts(
        gpus,
        duration_s,
        tau_s + comm_s,
        (drawn_chunks, drawn_minibatches),
        chunk_cap,
    )?;
    let mut total = f64::from(epochs) * f64::from(chunks) * f64::from(minibatches);
    // Every worker runs `total / G` mini-batches one after the other.
    let mut compute_s = duration_s * f64::from(gpus) / total - comm_s;
    let (epochs, chunks, minibatches) = if compute_s < 0.0 {
        // Fewer, longer mini-batches: one per worker.
        total = f64::from(gpus);
        compute_s = duration_s - comm_s;
        (1, gpus, 1)
    } else {
        (epochs, chunks, minibatches)
    };
    let too_short = compute_s < 0.0;
    job.minibatch_compute_s = compute_s.max(0.0);
    job.epochs = epochs;
    job.data_chunks = chunks;
    job.minibatches_per_chunk = minibatches;
    debug_assert!(total >= 1.0);
    Some((job, too_short))
}

/// Epochs, chunks and mini-batches per chunk: at most `K = G·d/τ`
/// mini-batches (so each one takes at least `τ`) and at most `chunk_cap`
/// mini-batches per chunk ([module docs](self)); `None` when the chunks
/// needed outgrow a `u32`.
fn ps_counts(
    gpus: u32,
    duration_s: f64,
    minibatch_s: f64,
    (drawn_chunks, drawn_minibatches): (u32, u32),
    chunk_cap: u32,
) -> Option<(u32, u32, u32)> {
    let k = f64::from(gpus) * duration_s / minibatch_s;
    if k < f64::from(drawn_chunks.max(gpus)) {
        return Some((1, gpus.max(floor_count(k)), 1));
    }
    let per_chunk = f64::from(drawn_minibatches.min(chunk_cap).max(1));
    let mut chunks = f64::from(drawn_chunks.max(gpus));
    if k / (chunks * per_chunk) > MAX_EPOCHS {
        // More chunks rather than more epochs than OASiS's range.
        chunks = (k / (MAX_EPOCHS * per_chunk)).ceil();
        if chunks > f64::from(u32::MAX) {
            return None;
        }
    }
    let epochs = (k / (chunks * per_chunk)).floor().clamp(1.0, MAX_EPOCHS);
    let per_chunk = (k / (epochs * chunks)).floor().max(1.0);
    Some((epochs as u32, chunks as u32, per_chunk as u32))
}

/// The top of OASiS's epoch range: a job needing more passes gets more
/// chunks.
const MAX_EPOCHS: f64 = 200.0;

/// `⌊v⌋` as a count in `1..=u32::MAX`.
fn floor_count(v: f64) -> u32 {
    v.floor().clamp(1.0, f64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Instance;

    fn row(id: &str, arrival: f64, gpus: u32, duration: Option<f64>) -> TraceJob {
        let mut j = TraceJob::new(id, arrival, gpus);
        j.duration_s = duration;
        j
    }

    #[test]
    fn cluster_shape_and_errors() {
        let c = gpu_cluster(32, 4).unwrap();
        assert_eq!(c.machines.len(), 8);
        assert_eq!(c.machines[0].capacity.cpu_cores, 32.0);
        assert_eq!(c.ring.degradation, Degradation::Linear { alpha: 0.0896 });
        assert!(gpu_cluster(30, 4).is_err());
        assert!(gpu_cluster(0, 4).is_err());
        assert!(gpu_cluster(8, 0).is_err());
    }

    #[test]
    fn rar_iterations_take_the_duration_on_the_fewest_machines() {
        let durations = [0.001, 1.0, 61.0, 1144.0, 11_266.0, 4_628_226.0];
        let gpus = [1, 2, 4, 8, 12, 16, 64];
        let mut trace = Vec::new();
        for (i, &d) in durations.iter().enumerate() {
            for &g in &gpus {
                trace.push(row(&format!("{i}-{g}"), 0.0, g, Some(d)));
            }
        }
        for per_machine in [4, 8] {
            let opts = RecipeOptions {
                gpus_per_machine: per_machine,
                ..RecipeOptions::rar()
            };
            let out = to_jobs(&trace, &opts).unwrap();
            let ring = physical_ring_params();
            for (k, (job, origin)) in out.jobs.iter().zip(&out.origins).enumerate() {
                let Architecture::RingAllReduce(r) = &job.architecture else {
                    panic!()
                };
                let g = origin.requested_gpus;
                assert_eq!(r.workers, WorkerCounts::Fixed(g));
                let d = trace[origin.trace_index].duration_s.unwrap();
                let timing = crate::timing::RarTiming::from_job(r, g, INTRA_BPS, &ring).unwrap();
                let servers = g.div_ceil(per_machine);
                let run = r.iterations as f64 * timing.iteration_time_s(servers, 1.0);
                if out.too_short.contains(&k) {
                    // Less than one iteration's communication: no compute.
                    assert_eq!((r.iterations, timing.compute_s), (1, 0.0));
                    assert!(run > d, "{origin:?}");
                    continue;
                }
                assert!((run / d - 1.0).abs() < 1e-9, "{origin:?}: {run} vs {d}");
                // The iteration time moved by at most a factor 1 ± 1/(2F − 1)
                // from the model's.
                let model = MS160_MODELS
                    .iter()
                    .find(|m| Some(m.name) == origin.model)
                    .unwrap();
                let f = r.iterations as f64;
                let tau = timing.iteration_time_s(servers, 1.0);
                let tau0 = tau - timing.compute_s + model.compute_per_iteration_s();
                if f > 1.0 && f == (d / tau0).round() {
                    assert!((tau / tau0 - 1.0).abs() <= 1.0 / (2.0 * f - 1.0) + 1e-12);
                }
                // One more machine than needed is slower (a worse placement):
                // much slower when the ring leaves its one machine, by the
                // per-machine overhead when it already spans several.
                if g > 1 && servers < g {
                    let worse = r.iterations as f64 * timing.iteration_time_s(servers + 1, 1.0);
                    let margin = if servers == 1 { 1.01 } else { 1.0 };
                    assert!(worse > run * margin, "{origin:?}");
                }
            }
            // Only the 1-ms rows are shorter than one exchange.
            assert!(
                out.too_short
                    .iter()
                    .all(|&k| trace[out.origins[k].trace_index].duration_s == Some(0.001))
            );
            assert!(!out.too_short.is_empty());
        }
    }

    #[test]
    fn ps_jobs_take_the_trace_duration_on_their_reference_placement() {
        let durations = [0.01, 30.0, 61.0, 1144.0, 11_266.0, 254_884.0, 4_628_226.0];
        let mut trace = Vec::new();
        for (i, &d) in durations.iter().enumerate() {
            for &g in &[1, 2, 8, 13, 16] {
                trace.push(row(&format!("{i}-{g}"), i as f64 * 100.0, g, Some(d)));
            }
        }
        let opts = RecipeOptions {
            seed: 9,
            ..RecipeOptions::ps()
        };
        let out = to_jobs(&trace, &opts).unwrap();
        assert_eq!(out.jobs.len(), trace.len());
        for (k, (job, origin)) in out.jobs.iter().zip(&out.origins).enumerate() {
            let Architecture::ParameterServer(p) = &job.architecture else {
                panic!()
            };
            let g = origin.requested_gpus;
            let d = trace[origin.trace_index].duration_s.unwrap();
            let cfg = ps_reference_placement(g, 8);
            let tau = PsLocality::from_job(p, INTRA_BPS)
                .unwrap()
                .placement_level()
                .iteration_time_s(&cfg)
                .unwrap();
            let run = p.total_minibatches() as f64 / f64::from(g) * tau;
            assert!(p.data_chunks >= p.max_workers);
            assert!((1..=200).contains(&p.epochs));
            // As many PSs as workers by bandwidth; a worker and its PS fit
            // the GPU's share of a machine.
            assert_eq!(
                crate::model::ps_for_bandwidth(g, p.worker.nic_bps, p.ps.nic_bps),
                g
            );
            let both = p.worker.plus(&p.ps);
            assert!(both.cpu_cores <= CPU_PER_GPU && both.memory_bytes <= MEMORY_PER_GPU_BYTES);
            assert!(both.nic_bps * 8.0 <= NIC_BPS * (1.0 + 1e-12));
            if out.too_short.contains(&k) {
                assert!(run > d && p.minibatch_compute_s == 0.0, "{origin:?}");
            } else {
                assert!(
                    (run / d - 1.0).abs() <= 1e-12,
                    "{origin:?}: run {run} vs {d}"
                );
            }
        }
        assert_eq!(out.too_short.len(), 5, "the 0.01-s rows");
        let cluster = gpu_cluster(64, 8).unwrap();
        Instance::new(cluster, out.jobs, opts.slot_length_s, 10_000).unwrap();
    }

    #[test]
    fn skips_caps_deadlines_and_streams() {
        let mut with_deadline = row("d", 100.0, 2, Some(50.0));
        with_deadline.deadline_s = Some(125.0);
        let trace = vec![
            row("p", 0.0, 1, None),
            row("cpu", 0.0, 0, Some(5.0)),
            row("big", 0.0, 64, Some(500.0)),
            with_deadline,
        ];
        let opts = RecipeOptions {
            max_gpus_per_job: Some(16),
            ..RecipeOptions::rar()
        };
        let out = to_jobs(&trace, &opts).unwrap();
        assert_eq!(
            out.skipped,
            vec![(0, SkipReason::NoDuration), (1, SkipReason::NoGpus)]
        );
        assert_eq!(out.capped, vec![2]);
        assert_eq!(out.jobs.len(), 2);
        assert_eq!(out.jobs[1].id, JobId(1));
        assert_eq!(
            out.jobs[1].utility,
            Utility::DeadlineStep {
                value: 1.0,
                deadline_slots: 2
            }
        );
        assert_eq!(out.jobs[0].utility, Utility::Constant { value: 1.0 });
        // Row 3 draws from its own stream: changing row 0 leaves it alone.
        let mut changed = trace.clone();
        changed[0].duration_s = Some(7.0);
        let again = to_jobs(&changed, &opts).unwrap();
        assert_eq!(again.jobs.len(), 3);
        assert_eq!(again.jobs[2].architecture, out.jobs[1].architecture);
        assert_eq!(to_jobs(&trace, &opts).unwrap(), out);
        let mut bad = trace.clone();
        bad[0].arrival_s = -1.0;
        assert!(to_jobs(&bad, &opts).is_err());
        assert!(
            to_jobs(
                &trace,
                &RecipeOptions {
                    slot_length_s: 0.0,
                    ..opts
                }
            )
            .is_err()
        );
    }
}
