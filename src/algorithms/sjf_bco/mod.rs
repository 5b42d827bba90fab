//! SJF-BCO: smallest-job-first placement of ring-all-reduce jobs with
//! balanced contention and overhead, after Yu, Ji, Rajan, Liu, "On
//! Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU Clusters
//! with Communication Contention" (ACM MobiHoc 2022), with the baselines FF,
//! LS and RAND of that paper.
//!
//! # The model
//!
//! All jobs are present at slot 0. Job `j` needs `G_j` GPUs at once (gang),
//! keeps them without preemption or migration, and runs `F_j` iterations. Its
//! per-iteration time `τ_j` ([`crate::timing::rar`]) depends on the servers
//! it spans and on contention: a job spanning several servers counts, on each
//! of its servers, the active multi-server jobs there (itself included), and
//! takes the largest count `p_j`; its ring gets `b_e/f(α, max(1, ξ₁p_j))`.
//! A job on one server uses the server's internal bandwidth and never
//! contends. Progress is `1/τ_j` iterations per slot (or `⌊1/τ_j⌋`). Each job
//! has an estimate `ρ̂_j` of its execution time, by default `F_j·τ⁰_j` with
//! `τ⁰_j` its uncontended single-server time on the fastest machine, so
//! `ρ̂_j ≤ ρ_j` whenever that machine's internal bandwidth is at least the
//! external `b_e` (with slower machines a ring over two servers can beat it;
//! the certificate never relies on `ρ̂`, see below). A server's usable GPUs `O_s` are the most workers of every
//! job that fit on it, resource by resource.
//!
//! # The algorithm
//!
//! Jobs are taken smallest first (`G_j`, then id). A **trial** places them
//! one at a time for a budget `θ` on every GPU's accumulated estimate
//! `U[g] = Σ ρ̂/u`: a GPU is a candidate when idle at the trial's clock and
//! `U[g] + ρ̂_j/u ≤ θ`; with too few candidates the clock jumps to the next
//! provisional completion, and with none left the trial fails. Jobs with
//! `G_j ≤ κ` use **FA-FFP** (least `U` first, or the packing strategy of
//! [`FaFfpStrategy`]); larger jobs use **LBSGF** (servers by least average
//! `U` until their capacity reaches `λ_j·G_j`, then the least-`U` candidates
//! among them). A placed job's provisional duration uses `τ_j` with the
//! contention at placement; the trial is then scored by the slot simulator
//! ([`simulate_assignments`]), which replays the placement with the
//! contention of every slot. The outer search bisects `θ ∈ 1..=T` and
//! runs every κ (only `{1} ∪ {G_j}`: the others give the same trials); it
//! moves to smaller budgets only on a strict improvement of the best
//! makespan, initially `T`. Every trial starts from a fresh state, and a
//! failed trial scores `+∞`.
//!
//! # Guarantee
//!
//! None. The paper's Theorem 5 (an `n_g·φ·u/l` approximation) is false as
//! stated: with one server of 2 GPUs, five one-GPU jobs of 3, 3, 2, 2, 2
//! slots and exact estimates, the claimed ratio is 1 but SJF-BCO returns 7
//! while the optimum is 6. The report keeps the claim, marked not valid
//! ([`PaperClaim`]). The certificate's bound is the closed form of
//! [`lower_bound_closed_form`] over each job's proven shortest execution
//! time (with `u = 1`), rounded up to whole slots. On request
//! ([`SjfBcoParams::time_indexed_bound`], at most 8 jobs by default) the
//! time-indexed exact ILP of [`formulation`] is solved over the same
//! durations and its dual bound replaces the closed form when larger
//! ([`TimeIndexedBound`]). Its optimum is under contention-free durations:
//! a lower bound on the contention model's optimum, and the certificate's
//! exact comparison point only under [`TimeModel::FixedDuration`] with
//! fractional progress.
//!
//! # Complexity
//!
//! A trial costs `O(|J|·N·log N + E·|J|)` for `E` waits plus one slot
//! simulation `O(E'·A·n̄)`; the search runs `O(log T)` budgets times the
//! distinct κ values.
//!
//! # Errors
//!
//! [`SjfBcoError`] (wrapped in [`crate::Error::SjfBco`]) for an empty
//! instance, a job that is not ring-all-reduce, arrives late, has placement
//! constraints or is wider than the cluster, invalid options, the size
//! guards, or no trial placing every job.
//!
//! # Example
//!
//! ```
//! use dmlsched::algorithms::Algorithm;
//! use dmlsched::algorithms::sjf_bco::{SjfBco, SjfBcoParams, TimeModel};
//! use rand::SeedableRng;
//! use dmlsched::model::*;
//! use dmlsched::schedule::verify;
//!
//! // One server of 2 GPUs, five one-GPU jobs of 3, 3, 2, 2, 2 slots.
//! let mut cluster = Cluster::homogeneous(1, Resources::zero().gpus(2.0), 1e10);
//! cluster.ring.overhead_per_server_s = 0.0;
//! let jobs = [3.0, 3.0, 2.0, 2.0, 2.0]
//!     .iter()
//!     .enumerate()
//!     .map(|(i, &d)| {
//!         let ring = RarJob { backward_per_iteration_s: d, worker: Resources::zero().gpus(1.0), ..RarJob::default() };
//!         Job::new(JobId(i as u32), 0.0, ring)
//!     })
//!     .collect();
//! let instance = Instance::new(cluster, jobs, 1.0, 10)?;
//! let mut params = SjfBcoParams::default();
//! params.est_upper = 1.0;
//! params.time_model = TimeModel::FixedDuration;
//! let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
//! let solved = SjfBco::new(params)?.solve(&instance, &mut rng)?;
//! verify(&instance, &solved.schedule)?;
//! assert_eq!(solved.report.makespan_raw, 7); // the optimum is 6
//! assert_eq!(solved.certificate.relaxation_bound.value, 6.0);
//! assert!(!solved.report.paper_claim.valid);
//! # Ok::<(), dmlsched::Error>(())
//! ```

