//! A GADGET-style online scheduler for ring-all-reduce training jobs with
//! reserved bandwidth: after the abstract of GADGET (Yu, Tian, Ji, Wu,
//! Rajan, Liu, IEEE INFOCOM 2022); the crate's own design.
//!
//! Only that paper's abstract, and the statement of Yu, Ji, Rajan, Liu
//! (ACM MobiHoc 2022) that GADGET reserves each job's bandwidth, were
//! available. The model, the embedding, the prices and the guarantee below
//! are the crate's; nothing here is GADGET's algorithm, and none of its
//! guarantees is claimed.
//!
//! # The model
//!
//! Servers `h` have `O_h` usable GPUs and a NIC reservation pool `B_h`
//! (data per slot, both directions: twice the line rate times the slot
//! length). Job `i` arrives in slot `a_i` with a utility `u_i` of its
//! completion delay `δ = t̂ − a_i + 1`, a fairness weight `ω_i` frozen at
//! arrival, worker counts `W_i`, iterations `F^eff` (its convergence
//! estimate, or what it requested) and a reserved bandwidth `b_i` (a job
//! without one runs on one server). A
//! schedule `l = (s, w, n, y)` runs `w ∈ W_i` workers, `y_h` on each of `n`
//! servers, in every slot of `[s, s + d)`; the ring visits each server's
//! workers contiguously, so for `n ≥ 2` it has `n` cross-server edges and
//! every used server reserves `2b_i` (one egress, one ingress edge). With
//! reservation there is no contention:
//!
//! ```text
//! B(n)   = b^int_h (n = 1),   b_i (n ≥ 2)
//! τ(w,n) = 2(w−1)/w·m/B(n) + (w−1)/w·m/C + ξ2·n + K          slots per iteration
//! d(w,n) = ⌈F^eff(w)·τ⌉   or   ⌈F^eff(w)/⌊1/τ⌋⌉ (Floor)
//! v(l)   = ω·u(s + d − a) − e·w·d
//! ```
//!
//! The offline problem packs schedules under `Σ y ≤ O_h` and `Σ r ≤ B_h`
//! per server and slot, at most one schedule per job, maximising `Σ v`.
//! On tiny instances [`offline_optimum`] solves it exactly (every schedule
//! enumerated, a set-packing program solved with HiGHS), the comparison
//! point of the online scheduler's value and dual bounds.
//!
//! # The online loop
//!
//! The crate's primal–dual framework ([`crate::online`]): one pool of all
//! usable servers, resources GPU (capacity `O_h`) and NIC (`B_h`, data
//! units of [`DATA_UNIT_BYTES`] per slot), unit kinds *worker*
//! `(GPU 1, NIC 0)` and *ring endpoint* `(GPU 0, NIC 2b_i)`, prices
//! `p = L·(U^r/L)^(g/c)`. On arrival [`GadgetOracle`] enumerates `w`,
//! `n ≤ min(w, |H|, n_max)` and the start `s` (stopping as soon as
//! `v(s) ≤` the best payoff, which is exact since costs are non-negative),
//! embeds the ring over the window `[s, s + d)` with
//!
//! * `n = 1`: the server with `κ_h ≥ w` free GPUs of least `w·π_h`;
//! * `n ≥ 2`, greedy (default): servers with `κ_h ≥ 1` and `β_h ≥ 2b_i`
//!   free, scored `σ_h = π_h + φ_h/cap_h` (`φ_h = 2b_i·ψ_h`,
//!   `cap_h = min(κ_h, w − n + 1)`), the `n` cheapest, one worker each and
//!   the rest by ascending `π_h`;
//! * `n ≥ 2`, exhaustive: every `n`-subset, distributed the same way (exact);
//!
//! with `π_h, ψ_h` the GPU and NIC price sums over the window, and keeps the
//! largest payoff `v − Σ_h (π_h y_h + φ_h)` (ties: earlier completion, fewer
//! servers, fewer workers, smaller server list). The job is admitted iff the
//! payoff is positive; the plan is irrevocable, and GPU ids are assigned at
//! start by lowest free local index.
//!
//! # Prices and constants
//!
//! `U^GPU = max_i v̄_i`, `U^NIC = max_i v̄_i/(2b_i)` from the job list,
//! where `v̄_i` is the best value alone on the empty cluster. `L` follows
//! [`GadgetBounds`]: the value floor (default)
//! `L = v_floor/(4·T·Σ_h (O_h + B_h))` with
//! `v_floor = max(ε_v·median v̄, min v^late)`, so `D_0 = v_floor/4 ≤ OPT/2`
//! on every instance (a job alone is feasible; under fairness weights, which
//! can only lower values, the run checks it), or the framework's η rule,
//! whose `α` runs into the hundreds or thousands with sigmoid utilities. The
//! report gives α under both.
//!
//! # Guarantee
//!
//! The framework's argument gives `OPT ≤ 2α·ALG`,
//! `α = max(1, ln(U^GPU/L), ln(U^NIC/L))`, when (A1) demands are small
//! (`y_h ≪ O_h`, `2b_i ≪ B_h`), (A2) the oracle is exact
//! ([`EmbeddingOracle::Exhaustive`]), (A3) the constants are derived from
//! the job list with `D_0 ≤ OPT/2`, and (A4) capacity-blocked plans are
//! dual-feasible: by small demands, or by headroom prices
//! ([`GadgetParams::headroom`]: the price exponent runs over
//! `c' = c − δ_max + 1` GPUs, `B_h − max 2b_i` NIC, so a plan blocked by a
//! partly full cell meets the price `U` there). The certificate checks each
//! condition per run and marks the statement valid or not with reasons;
//! with the greedy oracle there is no ratio. Its bound is the tighter of the
//! online dual `D_end` (valid for the exact oracle) and the trivial
//! `Σ_i v̄_i`; the framework's `OPT ≤ 2α_eff·ALG` (with
//! `α_cell = ln(U/L)·c/c'` under headroom) is carried too, and holds
//! whenever the running dual is feasible, which headroom guarantees with the
//! exact oracle.
//!
//! # Complexity
//!
//! Per job `O(|H|·T' + Σ_{(w,n)} (|H|·T' + S_{w,n}·|H| log |H|))` with the
//! greedy embedding, `T'` the slots from the job's first slot to the last
//! any shape can use and `S_{w,n}` the starts examined; the exhaustive
//! embedding replaces `|H| log |H|` by `C(|H|, n)·n log n`. Size guards
//! bound `T·|H|` ([`MAX_CELLS`]), the worker counts of a job
//! ([`MAX_WORKER_COUNTS`]) and the search of one job ([`MAX_SEARCH`]).
//!
//! # Simulation and baselines
//!
//! [`GadgetPolicy`] runs the scheduler in the simulator; with
//! [`GadgetParams::sim_options`] (which stops rings at their convergence
//! estimate when the scheduler does) every admitted job completes in its
//! planned slot. [`GadgetNoPrice`] is the oracle at zero prices, outside
//! the framework (the ablation of pricing). The other baselines —
//! FIFO-FF, SJF-BCO-online and Random — are in [`crate::baselines`]
//! (`ff-bandwidth`, `ff-bandwidth-backfill`, `sjf-bco-online`,
//! `rar-online-random`, `gadget-noprice` by name); all use the same
//! reservation model and admit every job at its largest worker count
//! (NoPrice: every job with a plan of positive value). The evaluation's
//! metrics (gross and net utility, admission and completion rates, JCT,
//! deadlines met, GPU-hours, training avoided by stopping at convergence,
//! GPU and NIC utilisation, and Jain's index over jobs and tenants,
//! [`jain_index`]) are `GadgetMetrics` of the repository's
//! `dmlsched-experiments` crate, from any policy's simulator run or this
//! scheduler's offline run; [`fastest_shapes`] and
//! [`packed_iteration_slots`] give the durations under the scheduler's
//! model that they and the evaluation's generators use.
//!
//! # Errors
//!
//! [`GadgetError`] for a job that is not ring-all-reduce or outside the
//! model, no usable server, invalid options, a size guard, or no progress
//! in `Floor` mode; framework errors ([`crate::online::OnlineError`]) when
//! the η rule cannot derive `L`.
//!
//! # Example
//!
//! Two 4-GPU servers, three 4-worker jobs that reserve 5 Gbit/s.
//!
//! ```
//! use dmlsched::algorithms::Algorithm;
//! use dmlsched::algorithms::gadget::{Gadget, GadgetParams};
//! use rand::SeedableRng;
//! use dmlsched::model::*;
//! use dmlsched::model::units::{gb, gbps, mb};
//!
//! let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(32.0).nic(gbps(25.0)), gb(150.0));
//! let ring = RarJob {
//!     workers: WorkerCounts::Fixed(4), iterations: 3000, convergence_iterations: Some(2400),
//!     model_bytes: mb(100.0), backward_per_iteration_s: 0.1,
//!     reserved_bandwidth_bps: Some(gbps(5.0)),
//!     ..RarJob::default()
//! };
//! let jobs = (0..3)
//!     .map(|i| Job::new(JobId(i), 0.0, ring.clone())
//!         .with_utility(Utility::Sigmoid { g1: 10.0, g2: 0.5, g3: 8.0 }))
//!     .collect();
//! let instance = Instance::new(cluster, jobs, 60.0, 30)?;
//! let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
//! let solved = Gadget::new(GadgetParams::default())?.solve(&instance, &mut rng)?;
//! assert_eq!(solved.report.admitted(), 3);
//! solved.certificate.check(1e-9)?;
//! println!("α = {:.2} (η rule: {:?})", solved.report.alpha, solved.report.alpha_eta);
//! println!("{}", solved.certificate);
//! # Ok::<(), dmlsched::Error>(())
//! ```

