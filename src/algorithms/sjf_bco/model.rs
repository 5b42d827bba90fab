//! The ring-all-reduce model of SJF-BCO, converted once from an
//! [`Instance`]: servers with usable GPUs, jobs with their gang size `G_j`,
//! iterations `F_j`, estimate `ρ̂_j` and timing, all times in slots.

use super::error::SjfBcoError;
use crate::model::FIT_TOL;
use crate::model::units::Num;
use crate::model::{
    Architecture, GpuId, Instance, JobId, Machine, MachineId, RarJob, ResourceKind, Resources,
    TaskKind,
};
use crate::timing::{RarTiming, effective_contenders};

/// Most usable GPUs in the cluster.
pub const MAX_GPUS: u64 = 1 << 20;
/// Most jobs.
pub const MAX_JOBS: usize = 1 << 16;
/// Most `jobs × GPUs` (the work of one placement pass).
pub const MAX_JOBS_TIMES_GPUS: f64 = (1u64 << 26) as f64;
/// Most slots any duration, horizon or simulated time may reach (2⁴⁴).
pub const MAX_SLOTS: u64 = 1 << 44;
/// Relative slack when counting how many workers fit a capacity (far
/// below the checker's tolerance, so a count never overshoots it).
const FIT_SLACK: f64 = 1e-12;
/// Most iterations of one job (2⁵³, exact in an `f64`).
pub const MAX_ITERATIONS: u64 = 1 << 53;

/// How the per-iteration time `τ_j` of a placed job is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum TimeModel {
    /// Contention count, degradation `f(α, k)`, per-server overhead
    /// ([`crate::timing::rar`]): the default.
    #[default]
    Rar,
    /// `τ_j = ρ̂_j / F_j`, the same on every placement and under any
    /// contention: every job takes its estimate (exact comparisons and
    /// hand-checked cases).
    FixedDuration,
}

/// One server of the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RarServer {
    /// The machine.
    pub(crate) machine: MachineId,
    /// `O_s`: GPUs usable by ring workers (every job's worker demand fits
    /// `O_s` times; 0 when the machine may not host workers).
    pub(crate) gpus: u32,
    /// Bandwidth inside the machine, bytes per second.
    pub(crate) intra_bps: f64,
    /// Index of the server's first GPU in the flat GPU numbering.
    pub(crate) first_gpu: usize,
}

/// One job of the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RarModelJob {
    /// The job's id.
    pub(crate) id: JobId,
    /// Its position in [`Instance::jobs`].
    pub(crate) position: usize,
    /// `G_j`: GPUs (= workers), the job's largest allowed worker count.
    pub(crate) gpus: u32,
    /// `F_j`: iterations.
    pub(crate) iterations: f64,
    /// `ρ̂_j`: estimated execution time, slots.
    pub(crate) estimate: f64,
    /// `ρ^min_j`: a proven lower bound on the job's execution time on any
    /// placement under any contention, slots.
    pub(crate) min_duration: f64,
    /// The timing model of the job at `G_j` workers (seconds; its
    /// `intra_bps` is replaced by the server's on one server).
    pub(crate) timing: RarTiming,
    /// Bytes per second the ring reserves on each server when it spans
    /// several ([`RarJob::reserved_bandwidth_bps`]; 0 without a
    /// reservation). The trials keep such a ring on one server whenever
    /// one server can hold it.
    pub(crate) reserved_bps: f64,
}

/// The model: servers, jobs and the flat GPU numbering (server-major, local
/// index minor), with per-iteration times in slots.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RarModel {
    /// Servers in the cluster's order.
    pub(crate) servers: Vec<RarServer>,
    /// Jobs in the instance's order.
    pub(crate) jobs: Vec<RarModelJob>,
    /// Server index of every flat GPU.
    pub(crate) gpu_server: Vec<u32>,
    /// Slot length, seconds.
    pub(crate) slot_s: f64,
    /// `ξ1`: effective over counted contenders.
    pub(crate) contender_ratio: f64,
    /// How `τ` is computed.
    pub(crate) time_model: TimeModel,
}

