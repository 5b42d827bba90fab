//! Tiresias: discretised two-dimensional least attained service.

use std::collections::BTreeMap;

use crate::model::{Elasticity, Job, JobId, MachineId, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, Event, JobStatus, JobView, Policy, SimView};

use super::common::{Shortcut, ShortcutUse, WithShortcut, keeps_allocation, to_actions};
use super::{RequestedSizes, requested_size};
use crate::placement::{PlacementRule, Placer};

/// Least attained service over a few priority queues, after Tiresias (Gu
/// et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
/// Learning", NSDI 2019): discretised two-dimensional least attained
/// service (attained GPU-seconds). It needs no knowledge of remaining work — its main practical
/// advantage, to be stated in any comparison with oracle policies.
///
/// # Rule
///
/// * **Attained service** `S_j` is the job's GPU-seconds so far,
///   [`JobView::attained_gpu_s`] (GPUs held × time, the "2D" of 2D-LAS).
/// * **Queues** `Q_0 … Q_{K−1}` with thresholds `0 = T_0 < T_1 < … <
///   T_{K−1}`: the job is in the queue of the largest `T_k ≤ S_j`, that is
///   queue `#{k ≥ 1 : T_k ≤ S_j}`. [`Tiresias::thresholds`] lists `T_1 …
///   T_{K−1}` in increasing order (default `[3250, 7200]`: K = 3 queues,
///   the defaults of the Tiresias authors' public simulator,
///   `SymbioticLab/Tiresias`, whose queue limits are 3,250 and 7,200
///   GPU-seconds for its three queues).
/// * **Order**: lower queue first, then arrival order (ties by instance
///   order).
/// * At each event, walk that order and keep or start every job whose
///   requested size fits what is left (backfilling): its entry in
///   [`Tiresias::requests`] (a requested configuration `k^req` from a trace
///   or a generator), else [`requested_tasks`](super::requested_tasks).
///   A running job that stays selected keeps its placement; one whose
///   resources went to jobs ahead of it is preempted (the simulator charges
///   `reconfiguration_s` when it resumes). A starting job is placed with
///   [`Tiresias::placement`] on room that the running jobs behind it do
///   not hold if possible, and only otherwise on their resources, so a
///   start preempts only when it must. Jobs are never resized.
/// * **Starvation guard** (off by default): with `starve_factor = Some(f)`,
///   a paused job that has waited at least `f ×` its last run
///   ([`JobView::last_run_s`]) moves back to `Q_0`: its attained service is
///   counted again from that moment (the policy remembers the offset).
///
/// **What is never preempted.** Running jobs that are not preemptible keep
/// their allocation and are not part of the order; jobs holding a plan are
/// left alone. A rigid preemptible gang resumes only on the placement it
/// ran on (the gang rule of [`crate::schedule::verify`]: the same placement
/// in every slot it runs), which the policy remembers.
///
/// **Wake-ups.** Service grows while jobs run; the policy asks the
/// simulator ([`Policy::next_wakeup_s`]) to wake it when the next running
/// job crosses a threshold (or a paused job becomes due under the
/// starvation guard), so demotions happen exactly on time with plain
/// event-driven decisions. It also re-decides at ticks if they are on.
///
/// # Parameters
///
/// * `thresholds` (default `[3250.0, 7200.0]` GPU-seconds): `T_1 …
///   T_{K−1}` ([`Tiresias::SIMULATOR_THRESHOLDS`]);
/// * `starve_factor` (default `None`): the starvation guard;
/// * `requests` (default empty): requested sizes per job;
/// * `placement` (default [`PlacementRule::BestFit`], the consolidated
///   placement of the Tiresias simulator's default scheme).
///
/// # Complexity
///
/// `O(J + K + W·P)` per event for `J` candidate jobs, `K` queues, `W`
/// waiting jobs and `P` one placement or take (`O((w + p)·H)`) when every
/// free capacity, demand and reservation is a whole number (and their sums
/// stay below 2⁵²): then the arithmetic is exact and the running jobs need
/// no bookkeeping until a start would have to preempt. Otherwise, or from
/// such a start on, `O(J·(R·P + P))` for `R ≤ J` running jobs: each start
/// first tries the room that the running jobs behind it leave.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Tiresias;
/// let mut t = Tiresias::default();
/// assert_eq!(t.thresholds, vec![3250.0, 7200.0]);
/// assert_eq!(t.starve_factor, None);
/// // Two queues and a one-GPU-hour threshold, and the starvation guard.
/// t.thresholds = vec![3600.0];
/// t.starve_factor = Some(2.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Tiresias {
    /// Queue thresholds `T_1 … T_{K−1}` in GPU-seconds, increasing.
    pub thresholds: Vec<f64>,
    /// Starvation guard: a paused job that waited `≥ f ×` its last run
    /// moves back to the first queue.
    pub starve_factor: Option<f64>,
    /// How starting jobs are spread over machines.
    pub placement: PlacementRule,
    /// Requested sizes per job (default empty: every job at
    /// [`requested_tasks`](super::requested_tasks)). A run with an entry a
    /// job cannot run at ends with
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams).
    pub requests: RequestedSizes,
    /// Bookkeeping across events of one run.
    memory: Memory,
}

