//! A validated instance: cluster, jobs, slot length and horizon.

use std::collections::{HashMap, HashSet};

use super::cluster::{Cluster, FIT_TOL, Machine, MachineId, Resources, TaskKind};
use super::error::{Entity, ModelError};
use super::job::{Architecture, Job, JobId, MAX_TOTAL_MINIBATCHES, PsJob, RarJob};
use super::units::{self, Num};
use super::utility::{Utility, UtilityDefect};

/// The JSON format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A validated scheduling instance.
///
/// Construct with [`Instance::new`] (or deserialize from JSON, which runs the
/// same validation); after that every algorithm may assume valid data. Fields
/// are read through accessors so the invariants cannot be broken afterwards.
///
/// ```
/// use dmlsched::model::*;
/// use dmlsched::model::units::{gb, gbps, mb};
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(32.0).memory(gb(256.0)).nic(gbps(25.0)), gbps(200.0));
/// let ps = PsJob {
///     epochs: 2, data_chunks: 4, minibatches_per_chunk: 100,
///     minibatch_compute_s: 0.2, gradient_bytes: mb(100.0),
///     worker: Resources::zero().gpus(1.0).cpu_cores(4.0).memory(gb(16.0)).nic(gbps(5.0)),
///     ps: Resources::zero().cpu_cores(4.0).memory(gb(16.0)).nic(gbps(5.0)),
///     max_workers: 4, max_ps: 2, ps_at_most_workers: true,
///     sync: SyncMode::Asynchronous, layers: None,
/// };
/// let job = Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps));
/// let inst = Instance::new(cluster, vec![job], 3600.0, 24).unwrap();
/// assert_eq!(inst.arrival_slot(&inst.jobs()[0]), 0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    cluster: Cluster,
    jobs: Vec<Job>,
    slot_length_s: f64,
    horizon_slots: u32,
    machine_index: HashMap<MachineId, usize>,
    job_index: HashMap<JobId, usize>,
}

