//! The exact offline optimum `OPT` of the locality model on small
//! instances ([algorithms guide, locality
//! section](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#locality-offline-optimum)):
//! every job's LOC-SUB columns in one time-indexed MIP with admission and
//! completion binaries, joint capacities, solved with HiGHS through
//! [`crate::lp`] without presolve. It is the benchmark against which the
//! online scheduler's total utility is measured (`OPT/ALG`); see
//! [`offline_optimum`] for the formulation, the size limit and the errors.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::certificate::Sense;
use crate::lp::{self, ColumnKind, ExactMipLimits, LinearProgram, LpError, LpStatus};
use crate::model::units::Num;
use crate::model::{Instance, JobId};
use crate::online::{OfflineResult, PriceView, Reservation, proven_upper_bound};
use crate::pcip::{ColKind, PcProblem, RowClass, RowRef, RowSense};
use crate::schedule::{JobSchedule, Schedule, verify};

use super::error::LocalityError;
use super::model::{LocalityCluster, LocalityJob, RESOURCES, Vector};
use super::plan::{LocalityPlan, SlotPlan};
use super::sub::{self, ColumnKind as Kind, LocSub};
use super::{LocalityParams, verify_locality};

/// Default most columns [`offline_optimum`] builds
/// ([`OFFLINE_LIMITS`]' `max_columns`), estimated before anything is
/// allocated as `Σ_i [|W_i|·(4H + 2) + 1]` over the jobs' windows `W_i`.
/// The benchmark is meant for about 6 jobs on `H ≤ 4` machines over `T ≤ 8`
/// slots (`6·(8·18 + 1) = 870` columns); 1,024 leaves a little room.
pub const OFFLINE_MAX_COLUMNS: usize = 1024;

/// Default wall-clock limit of the offline MIP, seconds.
pub const DEFAULT_OFFLINE_TIME_LIMIT_S: f64 = 60.0;

/// Default relative MIP gap of the offline MIP (the exact inner solver's).
pub const DEFAULT_OFFLINE_MIP_GAP: f64 = 1e-9;

/// Default limits of [`offline_optimum`]: wall-clock limit
/// [`DEFAULT_OFFLINE_TIME_LIMIT_S`] = 60 s (at the limit the MIP's dual
/// bound is the upper bound on `OPT`), relative gap
/// [`DEFAULT_OFFLINE_MIP_GAP`] = 10⁻⁹, threads `None` (one thread,
/// deterministic) and at most [`OFFLINE_MAX_COLUMNS`] = 1,024 columns,
/// estimated before building (`None`: no cap).
///
/// ```
/// use dmlsched::algorithms::locality::OFFLINE_LIMITS;
/// let mut limits = OFFLINE_LIMITS;
/// limits.time_limit_s = 5.0;
/// assert_eq!(limits.max_columns, Some(1024));
/// ```
pub const OFFLINE_LIMITS: ExactMipLimits =
    ExactMipLimits::new(DEFAULT_OFFLINE_TIME_LIMIT_S, DEFAULT_OFFLINE_MIP_GAP, None)
        .with_max_columns(OFFLINE_MAX_COLUMNS);

/// The result of [`offline_optimum`]: the crate's one exact-offline result
/// type with the locality model's plans. Its `objective` is
/// `Σ f_i(t̂_i − a_i)` over the admitted jobs, `t̂_i` the slot where the
/// job's work reaches `Q_i`; its schedule has every segment's configuration,
/// and [`verify_locality`] accepts it.
pub type OfflineOptimum = OfflineResult<LocalityPlan>;

/// One job's block of the MIP.
struct Block {
    /// Index into the arrival-ordered job list.
    job: usize,
    /// The job's LOC-SUB over its window up to its last completion slot.
    sub: LocSub,
    /// MIP column of the sub's column 0.
    offset: usize,
    /// `x_i`.
    x: usize,
    /// `(t, u^c_{i,t})`, ascending `t`.
    completion: Vec<(u32, usize)>,
}

/// The MIP and the map from its columns back to the jobs.
struct Mip {
    lp: LinearProgram,
    blocks: Vec<Block>,
    /// `Σ_i max_t f_i(t − a_i)` over the completion columns.
    trivial_bound: f64,
}

