//! Training jobs: arrival, value, discipline and architecture.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use super::cluster::{MachineId, Resources, TaskKind};
use super::utility::Utility;

/// Identifier of a job. Unique within an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct JobId(pub u32);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job {}", self.0)
    }
}

/// Whether a job's size may change while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Elasticity {
    /// Gang: the job runs with its full requested size (parameter server:
    /// `max_workers` workers and `max_ps` PSs; ring-all-reduce: one allowed
    /// worker count), on the same placement in every slot it runs.
    Rigid,
    /// The worker and PS counts and the placement may change between slots,
    /// within the job's caps.
    Elastic,
}

/// How a job may be scheduled; [`crate::schedule::verify`] enforces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Discipline {
    /// Rigid gang or elastic.
    pub elasticity: Elasticity,
    /// Whether the job may be paused and resumed. A non-preemptible job runs
    /// in one contiguous interval of slots; a non-preemptible rigid job also
    /// never migrates.
    pub preemptible: bool,
}

impl Discipline {
    /// Rigid gang, no preemption (SJF-BCO, GADGET, FIFO baselines).
    pub const RIGID_GANG: Discipline = Discipline {
        elasticity: Elasticity::Rigid,
        preemptible: false,
    };
    /// Elastic and preemptible (OASiS, locality, SMD).
    pub const ELASTIC: Discipline = Discipline {
        elasticity: Elasticity::Elastic,
        preemptible: true,
    };
}

impl Default for Discipline {
    /// [`Discipline::ELASTIC`].
    fn default() -> Self {
        Discipline::ELASTIC
    }
}

/// Synchronous or asynchronous parameter-server training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SyncMode {
    /// Every iteration ends at a barrier across workers.
    Synchronous,
    /// Workers push and pull independently (OASiS).
    #[default]
    Asynchronous,
}

/// Per-layer profile of a model for the layered PS timing model, per worker
/// and per mini-batch.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Layer {
    /// Forward time, seconds.
    pub forward_s: f64,
    /// Backward time, seconds.
    pub backward_s: f64,
    /// Parameter (= gradient) bytes.
    pub bytes: f64,
    /// PS update time of the whole layer on one PS, seconds.
    #[cfg_attr(feature = "serde", serde(default))]
    pub update_s: f64,
}

/// A parameter-server job (OASiS, locality, SMD).
///
/// The workload is `epochs × data_chunks × minibatches_per_chunk`
/// mini-batches; OASiS needs the three factors separately (`data_chunks` is
/// also its cap on concurrent workers).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct PsJob {
    /// Passes over the dataset, `E ≥ 1`.
    pub epochs: u32,
    /// Equal data chunks, `N ≥ 1`.
    pub data_chunks: u32,
    /// Mini-batches per chunk, `M ≥ 1`.
    pub minibatches_per_chunk: u32,
    /// Gradient computation time of one mini-batch on one worker, seconds.
    pub minibatch_compute_s: f64,
    /// Bytes of gradients a worker pushes per mini-batch (= parameters pulled).
    pub gradient_bytes: f64,
    /// Demand of one worker; its NIC entry is the reserved bandwidth per worker.
    pub worker: Resources,
    /// Demand of one PS; its NIC entry is the reserved bandwidth per PS.
    pub ps: Resources,
    /// Most workers the job can use at once (≥ 1).
    pub max_workers: u32,
    /// Most PSs the job can use at once (≥ 1).
    pub max_ps: u32,
    /// Whether the PS count may not exceed the worker count (OASiS's rule).
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub ps_at_most_workers: bool,
    /// Synchronous or asynchronous training.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sync: SyncMode,
    /// Optional per-layer profile (layered timing model).
    #[cfg_attr(feature = "serde", serde(default))]
    pub layers: Option<Vec<Layer>>,
}

#[cfg(feature = "serde")]
fn yes() -> bool {
    true
}

