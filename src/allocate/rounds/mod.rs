//! Round-based leases: an allocation policy run by the simulator, its
//! fractions `X` turned into which job runs on which GPUs, round by round,
//! as Gavel does (Narayanan et al., OSDI 2020).
//!
//! Time is cut into rounds of [`RoundParams::round_s`] seconds (360 by
//! default). At the start of a round:
//!
//! 1. **The allocation.** If a job arrived or completed since the last
//!    round, `X` is recomputed by [`allocate`](super::allocate) over the
//!    jobs in the system, and every job's received time goes back to a
//!    credit of half a round per type (its deficit per type first taking
//!    what `X` promised minus what it received).
//! 2. **The priorities.** Job `i`'s priority on type `j` is `X_ij` divided
//!    by its share of the time received on type `j` since the reset
//!    (`r_ij / Σ_k r_kj`); 0 where `X_ij` or the job's throughput there is
//!    0.
//! 3. **The selection.** Type by type, jobs in decreasing priority (ties:
//!    the larger deficit, the larger `X_ij`, then instance order) take
//!    their scale factor's GPUs of that type while the type has that many
//!    left; a job runs on one type at a time, and jobs of priority 0 still
//!    take what is left (work conservation), except under the FIFO
//!    policies. The heterogeneity-aware policies visit the types in the
//!    cluster's order; the agnostic ones (`max-min-fairness`, `fifo`)
//!    start one type further each round (Gavel shuffles them).
//! 4. **The placement.** On each type, the selected jobs are placed by
//!    decreasing scale factor: first those that ran on that type keep
//!    their placement where it is still free, then the others are placed
//!    by the [`Placer`]'s rule ([`PlacementRule::BestFit`], the fewest
//!    machines, by default) on the type's machines. A job that finds no
//!    room this way waits for the next round.
//!
//! Arrivals and completions inside a round change nothing until its end
//! (a completed job's GPUs stay idle until then, as in Gavel); an arrival
//! to an idle cluster starts a round at once. A job's throughput on a type
//! is the simulator's rate, at its arrival, of its requested size
//! ([`requested_tasks`]) placed by the placement rule on that type's empty
//! machines (0 where it does not fit or the type has fewer whole GPUs than
//! its scale factor); a job that fits no type is rejected. Machines without
//! GPUs take no task. A job that may not be preempted keeps its type and
//! placement once it runs; a rigid gang that ran resumes only where it
//! last ran. Jobs need a weight > 0.
//!
//! Besides the simulator's records, the run keeps a [`RoundsReport`]: each
//! job's time-averaged `X` against the fractions of time it really ran on
//! each type, and the work done against the work `X` promised (Gavel's
//! effective-throughput gap).

mod ledger;

use std::collections::BTreeMap;

use super::{AllocationInput, AllocationJob, AllocationPolicy, allocate};
use crate::model::{Instance, JobId, Resources};
use crate::placement::{PlacementRule, Placer, requested_tasks};
use crate::schedule::Placement;
use crate::sim::{Action, Event, Policy, Rejection, SimError, SimView};
use ledger::{Ledger, Tracked, received_totals};

pub use ledger::{JobRounds, RoundsGaps, RoundsReport};

/// The parameters of a round-based run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoundParams {
    /// The allocation policy that computes `X`.
    pub policy: AllocationPolicy,
    /// Round length, seconds, finite and > 0; default 360 (Gavel's).
    pub round_s: f64,
    /// How a selected job's tasks are placed on its type's machines;
    /// default [`PlacementRule::BestFit`].
    pub placement: PlacementRule,
    /// Price of one GPU of each type per hour, for
    /// `max-throughput-per-cost` (one per type of the cluster).
    pub prices: BTreeMap<String, f64>,
}

impl RoundParams {
    /// Rounds of 360 s for `policy`, best-fit placement and no prices.
    pub fn new(policy: AllocationPolicy) -> RoundParams {
        RoundParams {
            policy,
            round_s: 360.0,
            placement: PlacementRule::BestFit,
            prices: BTreeMap::new(),
        }
    }

    /// The same parameters with rounds of `round_s` seconds.
    pub fn with_round_s(mut self, round_s: f64) -> RoundParams {
        self.round_s = round_s;
        self
    }

    /// The policy's name in the simulator's reports: `gavel-` and the
    /// allocation policy's name.
    pub fn name(&self) -> String {
        format!("gavel-{}", self.policy.name())
    }

