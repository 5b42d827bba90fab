//! The seeded reproduction generator of the OASiS evaluation (the
//! simulations of Bao, Peng, Wu, Li, "Online Job Scheduling in Distributed
//! Machine Learning Clusters", IEEE INFOCOM 2018). Where the paper leaves a
//! choice open, the item's documentation states the crate's reading.
//!
//! [`generate`] draws a whole [`Instance`] — cluster, arrivals and jobs —
//! from one caller-seeded RNG; [`ReproParams`] holds the knobs, with presets
//! for the paper's figures ([`ReproParams::figure3`],
//! [`ReproParams::figure5`], [`ReproParams::figure6`]). [`fixed_sizes`]
//! turns a generated instance into the fixed-size variant the FIFO and RRH
//! baselines run. [`seed_for`] derives the seed of one
//! (experiment, point, repetition).
//!
//! # Units
//!
//! The paper states its ranges in GB, Gbit/s and slots; the instance is SI
//! (`dmlsched::model::units`): memory and storage in bytes (`gb`), bandwidths
//! in bytes per second (`gbps`), the mini-batch compute time `τ` in seconds
//! (`τ[slots] · Δ`), the gradient size `e` in bytes (decimal MB), arrivals in
//! seconds on slot boundaries. The paper's 1-based slot `s` is the model's
//! 0-based slot `s − 1`.
//!
//! # Example
//!
//! ```
//! use dmlsched_experiments::oasis::repro::{ReproParams, generate, seed_for};
//! use rand::SeedableRng;
//! use rand::rngs::ChaCha8Rng;
//!
//! let mut rng = ChaCha8Rng::seed_from_u64(seed_for(5, 6, 0));
//! let g = generate(&mut rng, &ReproParams::figure5(6, (1.0, 100.0)))?;
//! assert_eq!(g.instance.jobs().len(), 10);
//! assert_eq!(g.instance.cluster().machines.len(), 6);
//! assert!((0.0..1.0).contains(&g.redraw_rate()));
//! # Ok::<(), dmlsched::Error>(())
//! ```

use rand::{Rng, RngExt};

use dmlsched::model::units::{Num, ceil_tol, gb, gbps};
use dmlsched::model::{
    Architecture, Cluster, Hosting, Instance, Job, JobId, Machine, MachineId, PsJob, Resources,
    TaskKind, Utility,
};
use dmlsched::trace::TraceError;
use dmlsched::trace::catalog::oasis as ranges;
use dmlsched::trace::synth::uniform_f64;

use super::{oasis_fastest_slots, oasis_ps_job};

/// One server type of the reproduction cluster (an Amazon EC2 instance type,
/// as in the paper's simulations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerType {
    /// EC2 instance type.
    pub(crate) name: &'static str,
    /// GPUs.
    pub(crate) gpus: u32,
    /// vCPUs.
    pub(crate) vcpus: u32,
    /// Memory, GB (decimal).
    pub(crate) memory_gb: f64,
}

/// The GPU instance types worker servers draw from, uniformly. The paper's
/// printed assignment — C4 worker servers without GPUs — cannot host
/// workers that need GPUs, so the crate always gives the worker servers the
/// P2/G3 types.
pub const WORKER_SERVER_TYPES: [ServerType; 6] = [
    ServerType {
        name: "p2.xlarge",
        gpus: 1,
        vcpus: 4,
        memory_gb: 61.0,
    },
    ServerType {
        name: "p2.8xlarge",
        gpus: 8,
        vcpus: 32,
        memory_gb: 488.0,
    },
    ServerType {
        name: "p2.16xlarge",
        gpus: 16,
        vcpus: 64,
        memory_gb: 732.0,
    },
    ServerType {
        name: "g3.4xlarge",
        gpus: 1,
        vcpus: 16,
        memory_gb: 122.0,
    },
    ServerType {
        name: "g3.8xlarge",
        gpus: 2,
        vcpus: 32,
        memory_gb: 244.0,
    },
    ServerType {
        name: "g3.16xlarge",
        gpus: 4,
        vcpus: 64,
        memory_gb: 488.0,
    },
];

/// The type of every PS server: `c4.8xlarge` (smaller C4 types cannot host
/// a PS that needs up to 32 GB).
pub const PS_SERVER_TYPE: ServerType = ServerType {
    name: "c4.8xlarge",
    gpus: 0,
    vcpus: 36,
    memory_gb: 60.0,
};

/// Storage of every server, GB (large enough to be effectively
/// non-binding).
pub const SERVER_STORAGE_GB: f64 = 1000.0;

/// Server NIC bandwidth range, Gbit/s, drawn uniformly (continuous).
pub(crate) const SERVER_NIC_GBPS: (f64, f64) = (20.0, 50.0);

/// Cap on the fixed size of [`fixed_sizes`]: `n_i ~ U{1..min(30, N_i)}`.
pub(crate) const FIXED_SIZE_CAP: u32 = 30;

/// Which sampled jobs [`generate`] keeps. Drawn literally from the paper's
/// ranges, most jobs cannot finish within their target or the horizon, so
/// by default only the jobs that can are kept.
///
/// With `d_min = ⌈E·M·ω⌉` the fewest slots in which the job can finish
/// (`ω = (τ·Δ + 2e/b)/Δ` slots per mini-batch per worker: compute, then
/// push and pull of the gradient; rounded with `ceil_tol`) and `a` the
/// 1-based arrival slot, a sample is kept when:
///
/// | filter | condition |
/// |---|---|
/// | `WithinTarget` | `d_min ≤ γ3` and `d_min ≤ T − a + 1` |
/// | `MaxSlots(k)` | `d_min ≤ k` and `d_min ≤ T − a + 1` |
/// | `None` | always (paper-literal: most jobs then cannot finish) |
///
/// The horizon part (`a + d_min − 1 ≤ T`: the job can finish within the
/// horizon) applies under both filtering modes. Independently of the
/// filter, a sample whose single worker or single PS fits no server of the
/// drawn cluster is always redrawn, because the model rejects such an
/// instance (`ModelError::TaskCannotFit`); with 50 worker servers this
/// practically never happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationFilter {
    /// Keep jobs that can meet their target: `d_min ≤ min(γ3, T − a + 1)`
    /// (the default).
    WithinTarget,
    /// Keep jobs with `d_min ≤ min(k, T − a + 1)` (`k ≥ 1`).
    MaxSlots(u32),
    /// Keep every sample.
    None,
}