mod durations;
mod error;
mod exact;
mod model;
mod noprice;
mod oracle;
mod params;
mod plan;
mod policy;
mod report;
mod run;
mod session;
#[cfg(test)]
mod tests_exact;
#[cfg(test)]
mod tests_internal;

use crate::model::Instance;
use crate::online::OnlinePrimalDual;

use rand::Rng;

use super::{Algorithm, OnlineAlgorithm, Solved};

pub use crate::sim::jain_index;
pub use durations::{fastest_shapes, packed_iteration_slots};
pub use error::GadgetError;
pub use exact::{
    ChosenPlan, DEFAULT_OFFLINE_MIP_GAP, DEFAULT_OFFLINE_TIME_LIMIT_S, GadgetOptimum,
    OFFLINE_LIMITS, OFFLINE_MAX_COLUMNS, offline_optimum, offline_optimum_weighted,
};
pub(crate) use model::GadgetModel;
pub use model::{
    DATA_UNIT_BYTES, GPU, GadgetJob, MAX_CELLS, MAX_DATA_PER_SLOT, MAX_ITERATIONS, MAX_JOBS,
    MAX_SEARCH, MAX_SERVER_GPUS, MAX_WORKER_COUNTS, NIC, POOL, RESOURCES, data_per_slot,
    ln_utility_at_jct, utility_at_jct,
};
pub use noprice::GadgetNoPrice;
pub use oracle::GadgetOracle;
pub use params::{
    DurationTable, EXHAUSTIVE_MAX_SERVERS, EmbeddingOracle, ExcessiveTraining, FairnessWeighting,
    GadgetBounds, GadgetParams, MAX_RING_SERVERS, WorkUnit, WorkerChoice,
};
pub use plan::GadgetPlan;
pub use policy::GadgetPolicy;
pub use report::{Admission, GadgetReport, JobRecord, RatioConditions, ServerRecord};
pub use session::{GadgetSession, GadgetSessionModel};

