//! Baselines for the locality-aware scheduler, in the same plan format
//! ([`LocalityPlan`], segments with configurations) and the same online
//! mode: jobs in arrival order against a residual-capacity ledger,
//! reservations irrevocable, a job admitted iff its plan completes within
//! its window `[a_i, end_i]` with utility `f > 0`, else rejected.
//!
//! * [`LocalityBaseline::AlwaysLocalFirstFit`] (no prices): slot by slot
//!   from the arrival, the lowest-index machine that fits one worker and
//!   one PS runs the job LOCAL with `min(N_i, Ȳ^L)` workers and one PS;
//!   a slot where no machine fits is idle.
//! * [`LocalityBaseline::AlwaysSpreadGreedy`] (no prices): slot by slot,
//!   up to `N_i` workers placed one at a time, each on the machine with the
//!   most residual GPU (then vCPU, then the lowest index), then
//!   `zreq = ⌈b·Σy/B⌉` PSs one at a time on the machines with the most
//!   residual NIC (then the lowest index); while the PSs do not fit (or
//!   exceed the job's PS cap) the last-placed worker is removed. Always
//!   DISTRIBUTED.
//! * [`LocalityBaseline::NoLocality`]: the locality scheduler itself with
//!   LOCAL disabled ([`LocalityParams::allow_local`] `= false`): the same
//!   prices, admission rule and inner solver, every worker at `r^D`.
//!
//! The greedy baselines stop a job's walk at the first slot where its work
//! reaches `Q_i`, and in every slot use no more workers than the remaining
//! work needs (`⌈remaining/r⌉`), so the last slot may be narrower.
//!
//! # Certificate
//!
//! Objective: the total utility. Bound: the trivial `Σ_i f_i(δ_min,i)` of
//! the full locality model (LOCAL allowed) over the jobs whose window
//! reaches `a_i + δ_min,i` ([`BoundKind::Trivial`]). No guarantee.

use std::collections::BTreeMap;
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::certificate::{Bound, BoundKind, Certificate, Sense};
use crate::model::Instance;
use crate::model::units::ceil_tol;
use crate::online::{Decision, OnlineModel, Reservation, schedule_of};
use crate::schedule::Tasks;

use crate::algorithms::Algorithm;

use super::model::{to_u32, units_fitting};
use super::{
    Locality, LocalityCluster, LocalityError, LocalityJob, LocalityOnline, LocalityParams,
    LocalityPlan, LocalityReport, SlotConfig, SlotPlan, Solved, Vector, verify_locality,
};

/// Relative tolerance of "the work reaches `Q_i`".
const WORK_TOL: f64 = 1e-10;

/// A baseline of the locality-aware scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum LocalityBaseline {
    /// LOCAL on the lowest-index machine that fits, every slot (no prices).
    #[cfg_attr(feature = "serde", serde(alias = "AlwaysLocalFirstFit"))]
    AlwaysLocalFirstFit,
    /// DISTRIBUTED, workers spread by residual GPU, PSs by residual NIC
    /// (no prices).
    #[cfg_attr(feature = "serde", serde(alias = "AlwaysSpreadGreedy"))]
    AlwaysSpreadGreedy,
    /// The locality scheduler with LOCAL disabled.
    #[cfg_attr(feature = "serde", serde(alias = "NoLocality"))]
    NoLocality,
}

/// What a baseline run did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BaselineReport {
    /// The baseline.
    pub(crate) baseline: LocalityBaseline,
    /// The jobs in arrival order, in the model's terms (LOCAL allowed,
    /// except under [`LocalityBaseline::NoLocality`]).
    pub(crate) jobs: Vec<LocalityJob>,
    /// Every job's plan (`None`: rejected), arrival order.
    pub plans: Vec<Option<LocalityPlan>>,
    /// `Σ f_i(completion_i − a_i)` over the admitted jobs.
    pub total_utility: f64,
    /// `Σ_i f_i(δ_min,i)` of the full locality model (see the module
    /// documentation).
    pub trivial_bound: f64,
    /// The locality scheduler's own report, for
    /// [`LocalityBaseline::NoLocality`].
    pub inner: Option<Box<LocalityReport>>,
    /// Wall-clock seconds of the run.
    pub(crate) seconds: f64,
}

impl BaselineReport {
    /// Admitted jobs.
    pub fn admitted(&self) -> usize {
        self.plans.iter().filter(|p| p.is_some()).count()
    }
}

