//! The input of the formulations: servers with GPUs, rigid ring-all-reduce
//! jobs with a GPU count and an estimated execution time, and the estimate
//! bound `u`.

use std::collections::HashSet;

use super::error::FormulationError;
use crate::model::{
    Architecture, Elasticity, GpuId, Instance, Job, JobId, MachineId, RarJob, WorkerCounts,
};
use crate::timing::RarTiming;

/// Most jobs a [`FormulationInput`] may hold.
pub const MAX_INPUT_JOBS: usize = 4096;

/// Most GPUs (over all servers) a [`FormulationInput`] may hold.
pub const MAX_INPUT_GPUS: u64 = 65_536;

/// Smallest estimated execution time accepted, slots (keeps every load
/// `ρ̂/u` a coefficient the solver represents faithfully).
pub const MIN_ESTIMATE_SLOTS: f64 = 1e-6;

/// Largest estimated execution time accepted, slots.
pub const MAX_ESTIMATE_SLOTS: f64 = 1e12;

/// One server: a machine with `gpus ≥ 1` identical GPUs, numbered
/// `0..gpus` locally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormulationServer {
    /// The machine.
    pub machine: MachineId,
    /// Its GPUs, `O_s ≥ 1`.
    pub gpus: u32,
}

/// One rigid ring-all-reduce job, present at slot 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FormulationJob {
    /// The job.
    pub id: JobId,
    /// GPUs (= workers) it needs at once, `G_j ≥ 1`.
    pub gpus: u32,
    /// Estimated execution time `ρ̂_j`, slots, in
    /// `[MIN_ESTIMATE_SLOTS, MAX_ESTIMATE_SLOTS]`.
    pub est_exec_slots: f64,
}

/// The validated input of every formulation in this module: servers with
/// GPUs, jobs `(G_j, ρ̂_j)` and the estimate bound `u ≥ 1`.
///
/// The contract of the estimates is `ρ̂_j / u ≤ ρ_j`, with `ρ_j` the job's
/// true execution time (slots from start to completion) under any
/// placement and contention. Every bound of this module on a makespan rests
/// on it. The *load* of job `j` is `ρ̂_j / u`.
///
/// Build it with [`FormulationInput::new`] (explicit servers and jobs),
/// [`FormulationInput::from_counts`] (ids `0..`),
/// [`FormulationInput::from_instance`] (contention-free estimates computed
/// from the timing model) or
/// [`FormulationInput::from_instance_with_estimates`].
#[derive(Debug, Clone, PartialEq)]
pub struct FormulationInput {
    servers: Vec<FormulationServer>,
    jobs: Vec<FormulationJob>,
    est_upper: f64,
    total_gpus: u32,
}

impl FormulationInput {
    /// Validates and builds an input.
    ///
    /// # Errors
    ///
    /// In this order: [`FormulationError::InvalidEstUpper`] for `u` NaN,
    /// infinite or below 1; [`FormulationError::TooLarge`] for more than
    /// [`MAX_INPUT_JOBS`] jobs or [`MAX_INPUT_GPUS`] GPUs (or servers);
    /// [`FormulationError::Empty`] without jobs or servers;
    /// [`FormulationError::InvalidServer`] for a server without GPUs or a
    /// repeated machine; then per job [`FormulationError::DuplicateJob`],
    /// [`FormulationError::ZeroGpus`], [`FormulationError::JobCannotFit`] and
    /// [`FormulationError::InvalidEstimate`].
    pub fn new(
        servers: Vec<FormulationServer>,
        jobs: Vec<FormulationJob>,
        est_upper: f64,
    ) -> Result<Self, FormulationError> {
        if !(est_upper.is_finite() && est_upper >= 1.0) {
            return Err(FormulationError::InvalidEstUpper { value: est_upper });
        }
        check_count("jobs", jobs.len(), MAX_INPUT_JOBS as u64)?;
        check_count("servers", servers.len(), MAX_INPUT_GPUS)?;
        let total: u64 = servers.iter().map(|s| u64::from(s.gpus)).sum();
        check_count(
            "GPUs",
            usize::try_from(total).unwrap_or(usize::MAX),
            MAX_INPUT_GPUS,
        )?;
        if jobs.is_empty() {
            return Err(FormulationError::Empty { what: "jobs" });
        }
        if servers.is_empty() {
            return Err(FormulationError::Empty {
                what: "servers with GPUs",
            });
        }
        let mut machines = HashSet::with_capacity(servers.len());
        for s in &servers {
            if s.gpus == 0 {
                return Err(invalid_server(s.machine, "the server has no GPU"));
            }
            if !machines.insert(s.machine) {
                return Err(invalid_server(s.machine, "the machine appears twice"));
            }
        }
        let mut ids = HashSet::with_capacity(jobs.len());
        for j in &jobs {
            check_job(j, total, &mut ids)?;
        }
        Ok(FormulationInput {
            servers,
            jobs,
            est_upper,
            // total ≤ MAX_INPUT_GPUS < 2³².
            total_gpus: total as u32,
        })
    }

