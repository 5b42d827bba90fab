//! Time-slotted schedules and their independent checker, [`verify`].
//!
//! A [`Schedule`] says, for every admitted job, which tasks run on which
//! machines in which slots. Resource use follows from the job's per-task
//! demands. [`verify`] re-checks a schedule against an [`Instance`] from
//! scratch — capacities per machine, resource and slot; arrivals and the
//! horizon; hosting roles and placement constraints; worker and PS caps; the
//! gang, no-migration and no-preemption rules of each job's [`Discipline`];
//! the shape a LOCAL [`Configuration`] requires, whose tasks it charges no
//! NIC bandwidth; the NIC bandwidth a ring-all-reduce job reserves for its
//! ring; GPU ids. It shares no code with any algorithm, so an algorithm cannot
//! hide its own bug from it. Whether a job's work completes is the
//! simulator's business (it owns the timing model), not `verify`'s.
//!
//! [`Discipline`]: crate::model::Discipline

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Range;

use crate::model::{
    Architecture, Elasticity, FIT_TOL, GpuId, Instance, Job, JobId, MachineId, ResourceKind,
    Resources, TaskKind,
};

/// Task counts of one job on one machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Tasks {
    /// Workers.
    pub workers: u32,
    /// Parameter servers.
    pub ps: u32,
}

impl Tasks {
    /// `workers` workers and `ps` parameter servers.
    pub fn new(workers: u32, ps: u32) -> Self {
        Tasks { workers, ps }
    }

    /// Whether there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.workers == 0 && self.ps == 0
    }
}

/// A job's tasks per machine: the allocation of one job at one time, as a
/// list of `(machine, tasks)` entries.
///
/// The list order carries no meaning. Entries with no tasks are allowed
/// and mean nothing; [`Placement::normalised`] drops them and sorts the
/// rest by machine (keeping the order of repeated machines — entries for
/// the same machine are not summed), so two placements hold the same tasks
/// on the same machines exactly when their normalised forms are equal
/// ([`Placement::same_as`]). [`Placement::add`] and [`Placement::merge`]
/// sum tasks into the entry of their machine instead. A schedule and the
/// simulator expect each machine listed at most once ([`verify`] and
/// [`check_allocation`] reject a repeated machine).
///
/// It dereferences to the slice of entries and serialises as that list.
///
/// ```
/// use dmlsched::model::MachineId;
/// use dmlsched::schedule::{Placement, Tasks};
///
/// let mut p = Placement::from(vec![
///     (MachineId(2), Tasks::new(2, 0)),
///     (MachineId(0), Tasks::new(0, 0)),
/// ]);
/// p.add(MachineId(1), Tasks::new(1, 1));
/// p.add(MachineId(2), Tasks::new(1, 0));
/// assert_eq!(p.total(), Tasks::new(4, 1));
/// assert_eq!(
///     p.normalised(),
///     vec![(MachineId(1), Tasks::new(1, 1)), (MachineId(2), Tasks::new(3, 0))]
/// );
/// assert!(p.same_as(&Placement::from(vec![
///     (MachineId(2), Tasks::new(3, 0)),
///     (MachineId(1), Tasks::new(1, 1)),
/// ])));
/// assert_eq!(p.machines().collect::<Vec<_>>(), [MachineId(2), MachineId(0), MachineId(1)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Placement(Vec<(MachineId, Tasks)>);

impl Placement {
    /// No tasks anywhere.
    pub fn new() -> Self {
        Placement(Vec::new())
    }

    /// Number of entries (machines listed, empty entries included).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no machine is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, in list order.
    pub fn iter(&self) -> std::slice::Iter<'_, (MachineId, Tasks)> {
        self.0.iter()
    }

    /// The machines listed, in list order (empty entries included).
    pub fn machines(&self) -> impl Iterator<Item = MachineId> + '_ {
        self.0.iter().map(|(m, _)| *m)
    }

    /// Total tasks over all machines (saturating).
    pub fn total(&self) -> Tasks {
        self.0.iter().fold(Tasks::default(), |acc, (_, t)| {
            Tasks::new(
                acc.workers.saturating_add(t.workers),
                acc.ps.saturating_add(t.ps),
            )
        })
    }

    /// How many distinct machines hold at least one worker: the `n` of a
    /// ring's reservation ([`Job::reserved_nic_bps`]).
    ///
    /// ```
    /// use dmlsched::model::MachineId;
    /// use dmlsched::schedule::{Placement, Tasks};
    /// let p = Placement::from(vec![
    ///     (MachineId(0), Tasks::new(2, 0)),
    ///     (MachineId(1), Tasks::new(0, 1)),
    ///     (MachineId(2), Tasks::new(1, 0)),
    /// ]);
    /// assert_eq!(p.worker_machines(), 2);
    /// ```
    pub fn worker_machines(&self) -> usize {
        let hosts = || {
            self.0
                .iter()
                .filter(|(_, t)| t.workers > 0)
                .map(|(m, _)| *m)
        };
        if self.0.len() <= 16 {
            // A small placement: distinct ids counted without allocating.
            return hosts()
                .enumerate()
                .filter(|&(i, m)| hosts().take(i).all(|x| x != m))
                .count();
        }
        let mut ms: Vec<MachineId> = self
            .0
            .iter()
            .filter(|(_, t)| t.workers > 0)
            .map(|(m, _)| *m)
            .collect();
        ms.sort_unstable();
        ms.dedup();
        ms.len()
    }

    /// The entries with tasks, in list order.
    pub fn non_empty(&self) -> Placement {
        self.0
            .iter()
            .copied()
            .filter(|(_, t)| !t.is_empty())
            .collect()
    }

    /// The entries with tasks, sorted by machine (a stable sort: entries
    /// for the same machine keep their order and are not summed).
    pub fn normalised(&self) -> Placement {
        let mut v = self.non_empty();
        v.0.sort_by_key(|(m, _)| *m);
        v
    }

    /// Whether both hold the same tasks on the same machines: equal
    /// [`Placement::normalised`] forms.
    pub fn same_as(&self, other: &Placement) -> bool {
        self.normalised() == other.normalised()
    }

    /// Appends an entry as it is (no merging).
    pub fn push(&mut self, entry: (MachineId, Tasks)) {
        self.0.push(entry);
    }

    /// Adds `tasks` to the first entry of `machine`, or appends an entry
    /// for it; empty `tasks` change nothing.
    pub fn add(&mut self, machine: MachineId, tasks: Tasks) {
        if tasks.is_empty() {
            return;
        }
        match self.0.iter_mut().find(|(n, _)| *n == machine) {
            Some((_, u)) => *u = Tasks::new(u.workers + tasks.workers, u.ps + tasks.ps),
            None => self.0.push((machine, tasks)),
        }
    }

    /// [`Placement::add`]s every entry of `other`, in its order.
    pub fn merge(&mut self, other: &Placement) {
        for &(m, t) in &other.0 {
            self.add(m, t);
        }
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Keeps the entries for which `keep` holds.
    pub fn retain(&mut self, keep: impl FnMut(&(MachineId, Tasks)) -> bool) {
        self.0.retain(keep);
    }

    /// The entries as a vector.
    pub fn into_vec(self) -> Vec<(MachineId, Tasks)> {
        self.0
    }
}