    /// Checks the round length: finite, between 10⁻⁶ s and 10¹² s.
    ///
    /// # Errors
    ///
    /// [`SimError::BadParams`] naming the policy.
    pub fn validate(&self) -> crate::Result<()> {
        if !(self.round_s >= 1e-6 && self.round_s <= 1e12) {
            return Err(SimError::BadParams {
                policy: self.name(),
                reason: format!(
                    "round length {} s: must be between 1e-6 s and 1e12 s",
                    self.round_s
                ),
            }
            .into());
        }
        Ok(())
    }
}

/// An allocation policy run round by round by the simulator (see the
/// module's docs).
///
/// ```
/// # #[cfg(feature = "highs")] {
/// use dmlsched::allocate::{AllocationPolicy, RoundParams, Rounds};
/// use dmlsched::model::*;
/// use dmlsched::sim::{simulate, SimOptions};
///
/// // One GPU, two jobs of 1,000 s: max-min fairness shares it by rounds.
/// let cap = Resources::zero().gpus(1.0).cpu_cores(8.0).memory(32e9).nic(10e9);
/// let cluster = Cluster::homogeneous(1, cap, 1e10);
/// let ps = PsJob {
///     epochs: 1, data_chunks: 1, minibatches_per_chunk: 2000,
///     minibatch_compute_s: 0.5, gradient_bytes: 0.0,
///     worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9).nic(1e9),
///     ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
///     max_workers: 1, max_ps: 1, ps_at_most_workers: true,
///     sync: SyncMode::Synchronous, layers: None,
/// };
/// let jobs = vec![
///     Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps.clone())),
///     Job::new(JobId(1), 10.0, Architecture::ParameterServer(ps)),
/// ];
/// let inst = Instance::new(cluster, jobs, 60.0, 1000).unwrap();
/// let mut rounds = Rounds::new(RoundParams::new(AllocationPolicy::MaxMinFairness));
/// let run = simulate(&inst, &mut rounds, &SimOptions::default())?;
/// // Job 0 runs rounds 0, 1 and 3; job 1 rounds 2 and 4 on.
/// assert_eq!(run.jobs[0].finish_s, Some(1360.0));
/// assert_eq!(run.jobs[1].finish_s, Some(2080.0));
/// assert_eq!(rounds.report().rounds, 6); // at 0, 360, …, 1800 s
/// # }
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Rounds {
    params: RoundParams,
    cluster: Option<Types>,
    ledger: Ledger,
    report: RoundsReport,
    /// A job arrived or completed since the last allocation.
    dirty: bool,
    next_round_s: Option<f64>,
    last_reset_s: f64,
    last_booked_s: f64,
    rejected: BTreeMap<JobId, Rejection>,
}

/// The cluster's GPU types: names, GPU counts and each type's machines'
/// capacities (zero on the other machines).
#[derive(Debug, Clone)]
struct Types {
    names: Vec<String>,
    gpus: Vec<u32>,
    capacity: Vec<Vec<Resources>>,
}

impl Types {
    fn of(instance: &Instance) -> Types {
        let cluster = instance.cluster();
        let present = cluster.gpu_types_present();
        let mut names = Vec::with_capacity(present.len());
        let mut gpus = Vec::with_capacity(present.len());
        let mut capacity = Vec::with_capacity(present.len());
        for t in &present {
            names.push(t.unwrap_or("gpu").to_string());
            let mine =
                |m: &crate::model::Machine| m.capacity.gpus > 0.0 && m.gpu_type.as_deref() == *t;
            let count: f64 = cluster
                .machines
                .iter()
                .filter(|m| mine(m))
                .map(|m| m.capacity.gpus.floor())
                .sum();
            gpus.push(count.min(f64::from(u32::MAX)) as u32);
            capacity.push(
                cluster
                    .machines
                    .iter()
                    .map(|m| {
                        if mine(m) {
                            m.capacity
                        } else {
                            Resources::zero()
                        }
                    })
                    .collect(),
            );
        }
        Types {
            names,
            gpus,
            capacity,
        }
    }
}