/// Joint capacity entries per (machine, slot, resource) cell, with the
/// jobs that touch it.
type CapEntries = BTreeMap<(u32, u32, usize), (Vec<(usize, f64)>, Vec<usize>)>;

/// The column estimate `Σ_i [|W_i|·(4H + 2) + 1]` documented on
/// [`OFFLINE_MAX_COLUMNS`].
fn estimate_columns(cluster: &LocalityCluster, jobs: &[LocalityJob]) -> u128 {
    let per_slot = 4 * cluster.machines() as u128 + 2;
    jobs.iter()
        .map(|j| {
            let last = j.end.min(cluster.horizon.saturating_sub(1));
            let slots = u128::from(last.saturating_sub(j.arrival)) + 1;
            if j.arrival > last {
                0
            } else {
                slots * per_slot + 1
            }
        })
        .sum()
}

/// Full capacities and zero prices: LOC-SUB's cells then carry the bounds
/// `Ȳ`, `Z̄` of the empty cluster and cost nothing.
fn empty_cluster_view(cluster: &LocalityCluster) -> PriceView<'static> {
    let capacity = cluster.capacity.clone();
    PriceView::from_explicit(
        cluster.machines(),
        RESOURCES,
        cluster.horizon,
        |_, _, _| 0.0,
        move |m, r, _| capacity[m.0 as usize][r.0 as usize],
    )
}

/// Copies the rows of a job's LOC-SUB into the MIP (columns shifted by
/// `offset`); the covering row becomes `Σ a_j y_j − q·x ≥ 0`.
fn copy_rows(lp: &mut LinearProgram, p: &PcProblem, offset: usize, x: usize) {
    for class in [RowClass::Packing, RowClass::Covering, RowClass::Linking] {
        for row in 0..p.n_rows(class) {
            let r = RowRef { class, row };
            let (cols, vals) = p.row(r);
            let mut entries: Vec<(usize, f64)> = cols
                .iter()
                .zip(vals)
                .map(|(&j, &a)| (j + offset, a))
                .collect();
            let rhs = p.rhs(r);
            if class == RowClass::Covering {
                entries.push((x, -rhs));
                lp.add_row(0.0, f64::INFINITY, &entries);
            } else if p.row_sense(r) == RowSense::Le {
                lp.add_row(f64::NEG_INFINITY, rhs, &entries);
            } else {
                lp.add_row(rhs, f64::INFINITY, &entries);
            }
        }
    }
}

/// The demand of one unit of a LOC-SUB column kind.
fn unit_demand(job: &LocalityJob, kind: Kind) -> Option<Vector> {
    match kind {
        Kind::LocalWorkers => Some(job.worker_local()),
        Kind::Local => Some(job.ps_local()),
        Kind::DistWorkers => Some(job.worker),
        Kind::DistPs => Some(job.ps),
        Kind::Distributed => None,
    }
}