impl From<Vec<(MachineId, Tasks)>> for Placement {
    fn from(v: Vec<(MachineId, Tasks)>) -> Self {
        Placement(v)
    }
}

impl<const N: usize> From<[(MachineId, Tasks); N]> for Placement {
    fn from(v: [(MachineId, Tasks); N]) -> Self {
        Placement(v.into())
    }
}

impl From<&[(MachineId, Tasks)]> for Placement {
    fn from(v: &[(MachineId, Tasks)]) -> Self {
        Placement(v.to_vec())
    }
}

impl From<Placement> for Vec<(MachineId, Tasks)> {
    fn from(p: Placement) -> Self {
        p.0
    }
}

impl FromIterator<(MachineId, Tasks)> for Placement {
    fn from_iter<I: IntoIterator<Item = (MachineId, Tasks)>>(iter: I) -> Self {
        Placement(iter.into_iter().collect())
    }
}

impl IntoIterator for Placement {
    type Item = (MachineId, Tasks);
    type IntoIter = std::vec::IntoIter<(MachineId, Tasks)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Placement {
    type Item = &'a (MachineId, Tasks);
    type IntoIter = std::slice::Iter<'a, (MachineId, Tasks)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl std::ops::Deref for Placement {
    type Target = [(MachineId, Tasks)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Placement {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl PartialEq<Vec<(MachineId, Tasks)>> for Placement {
    fn eq(&self, other: &Vec<(MachineId, Tasks)>) -> bool {
        self.0 == *other
    }
}

impl PartialEq<Placement> for Vec<(MachineId, Tasks)> {
    fn eq(&self, other: &Placement) -> bool {
        *self == other.0
    }
}

/// The communication configuration a segment runs in, where the algorithm
/// chose one: LOCAL (all workers and one PS on one machine) or DISTRIBUTED
/// (all gradient traffic charged to the NICs), as in a locality-aware
/// planner. A segment without one ([`Segment::config`] `None`) is charged
/// like DISTRIBUTED.
///
/// * **LOCAL** is a parameter-server configuration: the segment's placement
///   is one machine, the named one, holding exactly one PS and at least one
///   worker, on a machine that may host both kinds (and that the job may
///   use). Gradients travel over the machine's
///   [`intra_bandwidth_bps`](crate::model::Machine::intra_bandwidth_bps),
///   so the segment's tasks are charged their per-task demand with **NIC
///   bandwidth 0**, by [`verify`] and by the simulator, which runs such a
///   job at `τ^L = t_c + 2S/b_int` (see
///   [`PsLocality::tau_local`](crate::timing::PsLocality::tau_local))
///   whatever its [`PsTiming`](crate::sim::PsTiming). A ring-all-reduce
///   job cannot run LOCAL ([`Violation::LocalForRingJob`]).
/// * **DISTRIBUTED**: workers and PSs on any machines, every task charged its
///   full per-task demand, NIC included — the same as no configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Configuration {
    /// All workers and exactly one PS on `machine`: traffic stays inside it
    /// and the tasks use no NIC bandwidth.
    Local {
        /// The machine.
        machine: MachineId,
    },
    /// Tasks on any machines, all traffic charged to NICs.
    Distributed,
}

impl Configuration {
    /// The machine of a LOCAL configuration (`None` for DISTRIBUTED).
    pub fn local_machine(&self) -> Option<MachineId> {
        match *self {
            Configuration::Local { machine } => Some(machine),
            Configuration::Distributed => None,
        }
    }
}

/// A constant allocation of one job over a range of slots.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Segment {
    /// Slots `start..end` (0-based, end exclusive).
    pub slots: Range<u32>,
    /// Tasks per machine; each machine at most once.
    pub placement: Placement,
    /// The GPUs used, when the algorithm assigns GPU ids (ring-all-reduce).
    #[cfg_attr(feature = "serde", serde(default))]
    pub gpus: Option<Vec<GpuId>>,
    /// The communication configuration, when the algorithm chose one
    /// (`None`: every task charged its full demand, as DISTRIBUTED). A
    /// LOCAL segment's tasks are charged no NIC bandwidth; see
    /// [`Configuration`] for what LOCAL requires.
    #[cfg_attr(feature = "serde", serde(default))]
    pub config: Option<Configuration>,
}

impl Segment {
    /// A segment without GPU ids or configuration.
    pub fn new(slots: Range<u32>, placement: impl Into<Placement>) -> Self {
        Segment {
            slots,
            placement: placement.into(),
            gpus: None,
            config: None,
        }
    }

    /// Total tasks over all machines.
    pub fn total(&self) -> Tasks {
        self.placement.total()
    }
}

/// The schedule of one job.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct JobSchedule {
    /// The job.
    pub job: JobId,
    /// Whether the job was admitted; a rejected job has no segments.
    pub admitted: bool,
    /// Allocations over time, in any order, not overlapping.
    pub segments: Vec<Segment>,
}

impl JobSchedule {
    /// A rejected job.
    pub fn rejected(job: JobId) -> Self {
        JobSchedule {
            job,
            admitted: false,
            segments: Vec::new(),
        }
    }

