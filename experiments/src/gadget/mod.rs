//! The evaluation set-ups of the GADGET-style scheduler
//! ([`dmlsched::algorithms::gadget`], after the abstract of GADGET, Yu, Tian,
//! Ji, Wu, Rajan, Liu, IEEE INFOCOM 2022; the crate's own design) as seeded
//! instance generators. GADGET's own evaluation is not available: these
//! are the crate's scenarios, and the numbers they give are the crate's.
//!
//! [`GadgetScenario::generate`] draws one instance for a seed and returns
//! it with the matching [`GadgetParams`] (energy price, fairness weight) in
//! a [`GadgetSetup`], so a run is one line:
//!
//! ```
//! use dmlsched_experiments::gadget::{GadgetScenario, GadgetVariant};
//!
//! let setup = GadgetScenario::synthetic(0.05).generate(7, GadgetVariant::BASE)?;
//! assert_eq!(setup.instance.jobs().len(), 20);
//! let solved = setup.solve()?;
//! solved.certificate.check(1e-9)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The synthetic scenario ([`GadgetScenario::Synthetic`])
//!
//! * **Cluster** ([`cluster`]): 16 servers of 8 GPUs, each with a 25 Gbit/s
//!   full-duplex NIC (25 Gbit/s per direction, so a reservation pool of
//!   2 × 25 Gbit/s per slot), 150 GB/s inside a server, 8 cores and 64 GB
//!   of memory per GPU, and the crate's physical ring calibration
//!   (reductions at 100,000 MB/s, 2 ms per server and iteration). Slots of
//!   60 s, horizon `T = 720` (12 h).
//! * **Arrivals**: `⌊400 × load⌉` jobs, a Poisson process over the first
//!   10 h conditioned on its count: that many uniform arrival slots in
//!   `0..600`, sorted; a job arrives at the start of its slot.
//! * **Jobs**: the GPU count `G` from the 160-job ring-all-reduce mix (1, 2,
//!   4, 8, 16, 32 GPUs with probability 50, 8.75, 16.25, 18.75, 5 and
//!   1.25%); the model uniformly from its three-model catalogue (resnet50,
//!   googlenet, alexnet: model size, mini-batch, forward and backward time),
//!   so the compute time per iteration `K` is forward plus backward of one
//!   mini-batch; rigid (`W = {G}`), non-preemptive.
//! * **Work**: a target duration `d_target ~ LogUniform[5, 120]` slots, the
//!   requested iterations `F^req = ⌈d_target / τ(G, ⌈G/8⌉)⌉` with `τ` the
//!   scheduler's own per-iteration time of the ring on its fewest servers
//!   (read from its model of the job), so that on those servers the job takes
//!   about `d_target`; the convergence point `F^conv = ⌈ζ·F^req⌉`,
//!   `ζ ~ U[0.6, 1]`.
//! * **Reserved bandwidth** `b ~ U[1, 5]` Gbit/s per direction.
//! * **Utility**: a sigmoid of the completion delay `δ = t̂ − a + 1`,
//!   `g1/(1 + e^{g2(δ − g3)})`, with `g1 ~ U[1, 100]`, midpoint
//!   `g3 = ⌈σ·d^min⌉`, `σ ~ U[1, 2]`, and steepness `g2 = c/d^min` by the
//!   OASiS class mix rescaled to the job's own duration: 10% `c = 0`
//!   (time-insensitive), 55% `c ~ U[0.5, 5]` (time-sensitive), 35%
//!   `c ~ U[20, 30]` (time-critical). `d^min` is the job's shortest duration
//!   on the empty cluster (the scheduler's, with the iterations it trains:
//!   `F^conv`). The crate's [`Utility`] counts elapsed slots `δ − 1`, so the
//!   stored midpoint is `g3 − 1` (the conversion of
//!   [`utility_at_jct`](dmlsched::algorithms::gadget::utility_at_jct)).
//! * **Tenants**: one of 8 (`tenant-0` … `tenant-7`), uniformly.
//!
//! # The Philly window ([`GadgetScenario::PhillyWindow`])
//!
//! The Microsoft Philly trace (2017) as reduced by the Pollux artifact
//! (Pollux CSV; path given, or `$DMLSCHED_TRACES/philly.csv`): the jobs with
//! a duration of at most 86,400 s and at most 32 GPUs, sorted by submit
//! time, the first 1,000 submitted on or after 2017-11-01, re-based so the
//! first arrives at 0 (arrivals keep their seconds). Slots of 300 s;
//! `T` = the slots spanned by the arrivals plus 288 (one day). Cluster:
//! 32 of the synthetic scenario's servers. Jobs: the trace's ring-all-reduce
//! recipe ([`dmlsched::trace::recipe`]: model uniformly from the same
//! catalogue, `G` = the trace's GPU count, `F^req` = the trace duration over
//! the model's compute time per iteration), made rigid, with `ζ`, `b` and
//! the utility drawn as in the synthetic scenario. A ring that needs more
//! than one server exchanges its gradients at the reserved `b`, so such a
//! job runs longer than the trace says. The tenants are the trace's
//! virtual clusters.
//!
//! # Variants ([`GadgetVariant`])
//!
//! The instance never depends on the variant, only the parameters do:
//! energy price `e = 0` (default) or `e = 0.01 · median_i g1_i/(G_i·d^min_i)`
//! per GPU-slot ([`EnergyPrice::MedianShare`]); fairness weight `ω = 1`
//! (default) or [`FairnessWeighting::TenantShare`] with `β = 1`.
//!
//! # Seeds
//!
//! Everything comes from `seed`, through ChaCha8 streams: job `i`'s draws
//! (`G`, `d_target`, tenant, `ζ`, `b`, utility) from stream `i` of one
//! generator, the arrival slots from another stream, the recipe's model
//! choice from its own (see [`dmlsched::trace::recipe`]). Job `i` therefore
//! keeps its attributes when the load changes; only the arrivals move.

