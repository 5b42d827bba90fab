//! The GADGET-style model, converted once from an [`Instance`]: servers with
//! usable GPUs `O_h` and a NIC reservation pool `B_h`, jobs with their ring
//! shapes `(w, n)` and durations `d(w, n)`, values in the job's terms.
//!
//! # Units
//!
//! The instance stores SI units. The ledger counts GPUs, and NIC
//! reservations in **data units per slot**, one data unit being
//! [`DATA_UNIT_BYTES`] = 10⁶ bytes (MB): [`data_per_slot`] is the one
//! conversion. A server's pool `B_h = 2·(NIC line rate)·slot` counts both
//! directions, so a 25 Gbit/s full-duplex NIC and 60 s slots give
//! `2 × 187 500` MB per slot. Times are in slots.
//!
//! # Delays
//!
//! The crate's [`Utility`] is a function of the elapsed slots `t̂ − a`
//! (completion in the arrival slot is 0). This model states values over the
//! completion delay (the job completion time) `δ = t̂ − a + 1 ≥ 1`;
//! [`utility_at_jct`] is the one place where the two meet. A utility stated
//! over `δ` becomes the crate's by the substitution `δ = elapsed + 1`
//! (a sigmoid's midpoint `g3` and a deadline move one slot earlier).

use super::error::{GadgetError, slot_too_long, too_large};
use super::params::{ExcessiveTraining, GadgetParams, WorkUnit, WorkerChoice};
use crate::algorithms::sjf_bco::usable_gpus;
use crate::model::units::{ceil_tol, floor_tol};
use crate::model::{
    Architecture, Instance, Job, JobId, MachineId, RarJob, RingParams, Utility, WorkerCounts,
};
use crate::online::{Ledger, MIN_POSITIVE_DEMAND, PoolId, ResourceId};
use crate::timing::{ProgressMode, RarTiming, TimingError};

/// The ledger's GPU resource (count).
pub const GPU: ResourceId = ResourceId(0);
/// The ledger's NIC resource (data units per slot, both directions).
pub const NIC: ResourceId = ResourceId(1);
/// Resources of the ledger: GPU and NIC.
pub const RESOURCES: usize = 2;
/// The one pool: every usable server.
pub const POOL: PoolId = PoolId(0);
/// Bytes in one data unit of the ledger's NIC resource (10⁶, a megabyte).
pub const DATA_UNIT_BYTES: f64 = 1e6;
/// Most jobs.
pub const MAX_JOBS: usize = 1 << 20;
/// Most usable GPUs of one server.
pub const MAX_SERVER_GPUS: f64 = (1u64 << 20) as f64;
/// Most `horizon × usable servers` cells (the oracle keeps four numbers
/// per cell of a job's window).
pub const MAX_CELLS: u64 = 1 << 22;
/// Most allowed worker counts of one job.
pub const MAX_WORKER_COUNTS: usize = 256;
/// Most steps of one job's search, bounded by
/// `|W_i|·max(n_max, intra classes)·T·|H|` (2³²).
pub const MAX_SEARCH: f64 = 4_294_967_296.0;
/// Most iterations of one job (2⁵³, exact in an `f64`).
pub const MAX_ITERATIONS: u64 = 1 << 53;

/// Most data units ([`DATA_UNIT_BYTES`]) a NIC pool or a ring's
/// reservation may carry in one slot (10³⁰⁰): beyond it capacities and
/// prices overflow, so a longer slot is refused with
/// [`GadgetError::SlotTooLong`].
pub const MAX_DATA_PER_SLOT: f64 = 1e300;

/// `bytes_per_s` sustained for one slot of `slot_length_s` seconds, in data
/// units ([`DATA_UNIT_BYTES`]): the one conversion of bandwidth into the
/// ledger's NIC unit.
///
/// ```
/// use dmlsched::algorithms::gadget::data_per_slot;
/// use dmlsched::model::units::gbps;
/// // 25 Gbit/s for 60 s is 187 500 MB.
/// assert_eq!(data_per_slot(gbps(25.0), 60.0), 187_500.0);
/// ```
pub fn data_per_slot(bytes_per_s: f64, slot_length_s: f64) -> f64 {
    bytes_per_s * slot_length_s / DATA_UNIT_BYTES
}