/// What the policy remembers between events: service offsets of jobs the
/// starvation guard promoted, and where rigid gangs ran. Entries of jobs
/// that neither run nor are paused are dropped at every event, which also
/// forgets a previous run when the policy is reused.
#[derive(Debug, Clone, PartialEq, Default)]
struct Memory {
    promoted: BTreeMap<JobId, f64>,
    pins: BTreeMap<JobId, Placement>,
    shapes: Shapes,
}

/// What [`ExactRoom`] needs of each job, kept for one run: a job's model
/// and its request never change during a run, and a run's stamp
/// ([`SimView::run_stamp`]) is never another run's, so entries found under
/// the current stamp are the job's own.
#[derive(Debug, Clone, PartialEq, Default)]
struct Shapes {
    /// The run the entries belong to (0: none yet).
    run: u64,
    /// Per job position, once seen: its largest counts and its shape's
    /// index in `table`.
    jobs: Vec<Option<JobShape>>,
    /// Shapes, a new entry whenever a job's differs from the last entry's
    /// (most jobs of a trace share one).
    table: Vec<Shape>,
}

/// A job's largest worker and PS counts ([`Job::max_workers`],
/// [`Job::max_ps`] or a larger request) and the index of its shape.
#[derive(Debug, Clone, Copy, PartialEq)]
struct JobShape {
    counts: [u32; 2],
    shape: usize,
}

/// A job's worker and PS demands and its ring reservation.
type Shape = ([Resources; 2], f64);

impl Shapes {
    /// Forgets another run's entries.
    fn start(&mut self, view: &SimView<'_>) {
        if self.run != view.run_stamp() {
            self.run = view.run_stamp();
            self.jobs.clear();
            self.jobs.resize(view.instance().jobs().len(), None);
            self.table.clear();
        }
    }

    /// The entry of the job at `position` (in the run of the last
    /// [`Shapes::start`]).
    fn get(&mut self, job: &Job, position: usize, requests: &RequestedSizes) -> JobShape {
        if let Some(s) = self.jobs[position] {
            debug_assert_eq!(
                (s.counts, self.table[s.shape]),
                Self::of(job, requests),
                "stale shape of job {}",
                job.id.0
            );
            return s;
        }
        let (counts, shape) = Self::of(job, requests);
        if self.table.last() != Some(&shape) {
            self.table.push(shape);
        }
        let s = JobShape {
            counts,
            shape: self.table.len() - 1,
        };
        self.jobs[position] = Some(s);
        s
    }

    /// A job's largest counts and its shape, computed afresh.
    fn of(job: &Job, requests: &RequestedSizes) -> ([u32; 2], Shape) {
        let (mut w, mut p) = (job.max_workers(), job.max_ps());
        if let Some(&(rw, rp)) = requests.get(&job.id) {
            w = w.max(rw);
            p = p.max(rp);
        }
        let demand = |kind| job.task_demand(kind).copied().unwrap_or_default();
        let shape = (
            [demand(TaskKind::Worker), demand(TaskKind::ParameterServer)],
            job.reserved_nic_bps(2),
        );
        ([w, p], shape)
    }
}

impl Default for Tiresias {
    fn default() -> Self {
        Tiresias {
            thresholds: Tiresias::SIMULATOR_THRESHOLDS.to_vec(),
            starve_factor: None,
            placement: PlacementRule::BestFit,
            requests: RequestedSizes::new(),
            memory: Memory::default(),
        }
    }
}

