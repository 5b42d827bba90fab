//! A fast path of the market's repeated clearings within one event
//! (rule 7 and the placement's "leaves the market, clears again"): each
//! clearing after the first resets only what the previous one touched,
//! lists only the bidders it paid, and the reallocation undoes only the
//! placements made since its start, so a clearing costs time in the
//! shares it gives instead of in all `J` bidders. Without it an event in
//! which many paid jobs fit nowhere, one after the other (a long queue on
//! a cluster whose NICs hold one job per machine), costs `O(J)` per
//! exclusion, `O(J²)` in all.
//!
//! Why the results are the same, bit for bit:
//!
//! * **Reset.** The full reset ([`Market::reset`]) gives every bidder
//!   `total = 0`, no blocked machine, a fresh span when it reserves,
//!   `saturated = cap == 0 || excluded`, and rebuilds the skip pointers
//!   `next` and the count of unsaturated bidders. Between two resets a
//!   bidder's `total`, `blocked`, `span` and `saturated` change only in
//!   [`Market::take`], which records the bidder as *dirty*; `excluded` is
//!   set only for bidders paid in the last clearing (dirty); and `next`
//!   changes only in `take` and [`Market::find`], which log each write
//!   with the old value. So undoing the log backwards restores `next` as
//!   the last reset left it, and re-resetting the dirty bidders alone
//!   (their pointer and the count follow their new `saturated`) gives
//!   exactly the state of a full reset. `blocked_here` is zeroed as the
//!   full reset does (`O(H)`).
//! * **Bidders out for the event.** A bidder with no cap or that left the
//!   market stays saturated until the event ends, so the second skip
//!   list `perm` over them is never undone; [`Market::find`] jumps it
//!   first. Any skip pointers over saturated positions give the same
//!   answer (the first unsaturated position), so this changes no
//!   decision, only how many pointers are followed: without it each
//!   clearing walks every bidder excluded so far in the event again.
//! * **Paid list.** A bidder with `total = 0` has count 0 (rule 6), and
//!   `total > 0` only for bidders given a share (dirty), so the paid
//!   bidders are the dirty ones with `total > 0`, sorted by rank — the
//!   list the full scan in rank order makes.
//! * **Reallocation.** [`Realloc::restart`](super::Realloc::restart)
//!   restores the ledgers and pointer `Realloc::new` made and empties the
//!   entries given tasks since, which is what a new `Realloc` over the
//!   same view and jobs holds.
//! * **Alike exclusions at once** ([`Market::exclude_alike`]). On a long
//!   queue of jobs of one shape, each clearing pays the same few ranks,
//!   the paid job after the running ones fits nowhere and leaves, and the
//!   next clearing is the same with the next queued job in its place: one
//!   clearing per queued job. Let `L` be the bidders in the market at the
//!   last reset (not excluded, cap > 0) in rank order, the excluded one
//!   `x = L[a]` and `M` the last position given a share. With equal bids,
//!   a clearing reads a bidder only through its position in `L` and its
//!   attributes (GPUs and demand per worker, cap, rigidity, reservation),
//!   and it reads `L`'s length only through the counts `n` of each equal
//!   split (`q`, `k`) and the test "no unsaturated bidder left". When
//!   bidder `i` has rank `i`, shares are taken in position order too. So
//!   if `L[a..=M+s]` are *alike* — idle (no tasks, no placement) elastic
//!   parameter-server jobs with the same worker and PS demands, the same
//!   allowed machines and the same PSs for every count up to `peak`, each
//!   with a cap above `peak`, the most `total + paid` of any take of the
//!   clearing (so no cap is ever reached or binds a take among them) —
//!   then the clearing without `L[a..a+t]` (`t ≤ s`) gives position `p`
//!   what the last one gave it, provided each equal split gives the same
//!   `(q, k)` with `n − t` bidders and at least one unsaturated bidder
//!   stays at every test: the positions after `a` hold alike bidders,
//!   positions beyond `M` are never reached. The paid list is then the
//!   same positions with the same counts, and the placement (restarted,
//!   in rank order, reading a job only through its demands, counts, PSs,
//!   allowed machines and current placement) places them as before: the
//!   positions before `a` fit as they did, position `a` fits nowhere, the
//!   later ones fit; so the bidder now at position `a`, `L[a + t]`, is
//!   the one that leaves. By induction the next `s` clearings exclude
//!   `L[a+1..=a+s]`, which are marked excluded (and dirty, so that the
//!   next reset saturates them) without clearing.
//!
//! `tests::incremental_clearings_decide_as_full_ones` runs busy workloads
//! with the fast path forced off and on and asserts identical runs;
//! `tests::alike_exclusions_decide_as_one_at_a_time` does so on queues of
//! parameter-server jobs on machines whose NICs hold one job each.