/// `u(δ)` for the completion delay (job completion time)
/// `δ = t̂ − a + 1 ≥ 1`: the crate's utility of the elapsed slots
/// `δ − 1 = t̂ − a`. The one conversion between the two conventions.
///
/// ```
/// use dmlsched::algorithms::gadget::utility_at_jct;
/// use dmlsched::model::Utility;
/// // g1/(1 + e^{g2(δ − 5)}) over δ is the crate's sigmoid with g3 = 4.
/// let u = Utility::Sigmoid { g1: 10.0, g2: 1.0, g3: 4.0 };
/// assert_eq!(utility_at_jct(&u, 5), 5.0);
/// ```
pub fn utility_at_jct(u: &Utility, jct: u32) -> f64 {
    u.value(jct.saturating_sub(1))
}

/// `ln u(δ)` for the completion delay `δ` (see [`utility_at_jct`]), exact
/// where the value underflows.
pub fn ln_utility_at_jct(u: &Utility, jct: u32) -> f64 {
    u.ln_value(jct.saturating_sub(1))
}

/// One usable server (`O_h ≥ 1`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct GadgetServer {
    /// The machine.
    pub(crate) machine: MachineId,
    /// Its position in the instance's cluster.
    pub(crate) position: usize,
    /// `O_h`: GPUs usable by ring workers (every job's worker demand fits
    /// `O_h` times, resource by resource).
    pub(crate) gpus: u32,
    /// `B_h`: NIC reservation pool, data units per slot, both directions:
    /// `2·(c^NIC − O_h·max_i d_i^NIC)·slot`, the line rate left after the
    /// workers' own NIC demands (0 for ring workers without one).
    pub(crate) nic: f64,
    /// Internal bandwidth, bytes per second.
    pub(crate) intra_bps: f64,
    /// Index of the server's internal-bandwidth class: servers of equal
    /// internal bandwidth share one, numbered in increasing bandwidth.
    pub(crate) class: u32,
}

/// The usable servers of an instance, in the instance's order; ledger
/// machine `k` is `servers[k]`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct GadgetCluster {
    /// Horizon `T`, slots.
    pub(crate) horizon: u32,
    /// Slot length, seconds.
    pub(crate) slot_length_s: f64,
    /// The usable servers.
    pub(crate) servers: Vec<GadgetServer>,
    /// The distinct internal bandwidths (bytes per second), ascending: a
    /// single-server ring's duration depends on its server's class.
    pub(crate) intra_classes: Vec<f64>,
    /// The cluster's ring parameters (`C`, `ξ2`).
    pub(crate) ring: RingParams,
}

impl GadgetCluster {
    /// The usable servers of `instance`, for the ring jobs `rings`.
    ///
    /// # Errors
    ///
    /// [`GadgetError::NoServers`] when no machine can host a worker,
    /// [`GadgetError::TooLarge`] beyond [`MAX_SERVER_GPUS`] or
    /// [`MAX_CELLS`].
    pub(crate) fn new(instance: &Instance, rings: &[&RarJob]) -> Result<Self, GadgetError> {
        let slot = instance.slot_length_s();
        let worker_nic = rings.iter().map(|r| r.worker.nic_bps).fold(0.0, f64::max);
        let mut servers = Vec::new();
        for (position, m) in instance.cluster().machines.iter().enumerate() {
            let fit = usable_gpus(m, rings.iter().map(|r| &r.worker));
            too_large("usable GPUs of one machine", fit, MAX_SERVER_GPUS)?;
            if fit < 1.0 {
                continue;
            }
            let left = (m.capacity.nic_bps - fit * worker_nic).max(0.0);
            slot_too_long(|| format!("{}'s NIC", m.id), left, slot)?;
            servers.push(GadgetServer {
                machine: m.id,
                position,
                gpus: fit as u32,
                nic: 2.0 * data_per_slot(left, slot),
                intra_bps: m.intra_bandwidth_bps,
                class: 0,
            });
        }
        if servers.is_empty() {
            return Err(GadgetError::NoServers);
        }
        too_large(
            "horizon × usable servers",
            f64::from(instance.horizon_slots()) * servers.len() as f64,
            MAX_CELLS as f64,
        )?;
        let mut intra_classes: Vec<f64> = servers.iter().map(|s| s.intra_bps).collect();
        intra_classes.sort_by(f64::total_cmp);
        intra_classes.dedup();
        for s in &mut servers {
            s.class = intra_classes.partition_point(|&b| b < s.intra_bps) as u32;
        }
        Ok(GadgetCluster {
            horizon: instance.horizon_slots(),
            slot_length_s: slot,
            servers,
            intra_classes,
            ring: instance.cluster().ring,
        })
    }

