//! The exact offline optimum `OPT` of the GADGET-style model on tiny
//! instances: every schedule `(s, w, n, y)` of every job enumerated, and
//! the set-packing program over them solved with HiGHS through
//! [`crate::lp`] without presolve. It is the comparison point of the online
//! scheduler's total value (`OPT/ALG`) and of its dual bounds; see
//! [`offline_optimum`] for the program, its size, the limits and the errors.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::certificate::Sense;
use crate::lp::{self, ExactMipLimits, LinearProgram, LpError, LpStatus};
use crate::model::units::Num;
use crate::model::{Instance, JobId};
use crate::online::{OfflineResult, proven_upper_bound};
use crate::schedule::verify;

use super::error::{GadgetError, too_large};
use super::model::{GadgetCluster, GadgetJob, GadgetModel, Shape, nic_fits};
use super::oracle::plan_of;
use super::params::{FairnessWeighting, GadgetParams};
use super::plan::GadgetPlan;
use super::run::schedule_of_plans;

/// Default most columns [`offline_optimum`] builds ([`OFFLINE_LIMITS`]'
/// `max_columns`), estimated before anything is enumerated. Three 4-GPU
/// servers, 12 slots and six jobs with worker counts `{1, 2, 4}` need at
/// most `6 · 12 · 24 = 1,728` columns.
pub const OFFLINE_MAX_COLUMNS: usize = 4096;

/// Default wall-clock limit of the offline solve, seconds.
pub const DEFAULT_OFFLINE_TIME_LIMIT_S: f64 = 60.0;

/// Default relative gap of the offline solve.
pub const DEFAULT_OFFLINE_MIP_GAP: f64 = 1e-9;

/// Default limits of [`offline_optimum`]: time limit
/// [`DEFAULT_OFFLINE_TIME_LIMIT_S`] = 60 s (at the limit the solver's dual
/// bound is the upper bound on `OPT`), relative gap
/// [`DEFAULT_OFFLINE_MIP_GAP`] = 10⁻⁹, threads `None` (one thread,
/// deterministic) and at most [`OFFLINE_MAX_COLUMNS`] = 4,096 columns,
/// estimated before enumerating (`None`: no cap).
pub const OFFLINE_LIMITS: ExactMipLimits =
    ExactMipLimits::new(DEFAULT_OFFLINE_TIME_LIMIT_S, DEFAULT_OFFLINE_MIP_GAP, None)
        .with_max_columns(OFFLINE_MAX_COLUMNS);

/// One job's schedule in the offline optimum.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenPlan {
    /// The schedule `(s, w, n, y)`.
    pub plan: GadgetPlan,
    /// Its value `v = ω·u(δ) − e·w·d`.
    pub value: f64,
}

/// The result of [`offline_optimum`]: the crate's one exact-offline result
/// type with the GADGET-style model's chosen schedules. Its `objective` is
/// the total value `Σ v` of the incumbent's schedules; its schedule has GPU
/// ids assigned at start by lowest free local index.
pub type GadgetOptimum = OfflineResult<ChosenPlan>;

/// One column: a schedule of positive value.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    /// Index into the model's jobs (arrival order).
    job: usize,
    /// Index into the job's shapes.
    shape: usize,
    /// First slot `s`.
    start: u32,
    /// `(server index, y_h ≥ 1)`, server index ascending.
    placement: Vec<(u32, u32)>,
    /// `v = ω·u(δ) − e·w·d > 0`.
    value: f64,
}

/// The servers a shape may use on the empty cluster, as `(server index,
/// O_h)`: for `n = 1` those of the shape's internal-bandwidth class with
/// `O_h ≥ w`; for `n ≥ 2` those whose NIC pool holds the ring reservation
/// `2b_i` (every usable server has `O_h ≥ 1`). Only servers the job may use.
fn eligible(job: &GadgetJob, cluster: &GadgetCluster, shape: &Shape) -> Vec<(u32, u32)> {
    cluster
        .servers
        .iter()
        .enumerate()
        .filter(|&(k, s)| {
            job.may_use(k)
                && if shape.servers == 1 {
                    shape.class.is_none_or(|c| c == s.class) && s.gpus >= shape.workers
                } else {
                    nic_fits(s.nic, s.nic, job.ring_nic)
                }
        })
        .map(|(k, s)| (k as u32, s.gpus))
        .collect()
}

