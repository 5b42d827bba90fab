//! From the crate's model to the epoch program: candidate configurations
//! of each job with their remaining times (layered timing model), costs,
//! wait charges and capacity rows.

use std::borrow::Cow;

use crate::model::units::Num;
use crate::model::{Architecture, Elasticity, Instance, Job, JobId, ResourceKind, Resources};
use crate::schedule::Placement;
use crate::timing::{IterationTime, ProgressMode, PsLayered, iterations_in};

use super::error::{non_negative, too_large};
use super::problem::{EpochOption, EpochProblem, Group, WaitJob, loosened, wait_charges};
use super::{SmdError, SmdParams};

/// One active job at an epoch, as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochJob {
    /// The job (it must be in the instance).
    pub job: JobId,
    /// `V_i`: its remaining work, in mini-batches (the simulator's unit for
    /// parameter-server jobs; finite, ≥ 0).
    pub remaining_work: f64,
    /// Where it runs just before the epoch (empty: waiting). Its task
    /// counts are `k_i^cur`.
    pub placement: Placement,
}

impl EpochJob {
    /// A waiting job.
    pub fn waiting(job: JobId, remaining_work: f64) -> Self {
        EpochJob {
            job,
            remaining_work,
            placement: Placement::new(),
        }
    }

    /// `k_i^cur`: `(workers, PSs)` it runs with (`None` when waiting).
    pub fn current(&self) -> Option<(u32, u32)> {
        let t = self.placement.total();
        (!t.is_empty()).then_some((t.workers, t.ps))
    }
}

/// One configuration of a job with its remaining time, before pruning.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    /// `(workers, PSs)`.
    pub(crate) config: (u32, u32),
    /// `τ(w, p)`: seconds per iteration of the layered model.
    pub(crate) iteration_s: f64,
    /// `θ(w, p) = w / τ`: mini-batches per second.
    pub(crate) throughput: f64,
    /// `ρ(w, p) = V / θ`: seconds to finish the remaining work.
    pub(crate) remaining_s: f64,
    /// Whether it fits the free capacity (else only the whole cluster).
    pub(crate) fits_free: bool,
}

/// The capacity rows of an epoch: the resource kinds some job demands.
pub(crate) fn capacity_rows(instance: &Instance, jobs: &[EpochJob]) -> Vec<ResourceKind> {
    ResourceKind::ALL
        .into_iter()
        .filter(|&kind| {
            jobs.iter().any(|e| {
                instance
                    .job(e.job)
                    .is_some_and(|j| j.demand_for(1, 1).get(kind) > 0.0)
            })
        })
        .collect()
}

/// `job` at its one compute speed on `instance`'s GPU types: the epoch
/// program has one speed per job, so a job whose speed differs between
/// the cluster's types is outside the model.
///
/// # Errors
///
/// [`SmdError::UnsupportedJob`] naming the types.
pub(crate) fn at_one_speed<'a>(
    instance: &Instance,
    job: &'a Job,
) -> Result<Cow<'a, Job>, SmdError> {
    let types = crate::algorithms::gpu_types_of(instance.cluster());
    crate::algorithms::at_one_speed(job, &types).map_err(|reason| SmdError::UnsupportedJob {
        job: job.id,
        reason,
    })
}

/// The layered model of a job, or why the scheduler cannot take it.
pub(crate) fn layered(job: &Job) -> Result<PsLayered, SmdError> {
    let unsupported = |reason: String| SmdError::UnsupportedJob {
        job: job.id,
        reason,
    };
    if job.discipline.elasticity == Elasticity::Rigid {
        return Err(unsupported("a rigid gang cannot be resized".into()));
    }
    match &job.architecture {
        Architecture::ParameterServer(ps) => PsLayered::from_job(ps, 1)
            .map_err(|e| unsupported(e.to_string()))?
            .ok_or_else(|| unsupported("no layer profile".into())),
        Architecture::RingAllReduce(_) => Err(unsupported("not a parameter-server job".into())),
    }
}

