//! What a simulation run measured.

use crate::model::{FIT_TOL, GpuId, Instance, JobId, units};
use crate::schedule::{JobSchedule, Placement, Schedule, Segment};

/// Mean fraction of the cluster's capacity of each resource held over a
/// run ([`SimResult::resource_use`]), each in `[0, 1]` for a run that
/// respects capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ResourceUse {
    /// GPUs.
    pub gpus: f64,
    /// CPU cores.
    pub cpu_cores: f64,
    /// Memory.
    pub memory: f64,
    /// NIC bandwidth (per direction).
    pub nic: f64,
}

/// Per-job measurements of one run.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct JobRecord {
    /// The job.
    pub job: JobId,
    /// Arrival, seconds.
    pub arrival_s: f64,
    /// Whether the policy ever gave the job resources (an allocation or a
    /// plan).
    pub admitted: bool,
    /// Whether the policy rejected the job.
    pub rejected: bool,
    /// First time the job held resources.
    pub start_s: Option<f64>,
    /// Completion time (the whole workload done).
    pub finish_s: Option<f64>,
    /// Job completion time `finish − arrival`, seconds.
    pub jct_s: Option<f64>,
    /// Queueing delay `start − arrival`, seconds.
    pub queueing_s: Option<f64>,
    /// Slot in which the job completed.
    pub completion_slot: Option<u32>,
    /// Utility `f(t̂ − a)` of the completion delay in slots (0 if unfinished).
    pub utility: f64,
    /// GPU-seconds held (including reconfiguration time).
    pub gpu_seconds: f64,
    /// Times the job was stopped before completing.
    pub preemptions: u32,
    /// Times the job was charged its reconfiguration time (a changed
    /// allocation or a resume).
    pub reconfigurations: u32,
    /// Work still to do at the end (0 when finished): mini-batches for PS
    /// jobs, iterations for ring-all-reduce jobs.
    pub remaining_work: f64,
    /// Why the policy rejected the job, when it said
    /// ([`Policy::rejection`](super::Policy::rejection)).
    #[cfg_attr(feature = "serde", serde(default))]
    pub rejection: Option<super::Rejection>,
    /// Why the job is unfinished: `Some` exactly when it neither completed
    /// nor was rejected. Read the job's end state with [`JobRecord::end`].
    /// Records written before this field existed read as `None`, and
    /// [`JobRecord::end`] then falls back to what the record says.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub unfinished: Option<Unfinished>,
}

/// How a job's run ended: exactly one of completed, rejected or unfinished
/// ([`JobRecord::end`]). Every report counts jobs by it, so
/// `completed + rejected + unfinished = jobs` in every [`RunSummary`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum JobEnd {
    /// The job finished its whole workload ([`JobRecord::finish_s`] is set).
    Completed,
    /// The policy turned the job away, with its reason when it gave one
    /// ([`JobRecord::rejection`]).
    Rejected {
        /// Why, when the policy said.
        reason: Option<super::Rejection>,
    },
    /// The run ended with the job neither completed nor rejected.
    Unfinished(Unfinished),
}

/// Why a job is unfinished at the end of a run. The first case that
/// applies, in this order:
///
/// 1. [`Unfinished::NoRoom`]: the job never held resources and could not
///    have, under any policy;
/// 2. [`Unfinished::Horizon`]: the run stopped at the horizon
///    ([`StopAt::Horizon`](super::StopAt)) with the job still waiting or
///    running;
/// 3. [`Unfinished::Stalled`]: the run stalled — no job running, no plan
///    left, no arrival to come ([`SimResult::stalled`]) — after the job
///    had been admitted (it held resources or a plan) but before it
///    finished;
/// 4. [`Unfinished::NeverAdmitted`]: the run stalled with the job never
///    admitted although its smallest allocation fits the empty cluster:
///    the policy's own rules kept it waiting (a gang size it insists on,
///    a queue blocked behind such a job).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Unfinished {
    /// The job never held resources and its smallest allocation
    /// ([`Job::min_tasks`](crate::model::Job::min_tasks)) cannot be placed
    /// on the empty cluster: it asks for more of some resource than all
    /// machines together have, or one of its tasks is larger than every
    /// machine ([`fits_empty_cluster`]).
    NoRoom,
    /// The run stopped at the horizon before the job finished.
    Horizon,
    /// The run stalled after the job had been admitted, before it
    /// finished (a plan that ended early, a pause never resumed).
    Stalled,
    /// The run stalled with the job never admitted, though it fits the
    /// empty cluster.
    NeverAdmitted,
}

