//! Dorm-like utilisation-maximising MILP (needs the `highs` feature).

use std::collections::BTreeMap;

use crate::certificate::Sense;
use crate::lp::{self, ColumnKind, LinearProgram, LpError, SolveOptions};
use crate::model::{
    Architecture, Elasticity, FIT_TOL, Job, ResourceKind, Resources, TaskKind, WorkerCounts, units,
};
use crate::schedule::Tasks;
use crate::sim::{Action, Event, JobStatus, JobView, Policy, SimView};

use crate::placement::PlacementRule;
use crate::placement::dominant_share;
use crate::placement::realloc::Realloc;

/// A Dorm-like scheduler (Sun, Chen, Ho, Wang, Chu, "Dorm: Dynamically
/// Partitioning Cluster Resources for Distributed Machine Learning
/// Applications", SmartComp 2017), in the crate's interpretation of
/// the OASiS paper's one-sentence description (Bao, Peng, Wu, Li, IEEE
/// INFOCOM 2018): a mixed-integer program solved with HiGHS at
/// every event. Every job is admitted.
///
/// **Program.** For every active job `j` the integers `n_j` (workers,
/// `0..=N_j`) and `m_j` (PSs):
///
/// * bandwidth linking `B_j m_j ≥ b_j n_j` (worker and PS NIC demands),
///   `m_j ≤ n_j` under the job's PS ≤ workers rule, `m_j ≤ P_j`, and
///   `m_j ≥ 1` when `n_j ≥ 1`; `b_j` is capped at `B_j` times the most PSs
///   one worker may have, so that one worker is always allowed;
/// * pooled capacity, per resource: the workers of all jobs fit the
///   machines that host workers, the PSs fit the machines that host PSs,
///   and both together fit the whole cluster (capacities net of the jobs
///   that keep their allocation);
/// * fairness `n_j ≥ ⌊φ·n_j^DRF⌋` with `φ` = [`DormParams::fairness_fraction`]
///   (0.5), where `n^DRF` is the progressive-filling DRF allocation on the
///   pooled capacity at this event (one worker at a time to the job with
///   the smallest dominant share, plus PSs as the linking row needs; ties
///   to the earlier arrival). If these rows make the program infeasible
///   they are dropped and it is solved again;
/// * adjustment overhead `Σ_j |n_j − n_j^prev| ≤ max(1, ⌈ψ·Σ_j n_j^prev⌉)`
///   with `ψ` = [`DormParams::adjustment_fraction`] (0.2), linearised with
///   split variables `n_j − u_j + v_j = n_j^prev`, `u, v ≥ 0`. Jobs that
///   have never run are new and exempt; `n^prev` is the job's current
///   worker count (0 when paused), and the sum on the right counts every
///   job that has run, including the ones that keep their allocation;
/// * objective: maximise the normalised utilisation
///   `Σ_r Σ_j (w_j^r n_j + s_j^r m_j) / C^r` over the resources with
///   positive total capacity `C^r`.
///
/// Rigid parameter-server gangs are all or nothing (one binary); a
/// ring-all-reduce job picks one allowed worker count or none (one binary
/// per count) and has no PSs.
///
/// **Limits.** Each solve gets [`DormParams::time_limit_s`] (5 s) and
/// relative gap [`DormParams::mip_rel_gap`] (10⁻³); on a time limit the
/// incumbent is used. With [`DormParams::total_budget_s`], once the solver
/// time of the run reaches the budget every later decision falls back to
/// the DRF allocation, as does a solve that ends without a feasible point.
/// [`DormLike::report`] counts decisions, solver time, incumbents used,
/// fallbacks, dropped fairness rows and placement decrements.
///
/// **Placement.** The counts are then placed ([`DormParams::placement`],
/// best fit by default; a round-robin pointer is kept between decisions), tasks first on
/// the machines the job already uses. If a job cannot be placed
/// (fragmentation), the largest `n_j` is decremented by one worker (its
/// `m_j` by one PS, within the linking and PS rules) and placement
/// restarts; jobs that grow in this decision are decremented before jobs
/// that do not, so the adjustment bound keeps holding.
///
/// **Disciplines.** Running rigid gangs and jobs holding a plan keep their
/// allocation. A running job that is not preemptible keeps at least its
/// smallest allocation (`n_j ≥ 1`), placed on its own machines first.
///
/// # Complexity
///
/// One MILP per event with `O(J + Σ_j |counts_j|)` integer columns and
/// `O(J + R)` rows, bounded by the time limit; DRF filling
/// `O(Σ_j N_j · J)`; placement `O(Σ_j (n_j + m_j) · H)` per attempt, with at
/// most `Σ_j n_j` attempts.
///
/// # Example
///
/// Two jobs on 8 GPUs, one PS each (whose NIC serves 8 workers). The first
/// takes all 8 GPUs; when the second arrives, the first may give up only
/// `max(1, ⌈0.2·8⌉) = 2` workers, and fairness asks `⌊0.5·4⌋ = 2` for the
/// newcomer (DRF would split 4/4): the allocation becomes 6 + 2.
///
/// ```
/// use dmlsched::baselines::{DormLike, DormParams};
/// use dmlsched::model::*;
/// use dmlsched::schedule::Tasks;
/// use dmlsched::sim::{simulate, SimOptions, StopAt};
///
/// let job = |id, t| {
///     let ps = PsJob {
///         epochs: 1, data_chunks: 1, minibatches_per_chunk: 1_000_000,
///         minibatch_compute_s: 0.1, gradient_bytes: 0.0,
///         worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9).nic(1e9),
///         ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(8e9),
///         max_workers: 8, max_ps: 1, ps_at_most_workers: true,
///         sync: SyncMode::Asynchronous, layers: None,
///     };
///     Job::new(JobId(id), t, Architecture::ParameterServer(ps))
/// };
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(8.0).cpu_cores(64.0).memory(64e9).nic(1e12), 1e11);
/// let inst = Instance::new(cluster, vec![job(0, 0.0), job(1, 10.0)], 10.0, 3)?;
/// let mut params = DormParams::default();
/// params.time_limit_s = 1.0;
/// let mut dorm = DormLike::new(params);
/// let mut opts = SimOptions::default();
/// opts.stop = StopAt::Horizon;
/// let r = simulate(&inst, &mut dorm, &opts)?;
/// let size = |job: u32| r.allocations.iter().rev()
///     .find(|a| a.job == JobId(job)).map(|a| a.placement.total());
/// assert_eq!((size(0), size(1)), (Some(Tasks::new(6, 1)), Some(Tasks::new(2, 1))));
/// assert_eq!((dorm.report().decisions, dorm.report().fallbacks), (2, 0));
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DormLike {
    /// The settings.
    params: DormParams,
    /// What the policy carries between decisions (round-robin pointer,
    /// counters).
    state: DormState,
}