impl LocalityBaseline {
    /// All baselines.
    pub const ALL: [LocalityBaseline; 3] = [
        LocalityBaseline::AlwaysLocalFirstFit,
        LocalityBaseline::AlwaysSpreadGreedy,
        LocalityBaseline::NoLocality,
    ];

    /// A short name (`"always_local_first_fit"`, `"always_spread_greedy"`,
    /// `"no_locality"`).
    pub fn name(&self) -> &'static str {
        match self {
            LocalityBaseline::AlwaysLocalFirstFit => "always_local_first_fit",
            LocalityBaseline::AlwaysSpreadGreedy => "always_spread_greedy",
            LocalityBaseline::NoLocality => "no_locality",
        }
    }

    /// Runs the baseline over the jobs of `instance` in arrival order with
    /// the plan window and intra-machine bandwidth rule of `params` (and,
    /// for [`NoLocality`](Self::NoLocality), all its other options; its
    /// runs seed randomised inner solvers with `params.seed`, else 0). The
    /// schedule is checked with [`schedule::verify`](crate::schedule::verify)
    /// and [`verify_locality`] before it is returned.
    ///
    /// # Errors
    ///
    /// As [`Locality::solve`]; [`LocalityError::InvalidOption`] for
    /// [`AlwaysLocalFirstFit`](Self::AlwaysLocalFirstFit) with
    /// `params.allow_local = false`; a schedule that either checker rejects
    /// is returned as its error (a bug).
    pub fn solve(
        &self,
        instance: &Instance,
        params: &LocalityParams,
    ) -> crate::Result<Solved<BaselineReport>> {
        let start = Instant::now();
        let full = LocalityParams {
            allow_local: true,
            ..params.clone()
        };
        let cluster = LocalityCluster::from_instance(instance)?;
        let full_jobs = super::jobs_of(&full, instance, &cluster)?;
        let trivial_bound = trivial_bound(&cluster, &full_jobs);
        let check = LocalityParams {
            allow_local: *self == LocalityBaseline::AlwaysLocalFirstFit,
            ..params.clone()
        };
        let (jobs, plans, inner) = match self {
            LocalityBaseline::NoLocality => {
                let mut rng = ChaCha8Rng::seed_from_u64(params.seed.unwrap_or(0));
                let solved = Locality::new(check.clone())?.solve(instance, &mut rng)?;
                let plans = solved
                    .report
                    .run
                    .outcomes
                    .iter()
                    .map(|o| match &o.decision {
                        Decision::Admitted { plan, .. } => Some(plan.clone()),
                        _ => None,
                    })
                    .collect();
                (
                    solved.report.jobs.clone(),
                    plans,
                    Some(Box::new(solved.report)),
                )
            }
            _ => {
                if !params.allow_local && *self == LocalityBaseline::AlwaysLocalFirstFit {
                    return Err(LocalityError::InvalidOption {
                        name: "allow_local",
                        reason: "AlwaysLocalFirstFit runs every job LOCAL".into(),
                    }
                    .into());
                }
                let plans = self.run_greedy(&cluster, &full_jobs);
                (full_jobs, plans, None)
            }
        };
        let admitted = jobs
            .iter()
            .zip(&plans)
            .filter_map(|(j, p)| p.as_ref().map(|p| (j.id, p.segments(&cluster))));
        let schedule = schedule_of(instance, admitted)
            .map_err(<LocalityOnline as OnlineModel>::unknown_job)?;
        crate::schedule::verify(instance, &schedule)?;
        verify_locality(instance, &check, &schedule)?;
        let total_utility: f64 = jobs
            .iter()
            .zip(&plans)
            .filter_map(|(j, p)| p.as_ref().map(|p| j.utility_at(p.completion_slot())))
            .sum();
        let certificate = Certificate::new(
            format!("locality::{}", self.name()),
            Sense::Maximise,
            total_utility,
            Bound::new(trivial_bound, BoundKind::Trivial),
        );
        let report = BaselineReport {
            baseline: *self,
            jobs,
            plans,
            total_utility,
            trivial_bound,
            inner,
            seconds: start.elapsed().as_secs_f64(),
        };
        Ok(Solved {
            schedule,
            certificate,
            report,
        })
    }

    /// The greedy baselines' online loop: each job walks the residual
    /// ledger; an admitted plan is subtracted from it for good.
    fn run_greedy(
        &self,
        cluster: &LocalityCluster,
        jobs: &[LocalityJob],
    ) -> Vec<Option<LocalityPlan>> {
        self.list_schedule(cluster, jobs, cluster.horizon, true)
    }

    /// The greedy baselines in offline mode: the jobs in the given order,
    /// each placed as early as possible (from its arrival slot) on the
    /// residual ledger of `slots` slots that the earlier jobs left, with
    /// no utility test: every job is walked until its work is done.
    /// Returns every job's plan, or the position of the first job whose
    /// walk does not finish within the ledger (or within its window).
    /// [`NoLocality`](Self::NoLocality) has no offline mode: position 0.
    pub(crate) fn offline_plans(
        &self,
        cluster: &LocalityCluster,
        jobs: &[LocalityJob],
        slots: u32,
    ) -> Result<Vec<LocalityPlan>, usize> {
        if *self == LocalityBaseline::NoLocality {
            return Err(0);
        }
        let mut out = Vec::with_capacity(jobs.len());
        for (k, plan) in self
            .list_schedule(cluster, jobs, slots, false)
            .into_iter()
            .enumerate()
        {
            out.push(plan.ok_or(k)?);
        }
        Ok(out)
    }

    /// Each job walks the residual ledger of `slots` slots in turn; a
    /// plan is subtracted from it for good. `online`: a job whose utility
    /// reaches 0 before it completes is rejected; offline, later jobs are
    /// still walked after one fails.
    fn list_schedule(
        &self,
        cluster: &LocalityCluster,
        jobs: &[LocalityJob],
        slots: u32,
        online: bool,
    ) -> Vec<Option<LocalityPlan>> {
        let mut residual: Vec<Vec<Vector>> = vec![cluster.capacity.clone(); slots as usize];
        jobs.iter()
            .map(|job| {
                let plan = walk(job, &residual, online, |res, remaining| match self {
                    LocalityBaseline::AlwaysLocalFirstFit => {
                        local_slot(job, cluster, res, remaining)
                    }
                    _ => spread_slot(job, cluster, res, remaining),
                });
                if let Some(p) = &plan {
                    for c in p.consumption() {
                        let cell = &mut residual[c.slot as usize][c.machine.0 as usize];
                        cell[usize::from(c.resource.0)] -= c.amount;
                    }
                }
                plan
            })
            .collect()
    }
}