    /// First slot the job runs in.
    pub fn start_slot(&self) -> Option<u32> {
        self.segments.iter().map(|s| s.slots.start).min()
    }

    /// Last slot the job runs in (the completion slot `t̂` when the schedule
    /// runs the job to completion).
    pub fn last_slot(&self) -> Option<u32> {
        self.segments
            .iter()
            .filter(|s| s.slots.end > s.slots.start)
            .map(|s| s.slots.end - 1)
            .max()
    }

    /// Worker-slots allocated: Σ over segments of workers × slots.
    pub fn worker_slots(&self) -> u64 {
        self.segments
            .iter()
            .map(|s| {
                u64::from(s.total().workers) * u64::from(s.slots.end.saturating_sub(s.slots.start))
            })
            .sum()
    }
}

/// A schedule: one entry per job it mentions (jobs absent are not run).
///
/// ```
/// use dmlsched::model::{Cluster, Instance, Job, JobId, MachineId, PsJob, Resources};
/// use dmlsched::schedule::{JobSchedule, Schedule, Segment, Tasks, verify};
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(2.0).cpu_cores(8.0), 1e10);
/// let jobs = vec![
///     Job::new(JobId(0), 0.0, PsJob::default()),
///     Job::new(JobId(1), 0.0, PsJob::default()),
/// ];
/// let inst = Instance::new(cluster, jobs, 60.0, 10)?;
/// // Job 0 runs one worker and one PS in slots 0 and 1; job 1 is turned away.
/// let schedule = Schedule { jobs: vec![
///     JobSchedule { job: JobId(0), admitted: true,
///         segments: vec![Segment::new(0..2, vec![(MachineId(0), Tasks::new(1, 1))])] },
///     JobSchedule::rejected(JobId(1)),
/// ]};
/// verify(&inst, &schedule)?;
/// assert_eq!(schedule.job(JobId(0)).and_then(|j| j.last_slot()), Some(1));
/// assert!(schedule.job(JobId(1)).is_some_and(|j| !j.admitted));
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Schedule {
    /// Per-job schedules.
    pub jobs: Vec<JobSchedule>,
}

impl Schedule {
    /// The entry of a job.
    pub fn job(&self, id: JobId) -> Option<&JobSchedule> {
        self.jobs.iter().find(|j| j.job == id)
    }
}