impl Unfinished {
    /// Every case, in the order of the summaries' columns.
    pub const ALL: [Unfinished; 4] = [
        Unfinished::NeverAdmitted,
        Unfinished::NoRoom,
        Unfinished::Horizon,
        Unfinished::Stalled,
    ];

    /// A short label: `"never admitted"`, `"no room"`, `"horizon"`,
    /// `"stalled"`.
    pub fn label(self) -> &'static str {
        match self {
            Unfinished::NeverAdmitted => "never admitted",
            Unfinished::NoRoom => "no room",
            Unfinished::Horizon => "horizon",
            Unfinished::Stalled => "stalled",
        }
    }

    /// What the label means, for notes under a table.
    pub fn explain(self) -> &'static str {
        match self {
            Unfinished::NeverAdmitted => {
                "never started by the policy, though their smallest allocation fits the empty cluster"
            }
            Unfinished::NoRoom => "their smallest allocation does not fit the empty cluster",
            Unfinished::Horizon => "still waiting or running at the horizon",
            Unfinished::Stalled => "admitted, then left unfinished when nothing more could run",
        }
    }
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl JobEnd {
    /// Whether the job completed.
    pub fn is_completed(&self) -> bool {
        matches!(self, JobEnd::Completed)
    }

    /// Whether the policy rejected the job.
    pub fn is_rejected(&self) -> bool {
        matches!(self, JobEnd::Rejected { .. })
    }

    /// Why the job is unfinished, if it is.
    pub fn unfinished(&self) -> Option<Unfinished> {
        match self {
            JobEnd::Unfinished(u) => Some(*u),
            _ => None,
        }
    }
}

impl JobRecord {
    /// The job's one end state: [`JobEnd::Completed`] when it finished
    /// ([`JobRecord::finish_s`]), else [`JobEnd::Rejected`] when the policy
    /// rejected it, else [`JobEnd::Unfinished`] with
    /// [`JobRecord::unfinished`]. A record without that field (written
    /// before it existed) reads [`Unfinished::Stalled`] if the job was
    /// admitted and [`Unfinished::NeverAdmitted`] otherwise.
    pub fn end(&self) -> JobEnd {
        if self.finish_s.is_some() {
            JobEnd::Completed
        } else if self.rejected {
            JobEnd::Rejected {
                reason: self.rejection.clone(),
            }
        } else {
            JobEnd::Unfinished(self.unfinished.unwrap_or(if self.admitted {
                Unfinished::Stalled
            } else {
                Unfinished::NeverAdmitted
            }))
        }
    }
}