pub(crate) use run::GadgetOnline;

/// The GADGET-style scheduler as an offline runner over an instance's
/// arrival sequence (after the abstract of GADGET, Yu, Tian, Ji, Wu, Rajan,
/// Liu, IEEE INFOCOM 2022; the crate's own design). See the [module
/// documentation](self).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gadget {
    params: GadgetParams,
}

impl Algorithm for Gadget {
    const NAME: &'static str = "gadget";
    type Params = GadgetParams;
    type Report = GadgetReport;

    /// The scheduler with `params` ([`GadgetParams::validate`]).
    fn new(params: GadgetParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(Gadget { params })
    }

    fn params(&self) -> &GadgetParams {
        &self.params
    }

    /// Runs the scheduler over the jobs of `instance` in arrival order and
    /// returns the verified schedule, the certificate and the report. The
    /// scheduler draws no random numbers: `rng` is not used.
    ///
    /// # Errors
    ///
    /// See the [module documentation](self#errors); a schedule that
    /// [`verify`](crate::schedule::verify) rejects is reported as [`crate::Error::Schedule`] (a bug).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        _rng: &mut R,
    ) -> crate::Result<Solved<GadgetReport>> {
        let (run, jobs) = GadgetOnline::start(instance, &self.params)?;
        let (schedule, certificate, report) = run.solve(jobs, instance)?;
        Ok(Solved {
            schedule,
            certificate,
            report,
        })
    }
}

impl OnlineAlgorithm for Gadget {
    type Policy = GadgetPolicy;

    fn policy<R: Rng>(&self, instance: &Instance, _rng: &mut R) -> crate::Result<GadgetPolicy> {
        GadgetPolicy::new(instance, &self.params)
    }
}

impl Gadget {
    /// The framework engine the scheduler runs over `instance` (before any
    /// job) with the jobs in arrival order, for driving the online loop job
    /// by job. [`Gadget::solve`] steps the same engine, freezing each job's
    /// fairness weight first (here every job keeps `ω = 1`).
    ///
    /// # Errors
    ///
    /// As [`Gadget::solve`], before any decision.
    pub fn engine(
        &self,
        instance: &Instance,
    ) -> crate::Result<(OnlinePrimalDual<GadgetOracle>, Vec<GadgetJob>)> {
        let (run, jobs) = GadgetOnline::start(instance, &self.params)?;
        Ok((run.into_engine(), jobs))
    }
}

/// The certificate of a run over the jobs of `instance`: the framework's
/// with this model's statements, scoped.
pub(crate) fn certificate_of(
    report: &GadgetReport,
    instance: &Instance,
) -> crate::certificate::Certificate {
    let mut certificate = run::certificate(report);
    certificate.scope = Some(super::plan_scope(
        "total weighted utility, net of the energy price, of plans of the GADGET-style model \
         (rigid rings with reserved bandwidth, no preemption, each job's utility at its \
         completion slot)",
        instance,
    ));
    certificate
}