impl RarModel {
    /// Converts an instance. `estimates` (slots, one per job in instance
    /// order) replaces the default `ρ̂_j = F_j·τ⁰_j`, where `τ⁰_j` is the
    /// uncontended single-server iteration time on the fastest machine.
    ///
    /// # Errors
    ///
    /// [`SjfBcoError`]: no job, no usable GPU, a job outside the model, a
    /// job wider than the cluster, a bad estimate, or a size guard.
    pub(crate) fn new(
        instance: &Instance,
        time_model: TimeModel,
        estimates: Option<&[f64]>,
    ) -> Result<RarModel, SjfBcoError> {
        let jobs = instance.jobs();
        if jobs.is_empty() {
            return Err(SjfBcoError::NoJobs);
        }
        too_large("jobs", jobs.len() as f64, MAX_JOBS as f64)?;
        let rings = ring_jobs(instance)?;
        let servers = servers(instance, &rings)?;
        let total: usize = servers.iter().map(|s| s.gpus as usize).sum();
        let gpu_server = servers
            .iter()
            .enumerate()
            .flat_map(|(i, s)| std::iter::repeat_n(i as u32, s.gpus as usize))
            .collect();
        too_large(
            "jobs × GPUs",
            jobs.len() as f64 * total as f64,
            MAX_JOBS_TIMES_GPUS,
        )?;
        if let Some(e) = estimates
            && e.len() != jobs.len()
        {
            return Err(SjfBcoError::InvalidOption {
                name: "estimates",
                reason: format!("{} values for {} jobs", e.len(), jobs.len()),
            });
        }
        let mut model = RarModel {
            servers,
            jobs: Vec::with_capacity(jobs.len()),
            gpu_server,
            slot_s: instance.slot_length_s(),
            contender_ratio: instance.cluster().ring.contender_ratio,
            time_model,
        };
        for (pos, ring) in rings.iter().enumerate() {
            let job = model.job(instance, pos, ring, estimates.map(|e| e[pos]))?;
            model.jobs.push(job);
        }
        Ok(model)
    }

    /// `N`: usable GPUs.
    pub(crate) fn total_gpus(&self) -> usize {
        self.gpu_server.len()
    }

    /// `n_g = max_j G_j`.
    pub(crate) fn largest_job(&self) -> u32 {
        self.jobs.iter().map(|j| j.gpus).max().unwrap_or(0)
    }

    /// The crate's id of a flat GPU.
    pub(crate) fn gpu_id(&self, gpu: usize) -> GpuId {
        let s = &self.servers[self.gpu_server[gpu] as usize];
        GpuId {
            machine: s.machine,
            index: (gpu - s.first_gpu) as u32,
        }
    }

    /// The flat index of a GPU id, if the model has it.
    pub(crate) fn gpu_index(&self, id: GpuId) -> Option<usize> {
        let s = self.servers.iter().find(|s| s.machine == id.machine)?;
        (id.index < s.gpus).then(|| s.first_gpu + id.index as usize)
    }

    /// `τ_j` in slots for job `j` on `servers` = `(server, GPUs)` pairs with
    /// contention count `p` (ignored on one server and under
    /// [`TimeModel::FixedDuration`]).
    pub(crate) fn tau(&self, j: usize, servers: &[(u32, u32)], p: u32) -> f64 {
        let job = &self.jobs[j];
        match self.time_model {
            TimeModel::FixedDuration => job.estimate / job.iterations,
            TimeModel::Rar => {
                if servers.len() <= 1 {
                    let intra = servers.first().map_or(job.timing.intra_bps, |&(s, _)| {
                        self.servers[s as usize].intra_bps
                    });
                    let t = RarTiming {
                        intra_bps: intra,
                        ..job.timing
                    };
                    t.iteration_time_s(1, 1.0) / self.slot_s
                } else {
                    let k = effective_contenders(p, self.contender_ratio);
                    job.timing.iteration_time_s(servers.len() as u32, k) / self.slot_s
                }
            }
        }
    }

