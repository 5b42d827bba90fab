//! The exact offline optimum of OASiS's problem ([algorithms guide, section
//! 7.5](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-exact-mip)): a time-indexed mixed-integer program over the
//! chunk model Algorithm 2 searches (the paper's looser constraint (2) is an
//! option), solved with HiGHS through [`crate::lp`] within a time limit
//! (120 s by default). See [`offline_optimum`] for the
//! formulation, its size, the limits and the errors.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::certificate::Sense;
use crate::lp::{self, ColumnKind, ExactMipLimits, LinearProgram, LpError, LpStatus};
use crate::model::units::Num;
use crate::model::{Instance, JobId};
use crate::online::{OfflineResult, proven_upper_bound};
use crate::schedule::{JobSchedule, Schedule, verify};

use super::error::OasisError;
use super::jobs_in_arrival_order;
use super::model::{OasisCluster, OasisJob, Role};
use super::plan::{OasisPlan, SlotPlan};

/// How the MIP counts a job's training work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WorkModel {
    /// Whole chunks per slot (the model Algorithm 2 searches): integer
    /// `k_it` chunks in slot `t` need `Σ_h y_iht ≥ ρ_i·k_it` workers and
    /// `Σ_t k_it = D_i`. The default; the optimum OASiS is compared with.
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Chunks"))]
    Chunks,
    /// The paper's constraint (2): `Σ_t Σ_h y_iht ≥ D_i·ρ_i` real
    /// worker-slots. Looser than [`Chunks`](Self::Chunks); for Figure 5
    /// comparisons with the paper.
    #[cfg_attr(feature = "serde", serde(alias = "WorkerSlots"))]
    WorkerSlots,
}

/// Options of [`offline_optimum`]: the solver's limits and the work model.
///
/// ```
/// use dmlsched::algorithms::oasis::{ExactOptions, WorkModel};
/// let mut opts = ExactOptions::default();
/// assert_eq!((opts.limits.time_limit_s, opts.limits.mip_rel_gap), (120.0, 1e-6));
/// opts.limits.time_limit_s = 10.0;
/// opts.work_model = WorkModel::WorkerSlots;
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ExactOptions {
    /// Limits of the MIP solve: wall-clock limit (default 120 s; at the
    /// limit the MIP's dual bound is the `OPT` used in ratios), relative
    /// gap at which the solve counts as optimal (default `1e-6`) and
    /// threads (default `None`: one thread, deterministic). No column cap
    /// (`max_columns` must be `None`): the program's size is bounded by
    /// [`EXACT_MAX_COLUMNS`]. Flattened in JSON.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub limits: ExactMipLimits,
    /// The work model (default [`WorkModel::Chunks`]).
    pub work_model: WorkModel,
}

impl Default for ExactOptions {
    fn default() -> Self {
        ExactOptions {
            limits: ExactMipLimits::new(120.0, 1e-6, None),
            work_model: WorkModel::Chunks,
        }
    }
}

impl ExactOptions {
    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`OasisError::InvalidOption`] for a time limit that is not positive
    /// and finite, a gap outside `[0, 1)`, a column cap, or
    /// `threads == Some(0)` ([`ExactMipLimits::validate_uncapped`]).
    pub fn validate(&self) -> Result<(), OasisError> {
        Ok(self.limits.validate_uncapped()?)
    }
}

/// The result of [`offline_optimum`]: the crate's one exact-offline result
/// type with OASiS's plans. Its `objective` is the total utility of the
/// incumbent, each job's utility at its last slot with workers.
pub type OfflineSolution = OfflineResult<OasisPlan>;

/// Columns of one job in one slot.
struct SlotCols {
    /// The slot.
    t: u32,
    /// `(server position, y column)`.
    y: Vec<(u32, usize)>,
    /// `(server position, z column)`.
    z: Vec<(u32, usize)>,
    /// The `k` column (chunk model only).
    k: Option<usize>,
}

/// Columns of one job (in arrival order).
struct JobCols {
    /// Index into the arrival-ordered job list.
    job: usize,
    /// `x_i`.
    x: usize,
    /// Slot columns from the first usable slot to the last `u` slot.
    slots: Vec<SlotCols>,
}

/// The MIP and the map from its columns back to the jobs.
struct Mip {
    lp: LinearProgram,
    jobs: Vec<JobCols>,
    /// `Σ_i max_t f_i(t − a_i)` over the `u` columns.
    trivial_bound: f64,
}

/// Usable servers of a role for a job (dedicated and shared, ascending):
/// `(position, min(task cap, units fitting the empty server))`, servers with
/// 0 left out.
fn usable(cluster: &OasisCluster, job: &OasisJob, role: Role, task_cap: u32) -> Vec<(u32, u32)> {
    job.empty_server_caps(cluster, role)
        .into_iter()
        .map(|(m, cap)| (m, cap.min(task_cap)))
        .filter(|&(_, cap)| cap > 0)
        .collect()
}