    /// [`FormulationInput::new`] with servers `MachineId(0..)` holding
    /// `server_gpus[s]` GPUs and jobs `JobId(0..)` given as
    /// `(G_j, ρ̂_j)` pairs.
    ///
    /// # Errors
    ///
    /// As [`FormulationInput::new`]; the sizes are checked before the
    /// servers and jobs are built.
    pub fn from_counts(
        server_gpus: &[u32],
        jobs: &[(u32, f64)],
        est_upper: f64,
    ) -> Result<Self, FormulationError> {
        check_count("jobs", jobs.len(), MAX_INPUT_JOBS as u64)?;
        check_count("servers", server_gpus.len(), MAX_INPUT_GPUS)?;
        let servers = (0u32..)
            .zip(server_gpus)
            .map(|(i, &gpus)| FormulationServer {
                machine: MachineId(i),
                gpus,
            })
            .collect();
        let jobs = (0u32..)
            .zip(jobs)
            .map(|(i, &(gpus, est))| FormulationJob {
                id: JobId(i),
                gpus,
                est_exec_slots: est,
            })
            .collect();
        Self::new(servers, jobs, est_upper)
    }

    /// The input of an [`Instance`] whose jobs are all rigid, non-preemptible
    /// ring-all-reduce jobs with one worker count, arriving in slot 0, that
    /// may use every machine. Servers are the machines with at least one GPU
    /// (in cluster order); `G_j` is the job's worker count.
    ///
    /// `ρ̂_j` is the **contention-free estimate** `F_j · τ_j^min / slot`:
    /// `τ_j^min` is the fastest per-iteration time the ring-all-reduce timing
    /// model ([`RarTiming`]) allows the job on this cluster, the smaller of
    /// one server (if some server holds `G_j` GPUs; the best intra-server
    /// bandwidth among those) and the fewest servers `n ≥ 2` that hold
    /// `G_j` GPUs with no contention (`k = 1`, so bandwidth `b_e`). No
    /// placement or contention makes the job faster, so `ρ̂_j ≤ ρ_j` and
    /// `u = 1` already satisfies the estimate contract; with `b_i ≥ b_e`
    /// and a job that fits one server this is the paper's `τ^0_j F_j`.
    ///
    /// # Errors
    ///
    /// [`FormulationError::TooLarge`] (jobs or GPUs, checked first),
    /// [`FormulationError::InvalidServer`] for a fractional GPU capacity,
    /// [`FormulationError::NotRingAllReduce`],
    /// [`FormulationError::UnsupportedJob`], [`FormulationError::Timing`],
    /// and the errors of [`FormulationInput::new`].
    pub fn from_instance(instance: &Instance, est_upper: f64) -> Result<Self, FormulationError> {
        let servers = servers_of(instance)?;
        let mut jobs = Vec::with_capacity(instance.jobs().len());
        for job in instance.jobs() {
            let (ring, g) = ring_job(instance, job)?;
            let est = contention_free_estimate(instance, job.id, ring, g, &servers)?;
            jobs.push(FormulationJob {
                id: job.id,
                gpus: g,
                est_exec_slots: est,
            });
        }
        Self::new(servers, jobs, est_upper)
    }