mod baselines;
mod bounds;
pub(crate) mod choice;
mod error;
pub mod formulation;
mod model;
mod online;
mod params;
mod report;
mod run;
mod search;
mod sim;
mod trial;

pub use baselines::{RarFf, RarLs, RarRand};
pub use bounds::lower_bound_closed_form;
pub use error::SjfBcoError;
pub use model::{MAX_GPUS, MAX_ITERATIONS, MAX_JOBS, MAX_JOBS_TIMES_GPUS, MAX_SLOTS, TimeModel};
pub(crate) use model::{RarModel, RarServer, usable_gpus, usable_servers};
pub use online::{RarOnlineRandom, SjfBcoOnline};
pub use params::{
    Availability, BisectionRule, DurationEstimate, FaFfpStrategy, KappaSpec, LambdaSpec,
    SjfBcoParams, TrialEval,
};
pub use report::{PaperClaim, SjfBcoReport, TimeIndexedBound, TrialRecord};
pub use sim::{RarAssignment, RarExecution, StartRule};

use rand::Rng;

use crate::algorithms::{Algorithm, Solved};
use crate::model::Instance;

/// SJF-BCO with its parameters; see the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SjfBco {
    params: SjfBcoParams,
}

impl Algorithm for SjfBco {
    const NAME: &'static str = "sjf-bco";
    type Params = SjfBcoParams;
    type Report = SjfBcoReport;

    /// SJF-BCO with these parameters ([`SjfBcoParams::validate`]).
    fn new(params: SjfBcoParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(SjfBco { params })
    }

    fn params(&self) -> &SjfBcoParams {
        &self.params
    }

    /// Runs the search and returns the best placement found, its schedule
    /// (one segment per job, with GPU ids), the certificate and the report.
    /// SJF-BCO draws no random numbers: `rng` is not used.
    ///
    /// # Errors
    ///
    /// [`crate::Error::SjfBco`] as in the [module documentation](self);
    /// [`crate::Error::Schedule`] if the schedule failed the checker (a bug).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        _rng: &mut R,
    ) -> crate::Result<Solved<SjfBcoReport>> {
        run::solve(instance, &self.params, run::Algo::SjfBco, None)
    }
}

/// Simulates a placement slot by slot with contention (the evaluator
/// SJF-BCO scores its trials with): one assignment per job of the instance.
/// `params` gives the time model, progress mode, start rule, estimates and
/// the slot guard (`max_sim_slots`, else `100·T`).
///
/// # Errors
///
/// [`SjfBcoError`]: the instance outside the model, a malformed assignment,
/// a job that makes no progress, the slot guard, a deadlock.
pub fn simulate_assignments(
    instance: &Instance,
    assignments: &[RarAssignment],
    params: &SjfBcoParams,
) -> Result<RarExecution, SjfBcoError> {
    params.validate()?;
    let model = RarModel::new(instance, params.time_model, params.estimates.as_deref())?;
    let placed = sim::placed_from(&model, assignments)?;
    let horizon = params
        .horizon
        .unwrap_or(u64::from(instance.horizon_slots()));
    let opts = sim::SlotSimOptions {
        progress: params.progress,
        start_rule: params.start_rule,
        max_slots: params.max_sim_slots.unwrap_or(horizon.saturating_mul(100)),
    };
    sim::simulate(&model, &placed, &opts)
}
