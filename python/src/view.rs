//! What a policy written in Python sees at each event: `View` (a copy of
//! the simulator's `SimView`), `JobView` (one active job) and `Placer`
//! (the baselines' task placement over the view's free room).
//!
//! The view is a copy, made at every event: the time, each machine's free
//! resources and one `JobView` per active job, so `O(machines + active
//! jobs)` per event. It stays valid after the call (it is plain data).

use std::sync::Arc;

use dmlsched::baselines::requested_tasks;
use dmlsched::model::{Architecture, GpuId, Instance, Job, JobId, MachineId, Resources};
use dmlsched::placement::{PlacementRule, Placer};
use dmlsched::schedule::{Placement, Tasks};
use dmlsched::sim::{JobStatus, JobView, SimView};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert;
use crate::errors;
use crate::instance::PyInstance;

/// A placement as a list of `(machine, workers, ps)` tuples.
pub fn placement_to_py<'py>(py: Python<'py>, p: &Placement) -> PyResult<Bound<'py, PyList>> {
    PyList::new(
        py,
        p.iter()
            .map(|(m, t)| (m.0, t.workers, t.ps))
            .collect::<Vec<_>>(),
    )
}

/// A placement from Python: a list of `(machine, workers, ps)` tuples (or
/// `(machine, (workers, ps))`, or `(machine, {"workers": w, "ps": p})`), or
/// a dict `{machine: (workers, ps)}`.
pub fn placement_from_py(obj: &Bound<'_, PyAny>) -> Result<Placement, String> {
    let mut out: Vec<(MachineId, Tasks)> = Vec::new();
    if let Ok(d) = obj.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let m: u32 = k
                .extract()
                .map_err(|_| format!("placement key {}: not a machine id", show(&k)))?;
            out.push((MachineId(m), tasks_from_py(&v)?));
        }
        return Ok(Placement::from(out));
    }
    let items = obj.try_iter().map_err(|_| {
        format!(
            "placement: expected a list of (machine, workers, ps), got a {}",
            convert::type_name(obj)
        )
    })?;
    for item in items {
        let item = item.map_err(|e| e.to_string())?;
        let bad = || {
            format!(
                "placement entry {}: expected (machine, workers, ps)",
                show(&item)
            )
        };
        let parts: Vec<Bound<'_, PyAny>> = item
            .try_iter()
            .map_err(|_| bad())?
            .collect::<PyResult<_>>()
            .map_err(|_| bad())?;
        let machine: u32 = parts
            .first()
            .ok_or_else(bad)?
            .extract()
            .map_err(|_| bad())?;
        let tasks = match parts.len() {
            3 => Tasks::new(
                parts[1].extract().map_err(|_| bad())?,
                parts[2].extract().map_err(|_| bad())?,
            ),
            2 => tasks_from_py(&parts[1])?,
            _ => return Err(bad()),
        };
        out.push((MachineId(machine), tasks));
    }
    Ok(Placement::from(out))
}

/// `(workers, ps)` or `{"workers": w, "ps": p}`.
fn tasks_from_py(obj: &Bound<'_, PyAny>) -> Result<Tasks, String> {
    if let Ok(d) = obj.cast::<PyDict>() {
        let get = |k: &str| -> Result<u32, String> {
            match d.get_item(k).map_err(|e| e.to_string())? {
                Some(v) => v
                    .extract()
                    .map_err(|_| format!("tasks {}: {k} is not a count", show(obj))),
                None => Ok(0),
            }
        };
        return Ok(Tasks::new(get("workers")?, get("ps")?));
    }
    let (w, p): (u32, u32) = obj
        .extract()
        .map_err(|_| format!("tasks {}: expected (workers, ps)", show(obj)))?;
    Ok(Tasks::new(w, p))
}

/// `repr(obj)`, for messages.
pub fn show(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map_or_else(|_| "?".to_string(), |r| r.to_string())
}

/// Resources as a dict (the instance format's fields).
fn resources_dict<'py>(py: Python<'py>, r: &Resources) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("gpus", r.gpus)?;
    d.set_item("cpu_cores", r.cpu_cores)?;
    d.set_item("memory_bytes", r.memory_bytes)?;
    d.set_item("storage_bytes", r.storage_bytes)?;
    d.set_item("nic_bps", r.nic_bps)?;
    Ok(d)
}