    /// An empty ledger: one pool, resources `[GPU, NIC]`, capacities
    /// `[O_h, B_h]` per server.
    ///
    /// # Errors
    ///
    /// The ledger's validation errors (none for a converted cluster).
    pub(crate) fn ledger(&self) -> crate::Result<Ledger> {
        let machines = self
            .servers
            .iter()
            .map(|s| (POOL, vec![f64::from(s.gpus), s.nic]))
            .collect();
        Ok(Ledger::new(self.horizon, RESOURCES, machines)?)
    }
}

/// The ledger of `cluster` with headroom prices for `jobs`: on server `h`
/// the GPU exponent capacity is `O_h − δ^GPU + 1` with
/// `δ^GPU = min(O_h, max_i max W_i)` (counts), and the NIC's is
/// `max(0, B_h − δ^NIC)` with `δ^NIC` the largest ring reservation `2b_i`
/// that fits `B_h` among jobs with a multi-server shape (amounts). A plan
/// blocked by a cell's residual then needs more than `c − δ` there, so the
/// cell is priced at `U`.
///
/// # Errors
///
/// The ledger's validation errors (none for a converted cluster).
pub(crate) fn headroom_ledger(
    cluster: &GadgetCluster,
    jobs: &[GadgetJob],
) -> crate::Result<Ledger> {
    with_price_capacities(cluster.ledger()?, &headroom_capacities(cluster, jobs))
}

/// The headroom price capacities `(GPU, NIC)` of every server for `jobs`.
pub(crate) fn headroom_capacities(cluster: &GadgetCluster, jobs: &[GadgetJob]) -> Vec<[f64; 2]> {
    let shapes = || {
        jobs.iter()
            .flat_map(|j| j.shapes.iter().map(move |s| (j, s)))
    };
    let max_w = shapes().map(|(_, s)| s.workers).max().unwrap_or(1);
    cluster
        .servers
        .iter()
        .map(|server| {
            let gpu = server.gpus - server.gpus.min(max_w) + 1;
            let nic_delta = shapes()
                .filter(|(j, s)| s.servers >= 2 && nic_fits(server.nic, server.nic, j.ring_nic))
                .map(|(j, _)| j.ring_nic)
                .fold(0.0, f64::max);
            [f64::from(gpu), (server.nic - nic_delta).max(0.0)]
        })
        .collect()
}

/// `ledger` with the price capacities `caps` (GPU, NIC) of every server.
pub(crate) fn with_price_capacities(
    mut ledger: Ledger,
    caps: &[[f64; 2]],
) -> crate::Result<Ledger> {
    for (k, &[gpu, nic]) in caps.iter().enumerate() {
        let m = MachineId(k as u32);
        ledger = ledger
            .with_price_capacity(m, GPU, gpu)?
            .with_price_capacity(m, NIC, nic)?;
    }
    Ok(ledger)
}

/// One ring shape of a job: `w` workers on exactly `n` servers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shape {
    /// Workers `w`.
    pub(crate) workers: u32,
    /// Servers `n`.
    pub(crate) servers: u32,
    /// Duration `d(w, n)`, slots (≤ the horizon).
    pub(crate) slots: u32,
    /// Iterations `F^eff(w)` trained.
    pub(crate) iterations: u64,
    /// Per-iteration time `τ(w, n)`, slots (`d/F` under a duration table).
    pub(crate) tau_slots: f64,
    /// For `n = 1`, the internal-bandwidth class of the servers it may use
    /// (`None`: any server).
    pub(crate) class: Option<u32>,
}