/// Whether the smallest allocation of `job`
/// ([`Job::min_tasks`](crate::model::Job::min_tasks)) can be placed on the
/// empty `cluster`, on the machines the job may use, as far as these
/// necessary conditions tell: its total demand is within those machines'
/// total capacity in every resource; each of its task kinds fits on one
/// machine that may host it; and a ring-all-reduce job that reserves
/// bandwidth either has all its workers fit on one machine or, spread over
/// machines that each keep the reservation within their NIC, fits there
/// ([`Job::demand_with_reservation`](crate::model::Job::demand_with_reservation)).
/// `false` proves the job can never start ([`Unfinished::NoRoom`]); `true`
/// does not prove that a packing exists.
///
/// ```
/// use dmlsched::model::{Cluster, Job, JobId, RarJob, Resources, WorkerCounts};
/// use dmlsched::sim::fits_empty_cluster;
///
/// // Two machines of 4 GPUs and 16 CPU cores.
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
/// let ring = |gpus, cores| RarJob {
///     workers: WorkerCounts::Fixed(gpus),
///     worker: Resources::zero().gpus(1.0).cpu_cores(cores),
///     ..RarJob::default()
/// };
/// assert!(fits_empty_cluster(&Job::new(JobId(0), 0.0, ring(8, 2.0)), &cluster));
/// // Nine GPUs are more than the cluster has.
/// assert!(!fits_empty_cluster(&Job::new(JobId(1), 0.0, ring(9, 1.0)), &cluster));
/// // One worker of 20 CPU cores: within the cluster's 32 in all, but on no machine.
/// assert!(!fits_empty_cluster(&Job::new(JobId(2), 0.0, ring(1, 20.0)), &cluster));
/// ```
pub fn fits_empty_cluster(job: &crate::model::Job, cluster: &crate::model::Cluster) -> bool {
    use crate::model::{Resources, TaskKind};
    let (workers, ps) = job.min_tasks();
    let usable = |kind: TaskKind| {
        cluster
            .machines
            .iter()
            .filter(move |m| job.may_use(m.id) && m.hosts.allows(kind))
    };
    let total = cluster
        .machines
        .iter()
        .filter(|m| job.may_use(m.id))
        .fold(Resources::zero(), |t, m| t.plus(&m.capacity));
    if !job.min_demand().fits_in(&total, FIT_TOL) {
        return false;
    }
    let kinds = [(TaskKind::Worker, workers), (TaskKind::ParameterServer, ps)];
    let each_fits = kinds.iter().all(|&(kind, n)| {
        n == 0
            || job
                .task_demand(kind)
                .is_none_or(|d| usable(kind).any(|m| d.fits_in(&m.capacity, FIT_TOL)))
    });
    let b = job.reserved_nic_bps(2);
    if !each_fits || b <= 0.0 {
        return each_fits;
    }
    let Some(w) = job.task_demand(TaskKind::Worker) else {
        return true;
    };
    let one =
        usable(TaskKind::Worker).any(|m| job.demand_for(workers, 0).fits_in(&m.capacity, FIT_TOL));
    let spread: f64 = usable(TaskKind::Worker)
        .map(|m| {
            let mut room = m.capacity;
            room.nic_bps -= b;
            count_fitting(w, &room)
        })
        .sum();
    one || spread >= f64::from(workers)
}

/// How many tasks of demand `d` fit in `room` (0 when some resource of
/// `room` is below zero beyond the tolerance; `+∞` for a zero demand).
fn count_fitting(d: &crate::model::Resources, room: &crate::model::Resources) -> f64 {
    use crate::model::ResourceKind;
    let mut n = f64::INFINITY;
    for kind in ResourceKind::ALL {
        let (need, have) = (d.get(kind), room.get(kind));
        let slack = FIT_TOL * have.abs().max(1.0);
        if have < -slack {
            return 0.0;
        }
        if need > 0.0 {
            n = n.min(((have + slack) / need).floor().max(0.0));
        }
    }
    n
}

/// One step of the cluster's GPU use: from `time_s` until the next point,
/// `gpus_used` of `gpus_total` GPUs are allocated.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UtilizationPoint {
    /// Start of the step, seconds.
    pub time_s: f64,
    /// GPUs allocated.
    pub gpus_used: f64,
}

/// One constant allocation of a job over `[from_s, to_s)`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct AllocationRecord {
    /// The job.
    pub job: JobId,
    /// Start, seconds.
    pub from_s: f64,
    /// End, seconds.
    pub to_s: f64,
    /// Tasks per machine.
    pub placement: Placement,
    /// GPU ids, when the policy assigned them.
    pub gpus: Option<Vec<GpuId>>,
}

/// Everything a run measured. Equal seeds and inputs give equal results
/// (except [`SimResult::decision_time_s`], a wall-clock measurement).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct SimResult {
    /// The policy's name.
    pub policy: String,
    /// One record per instance job, in instance order.
    pub jobs: Vec<JobRecord>,
    /// GPU use over time, a step function starting at the first event.
    pub utilization: Vec<UtilizationPoint>,
    /// Every allocation held, in the order they ended.
    pub allocations: Vec<AllocationRecord>,
    /// Total GPUs of the cluster.
    pub gpus_total: f64,
    /// Time of the first arrival.
    pub start_s: f64,
    /// Time the run ended (last completion, horizon, or stall).
    pub end_s: f64,
    /// Events delivered to the policy.
    pub events: u64,
    /// Whether the run ended with unfinished jobs that nothing could start
    /// (no running job, no plan and no arrival left).
    pub stalled: bool,
    /// Wall-clock seconds spent inside the policy.
    pub decision_time_s: f64,
}

