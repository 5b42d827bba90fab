//! The event loop.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::model::{GpuId, Instance, JobId, Resources, units};
use crate::schedule::Tasks;
use crate::timing::{ProgressMode, iterations_in};

use super::ledger::Steps;
use super::result::{
    AllocationRecord, JobRecord, SimResult, Unfinished, UtilizationPoint, fits_empty_cluster,
};
use super::room::{FreeTotals, new_run_stamp};
use super::state::{JobRun, JobStatus, boundary_slot, next_boundary_slot};
use super::view::SimView;
use super::work::{self, PsTiming};
use super::{Event, Policy, Rejection, SimError};

/// When the policy is asked to decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Decisions {
    /// At every arrival and completion, when it happens; with `ticks`, also
    /// at every slot boundary while some job runs or holds a plan.
    EventDriven {
        /// Deliver [`Event::Tick`] at slot boundaries.
        ticks: bool,
    },
    /// Only at slot boundaries: events inside a slot are delivered at the
    /// next boundary, followed by a tick.
    SlotBoundaries,
}

impl Default for Decisions {
    fn default() -> Self {
        Decisions::EventDriven { ticks: false }
    }
}

/// When the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum StopAt {
    /// When every job has completed or been rejected (or nothing more can
    /// happen).
    #[default]
    AllDone,
    /// At the instance's horizon; unfinished jobs earn no utility.
    Horizon,
}

/// Simulator options.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct SimOptions {
    /// How iterations are counted (`Floor` needs slot-boundary decisions).
    pub progress: ProgressMode,
    /// When the policy decides.
    pub decisions: Decisions,
    /// Parameter-server timing model.
    pub ps_timing: PsTiming,
    /// When the run ends.
    pub stop: StopAt,
    /// Safety limit on events delivered to the policy.
    pub max_events: u64,
    /// Whether a ring-all-reduce job that carries a convergence estimate
    /// ([`RarJob::convergence_iterations`](crate::model::RarJob::convergence_iterations))
    /// completes after those iterations instead of the `iterations` it
    /// requests (default `false`: every job trains what it requests). The
    /// option of schedulers that stop training at convergence, such as the
    /// GADGET-style scheduler's default.
    #[cfg_attr(feature = "serde", serde(default))]
    pub stop_at_convergence: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            progress: ProgressMode::Fractional,
            decisions: Decisions::default(),
            ps_timing: PsTiming::default(),
            stop: StopAt::default(),
            max_events: 50_000_000,
            stop_at_convergence: false,
        }
    }
}

pub(super) struct Engine<'a> {
    pub(crate) inst: &'a Instance,
    pub(crate) opts: &'a SimOptions,
    pub(crate) slot_s: f64,
    pub(crate) now: f64,
    pub(crate) runs: Vec<JobRun>,
    pub(crate) active: Vec<usize>,
    pub(crate) used: Vec<Resources>,
    pub(crate) free: Vec<Resources>,
    /// The exact totals of `free` (updated with every change of it).
    pub(crate) free_totals: FreeTotals,
    /// This run's stamp, unique in the process ([`new_run_stamp`]).
    pub(crate) run_stamp: u64,
    /// Use by plans per machine over slots (only where it changes).
    pub(crate) reserved: Vec<Steps>,
    /// Use by allocations that do not come from plans.
    pub(crate) open_used: Vec<Resources>,
    pub(crate) plan_jobs: Vec<usize>,
    pub(crate) plan_slots: BTreeSet<u32>,
    /// The holder of every GPU id assigned to a job (only those).
    pub(crate) gpu_owner: BTreeMap<GpuId, usize>,
    pub(crate) contention: Vec<u32>,
    pub(crate) running: Vec<usize>,
    pub(crate) speeds_dirty: bool,
    pub(crate) gpus_used: f64,
    pub(crate) utilization: Vec<UtilizationPoint>,
    pub(crate) log: Vec<AllocationRecord>,
    pub(crate) events: u64,
    pub(crate) decision_time_s: f64,
    /// The last slot boundary handled and when (see [`Engine::on_boundary`]).
    pub(crate) last_boundary: Option<(u32, f64)>,
}