/// One job in the scheduler's terms: its shapes, durations and values.
///
/// Outside the crate it is a handle: the jobs
/// [`Gadget::engine`](super::Gadget::engine) returns, in arrival order, to
/// step the engine with; its fields are the scheduler's working model.
#[derive(Debug, Clone, PartialEq)]
pub struct GadgetJob {
    /// The job's id.
    pub(crate) id: JobId,
    /// Its position in [`Instance::jobs`].
    pub(crate) position: usize,
    /// Its tenant, for the fairness weight.
    pub(crate) tenant: Option<String>,
    /// Arrival slot `a_i` (0-based); the delay counts from here.
    pub(crate) arrival: u32,
    /// First slot a plan may use (`≥ arrival`): the arrival slot offline,
    /// the next slot boundary in the simulator.
    pub(crate) earliest: u32,
    /// The utility (of the elapsed slots; see [`utility_at_jct`]).
    pub(crate) utility: Utility,
    /// Fairness weight `ω_i`, frozen at arrival (1 until then).
    pub(crate) omega: f64,
    /// Energy price `e` per GPU-slot.
    pub(crate) energy_price: f64,
    /// `F^req`: iterations requested.
    pub(crate) iterations_requested: u64,
    /// `F^eff`: iterations trained at the requested worker count.
    pub(crate) iterations_effective: u64,
    /// `G_i`: requested (largest allowed) worker count.
    pub(crate) requested_workers: u32,
    /// `b_i`, bytes per second per direction, when the job reserves
    /// bandwidth (without it the job runs on one server).
    pub(crate) reserved_bps: Option<f64>,
    /// `2b_i` in data units per slot: the NIC every server of a
    /// multi-server ring reserves (0 without a reservation).
    pub(crate) ring_nic: f64,
    /// The shapes `(w, n)` the job may run in, `w` ascending, then `n`,
    /// then duration.
    pub(crate) shapes: Vec<Shape>,
    /// Usable servers the job may use (by server index; `None`: all).
    pub(crate) allowed: Option<Vec<bool>>,
    /// Latest start, in slots after the arrival (`None`: no cap).
    pub(crate) lookahead: Option<u32>,
}

/// What a job can reach on the empty cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EmptyCluster {
    /// `(shape, ln v̄)`: the best value, starting at the earliest slot.
    pub(crate) best: Option<(usize, f64)>,
    /// `ln v^late`: the best value among shapes completing in the latest
    /// slot any shape can complete in (`−∞` when not positive).
    pub(crate) ln_late: f64,
    /// The fastest shape (fewest slots, then servers, then workers).
    pub(crate) fastest: Option<usize>,
}

impl GadgetJob {
    /// The same job usable from slot `earliest` on (clamped to `≥ arrival`).
    pub(crate) fn starting_at(mut self, earliest: u32) -> Self {
        self.earliest = earliest.max(self.arrival);
        self
    }

