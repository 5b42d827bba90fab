//! The input of the formulations: servers with GPUs, rigid ring-all-reduce
//! jobs with a GPU count and an estimated execution time, and the estimate
//! bound `u`.

use std::collections::HashSet;

use super::error::FormulationError;
#[cfg(doc)]
use crate::algorithms::sjf_bco::{MAX_ITERATIONS, SjfBcoError};
use crate::algorithms::sjf_bco::{RarModel, TimeModel};
use crate::model::{GpuId, Instance, JobId, MachineId};
#[cfg(doc)]
use crate::model::{Machine, TaskKind};

/// Most jobs a [`FormulationInput`] may hold.
pub const MAX_INPUT_JOBS: usize = 4096;

/// Most GPUs (over all servers) a [`FormulationInput`] may hold.
pub const MAX_INPUT_GPUS: u64 = 65_536;

/// Smallest estimated execution time accepted, slots (keeps every load
/// `ρ̂/u` a coefficient the solver represents faithfully).
pub const MIN_ESTIMATE_SLOTS: f64 = 1e-6;

/// Largest estimated execution time accepted, slots.
pub const MAX_ESTIMATE_SLOTS: f64 = 1e12;

/// Which duration of a job of SJF-BCO's model becomes `ρ̂_j` in
/// [`FormulationInput::from_model`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum EstimateSource {
    /// The model job's `min_duration`, `ρ^min_j`: a proven lower bound on
    /// the job's execution time on any placement under any contention, so
    /// `u = 1` satisfies the estimate contract (see
    /// [`FormulationInput::from_instance`]). Under
    /// [`TimeModel::FixedDuration`] it equals the estimate.
    MinDuration,
    /// The model job's `estimate`, SJF-BCO's `ρ̂_j` (by default
    /// `F_j·τ⁰_j`, or the estimates given to the model); the contract with
    /// `u` is the caller's.
    Estimate,
}

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
/// [`FormulationInput::from_instance`] (through SJF-BCO's model of the
/// instance, with each job's proven shortest execution time as `ρ̂_j`) or
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

    /// The input of a `RarModel`, SJF-BCO's conversion of an instance:
    /// one server `(machine, O_s)` per model server with `O_s ≥ 1`, in the
    /// cluster's order (machines that may not host ring workers, or whose
    /// capacity fits no worker, have `O_s = 0` and are left out), and one
    /// job `(id, G_j, ρ̂_j)` per model job, in the instance's order, with
    /// `ρ̂_j` the duration chosen by `source`.
    ///
    /// # Errors
    ///
    /// As [`FormulationInput::new`]; the sizes are checked before the
    /// servers and jobs are built.
    pub(crate) fn from_model(
        model: &RarModel,
        est_upper: f64,
        source: EstimateSource,
    ) -> Result<Self, FormulationError> {
        check_count("jobs", model.jobs.len(), MAX_INPUT_JOBS as u64)?;
        check_count("GPUs", model.total_gpus(), MAX_INPUT_GPUS)?;
        let servers = model
            .servers
            .iter()
            .filter(|s| s.gpus > 0)
            .map(|s| FormulationServer {
                machine: s.machine,
                gpus: s.gpus,
            })
            .collect();
        let jobs = model
            .jobs
            .iter()
            .map(|j| FormulationJob {
                id: j.id,
                gpus: j.gpus,
                est_exec_slots: match source {
                    EstimateSource::MinDuration => j.min_duration,
                    EstimateSource::Estimate => j.estimate,
                },
            })
            .collect();
        Self::new(servers, jobs, est_upper)
    }

    /// The input of an [`Instance`], through SJF-BCO's model of it (the
    /// conversion [`SjfBco`](crate::algorithms::sjf_bco::SjfBco) runs on,
    /// with [`TimeModel::Rar`] and no estimates): one server `(machine,
    /// O_s)` per machine with `O_s ≥ 1`, one job `(id, G_j, ρ̂_j)` per job
    /// in the instance's order, `ρ̂_j` the job's proven shortest execution
    /// time `ρ^min_j`.
    ///
    /// **Servers** are the machines with `O_s ≥ 1` usable GPUs, in cluster
    /// order. `O_s` is 0 on a machine whose [`hosts`](Machine::hosts)
    /// does not allow [`TaskKind::Worker`],
    /// and otherwise the most workers of *every* job that fit its capacity,
    /// resource by resource (`min` over jobs and resources of
    /// `⌊capacity / worker demand⌋`), so any `O_s` workers fit together.
    ///
    /// **Jobs** are accepted by SJF-BCO's rules: ring-all-reduce,
    /// arriving in slot 0, without `allowed_machines`, at most
    /// [`MAX_ITERATIONS`] iterations, a valid timing model with finite, positive iteration
    /// times, within the size guards, and at most as wide as the usable
    /// GPUs. `G_j` is the job's **largest** allowed worker count; the
    /// discipline (elastic, preemptible) is not looked at, every job is
    /// treated as a rigid gang of `G_j` GPUs.
    ///
    /// **`ρ̂_j`** is `ρ^min_j` (slots):
    /// `F_j · min(τ⁰_j, τ_j(2, 1)) / slot`, where, at `G_j` workers,
    /// `τ⁰_j` is the single-server iteration time with the largest
    /// intra-server bandwidth among the servers (whether or not one of them
    /// holds `G_j` GPUs), and `τ_j(2, 1)` the iteration time on two servers
    /// with no contention (`k = 1`, bandwidth `b_e/f(1) = b_e`), counted only when
    /// `min(G_j, servers) ≥ 2`. A single-server run is at least `τ⁰_j` per
    /// iteration (its bandwidth is at most the largest), and a run on
    /// `n ≥ 2` servers at least `τ_j(2, 1)` (its overhead grows with `n`,
    /// its bandwidth is at most `b_e`); a job progresses at most
    /// `1/τ_j` iterations per slot, so `ρ̂_j ≤ ρ_j` and `u = 1` already
    /// satisfies the estimate contract. When every intra-server bandwidth
    /// is at least `b_e`, `ρ̂_j = F_j τ⁰_j`, SJF-BCO's default estimate
    /// (the paper's).
    ///
    /// # Errors
    ///
    /// [`FormulationError::Model`] with the model's error (a job
    /// outside the model, a job wider than the usable GPUs, no job, no
    /// usable GPU, a size guard), then the errors of
    /// [`FormulationInput::new`] (the sizes are checked before the servers
    /// and jobs are built).
    pub fn from_instance(instance: &Instance, est_upper: f64) -> Result<Self, FormulationError> {
        let model = RarModel::new(instance, TimeModel::Rar, None)?;
        Self::from_model(&model, est_upper, EstimateSource::MinDuration)
    }

    /// As [`FormulationInput::from_instance`] (same servers, jobs and
    /// `G_j`), with the estimates `ρ̂_j` (slots) given in the instance's
    /// job order (for example SJF-BCO's own estimates), which the model
    /// takes as its estimates. That `ρ̂_j / u ≤ ρ_j` holds is the caller's
    /// responsibility.
    ///
    /// # Errors
    ///
    /// As [`FormulationInput::from_instance`]; `estimates` without one
    /// finite, positive entry per job is
    /// [`FormulationError::Model`] wrapping
    /// [`SjfBcoError::InvalidOption`] (option `"estimates"`).
    pub fn from_instance_with_estimates(
        instance: &Instance,
        estimates: &[f64],
        est_upper: f64,
    ) -> Result<Self, FormulationError> {
        let model = RarModel::new(instance, TimeModel::Rar, Some(estimates))?;
        Self::from_model(&model, est_upper, EstimateSource::Estimate)
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