/// Builds the time-indexed MIP documented on [`offline_optimum`].
fn build(cluster: &OasisCluster, jobs: &[OasisJob], model: WorkModel) -> Mip {
    let horizon = cluster.horizon;
    let mut lp = LinearProgram::new(Sense::Maximise);
    let mut out = Vec::new();
    let mut trivial_bound = 0.0;
    // Capacity entries per (machine, slot, resource) cell that some column
    // uses: memory follows the columns, not machines × horizon.
    let mut cap_entries: CapEntries = BTreeMap::new();

    for (index, job) in jobs.iter().enumerate() {
        let n_max = job.max_workers;
        let workers = usable(cluster, job, Role::Worker, n_max);
        let ps = usable(cluster, job, Role::Ps, job.max_ps);
        let k_max = job.chunks_for(u64::from(n_max));
        if workers.is_empty() || ps.is_empty() || (model == WorkModel::Chunks && k_max == 0) {
            continue;
        }
        let first_u = u64::from(job.earliest) + u64::from(job.d_min()) - 1;
        let u_slots: Vec<(u32, f64)> = (job.earliest..horizon)
            .filter(|&t| u64::from(t) >= first_u)
            .map(|t| (t, job.utility_at(t)))
            .filter(|&(_, f)| f > 0.0)
            .collect();
        let Some(&(last, _)) = u_slots.last() else {
            continue;
        };
        trivial_bound += u_slots.iter().map(|&(_, f)| f).fold(0.0, f64::max);

        let x = lp.add_binary_column(0.0);
        let u: Vec<(u32, usize)> = u_slots
            .iter()
            .map(|&(t, f)| (t, lp.add_binary_column(f)))
            .collect();
        let slots: Vec<SlotCols> = (job.earliest..=last)
            .map(|t| SlotCols {
                t,
                y: workers
                    .iter()
                    .map(|&(m, cap)| {
                        (
                            m,
                            lp.add_column(0.0, 0.0, f64::from(cap), ColumnKind::Integer),
                        )
                    })
                    .collect(),
                z: ps
                    .iter()
                    .map(|&(m, cap)| {
                        (
                            m,
                            lp.add_column(0.0, 0.0, f64::from(cap), ColumnKind::Integer),
                        )
                    })
                    .collect(),
                k: (model == WorkModel::Chunks)
                    .then(|| lp.add_column(0.0, 0.0, k_max as f64, ColumnKind::Integer)),
            })
            .collect();

        // Σ_t u_it = x_i.
        let mut row: Vec<(usize, f64)> = u.iter().map(|&(_, c)| (c, 1.0)).collect();
        row.push((x, -1.0));
        lp.add_row(0.0, 0.0, &row);

        // The work.
        let d = job.total_chunks as f64;
        match model {
            WorkModel::Chunks => {
                let mut row: Vec<(usize, f64)> =
                    slots.iter().filter_map(|s| s.k.map(|k| (k, 1.0))).collect();
                row.push((x, -d));
                lp.add_row(0.0, 0.0, &row);
            }
            WorkModel::WorkerSlots => {
                let mut row: Vec<(usize, f64)> = slots
                    .iter()
                    .flat_map(|s| s.y.iter().map(|&(_, c)| (c, 1.0)))
                    .collect();
                row.push((x, -d * job.rho));
                lp.add_row(0.0, f64::INFINITY, &row);
            }
        }

        for s in &slots {
            add_slot_rows(&mut lp, job, s, &workers, &u, &mut cap_entries);
        }
        out.push(JobCols {
            job: index,
            x,
            slots,
        });
    }

    // In (machine, slot, resource) order, as a dense sweep would add them.
    for ((m, _, r), entries) in &cap_entries {
        lp.add_row(
            f64::NEG_INFINITY,
            cluster.capacity[*m as usize][*r],
            entries,
        );
    }
    Mip {
        lp,
        jobs: out,
        trivial_bound,
    }
}

/// Capacity-row entries per (machine, slot, resource) cell.
type CapEntries = BTreeMap<(u32, u32, usize), Vec<(usize, f64)>>;

/// The rows of one slot of one job: chunks ≤ ρ·workers, the worker cap and
/// per-machine caps while the job is unfinished, (6) bandwidth balance,
/// (7) at most as many PSs as workers, the PS cap; and its capacity entries
/// (4) and (5).
fn add_slot_rows(
    lp: &mut LinearProgram,
    job: &OasisJob,
    s: &SlotCols,
    workers: &[(u32, u32)],
    u: &[(u32, usize)],
    cap_entries: &mut CapEntries,
) {
    let n_max = job.max_workers;
    let y_sum: Vec<(usize, f64)> = s.y.iter().map(|&(_, c)| (c, 1.0)).collect();
    // Σ_{t' ≥ t} u_it'.
    let later: Vec<usize> = u
        .iter()
        .filter(|&&(t, _)| t >= s.t)
        .map(|&(_, c)| c)
        .collect();
    if let Some(k) = s.k {
        let mut row = y_sum.clone();
        row.push((k, -job.rho));
        lp.add_row(0.0, f64::INFINITY, &row);
    }
    let mut row = y_sum.clone();
    row.extend(later.iter().map(|&c| (c, -f64::from(n_max))));
    lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    for (&(_, col), &(_, cap)) in s.y.iter().zip(workers) {
        let mut row = vec![(col, 1.0)];
        row.extend(later.iter().map(|&c| (c, -f64::from(cap))));
        lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    }
    // (6) b·Σy − B·Σz ≤ 0.
    let mut row: Vec<(usize, f64)> = s.y.iter().map(|&(_, c)| (c, job.worker_gbps)).collect();
    row.extend(s.z.iter().map(|&(_, c)| (c, -job.ps_gbps)));
    lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    // (7) Σz − Σy ≤ 0.
    let mut row: Vec<(usize, f64)> = s.z.iter().map(|&(_, c)| (c, 1.0)).collect();
    row.extend(s.y.iter().map(|&(_, c)| (c, -1.0)));
    lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    // Σz ≤ max_ps.
    let row: Vec<(usize, f64)> = s.z.iter().map(|&(_, c)| (c, 1.0)).collect();
    lp.add_row(f64::NEG_INFINITY, f64::from(job.max_ps), &row);
    // Capacity entries, (4) and (5).
    for (tasks, demand) in [(&s.y, &job.worker_demand), (&s.z, &job.ps_demand)] {
        for &(m, col) in tasks {
            for (r, &dr) in demand.iter().enumerate() {
                if dr > 0.0 {
                    cap_entries.entry((m, s.t, r)).or_default().push((col, dr));
                }
            }
        }
    }
}