    /// Builds job `pos` (its `ρ̂`, `ρ^min` and the guards on its durations).
    fn job(
        &self,
        instance: &Instance,
        pos: usize,
        ring: &RarJob,
        estimate: Option<f64>,
    ) -> Result<RarModelJob, SjfBcoError> {
        let id = instance.jobs()[pos].id;
        let unsupported = |reason: String| SjfBcoError::UnsupportedJob { job: id, reason };
        let gpus = ring.workers.max();
        let total = self.total_gpus() as u64;
        if u64::from(gpus) > total {
            return Err(SjfBcoError::JobCannotFit {
                job: id,
                demand: u64::from(gpus),
                cluster_gpus: total,
            });
        }
        if let Some(reason) = self.reservation_misfit(instance, ring, gpus) {
            return Err(unsupported(reason));
        }
        too_large("iterations", ring.iterations as f64, MAX_ITERATIONS as f64)?;
        let fastest = self
            .servers
            .iter()
            .filter(|s| s.gpus > 0)
            .map(|s| s.intra_bps)
            .fold(0.0, f64::max);
        let timing = RarTiming::from_job(ring, gpus, fastest, &instance.cluster().ring)
            .map_err(|e| unsupported(e.to_string()))?;
        let f = ring.iterations as f64;
        let tau0 = timing.iteration_time_s(1, 1.0) / self.slot_s;
        let usable = self.servers.iter().filter(|s| s.gpus > 0).count() as u32;
        let spread = gpus.min(usable);
        let worst_k = effective_contenders(self.jobs_len_hint(instance), self.contender_ratio);
        let tau_max = timing.iteration_time_s(spread, worst_k) / self.slot_s;
        let mut tau_min = tau0;
        if spread >= 2 {
            tau_min = tau_min.min(timing.iteration_time_s(2, 1.0) / self.slot_s);
        }
        if !(tau_min.is_finite() && tau_min > 0.0 && tau_max.is_finite()) {
            return Err(unsupported(format!(
                "iteration time {tau_min} to {tau_max} slots is not finite and positive"
            )));
        }
        too_large("F·τ (slots)", f * tau_max.max(tau0), MAX_SLOTS as f64)?;
        let estimate = match estimate {
            None => f * tau0,
            Some(e) if e.is_finite() && e > 0.0 => {
                too_large("estimate (slots)", e, MAX_SLOTS as f64)?;
                e
            }
            Some(e) => {
                return Err(SjfBcoError::InvalidOption {
                    name: "estimates",
                    reason: format!("{id}: {e} is not finite and positive"),
                });
            }
        };
        let min_duration = match self.time_model {
            TimeModel::Rar => f * tau_min,
            TimeModel::FixedDuration => estimate,
        };
        Ok(RarModelJob {
            id,
            position: pos,
            gpus,
            iterations: f,
            estimate,
            min_duration,
            timing,
            reserved_bps: ring.reserved_nic_bps(2),
        })
    }

    /// Why a ring of `gpus` workers that reserves bandwidth cannot be placed
    /// on the empty cluster, if it cannot: no server holds all its workers
    /// (`O_s < G`), and the servers, each keeping the reserved
    /// `reserved_bandwidth_bps` of NIC per direction besides its workers,
    /// hold fewer than `G` of them together. `None` when it fits, or
    /// reserves nothing.
    fn reservation_misfit(&self, instance: &Instance, ring: &RarJob, gpus: u32) -> Option<String> {
        let b = ring.reserved_nic_bps(2);
        let one = self.servers.iter().map(|s| s.gpus).max().unwrap_or(0);
        if b <= 0.0 || one >= gpus {
            return None;
        }
        let machines = &instance.cluster().machines;
        let mut spread = 0u64;
        for (s, m) in self.servers.iter().zip(machines) {
            let mut room = m.clone();
            room.capacity.nic_bps -= b;
            if s.gpus > 0 && room.capacity.nic_bps >= -FIT_TOL * m.capacity.nic_bps.abs().max(1.0) {
                let fit = usable_gpus(&room, [&ring.worker]).min(f64::from(s.gpus));
                spread += fit as u64;
            }
        }
        if spread >= u64::from(gpus) {
            return None;
        }
        let nic = machines
            .iter()
            .map(|m| m.capacity.nic_bps)
            .fold(0.0, f64::max);
        Some(format!(
            "its ring of {gpus} workers does not fit on the empty cluster with its \
             reserved_bandwidth_bps {}: no server holds all its workers (at most {one}), and \
             across servers, each keeping the reservation within its NIC (at most {} per \
             direction), only {spread} fit",
            Num(b),
            Num(nic)
        ))
    }

    /// The largest contention count possible: the number of jobs.
    fn jobs_len_hint(&self, instance: &Instance) -> u32 {
        u32::try_from(instance.jobs().len()).unwrap_or(u32::MAX)
    }
}