/// The settings of [`DormLike`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct DormParams {
    /// Solver time limit per solve, seconds (default 5).
    pub time_limit_s: f64,
    /// Relative MIP gap (default 10⁻³).
    pub mip_rel_gap: f64,
    /// Total solver time for the whole run, seconds; once spent, decisions
    /// fall back to DRF (default `None`: unlimited).
    pub total_budget_s: Option<f64>,
    /// `φ` of the fairness rows `n_j ≥ ⌊φ·n_j^DRF⌋` (default 0.5).
    pub fairness_fraction: f64,
    /// `ψ` of the adjustment bound `max(1, ⌈ψ·Σ n^prev⌉)` (default 0.2).
    pub adjustment_fraction: f64,
    /// How tasks are spread over machines (default best fit).
    pub placement: PlacementRule,
}

/// Counters of a [`DormLike`] policy, accumulated over its decisions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct DormReport {
    /// Decisions taken (events with at least one job to allocate).
    pub decisions: u64,
    /// MILP solves (a decision whose fairness rows were dropped solves
    /// twice).
    pub milp_solves: u64,
    /// Solver time, seconds.
    pub mip_time_s: f64,
    /// Solves stopped at a limit whose incumbent was used.
    pub(crate) time_limit_incumbents: u64,
    /// Decisions that fell back to the DRF allocation (budget spent, or no
    /// feasible point from the solver).
    pub fallbacks: u64,
    /// Decisions whose fairness rows made the program infeasible and were
    /// dropped.
    pub fairness_dropped: u64,
    /// Workers removed because a placement failed.
    pub(crate) placement_decrements: u64,
}