/// `⌈w·b/B⌉` for `w` workers of bandwidth `b` and PSs of bandwidth `B` (any
/// one unit), evaluated as `(w·b)/B` with a ceiling that ignores relative
/// noise below 10⁻⁹; 0 when `B ≤ 0` or the quotient is not positive,
/// saturating at `u32::MAX`. The one implementation of the rule:
/// [`PsJob::ps_needed`] calls it in bytes per second, OASiS in the Gbit/s of
/// its bandwidth rows.
pub(crate) fn ps_for_bandwidth(workers: u32, worker_bw: f64, ps_bw: f64) -> u32 {
    if ps_bw.is_nan() || ps_bw <= 0.0 {
        return 0;
    }
    let v = f64::from(workers) * worker_bw / ps_bw;
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        super::units::ceil_tol(v) as u32
    }
}

/// Most mini-batches `E·N·M` a parameter-server job may have (2⁵³ ≈ 9.0·10¹⁵,
/// so that the count is exact both as a `u64` and as an `f64`);
/// [`Instance::new`](super::Instance::new) refuses larger workloads.
pub const MAX_TOTAL_MINIBATCHES: u64 = 1 << 53;

impl Default for PsJob {
    /// A valid one-mini-batch job to start a struct literal from: one epoch
    /// of one chunk of one mini-batch taking 1 s of compute, no gradient
    /// traffic, at most one worker (1 GPU, 1 CPU core) and one PS (1 CPU
    /// core), PSs at most workers, asynchronous, no layer profile.
    ///
    /// ```
    /// use dmlsched::model::{Job, JobId, PsJob, Resources, units::{gb, gbps, mb}};
    /// let ps = PsJob {
    ///     epochs: 3, data_chunks: 4, minibatches_per_chunk: 100,
    ///     minibatch_compute_s: 0.2, gradient_bytes: mb(40.0),
    ///     worker: Resources::zero().gpus(1.0).cpu_cores(4.0).memory(gb(16.0)).nic(gbps(2.0)),
    ///     ps: Resources::zero().cpu_cores(2.0).memory(gb(8.0)).nic(gbps(4.0)),
    ///     max_workers: 4, max_ps: 2,
    ///     ..PsJob::default()
    /// };
    /// assert_eq!(ps.total_minibatches(), 1200);
    /// let job = Job::new(JobId(0), 0.0, ps);
    /// assert_eq!(job.max_workers(), 4);
    /// ```
    fn default() -> Self {
        PsJob {
            epochs: 1,
            data_chunks: 1,
            minibatches_per_chunk: 1,
            minibatch_compute_s: 1.0,
            gradient_bytes: 0.0,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
            ps: Resources::zero().cpu_cores(1.0),
            max_workers: 1,
            max_ps: 1,
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        }
    }
}

impl PsJob {
    /// PSs whose reserved NIC bandwidth carries the traffic of `workers`
    /// workers: `⌈w·b/B⌉` with `b` the worker's and `B` the PS's NIC demand
    /// (rounded up with a relative tolerance of 10⁻⁹, so `3·(0.1/0.1)` needs 3;
    /// saturating at `u32::MAX`). 0 when the PS reserves no bandwidth (no
    /// ratio to keep) or there are no workers; callers apply their own floor
    /// (at least one PS) and caps (`max_ps`, at most `w` under the
    /// PS ≤ workers rule).
    ///
    /// ```
    /// use dmlsched::model::{PsJob, Resources, units::gbps};
    /// let job = PsJob {
    ///     worker: Resources::zero().gpus(1.0).nic(gbps(1.0)),
    ///     ps: Resources::zero().cpu_cores(1.0).nic(gbps(4.0)),
    ///     ..PsJob::default()
    /// };
    /// assert_eq!(job.ps_needed(4), 1);
    /// assert_eq!(job.ps_needed(5), 2);
    /// assert_eq!(job.ps_needed(0), 0);
    /// ```
    pub fn ps_needed(&self, workers: u32) -> u32 {
        ps_for_bandwidth(workers, self.worker.nic_bps, self.ps.nic_bps)
    }

