//! Decisions as transactions.
//!
//! All actions of one answer of the policy (and all plan switches at one
//! slot boundary) are applied as one batch: every changed job's old
//! allocation is released, then the new ones are checked together —
//! capacity now per machine and resource, GPU ids, and the plans' future
//! slots — and either all are committed or none (the state is unchanged
//! and the error names the first job, in action order, whose addition
//! overflows). So jobs may swap machines, or move in a cycle, in one
//! decision; a moved job counts one reconfiguration and no preemption.

use std::collections::{BTreeMap, HashMap};

use crate::model::{Elasticity, FIT_TOL, GpuId, JobId, MachineId, Resources, units};
use crate::schedule::{
    self, Configuration, JobSchedule, Placement, Segment, Tasks, charged_demand,
};

use super::engine::Engine;
use super::ledger::{self, Steps};
use super::state::{JobStatus, Plan, current_slot};
use super::work;
use super::{Action, SimError};

/// What a change does besides replacing the job's allocation.
#[derive(Debug)]
enum Kind {
    /// A policy's allocation, pause or preemption.
    Set,
    /// The policy turns the job away.
    Reject,
    /// The policy commits a plan (the allocation is the plan's current
    /// segment on a boundary, else empty).
    Reserve(Vec<Segment>),
    /// A plan switches at a slot boundary (pauses are not preemptions).
    Plan,
}

/// One job's change in a batch.
#[derive(Debug)]
struct Change {
    p: usize,
    /// Tasks per machine, without empty entries.
    placement: Placement,
    gpus: Option<Vec<GpuId>>,
    /// The configuration (`None` for an empty placement).
    config: Option<Configuration>,
    /// Machine positions and charged demand of `placement` in `config`.
    load: Vec<(usize, Tasks, Resources)>,
    from_plan: bool,
    /// Whether the job's plan, if any, is given up.
    drops_plan: bool,
    kind: Kind,
}

/// The machine of a LOCAL configuration: what tells configurations apart
/// for the simulator (none and DISTRIBUTED are charged and run alike).
fn local_of(c: Option<Configuration>) -> Option<MachineId> {
    c.and_then(|c| c.local_machine())
}

fn sorted(g: &Option<Vec<GpuId>>) -> Option<Vec<GpuId>> {
    g.as_ref().map(|v| {
        let mut v = v.clone();
        v.sort();
        v
    })
}