/// How a schedule breaks the instance's rules. Each case names the job,
/// segment (index into [`JobSchedule::segments`]), machine, slot or GPU.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// The schedule names a job the instance does not have.
    #[error("{job} is not in the instance")]
    UnknownJob {
        /// The job.
        job: JobId,
    },
    /// A job appears twice in the schedule.
    #[error("{job} appears more than once")]
    DuplicateJob {
        /// The job.
        job: JobId,
    },
    /// A rejected job has segments.
    #[error("{job} is not admitted but has segments")]
    NotAdmittedButRuns {
        /// The job.
        job: JobId,
    },
    /// A segment's slot range is empty or reversed.
    #[error("{job}, segment {segment}: empty slot range {slots:?}")]
    EmptySlotRange {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// Its slots.
        slots: Range<u32>,
    },
    /// A segment runs past the horizon.
    #[error("{job}, segment {segment}: ends at slot {end}, past the horizon of {horizon} slots")]
    BeyondHorizon {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// End (exclusive) of the segment.
        end: u32,
        /// Horizon in slots.
        horizon: u32,
    },
    /// A segment starts before the job's arrival slot.
    #[error(
        "{job}, segment {segment}: starts in slot {start}, before its arrival slot {arrival_slot}"
    )]
    BeforeArrival {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// First slot of the segment.
        start: u32,
        /// The job's arrival slot.
        arrival_slot: u32,
    },
    /// A placement names a machine the cluster does not have.
    #[error("{job}, segment {segment}: unknown {machine}")]
    UnknownMachine {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
    },
    /// A machine appears twice in one segment's placement.
    #[error("{job}, segment {segment}: {machine} listed twice")]
    DuplicatePlacement {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
    },
    /// A task runs on a machine whose role forbids it.
    #[error("{job}, segment {segment}: {machine} may not host a {task}")]
    HostingNotAllowed {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
        /// The task kind.
        task: TaskKind,
    },
    /// A task runs on a machine outside the job's `allowed_machines`.
    #[error("{job}, segment {segment}: {machine} is not among the job's allowed machines")]
    MachineNotAllowed {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
    },
    /// A segment runs no worker.
    #[error("{job}, segment {segment}: no workers")]
    NoWorkers {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
    },
    /// A ring-all-reduce job is given parameter servers.
    #[error("{job}, segment {segment}: a ring-all-reduce job has no parameter servers")]
    PsForRingJob {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
    },
    /// A parameter-server job runs workers without any PS.
    #[error("{job}, segment {segment}: workers without a parameter server")]
    WorkersWithoutPs {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
    },
    /// More workers than the job's cap.
    #[error("{job}, segment {segment}: {workers} workers, cap {max}")]
    TooManyWorkers {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// Workers placed.
        workers: u32,
        /// The cap.
        max: u32,
    },
    /// More PSs than the job's cap.
    #[error("{job}, segment {segment}: {ps} parameter servers, cap {max}")]
    TooManyPs {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// PSs placed.
        ps: u32,
        /// The cap.
        max: u32,
    },
    /// More PSs than workers under the job's PS ≤ workers rule.
    #[error("{job}, segment {segment}: {ps} parameter servers exceed {workers} workers")]
    PsExceedsWorkers {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// PSs placed.
        ps: u32,
        /// Workers placed.
        workers: u32,
    },
    /// A ring-all-reduce job runs a worker count it does not accept.
    #[error("{job}, segment {segment}: {workers} workers is not an allowed count")]
    WorkerCountNotAllowed {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// Workers placed.
        workers: u32,
    },
    /// A rigid parameter-server job runs with other than its full size.
    #[error(
        "{job}, segment {segment}: rigid gang needs {expected_workers} workers and {expected_ps} PSs, got {workers} and {ps}"
    )]
    GangViolated {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// Workers placed.
        workers: u32,
        /// PSs placed.
        ps: u32,
        /// Workers required.
        expected_workers: u32,
        /// PSs required.
        expected_ps: u32,
    },
    /// Two segments of one job cover the same slot.
    #[error("{job}: two segments cover slot {slot}")]
    OverlappingSegments {
        /// The job.
        job: JobId,
        /// A slot covered twice.
        slot: u32,
    },
    /// A rigid job's placement (or GPU set) changes between slots.
    #[error("{job}: a rigid job's placement changes at slot {slot}")]
    PlacementChanged {
        /// The job.
        job: JobId,
        /// First slot of the new placement.
        slot: u32,
    },
    /// A non-preemptible job stops and later resumes.
    #[error("{job}: a non-preemptible job is paused in slots {gap:?}")]
    Preempted {
        /// The job.
        job: JobId,
        /// The slots it does not run in between two runs.
        gap: Range<u32>,
    },
    /// A ring-all-reduce job's segment is configured LOCAL: LOCAL is a
    /// parameter-server configuration (one PS and its workers on one
    /// machine).
    #[error(
        "{job}, segment {segment}: LOCAL is a parameter-server configuration; a ring-all-reduce job cannot run it"
    )]
    LocalForRingJob {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
    },
    /// A LOCAL segment's tasks are not on exactly one machine: its
    /// placement has `entries` non-empty entries (0, or several machines).
    #[error(
        "{job}, segment {segment}: LOCAL on {machine} needs all tasks on one machine, the placement has {entries} non-empty entries"
    )]
    LocalNotOneMachine {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine the configuration names.
        machine: MachineId,
        /// Non-empty placement entries.
        entries: usize,
    },
    /// A LOCAL segment's tasks are on another machine than the one its
    /// configuration names.
    #[error("{job}, segment {segment}: LOCAL names {machine} but the tasks run on {placed}")]
    LocalOtherMachine {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine the configuration names.
        machine: MachineId,
        /// The machine the tasks are on.
        placed: MachineId,
    },
    /// A LOCAL segment runs other than exactly one parameter server.
    #[error(
        "{job}, segment {segment}: LOCAL on {machine} needs exactly one parameter server, got {ps}"
    )]
    LocalPsCount {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
        /// PSs placed.
        ps: u32,
    },
    /// A LOCAL segment runs no worker.
    #[error("{job}, segment {segment}: LOCAL on {machine} needs at least one worker, got none")]
    LocalNoWorkers {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
    },
    /// A machine's capacity is exceeded in a slot.
    #[error(
        "{machine}, slot {slot}: {resource} used {} exceeds capacity {}",
        resource.amount(*used),
        resource.amount(*capacity)
    )]
    CapacityExceeded {
        /// The machine.
        machine: MachineId,
        /// The resource.
        resource: ResourceKind,
        /// The first slot where it happens.
        slot: u32,
        /// Total demand placed.
        used: f64,
        /// Capacity.
        capacity: f64,
    },
    /// A GPU id names a machine that does not exist or an index past its
    /// GPU count.
    #[error("{job}, segment {segment}: invalid {gpu}")]
    InvalidGpu {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The GPU.
        gpu: GpuId,
    },
    /// A GPU id appears twice in one segment.
    #[error("{job}, segment {segment}: {gpu} listed twice")]
    DuplicateGpu {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The GPU.
        gpu: GpuId,
    },
    /// The GPU ids on a machine do not match the GPUs the placed tasks
    /// demand there.
    #[error(
        "{job}, segment {segment}: {machine} has {got} GPU ids for tasks demanding {expected} GPUs"
    )]
    GpuCountMismatch {
        /// The job.
        job: JobId,
        /// The segment.
        segment: usize,
        /// The machine.
        machine: MachineId,
        /// GPUs demanded by the tasks placed there.
        expected: f64,
        /// GPU ids given on that machine.
        got: u32,
    },
    /// Two jobs use the same GPU in the same slot.
    #[error("{gpu} is used by {first} and {second} in slot {slot}")]
    GpuConflict {
        /// The GPU.
        gpu: GpuId,
        /// The slot.
        slot: u32,
        /// One job.
        first: JobId,
        /// The other job.
        second: JobId,
    },
}

