//! One epoch, end to end: program, selection, rounding, placement and the
//! certificate.

use std::time::Instant;

use crate::certificate::{Bound, BoundKind, Certificate, Guarantee, RunInfo, Sense};
use crate::model::units::Num;
use crate::model::{Instance, JobId, ResourceKind, Resources};
use crate::schedule::Placement;

use super::place::place;
use super::select::{PlanMode, choices, select_among};
use super::{EpochJob, SmdError, SmdParams, build_problem};

/// The decision about one job at an epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct SmdDecision {
    /// The job.
    pub(crate) job: JobId,
    /// The configuration the epoch program chose (`None`: wait).
    pub planned: Option<(u32, u32)>,
    /// The configuration it runs after placement (`None`: wait).
    pub config: Option<(u32, u32)>,
    /// Where its tasks go (empty: it waits).
    pub placement: Placement,
}

/// Diagnostics of one epoch, with its certificate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SmdEpochReport {
    /// The certificate of the epoch program that produced the chosen plan:
    /// objective `J` (the plan as placed), the safe LP bound (or the
    /// trivial bound under the greedy), the exact MIP when run, and the
    /// additive guarantee.
    pub certificate: Certificate,
    /// Which candidate plan was chosen.
    pub mode: PlanMode,
    /// `|F|`: groups with a fractional LP value (0 without LP).
    pub fractional_groups: usize,
    /// `d`: capacity rows.
    pub capacity_rows: usize,
    /// Whether the LP point is a vertex (simplex without presolve).
    pub is_vertex: bool,
    /// The plan evaluator's estimate of the chosen plan, seconds.
    pub plan_estimate_s: f64,
    /// Candidate plans solved and evaluated.
    pub candidates_evaluated: usize,
    /// Columns of the full epoch program, `Σ_i (|K_i| + 1)`.
    pub lp_columns: usize,
    /// Rows of the full epoch program, `d + n`.
    pub lp_rows: usize,
    /// Options dropped by dominance pruning.
    pub pruned_options: usize,
    /// Wall-clock seconds of the whole epoch.
    pub solve_seconds: f64,
    /// Cost of the plan before placement.
    pub planned_objective: f64,
    /// Whether placement changed some job's configuration.
    pub placement_adjusted: bool,
    /// The jobs placement downgraded.
    pub downgraded: Vec<JobId>,
}

impl SmdEpochReport {
    /// Checks the certificate ([`Certificate::check`]) and, for a vertex,
    /// `|F| ≤ d`.
    ///
    /// # Errors
    ///
    /// [`SmdError::Certificate`] or [`SmdError::FractionalGroups`].
    pub fn check(&self, tol: f64) -> Result<(), SmdError> {
        self.certificate.check(tol)?;
        if self.is_vertex && self.fractional_groups > self.capacity_rows {
            return Err(SmdError::FractionalGroups {
                count: self.fractional_groups,
                rows: self.capacity_rows,
            });
        }
        Ok(())
    }
}

/// What one epoch decides.
#[derive(Debug, Clone, PartialEq)]
pub struct SmdEpoch {
    /// One decision per input job, in input order.
    pub decisions: Vec<SmdDecision>,
    /// Diagnostics and certificate.
    pub report: SmdEpochReport,
}

/// The guarantee's formula.
pub const GUARANTEE: &str = "J ≤ LP + Σ_{i∈F}(ω_i − min_k c_ik), |F| ≤ d";

fn check_free(instance: &Instance, free: &[Resources]) -> Result<Resources, SmdError> {
    let machines = instance.cluster().machines.len();
    if free.len() != machines {
        return Err(SmdError::InvalidInput {
            name: "free",
            reason: format!("{} entries for {machines} machines", free.len()),
        });
    }
    let mut sum = Resources::zero();
    for r in free {
        for k in ResourceKind::ALL {
            let v = r.get(k);
            if !(v.is_finite() && v >= 0.0) {
                return Err(SmdError::InvalidInput {
                    name: "free",
                    reason: format!("{} {} is not finite and non-negative", k.name(), Num(v)),
                });
            }
        }
        sum = sum.plus(r);
    }
    Ok(sum)
}