/// A solver value of an integer column, rounded to the nearest integer
/// (negative, NaN and values below one half give 0).
fn rounded(v: f64) -> u32 {
    if v.is_finite() && v >= 0.5 {
        // `as` saturates; values are bounded by the column bounds anyway.
        v.round() as u32
    } else {
        0
    }
}

/// The plans of the admitted jobs of a (rounded) incumbent, in the order of
/// `mip.jobs`; `None` for jobs not admitted.
fn plans_of(
    mip: &Mip,
    jobs: &[OasisJob],
    primal: &[f64],
    model: WorkModel,
) -> Result<Vec<Option<OasisPlan>>, LpError> {
    let value = |c: usize| primal.get(c).copied().map_or(0, rounded);
    let mut out = Vec::with_capacity(mip.jobs.len());
    for jc in &mip.jobs {
        let job = &jobs[jc.job];
        if value(jc.x) != 1 {
            out.push(None);
            continue;
        }
        let mut slots = Vec::new();
        for s in &jc.slots {
            let workers: Vec<(u32, u32)> =
                s.y.iter()
                    .map(|&(m, c)| (m, value(c)))
                    .filter(|&(_, n)| n > 0)
                    .collect();
            let ps: Vec<(u32, u32)> =
                s.z.iter()
                    .map(|&(m, c)| (m, value(c)))
                    .filter(|&(_, n)| n > 0)
                    .collect();
            let y: u32 = workers.iter().map(|&(_, n)| n).sum();
            if y == 0 {
                continue;
            }
            let chunks = match s.k {
                Some(k) => u64::from(value(k)).min(job.chunks_for(u64::from(y))),
                None => job.chunks_for(u64::from(y)),
            };
            slots.push(SlotPlan {
                slot: s.t,
                chunks,
                workers,
                ps,
            });
        }
        let plan = OasisPlan {
            job: job.id,
            slots,
            worker_demand: job.worker_demand,
            ps_demand: job.ps_demand,
        };
        check_work(job, &plan, model)?;
        out.push(Some(plan));
    }
    Ok(out)
}

/// Re-checks that an admitted job's rounded plan completes its work.
fn check_work(job: &OasisJob, plan: &OasisPlan, model: WorkModel) -> Result<(), LpError> {
    let d = job.total_chunks;
    let ok = match model {
        WorkModel::Chunks => {
            let done: u64 = plan
                .slots
                .iter()
                .map(|s| job.chunks_for(u64::from(s.worker_count())))
                .sum();
            done >= d
        }
        WorkModel::WorkerSlots => plan.worker_slots() as f64 >= d as f64 * job.rho - 1e-6,
    };
    if ok {
        Ok(())
    } else {
        Err(LpError::Solver {
            stage: "check".into(),
            message: format!(
                "the rounded MIP incumbent admits {} but its workers ({} worker-slots, ρ = {}) do not train its D = {} chunks under the {:?} work model (solver tolerance)",
                job.id,
                plan.worker_slots(),
                Num(job.rho),
                d,
                model
            ),
        })
    }
}

/// Largest utility (exclusive) the exact MIP accepts: HiGHS reads numbers
/// at or above 10²⁰ as infinite, so an objective coefficient there would
/// solve a different program.
pub const EXACT_MAX_UTILITY: f64 = 1e20;

/// The most columns [`offline_optimum`] builds (2²⁴, far beyond what the
/// MIP solver proves optimal in practice), estimated before anything is
/// allocated as Σ over jobs of (horizon − arrival slot) × (machines +
/// shared servers + 2).
pub const EXACT_MAX_COLUMNS: u64 = 1 << 24;

/// Refuses programs whose column estimate exceeds [`EXACT_MAX_COLUMNS`].
/// Returns the estimate.
fn check_size(cluster: &OasisCluster, jobs: &[OasisJob]) -> Result<f64, OasisError> {
    let per_slot = (cluster.capacity.len() + cluster.shared_servers.len()) as u128 + 2;
    let columns: u128 = jobs
        .iter()
        .map(|j| u128::from(cluster.horizon.saturating_sub(j.earliest)) * per_slot)
        .sum();
    if columns > u128::from(EXACT_MAX_COLUMNS) {
        return Err(OasisError::ExactTooLarge {
            columns,
            limit: EXACT_MAX_COLUMNS,
        });
    }
    Ok(columns as f64)
}