use dmlsched::algorithms::Algorithm;
mod metrics;

pub use metrics::{GadgetMetrics, JctStats};

use std::path::{Path, PathBuf};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::oasis::repro::JobClass;
use dmlsched::algorithms::Solved;
use dmlsched::algorithms::gadget::{
    FairnessWeighting, Gadget, GadgetError, GadgetParams, GadgetReport, MAX_CELLS, fastest_shapes,
    packed_iteration_slots,
};
use dmlsched::model::units::{ceil_tol, gb, gbps, slot_of};
use dmlsched::model::{
    Architecture, Cluster, Discipline, Instance, Job, JobId, ModelError, RarJob, Utility,
};
use dmlsched::trace::catalog::oasis::CLASS_SHARES;
use dmlsched::trace::synth::{ms160_gpu_count, uniform_f64};
use dmlsched::trace::{
    Origin, RecipeOptions, TraceError, TraceJob, Window, WindowStart, gpu_cluster,
    load_philly_pollux_csv, quantile_of_sorted, select, to_jobs,
};

/// GPUs per server in both scenarios.
pub(crate) const GPUS_PER_SERVER: u32 = 8;
/// NIC line rate of a server, Gbit/s per direction.
pub(crate) const NIC_GBPS: f64 = 25.0;
/// Bandwidth inside a server, GB/s.
pub(crate) const INTERNAL_GB_PER_S: f64 = 150.0;
/// Jobs of the synthetic scenario at load 1.
pub(crate) const JOBS_PER_LOAD: f64 = 400.0;
/// Target duration range of a synthetic job, slots (drawn log-uniformly).
pub(crate) const TARGET_SLOTS: (f64, f64) = (5.0, 120.0);
/// Range of the convergence share `ζ = F^conv / F^req`.
pub(crate) const CONVERGENCE_SHARE: (f64, f64) = (0.6, 1.0);
/// Range of the reserved ring bandwidth `b`, Gbit/s per direction.
pub(crate) const RESERVED_GBPS: (f64, f64) = (1.0, 5.0);
/// Range of the utility scale `g1`.
pub(crate) const G1: (f64, f64) = (1.0, 100.0);
/// Range of `σ` in the midpoint `g3 = ⌈σ·d^min⌉`.
pub(crate) const MIDPOINT_FACTOR: (f64, f64) = (1.0, 2.0);
/// Range of `c` in `g2 = c/d^min` for time-sensitive jobs.
pub(crate) const STEEPNESS_SENSITIVE: (f64, f64) = (0.5, 5.0);
/// Range of `c` in `g2 = c/d^min` for time-critical jobs.
pub(crate) const STEEPNESS_CRITICAL: (f64, f64) = (20.0, 30.0);
/// Tenants of the synthetic scenario.
pub(crate) const TENANTS: u32 = 8;
/// The share of the energy variant: `e = 0.01 · median g1/(G·d^min)`.
pub(crate) const ENERGY_SHARE: f64 = 0.01;
/// The environment variable naming the folder of the public traces.
pub const TRACES_ENV: &str = "DMLSCHED_TRACES";
/// The Philly file in that folder.
pub const PHILLY_FILE: &str = "philly.csv";

/// XORed into the seed for the scenario's own draws (the recipe uses the
/// seed itself).
const DRAW_SALT: u64 = 0x4741_4447_4554; // "GADGET"
/// The stream of the arrival slots.
const ARRIVAL_STREAM: u64 = u64::MAX;