use crate::model::Architecture;
use crate::placement::Span;
use crate::placement::realloc::Realloc;
use crate::schedule::Tasks;

use std::rc::Rc;

use crate::baselines::common::{ByShape, Shape, bits};
use crate::model::{Job, Machine, Resources};

use super::market::{Market, equal_split};
use super::rule::{Bidder, bids_of};

/// The most workers [`Market::exclude_alike`] compares PS counts up to
/// (beyond it nothing is skipped).
const MAX_COUNT: u32 = 64;

/// Whether `b` may stand in for `a` at a position of the last clearing
/// that was paid for at most `most` workers, caps aside (see the
/// [module docs](self)).
fn alike(a: &Bidder<'_>, b: &Bidder<'_>, most: u32) -> bool {
    let (ja, jb) = (a.job(), b.job());
    let (Architecture::ParameterServer(pa), Architecture::ParameterServer(pb)) =
        (&ja.architecture, &jb.architecture)
    else {
        return false;
    };
    let idle = |x: &Bidder<'_>| x.view.placement().is_empty() && x.view.tasks() == Tasks::default();
    !a.is_rigid()
        && !b.is_rigid()
        && idle(a)
        && idle(b)
        && a.gpu.to_bits() == b.gpu.to_bits()
        && bits(&a.unit) == bits(&b.unit)
        && bits(&pa.worker) == bits(&pb.worker)
        && bits(&pa.ps) == bits(&pb.ps)
        && ja.allowed_machines == jb.allowed_machines
        && (1..=most).all(|c| a.ps_of(c) == b.ps_of(c))
}

/// Rules 1–2's bids ([`bids_of`]), computed once for the jobs of one shape
/// and budget that may use every machine (they bid alike) and shared
/// between them.
#[derive(Default)]
pub(super) struct Bids {
    by_shape: ByShape<(Shape, u64), Rc<[f64]>>,
}

impl Bids {
    /// `job`'s bid on each machine ([`bids_of`]).
    pub(super) fn of(
        &mut self,
        machines: &[Machine],
        job: &Job,
        worker: &Resources,
        budget: f64,
    ) -> Rc<[f64]> {
        if job.allowed_machines.is_some() {
            return bids_of(machines, job, worker, budget);
        }
        let key = (Shape::of(job), budget.to_bits());
        Rc::clone(
            self.by_shape
                .get_or_make(key, || bids_of(machines, job, worker, budget)),
        )
    }
}

impl Market {
    /// After the placement excluded bidder `x` (rule 7): the next clearing
    /// starts from a fresh reallocation (`fresh`) — or, on the fast path,
    /// from `realloc` restarted, with the next clearings that would each
    /// exclude the bidder after it excluded at once
    /// ([`Market::exclude_alike`]).
    pub(super) fn excluded<'a>(
        &mut self,
        bidders: &mut [Bidder<'a>],
        x: usize,
        realloc: &mut Realloc<'a>,
        fresh: impl FnOnce() -> Realloc<'a>,
    ) {
        if self.fast() {
            self.exclude_alike(bidders, x);
            realloc.restart();
        } else {
            *realloc = fresh();
        }
    }