/// The starts `s ∈ [earliest, latest]` of `shape` with a positive value,
/// with that value.
fn positive_starts(job: &GadgetJob, shape: &Shape, horizon: u32) -> Vec<(u32, f64)> {
    job.latest_start(shape, horizon)
        .map_or_else(Vec::new, |last| {
            (job.earliest..=last)
                .map(|s| (s, job.value(s, shape)))
                .filter(|&(_, v)| v > 0.0)
                .collect()
        })
}

/// `C(n, k)` in floating point (exact for the small arguments that pass
/// the column limit, `+∞` on overflow).
fn binomial(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// An upper bound on the embeddings of `w` workers on exactly `n` of the
/// servers `servers` with `1 ≤ y_h ≤ O_h`: `C(|servers|, n)` times the
/// compositions of `w` into `n` parts in `[1, max O_h]`, counted by a
/// dynamic programme of sums of non-negative terms (no cancellation) when
/// it takes at most `2¹⁶` steps, else bounded by `C(w − 1, n − 1)`.
fn embedding_bound(servers: &[(u32, u32)], w: u32, n: u32) -> f64 {
    let subsets = binomial(servers.len() as u64, u64::from(n));
    let cap = servers.iter().map(|&(_, o)| o).max().unwrap_or(0);
    if subsets == 0.0 || n == 0 || u64::from(w) > u64::from(n) * u64::from(cap) {
        return 0.0;
    }
    let steps = u64::from(n) * u64::from(w) * u64::from(cap.min(w));
    if steps > 1 << 16 {
        return subsets * binomial(u64::from(w) - 1, u64::from(n) - 1);
    }
    // ways[x]: compositions of x into the parts placed so far.
    let (w, cap) = (w as usize, cap as usize);
    let mut ways = vec![0.0; w + 1];
    ways[0] = 1.0;
    for _ in 0..n {
        let next: Vec<f64> = (0..=w)
            .map(|x| (1..=cap.min(x)).map(|y| ways[x - y]).sum())
            .collect();
        ways = next;
    }
    subsets * ways[w]
}

/// The column estimate: over every job and every shape that embeds on the
/// empty cluster, the starts of positive value times [`embedding_bound`],
/// an upper bound on the columns [`enumerate`] builds. The sum stops as soon
/// as it exceeds `limit` (so at most `limit + 1` shapes reach the
/// embedding count).
fn estimate_columns(model: &GadgetModel, limit: f64) -> f64 {
    let cluster = &model.cluster;
    let mut total = 0.0;
    for job in &model.jobs {
        for shape in &job.shapes {
            let starts = positive_starts(job, shape, cluster.horizon).len() as f64;
            if starts == 0.0 || !job.fits_empty(cluster, shape) {
                continue;
            }
            let servers = eligible(job, cluster, shape);
            let embeddings = if shape.servers == 1 {
                servers.len() as f64
            } else {
                embedding_bound(&servers, shape.workers, shape.servers)
            };
            total += starts * embeddings;
            if total > limit {
                return total;
            }
        }
    }
    total
}

/// Every embedding of `w` workers on exactly `n` of `servers`
/// (`(server index, O_h)`, index ascending) with `1 ≤ y_h ≤ O_h`, each as
/// `(server index, y_h)` in index order.
fn embeddings(servers: &[(u32, u32)], w: u32, n: u32) -> Vec<Vec<(u32, u32)>> {
    fn extend(
        servers: &[(u32, u32)],
        (n, w): (u32, u32),
        current: &mut Vec<(u32, u32)>,
        out: &mut Vec<Vec<(u32, u32)>>,
    ) {
        if n == 0 {
            if w == 0 {
                out.push(current.clone());
            }
            return;
        }
        // Each later server needs at least one worker.
        for (i, &(k, cap)) in servers.iter().enumerate() {
            if servers.len() - i < n as usize {
                break;
            }
            for y in 1..=cap.min(w.saturating_sub(n - 1)) {
                current.push((k, y));
                extend(&servers[i + 1..], (n - 1, w - y), current, out);
                current.pop();
            }
        }
    }
    let mut out = Vec::new();
    if n >= 1 && w >= n {
        extend(
            servers,
            (n, w),
            &mut Vec::with_capacity(n as usize),
            &mut out,
        );
    }
    out
}

/// Every schedule of positive value of every job (arrival order, then
/// shape, embedding and start), and the trivial bound `Σ_i max_l v_i(l)`.
fn enumerate(model: &GadgetModel) -> (Vec<Column>, f64) {
    let cluster = &model.cluster;
    let mut columns = Vec::new();
    let mut trivial = 0.0;
    for (j, job) in model.jobs.iter().enumerate() {
        let mut best = 0.0_f64;
        for (index, shape) in job.shapes.iter().enumerate() {
            let starts = positive_starts(job, shape, cluster.horizon);
            if starts.is_empty() || !job.fits_empty(cluster, shape) {
                continue;
            }
            let servers = eligible(job, cluster, shape);
            let placements = if shape.servers == 1 {
                servers
                    .iter()
                    .map(|&(k, _)| vec![(k, shape.workers)])
                    .collect()
            } else {
                embeddings(&servers, shape.workers, shape.servers)
            };
            for placement in &placements {
                for &(start, value) in &starts {
                    best = best.max(value);
                    columns.push(Column {
                        job: j,
                        shape: index,
                        start,
                        placement: placement.clone(),
                        value,
                    });
                }
            }
        }
        trivial += best;
    }
    (columns, trivial)
}

/// The entries of one capacity row (a server's GPUs or NIC pool in one
/// slot), and what the jobs touching it can take together at most.
#[derive(Debug, Default)]
struct CellRow {
    entries: Vec<(usize, f64)>,
    /// `Σ` over the jobs before `job` of their largest coefficient here.
    earlier: f64,
    /// The job whose columns are being added.
    job: Option<usize>,
    /// Its largest coefficient here so far.
    largest: f64,
}

impl CellRow {
    fn push(&mut self, job: usize, column: usize, coefficient: f64) {
        if self.job != Some(job) {
            self.earlier += self.largest;
            self.largest = 0.0;
            self.job = Some(job);
        }
        self.largest = self.largest.max(coefficient);
        self.entries.push((column, coefficient));
    }

    /// Whether the row can bind: the jobs' largest coefficients exceed the
    /// capacity (one schedule per job, so otherwise it is implied).
    fn binds(&self, capacity: f64) -> bool {
        self.earlier + self.largest > capacity * (1.0 + 1e-12)
    }
}

/// Capacity rows per `(server index, slot, resource: 0 GPU, 1 NIC)`.
type Cells = BTreeMap<(u32, u32, u8), CellRow>;

/// The set-packing program documented on [`offline_optimum`]: one binary
/// column per schedule, its value as the objective coefficient.
fn build(model: &GadgetModel, columns: &[Column]) -> LinearProgram {
    let mut lp = LinearProgram::new(Sense::Maximise);
    let mut cells: Cells = BTreeMap::new();
    let mut per_job: Vec<Vec<(usize, f64)>> = vec![Vec::new(); model.jobs.len()];
    for (c, col) in columns.iter().enumerate() {
        let x = lp.add_binary_column(col.value);
        debug_assert_eq!(x, c);
        let job = &model.jobs[col.job];
        let shape = &job.shapes[col.shape];
        per_job[col.job].push((x, 1.0));
        for t in col.start..col.start + shape.slots {
            for &(k, y) in &col.placement {
                let gpu = cells.entry((k, t, 0)).or_default();
                gpu.push(col.job, x, f64::from(y));
                if shape.servers >= 2 {
                    // NIC rows scaled to a capacity of 1.
                    let nic = model.cluster.servers[k as usize].nic;
                    let row = cells.entry((k, t, 1)).or_default();
                    row.push(col.job, x, job.ring_nic / nic);
                }
            }
        }
    }
    for row in per_job.iter().filter(|r| r.len() > 1) {
        lp.add_row(f64::NEG_INFINITY, 1.0, row);
    }
    for (&(k, _, resource), row) in &cells {
        let capacity = if resource == 0 {
            f64::from(model.cluster.servers[k as usize].gpus)
        } else {
            1.0
        };
        if row.binds(capacity) {
            lp.add_row(f64::NEG_INFINITY, capacity, &row.entries);
        }
    }
    lp
}

/// Solves the program: `(status, incumbent point or empty, dual bound)`.
/// An empty program is solved without the solver (optimum 0).
fn solve(lp: &LinearProgram, limits: &ExactMipLimits) -> crate::Result<(LpStatus, Vec<f64>, f64)> {
    if lp.n_cols() == 0 {
        return Ok((LpStatus::Optimal, Vec::new(), 0.0));
    }
    // Presolve off: the optimum and the dual bound are used as proofs.
    let sol = lp::solve(lp, &limits.proof_solve_options())?;
    let point = |has: bool, primal: Vec<f64>| if has { primal } else { Vec::new() };
    match sol.status {
        LpStatus::Optimal if sol.has_primal => {
            let bound = sol.mip_dual_bound.or(sol.objective);
            Ok((sol.status, sol.primal, bound.unwrap_or(f64::INFINITY)))
        }
        ref s if s.is_limit() => {
            let bound = sol.mip_dual_bound.unwrap_or(f64::INFINITY);
            Ok((sol.status.clone(), point(sol.has_primal, sol.primal), bound))
        }
        ref other => Err(LpError::Solver {
            stage: "solve".into(),
            message: format!(
                "the GADGET-style offline program ended with status {other} (has point: {}); it always has the feasible point x = 0",
                sol.has_primal
            ),
        }
        .into()),
    }
}

/// The chosen columns of an incumbent (`x ≥ 1/2`), at most one per job,
/// re-checked against the capacities: GPUs exactly, NIC pools within the
/// model's relative slack.
fn decode<'a>(
    model: &GadgetModel,
    columns: &'a [Column],
    primal: &[f64],
) -> Result<Vec<&'a Column>, LpError> {
    let check = |message: String| LpError::Solver {
        stage: "check".into(),
        message,
    };
    let chosen: Vec<&Column> = columns
        .iter()
        .zip(primal)
        .filter(|(_, x)| **x >= 0.5)
        .map(|(c, _)| c)
        .collect();
    let mut load: BTreeMap<(u32, u32), (u32, f64)> = BTreeMap::new();
    let mut seen = vec![false; model.jobs.len()];
    for col in &chosen {
        let job = &model.jobs[col.job];
        if std::mem::replace(&mut seen[col.job], true) {
            return Err(check(format!(
                "the incumbent gives {} two schedules",
                job.id
            )));
        }
        let shape = &job.shapes[col.shape];
        let nic = if shape.servers >= 2 {
            job.ring_nic
        } else {
            0.0
        };
        for t in col.start..col.start + shape.slots {
            for &(k, y) in &col.placement {
                let cell = load.entry((k, t)).or_default();
                cell.0 += y;
                cell.1 += nic;
                let server = &model.cluster.servers[k as usize];
                if cell.0 > server.gpus || !nic_fits(server.nic, server.nic, cell.1) {
                    return Err(check(format!(
                        "the rounded incumbent over-commits server {} ({}) in slot {t}: {} of {} GPUs, {} of {} NIC data units (solver tolerance)",
                        k,
                        server.machine,
                        cell.0,
                        server.gpus,
                        Num(cell.1),
                        Num(server.nic)
                    )));
                }
            }
        }
    }
    Ok(chosen)
}