impl Tiresias {
    /// The queue thresholds of the Tiresias authors' public simulator
    /// (three queues, limits 3,250 and 7,200 GPU-seconds): the default.
    pub const SIMULATOR_THRESHOLDS: [f64; 2] = [3250.0, 7200.0];

    /// Checks the parameters: thresholds finite, > 0 and strictly
    /// increasing; a starvation factor finite and > 0. [`Policy::on_event`]
    /// calls it, so a run with bad parameters ends with this error.
    ///
    /// ```
    /// use dmlsched::baselines::Tiresias;
    /// let mut t = Tiresias::default();
    /// assert!(t.validate().is_ok());
    /// t.thresholds = vec![7200.0, 3250.0];
    /// assert!(t.validate().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams) naming the
    /// bad value.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |reason: String| {
            Err(crate::sim::SimError::BadParams {
                policy: "tiresias".into(),
                reason,
            }
            .into())
        };
        for (k, &t) in self.thresholds.iter().enumerate() {
            if !(t.is_finite() && t > 0.0) {
                return bad(format!(
                    "threshold {} is {t}: thresholds must be finite and > 0 GPU-seconds",
                    k + 1
                ));
            }
            if k > 0 && t <= self.thresholds[k - 1] {
                return bad(format!(
                    "thresholds must increase, found {} then {t}",
                    self.thresholds[k - 1]
                ));
            }
        }
        if let Some(f) = self.starve_factor
            && !(f.is_finite() && f > 0.0)
        {
            return bad(format!(
                "the starvation factor must be finite and > 0, found {f}"
            ));
        }
        Ok(())
    }

    /// The queue of a job with attained service `s` GPU-seconds.
    fn queue(&self, s: f64) -> usize {
        self.thresholds.iter().filter(|&&t| t <= s).count()
    }

    /// Drops stale memory and records where rigid gangs run now.
    fn refresh(&mut self, view: &SimView<'_>) {
        let live = |id: &JobId| {
            view.job(*id)
                .is_some_and(|j| matches!(j.status(), JobStatus::Running | JobStatus::Paused))
        };
        self.memory.promoted.retain(|id, _| live(id));
        self.memory.pins.retain(|id, _| live(id));
        for j in view.active() {
            if j.is_running() && j.job().discipline.elasticity == Elasticity::Rigid {
                // Most pins are already there: no clone then.
                let placement = j.placement();
                if self.memory.pins.get(&j.id()) != Some(placement) {
                    self.memory.pins.insert(j.id(), placement.clone());
                }
            }
        }
    }

    /// The job's service for the queues, after the starvation guard.
    fn service(&mut self, view: &SimView<'_>, j: &JobView<'_>) -> f64 {
        let attained = j.attained_gpu_s();
        if let Some(f) = self.starve_factor
            && j.status() == JobStatus::Paused
            && view.now_s() - j.since_s() >= f * j.last_run_s()
        {
            self.memory.promoted.insert(j.id(), attained);
        }
        let offset = self.memory.promoted.get(&j.id()).copied().unwrap_or(0.0);
        (attained - offset).max(0.0)
    }
}

impl Policy for Tiresias {
    fn name(&self) -> String {
        "tiresias".into()
    }

    /// The next time a running job's service crosses a queue threshold, or
    /// (with the starvation guard) a paused job becomes due for promotion:
    /// demotions and promotions then happen exactly when they are due, with
    /// no need for slot ticks.
    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        let now = view.now_s();
        let mut next = f64::INFINITY;
        let promoted = &self.memory.promoted;
        for j in view.active() {
            let offset = if promoted.is_empty() {
                0.0
            } else {
                promoted.get(&j.id()).copied().unwrap_or(0.0)
            };
            let service = (j.attained_gpu_s() - offset).max(0.0);
            if j.is_running() {
                let t = j.tasks();
                let gpus = gpus_for(j.job(), t);
                if let Some(&th) = self.thresholds.iter().find(|&&th| th > service)
                    && gpus > 0.0
                {
                    next = next.min(now + (th - service) / gpus);
                }
            } else if let Some(f) = self.starve_factor
                && j.status() == JobStatus::Paused
            {
                next = next.min(j.since_s() + f * j.last_run_s());
            }
        }
        (next.is_finite() && next > now).then_some(next)
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.decide(view, Shortcut::Allowed, &mut ShortcutUse::default())
    }
}

