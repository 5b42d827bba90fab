//! One shared cluster state for schedulers that decide job by job: what
//! every plan and every outside use holds on every machine, slot by slot,
//! in the model's SI units, with GPU ids.
//!
//! A [`ClusterState`] is built from a [`Cluster`] and one slot length.
//! Time is seconds since the state's start and never decreases
//! ([`advance`](ClusterState::advance)); slot `t` covers
//! `[t·len, (t+1)·len)`. Everything that holds capacity is a [`Holder`]:
//!
//! * a job's plan, committed with [`commit_job`](ClusterState::commit_job)
//!   from its schedule segments, each task charged as
//!   [`schedule::verify`](crate::schedule::verify) charges it (its demand,
//!   a ring's reserved bandwidth, no NIC under LOCAL). Segments without GPU
//!   ids get the lowest free ids of each machine when the GPU count there
//!   is whole;
//! * outside usage ([`record_usage`](ClusterState::record_usage)): a
//!   machine, a time range and resources used by something no session
//!   planned (a maintenance window, another scheduler's job).
//!
//! [`release`](ClusterState::release) frees a holder's cells from a time
//! on (a job that finished early, a cancelled one): the slot in progress
//! stays held. Cells before the current slot are dropped by `advance`, so
//! memory follows what is planned ahead, not the state's age. A use that
//! does not fit is refused with a typed error and changes nothing, so the
//! state never over-commits a machine by `verify`'s rules;
//! [`check`](ClusterState::check) recomputes every cell from the holds to
//! confirm it.
//!
//! ```
//! use dmlsched::model::*;
//! use dmlsched::schedule::{Segment, Tasks};
//! use dmlsched::state::ClusterState;
//!
//! let machine = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(64e9).nic(1.25e9);
//! let cluster = Cluster::homogeneous(1, machine, 10e9);
//! let mut state = ClusterState::new(&cluster, 60.0)?;
//! let ring = Job::new(JobId(0), 0.0, RarJob {
//!     workers: WorkerCounts::Fixed(3),
//!     worker: Resources::zero().gpus(1.0).cpu_cores(2.0),
//!     ..RarJob::default()
//! });
//! let plan = [Segment::new(0..10, [(MachineId(0), Tasks::new(3, 0))])];
//! let held = state.commit_job(&ring, &plan)?;
//! assert_eq!(held[0].gpus.as_ref().map(Vec::len), Some(3)); // ids assigned
//! assert_eq!(state.residual(MachineId(0), 5)?.gpus, 1.0);
//! state.advance(120.0)?; // now in slot 2
//! state.release(JobId(0).into(), 120.0)?; // finished early: slots 2.. are free
//! assert_eq!(state.residual(MachineId(0), 5)?.gpus, 4.0);
//! state.check()?;
//! # Ok::<(), dmlsched::Error>(())
//! ```

mod cells;
mod error;
#[cfg(feature = "serde")]
mod persist;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;

use crate::model::units::Num;
use crate::model::{Cluster, FIT_TOL, GpuId, Job, JobId, MachineId, Resources};
use crate::schedule::{Segment, charged_demand};

use cells::{MachineCells, Stamp};
pub use error::StateError;

/// The most slots a state stores ahead of its current slot: a use ending
/// later is refused (2²⁰ slots, two years of one-minute slots).
pub const MAX_SPAN_SLOTS: u32 = 1 << 20;

/// The most GPU ids one machine may have in a state (2²⁰; a cell stores
/// only the ids taken, so memory follows the GPUs in use).
pub const MAX_GPUS_PER_MACHINE: u32 = 1 << 20;

/// Times within this fraction of a slot of a slot boundary count as on it.
const BOUNDARY_TOL: f64 = 1e-9;

/// An outside usage's id, unique for the state's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct UsageId(pub u64);

impl fmt::Display for UsageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "usage {}", self.0)
    }
}

/// What holds capacity in a [`ClusterState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Holder {
    /// A job's plan.
    Job(JobId),
    /// Recorded outside usage.
    Usage(UsageId),
}

impl From<JobId> for Holder {
    fn from(job: JobId) -> Self {
        Holder::Job(job)
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Holder::Job(j) => j.fmt(f),
            Holder::Usage(u) => u.fmt(f),
        }
    }
}