/// The exact offline optimum of OASiS's problem on `instance`
/// ([algorithms guide, section 7.5](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-exact-mip)) under
/// `opts.work_model`.
///
/// Every job is usable from its arrival slot. The returned schedule passes
/// [`verify`]; [`OfflineSolution::upper_bound`] is a proven bound on the
/// optimum of the chosen [`WorkModel`] even when the time limit stops the
/// solve.
///
/// # The formulation
///
/// Jobs `i` are taken in arrival order (ties by position); slots are
/// 0-based, and job `i` may use slots `t ∈ [e_i, T)` from its first usable
/// slot `e_i` (its arrival slot `a_i` offline). `H_i` and `K_i` are the worker
/// and PS servers the job may use on which at least one of its workers (PSs)
/// fits the empty server; a machine hosting both roles (`Hosting::Both`, a
/// shared server) is in both, and its rows (4) and (5) are one row,
/// `Σ_i w_i^r·y_iht + Σ_i s_i^r·z_iht ≤ c_h^r`: the model of
/// [`OasisParams::shared_machines`](super::OasisParams::shared_machines),
/// which the MIP always accepts (on a split cluster it is the paper's);
/// `cap_ih` and `cap_ik` are those counts
/// (`⌊residual/demand⌋` over the resources the task demands), `N_i'` the
/// job's worker cap (`min(N_i, max_workers)`), `P_i` its PS cap.
///
/// ```text
/// maximise   Σ_i Σ_{t ∈ U_i} f_i(t − a_i) · u_it
/// s.t.       Σ_{t ∈ U_i} u_it = x_i                                       ∀i
///   chunks:  Σ_t k_it = D_i · x_i,   Σ_h y_iht − ρ_i · k_it ≥ 0           ∀i, t
///   or (2):  Σ_t Σ_h y_iht ≥ D_i · ρ_i · x_i                              ∀i        (WorkModel::WorkerSlots)
///            Σ_h y_iht ≤ N_i' · Σ_{t' ≥ t} u_it'                          ∀i, t     (workers only up to completion; (3))
///            y_iht ≤ min(N_i', cap_ih) · Σ_{t' ≥ t} u_it'                 ∀i, h, t  (per-server linking)
///   (6)      b_i · Σ_h y_iht − B_i · Σ_k z_ikt ≤ 0                         ∀i, t
///   (7)      Σ_k z_ikt − Σ_h y_iht ≤ 0,   Σ_k z_ikt ≤ P_i                  ∀i, t
///   (4)      Σ_i w_i^r · y_iht ≤ c_h^r                                    ∀h, r, t
///   (5)      Σ_i s_i^r · z_ikt ≤ c_k^r                                    ∀k, r, t
///            x_i, u_it ∈ {0,1};  k_it ∈ Z ∩ [0, ⌊N_i'/ρ_i⌋];
///            y_iht ∈ Z ∩ [0, min(N_i', cap_ih)];  z_ikt ∈ Z ∩ [0, min(P_i, cap_ik)]
/// ```
///
/// With integer `y`, `Σ_h y_iht ≥ ρ_i·k_it` is `Σ_h y_iht ≥ ⌈ρ_i·k_it⌉`: the
/// chunk model of Algorithm 2 (the default [`WorkModel::Chunks`], so OPT
/// and ALG are over the same model),
/// in which training `d` chunks in a slot needs `⌈d·ρ_i⌉` workers. The
/// paper's constraint (2) ([`WorkModel::WorkerSlots`], for Figure 5
/// comparisons) counts real worker-slots and is looser, so its optimum is
/// never smaller.
///
/// `u_it` ("job `i` completes in slot `t`") replaces the paper's
/// completion-slot constraint (8): workers may run only up to the slot
/// carrying `u`, and the maximisation puts `u` on the last slot with workers
/// or an equally good one. Capacity rows exist only for the cells some
/// variable touches, and no variable exists before `e_i`.
///
/// **Columns left out (OPT unchanged).**
/// * `u_it` for `t < e_i + d_min,i − 1`: with at most `N_i` workers per
///   slot, both work models need at least `d_min,i = ⌈E_i·M_i·ω_i⌉` slots.
/// * `u_it` with `f_i(t − a_i) = 0`: such a completion adds nothing and only
///   uses capacity, so dropping the job (`x_i = 0`) from any solution that
///   uses it keeps it feasible with the same value.
/// * a job with no `u` column left, with no usable worker or PS server, or
///   (chunk model) with `ρ_i > N_i'`, gets no columns at all: it cannot earn
///   utility.
///
/// The slot columns of a job stop at its last `u` slot.
///
/// # After the solve
///
/// The incumbent's integer columns are rounded to the nearest integer and
/// turned into per-slot placements, then into a [`Schedule`] (consecutive
/// equal slots merged into one segment, as the online run's plans), which
/// [`verify`] must accept. Every admitted job's plan is re-checked against
/// the work model (chunks: `Σ_t ⌊y_t/ρ_i⌋ ≥ D_i`, tolerant floor; worker
/// slots: `Σ_t y_t ≥ D_i·ρ_i − 10⁻⁶`). A job's completion slot is its last
/// slot with workers, and [`OfflineSolution::objective`] sums
/// `f_i(t̂_i − a_i)` over the admitted jobs (never below the MIP's incumbent
/// value, since `t̂_i` is at most the slot of `u`).
///
/// **Limits.** The default time limit is 120 s. A solve that stops
/// at a limit is not an error: with an incumbent it is returned with
/// `optimal = false`; without one the empty schedule (objective 0) is
/// returned. In both cases [`OfflineSolution::upper_bound`] is the smaller
/// of the MIP's dual bound and the trivial bound `Σ_i max_t f_i(t − a_i)`
/// over the `u` columns, and that bound, not the incumbent, belongs in ratio
/// statements ([`OfflineSolution::ratio_bound_over`]).
///
/// # Complexity
///
/// With `S_i` slot columns per job (at most `T − e_i`), the program has
/// `Σ_i [1 + |U_i| + S_i·(|H_i| + |K_i| + 1)]` columns (no `k` under
/// [`WorkModel::WorkerSlots`]) and at most
/// `Σ_i [2 + S_i·(|H_i| + 5)] + T·R·(H + K)` rows. Figure 5's size (10 jobs,
/// `T = 10`, 12 servers) is about 1,400 integer columns. Building and
/// rebuilding are linear in that size; the MIP solve is exponential in the
/// worst case, hence the time limit.
///
/// # Errors
///
/// * [`OasisError::InvalidOption`] for a time limit that is not positive and
///   finite, a gap outside `[0, 1)` or zero threads;
/// * [`OasisError::UnsupportedCluster`], [`OasisError::UnsupportedJob`] and
///   [`OasisError::JobTooLarge`] for a cluster or job outside OASiS's model
///   (shared servers allowed), as for [`Oasis`](super::Oasis);
/// * [`OasisError::UnsupportedJob`] for a job whose utility at zero delay
///   (its largest) is at or above [`EXACT_MAX_UTILITY`] = 10²⁰, the value
///   from which HiGHS reads a number as infinite;
/// * [`OasisError::ExactTooLarge`] when the program would need more than
///   [`EXACT_MAX_COLUMNS`] columns (checked before anything is allocated);
/// * [`crate::Error::Lp`] when the solver fails or ends in a status other
///   than optimal or a limit, and [`LpError::Solver`] (stage `"check"`) when
///   a rounded incumbent does not complete an admitted job's work (a solver
///   tolerance problem; the message names the job);
/// * [`crate::Error::Schedule`] when [`verify`] rejects the rebuilt schedule.
///
/// # Example
///
/// A hand-computed instance (Example A): eight worker-slots for five identical
/// jobs, so at most four finish and at most two in slot 0: `OPT = 2·10 + 2·4`.
///
/// ```
/// use dmlsched::algorithms::oasis::{ExactOptions, offline_optimum};
/// use dmlsched::model::*;
/// use dmlsched::model::units::gbps;
///
/// let server = |id, cpu: f64, nic: f64, hosts| {
///     Machine::new(MachineId(id), Resources::zero().cpu_cores(cpu).nic(gbps(nic)), gbps(nic)).hosting(hosts)
/// };
/// let cluster = Cluster::new(vec![
///     server(0, 4.0, 4.0, Hosting::Workers),
///     server(1, 4.0, 8.0, Hosting::ParameterServers),
/// ]);
/// let slot = 3600.0;
/// let job = |id| {
///     Job::new(JobId(id), 0.0, Architecture::ParameterServer(PsJob {
///         epochs: 1, data_chunks: 2, minibatches_per_chunk: 1,
///         // ω = τ + 2e/b = 0.5 + 0.5 slot
///         minibatch_compute_s: 0.5 * slot,
///         gradient_bytes: 0.25 * slot * gbps(1.0),
///         worker: Resources::zero().cpu_cores(1.0).nic(gbps(1.0)),
///         ps: Resources::zero().cpu_cores(1.0).nic(gbps(2.0)),
///         max_workers: 2, max_ps: 2, ps_at_most_workers: true,
///         sync: SyncMode::Asynchronous, layers: None,
///     }))
///     .with_utility(Utility::Table { values: vec![10.0, 4.0] })
/// };
/// let instance = Instance::new(cluster, (0..5).map(job).collect(), slot, 2)?;
/// let opt = offline_optimum(&instance, &ExactOptions::default())?;
/// assert!(opt.optimal);
/// assert!((opt.objective - 28.0).abs() < 1e-9);
/// assert!(opt.upper_bound >= opt.objective && opt.upper_bound <= 28.0 * (1.0 + 1e-6));
/// dmlsched::schedule::verify(&instance, &opt.schedule)?;
/// assert_eq!(opt.schedule.jobs.iter().filter(|j| j.admitted).count(), 4);
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn offline_optimum(instance: &Instance, opts: &ExactOptions) -> crate::Result<OfflineSolution> {
    let start = Instant::now();
    opts.validate()?;
    let cluster = OasisCluster::from_instance_with(instance, true)?;
    let jobs = jobs_in_arrival_order(instance)?;
    if let Some(job) = jobs
        .iter()
        .find(|j| j.utility.value(0) >= EXACT_MAX_UTILITY)
    {
        return Err(OasisError::UnsupportedJob {
            job: job.id,
            reason: format!(
                "utility {} at zero delay is at or above {}, which the MIP solver reads as infinite",
                Num(job.utility.value(0)),
                Num(EXACT_MAX_UTILITY)
            ),
        }
        .into());
    }
    let estimated_columns = check_size(&cluster, &jobs)?;
    let mip = build(&cluster, &jobs, opts.work_model);
    let (columns, rows) = (mip.lp.n_cols(), mip.lp.n_rows());

    // (status, incumbent point, dual bound)
    let (status, primal, dual_bound) = if columns == 0 {
        (LpStatus::Optimal, Vec::new(), 0.0)
    } else {
        // HiGHS's MIP presolve can report a sub-optimal point as optimal
        // on these programs (big-M completion links; ERGO-Code/HiGHS#3094
        // and relatives): on the regression instance of
        // `tests/oasis.rs::exact::presolve_regression` it returned 0.859
        // with a dual bound of 0.859 for an optimum of 1.141. An exact
        // optimum is only worth its proof, so presolve is off
        // (`proof_solve_options`).
        let sol = lp::solve(&mip.lp, &opts.limits.proof_solve_options())?;
        let bound = sol.mip_dual_bound.unwrap_or(f64::INFINITY);
        match sol.status {
            LpStatus::Optimal if sol.has_primal => {
                let bound = sol
                    .mip_dual_bound
                    .or(sol.objective)
                    .unwrap_or(f64::INFINITY);
                (sol.status, sol.primal, bound)
            }
            ref s if s.is_limit() => {
                let primal = if sol.has_primal {
                    sol.primal
                } else {
                    Vec::new()
                };
                (sol.status, primal, bound)
            }
            other => {
                return Err(LpError::Solver {
                    stage: "solve".into(),
                    message: format!(
                        "the OASiS offline MIP ended with status {other} (has point: {}); it always has the feasible point x = 0",
                        sol.has_primal
                    ),
                }
                .into());
            }
        }
    };
    let optimal = status.is_optimal();

    let plans = if primal.is_empty() {
        vec![None; mip.jobs.len()]
    } else {
        plans_of(&mip, &jobs, &primal, opts.work_model)?
    };
    let mut schedule = Schedule {
        jobs: instance
            .jobs()
            .iter()
            .map(|j| JobSchedule::rejected(j.id))
            .collect(),
    };
    let mut plans_by_job: Vec<(JobId, Option<OasisPlan>)> =
        instance.jobs().iter().map(|j| (j.id, None)).collect();
    let mut completion: Vec<(JobId, Option<u32>)> =
        instance.jobs().iter().map(|j| (j.id, None)).collect();
    let mut objective = 0.0;
    for (jc, plan) in mip.jobs.iter().zip(plans) {
        let Some(plan) = plan else { continue };
        let job = &jobs[jc.job];
        let Some(p) = instance.job_position(job.id) else {
            continue;
        };
        let Some(last) = plan.slots.last() else {
            continue;
        };
        objective += job.utility_at(last.slot);
        completion[p].1 = Some(last.slot);
        schedule.jobs[p] = JobSchedule {
            job: job.id,
            admitted: true,
            segments: plan.segments(&cluster),
        };
        plans_by_job[p].1 = Some(plan);
    }
    verify(instance, &schedule)?;

    let (upper_bound, rel_gap) = proven_upper_bound(objective, dual_bound, mip.trivial_bound);
    Ok(OfflineSolution {
        objective,
        upper_bound,
        optimal,
        rel_gap,
        seconds: start.elapsed().as_secs_f64(),
        status,
        schedule,
        plans: plans_by_job,
        completion,
        estimated_columns,
        columns,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::Algorithm;
    use crate::algorithms::oasis::{Oasis, OasisParams};
    use crate::certificate::ExactStatus;
    use crate::model::units::gbps;
    use crate::model::{
        Architecture, Cluster, Hosting, Job, Machine, MachineId, PsJob, Resources, SyncMode,
        Utility,
    };
    use crate::online::OnlineError;
    use crate::schedule::{Segment, Tasks};
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    const SLOT: f64 = 3600.0;

    fn server(id: u32, cpu: f64, nic: f64, hosts: Hosting) -> Machine {
        Machine::new(
            MachineId(id),
            Resources::zero().cpu_cores(cpu).nic(gbps(nic)),
            gbps(nic),
        )
        .hosting(hosts)
    }

    /// A PS job in OASiS's terms: `M = 1`, `ω` slots per mini-batch
    /// (`2e/b = 0.25` slot, `τ = ω − 0.25`), worker `(vCPU, Gbit/s)` and PS
    /// `(vCPU, Gbit/s)` demands, `N` workers at most, table utility.
    struct Spec {
        arrival: u32,
        epochs: u32,
        chunks: u32,
        omega: f64,
        worker: (f64, f64),
        ps: (f64, f64),
        max_ps: u32,
        utility: Vec<f64>,
    }

    fn job(id: u32, s: &Spec) -> Job {
        let b = gbps(s.worker.1);
        Job::new(
            JobId(id),
            f64::from(s.arrival) * SLOT,
            Architecture::ParameterServer(PsJob {
                epochs: s.epochs,
                data_chunks: s.chunks,
                minibatches_per_chunk: 1,
                minibatch_compute_s: (s.omega - 0.25) * SLOT,
                gradient_bytes: 0.125 * SLOT * b,
                worker: Resources::zero().cpu_cores(s.worker.0).nic(b),
                ps: Resources::zero().cpu_cores(s.ps.0).nic(gbps(s.ps.1)),
                max_workers: s.chunks,
                max_ps: s.max_ps,
                ps_at_most_workers: true,
                sync: SyncMode::Asynchronous,
                layers: None,
            }),
        )
        .with_utility(Utility::Table {
            values: s.utility.clone(),
        })
    }

    /// Example A's job (hand-computed): `E = 1`, `N = 2`, `ω = 1`, `w = (1, 1)`,
    /// `s = (1, 2)`.
    fn example_a_spec(arrival: u32, epochs: u32, utility: Vec<f64>) -> Spec {
        Spec {
            arrival,
            epochs,
            chunks: 2,
            omega: 1.0,
            worker: (1.0, 1.0),
            ps: (1.0, 2.0),
            max_ps: 2,
            utility,
        }
    }

    /// One worker server `(4 vCPU, 4 Gbit/s)`, one PS server `(4 vCPU,
    /// ps_nic)`.
    fn example_cluster(ps_nic: f64) -> Cluster {
        Cluster::new(vec![
            server(0, 4.0, 4.0, Hosting::Workers),
            server(1, 4.0, ps_nic, Hosting::ParameterServers),
        ])
    }

    fn example_a() -> Instance {
        let jobs = (0..5)
            .map(|i| job(i, &example_a_spec(0, 1, vec![10.0, 4.0])))
            .collect();
        Instance::new(example_cluster(8.0), jobs, SLOT, 2).unwrap()
    }

    fn opts(work_model: WorkModel) -> ExactOptions {
        ExactOptions {
            work_model,
            ..ExactOptions::default()
        }
    }

    fn assert_optimal(sol: &OfflineSolution, value: f64) {
        assert!(sol.optimal, "{:?}", sol.status);
        assert!(
            (sol.objective - value).abs() < 1e-9,
            "{} vs {value}",
            sol.objective
        );
        assert!(sol.upper_bound >= sol.objective);
        assert!(sol.upper_bound <= value + 1e-6 * value.max(1.0));
        assert!(sol.rel_gap <= 1e-6);
    }

    #[test]
    fn example_a_opt_is_28_in_both_models() {
        let inst = example_a();
        for model in [WorkModel::Chunks, WorkModel::WorkerSlots] {
            let sol = offline_optimum(&inst, &opts(model)).unwrap();
            assert_optimal(&sol, 28.0);
            verify(&inst, &sol.schedule).unwrap();
            let admitted = sol.schedule.jobs.iter().filter(|j| j.admitted).count();
            assert_eq!(admitted, 4, "{model:?}");
            let done = |t| sol.completion.iter().filter(|c| c.1 == Some(t)).count();
            assert_eq!((done(0), done(1)), (2, 2), "{model:?}");
            assert!(sol.columns > 0 && sol.rows > 0);
            let info = sol.exact_info();
            assert_eq!(info.status, ExactStatus::Optimal);
            assert_eq!(info.optimum(), Some(sol.objective));
            assert!(!info.returned);
            eprintln!(
                "Example A ({model:?}): {} columns, {} rows, {:.4} s",
                sol.columns, sol.rows, sol.seconds
            );
        }
    }

    #[test]
    fn example_e_unschedulable_job_changes_nothing() {
        // A sixth job arriving in slot 1 with E = 2 needs 2 slots: no columns.
        let mut jobs: Vec<Job> = (0..5)
            .map(|i| job(i, &example_a_spec(0, 1, vec![10.0, 4.0])))
            .collect();
        jobs.push(job(5, &example_a_spec(1, 2, vec![10.0, 4.0])));
        let inst = Instance::new(example_cluster(8.0), jobs, SLOT, 2).unwrap();
        let sol = offline_optimum(&inst, &ExactOptions::default()).unwrap();
        assert_optimal(&sol, 28.0);
        assert_eq!(sol.completion[5], (JobId(5), None));
        assert!(!sol.schedule.jobs[5].admitted);
    }

    #[test]
    fn example_b_instance_needs_two_slots() {
        // D = 4 chunks, at most N = 2 workers (2 chunks) per slot: the job
        // finishes in slot 1 at the earliest, f(1) = 10.5.
        let spec = Spec {
            arrival: 0,
            epochs: 2,
            chunks: 2,
            omega: 1.0,
            worker: (1.0, 1.0),
            ps: (1.0, 2.0),
            max_ps: 2,
            utility: vec![12.0, 10.5, 6.0],
        };
        let inst = Instance::new(example_cluster(8.0), vec![job(0, &spec)], SLOT, 3).unwrap();
        for model in [WorkModel::Chunks, WorkModel::WorkerSlots] {
            let sol = offline_optimum(&inst, &opts(model)).unwrap();
            assert_optimal(&sol, 10.5);
            assert_eq!(sol.completion, vec![(JobId(0), Some(1))]);
            verify(&inst, &sol.schedule).unwrap();
        }
    }

    #[test]
    fn example_d_ps_bandwidth_limits_workers() {
        // PS NIC 2 Gbit/s hosts one PS (B = 2), which serves 2 workers
        // (b = 1): D = 4 chunks take two slots, f(1) = 4.
        let spec = Spec {
            arrival: 0,
            epochs: 1,
            chunks: 4,
            omega: 1.0,
            worker: (1.0, 1.0),
            ps: (1.0, 2.0),
            max_ps: 4,
            utility: vec![10.0, 4.0],
        };
        let inst = Instance::new(example_cluster(2.0), vec![job(0, &spec)], SLOT, 2).unwrap();
        let sol = offline_optimum(&inst, &ExactOptions::default()).unwrap();
        assert_optimal(&sol, 4.0);
        assert_eq!(sol.completion, vec![(JobId(0), Some(1))]);
        assert_eq!(
            sol.schedule.jobs[0].segments,
            vec![Segment::new(
                0..2,
                vec![
                    (MachineId(0), Tasks::new(2, 0)),
                    (MachineId(1), Tasks::new(0, 1))
                ]
            )]
        );
        // With a 4 Gbit/s PS NIC two PSs serve four workers in slot 0.
        let inst = Instance::new(example_cluster(4.0), vec![job(0, &spec)], SLOT, 2).unwrap();
        let sol = offline_optimum(&inst, &ExactOptions::default()).unwrap();
        assert_optimal(&sol, 10.0);
    }

    #[test]
    fn chunk_model_is_tighter_than_worker_slots() {
        // ρ = 1.5, N = 2, D = 2, f = (5, 3), two identical jobs, a worker
        // server with room for 3 workers per slot, T = 2. A chunk needs
        // ⌈1.5⌉ = 2 workers, so a job needs 2 workers in both slots;
        // constraint (2) only needs 3 worker-slots (2 + 1).
        let spec = Spec {
            arrival: 0,
            epochs: 1,
            chunks: 2,
            omega: 1.5,
            worker: (1.0, 1.0),
            ps: (1.0, 2.0),
            max_ps: 2,
            utility: vec![5.0, 3.0],
        };
        let cluster = Cluster::new(vec![
            server(0, 3.0, 4.0, Hosting::Workers),
            server(1, 4.0, 8.0, Hosting::ParameterServers),
        ]);
        let inst = Instance::new(cluster, vec![job(0, &spec), job(1, &spec)], SLOT, 2).unwrap();
        // Chunks: 4 + 4 worker-slots do not fit 2·3, so one job: OPT = 3.
        let chunks = offline_optimum(&inst, &opts(WorkModel::Chunks)).unwrap();
        assert_optimal(&chunks, 3.0);
        // Worker slots: (2, 1) and (1, 2) fit: OPT = 6.
        let slots = offline_optimum(&inst, &opts(WorkModel::WorkerSlots)).unwrap();
        assert_optimal(&slots, 6.0);
        verify(&inst, &slots.schedule).unwrap();
    }

    /// A tiny random instance: ≤ 4 jobs, `T ≤ 4`, 1–2 worker and 1–2 PS
    /// servers, small integer demands.
    fn random_instance(rng: &mut ChaCha8Rng) -> Instance {
        let horizon: u32 = rng.random_range(2..=4);
        let n_workers: u32 = rng.random_range(1..=2);
        let n_ps: u32 = rng.random_range(1..=2);
        let mut machines = Vec::new();
        for id in 0..n_workers {
            let cpu = f64::from(rng.random_range(2u32..=4));
            let nic = f64::from(rng.random_range(2u32..=4));
            machines.push(server(id, cpu, nic, Hosting::Workers));
        }
        for id in n_workers..n_workers + n_ps {
            let cpu = f64::from(rng.random_range(2u32..=4));
            let nic = f64::from(rng.random_range(2u32..=6));
            machines.push(server(id, cpu, nic, Hosting::ParameterServers));
        }
        let n_jobs: u32 = rng.random_range(1..=4);
        let jobs = (0..n_jobs)
            .map(|id| {
                let chunks = rng.random_range(1u32..=3);
                // Positive and non-increasing (the η rule needs f(T − a) > 0).
                let mut v = f64::from(rng.random_range(5u32..=20));
                let utility = (0..horizon)
                    .map(|_| {
                        let out = v;
                        v = (v - f64::from(rng.random_range(0u32..=4))).max(1.0);
                        out
                    })
                    .collect();
                let spec = Spec {
                    arrival: rng.random_range(0..horizon),
                    epochs: rng.random_range(1u32..=2),
                    chunks,
                    omega: [0.5, 1.0, 1.5][rng.random_range(0usize..3)],
                    worker: (1.0, 1.0),
                    ps: (1.0, f64::from(rng.random_range(1u32..=2))),
                    max_ps: chunks,
                    utility,
                };
                job(id, &spec)
            })
            .collect();
        Instance::new(Cluster::new(machines), jobs, SLOT, horizon).unwrap()
    }

    #[test]
    fn random_instances_sandwich_online_and_models() {
        let mut rng = ChaCha8Rng::seed_from_u64(2018);
        let mut largest: Option<(usize, usize, f64, f64)> = None;
        let (mut dual_checked, mut online_runs) = (0, 0);
        for case in 0..24 {
            let inst = random_instance(&mut rng);
            let chunks = offline_optimum(&inst, &opts(WorkModel::Chunks)).unwrap();
            let slots = offline_optimum(&inst, &opts(WorkModel::WorkerSlots)).unwrap();
            for sol in [&chunks, &slots] {
                assert!(sol.optimal, "case {case}: {:?}", sol.status);
                verify(&inst, &sol.schedule).unwrap();
                assert!(sol.upper_bound >= sol.objective);
            }
            assert!(
                slots.objective >= chunks.objective - 1e-6,
                "case {case}: worker-slot OPT {} < chunk OPT {}",
                slots.objective,
                chunks.objective
            );
            let online = match Oasis::new(OasisParams::default())
                .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
            {
                Ok(online) => online,
                // Every utility is positive, so the η rule fails only when
                // no job is schedulable in the chunk model: OPT = 0.
                Err(crate::Error::Online(OnlineError::CannotDeriveBounds { .. })) => {
                    assert_eq!(chunks.objective, 0.0, "case {case}");
                    continue;
                }
                Err(e) => panic!("case {case}: {e}"),
            };
            online_runs += 1;
            let alg = online.certificate.objective;
            assert!(
                alg <= chunks.objective + 1e-6,
                "case {case}: ALG {alg} > OPT {}",
                chunks.objective
            );
            if online.report.run.dual_end_valid
                && let Some(d) = online.report.run.dual_end
            {
                assert!(
                    chunks.objective <= d + 1e-6,
                    "case {case}: OPT {} > D_end {d}",
                    chunks.objective
                );
                dual_checked += 1;
            }
            assert!(chunks.ratio_bound_over(alg) >= 1.0 - 1e-9);
            // The online certificate accepts the exact optimum as a
            // comparison point.
            online
                .certificate
                .clone()
                .with_exact(chunks.exact_info())
                .check(1e-6)
                .unwrap();
            if largest.is_none_or(|l| chunks.columns > l.0) {
                largest = Some((chunks.columns, chunks.rows, chunks.seconds, slots.seconds));
            }
        }
        assert!(
            online_runs >= 12 && dual_checked > 0,
            "{online_runs} {dual_checked}"
        );
        if let Some((c, r, s1, s2)) = largest {
            eprintln!(
                "largest random instance: {c} columns, {r} rows; chunks {s1:.4} s, worker slots {s2:.4} s"
            );
        }
    }

    #[test]
    fn options_are_validated() {
        let inst = example_a();
        let with = |f: fn(&mut ExactMipLimits)| {
            let mut o = ExactOptions::default();
            f(&mut o.limits);
            o
        };
        let bad = [
            with(|l| l.time_limit_s = 0.0),
            with(|l| l.time_limit_s = -1.0),
            with(|l| l.time_limit_s = f64::INFINITY),
            with(|l| l.time_limit_s = f64::NAN),
            with(|l| l.mip_rel_gap = -1e-3),
            with(|l| l.mip_rel_gap = 1.0),
            with(|l| l.mip_rel_gap = f64::NAN),
            with(|l| l.threads = Some(0)),
            with(|l| l.max_columns = Some(1 << 20)),
        ];
        for o in &bad {
            assert!(
                matches!(
                    offline_optimum(&inst, o),
                    Err(crate::Error::Oasis(OasisError::InvalidOption { .. }))
                ),
                "{o:?}"
            );
        }
        let ok = ExactOptions {
            limits: ExactMipLimits::new(10.0, 0.0, Some(2)),
            work_model: WorkModel::Chunks,
        };
        assert!(ok.validate().is_ok());
        assert_optimal(&offline_optimum(&inst, &ok).unwrap(), 28.0);
        let d = ExactOptions::default();
        assert_eq!(
            (d.limits, d.work_model),
            (ExactMipLimits::new(120.0, 1e-6, None), WorkModel::Chunks)
        );
    }

    #[test]
    fn ratio_and_exact_info_conventions() {
        let mut sol = offline_optimum(&example_a(), &ExactOptions::default()).unwrap();
        assert!((sol.ratio_bound_over(14.0) - sol.upper_bound / 14.0).abs() < 1e-12);
        assert_eq!(sol.ratio_bound_over(0.0), f64::INFINITY);
        sol.upper_bound = 0.0;
        assert_eq!(sol.ratio_bound_over(0.0), 1.0);
        sol.optimal = false;
        sol.status = LpStatus::TimeLimit;
        let info = sol.exact_info();
        assert_eq!(
            info.status,
            ExactStatus::Limit {
                status: LpStatus::TimeLimit.to_string()
            }
        );
        assert_eq!(info.optimum(), None);
    }
}