/// Runs `policy` over the instance's jobs; see the [module docs](super).
///
/// # Errors
///
/// [`crate::Error::Sim`] for an infeasible decision (naming the job, and
/// for capacities the machine and resource), inconsistent options, a run
/// that cannot progress, or the event limit; [`crate::Error::Timing`] when
/// a timing model rejects a job's parameters; any error of the policy.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::sim::{SimOptions, simulate};
///
/// // One machine with one GPU; two jobs of ten 1-second mini-batches each.
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 10, ..PsJob::default() };
/// let jobs = vec![
///     Job::new(JobId(0), 0.0, work.clone()),
///     Job::new(JobId(1), 5.0, work),
/// ];
/// let instance = Instance::new(cluster, jobs, 60.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// // Job 1 waits for the GPU until job 0 finishes at 10 s.
/// assert_eq!(result.jobs[0].finish_s, Some(10.0));
/// assert_eq!(result.jobs[1].start_s, Some(10.0));
/// assert_eq!(result.jobs[1].jct_s, Some(15.0));
/// assert_eq!(result.summary().completed, 2);
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn simulate<P: Policy + ?Sized>(
    instance: &Instance,
    policy: &mut P,
    options: &SimOptions,
) -> crate::Result<SimResult> {
    if options.progress == ProgressMode::Floor && options.decisions != Decisions::SlotBoundaries {
        return Err(SimError::BadOptions {
            reason: "ProgressMode::Floor counts whole iterations per slot and needs Decisions::SlotBoundaries".into(),
        }
        .into());
    }
    let mut e = Engine::new(instance, options);
    let order = instance.arrival_order();
    let start = order.first().map_or(0.0, |&p| instance.jobs()[p].arrival_s);
    e.now = start;
    let mut cursor = Cursor {
        order,
        next_arrival: 0,
        buffered: Vec::new(),
        wakeup: None,
        first: true,
    };
    let stalled = loop {
        let happened = e.step(policy, &mut cursor)?;
        if e.events > options.max_events {
            return Err(SimError::EventLimit {
                limit: options.max_events,
                time_s: e.now,
            }
            .into());
        }
        let next = e.next_time(&cursor)?;
        if !next.is_finite() {
            break e
                .active
                .iter()
                .any(|&p| e.runs[p].status != JobStatus::Completed);
        }
        if options.stop == StopAt::Horizon && next > instance.horizon_s() {
            e.advance_to(instance.horizon_s());
            break false;
        }
        if next <= e.now && !happened {
            // Nothing happened at this instant and the next event is not
            // later: the loop would spin (this is a bug guard; every event
            // source yields times after now or completes a job).
            return Err(SimError::Stalled { time_s: e.now }.into());
        }
        e.advance_to(next);
    };
    Ok(e.finish(policy.name(), |j| policy.rejection(j), start, stalled))
}

/// The event sources outside the engine's job state.
struct Cursor {
    order: Vec<usize>,
    next_arrival: usize,
    buffered: Vec<Event>,
    wakeup: Option<f64>,
    first: bool,
}

impl<'a> Engine<'a> {
    pub(super) fn new(inst: &'a Instance, opts: &'a SimOptions) -> Self {
        let machines = &inst.cluster().machines;
        let free: Vec<Resources> = machines.iter().map(|m| m.capacity).collect();
        Engine {
            inst,
            opts,
            slot_s: inst.slot_length_s(),
            now: 0.0,
            runs: inst
                .jobs()
                .iter()
                .map(|j| JobRun::new(j, opts.stop_at_convergence))
                .collect(),
            active: Vec::new(),
            used: vec![Resources::zero(); machines.len()],
            free_totals: FreeTotals::new(&free),
            free,
            run_stamp: new_run_stamp(),
            reserved: vec![Steps::new(); machines.len()],
            open_used: vec![Resources::zero(); machines.len()],
            plan_jobs: Vec::new(),
            plan_slots: BTreeSet::new(),
            gpu_owner: BTreeMap::new(),
            contention: vec![0; machines.len()],
            running: Vec::new(),
            speeds_dirty: false,
            gpus_used: 0.0,
            utilization: Vec::new(),
            log: Vec::new(),
            events: 0,
            decision_time_s: 0.0,
            last_boundary: None,
        }
    }