/// Checks a schedule against an instance; see the [module docs](self).
///
/// Rules, by the job's discipline:
/// * every job: known and listed once; rejected jobs run nothing; segments
///   non-empty, inside `[arrival slot, horizon)`, not overlapping; machines
///   known, listed once per segment, allowed by hosting roles and the job's
///   `allowed_machines`; at least one worker; caps on workers and PSs; PS
///   jobs run ≥ 1 PS with workers (and PS ≤ workers under the rule);
///   ring-all-reduce jobs run no PS and an allowed worker count;
/// * rigid jobs: PS jobs run exactly `max_workers` and `max_ps`; the
///   placement (and GPU set) is identical in every segment;
/// * non-preemptible jobs: the slots run form one contiguous interval;
/// * segments configured LOCAL ([`Configuration::Local`]): the job is a
///   parameter-server job, and the placement is one machine, the one named,
///   with exactly one PS and at least one worker (besides the rules above,
///   which make that machine one that may host both kinds and that the job
///   may use); see [`Violation::LocalForRingJob`],
///   [`Violation::LocalNotOneMachine`], [`Violation::LocalOtherMachine`],
///   [`Violation::LocalPsCount`] and [`Violation::LocalNoWorkers`];
/// * all jobs together: per machine, slot and resource, demand ≤ capacity
///   (relative tolerance [`FIT_TOL`]), where a task is charged its job's
///   per-task demand, except that a LOCAL segment's tasks are charged no NIC
///   bandwidth (their traffic stays on the machine); GPU ids valid, matching
///   the GPU demand per machine, unique per segment, and never shared by two
///   jobs in one slot. No configuration and DISTRIBUTED are charged alike.
/// * ring reservations: a segment of a ring-all-reduce job with
///   [`RarJob::reserved_bandwidth_bps`] `Some(b)` whose workers span
///   `n ≥ 2` machines charges each of those machines `b` of NIC bandwidth
///   on top of its workers' demands, in every slot of the segment. The ring
///   is laid out with each machine's workers contiguous, so it has `n`
///   cross-machine edges and each used machine sends on one and receives
///   on one: `b` per direction, which is what [`Resources::nic_bps`] (a
///   per-direction capacity) is compared with — equivalently `2b` of the
///   machine's both-directions pool of `2 × nic_bps`. A segment on one
///   machine reserves nothing. The reservation is added to the workers' own
///   NIC demand rather than replacing it (the two are declared separately,
///   so adding them never under-charges); see
///   [`RarJob::reserved_bandwidth_bps`] and [`Job::demand_with_reservation`].
///   A NIC over-committed by reservations is a
///   [`Violation::CapacityExceeded`] naming the machine, the first slot,
///   the NIC use per direction (tasks plus reservations) and the capacity.
///   The reservation itself is finite and positive by instance validation.
///
/// [`RarJob::reserved_bandwidth_bps`]: crate::model::RarJob::reserved_bandwidth_bps
/// # Errors
///
/// The first [`Violation`] found (jobs in schedule order, then capacities by
/// machine, then GPU conflicts).
///
/// ```
/// use dmlsched::model::*;
/// use dmlsched::model::units::{gb, gbps};
/// use dmlsched::schedule::*;
///
/// let cap = Resources::zero().gpus(2.0).cpu_cores(16.0).memory(gb(64.0)).nic(gbps(10.0));
/// let cluster = Cluster::homogeneous(1, cap, gbps(100.0));
/// let rar = RarJob {
///     workers: WorkerCounts::Fixed(2), iterations: 100, convergence_iterations: None,
///     model_bytes: 1e8, minibatch_size: 32, forward_per_sample_s: 1e-3,
///     backward_per_iteration_s: 0.05, reserved_bandwidth_bps: None,
///     worker: Resources::zero().gpus(1.0).cpu_cores(4.0).memory(gb(8.0)),
/// };
/// let job = Job::new(JobId(7), 0.0, Architecture::RingAllReduce(rar));
/// let inst = Instance::new(cluster, vec![job], 60.0, 10).unwrap();
/// let ok = Schedule { jobs: vec![JobSchedule { job: JobId(7), admitted: true,
///     segments: vec![Segment::new(0..4, vec![(MachineId(0), Tasks::new(2, 0))])] }] };
/// assert!(verify(&inst, &ok).is_ok());
/// let too_big = Schedule { jobs: vec![JobSchedule { job: JobId(7), admitted: true,
///     segments: vec![Segment::new(0..4, vec![(MachineId(0), Tasks::new(3, 0))])] }] };
/// assert!(verify(&inst, &too_big).is_err());
/// ```
pub fn verify(instance: &Instance, schedule: &Schedule) -> Result<(), Violation> {
    let mut seen = HashSet::with_capacity(schedule.jobs.len());
    for js in &schedule.jobs {
        let job = instance
            .job(js.job)
            .ok_or(Violation::UnknownJob { job: js.job })?;
        if !seen.insert(js.job) {
            return Err(Violation::DuplicateJob { job: js.job });
        }
        check_job(instance, job, js)?;
    }
    check_capacities(instance, schedule)?;
    check_gpu_sharing(schedule)
}

/// Checks one job's schedule as [`verify`] does — every segment, overlaps,
/// and the gang, no-migration and no-preemption rules of its discipline —
/// without the cluster-wide capacity and GPU-sharing checks (the simulator
/// checks a plan's capacity against its own ledger).
///
/// # Errors
///
/// [`Violation::UnknownJob`] or the first rule the job's schedule breaks.
///
/// ```
/// use dmlsched::model::{Cluster, Instance, Job, JobId, MachineId, PsJob, Resources};
/// use dmlsched::schedule::{JobSchedule, Segment, Tasks, Violation, check_job_schedule};
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(2.0).cpu_cores(8.0), 1e10);
/// // A job arriving at 125 s, in slot 2 of 60 s slots; the horizon is 10 slots.
/// let job = Job::new(JobId(0), 125.0, PsJob::default());
/// let inst = Instance::new(cluster, vec![job], 60.0, 10)?;
/// let run = |slots| JobSchedule { job: JobId(0), admitted: true,
///     segments: vec![Segment::new(slots, vec![(MachineId(0), Tasks::new(1, 1))])] };
/// check_job_schedule(&inst, &run(2..4))?;
/// let early = check_job_schedule(&inst, &run(1..4));
/// assert!(matches!(early, Err(Violation::BeforeArrival { .. })));
/// let late = check_job_schedule(&inst, &run(8..11));
/// assert!(matches!(late, Err(Violation::BeyondHorizon { .. })));
/// let other = JobSchedule { job: JobId(9), ..run(2..4) };
/// assert_eq!(check_job_schedule(&inst, &other), Err(Violation::UnknownJob { job: JobId(9) }));
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn check_job_schedule(instance: &Instance, js: &JobSchedule) -> Result<(), Violation> {
    let job = instance
        .job(js.job)
        .ok_or(Violation::UnknownJob { job: js.job })?;
    check_job(instance, job, js)
}

