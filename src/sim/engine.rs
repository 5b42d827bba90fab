//! The event loop.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::model::{
    Elasticity, FIT_TOL, GpuId, Instance, Job, MachineId, ResourceKind, Resources, units,
};
use crate::schedule::{self, JobSchedule, Segment, Tasks};
use crate::timing::{ProgressMode, iterations_in};

use super::result::{AllocationRecord, JobRecord, SimResult, UtilizationPoint};
use super::view::{JobStatus, SimView};
use super::work::{self, PsTiming, Speed};
use super::{Action, Event, Policy, SimError};

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
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            progress: ProgressMode::Fractional,
            decisions: Decisions::default(),
            ps_timing: PsTiming::default(),
            stop: StopAt::default(),
            max_events: 50_000_000,
        }
    }
}

/// A job's plan, in machine positions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    segments: Vec<Segment>,
}

/// The simulator's per-job state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobRun {
    pub status: JobStatus,
    pub placement: Vec<(MachineId, Tasks)>,
    /// Machine positions and demand of the current allocation.
    pub load: Vec<(usize, Tasks, Resources)>,
    pub gpus: Option<Vec<GpuId>>,
    pub plan: Option<Plan>,
    /// Whether the current allocation came from the plan.
    pub from_plan: bool,
    pub total: f64,
    pub remaining: f64,
    pub speed: Option<Speed>,
    pub multi_server: bool,
    pub reconfig_left_s: f64,
    pub start_s: Option<f64>,
    pub finish_s: Option<f64>,
    pub since_s: f64,
    pub last_run_s: f64,
    pub gpu_seconds: f64,
    pub gpus_held: f64,
    pub preemptions: u32,
    pub reconfigurations: u32,
    pub admitted: bool,
    /// Start of the current allocation.
    pub alloc_since_s: f64,
    /// The last non-empty allocation (a rigid job may only resume on it).
    pub last_placement: Vec<(MachineId, Tasks)>,
    /// GPU ids of the last non-empty allocation.
    pub last_gpus: Option<Vec<GpuId>>,
}

impl JobRun {
    /// Whether the job runs a worker on machine `m` as a multi-server ring.
    pub fn multi_server_on(&self, m: usize) -> bool {
        self.multi_server && self.load.iter().any(|&(p, t, _)| p == m && t.workers > 0)
    }
}

fn demand(job: &Job, tasks: Tasks) -> Resources {
    job.demand_for(tasks.workers, tasks.ps)
}

/// The over-allocation error of `job` on `machine` at `slot`.
fn overflow(
    job: crate::model::JobId,
    machine: MachineId,
    (resource, used, capacity): (ResourceKind, f64, f64),
    time_s: f64,
    slot: u32,
) -> crate::Error {
    SimError::OverAllocation {
        job,
        machine,
        resource,
        time_s,
        slot,
        used,
        capacity,
    }
    .into()
}

fn over(used: &Resources, cap: &Resources) -> Option<(ResourceKind, f64, f64)> {
    used.first_excess(cap, FIT_TOL)
        .map(|k| (k, used.get(k), cap.get(k)))
}

struct Engine<'a> {
    inst: &'a Instance,
    opts: &'a SimOptions,
    slot_s: f64,
    now: f64,
    runs: Vec<JobRun>,
    active: Vec<usize>,
    used: Vec<Resources>,
    free: Vec<Resources>,
    /// Use by plans per machine and slot (allocated on the first plan).
    reserved: Vec<Vec<Resources>>,
    /// Use by allocations that do not come from plans.
    open_used: Vec<Resources>,
    plan_jobs: Vec<usize>,
    plan_slots: BTreeSet<u32>,
    gpu_owner: Vec<Vec<Option<usize>>>,
    contention: Vec<u32>,
    running: Vec<usize>,
    speeds_dirty: bool,
    gpus_used: f64,
    utilization: Vec<UtilizationPoint>,
    log: Vec<AllocationRecord>,
    events: u64,
    decision_time_s: f64,
}