/// `Err(TooLarge)` when `value > limit`.
fn too_large(what: &'static str, value: f64, limit: f64) -> Result<(), SjfBcoError> {
    if value > limit {
        Err(SjfBcoError::TooLarge { what, value, limit })
    } else {
        Ok(())
    }
}

/// The ring-all-reduce workloads, checking that every job is in the model.
fn ring_jobs(instance: &Instance) -> Result<Vec<RarJob>, SjfBcoError> {
    let types = crate::algorithms::gpu_types_of(instance.cluster());
    let mut out = Vec::with_capacity(instance.jobs().len());
    for job in instance.jobs() {
        let unsupported = |reason: &str| SjfBcoError::UnsupportedJob {
            job: job.id,
            reason: reason.to_string(),
        };
        let Architecture::RingAllReduce(r) = &job.architecture else {
            return Err(unsupported("not a ring-all-reduce job"));
        };
        if instance.arrival_slot(job) != 0 {
            return Err(unsupported(
                "arrives after the first slot (the problem is offline)",
            ));
        }
        if job.allowed_machines.is_some() {
            return Err(unsupported("placement constraints are not modelled"));
        }
        // SJF-BCO's model has one compute speed per job.
        let speed = crate::algorithms::one_speed(job, &types).map_err(|r| unsupported(&r))?;
        out.push(r.at_speed(speed).into_owned());
    }
    Ok(out)
}

/// Usable GPUs of machine `m` for ring workers of the given demands: the
/// most workers of every demand that fit on it, resource by resource
/// (`min_k ⌊c^k/d^k⌋` over positive entries, with a relative slack of
/// 10⁻¹² far below the checker's tolerance), so that any mix of at most that
/// many workers of these demands fits. 0 when the machine may not host
/// workers; `+∞` without demands. Every ring worker demands exactly one
/// GPU, so the GPU count is one of the limits. Shared by SJF-BCO and the
/// GADGET-style scheduler.
pub(crate) fn usable_gpus<'a>(
    m: &Machine,
    worker_demands: impl IntoIterator<Item = &'a Resources>,
) -> f64 {
    let mut fit = if m.hosts.allows(TaskKind::Worker) {
        f64::INFINITY
    } else {
        0.0
    };
    for demand in worker_demands {
        for kind in ResourceKind::ALL {
            let d = demand.get(kind);
            if d > 0.0 {
                let c = m.capacity.get(kind);
                fit = fit.min((c / d * (1.0 + FIT_SLACK)).floor().max(0.0));
            }
        }
    }
    fit
}

/// Usable GPUs per machine for ring workers of the given demands: the most
/// workers of every demand that fit on it, resource by resource, so that
/// any mix of at most `O_s` workers fits ([`usable_gpus`]); servers in the
/// cluster's order, numbered flat server-major. Possibly none usable.
/// Shared by SJF-BCO and the online ring baselines.
///
/// # Errors
///
/// [`SjfBcoError::TooLarge`] above [`MAX_GPUS`] GPUs on one machine or in
/// all.
pub(crate) fn usable_servers<'a>(
    instance: &Instance,
    worker_demands: impl IntoIterator<Item = &'a Resources> + Clone,
) -> Result<Vec<RarServer>, SjfBcoError> {
    let mut out = Vec::with_capacity(instance.cluster().machines.len());
    let mut first = 0usize;
    for m in &instance.cluster().machines {
        let fit = usable_gpus(m, worker_demands.clone());
        too_large("GPUs of one machine", fit, MAX_GPUS as f64)?;
        let gpus = fit as u32;
        out.push(RarServer {
            machine: m.id,
            gpus,
            intra_bps: m.intra_bandwidth_bps,
            first_gpu: first,
        });
        first += gpus as usize;
        too_large("usable GPUs", first as f64, MAX_GPUS as f64)?;
    }
    Ok(out)
}

/// [`usable_servers`] for the jobs `rings`, with at least one usable GPU.
fn servers(instance: &Instance, rings: &[RarJob]) -> Result<Vec<RarServer>, SjfBcoError> {
    let out = usable_servers(instance, rings.iter().map(|r| &r.worker))?;
    if out.iter().all(|s| s.gpus == 0) {
        return Err(SjfBcoError::NoGpus);
    }
    Ok(out)
}