/// Summary statistics of one run.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RunSummary {
    /// The policy's name.
    pub policy: String,
    /// Jobs in the instance.
    pub jobs: usize,
    /// Jobs completed.
    pub completed: usize,
    /// Jobs rejected.
    pub rejected: usize,
    /// Jobs unfinished: `completed + rejected + unfinished = jobs`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub unfinished: usize,
    /// The unfinished jobs by reason.
    #[cfg_attr(feature = "serde", serde(default))]
    pub unfinished_by: UnfinishedCounts,
    /// Whether the run stalled ([`SimResult::stalled`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub stalled: bool,
    /// Mean JCT over the `completed` jobs, seconds (`NaN` if none).
    pub avg_jct_s: f64,
    /// Median JCT (nearest-rank), seconds.
    pub p50_jct_s: f64,
    /// 95th percentile JCT (nearest-rank), seconds.
    pub p95_jct_s: f64,
    /// 99th percentile JCT (nearest-rank), seconds.
    pub p99_jct_s: f64,
    /// Mean queueing delay over started jobs, seconds.
    pub avg_queueing_s: f64,
    /// Last completion minus first arrival, seconds.
    pub makespan_s: f64,
    /// Mean fraction of GPUs allocated between the first arrival and the
    /// end of the run.
    pub gpu_utilization: f64,
    /// Sum of the jobs' utilities.
    pub total_utility: f64,
    /// Total preemptions.
    pub preemptions: u64,
    /// Wall-clock seconds inside the policy.
    pub decision_time_s: f64,
    /// A proven upper bound on the total utility any schedule could earn,
    /// from the policy's certificate ([`Policy::finish`](super::Policy::finish)),
    /// when the policy gives one with a valid bound; `None` from
    /// [`SimResult::summary`], which knows no policy. The bound is of the
    /// policy's own model: the simulator's accounting may differ.
    #[cfg_attr(feature = "serde", serde(default))]
    pub utility_bound: Option<f64>,
    /// The resource that binds: of GPUs, CPU cores, memory and NIC
    /// bandwidth, the one with the largest mean share of the cluster's
    /// capacity held over the run, and that share
    /// ([`ResourceUse::binding`]); `None` from [`SimResult::summary`], which
    /// knows no capacity ([`RunSummary::with_resource_use`] sets it).
    #[cfg_attr(feature = "serde", serde(default))]
    pub binding: Option<(String, f64)>,
    /// The run's fairness over its completed jobs
    /// ([`SimResult::fairness`]); `None` from [`SimResult::summary`], which
    /// knows no solo runs ([`RunSummary::with_fairness`] sets it).
    #[cfg_attr(feature = "serde", serde(default))]
    pub fairness: Option<super::Fairness>,
}

impl RunSummary {
    /// The summary with `binding` set from the run's
    /// resource use ([`SimResult::resource_use`]).
    #[must_use]
    pub fn with_resource_use(mut self, used: &ResourceUse) -> Self {
        let (name, share) = used.binding();
        self.binding = Some((name.to_string(), share));
        self
    }

    /// The summary with `fairness` set.
    #[must_use]
    pub fn with_fairness(mut self, fairness: Option<super::Fairness>) -> Self {
        self.fairness = fairness;
        self
    }
}

impl ResourceUse {
    /// The resource with the largest mean share held (`"GPU"`, `"CPU"`,
    /// `"memory"` or `"NIC"`, the first in that order on a tie) and its
    /// share: the one a busier cluster runs out of first.
    ///
    /// ```
    /// use dmlsched::sim::ResourceUse;
    /// let used = ResourceUse { gpus: 0.4, cpu_cores: 0.2, memory: 0.1, nic: 0.6 };
    /// assert_eq!(used.binding(), ("NIC", 0.6));
    /// ```
    pub fn binding(&self) -> (&'static str, f64) {
        [
            ("GPU", self.gpus),
            ("CPU", self.cpu_cores),
            ("memory", self.memory),
            ("NIC", self.nic),
        ]
        .into_iter()
        .fold(("GPU", f64::NEG_INFINITY), |best, r| {
            if r.1 > best.1 { r } else { best }
        })
    }
}