/// Why a scenario could not be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GadgetExperimentError {
    /// An option is out of range (a load that is not positive, no server,
    /// arrivals beyond the horizon, …).
    #[error("invalid GADGET-style scenario option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The Philly window has no trace path: none given and
    /// `DMLSCHED_TRACES` unset.
    #[error(
        "no Philly trace: pass its path or set {TRACES_ENV} to the folder holding {PHILLY_FILE}"
    )]
    NoTracePath,
    /// The trace file does not exist.
    #[error("the Philly trace {} does not exist", path.display())]
    TraceMissing {
        /// The path looked at.
        path: PathBuf,
    },
    /// No job of the trace passes the window's start and filters.
    #[error("the Philly window of {} is empty: no job from {start} on passes the filters", path.display())]
    EmptyWindow {
        /// The trace.
        path: PathBuf,
        /// The window's start date.
        start: String,
    },
    /// A job has no ring shape that embeds on the empty cluster (more GPUs
    /// than the servers a ring may span hold).
    #[error("{job} has no ring shape that fits the empty cluster")]
    NoShape {
        /// The job.
        job: JobId,
    },
    /// The trace could not be read, or the recipe rejected a row.
    #[error("trace: {0}")]
    Trace(#[from] TraceError),
    /// The generated instance is invalid (a bug of the generator).
    #[error("invalid instance: {0}")]
    Model(#[from] ModelError),
    /// The scheduler's model rejected a job (a bug of the generator).
    #[error("GADGET-style model: {0}")]
    Gadget(#[from] GadgetError),
}

/// The synthetic scenario's knobs; [`SyntheticOptions::load`] gives the
/// default set-up at a load.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SyntheticOptions {
    /// Load factor: `⌊JOBS_PER_LOAD × load⌉` jobs over the same arrival
    /// window (default 1).
    pub load: f64,
    /// Servers of 8 GPUs (default 16).
    pub servers: u32,
    /// Slot length, seconds (default 60).
    pub slot_length_s: f64,
    /// Horizon `T`, slots (default 720).
    pub horizon_slots: u32,
    /// Arrivals fall in slots `0..arrival_slots` (default 600: 10 h).
    pub arrival_slots: u32,
}

impl SyntheticOptions {
    /// The default set-up at `load`.
    pub fn load(load: f64) -> SyntheticOptions {
        SyntheticOptions {
            load,
            servers: 16,
            slot_length_s: 60.0,
            horizon_slots: 720,
            arrival_slots: 600,
        }
    }

    /// The number of jobs, `⌊400 × load⌉`.
    pub fn jobs(&self) -> usize {
        (JOBS_PER_LOAD * self.load).round().max(0.0) as usize
    }

    fn validate(&self) -> Result<(), GadgetExperimentError> {
        let bad = |name, reason: String| Err(GadgetExperimentError::InvalidOption { name, reason });
        if !(self.load.is_finite() && self.load > 0.0 && self.jobs() >= 1) {
            return bad("load", format!("{} gives no job", self.load));
        }
        if self.jobs() > u32::MAX as usize {
            return bad("load", format!("{} gives too many jobs", self.load));
        }
        if self.servers == 0 {
            return bad("servers", "at least one server".into());
        }
        if !(self.slot_length_s.is_finite() && self.slot_length_s > 0.0) {
            return bad(
                "slot_length_s",
                format!("{} is not positive", self.slot_length_s),
            );
        }
        if self.arrival_slots == 0 || self.arrival_slots > self.horizon_slots {
            return bad(
                "arrival_slots",
                format!(
                    "{} is not in 1..={} (the horizon)",
                    self.arrival_slots, self.horizon_slots
                ),
            );
        }
        Ok(())
    }
}

impl Default for SyntheticOptions {
    /// [`SyntheticOptions::load`]`(1.0)`.
    fn default() -> Self {
        SyntheticOptions::load(1.0)
    }
}

/// The Philly window's knobs; [`PhillyWindowOptions::new`] gives the
/// default set-up.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PhillyWindowOptions {
    /// The Pollux Philly CSV (`None`: `$DMLSCHED_TRACES/philly.csv`).
    pub trace: Option<PathBuf>,
    /// First submit date, `YYYY-MM-DD` (default 2017-11-01).
    pub start: String,
    /// Jobs in the window (default 1,000).
    pub jobs: usize,
    /// Longest duration kept, seconds (default 86,400).
    pub max_duration_s: f64,
    /// Most GPUs kept (default 32).
    pub max_gpus: u32,
    /// Slot length, seconds (default 300).
    pub slot_length_s: f64,
    /// Slots after the last arrival's slot (default 288: one day).
    pub tail_slots: u32,
    /// Servers of 8 GPUs (default 32).
    pub servers: u32,
}