/// One active job, as the policy sees it at an event.
#[pyclass(frozen, name = "JobView", module = "dmlsched")]
pub struct PyJobView {
    id: u32,
    position: usize,
    status: JobStatus,
    has_plan: bool,
    placement: Placement,
    last_placement: Placement,
    gpus: Option<Vec<GpuId>>,
    remaining_work: f64,
    total_work: f64,
    attained_gpu_s: f64,
    start_s: Option<f64>,
    since_s: f64,
    last_run_s: f64,
    preemptions: u32,
    arrival_s: f64,
    requested: (u32, u32),
    min_tasks: (u32, u32),
    max_workers: u32,
    ring: bool,
}

impl PyJobView {
    fn of(j: &JobView<'_>) -> Self {
        let job = j.job();
        PyJobView {
            id: j.id().0,
            position: j.position(),
            status: j.status(),
            has_plan: j.has_plan(),
            placement: j.placement().clone(),
            last_placement: j.last_placement().clone(),
            gpus: j.gpus().map(<[GpuId]>::to_vec),
            remaining_work: j.remaining_work(),
            total_work: j.total_work(),
            attained_gpu_s: j.attained_gpu_s(),
            start_s: j.start_s(),
            since_s: j.since_s(),
            last_run_s: j.last_run_s(),
            preemptions: j.preemptions(),
            arrival_s: job.arrival_s,
            requested: requested_tasks(job),
            min_tasks: job.min_tasks(),
            max_workers: job.max_workers(),
            ring: matches!(job.architecture, Architecture::RingAllReduce(_)),
        }
    }
}

#[pymethods]
impl PyJobView {
    /// The job's id.
    #[getter]
    fn id(&self) -> u32 {
        self.id
    }

    /// Its position in the instance's jobs.
    #[getter]
    fn position(&self) -> usize {
        self.position
    }

    /// "waiting" (never started), "running" or "paused".
    #[getter]
    fn status(&self) -> &'static str {
        match self.status {
            JobStatus::NotArrived => "not_arrived",
            JobStatus::Waiting => "waiting",
            JobStatus::Running => "running",
            JobStatus::Paused => "paused",
            JobStatus::Completed => "completed",
            JobStatus::Rejected => "rejected",
        }
    }

    /// Whether it waits for a start: waiting or paused, and no plan.
    #[getter]
    fn queued(&self) -> bool {
        matches!(self.status, JobStatus::Waiting | JobStatus::Paused) && !self.has_plan
    }

    /// Whether it holds an allocation now.
    #[getter]
    fn running(&self) -> bool {
        self.status == JobStatus::Running
    }

    /// Whether it holds a plan (a reservation).
    #[getter]
    fn has_plan(&self) -> bool {
        self.has_plan
    }

    /// Its allocation now, as (machine, workers, ps) tuples (empty when
    /// not running).
    #[getter]
    fn placement<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        placement_to_py(py, &self.placement)
    }

    /// Its most recent non-empty allocation (a rigid job resumes only
    /// there).
    #[getter]
    fn last_placement<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        placement_to_py(py, &self.last_placement)
    }

    /// The GPU ids of its allocation, as (machine, index) tuples, when
    /// assigned.
    #[getter]
    fn gpus(&self) -> Option<Vec<(u32, u32)>> {
        self.gpus
            .as_ref()
            .map(|g| g.iter().map(|g| (g.machine.0, g.index)).collect())
    }

    /// Work left (mini-batches for a parameter-server job, iterations for
    /// a ring).
    #[getter]
    fn remaining_work(&self) -> f64 {
        self.remaining_work
    }

    /// The job's whole work, in the same unit.
    #[getter]
    fn total_work(&self) -> f64 {
        self.total_work
    }

    /// GPU-seconds held so far.
    #[getter]
    fn attained_gpu_s(&self) -> f64 {
        self.attained_gpu_s
    }

    /// When it arrived, seconds.
    #[getter]
    fn arrival_s(&self) -> f64 {
        self.arrival_s
    }

    /// When it first held resources, if it has.
    #[getter]
    fn start_s(&self) -> Option<f64> {
        self.start_s
    }

    /// Since when it runs (running), is paused (paused) or waits (waiting).
    #[getter]
    fn since_s(&self) -> f64 {
        self.since_s
    }

    /// The length of its last completed run, seconds.
    #[getter]
    fn last_run_s(&self) -> f64 {
        self.last_run_s
    }

    /// Its preemptions so far.
    #[getter]
    fn preemptions(&self) -> u32 {
        self.preemptions
    }

    /// The (workers, ps) the fixed-size baselines run it at
    /// (`baselines::requested_tasks`).
    #[getter]
    fn requested_tasks(&self) -> (u32, u32) {
        self.requested
    }

    /// The fewest (workers, ps) it runs with.
    #[getter]
    fn min_tasks(&self) -> (u32, u32) {
        self.min_tasks
    }

    /// The most workers it runs with.
    #[getter]
    fn max_workers(&self) -> u32 {
        self.max_workers
    }

    /// "parameter_server" or "ring_all_reduce".
    #[getter]
    fn architecture(&self) -> &'static str {
        if self.ring {
            "ring_all_reduce"
        } else {
            "parameter_server"
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "JobView(id={}, status={:?}, remaining_work={})",
            self.id,
            self.status(),
            self.remaining_work
        )
    }
}

