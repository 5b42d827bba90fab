//! The driver shared by SJF-BCO and its baselines: model conversion, the
//! search, the final simulation, the crate schedule and the certificate.

use std::time::Instant;

use rand::rngs::ChaCha8Rng;

use super::bounds::lower_bound_closed_form;
use super::error::SjfBcoError;
use super::formulation::{EstimateSource, FormulationInput, solve_time_indexed};
use super::model::TimeModel;
use super::model::{MAX_SLOTS, RarModel};
use super::params::{BisectionRule, KappaSpec, SjfBcoParams};
use super::report::{PaperClaim, SjfBcoReport, TimeIndexedBound, TrialRecord};
use super::search::{self, Found, SearchOutcome};
use super::sim::{Placed, RarAssignment, RarExecution, SlotSimOptions, server_counts, simulate};
use super::trial::{Choice, TrialConfig, run_trial};
use crate::algorithms::Solved;
use crate::certificate::{Bound, BoundKind, Certificate, ExactInfo, Sense};
use crate::model::Instance;
use crate::model::units::ceil_tol;
use crate::schedule::{JobSchedule, Placement, Schedule, Segment, Tasks, verify};
use crate::timing::ProgressMode;

/// Which algorithm the driver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algo {
    SjfBco,
    FirstFit,
    ListScheduling,
    Random,
}

impl Algo {
    fn name(self) -> &'static str {
        match self {
            Algo::SjfBco => "sjf-bco",
            Algo::FirstFit => "rar-ff",
            Algo::ListScheduling => "rar-ls",
            Algo::Random => "rar-rand",
        }
    }
}

/// The model, options and order of one run.
struct Setup {
    model: RarModel,
    horizon: u64,
    order: Vec<usize>,
    sim: SlotSimOptions,
}

fn setup(instance: &Instance, params: &SjfBcoParams) -> Result<Setup, SjfBcoError> {
    params.validate()?;
    let model = RarModel::new(instance, params.time_model, params.estimates.as_deref())?;
    // The time-indexed bound's size limit is an input limit: refused before
    // the run, not after it.
    if let Some(t) = &params.time_indexed_bound
        && model.jobs.len() > t.max_jobs
    {
        return Err(SjfBcoError::TimeIndexedBound(Box::new(
            super::formulation::FormulationError::TooLarge {
                formulation: "time-indexed ILP (time_indexed_bound.max_jobs)",
                what: "jobs",
                size: model.jobs.len() as u128,
                limit: t.max_jobs as u64,
            },
        )));
    }
    if let super::params::LambdaSpec::PerJob(v) = &params.lambda
        && v.len() != model.jobs.len()
    {
        return Err(SjfBcoError::InvalidOption {
            name: "lambda",
            reason: format!("{} values for {} jobs", v.len(), model.jobs.len()),
        });
    }
    let horizon = params
        .horizon
        .unwrap_or(u64::from(instance.horizon_slots()));
    if horizon > MAX_SLOTS {
        return Err(SjfBcoError::TooLarge {
            what: "horizon",
            value: horizon as f64,
            limit: MAX_SLOTS as f64,
        });
    }
    let max_slots = params.max_sim_slots.unwrap_or(horizon.saturating_mul(100));
    let mut order: Vec<usize> = (0..model.jobs.len()).collect();
    order.sort_by_key(|&j| (model.jobs[j].gpus, model.jobs[j].id));
    Ok(Setup {
        model,
        horizon,
        order,
        sim: SlotSimOptions {
            progress: params.progress,
            start_rule: params.start_rule,
            max_slots,
        },
    })
}

/// The κ values a run searches (`None`: no κ, a single rule).
fn kappas(algo: Algo, params: &SjfBcoParams, model: &RarModel) -> Vec<Option<u32>> {
    if algo != Algo::SjfBco {
        return vec![None];
    }
    let mut v: Vec<u32> = match &params.kappas {
        KappaSpec::All => {
            let ng = model.largest_job();
            let mut v: Vec<u32> = model.jobs.iter().map(|j| j.gpus).collect();
            v.push(1);
            v.retain(|&k| k <= ng);
            v
        }
        KappaSpec::Fixed(k) => vec![*k],
        KappaSpec::List(l) => l.clone(),
    };
    v.sort_unstable();
    v.dedup();
    v.into_iter().map(Some).collect()
}