    /// Handles everything that happens at `now`: completions, arrivals, the
    /// policy's wakeup, the plans' switch at a slot boundary, and the
    /// decisions. Returns whether some event occurred or was delivered (a
    /// completion, an arrival, a wakeup, or events buffered until this
    /// boundary, or a plan switch that changed an allocation); ticks alone
    /// do not count.
    fn step<P: Policy + ?Sized>(&mut self, policy: &mut P, c: &mut Cursor) -> crate::Result<bool> {
        let jobs = self.inst.jobs();
        let mut now_events: Vec<Event> = Vec::new();
        if !c.first {
            for p in self.collect_completions() {
                now_events.push(Event::Completion { job: jobs[p].id });
            }
        }
        c.first = false;
        while let Some(&p) = c.order.get(c.next_arrival) {
            if jobs[p].arrival_s > self.now {
                break;
            }
            self.arrive(p);
            now_events.push(Event::Arrival { job: jobs[p].id });
            c.next_arrival += 1;
        }
        if c.wakeup.is_some_and(|w| w <= self.now) {
            c.wakeup = None;
            now_events.push(Event::Wakeup);
        }
        let mut happened = !now_events.is_empty();
        let boundary = self.on_boundary();
        if let Some(slot) = boundary {
            self.last_boundary = Some((slot, self.now));
            // A plan that starts a job is progress too (the job may finish
            // at once); switching the same slot again changes nothing.
            happened |= self.apply_plans(slot)?;
        }
        match self.opts.decisions {
            Decisions::EventDriven { ticks } => {
                if ticks
                    && (self.busy() || !now_events.is_empty())
                    && let Some(slot) = boundary
                {
                    now_events.push(Event::Tick { slot });
                }
                for ev in now_events {
                    self.deliver(policy, &ev)?;
                }
            }
            Decisions::SlotBoundaries => {
                c.buffered.extend(now_events);
                if let Some(slot) = boundary {
                    let batch = std::mem::take(&mut c.buffered);
                    happened |= !batch.is_empty();
                    let tick = self.busy() || !batch.is_empty();
                    for ev in batch {
                        self.deliver(policy, &ev)?;
                    }
                    if tick {
                        self.deliver(policy, &Event::Tick { slot })?;
                    }
                }
            }
        }
        self.refresh_speeds()?;
        self.record_utilization();
        c.wakeup = policy.next_wakeup_s(&self.view()).filter(|&w| w > self.now);
        Ok(happened)
    }