/// Runs `policy` over the instance's jobs; see the [module docs](super).
///
/// # Errors
///
/// [`crate::Error::Sim`] for an infeasible action (naming the job, and for
/// capacities the machine and resource), inconsistent options, a run that
/// cannot progress, or the event limit; [`crate::Error::Timing`] when a
/// timing model rejects a job's parameters; any error of the policy.
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
    let mut next_arrival = 0usize;
    let mut buffered: Vec<Event> = Vec::new();
    let horizon_s = instance.horizon_s();
    let mut stalled = false;
    let mut first = true;
    let mut wakeup: Option<f64> = None;
    loop {
        // 1. What happens now.
        let mut now_events: Vec<Event> = Vec::new();
        if !first {
            for p in e.collect_completions() {
                now_events.push(Event::Completion {
                    job: instance.jobs()[p].id,
                });
            }
        }
        first = false;
        while let Some(&p) = order.get(next_arrival) {
            if instance.jobs()[p].arrival_s <= e.now + 1e-9 * e.now.abs().max(1.0) {
                e.arrive(p);
                now_events.push(Event::Arrival {
                    job: instance.jobs()[p].id,
                });
                next_arrival += 1;
            } else {
                break;
            }
        }
        if wakeup.is_some_and(|w| w <= e.now + 1e-9 * e.now.abs().max(1.0)) {
            now_events.push(Event::Wakeup);
        }
        let boundary = e.on_boundary();
        if let Some(slot) = boundary {
            e.apply_plans(slot)?;
        }
        match options.decisions {
            Decisions::EventDriven { ticks } => {
                if ticks && boundary.is_some() && (e.busy() || !now_events.is_empty()) {
                    now_events.push(Event::Tick {
                        slot: boundary.unwrap_or(0),
                    });
                }
                for ev in now_events {
                    e.deliver(policy, &ev)?;
                }
            }
            Decisions::SlotBoundaries => {
                buffered.extend(now_events);
                if let Some(slot) = boundary {
                    let batch = std::mem::take(&mut buffered);
                    let tick = e.busy() || !batch.is_empty();
                    for ev in batch {
                        e.deliver(policy, &ev)?;
                    }
                    if tick {
                        e.deliver(policy, &Event::Tick { slot })?;
                    }
                }
            }
        }
        e.refresh_speeds()?;
        e.record_utilization();
        wakeup = policy.next_wakeup_s(&e.view()).filter(|&w| w > e.now);
        if e.events > options.max_events {
            return Err(SimError::EventLimit {
                limit: options.max_events,
                time_s: e.now,
            }
            .into());
        }

        // 2. When the next thing happens.
        let t_arrival = order
            .get(next_arrival)
            .map(|&p| instance.jobs()[p].arrival_s);
        let t_done = e.next_completion();
        let t_plan = e
            .plan_slots
            .range(e.next_boundary_slot()..)
            .next()
            .map(|&s| f64::from(s) * e.slot_s);
        let want_ticks = match options.decisions {
            Decisions::EventDriven { ticks } => ticks && e.busy(),
            Decisions::SlotBoundaries => {
                e.busy()
                    || !buffered.is_empty()
                    || options.progress == ProgressMode::Floor && !e.running.is_empty()
            }
        };
        let t_tick = want_ticks.then(|| f64::from(e.next_boundary_slot()) * e.slot_s);
        let next = [t_arrival, t_done, t_plan, t_tick, wakeup]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
        if options.progress == ProgressMode::Floor
            && t_arrival.is_none()
            && t_plan.is_none()
            && !e.running.is_empty()
        {
            e.check_floor_progress()?;
        }
        if !next.is_finite() {
            stalled = e
                .active
                .iter()
                .any(|&p| e.runs[p].status != JobStatus::Completed);
            break;
        }
        if options.stop == StopAt::Horizon && next > horizon_s {
            e.advance_to(horizon_s.max(e.now));
            break;
        }
        e.advance_to(next);
    }
    Ok(e.finish(policy.name(), start, stalled))
}