    /// The same job on GPUs of relative compute speed `speed` (its pace,
    /// [`Job::pace`]): `minibatch_compute_s` and the layers' forward and
    /// backward times divided by `speed`; bytes and the PS's update times
    /// (on CPUs) unchanged. Speed 1 borrows the job as it is.
    ///
    /// ```
    /// use dmlsched::model::PsJob;
    /// let job = PsJob { minibatch_compute_s: 0.3, ..PsJob::default() };
    /// assert_eq!(job.at_speed(0.5).minibatch_compute_s, 0.6);
    /// assert_eq!(job.at_speed(1.0).minibatch_compute_s, 0.3);
    /// ```
    pub fn at_speed(&self, speed: f64) -> Cow<'_, PsJob> {
        if speed == 1.0 {
            return Cow::Borrowed(self);
        }
        let mut job = self.clone();
        job.minibatch_compute_s /= speed;
        for layer in job.layers.iter_mut().flatten() {
            layer.forward_s /= speed;
            layer.backward_s /= speed;
        }
        Cow::Owned(job)
    }

    /// Seconds one worker spends on one mini-batch when it exchanges the
    /// gradient with its PSs over its own NIC reservation: `ω = τ + 2e/b`
    /// (compute `τ`, then push and pull of the `e` gradient bytes at the
    /// worker's NIC demand `b`). Exactly `τ` when there is no gradient
    /// traffic; infinite when there is traffic but no bandwidth.
    ///
    /// ```
    /// use dmlsched::model::{PsJob, Resources, units::{gbps, mb}};
    /// let job = PsJob {
    ///     minibatch_compute_s: 0.2, gradient_bytes: mb(25.0),
    ///     worker: Resources::zero().gpus(1.0).nic(gbps(1.0)),
    ///     ..PsJob::default()
    /// };
    /// assert!((job.minibatch_time_s() - 0.6).abs() < 1e-12);
    /// ```
    pub fn minibatch_time_s(&self) -> f64 {
        if self.gradient_bytes == 0.0 {
            self.minibatch_compute_s
        } else {
            self.minibatch_compute_s + 2.0 * self.gradient_bytes / self.worker.nic_bps
        }
    }

    /// Total mini-batches to process, `E·N·M`, saturating at `u64::MAX`
    /// (never reached in a valid instance: see [`MAX_TOTAL_MINIBATCHES`]).
    pub fn total_minibatches(&self) -> u64 {
        u64::try_from(self.total_minibatches_exact()).unwrap_or(u64::MAX)
    }

    /// `E·N·M` without overflow (each factor is a `u32`, so the product is
    /// below 2⁹⁶).
    pub fn total_minibatches_exact(&self) -> u128 {
        u128::from(self.epochs)
            * u128::from(self.data_chunks)
            * u128::from(self.minibatches_per_chunk)
    }
}

/// Worker counts a ring-all-reduce job accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WorkerCounts {
    /// Exactly this many workers (GPUs).
    Fixed(u32),
    /// Any of these counts (non-empty, each ≥ 1).
    Allowed(Vec<u32>),
}

impl WorkerCounts {
    /// Whether `w` workers are allowed.
    pub fn allows(&self, w: u32) -> bool {
        match self {
            WorkerCounts::Fixed(g) => *g == w,
            WorkerCounts::Allowed(v) => v.contains(&w),
        }
    }

    /// The smallest allowed count (0 only for an invalid, empty list).
    pub fn min(&self) -> u32 {
        match self {
            WorkerCounts::Fixed(g) => *g,
            WorkerCounts::Allowed(v) => v.iter().copied().min().unwrap_or(0),
        }
    }

    /// The largest allowed count.
    pub fn max(&self) -> u32 {
        match self {
            WorkerCounts::Fixed(g) => *g,
            WorkerCounts::Allowed(v) => v.iter().copied().max().unwrap_or(0),
        }
    }
}