impl WithShortcut for Tiresias {
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>> {
        self.validate()?;
        self.refresh(view);
        let waiting = (shortcut == Shortcut::Allowed)
            .then(|| self.waiting_if_exact(view))
            .flatten();
        used.taken += u64::from(waiting.is_some());
        let changes = match waiting {
            Some(waiting) => self.walk_spare(view, &waiting, used)?,
            None => {
                let order = self.order(view);
                let mut scratch = Placer::new(view.instance(), view.free_all(), self.placement);
                for (_, j) in order.iter().filter(|(_, j)| j.is_running()) {
                    scratch.release(j.job(), j.placement());
                }
                self.walk(&order, 0, scratch, Vec::new())?
            }
        };
        Ok(to_actions(changes))
    }
}

/// A job in the walk's order, with its queue.
type Ranked<'v> = (usize, JobView<'v>);

/// What a decision changes: each job and its new placement (empty: paused).
type Changes<'v> = Vec<(JobView<'v>, Placement)>;

impl Tiresias {
    /// The candidates (jobs without a plan that may be preempted) by queue,
    /// then arrival (then instance) order.
    fn order<'v>(&mut self, view: &SimView<'v>) -> Vec<Ranked<'v>> {
        let mut ranked = Vec::new();
        for j in view.active() {
            if is_candidate(&j) {
                let s = self.service(view, &j);
                ranked.push((self.queue(s), j));
            }
        }
        by_queue(ranked, self.thresholds.len() + 1)
    }

    /// The waiting candidates in the order of [`Tiresias::order`], if
    /// [`ExactRoom`] holds for the free room and every candidate (else
    /// `None`, with no other effect than [`Tiresias::service`]'s on the
    /// waiting jobs, which [`Tiresias::order`] repeats identically).
    fn waiting_if_exact<'v>(&mut self, view: &SimView<'v>) -> Option<Vec<Ranked<'v>>> {
        let mut exact = ExactRoom::new(view);
        let mut shapes = std::mem::take(&mut self.memory.shapes);
        shapes.start(view);
        let mut waiting = Vec::new();
        for j in view.active() {
            if !is_candidate(&j) {
                continue;
            }
            let s = shapes.get(j.job(), j.position(), &self.requests);
            exact.add_job(s, &shapes.table);
            if !j.is_running() {
                let s = self.service(view, &j);
                waiting.push((self.queue(s), j));
            }
        }
        self.memory.shapes = shapes;
        exact
            .holds()
            .then(|| by_queue(waiting, self.thresholds.len() + 1))
    }

    /// Walks `order` from position `from` on `scratch`: the free room plus
    /// what the running jobs from `from` on hold (the rule of the type's
    /// docs). Running jobs are kept where they fit, and waiting jobs start
    /// on the room that the running jobs behind them leave if possible,
    /// else on `scratch`. Appends to `changes` and returns them.
    fn walk<'v>(
        &self,
        order: &[Ranked<'v>],
        from: usize,
        mut scratch: Placer<'v>,
        mut changes: Changes<'v>,
    ) -> crate::Result<Changes<'v>> {
        // `scratch` less the running jobs behind the current one; kept
        // while neither changes (waiting jobs in a row that do not start).
        let mut spare_base: Option<Placer<'_>> = None;
        for (k, &(_, j)) in order.iter().enumerate().skip(from) {
            let job = j.job();
            if j.is_running() {
                spare_base = None;
                if !scratch.take(job, j.placement()) {
                    changes.push((j, Placement::new()));
                }
                continue;
            }
            if let Some(pin) = self.pin(&j) {
                if scratch.take(job, pin) {
                    spare_base = None;
                    changes.push((j, pin.clone()));
                }
                continue;
            }
            let (w, p) = requested_size(job, &self.requests, "tiresias")?;
            // What does not fit the total of `scratch` fits neither there
            // nor on `spare` (less room): skip building `spare`.
            if !scratch.may_fit(job, w, p) {
                continue;
            }
            let mut spare = spare_base
                .get_or_insert_with(|| {
                    let mut spare = scratch.clone();
                    for (_, later) in order[k + 1..].iter().filter(|(_, l)| l.is_running()) {
                        spare.take(later.job(), later.placement());
                    }
                    spare
                })
                .clone();
            if let Some(placement) = spare.place(job, w, p) {
                if scratch.take(job, &placement) {
                    spare_base = None;
                    changes.push((j, placement));
                }
            } else if let Some(placement) = scratch.place(job, w, p) {
                spare_base = None;
                changes.push((j, placement));
            }
        }
        Ok(changes)
    }

    /// Where a rigid gang must resume, if it ran before.
    fn pin(&self, j: &JobView<'_>) -> Option<&Placement> {
        (j.job().discipline.elasticity == Elasticity::Rigid)
            .then(|| self.memory.pins.get(&j.id()))
            .flatten()
    }

    /// [`Tiresias::walk`] of the whole order when [`ExactRoom`] holds, on
    /// the spare room alone, with the same result; `waiting` are the
    /// waiting jobs of the order, in order.
    ///
    /// `spare` is the free room less what the waiting jobs started so far
    /// take, and has no negative component. The arithmetic is exact, so
    /// `walk`'s `scratch` at any point is `spare` plus what the running
    /// jobs not yet passed hold, whatever the order of its additions and
    /// subtractions. Hence:
    /// * a running job fits `scratch` (its own holding plus non-negative
    ///   room), so `walk` keeps it, and `scratch` less it is again `spare`
    ///   plus the rest: nothing to do;
    /// * `walk`'s spare room for a waiting job (`scratch` less the running
    ///   jobs behind, each of which fits in turn for the same reason) is
    ///   `spare`; a placement on it passes `spare`'s total-room test, hence
    ///   `scratch`'s (more room, none negative), and when `spare` takes it
    ///   and stays non-negative, so does `scratch` (which has more room),
    ///   and the job starts; a gang's pin likewise.
    ///
    /// At the first waiting job where this proves nothing (no placement on
    /// `spare`, or one that would leave a component negative) the running
    /// jobs not yet passed are given back to `spare`, which is then
    /// `walk`'s `scratch`, and `walk` goes on from that job.
    fn walk_spare<'v>(
        &mut self,
        view: &SimView<'v>,
        waiting: &[Ranked<'v>],
        used: &mut ShortcutUse,
    ) -> crate::Result<Changes<'v>> {
        let instance = view.instance();
        let mut changes = Vec::new();
        let mut kept: Option<Placer<'v>> = None;
        for &(_, j) in waiting {
            let mut spare = kept
                .take()
                .unwrap_or_else(|| Placer::new(instance, view.free_all(), self.placement));
            let job = j.job();
            let start = match self.pin(&j) {
                Some(pin) => spare.take(job, pin).then(|| pin.clone()),
                None => {
                    let (w, p) = requested_size(job, &self.requests, "tiresias")?;
                    // `place` charges what `take` charges for the same
                    // placement (the placer's contract), exactly here: the
                    // same as `walk`'s `place` on a copy and `take` after.
                    // The copy's round-robin pointer stays at 0.
                    let placement = spare.place(job, w, p);
                    spare = spare.with_pointer(0);
                    placement
                }
            };
            if let Some(placement) = start {
                let room = |(m, _): &(MachineId, Tasks)| {
                    instance
                        .machine_position(*m)
                        .is_none_or(|p| !has_negative(&spare.free()[p]))
                };
                if placement.iter().all(room) {
                    changes.push((j, placement));
                    kept = Some(spare);
                    continue;
                }
                // Exact: gives back what was taken.
                spare.release(job, &placement);
            }
            used.handed_over += 1;
            let order = self.order(view);
            let k = order
                .iter()
                .position(|(_, o)| o.position() == j.position())
                .unwrap_or(order.len());
            for (_, later) in order[k..].iter().filter(|(_, l)| l.is_running()) {
                spare.release(later.job(), later.placement());
            }
            return self.walk(&order, k, spare, changes);
        }
        Ok(changes)
    }
}