    /// Rule 6's paid bidders ([`Market::paid_in_rank_order`]), on the fast
    /// path from the bidders the last clearing touched alone.
    pub(super) fn paid(&self, bidders: &[Bidder<'_>]) -> Vec<(usize, u32)> {
        if self.fast() {
            self.paid_fast(bidders)
        } else {
            self.paid_in_rank_order(bidders)
        }
    }

    /// Whether the fast path may be taken (the tests' reference runs turn
    /// it off).
    pub(super) fn fast(&self) -> bool {
        self.shortcut.taken()
    }

    /// The reset of [`Market::reset`] from the previous one, touching only
    /// the bidders given a share since (see the [module docs](self));
    /// `false` (nothing done) before the first full reset.
    pub(super) fn reset_fast(&mut self, bidders: &mut [Bidder<'_>]) -> bool {
        let Some(mut unsaturated) = self.reset_unsaturated else {
            return false;
        };
        for &(p, old) in self.next_log.iter().rev() {
            self.next[p] = old;
        }
        self.next_log.clear();
        self.blocked_here.iter_mut().for_each(|c| *c = 0);
        for rank in self.dirty.drain(..) {
            let b = &mut bidders[self.by_rank[rank]];
            b.touched.dirty = false;
            b.total = 0;
            b.blocked.clear();
            if b.span.reserves() {
                b.span = Span::new(b.view.job(), []);
            }
            // Saturated at the last reset iff its pointer skips it.
            let was = self.next[rank] != rank;
            b.saturated = b.cap == 0 || b.excluded;
            self.next[rank] = if b.saturated { rank + 1 } else { rank };
            if b.saturated {
                // It left the market: saturated for the rest of the event.
                self.perm[rank] = rank + 1;
            }
            unsaturated = unsaturated + usize::from(was) - usize::from(b.saturated);
        }
        self.unsaturated = unsaturated;
        self.reset_unsaturated = Some(unsaturated);
        self.used.reused += 1;
        true
    }

    /// After the last clearing's placement excluded bidder `x`: excludes
    /// at once the bidders the next clearings would exclude one by one
    /// (see the [module docs](self)); how many.
    pub(super) fn exclude_alike(&mut self, bidders: &mut [Bidder<'_>], x: usize) -> usize {
        let Some(bids) = self.uniform.clone() else {
            return 0;
        };
        if !self.in_order || self.low <= 1 {
            return 0;
        }
        // Over the positions from `x` on that the clearing reached: the
        // last one, the most `total + paid` of a take, the most paid.
        let (mut last, mut peak, mut most) = (x, 0, 0);
        for &r in self.dirty.iter().filter(|&&r| r >= x) {
            last = last.max(r);
            peak = peak.max(bidders[r].touched.peak);
            most = most.max(bidders[r].total);
        }
        if most > MAX_COUNT {
            return 0;
        }
        let fits = |b: &Bidder<'_>| b.cap >= peak && b.cap > most;
        if !fits(&bidders[x]) {
            return 0;
        }
        // The bidders in the market after `x`, in rank order (bidder `i`
        // has rank `i`), while alike.
        let mut run = Vec::new();
        let mut p = x + 1;
        loop {
            while p < bidders.len() && self.perm[p] != p {
                p = self.perm[p];
            }
            if p >= bidders.len() {
                break;
            }
            let b = &bidders[p];
            if b.excluded || b.cap == 0 {
                p += 1;
                continue;
            }
            if !(fits(b) && alike(&bidders[x], b, most)) {
                break;
            }
            run.push(p);
            p += 1;
        }
        // Every position after `x` the clearing reached must be alike.
        if p <= last {
            return 0;
        }
        let within = run.partition_point(|&r| r <= last);
        let mut s = 0;
        while within + s < run.len() && s + 1 < self.low && self.splits_hold(&bids, s + 1) {
            s += 1;
        }
        for &r in &run[..s] {
            let b = &mut bidders[r];
            b.excluded = true;
            if !b.touched.dirty {
                b.touched.dirty = true;
                self.dirty.push(r);
            }
        }
        self.used.skipped += s as u64;
        s
    }

    /// Whether every equal split of the last clearing splits as it did
    /// with `t` fewer bidders.
    fn splits_hold(&mut self, bids: &[f64], t: usize) -> bool {
        let splits = std::mem::take(&mut self.splits);
        let ok = splits.iter().all(|&(h, units, n, q, k)| {
            n > t && q == 0 && {
                let (w, m) = (bids[h], n - t);
                equal_split(units, w, self.sum_of(w, m), m) == (q, k)
            }
        });
        self.splits = splits;
        ok
    }

    /// The bidders paid for a worker in the last clearing, in rank order,
    /// with their counts (see the [module docs](self)).
    pub(super) fn paid_fast(&self, bidders: &[Bidder<'_>]) -> Vec<(usize, u32)> {
        let mut ranks: Vec<usize> = self.dirty.clone();
        ranks.sort_unstable();
        ranks
            .into_iter()
            .map(|r| self.by_rank[r])
            .filter(|&i| bidders[i].total > 0)
            .map(|i| (i, bidders[i].count()))
            .collect()
    }
}

#[cfg(test)]
mod tests {

    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    use crate::baselines::ProportionalShare;
    use crate::baselines::fixtures::{Busy, assert_same_runs, busy_workload};
    use crate::model::{
        Architecture, Cluster, Discipline, Instance, Job, JobId, Machine, MachineId, PsJob, RarJob,
        Resources, SyncMode, WorkerCounts,
    };

    /// A long queue on `machines` machines of 8 GPUs whose NICs hold one
    /// job (even seeds, as in the layered example) or one and a half (odd
    /// seeds; a worker and its PS each take 1.25 Gbit/s): mostly parameter-server jobs of a few shapes
    /// (caps 2–16, two PS demands), and for `mixed` also rings (half of
    /// them rigid gangs) and jobs limited to one machine among them.
    fn nic_bound_queue(seed: u64, machines: u32, mixed: bool) -> Instance {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cap = Resources::zero()
            .gpus(8.0)
            .cpu_cores(64.0)
            .memory(512e9)
            .nic(if seed.is_multiple_of(2) {
                2.5e9
            } else {
                3.75e9
            });
        let ms: Vec<Machine> = (0..machines)
            .map(|i| Machine::new(MachineId(i), cap, 1e11))
            .collect();
        let jobs = (0..150u32)
            .map(|id| {
                let arrival = f64::from(id / 3) * 7.0;
                let ring = mixed && rng.random_bool(0.1);
                let architecture = if ring {
                    Architecture::RingAllReduce(RarJob {
                        workers: WorkerCounts::Allowed(vec![1, 2, 4]),
                        iterations: rng.random_range(50..500u64),
                        convergence_iterations: None,
                        model_bytes: 1e8,
                        minibatch_size: 32,
                        forward_per_sample_s: 0.005,
                        backward_per_iteration_s: 0.3,
                        reserved_bandwidth_bps: rng.random_bool(0.5).then_some(1e9),
                        worker: Resources::zero().gpus(1.0).cpu_cores(4.0).memory(16e9),
                    })
                } else {
                    let max_workers = [2, 4, 8, 16][rng.random_range(0..4usize)];
                    let ps_cpu = if rng.random_bool(0.2) { 2.0 } else { 4.0 };
                    Architecture::ParameterServer(PsJob {
                        epochs: 1,
                        data_chunks: 1,
                        minibatches_per_chunk: rng.random_range(50..2000u32),
                        minibatch_compute_s: 0.5,
                        gradient_bytes: 0.0,
                        worker: Resources::zero()
                            .gpus(1.0)
                            .cpu_cores(4.0)
                            .memory(16e9)
                            .nic(1.25e9),
                        ps: Resources::zero().cpu_cores(ps_cpu).memory(8e9).nic(1.25e9),
                        max_workers,
                        max_ps: max_workers / 2,
                        ps_at_most_workers: true,
                        sync: SyncMode::Synchronous,
                        layers: None,
                    })
                };
                let mut job = Job::new(JobId(id), arrival, architecture);
                if ring && rng.random_bool(0.5) {
                    job = job.with_discipline(Discipline::RIGID_GANG);
                }
                if mixed && machines > 1 && rng.random_bool(0.05) {
                    job.allowed_machines = Some(vec![MachineId(0)]);
                }
                job
            })
            .collect();
        Instance::new(Cluster::new(ms), jobs, 60.0, 100_000).expect("queue")
    }

    /// Excluding a run of alike bidders at once decides as excluding them
    /// one clearing at a time, on long queues whose paid jobs mostly fit
    /// nowhere.
    #[test]
    fn alike_exclusions_decide_as_one_at_a_time() {
        let mut skipped = 0;
        // The forced-off runs clear once per queued job: two seeds in a debug
        // build (about a minute each otherwise), four in release.
        let seeds = if cfg!(debug_assertions) { 2 } else { 4 };
        for seed in 0..seeds {
            for machines in [1, 2, 3] {
                for mixed in [false, true] {
                    let used = assert_same_runs(
                        &nic_bound_queue(seed, machines, mixed),
                        ProportionalShare::default,
                        &format!("seed {seed}, {machines} machines, mixed {mixed}"),
                    );
                    skipped += used.skipped;
                }
            }
        }
        assert!(skipped > 0, "no exclusion was skipped");
    }

    /// Clearings that reset only what the previous one touched, and a
    /// reallocation restarted instead of rebuilt, decide as full ones on
    /// busy clusters (gangs, rings, PS jobs, reservations, fractions,
    /// restricted machines, weights).
    #[test]
    fn incremental_clearings_decide_as_full_ones() {
        let kinds = Busy::kinds();
        let mut reused = 0;
        for seed in 0..4 {
            for busy in kinds {
                for machines in [3, 6] {
                    let used = assert_same_runs(
                        &busy_workload(seed, machines, busy),
                        || ProportionalShare {
                            weighted: busy.weighted,
                            ..ProportionalShare::default()
                        },
                        &format!("seed {seed}, {machines} machines, {busy:?}"),
                    );
                    reused += used.reused;
                }
            }
        }
        assert!(reused > 0, "no clearing was repeated");
    }
}