impl Instance {
    /// Validates and builds an instance.
    ///
    /// # Errors
    ///
    /// The first [`ModelError`] found, checking the instance (slot length,
    /// horizon), then the cluster (machines, racks, ring parameters), then
    /// each job in order: non-finite and negative numbers, zero workloads and
    /// counts, a workload above
    /// [`MAX_TOTAL_MINIBATCHES`](super::MAX_TOTAL_MINIBATCHES), contradictory
    /// fields, utilities that increase with delay, arrivals at or after the
    /// horizon, unknown machines, and whether one task and the smallest
    /// allocation fit; last, whether the jobs' best utilities (at zero delay)
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Instance, Job, JobId, ModelError, PsJob, Resources};
    ///
    /// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
    /// let job = |id, arrival_s| Job::new(JobId(id), arrival_s, PsJob::default());
    /// // 24 slots of one hour: the horizon ends at 86 400 s.
    /// let inst = Instance::new(cluster.clone(), vec![job(0, 0.0), job(1, 7200.0)], 3600.0, 24)?;
    /// assert_eq!(inst.horizon_s(), 86_400.0);
    /// assert_eq!(inst.arrival_slot(&inst.jobs()[1]), 2);
    /// // Invalid input is a typed error, not a panic.
    /// let late = Instance::new(cluster.clone(), vec![job(0, 90_000.0)], 3600.0, 24);
    /// assert!(matches!(late, Err(ModelError::ArrivalAfterHorizon { .. })));
    /// let twice = Instance::new(cluster, vec![job(3, 0.0), job(3, 60.0)], 3600.0, 24);
    /// assert_eq!(twice, Err(ModelError::DuplicateJob { job: JobId(3) }));
    /// # Ok::<(), ModelError>(())
    /// ```
    /// sum to a finite number.
    pub fn new(
        cluster: Cluster,
        jobs: Vec<Job>,
        slot_length_s: f64,
        horizon_slots: u32,
    ) -> Result<Instance, ModelError> {
        if !(slot_length_s.is_finite() && slot_length_s > 0.0) {
            return Err(ModelError::BadSlotLength {
                value: slot_length_s,
            });
        }
        if horizon_slots == 0 {
            return Err(ModelError::ZeroHorizon);
        }
        let machine_index = validate_cluster(&cluster)?;
        let horizon_s = slot_length_s * f64::from(horizon_slots);
        let mut job_index = HashMap::with_capacity(jobs.len());
        let mut utility_sum = 0.0;
        for (i, job) in jobs.iter().enumerate() {
            if job_index.insert(job.id, i).is_some() {
                return Err(ModelError::DuplicateJob { job: job.id });
            }
            validate_job(
                job,
                &cluster,
                &|m| machine_index.contains_key(&m),
                horizon_s,
            )?;
            let best = job.utility.value(0);
            utility_sum += best;
            if !utility_sum.is_finite() {
                return Err(ModelError::UtilitySumNotFinite {
                    job: job.id,
                    utility: best,
                });
            }
        }
        Ok(Instance {
            cluster,
            jobs,
            slot_length_s,
            horizon_slots,
            machine_index,
            job_index,
        })
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The jobs, in the order given.
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// Slot length in seconds (> 0).
    pub fn slot_length_s(&self) -> f64 {
        self.slot_length_s
    }

    /// Number of slots in the horizon (≥ 1); slots are `0..horizon_slots`.
    pub fn horizon_slots(&self) -> u32 {
        self.horizon_slots
    }

    /// End of the horizon in seconds.
    pub fn horizon_s(&self) -> f64 {
        self.slot_length_s * f64::from(self.horizon_slots)
    }

    /// The machine with this id.
    pub fn machine(&self, id: MachineId) -> Option<&Machine> {
        self.machine_position(id).map(|i| &self.cluster.machines[i])
    }

    /// Position of a machine in [`Cluster::machines`].
    pub fn machine_position(&self, id: MachineId) -> Option<usize> {
        // Ids are usually their positions: no hashing then.
        let guess = id.0 as usize;
        if self.cluster.machines.get(guess).is_some_and(|m| m.id == id) {
            return Some(guess);
        }
        self.machine_index.get(&id).copied()
    }

    /// The job with this id.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.job_position(id).map(|i| &self.jobs[i])
    }

    /// Position of a job in [`Instance::jobs`].
    pub fn job_position(&self, id: JobId) -> Option<usize> {
        // Ids are usually their positions: no hashing then.
        let guess = id.0 as usize;
        if self.jobs.get(guess).is_some_and(|j| j.id == id) {
            return Some(guess);
        }
        self.job_index.get(&id).copied()
    }

    /// Job positions in arrival order (ties by position): the order in
    /// which online algorithms and the simulator see the jobs.
    pub fn arrival_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.jobs.len()).collect();
        order.sort_by(|&a, &b| {
            self.jobs[a]
                .arrival_s
                .total_cmp(&self.jobs[b].arrival_s)
                .then(a.cmp(&b))
        });
        order
    }

    /// The 0-based slot a job arrives in, `⌊arrival_s / slot_length_s⌋`
    /// (always `< horizon_slots` for a valid instance).
    pub fn arrival_slot(&self, job: &Job) -> u32 {
        units::slot_of(job.arrival_s, self.slot_length_s)
    }

    /// Reads an instance from JSON and validates it.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Json`] for malformed JSON, unknown fields or wrong
    /// types, naming the path of the field (`jobs[3].architecture.
    /// parameter_server.epochs: invalid type: …`) and the line and column;
    /// [`crate::Error::Model`] for an unsupported `format_version` or an
    /// invalid instance.
    ///
    /// ```
    /// # #[cfg(feature = "serde")] {
    /// use dmlsched::model::Instance;
    ///
    /// let text = r#"{
    ///   "format_version": 1, "slot_length_s": 60.0, "horizon_slots": 10,
    ///   "cluster": {"machines": [{"id": 0, "intra_bandwidth_bps": 1e10,
    ///     "capacity": {"gpus": 2, "cpu_cores": 8, "memory_bytes": 0, "nic_bps": 0}}]},
    ///   "jobs": [{"id": 0, "arrival_s": 30.0, "architecture": {"ring_all_reduce": {
    ///     "workers": {"fixed": 2}, "iterations": 100, "model_bytes": 1e8,
    ///     "minibatch_size": 32, "forward_per_sample_s": 0.001, "backward_per_iteration_s": 0.05,
    ///     "worker": {"gpus": 1, "cpu_cores": 1, "memory_bytes": 0, "nic_bps": 0}}}}]
    /// }"#;
    /// let instance = Instance::from_json(text)?;
    /// assert_eq!(instance.jobs()[0].max_workers(), 2);
    /// assert_eq!(instance.horizon_s(), 600.0);
    /// // A misspelt field is an error naming where it is.
    /// let typo = Instance::from_json(&text.replace("\"iterations\"", "\"iteratons\""));
    /// let Err(err @ dmlsched::Error::Json(_)) = typo else { panic!("{typo:?}") };
    /// assert!(err.to_string().contains("jobs[0].architecture"), "{err}");
    /// // So is a ring of three workers on two GPUs (an invalid instance).
    /// let too_big = Instance::from_json(&text.replace("\"fixed\": 2", "\"fixed\": 3"));
    /// assert!(matches!(too_big, Err(dmlsched::Error::Model(_))));
    /// # }
    /// # Ok::<(), dmlsched::Error>(())
    /// ```
    #[cfg(feature = "serde")]
    pub fn from_json(text: &str) -> crate::Result<Instance> {
        let file: serde_impl::InstanceFile = crate::error::json_from_str(text)?;
        Ok(Instance::try_from(file)?)
    }

    /// Writes the instance as pretty JSON (with `format_version`).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Json`] if serialization fails (it does not for a
    /// valid instance).
    #[cfg(feature = "serde")]
    pub fn to_json(&self) -> crate::Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