    /// Whether the job may use server `k`.
    pub(crate) fn may_use(&self, k: usize) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|a| a.get(k).copied().unwrap_or(false))
    }

    /// Completion delay `δ = s + d − a` of a start `s` and duration `d`.
    pub(crate) fn jct(&self, start: u32, slots: u32) -> u32 {
        start.saturating_add(slots).saturating_sub(self.arrival)
    }

    /// `v = ω·u(δ) − e·w·d` of shape `shape` started in slot `start`.
    pub(crate) fn value(&self, start: u32, shape: &Shape) -> f64 {
        let energy = self.energy_price * f64::from(shape.workers) * f64::from(shape.slots);
        self.omega * utility_at_jct(&self.utility, self.jct(start, shape.slots)) - energy
    }

    /// `ln v` (`−∞` when `v ≤ 0`), exact in log space without energy price.
    pub(crate) fn ln_value(&self, start: u32, shape: &Shape) -> f64 {
        if self.energy_price == 0.0 {
            self.omega.ln() + ln_utility_at_jct(&self.utility, self.jct(start, shape.slots))
        } else {
            let v = self.value(start, shape);
            if v > 0.0 { v.ln() } else { f64::NEG_INFINITY }
        }
    }

    /// The latest start of `shape` (horizon and lookahead), `None` when it
    /// cannot start in `[earliest, T − d]`.
    pub(crate) fn latest_start(&self, shape: &Shape, horizon: u32) -> Option<u32> {
        let mut last = horizon.checked_sub(shape.slots)?;
        if let Some(l) = self.lookahead {
            last = last.min(self.arrival.saturating_add(l));
        }
        (last >= self.earliest).then_some(last)
    }

    /// Whether `shape` embeds on the empty cluster: `n = 1` on a server of
    /// its class with `O_h ≥ w`; `n ≥ 2` on the `n` servers with
    /// `O_h ≥ 1` and `B_h ≥ 2b_i` of largest `min(O_h, w − n + 1)`.
    pub(crate) fn fits_empty(&self, cluster: &GadgetCluster, shape: &Shape) -> bool {
        let servers = cluster.servers.iter().enumerate();
        let eligible = servers.filter(|(k, _)| self.may_use(*k));
        if shape.servers == 1 {
            return eligible
                .filter(|(_, s)| shape.class.is_none_or(|c| c == s.class))
                .any(|(_, s)| s.gpus >= shape.workers);
        }
        let cap = shape.workers - shape.servers + 1;
        let mut caps: Vec<u32> = eligible
            .filter(|(_, s)| nic_fits(s.nic, s.nic, self.ring_nic))
            .map(|(_, s)| s.gpus.min(cap))
            .collect();
        if caps.len() < shape.servers as usize {
            return false;
        }
        caps.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = caps
            .iter()
            .take(shape.servers as usize)
            .map(|&c| u64::from(c))
            .sum();
        top >= u64::from(shape.workers)
    }

    /// The best value, the latest value and the fastest shape on the empty
    /// cluster over `horizon` slots.
    pub(crate) fn empty_cluster(&self, cluster: &GadgetCluster, horizon: u32) -> EmptyCluster {
        let mut out = EmptyCluster {
            best: None,
            ln_late: f64::NEG_INFINITY,
            fastest: None,
        };
        let mut latest = None::<u32>;
        for (k, shape) in self.shapes.iter().enumerate() {
            let Some(last) = self.latest_start(shape, horizon) else {
                continue;
            };
            if !self.fits_empty(cluster, shape) {
                continue;
            }
            let ln_v = self.ln_value(self.earliest, shape);
            if out.best.is_none_or(|(_, b)| ln_v > b) {
                out.best = Some((k, ln_v));
            }
            let done = last + shape.slots - 1;
            let ln_late = self.ln_value(last, shape);
            match latest {
                Some(l) if done < l => {}
                Some(l) if done == l => out.ln_late = out.ln_late.max(ln_late),
                _ => {
                    latest = Some(done);
                    out.ln_late = ln_late;
                }
            }
            let key = |s: &Shape| (s.slots, s.servers, s.workers);
            if out
                .fastest
                .is_none_or(|f| key(shape) < key(&self.shapes[f]))
            {
                out.fastest = Some(k);
            }
        }
        out
    }
}

/// Whether a reservation `need` fits a free NIC amount `free` of a pool of
/// `capacity` (relative slack 10⁻¹², far below the ledger's and the
/// checker's tolerances).
pub(crate) fn nic_fits(free: f64, capacity: f64, need: f64) -> bool {
    need <= free + 1e-12 * capacity.max(1.0)
}

/// `τ(w, n)` in slots: the per-iteration time of a ring of `w` workers on
/// `n` servers with no contention,
/// `2(w−1)/w·m/B(n) + (w−1)/w·m/C + ξ2·n + K` with `B(1)` the server's
/// internal bandwidth and `B(n ≥ 2) = b_i`, the reserved rate: the
/// simulator's and the checker's timing of a reserving ring
/// ([`RarTiming::iteration_time_reserved_s`]). A job without a reservation
/// only runs on one server (`n = 1`).
fn iteration_slots(
    ring: &RarJob,
    params: &RingParams,
    shape: (u32, u32),
    intra_bps: f64,
    reserved_bps: Option<f64>,
    slot_length_s: f64,
) -> Result<f64, TimingError> {
    let timing = RarTiming::from_job(ring, shape.0, intra_bps, params)?;
    let seconds = match reserved_bps {
        Some(b) => timing.iteration_time_reserved_s(shape.1, b),
        None => timing.iteration_time_s(shape.1, 1.0),
    };
    Ok(seconds / slot_length_s)
}

