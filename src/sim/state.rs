//! The simulator's per-job state, shared by the engine that updates it and
//! the view a policy reads it through.

use crate::model::{GpuId, Job, Resources};
use crate::schedule::{Configuration, Placement, Segment, Tasks};

use super::work::{self, Speed};

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    /// Not arrived yet (policies never see such jobs in
    /// [`SimView::active`](super::SimView::active)).
    NotArrived,
    /// Arrived and has never held resources.
    Waiting,
    /// Holds a non-empty allocation (possibly still reconfiguring).
    Running,
    /// Ran before, holds nothing now.
    Paused,
    /// Finished its workload.
    Completed,
    /// Rejected by the policy.
    Rejected,
}

/// A job's plan, in machine positions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub(crate) segments: Vec<Segment>,
}

/// The simulator's per-job state.
///
/// `repr(C)` keeps the declaration order: the fields that the event loop
/// reads for every running job at every step (and policies for every
/// active job at every event) come first, so they share a cache line or
/// two instead of being spread over the whole record.
#[derive(Debug, Clone, PartialEq)]
#[repr(C)]
pub(crate) struct JobRun {
    pub(crate) speed: Option<Speed>,
    pub(crate) remaining: f64,
    pub(crate) total: f64,
    pub(crate) reconfig_left_s: f64,
    pub(crate) gpu_seconds: f64,
    pub(crate) gpus_held: f64,
    /// `placement.total()`, kept with `placement` (set wherever it is).
    pub(crate) tasks: Tasks,
    /// `Some((t, f))`: the engine's `finish_at` of the job was `f` when the
    /// time was `t`. It reads the time and the job's `remaining`,
    /// `reconfig_left_s` and `speed`; those fields change only when the
    /// time moves forward (so the entry no longer matches) or where the
    /// engine clears the entry (`Engine::forget_finish`: a change of
    /// allocation, a release, a new speed, a completion). So an entry whose
    /// `t` is the current time is what `finish_at` computes again, bit for
    /// bit: the completion check, the next event's time and the advance
    /// that follows share one computation per running job.
    pub(crate) finish_memo: Option<(f64, Option<f64>)>,
    pub(crate) status: JobStatus,
    /// Whether the current allocation is a ring that counts in (and
    /// suffers from) contention: a multi-server ring without a reserved
    /// bandwidth.
    pub(crate) contends: bool,
    /// Whether the current allocation came from the plan.
    pub(crate) from_plan: bool,
    pub(crate) admitted: bool,
    pub(crate) placement: Placement,
    pub(crate) since_s: f64,
    pub(crate) last_run_s: f64,
    pub(crate) plan: Option<Plan>,
    /// Machine positions and demand of the current allocation.
    pub(crate) load: Vec<(usize, Tasks, Resources)>,
    pub(crate) gpus: Option<Vec<GpuId>>,
    /// Configuration of the current allocation (`None` when empty).
    pub(crate) config: Option<Configuration>,
    pub(crate) start_s: Option<f64>,
    pub(crate) finish_s: Option<f64>,
    pub(crate) preemptions: u32,
    pub(crate) reconfigurations: u32,
    /// Start of the current allocation.
    pub(crate) alloc_since_s: f64,
    /// The last non-empty allocation (a rigid job may only resume on it).
    pub(crate) last_placement: Placement,
    /// GPU ids of the last non-empty allocation.
    pub(crate) last_gpus: Option<Vec<GpuId>>,
}

impl JobRun {
    /// A job not arrived yet, with its work to train (its convergence
    /// iterations when `stop_at_convergence` and it has them).
    pub(super) fn new(job: &Job, stop_at_convergence: bool) -> Self {
        let total = work::work_to_train(job, stop_at_convergence);
        JobRun {
            status: JobStatus::NotArrived,
            placement: Placement::new(),
            load: Vec::new(),
            gpus: None,
            config: None,
            plan: None,
            from_plan: false,
            total,
            remaining: total,
            speed: None,
            finish_memo: None,
            contends: false,
            reconfig_left_s: 0.0,
            start_s: None,
            finish_s: None,
            since_s: job.arrival_s,
            last_run_s: 0.0,
            gpu_seconds: 0.0,
            gpus_held: 0.0,
            tasks: Tasks::default(),
            preemptions: 0,
            reconfigurations: 0,
            admitted: false,
            alloc_since_s: 0.0,
            last_placement: Placement::new(),
            last_gpus: None,
        }
    }

    /// Whether the job runs a worker on machine `m` as a contending ring
    /// (multi-server, no reserved bandwidth).
    pub fn contends_on(&self, m: usize) -> bool {
        self.contends && self.load.iter().any(|&(p, t, _)| p == m && t.workers > 0)
    }
}

/// Slots within this many slot lengths of a boundary count as on it (user
/// times such as `0.3` with slots of `0.1`); an absolute tolerance, so it
/// never widens with the magnitude of the time.
const BOUNDARY_TOL_SLOTS: f64 = 1e-9;

/// The slot starting at `now`, if `now` is on a slot boundary.
pub(crate) fn boundary_slot(now: f64, slot_s: f64) -> Option<u32> {
    let x = now / slot_s;
    let r = x.round();
    if r.is_nan() || r < 0.0 || r > f64::from(u32::MAX) {
        return None;
    }
    (r * slot_s == now || (x - r).abs() <= BOUNDARY_TOL_SLOTS).then_some(r as u32)
}

/// The first slot boundary strictly after `now` (`None` past the last slot
/// index).
pub(crate) fn next_boundary_slot(now: f64, slot_s: f64) -> Option<u32> {
    let mut s: u64 = match boundary_slot(now, slot_s) {
        Some(r) => u64::from(r) + 1,
        None => {
            let x = (now / slot_s).floor();
            if x.is_nan() || x >= f64::from(u32::MAX) {
                return None;
            }
            x.max(0.0) as u64 + 1
        }
    };
    // Rounding may put `s·slot` at or before now: take the next one.
    while s <= u64::from(u32::MAX) && s as f64 * slot_s <= now {
        s += 1;
    }
    u32::try_from(s).ok()
}

/// The first slot a plan committed at `now` may use: the current one when
/// `now` is on its boundary, else the next.
pub(crate) fn first_plannable_slot(now: f64, slot_s: f64) -> Option<u32> {
    boundary_slot(now, slot_s).or_else(|| next_boundary_slot(now, slot_s))
}

/// The slot in progress at `now` (the one starting at `now` on a
/// boundary): the first slot the simulator accepts in a plan committed at
/// `now`, whose job then runs from `now` for the rest of that slot.
pub(crate) fn current_slot(now: f64, slot_s: f64) -> Option<u32> {
    boundary_slot(now, slot_s).or_else(|| {
        let x = (now / slot_s).floor();
        (x >= 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32)
    })
}