/// Adds job `index`'s block: its LOC-SUB columns and rows (at zero prices
/// and full capacities, up to its last completion slot), `x_i`, the
/// completion binaries with their utilities, `Σ_t u^c = x`, the
/// completion links, and its capacity entries. `None` when the job can
/// earn nothing (no completion slot with positive utility, or no plan
/// within its window).
fn add_job(
    lp: &mut LinearProgram,
    (index, job): (usize, &LocalityJob),
    cluster: &LocalityCluster,
    view: &PriceView<'_>,
    cap: &mut CapEntries,
) -> crate::Result<Option<(Block, f64)>> {
    let cells = sub::cells(job, cluster, view);
    let last = job.end.min(cluster.horizon.saturating_sub(1));
    let first = job.arrival.saturating_add(job.delta_min(cluster));
    let slots: Vec<(u32, f64)> = (first..=last)
        .map(|t| (t, job.utility_at(t)))
        .filter(|&(_, f)| f > 0.0)
        .collect();
    let Some(&(deadline, _)) = slots.last() else {
        return Ok(None);
    };
    let Some(sub) = sub::build(job, &cells, deadline)? else {
        return Ok(None);
    };
    let p = &sub.problem;
    let offset = lp.n_cols();
    for j in 0..p.n_vars() {
        let kind = match p.kind(j) {
            ColKind::Binary | ColKind::Integer => ColumnKind::Integer,
            ColKind::Continuous => ColumnKind::Continuous,
        };
        lp.add_column(0.0, 0.0, p.upper(j), kind);
    }
    let x = lp.add_binary_column(0.0);
    let completion: Vec<(u32, usize)> = slots
        .iter()
        .map(|&(t, f)| (t, lp.add_binary_column(f)))
        .collect();
    copy_rows(lp, p, offset, x);
    // Σ_t u^c_t = x.
    let mut row: Vec<(usize, f64)> = completion.iter().map(|&(_, c)| (c, 1.0)).collect();
    row.push((x, -1.0));
    lp.add_row(0.0, 0.0, &row);
    // Work only up to the completion slot: Σ_h u_{h,t} + v_t ≤ Σ_{t'≥t} u^c_{t'}
    // (LU and DV tie every worker and PS column of slot t to these selectors).
    let mut selectors: BTreeMap<u32, Vec<(usize, f64)>> = BTreeMap::new();
    for j in 0..sub.index.len() {
        let Some(c) = sub.index.column(j) else {
            continue;
        };
        if matches!(c.kind, Kind::Local | Kind::Distributed) {
            selectors.entry(c.slot).or_default().push((j + offset, 1.0));
        }
        if let (Some(d), Some(h)) = (unit_demand(job, c.kind), c.machine) {
            for (r, &dr) in d.iter().enumerate().filter(|(_, d)| **d > 0.0) {
                let e = cap.entry((h, c.slot, r)).or_default();
                e.0.push((j + offset, dr));
                if e.1.last() != Some(&index) {
                    e.1.push(index);
                }
            }
        }
    }
    for (t, mut row) in selectors {
        row.extend(
            completion
                .iter()
                .filter(|&&(s, _)| s >= t)
                .map(|&(_, c)| (c, -1.0)),
        );
        lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    }
    let best = slots.iter().map(|&(_, f)| f).fold(0.0, f64::max);
    let block = Block {
        job: index,
        sub,
        offset,
        x,
        completion,
    };
    Ok(Some((block, best)))
}

/// Builds the MIP documented on [`offline_optimum`].
fn build(cluster: &LocalityCluster, jobs: &[LocalityJob]) -> crate::Result<Mip> {
    let mut lp = LinearProgram::new(Sense::Maximise);
    let view = empty_cluster_view(cluster);
    let mut cap: CapEntries = BTreeMap::new();
    let mut blocks = Vec::new();
    let mut trivial_bound = 0.0;
    for (index, job) in jobs.iter().enumerate() {
        if let Some((block, best)) = add_job(&mut lp, (index, job), cluster, &view, &mut cap)? {
            trivial_bound += best;
            blocks.push(block);
        }
    }
    // Joint capacity rows, in (machine, slot, resource) order, where two or
    // more jobs share a cell (one job's own capacity row is in its
    // LOC-SUB) and the column bounds do not already imply the row.
    for ((h, _, r), (entries, touching)) in &cap {
        let c = cluster.capacity[*h as usize][*r];
        let most: f64 = entries
            .iter()
            .map(|&(j, a)| a * lp.col_bounds(j).map_or(0.0, |b| b.1))
            .sum();
        if touching.len() > 1 && most > c * (1.0 + 1e-12) {
            lp.add_row(f64::NEG_INFINITY, c, entries);
        }
    }
    Ok(Mip {
        lp,
        blocks,
        trivial_bound,
    })
}