/// Unfinished jobs of a run by [`Unfinished`] reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UnfinishedCounts {
    /// [`Unfinished::NeverAdmitted`].
    pub never_admitted: usize,
    /// [`Unfinished::NoRoom`].
    pub no_room: usize,
    /// [`Unfinished::Horizon`].
    pub horizon: usize,
    /// [`Unfinished::Stalled`].
    pub stalled: usize,
}

impl UnfinishedCounts {
    /// The count of one reason.
    pub fn get(&self, reason: Unfinished) -> usize {
        match reason {
            Unfinished::NeverAdmitted => self.never_admitted,
            Unfinished::NoRoom => self.no_room,
            Unfinished::Horizon => self.horizon,
            Unfinished::Stalled => self.stalled,
        }
    }

    fn add(&mut self, reason: Unfinished) {
        let n = match reason {
            Unfinished::NeverAdmitted => &mut self.never_admitted,
            Unfinished::NoRoom => &mut self.no_room,
            Unfinished::Horizon => &mut self.horizon,
            Unfinished::Stalled => &mut self.stalled,
        };
        *n += 1;
    }

    /// The total.
    pub fn total(&self) -> usize {
        self.never_admitted + self.no_room + self.horizon + self.stalled
    }
}

/// Nearest-rank percentile of sorted values: the smallest value with at
/// least `q·n` values at or below it (`NaN` for no values).
///
/// ```
/// use dmlsched::sim::percentile;
///
/// let jcts = [10.0, 20.0, 30.0, 40.0];
/// assert_eq!(percentile(&jcts, 0.5), 20.0);
/// assert_eq!(percentile(&jcts, 0.51), 30.0);
/// assert_eq!(percentile(&jcts, 1.0), 40.0);
/// assert_eq!(percentile(&jcts, 0.0), 10.0);
/// assert!(percentile(&[], 0.5).is_nan());
/// ```
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

impl SimResult {
    /// The run as a time-slotted [`Schedule`]: each allocation covers the
    /// slots from the one containing its start to the one containing its
    /// end. Exact when every allocation starts and ends on slot boundaries
    /// (runs with [`Decisions::SlotBoundaries`](super::Decisions) and
    /// `ProgressMode::Floor`, or plans); otherwise a job finishing inside a
    /// slot and its successor both cover that slot, and
    /// [`crate::schedule::verify`] may report the overlap. Rejected jobs
    /// appear as not admitted; jobs never run are left out.
    pub fn to_schedule(&self, instance: &Instance) -> Schedule {
        let slot_s = instance.slot_length_s();
        let mut jobs: Vec<JobSchedule> = Vec::new();
        for r in self.jobs.iter().filter(|r| r.admitted || r.rejected) {
            let mut segments: Vec<Segment> = self
                .allocations
                .iter()
                .filter(|a| a.job == r.job && a.to_s > a.from_s)
                .map(|a| {
                    let start = units::slot_of(a.from_s, slot_s);
                    let end = units::slots_covering(a.to_s, slot_s).max(start + 1);
                    Segment {
                        slots: start..end,
                        placement: a.placement.clone(),
                        gpus: a.gpus.clone(),
                        config: None,
                    }
                })
                .collect();
            segments.sort_by_key(|s| s.slots.start);
            // Merge touching segments with the same allocation.
            let mut merged: Vec<Segment> = Vec::with_capacity(segments.len());
            for s in segments {
                match merged.last_mut() {
                    Some(l)
                        if l.slots.end == s.slots.start
                            && l.placement == s.placement
                            && l.gpus == s.gpus =>
                    {
                        l.slots.end = s.slots.end;
                    }
                    _ => merged.push(s),
                }
            }
            jobs.push(JobSchedule {
                job: r.job,
                admitted: !r.rejected || !merged.is_empty(),
                segments: merged,
            });
        }
        Schedule { jobs }
    }

    /// JCTs of the completed jobs, sorted.
    pub fn sorted_jcts(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.jobs.iter().filter_map(|j| j.jct_s).collect();
        v.sort_by(f64::total_cmp);
        v
    }