/// A ring-all-reduce job (SJF-BCO, GADGET): one worker per GPU.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct RarJob {
    /// Allowed worker (GPU) counts.
    pub workers: WorkerCounts,
    /// Iterations requested (the maximum), ≥ 1.
    pub iterations: u64,
    /// Iterations after which the model has converged, if known (≤ `iterations`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub convergence_iterations: Option<u64>,
    /// Model (= gradient) bytes exchanged per iteration.
    pub model_bytes: f64,
    /// Samples per mini-batch per worker, ≥ 1.
    pub minibatch_size: u32,
    /// Forward-pass time per sample, seconds.
    pub forward_per_sample_s: f64,
    /// Backward-pass time per iteration, seconds.
    pub backward_per_iteration_s: f64,
    /// Bandwidth `b` reserved for each cross-machine edge of the ring, bytes
    /// per second per direction (`None`: no reservation; the ring shares
    /// the network with the other rings and runs at the contention model's
    /// rate). The reservation model of GADGET (Yu, Tian, Ji, Wu, Rajan,
    /// Liu, IEEE INFOCOM 2022), in the crate's own form:
    ///
    /// * **Ring order.** The ring is laid out with each machine's workers
    ///   contiguous, so a ring spanning `n ≥ 2` machines has exactly `n`
    ///   cross-machine edges and each machine it uses is the tail of one
    ///   and the head of one. Each such machine therefore carries `b` of
    ///   egress and `b` of ingress: `b` per direction of its NIC, i.e. `2b`
    ///   of its both-directions pool `2 ×`[`Resources::nic_bps`] (which is
    ///   per direction). A ring on one machine reserves nothing: its edges
    ///   stay inside the machine.
    /// * **Charge.** In every slot such a ring runs, each machine holding
    ///   its workers is charged the workers' own demand (their
    ///   [`RarJob::worker`] NIC entry included) **plus** `b` of NIC
    ///   bandwidth ([`Job::demand_with_reservation`]). The reservation is
    ///   added rather than substituted because the two are different
    ///   traffic: the worker's NIC entry is whatever the user declares per
    ///   task (often 0 for rings), and the reservation is the ring's
    ///   gradient exchange. Adding them can only over-charge, never let a
    ///   NIC be over-committed. [`crate::schedule::verify`] and the
    ///   simulator apply the same charge and refuse a NIC exceeded in
    ///   some slot.
    /// * **Timing.** A reserving ring on `n ≥ 2` machines runs without
    ///   contention at `b`: its iteration time is the ring-all-reduce model
    ///   with the external bandwidth replaced by `b` and one contender
    ///   ([`RarTiming::iteration_time_reserved_s`]), and it is not a
    ///   contender for the other rings. On one machine it runs at the
    ///   machine's internal bandwidth, like any ring.
    ///
    /// Finite and `> 0` when given (checked by
    /// [`Instance::new`](crate::model::Instance::new)).
    ///
    /// [`RarTiming::iteration_time_reserved_s`]: crate::timing::RarTiming::iteration_time_reserved_s
    #[cfg_attr(feature = "serde", serde(default))]
    pub reserved_bandwidth_bps: Option<f64>,
    /// Demand of one worker; `gpus` must be 1.
    pub worker: Resources,
}