/// Decides one epoch: builds the epoch program of `jobs` over the free
/// capacity `free` (one entry per machine, in cluster order, with the
/// allocations of `jobs` already given back), runs the outer selection,
/// places the chosen plan, and certifies it.
///
/// The certificate belongs to the program that produced the chosen plan
/// (with a prefix plan's forced waits as constants): objective `J` of the
/// plan as placed, the safe LP bound `LB(π)` (the capacity-free bound
/// `Σ_i c_i^min` under the greedy), the exact MIP as a comparison point
/// when asked, and the additive guarantee `J ≤ LP + Σ_{i∈F}(ω_i − c_i^min)`
/// (marked not valid when placement downgraded a job).
///
/// # Complexity
///
/// `O(Σ_i |K_i|·(L + d))` to build the program (`L` layers) and
/// `O(Σ_i |K_i|²·d)` to prune it; one LP of `Σ_i(|K_i|+1)` columns per
/// candidate plan, plus `O(n²·max|K_i|·d)` per plan evaluation; placement
/// `O(n·(W+P)·H)` for `H` machines. Measured (release build, 2-core
/// machine): 200 waiting jobs of the experiment workload on 32 machines of
/// 8 GPUs (3,694 columns after pruning) take about 22 ms under
/// [`Selection::Joint`](super::Selection::Joint) and 49 ms under
/// [`Selection::Best`](super::Selection::Best) (11 plans).
///
/// # Example
///
/// ```
/// use dmlsched::algorithms::smd::{EpochJob, Selection, SmdParams, epoch};
/// use dmlsched::algorithms::smd::workload::{SmdWorkloadOptions, generate};
///
/// let mut options = SmdWorkloadOptions::default();
/// options.machines = 2;
/// options.jobs = 6;
/// let w = generate(&options)?;
/// let inst = &w.instance;
/// let free: Vec<_> = inst.cluster().machines.iter().map(|m| m.capacity).collect();
/// let jobs: Vec<EpochJob> = inst
///     .jobs()
///     .iter()
///     .map(|j| EpochJob::waiting(j.id, dmlsched::sim::total_work(j)))
///     .collect();
/// let mut params = SmdParams::default();
/// params.selection = if cfg!(feature = "highs") { Selection::Best } else { Selection::Greedy };
/// let out = epoch(inst, &free, &jobs, &params)?;
/// out.report.check(1e-9)?;
/// assert!(out.decisions.iter().any(|d| !d.placement.is_empty()));
/// println!("{}", out.report.certificate);
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// [`SmdError::InvalidInput`] for a `free` of the wrong length or with a
/// NaN, infinite or negative entry; the errors of building the epoch
/// program and of solving it.
pub fn epoch(
    instance: &Instance,
    free: &[Resources],
    jobs: &[EpochJob],
    params: &SmdParams,
) -> Result<SmdEpoch, SmdError> {
    epoch_among(instance, free, jobs, params, jobs.len())
}

/// [`epoch`] over the queue window: `jobs` are the first of `active` jobs
/// in the shortest-remaining-first order (the others wait, outside the
/// program); see [`SmdParams::window`](super::SmdParams::window).
pub(crate) fn epoch_among(
    instance: &Instance,
    free: &[Resources],
    jobs: &[EpochJob],
    params: &SmdParams,
    active: usize,
) -> Result<SmdEpoch, SmdError> {
    let start = Instant::now();
    let aggregate = check_free(instance, free)?;
    let problem = build_problem(instance, jobs, &aggregate, params)?;
    let sel = select_among(&problem, params, active.max(jobs.len()))?;
    let models: Vec<_> = jobs
        .iter()
        .map(|e| instance.job(e.job).map(|j| (j, e)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| SmdError::InvalidInput {
            name: "jobs",
            reason: "a job is not in the instance".into(),
        })?;
    let placed = place(instance, free, &problem, &models, &sel.solution.plan);
    let objective = problem.cost(&placed.plan);
    let s = &sel.solution;
    let (bound, fractional) = match &s.lp {
        Some(lp) => (
            Bound::new(lp.safe_bound, BoundKind::LpDualSafe),
            lp.fractional.len(),
        ),
        None => (Bound::new(s.trivial_bound, BoundKind::Trivial), 0),
    };
    let mut cert = Certificate::new("smd::epoch", Sense::Minimise, objective, bound);
    if let Some(ex) = &s.exact {
        cert = cert.with_exact(ex.clone());
    }
    if let (Some(value), Some(lp)) = (s.guarantee_value, &s.lp) {
        let ratio = if lp.value > 0.0 {
            value / lp.value
        } else {
            f64::INFINITY
        };
        let mut g = Guarantee::deterministic_value(GUARANTEE, "crate", value).with_ratio(ratio);
        if !placed.downgraded.is_empty() {
            g = g.invalid("placement adjusted");
        }
        cert = cert.with_guarantee(g);
    }
    let mut run = RunInfo::new();
    run.lp_solves = if s.lp.is_some() {
        sel.evaluated as u32
    } else {
        0
    };
    let seconds = start.elapsed().as_secs_f64();
    run.add_stage("epoch", seconds);
    cert = cert.with_run(run);
    let planned = choices(&problem, &s.plan);
    let finals = choices(&problem, &placed.plan);
    let decisions = jobs
        .iter()
        .enumerate()
        .map(|(i, e)| SmdDecision {
            job: e.job,
            planned: planned[i],
            config: finals[i],
            placement: placed.placements[i].clone(),
        })
        .collect();
    let report = SmdEpochReport {
        certificate: cert,
        mode: sel.mode,
        fractional_groups: fractional,
        capacity_rows: problem.rows(),
        is_vertex: s.lp.is_some(),
        plan_estimate_s: sel.estimate_s,
        candidates_evaluated: sel.evaluated,
        lp_columns: problem.columns(),
        lp_rows: problem.rows() + problem.groups().len(),
        pruned_options: problem.pruned(),
        solve_seconds: seconds,
        planned_objective: s.objective,
        placement_adjusted: !placed.downgraded.is_empty(),
        downgraded: placed.downgraded.iter().map(|&i| jobs[i].job).collect(),
    };
    Ok(SmdEpoch { decisions, report })
}