/// `d = ⌈F·τ⌉` (`Fractional`) or `⌈F/⌊1/τ⌋⌉` (`Floor`), at least 1;
/// `None` above the horizon.
fn duration(
    job: JobId,
    shape: (u32, u32),
    iterations: u64,
    tau: f64,
    mode: ProgressMode,
    horizon: u32,
) -> Result<Option<u32>, GadgetError> {
    let f = iterations as f64;
    let d = match mode {
        ProgressMode::Fractional => ceil_tol(f * tau),
        ProgressMode::Floor => {
            let per_slot = if tau > 0.0 {
                floor_tol(1.0 / tau)
            } else {
                f64::INFINITY
            };
            if per_slot < 1.0 {
                return Err(GadgetError::NoProgress {
                    job,
                    workers: shape.0,
                    servers: shape.1,
                    tau_slots: tau,
                });
            }
            ceil_tol(f / per_slot)
        }
    }
    .max(1.0);
    Ok((d.is_finite() && d <= f64::from(horizon)).then_some(d as u32))
}

/// The worker counts `W_i` of a job under `choice`.
fn worker_counts(
    job: &Job,
    counts: &WorkerCounts,
    choice: WorkerChoice,
) -> Result<Vec<u32>, GadgetError> {
    let mut allowed = match counts {
        WorkerCounts::Fixed(g) => vec![*g],
        WorkerCounts::Allowed(v) => {
            if v.len() > MAX_WORKER_COUNTS {
                return Err(GadgetError::UnsupportedJob {
                    job: job.id,
                    reason: format!(
                        "{} allowed worker counts, at most {MAX_WORKER_COUNTS}",
                        v.len()
                    ),
                });
            }
            v.clone()
        }
    };
    allowed.sort_unstable();
    allowed.dedup();
    let g = counts.max();
    Ok(match choice {
        WorkerChoice::Requested => vec![g],
        WorkerChoice::Allowed => allowed,
        WorkerChoice::PowersOfTwo => {
            let p: Vec<u32> = allowed
                .into_iter()
                .filter(|w| w.is_power_of_two())
                .collect();
            if p.is_empty() { vec![g] } else { p }
        }
    })
}

/// The scheduler's view of an instance: the usable servers and every job in
/// arrival order (ties by position).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GadgetModel {
    /// The usable servers.
    pub(crate) cluster: GadgetCluster,
    /// The jobs in arrival order.
    pub(crate) jobs: Vec<GadgetJob>,
}

impl GadgetModel {
    /// Converts `instance` under `params` (worker counts, iterations trained,
    /// work unit, progress mode, server cap, lookahead, energy price,
    /// duration tables).
    ///
    /// # Errors
    ///
    /// [`GadgetError`]: invalid options, no job, a job that is not
    /// ring-all-reduce or outside the model, no usable server, a size guard,
    /// no progress in `Floor` mode.
    pub(crate) fn new(instance: &Instance, params: &GadgetParams) -> Result<Self, GadgetError> {
        params.validate()?;
        let all = instance.jobs();
        if all.is_empty() {
            return Err(GadgetError::NoJobs);
        }
        too_large("jobs", all.len() as f64, MAX_JOBS as f64)?;
        let mut rings = Vec::with_capacity(all.len());
        for job in all {
            match &job.architecture {
                Architecture::RingAllReduce(r) => rings.push(r),
                Architecture::ParameterServer(_) => {
                    return Err(GadgetError::UnsupportedJob {
                        job: job.id,
                        reason: "not a ring-all-reduce job".into(),
                    });
                }
            }
        }
        if let Some(id) = params
            .durations
            .keys()
            .find(|id| instance.job(**id).is_none())
        {
            return Err(GadgetError::InvalidOption {
                name: "durations",
                reason: format!("{id} is not in the instance"),
            });
        }
        let cluster = GadgetCluster::new(instance, &rings)?;
        let jobs = instance
            .arrival_order()
            .into_iter()
            .map(|p| convert_job(instance, &cluster, p, rings[p], params))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GadgetModel { cluster, jobs })
    }
}