impl PhillyWindowOptions {
    /// The default window of the trace at `trace` (`None`: from
    /// `DMLSCHED_TRACES`).
    pub fn new(trace: Option<PathBuf>) -> PhillyWindowOptions {
        PhillyWindowOptions {
            trace,
            start: "2017-11-01".into(),
            jobs: 1000,
            max_duration_s: 86_400.0,
            max_gpus: 32,
            slot_length_s: 300.0,
            tail_slots: 288,
            servers: 32,
        }
    }

    /// The trace's path: the one given, else `$DMLSCHED_TRACES/philly.csv`.
    ///
    /// # Errors
    ///
    /// [`GadgetExperimentError::NoTracePath`] when neither is set.
    pub fn trace_path(&self) -> Result<PathBuf, GadgetExperimentError> {
        match (&self.trace, std::env::var_os(TRACES_ENV)) {
            (Some(p), _) => Ok(p.clone()),
            (None, Some(dir)) => Ok(Path::new(&dir).join(PHILLY_FILE)),
            (None, None) => Err(GadgetExperimentError::NoTracePath),
        }
    }
}

/// Which parameters accompany the instance.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum EnergyPrice {
    /// `e = 0`: energy is reported only (default).
    #[default]
    Zero,
    /// `e = share · median_i g1_i/(G_i·d^min_i)` per GPU-slot.
    MedianShare(f64),
}

/// The parameter variant of a scenario: energy price and fairness weight.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GadgetVariant {
    /// The energy price.
    pub energy: EnergyPrice,
    /// Whether the weight is [`FairnessWeighting::TenantShare`] with
    /// `β = 1` (else `ω = 1`).
    pub tenant_share: bool,
}

impl GadgetVariant {
    /// `e = 0`, `ω = 1`.
    pub const BASE: GadgetVariant = GadgetVariant {
        energy: EnergyPrice::Zero,
        tenant_share: false,
    };
    /// `e = 0.01 · median g1/(G·d^min)`, `ω = 1`.
    pub const ENERGY: GadgetVariant = GadgetVariant {
        energy: EnergyPrice::MedianShare(ENERGY_SHARE),
        tenant_share: false,
    };
    /// `e = 0`, `TenantShare { beta: 1 }`.
    pub const FAIRNESS: GadgetVariant = GadgetVariant {
        energy: EnergyPrice::Zero,
        tenant_share: true,
    };
}

/// A scenario of the GADGET-style evaluation (see the [module
/// documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub enum GadgetScenario {
    /// 16 × 8 GPUs, 400 × load jobs over 10 h, 12 h horizon.
    Synthetic(SyntheticOptions),
    /// 1,000 Philly jobs from 2017-11-01 on 32 × 8 GPUs.
    PhillyWindow(PhillyWindowOptions),
}

/// What the scenario drew for one job, in instance order.
#[derive(Debug, Clone, PartialEq)]
pub struct JobDraw {
    /// The job.
    pub(crate) job: JobId,
    /// Its catalogue model.
    pub model: &'static str,
    /// GPUs (ring workers) `G`.
    pub gpus: u32,
    /// Target duration `d_target`, slots (synthetic), or the trace duration
    /// in slots (Philly).
    pub target_slots: f64,
    /// Convergence share `ζ`.
    pub convergence_share: f64,
    /// Reserved bandwidth `b`, Gbit/s per direction.
    pub reserved_gbps: f64,
    /// Utility class.
    pub class: JobClass,
    /// `c` of `g2 = c/d^min` (0 for time-insensitive jobs).
    pub steepness: f64,
    /// `σ` of `g3 = ⌈σ·d^min⌉`.
    pub midpoint_factor: f64,
    /// `g1`.
    pub g1: f64,
    /// `d^min`: the fewest slots on the empty cluster.
    pub min_slots: u32,
    /// Requested iterations `F^req`.
    pub iterations_requested: u64,
    /// Convergence iterations `F^conv`.
    pub iterations_converged: u64,
}

/// A generated instance with the parameters of its variant.
#[derive(Debug, Clone)]
pub struct GadgetSetup {
    /// The instance.
    pub instance: Instance,
    /// The scheduler's parameters: defaults plus the variant's energy price
    /// and fairness weight.
    pub params: GadgetParams,
    /// What was drawn per job, in instance order.
    pub draws: Vec<JobDraw>,
}