/// The state [`DormLike`] carries between decisions.
#[derive(Debug, Clone, PartialEq, Default)]
struct DormState {
    pointer: usize,
    report: DormReport,
}

impl Default for DormParams {
    fn default() -> Self {
        DormParams {
            time_limit_s: 5.0,
            mip_rel_gap: 1e-3,
            total_budget_s: None,
            fairness_fraction: 0.5,
            adjustment_fraction: 0.2,
            placement: PlacementRule::BestFit,
        }
    }
}

impl DormLike {
    /// The Dorm-like policy with `params` and an empty run state.
    pub fn new(params: DormParams) -> Self {
        DormLike {
            params,
            state: DormState::default(),
        }
    }

    /// The settings.
    pub fn params(&self) -> &DormParams {
        &self.params
    }
}

/// What sizes a job may take.
#[derive(Debug, Clone)]
enum Shape {
    /// Elastic parameter-server job.
    Elastic {
        max_w: u32,
        max_ps: u32,
        at_most: bool,
        /// `(B, b_eff)` of the linking row, when `B > 0`.
        link: Option<(f64, f64)>,
    },
    /// Rigid parameter-server gang: all or nothing.
    Gang { w: u32, p: u32 },
    /// Ring-all-reduce: one allowed count (sorted) or none.
    Ring { counts: Vec<u32> },
}

impl Shape {
    fn of(job: &Job) -> Shape {
        match &job.architecture {
            Architecture::ParameterServer(p) => {
                if job.discipline.elasticity == Elasticity::Rigid {
                    return Shape::Gang {
                        w: p.max_workers,
                        p: p.max_ps,
                    };
                }
                let (b, big_b) = (p.worker.nic_bps, p.ps.nic_bps);
                let one = if p.ps_at_most_workers { 1 } else { p.max_ps };
                Shape::Elastic {
                    max_w: p.max_workers,
                    max_ps: p.max_ps,
                    at_most: p.ps_at_most_workers,
                    link: (big_b > 0.0).then(|| (big_b, b.min(big_b * f64::from(one)))),
                }
            }
            Architecture::RingAllReduce(r) => {
                let mut counts = match &r.workers {
                    WorkerCounts::Fixed(g) => vec![*g],
                    WorkerCounts::Allowed(v) => v.clone(),
                };
                counts.retain(|&c| c > 0);
                counts.sort_unstable();
                counts.dedup();
                Shape::Ring { counts }
            }
        }
    }

    /// The fewest PSs `n` workers need (0 for none).
    fn min_ps(&self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        match self {
            Shape::Elastic { link, .. } => match link {
                Some((big_b, b)) => {
                    let z = units::ceil_tol(f64::from(n) * b / big_b).max(1.0);
                    if z >= f64::from(u32::MAX) {
                        u32::MAX
                    } else {
                        z as u32
                    }
                }
                None => 1,
            },
            Shape::Gang { p, .. } => *p,
            Shape::Ring { .. } => 0,
        }
    }

    /// The most PSs `n` workers may have.
    fn max_ps_for(&self, n: u32) -> u32 {
        match self {
            Shape::Elastic {
                max_ps, at_most, ..
            } => {
                if *at_most {
                    (*max_ps).min(n)
                } else if n == 0 {
                    0
                } else {
                    *max_ps
                }
            }
            Shape::Gang { p, .. } => {
                if n == 0 {
                    0
                } else {
                    *p
                }
            }
            Shape::Ring { .. } => 0,
        }
    }

    /// The smallest allocation.
    fn minimum(&self) -> Tasks {
        match self {
            Shape::Elastic { .. } => Tasks::new(1, self.min_ps(1)),
            Shape::Gang { w, p } => Tasks::new(*w, *p),
            Shape::Ring { counts } => Tasks::new(counts.first().copied().unwrap_or(0), 0),
        }
    }