/// The job at position `p`, a ring-all-reduce job `ring`.
pub(crate) fn convert_job(
    instance: &Instance,
    cluster: &GadgetCluster,
    p: usize,
    ring: &RarJob,
    params: &GadgetParams,
) -> Result<GadgetJob, GadgetError> {
    let job = &instance.jobs()[p];
    let unsupported = |reason: String| GadgetError::UnsupportedJob {
        job: job.id,
        reason,
    };
    let types = crate::algorithms::gpu_types_of(instance.cluster());
    let speed = crate::algorithms::one_speed(job, &types).map_err(unsupported)?;
    let ring = &*ring.at_speed(speed);
    let requested = ring.iterations;
    let effective = match params.excessive_training {
        ExcessiveTraining::StopAtConvergence => ring.convergence_iterations.unwrap_or(requested),
        ExcessiveTraining::TrainRequested => requested,
    };
    too_large("iterations", requested as f64, MAX_ITERATIONS as f64)?;
    let slot = instance.slot_length_s();
    if let Some(b) = ring.reserved_bandwidth_bps {
        slot_too_long(|| format!("{}'s reserved bandwidth", job.id), b, slot)?;
    }
    let ring_nic = ring
        .reserved_bandwidth_bps
        .map_or(0.0, |b| 2.0 * data_per_slot(b, slot));
    if ring_nic > 0.0 && ring_nic < MIN_POSITIVE_DEMAND {
        return Err(unsupported(format!(
            "its reservation 2b = {ring_nic} data units per slot is below {MIN_POSITIVE_DEMAND}"
        )));
    }
    let allowed = job.allowed_machines.as_ref().map(|list| {
        cluster
            .servers
            .iter()
            .map(|s| list.contains(&s.machine))
            .collect()
    });
    let mut out = GadgetJob {
        id: job.id,
        position: p,
        tenant: job.tenant.clone(),
        arrival: instance.arrival_slot(job),
        earliest: instance.arrival_slot(job),
        utility: job.utility.clone(),
        omega: 1.0,
        energy_price: params.energy_price,
        iterations_requested: requested,
        iterations_effective: effective,
        requested_workers: ring.workers.max(),
        reserved_bps: ring.reserved_bandwidth_bps,
        ring_nic,
        shapes: Vec::new(),
        allowed,
        lookahead: params.lookahead,
    };
    let counts = worker_counts(job, &ring.workers, params.worker_choice)?;
    let bound = counts.len() as f64
        * f64::from(params.max_servers.max(cluster.intra_classes.len() as u32))
        * f64::from(cluster.horizon)
        * cluster.servers.len() as f64;
    too_large(
        "worker counts × servers per ring × horizon × usable servers (the search of one job)",
        bound,
        MAX_SEARCH,
    )?;
    out.shapes = shapes(&out, cluster, ring, &counts, params)?;
    Ok(out)
}

/// `F^eff(w)`: `F^eff` counted in iterations, or `⌈F^eff·G/w⌉` in samples.
fn iterations_at(job: &GadgetJob, w: u32, unit: WorkUnit) -> u64 {
    match unit {
        WorkUnit::Iterations => job.iterations_effective,
        WorkUnit::Samples => {
            let total =
                u128::from(job.iterations_effective) * u128::from(job.requested_workers.max(1));
            u64::try_from(total.div_ceil(u128::from(w.max(1)))).unwrap_or(u64::MAX)
        }
    }
}