fn check_job(instance: &Instance, job: &Job, js: &JobSchedule) -> Result<(), Violation> {
    let id = job.id;
    if !js.admitted && !js.segments.is_empty() {
        return Err(Violation::NotAdmittedButRuns { job: id });
    }
    let arrival_slot = instance.arrival_slot(job);
    for (k, seg) in js.segments.iter().enumerate() {
        check_segment(instance, job, k, seg, arrival_slot)?;
    }

    // Order segments by time; overlaps, preemption and rigidity.
    let mut order: Vec<usize> = (0..js.segments.len()).collect();
    order.sort_by_key(|&k| (js.segments[k].slots.start, js.segments[k].slots.end));
    for w in order.windows(2) {
        let (a, b) = (&js.segments[w[0]], &js.segments[w[1]]);
        if b.slots.start < a.slots.end {
            return Err(Violation::OverlappingSegments {
                job: id,
                slot: b.slots.start,
            });
        }
        if !job.discipline.preemptible && b.slots.start > a.slots.end {
            return Err(Violation::Preempted {
                job: id,
                gap: a.slots.end..b.slots.start,
            });
        }
        if job.discipline.elasticity == Elasticity::Rigid
            && (!a.placement.same_as(&b.placement) || sorted_gpus(a) != sorted_gpus(b))
        {
            return Err(Violation::PlacementChanged {
                job: id,
                slot: b.slots.start,
            });
        }
    }
    Ok(())
}

fn sorted_gpus(s: &Segment) -> Option<Vec<GpuId>> {
    s.gpus.as_ref().map(|g| {
        let mut g = g.clone();
        g.sort();
        g
    })
}

fn check_segment(
    instance: &Instance,
    job: &Job,
    k: usize,
    seg: &Segment,
    arrival_slot: u32,
) -> Result<(), Violation> {
    let id = job.id;
    if seg.slots.start >= seg.slots.end {
        return Err(Violation::EmptySlotRange {
            job: id,
            segment: k,
            slots: seg.slots.clone(),
        });
    }
    if seg.slots.end > instance.horizon_slots() {
        return Err(Violation::BeyondHorizon {
            job: id,
            segment: k,
            end: seg.slots.end,
            horizon: instance.horizon_slots(),
        });
    }
    if seg.slots.start < arrival_slot {
        return Err(Violation::BeforeArrival {
            job: id,
            segment: k,
            start: seg.slots.start,
            arrival_slot,
        });
    }
    check_local(job, k, &seg.placement, seg.config)?;
    check_placement(instance, job, k, &seg.placement, seg.gpus.as_deref())
}

/// The shape a LOCAL configuration requires: a parameter-server job, one
/// non-empty placement entry, on the machine named, with exactly one PS and
/// at least one worker. (Hosting roles, `allowed_machines` and caps are
/// [`check_placement`]'s, as for every allocation.) No configuration and
/// DISTRIBUTED require nothing.
fn check_local(
    job: &Job,
    k: usize,
    placement: &Placement,
    config: Option<Configuration>,
) -> Result<(), Violation> {
    let Some(machine) = config.and_then(|c| c.local_machine()) else {
        return Ok(());
    };
    let id = job.id;
    if !matches!(job.architecture, Architecture::ParameterServer(_)) {
        return Err(Violation::LocalForRingJob {
            job: id,
            segment: k,
        });
    }
    let entries = placement.normalised();
    let &[(placed, tasks)] = &entries[..] else {
        return Err(Violation::LocalNotOneMachine {
            job: id,
            segment: k,
            machine,
            entries: entries.len(),
        });
    };
    if placed != machine {
        return Err(Violation::LocalOtherMachine {
            job: id,
            segment: k,
            machine,
            placed,
        });
    }
    if tasks.ps != 1 {
        return Err(Violation::LocalPsCount {
            job: id,
            segment: k,
            machine,
            ps: tasks.ps,
        });
    }
    if tasks.workers == 0 {
        return Err(Violation::LocalNoWorkers {
            job: id,
            segment: k,
            machine,
        });
    }
    Ok(())
}

/// Checks one allocation of `job` — the placement and, when given, its GPU
/// ids — against the instance's rules that do not involve time: machines
/// known and listed once, hosting roles, the job's `allowed_machines`, at
/// least one worker, worker and PS caps (and PS ≤ workers under the rule),
/// ring jobs without PSs and with an allowed worker count, the gang size of
/// a rigid PS job, and valid GPU ids matching the GPU demand per machine.
/// [`verify`] applies it to every segment; the simulator to every action.
/// Errors name segment 0.
///
/// # Errors
///
/// The first [`Violation`] found.
///
/// ```
/// use dmlsched::model::{Cluster, Hosting, Instance, Job, JobId, MachineId, PsJob, Resources};
/// use dmlsched::schedule::{Placement, Tasks, Violation, check_allocation};
///
/// let mut cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
/// cluster.machines[1].hosts = Hosting::Workers;
/// let job = Job::new(JobId(0), 0.0, PsJob { max_workers: 4, max_ps: 2, ..PsJob::default() });
/// let inst = Instance::new(cluster, vec![job], 60.0, 10)?;
/// let job = &inst.jobs()[0];
/// let spread = Placement::from(vec![
///     (MachineId(0), Tasks::new(2, 1)),
///     (MachineId(1), Tasks::new(2, 0)),
/// ]);
/// check_allocation(&inst, job, &spread, None)?;
/// // Machine 1 hosts workers only; the job may use at most 4 workers.
/// let ps_on_1 = Placement::from(vec![(MachineId(1), Tasks::new(1, 1))]);
/// let err = check_allocation(&inst, job, &ps_on_1, None);
/// assert!(matches!(err, Err(Violation::HostingNotAllowed { .. })));
/// let five = Placement::from(vec![(MachineId(0), Tasks::new(5, 1))]);
/// let err = check_allocation(&inst, job, &five, None);
/// assert!(matches!(err, Err(Violation::TooManyWorkers { workers: 5, max: 4, .. })));
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn check_allocation(
    instance: &Instance,
    job: &Job,
    placement: &Placement,
    gpus: Option<&[GpuId]>,
) -> Result<(), Violation> {
    check_placement(instance, job, 0, placement, gpus)
}