impl GadgetSetup {
    /// Runs the GADGET-style scheduler with [`GadgetSetup::params`].
    ///
    /// # Errors
    ///
    /// As [`Gadget::solve`].
    pub fn solve(&self) -> dmlsched::Result<Solved<GadgetReport>> {
        Gadget::new(self.params.clone())?.solve(
            &self.instance,
            &mut rand::rngs::ChaCha8Rng::seed_from_u64(0),
        )
    }
}

/// The scenario's per-job draws before the model is known.
#[derive(Debug, Clone, Copy)]
struct Draws {
    zeta: f64,
    b_gbps: f64,
    g1: f64,
    sigma: f64,
    class: JobClass,
    c: f64,
}

impl Draws {
    fn new(rng: &mut ChaCha8Rng) -> Draws {
        let zeta = uniform_f64(rng, CONVERGENCE_SHARE);
        let b_gbps = uniform_f64(rng, RESERVED_GBPS);
        let g1 = uniform_f64(rng, G1);
        let sigma = uniform_f64(rng, MIDPOINT_FACTOR);
        let class = JobClass::draw(rng, CLASS_SHARES);
        let c = match class {
            JobClass::TimeInsensitive => 0.0,
            JobClass::TimeSensitive => uniform_f64(rng, STEEPNESS_SENSITIVE),
            JobClass::TimeCritical => uniform_f64(rng, STEEPNESS_CRITICAL),
        };
        Draws {
            zeta,
            b_gbps,
            g1,
            sigma,
            class,
            c,
        }
    }

    /// The sigmoid over the completion delay `δ` with `g2 = c/d^min`,
    /// `g3 = ⌈σ·d^min⌉`, stored over the elapsed slots `δ − 1`.
    fn utility(&self, min_slots: u32) -> Utility {
        let d = f64::from(min_slots.max(1));
        Utility::Sigmoid {
            g1: self.g1,
            g2: self.c / d,
            g3: ceil_tol(self.sigma * d) - 1.0,
        }
    }
}

/// Stream `stream` of the scenario's generator for `seed`.
fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ DRAW_SALT);
    rng.set_stream(stream);
    rng
}

/// `servers` servers of 8 GPUs, 8 cores, 64 GB memory and 500 GB storage
/// per GPU (the trace recipe's machine), a 25 Gbit/s full-duplex NIC,
/// 150 GB/s inside the server, and the crate's physical ring calibration.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] for no server or too many.
pub fn cluster(servers: u32) -> Result<Cluster, TraceError> {
    let gpus = servers
        .checked_mul(GPUS_PER_SERVER)
        .ok_or_else(|| TraceError::InvalidArgument {
            name: "servers".into(),
            reason: format!("{servers} servers of 8 GPUs is too many"),
        })?;
    let mut cluster = gpu_cluster(gpus, GPUS_PER_SERVER)?;
    for m in &mut cluster.machines {
        m.capacity.nic_bps = gbps(NIC_GBPS);
        m.intra_bandwidth_bps = gb(INTERNAL_GB_PER_S);
    }
    Ok(cluster)
}

impl GadgetScenario {
    /// The synthetic scenario at `load` (default cluster and horizon).
    pub fn synthetic(load: f64) -> GadgetScenario {
        GadgetScenario::Synthetic(SyntheticOptions::load(load))
    }

    /// The default Philly window of the trace at `trace` (`None`: from
    /// `DMLSCHED_TRACES`).
    pub fn philly_window(trace: Option<PathBuf>) -> GadgetScenario {
        GadgetScenario::PhillyWindow(PhillyWindowOptions::new(trace))
    }

    /// Draws the instance for `seed` with the parameters of `variant`.
    ///
    /// # Errors
    ///
    /// [`GadgetExperimentError`]: an invalid option; for the Philly window
    /// no trace path, a missing file, a malformed trace or an empty window.
    pub fn generate(
        &self,
        seed: u64,
        variant: GadgetVariant,
    ) -> Result<GadgetSetup, GadgetExperimentError> {
        match self {
            GadgetScenario::Synthetic(o) => synthetic(o, seed, variant),
            GadgetScenario::PhillyWindow(o) => philly_window(o, seed, variant),
        }
    }
}

/// The shared steps of both scenarios.
struct Build {
    cluster: Cluster,
    slot_length_s: f64,
    horizon_slots: u32,
    seed: u64,
    variant: GadgetVariant,
}