/// One constant use of one machine over a range of slots.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Use {
    /// The machine.
    pub machine: MachineId,
    /// Slots `start..end`.
    pub slots: Range<u32>,
    /// The resources used in every slot of the range.
    pub resources: Resources,
    /// The GPU ids taken (empty when the GPU count is not whole or no id
    /// was asked for).
    #[cfg_attr(feature = "serde", serde(default))]
    pub gpus: Vec<GpuId>,
}

/// The shared state of one cluster: capacities, the holds of every plan
/// and outside usage, slot by slot from the current slot on. See the
/// [module documentation](self).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterState {
    cluster: Cluster,
    ids: Vec<MachineId>,
    capacity: Vec<Resources>,
    gpu_ids: Vec<u32>,
    slot_length_s: f64,
    now_s: f64,
    /// The first slot stored: the current slot.
    origin: u32,
    cells: Vec<MachineCells>,
    holds: BTreeMap<Holder, Vec<Use>>,
    /// Every job id ever committed (ids are unique for the state's life).
    seen: BTreeSet<JobId>,
    /// Every job id a session refused (so no other session takes it).
    refused: BTreeSet<JobId>,
    next_usage: u64,
    /// Bumped at every change of a cell: a session re-reads only the cells
    /// changed since the version it last read.
    version: Stamp,
}