impl<'a> Engine<'a> {
    fn new(inst: &'a Instance, opts: &'a SimOptions) -> Self {
        let machines = &inst.cluster().machines;
        let runs = inst
            .jobs()
            .iter()
            .map(|j| {
                let total = work::total_work(j);
                JobRun {
                    status: JobStatus::NotArrived,
                    placement: Vec::new(),
                    load: Vec::new(),
                    gpus: None,
                    plan: None,
                    from_plan: false,
                    total,
                    remaining: total,
                    speed: None,
                    multi_server: false,
                    reconfig_left_s: 0.0,
                    start_s: None,
                    finish_s: None,
                    since_s: j.arrival_s,
                    last_run_s: 0.0,
                    gpu_seconds: 0.0,
                    gpus_held: 0.0,
                    preemptions: 0,
                    reconfigurations: 0,
                    admitted: false,
                    alloc_since_s: 0.0,
                    last_placement: Vec::new(),
                    last_gpus: None,
                }
            })
            .collect();
        Engine {
            inst,
            opts,
            slot_s: inst.slot_length_s(),
            now: 0.0,
            runs,
            active: Vec::new(),
            used: vec![Resources::zero(); machines.len()],
            free: machines.iter().map(|m| m.capacity).collect(),
            reserved: Vec::new(),
            open_used: vec![Resources::zero(); machines.len()],
            plan_jobs: Vec::new(),
            plan_slots: BTreeSet::new(),
            gpu_owner: machines
                .iter()
                .map(|m| vec![None; m.capacity.gpus.max(0.0) as usize])
                .collect(),
            contention: vec![0; machines.len()],
            running: Vec::new(),
            speeds_dirty: false,
            gpus_used: 0.0,
            utilization: Vec::new(),
            log: Vec::new(),
            events: 0,
            decision_time_s: 0.0,
        }
    }

    fn busy(&self) -> bool {
        !self.running.is_empty() || !self.plan_jobs.is_empty()
    }

    /// The slot starting now, if `now` is on a boundary.
    fn on_boundary(&self) -> Option<u32> {
        let x = self.now / self.slot_s;
        let r = x.round();
        ((x - r).abs() <= 1e-9 * x.abs().max(1.0) && r >= 0.0 && r < f64::from(u32::MAX))
            .then_some(r as u32)
    }

    /// The first slot boundary strictly after now.
    fn next_boundary_slot(&self) -> u32 {
        match self.on_boundary() {
            Some(s) => s.saturating_add(1),
            None => units::slot_of(self.now, self.slot_s).saturating_add(1),
        }
    }

    /// The first slot a plan may use: the current one on its boundary.
    fn first_plannable_slot(&self) -> u32 {
        self.on_boundary()
            .unwrap_or_else(|| units::slot_of(self.now, self.slot_s).saturating_add(1))
    }

    fn arrive(&mut self, p: usize) {
        self.runs[p].status = JobStatus::Waiting;
        self.runs[p].since_s = self.now;
        self.active.push(p);
    }

    fn deliver<P: Policy + ?Sized>(&mut self, policy: &mut P, ev: &Event) -> crate::Result<()> {
        self.events += 1;
        let t0 = Instant::now();
        let actions = policy.on_event(&self.view(), ev)?;
        self.decision_time_s += t0.elapsed().as_secs_f64();
        for a in actions {
            self.apply(a)?;
        }
        Ok(())
    }