/// Solves the MIP: `(status, incumbent point or empty, dual bound)`.
fn solve(mip: &Mip, limits: &ExactMipLimits) -> crate::Result<(LpStatus, Vec<f64>, f64)> {
    if mip.lp.n_cols() == 0 {
        return Ok((LpStatus::Optimal, Vec::new(), 0.0));
    }
    // Presolve off (`proof_solve_options`): the optimum and the dual bound
    // are used as proofs.
    let so = limits.proof_solve_options();
    let sol = lp::solve(&mip.lp, &so)?;
    match sol.status {
        LpStatus::Optimal if sol.has_primal => {
            let bound = sol
                .mip_dual_bound
                .or(sol.objective)
                .unwrap_or(f64::INFINITY);
            Ok((sol.status, sol.primal, bound))
        }
        ref s if s.is_limit() => {
            let bound = sol.mip_dual_bound.unwrap_or(f64::INFINITY);
            let primal = if sol.has_primal {
                sol.primal
            } else {
                Vec::new()
            };
            Ok((sol.status, primal, bound))
        }
        other => Err(LpError::Solver {
            stage: "solve".into(),
            message: format!(
                "the locality offline MIP ended with status {other} (has point: {}); it always has the feasible point x = 0",
                sol.has_primal
            ),
        }
        .into()),
    }
}

/// The plan of one admitted job from the incumbent: LOC-SUB's decoding of
/// its columns, cut after the slot where its work reaches `Q_i` (relative
/// tolerance 10⁻⁹, the checker's).
fn plan_of(block: &Block, job: &LocalityJob, primal: &[f64]) -> crate::Result<LocalityPlan> {
    let n = block.sub.index.len();
    let x = primal.get(block.offset..block.offset + n).unwrap_or(&[]);
    let mut slots: Vec<SlotPlan> = Vec::new();
    let mut acc = 0.0;
    for s in block.sub.decode(job, x) {
        acc += s.work;
        slots.push(s);
        if acc >= job.minibatches * (1.0 - 1e-9) {
            return Ok(LocalityPlan {
                job: job.id,
                slots,
                worker: job.worker,
                ps: job.ps,
            });
        }
    }
    Err(LpError::Solver {
        stage: "check".into(),
        message: format!(
            "the rounded MIP incumbent admits {} but its plan does {} of Q = {} mini-batches (solver tolerance)",
            job.id,
            Num(acc),
            Num(job.minibatches)
        ),
    }
    .into())
}

/// Whether binary column `c` is 1 in the incumbent.
fn is_one(primal: &[f64], c: usize) -> bool {
    primal.get(c).is_some_and(|v| *v >= 0.5)
}

/// Refuses programs above `limits.max_columns` (estimated); returns the
/// estimate.
fn check_size(
    cluster: &LocalityCluster,
    jobs: &[LocalityJob],
    limits: &ExactMipLimits,
) -> Result<f64, LocalityError> {
    let columns = estimate_columns(cluster, jobs);
    if let Some(limit) = lp::over_column_cap(limits.max_columns, columns) {
        return Err(LocalityError::OfflineTooLarge { columns, limit });
    }
    Ok(columns as f64)
}