/// How [`generate`] draws arrival slots. Slots here are 1-based, as in the
/// paper; 1-based slot `s` becomes the model's 0-based slot `s − 1`, and the
/// job arrives at `(s − 1)·Δ` seconds, exactly on the slot boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// A Poisson process of rate `n/(T − L)` over slots
    /// `1..=T − L` (`L = last_slot_before_end`, 15 in the paper's set-up)
    /// conditioned on its count `n`, i.e. `n` i.i.d. uniform arrival times
    /// over those slots' span, floored to their slot and sorted. Flooring a
    /// uniform time makes every slot of `1..=T − L` equally likely, so the
    /// slots are drawn directly as uniform integers. Needs `T − L ≥ 1`.
    PoissonUntil {
        /// Slots at the end of the horizon without arrivals (`L`).
        last_slot_before_end: u32,
    },
    /// i.i.d. uniform integer slots in `first..=last`, sorted (Fig. 5:
    /// `1..=5`). Needs `1 ≤ first ≤ last ≤ T`.
    UniformSlots {
        /// First possible arrival slot (1-based).
        first: u32,
        /// Last possible arrival slot (1-based).
        last: u32,
    },
}

/// The utility class of a job (the paper's time-insensitive, time-sensitive
/// and time-critical jobs), which sets the sigmoid's decay `γ2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobClass {
    /// `γ2 = 0`: constant utility `γ1/2`.
    TimeInsensitive,
    /// `γ2 ~ U[0.01, 1]`.
    TimeSensitive,
    /// `γ2 ~ U[4, 6]`.
    TimeCritical,
}

impl JobClass {
    /// A class drawn with the shares `(insensitive, sensitive, critical)`
    /// (the last is what the first two leave): one uniform `u ~ U[0, 1)`,
    /// time-insensitive below the first share, time-sensitive below the
    /// sum of the first two, else time-critical.
    pub fn draw(rng: &mut impl Rng, (insensitive, sensitive, _): (f64, f64, f64)) -> JobClass {
        let u: f64 = rng.random();
        if u < insensitive {
            JobClass::TimeInsensitive
        } else if u < insensitive + sensitive {
            JobClass::TimeSensitive
        } else {
            JobClass::TimeCritical
        }
    }
}

/// Parameters of [`generate`]. `Default` is the paper's main simulation
/// (Fig. 3 with 100 jobs).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReproParams {
    /// Horizon `T`, slots (default 300).
    pub horizon_slots: u32,
    /// Number of jobs (default 100).
    pub jobs: usize,
    /// Worker servers `H` (default 50); machine ids `0..H`.
    pub worker_servers: usize,
    /// PS servers `K` (default 50); machine ids `H..H + K`.
    pub ps_servers: usize,
    /// Slot length `Δ`, seconds (default 3600: one-hour slots).
    pub slot_length_s: f64,
    /// Range of the priority `γ1`, drawn uniformly (default `[1, 100]`).
    pub gamma1: (f64, f64),
    /// Shares of the classes (time-insensitive, time-sensitive,
    /// time-critical); non-negative, summing to 1 within 1e-9 (default
    /// `(0.10, 0.55, 0.35)`).
    pub class_shares: (f64, f64, f64),
    /// Which sampled jobs are kept (default [`DurationFilter::WithinTarget`]).
    pub filter: DurationFilter,
    /// Arrival process (default `PoissonUntil { last_slot_before_end: 15 }`).
    pub arrivals: Arrivals,
    /// Range of the chunk count `N` (also the job's worker and PS cap),
    /// drawn uniformly over the integers (default `(5, 100)`).
    pub chunks: (u32, u32),
    /// Most jobs sampled per arrival before [`generate`] gives up (default
    /// 10^6). The first sample counts.
    pub max_redraws: u64,
}

impl Default for ReproParams {
    fn default() -> Self {
        ReproParams {
            horizon_slots: 300,
            jobs: 100,
            worker_servers: 50,
            ps_servers: 50,
            slot_length_s: 3600.0,
            gamma1: ranges::GAMMA1,
            class_shares: ranges::CLASS_SHARES,
            filter: DurationFilter::WithinTarget,
            arrivals: Arrivals::PoissonUntil {
                last_slot_before_end: 15,
            },
            chunks: ranges::CHUNKS,
            max_redraws: 1_000_000,
        }
    }
}

impl ReproParams {
    /// Fig. 3 (total utility against the number of jobs): `T = 300`,
    /// `H = K = 50`, `jobs` jobs, everything else the default.
    pub fn figure3(jobs: usize) -> Self {
        ReproParams {
            jobs,
            ..ReproParams::default()
        }
    }

    /// Fig. 5 (`OPT/ALG` on small instances): 10 jobs, `T = 10`,
    /// arrivals uniform in slots `1..=5`, the `WithinTarget` filter (so
    /// `d_min ≤ min(γ3, T − a + 1)`), `servers` split into `H = ⌈n/2⌉`
    /// worker and `K = ⌊n/2⌋` PS servers, and `γ1` uniform on `gamma1`.
    ///
    /// The worker cap `N ≤ 10` of the small instances is read as the chunk
    /// range: `N`
    /// (which is also the worker and PS cap) is drawn from `U{5..10}`
    /// instead of `U{5..100}`, so the jobs keep `N` chunks = `N` workers as
    /// in the rest of the model.
    pub fn figure5(servers: u32, gamma1: (f64, f64)) -> Self {
        let n = servers as usize;
        ReproParams {
            horizon_slots: 10,
            jobs: 10,
            worker_servers: n.div_ceil(2),
            ps_servers: n / 2,
            gamma1,
            arrivals: Arrivals::UniformSlots { first: 1, last: 5 },
            filter: DurationFilter::WithinTarget,
            chunks: (5, 10),
            ..ReproParams::default()
        }
    }