/// Sets every job's frozen weight `ω` from `weights` (1 for jobs not
/// listed).
fn apply_weights(
    instance: &Instance,
    jobs: &mut [GadgetJob],
    weights: &BTreeMap<JobId, f64>,
) -> Result<(), GadgetError> {
    for (&id, &w) in weights {
        if instance.job(id).is_none() || !(w.is_finite() && w >= 0.0) {
            return Err(GadgetError::InvalidOption {
                name: "weights",
                reason: format!(
                    "{id} → {}: every weight must name a job of the instance and be finite and ≥ 0",
                    Num(w)
                ),
            });
        }
    }
    for job in jobs {
        job.omega = weights.get(&job.id).copied().unwrap_or(1.0);
    }
    Ok(())
}

/// The exact offline optimum `OPT` of the GADGET-style model on a tiny
/// `instance`, over the same schedules as the online scheduler under
/// `params` (worker counts, work unit, iterations trained, progress mode,
/// servers per ring `n_max`, lookahead, energy price, duration tables; the
/// oracle, the bounds, headroom and the loop's options play no part), with
/// every fairness weight `ω = 1`.
///
/// # Fairness weights
///
/// Under [`FairnessWeighting::TenantShare`] a job's weight is frozen at
/// its arrival from the GPU-slots the online run has committed to each
/// tenant so far: it depends on the online decisions, so it defines no
/// offline problem of its own. That case is refused here; the optimum for
/// weights fixed per job, for instance those a run froze
/// ([`JobRecord::omega`](super::JobRecord::omega)), is
/// [`offline_optimum_weighted`].
///
/// # The program
///
/// Jobs `i` in arrival order, slots 0-based, servers `h` with `O_h` usable
/// GPUs and a NIC reservation pool `B_h`. A schedule `l = (s, w, n, y)` of
/// job `i` runs `w ∈ W_i` workers, `y_h ≥ 1` of them on each of exactly `n`
/// servers (`Σ_h y_h = w`, `y_h ≤ O_h`), in every slot of `[s, s + d)`
/// with `d = d_i(w, n)`, `a_i ≤ s` and `s + d ≤ T`; a ring on `n ≥ 2`
/// servers reserves `r_h = 2b_i` on each. Its value is
/// `v_i(l) = ω_i·u_i(s + d − a_i) − e·w·d`, and only schedules with
/// `v_i(l) > 0` are columns. `L_i` is every such schedule: every start,
/// every shape `(w, n)` of the job, and every embedding `y` (every set of
/// `n` servers the job may use and every composition of `w` over them),
/// where `n = 1` uses a server of the shape's internal-bandwidth class with
/// `O_h ≥ w` and `n ≥ 2` only servers with `B_h ≥ 2b_i`.
///
/// ```text
/// maximise   Σ_i Σ_{l ∈ L_i} v_i(l) · x_il
/// s.t.       Σ_i Σ_{l ∋ (h,t)} y^l_h · x_il ≤ O_h           ∀h, t    (GPUs)
///            Σ_i Σ_{l ∋ (h,t)} r^l_h · x_il ≤ B_h           ∀h, t    (NIC reservations)
///            Σ_{l ∈ L_i} x_il ≤ 1                           ∀i
///            x_il ∈ {0, 1}
/// ```
///
/// NIC rows are scaled to a capacity of 1 (coefficients `r_h/B_h`). A
/// capacity row is left out where the largest coefficients of the jobs
/// touching it sum to at most the capacity (at most one schedule per job,
/// so it cannot bind), and a job's row where it has one column.
///
/// The online scheduler's schedules are exactly these, so `ALG ≤ OPT`; the
/// dual of the program's LP relaxation is the online framework's dual (GPU
/// prices `p_h(t)`, NIC prices `q_h(t)`, `µ_i`), so every dual value of a
/// run whose `µ_i` are best payoffs over all of `L_i` is at least `OPT`.
///
/// # After the solve
///
/// The incumbent's chosen columns (`x ≥ 1/2`) are re-checked against the
/// capacities (GPUs exactly, NIC pools within a relative 10⁻¹²), turned
/// into [`GadgetPlan`]s and into a [`Schedule`](crate::schedule::Schedule) with GPU ids assigned at
/// start by lowest free local index, which [`verify`] must accept.
/// [`GadgetOptimum::objective`] sums the chosen values. The solve runs with
/// the gap and the time limit of `limits`, one thread by default and
/// **without presolve** (its optimum and dual bound are proofs; HiGHS's
/// MIP presolve has reported sub-optimal points as optimal on programs of
/// this crate). A solve stopped at a limit is not an error: `optimal =
/// false`, the incumbent (or the empty schedule) is returned and
/// [`GadgetOptimum::upper_bound`], the smaller of the dual bound and the
/// trivial bound `Σ_i max_l v_i(l)`, is the bound to use in ratio
/// statements ([`GadgetOptimum::ratio_bound_over`]).
///
/// # Complexity
///
/// One column per schedule: `Σ_i Σ_{(w,n)} S_{i,w,n}·E_{w,n}` with
/// `S` the starts of positive value and `E_{w,n}` the embeddings, at most
/// `C(|H|, n)` server sets times the compositions of `w` into `n` parts of
/// at most `max_h O_h`. The sum of those products is the estimate checked
/// against `limits.max_columns` before anything is enumerated
/// (the sum stops once past the limit, so checking costs at most
/// `max_columns + 1` embedding counts of at most `2¹⁶` steps each). Three
/// 4-GPU servers, `T = 12` and six jobs with `W_i = {1, 2, 4}` give at most
/// `6·12·24 = 1,728` columns; the rows are at most `2·|H|·T + |jobs|`.
/// The solve is exponential in the worst case, hence the limits; the
/// program is meant for tiny instances.
///
/// # Errors
///
/// * [`GadgetError::InvalidOption`] for invalid `limits`
///   ([`ExactMipLimits::validate`]) or `params`, or
///   fairness weights of [`FairnessWeighting::TenantShare`];
/// * the model's errors (a job or cluster outside the model; see the
///   [module documentation](crate::algorithms::gadget#errors));
/// * [`GadgetError::TooLarge`] when the column estimate exceeds
///   `limits.max_columns` (checked before enumerating);
/// * [`crate::Error::Lp`] when the solver is missing
///   ([`LpError::SolverUnavailable`] without the `highs` feature, unless no
///   job has a schedule of positive value), fails, ends in a status other
///   than optimal or a limit, or a value is outside the solver's range
///   ([`LpError::OutOfSolverRange`]); [`LpError::Solver`] (stage
///   `"check"`) when the rounded incumbent over-commits a server;
/// * [`crate::Error::Schedule`] when [`verify`] rejects the rebuilt
///   schedule (a bug).
///
/// # Example
///
/// One 4-GPU server, three slots, two jobs that each need its four GPUs for
/// two slots (duration tables): only one fits, the more valuable one.
///
/// ```
/// use std::collections::BTreeMap;
/// use dmlsched::algorithms::Algorithm;
/// use dmlsched::algorithms::gadget::*;
/// use rand::SeedableRng;
/// use dmlsched::model::*;
///
/// let server = Machine::new(MachineId(0), Resources::zero().gpus(4.0).cpu_cores(4.0), 1e9);
/// let ring = RarJob { workers: WorkerCounts::Fixed(4), ..RarJob::default() };
/// let jobs = vec![
///     Job::new(JobId(0), 0.0, ring.clone()).with_utility(Utility::Constant { value: 3.0 }),
///     Job::new(JobId(1), 0.0, ring).with_utility(Utility::Constant { value: 5.0 }),
/// ];
/// let instance = Instance::new(Cluster::new(vec![server]), jobs, 60.0, 3)?;
/// let table = DurationTable::new([((4, 1), 2)]);
/// let mut params = GadgetParams::default();
/// params.durations = BTreeMap::from([(JobId(0), table.clone()), (JobId(1), table)]);
/// let opt = match offline_optimum(&instance, &params, &OFFLINE_LIMITS) {
///     Ok(opt) => opt,
///     // Without the `highs` feature there is no solver.
///     Err(dmlsched::Error::Lp(dmlsched::lp::LpError::SolverUnavailable)) => return Ok(()),
///     Err(e) => return Err(e),
/// };
/// assert!(opt.optimal && (opt.objective - 5.0).abs() < 1e-9);
/// dmlsched::schedule::verify(&instance, &opt.schedule)?;
///
/// // The online run admits the first job, which blocks the second:
/// // ALG = 3 ≤ OPT = 5, and its certificate accepts the comparison point.
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let solved = Gadget::new(params)?.solve(&instance, &mut rng)?;
/// assert_eq!(solved.report.total_value(), 3.0);
/// solved.certificate.clone().with_exact(opt.exact_info()).check(1e-9)?;
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn offline_optimum(
    instance: &Instance,
    params: &GadgetParams,
    limits: &ExactMipLimits,
) -> crate::Result<GadgetOptimum> {
    if let FairnessWeighting::TenantShare { .. } = params.fairness {
        return Err(GadgetError::InvalidOption {
            name: "fairness",
            reason: "tenant-share weights are frozen from the online run's commitments, so they define no offline problem; pass fixed per-job weights (e.g. those a run froze) to offline_optimum_weighted".into(),
        }
        .into());
    }
    offline_optimum_weighted(instance, params, &BTreeMap::new(), limits)
}