/// The simulator's state at an event, as a policy written in Python sees
/// it (a copy: see the module's documentation for its cost).
#[pyclass(frozen, name = "View", module = "dmlsched")]
pub struct PyView {
    time: f64,
    slot: u32,
    first_plannable_slot: Option<u32>,
    free: Vec<Resources>,
    jobs: Py<PyList>,
    instance: Py<PyInstance>,
}

/// The view of `view`, for a policy over `instance`.
pub fn build<'py>(
    py: Python<'py>,
    view: &SimView<'_>,
    instance: &Py<PyInstance>,
) -> PyResult<Bound<'py, PyView>> {
    let jobs = PyList::empty(py);
    for j in view.active() {
        jobs.append(Bound::new(py, PyJobView::of(&j))?)?;
    }
    Bound::new(
        py,
        PyView {
            time: view.now_s(),
            slot: view.slot(),
            first_plannable_slot: view.first_plannable_slot(),
            free: view.free_all().to_vec(),
            jobs: jobs.unbind(),
            instance: instance.clone_ref(py),
        },
    )
}

#[pymethods]
impl PyView {
    /// The current time, seconds.
    #[getter]
    fn time(&self) -> f64 {
        self.time
    }

    /// The slot that holds the current time.
    #[getter]
    fn slot(&self) -> u32 {
        self.slot
    }

    /// The first slot a plan made now may use, if any.
    #[getter]
    fn first_plannable_slot(&self) -> Option<u32> {
        self.first_plannable_slot
    }

    /// The instance being simulated.
    #[getter]
    fn instance(&self, py: Python<'_>) -> Py<PyInstance> {
        self.instance.clone_ref(py)
    }