/// Every shape `(w, n)`, `w ∈ W_i`, `n ≤ min(w, |H|, n_max)` (only `n = 1`
/// without a reservation), with its duration; a duration table replaces
/// the timing model.
fn shapes(
    job: &GadgetJob,
    cluster: &GadgetCluster,
    ring: &RarJob,
    counts: &[u32],
    params: &GadgetParams,
) -> Result<Vec<Shape>, GadgetError> {
    let unsupported = |reason: String| GadgetError::UnsupportedJob {
        job: job.id,
        reason,
    };
    let table = params.durations.get(&job.id);
    let max_n = |w: u32| {
        if job.reserved_bps.is_none() {
            1
        } else {
            w.min(cluster.servers.len() as u32).min(params.max_servers)
        }
    };
    if let Some(t) = table
        && let Some((w, n)) = t
            .slots
            .keys()
            .find(|(w, n)| !counts.contains(w) || *n == 0 || *n > max_n(*w))
    {
        return Err(GadgetError::InvalidOption {
            name: "durations",
            reason: format!("{}: ({w}, {n}) is not a ring shape the job may use", job.id),
        });
    }
    let min_intra = cluster.intra_classes.first().copied().unwrap_or(0.0);
    if let Some(b) = job.reserved_bps
        && counts.iter().any(|&w| max_n(w) >= 2)
        && b > min_intra
    {
        return Err(unsupported(format!(
            "its reserved bandwidth {b} B/s exceeds the internal bandwidth {min_intra} B/s of a server"
        )));
    }
    let horizon = cluster.horizon;
    let mut out = Vec::new();
    for &w in counts {
        let iterations = iterations_at(job, w, params.work_unit);
        for n in 1..=max_n(w) {
            if let Some(t) = table {
                if let Some(&d) = t.slots.get(&(w, n))
                    && d <= horizon
                {
                    let tau_slots = f64::from(d) / iterations.max(1) as f64;
                    out.push(Shape {
                        workers: w,
                        servers: n,
                        slots: d,
                        iterations,
                        tau_slots,
                        class: None,
                    });
                }
                continue;
            }
            out.extend(timed_shapes(
                job,
                cluster,
                ring,
                (w, n),
                iterations,
                params,
            )?);
        }
    }
    Ok(out)
}

/// The shapes of `(w, n)` by the timing model: one per internal-bandwidth
/// class for `n = 1` (shortest first), one for `n ≥ 2`; none above the
/// horizon.
fn timed_shapes(
    job: &GadgetJob,
    cluster: &GadgetCluster,
    ring: &RarJob,
    (w, n): (u32, u32),
    iterations: u64,
    params: &GadgetParams,
) -> Result<Vec<Shape>, GadgetError> {
    let unsupported = |reason: String| GadgetError::UnsupportedJob {
        job: job.id,
        reason,
    };
    let classes: Vec<Option<u32>> = if n == 1 {
        (0..cluster.intra_classes.len() as u32).map(Some).collect()
    } else {
        vec![None]
    };
    let min_intra = cluster.intra_classes.first().copied().unwrap_or(0.0);
    let mut out = Vec::new();
    for class in classes {
        let intra = class.map_or(min_intra, |c| cluster.intra_classes[c as usize]);
        let tau = iteration_slots(
            ring,
            &cluster.ring,
            (w, n),
            intra,
            job.reserved_bps,
            cluster.slot_length_s,
        )
        .map_err(|e| unsupported(e.to_string()))?;
        if !(tau.is_finite() && tau >= 0.0) {
            return Err(unsupported(format!(
                "iteration time {tau} slots with {w} workers on {n} servers is not finite and ≥ 0"
            )));
        }
        let d = duration(
            job.id,
            (w, n),
            iterations,
            tau,
            params.progress,
            cluster.horizon,
        )?;
        if let Some(slots) = d {
            out.push(Shape {
                workers: w,
                servers: n,
                slots,
                iterations,
                tau_slots: tau,
                class,
            });
        }
    }
    out.sort_by_key(|s| (s.slots, s.class));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_both_modes() {
        let j = JobId(0);
        let frac = |f, tau| duration(j, (4, 2), f, tau, ProgressMode::Fractional, 100).unwrap();
        assert_eq!(frac(12, 0.415), Some(5));
        assert_eq!(frac(12, 0.425), Some(6));
        assert_eq!(frac(12, 0.0), Some(1));
        assert_eq!(frac(1000, 1.0), None);
        let floor = |f, tau| duration(j, (4, 2), f, tau, ProgressMode::Floor, 100);
        assert_eq!(floor(12, 0.415).unwrap(), Some(6));
        assert_eq!(floor(12, 0.0).unwrap(), Some(1));
        assert!(matches!(
            floor(12, 1.5),
            Err(GadgetError::NoProgress { workers: 4, .. })
        ));
    }
}