    /// As [`FormulationInput::from_instance`], with the estimates `ρ̂_j`
    /// (slots) given in the instance's job order (for example SJF-BCO's own
    /// estimates).
    ///
    /// # Errors
    ///
    /// [`FormulationError::InvalidOption`] when `estimates` does not have one
    /// entry per job, then as [`FormulationInput::from_instance`].
    pub fn from_instance_with_estimates(
        instance: &Instance,
        estimates: &[f64],
        est_upper: f64,
    ) -> Result<Self, FormulationError> {
        if estimates.len() != instance.jobs().len() {
            return Err(FormulationError::InvalidOption {
                name: "estimates",
                reason: format!(
                    "{} estimates for {} jobs",
                    estimates.len(),
                    instance.jobs().len()
                ),
            });
        }
        let servers = servers_of(instance)?;
        let mut jobs = Vec::with_capacity(estimates.len());
        for (job, &est) in instance.jobs().iter().zip(estimates) {
            let (_, g) = ring_job(instance, job)?;
            jobs.push(FormulationJob {
                id: job.id,
                gpus: g,
                est_exec_slots: est,
            });
        }
        Self::new(servers, jobs, est_upper)
    }

    /// The servers, in order.
    pub fn servers(&self) -> &[FormulationServer] {
        &self.servers
    }

    /// The jobs, in order.
    pub fn jobs(&self) -> &[FormulationJob] {
        &self.jobs
    }

    /// The estimate bound `u ≥ 1`.
    pub fn est_upper(&self) -> f64 {
        self.est_upper
    }

    /// `N = Σ_s O_s`.
    pub fn total_gpus(&self) -> u32 {
        self.total_gpus
    }

    /// Job `j`'s load `ρ̂_j / u` (position `j` in [`jobs`](Self::jobs)).
    ///
    /// # Panics
    ///
    /// If `j` is out of range.
    pub fn load(&self, j: usize) -> f64 {
        self.jobs[j].est_exec_slots / self.est_upper
    }

    /// Every GPU, server by server in order, local indices ascending: the
    /// GPU order of the per-GPU formulations.
    pub fn gpu_ids(&self) -> Vec<GpuId> {
        self.servers
            .iter()
            .flat_map(|s| {
                (0..s.gpus).map(move |index| GpuId {
                    machine: s.machine,
                    index,
                })
            })
            .collect()
    }

    /// `O_max = max_s O_s`.
    pub fn largest_server(&self) -> u32 {
        self.servers.iter().map(|s| s.gpus).max().unwrap_or(0)
    }
}

fn check_count(what: &'static str, size: usize, limit: u64) -> Result<(), FormulationError> {
    if size as u128 > u128::from(limit) {
        return Err(FormulationError::TooLarge {
            formulation: "input",
            what,
            size: size as u128,
            limit,
        });
    }
    Ok(())
}

fn invalid_server(machine: MachineId, reason: &str) -> FormulationError {
    FormulationError::InvalidServer {
        machine,
        reason: reason.into(),
    }
}

fn check_job(
    j: &FormulationJob,
    total: u64,
    ids: &mut HashSet<JobId>,
) -> Result<(), FormulationError> {
    if !ids.insert(j.id) {
        return Err(FormulationError::DuplicateJob { job: j.id });
    }
    if j.gpus == 0 {
        return Err(FormulationError::ZeroGpus { job: j.id });
    }
    if u64::from(j.gpus) > total {
        return Err(FormulationError::JobCannotFit {
            job: j.id,
            demand: j.gpus,
            cluster_gpus: total,
        });
    }
    let e = j.est_exec_slots;
    if !(e.is_finite() && (MIN_ESTIMATE_SLOTS..=MAX_ESTIMATE_SLOTS).contains(&e)) {
        return Err(FormulationError::InvalidEstimate {
            job: j.id,
            value: e,
        });
    }
    Ok(())
}