    /// Each machine's free resources, in the cluster's order: dicts with
    /// `machine` (its id) and `gpus`, `cpu_cores`, `memory_bytes`,
    /// `storage_bytes`, `nic_bps` (ring reservations already charged).
    #[getter]
    fn free<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let inst = &self.instance.get().inner;
        for (m, r) in inst.cluster().machines.iter().zip(&self.free) {
            let d = resources_dict(py, r)?;
            d.set_item("machine", m.id.0)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The active jobs (arrived, neither completed nor rejected), in
    /// arrival order (ties by instance order).
    #[getter]
    fn jobs<'py>(&self, py: Python<'py>) -> Bound<'py, PyList> {
        self.jobs.bind(py).clone()
    }

    /// The active jobs that wait for a start (`JobView.queued`), in
    /// arrival order.
    #[getter]
    fn queued<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for j in self.jobs.bind(py).iter() {
            if j.cast::<PyJobView>()?.get().queued() {
                out.append(j)?;
            }
        }
        Ok(out)
    }

    /// The active job with id `id`, or None.
    fn job<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Option<Bound<'py, PyAny>>> {
        for j in self.jobs.bind(py).iter() {
            if j.cast::<PyJobView>()?.get().id == id {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// A placer over this view's free room, by `rule` ("best-fit",
    /// "first-fit", "consolidate" or "round-robin").
    #[pyo3(signature = (rule = "best-fit"))]
    fn placer(&self, rule: &str) -> PyResult<PyPlacer> {
        Ok(PyPlacer {
            instance: Arc::clone(&self.instance.get().inner),
            free: self.free.clone(),
            rule: parse_rule(rule)?,
            pointer: 0,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "View(time={}, slot={}, {} active jobs)",
            self.time,
            self.slot,
            self.jobs.bind(py).len()
        )
    }
}

/// A placement rule by name, or the library's error.
pub fn parse_rule(rule: &str) -> PyResult<PlacementRule> {
    rule.parse()
        .map_err(|e: dmlsched::placement::UnknownPlacementRule| errors::input(e.to_string()))
}

/// The baselines' task placement (`placement::Placer`) over a copy of a
/// view's free room: each placement taken from it is charged, so the
/// next one sees what is left.
#[pyclass(name = "Placer", module = "dmlsched")]
pub struct PyPlacer {
    instance: Arc<Instance>,
    free: Vec<Resources>,
    rule: PlacementRule,
    pointer: usize,
}

/// The job with id `id` of `inst`.
fn job_of(inst: &Instance, id: u32) -> PyResult<&Job> {
    inst.job(JobId(id))
        .ok_or_else(|| errors::input(format!("the instance has no job {}", JobId(id))))
}

impl PyPlacer {
    /// Runs `f` on a library placer in this one's state, and keeps the
    /// state it leaves.
    fn with<R>(&mut self, f: impl FnOnce(&mut Placer<'_>) -> R) -> R {
        let inst = Arc::clone(&self.instance);
        let mut placer = Placer::new(&inst, &self.free, self.rule).with_pointer(self.pointer);
        let out = f(&mut placer);
        self.free = placer.free().to_vec();
        self.pointer = placer.pointer();
        out
    }
}

#[pymethods]
impl PyPlacer {
    /// A placer over `view`'s free room (as `view.placer(rule)`).
    #[new]
    #[pyo3(signature = (view, rule = "best-fit"))]
    fn new(view: &Bound<'_, PyView>, rule: &str) -> PyResult<Self> {
        view.get().placer(rule)
    }

    /// Places `workers` workers and `ps` PSs of job `job` (its
    /// `requested_tasks` when not given) and returns the placement as
    /// (machine, workers, ps) tuples, charged to this placer; None, and
    /// nothing charged, when it does not fit.
    #[pyo3(signature = (job, workers = None, ps = None))]
    fn place<'py>(
        &mut self,
        py: Python<'py>,
        job: u32,
        workers: Option<u32>,
        ps: Option<u32>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let inst = Arc::clone(&self.instance);
        let j = job_of(&inst, job)?;
        let (rw, rp) = requested_tasks(j);
        let (w, p) = (workers.unwrap_or(rw), ps.unwrap_or(rp));
        let placed = self.with(|placer| placer.place(j, w, p));
        placed.map(|pl| placement_to_py(py, &pl)).transpose()
    }

    /// Takes a given placement of job `job` (to keep a job where it is);
    /// False, and nothing taken, when it does not fit.
    fn take(&mut self, job: u32, placement: &Bound<'_, PyAny>) -> PyResult<bool> {
        let inst = Arc::clone(&self.instance);
        let j = job_of(&inst, job)?;
        let pl = placement_from_py(placement).map_err(errors::input)?;
        Ok(self.with(|placer| placer.take(j, &pl)))
    }

    /// Gives back what a placement of job `job` holds (to recompute a
    /// running job's allocation).
    fn release(&mut self, job: u32, placement: &Bound<'_, PyAny>) -> PyResult<()> {
        let inst = Arc::clone(&self.instance);
        let j = job_of(&inst, job)?;
        let pl = placement_from_py(placement).map_err(errors::input)?;
        self.with(|placer| placer.release(j, &pl));
        Ok(())
    }

    /// Whether all machines' free room together could hold the tasks (a
    /// quick necessary test).
    fn may_fit(&self, job: u32, workers: u32, ps: u32) -> PyResult<bool> {
        let j = job_of(&self.instance, job)?;
        Ok(Placer::new(&self.instance, &self.free, self.rule).may_fit(j, workers, ps))
    }

    /// The free room left, per machine in the cluster's order (dicts as
    /// `View.free`).
    #[getter]
    fn free<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (m, r) in self.instance.cluster().machines.iter().zip(&self.free) {
            let d = resources_dict(py, r)?;
            d.set_item("machine", m.id.0)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The placement rule's name.
    #[getter]
    fn rule(&self) -> &'static str {
        self.rule.name()
    }

    fn __repr__(&self) -> String {
        format!("Placer(rule={:?})", self.rule.name())
    }
}