fn synthetic(
    o: &SyntheticOptions,
    seed: u64,
    variant: GadgetVariant,
) -> Result<GadgetSetup, GadgetExperimentError> {
    o.validate()?;
    let n = o.jobs();
    let mut arrivals = stream(seed, ARRIVAL_STREAM);
    let mut slots: Vec<u32> = (0..n)
        .map(|_| arrivals.random_range(0..o.arrival_slots))
        .collect();
    slots.sort_unstable();
    let (ln_lo, ln_hi) = (TARGET_SLOTS.0.ln(), TARGET_SLOTS.1.ln());
    let mut rows = Vec::with_capacity(n);
    let mut draws = Vec::with_capacity(n);
    let mut targets = Vec::with_capacity(n);
    for (i, slot) in slots.into_iter().enumerate() {
        let mut rng = stream(seed, i as u64);
        let gpus = ms160_gpu_count(&mut rng);
        let target = uniform_f64(&mut rng, (ln_lo, ln_hi)).exp();
        let tenant = rng.random_range(0..TENANTS);
        draws.push(Draws::new(&mut rng));
        let mut row = TraceJob::new(
            format!("synthetic-{i}"),
            f64::from(slot) * o.slot_length_s,
            gpus,
        );
        row.duration_s = Some(target * o.slot_length_s);
        row.tenant = Some(format!("tenant-{tenant}"));
        rows.push(row);
        targets.push(target);
    }
    let build = Build {
        cluster: cluster(o.servers)?,
        slot_length_s: o.slot_length_s,
        horizon_slots: o.horizon_slots,
        seed,
        variant,
    };
    build.run(&rows, &draws, Some(&targets))
}

fn philly_window(
    o: &PhillyWindowOptions,
    seed: u64,
    variant: GadgetVariant,
) -> Result<GadgetSetup, GadgetExperimentError> {
    if !(o.slot_length_s.is_finite() && o.slot_length_s > 0.0) {
        return Err(GadgetExperimentError::InvalidOption {
            name: "slot_length_s",
            reason: format!("{} is not positive", o.slot_length_s),
        });
    }
    let path = o.trace_path()?;
    if !path.is_file() {
        return Err(GadgetExperimentError::TraceMissing { path });
    }
    let mut trace = load_philly_pollux_csv(&path)?.jobs;
    trace.retain(|j| {
        (1..=o.max_gpus).contains(&j.num_gpus)
            && j.duration_s.is_some_and(|d| d <= o.max_duration_s)
    });
    let window = Window {
        start: Some(WindowStart::Date(o.start.clone())),
        jobs: Some(o.jobs),
        drop_pending: true,
        origin: Origin::FirstArrival,
    };
    let rows = match select(&trace, &window) {
        Err(TraceError::EmptyWindow { .. }) => Vec::new(),
        other => other?,
    };
    let Some(last) = rows.last() else {
        return Err(GadgetExperimentError::EmptyWindow {
            path,
            start: o.start.clone(),
        });
    };
    let span = slot_of(last.arrival_s, o.slot_length_s).saturating_add(1);
    let draws = (0..rows.len())
        .map(|i| Draws::new(&mut stream(seed, i as u64)))
        .collect::<Vec<_>>();
    let build = Build {
        cluster: cluster(o.servers)?,
        slot_length_s: o.slot_length_s,
        horizon_slots: span.saturating_add(o.tail_slots),
        seed,
        variant,
    };
    build.run(&rows, &draws, None)
}

impl Build {
    /// The recipe's jobs for `rows`, made rigid with the reservation and
    /// iterations (`targets`: the synthetic targets in slots, which set
    /// `F^req`; `None`: the recipe's), then the utilities from `d^min`.
    /// `draws` and `targets` are indexed like `rows`.
    fn run(
        &self,
        rows: &[TraceJob],
        draws: &[Draws],
        targets: Option<&[f64]>,
    ) -> Result<GadgetSetup, GadgetExperimentError> {
        let mut options = RecipeOptions::rar();
        options.seed = self.seed;
        options.slot_length_s = self.slot_length_s;
        options.max_gpus_per_job = None;
        options.gpus_per_machine = GPUS_PER_SERVER;
        let recipe = to_jobs(rows, &options)?;
        let rows_of: Vec<usize> = recipe.origins.iter().map(|o| o.trace_index).collect();
        let mut jobs = recipe.jobs;
        for (job, &r) in jobs.iter_mut().zip(&rows_of) {
            job.discipline = Discipline::RIGID_GANG;
            ring_mut(job).reserved_bandwidth_bps = Some(gbps(draws[r].b_gbps));
        }
        if let Some(targets) = targets {
            let taus = self.fewest_server_taus(&jobs)?;
            for ((job, tau), &r) in jobs.iter_mut().zip(taus).zip(&rows_of) {
                ring_mut(job).iterations = (ceil_tol(targets[r] / tau) as u64).max(1);
            }
        }
        for (job, &r) in jobs.iter_mut().zip(&rows_of) {
            let ring = ring_mut(job);
            let converged = ceil_tol(draws[r].zeta * ring.iterations as f64) as u64;
            ring.convergence_iterations = Some(converged.clamp(1, ring.iterations));
        }
        let min_slots = self.min_slots(&jobs)?;
        let mut out = Vec::with_capacity(jobs.len());
        for (i, job) in jobs.iter_mut().enumerate() {
            let (r, d) = (rows_of[i], &draws[rows_of[i]]);
            job.utility = d.utility(min_slots[i]);
            let id = job.id;
            let ring = ring_mut(job);
            out.push(JobDraw {
                job: id,
                model: recipe.origins[i].model.unwrap_or_default(),
                gpus: ring.workers.max(),
                target_slots: targets.map_or_else(
                    || rows[r].duration_s.unwrap_or(0.0) / self.slot_length_s,
                    |t| t[r],
                ),
                convergence_share: d.zeta,
                reserved_gbps: d.b_gbps,
                class: d.class,
                steepness: d.c,
                midpoint_factor: d.sigma,
                g1: d.g1,
                min_slots: min_slots[i],
                iterations_requested: ring.iterations,
                iterations_converged: ring.convergence_iterations.unwrap_or(ring.iterations),
            });
        }
        let instance = Instance::new(
            self.cluster.clone(),
            jobs,
            self.slot_length_s,
            self.horizon_slots,
        )?;
        let params = self.params(&out);
        Ok(GadgetSetup {
            instance,
            params,
            draws: out,
        })
    }