    /// Fig. 6 (misestimated `U/L`): the Fig. 3 instances.
    pub fn figure6(jobs: usize) -> Self {
        ReproParams::figure3(jobs)
    }
}

/// What [`generate`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The instance: machines `0..H` are worker servers, `H..H + K` PS
    /// servers; jobs `0..n` in arrival order.
    pub instance: Instance,
    /// Jobs sampled in total (kept and discarded).
    pub(crate) drawn: u64,
    /// Jobs sampled but rejected by the filter (or unplaceable).
    pub(crate) discarded: u64,
    /// The class of each job, in the order of [`Instance::jobs`].
    pub(crate) classes: Vec<JobClass>,
}

impl Generated {
    /// The redraw rate `discarded / drawn` (0 when nothing was drawn). It is
    /// not the acceptance rate of a scheduler (admitted / arrived jobs).
    pub fn redraw_rate(&self) -> f64 {
        if self.drawn == 0 {
            0.0
        } else {
            self.discarded as f64 / self.drawn as f64
        }
    }
}

/// The seed of one run: mixes the figure number, the point on its x axis
/// (e.g. the job count or server count) and the repetition with SplitMix64,
/// `s(f, p, r) = m(m(m(f) ⊕ p) ⊕ r)` where `m` is SplitMix64's output
/// function applied to its argument plus the golden-ratio increment
/// `0x9E3779B97F4A7C15`. Callers seed `rand::rngs::ChaCha8Rng::seed_from_u64`
/// with it. The mapping is part of the reproduction record: changing it
/// changes every reproduced number.
pub fn seed_for(figure: u32, point: u64, repetition: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(u64::from(figure)) ^ point) ^ repetition)
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Draws one reproduction instance, as in the paper's simulations.
///
/// Everything comes from `rng`, in this order:
/// 1. **Cluster.** For each of the `H` worker servers: its type, uniform
///    over [`WORKER_SERVER_TYPES`], then its NIC `U[20, 50]` Gbit/s; then
///    for each of the `K` PS servers ([`PS_SERVER_TYPE`]) its NIC. Storage
///    is [`SERVER_STORAGE_GB`]. `intra_bandwidth_bps` is set to the
///    machine's NIC bandwidth (OASiS never uses it; worker and PS servers
///    are disjoint).
/// 2. **Arrivals**, per [`Arrivals`], sorted.
/// 3. **Jobs**, in arrival order (ids `0..n`). Each sample draws the class
///    by [`ReproParams::class_shares`], `γ1 ~ U[gamma1]`, `γ3 ~ U[1, 15]`,
///    `γ2` by class (0, `U[0.01, 1]`, `U[4, 6]`), then the workload and
///    demands (in the order of
///    [`oasis_like_ps_jobs`](super::oasis_like_ps_jobs)): worker demand
///    `[U{0..4} GPUs, U{1..10} vCPUs, U[2, 32] GB, U[5, 10] GB, b ~ U[0.1,
///    5] Gbit/s]`, PS demand `[0, U{1..10}, U[2, 32] GB, U[5, 10] GB, B ~
///    U[5, 20] Gbit/s]`,
///    `N ~ U{chunks}`, `E ~ U{50..200}`, `M ~ U{10..100}`, `τ ~ U[0.001,
///    0.1]` slots, `e ~ U[30, 575]` MB. `B ≥ b` always holds.
///
/// **Redraws.** A sample the [`DurationFilter`] rejects is discarded
/// whole: the next sample redraws everything but the arrival, class and
/// utility included. The filter does not look at the class, `γ1` or `γ2`,
/// so their distributions are exactly as stated; `γ3` and the workload are
/// conditioned on the filter (accepted jobs lean towards larger targets
/// `γ3` and smaller `E·M·τ`, the bias of the filter). Keeping `γ3` fixed
/// while redrawing only the workload would preserve `γ3 ~ U[1, 15]`, but
/// then a job with `γ3 < 2` needs `d_min = 1`, whose acceptance probability
/// is about 8·10⁻⁶ per sample, and the 10⁶ cap would fail on a noticeable
/// fraction of large instances.
///
/// Each job is a [`PsJob`] with `E`, `N`, `M`, `minibatch_compute_s = τ·Δ`,
/// `gradient_bytes = e`, `max_workers = max_ps = N`, PS ≤ workers,
/// asynchronous, no layer profile, a [`Utility::Sigmoid`] `{γ1, γ2, γ3}`
/// and the default discipline of a PS job (elastic, preemptible).
///
/// # Errors
///
/// [`dmlsched::Error::Trace`] with [`TraceError::InvalidArgument`] for invalid
/// parameters — no worker or no PS servers, a non-positive or non-finite
/// slot length, an arrival range outside `1..=T` (including `T ≤ 15` under
/// the default arrivals), a bad `γ1` or chunk range, class shares that are
/// negative or do not sum to 1 within 1e-9, `MaxSlots(0)`, `max_redraws = 0`
/// — and when `max_redraws` samples in a row fail the filter for one job.
/// [`dmlsched::Error::Model`] if the instance fails validation (not expected).
pub fn generate(rng: &mut impl Rng, p: &ReproParams) -> dmlsched::Result<Generated> {
    validate(p)?;
    let cluster = draw_cluster(rng, p)?;
    let arrivals = draw_arrivals(rng, p);
    let mut jobs = Vec::with_capacity(p.jobs);
    let mut classes = Vec::with_capacity(p.jobs);
    let (mut drawn, mut discarded) = (0u64, 0u64);
    for (i, &slot) in arrivals.iter().enumerate() {
        // `slot` is 1-based; the job can use slots `slot..=T`.
        let slots_left = f64::from(p.horizon_slots - slot + 1);
        let mut samples = 0u64;
        let (class, ps, utility) = loop {
            let (class, g3, utility) = draw_utility(rng, p);
            let ps = oasis_ps_job(rng, p.slot_length_s, p.chunks);
            drawn += 1;
            samples += 1;
            if placeable(&cluster, &ps) && accepts(p, &ps, g3, slots_left) {
                break (class, ps, utility);
            }
            discarded += 1;
            if samples >= p.max_redraws {
                return Err(invalid(
                    "max_redraws",
                    format!(
                        "job {i} (arrival slot {slot}): none of {samples} sampled jobs passed \
                         the {:?} filter",
                        p.filter
                    ),
                )
                .into());
            }
        };
        let id = u32::try_from(i).map_err(|_| invalid("jobs", "too many jobs"))?;
        let arrival_s = f64::from(slot - 1) * p.slot_length_s;
        jobs.push(
            Job::new(JobId(id), arrival_s, Architecture::ParameterServer(ps)).with_utility(utility),
        );
        classes.push(class);
    }
    let instance = Instance::new(cluster, jobs, p.slot_length_s, p.horizon_slots)?;
    Ok(Generated {
        instance,
        drawn,
        discarded,
        classes,
    })
}