/// [`check_allocation`] for an allocation run in a [`Configuration`]: with
/// `Some(Configuration::Local { .. })` it first checks the shape LOCAL
/// requires — a parameter-server job ([`Violation::LocalForRingJob`]), one
/// machine ([`Violation::LocalNotOneMachine`]), the one named
/// ([`Violation::LocalOtherMachine`]), exactly one PS
/// ([`Violation::LocalPsCount`]) and at least one worker
/// ([`Violation::LocalNoWorkers`]); with `None` or DISTRIBUTED it is
/// [`check_allocation`]. Errors name segment 0.
///
/// # Errors
///
/// The first [`Violation`] found.
///
/// ```
/// use dmlsched::model::{Cluster, Instance, Job, JobId, MachineId, PsJob, Resources};
/// use dmlsched::schedule::{Configuration, Placement, Tasks, Violation};
/// use dmlsched::schedule::check_configured_allocation;
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
/// let job = Job::new(JobId(0), 0.0, PsJob { max_workers: 4, max_ps: 2, ..PsJob::default() });
/// let inst = Instance::new(cluster, vec![job], 60.0, 10)?;
/// let job = &inst.jobs()[0];
/// let local = Some(Configuration::Local { machine: MachineId(0) });
/// let on_0 = |w, ps| Placement::from(vec![(MachineId(0), Tasks::new(w, ps))]);
/// check_configured_allocation(&inst, job, &on_0(3, 1), None, local)?;
/// // LOCAL needs exactly one PS; DISTRIBUTED allows two.
/// let err = check_configured_allocation(&inst, job, &on_0(3, 2), None, local);
/// assert!(matches!(err, Err(Violation::LocalPsCount { ps: 2, .. })));
/// let distributed = Some(Configuration::Distributed);
/// check_configured_allocation(&inst, job, &on_0(3, 2), None, distributed)?;
/// // LOCAL names the one machine the tasks are on.
/// let on_1 = Some(Configuration::Local { machine: MachineId(1) });
/// let err = check_configured_allocation(&inst, job, &on_0(3, 1), None, on_1);
/// assert!(matches!(err, Err(Violation::LocalOtherMachine { .. })));
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn check_configured_allocation(
    instance: &Instance,
    job: &Job,
    placement: &Placement,
    gpus: Option<&[GpuId]>,
    config: Option<Configuration>,
) -> Result<(), Violation> {
    check_local(job, 0, placement, config)?;
    check_placement(instance, job, 0, placement, gpus)
}

fn check_placement(
    instance: &Instance,
    job: &Job,
    k: usize,
    placement: &Placement,
    gpus: Option<&[GpuId]>,
) -> Result<(), Violation> {
    let id = job.id;
    let mut machines = HashSet::with_capacity(placement.len());
    for &(m, tasks) in placement {
        let machine = instance.machine(m).ok_or(Violation::UnknownMachine {
            job: id,
            segment: k,
            machine: m,
        })?;
        if !machines.insert(m) {
            return Err(Violation::DuplicatePlacement {
                job: id,
                segment: k,
                machine: m,
            });
        }
        if tasks.is_empty() {
            continue;
        }
        if !job.may_use(m) {
            return Err(Violation::MachineNotAllowed {
                job: id,
                segment: k,
                machine: m,
            });
        }
        for (task, n) in [
            (TaskKind::Worker, tasks.workers),
            (TaskKind::ParameterServer, tasks.ps),
        ] {
            if n > 0 && !machine.hosts.allows(task) {
                return Err(Violation::HostingNotAllowed {
                    job: id,
                    segment: k,
                    machine: m,
                    task,
                });
            }
        }
    }
    let total = placement.total();
    if total.workers == 0 {
        return Err(Violation::NoWorkers {
            job: id,
            segment: k,
        });
    }
    match &job.architecture {
        Architecture::ParameterServer(p) => {
            if total.ps == 0 {
                return Err(Violation::WorkersWithoutPs {
                    job: id,
                    segment: k,
                });
            }
            if total.workers > p.max_workers {
                return Err(Violation::TooManyWorkers {
                    job: id,
                    segment: k,
                    workers: total.workers,
                    max: p.max_workers,
                });
            }
            if total.ps > p.max_ps {
                return Err(Violation::TooManyPs {
                    job: id,
                    segment: k,
                    ps: total.ps,
                    max: p.max_ps,
                });
            }
            if p.ps_at_most_workers && total.ps > total.workers {
                return Err(Violation::PsExceedsWorkers {
                    job: id,
                    segment: k,
                    ps: total.ps,
                    workers: total.workers,
                });
            }
            if job.discipline.elasticity == Elasticity::Rigid
                && (total.workers != p.max_workers || total.ps != p.max_ps)
            {
                return Err(Violation::GangViolated {
                    job: id,
                    segment: k,
                    workers: total.workers,
                    ps: total.ps,
                    expected_workers: p.max_workers,
                    expected_ps: p.max_ps,
                });
            }
        }
        Architecture::RingAllReduce(r) => {
            if total.ps > 0 {
                return Err(Violation::PsForRingJob {
                    job: id,
                    segment: k,
                });
            }
            if !r.workers.allows(total.workers) {
                return Err(Violation::WorkerCountNotAllowed {
                    job: id,
                    segment: k,
                    workers: total.workers,
                });
            }
        }
    }
    if let Some(gpus) = gpus {
        check_gpu_ids(instance, job, k, placement, gpus)?;
    }
    Ok(())
}