    /// `jobs` over a long horizon (every shape within it), for the
    /// scheduler's durations.
    fn draft(&self, jobs: &[Job]) -> Result<Instance, GadgetExperimentError> {
        let servers = self.cluster.machines.len().max(1) as u64;
        let long = (MAX_CELLS / servers).min(u64::from(u32::MAX)) as u32;
        Ok(Instance::new(
            self.cluster.clone(),
            jobs.to_vec(),
            self.slot_length_s,
            long.max(self.horizon_slots),
        )?)
    }

    /// `τ(G, ⌈G/8⌉)` in slots of every job (instance order): the
    /// scheduler's per-iteration time on the fewest servers.
    fn fewest_server_taus(&self, jobs: &[Job]) -> Result<Vec<f64>, GadgetExperimentError> {
        let taus = packed_iteration_slots(
            &self.draft(jobs)?,
            &GadgetParams::default(),
            GPUS_PER_SERVER,
        )?;
        jobs.iter()
            .zip(taus)
            .map(|(j, t)| t.ok_or(GadgetExperimentError::NoShape { job: j.id }))
            .collect()
    }

    /// `d^min` of every job (instance order): its fewest slots on the empty
    /// cluster, as the scheduler reports it.
    fn min_slots(&self, jobs: &[Job]) -> Result<Vec<u32>, GadgetExperimentError> {
        let fastest = fastest_shapes(&self.draft(jobs)?, &GadgetParams::default())?;
        jobs.iter()
            .zip(fastest)
            .map(|(j, f)| {
                f.map(|(d, _)| d)
                    .ok_or(GadgetExperimentError::NoShape { job: j.id })
            })
            .collect()
    }

    /// The default parameters with the variant's energy price and weight.
    fn params(&self, draws: &[JobDraw]) -> GadgetParams {
        let energy_price = match self.variant.energy {
            EnergyPrice::Zero => 0.0,
            EnergyPrice::MedianShare(share) => {
                let mut per_gpu_slot: Vec<f64> = draws
                    .iter()
                    .map(|d| d.g1 / (f64::from(d.gpus) * f64::from(d.min_slots.max(1))))
                    .collect();
                per_gpu_slot.sort_by(f64::total_cmp);
                share * quantile_of_sorted(&per_gpu_slot, 0.5).unwrap_or(0.0)
            }
        };
        let fairness = if self.variant.tenant_share {
            FairnessWeighting::TenantShare { beta: 1.0 }
        } else {
            FairnessWeighting::None
        };
        let mut p = GadgetParams::default();
        p.energy_price = energy_price;
        p.fairness = fairness;
        p
    }
}