fn validate(p: &ReproParams) -> Result<(), TraceError> {
    if p.worker_servers == 0 {
        return Err(invalid("worker_servers", "need at least one worker server"));
    }
    if p.ps_servers == 0 {
        return Err(invalid("ps_servers", "need at least one PS server"));
    }
    if u32::try_from(p.worker_servers.saturating_add(p.ps_servers)).is_err() {
        return Err(invalid("servers", "more servers than machine ids"));
    }
    if u32::try_from(p.jobs).is_err() {
        return Err(invalid("jobs", "more jobs than job ids"));
    }
    if !(p.slot_length_s.is_finite() && p.slot_length_s > 0.0) {
        return Err(invalid(
            "slot_length_s",
            format!("must be finite and > 0, got {}", Num(p.slot_length_s)),
        ));
    }
    if p.horizon_slots == 0 {
        return Err(invalid("horizon_slots", "must be ≥ 1"));
    }
    let t = p.horizon_slots;
    match p.arrivals {
        Arrivals::PoissonUntil {
            last_slot_before_end,
        } => {
            if last_slot_before_end >= t {
                return Err(invalid(
                    "arrivals",
                    format!(
                        "Poisson arrivals over slots 1..=T − {last_slot_before_end} need a \
                         horizon T > {last_slot_before_end}, got T = {t}"
                    ),
                ));
            }
        }
        Arrivals::UniformSlots { first, last } => {
            if !(1 <= first && first <= last && last <= t) {
                return Err(invalid(
                    "arrivals",
                    format!("need 1 ≤ first ≤ last ≤ T = {t}, got first {first}, last {last}"),
                ));
            }
        }
    }
    let (g_lo, g_hi) = p.gamma1;
    if !(g_lo.is_finite() && g_hi.is_finite() && 0.0 <= g_lo && g_lo <= g_hi) {
        return Err(invalid(
            "gamma1",
            format!(
                "need finite 0 ≤ low ≤ high, got [{}, {}]",
                Num(g_lo),
                Num(g_hi)
            ),
        ));
    }
    let (s1, s2, s3) = p.class_shares;
    if ![s1, s2, s3].iter().all(|s| s.is_finite() && *s >= 0.0) || (s1 + s2 + s3 - 1.0).abs() > 1e-9
    {
        return Err(invalid(
            "class_shares",
            format!(
                "need non-negative shares summing to 1, got ({}, {}, {})",
                Num(s1),
                Num(s2),
                Num(s3)
            ),
        ));
    }
    let (n_lo, n_hi) = p.chunks;
    if !(1 <= n_lo && n_lo <= n_hi) {
        return Err(invalid(
            "chunks",
            format!("need 1 ≤ low ≤ high, got [{n_lo}, {n_hi}]"),
        ));
    }
    if p.filter == DurationFilter::MaxSlots(0) {
        return Err(invalid(
            "filter",
            "MaxSlots(0) keeps nothing: every job needs at least one slot",
        ));
    }
    if p.max_redraws == 0 {
        return Err(invalid("max_redraws", "must be ≥ 1"));
    }
    Ok(())
}

fn draw_cluster(rng: &mut impl Rng, p: &ReproParams) -> Result<Cluster, TraceError> {
    let machine = |i: usize, ty: &ServerType, nic_gbps: f64, hosts: Hosting| {
        let id = u32::try_from(i).map_err(|_| invalid("servers", "too many"))?;
        let nic = gbps(nic_gbps);
        let capacity = Resources::zero()
            .gpus(f64::from(ty.gpus))
            .cpu_cores(f64::from(ty.vcpus))
            .memory(gb(ty.memory_gb))
            .storage(gb(SERVER_STORAGE_GB))
            .nic(nic);
        Ok(Machine::new(MachineId(id), capacity, nic).hosting(hosts))
    };
    let mut machines = Vec::with_capacity(p.worker_servers + p.ps_servers);
    for i in 0..p.worker_servers {
        let ty = &WORKER_SERVER_TYPES[rng.random_range(0..WORKER_SERVER_TYPES.len())];
        let nic = uniform_f64(rng, SERVER_NIC_GBPS);
        machines.push(machine(i, ty, nic, Hosting::Workers)?);
    }
    for k in 0..p.ps_servers {
        let nic = uniform_f64(rng, SERVER_NIC_GBPS);
        machines.push(machine(
            p.worker_servers + k,
            &PS_SERVER_TYPE,
            nic,
            Hosting::ParameterServers,
        )?);
    }
    Ok(Cluster::new(machines))
}