/// [`offline_optimum`] with the fairness weight `ω_i` of every job fixed
/// by `weights` (1 for jobs not listed), whatever `params.fairness` says:
/// for instance the weights an online run froze at arrival
/// ([`JobRecord::omega`](super::JobRecord::omega)), whose values its
/// certificate's dual bounds refer to.
///
/// # Errors
///
/// As [`offline_optimum`] (but any fairness option is accepted), and
/// [`GadgetError::InvalidOption`] (`"weights"`) for a weight that is not
/// finite and `≥ 0` or names a job outside the instance.
pub fn offline_optimum_weighted(
    instance: &Instance,
    params: &GadgetParams,
    weights: &BTreeMap<JobId, f64>,
    limits: &ExactMipLimits,
) -> crate::Result<GadgetOptimum> {
    let start = Instant::now();
    limits.validate().map_err(|e| GadgetError::InvalidOption {
        name: e.name,
        reason: e.reason,
    })?;
    let mut model = GadgetModel::new(instance, params)?;
    apply_weights(instance, &mut model.jobs, weights)?;
    let limit = limits.max_columns.map_or(f64::INFINITY, |m| m as f64);
    let estimated_columns = estimate_columns(&model, limit);
    too_large(
        "columns of the offline program (estimated before enumeration, at least)",
        estimated_columns,
        limit,
    )?;
    let (columns, trivial_bound) = enumerate(&model);
    let lp = build(&model, &columns);
    let (status, primal, dual_bound) = solve(&lp, limits)?;
    let chosen = decode(&model, &columns, &primal)?;

    let mut plans: Vec<(JobId, Option<ChosenPlan>)> =
        instance.jobs().iter().map(|j| (j.id, None)).collect();
    let mut completion: Vec<(JobId, Option<u32>)> =
        instance.jobs().iter().map(|j| (j.id, None)).collect();
    let mut objective = 0.0;
    for col in &chosen {
        let job = &model.jobs[col.job];
        let plan = plan_of(
            job,
            &job.shapes[col.shape],
            col.start,
            col.placement.clone(),
        );
        objective += col.value;
        completion[job.position].1 = Some(plan.completion());
        plans[job.position].1 = Some(ChosenPlan {
            plan,
            value: col.value,
        });
    }
    let in_arrival_order = model
        .jobs
        .iter()
        .filter_map(|j| plans[j.position].1.as_ref().map(|c| &c.plan));
    let schedule = schedule_of_plans(&model.cluster, instance, in_arrival_order)?;
    verify(instance, &schedule)?;

    let (upper_bound, rel_gap) = proven_upper_bound(objective, dual_bound, trivial_bound);
    Ok(GadgetOptimum {
        objective,
        upper_bound,
        optimal: status.is_optimal(),
        rel_gap,
        status,
        seconds: start.elapsed().as_secs_f64(),
        schedule,
        plans,
        completion,
        estimated_columns,
        columns: lp.n_cols(),
        rows: lp.n_rows(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_are_every_composition_on_every_server_set() {
        let three = [(0, 4), (1, 4), (2, 4)];
        // w = 4: n = 2 on 3 pairs × (1,3), (2,2), (3,1); n = 3: 3 ways.
        assert_eq!(embeddings(&three, 4, 2).len(), 9);
        assert_eq!(
            embeddings(&three, 4, 3),
            vec![
                vec![(0, 1), (1, 1), (2, 2)],
                vec![(0, 1), (1, 2), (2, 1)],
                vec![(0, 2), (1, 1), (2, 1)],
            ]
        );
        // Per-server capacities bind: 6 workers on two servers of 4 and 2.
        assert_eq!(
            embeddings(&[(0, 4), (3, 2)], 6, 2),
            vec![vec![(0, 4), (3, 2)]]
        );
        assert!(embeddings(&three, 2, 3).is_empty());
        assert!(embeddings(&three, 13, 3).is_empty());
        assert!(embeddings(&three, 4, 0).is_empty());
    }

    #[test]
    fn the_estimate_bounds_the_embeddings() {
        let servers = [(0, 4), (1, 4), (2, 4), (5, 2)];
        for w in 1..=14 {
            for n in 1..=4 {
                let exact = embeddings(&servers, w, n).len() as f64;
                let bound = embedding_bound(&servers, w, n);
                assert!(exact <= bound, "w = {w}, n = {n}: {exact} > {bound}");
                // Equal when every server has the largest capacity.
                let even = embeddings(&servers[..3], w, n).len() as f64;
                assert_eq!(even, embedding_bound(&servers[..3], w, n), "w {w} n {n}");
            }
        }
        assert_eq!(binomial(5, 2), 10.0);
        assert_eq!(binomial(2, 5), 0.0);
        // More workers than the servers hold: none.
        assert_eq!(
            embedding_bound(&[(0, 1 << 20), (1, 1 << 20)], 1 << 22, 2),
            0.0
        );
        // Beyond the programme's budget: C(|H|, n)·C(w − 1, n − 1).
        let big = embedding_bound(&[(0, 1 << 21), (1, 1 << 21), (2, 1 << 21)], 1 << 21, 3);
        assert_eq!(big, binomial((1 << 21) - 1, 2));
        // Within the budget the programme counts exactly: 128 workers on two
        // servers of 128 GPUs, y_0 ∈ [1, 127] (2·128·128 steps).
        assert_eq!(embedding_bound(&[(0, 128), (1, 128)], 128, 2), 127.0);
        // Beyond it (2·256·256 steps) the binomial bound, equal here.
        assert_eq!(embedding_bound(&[(0, 256), (1, 256)], 256, 2), 255.0);
        // Capacities bind inside the budget: 10 workers, parts in [1, 6].
        assert_eq!(embedding_bound(&[(0, 6), (1, 6)], 10, 2), 3.0);
    }
}