/// Runs `algo` on `instance`.
pub(crate) fn solve(
    instance: &Instance,
    params: &SjfBcoParams,
    algo: Algo,
    mut rng: Option<ChaCha8Rng>,
) -> crate::Result<Solved<SjfBcoReport>> {
    let clock = Instant::now();
    let s = setup(instance, params)?;
    let kappas = kappas(algo, params, &s.model);
    let model = &s.model;
    let mut run = |theta: u64, kappa: Option<u32>| {
        let cfg = TrialConfig {
            order: &s.order,
            theta: theta as f64,
            u: params.est_upper,
            availability: params.availability,
            duration: params.duration,
            eval: params.trial_eval,
            sim: s.sim,
        };
        let rule = |j: usize| match (algo, kappa) {
            (Algo::FirstFit, _) => Choice::FirstFit,
            (Algo::Random, _) => Choice::Random,
            (Algo::ListScheduling, _) | (Algo::SjfBco, None) => {
                Choice::FaFfp(super::params::FaFfpStrategy::LeastAccumulated)
            }
            (Algo::SjfBco, Some(k)) if model.jobs[j].gpus <= k => Choice::FaFfp(params.faffp),
            (Algo::SjfBco, Some(_)) => Choice::Lbsgf(params.lambda_of(j)),
        };
        run_trial(model, cfg, &rule, rng.as_mut())
    };
    let outcome = match (algo, params.bisection) {
        (Algo::Random, _) => {
            let o = run(s.horizon, None);
            let m = o.makespan;
            SearchOutcome {
                found: m.map(|_| Found {
                    outcome: o,
                    theta: s.horizon,
                    kappa: None,
                }),
                trace: vec![(s.horizon, None, m)],
                non_monotone: false,
            }
        }
        (_, BisectionRule::PaperImprovement) => {
            search::paper_improvement(s.horizon, &kappas, &mut run)
        }
        (_, BisectionRule::Feasibility) => search::feasibility(s.horizon, &kappas, &mut run),
    };
    finish(instance, params, algo, &s, outcome, clock)
}

/// The execution of the returned trial (simulated now if the search
/// scored trials provisionally).
fn execution_of(s: &Setup, found: &Found) -> Result<RarExecution, SjfBcoError> {
    match &found.outcome.execution {
        Some(e) => Ok(e.clone()),
        None => simulate(&s.model, &found.outcome.placed, &s.sim),
    }
}

/// Builds the schedule, certificate and report of the returned trial.
fn finish(
    instance: &Instance,
    params: &SjfBcoParams,
    algo: Algo,
    s: &Setup,
    outcome: SearchOutcome,
    clock: Instant,
) -> crate::Result<Solved<SjfBcoReport>> {
    let Some(found) = outcome.found else {
        return Err(SjfBcoError::NoScheduleWithinHorizon { horizon: s.horizon }.into());
    };
    let model = &s.model;
    let execution = execution_of(s, &found)?;
    let schedule = to_schedule(instance, model, &found.outcome.placed, &execution)?;
    if let Err(v) = verify(instance, &schedule) {
        return Err(reservation_misfit(
            instance,
            model,
            &found.outcome.placed,
            v,
        ));
    }
    let jobs_est: Vec<(u32, f64)> = model.jobs.iter().map(|j| (j.gpus, j.estimate)).collect();
    let jobs_min: Vec<(u32, f64)> = model
        .jobs
        .iter()
        .map(|j| (j.gpus, j.min_duration))
        .collect();
    let n = model.total_gpus() as u64;
    let lower_bound = lower_bound_closed_form(&jobs_est, params.est_upper, n);
    let closed = ceil_tol(lower_bound_closed_form(&jobs_min, 1.0, n));
    let time_indexed = time_indexed_bound(model, params)?;
    let raw = execution.makespan;
    let mut certificate = certificate(algo, raw, closed, time_indexed.as_ref());
    certificate.scope = Some(format!(
        "OPT is the smallest makespan of this instance's {} ring-all-reduce jobs, non-preemptive, \
         under the run's timing model (its per-iteration times and contention), in slots of {} s \
         and not capped at the horizon",
        instance.jobs().len(),
        instance.slot_length_s()
    ));
    let certified = certificate.relaxation_bound.value;
    certificate
        .run
        .add_stage("search", clock.elapsed().as_secs_f64());
    let trials = outcome.trace.len() as u32;
    let failed = outcome.trace.iter().filter(|r| r.2.is_none()).count() as u32;
    let report = SjfBcoReport {
        algorithm: algo.name().to_string(),
        horizon: s.horizon,
        assignments: assignments(model, &found.outcome.placed),
        makespan_raw: raw,
        makespan_reported: raw.min(s.horizon),
        within_horizon: raw <= s.horizon,
        theta_tilde: (algo != Algo::Random).then_some(found.theta),
        kappa_star: found.kappa,
        w_hat_max: found.outcome.w_hat_max,
        lower_bound,
        certified_bound: certified,
        trials,
        failed_trials: failed,
        trace: outcome
            .trace
            .iter()
            .map(|&(theta, kappa, makespan)| TrialRecord {
                theta,
                kappa,
                makespan,
            })
            .collect(),
        non_monotone: outcome.non_monotone,
        paper_claim: PaperClaim::new(model.largest_job(), params),
        time_indexed,
        execution,
    };
    Ok(Solved {
        schedule,
        certificate,
        report,
    })
}