impl RarJob {
    /// The same ring on GPUs of relative compute speed `speed` (its pace,
    /// [`Job::pace`]): `forward_per_sample_s` and
    /// `backward_per_iteration_s` divided by `speed`; the model's bytes
    /// unchanged. Speed 1 borrows the ring as it is.
    ///
    /// ```
    /// use dmlsched::model::RarJob;
    /// let ring = RarJob { backward_per_iteration_s: 0.1, ..RarJob::default() };
    /// assert_eq!(ring.at_speed(0.25).backward_per_iteration_s, 0.4);
    /// ```
    pub fn at_speed(&self, speed: f64) -> Cow<'_, RarJob> {
        if speed == 1.0 {
            return Cow::Borrowed(self);
        }
        let mut ring = self.clone();
        ring.forward_per_sample_s /= speed;
        ring.backward_per_iteration_s /= speed;
        Cow::Owned(ring)
    }

    /// NIC bandwidth, bytes per second per direction, the ring reserves on
    /// each machine holding its workers when it spans `machines` machines:
    /// the job's `b` when it reserves one and `machines ≥ 2`, else 0 (see
    /// [`RarJob::reserved_bandwidth_bps`]).
    ///
    /// ```
    /// use dmlsched::model::RarJob;
    /// let ring = RarJob { reserved_bandwidth_bps: Some(2.0), ..RarJob::default() };
    /// assert_eq!(ring.reserved_nic_bps(1), 0.0);
    /// assert_eq!(ring.reserved_nic_bps(2), 2.0);
    /// assert_eq!(RarJob::default().reserved_nic_bps(3), 0.0);
    /// ```
    pub fn reserved_nic_bps(&self, machines: usize) -> f64 {
        match self.reserved_bandwidth_bps {
            Some(b) if machines >= 2 => b,
            _ => 0.0,
        }
    }
}

impl Default for RarJob {
    /// A valid one-iteration job to start a struct literal from: exactly one
    /// worker (1 GPU, 1 CPU core), one iteration of one sample, no forward
    /// time, 1 s of backward pass, no model bytes, no reserved bandwidth.
    ///
    /// ```
    /// use dmlsched::model::{Job, JobId, RarJob, WorkerCounts, units::mb};
    /// let ring = RarJob {
    ///     workers: WorkerCounts::Fixed(8), iterations: 1000, model_bytes: mb(100.0),
    ///     minibatch_size: 32, forward_per_sample_s: 0.001, backward_per_iteration_s: 0.05,
    ///     ..RarJob::default()
    /// };
    /// let job = Job::new(JobId(1), 0.0, ring);
    /// assert_eq!(job.max_workers(), 8);
    /// ```
    fn default() -> Self {
        RarJob {
            workers: WorkerCounts::Fixed(1),
            iterations: 1,
            convergence_iterations: None,
            model_bytes: 0.0,
            minibatch_size: 1,
            forward_per_sample_s: 0.0,
            backward_per_iteration_s: 1.0,
            reserved_bandwidth_bps: None,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
        }
    }
}

/// What a job trains and how its tasks communicate.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Architecture {
    /// Workers and parameter servers.
    ParameterServer(PsJob),
    /// Workers in a ring, no parameter servers.
    RingAllReduce(RarJob),
}

impl From<PsJob> for Architecture {
    fn from(job: PsJob) -> Self {
        Architecture::ParameterServer(job)
    }
}

impl From<RarJob> for Architecture {
    fn from(job: RarJob) -> Self {
        Architecture::RingAllReduce(job)
    }
}

/// One training job.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Job {
    /// Unique id.
    pub id: JobId,
    /// Arrival time, seconds from the instance's origin.
    pub arrival_s: f64,
    /// Utility of the completion delay in slots.
    #[cfg_attr(feature = "serde", serde(default))]
    pub utility: Utility,
    /// Weight in weighted objectives (≥ 0).
    #[cfg_attr(feature = "serde", serde(default = "one"))]
    pub weight: f64,
    /// Tenant (user, virtual cluster), for fairness.
    #[cfg_attr(feature = "serde", serde(default))]
    pub tenant: Option<String>,
    /// Absolute deadline, seconds on the arrival clock, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub deadline_s: Option<f64>,
    /// Time lost per reconfiguration (checkpoint and restart), seconds.
    #[cfg_attr(feature = "serde", serde(default))]
    pub reconfiguration_s: f64,
    /// Rigid or elastic, preemptible or not.
    #[cfg_attr(feature = "serde", serde(default))]
    pub discipline: Discipline,
    /// Machines the job's tasks may use (`None`: any).
    #[cfg_attr(feature = "serde", serde(default))]
    pub allowed_machines: Option<Vec<MachineId>>,
    /// Parameter server or ring-all-reduce, with the workload.
    pub architecture: Architecture,
    /// Compute speed on each GPU type of the cluster, relative to the
    /// workload's stated compute times: on a GPU of type `t` a compute
    /// time takes `stated / gpu_speeds[t]`. A type without an entry runs
    /// at speed 1; in a cluster of several types every type needs one.
    /// A job on GPUs of several types runs at the pace of its slowest
    /// ([`Job::pace`]).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub gpu_speeds: BTreeMap<String, f64>,
}