    fn view(&self) -> SimView<'_> {
        SimView {
            instance: self.inst,
            now_s: self.now,
            runs: &self.runs,
            active: &self.active,
            free: &self.free,
            gpu_owner: &self.gpu_owner,
            ps_timing: self.opts.ps_timing,
            contention: &self.contention,
        }
    }

    fn position(&self, job: crate::model::JobId) -> Result<usize, SimError> {
        let p = self.inst.job_position(job).ok_or(SimError::UnknownJob {
            job,
            time_s: self.now,
        })?;
        match self.runs[p].status {
            JobStatus::NotArrived => Err(SimError::NotArrived {
                job,
                time_s: self.now,
                arrival_s: self.inst.jobs()[p].arrival_s,
            }),
            JobStatus::Completed => Err(SimError::JobClosed {
                job,
                time_s: self.now,
                state: "completed",
            }),
            JobStatus::Rejected => Err(SimError::JobClosed {
                job,
                time_s: self.now,
                state: "rejected",
            }),
            _ => Ok(p),
        }
    }

    fn apply(&mut self, action: Action) -> crate::Result<()> {
        let p = self.position(action.job())?;
        match action {
            Action::SetAllocation {
                placement, gpus, ..
            } => {
                if self.runs[p].plan.is_some() {
                    self.drop_plan(p);
                }
                self.set_allocation(p, placement, gpus, false)?;
            }
            Action::Preempt { .. } => {
                if self.runs[p].plan.is_some() {
                    self.drop_plan(p);
                }
                self.set_allocation(p, Vec::new(), None, false)?;
            }
            Action::Reject { .. } => {
                if self.runs[p].status == JobStatus::Running
                    && !self.inst.jobs()[p].discipline.preemptible
                {
                    return Err(SimError::NotPreemptible {
                        job: self.inst.jobs()[p].id,
                        time_s: self.now,
                    }
                    .into());
                }
                if self.runs[p].plan.is_some() {
                    self.drop_plan(p);
                }
                self.set_allocation(p, Vec::new(), None, false)?;
                self.runs[p].status = JobStatus::Rejected;
                self.active.retain(|&q| q != p);
            }
            Action::Reserve { segments, .. } => self.reserve(p, segments)?,
        }
        Ok(())
    }

    /// Replaces job `p`'s allocation, checking every rule.
    fn set_allocation(
        &mut self,
        p: usize,
        placement: Vec<(MachineId, Tasks)>,
        gpus: Option<Vec<GpuId>>,
        from_plan: bool,
    ) -> crate::Result<()> {
        let job = &self.inst.jobs()[p];
        let now = self.now;
        let placement: Vec<(MachineId, Tasks)> = placement
            .into_iter()
            .filter(|(_, t)| t.workers > 0 || t.ps > 0)
            .collect();
        let was_running = self.runs[p].status == JobStatus::Running;
        if placement.is_empty() {
            if was_running && !job.discipline.preemptible {
                return Err(SimError::NotPreemptible {
                    job: job.id,
                    time_s: now,
                }
                .into());
            }
        } else {
            schedule::check_allocation(self.inst, job, &placement, gpus.as_deref()).map_err(
                |violation| SimError::InvalidAllocation {
                    time_s: now,
                    violation,
                },
            )?;
        }
        let same = same_placement(&self.runs[p].placement, &placement)
            && sorted(&self.runs[p].gpus) == sorted(&gpus);
        if same {
            self.runs[p].from_plan = from_plan;
            return Ok(());
        }
        let rigid = job.discipline.elasticity == Elasticity::Rigid;
        let moved = |r: &JobRun| {
            !(same_placement(&r.last_placement, &placement)
                && sorted(&r.last_gpus) == sorted(&gpus))
        };
        if rigid && !placement.is_empty() && self.runs[p].start_s.is_some() && moved(&self.runs[p])
        {
            // A rigid job runs the same placement (and GPU set) in every
            // slot it runs, also after a pause (`verify`'s gang rule).
            return Err(SimError::RigidResize {
                job: job.id,
                time_s: now,
            }
            .into());
        }
        if was_running && !placement.is_empty() && rigid {
            return Err(SimError::RigidResize {
                job: job.id,
                time_s: now,
            }
            .into());
        }

        // New load, checked against capacity with the old load removed.
        let mut load = Vec::with_capacity(placement.len());
        for &(m, t) in &placement {
            let pos = self.inst.machine_position(m).unwrap_or(usize::MAX);
            load.push((pos, t, demand(job, t)));
        }
        let old_load = std::mem::take(&mut self.runs[p].load);
        let old_from_plan = self.runs[p].from_plan;
        for &(m, _, ref d) in &load {
            let mut after = self.used[m].plus(d);
            for &(om, _, ref od) in &old_load {
                if om == m {
                    after = after.minus(od);
                }
            }
            let cap = &self.inst.cluster().machines[m].capacity;
            if let Some((resource, used, capacity)) = over(&after, cap) {
                self.runs[p].load = old_load;
                return Err(overflow(
                    job.id,
                    self.inst.cluster().machines[m].id,
                    (resource, used, capacity),
                    now,
                    units::slot_of(now, self.slot_s),
                ));
            }
            if !from_plan && !self.reserved.is_empty() {
                let mut open = self.open_used[m].plus(d);
                if !old_from_plan {
                    for &(om, _, ref od) in &old_load {
                        if om == m {
                            open = open.minus(od);
                        }
                    }
                }
                let from = self.next_boundary_slot() as usize;
                for (s, r) in self.reserved[m].iter().enumerate().skip(from) {
                    if let Some((resource, used, capacity)) = over(&open.plus(r), cap) {
                        self.runs[p].load = old_load;
                        return Err(overflow(
                            job.id,
                            self.inst.cluster().machines[m].id,
                            (resource, used, capacity),
                            now,
                            s as u32,
                        ));
                    }
                }
            }
        }
        // GPU ids.
        if let Some(ids) = &gpus {
            for g in ids {
                let m = self.inst.machine_position(g.machine).unwrap_or(usize::MAX);
                if let Some(Some(holder)) = self.gpu_owner[m].get(g.index as usize)
                    && *holder != p
                {
                    self.runs[p].load = old_load;
                    return Err(SimError::GpuBusy {
                        job: job.id,
                        machine: g.machine,
                        index: g.index,
                        holder: self.inst.jobs()[*holder].id,
                        time_s: now,
                    }
                    .into());
                }
            }
        }

        // Commit: release the old allocation, take the new one.
        for &(m, _, ref d) in &old_load {
            self.used[m] = self.used[m].minus(d);
            if !old_from_plan {
                self.open_used[m] = self.open_used[m].minus(d);
            }
        }
        if let Some(ids) = &self.runs[p].gpus {
            for g in ids {
                if let Some(m) = self.inst.machine_position(g.machine) {
                    self.gpu_owner[m][g.index as usize] = None;
                }
            }
        }
        for &(m, _, ref d) in &load {
            self.used[m] = self.used[m].plus(d);
            if !from_plan {
                self.open_used[m] = self.open_used[m].plus(d);
            }
        }
        for &(m, _, _) in old_load.iter().chain(load.iter()) {
            let cap = &self.inst.cluster().machines[m].capacity;
            self.free[m] = cap.minus(&self.used[m]);
        }
        if let Some(ids) = &gpus {
            for g in ids {
                if let Some(m) = self.inst.machine_position(g.machine) {
                    self.gpu_owner[m][g.index as usize] = Some(p);
                }
            }
        }
        let gpus_now: f64 = load.iter().map(|(_, _, d)| d.gpus).sum();
        self.gpus_used += gpus_now - self.runs[p].gpus_held;

        self.close_record(p);
        let run = &mut self.runs[p];
        run.alloc_since_s = now;
        let multi_before = run.multi_server;
        run.gpus_held = gpus_now;
        run.from_plan = from_plan;
        if !placement.is_empty() {
            run.last_placement = placement.clone();
            run.last_gpus = gpus.clone();
        }
        run.placement = placement;
        run.gpus = gpus;
        run.load = load;
        run.speed = None;
        let arch_rar = matches!(
            job.architecture,
            crate::model::Architecture::RingAllReduce(_)
        );
        run.multi_server =
            arch_rar && run.load.iter().filter(|(_, t, _)| t.workers > 0).count() >= 2;
        if multi_before {
            self.update_contention(p, false, &old_load);
        }
        let run = &mut self.runs[p];
        if run.placement.is_empty() {
            if was_running {
                run.preemptions += 1;
                run.last_run_s = now - run.since_s;
                run.since_s = now;
                run.status = JobStatus::Paused;
                run.reconfig_left_s = 0.0;
                self.running.retain(|&q| q != p);
            }
        } else {
            if was_running || run.start_s.is_some() {
                // A changed allocation or a resume: checkpoint and restart.
                if job.reconfiguration_s > 0.0 {
                    run.reconfig_left_s = job.reconfiguration_s;
                }
                run.reconfigurations += 1;
            }
            if !was_running {
                run.since_s = now;
                run.status = JobStatus::Running;
                self.running.push(p);
            }
            run.start_s.get_or_insert(now);
            run.admitted = true;
            if run.multi_server {
                let load = run.load.clone();
                self.update_contention(p, true, &load);
            }
        }
        self.speeds_dirty = true;
        Ok(())
    }

    fn update_contention(&mut self, _p: usize, add: bool, load: &[(usize, Tasks, Resources)]) {
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

    fn reserve(&mut self, p: usize, segments: Vec<Segment>) -> crate::Result<()> {
        let job = &self.inst.jobs()[p];
        let now = self.now;
        let bad = |reason: String| -> crate::Error {
            SimError::BadPlan {
                job: job.id,
                time_s: now,
                reason,
            }
            .into()
        };
        if self.runs[p].status == JobStatus::Running || self.runs[p].plan.is_some() {
            return Err(bad(
                "the job already holds resources; plans are irrevocable and made once".into(),
            ));
        }
        let first = self.first_plannable_slot();
        if let Some(s) = segments.iter().find(|s| s.slots.start < first) {
            return Err(bad(format!(
                "segment {:?} starts before slot {first}, the first slot not yet begun",
                s.slots
            )));
        }
        let js = JobSchedule {
            job: job.id,
            admitted: true,
            segments: segments.clone(),
        };
        schedule::check_job_schedule(self.inst, &js).map_err(|violation| {
            SimError::InvalidAllocation {
                time_s: now,
                violation,
            }
        })?;
        if self.reserved.is_empty() {
            let h = self.inst.horizon_slots() as usize;
            self.reserved = vec![vec![Resources::zero(); h]; self.used.len()];
        }
        // Capacity in every slot: other plans + open allocations + this plan.
        for seg in &segments {
            for &(mid, t) in &seg.placement {
                if t.workers == 0 && t.ps == 0 {
                    continue;
                }
                let m = self.inst.machine_position(mid).unwrap_or(usize::MAX);
                let d = demand(job, t);
                let cap = &self.inst.cluster().machines[m].capacity;
                for s in seg.slots.clone() {
                    let after = self.reserved[m][s as usize]
                        .plus(&d)
                        .plus(&self.open_used[m]);
                    if let Some((resource, used, capacity)) = over(&after, cap) {
                        return Err(overflow(job.id, mid, (resource, used, capacity), now, s));
                    }
                }
            }
        }
        for seg in &segments {
            for &(mid, t) in &seg.placement {
                let m = self.inst.machine_position(mid).unwrap_or(usize::MAX);
                let d = demand(job, t);
                for s in seg.slots.clone() {
                    self.reserved[m][s as usize] = self.reserved[m][s as usize].plus(&d);
                }
            }
            self.plan_slots.insert(seg.slots.start);
            self.plan_slots.insert(seg.slots.end);
        }
        let run = &mut self.runs[p];
        run.admitted = true;
        run.plan = Some(Plan { segments });
        self.plan_jobs.push(p);
        if let Some(slot) = self.on_boundary() {
            self.apply_plan_of(p, slot)?;
        }
        Ok(())
    }

    /// Releases the rest of job `p`'s plan from the ledger.
    fn drop_plan(&mut self, p: usize) {
        let Some(plan) = self.runs[p].plan.take() else {
            return;
        };
        let job = &self.inst.jobs()[p];
        let from = self.next_boundary_slot();
        for seg in &plan.segments {
            for &(mid, t) in &seg.placement {
                let Some(m) = self.inst.machine_position(mid) else {
                    continue;
                };
                let d = demand(job, t);
                for s in seg.slots.start.max(from)..seg.slots.end {
                    self.reserved[m][s as usize] = self.reserved[m][s as usize].minus(&d);
                }
            }
        }
        self.plan_jobs.retain(|&q| q != p);
    }

    /// Switches every plan to its allocation for `slot`. The plans were
    /// checked together for every slot when they were reserved, but not in
    /// any order of transition: a job moving onto a server another job
    /// leaves in the same boundary would see that job's old load. So every
    /// running plan job whose placement changes is released first, and the
    /// new placements are taken after (a job that keeps running keeps its
    /// time since its last status change).
    fn apply_plans(&mut self, slot: u32) -> crate::Result<()> {
        let jobs = self.plan_jobs.clone();
        let mut released = Vec::new();
        for &p in &jobs {
            let run = &self.runs[p];
            let Some(plan) = &run.plan else { continue };
            if run.status != JobStatus::Running {
                continue;
            }
            let next = plan
                .segments
                .iter()
                .find(|s| s.slots.contains(&slot))
                .map(|s| {
                    s.placement
                        .iter()
                        .filter(|(_, t)| t.workers > 0 || t.ps > 0)
                        .copied()
                        .collect::<Vec<_>>()
                });
            if next.is_none_or(|n| !same_placement(&run.placement, &n)) {
                released.push((p, run.since_s, run.last_run_s));
                self.set_allocation_unchecked_pause(p);
            }
        }
        for &p in &jobs {
            self.apply_plan_of(p, slot)?;
        }
        for (p, since_s, last_run_s) in released {
            let run = &mut self.runs[p];
            if run.status == JobStatus::Running {
                run.since_s = since_s;
                run.last_run_s = last_run_s;
            }
        }
        Ok(())
    }

    fn apply_plan_of(&mut self, p: usize, slot: u32) -> crate::Result<()> {
        let Some(plan) = &self.runs[p].plan else {
            return Ok(());
        };
        let seg = plan
            .segments
            .iter()
            .find(|s| s.slots.contains(&slot))
            .cloned();
        let over_plan = plan.segments.iter().all(|s| s.slots.end <= slot);
        match seg {
            Some(seg) => self.set_allocation(p, seg.placement, seg.gpus, true)?,
            None => {
                if self.runs[p].status == JobStatus::Running {
                    // A planned gap or the plan's end: the plan pauses it.
                    self.set_allocation_unchecked_pause(p);
                }
            }
        }
        if over_plan {
            self.runs[p].plan = None;
            self.plan_jobs.retain(|&q| q != p);
        }
        Ok(())
    }

    /// Pauses a job as its plan says (no preemption rules: the plan was
    /// checked against the job's discipline when it was made).
    /// Logs job `p`'s current allocation as ending now.
    fn close_record(&mut self, p: usize) {
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

    fn set_allocation_unchecked_pause(&mut self, p: usize) {
        self.close_record(p);
        let load = std::mem::take(&mut self.runs[p].load);
        for &(m, _, ref d) in &load {
            self.used[m] = self.used[m].minus(d);
            let cap = &self.inst.cluster().machines[m].capacity;
            self.free[m] = cap.minus(&self.used[m]);
        }
        if let Some(ids) = self.runs[p].gpus.take() {
            for g in ids {
                if let Some(m) = self.inst.machine_position(g.machine) {
                    self.gpu_owner[m][g.index as usize] = None;
                }
            }
        }
        if self.runs[p].multi_server {
            self.update_contention(p, false, &load);
        }
        self.gpus_used -= self.runs[p].gpus_held;
        let now = self.now;
        let run = &mut self.runs[p];
        run.gpus_held = 0.0;
        run.placement.clear();
        run.multi_server = false;
        run.speed = None;
        run.last_run_s = now - run.since_s;
        run.since_s = now;
        run.status = JobStatus::Paused;
        run.reconfig_left_s = 0.0;
        self.running.retain(|&q| q != p);
        self.speeds_dirty = true;
    }

    fn refresh_speeds(&mut self) -> crate::Result<()> {
        if !self.speeds_dirty {
            return Ok(());
        }
        self.speeds_dirty = false;
        for i in 0..self.running.len() {
            let p = self.running[i];
            let run = &self.runs[p];
            if run.speed.is_some() && !run.multi_server {
                continue;
            }
            let contenders = if run.multi_server {
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
            )?;
            self.runs[p].speed = Some(s);
        }
        Ok(())
    }

    fn next_completion(&self) -> Option<f64> {
        if self.opts.progress == ProgressMode::Floor {
            return None;
        }
        self.running
            .iter()
            .filter_map(|&p| {
                let r = &self.runs[p];
                r.speed
                    .map(|s| self.now + r.reconfig_left_s + r.remaining / s.rate())
            })
            .min_by(f64::total_cmp)
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

    /// Moves time forward to `t`, crediting progress and GPU-seconds.
    fn advance_to(&mut self, t: f64) {
        let dt = t - self.now;
        if dt <= 0.0 {
            self.now = t.max(self.now);
            return;
        }
        let mode = self.opts.progress;
        for &p in &self.running {
            let r = &mut self.runs[p];
            r.gpu_seconds += r.gpus_held * dt;
            let eff = (dt - r.reconfig_left_s).max(0.0);
            r.reconfig_left_s = (r.reconfig_left_s - dt).max(0.0);
            let Some(s) = r.speed else { continue };
            let done = iterations_in(eff, s.tau_s, mode) * s.work_per_iteration;
            r.remaining = (r.remaining - done).max(0.0);
        }
        self.now = t;
    }

    fn collect_completions(&mut self) -> Vec<usize> {
        let mut done = Vec::new();
        for &p in &self.running {
            let r = &self.runs[p];
            if r.remaining <= 1e-9 * r.total.max(1.0) {
                done.push(p);
            }
        }
        for &p in &done {
            let had_plan = self.runs[p].plan.is_some();
            if had_plan {
                self.drop_plan(p);
            }
            self.set_allocation_unchecked_pause(p);
            let now = self.now;
            let r = &mut self.runs[p];
            r.remaining = 0.0;
            r.status = JobStatus::Completed;
            r.finish_s = Some(now);
            self.active.retain(|&q| q != p);
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

    fn finish(mut self, policy: String, start_s: f64, stalled: bool) -> SimResult {
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

fn same_placement(a: &[(MachineId, Tasks)], b: &[(MachineId, Tasks)]) -> bool {
    schedule::normalised_placement(a) == schedule::normalised_placement(b)
}

fn sorted(g: &Option<Vec<GpuId>>) -> Option<Vec<GpuId>> {
    g.as_ref().map(|v| {
        let mut v = v.clone();
        v.sort();
        v
    })
}