/// The exact offline optimum `OPT` of the locality model on a small
/// `instance` ([algorithms guide, locality
/// section](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#locality-offline-optimum)):
/// the best total utility of any assignment of plans to a subset of the
/// jobs, with the same windows and the same model as the online scheduler
/// under `params` (plan window `horizon`, `intra_factor`, `allow_local`,
/// role flags and allowed machines; the inner solver, bounds, allowance and
/// seed play no part).
///
/// # The formulation
///
/// Every job `i` (arrival order) brings its LOC-SUB columns over its window
/// at zero prices and full capacities (as the oracle's):
/// `y^L_{i,h,t}`, `u_{i,h,t}`, `y^D_{i,h,t}`, `z^D_{i,h,t}`, `v_{i,t}` with
/// the bounds `Ȳ^L`, `Ȳ^D`, `Z̄^D` of the empty cluster, and all LOC-SUB
/// rows (own capacity, `N`, one configuration, the links, bandwidth, PS
/// count and cap). Added: admission `x_i` and completion indicators
/// `u^c_{i,t}` ("job `i` completes in slot `t`") for `t ∈ U_i`:
///
/// ```text
/// maximise  Σ_i Σ_{t∈U_i} f_i(t − a_i) · u^c_{i,t}
/// s.t.      Σ_{t∈U_i} u^c_{i,t} = x_i                                        ∀i
///   (COV)   Σ_{h,t} (r^L_h y^L_{i,h,t} + r^D_i y^D_{i,h,t}) ≥ Q_i · x_i          ∀i
///           Σ_h u_{i,h,t} + v_{i,t} ≤ Σ_{t'∈U_i, t'≥t} u^c_{i,t'}             ∀i, t   (work only up to completion)
///           Σ_i (w^L y^L + s^L u + w y^D + s z^D)_{i,h,t}^r ≤ c_h^r            ∀h, r, t (joint capacity)
///           LOC-SUB's packing and linking rows of every job
///           x, u^c, u, v binary; y^L, y^D, z^D integer
/// ```
///
/// The links `y^L ≤ Ȳ^L·u` and `y^D ≤ Ȳ^D·v`, `z^D ≤ Z̄^D·v` make every
/// column of slot `t` zero unless the slot's selectors may be on, so the
/// completion row stops all of the job's work after the slot carrying
/// `u^c`; the maximisation puts `u^c` on the slot where the work reaches
/// `Q_i` or an equally good one.
///
/// **Columns left out (`OPT` unchanged).** `u^c_{i,t}` for
/// `t < a_i + d_min,i − 1` (no plan finishes earlier) or with
/// `f_i(t − a_i) = 0` (dropping such a job keeps every row and the value);
/// slot columns after the last `u^c` slot; cells where not even one unit
/// fits the empty machine; joint capacity rows of cells one job alone
/// touches (its LOC-SUB row holds it) or that the column bounds imply. A
/// job without a `u^c` column, or whose work cannot reach `Q_i` in its
/// window, gets no column.
///
/// # After the solve
///
/// Each admitted job's columns are decoded as LOC-SUB decodes a point
/// (integers rounded to the nearest) and the plan is cut after the slot
/// where its work reaches `Q_i`, its completion slot `t̂_i`;
/// [`OfflineOptimum::objective`] sums `f_i(t̂_i − a_i)` (at least the
/// MIP's incumbent value). The schedule must pass [`verify`] and
/// [`verify_locality`]. The MIP runs with the relative gap, time limit and
/// threads of `limits` (usually [`OFFLINE_LIMITS`]: one thread) and
/// **without presolve** (its optimum and dual bound are used as proofs;
/// HiGHS's MIP presolve has reported
/// sub-optimal points as optimal on programs with completion links). A
/// solve stopped at a limit is not an error: `optimal = false`, the
/// incumbent (or the empty schedule) is returned and
/// [`OfflineOptimum::upper_bound`], the smaller of the dual bound and the
/// trivial bound `Σ_i max_t f_i(t − a_i)`, is the bound on `OPT` to use in
/// ratio statements ([`OfflineOptimum::ratio_bound_over`]).
///
/// # Complexity
///
/// At most `Σ_i [|W_i|·(4H + 2) + 1]` columns (`W_i` the window) and
/// about `Σ_i |W_i|·(R·H + 4H + 6) + T·R·H` rows; the solve is exponential
/// in the worst case, hence the size limit and the time limit. Intended for
/// about 6 jobs, `H ≤ 4`, `T ≤ 8`.
///
/// # Errors
///
/// * [`LocalityError::InvalidOption`] for invalid `limits`
///   ([`ExactMipLimits::validate`]) or parameters
///   (`horizon = 0`, `intra_factor` not positive and finite);
/// * [`LocalityError::UnsupportedCluster`] and
///   [`LocalityError::UnsupportedJob`] for a cluster or a job outside the
///   model (as [`Locality::solve`](crate::algorithms::Algorithm::solve));
/// * [`LocalityError::OfflineTooLarge`] when the column estimate exceeds
///   `limits.max_columns` (checked before anything is allocated);
/// * [`crate::Error::Lp`] when the solver fails, is missing or ends in a
///   status other than optimal or a limit, or a coefficient is outside the
///   solver's range, and [`LpError::Solver`] (stage `"check"`) when a
///   rounded incumbent does not complete an admitted job's work;
/// * [`crate::Error::Schedule`] or [`LocalityError::InvalidSchedule`] when
///   a checker rejects the rebuilt schedule (a bug).
///
/// # Example
///
/// Two identical jobs on one machine with room for one LOCAL job per slot
/// (4 GPUs; each job needs 4 LOCAL workers for one slot); `f(δ) = 100 −
/// 10δ`, two slots: one job finishes in slot 0 and the other in slot 1,
/// `OPT = 100 + 90`.
///
/// ```
/// use dmlsched::algorithms::locality::{LocalityParams, OFFLINE_LIMITS, offline_optimum, verify_locality};
/// use dmlsched::model::*;
/// use dmlsched::model::units::{gb, gbps, mb};
///
/// let cap = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(gb(64.0)).nic(gbps(10.0));
/// let cluster = Cluster::new(vec![Machine::new(MachineId(0), cap, gbps(4.0))]);
/// let job = |id| Job::new(JobId(id), 0.0, PsJob {
///     epochs: 1, data_chunks: 4, minibatches_per_chunk: 100,
///     minibatch_compute_s: 0.5, gradient_bytes: mb(125.0),
///     worker: Resources::zero().gpus(1.0).cpu_cores(2.0).memory(gb(8.0)).nic(gbps(1.0)),
///     ps: Resources::zero().cpu_cores(2.0).memory(gb(8.0)).nic(gbps(4.0)),
///     max_workers: 4, max_ps: 4,
///     ..PsJob::default()
/// })
/// .with_utility(Utility::Linear { g1: 100.0, slope: 10.0 });
/// let instance = Instance::new(cluster, vec![job(0), job(1)], 100.0, 2)?;
/// let params = LocalityParams::default();
/// let opt = offline_optimum(&instance, &params, &OFFLINE_LIMITS)?;
/// assert!(opt.optimal);
/// assert!((opt.objective - 190.0).abs() < 1e-9);
/// assert!(opt.upper_bound >= opt.objective && opt.upper_bound <= 190.0 * (1.0 + 1e-9));
/// dmlsched::schedule::verify(&instance, &opt.schedule)?;
/// verify_locality(&instance, &params, &opt.schedule)?;
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn offline_optimum(
    instance: &Instance,
    params: &LocalityParams,
    limits: &ExactMipLimits,
) -> crate::Result<OfflineOptimum> {
    let start = Instant::now();
    limits.validate().map_err(LocalityError::from)?;
    let cluster = LocalityCluster::from_instance(instance)?;
    let jobs = super::jobs_of(params, instance, &cluster)?;
    let estimated_columns = check_size(&cluster, &jobs, limits)?;
    let mip = build(&cluster, &jobs)?;
    let (columns, rows) = (mip.lp.n_cols(), mip.lp.n_rows());
    let (status, primal, dual_bound) = solve(&mip, limits)?;
    let optimal = status.is_optimal();

    let mut schedule = Schedule {
        jobs: instance
            .jobs()
            .iter()
            .map(|j| JobSchedule::rejected(j.id))
            .collect(),
    };
    let mut plans: Vec<(JobId, Option<LocalityPlan>)> =
        instance.jobs().iter().map(|j| (j.id, None)).collect();
    let mut completion: Vec<(JobId, Option<u32>)> =
        instance.jobs().iter().map(|j| (j.id, None)).collect();
    let mut objective = 0.0;
    for block in mip.blocks.iter().filter(|b| is_one(&primal, b.x)) {
        let job = &jobs[block.job];
        let Some(p) = instance.job_position(job.id) else {
            continue;
        };
        let plan = plan_of(block, job, &primal)?;
        let t_hat = plan.completion_slot();
        debug_assert!(
            block
                .completion
                .iter()
                .any(|&(t, c)| t >= t_hat && is_one(&primal, c))
        );
        objective += job.utility_at(t_hat);
        completion[p].1 = Some(t_hat);
        schedule.jobs[p] = JobSchedule {
            job: job.id,
            admitted: true,
            segments: plan.segments(&cluster),
        };
        plans[p].1 = Some(plan);
    }
    verify(instance, &schedule)?;
    verify_locality(instance, params, &schedule)?;

    let (upper_bound, rel_gap) = proven_upper_bound(objective, dual_bound, mip.trivial_bound);
    Ok(OfflineOptimum {
        objective,
        upper_bound,
        optimal,
        rel_gap,
        status,
        seconds: start.elapsed().as_secs_f64(),
        schedule,
        plans,
        completion,
        estimated_columns,
        columns,
        rows,
    })
}