#[cfg(feature = "serde")]
fn one() -> f64 {
    1.0
}

impl Job {
    /// A job with default value (utility 1, weight 1), no tenant or deadline,
    /// free reconfiguration, the default discipline of its architecture
    /// (parameter server: elastic; ring-all-reduce: rigid gang) and no
    /// placement constraint.
    ///
    /// `architecture` is an [`Architecture`], or a [`PsJob`] or [`RarJob`]
    /// directly.
    pub fn new(id: JobId, arrival_s: f64, architecture: impl Into<Architecture>) -> Self {
        let architecture = architecture.into();
        let discipline = match architecture {
            Architecture::ParameterServer(_) => Discipline::ELASTIC,
            Architecture::RingAllReduce(_) => Discipline::RIGID_GANG,
        };
        Job {
            id,
            arrival_s,
            utility: Utility::default(),
            weight: 1.0,
            tenant: None,
            deadline_s: None,
            reconfiguration_s: 0.0,
            discipline,
            allowed_machines: None,
            architecture,
            gpu_speeds: BTreeMap::new(),
        }
    }

    /// The same job with compute speed `speed` on GPUs of type `gpu_type`
    /// (see [`Job::gpu_speeds`]).
    ///
    /// ```
    /// use dmlsched::model::{Job, JobId, RarJob};
    /// let job = Job::new(JobId(0), 0.0, RarJob::default())
    ///     .with_gpu_speed("v100", 1.0)
    ///     .with_gpu_speed("k80", 0.25);
    /// assert_eq!(job.gpu_speed(Some("k80")), 0.25);
    /// // On a v100 and a k80 together: the k80's pace.
    /// assert_eq!(job.pace([Some("v100"), Some("k80")]), 0.25);
    /// // Untyped GPUs run at speed 1.
    /// assert_eq!(job.gpu_speed(None), 1.0);
    /// ```
    pub fn with_gpu_speed(mut self, gpu_type: impl Into<String>, speed: f64) -> Self {
        self.gpu_speeds.insert(gpu_type.into(), speed);
        self
    }

    /// The job's compute speed on a GPU of `gpu_type` (`None`: the default
    /// type): its [`gpu_speeds`](Job::gpu_speeds) entry, or 1.
    pub fn gpu_speed(&self, gpu_type: Option<&str>) -> f64 {
        gpu_type
            .and_then(|t| self.gpu_speeds.get(t))
            .copied()
            .unwrap_or(1.0)
    }