/// `Σ_i f_i(δ_min,i)` over the jobs whose window reaches `a_i + δ_min,i`
/// (positive values only).
pub(crate) fn trivial_bound(cluster: &LocalityCluster, jobs: &[LocalityJob]) -> f64 {
    jobs.iter()
        .filter(|j| u64::from(j.arrival) + u64::from(j.delta_min(cluster)) <= u64::from(j.end))
        .map(|j| j.utility.value(j.delta_min(cluster)).max(0.0))
        .sum()
}

/// Walks `job`'s window slot by slot: `slot_config(residual of the slot,
/// remaining work)` gives the slot's configuration and rate per worker
/// (`None`: idle). Returns the plan once the work reaches `Q_i` (`online`:
/// with `f_i > 0`), else `None`.
fn walk(
    job: &LocalityJob,
    residual: &[Vec<Vector>],
    online: bool,
    slot_config: impl FnMut(&[Vector], f64) -> Option<(SlotConfig, f64)>,
) -> Option<LocalityPlan> {
    let last = residual.len().checked_sub(1)?;
    let last = job.end.min(to_u32(last as f64));
    walk_slots(
        job,
        last,
        online,
        |t, res| res.clone_from(&residual[t as usize]),
        slot_config,
    )
}

/// [`walk`] over slots `a_i..=last`, the residual of slot `t` written by
/// `residual_at(t, buffer)` into one buffer reused from slot to slot.
pub(crate) fn walk_slots(
    job: &LocalityJob,
    last: u32,
    online: bool,
    mut residual_at: impl FnMut(u32, &mut Vec<Vector>),
    mut slot_config: impl FnMut(&[Vector], f64) -> Option<(SlotConfig, f64)>,
) -> Option<LocalityPlan> {
    let mut res = Vec::new();
    let mut plan = LocalityPlan {
        job: job.id,
        slots: Vec::new(),
        worker: job.worker,
        ps: job.ps,
    };
    let mut done = 0.0;
    for t in job.arrival..=last {
        if online && job.utility_at(t) <= 0.0 {
            return None; // utilities do not increase
        }
        residual_at(t, &mut res);
        let Some((config, rate)) = slot_config(&res, job.minibatches - done) else {
            continue;
        };
        let work = rate * f64::from(config.workers());
        done += work;
        plan.slots.push(SlotPlan {
            slot: t,
            config,
            work,
        });
        if done >= job.minibatches * (1.0 - WORK_TOL) {
            return Some(plan);
        }
    }
    None
}

