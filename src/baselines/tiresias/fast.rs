//! The exact-arithmetic shortcut of [`Tiresias`]'s walk: when every free
//! component, demand and reservation is a whole number and their sums stay
//! below 2⁵² ([`ExactRoom`]), the walk's arithmetic is exact and the
//! running jobs need no bookkeeping until a start would have to preempt
//! ([`Tiresias::walk_spare`]), which then hands over to the rule's walk.

use crate::model::{Job, MachineId, Resources, TaskKind};
use crate::placement::Placer;
use crate::schedule::Tasks;
use crate::sim::SimView;

use super::super::common::{ByShape, Shape, ShortcutUse};
use super::super::{RequestedSizes, requested_size};
use super::Tiresias;
use super::rule::{Changes, Ranked, by_queue, is_candidate};

/// What [`ExactRoom`] needs of each job, kept for one run: a job's model
/// and its request never change during a run, and a run's stamp
/// ([`SimView::run_stamp`]) is never another run's, so entries found under
/// the current stamp are the job's own. Each job's demands are those of
/// its [`Shape`], kept once per shape ([`ByShape`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Shapes {
    /// The run the entries belong to (0: none yet).
    run: u64,
    /// Per job position, once seen: its largest counts and its shape's id
    /// in `demands`.
    jobs: Vec<Option<JobShape>>,
    /// The demands of each shape.
    demands: ByShape<Shape, Demands>,
}

/// A job's largest worker and PS counts ([`Job::max_workers`],
/// [`Job::max_ps`] or a larger request) and the id of its shape.
#[derive(Debug, Clone, Copy, PartialEq)]
struct JobShape {
    counts: [u32; 2],
    shape: usize,
}

/// A job's worker and PS demands and its ring reservation.
type Demands = ([Resources; 2], f64);

impl Shapes {
    /// Forgets another run's entries.
    fn start(&mut self, view: &SimView<'_>) {
        if self.run != view.run_stamp() {
            self.run = view.run_stamp();
            self.jobs.clear();
            self.jobs.resize(view.instance().jobs().len(), None);
            self.demands.clear();
        }
    }

    /// The entry of the job at `position` (in the run of the last
    /// [`Shapes::start`]).
    fn get(&mut self, job: &Job, position: usize, requests: &RequestedSizes) -> JobShape {
        if let Some(s) = self.jobs[position] {
            debug_assert_eq!(
                (s.counts, *self.demands.value(s.shape)),
                (counts(job, requests), demands(job)),
                "stale shape of job {}",
                job.id.0
            );
            return s;
        }
        let s = JobShape {
            counts: counts(job, requests),
            shape: self.demands.id(Shape::of(job), || demands(job)),
        };
        self.jobs[position] = Some(s);
        s
    }
}

/// A job's largest worker and PS counts.
fn counts(job: &Job, requests: &RequestedSizes) -> [u32; 2] {
    let (mut w, mut p) = (job.max_workers(), job.max_ps());
    if let Some(&(rw, rp)) = requests.get(&job.id) {
        w = w.max(rw);
        p = p.max(rp);
    }
    [w, p]
}

/// A job's demands (what its [`Shape`] holds, as numbers).
fn demands(job: &Job) -> Demands {
    let demand = |kind| job.task_demand(kind).copied().unwrap_or_default();
    (
        [demand(TaskKind::Worker), demand(TaskKind::ParameterServer)],
        job.reserved_nic_bps(2),
    )
}

impl Tiresias {
    /// The waiting candidates in the order of [`Tiresias::order`], if
    /// [`ExactRoom`] holds for the free room and every candidate (else
    /// `None`, with no other effect than [`Tiresias::service`]'s on the
    /// waiting jobs, which [`Tiresias::order`] repeats identically).
    pub(super) fn waiting_if_exact<'v>(&mut self, view: &SimView<'v>) -> Option<Vec<Ranked<'v>>> {
        let mut exact = ExactRoom::new(view);
        let mut shapes = std::mem::take(&mut self.memory.shapes);
        shapes.start(view);
        let mut waiting = Vec::new();
        for j in view.active() {
            if !is_candidate(&j) {
                continue;
            }
            let s = shapes.get(j.job(), j.position(), &self.requests);
            exact.add_job(s, &shapes.demands);
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
    pub(super) fn walk_spare<'v>(
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
    /// The id (in [`Shapes`]) of the shape last added: a candidate with
    /// the same adds only its counts.
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
    fn add_job(&mut self, job: JobShape, demands: &ByShape<Shape, Demands>) {
        self.counts[0] += u64::from(job.counts[0]);
        self.counts[1] += u64::from(job.counts[1]);
        if self.last == Some(job.shape) {
            return;
        }
        let (demands, b) = demands.value(job.shape);
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
}