    /// The job's speed when it is the same on every GPU type of `types`
    /// (the types of the GPUs it may run on); `None` when two differ; 1 for
    /// no type. The one speed of a model without GPU types.
    ///
    /// ```
    /// use dmlsched::model::{Job, JobId, RarJob};
    /// let job = Job::new(JobId(0), 0.0, RarJob::default())
    ///     .with_gpu_speed("v100", 1.0)
    ///     .with_gpu_speed("k80", 0.25);
    /// assert_eq!(job.uniform_speed([Some("k80"), Some("k80")]), Some(0.25));
    /// assert_eq!(job.uniform_speed([Some("v100"), Some("k80")]), None);
    /// ```
    pub fn uniform_speed<'a>(
        &self,
        types: impl IntoIterator<Item = Option<&'a str>>,
    ) -> Option<f64> {
        let mut speeds = types.into_iter().map(|t| self.gpu_speed(t));
        let first = speeds.next().unwrap_or(1.0);
        speeds.all(|s| s == first).then_some(first)
    }

    /// The same job with its compute times at `speed` ([`PsJob::at_speed`],
    /// [`RarJob::at_speed`]); speed 1 borrows it as it is.
    pub fn at_speed(&self, speed: f64) -> Cow<'_, Job> {
        if speed == 1.0 {
            return Cow::Borrowed(self);
        }
        let mut job = self.clone();
        job.architecture = match &self.architecture {
            Architecture::ParameterServer(p) => {
                Architecture::ParameterServer(p.at_speed(speed).into_owned())
            }
            Architecture::RingAllReduce(r) => {
                Architecture::RingAllReduce(r.at_speed(speed).into_owned())
            }
        };
        Cow::Owned(job)
    }

    /// The job's pace on GPUs of the given types: the speed of the slowest
    /// (1 for no GPU).
    pub fn pace<'a>(&self, gpu_types: impl IntoIterator<Item = Option<&'a str>>) -> f64 {
        gpu_types
            .into_iter()
            .map(|t| self.gpu_speed(t))
            .reduce(f64::min)
            .unwrap_or(1.0)
    }

    /// The same job with another utility.
    pub fn with_utility(mut self, utility: Utility) -> Self {
        self.utility = utility;
        self
    }

    /// The same job with another discipline.
    pub fn with_discipline(mut self, discipline: Discipline) -> Self {
        self.discipline = discipline;
        self
    }

    /// The same job with a weight.
    pub fn with_weight(mut self, weight: f64) -> Self {
        self.weight = weight;
        self
    }

    /// Demand of one task of `kind`; `None` for a PS of a ring-all-reduce job.
    pub fn task_demand(&self, kind: TaskKind) -> Option<&Resources> {
        match (&self.architecture, kind) {
            (Architecture::ParameterServer(p), TaskKind::Worker) => Some(&p.worker),
            (Architecture::ParameterServer(p), TaskKind::ParameterServer) => Some(&p.ps),
            (Architecture::RingAllReduce(r), TaskKind::Worker) => Some(&r.worker),
            (Architecture::RingAllReduce(_), TaskKind::ParameterServer) => None,
        }
    }

    /// The task counts `(workers, ps)` of the smallest allocation the job
    /// can run with: elastic PS jobs 1 + 1, rigid PS jobs their full size,
    /// ring-all-reduce jobs their smallest allowed worker count.
    pub fn min_tasks(&self) -> (u32, u32) {
        match (&self.architecture, self.discipline.elasticity) {
            (Architecture::ParameterServer(_), Elasticity::Elastic) => (1, 1),
            (Architecture::ParameterServer(p), Elasticity::Rigid) => (p.max_workers, p.max_ps),
            (Architecture::RingAllReduce(r), _) => (r.workers.min(), 0),
        }
    }

    /// Resources of the smallest allocation ([`Job::min_tasks`]).
    pub fn min_demand(&self) -> Resources {
        let (w, p) = self.min_tasks();
        self.demand_for(w, p)
    }

    /// Resources of `workers` workers and `ps` parameter servers of this job
    /// (PSs count nothing for a ring-all-reduce job).
    pub fn demand_for(&self, workers: u32, ps: u32) -> Resources {
        let mut d = Resources::zero();
        if let Some(wd) = self.task_demand(TaskKind::Worker) {
            d = d.plus(&wd.scaled(f64::from(workers)));
        }
        if let Some(pd) = self.task_demand(TaskKind::ParameterServer) {
            d = d.plus(&pd.scaled(f64::from(ps)));
        }
        d
    }

    /// NIC bandwidth, bytes per second per direction, the job reserves on
    /// each machine holding its workers when its workers span `machines`
    /// machines: [`RarJob::reserved_nic_bps`] for a ring-all-reduce job, 0
    /// for a parameter-server job (whose tasks carry their bandwidth in
    /// their own demands).
    pub fn reserved_nic_bps(&self, machines: usize) -> f64 {
        match &self.architecture {
            Architecture::RingAllReduce(r) => r.reserved_nic_bps(machines),
            Architecture::ParameterServer(_) => 0.0,
        }
    }

    /// What `workers` workers and `ps` PSs of this job are charged on one
    /// machine of an allocation whose workers span `machines` machines:
    /// [`Job::demand_for`] plus, on a machine holding at least one worker,
    /// the ring reservation [`Job::reserved_nic_bps`] in NIC bandwidth. The
    /// one charging rule of [`crate::schedule::verify`] and the simulator
    /// (besides LOCAL configurations, which charge no NIC at all).
    ///
    /// ```
    /// use dmlsched::model::{Job, JobId, RarJob, Resources, WorkerCounts};
    /// let ring = RarJob {
    ///     workers: WorkerCounts::Fixed(4),
    ///     reserved_bandwidth_bps: Some(2.0),
    ///     worker: Resources::zero().gpus(1.0).nic(0.5),
    ///     ..RarJob::default()
    /// };
    /// let job = Job::new(JobId(0), 0.0, ring);
    /// // 2 + 2 on two machines: each is charged 2 × 0.5 + 2 of NIC per direction.
    /// assert_eq!(job.demand_with_reservation(2, 0, 2).nic_bps, 3.0);
    /// // All four on one machine: no reservation.
    /// assert_eq!(job.demand_with_reservation(4, 0, 1).nic_bps, 2.0);
    /// ```
    pub fn demand_with_reservation(&self, workers: u32, ps: u32, machines: usize) -> Resources {
        let d = self.demand_for(workers, ps);
        let b = self.reserved_nic_bps(machines);
        if workers > 0 && b > 0.0 {
            d.nic(d.nic_bps + b)
        } else {
            d
        }
    }

    /// Most workers the job may run at once.
    pub fn max_workers(&self) -> u32 {
        match &self.architecture {
            Architecture::ParameterServer(p) => p.max_workers,
            Architecture::RingAllReduce(r) => r.workers.max(),
        }
    }

    /// Most PSs the job may run at once (0 for ring-all-reduce).
    pub fn max_ps(&self) -> u32 {
        match &self.architecture {
            Architecture::ParameterServer(p) => p.max_ps,
            Architecture::RingAllReduce(_) => 0,
        }
    }

    /// Whether the job may place tasks on `machine` (its placement
    /// constraint only; hosting roles and capacity are separate).
    pub fn may_use(&self, machine: MachineId) -> bool {
        self.allowed_machines
            .as_ref()
            .is_none_or(|v| v.contains(&machine))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::units::{gbps, mb};
    use crate::model::{Cluster, Instance};

    #[test]
    fn default_jobs_are_valid() {
        let cluster = Cluster::homogeneous(1, Resources::zero().gpus(8.0).cpu_cores(8.0), 1e9);
        let jobs = vec![
            Job::new(JobId(0), 0.0, PsJob::default()),
            Job::new(JobId(1), 0.0, RarJob::default()),
        ];
        Instance::new(cluster, jobs, 10.0, 4).unwrap();
    }

    #[test]
    fn ps_needed_and_minibatch_time() {
        let mut p = PsJob {
            minibatch_compute_s: 0.5,
            gradient_bytes: mb(10.0),
            worker: Resources::zero().gpus(1.0).nic(gbps(0.1 * 3.0)),
            ps: Resources::zero().cpu_cores(1.0).nic(gbps(0.1)),
            ..PsJob::default()
        };
        // 10·(0.3/0.1) is 30 despite 0.1·3 ≠ 0.3 in binary.
        assert_eq!(p.ps_needed(10), 30);
        assert_eq!(p.ps_needed(0), 0);
        assert!((p.minibatch_time_s() - (0.5 + 2.0 * 1e7 / (0.3 * 1.25e8))).abs() < 1e-12);
        p.ps.nic_bps = 0.0;
        assert_eq!(p.ps_needed(10), 0);
        p.ps.nic_bps = 1e-300;
        assert_eq!(p.ps_needed(u32::MAX), u32::MAX);
        p.worker.nic_bps = 0.0;
        assert_eq!(p.minibatch_time_s(), f64::INFINITY);
        p.gradient_bytes = 0.0;
        assert_eq!(p.minibatch_time_s(), 0.5);
    }
}