    /// One step of progressive filling, if allowed.
    fn grow(&self, t: Tasks) -> Option<Tasks> {
        match self {
            Shape::Elastic { max_w, .. } => {
                let n = t.workers.saturating_add(1);
                if n > *max_w {
                    return None;
                }
                let m = t.ps.max(self.min_ps(n));
                (m <= self.max_ps_for(n)).then_some(Tasks::new(n, m))
            }
            Shape::Gang { w, p } => (t.workers == 0).then_some(Tasks::new(*w, *p)),
            Shape::Ring { counts } => counts
                .iter()
                .copied()
                .find(|&c| c > t.workers)
                .map(|c| Tasks::new(c, 0)),
        }
    }

    /// One worker less (the next smaller allowed size).
    fn shrink(&self, t: Tasks) -> Tasks {
        match self {
            Shape::Elastic { .. } => {
                let n = t.workers.saturating_sub(1);
                let m =
                    t.ps.saturating_sub(1)
                        .min(self.max_ps_for(n))
                        .max(self.min_ps(n));
                Tasks::new(n, if n == 0 { 0 } else { m })
            }
            Shape::Gang { .. } => Tasks::default(),
            Shape::Ring { counts } => Tasks::new(
                counts
                    .iter()
                    .copied()
                    .filter(|&c| c < t.workers)
                    .max()
                    .unwrap_or(0),
                0,
            ),
        }
    }

    /// The same allocation made valid (for solver output within
    /// tolerances).
    fn repair(&self, t: Tasks, lower: Tasks) -> Tasks {
        match self {
            Shape::Elastic { max_w, .. } => {
                let n = t.workers.clamp(lower.workers, *max_w);
                let m = t.ps.min(self.max_ps_for(n)).max(self.min_ps(n));
                Tasks::new(n, if n == 0 { 0 } else { m })
            }
            Shape::Gang { w, p } => {
                if t.workers == 0 && lower.workers == 0 {
                    Tasks::default()
                } else {
                    Tasks::new(*w, *p)
                }
            }
            Shape::Ring { counts } => {
                let n = counts
                    .iter()
                    .copied()
                    .filter(|&c| c <= t.workers)
                    .max()
                    .unwrap_or(0);
                Tasks::new(n.max(lower.workers), 0)
            }
        }
    }
}

/// One job of a decision.
struct DJob<'a> {
    view: JobView<'a>,
    shape: Shape,
    lower: Tasks,
    /// Current workers, `None` for a job that has never run (exempt).
    prev: Option<u32>,
}

impl DJob<'_> {
    fn worker(&self) -> Resources {
        self.view
            .job()
            .task_demand(TaskKind::Worker)
            .copied()
            .unwrap_or_default()
    }

    fn ps(&self) -> Resources {
        self.view
            .job()
            .task_demand(TaskKind::ParameterServer)
            .copied()
            .unwrap_or_default()
    }
}

/// Pooled capacities: all machines, and the worker and PS pools when they
/// differ from it.
struct Pools {
    all: Resources,
    worker: Option<Resources>,
    ps: Option<Resources>,
}

impl Pools {
    fn fits(&self, uw: &Resources, us: &Resources) -> bool {
        uw.plus(us).fits_in(&self.all, FIT_TOL)
            && self.worker.is_none_or(|c| uw.fits_in(&c, FIT_TOL))
            && self.ps.is_none_or(|c| us.fits_in(&c, FIT_TOL))
    }
}