/// Every configuration of `job` that fits the whole cluster (`total`),
/// with its remaining time for `remaining_work` mini-batches, in
/// lexicographic order of `(w, p)`; `fits_free` marks those that also fit
/// `free`.
///
/// The configurations are `1 ≤ w ≤ W_max`, `1 ≤ p ≤ P_max` and `p ≤ w`
/// under the PS rule (the job's or the parameters'), `w` a power of two
/// when asked, and (with `params.max_iteration_s`) at least one whole
/// iteration within that time.
///
/// # Errors
///
/// [`SmdError::UnsupportedJob`] for a job without a layered model, or
/// whose every configuration that fits is slower than
/// `params.max_iteration_s`;
/// [`SmdError::InvalidInput`] for a bad remaining work;
/// [`SmdError::TooLarge`] beyond `params.max_candidates_per_job`.
pub(crate) fn candidates(
    job: &Job,
    remaining_work: f64,
    free: &Resources,
    total: &Resources,
    params: &SmdParams,
) -> Result<Vec<Candidate>, SmdError> {
    non_negative("remaining_work", remaining_work)?;
    let model = layered(job)?;
    let Architecture::ParameterServer(ps) = &job.architecture else {
        return Ok(Vec::new());
    };
    let fits = |w: u32, p: u32, cap: &Resources| {
        let d = job.demand_for(w, p);
        ResourceKind::ALL
            .into_iter()
            .all(|k| d.get(k) <= loosened(cap.get(k)))
    };
    let pw = ps.ps_at_most_workers || params.pw_rule;
    let limit = params.max_candidates_per_job;
    let mut out = Vec::new();
    let mut enumerated = 0usize;
    // The fastest configuration too slow for `max_iteration_s`, if any.
    let mut too_slow: Option<((u32, u32), f64)> = None;
    let mut w = 1;
    while w <= ps.max_workers && w >= 1 {
        if !fits(w, 1, total) {
            break; // more workers only need more
        }
        let p_hi = if pw { ps.max_ps.min(w) } else { ps.max_ps };
        for p in 1..=p_hi {
            if !fits(w, p, total) {
                break;
            }
            enumerated += 1;
            too_large("candidates of one job", enumerated as f64, limit as f64)?;
            let tau = model
                .iteration_time_s(&(w, p))
                .map_err(|e| SmdError::UnsupportedJob {
                    job: job.id,
                    reason: e.to_string(),
                })?;
            if let Some(max) = params.max_iteration_s
                && iterations_in(max, tau, ProgressMode::Floor) < 1.0
            {
                if too_slow.is_none_or(|(_, t)| tau < t) {
                    too_slow = Some(((w, p), tau));
                }
                continue;
            }
            let throughput = f64::from(w) / tau;
            let remaining_s = if remaining_work == 0.0 {
                0.0
            } else {
                remaining_work * tau / f64::from(w)
            };
            if !remaining_s.is_finite() {
                return Err(SmdError::UnsupportedJob {
                    job: job.id,
                    reason: format!(
                        "remaining time {} on ({w}, {p}) is not finite",
                        Num(remaining_s)
                    ),
                });
            }
            out.push(Candidate {
                config: (w, p),
                iteration_s: tau,
                throughput,
                remaining_s,
                fits_free: fits(w, p, free),
            });
        }
        let next = if params.powers_of_two {
            w.saturating_mul(2)
        } else {
            w.saturating_add(1)
        };
        if next == w {
            break;
        }
        w = next;
    }
    match (out.is_empty(), too_slow, params.max_iteration_s) {
        (true, Some(((w, p), tau)), Some(max)) => Err(SmdError::UnsupportedJob {
            job: job.id,
            reason: format!(
                "it cannot progress at any size: its fastest configuration ({w} workers, {p} PSs) \
                 needs {} s per iteration, more than max_iteration_s = {} s \
                 (in a slotted run the slot length: progress counts whole iterations per slot)",
                Num(tau),
                Num(max)
            ),
        }),
        _ => Ok(out),
    }
}

/// One job's candidates, reconfiguration time and row usage, before the
/// wait charge is known.
struct Prepared {
    job: JobId,
    arrival_s: f64,
    reconfiguration_s: f64,
    current: Option<(u32, u32)>,
    usage_of: Vec<Vec<f64>>,
    candidates: Vec<Candidate>,
    wait: WaitJob,
}