/// Number rules of the validation.
#[derive(Clone, Copy)]
enum Rule {
    NonNegative,
    Positive,
}

fn num(entity: Entity, field: &str, value: f64, rule: Rule) -> Result<(), ModelError> {
    let field = || field.to_string();
    if !value.is_finite() {
        return Err(ModelError::NonFinite {
            entity,
            field: field(),
            value,
        });
    }
    match rule {
        Rule::NonNegative | Rule::Positive if value < 0.0 => Err(ModelError::Negative {
            entity,
            field: field(),
            value,
        }),
        Rule::Positive if value == 0.0 => Err(ModelError::NonPositive {
            entity,
            field: field(),
            value,
        }),
        _ => Ok(()),
    }
}

fn resources(entity: Entity, prefix: &str, r: &Resources) -> Result<(), ModelError> {
    for (kind, v) in r.iter() {
        num(
            entity,
            &format!("{prefix}.{}", kind.name()),
            v,
            Rule::NonNegative,
        )?;
    }
    Ok(())
}

fn inconsistent(entity: Entity, field: &str, reason: impl Into<String>) -> ModelError {
    ModelError::Inconsistent {
        entity,
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// Checks `cluster` as an instance checks it; the position of every
/// machine by id.
pub(crate) fn validate_cluster(cluster: &Cluster) -> Result<HashMap<MachineId, usize>, ModelError> {
    if cluster.machines.is_empty() {
        return Err(ModelError::EmptyCluster);
    }
    let mut racks = HashSet::new();
    for rack in &cluster.racks {
        if !racks.insert(rack.id) {
            return Err(ModelError::DuplicateRack { rack: rack.id });
        }
        if let Some(b) = rack.uplink_bps {
            num(Entity::Rack(rack.id), "uplink_bps", b, Rule::Positive)?;
        }
    }
    validate_gpu_types(cluster)?;
    let mut index = HashMap::with_capacity(cluster.machines.len());
    for (i, m) in cluster.machines.iter().enumerate() {
        let e = Entity::Machine(m.id);
        if index.insert(m.id, i).is_some() {
            return Err(ModelError::DuplicateMachine { machine: m.id });
        }
        resources(e, "capacity", &m.capacity)?;
        if m.capacity.is_zero() {
            return Err(ModelError::EmptyMachine { machine: m.id });
        }
        num(
            e,
            "intra_bandwidth_bps",
            m.intra_bandwidth_bps,
            Rule::Positive,
        )?;
        if let Some(rack) = m.rack
            && !racks.contains(&rack)
        {
            return Err(ModelError::UnknownRack {
                machine: m.id,
                rack,
            });
        }
        validate_machine_gpu_type(cluster, m)?;
    }
    let ring = &cluster.ring;
    let c = Entity::Cluster;
    num(
        c,
        "ring.external_bandwidth_bps",
        ring.external_bandwidth_bps,
        Rule::Positive,
    )?;
    num(
        c,
        "ring.reduction_speed_bps",
        ring.reduction_speed_bps,
        Rule::Positive,
    )?;
    num(
        c,
        "ring.overhead_per_server_s",
        ring.overhead_per_server_s,
        Rule::NonNegative,
    )?;
    num(
        c,
        "ring.contender_ratio",
        ring.contender_ratio,
        Rule::Positive,
    )?;
    if ring.contender_ratio > 1.0 {
        return Err(inconsistent(
            c,
            "ring.contender_ratio",
            format!("must be in (0, 1], got {}", Num(ring.contender_ratio)),
        ));
    }
    if let super::cluster::Degradation::Linear { alpha } = ring.degradation {
        num(c, "ring.degradation.alpha", alpha, Rule::NonNegative)?;
    }
    Ok(index)
}

/// The cluster's GPU type names: each non-empty and named once.
fn validate_gpu_types(cluster: &Cluster) -> Result<(), ModelError> {
    let mut seen = HashSet::new();
    for t in &cluster.gpu_types {
        if t.is_empty() {
            return Err(inconsistent(
                Entity::Cluster,
                "gpu_types",
                "a GPU type name is empty",
            ));
        }
        if !seen.insert(t.as_str()) {
            return Err(ModelError::DuplicateGpuType {
                gpu_type: t.clone(),
            });
        }
    }
    Ok(())
}

/// A machine's GPU type: one of the cluster's, given exactly when the
/// cluster names types and the machine has GPUs.
fn validate_machine_gpu_type(cluster: &Cluster, m: &Machine) -> Result<(), ModelError> {
    match &m.gpu_type {
        Some(t) if !cluster.gpu_types.contains(t) => Err(ModelError::UnknownGpuType {
            entity: Entity::Machine(m.id),
            gpu_type: t.clone(),
        }),
        Some(_) if m.capacity.gpus <= 0.0 => Err(inconsistent(
            Entity::Machine(m.id),
            "gpu_type",
            "a machine without GPUs has no GPU type",
        )),
        None if !cluster.gpu_types.is_empty() && m.capacity.gpus > 0.0 => {
            Err(ModelError::MissingGpuType { machine: m.id })
        }
        _ => Ok(()),
    }
}

/// A job's GPU speeds: finite and positive, on the cluster's types only,
/// and one per type when the cluster names several.
fn validate_gpu_speeds(job: &Job, cluster: &Cluster) -> Result<(), ModelError> {
    let e = Entity::Job(job.id);
    for (t, &speed) in &job.gpu_speeds {
        if !cluster.gpu_types.contains(t) {
            return Err(ModelError::UnknownGpuType {
                entity: e,
                gpu_type: t.clone(),
            });
        }
        num(e, &format!("gpu_speeds.{t}"), speed, Rule::Positive)?;
    }
    if cluster.gpu_types.len() >= 2
        && let Some(t) = cluster
            .gpu_types
            .iter()
            .find(|t| !job.gpu_speeds.contains_key(*t))
    {
        return Err(ModelError::MissingGpuSpeed {
            job: job.id,
            gpu_type: t.clone(),
        });
    }
    Ok(())
}

fn validate_utility(job: &Job) -> Result<(), ModelError> {
    let e = Entity::Job(job.id);
    match job.utility.check() {
        Ok(()) => Ok(()),
        Err(UtilityDefect::NonFinite(f)) => {
            let value = match (&job.utility, f) {
                (Utility::Sigmoid { g1, .. }, "g1") | (Utility::Linear { g1, .. }, "g1") => *g1,
                (Utility::Sigmoid { g2, .. }, "g2") => *g2,
                (Utility::Sigmoid { g3, .. }, "g3") => *g3,
                (Utility::Linear { slope, .. }, _) => *slope,
                (Utility::Constant { value }, _) | (Utility::DeadlineStep { value, .. }, _) => {
                    *value
                }
                (Utility::Table { values }, _) => values
                    .iter()
                    .copied()
                    .find(|v| !v.is_finite())
                    .unwrap_or(f64::NAN),
                _ => f64::NAN,
            };
            Err(ModelError::NonFinite {
                entity: e,
                field: format!("utility.{f}"),
                value,
            })
        }
        Err(UtilityDefect::Negative(f, value)) => Err(ModelError::Negative {
            entity: e,
            field: format!("utility.{f}"),
            value,
        }),
        Err(UtilityDefect::Increasing { at }) => Err(ModelError::UtilityIncreasing {
            job: job.id,
            at_delay: at,
        }),
        Err(UtilityDefect::EmptyTable) => Err(ModelError::EmptyUtilityTable { job: job.id }),
    }
}

/// The numbers and counts of a parameter-server job.
fn validate_ps(job: &Job, p: &PsJob) -> Result<(), ModelError> {
    let e = Entity::Job(job.id);
    let zero_count = |field| ModelError::ZeroCount { job: job.id, field };
    let zero_work = |field| ModelError::ZeroWorkload { job: job.id, field };
    let pre = "architecture.parameter_server";
    num(
        e,
        &format!("{pre}.minibatch_compute_s"),
        p.minibatch_compute_s,
        Rule::NonNegative,
    )?;
    num(
        e,
        &format!("{pre}.gradient_bytes"),
        p.gradient_bytes,
        Rule::NonNegative,
    )?;
    resources(e, &format!("{pre}.worker"), &p.worker)?;
    resources(e, &format!("{pre}.ps"), &p.ps)?;
    for (l, layer) in p.layers.iter().flatten().enumerate() {
        let lp = format!("{pre}.layers[{l}]");
        num(
            e,
            &format!("{lp}.forward_s"),
            layer.forward_s,
            Rule::NonNegative,
        )?;
        num(
            e,
            &format!("{lp}.backward_s"),
            layer.backward_s,
            Rule::NonNegative,
        )?;
        num(e, &format!("{lp}.bytes"), layer.bytes, Rule::NonNegative)?;
        num(
            e,
            &format!("{lp}.update_s"),
            layer.update_s,
            Rule::NonNegative,
        )?;
    }
    if p.epochs == 0 {
        return Err(zero_work("epochs"));
    }
    if p.data_chunks == 0 {
        return Err(zero_work("data_chunks"));
    }
    if p.minibatches_per_chunk == 0 {
        return Err(zero_work("minibatches_per_chunk"));
    }
    let minibatches = p.total_minibatches_exact();
    if minibatches > u128::from(MAX_TOTAL_MINIBATCHES) {
        return Err(ModelError::WorkloadTooLarge {
            job: job.id,
            minibatches,
            limit: MAX_TOTAL_MINIBATCHES,
        });
    }
    if p.max_workers == 0 {
        return Err(zero_count("max_workers"));
    }
    if p.max_ps == 0 {
        return Err(zero_count("max_ps"));
    }
    if p.ps_at_most_workers && p.max_ps > p.max_workers {
        return Err(inconsistent(
            e,
            &format!("{pre}.max_ps"),
            format!(
                "max_ps {} exceeds max_workers {} under the PS ≤ workers rule",
                p.max_ps, p.max_workers
            ),
        ));
    }
    if p.layers.as_ref().is_some_and(Vec::is_empty) {
        return Err(inconsistent(
            e,
            &format!("{pre}.layers"),
            "a layer profile needs at least one layer",
        ));
    }
    Ok(())
}

/// The numbers and counts of a ring-all-reduce job.
fn validate_rar(job: &Job, r: &RarJob) -> Result<(), ModelError> {
    let e = Entity::Job(job.id);
    let zero_count = |field| ModelError::ZeroCount { job: job.id, field };
    let zero_work = |field| ModelError::ZeroWorkload { job: job.id, field };
    let pre = "architecture.ring_all_reduce";
    num(
        e,
        &format!("{pre}.model_bytes"),
        r.model_bytes,
        Rule::NonNegative,
    )?;
    num(
        e,
        &format!("{pre}.forward_per_sample_s"),
        r.forward_per_sample_s,
        Rule::NonNegative,
    )?;
    num(
        e,
        &format!("{pre}.backward_per_iteration_s"),
        r.backward_per_iteration_s,
        Rule::NonNegative,
    )?;
    if let Some(b) = r.reserved_bandwidth_bps {
        num(
            e,
            &format!("{pre}.reserved_bandwidth_bps"),
            b,
            Rule::Positive,
        )?;
    }
    resources(e, &format!("{pre}.worker"), &r.worker)?;
    if r.iterations == 0 {
        return Err(zero_work("iterations"));
    }
    if r.convergence_iterations == Some(0) {
        return Err(zero_work("convergence_iterations"));
    }
    if r.minibatch_size == 0 {
        return Err(zero_count("minibatch_size"));
    }
    if r.workers.min() == 0 {
        return Err(zero_count("workers"));
    }
    if let Some(c) = r.convergence_iterations
        && c > r.iterations
    {
        return Err(inconsistent(
            e,
            &format!("{pre}.convergence_iterations"),
            format!("{c} exceeds the requested {} iterations", r.iterations),
        ));
    }
    if r.worker.gpus != 1.0 {
        return Err(inconsistent(
            e,
            &format!("{pre}.worker.gpus"),
            format!(
                "a ring worker uses exactly one GPU, got {}",
                Num(r.worker.gpus)
            ),
        ));
    }
    Ok(())
}

/// Checks `job` as an instance on `cluster` (whose machines `known` tells
/// apart) with a horizon ending at `horizon_s` checks it: its numbers, its
/// workload, its utility, its arrival before the horizon, its allowed
/// machines and that its smallest allocation fits a machine.
pub(crate) fn validate_job(
    job: &Job,
    cluster: &Cluster,
    known: &dyn Fn(MachineId) -> bool,
    horizon_s: f64,
) -> Result<(), ModelError> {
    let e = Entity::Job(job.id);

    // Plain numbers first.
    num(e, "arrival_s", job.arrival_s, Rule::NonNegative)?;
    num(e, "weight", job.weight, Rule::NonNegative)?;
    if let Some(d) = job.deadline_s {
        num(e, "deadline_s", d, Rule::NonNegative)?;
    }
    num(
        e,
        "reconfiguration_s",
        job.reconfiguration_s,
        Rule::NonNegative,
    )?;
    match &job.architecture {
        Architecture::ParameterServer(p) => validate_ps(job, p)?,
        Architecture::RingAllReduce(r) => validate_rar(job, r)?,
    }
    validate_utility(job)?;
    validate_gpu_speeds(job, cluster)?;

    // Time and references.
    if job.arrival_s >= horizon_s {
        return Err(ModelError::ArrivalAfterHorizon {
            job: job.id,
            arrival_s: job.arrival_s,
            horizon_s,
        });
    }
    if let Some(allowed) = &job.allowed_machines {
        if let Some(&m) = allowed.iter().find(|&&m| !known(m)) {
            return Err(ModelError::UnknownMachine {
                job: job.id,
                machine: m,
            });
        }
        if allowed.is_empty() {
            return Err(inconsistent(
                e,
                "allowed_machines",
                "the list is empty: the job may run nowhere",
            ));
        }
    }

    // Fit: one task of each kind, then the smallest allocation.
    let eligible = |kind: TaskKind| {
        cluster
            .machines
            .iter()
            .filter(move |m| m.hosts.allows(kind) && job.may_use(m.id))
    };
    let (min_w, min_p) = job.min_tasks();
    for (kind, count) in [
        (TaskKind::Worker, min_w),
        (TaskKind::ParameterServer, min_p),
    ] {
        let Some(demand) = job.task_demand(kind) else {
            continue;
        };
        if count == 0 {
            continue;
        }
        if !eligible(kind).any(|m| demand.fits_in(&m.capacity, FIT_TOL)) {
            let largest = eligible(kind).fold(None, |acc: Option<Resources>, m| {
                Some(acc.map_or(m.capacity, |a| a.max(&m.capacity)))
            });
            return Err(ModelError::TaskCannotFit {
                job: job.id,
                task: kind,
                demand: *demand,
                largest_machine: largest,
            });
        }
    }
    let demand = job.min_demand();
    let usable = cluster
        .machines
        .iter()
        .filter(|m| job.may_use(m.id))
        .fold(Resources::zero(), |acc, m| acc.plus(&m.capacity));
    if !demand.fits_in(&usable, FIT_TOL) {
        return Err(ModelError::JobCannotFit {
            job: job.id,
            demand,
            cluster: usable,
        });
    }
    Ok(())
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;

    /// The JSON shape of an instance (`docs/instance-format.md`).
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct InstanceFile {
        pub(crate) format_version: u32,
        pub(crate) slot_length_s: f64,
        pub(crate) horizon_slots: u32,
        pub(crate) cluster: Cluster,
        pub(crate) jobs: Vec<Job>,
    }

    impl TryFrom<InstanceFile> for Instance {
        type Error = ModelError;
        fn try_from(f: InstanceFile) -> Result<Self, ModelError> {
            if f.format_version != FORMAT_VERSION {
                return Err(ModelError::UnsupportedFormatVersion {
                    found: f.format_version,
                    supported: FORMAT_VERSION,
                });
            }
            Instance::new(f.cluster, f.jobs, f.slot_length_s, f.horizon_slots)
        }
    }

    impl serde::Serialize for Instance {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            #[derive(serde::Serialize)]
            struct View<'a> {
                format_version: u32,
                slot_length_s: f64,
                horizon_slots: u32,
                cluster: &'a Cluster,
                jobs: &'a [Job],
            }
            View {
                format_version: FORMAT_VERSION,
                slot_length_s: self.slot_length_s,
                horizon_slots: self.horizon_slots,
                cluster: &self.cluster,
                jobs: &self.jobs,
            }
            .serialize(s)
        }
    }

    impl<'de> serde::Deserialize<'de> for Instance {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let file = InstanceFile::deserialize(d)?;
            Instance::try_from(file).map_err(serde::de::Error::custom)
        }
    }
}