    /// When the next thing happens (infinite when nothing can).
    fn next_time(&mut self, c: &Cursor) -> crate::Result<f64> {
        let t_arrival = c
            .order
            .get(c.next_arrival)
            .map(|&p| self.inst.jobs()[p].arrival_s);
        let t_done = self.next_completion();
        let next_slot = self.next_boundary_slot();
        let t_plan = next_slot
            .and_then(|s| self.plan_slots.range(s..).next())
            .map(|&s| f64::from(s) * self.slot_s);
        let floor = self.opts.progress == ProgressMode::Floor;
        let want_ticks = match self.opts.decisions {
            Decisions::EventDriven { ticks } => ticks && self.busy(),
            Decisions::SlotBoundaries => {
                self.busy() || !c.buffered.is_empty() || floor && !self.running.is_empty()
            }
        };
        let t_tick = next_slot
            .filter(|_| want_ticks)
            .map(|s| f64::from(s) * self.slot_s);
        if floor && t_arrival.is_none() && t_plan.is_none() && !self.running.is_empty() {
            self.check_floor_progress()?;
        }
        Ok([t_arrival, t_done, t_plan, t_tick, c.wakeup]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min))
    }

    pub(super) fn busy(&self) -> bool {
        !self.running.is_empty() || !self.plan_jobs.is_empty()
    }

    /// The slot starting now, if `now` is on a boundary. The boundary test
    /// has a tolerance of 10⁻⁹ slots, which at a huge slot length spans
    /// distinct event times (at 10²⁰ s, every time up to 10¹¹ s is "on" the
    /// boundary of slot 0). With [`Decisions::SlotBoundaries`] a boundary
    /// delivers the policy's decision for the slot, so a slot already
    /// handled at an earlier time does not start again (two decisions
    /// would share one slot). Event-driven runs keep re-applying the
    /// slot's plans at such times, which changes nothing but lets a plan
    /// start on room freed a hair after the boundary.
    pub(super) fn on_boundary(&self) -> Option<u32> {
        let once = self.opts.decisions == Decisions::SlotBoundaries;
        boundary_slot(self.now, self.slot_s).filter(|&s| {
            !once
                || self
                    .last_boundary
                    .is_none_or(|(l, t)| s > l || self.now <= t)
        })
    }

    /// The first slot boundary strictly after now (`None` past the last
    /// slot index).
    pub(super) fn next_boundary_slot(&self) -> Option<u32> {
        next_boundary_slot(self.now, self.slot_s)
    }

    pub(super) fn arrive(&mut self, p: usize) {
        self.runs[p].status = JobStatus::Waiting;
        self.runs[p].since_s = self.now;
        self.active.push(p);
    }

    fn deliver<P: Policy + ?Sized>(&mut self, policy: &mut P, ev: &Event) -> crate::Result<()> {
        self.events += 1;
        let t0 = Instant::now();
        let actions = policy.on_event(&self.view(), ev)?;
        self.decision_time_s += t0.elapsed().as_secs_f64();
        self.apply_decision(actions)
    }

    pub(super) fn view(&self) -> SimView<'_> {
        SimView {
            instance: self.inst,
            now_s: self.now,
            runs: &self.runs,
            active: &self.active,
            free: &self.free,
            free_totals: &self.free_totals,
            run_stamp: self.run_stamp,
            gpu_owner: &self.gpu_owner,
            ps_timing: self.opts.ps_timing,
            contention: &self.contention,
        }
    }

    /// Logs job `p`'s current allocation as ending now.
    pub(super) fn close_record(&mut self, p: usize) {
        let r = &self.runs[p];
        if !r.placement.is_empty() {
            self.log.push(AllocationRecord {
                job: self.inst.jobs()[p].id,
                from_s: r.alloc_since_s,
                to_s: self.now,
                placement: r.placement.clone(),
                gpus: r.gpus.clone(),
            });
        }
    }

    pub(super) fn update_contention(&mut self, add: bool, load: &[(usize, Tasks, Resources)]) {
        for &(m, t, _) in load {
            if t.workers > 0 {
                if add {
                    self.contention[m] += 1;
                } else {
                    self.contention[m] = self.contention[m].saturating_sub(1);
                }
            }
        }
    }

    fn refresh_speeds(&mut self) -> crate::Result<()> {
        if !self.speeds_dirty {
            return Ok(());
        }
        self.speeds_dirty = false;
        for i in 0..self.running.len() {
            let p = self.running[i];
            let run = &self.runs[p];
            if run.speed.is_some() && !run.contends {
                continue;
            }
            let contenders = if run.contends {
                run.load
                    .iter()
                    .filter(|(_, t, _)| t.workers > 0)
                    .map(|&(m, _, _)| self.contention[m])
                    .max()
                    .unwrap_or(1)
            } else {
                0
            };
            let pos: Vec<(usize, Tasks)> = run.load.iter().map(|&(m, t, _)| (m, t)).collect();
            let s = work::speed(
                self.inst,
                &self.inst.jobs()[p],
                &pos,
                contenders,
                self.opts.ps_timing,
                work::is_local(run.config),
            )?;
            self.runs[p].speed = Some(s);
            self.forget_finish(p);
        }
        Ok(())
    }

    /// When running job `p` finishes at its current speed (fractional
    /// progress): `now + reconfiguration left + remaining / rate`, exactly
    /// `now` when that sum does not exceed it (a zero or vanishing
    /// iteration time: the job can finish at once), infinite at rate 0.
    fn finish_at(&self, p: usize) -> Option<f64> {
        let r = &self.runs[p];
        let s = r.speed?;
        let left = if r.remaining <= 0.0 {
            0.0
        } else {
            // rate = ∞ (τ = 0) gives 0; rate = 0 gives ∞.
            r.remaining / s.rate()
        };
        let t = self.now + r.reconfig_left_s + left;
        (!t.is_nan()).then_some(t.max(self.now))
    }

    /// [`Engine::finish_at`] through the job's `finish_memo`.
    fn finish_at_memo(&mut self, p: usize) -> Option<f64> {
        if let Some((t, f)) = self.runs[p].finish_memo
            && t == self.now
        {
            debug_assert_eq!(
                f.map(f64::to_bits),
                self.finish_at(p).map(f64::to_bits),
                "stale finish memo"
            );
            return f;
        }
        let f = self.finish_at(p);
        self.runs[p].finish_memo = Some((self.now, f));
        f
    }

    /// Clears job `p`'s `finish_memo` (its allocation, speed or work
    /// changed).
    pub(super) fn forget_finish(&mut self, p: usize) {
        self.runs[p].finish_memo = None;
    }

    fn next_completion(&mut self) -> Option<f64> {
        if self.opts.progress == ProgressMode::Floor {
            return None;
        }
        let mut first: Option<f64> = None;
        for i in 0..self.running.len() {
            let p = self.running[i];
            // As `min_by(f64::total_cmp)`: the first least value (equal
            // values under `total_cmp` have the same bits).
            if let Some(f) = self.finish_at_memo(p)
                && first.is_none_or(|m| f.total_cmp(&m).is_lt())
            {
                first = Some(f);
            }
        }
        first
    }

    fn check_floor_progress(&self) -> Result<(), SimError> {
        let stuck = self.running.iter().all(|&p| {
            let r = &self.runs[p];
            r.reconfig_left_s <= 0.0
                && r.speed.is_some_and(|s| {
                    iterations_in(self.slot_s, s.tau_s, ProgressMode::Floor) <= 0.0
                })
        });
        match self.running.first() {
            Some(&p) if stuck => Err(SimError::NoProgress {
                job: self.inst.jobs()[p].id,
                time_s: self.now,
            }),
            _ => Ok(()),
        }
    }

    /// Moves time forward to `t`, crediting progress and GPU-seconds. A job
    /// whose finish time is not after `t` has done all its work.
    pub(super) fn advance_to(&mut self, t: f64) {
        if t <= self.now {
            return;
        }
        let dt = t - self.now;
        let mode = self.opts.progress;
        for i in 0..self.running.len() {
            let p = self.running[i];
            let done_by_t =
                mode == ProgressMode::Fractional && self.finish_at_memo(p).is_some_and(|f| f <= t);
            let r = &mut self.runs[p];
            r.gpu_seconds += r.gpus_held * dt;
            let eff = (dt - r.reconfig_left_s).max(0.0);
            r.reconfig_left_s = (r.reconfig_left_s - dt).max(0.0);
            if done_by_t {
                r.remaining = 0.0;
                continue;
            }
            let Some(s) = r.speed else { continue };
            let done = iterations_in(eff, s.tau_s, mode) * s.work_per_iteration;
            if !done.is_nan() {
                r.remaining = (r.remaining - done).max(0.0);
            }
        }
        self.now = t;
    }

    fn collect_completions(&mut self) -> Vec<usize> {
        let fractional = self.opts.progress == ProgressMode::Fractional;
        let mut done: Vec<usize> = Vec::new();
        for i in 0..self.running.len() {
            let p = self.running[i];
            let r = &self.runs[p];
            if r.remaining <= 1e-9 * r.total.max(1.0)
                || fractional && self.finish_at_memo(p).is_some_and(|f| f <= self.now)
            {
                done.push(p);
            }
        }
        for &p in &done {
            self.forget_finish(p);
            self.drop_plan(p);
            self.release(p);
            let now = self.now;
            let r = &mut self.runs[p];
            r.last_run_s = now - r.since_s;
            r.since_s = now;
            r.reconfig_left_s = 0.0;
            r.remaining = 0.0;
            r.status = JobStatus::Completed;
            r.finish_s = Some(now);
        }
        if !done.is_empty() {
            self.running.retain(|q| !done.contains(q));
            self.active.retain(|q| !done.contains(q));
        }
        done
    }

    fn record_utilization(&mut self) {
        let used = self.gpus_used.max(0.0);
        match self.utilization.last_mut() {
            Some(last) if last.time_s == self.now => last.gpus_used = used,
            Some(last) if last.gpus_used == used => {}
            _ => self.utilization.push(UtilizationPoint {
                time_s: self.now,
                gpus_used: used,
            }),
        }
    }

    fn finish(
        mut self,
        policy: String,
        rejection: impl Fn(JobId) -> Option<Rejection>,
        start_s: f64,
        stalled: bool,
    ) -> SimResult {
        for p in self.running.clone() {
            self.close_record(p);
        }
        let slot_s = self.slot_s;
        let jobs = self
            .inst
            .jobs()
            .iter()
            .zip(&self.runs)
            .map(|(job, r)| {
                let completion_slot = r
                    .finish_s
                    .map(|f| units::slots_covering(f, slot_s).saturating_sub(1));
                let utility = completion_slot.map_or(0.0, |c| {
                    let a = units::slot_of(job.arrival_s, slot_s);
                    job.utility.value(c.saturating_sub(a))
                });
                let done = r.finish_s.is_some() || r.status == JobStatus::Rejected;
                let unfinished = (!done).then(|| {
                    if !r.admitted && !fits_empty_cluster(job, self.inst.cluster()) {
                        Unfinished::NoRoom
                    } else if !stalled {
                        // Only a stop at the horizon ends a run with open
                        // jobs without stalling.
                        Unfinished::Horizon
                    } else if r.admitted {
                        Unfinished::Stalled
                    } else {
                        Unfinished::NeverAdmitted
                    }
                });
                JobRecord {
                    job: job.id,
                    arrival_s: job.arrival_s,
                    admitted: r.admitted,
                    rejected: r.status == JobStatus::Rejected,
                    start_s: r.start_s,
                    finish_s: r.finish_s,
                    jct_s: r.finish_s.map(|f| f - job.arrival_s),
                    queueing_s: r.start_s.map(|s| s - job.arrival_s),
                    completion_slot,
                    utility,
                    gpu_seconds: r.gpu_seconds,
                    preemptions: r.preemptions,
                    reconfigurations: r.reconfigurations,
                    remaining_work: r.remaining,
                    rejection: if r.status == JobStatus::Rejected {
                        rejection(job.id)
                    } else {
                        None
                    },
                    unfinished,
                }
            })
            .collect();
        SimResult {
            policy,
            jobs,
            utilization: self.utilization,
            allocations: self.log,
            gpus_total: self.inst.cluster().total_capacity().gpus,
            start_s,
            end_s: self.now,
            events: self.events,
            stalled,
            decision_time_s: self.decision_time_s,
        }
    }
}