/// Builds the epoch program of `jobs` (in order: group `i` is `jobs[i]`)
/// over the aggregate `free` capacity of the cluster.
///
/// # Errors
///
/// [`SmdError::InvalidInput`] for an unknown or repeated job or bad
/// remaining work; [`SmdError::JobNeverFits`] when one worker and one PS
/// exceed the whole cluster; the errors of [`candidates`] and
/// [`wait_charges`]; [`SmdError::TooLarge`] beyond `params.max_columns`.
pub(crate) fn build_problem(
    instance: &Instance,
    jobs: &[EpochJob],
    free: &Resources,
    params: &SmdParams,
) -> Result<EpochProblem, SmdError> {
    params.validate()?;
    let total = instance.cluster().total_capacity();
    let rows = capacity_rows(instance, jobs);
    let pick = |r: &Resources| rows.iter().map(|&k| r.get(k)).collect::<Vec<f64>>();
    let (cap_rows, total_rows) = (pick(free), pick(&total));
    let mut seen = std::collections::BTreeSet::new();
    let mut prepared = Vec::with_capacity(jobs.len());
    let mut columns = 0usize;
    for e in jobs {
        let job = instance.job(e.job).ok_or_else(|| SmdError::InvalidInput {
            name: "jobs",
            reason: format!("{} is not in the instance", e.job),
        })?;
        if !seen.insert(e.job) {
            return Err(SmdError::InvalidInput {
                name: "jobs",
                reason: format!("{} appears twice", e.job),
            });
        }
        let job = &*at_one_speed(instance, job)?;
        let cands = candidates(job, e.remaining_work, free, &total, params)?;
        let Some(smallest) = cands.first() else {
            return Err(SmdError::JobNeverFits { job: e.job });
        };
        let best = cands
            .iter()
            .min_by(|a, b| a.remaining_s.total_cmp(&b.remaining_s))
            .unwrap_or(smallest);
        let usage_of: Vec<Vec<f64>> = cands
            .iter()
            .map(|c| pick(&job.demand_for(c.config.0, c.config.1)))
            .collect();
        let share = |c: &Candidate| {
            let d = job.demand_for(c.config.0, c.config.1);
            crate::placement::dominant_share(&d, &total)
        };
        columns += cands.iter().filter(|c| c.fits_free).count() + 1;
        too_large("LP columns", columns as f64, params.max_columns as f64)?;
        prepared.push(Prepared {
            job: e.job,
            arrival_s: job.arrival_s,
            reconfiguration_s: job.reconfiguration_s,
            current: e.current(),
            wait: WaitJob {
                job: e.job,
                arrival_s: job.arrival_s,
                best_time_s: best.remaining_s,
                best_share: share(best),
                smallest_time_s: smallest.remaining_s,
                reconfiguration_s: job.reconfiguration_s,
            },
            usage_of,
            candidates: cands,
        });
    }
    let waits: Vec<WaitJob> = prepared.iter().map(|p| p.wait).collect();
    let omega = wait_charges(&waits, params.wait_charge)?;
    let groups = prepared
        .into_iter()
        .zip(omega)
        .map(|(p, wait_cost)| group_of(p, wait_cost))
        .collect();
    EpochProblem::new(cap_rows, total_rows, groups)
}

/// The group of one prepared job: its candidates that fit the free
/// capacity, at `c(k) = ρ(k) + o·[k ≠ k^cur]`.
fn group_of(p: Prepared, wait_cost: f64) -> Group {
    let options = p
        .candidates
        .iter()
        .zip(p.usage_of)
        .filter(|(c, _)| c.fits_free)
        .map(|(c, usage)| EpochOption {
            config: c.config,
            usage,
            cost: c.remaining_s
                + if Some(c.config) == p.current {
                    0.0
                } else {
                    p.reconfiguration_s
                },
        })
        .collect();
    Group {
        job: p.job,
        arrival_s: p.arrival_s,
        wait_cost,
        options,
        srpt_key: p.wait.best_time_s,
    }
}

/// The key of `job` in the shortest-remaining-first order of an epoch
/// program: its best standalone time `min_k ρ(k)` over the candidates that
/// fit the whole cluster `total` (what `build_problem` orders by and
/// charges waits with), for `remaining_work`.
///
/// # Errors
///
/// As [`candidates`]; [`SmdError::JobNeverFits`] without a candidate.
pub(crate) fn best_time(
    job: &Job,
    remaining_work: f64,
    total: &Resources,
    params: &SmdParams,
) -> Result<f64, SmdError> {
    let cands = candidates(job, remaining_work, total, total, params)?;
    let Some(smallest) = cands.first() else {
        return Err(SmdError::JobNeverFits { job: job.id });
    };
    Ok(cands
        .iter()
        .min_by(|a, b| a.remaining_s.total_cmp(&b.remaining_s))
        .unwrap_or(smallest)
        .remaining_s)
}