/// The machines with at least one GPU, with a whole GPU count; the total is
/// checked against [`MAX_INPUT_GPUS`] before anything is built.
fn servers_of(instance: &Instance) -> Result<Vec<FormulationServer>, FormulationError> {
    check_count("jobs", instance.jobs().len(), MAX_INPUT_JOBS as u64)?;
    let mut total = 0.0;
    for m in &instance.cluster().machines {
        let g = m.capacity.gpus;
        if g.fract() != 0.0 {
            return Err(invalid_server(
                m.id,
                &format!("GPU capacity {g} is not a whole number"),
            ));
        }
        total += g;
    }
    if total > MAX_INPUT_GPUS as f64 {
        return Err(FormulationError::TooLarge {
            formulation: "input",
            what: "GPUs",
            size: total as u128,
            limit: MAX_INPUT_GPUS,
        });
    }
    Ok(instance
        .cluster()
        .machines
        .iter()
        .filter(|m| m.capacity.gpus >= 1.0)
        .map(|m| FormulationServer {
            machine: m.id,
            gpus: m.capacity.gpus as u32,
        })
        .collect())
}

/// The ring-all-reduce part of `job` and its one worker count, or why the
/// job is outside the offline gang model.
fn ring_job<'a>(instance: &Instance, job: &'a Job) -> Result<(&'a RarJob, u32), FormulationError> {
    let Architecture::RingAllReduce(ring) = &job.architecture else {
        return Err(FormulationError::NotRingAllReduce { job: job.id });
    };
    let unsupported = |reason: &str| FormulationError::UnsupportedJob {
        job: job.id,
        reason: reason.into(),
    };
    let g = match &ring.workers {
        WorkerCounts::Fixed(g) => *g,
        WorkerCounts::Allowed(v) if v.len() == 1 => v[0],
        WorkerCounts::Allowed(_) => {
            return Err(unsupported("it allows several worker counts"));
        }
    };
    if job.discipline.elasticity != Elasticity::Rigid || job.discipline.preemptible {
        return Err(unsupported("it is not a rigid, non-preemptible gang"));
    }
    if instance.arrival_slot(job) != 0 {
        return Err(unsupported("it arrives after slot 0"));
    }
    if job.allowed_machines.is_some() {
        return Err(unsupported("it is restricted to some machines"));
    }
    Ok((ring, g))
}

/// `F_j · τ_j^min / slot`, see [`FormulationInput::from_instance`]. A job
/// that fits no placement (more GPUs than the cluster) gets 0, which
/// [`FormulationInput::new`] then reports as it checks the fit first.
fn contention_free_estimate(
    instance: &Instance,
    id: JobId,
    ring: &RarJob,
    g: u32,
    servers: &[FormulationServer],
) -> Result<f64, FormulationError> {
    let cluster = instance.cluster();
    let intra = |m: MachineId| cluster.machine(m).map_or(0.0, |m| m.intra_bandwidth_bps);
    let best_intra = servers
        .iter()
        .map(|s| intra(s.machine))
        .fold(f64::NEG_INFINITY, f64::max);
    if best_intra.is_nan() || best_intra <= 0.0 {
        return Ok(0.0);
    }
    let timing = |bps: f64| {
        RarTiming::from_job(ring, g, bps, &cluster.ring)
            .map_err(|source| FormulationError::Timing { job: id, source })
    };
    let mut tau = f64::INFINITY;
    let single = servers
        .iter()
        .filter(|s| s.gpus >= g)
        .map(|s| intra(s.machine))
        .fold(f64::NEG_INFINITY, f64::max);
    if single > 0.0 {
        tau = timing(single)?.iteration_time_s(1, 1.0);
    }
    let mut sizes: Vec<u32> = servers.iter().map(|s| s.gpus).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let mut held = 0u64;
    let fewest = sizes.iter().position(|&o| {
        held += u64::from(o);
        held >= u64::from(g)
    });
    if let Some(i) = fewest {
        let n = (i as u32 + 1).max(2);
        if n <= g && n as usize <= servers.len() {
            tau = tau.min(timing(best_intra)?.iteration_time_s(n, 1.0));
        }
    }
    if !tau.is_finite() {
        return Ok(0.0);
    }
    Ok(ring.iterations as f64 * tau / instance.slot_length_s())
}