/// The error of an overflow: `job` on `machine` at `slot`.
fn overflow(
    job: JobId,
    machine: MachineId,
    (slot, resource, used, capacity): (u32, crate::model::ResourceKind, f64, f64),
    time_s: f64,
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

impl Engine<'_> {
    fn position(&self, job: JobId) -> Result<usize, SimError> {
        let time_s = self.now;
        let p = self
            .inst
            .job_position(job)
            .ok_or(SimError::UnknownJob { job, time_s })?;
        match self.runs[p].status {
            JobStatus::NotArrived => Err(SimError::NotArrived {
                job,
                time_s,
                arrival_s: self.inst.jobs()[p].arrival_s,
            }),
            JobStatus::Completed => Err(SimError::JobClosed {
                job,
                time_s,
                state: "completed",
            }),
            JobStatus::Rejected => Err(SimError::JobClosed {
                job,
                time_s,
                state: "rejected",
            }),
            _ => Ok(p),
        }
    }

    /// Applies one answer of the policy as a transaction (see the module
    /// docs). When several actions name the same job, the last one counts,
    /// except that nothing may follow a `Reject`.
    pub(super) fn apply_decision(&mut self, actions: Vec<Action>) -> crate::Result<()> {
        if actions.is_empty() {
            return Ok(());
        }
        let mut index: HashMap<usize, usize> = HashMap::with_capacity(actions.len());
        let mut picked: Vec<Option<(usize, Action)>> = Vec::with_capacity(actions.len());
        for a in actions {
            let p = self.position(a.job())?;
            if let Some(k) = index.insert(p, picked.len()) {
                if matches!(picked[k], Some((_, Action::Reject { .. }))) {
                    return Err(SimError::JobClosed {
                        job: a.job(),
                        time_s: self.now,
                        state: "rejected",
                    }
                    .into());
                }
                picked[k] = None;
            }
            picked.push(Some((p, a)));
        }
        let mut changes = Vec::with_capacity(picked.len());
        for (p, a) in picked.into_iter().flatten() {
            changes.push(match a {
                Action::SetAllocation {
                    placement,
                    gpus,
                    config,
                    ..
                } => self.open_change(p, &placement, (gpus, config), Kind::Set)?,
                Action::Preempt { .. } => {
                    self.open_change(p, &Placement::new(), (None, None), Kind::Set)?
                }
                Action::Reject { .. } => {
                    self.open_change(p, &Placement::new(), (None, None), Kind::Reject)?
                }
                Action::Reserve { segments, .. } => self.plan_change(p, segments)?,
            });
        }
        self.commit(changes)
    }

    /// A policy's allocation (empty: a pause) with its GPU ids and
    /// configuration, checked against the job's own rules: the
    /// per-allocation rules (LOCAL's shape included), non-preemption and
    /// rigidity.
    fn open_change(
        &self,
        p: usize,
        placement: &Placement,
        (gpus, config): (Option<Vec<GpuId>>, Option<Configuration>),
        kind: Kind,
    ) -> crate::Result<Change> {
        let job = &self.inst.jobs()[p];
        let run = &self.runs[p];
        let now = self.now;
        let placement = placement.non_empty();
        let was_running = run.status == JobStatus::Running;
        let gpus = if placement.is_empty() { None } else { gpus };
        let config = if placement.is_empty() { None } else { config };
        if placement.is_empty() {
            if was_running && !job.discipline.preemptible {
                return Err(SimError::NotPreemptible {
                    job: job.id,
                    time_s: now,
                }
                .into());
            }
        } else {
            schedule::check_configured_allocation(
                self.inst,
                job,
                &placement,
                gpus.as_deref(),
                config,
            )
            .map_err(|violation| SimError::InvalidAllocation {
                time_s: now,
                violation,
            })?;
            let same = run.placement.same_as(&placement) && sorted(&run.gpus) == sorted(&gpus);
            let moved = !(run.last_placement.same_as(&placement)
                && sorted(&run.last_gpus) == sorted(&gpus));
            // A rigid job runs the same placement (and GPU set) in every
            // slot it runs, also after a pause (the gang rule of `verify`).
            if job.discipline.elasticity == Elasticity::Rigid
                && !same
                && (was_running || run.start_s.is_some() && moved)
            {
                return Err(SimError::RigidResize {
                    job: job.id,
                    time_s: now,
                }
                .into());
            }
        }
        Ok(Change {
            p,
            load: self.load_of(p, &placement, config),
            placement,
            gpus,
            config,
            from_plan: false,
            drops_plan: run.plan.is_some(),
            kind,
        })
    }

    /// A plan, checked against the job's rules; its allocation now is its
    /// segment for the slot in progress (the job then runs from now).
    fn plan_change(&self, p: usize, segments: Vec<Segment>) -> crate::Result<Change> {
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
        // A plan may use the slot in progress: its job runs from now.
        let Some(first) = current_slot(now, self.slot_s) else {
            return Err(bad("no slot is left at the current time".into()));
        };
        if let Some(s) = segments.iter().find(|s| s.slots.start < first) {
            return Err(bad(format!(
                "segment {:?} starts before slot {first}, the slot in progress",
                s.slots
            )));
        }
        let js = JobSchedule {
            job: job.id,
            admitted: true,
            segments,
        };
        schedule::check_job_schedule(self.inst, &js).map_err(|violation| {
            SimError::InvalidAllocation {
                time_s: now,
                violation,
            }
        })?;
        let current = js.segments.iter().find(|s| s.slots.contains(&first));
        let placement = current.map(|s| s.placement.non_empty()).unwrap_or_default();
        let gpus = current.and_then(|s| s.gpus.clone());
        let config = current.and_then(|s| s.config);
        Ok(Change {
            p,
            load: self.load_of(p, &placement, config),
            placement,
            gpus,
            config,
            from_plan: true,
            drops_plan: false,
            kind: Kind::Reserve(js.segments),
        })
    }

    /// Machine positions and charged demand of job `p`'s placement run in
    /// `config` (the machines were checked to exist).
    fn load_of(
        &self,
        p: usize,
        placement: &Placement,
        config: Option<Configuration>,
    ) -> Vec<(usize, Tasks, Resources)> {
        let job = &self.inst.jobs()[p];
        let spread = placement.worker_machines();
        placement
            .iter()
            .filter_map(|&(m, t)| {
                let pos = self.inst.machine_position(m)?;
                Some((pos, t, charged_demand(job, t, config, spread)))
            })
            .collect()
    }

    /// Every slot of a plan with its machine position and charged demand
    /// (a LOCAL segment's tasks are charged no NIC bandwidth; a reserving
    /// ring's segment on several machines charges its reservation on each).
    fn plan_loads<'p>(
        &'p self,
        p: usize,
        segments: &'p [Segment],
    ) -> impl Iterator<Item = (usize, std::ops::Range<u32>, Resources)> + 'p {
        let job = &self.inst.jobs()[p];
        segments.iter().flat_map(move |seg| {
            let spread = seg.placement.worker_machines();
            seg.placement.iter().filter_map(move |&(mid, t)| {
                let m = self.inst.machine_position(mid)?;
                (!t.is_empty()).then(|| {
                    let d = charged_demand(job, t, seg.config, spread);
                    (m, seg.slots.clone(), d)
                })
            })
        })
    }

    /// Checks a batch: every changed job's old allocation released, then
    /// the new ones added in order — capacity now, GPU ids, and open
    /// allocations plus plans in every future slot. Returns the plan
    /// ledger of the machines it changes; changes nothing.
    fn check(&self, changes: &[Change]) -> crate::Result<BTreeMap<usize, Steps>> {
        let machines = &self.inst.cluster().machines;
        let now = self.now;
        let from = self.next_boundary_slot();
        let mut used: HashMap<usize, Resources> = HashMap::new();
        let mut open: HashMap<usize, Resources> = HashMap::new();
        let mut owners: HashMap<GpuId, Option<usize>> = HashMap::new();
        let mut steps: BTreeMap<usize, Steps> = BTreeMap::new();
        for c in changes {
            let run = &self.runs[c.p];
            for &(m, _, ref d) in &run.load {
                let u = used.entry(m).or_insert(self.used[m]);
                *u = u.minus(d);
                if !run.from_plan {
                    let o = open.entry(m).or_insert(self.open_used[m]);
                    *o = o.minus(d);
                }
            }
            for g in run.gpus.iter().flatten() {
                owners.insert(*g, None);
            }
            if let (true, Some(plan), Some(from)) = (c.drops_plan, &run.plan, from) {
                for (m, slots, d) in self.plan_loads(c.p, &plan.segments) {
                    let s = steps.entry(m).or_insert_with(|| self.reserved[m].clone());
                    ledger::add(s, slots.start.max(from)..slots.end, &d, true);
                }
            }
        }
        for c in changes {
            let job = self.inst.jobs()[c.p].id;
            let mut grown: Vec<usize> = Vec::new();
            for &(m, _, ref d) in &c.load {
                let u = used.entry(m).or_insert(self.used[m]);
                *u = u.plus(d);
                if let Some((k, total, cap)) = excess(u, &machines[m].capacity) {
                    let slot = units::slot_of(now, self.slot_s);
                    return Err(overflow(job, machines[m].id, (slot, k, total, cap), now));
                }
                if !c.from_plan {
                    let o = open.entry(m).or_insert(self.open_used[m]);
                    *o = o.plus(d);
                    grown.push(m);
                }
            }
            for g in c.gpus.iter().flatten() {
                let holder = match owners.get(g) {
                    Some(h) => *h,
                    None => self.gpu_owner.get(g).copied(),
                };
                if let Some(h) = holder.filter(|&h| h != c.p) {
                    return Err(SimError::GpuBusy {
                        job,
                        machine: g.machine,
                        index: g.index,
                        holder: self.inst.jobs()[h].id,
                        time_s: now,
                    }
                    .into());
                }
                owners.insert(*g, Some(c.p));
            }
            if let Kind::Reserve(segments) = &c.kind {
                for (m, slots, d) in self.plan_loads(c.p, segments) {
                    let s = steps.entry(m).or_insert_with(|| self.reserved[m].clone());
                    ledger::add(s, slots, &d, false);
                    grown.push(m);
                }
            }
            let Some(from) = from else { continue };
            grown.sort_unstable();
            grown.dedup();
            for m in grown {
                let s = steps.get(&m).unwrap_or(&self.reserved[m]);
                let base = open.get(&m).unwrap_or(&self.open_used[m]);
                if let Some(hit) = ledger::first_excess(s, from, base, &machines[m].capacity) {
                    return Err(overflow(job, machines[m].id, hit, now));
                }
            }
        }
        Ok(steps)
    }

    /// Checks and applies a batch of changes (see the module docs).
    fn commit(&mut self, changes: Vec<Change>) -> crate::Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let steps = self.check(&changes)?;
        for (m, s) in steps {
            self.reserved[m] = s;
        }
        for c in &changes {
            if c.drops_plan {
                self.runs[c.p].plan = None;
                self.plan_jobs.retain(|&q| q != c.p);
            }
            self.unload(c.p);
        }
        let mut stopped = Vec::new();
        let mut rejected = Vec::new();
        for c in changes {
            self.settle(c, &mut stopped, &mut rejected);
        }
        if !stopped.is_empty() {
            self.running.retain(|q| !stopped.contains(q));
        }
        if !rejected.is_empty() {
            self.active.retain(|q| !rejected.contains(q));
        }
        self.speeds_dirty = true;
        Ok(())
    }

    /// Removes job `p`'s current allocation from the cluster's totals (the
    /// job's own record is left as is).
    fn unload(&mut self, p: usize) {
        let run = &self.runs[p];
        let load = run.load.clone();
        let from_plan = run.from_plan;
        for &(m, _, ref d) in &load {
            self.used[m] = self.used[m].minus(d);
            if !from_plan {
                self.open_used[m] = self.open_used[m].minus(d);
            }
            let free = self.inst.cluster().machines[m]
                .capacity
                .minus(&self.used[m]);
            self.free_totals.replace(&self.free[m], &free);
            self.free[m] = free;
        }
        for g in self.runs[p].gpus.iter().flatten() {
            if self.gpu_owner.get(g) == Some(&p) {
                self.gpu_owner.remove(g);
            }
        }
        if self.runs[p].contends {
            self.update_contention(false, &load);
        }
        self.gpus_used -= self.runs[p].gpus_held;
    }

    /// Adds job `p`'s current allocation to the cluster's totals.
    fn reload(&mut self, p: usize) {
        let run = &self.runs[p];
        let load = run.load.clone();
        let from_plan = run.from_plan;
        for &(m, _, ref d) in &load {
            self.used[m] = self.used[m].plus(d);
            if !from_plan {
                self.open_used[m] = self.open_used[m].plus(d);
            }
            let free = self.inst.cluster().machines[m]
                .capacity
                .minus(&self.used[m]);
            self.free_totals.replace(&self.free[m], &free);
            self.free[m] = free;
        }
        if let Some(ids) = &self.runs[p].gpus {
            for g in ids {
                self.gpu_owner.insert(*g, p);
            }
        }
        if self.runs[p].contends {
            self.update_contention(true, &load);
        }
        self.gpus_used += self.runs[p].gpus_held;
    }

    /// Job `p` gives up its allocation for good (it completed): the totals,
    /// the log, and the job's allocation fields.
    pub(super) fn release(&mut self, p: usize) {
        self.unload(p);
        self.close_record(p);
        let run = &mut self.runs[p];
        run.load.clear();
        run.placement.clear();
        run.tasks = Tasks::default();
        run.gpus = None;
        run.config = None;
        run.gpus_held = 0.0;
        run.contends = false;
        run.speed = None;
        self.forget_finish(p);
        self.speeds_dirty = true;
    }

    /// Gives up the rest of job `p`'s plan (slots from the next boundary).
    pub(super) fn drop_plan(&mut self, p: usize) {
        let Some(plan) = self.runs[p].plan.take() else {
            return;
        };
        if let Some(from) = self.next_boundary_slot() {
            let loads: Vec<_> = self.plan_loads(p, &plan.segments).collect();
            for (m, slots, d) in loads {
                ledger::add(
                    &mut self.reserved[m],
                    slots.start.max(from)..slots.end,
                    &d,
                    true,
                );
            }
        }
        self.plan_jobs.retain(|&q| q != p);
    }

    /// Gives job `c.p` its new allocation (its old one is already out of
    /// the totals) and updates its status and counters.
    fn settle(&mut self, c: Change, stopped: &mut Vec<usize>, rejected: &mut Vec<usize>) {
        let p = c.p;
        self.forget_finish(p);
        let now = self.now;
        let job = &self.inst.jobs()[p];
        let run = &self.runs[p];
        let was_running = run.status == JobStatus::Running;
        let same = run.placement.same_as(&c.placement)
            && sorted(&run.gpus) == sorted(&c.gpus)
            && local_of(run.config) == local_of(c.config);
        if !same {
            self.close_record(p);
        }
        let run = &mut self.runs[p];
        run.from_plan = c.from_plan;
        if !same {
            run.alloc_since_s = now;
            run.gpus_held = c.load.iter().map(|(_, _, d)| d.gpus).sum();
            if !c.placement.is_empty() {
                run.last_placement = c.placement.clone();
                run.last_gpus = c.gpus.clone();
            }
            run.contends = work::contends(job, c.placement.worker_machines());
            run.tasks = c.placement.total();
            run.placement = c.placement;
            run.gpus = c.gpus;
            run.config = c.config;
            run.load = c.load;
            run.speed = None;
            if run.placement.is_empty() {
                if was_running {
                    if !matches!(c.kind, Kind::Plan) {
                        run.preemptions = run.preemptions.saturating_add(1);
                    }
                    run.last_run_s = now - run.since_s;
                    run.since_s = now;
                    run.status = JobStatus::Paused;
                    run.reconfig_left_s = 0.0;
                    stopped.push(p);
                }
            } else {
                if was_running || run.start_s.is_some() {
                    // A changed allocation or a resume: checkpoint and restart.
                    if job.reconfiguration_s > 0.0 {
                        run.reconfig_left_s = job.reconfiguration_s;
                    }
                    run.reconfigurations = run.reconfigurations.saturating_add(1);
                }
                if !was_running {
                    run.since_s = now;
                    run.status = JobStatus::Running;
                    self.running.push(p);
                }
                run.start_s.get_or_insert(now);
                run.admitted = true;
            }
        }
        match c.kind {
            Kind::Reject => {
                self.runs[p].status = JobStatus::Rejected;
                rejected.push(p);
            }
            Kind::Reserve(segments) => {
                for seg in &segments {
                    self.plan_slots.insert(seg.slots.start);
                    self.plan_slots.insert(seg.slots.end);
                }
                let run = &mut self.runs[p];
                run.admitted = true;
                run.plan = Some(Plan { segments });
                self.plan_jobs.push(p);
            }
            Kind::Set | Kind::Plan => {}
        }
        self.reload(p);
    }

    /// Switches every plan to its allocation for `slot`, as one batch: a
    /// job that leaves a machine and one that takes its place at the same
    /// boundary never meet. A job whose placement stays keeps running
    /// untouched; a plan's gap or end pauses the job (not a preemption).
    /// Returns whether some allocation changed.
    pub(super) fn apply_plans(&mut self, slot: u32) -> crate::Result<bool> {
        let mut changes = Vec::new();
        let mut over = Vec::new();
        for &p in &self.plan_jobs {
            let run = &self.runs[p];
            let Some(plan) = &run.plan else { continue };
            if plan.segments.iter().all(|s| s.slots.end <= slot) {
                over.push(p);
            }
            let seg = plan.segments.iter().find(|s| s.slots.contains(&slot));
            let placement = seg.map(|s| s.placement.non_empty()).unwrap_or_default();
            let gpus = seg.and_then(|s| s.gpus.clone());
            let gpus = if placement.is_empty() { None } else { gpus };
            let config = seg.and_then(|s| s.config).filter(|_| !placement.is_empty());
            if run.placement.same_as(&placement)
                && sorted(&run.gpus) == sorted(&gpus)
                && local_of(run.config) == local_of(config)
            {
                continue;
            }
            changes.push(Change {
                p,
                load: self.load_of(p, &placement, config),
                placement,
                gpus,
                config,
                from_plan: true,
                drops_plan: false,
                kind: Kind::Plan,
            });
        }
        let changed = !changes.is_empty();
        self.commit(changes)?;
        for p in over {
            self.runs[p].plan = None;
            self.plan_jobs.retain(|&q| q != p);
        }
        Ok(changed)
    }
}