    /// Mean fraction of GPUs allocated over `[start_s, end_s]`.
    pub fn gpu_utilization(&self) -> f64 {
        let span = self.end_s - self.start_s;
        if span <= 0.0 || self.gpus_total <= 0.0 {
            return 0.0;
        }
        let mut area = 0.0;
        for (k, p) in self.utilization.iter().enumerate() {
            let next = self
                .utilization
                .get(k + 1)
                .map_or(self.end_s, |q| q.time_s)
                .min(self.end_s);
            area += p.gpus_used * (next - p.time_s).max(0.0);
        }
        area / (span * self.gpus_total)
    }

    /// Mean fraction of the cluster's capacity of each resource that the
    /// run's allocations held over `[start_s, end_s]`: each allocation
    /// charges its tasks' demands, plus a ring's reserved NIC bandwidth on
    /// every machine holding its workers when they span several machines
    /// ([`Job::demand_with_reservation`](crate::model::Job::demand_with_reservation)).
    /// A resource the cluster does not have reads 0. Shows which resource
    /// bounds a run: a run limited by its parameter servers holds much CPU
    /// and NIC and few GPUs.
    pub fn resource_use(&self, instance: &Instance) -> ResourceUse {
        let span = self.end_s - self.start_s;
        let capacity = instance.cluster().total_capacity();
        let mut held = crate::model::Resources::zero();
        for a in &self.allocations {
            let Some(job) = instance.job(a.job) else {
                continue;
            };
            let from = a.from_s.max(self.start_s);
            let to = a.to_s.min(self.end_s);
            if to <= from {
                continue;
            }
            let spread = a.placement.iter().filter(|(_, t)| t.workers > 0).count();
            for (_, t) in a.placement.iter() {
                let d = job.demand_with_reservation(t.workers, t.ps, spread);
                held = held.plus(&d.scaled(to - from));
            }
        }
        let share = |used: f64, cap: f64| {
            if cap > 0.0 && span > 0.0 {
                used / (cap * span)
            } else {
                0.0
            }
        };
        ResourceUse {
            gpus: share(held.gpus, capacity.gpus),
            cpu_cores: share(held.cpu_cores, capacity.cpu_cores),
            memory: share(held.memory_bytes, capacity.memory_bytes),
            nic: share(held.nic_bps, capacity.nic_bps),
        }
    }

    /// Summary statistics.
    pub fn summary(&self) -> RunSummary {
        let jcts = self.sorted_jcts();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let queue: Vec<f64> = self.jobs.iter().filter_map(|j| j.queueing_s).collect();
        let last_finish = self
            .jobs
            .iter()
            .filter_map(|j| j.finish_s)
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut completed, mut rejected) = (0, 0);
        let mut unfinished_by = UnfinishedCounts::default();
        for j in &self.jobs {
            match j.end() {
                JobEnd::Completed => completed += 1,
                JobEnd::Rejected { .. } => rejected += 1,
                JobEnd::Unfinished(u) => unfinished_by.add(u),
            }
        }
        RunSummary {
            policy: self.policy.clone(),
            jobs: self.jobs.len(),
            completed,
            rejected,
            unfinished: unfinished_by.total(),
            unfinished_by,
            stalled: self.stalled,
            avg_jct_s: mean(&jcts),
            p50_jct_s: percentile(&jcts, 0.5),
            p95_jct_s: percentile(&jcts, 0.95),
            p99_jct_s: percentile(&jcts, 0.99),
            avg_queueing_s: mean(&queue),
            makespan_s: if last_finish.is_finite() {
                last_finish - self.start_s
            } else {
                f64::NAN
            },
            gpu_utilization: self.gpu_utilization(),
            // `+ 0.0` turns an empty sum's −0 into 0.
            total_utility: self.jobs.iter().map(|j| j.utility).sum::<f64>() + 0.0,
            preemptions: self.jobs.iter().map(|j| u64::from(j.preemptions)).sum(),
            decision_time_s: self.decision_time_s,
            utility_bound: None,
            binding: None,
            fairness: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(percentile(&v, 0.5), 5.0);
        assert_eq!(percentile(&v, 0.95), 10.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert!(percentile(&[], 0.5).is_nan());
    }
}