/// Progressive-filling DRF on pooled capacity, from the jobs' lower bounds.
fn pooled_drf(jobs: &[DJob<'_>], pools: &Pools, total: &Resources) -> Vec<Tasks> {
    let mut alloc: Vec<Tasks> = jobs.iter().map(|j| j.lower).collect();
    let mut uw = Resources::zero();
    let mut us = Resources::zero();
    for (j, t) in jobs.iter().zip(&alloc) {
        uw = uw.plus(&j.worker().scaled(f64::from(t.workers)));
        us = us.plus(&j.ps().scaled(f64::from(t.ps)));
    }
    let mut saturated = vec![false; jobs.len()];
    loop {
        let pick = (0..jobs.len()).filter(|&i| !saturated[i]).min_by(|&a, &b| {
            let sa = dominant_share(
                &jobs[a].view.job().demand_for(alloc[a].workers, alloc[a].ps),
                total,
            );
            let sb = dominant_share(
                &jobs[b].view.job().demand_for(alloc[b].workers, alloc[b].ps),
                total,
            );
            sa.total_cmp(&sb).then(a.cmp(&b))
        });
        let Some(i) = pick else { break };
        let j = &jobs[i];
        match j.shape.grow(alloc[i]) {
            Some(next) => {
                let dw = f64::from(next.workers) - f64::from(alloc[i].workers);
                let dp = f64::from(next.ps) - f64::from(alloc[i].ps);
                let nw = uw.plus(&j.worker().scaled(dw));
                let ns = us.plus(&j.ps().scaled(dp));
                if pools.fits(&nw, &ns) {
                    uw = nw;
                    us = ns;
                    alloc[i] = next;
                } else {
                    saturated[i] = true;
                }
            }
            None => saturated[i] = true,
        }
    }
    alloc
}

/// The MILP of one decision, with the expressions of `n_j` and `m_j`.
struct Model {
    lp: LinearProgram,
    n_expr: Vec<Vec<(usize, f64)>>,
    m_expr: Vec<Vec<(usize, f64)>>,
}

/// `Σ_r d^r / C^r` over the resources with positive total.
fn weight(d: &Resources, total: &Resources) -> f64 {
    ResourceKind::ALL
        .into_iter()
        .filter(|&k| total.get(k) > 0.0)
        .map(|k| d.get(k) / total.get(k))
        .sum()
}

fn build(
    jobs: &[DJob<'_>],
    pools: &Pools,
    total: &Resources,
    fairness: Option<&[u32]>,
    adjustment_bound: Option<f64>,
) -> Model {
    let mut lp = LinearProgram::new(Sense::Maximise);
    let mut n_expr = Vec::with_capacity(jobs.len());
    let mut m_expr = Vec::with_capacity(jobs.len());
    for j in jobs {
        let (aw, asv) = (weight(&j.worker(), total), weight(&j.ps(), total));
        let lo = j.lower;
        match &j.shape {
            Shape::Elastic {
                max_w,
                max_ps,
                at_most,
                link,
            } => {
                let n = lp.add_column(
                    aw,
                    f64::from(lo.workers),
                    integer_upper(*max_w, lo.workers),
                    ColumnKind::Integer,
                );
                let m = lp.add_column(
                    asv,
                    f64::from(lo.ps),
                    integer_upper(*max_ps, lo.ps),
                    ColumnKind::Integer,
                );
                if let Some((big_b, b)) = *link
                    && b > 0.0
                {
                    add_row_in_range(&mut lp, 0.0, f64::INFINITY, &[(m, big_b), (n, -b)]);
                }
                if *at_most {
                    add_row_in_range(&mut lp, f64::NEG_INFINITY, 0.0, &[(m, 1.0), (n, -1.0)]);
                }
                add_row_in_range(
                    &mut lp,
                    f64::NEG_INFINITY,
                    0.0,
                    &[(m, 1.0), (n, -f64::from(*max_ps))],
                );
                add_row_in_range(
                    &mut lp,
                    0.0,
                    f64::INFINITY,
                    &[(m, f64::from(*max_w)), (n, -1.0)],
                );
                n_expr.push(vec![(n, 1.0)]);
                m_expr.push(vec![(m, 1.0)]);
            }
            Shape::Gang { w, p } => {
                let lower = if lo.workers > 0 { 1.0 } else { 0.0 };
                let x = lp.add_column(
                    aw * f64::from(*w) + asv * f64::from(*p),
                    lower,
                    1.0,
                    ColumnKind::Integer,
                );
                n_expr.push(vec![(x, f64::from(*w))]);
                m_expr.push(vec![(x, f64::from(*p))]);
            }
            Shape::Ring { counts } => {
                let cols: Vec<(usize, f64)> = counts
                    .iter()
                    .map(|&c| {
                        let y = lp.add_column(aw * f64::from(c), 0.0, 1.0, ColumnKind::Integer);
                        (y, f64::from(c))
                    })
                    .collect();
                let lower = if lo.workers > 0 { 1.0 } else { 0.0 };
                let ones: Vec<(usize, f64)> = cols.iter().map(|&(y, _)| (y, 1.0)).collect();
                lp.add_row(lower, 1.0, &ones);
                n_expr.push(cols);
                m_expr.push(Vec::new());
            }
        }
    }
    // Pooled capacity rows.
    for kind in ResourceKind::ALL {
        let mut rows: Vec<(Resources, bool, bool)> = vec![(pools.all, true, true)];
        if let Some(c) = pools.worker {
            rows.push((c, true, false));
        }
        if let Some(c) = pools.ps {
            rows.push((c, false, true));
        }
        for (cap, with_w, with_s) in rows {
            let mut entries: BTreeMap<usize, f64> = BTreeMap::new();
            for (k, j) in jobs.iter().enumerate() {
                if with_w {
                    let d = j.worker().get(kind);
                    for &(c, a) in &n_expr[k] {
                        *entries.entry(c).or_default() += a * d;
                    }
                }
                if with_s {
                    let d = j.ps().get(kind);
                    for &(c, a) in &m_expr[k] {
                        *entries.entry(c).or_default() += a * d;
                    }
                }
            }
            entries.retain(|_, a| *a != 0.0);
            if !entries.is_empty() {
                let e: Vec<(usize, f64)> = entries.into_iter().collect();
                add_row_in_range(&mut lp, f64::NEG_INFINITY, cap.get(kind), &e);
            }
        }
    }
    // Fairness.
    if let Some(floors) = fairness {
        for (k, &f) in floors.iter().enumerate() {
            if f > jobs[k].lower.workers {
                add_row_in_range(&mut lp, f64::from(f), f64::INFINITY, &n_expr[k]);
            }
        }
    }
    // Adjustment overhead.
    if let Some(bound) = adjustment_bound {
        let mut sum = Vec::new();
        for (k, j) in jobs.iter().enumerate() {
            let Some(prev) = j.prev else { continue };
            let u = lp.add_column(0.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
            let v = lp.add_column(0.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
            let mut e = n_expr[k].clone();
            e.push((u, -1.0));
            e.push((v, 1.0));
            lp.add_row(f64::from(prev), f64::from(prev), &e);
            sum.push((u, 1.0));
            sum.push((v, 1.0));
        }
        if !sum.is_empty() {
            lp.add_row(f64::NEG_INFINITY, bound, &sum);
        }
    }
    costs_in_range(&mut lp);
    Model { lp, n_expr, m_expr }
}

/// The upper bound of an integer count column: `max`, capped at the
/// solver's largest integer bound ([`lp::MAX_INTEGER_BOUND`], 2³⁰; no
/// cluster holds more tasks of one job) but never below `lower`.
fn integer_upper(max: u32, lower: u32) -> f64 {
    f64::from(max)
        .min(lp::MAX_INTEGER_BOUND)
        .max(f64::from(lower))
}

/// Adds `lower ≤ Σ a·x ≤ upper` in the solver's range: the row is divided
/// by its largest `|a|`, entries below [`lp::MIN_COEFFICIENT`] of it are
/// dropped (the decision is a target that placement checks against real
/// capacities), and a side that the columns' bounds can never reach — a
/// capacity larger than every job could ask for (10³⁰⁰ bytes of memory) —
/// is left out; a row with neither side left is not added.
fn add_row_in_range(lp: &mut LinearProgram, lower: f64, upper: f64, entries: &[(usize, f64)]) {
    let scale = entries.iter().map(|e| e.1.abs()).fold(0.0, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return;
    }
    let kept: Vec<(usize, f64)> = entries
        .iter()
        .map(|&(c, a)| (c, a / scale))
        .filter(|e| e.1.abs() >= lp::MIN_COEFFICIENT * 2.0)
        .collect();
    let (mut lo_act, mut hi_act) = (0.0, 0.0);
    for &(c, a) in &kept {
        let (l, u) = lp.col_bounds(c).unwrap_or((0.0, f64::INFINITY));
        let (lo, hi) = if a > 0.0 {
            (a * l, a * u)
        } else {
            (a * u, a * l)
        };
        lo_act += lo;
        hi_act += hi;
    }
    let in_range = |b: f64| b.clamp(-lp::SOLVER_INFINITY / 10.0, lp::SOLVER_INFINITY / 10.0);
    let lower = if lower / scale <= lo_act {
        f64::NEG_INFINITY
    } else {
        in_range(lower / scale)
    };
    let upper = if upper / scale >= hi_act {
        f64::INFINITY
    } else {
        in_range(upper / scale)
    };
    if lower.is_finite() || upper.is_finite() {
        lp.add_row(lower, upper, &kept);
    }
}

/// Divides the objective by its largest cost when that is above 1, so the
/// weights `Σ_r d^r / C^r` of a job on a nearly empty resource stay in the
/// solver's range (the argmax does not change).
fn costs_in_range(lp: &mut LinearProgram) {
    let max = lp.costs().iter().map(|c| c.abs()).fold(0.0, f64::max);
    if max.is_nan() || max <= 1.0 {
        return;
    }
    let scale = if max.is_finite() { max } else { f64::MAX };
    for col in 0..lp.n_cols() {
        let c = lp.cost(col).unwrap_or(0.0);
        let c = if c.is_finite() { c / scale } else { c.signum() };
        let _ = lp.set_cost(col, c);
    }
}

/// How a solve ended, for the decision.
enum Outcome {
    Point(Vec<f64>),
    Infeasible,
    NoPoint,
}

fn value(expr: &[(usize, f64)], x: &[f64]) -> u32 {
    let v: f64 = expr
        .iter()
        .map(|&(c, a)| a * x.get(c).copied().unwrap_or(0.0))
        .sum();
    let r = v.round();
    if r <= 0.0 {
        0
    } else if r >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        r as u32
    }
}

fn bad(option: &'static str, value: f64) -> crate::Error {
    LpError::InvalidOption {
        option,
        reason: format!("must be finite and non-negative, got {value}"),
    }
    .into()
}

impl DormLike {
    /// The counters so far.
    pub fn report(&self) -> &DormReport {
        &self.state.report
    }

    fn check(&self) -> crate::Result<()> {
        for (name, v) in [
            ("fairness_fraction", self.params.fairness_fraction),
            ("adjustment_fraction", self.params.adjustment_fraction),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(name, v));
            }
        }
        if let Some(b) = self.params.total_budget_s
            && (b.is_nan() || b < 0.0)
        {
            return Err(bad("total_budget_s", b));
        }
        Ok(())
    }

    /// Solves the model within the limits, counting time and incumbents.
    fn solve(&mut self, model: &Model) -> crate::Result<Outcome> {
        let mut limit = self.params.time_limit_s;
        if let Some(budget) = self.params.total_budget_s {
            let left = budget - self.state.report.mip_time_s;
            if left <= 0.0 {
                return Ok(Outcome::NoPoint);
            }
            limit = limit.min(left);
        }
        let opts = SolveOptions::default()
            .with_time_limit(limit)
            .with_mip_rel_gap(self.params.mip_rel_gap);
        let sol = lp::solve(&model.lp, &opts)?;
        let report = &mut self.state.report;
        report.milp_solves += 1;
        report.mip_time_s += sol.seconds;
        use crate::lp::LpStatus;
        Ok(match sol.status {
            LpStatus::Optimal if sol.has_primal => Outcome::Point(sol.primal),
            s if s.is_limit() && sol.has_primal => {
                report.time_limit_incumbents += 1;
                Outcome::Point(sol.primal)
            }
            LpStatus::Infeasible | LpStatus::UnboundedOrInfeasible => Outcome::Infeasible,
            _ => Outcome::NoPoint,
        })
    }
}

impl Policy for DormLike {
    fn name(&self) -> String {
        "dorm".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.check()?;
        let inst = view.instance();
        let machines = &inst.cluster().machines;
        let total = inst.cluster().total_capacity();
        let pinned = |j: &JobView<'_>| {
            j.has_plan() || j.is_running() && j.job().discipline.elasticity == Elasticity::Rigid
        };
        let mut jobs: Vec<DJob<'_>> = Vec::new();
        let mut net: Vec<Resources> = machines.iter().map(|m| m.capacity).collect();
        let mut prev_sum = 0u64;
        for j in view.active() {
            if j.status() != JobStatus::Waiting {
                prev_sum += u64::from(j.tasks().workers);
            }
            if pinned(&j) {
                let spread = j.placement().worker_machines();
                for &(m, t) in j.placement() {
                    if let Some(p) = inst.machine_position(m) {
                        let d = j.job().demand_with_reservation(t.workers, t.ps, spread);
                        net[p] = net[p].minus(&d);
                    }
                }
                continue;
            }
            let shape = Shape::of(j.job());
            let lower = if j.is_running() && !j.job().discipline.preemptible {
                shape.minimum()
            } else {
                Tasks::default()
            };
            let prev = (j.status() != JobStatus::Waiting).then(|| j.tasks().workers);
            jobs.push(DJob {
                view: j,
                shape,
                lower,
                prev,
            });
        }
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        self.state.report.decisions += 1;
        let pool = |kind: Option<TaskKind>| -> Option<Resources> {
            if let Some(k) = kind
                && machines.iter().all(|m| m.hosts.allows(k))
            {
                return None;
            }
            Some(
                machines
                    .iter()
                    .zip(&net)
                    .filter(|(m, _)| kind.is_none_or(|k| m.hosts.allows(k)))
                    .fold(Resources::zero(), |a, (_, c)| a.plus(c)),
            )
        };
        let pools = Pools {
            all: pool(None).unwrap_or_default(),
            worker: pool(Some(TaskKind::Worker)),
            ps: pool(Some(TaskKind::ParameterServer)),
        };
        let drf = pooled_drf(&jobs, &pools, &total);
        let floors: Vec<u32> = drf
            .iter()
            .map(|t| units::floor_tol(self.params.fairness_fraction * f64::from(t.workers)) as u32)
            .collect();
        let bound = units::ceil_tol(self.params.adjustment_fraction * prev_sum as f64).max(1.0);

        let mut model = build(&jobs, &pools, &total, Some(&floors), Some(bound));
        let mut outcome = self.solve(&model)?;
        if matches!(outcome, Outcome::Infeasible) {
            self.state.report.fairness_dropped += 1;
            model = build(&jobs, &pools, &total, None, Some(bound));
            outcome = self.solve(&model)?;
        }
        let mut target: Vec<Tasks> = match outcome {
            Outcome::Point(x) => jobs
                .iter()
                .enumerate()
                .map(|(k, j)| {
                    let t = Tasks::new(value(&model.n_expr[k], &x), value(&model.m_expr[k], &x));
                    j.shape.repair(t, j.lower)
                })
                .collect(),
            Outcome::Infeasible | Outcome::NoPoint => {
                self.state.report.fallbacks += 1;
                drf
            }
        };

        // Placement, decrementing on failure.
        let managed: Vec<JobView<'_>> = jobs.iter().map(|j| j.view).collect();
        loop {
            let mut r = Realloc::new(
                view,
                self.params.placement,
                self.state.pointer,
                &managed,
                &[],
            );
            for (e, j) in jobs.iter().enumerate() {
                if j.lower.workers > 0 {
                    r.add(e, j.lower.workers, j.lower.ps);
                }
            }
            let mut failed = false;
            for (e, t) in target.iter().enumerate() {
                let have = r.total(e);
                let (dw, dp) = (
                    t.workers.saturating_sub(have.workers),
                    t.ps.saturating_sub(have.ps),
                );
                if (dw > 0 || dp > 0) && !r.add(e, dw, dp) {
                    failed = true;
                    break;
                }
            }
            let victim = failed
                .then(|| {
                    (0..jobs.len())
                        .filter(|&k| target[k].workers > jobs[k].lower.workers)
                        .max_by_key(|&k| {
                            let grows = target[k].workers > jobs[k].prev.unwrap_or(0);
                            (grows, target[k].workers, k)
                        })
                })
                .flatten();
            match victim {
                Some(k) => {
                    target[k] = jobs[k].shape.shrink(target[k]);
                    self.state.report.placement_decrements += 1;
                }
                None => {
                    self.state.pointer = r.pointer();
                    return Ok(r.into_actions());
                }
            }
        }
    }
}