/// Sorted 1-based arrival slots (parameters already validated).
fn draw_arrivals(rng: &mut impl Rng, p: &ReproParams) -> Vec<u32> {
    let (first, last) = match p.arrivals {
        Arrivals::PoissonUntil {
            last_slot_before_end,
        } => (1, p.horizon_slots - last_slot_before_end),
        Arrivals::UniformSlots { first, last } => (first, last),
    };
    let mut slots: Vec<u32> = (0..p.jobs)
        .map(|_| rng.random_range(first..=last))
        .collect();
    slots.sort_unstable();
    slots
}

/// The class, the target `γ3` and the sigmoid utility of one sample.
fn draw_utility(rng: &mut impl Rng, p: &ReproParams) -> (JobClass, f64, Utility) {
    let class = JobClass::draw(rng, p.class_shares);
    let g1 = uniform_f64(rng, p.gamma1);
    let g3 = uniform_f64(rng, ranges::GAMMA3);
    let g2 = match class {
        JobClass::TimeInsensitive => 0.0,
        JobClass::TimeSensitive => uniform_f64(rng, ranges::GAMMA2_SENSITIVE),
        JobClass::TimeCritical => uniform_f64(rng, ranges::GAMMA2_CRITICAL),
    };
    (class, g3, Utility::Sigmoid { g1, g2, g3 })
}

/// Whether one worker fits a worker server and one PS a PS server (the
/// model's `TaskCannotFit` check).
fn placeable(cluster: &Cluster, ps: &PsJob) -> bool {
    let fits = |kind, demand| cluster.machines.iter().any(|m| m.can_host(kind, demand));
    fits(TaskKind::Worker, &ps.worker) && fits(TaskKind::ParameterServer, &ps.ps)
}

/// The [`DurationFilter`] test; `slots_left = T − a + 1`.
fn accepts(p: &ReproParams, ps: &PsJob, g3: f64, slots_left: f64) -> bool {
    let d_min = ceil_tol(oasis_fastest_slots(ps, p.slot_length_s));
    match p.filter {
        DurationFilter::WithinTarget => d_min <= g3 && d_min <= slots_left,
        DurationFilter::MaxSlots(k) => d_min <= f64::from(k) && d_min <= slots_left,
        DurationFilter::None => true,
    }
}

/// The fixed-size variant of an instance for the FIFO and RRH baselines,
/// which run every job at one size.
///
/// Each parameter-server job, in instance order, draws a fixed worker count
/// `n_i ~ U{1..min(30, N_i)}` (one draw from `rng` per PS job; `N_i` is the
/// job's worker cap `max_workers`, which equals its chunk count `N_i` in
/// generated instances). The job then gets `max_workers = n_i` and
/// `max_ps = z(n_i) = min(n_i, max(1, ⌈n_i·b/B⌉))` (tolerant ceiling; also
/// at most the job's previous `max_ps`, which for generated jobs is
/// `N_i ≥ n_i`), which
/// is exactly [`dmlsched::baselines::ps_for`] at `n_i` workers, so the
/// fixed-size baselines ([`dmlsched::baselines::requested_tasks`]) run the job
/// at `(n_i, z(n_i))`. Work (`E·N·M`: chunk count, epochs and mini-batches
/// are untouched), utility, arrival, discipline and the cluster are
/// unchanged; ring-all-reduce jobs are copied as they are.
///
/// # Errors
///
/// [`dmlsched::Error::Model`] if the rebuilt instance fails validation (not
/// expected for a valid input).
pub fn fixed_sizes(instance: &Instance, rng: &mut impl Rng) -> dmlsched::Result<Instance> {
    let mut jobs = instance.jobs().to_vec();
    for job in &mut jobs {
        let Architecture::ParameterServer(ps) = &mut job.architecture else {
            continue;
        };
        let n = rng.random_range(1..=ps.max_workers.clamp(1, FIXED_SIZE_CAP));
        let z = fixed_ps_count(ps, n);
        ps.max_workers = n;
        ps.max_ps = z;
    }
    Ok(Instance::new(
        instance.cluster().clone(),
        jobs,
        instance.slot_length_s(),
        instance.horizon_slots(),
    )?)
}

/// `min(n, max(1, ⌈n·b/B⌉))` ([`PsJob::ps_needed`]), also capped by the
/// job's current `max_ps` (a no-op for generated jobs, whose cap is
/// `N ≥ n`), at least 1.
fn fixed_ps_count(ps: &PsJob, n: u32) -> u32 {
    ps.ps_needed(n).max(1).min(n).min(ps.max_ps).max(1)
}