fn check_gpu_ids(
    instance: &Instance,
    job: &Job,
    k: usize,
    placement: &Placement,
    gpus: &[GpuId],
) -> Result<(), Violation> {
    let mut unique = HashSet::with_capacity(gpus.len());
    let mut per_machine: HashMap<MachineId, u32> = HashMap::new();
    for &g in gpus {
        let valid = instance
            .machine(g.machine)
            .is_some_and(|m| f64::from(g.index) < m.capacity.gpus);
        if !valid {
            return Err(Violation::InvalidGpu {
                job: job.id,
                segment: k,
                gpu: g,
            });
        }
        if !unique.insert(g) {
            return Err(Violation::DuplicateGpu {
                job: job.id,
                segment: k,
                gpu: g,
            });
        }
        *per_machine.entry(g.machine).or_default() += 1;
    }
    let mut machines: Vec<MachineId> = per_machine.keys().copied().collect();
    machines.extend(placement.iter().map(|(m, _)| *m));
    machines.sort();
    machines.dedup();
    for m in machines {
        let tasks = placement
            .iter()
            .find(|(pm, _)| *pm == m)
            .map_or(Tasks::default(), |(_, t)| *t);
        let expected = demand_of(job, tasks).gpus;
        let got = per_machine.get(&m).copied().unwrap_or(0);
        if (expected - f64::from(got)).abs() > FIT_TOL * expected.max(1.0) {
            return Err(Violation::GpuCountMismatch {
                job: job.id,
                segment: k,
                machine: m,
                expected,
                got,
            });
        }
    }
    Ok(())
}

/// Resources used by `tasks` of `job`.
fn demand_of(job: &Job, tasks: Tasks) -> Resources {
    job.demand_for(tasks.workers, tasks.ps)
}

/// Resources `tasks` of `job` are charged in a segment (or simulator
/// allocation) run in `config` whose workers span `machines` machines:
/// their demand plus the ring's reservation
/// ([`Job::demand_with_reservation`]), with no NIC bandwidth under LOCAL
/// (the traffic stays on the machine). The one charging rule of [`verify`]
/// and of every ledger of the simulator (current use, open allocations and
/// plans, charged per allocation or plan segment, never per slot).
pub(crate) fn charged_demand(
    job: &Job,
    tasks: Tasks,
    config: Option<Configuration>,
    machines: usize,
) -> Resources {
    let d = job.demand_with_reservation(tasks.workers, tasks.ps, machines);
    match config {
        Some(Configuration::Local { .. }) => d.nic(0.0),
        _ => d,
    }
}

fn check_capacities(instance: &Instance, schedule: &Schedule) -> Result<(), Violation> {
    // Per machine: (slot, is_start, demand) events, swept in slot order.
    let n = instance.cluster().machines.len();
    let mut events: Vec<Vec<(u32, bool, Resources)>> = vec![Vec::new(); n];
    for js in &schedule.jobs {
        let Some(job) = instance.job(js.job) else {
            continue;
        };
        for seg in &js.segments {
            let spread = seg.placement.worker_machines();
            for &(m, tasks) in &seg.placement {
                let Some(pos) = instance.machine_position(m) else {
                    continue;
                };
                let d = charged_demand(job, tasks, seg.config, spread);
                events[pos].push((seg.slots.start, true, d));
                events[pos].push((seg.slots.end, false, d));
            }
        }
    }
    for (pos, mut ev) in events.into_iter().enumerate() {
        let machine = &instance.cluster().machines[pos];
        // Ends before starts at the same slot: ranges are end-exclusive.
        ev.sort_by_key(|&(slot, is_start, _)| (slot, is_start));
        let mut load = Resources::zero();
        let mut i = 0;
        while i < ev.len() {
            let slot = ev[i].0;
            while i < ev.len() && ev[i].0 == slot {
                let (_, is_start, d) = ev[i];
                load = if is_start {
                    load.plus(&d)
                } else {
                    load.minus(&d)
                };
                i += 1;
            }
            if let Some(resource) = load.first_excess(&machine.capacity, FIT_TOL) {
                return Err(Violation::CapacityExceeded {
                    machine: machine.id,
                    resource,
                    slot,
                    used: load.get(resource),
                    capacity: machine.capacity.get(resource),
                });
            }
        }
    }
    Ok(())
}

fn check_gpu_sharing(schedule: &Schedule) -> Result<(), Violation> {
    let mut uses: HashMap<GpuId, Vec<(Range<u32>, JobId)>> = HashMap::new();
    for js in &schedule.jobs {
        for seg in &js.segments {
            for &g in seg.gpus.iter().flatten() {
                uses.entry(g).or_default().push((seg.slots.clone(), js.job));
            }
        }
    }
    let mut gpus: Vec<GpuId> = uses.keys().copied().collect();
    gpus.sort();
    for g in gpus {
        let Some(list) = uses.get_mut(&g) else {
            continue;
        };
        list.sort_by_key(|(r, j)| (r.start, *j));
        for w in list.windows(2) {
            let ((a, ja), (b, jb)) = (&w[0], &w[1]);
            if b.start < a.end && ja != jb {
                return Err(Violation::GpuConflict {
                    gpu: g,
                    slot: b.start,
                    first: *ja,
                    second: *jb,
                });
            }
        }
    }
    Ok(())
}

/// `4 workers + 1 PS`, `1 worker`, `2 PSs`.
fn tasks(workers: u32, ps: u32) -> String {
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match (workers, ps) {
        (w, 0) => plural(w, "worker", "workers"),
        (0, p) => plural(p, "PS", "PSs"),
        (w, p) => format!(
            "{} + {}",
            plural(w, "worker", "workers"),
            plural(p, "PS", "PSs")
        ),
    }
}

/// One line per job (`job 3: rejected`, or `job 3:` and one line per
/// segment: `  slots 0..4: m3: 4 workers + 1 PS, m5: 2 workers`).
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for js in &self.jobs {
            if !js.admitted {
                writeln!(f, "{}: rejected", js.job)?;
                continue;
            }
            writeln!(f, "{}:", js.job)?;
            for seg in &js.segments {
                write!(f, "  slots {}..{}", seg.slots.start, seg.slots.end)?;
                match seg.config {
                    Some(Configuration::Local { .. }) => write!(f, " LOCAL")?,
                    Some(Configuration::Distributed) => write!(f, " DISTRIBUTED")?,
                    None => {}
                }
                write!(f, ":")?;
                for (i, (m, t)) in seg.placement.iter().enumerate() {
                    let sep = if i > 0 { "," } else { "" };
                    write!(f, "{sep} m{}: {}", m.0, tasks(t.workers, t.ps))?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