impl ClusterState {
    /// An empty state of `cluster` at time 0 with slots of `slot_length_s`
    /// seconds.
    ///
    /// # Errors
    ///
    /// [`StateError::Invalid`] for a slot length that is not positive and
    /// finite, a cluster without machines, two machines with one id, or a
    /// machine with more than [`MAX_GPUS_PER_MACHINE`] GPUs.
    pub fn new(cluster: &Cluster, slot_length_s: f64) -> Result<Self, StateError> {
        let invalid = |reason: String| StateError::Invalid { reason };
        if !(slot_length_s.is_finite() && slot_length_s > 0.0) {
            return Err(invalid(format!(
                "slot length {} s is not positive and finite",
                Num(slot_length_s)
            )));
        }
        if cluster.machines.is_empty() {
            return Err(invalid("the cluster has no machine".into()));
        }
        crate::model::validate_cluster(cluster).map_err(|e| invalid(e.to_string()))?;
        let mut ids: Vec<MachineId> = cluster.machines.iter().map(|m| m.id).collect();
        ids.sort();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid(format!("{} appears twice", w[0])));
        }
        let mut gpu_ids = Vec::with_capacity(cluster.machines.len());
        for m in &cluster.machines {
            let g = m.capacity.gpus.max(0.0).floor();
            if g.is_nan() || g > f64::from(MAX_GPUS_PER_MACHINE) {
                return Err(invalid(format!(
                    "{} has {} GPUs (at most {MAX_GPUS_PER_MACHINE})",
                    m.id,
                    Num(m.capacity.gpus)
                )));
            }
            gpu_ids.push(g as u32);
        }
        Ok(ClusterState {
            cluster: cluster.clone(),
            ids: cluster.machines.iter().map(|m| m.id).collect(),
            capacity: cluster.machines.iter().map(|m| m.capacity).collect(),
            cells: gpu_ids.iter().map(|&g| MachineCells::new(g)).collect(),
            gpu_ids,
            slot_length_s,
            now_s: 0.0,
            origin: 0,
            holds: BTreeMap::new(),
            seen: BTreeSet::new(),
            refused: BTreeSet::new(),
            next_usage: 0,
            version: Stamp(0),
        })
    }

    /// The slot length, seconds.
    pub fn slot_length_s(&self) -> f64 {
        self.slot_length_s
    }

    /// The current time, seconds since the state's start.
    pub fn now_s(&self) -> f64 {
        self.now_s
    }

    /// The current slot: the first one a plan may use (cells before it are
    /// dropped).
    pub fn current_slot(&self) -> u32 {
        self.origin
    }

    /// The cluster the state was built from.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Checks `job` as an instance on the state's cluster checks it (its
    /// numbers, workload and utility, its allowed machines, that its
    /// smallest allocation fits a machine), whatever its `arrival_s`: a
    /// session's submission time stands for it.
    ///
    /// # Errors
    ///
    /// The [`ModelError`](crate::model::ModelError) that names what is
    /// wrong, as [`Instance::new`](crate::model::Instance::new) would.
    pub fn check_job(&self, job: &Job) -> Result<(), crate::model::ModelError> {
        let job = Job {
            arrival_s: 0.0,
            ..job.clone()
        };
        crate::model::validate_job(
            &job,
            &self.cluster,
            &|m| self.position(m).is_some(),
            f64::INFINITY,
        )
    }

    /// The machines, in the cluster's order.
    pub fn machines(&self) -> &[MachineId] {
        &self.ids
    }

    /// The capacity of `machine` (`None` for a machine the state does not
    /// have).
    pub fn capacity(&self, machine: MachineId) -> Option<Resources> {
        self.position(machine).map(|p| self.capacity[p])
    }

    /// The slot that holds time `time_s` (a time within a billionth of a
    /// slot below a boundary counts as on it).
    pub fn slot_at(&self, time_s: f64) -> u32 {
        let s = time_s / self.slot_length_s;
        let r = s.round();
        let s = if (s - r).abs() <= BOUNDARY_TOL {
            r
        } else {
            s.floor()
        };
        s.clamp(0.0, f64::from(u32::MAX)) as u32
    }

    /// The first slot boundary at or after `time_s`.
    pub fn slot_from(&self, time_s: f64) -> u32 {
        let s = time_s / self.slot_length_s;
        let r = s.round();
        let s = if (s - r).abs() <= BOUNDARY_TOL {
            r
        } else {
            s.ceil()
        };
        s.clamp(0.0, f64::from(u32::MAX)) as u32
    }

    fn position(&self, machine: MachineId) -> Option<usize> {
        // Machines are usually numbered by position.
        let guess = machine.0 as usize;
        if self.ids.get(guess) == Some(&machine) {
            return Some(guess);
        }
        self.ids.iter().position(|&m| m == machine)
    }

    fn machine_position(&self, machine: MachineId) -> Result<usize, StateError> {
        self.position(machine)
            .ok_or(StateError::UnknownMachine { machine })
    }

    fn check_time(&self, time_s: f64) -> Result<(), StateError> {
        let reason = if !time_s.is_finite() {
            "not finite"
        } else if time_s < self.now_s {
            "before the state's current time"
        } else {
            return Ok(());
        };
        Err(StateError::Time {
            time_s: Num(time_s),
            reason: format!("{reason} ({} s)", Num(self.now_s)),
        })
    }

    /// Moves the state's clock to `now_s` and drops the cells of the slots
    /// before the one that holds it (and the holds that ended there).
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] when `now_s` is not finite or is earlier than
    /// the current time.
    pub fn advance(&mut self, now_s: f64) -> Result<(), StateError> {
        self.check_time(now_s)?;
        self.now_s = now_s;
        let slot = self.slot_at(now_s);
        if slot > self.origin {
            let gone = slot - self.origin;
            for c in &mut self.cells {
                c.drop_front(gone);
            }
            self.origin = slot;
            self.holds.retain(|_, uses| {
                uses.retain(|u| u.slots.end > slot);
                for u in uses.iter_mut() {
                    u.slots.start = u.slots.start.max(slot);
                }
                !uses.is_empty()
            });
        }
        Ok(())
    }

    /// Whether `job` was ever committed to this state.
    pub fn was_committed(&self, job: JobId) -> bool {
        self.seen.contains(&job)
    }

    /// Whether a session already decided on `job` over this state:
    /// committed it, or refused it ([`note_refused`](Self::note_refused)).
    /// Job ids are unique for the state's life, across its sessions.
    pub fn was_decided(&self, job: JobId) -> bool {
        self.seen.contains(&job) || self.refused.contains(&job)
    }

    /// Records that a session refused `job` (its id is then taken: no
    /// other session over this state decides on it; the session that
    /// refused it may decide on it again,
    /// [`Session::resubmit`](crate::online::Session::resubmit)).
    pub fn note_refused(&mut self, job: JobId) {
        self.refused.insert(job);
    }

    /// The uses `holder` holds from the current slot on (`None` when it
    /// holds nothing).
    pub fn hold(&self, holder: Holder) -> Option<&[Use]> {
        self.holds.get(&holder).map(Vec::as_slice)
    }

    /// Every holder with what it holds, in holder order (jobs by id, then
    /// outside usage).
    pub fn holds(&self) -> impl Iterator<Item = (Holder, &[Use])> + '_ {
        self.holds.iter().map(|(h, u)| (*h, u.as_slice()))
    }

    /// What is used on `machine` in `slot` (zero past every hold).
    ///
    /// # Errors
    ///
    /// [`StateError::UnknownMachine`]; [`StateError::Slots`] for a slot
    /// before the current one (its cell is gone).
    pub fn used(&self, machine: MachineId, slot: u32) -> Result<Resources, StateError> {
        let p = self.machine_position(machine)?;
        if slot < self.origin {
            return Err(StateError::PastSlot {
                slot,
                current: self.origin,
            });
        }
        Ok(self.cells[p].used(self.origin, slot))
    }

    /// What is left of `machine` in `slot`: its capacity minus what is used
    /// (clamped at zero).
    ///
    /// # Errors
    ///
    /// As [`used`](Self::used).
    pub fn residual(&self, machine: MachineId, slot: u32) -> Result<Resources, StateError> {
        let used = self.used(machine, slot)?;
        let p = self.machine_position(machine)?;
        Ok(self.capacity[p].minus(&used).max(&Resources::zero()))
    }

    /// The GPU ids of `machine` free in every slot of `slots`, ascending.
    ///
    /// # Errors
    ///
    /// As [`used`](Self::used) for the range's first slot.
    pub fn free_gpus(
        &self,
        machine: MachineId,
        slots: Range<u32>,
    ) -> Result<Vec<GpuId>, StateError> {
        self.used(machine, slots.start)?;
        let p = self.machine_position(machine)?;
        Ok((0..self.gpu_ids[p])
            .filter(|&g| self.cells[p].gpu_free(self.origin, slots.start, slots.end, g))
            .map(|index| GpuId { machine, index })
            .collect())
    }

    /// Commits `job`'s plan: every task of every segment charged as
    /// [`schedule::verify`](crate::schedule::verify) charges it. Returns the
    /// segments as held: a segment without GPU ids gets the lowest ids free
    /// over its slots on each machine, when every machine's GPU count is
    /// whole.
    ///
    /// # Errors
    ///
    /// [`StateError::DuplicateJob`] when `job`'s id was committed before;
    /// [`StateError::Slots`] for a segment before the current slot, empty,
    /// or ending more than [`MAX_SPAN_SLOTS`] ahead;
    /// [`StateError::UnknownMachine`]; [`StateError::DoesNotFit`];
    /// [`StateError::Gpu`] for given ids that are unknown, repeated, in use
    /// or not as many as the GPUs charged, or too few free ids. Nothing
    /// changes on an error.
    pub fn commit_job(
        &mut self,
        job: &Job,
        segments: &[Segment],
    ) -> Result<Vec<Segment>, StateError> {
        if self.seen.contains(&job.id) {
            return Err(StateError::DuplicateJob { job: job.id });
        }
        self.hold_segments(job, segments)
    }

    /// Adds `segments` to the plan of `job`, committed before (a job that
    /// runs longer than planned, extended on its machines), charged and
    /// given GPU ids as by [`commit_job`](Self::commit_job).
    ///
    /// # Errors
    ///
    /// [`StateError::NotCommitted`] for a job never committed; otherwise as
    /// [`commit_job`](Self::commit_job). Nothing changes on an error.
    pub fn extend_job(
        &mut self,
        job: &Job,
        segments: &[Segment],
    ) -> Result<Vec<Segment>, StateError> {
        if !self.seen.contains(&job.id) {
            return Err(StateError::NotCommitted { job: job.id });
        }
        self.hold_segments(job, segments)
    }

    fn hold_segments(
        &mut self,
        job: &Job,
        segments: &[Segment],
    ) -> Result<Vec<Segment>, StateError> {
        let holder = Holder::Job(job.id);
        let mut uses = Vec::new();
        let mut whole = Vec::with_capacity(segments.len());
        for seg in segments {
            let spread = seg.placement.worker_machines();
            let mut all_whole = true;
            for &(machine, tasks) in &seg.placement {
                let resources = charged_demand(job, tasks, seg.config, spread);
                let gpus: Vec<GpuId> = seg
                    .gpus
                    .iter()
                    .flatten()
                    .filter(|g| g.machine == machine)
                    .copied()
                    .collect();
                all_whole &= resources.gpus == resources.gpus.round();
                uses.push(Use {
                    machine,
                    slots: seg.slots.clone(),
                    resources,
                    gpus,
                });
            }
            whole.push(all_whole);
        }
        let given: Vec<bool> = segments
            .iter()
            .flat_map(|s| s.placement.iter().map(|_| s.gpus.is_some()))
            .collect();
        let held = self.commit_uses(holder, uses, &given)?;
        self.seen.insert(job.id);
        Ok(segments_as_held(segments, &held, &whole))
    }

    /// Records outside usage of `machine` from `from_s` to `to_s` (seconds;
    /// the slots that overlap the range are held), with the lowest free GPU
    /// ids when its GPU count is whole. Returns its id, for
    /// [`release`](Self::release).
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] for times that are not finite or `to_s ≤
    /// from_s`; [`StateError::Use`] for resources that are negative or not
    /// finite; otherwise as [`commit_job`](Self::commit_job). A range that
    /// starts before the current slot is held from the current slot on.
    pub fn record_usage(
        &mut self,
        machine: MachineId,
        from_s: f64,
        to_s: f64,
        resources: Resources,
    ) -> Result<UsageId, StateError> {
        for t in [from_s, to_s] {
            if !t.is_finite() {
                return Err(StateError::Time {
                    time_s: Num(t),
                    reason: "not finite".into(),
                });
            }
        }
        if to_s <= from_s {
            return Err(StateError::Time {
                time_s: Num(to_s),
                reason: format!("the usage ends at or before its start {} s", Num(from_s)),
            });
        }
        let id = UsageId(self.next_usage);
        let start = self.slot_at(from_s.max(0.0)).max(self.origin);
        let end = self.slot_from(to_s).max(start + 1);
        let usage = Use {
            machine,
            slots: start..end,
            resources,
            gpus: Vec::new(),
        };
        self.commit_uses(Holder::Usage(id), vec![usage], &[false])?;
        self.next_usage += 1;
        Ok(id)
    }

    /// Validates and applies `uses` for `holder`, all or nothing: the ids
    /// of use `k` are checked when `given[k]`, else picked when its GPU
    /// count is whole.
    fn commit_uses(
        &mut self,
        holder: Holder,
        mut uses: Vec<Use>,
        given: &[bool],
    ) -> Result<Vec<Use>, StateError> {
        let mut applied = 0;
        let result = (|| {
            for (k, u) in uses.iter_mut().enumerate() {
                self.admit_use(holder, u, given.get(k).copied().unwrap_or(false))?;
                self.apply(u, true);
                applied += 1;
            }
            Ok(())
        })();
        if let Err(e) = result {
            for u in &uses[..applied] {
                self.apply(u, false);
            }
            return Err(e);
        }
        self.holds
            .entry(holder)
            .or_default()
            .extend(uses.iter().cloned());
        Ok(uses)
    }

    fn apply(&mut self, u: &Use, add: bool) {
        if let Some(p) = self.position(u.machine) {
            self.version.0 += 1;
            let ids: Vec<u32> = u.gpus.iter().map(|g| g.index).collect();
            self.cells[p].apply(
                self.origin,
                u.slots.start,
                u.slots.end,
                &u.resources,
                &ids,
                add,
                self.version.0,
            );
        }
    }

    /// The state's version: bumped at every change of a cell.
    pub(crate) fn version(&self) -> u64 {
        self.version.0
    }

    /// The version when a cell of `machine` last changed.
    ///
    /// # Errors
    ///
    /// [`StateError::UnknownMachine`].
    pub(crate) fn machine_stamp(&self, machine: MachineId) -> Result<u64, StateError> {
        Ok(self.cells[self.machine_position(machine)?].stamp())
    }

    /// The version when the cell of (`machine`, `slot`) last changed (0
    /// for a cell never changed or not stored; `machine` must be known).
    pub(crate) fn cell_stamp(&self, machine: MachineId, slot: u32) -> u64 {
        self.position(machine)
            .map_or(0, |p| self.cells[p].cell_stamp(self.origin, slot))
    }

    /// Checks one use against the cells as they are (earlier uses of the
    /// same holder applied), and picks its GPU ids.
    fn admit_use(&self, holder: Holder, u: &mut Use, ids_given: bool) -> Result<(), StateError> {
        let p = self.machine_position(u.machine)?;
        let (start, end) = (u.slots.start, u.slots.end);
        let slots_err = |reason: String| StateError::Slots {
            holder,
            start,
            end,
            reason,
        };
        if start >= end {
            return Err(slots_err("an empty slot range".into()));
        }
        if start < self.origin {
            return Err(slots_err(format!(
                "before the current slot {} (its cells are gone)",
                self.origin
            )));
        }
        if end - self.origin > MAX_SPAN_SLOTS {
            return Err(slots_err(format!(
                "ends more than {MAX_SPAN_SLOTS} slots after the current slot {}",
                self.origin
            )));
        }
        check_amount(holder, u)?;
        for t in start..end {
            let used = self.cells[p].used(self.origin, t).plus(&u.resources);
            if let Some(resource) = used.first_excess(&self.capacity[p], FIT_TOL) {
                return Err(StateError::DoesNotFit {
                    holder,
                    machine: u.machine,
                    slot: t,
                    resource,
                    used: Num(used.get(resource)),
                    capacity: Num(self.capacity[p].get(resource)),
                });
            }
        }
        if ids_given {
            self.check_given_gpus(holder, p, u)
        } else {
            self.pick_gpus(holder, p, u)
        }
    }

    fn check_given_gpus(&self, holder: Holder, p: usize, u: &Use) -> Result<(), StateError> {
        let gpu_err = |gpu: GpuId, reason: &str| StateError::Gpu {
            holder,
            gpu,
            reason: reason.into(),
        };
        let mut seen = BTreeSet::new();
        for &g in &u.gpus {
            if g.index >= self.gpu_ids[p] {
                return Err(gpu_err(g, "not a GPU of its machine"));
            }
            if !seen.insert(g.index) {
                return Err(gpu_err(g, "listed twice"));
            }
            if !self.cells[p].gpu_free(self.origin, u.slots.start, u.slots.end, g.index) {
                return Err(gpu_err(g, "in use in some slot of the range"));
            }
        }
        let n = u.gpus.len() as f64;
        if (n - u.resources.gpus).abs() > FIT_TOL * u.resources.gpus.max(1.0) {
            return Err(StateError::Use {
                holder,
                machine: u.machine,
                reason: format!(
                    "{} GPU ids for {} GPUs charged",
                    u.gpus.len(),
                    Num(u.resources.gpus)
                ),
            });
        }
        Ok(())
    }

    fn pick_gpus(&self, holder: Holder, p: usize, u: &mut Use) -> Result<(), StateError> {
        let n = u.resources.gpus;
        if n < 1.0 || n != n.round() {
            u.gpus.clear();
            return Ok(());
        }
        let machine = u.machine;
        let free: Vec<GpuId> = (0..self.gpu_ids[p])
            .filter(|&g| self.cells[p].gpu_free(self.origin, u.slots.start, u.slots.end, g))
            .take(n as usize)
            .map(|index| GpuId { machine, index })
            .collect();
        if (free.len() as f64) < n {
            return Err(StateError::Gpu {
                holder,
                gpu: GpuId { machine, index: 0 },
                reason: format!(
                    "only {} GPU ids of the machine are free over slots {}..{}, {} needed",
                    free.len(),
                    u.slots.start,
                    u.slots.end,
                    Num(n)
                ),
            });
        }
        u.gpus = free;
        Ok(())
    }

    /// Frees what `holder` holds from the first slot boundary at or after
    /// `from_s` on (a job that stopped inside a slot keeps that slot), and
    /// returns the GPU-slots freed. A holder that holds nothing (unknown,
    /// already released, or past) frees nothing.
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] when `from_s` is not finite or is before the
    /// current time.
    pub fn release(&mut self, holder: Holder, from_s: f64) -> Result<f64, StateError> {
        self.check_time(from_s)?;
        let from = self.slot_from(from_s).max(self.origin);
        let Some(mut uses) = self.holds.remove(&holder) else {
            return Ok(0.0);
        };
        let mut freed = 0.0;
        let mut kept = Vec::with_capacity(uses.len());
        for mut u in uses.drain(..) {
            let cut = from.max(u.slots.start);
            if cut < u.slots.end {
                let gone = Use {
                    slots: cut..u.slots.end,
                    ..u.clone()
                };
                self.apply(&gone, false);
                freed += gone.resources.gpus * f64::from(gone.slots.end - gone.slots.start);
                u.slots.end = cut;
            }
            if u.slots.start < u.slots.end {
                kept.push(u);
            }
        }
        if !kept.is_empty() {
            self.holds.insert(holder, kept);
        }
        Ok(freed)
    }

    /// Recomputes every cell from the holds and checks that the state adds
    /// up: each cell's use is the sum of the holds over it (up to rounding),
    /// no machine is over-committed by
    /// [`schedule::verify`](crate::schedule::verify)'s rule, and no GPU id
    /// is held twice in a slot. Independent of the incremental bookkeeping.
    ///
    /// # Errors
    ///
    /// [`StateError::Inconsistent`] naming the first cell that does not add
    /// up.
    pub fn check(&self) -> Result<(), StateError> {
        let bad = |reason: String| Err(StateError::Inconsistent { reason });
        for (holder, uses) in &self.holds {
            if let Some(u) = uses.iter().find(|u| self.position(u.machine).is_none()) {
                return bad(format!(
                    "{holder} holds {}, not a machine of the cluster",
                    u.machine
                ));
            }
        }
        for (p, &machine) in self.ids.iter().enumerate() {
            let mut sum: BTreeMap<u32, (Resources, BTreeSet<u32>)> = BTreeMap::new();
            for (holder, uses) in &self.holds {
                for u in uses.iter().filter(|u| u.machine == machine) {
                    for t in u.slots.clone() {
                        let cell = sum.entry(t).or_default();
                        cell.0 = cell.0.plus(&u.resources);
                        for g in &u.gpus {
                            if !cell.1.insert(g.index) {
                                return bad(format!("{holder}: {g} is held twice in slot {t}"));
                            }
                        }
                    }
                }
            }
            let held_end = sum.keys().last().map_or(self.origin, |&t| t + 1);
            let end = held_end.max(self.origin + self.cells[p].len() as u32);
            for t in self.origin..end {
                let (want, gpus) = sum.get(&t).cloned().unwrap_or_default();
                let cell = self.cells[p].get(self.origin, t);
                let got = cell.map_or(Resources::zero(), |c| c.used);
                if !near(&got, &want) {
                    return bad(format!(
                        "{machine}, slot {t}: stored use {got}, holds add up to {want}"
                    ));
                }
                if let Some(r) = want.first_excess(&self.capacity[p], FIT_TOL) {
                    return bad(format!("{machine}, slot {t}: {r} over capacity"));
                }
                let taken = cell.map_or(&[][..], |c| c.gpus.as_slice());
                if !taken.iter().copied().eq(gpus.iter().copied()) {
                    return bad(format!(
                        "{machine}, slot {t}: the stored GPU ids are not the holds'"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `segments` with the GPU ids the state holds for them: segment `k`'s
/// uses are the next ones of `held`, one per placement entry; ids are set
/// when every machine of the segment got whole ids (`whole[k]`).
fn segments_as_held(segments: &[Segment], held: &[Use], whole: &[bool]) -> Vec<Segment> {
    let mut next = held.iter();
    segments
        .iter()
        .zip(whole)
        .map(|(seg, &whole)| {
            let ids: Vec<GpuId> = seg
                .placement
                .iter()
                .filter_map(|_| next.next())
                .flat_map(|u| u.gpus.iter().copied())
                .collect();
            let mut out = seg.clone();
            if out.gpus.is_none() && whole && !ids.is_empty() {
                out.gpus = Some(ids);
            }
            out
        })
        .collect()
}

fn check_amount(holder: Holder, u: &Use) -> Result<(), StateError> {
    match u
        .resources
        .iter()
        .find(|(_, x)| !(x.is_finite() && *x >= 0.0))
    {
        Some((kind, x)) => Err(StateError::Use {
            holder,
            machine: u.machine,
            reason: format!("{kind} {} is not ≥ 0 and finite", Num(x)),
        }),
        None => Ok(()),
    }
}

/// Equal up to rounding of sums (relative 1e-9 of the larger, absolute
/// 1e-9).
fn near(a: &Resources, b: &Resources) -> bool {
    a.iter()
        .zip(b.iter())
        .all(|((_, x), (_, y))| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
}