/// An invalid-argument error naming the option `name`.
fn invalid(name: &str, reason: impl Into<String>) -> TraceError {
    TraceError::InvalidArgument {
        name: name.to_string(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dmlsched::Error;
    use dmlsched::baselines::requested_tasks;
    use dmlsched::model::units::{GB, MB, to_gbps};
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    fn run(seed: u64, p: &ReproParams) -> Generated {
        generate(&mut ChaCha8Rng::seed_from_u64(seed), p).expect("generate")
    }

    fn ps_of(job: &Job) -> &PsJob {
        match &job.architecture {
            Architecture::ParameterServer(ps) => ps,
            Architecture::RingAllReduce(_) => panic!("not a PS job"),
        }
    }

    fn sigmoid(job: &Job) -> (f64, f64, f64) {
        match job.utility {
            Utility::Sigmoid { g1, g2, g3 } => (g1, g2, g3),
            _ => panic!("not a sigmoid"),
        }
    }

    /// `d_min` from the PsJob fields, independently of the generator.
    fn d_min(ps: &PsJob, slot_s: f64) -> f64 {
        let tau_slots = ps.minibatch_compute_s / slot_s;
        let e_mb = ps.gradient_bytes / MB;
        let b_gbps = to_gbps(ps.worker.nic_bps);
        let omega = tau_slots + 2.0 * 8.0 * e_mb / (1000.0 * b_gbps) / slot_s;
        ceil_tol(f64::from(ps.epochs) * f64::from(ps.minibatches_per_chunk) * omega)
    }

    fn in_range(v: f64, (lo, hi): (f64, f64)) -> bool {
        let tol = 1e-9 * hi.abs().max(1.0);
        lo - tol <= v && v <= hi + tol
    }

    fn is_int(v: f64) -> bool {
        v.fract() == 0.0
    }

    /// Shape and range checks shared by the preset tests; returns the
    /// 1-based arrival slots.
    fn check_instance(g: &Generated, p: &ReproParams) -> Vec<u32> {
        let inst = &g.instance;
        let slot_s = p.slot_length_s;
        let t = p.horizon_slots;
        assert_eq!(inst.horizon_slots(), t);
        assert_eq!(inst.slot_length_s(), slot_s);
        let machines = &inst.cluster().machines;
        assert_eq!(machines.len(), p.worker_servers + p.ps_servers);
        for (i, m) in machines.iter().enumerate() {
            assert_eq!(m.id, MachineId(i as u32));
            assert!(in_range(to_gbps(m.capacity.nic_bps), SERVER_NIC_GBPS));
            assert_eq!(m.capacity.storage_bytes, SERVER_STORAGE_GB * GB);
            assert_eq!(m.intra_bandwidth_bps, m.capacity.nic_bps);
            if i < p.worker_servers {
                assert_eq!(m.hosts, Hosting::Workers);
                assert!(m.capacity.gpus >= 1.0);
                assert!(WORKER_SERVER_TYPES.iter().any(|ty| {
                    m.capacity.gpus == f64::from(ty.gpus)
                        && m.capacity.cpu_cores == f64::from(ty.vcpus)
                        && m.capacity.memory_bytes == ty.memory_gb * GB
                }));
            } else {
                assert_eq!(m.hosts, Hosting::ParameterServers);
                assert_eq!(m.capacity.gpus, 0.0);
                assert_eq!(m.capacity.cpu_cores, 36.0);
                assert_eq!(m.capacity.memory_bytes, 60.0 * GB);
            }
        }
        let jobs = inst.jobs();
        assert_eq!(jobs.len(), p.jobs);
        assert_eq!(g.classes.len(), p.jobs);
        assert!(g.drawn >= p.jobs as u64);
        assert_eq!(g.drawn - g.discarded, p.jobs as u64);
        assert!((0.0..1.0).contains(&g.redraw_rate()));
        let mut slots = Vec::new();
        for (i, (job, class)) in jobs.iter().zip(&g.classes).enumerate() {
            assert_eq!(job.id, JobId(i as u32));
            assert_eq!(job.discipline, dmlsched::model::Discipline::ELASTIC);
            // On a slot boundary, exactly.
            let s0 = inst.arrival_slot(job);
            assert_eq!(job.arrival_s, f64::from(s0) * slot_s);
            slots.push(s0 + 1);
            let ps = ps_of(job);
            // Workload.
            assert!((ranges::EPOCHS.0..=ranges::EPOCHS.1).contains(&ps.epochs));
            assert!((p.chunks.0..=p.chunks.1).contains(&ps.data_chunks));
            assert!((10..=100).contains(&ps.minibatches_per_chunk));
            assert!(in_range(ps.minibatch_compute_s / slot_s, ranges::TAU_SLOTS));
            assert!(in_range(ps.gradient_bytes / MB, ranges::GRADIENT_MB));
            assert_eq!(ps.max_workers, ps.data_chunks);
            assert_eq!(ps.max_ps, ps.data_chunks);
            assert!(ps.ps_at_most_workers);
            assert_eq!(ps.sync, dmlsched::model::SyncMode::Asynchronous);
            assert!(ps.layers.is_none());
            // Demands.
            let w = &ps.worker;
            assert!(is_int(w.gpus) && (0.0..=4.0).contains(&w.gpus));
            assert!(is_int(w.cpu_cores) && (1.0..=10.0).contains(&w.cpu_cores));
            assert!(in_range(w.memory_bytes / GB, ranges::MEMORY_GB));
            assert!(in_range(w.storage_bytes / GB, ranges::STORAGE_GB));
            assert!(in_range(to_gbps(w.nic_bps), ranges::WORKER_GBPS));
            let s = &ps.ps;
            assert_eq!(s.gpus, 0.0);
            assert!(is_int(s.cpu_cores) && (1.0..=10.0).contains(&s.cpu_cores));
            assert!(in_range(s.memory_bytes / GB, ranges::MEMORY_GB));
            assert!(in_range(s.storage_bytes / GB, ranges::STORAGE_GB));
            assert!(in_range(to_gbps(s.nic_bps), ranges::PS_GBPS));
            assert!(
                s.nic_bps >= w.nic_bps,
                "PS bandwidth B ≥ worker bandwidth b"
            );
            // Utility.
            let (g1, g2, g3) = sigmoid(job);
            assert!(in_range(g1, p.gamma1));
            assert!(in_range(g3, ranges::GAMMA3));
            match class {
                JobClass::TimeInsensitive => assert_eq!(g2, 0.0),
                JobClass::TimeSensitive => assert!(in_range(g2, ranges::GAMMA2_SENSITIVE)),
                JobClass::TimeCritical => assert!(in_range(g2, ranges::GAMMA2_CRITICAL)),
            }
            // Filter.
            let d = d_min(ps, slot_s);
            let left = f64::from(t - s0);
            match p.filter {
                DurationFilter::WithinTarget => assert!(d <= g3 && d <= left, "job {i}"),
                DurationFilter::MaxSlots(k) => assert!(d <= f64::from(k) && d <= left),
                DurationFilter::None => {}
            }
        }
        assert!(slots.windows(2).all(|w| w[0] <= w[1]), "sorted arrivals");
        slots
    }

    #[test]
    fn same_seed_same_instance() {
        let p = ReproParams::figure5(6, (1.0, 100.0));
        let a = run(seed_for(5, 6, 0), &p);
        let b = run(seed_for(5, 6, 0), &p);
        assert_eq!(a, b);
        let c = run(seed_for(5, 6, 1), &p);
        assert_ne!(a.instance, c.instance);
        let q = ReproParams::figure3(30);
        assert_eq!(run(9, &q), run(9, &q));
    }

    #[test]
    fn seeds_are_stable_and_distinct() {
        assert_eq!(seed_for(3, 100, 0), seed_for(3, 100, 0));
        let seeds = [
            seed_for(3, 100, 0),
            seed_for(3, 100, 1),
            seed_for(3, 200, 0),
            seed_for(5, 100, 0),
            seed_for(0, 0, 0),
        ];
        for i in 0..seeds.len() {
            for j in i + 1..seeds.len() {
                assert_ne!(seeds[i], seeds[j]);
            }
        }
        // SplitMix64 of 0 (the reference generator's first output from 0).
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn figure3_shape() {
        let p = ReproParams::figure3(100);
        assert_eq!(p, ReproParams::default());
        assert_eq!(ReproParams::figure6(200), ReproParams::figure3(200));
        assert_eq!(
            (p.horizon_slots, p.worker_servers, p.ps_servers, p.jobs),
            (300, 50, 50, 100)
        );
        let g = run(seed_for(3, 100, 0), &p);
        let slots = check_instance(&g, &p);
        assert!(slots.iter().all(|&s| (1..=285).contains(&s)));
    }

    #[test]
    fn figure5_shape() {
        for (n, h, k) in [(3, 2, 1), (6, 3, 3), (9, 5, 4), (12, 6, 6)] {
            for gamma1 in [(50.0, 100.0), (75.0, 100.0), (1.0, 100.0), (25.0, 100.0)] {
                let p = ReproParams::figure5(n, gamma1);
                assert_eq!((p.worker_servers, p.ps_servers), (h, k));
                assert_eq!((p.horizon_slots, p.jobs), (10, 10));
                for rep in 0..3 {
                    let g = run(seed_for(5, u64::from(n), rep), &p);
                    let slots = check_instance(&g, &p);
                    assert!(slots.iter().all(|&s| (1..=5).contains(&s)));
                    for job in g.instance.jobs() {
                        assert!(ps_of(job).max_workers <= 10, "worker cap N ≤ 10");
                    }
                }
            }
        }
    }

    #[test]
    fn other_filters_and_arrivals() {
        let p = ReproParams {
            jobs: 40,
            horizon_slots: 40,
            filter: DurationFilter::MaxSlots(30),
            arrivals: Arrivals::UniformSlots {
                first: 20,
                last: 40,
            },
            ..ReproParams::default()
        };
        let g = run(4, &p);
        let slots = check_instance(&g, &p);
        assert!(slots.iter().all(|&s| (20..=40).contains(&s)));

        let none = ReproParams {
            jobs: 200,
            filter: DurationFilter::None,
            ..ReproParams::default()
        };
        let g = run(4, &none);
        check_instance(&g, &none);
        assert_eq!((g.drawn, g.discarded), (200, 0));
        assert_eq!(g.redraw_rate(), 0.0);
        // Most paper-literal jobs cannot finish within the horizon (hence the
        // default filter).
        let late = g
            .instance
            .jobs()
            .iter()
            .filter(|j| d_min(ps_of(j), none.slot_length_s) > 15.0)
            .count();
        assert!(late > 150, "{late}");
    }

    #[test]
    fn class_shares_are_respected() {
        let p = ReproParams {
            jobs: 3000,
            filter: DurationFilter::None,
            ..ReproParams::default()
        };
        let g = run(12, &p);
        let share = |c| g.classes.iter().filter(|&&x| x == c).count() as f64 / 3000.0;
        assert!((share(JobClass::TimeInsensitive) - 0.10).abs() < 0.03);
        assert!((share(JobClass::TimeSensitive) - 0.55).abs() < 0.03);
        assert!((share(JobClass::TimeCritical) - 0.35).abs() < 0.03);

        let fig4 = ReproParams {
            jobs: 200,
            horizon_slots: 100,
            class_shares: (0.0, 0.5, 0.5),
            ..ReproParams::default()
        };
        let g = run(13, &fig4);
        check_instance(&g, &fig4);
        assert!(!g.classes.contains(&JobClass::TimeInsensitive));
    }

    #[test]
    fn redraw_rate_is_a_fraction() {
        let g = run(seed_for(3, 100, 0), &ReproParams::figure3(100));
        assert!(g.discarded > 0 && g.redraw_rate() < 1.0);
        let empty = Generated {
            instance: g.instance.clone(),
            drawn: 0,
            discarded: 0,
            classes: Vec::new(),
        };
        assert_eq!(empty.redraw_rate(), 0.0);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let d = ReproParams::default;
        let cases: Vec<(&str, ReproParams)> = vec![
            (
                "no worker servers",
                ReproParams {
                    worker_servers: 0,
                    ..d()
                },
            ),
            (
                "no PS servers",
                ReproParams {
                    ps_servers: 0,
                    ..d()
                },
            ),
            (
                "figure5 with 1 server",
                ReproParams::figure5(1, (1.0, 100.0)),
            ),
            (
                "figure5 with 0 servers",
                ReproParams::figure5(0, (1.0, 100.0)),
            ),
            (
                "zero horizon",
                ReproParams {
                    horizon_slots: 0,
                    arrivals: Arrivals::UniformSlots { first: 1, last: 1 },
                    ..d()
                },
            ),
            (
                "horizon too short for Poisson arrivals",
                ReproParams {
                    horizon_slots: 15,
                    ..d()
                },
            ),
            (
                "arrival slot 0",
                ReproParams {
                    arrivals: Arrivals::UniformSlots { first: 0, last: 5 },
                    ..d()
                },
            ),
            (
                "first after last",
                ReproParams {
                    arrivals: Arrivals::UniformSlots { first: 6, last: 5 },
                    ..d()
                },
            ),
            (
                "arrivals after the horizon",
                ReproParams {
                    arrivals: Arrivals::UniformSlots {
                        first: 1,
                        last: 301,
                    },
                    ..d()
                },
            ),
            (
                "zero slot length",
                ReproParams {
                    slot_length_s: 0.0,
                    ..d()
                },
            ),
            (
                "NaN slot length",
                ReproParams {
                    slot_length_s: f64::NAN,
                    ..d()
                },
            ),
            (
                "negative gamma1",
                ReproParams {
                    gamma1: (-1.0, 100.0),
                    ..d()
                },
            ),
            (
                "reversed gamma1",
                ReproParams {
                    gamma1: (100.0, 1.0),
                    ..d()
                },
            ),
            (
                "infinite gamma1",
                ReproParams {
                    gamma1: (1.0, f64::INFINITY),
                    ..d()
                },
            ),
            (
                "shares not summing to 1",
                ReproParams {
                    class_shares: (0.1, 0.55, 0.36),
                    ..d()
                },
            ),
            (
                "negative share",
                ReproParams {
                    class_shares: (-0.1, 0.75, 0.35),
                    ..d()
                },
            ),
            (
                "NaN share",
                ReproParams {
                    class_shares: (f64::NAN, 0.65, 0.35),
                    ..d()
                },
            ),
            (
                "zero chunks",
                ReproParams {
                    chunks: (0, 5),
                    ..d()
                },
            ),
            (
                "reversed chunks",
                ReproParams {
                    chunks: (10, 5),
                    ..d()
                },
            ),
            (
                "MaxSlots(0)",
                ReproParams {
                    filter: DurationFilter::MaxSlots(0),
                    ..d()
                },
            ),
            (
                "zero max_redraws",
                ReproParams {
                    max_redraws: 0,
                    ..d()
                },
            ),
            (
                "max_redraws exhausted",
                ReproParams {
                    max_redraws: 1,
                    ..d()
                },
            ),
        ];
        for (what, p) in cases {
            match generate(&mut ChaCha8Rng::seed_from_u64(1), &p) {
                Err(Error::Trace(TraceError::InvalidArgument { name, reason })) => {
                    let exhausted = reason.contains("sampled jobs passed");
                    assert_eq!(
                        exhausted,
                        what == "max_redraws exhausted",
                        "{what}: {reason}"
                    );
                    assert!(!name.is_empty());
                }
                other => panic!("{what}: expected an invalid-argument error, got {other:?}"),
            }
        }
        // Boundary cases that are valid.
        for p in [
            ReproParams {
                horizon_slots: 16,
                jobs: 5,
                ..d()
            },
            ReproParams {
                class_shares: (0.1, 0.55, 0.35 + 5e-10),
                jobs: 5,
                ..d()
            },
            ReproParams { jobs: 0, ..d() },
        ] {
            assert!(generate(&mut ChaCha8Rng::seed_from_u64(1), &p).is_ok());
        }
    }

    #[test]
    fn fixed_sizes_follow_the_baselines_rule() {
        let p = ReproParams::figure3(150);
        let g = run(21, &p);
        let fixed = fixed_sizes(&g.instance, &mut ChaCha8Rng::seed_from_u64(22)).unwrap();
        let again = fixed_sizes(&g.instance, &mut ChaCha8Rng::seed_from_u64(22)).unwrap();
        assert_eq!(fixed, again);
        assert_eq!(fixed.cluster(), g.instance.cluster());
        assert_eq!(fixed.horizon_slots(), g.instance.horizon_slots());
        assert_eq!(fixed.slot_length_s(), g.instance.slot_length_s());
        let mut sizes = std::collections::BTreeSet::new();
        for (orig, job) in g.instance.jobs().iter().zip(fixed.jobs()) {
            let (a, b) = (ps_of(orig), ps_of(job));
            let n = b.max_workers;
            sizes.insert(n);
            assert!(1 <= n && n <= a.data_chunks.min(30), "{n}");
            let want =
                ceil_tol(f64::from(n) * a.worker.nic_bps / a.ps.nic_bps).clamp(1.0, f64::from(n));
            assert_eq!(f64::from(b.max_ps), want);
            assert!(1 <= b.max_ps && b.max_ps <= n);
            assert_eq!(requested_tasks(job), (n, b.max_ps));
            assert_eq!(b.total_minibatches(), a.total_minibatches());
            assert_eq!(
                (b.epochs, b.data_chunks, b.minibatches_per_chunk),
                (a.epochs, a.data_chunks, a.minibatches_per_chunk)
            );
            assert_eq!((&b.worker, &b.ps), (&a.worker, &a.ps));
            assert_eq!(job.id, orig.id);
            assert_eq!(job.arrival_s, orig.arrival_s);
            assert_eq!(job.utility, orig.utility);
            assert_eq!(job.discipline, orig.discipline);
        }
        assert!(sizes.len() > 10, "sizes vary: {sizes:?}");
        // Several PSs when b/B is large: b = 5, B = 5 gives z = n.
        let mut ps = ps_of(&g.instance.jobs()[0]).clone();
        ps.worker.nic_bps = gbps(5.0);
        ps.ps.nic_bps = gbps(5.0);
        assert_eq!(fixed_ps_count(&ps, 7), 7);
        ps.ps.nic_bps = gbps(20.0);
        assert_eq!(fixed_ps_count(&ps, 7), 2);
        ps.worker.nic_bps = gbps(0.1);
        assert_eq!(fixed_ps_count(&ps, 7), 1);
    }
}