/// `job.demand_for(t.workers, t.ps).gpus` (the same operations in the same
/// order, so the same bits) without the other resources.
fn gpus_for(job: &Job, t: Tasks) -> f64 {
    let mut gpus = 0.0;
    if let Some(d) = job.task_demand(TaskKind::Worker) {
        gpus += d.gpus * f64::from(t.workers);
    }
    if let Some(d) = job.task_demand(TaskKind::ParameterServer) {
        gpus += d.gpus * f64::from(t.ps);
    }
    gpus
}

/// Whether the policy may move the job: no plan, and preemptible if it
/// runs.
fn is_candidate(j: &JobView<'_>) -> bool {
    !j.has_plan() && !keeps_allocation(j, false)
}

/// `ranked` sorted by queue (`< queues`), stably: a counting sort.
fn by_queue(ranked: Vec<Ranked<'_>>, queues: usize) -> Vec<Ranked<'_>> {
    if ranked.is_sorted_by_key(|&(q, _)| q) {
        return ranked;
    }
    let mut start = vec![0usize; queues + 1];
    for &(q, _) in &ranked {
        start[q + 1] += 1;
    }
    for q in 1..start.len() {
        start[q] += start[q - 1];
    }
    let mut slot = vec![0usize; ranked.len()];
    for (i, &(q, _)) in ranked.iter().enumerate() {
        slot[start[q]] = i;
        start[q] += 1;
    }
    slot.into_iter().map(|i| ranked[i]).collect()
}

/// Whether some component of `r` is below zero.
fn has_negative(r: &Resources) -> bool {
    r.gpus < 0.0
        || r.cpu_cores < 0.0
        || r.memory_bytes < 0.0
        || r.storage_bytes < 0.0
        || r.nic_bps < 0.0
}

/// Sums below this bound, of whole numbers, are exact in `f64`.
const EXACT_BOUND: f64 = crate::exact::TWO_52;

/// Whether `x ≥ 0` is a whole number, provided `x < 2⁵²` (checked on the
/// sums by [`ExactRoom`]).
fn whole(x: f64) -> bool {
    crate::exact::is_whole_below_two_52(x)
}

/// The components of `r`.
fn parts(r: &Resources) -> [f64; 5] {
    [
        r.gpus,
        r.cpu_cores,
        r.memory_bytes,
        r.storage_bytes,
        r.nic_bps,
    ]
}

/// Whether the arithmetic of [`Tiresias::walk`] on a free room is exact,
/// which lets [`Tiresias::walk_spare`] skip the running jobs: every free
/// component and every task demand and ring reservation of the candidates
/// is a whole number `≥ 0`, and per resource the free room of all machines
/// plus the candidates' largest charges stays below 2⁵². A candidate's
/// largest charge is bounded with its largest worker and PS counts
/// ([`Job::max_workers`], [`Job::max_ps`] or a larger request; a running
/// job's or a pin's counts are within the caps, which the simulator
/// checks) times the largest worker and PS demands of all candidates, plus
/// as many reservations as workers (one per worker's machine at most).
/// Every value the walk computes (a machine's free room plus some charges
/// given back, less some taken, each job's at most once per placer; a
/// product of a count and a demand; a total over machines) is then a whole
/// number below 2⁵³ in magnitude, so each addition, subtraction and product
/// is exact, and the walk's values do not depend on the order in which it
/// adds and subtracts. (A zero may come out as `-0.0` instead of `0.0` or
/// the reverse: equal in every comparison, and no placement looks at a sign
/// bit.)
struct ExactRoom {
    /// Per resource, the free room of all machines.
    free: [f64; 5],
    /// The candidates' largest worker and PS counts, summed.
    counts: [u64; 2],
    /// Per resource, the largest worker and PS demand of a candidate.
    largest: [[f64; 5]; 2],
    /// The largest reservation of a candidate.
    largest_b: f64,
    /// Every number seen is a whole number `≥ 0` (given the bound).
    whole: bool,
    /// The index (in [`Shapes::table`]) of the shape last added: a
    /// candidate with the same adds only its counts.
    last: Option<usize>,
}

impl ExactRoom {
    /// Starts with the free room of every machine: its exact totals kept
    /// by the simulator when every component is a whole number below 2⁶³
    /// (then `u128 → f64` rounds a total below 2⁵² to itself and one of
    /// 2⁵² or more to 2⁵² or more, rounding being monotone, so
    /// [`ExactRoom::holds`] says what it says on the sums below), else
    /// from a scan.
    fn new(view: &SimView<'_>) -> Self {
        let mut total = [0.0f64; 5];
        let mut all = true;
        if let Some(exact) = view.whole_free_totals() {
            total = exact.map(|x| x as f64);
        } else {
            for r in view.free_all() {
                for (t, x) in total.iter_mut().zip(parts(r)) {
                    all &= whole(x);
                    *t += x;
                }
            }
        }
        ExactRoom {
            free: total,
            counts: [0; 2],
            largest: [[0.0; 5]; 2],
            largest_b: 0.0,
            whole: all,
            last: None,
        }
    }

    /// Adds a candidate: its largest counts, task demands and reservation.
    fn add_job(&mut self, job: JobShape, table: &[Shape]) {
        self.counts[0] += u64::from(job.counts[0]);
        self.counts[1] += u64::from(job.counts[1]);
        if self.last == Some(job.shape) {
            return;
        }
        let (demands, b) = &table[job.shape];
        self.whole &= whole(*b);
        self.largest_b = self.largest_b.max(*b);
        for (largest, d) in self.largest.iter_mut().zip(demands) {
            for (l, x) in largest.iter_mut().zip(parts(d)) {
                self.whole &= whole(x);
                *l = l.max(x);
            }
        }
        self.last = Some(job.shape);
    }

    /// Whether every number was whole and every bound is below 2⁵² (which
    /// bounds every number, all being `≥ 0`). Each bound is a sum of
    /// products of numbers `≥ 0`; rounding is monotone, so a bound of 2⁵²
    /// or more is never computed as less.
    fn holds(&self) -> bool {
        let [w, p] = self.counts.map(|c| c as f64);
        let bound = |c: usize| {
            let b = if c == 4 { w * self.largest_b } else { 0.0 };
            self.free[c] + w * self.largest[0][c] + p * self.largest[1][c] + b
        };
        self.whole && (0..5).all(|c| bound(c) < EXACT_BOUND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::fixtures::{Busy, assert_same_runs, busy_workload};
    use crate::sim::{SimOptions, simulate};

    #[test]
    fn whole_numbers() {
        for x in [0.0, 1.0, 3.0, 16e9, 4_503_599_627_370_495.0] {
            assert!(whole(x), "{x}");
        }
        for x in [-1.0, 0.5, 1.5e9 + 0.25, f64::NAN, -f64::INFINITY, 1e-300] {
            assert!(!whole(x), "{x}");
        }
    }

    /// The spare walk (with its hand-overs) decides exactly as the full
    /// walk, on busy clusters with gangs, pins, PS jobs and reserving rings.
    #[test]
    fn spare_walk_decides_as_the_full_walk() {
        let mut handed_over = 0;
        for seed in 0..6 {
            for fraction in [false, true] {
                let busy = Busy {
                    fraction,
                    ..Busy::default()
                };
                let used = assert_same_runs(
                    &busy_workload(seed, 4, busy),
                    || Tiresias {
                        starve_factor: (seed % 2 == 1).then_some(2.0),
                        thresholds: vec![300.0, 3000.0],
                        ..Tiresias::default()
                    },
                    &format!("seed {seed}, {busy:?}"),
                );
                handed_over += used.handed_over;
            }
        }
        assert!(handed_over > 0, "no hand-over exercised");
    }

    /// A policy reused on other instances decides as a fresh one: what it
    /// keeps of a run's jobs is kept under the run's stamp.
    #[test]
    fn a_reused_policy_decides_as_a_fresh_one() {
        let opts = SimOptions::default();
        let tiresias = || Tiresias {
            thresholds: vec![300.0, 3000.0],
            ..Tiresias::default()
        };
        let mut reused = tiresias();
        for (seed, fraction) in [(0, false), (3, false), (3, true), (0, false)] {
            let busy = Busy {
                fraction,
                ..Busy::default()
            };
            let instance = busy_workload(seed, 4, busy);
            let again = simulate(&instance, &mut reused, &opts).expect("reused");
            let fresh = simulate(&instance, &mut tiresias(), &opts).expect("fresh");
            assert_eq!(again.jobs, fresh.jobs, "seed {seed}");
            assert_eq!(again.allocations, fresh.allocations, "seed {seed}");
            assert_eq!(again.utilization, fresh.utilization, "seed {seed}");
        }
    }
}
