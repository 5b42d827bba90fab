//! The steps of one offline batch run.

use super::*;
use crate::model::{Job, Utility};

impl LocalityBatch {
    /// Checks the options and the instance; the cluster, the jobs in
    /// instance order and the weights.
    pub(super) fn setup(&self, instance: &Instance) -> crate::Result<Setup> {
        let p = &self.params;
        let bad =
            |name: &'static str, reason: String| LocalityError::InvalidOption { name, reason };
        p.validate()?;
        if instance.jobs().is_empty() {
            return Err(bad(
                "instance",
                "the offline batch needs at least one job".into(),
            )
            .into());
        }
        let check = LocalityParams {
            horizon: instance.horizon_slots().max(1),
            intra_factor: p.intra_factor,
            allow_local: p.allow_local,
            ..LocalityParams::default()
        };
        let cluster = LocalityCluster::from_instance(instance)?;
        let mut jobs = Vec::with_capacity(instance.jobs().len());
        for job in instance.jobs() {
            let a = instance.arrival_slot(job);
            if a > 0 {
                return Err(LocalityError::UnsupportedJob {
                    job: job.id,
                    reason: format!(
                        "the offline batch schedules jobs present in the first slot; this one arrives in slot {a} (0-based)"
                    ),
                }
                .into());
            }
            // Utilities play no part here: a constant one keeps an extreme
            // utility from being refused.
            let plain = Job {
                utility: Utility::Constant { value: 1.0 },
                ..job.clone()
            };
            let lj =
                LocalityJob::from_job(instance, &cluster, &plain, check.horizon, p.intra_factor)?;
            let lj = if p.allow_local {
                lj
            } else {
                lj.without_local()
            };
            if lj.empty_cluster_pace(&cluster) <= 0.0 {
                return Err(LocalityError::JobCannotFit {
                    job: job.id,
                    reason: "no machine hosts one worker and one PS together, and no two machines host one DISTRIBUTED worker and its PS".into(),
                }
                .into());
            }
            jobs.push(lj);
        }
        let weights = match &p.weights {
            Some(w) if w.len() != jobs.len() => {
                return Err(bad(
                    "weights",
                    format!("{} weights for {} jobs", w.len(), jobs.len()),
                )
                .into());
            }
            Some(w) => w.clone(),
            None => instance.jobs().iter().map(|j| j.weight).collect(),
        };
        if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(bad("weights", format!("weight {w} is not finite and ≥ 0")).into());
        }
        Ok(Setup {
            cluster,
            jobs,
            weights,
            check,
        })
    }

    /// `T_lo` and the most slots a list schedule may span: the instance's
    /// horizon, [`LocalityBatchParams::max_slots`], and the slots that keep
    /// `I·T·(4H + 1)` within [`LocalityBatchParams::max_columns`].
    pub(super) fn slot_limits(&self, s: &Setup) -> Result<(u32, u32), LocalityError> {
        let t_lo = s
            .jobs
            .iter()
            .map(|j| j.d_min(&s.cluster))
            .max()
            .unwrap_or(1);
        let per_slot = Joint::size_estimate(s.jobs.len(), s.cluster.machines(), 1).max(1);
        let by_size = u32::try_from(self.params.max_columns / per_slot).unwrap_or(u32::MAX);
        if t_lo > self.params.max_slots {
            return Err(LocalityError::BatchTooLarge {
                what: "slots",
                needed: u64::from(t_lo),
                limit: u64::from(self.params.max_slots),
            });
        }
        if t_lo > by_size {
            return Err(LocalityError::BatchTooLarge {
                what: "columns",
                needed: Joint::size_estimate(s.jobs.len(), s.cluster.machines(), t_lo),
                limit: self.params.max_columns,
            });
        }
        let cap = s.cluster.horizon.min(self.params.max_slots).min(by_size);
        Ok((t_lo, cap))
    }

    /// The better offline list schedule within `cap` slots.
    pub(super) fn upper(&self, s: &Setup, cap: u32) -> Result<Upper, LocalityError> {
        let mut runs = Vec::new();
        let mut failed = 0;
        for b in [
            LocalityBaseline::AlwaysLocalFirstFit,
            LocalityBaseline::AlwaysSpreadGreedy,
        ] {
            if b == LocalityBaseline::AlwaysLocalFirstFit && !self.params.allow_local {
                runs.push(None);
                continue;
            }
            match b.offline_plans(&s.cluster, &s.jobs, cap) {
                Ok(plans) => runs.push(Some((makespan(&plans), plans, b))),
                Err(k) => {
                    failed = k;
                    runs.push(None);
                }
            }
        }
        let local = runs[0].as_ref().map(|r| r.0);
        let spread = runs[1].as_ref().map(|r| r.0);
        let best = runs
            .into_iter()
            .flatten()
            .reduce(|a, b| if b.0 < a.0 { b } else { a });
        let Some((t_hi, plans, baseline)) = best else {
            let size_bound = cap < s.cluster.horizon;
            return Err(if size_bound {
                let (what, limit) = if cap == self.params.max_slots {
                    ("slots", u64::from(self.params.max_slots))
                } else {
                    ("columns", self.params.max_columns)
                };
                let needed = if what == "slots" {
                    u64::from(cap) + 1
                } else {
                    Joint::size_estimate(s.jobs.len(), s.cluster.machines(), cap + 1)
                };
                LocalityError::BatchTooLarge {
                    what,
                    needed,
                    limit,
                }
            } else {
                LocalityError::NoListSchedule {
                    job: s.jobs[failed.min(s.jobs.len() - 1)].id,
                    slots: cap,
                }
            });
        };
        Ok(Upper {
            plans,
            baseline,
            t_hi,
            local,
            spread,
        })
    }

    /// `T_LP`: the smallest `T ∈ [t_lo, t_hi]` whose LP relaxation is
    /// feasible (`t_hi` is: the list schedule is a point of `P(t_hi)`).
    pub(super) fn lp_bisection(
        &self,
        s: &Setup,
        cells: &[Cells],
        t_lo: u32,
        t_hi: u32,
        tally: &mut Tally,
    ) -> crate::Result<u32> {
        let (mut lo, mut hi) = (t_lo.max(1), t_hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let feasible = match program::build(&s.jobs, cells, &s.cluster, mid, Objective::Zero)? {
                None => false,
                Some(joint) => {
                    tally.lp += 1;
                    let opts = SolveOptions::default().with_presolve(false);
                    match solve_lp(&joint.problem, &opts) {
                        Ok(_) => true,
                        // Costs are 0: "unbounded or infeasible" is infeasible.
                        Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => false,
                        Err(e) => return Err(e.into()),
                    }
                }
            };
            if feasible {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo)
    }

    /// The LP of `P(slots)` (objective `objective`) and its point; `None`
    /// when it is infeasible (re-confirmed without presolve).
    fn lp_point(
        &self,
        joint: &Joint,
        tally: &mut Tally,
    ) -> crate::Result<Option<crate::pcip::LpRelaxation>> {
        let opts = SolveOptions::default();
        tally.lp += 1;
        let first = solve_lp(&joint.problem, &opts);
        let relax = match first {
            Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => {
                tally.lp += 1;
                solve_lp(&joint.problem, &opts.with_presolve(false))
            }
            other => other,
        };
        match relax {
            Ok(r) => Ok(Some(r)),
            Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The makespan's rounding step at horizon `slots`.
    pub(super) fn round_at_with(
        &self,
        s: &Setup,
        cells: &[Cells],
        slots: u32,
        seed: u64,
        tally: &mut Tally,
    ) -> crate::Result<(Option<Vec<LocalityPlan>>, BatchAttempt)> {
        let mut attempt = BatchAttempt {
            slots,
            lp_objective: None,
            draws: 0,
            success: None,
        };
        let Some(joint) = program::build(&s.jobs, cells, &s.cluster, slots, Objective::FrontLoad)?
        else {
            return Ok((None, attempt));
        };
        let Some(lp) = self.lp_point(&joint, tally)? else {
            return Ok((None, attempt));
        };
        attempt.lp_objective = Some(lp.objective);
        let model = BatchRounding::new(&joint, &s.jobs, &s.cluster, MoveCost::Resource);
        let (draws, lambdas) = self.draws();
        let seed_of = |k| draw_seed(seed, 0, slots, k);
        let (plans, d) = round_horizon(&model, &lp.x, (draws, &lambdas), seed_of, None)?;
        attempt.draws = d.draws;
        attempt.success = d.success;
        Ok((plans, attempt))
    }

    /// Draws and scalings of the rounding (the defaults in exact mode).
    fn draws(&self) -> (u32, [f64; 8]) {
        match self.params.inner {
            InnerSolver::LpRound { draws, lambdas } => (draws, lambdas),
            _ => (super::super::DEFAULT_DRAWS, super::super::DEFAULT_LAMBDAS),
        }
    }

    /// The weighted proxy: LP of `P(t_hi)`, every draw of the rounding,
    /// the best of the rounded schedules and the list schedule by
    /// `Σ_i wt_i C_i`.
    pub(super) fn proxy(
        &self,
        s: &Setup,
        cells: &[Cells],
        t_hi: u32,
        seed: u64,
        run: &mut Outcome,
        tally: &mut Tally,
    ) -> crate::Result<()> {
        let objective = Objective::Weighted(&s.weights);
        let Some(joint) = program::build(&s.jobs, cells, &s.cluster, t_hi, objective)? else {
            return Ok(());
        };
        let mut attempt = BatchAttempt {
            slots: t_hi,
            lp_objective: None,
            draws: 0,
            success: None,
        };
        let Some(lp) = self.lp_point(&joint, tally)? else {
            run.attempts.push(attempt);
            return Ok(());
        };
        attempt.lp_objective = Some(lp.objective);
        let mut bound = lp.safe_bound.clone();
        bound.value = bound.value.max(0.0);
        run.proxy_bound = Some(bound);
        let model = BatchRounding::new(&joint, &s.jobs, &s.cluster, MoveCost::Weighted(&s.weights));
        let (draws, lambdas) = self.draws();
        let seed_of = |k| draw_seed(seed, 1, t_hi, k);
        let score = |p: &[LocalityPlan]| weighted(p, &s.weights);
        let (plans, d) = round_horizon(&model, &lp.x, (draws, &lambdas), seed_of, Some(&score))?;
        attempt.draws = d.draws;
        attempt.success = d.success;
        run.attempts.push(attempt);
        if let Some(plans) = plans
            && weighted(&plans, &s.weights) <= weighted(&run.plans, &s.weights)
        {
            run.plans = plans;
            run.source = BatchSource::Rounding {
                slots: t_hi,
                draw: d.success.unwrap_or(0),
            };
        }
        Ok(())
    }

    /// Exact mode: bisection on MIP feasibility over `[t_lp, t_hi]`
    /// (every step proven, or the exact result is a limit).
    pub(super) fn exact_bisection(
        &self,
        s: &Setup,
        cells: &[Cells],
        (t_lp, t_hi): (u32, u32),
        time_limit_s: f64,
        run: &mut Outcome,
        tally: &mut Tally,
    ) -> crate::Result<()> {
        let start = Instant::now();
        let (mut lo, mut hi) = (t_lp, t_hi);
        let mut proven = true;
        let mut solved = false;
        let opts = MipOptions {
            limits: ExactMipLimits::new(time_limit_s, EXACT_MIP_REL_GAP, Some(1)),
            seed: 0,
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let Some(joint) = program::build(&s.jobs, cells, &s.cluster, mid, Objective::Zero)?
            else {
                lo = mid + 1;
                continue;
            };
            tally.mip += 1;
            solved = true;
            let res = match solve_exact(&joint.problem, &opts) {
                Err(PcError::IntegerInfeasible) => {
                    lo = mid + 1;
                    continue;
                }
                Err(e) => return Err(e.into()),
                Ok(r) => r,
            };
            let plans = res.x.as_ref().map(|x| joint.decode(&s.jobs, x));
            let covers = |p: &Vec<LocalityPlan>| {
                p.iter()
                    .zip(&s.jobs)
                    .all(|(p, j)| p.work() >= j.minibatches * (1.0 - 1e-9))
            };
            match plans.filter(covers) {
                Some(plans) => {
                    hi = makespan(&plans).clamp(lo, mid);
                    run.plans = plans;
                    run.source = BatchSource::ExactMip;
                }
                None => {
                    proven = false;
                    break;
                }
            }
        }
        let c = makespan(&run.plans);
        let secs = start.elapsed().as_secs_f64();
        run.exact = Some(if proven && c == hi {
            let mut info = ExactInfo::optimal(f64::from(c), secs, true);
            if !solved {
                info.status = ExactStatus::ProvenByBound;
            }
            info
        } else {
            ExactInfo {
                status: ExactStatus::Limit {
                    status: "a MIP stopped at its time limit without a point".into(),
                },
                incumbent: Some(f64::from(c)),
                dual_bound: f64::from(lo),
                rel_gap: (f64::from(c) - f64::from(lo)) / f64::from(c.max(1)),
                seconds: secs,
                returned: true,
            }
        });
        Ok(())
    }

    /// The schedule, both checks, the certificate and the report.
    pub(super) fn finish(
        &self,
        instance: &Instance,
        s: Setup,
        up: Upper,
        mut run: Outcome,
        (t_lo, t_lp, seed, start): (u32, u32, u64, Instant),
        tally: Tally,
    ) -> crate::Result<Solved<LocalityBatchReport>> {
        let schedule = Schedule {
            jobs: s
                .jobs
                .iter()
                .zip(&run.plans)
                .map(|(j, p)| JobSchedule {
                    job: j.id,
                    admitted: true,
                    segments: p.segments(&s.cluster),
                })
                .collect(),
        };
        crate::schedule::verify(instance, &schedule)?;
        verify_locality(instance, &s.check, &schedule)?;
        let c_max = makespan(&run.plans);
        let wc = weighted(&run.plans, &s.weights);
        if run.exact.is_none() && c_max == t_lp && self.params.objective == BatchObjective::Makespan
        {
            let mut info = ExactInfo::optimal(f64::from(c_max), 0.0, true);
            info.status = ExactStatus::ProvenByBound;
            run.exact = Some(info);
        }
        let exact_makespan = run
            .exact
            .as_ref()
            .and_then(ExactInfo::optimum)
            .map(|v| v as u32);
        let mut certificate = match self.params.objective {
            BatchObjective::Makespan => Certificate::new(
                "locality::batch_makespan",
                Sense::Minimise,
                f64::from(c_max),
                Bound::new(f64::from(t_lp), BoundKind::LpPrimal),
            ),
            BatchObjective::WeightedCompletion => Certificate::new(
                "locality::batch_weighted_completion",
                Sense::Minimise,
                wc,
                run.proxy_bound
                    .clone()
                    .unwrap_or_else(|| Bound::new(0.0, BoundKind::Trivial)),
            ),
        };
        if self.params.objective == BatchObjective::Makespan {
            certificate.exact = run.exact.clone();
        }
        certificate.scope = Some(format!(
            "OPT is the best {} of this batch of {} jobs, all present from slot 0, over plans of the \
             locality model (LOCAL or DISTRIBUTED workers and parameter servers per slot, slots of {} s)",
            match self.params.objective {
                BatchObjective::Makespan => "makespan",
                BatchObjective::WeightedCompletion => "weighted completion-time proxy",
            },
            instance.jobs().len(),
            instance.slot_length_s()
        ));
        certificate.run.lp_solves = tally.lp;
        certificate.run.seed = Some(seed);
        certificate.run.generator = Some("ChaCha8 (locality batch draw seeds)".into());
        certificate.run.trials = run.attempts.iter().map(|a| a.draws).sum::<u32>().max(1);
        certificate.run.best_trial = match run.source {
            BatchSource::Rounding { draw, .. } => Some(draw),
            _ => None,
        };
        let report = LocalityBatchReport {
            objective: self.params.objective,
            completions: run.plans.iter().map(|p| p.completion_slot() + 1).collect(),
            plans: run.plans,
            jobs: s.jobs,
            t_lo,
            t_hi: up.t_hi,
            t_lp,
            heuristic: up.baseline,
            local_makespan: up.local,
            spread_makespan: up.spread,
            attempts: run.attempts,
            source: run.source,
            makespan: c_max,
            exact_makespan,
            weights: s.weights,
            weighted_completion: wc,
            proxy_lp_bound: run.proxy_bound.map(|b| b.value),
            lp_solves: tally.lp,
            mip_solves: tally.mip,
            seed,
            seconds: start.elapsed().as_secs_f64(),
        };
        Ok(Solved {
            schedule,
            certificate,
            report,
        })
    }
}