/// The certificate of a run with makespan `raw`: the closed-form bound
/// `closed`, lifted to the time-indexed bound when that is larger; the
/// time-indexed optimum as the exact comparison point only when it is the
/// optimum of the run's model.
fn certificate(
    algo: Algo,
    raw: u64,
    closed: f64,
    time_indexed: Option<&TimeIndexedBound>,
) -> Certificate {
    let bound = match time_indexed {
        Some(ti) if ti.lower_bound > closed => Bound::new(ti.lower_bound, BoundKind::MipDual),
        _ => Bound::new(closed, BoundKind::Trivial),
    };
    let certificate = Certificate::new(algo.name(), Sense::Minimise, raw as f64, bound);
    match time_indexed {
        Some(ti) if ti.exact_for_model => {
            let opt = ti.lower_bound;
            certificate.with_exact(ExactInfo::comparison(
                true,
                "optimal",
                (opt, opt, 0.0),
                ti.report.info.seconds,
            ))
        }
        _ => certificate,
    }
}

/// The time-indexed exact ILP over each job's proven shortest execution
/// time (`u = 1`), when the parameters ask for it.
fn time_indexed_bound(
    model: &RarModel,
    params: &SjfBcoParams,
) -> Result<Option<TimeIndexedBound>, SjfBcoError> {
    let Some(options) = &params.time_indexed_bound else {
        return Ok(None);
    };
    let wrap = |e| SjfBcoError::TimeIndexedBound(Box::new(e));
    let input =
        FormulationInput::from_model(model, 1.0, EstimateSource::MinDuration).map_err(wrap)?;
    let ti = solve_time_indexed(&input, options).map_err(wrap)?;
    Ok(Some(TimeIndexedBound {
        lower_bound: ti.lower_bound(),
        fixed_duration_makespan: ti.makespan,
        exact_for_model: ti.report.optimal()
            && model.time_model == TimeModel::FixedDuration
            && params.progress == ProgressMode::Fractional,
        report: ti.report,
    }))
}

/// The public form of the placed jobs, in instance order.
fn assignments(model: &RarModel, placed: &[Placed]) -> Vec<RarAssignment> {
    let mut sorted: Vec<&Placed> = placed.iter().collect();
    sorted.sort_by_key(|p| p.job);
    sorted
        .into_iter()
        .map(|p| RarAssignment {
            job: model.jobs[p.job].id,
            gpus: p.gpus.iter().map(|&g| model.gpu_id(g)).collect(),
            provisional_start: p.start,
            order_key: p.key,
        })
        .collect()
}

/// One segment per job, `start..completion`, with its GPU ids.
pub(crate) fn to_schedule(
    instance: &Instance,
    model: &RarModel,
    placed: &[Placed],
    execution: &RarExecution,
) -> Result<Schedule, SjfBcoError> {
    let horizon = instance.horizon_slots();
    if execution.makespan > u64::from(horizon) {
        return Err(SjfBcoError::BeyondInstanceHorizon {
            makespan: execution.makespan,
            horizon,
        });
    }
    let mut sorted: Vec<&Placed> = placed.iter().collect();
    sorted.sort_by_key(|p| p.job);
    let jobs = sorted
        .into_iter()
        .map(|p| {
            let placement: Placement = p
                .servers(model)
                .into_iter()
                .map(|(s, n)| (model.servers[s as usize].machine, Tasks::new(n, 0)))
                .collect();
            let slots = execution.start[p.job] as u32..execution.completion[p.job] as u32;
            JobSchedule {
                job: model.jobs[p.job].id,
                admitted: true,
                segments: vec![Segment {
                    slots,
                    placement,
                    gpus: Some(p.gpus.iter().map(|&g| model.gpu_id(g)).collect()),
                    config: None,
                }],
            }
        })
        .collect();
    Ok(Schedule { jobs })
}

/// The error for a schedule that fails the checker: the placement does not
/// charge the reserved bandwidth of rings spanning servers (the SJF-BCO
/// model has none), so when such a ring is placed the failure is that
/// ring's reservation over-committing a NIC — a job outside the model —
/// and otherwise the checker's violation (a bug).
fn reservation_misfit(
    instance: &Instance,
    model: &RarModel,
    placed: &[Placed],
    violation: crate::schedule::Violation,
) -> crate::Error {
    let reserving = placed.iter().find_map(|p| {
        let job = &instance.jobs()[model.jobs[p.job].position];
        let spans = server_counts(model, &p.gpus).len();
        (job.reserved_nic_bps(spans) > 0.0).then_some((job.id, job.reserved_nic_bps(spans)))
    });
    match reserving {
        Some((job, b)) => SjfBcoError::UnsupportedJob {
            job,
            reason: format!(
                "its ring spans servers with reserved_bandwidth_bps {}, which SJF-BCO's placement \
                 does not charge, and the schedule over-commits a NIC ({violation})",
                crate::model::units::Num(b)
            ),
        }
        .into(),
        None => violation.into(),
    }
}