/// The ring of a recipe job (the ring-all-reduce recipe makes only rings).
fn ring_mut(job: &mut Job) -> &mut RarJob {
    match &mut job.architecture {
        Architecture::RingAllReduce(r) => r,
        Architecture::ParameterServer(_) => unreachable!("the ring-all-reduce recipe makes rings"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dmlsched::algorithms::gadget::utility_at_jct;
    use dmlsched::model::units::gbps;

    /// The ring of job `i` of `instance`.
    fn ring(instance: &Instance, i: usize) -> &RarJob {
        match &instance.jobs()[i].architecture {
            Architecture::RingAllReduce(r) => r,
            Architecture::ParameterServer(_) => panic!("job {i} is not a ring"),
        }
    }

    #[test]
    fn synthetic_jobs_follow_the_recipe_of_the_scenario() {
        let s = GadgetScenario::synthetic(2.0)
            .generate(5, GadgetVariant::BASE)
            .unwrap();
        let inst = &s.instance;
        for (i, d) in s.draws.iter().enumerate() {
            let r = ring(inst, i);
            assert!((5.0..=120.0).contains(&d.target_slots));
            assert!((0.6..=1.0).contains(&d.convergence_share));
            assert!((1.0..=5.0).contains(&d.reserved_gbps));
            assert_eq!(r.reserved_bandwidth_bps, Some(gbps(d.reserved_gbps)));
            assert!((1.0..=100.0).contains(&d.g1));
            assert!((1.0..=2.0).contains(&d.midpoint_factor));
            assert_eq!(r.workers.max(), d.gpus);
            assert_eq!(r.iterations, d.iterations_requested);
            let conv = (d.convergence_share * d.iterations_requested as f64).ceil() as u64;
            assert!(conv.abs_diff(d.iterations_converged) <= 1);
            assert_eq!(r.convergence_iterations, Some(d.iterations_converged));
            // On its fewest servers the job takes about ζ·d_target slots.
            let expect = d.convergence_share * d.target_slots;
            let m = f64::from(d.min_slots);
            assert!(m >= expect.floor() && m <= expect.ceil() + 1.0, "{d:?}");
            let dm = m.max(1.0);
            let Utility::Sigmoid { g1, g2, g3 } = inst.jobs()[i].utility else {
                panic!("sigmoid utilities")
            };
            assert_eq!(g1, d.g1);
            assert!((g2 - d.steepness / dm).abs() < 1e-12);
            // Midpoint ⌈σ·d^min⌉ over the completion delay δ: u(δ = g3) = g1/2.
            let mid = (d.midpoint_factor * dm - 1e-9).ceil();
            assert_eq!(g3, mid - 1.0);
            let u = &inst.jobs()[i].utility;
            assert!((utility_at_jct(u, mid as u32) - g1 / 2.0).abs() < 1e-9);
            match d.class {
                JobClass::TimeInsensitive => assert_eq!(d.steepness, 0.0),
                JobClass::TimeSensitive => assert!((0.5..=5.0).contains(&d.steepness)),
                JobClass::TimeCritical => assert!((20.0..=30.0).contains(&d.steepness)),
            }
        }
        // d^min is the scheduler's shortest duration on the empty cluster
        // (the library checks it against the shapes that fit), on the
        // final instance as on the generator's long draft.
        let fastest = fastest_shapes(inst, &GadgetParams::default()).unwrap();
        for (d, f) in s.draws.iter().zip(fastest) {
            assert_eq!(f.map(|(m, _)| m), Some(d.min_slots));
        }
    }

    #[test]
    fn utility_midpoint_is_stated_over_the_completion_delay() {
        let d = Draws {
            zeta: 1.0,
            b_gbps: 1.0,
            g1: 10.0,
            sigma: 1.5,
            class: JobClass::TimeSensitive,
            c: 2.0,
        };
        // d^min = 4: g3 = ⌈6⌉ = 6 over δ, g2 = 0.5; u(δ = 6) = g1/2.
        let u = d.utility(4);
        assert_eq!(utility_at_jct(&u, 6), 5.0);
        assert!(utility_at_jct(&u, 7) < 5.0);
    }

    #[test]
    fn options_are_checked() {
        for o in [
            SyntheticOptions::load(0.0),
            SyntheticOptions::load(f64::NAN),
            SyntheticOptions {
                servers: 0,
                ..SyntheticOptions::default()
            },
            SyntheticOptions {
                arrival_slots: 721,
                ..SyntheticOptions::default()
            },
        ] {
            assert!(matches!(
                GadgetScenario::Synthetic(o).generate(0, GadgetVariant::BASE),
                Err(GadgetExperimentError::InvalidOption { .. })
            ));
        }
        let missing = PhillyWindowOptions::new(Some("/nonexistent/philly.csv".into()));
        assert!(matches!(
            GadgetScenario::PhillyWindow(missing).generate(0, GadgetVariant::BASE),
            Err(GadgetExperimentError::TraceMissing { .. })
        ));
    }

    #[test]
    fn tiny_synthetic_instance() {
        let s = GadgetScenario::synthetic(0.02)
            .generate(1, GadgetVariant::ENERGY)
            .unwrap();
        assert_eq!(s.instance.jobs().len(), 8);
        assert!(s.params.energy_price > 0.0);
        for d in &s.draws {
            assert!(d.iterations_converged <= d.iterations_requested);
            assert!(d.min_slots >= 1);
        }
    }
}