/// Workers the remaining work needs at `rate`, at most `N_i`.
fn needed(job: &LocalityJob, remaining: f64, rate: f64) -> u32 {
    to_u32(ceil_tol(remaining / rate).max(1.0)).min(job.max_workers)
}

/// AlwaysLocalFirstFit's slot: LOCAL on the lowest-index machine that fits
/// one worker and one PS.
pub(crate) fn local_slot(
    job: &LocalityJob,
    cluster: &LocalityCluster,
    res: &[Vector],
    remaining: f64,
) -> Option<(SlotConfig, f64)> {
    let (wl, sl) = (job.worker_local(), job.ps_local());
    (0..cluster.machines())
        .filter(|&h| job.local_allowed(cluster, h))
        .find_map(|h| {
            let r = res[h];
            if units_fitting(&sl, |k| r[k], 1) < 1 {
                return None;
            }
            let rate = job.rate_local[h];
            let y = units_fitting(&wl, |k| r[k] - sl[k], needed(job, remaining, rate));
            (y >= 1).then_some((
                SlotConfig::Local {
                    machine: h as u32,
                    workers: y,
                },
                rate,
            ))
        })
}

/// The machine that may host a unit of `demand` (role `hosts`, allowed,
/// fits) with the largest `key` of its residual, ties to the lowest index.
fn pick(
    job: &LocalityJob,
    res: &[Vector],
    hosts: &[bool],
    demand: &Vector,
    key: impl Fn(&Vector) -> (f64, f64),
) -> Option<usize> {
    let mut best: Option<(usize, (f64, f64))> = None;
    for (h, r) in res.iter().enumerate() {
        if !hosts[h] || !job.may_use(h) || units_fitting(demand, |k| r[k], 1) < 1 {
            continue;
        }
        let k = key(r);
        if best.is_none_or(|(_, b)| k > b) {
            best = Some((h, k));
        }
    }
    best.map(|b| b.0)
}

fn take(r: &mut Vector, d: &Vector, sign: f64) {
    for (v, x) in r.iter_mut().zip(d) {
        *v -= sign * x;
    }
}

/// AlwaysSpreadGreedy's slot (see the module documentation).
pub(crate) fn spread_slot(
    job: &LocalityJob,
    cluster: &LocalityCluster,
    res: &[Vector],
    remaining: f64,
) -> Option<(SlotConfig, f64)> {
    let mut r = res.to_vec();
    let mut workers: Vec<usize> = Vec::new();
    for _ in 0..needed(job, remaining, job.rate_dist) {
        let Some(h) = pick(job, &r, &cluster.hosts_workers, &job.worker, |v| {
            (v[0], v[1])
        }) else {
            break;
        };
        take(&mut r[h], &job.worker, 1.0);
        workers.push(h);
    }
    while let Some(&last) = workers.last() {
        let z = job.zreq(workers.len() as u32);
        if z <= job.max_ps {
            let mut rp = r.clone();
            let ps: Option<Vec<usize>> = (0..z)
                .map(|_| {
                    let h = pick(job, &rp, &cluster.hosts_ps, &job.ps, |v| {
                        (v[super::NIC], 0.0)
                    })?;
                    take(&mut rp[h], &job.ps, 1.0);
                    Some(h)
                })
                .collect();
            if let Some(ps) = ps {
                let mut tasks: BTreeMap<u32, Tasks> = BTreeMap::new();
                for &h in &workers {
                    tasks.entry(h as u32).or_default().workers += 1;
                }
                for h in ps {
                    tasks.entry(h as u32).or_default().ps += 1;
                }
                let tasks = tasks.into_iter().collect();
                return Some((SlotConfig::Distributed { tasks }, job.rate_dist));
            }
        }
        take(&mut r[last], &job.worker, -1.0);
        workers.pop();
    }
    None
}