fn excess(used: &Resources, cap: &Resources) -> Option<(crate::model::ResourceKind, f64, f64)> {
    used.first_excess(cap, FIT_TOL)
        .map(|k| (k, used.get(k), cap.get(k)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Architecture, Cluster, Instance, Job, PsJob, SyncMode};
    use crate::sim::SimOptions;

    fn job(id: u32) -> Job {
        let ps = PsJob {
            epochs: 1,
            data_chunks: 1,
            minibatches_per_chunk: 100,
            minibatch_compute_s: 1.0,
            gradient_bytes: 0.0,
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(1.0)
                .memory(1e9)
                .nic(1e9),
            ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
            max_workers: 1,
            max_ps: 1,
            ps_at_most_workers: true,
            sync: SyncMode::Synchronous,
            layers: None,
        };
        Job::new(JobId(id), 0.0, Architecture::ParameterServer(ps))
    }

    fn on(job: u32, m: u32) -> Action {
        Action::run(JobId(job), vec![(MachineId(m), Tasks::new(1, 1))])
    }

    /// Everything a batch may change.
    fn snapshot(e: &Engine<'_>) -> String {
        format!(
            "{:?}",
            (
                &e.runs,
                &e.used,
                &e.free,
                &e.open_used,
                &e.reserved,
                &e.gpu_owner,
                &e.running,
                &e.active,
                &e.plan_jobs,
                &e.plan_slots,
                &e.contention,
                &e.free_totals,
            ),
        ) + &format!("{:?}", (e.gpus_used, &e.log))
    }

    #[test]
    fn a_refused_batch_changes_nothing() {
        let cap = Resources::zero()
            .gpus(1.0)
            .cpu_cores(8.0)
            .memory(1e10)
            .nic(1e10);
        let cluster = Cluster::homogeneous(2, cap, 1e10);
        let inst = Instance::new(cluster, (0..3).map(job).collect(), 10.0, 100).unwrap();
        let opts = SimOptions::default();
        let mut e = Engine::new(&inst, &opts);
        for p in 0..3 {
            e.arrive(p);
        }
        e.now = 5.0;
        // Job 0 runs on machine 0; job 2 plans machine 1 for slot 5.
        let plan = vec![Segment::new(5..6, vec![(MachineId(1), Tasks::new(1, 1))])];
        e.apply_decision(vec![
            on(0, 0),
            Action::Reserve {
                job: JobId(2),
                segments: plan,
            },
        ])
        .unwrap();
        let before = snapshot(&e);
        // Job 1 on machine 1 from now on meets the plan in slot 5.
        let err = e.apply_decision(vec![on(1, 1)]).unwrap_err();
        assert!(
            matches!(
                err,
                crate::Error::Sim(SimError::OverAllocation {
                    job: JobId(1),
                    machine: MachineId(1),
                    slot: 5,
                    ..
                })
            ),
            "{err}"
        );
        assert_eq!(snapshot(&e), before);
        // A move, the plan given up for an allocation, and one job too many.
        let err = e
            .apply_decision(vec![on(2, 0), on(0, 1), on(1, 1)])
            .unwrap_err();
        assert!(
            matches!(
                err,
                crate::Error::Sim(SimError::OverAllocation {
                    job: JobId(1),
                    machine: MachineId(1),
                    slot: 0,
                    ..
                })
            ),
            "{err}"
        );
        assert_eq!(snapshot(&e), before);
        // Without the extra job the batch is applied and the plan released.
        e.apply_decision(vec![on(2, 0), on(0, 1)]).unwrap();
        assert!(e.reserved.iter().all(|s| s.is_empty()));
        assert_eq!(e.runs[2].placement, vec![(MachineId(0), Tasks::new(1, 1))]);
        assert_eq!(e.runs[0].placement, vec![(MachineId(1), Tasks::new(1, 1))]);
        assert_eq!((e.runs[0].reconfigurations, e.runs[0].preemptions), (1, 0));
    }
}