impl Rounds {
    /// A round-based run of `params.policy`; bad parameters
    /// ([`RoundParams::validate`]) end the run at its first event.
    pub fn new(params: RoundParams) -> Rounds {
        Rounds {
            params,
            cluster: None,
            ledger: Ledger::new(),
            report: RoundsReport::default(),
            dirty: false,
            next_round_s: None,
            last_reset_s: 0.0,
            last_booked_s: 0.0,
            rejected: BTreeMap::new(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &RoundParams {
        &self.params
    }

    /// The report so far: the rounds, the allocations, and a row for every
    /// job that completed.
    pub fn report(&self) -> &RoundsReport {
        &self.report
    }

    fn credit(&self) -> f64 {
        self.params.round_s / 2.0
    }

    /// Books the time since the last event on every tracked job.
    fn book(&mut self, now: f64) {
        let dt = now - self.last_booked_s;
        if dt > 0.0 {
            for job in self.ledger.values_mut() {
                job.book(dt);
            }
        }
        self.last_booked_s = self.last_booked_s.max(now);
    }

    /// Starts tracking an arrived job (`Ok(None)`), or rejects it when it
    /// fits no type.
    ///
    /// # Errors
    ///
    /// [`SimError::BadParams`] for a job whose weight is not > 0 (the
    /// allocation policies divide by it).
    fn arrive(&mut self, view: &SimView<'_>, position: usize) -> crate::Result<Option<Action>> {
        let Some(types) = self.cluster.as_ref() else {
            return Ok(None);
        };
        let job = view.job_at(position).job();
        if job.weight.is_nan() || job.weight <= 0.0 {
            return Err(SimError::BadParams {
                policy: self.params.name(),
                reason: format!(
                    "{}: weight {}: the allocation policies divide by a job's weight, so it must be > 0",
                    job.id, job.weight
                ),
            }
            .into());
        }
        let size = requested_tasks(job);
        let throughput: Vec<f64> = types
            .capacity
            .iter()
            .map(|cap| {
                let mut scratch = Placer::new(view.instance(), cap, self.params.placement);
                scratch
                    .place(job, size.0, size.1)
                    .and_then(|p| view.rate(job, &p).ok())
                    .filter(|r| r.is_finite() && *r > 0.0)
                    .unwrap_or(0.0)
            })
            .collect();
        let gpus = job.demand_for(size.0, size.1).gpus.ceil();
        let scale = if gpus.is_finite() && gpus >= 1.0 {
            gpus.min(f64::from(u32::MAX)) as u32
        } else {
            1
        };
        // A type whose whole GPUs are fewer than the job's scale factor
        // never has room for it in the selection.
        let throughput: Vec<f64> = throughput
            .into_iter()
            .zip(&types.gpus)
            .map(|(r, &n)| if scale <= n { r } else { 0.0 })
            .collect();
        if throughput.iter().all(|t| *t <= 0.0) {
            self.rejected.insert(
                job.id,
                Rejection::Unschedulable {
                    why: "its requested size fits no GPU type's machines (or runs at no finite positive rate there)".into(),
                },
            );
            return Ok(Some(Action::Reject { job: job.id }));
        }
        let mut tracked = Tracked::new(
            job.id,
            job.arrival_s,
            throughput,
            scale,
            size,
            self.credit(),
        );
        tracked.pinned = !job.discipline.preemptible;
        tracked.rigid = job.discipline.elasticity == crate::model::Elasticity::Rigid;
        self.ledger.insert(position, tracked);
        self.dirty = true;
        Ok(None)
    }

    /// Stops tracking a completed job, keeping its report row.
    fn complete(&mut self, view: &SimView<'_>, position: usize) {
        if let Some(job) = self.ledger.remove(&position) {
            let total = view.job_at(position).total_work();
            self.report.jobs.push(job.close(view.now_s(), total));
            self.dirty = true;
        }
    }

    /// Recomputes `X` over the tracked jobs after a reset of their received
    /// time.
    fn reallocate(&mut self, view: &SimView<'_>) -> crate::Result<()> {
        let now = view.now_s();
        let credit = self.credit();
        for job in self.ledger.values_mut() {
            job.reset(now - self.last_reset_s, credit);
        }
        self.last_reset_s = now;
        self.dirty = false;
        if self.ledger.is_empty() {
            return Ok(());
        }
        let Some(types) = &self.cluster else {
            return Ok(());
        };
        let mut input =
            AllocationInput::new(types.names.iter().cloned().zip(types.gpus.iter().copied()));
        for (&position, job) in &self.ledger {
            let run = view.job_at(position);
            let row = types
                .names
                .iter()
                .cloned()
                .zip(job.throughput.iter().copied());
            input = input.with_job(
                AllocationJob::new(position as u64, row)
                    .with_scale_factor(job.scale)
                    .with_weight(run.job().weight)
                    .with_steps_remaining(run.remaining_work().max(f64::MIN_POSITIVE))
                    .with_elapsed_s((now - job.arrival_s).max(0.0)),
            );
        }
        if self.params.policy == AllocationPolicy::MaxThroughputPerCost {
            // Prices of types the cluster lacks are left out; a missing
            // one is the allocation's input error.
            let prices = self
                .params
                .prices
                .iter()
                .filter(|(n, _)| types.names.contains(n));
            input = input.with_prices(prices.map(|(n, p)| (n.clone(), *p)));
        }
        let allocation = allocate(self.params.policy, &input)?;
        // The allocation's columns are its types in name order: back to
        // the cluster's order.
        let column: Vec<Option<usize>> = types
            .names
            .iter()
            .map(|n| allocation.types.iter().position(|a| a == n))
            .collect();
        for (row, x) in self.ledger.values_mut().zip(&allocation.fractions) {
            for (t, c) in column.iter().enumerate() {
                row.x[t] = c.map_or(0.0, |c| x[c]);
            }
        }
        self.report.allocations += 1;
        Ok(())
    }
}

/// One round's choice: each selected job's position and type.
type Selection = Vec<(usize, usize)>;

impl Rounds {
    /// The order the types are visited in this round.
    fn type_order(&self, n: usize) -> Vec<usize> {
        let agnostic = matches!(
            self.params.policy,
            AllocationPolicy::MaxMinFairness | AllocationPolicy::Fifo
        );
        let shift = if agnostic {
            (self.report.rounds % n as u64) as usize
        } else {
            0
        };
        (0..n).map(|i| (i + shift) % n).collect()
    }

    /// Step 3: which jobs run on which type this round.
    fn select(&self, types: &Types) -> Selection {
        let n = types.names.len();
        let totals = received_totals(&self.ledger, n);
        let fifo = matches!(
            self.params.policy,
            AllocationPolicy::Fifo | AllocationPolicy::FifoPerf
        );
        let mut left = types.gpus.clone();
        let mut chosen: BTreeMap<usize, usize> = BTreeMap::new();
        // A running job that may not be paused keeps its type.
        for (&p, j) in &self.ledger {
            if let (true, Some((t, _))) = (j.pinned, &j.on) {
                left[*t] = left[*t].saturating_sub(j.scale);
                chosen.insert(p, *t);
            }
        }
        for t in self.type_order(n) {
            // A rigid gang that ran resumes only where it ran.
            let mut queue: Vec<(f64, f64, f64, usize)> = self
                .ledger
                .iter()
                .filter(|(_, j)| j.throughput[t] > 0.0)
                .filter(|(_, j)| !j.rigid || j.last_type.is_none_or(|l| l == t))
                .map(|(&p, j)| (j.priority(t, totals[t]), j.deficit[t], j.x[t], p))
                .collect();
            queue.sort_by(|a, b| {
                b.0.total_cmp(&a.0)
                    .then(b.1.total_cmp(&a.1))
                    .then(b.2.total_cmp(&a.2))
                    .then(a.3.cmp(&b.3))
            });
            for (priority, _, _, p) in queue {
                let scale = self.ledger[&p].scale;
                if chosen.contains_key(&p) || (fifo && priority <= 0.0) || scale > left[t] {
                    continue;
                }
                left[t] -= scale;
                chosen.insert(p, t);
            }
        }
        let mut selection: Selection = chosen.into_iter().collect();
        // Larger jobs first on each type (stable: instance order), as Gavel
        // assigns workers.
        selection.sort_by_key(|&(p, t)| (t, std::cmp::Reverse(self.ledger[&p].scale), p));
        selection
    }

    /// Step 4: placements of the selected jobs, type by type.
    fn place(
        &self,
        view: &SimView<'_>,
        types: &Types,
        selection: &Selection,
    ) -> BTreeMap<usize, (usize, Placement)> {
        let mut placed = BTreeMap::new();
        for (t, cap) in types.capacity.iter().enumerate() {
            let mine: Vec<usize> = selection.iter().filter(|s| s.1 == t).map(|s| s.0).collect();
            let mut placer = Placer::new(view.instance(), cap, self.params.placement);
            // First the placements held: a running job's where it runs, a
            // rigid gang's where it last ran (the only place it may resume).
            for &p in &mine {
                let run = view.job_at(p);
                let tracked = &self.ledger[&p];
                let held = match &tracked.on {
                    Some((was, held)) if *was == t => Some(held),
                    None if tracked.rigid && !run.last_placement().is_empty() => {
                        Some(run.last_placement())
                    }
                    _ => None,
                };
                if let Some(held) = held
                    && placer.take(run.job(), held)
                {
                    placed.insert(p, (t, held.clone()));
                }
            }
            for &p in &mine {
                let tracked = &self.ledger[&p];
                if placed.contains_key(&p) || (tracked.rigid && tracked.last_type.is_some()) {
                    continue;
                }
                let (w, ps) = tracked.size;
                if let Some(placement) = placer.place(view.job_at(p).job(), w, ps) {
                    placed.insert(p, (t, placement));
                }
            }
        }
        placed
    }

    /// A whole round at `now`: the allocation if due, the selection, the
    /// placements, and the actions that change an allocation.
    fn round(&mut self, view: &SimView<'_>) -> crate::Result<Vec<Action>> {
        if self.dirty {
            self.reallocate(view)?;
        }
        self.report.rounds += 1;
        // The next round strictly after now, even where `now` is too large
        // for the round length to move it.
        let now = view.now_s();
        let next = now + self.params.round_s;
        self.next_round_s = Some(if next > now { next } else { now.next_up() });
        let Some(types) = self.cluster.as_ref() else {
            return Ok(Vec::new());
        };
        let selection = self.select(types);
        let mut placed = self.place(view, types, &selection);
        let mut actions = Vec::new();
        for (&p, job) in self.ledger.iter_mut() {
            let next = placed.remove(&p);
            if next.as_ref().map(|n| &n.1) == job.on.as_ref().map(|o| &o.1) {
                job.on = next;
                continue;
            }
            actions.push(match &next {
                Some((_, placement)) => Action::run(job.id, placement.clone()),
                None => Action::pause(job.id),
            });
            if let Some((t, _)) = &next {
                job.last_type = Some(*t);
            }
            job.on = next;
        }
        Ok(actions)
    }

    /// Whether a round is due at `now`: its time has come, or a job
    /// `arrived` while no tracked job runs (an idle cluster starts one at
    /// once).
    fn due(&self, now: f64, arrived: bool) -> bool {
        let idle = self.ledger.values().all(|j| j.on.is_none());
        (arrived && idle)
            || self
                .next_round_s
                .is_none_or(|t| now + 1e-9 * self.params.round_s >= t)
    }
}

impl Policy for Rounds {
    fn name(&self) -> String {
        self.params.name()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        if self.cluster.is_none() {
            self.params.validate()?;
            let types = Types::of(view.instance());
            self.report.types.clone_from(&types.names);
            self.cluster = Some(types);
        }
        let now = view.now_s();
        self.book(now);
        let mut actions = Vec::new();
        match *event {
            Event::Arrival { job } => {
                if let Some(p) = view.instance().job_position(job) {
                    actions.extend(self.arrive(view, p)?);
                }
            }
            Event::Completion { job } => {
                if let Some(p) = view.instance().job_position(job) {
                    self.complete(view, p);
                }
            }
            Event::Tick { .. } | Event::Wakeup => {}
        }
        // An arrival the policy tracks (not one it rejected).
        let arrived = event
            .job()
            .and_then(|j| view.instance().job_position(j))
            .is_some_and(|p| {
                matches!(event, Event::Arrival { .. }) && self.ledger.contains_key(&p)
            });
        if !self.ledger.is_empty() && self.due(now, arrived) {
            actions.extend(self.round(view)?);
        }
        Ok(actions)
    }

    fn next_wakeup_s(&self, _view: &SimView<'_>) -> Option<f64> {
        if self.ledger.is_empty() {
            None
        } else {
            self.next_round_s
        }
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.rejected.get(&job).cloned()
    }

    fn notes(&self) -> Vec<String> {
        let r = &self.report;
        let mut line = format!(
            "{} rounds of {} s, {} allocations",
            r.rounds,
            crate::model::units::Num(self.params.round_s),
            r.allocations
        );
        if let Some(g) = r.gaps() {
            line.push_str(&format!(
                "; realised time fractions against X: mean gap {:.4}",
                g.mean_fraction_gap
            ));
            if let (Some(median), Some((least, job))) = (g.median_ratio, g.least_ratio) {
                line.push_str(&format!(
                    "; work done / work X promised: median {median:.4}, least {least:.4} ({job})"
                ));
            }
        }
        vec![line]
    }
}
