//! Task placement shared by the baselines: best fit (fewest machines),
//! first fit, consolidating first fit and round robin, over a scratch copy
//! of the free capacities, with the ring reservation charged as the
//! simulator charges it ([`Span`]).

use std::collections::BTreeSet;

use super::workers_fitting;
use crate::model::{FIT_TOL, Instance, Job, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};

/// How tasks are spread over machines.
///
/// The default, [`PlacementRule::BestFit`], puts a job on the fewest
/// machines that can hold it, as production GPU schedulers and the
/// Tiresias authors' simulator do for multi-GPU jobs (Gu et al., NSDI
/// 2019): a ring split over more machines than it needs runs slower.
///
/// ```
/// use dmlsched::placement::PlacementRule;
/// assert_eq!(PlacementRule::default(), PlacementRule::BestFit);
/// assert_eq!("first-fit".parse::<PlacementRule>(), Ok(PlacementRule::FirstFit));
/// assert_eq!(PlacementRule::BestFit.to_string(), "best-fit");
/// assert!("worst-fit".parse::<PlacementRule>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PlacementRule {
    /// The fewest machines that fit, tightest first. If one machine holds
    /// the whole job (workers and PSs), the one that is left with the fewest
    /// free GPUs (ties: a machine the job already uses, then the lowest
    /// index). Otherwise the workers go first to the machines the job
    /// already uses, then to the machines that hold the most of them, in
    /// decreasing order, except that the last machine needed is the one
    /// with the least room that still holds the rest; PSs then go to the
    /// first machine in that order with room. This minimises the number of
    /// machines a job's workers span, given what is free.
    #[default]
    BestFit,
    /// Each task on the lowest-index machine that fits it (workers first,
    /// then PSs).
    FirstFit,
    /// The lowest-index single machine that fits the whole job; otherwise
    /// first fit (the "first-fit" of FIFO-FF ring embedding).
    Consolidate,
    /// One task at a time on the next machine, in cyclic order from a
    /// rotating pointer, that fits it (the placement of the crate's OASiS
    /// baselines).
    RoundRobin,
}

impl PlacementRule {
    /// Every rule, with its name for [`std::str::FromStr`].
    pub const ALL: [(PlacementRule, &'static str); 4] = [
        (PlacementRule::BestFit, "best-fit"),
        (PlacementRule::FirstFit, "first-fit"),
        (PlacementRule::Consolidate, "consolidate"),
        (PlacementRule::RoundRobin, "round-robin"),
    ];

    /// The rule's name: `best-fit`, `first-fit`, `consolidate` or
    /// `round-robin`.
    pub fn name(self) -> &'static str {
        PlacementRule::ALL
            .iter()
            .find(|(r, _)| *r == self)
            .map_or("best-fit", |(_, n)| n)
    }
}

impl std::fmt::Display for PlacementRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`PlacementRule`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown placement rule `{0}` (expected best-fit, first-fit, consolidate or round-robin)")]
pub struct UnknownPlacementRule(pub String);

impl std::str::FromStr for PlacementRule {
    type Err = UnknownPlacementRule;

    /// Case-insensitive; `_` may stand for `-`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase().replace('_', "-");
        PlacementRule::ALL
            .iter()
            .find(|(_, n)| *n == key)
            .map(|(r, _)| *r)
            .ok_or_else(|| UnknownPlacementRule(s.to_string()))
    }
}

/// What one placement step charges: `demand` on machine position `pos`
/// (the tasks, plus the reservation `pos` newly carries) and, when the step
/// takes a job from one machine to two, the reservation `b` on the machine
/// it held before.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Charge {
    pos: usize,
    demand: Resources,
    other: Option<(usize, f64)>,
}

impl Charge {
    /// `(position, demand)` pairs: the step's machine first.
    pub(crate) fn parts(&self) -> impl Iterator<Item = (usize, Resources)> + use<> {
        std::iter::once((self.pos, self.demand))
            .chain(self.other.map(|(q, b)| (q, Resources::zero().nic(b))))
    }

    /// Whether every part fits in `free` (per machine position).
    pub(crate) fn fits(&self, free: &[Resources]) -> bool {
        self.demand.fits_in(&free[self.pos], FIT_TOL)
            && self
                .other
                .is_none_or(|(q, b)| Resources::zero().nic(b).fits_in(&free[q], FIT_TOL))
    }

    /// Subtracts every part from `free`.
    pub(crate) fn apply(&self, free: &mut [Resources]) {
        for (p, d) in self.parts() {
            free[p] = free[p].minus(&d);
        }
    }
}

/// The machines holding one job's workers while a decision places it, and
/// the ring reservation they carry: a ring-all-reduce job with a reserved
/// bandwidth `b` is charged `b` of NIC per direction on every machine
/// holding its workers once they span two or more machines, and nothing on
/// one ([`Job::demand_with_reservation`], the simulator's and `verify`'s
/// charge). Every shared placement path charges through it: a job that
/// grows from one machine to two is charged `b` on both and each machine
/// added later `b` (a placement that charged `b` from the start gives it
/// back if it ends on one machine). For a job that reserves nothing it only keeps the
/// list of machines, and its charges are exactly the tasks' demands.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    /// The reservation per machine once the job spans two or more (0:
    /// none).
    b: f64,
    /// Machine positions holding workers, sorted.
    hosts: Vec<usize>,
    /// Whether `b` is charged on every host.
    charged: bool,
}

impl Span {
    /// `job` with workers on the machine positions `hosts`, charged as the
    /// simulator charges them (`b` on each when there are two or more).
    pub(crate) fn new(job: &Job, hosts: impl IntoIterator<Item = usize>) -> Self {
        let mut hosts: Vec<usize> = hosts.into_iter().collect();
        hosts.sort_unstable();
        hosts.dedup();
        let b = job.reserved_nic_bps(2);
        Span {
            b,
            charged: b > 0.0 && hosts.len() >= 2,
            hosts,
        }
    }

    /// [`Span::new`] on the machines of `held` that hold workers.
    pub(crate) fn of(instance: &Instance, job: &Job, held: &Placement) -> Self {
        Span::new(
            job,
            held.iter()
                .filter(|(_, t)| t.workers > 0)
                .filter_map(|&(m, _)| instance.machine_position(m)),
        )
    }

    /// Whether the job reserves bandwidth when it spans machines.
    pub(crate) fn reserves(&self) -> bool {
        self.b > 0.0
    }

    /// What putting `demand` on position `pos` charges (`worker`: the
    /// demand includes at least one worker), given the hosts so far.
    pub(crate) fn charge(&self, pos: usize, demand: &Resources, worker: bool) -> Charge {
        let mut c = Charge {
            pos,
            demand: *demand,
            other: None,
        };
        if !worker || self.b <= 0.0 || self.hosts.binary_search(&pos).is_ok() {
            return c;
        }
        if self.charged {
            c.demand.nic_bps += self.b;
        } else if let [q] = self.hosts[..] {
            c.demand.nic_bps += self.b;
            c.other = Some((q, self.b));
        }
        c
    }

    /// Records that `pos` now holds the demand of a [`Span::charge`] that
    /// was applied.
    pub(crate) fn record(&mut self, pos: usize, worker: bool) {
        if !worker {
            return;
        }
        if let Err(i) = self.hosts.binary_search(&pos) {
            self.hosts.insert(i, pos);
            self.charged = self.b > 0.0 && (self.charged || self.hosts.len() >= 2);
        }
    }

    /// Charges `demand` on `pos` if it fits in `free` with the reservation
    /// it brings, and records it; otherwise changes nothing.
    #[cfg(test)]
    pub(crate) fn try_put(
        &mut self,
        free: &mut [Resources],
        pos: usize,
        demand: &Resources,
        worker: bool,
    ) -> Option<Charge> {
        let c = self.charge(pos, demand, worker);
        if !c.fits(free) {
            return None;
        }
        c.apply(free);
        self.record(pos, worker);
        Some(c)
    }

    /// What `free[pos]` leaves for workers once the reservation they would
    /// bring to `pos` is taken; `None` when that reservation does not fit
    /// (on `pos`, or on the machine the job would leave alone).
    pub(crate) fn room(&self, free: &[Resources], pos: usize) -> Option<Resources> {
        if !self.reserves() {
            return Some(free[pos]);
        }
        let c = self.charge(pos, &Resources::zero(), true);
        c.fits(free).then(|| free[pos].minus(&c.demand))
    }

    /// Charges `b` on every host now, as a job about to span machines is
    /// charged, if each host's NIC holds it; otherwise `false`, unchanged.
    fn charge_all(&mut self, free: &mut [Resources]) -> bool {
        if self.charged || self.b <= 0.0 {
            return true;
        }
        let b = Resources::zero().nic(self.b);
        if !self.hosts.iter().all(|&q| b.fits_in(&free[q], FIT_TOL)) {
            return false;
        }
        for &q in &self.hosts {
            free[q] = free[q].minus(&b);
        }
        self.charged = true;
        true
    }

    /// Gives the reservation back when the job holds fewer than two
    /// machines.
    fn settle(&mut self, free: &mut [Resources]) {
        if self.charged && self.hosts.len() < 2 {
            for &q in &self.hosts {
                free[q].nic_bps += self.b;
            }
            self.charged = false;
        }
    }
}

/// One component of [`Resources::fits_in`]: `demand ≤ free` up to
/// [`FIT_TOL`], the same formula, for tests that look at one resource
/// before the whole vector.
fn fits_one(demand: f64, free: f64) -> bool {
    demand <= free + FIT_TOL * free.abs().max(1.0)
}

/// Tasks per machine position, capacities left and pointer after a
/// task-by-task placement.
type Spread = (Vec<Tasks>, Vec<Resources>, usize);

/// Places tasks on a scratch copy of the cluster's free capacities.
///
/// Each successful [`Placer::place`] subtracts what it placed, so a policy
/// can place several jobs in one decision; a failed one leaves the
/// capacities unchanged (all or nothing).
///
/// **Ring reservations.** Every method charges what the simulator charges
/// ([`Job::demand_with_reservation`]): a ring-all-reduce job with a
/// reserved bandwidth `b` whose workers span two or more machines is
/// charged `b` of NIC on each of them besides its tasks, and nothing when
/// they share one machine. A machine whose free NIC cannot take `b` gets
/// no worker that would make such a ring multi-machine; the placement
/// tries other machines, or fails as for any other resource. When the
/// rule's pass fails for such a ring, a second pass considers only
/// machines with `b` free beyond the tasks they take (so that the first
/// workers do not fill a machine that cannot carry the reservation).
#[derive(Debug, Clone)]
pub struct Placer<'a> {
    instance: &'a Instance,
    free: Vec<Resources>,
    rule: PlacementRule,
    pointer: usize,
    /// Kept by [`Placer::indexed`] placers only, from their first
    /// placement on.
    index: Option<FreeIndex>,
    /// Whether to build `index` at the next placement.
    want_index: bool,
}

/// The machines of a placer ordered by free GPUs, and how many have a
/// negative free component: best fit then finds its single machine
/// without a scan, and may skip the total-room test it provably passes.
#[derive(Debug, Clone, Default)]
struct FreeIndex {
    /// `(gpu_key(free GPUs), position)` of every machine.
    by_gpus: BTreeSet<(i64, usize)>,
    /// Machines with a free component that is negative (or NaN).
    negative: usize,
    /// Machines whose free GPUs are not a whole number in `0..=2³²`.
    fractional: usize,
    /// The free GPUs of the other machines, summed.
    whole_gpus: u64,
}

/// `x` as a whole number of GPUs in `0..=2³²`, if it is one.
fn whole(x: f64) -> Option<u64> {
    crate::exact::whole_up_to(x, crate::exact::TWO_32)
}

/// A key whose integer order is `f64::total_cmp`'s.
fn gpu_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ ((((b >> 63) as u64) >> 1) as i64)
}

/// Whether some component of `r` is below zero (or NaN).
fn has_negative(r: &Resources) -> bool {
    !(r.gpus >= 0.0
        && r.cpu_cores >= 0.0
        && r.memory_bytes >= 0.0
        && r.storage_bytes >= 0.0
        && r.nic_bps >= 0.0)
}

impl FreeIndex {
    fn new(free: &[Resources]) -> Self {
        FreeIndex {
            by_gpus: free
                .iter()
                .enumerate()
                .map(|(p, r)| (gpu_key(r.gpus), p))
                .collect(),
            negative: free.iter().filter(|r| has_negative(r)).count(),
            fractional: free.iter().filter(|r| whole(r.gpus).is_none()).count(),
            whole_gpus: free.iter().filter_map(|r| whole(r.gpus)).sum(),
        }
    }

    /// The free GPUs of all machines together, when every machine's are a
    /// whole number in `0..=2³²` and there are fewer than 2²⁰ machines: then
    /// the sum in floating point, in any order, is exact, and is this.
    fn total_gpus(&self) -> Option<f64> {
        (self.fractional == 0 && self.by_gpus.len() < 1 << 20).then_some(self.whole_gpus as f64)
    }

    /// Machine `p` goes from `old` to `new` free.
    fn update(&mut self, p: usize, old: &Resources, new: &Resources) {
        if old.gpus.to_bits() == new.gpus.to_bits() && has_negative(old) == has_negative(new) {
            return;
        }
        if gpu_key(old.gpus) != gpu_key(new.gpus) {
            self.by_gpus.remove(&(gpu_key(old.gpus), p));
            self.by_gpus.insert((gpu_key(new.gpus), p));
        }
        self.negative = (self.negative + usize::from(has_negative(new)))
            .saturating_sub(usize::from(has_negative(old)));
        match whole(old.gpus) {
            Some(g) => self.whole_gpus = self.whole_gpus.saturating_sub(g),
            None => self.fractional = self.fractional.saturating_sub(1),
        }
        match whole(new.gpus) {
            Some(g) => self.whole_gpus += g,
            None => self.fractional += 1,
        }
    }
}

impl<'a> Placer<'a> {
    /// A placer over `free` (one entry per machine, cluster order).
    pub fn new(instance: &'a Instance, free: &[Resources], rule: PlacementRule) -> Self {
        Placer {
            instance,
            free: free.to_vec(),
            rule,
            pointer: 0,
            index: None,
            want_index: false,
        }
    }

    /// The same placer, keeping its machines ordered by free GPUs from its
    /// next placement on: best-fit placements of one machine then cost `O(log H)` instead
    /// of a scan of the `H` machines, for policies that place many
    /// increments on one placer. The placements are the same.
    pub(crate) fn indexed(mut self) -> Self {
        self.want_index = true;
        self
    }

    /// Sets machine `p`'s free capacity, keeping the index.
    fn set_free(&mut self, p: usize, new: Resources) {
        if let Some(ix) = &mut self.index {
            ix.update(p, &self.free[p], &new);
        }
        self.free[p] = new;
    }

    /// Replaces every free capacity, keeping the index.
    fn replace_free(&mut self, free: Vec<Resources>) {
        if let Some(ix) = &mut self.index {
            for (p, (old, new)) in self.free.iter().zip(&free).enumerate() {
                ix.update(p, old, new);
            }
        }
        self.free = free;
    }

    /// Makes this placer what [`Placer::new`] on `free` (same instance and
    /// rule) with [`Placer::with_pointer`] at `pointer` makes, reusing its
    /// buffer (for callers that place on many short-lived copies).
    pub(crate) fn refill(&mut self, free: &[Resources], pointer: usize) {
        self.free.clear();
        self.free.extend_from_slice(free);
        self.pointer = pointer;
        self.index = None;
        self.want_index = false;
    }

    /// Starts the round-robin pointer at a machine position (policies keep
    /// the pointer across decisions).
    pub fn with_pointer(mut self, pointer: usize) -> Self {
        self.pointer = pointer;
        self
    }

    /// The round-robin pointer after the placements so far.
    pub fn pointer(&self) -> usize {
        self.pointer
    }

    /// The free capacities left.
    pub fn free(&self) -> &[Resources] {
        &self.free
    }

    /// Gives back what an allocation holds, ring reservation included (for
    /// policies that recompute allocations from scratch).
    pub fn release(&mut self, job: &Job, placement: &Placement) {
        let spread = placement.worker_machines();
        for &(m, t) in placement {
            if let Some(p) = self.instance.machine_position(m) {
                let new = self.free[p].plus(&job.demand_with_reservation(t.workers, t.ps, spread));
                self.set_free(p, new);
            }
        }
    }

    /// Takes a given placement of `job` (to keep a running job where it is,
    /// or to resume a gang where it ran), ring reservation included, if
    /// every machine of it is known and has room; otherwise returns `false`
    /// and changes nothing. The job holds nothing else on this placer.
    pub fn take(&mut self, job: &Job, placement: &Placement) -> bool {
        let spread = placement.worker_machines();
        if let Some(taken) = self.take_distinct(job, placement, spread) {
            return taken;
        }
        let mut needs: Vec<(usize, Resources)> = Vec::with_capacity(placement.len());
        for &(m, t) in placement {
            if t.is_empty() {
                continue;
            }
            let Some(p) = self.instance.machine_position(m) else {
                return false;
            };
            let need = job.demand_with_reservation(t.workers, t.ps, spread);
            match needs.iter_mut().find(|(q, _)| *q == p) {
                Some((_, n)) => *n = n.plus(&need),
                None => needs.push((p, need)),
            }
        }
        if needs
            .iter()
            .any(|(p, need)| !need.fits_in(&self.free[*p], FIT_TOL))
        {
            return false;
        }
        for (p, need) in needs {
            self.set_free(p, self.free[p].minus(&need));
        }
        true
    }

    /// [`Placer::take`] of a small placement whose machines are distinct
    /// and known (the usual case), without allocating: the same checks and
    /// subtractions, each machine's need being its one entry's. `None` for
    /// any other placement.
    fn take_distinct(&mut self, job: &Job, placement: &Placement, spread: usize) -> Option<bool> {
        let entries = || placement.iter().filter(|(_, t)| !t.is_empty());
        if placement.len() > 16 {
            return None;
        }
        for (i, &(m, _)) in entries().enumerate() {
            if entries().take(i).any(|&(x, _)| x == m)
                || self.instance.machine_position(m).is_none()
            {
                return None;
            }
        }
        let need = |t: &Tasks| job.demand_with_reservation(t.workers, t.ps, spread);
        let fits = entries().all(|(m, t)| {
            self.instance
                .machine_position(*m)
                .is_some_and(|p| need(t).fits_in(&self.free[p], FIT_TOL))
        });
        if !fits {
            return Some(false);
        }
        for (m, t) in entries() {
            if let Some(p) = self.instance.machine_position(*m) {
                self.set_free(p, self.free[p].minus(&need(t)));
            }
        }
        Some(true)
    }

    /// Whether the free capacity of all allowed machines together could
    /// hold `workers` and `ps` (a quick necessary test).
    pub fn may_fit(&self, job: &Job, workers: u32, ps: u32) -> bool {
        let need = job.demand_for(workers, ps);
        let mut total = Resources::zero();
        for (p, m) in self.instance.cluster().machines.iter().enumerate() {
            if job.may_use(m.id) {
                total = total.plus(&self.free[p]);
            }
        }
        need.fits_in(&total, FIT_TOL)
    }

    /// Places `workers` workers and `ps` PSs of `job`, which holds nothing
    /// on this placer, or returns `None` and changes nothing.
    pub fn place(&mut self, job: &Job, workers: u32, ps: u32) -> Option<Placement> {
        self.grow(job, &Placement::new(), workers, ps)
    }

    /// Places `workers` more workers and `ps` more PSs of `job`, which
    /// already holds `held` on this placer (placed or taken by it), and
    /// returns what it adds; or returns `None` and changes nothing. When
    /// the new workers take a reserving ring from one machine to several,
    /// the reservation is charged on `held`'s machine too.
    pub fn grow(
        &mut self,
        job: &Job,
        held: &Placement,
        workers: u32,
        ps: u32,
    ) -> Option<Placement> {
        self.grow_span(job, Span::of(self.instance, job, held), workers, ps)
    }

    /// [`Placer::grow`] for a job whose held workers are on `span`.
    pub(crate) fn grow_span(
        &mut self,
        job: &Job,
        span: Span,
        workers: u32,
        ps: u32,
    ) -> Option<Placement> {
        if self.want_index && self.index.is_none() {
            self.index = Some(FreeIndex::new(&self.free));
        }
        if job.allowed_machines.is_none()
            && let Some(total) = self.index.as_ref().and_then(FreeIndex::total_gpus)
            && !fits_one(job.demand_for(workers, ps).gpus, total)
        {
            // The GPU term of `may_fit` fails: its sum is this total.
            return None;
        }
        let single = matches!(
            self.rule,
            PlacementRule::Consolidate | PlacementRule::BestFit
        );
        if single && self.index.as_ref().is_some_and(|ix| ix.negative == 0) {
            // No free component is negative, so a machine that takes the
            // whole job proves that the total room does too: the
            // single-machine search goes first, and the total is summed
            // only when it fails (the same answer, in the same order of
            // tests that change nothing).
            if let Some(p) = self.consolidate(job, &span, workers, ps) {
                return Some(p);
            }
            if !self.may_fit(job, workers, ps) {
                return None;
            }
        } else {
            if !self.may_fit(job, workers, ps) {
                return None;
            }
            if single && let Some(p) = self.consolidate(job, &span, workers, ps) {
                return Some(p);
            }
        }
        let order = match self.rule {
            PlacementRule::BestFit => self.fewest_machines_order(job, &span, workers),
            _ => Vec::new(),
        };
        let mut found = self.spread(
            job,
            &mut span.clone(),
            self.free.clone(),
            workers,
            ps,
            &order,
        );
        if found.is_none() && workers > 0 && span.reserves() {
            // Second pass: the reservation charged on every machine the
            // ring uses from the start, given back if it ends on one.
            let mut eager = span;
            let mut free = self.free.clone();
            if eager.charge_all(&mut free) {
                found = self.spread(job, &mut eager, free, workers, ps, &order).map(
                    |(counts, mut free, pointer)| {
                        eager.settle(&mut free);
                        (counts, free, pointer)
                    },
                );
            }
        }
        let (counts, free, pointer) = found?;
        self.replace_free(free);
        self.pointer = pointer;
        let machines = &self.instance.cluster().machines;
        Some(
            counts
                .into_iter()
                .enumerate()
                .filter(|(_, t)| !t.is_empty())
                .map(|(p, t)| (machines[p].id, t))
                .collect(),
        )
    }

    /// A single machine that takes all the tasks, with the reservation they
    /// bring: the lowest-index one ([`PlacementRule::Consolidate`]) or the
    /// tightest ([`PlacementRule::BestFit`]: fewest GPUs left, then a
    /// machine the job uses, then the lowest index); `None` (unchanged) if
    /// there is none.
    fn consolidate(&mut self, job: &Job, span: &Span, workers: u32, ps: u32) -> Option<Placement> {
        let machines = &self.instance.cluster().machines;
        let need = job.demand_for(workers, ps);
        let best = self.rule == PlacementRule::BestFit;
        let indexed = match &self.index {
            Some(ix) if best => Some(self.tightest(ix, job, span, workers, ps, &need)),
            _ => None,
        };
        let mut chosen: Option<(f64, bool, usize, Charge)> = None;
        let scan = if indexed.is_some() { 0 } else { machines.len() };
        for (p, m) in machines.iter().enumerate().take(scan) {
            // The tests are pure, so their order does not change the
            // choice: the cheap ones (the GPU term of the fit, then
            // whether the machine would be better) go first.
            let free_gpus = self.free[p].gpus;
            if !fits_one(need.gpus, free_gpus) {
                continue;
            }
            let left = free_gpus - need.gpus;
            let new_host = span.hosts.binary_search(&p).is_err();
            let better = chosen
                .as_ref()
                .is_none_or(|&(l, n, _, _)| (left, new_host) < (l, n));
            if !better {
                continue;
            }
            let hosts = (workers == 0 || m.hosts.allows(TaskKind::Worker))
                && (ps == 0 || m.hosts.allows(TaskKind::ParameterServer));
            if !(hosts && job.may_use(m.id)) {
                continue;
            }
            let c = span.charge(p, &need, workers > 0);
            if !c.fits(&self.free) {
                continue;
            }
            chosen = Some((left, new_host, p, c));
            if !best {
                break;
            }
        }
        let (p, c) = match indexed {
            Some(pick) => pick?,
            None => chosen.map(|(_, _, p, c)| (p, c))?,
        };
        for (q, d) in c.parts() {
            self.set_free(q, self.free[q].minus(&d));
        }
        Some(Placement::from(vec![(
            machines[p].id,
            Tasks::new(workers, ps),
        )]))
    }

    /// The best-fit single machine of [`Placer::consolidate`] found through
    /// the index: the minimum of (GPUs left, new host, position) over the
    /// machines that pass every test, as the scan in position order finds
    /// it. The machines the job holds are tried one by one; the others in
    /// increasing order of free GPUs, from just below the job's GPU demand
    /// (no machine with less passes the GPU term of the fit, whose bound
    /// grows with the free GPUs), taking the first that passes in each run
    /// of equal free GPUs (the lowest position) and stopping at the first
    /// run whose GPUs left exceed the best found.
    fn tightest(
        &self,
        ix: &FreeIndex,
        job: &Job,
        span: &Span,
        workers: u32,
        ps: u32,
        need: &Resources,
    ) -> Option<(usize, Charge)> {
        let machines = &self.instance.cluster().machines;
        let d = need.gpus;
        // (GPUs left, charge) if machine `p` passes every test.
        let test = |p: usize| -> Option<(f64, Charge)> {
            let free_gpus = self.free.get(p)?.gpus;
            if !fits_one(d, free_gpus) {
                return None;
            }
            let m = machines.get(p)?;
            let hosts = (workers == 0 || m.hosts.allows(TaskKind::Worker))
                && (ps == 0 || m.hosts.allows(TaskKind::ParameterServer));
            if !(hosts && job.may_use(m.id)) {
                return None;
            }
            let c = span.charge(p, need, workers > 0);
            c.fits(&self.free).then_some((free_gpus - d, c))
        };
        let better = |a: &(f64, bool, usize, Charge), b: &Option<(f64, bool, usize, Charge)>| {
            b.as_ref()
                .is_none_or(|&(l, n, q, _)| (a.0, a.1, a.2) < (l, n, q))
        };
        let mut chosen: Option<(f64, bool, usize, Charge)> = None;
        for &p in &span.hosts {
            if let Some((left, c)) = test(p) {
                let cand = (left, false, p, c);
                if better(&cand, &chosen) {
                    chosen = Some(cand);
                }
            }
        }
        let mut from = if d.is_finite() && d >= 0.0 {
            gpu_key(d - 4.0 * FIT_TOL * d.max(1.0) - 4.0 * FIT_TOL)
        } else {
            i64::MIN
        };
        'runs: loop {
            for &(key, p) in ix.by_gpus.range((from, 0)..) {
                let free_gpus = self.free.get(p).map_or(f64::NAN, |r| r.gpus);
                if fits_one(d, free_gpus)
                    && chosen
                        .as_ref()
                        .is_some_and(|&(l, _, _, _)| free_gpus - d > l)
                {
                    break 'runs;
                }
                if span.hosts.binary_search(&p).is_ok() {
                    continue;
                }
                if let Some((left, c)) = test(p) {
                    let cand = (left, true, p, c);
                    if better(&cand, &chosen) {
                        chosen = Some(cand);
                    }
                    // The rest of this run has higher positions.
                    match key.checked_add(1) {
                        Some(next) => {
                            from = next;
                            continue 'runs;
                        }
                        None => break 'runs,
                    }
                }
            }
            break;
        }
        chosen.map(|(_, _, p, c)| (p, c))
    }

    /// The machine order of [`PlacementRule::BestFit`] for `workers` more
    /// workers: machines the job already uses (most room first), then
    /// those that hold the most workers, down to the one with the least
    /// room that holds the rest, then every other machine by position.
    fn fewest_machines_order(&self, job: &Job, span: &Span, workers: u32) -> Vec<usize> {
        let machines = &self.instance.cluster().machines;
        let unit = job.task_demand(TaskKind::Worker).copied();
        // (room in workers, position) of the machines that take a worker.
        let mut held = Vec::new();
        let mut others = Vec::new();
        if let Some(unit) = unit.filter(|_| workers > 0) {
            for (p, m) in machines.iter().enumerate() {
                // No GPU for one worker: no room (the GPU term of
                // `workers_fitting`, tested first because it is cheap).
                if unit.gpus > 0.0 && !fits_one(unit.gpus, self.free[p].gpus) {
                    continue;
                }
                if !(job.may_use(m.id) && m.can_host(TaskKind::Worker, &unit)) {
                    continue;
                }
                let k = span
                    .room(&self.free, p)
                    .map_or(0, |room| workers_fitting(&unit, &room, workers));
                if k == 0 {
                    continue;
                }
                if span.hosts.binary_search(&p).is_ok() {
                    held.push((k, p));
                } else {
                    others.push((k, p));
                }
            }
        }
        let by_room = |a: &(u32, usize), b: &(u32, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        held.sort_by(by_room);
        others.sort_by(by_room);
        let mut order: Vec<usize> = held.iter().map(|&(_, p)| p).collect();
        let mut rest = workers.saturating_sub(held.iter().map(|&(k, _)| k).sum::<u32>());
        let mut i = 0;
        while rest > 0 && i < others.len() {
            // The tightest machine that holds the rest, if any; else the roomiest.
            let tight = others[i..]
                .iter()
                .rposition(|&(k, _)| k >= rest)
                .map(|j| others[i + j].0);
            // The lowest position among the machines of that room.
            let pick = tight
                .and_then(|t| others[i..].iter().position(|&(k, _)| k == t))
                .map_or(i, |j| i + j);
            others[i..=pick].rotate_right(1);
            rest = rest.saturating_sub(others[i].0);
            order.push(others[i].1);
            i += 1;
        }
        order.extend(others[i..].iter().map(|&(_, p)| p));
        let mut seen = vec![false; machines.len()];
        for &p in &order {
            seen[p] = true;
        }
        order.extend((0..machines.len()).filter(|&p| !seen[p]));
        order
    }

    /// Task by task by the rule (workers first, then PSs) on `free`, with
    /// the reservations of `span`; `None` if a task fits nowhere.
    /// `order` (a permutation of the positions, or empty) replaces the
    /// rule's own machine order.
    fn spread(
        &self,
        job: &Job,
        span: &mut Span,
        mut free: Vec<Resources>,
        workers: u32,
        ps: u32,
        order: &[usize],
    ) -> Option<Spread> {
        let machines = &self.instance.cluster().machines;
        let n = machines.len();
        let mut counts = vec![Tasks::default(); n];
        let mut pointer = self.pointer;
        for (kind, count) in [(TaskKind::Worker, workers), (TaskKind::ParameterServer, ps)] {
            let Some(unit) = job.task_demand(kind).copied() else {
                continue;
            };
            let worker = kind == TaskKind::Worker;
            for _ in 0..count {
                let start = if self.rule == PlacementRule::RoundRobin {
                    pointer
                } else {
                    0
                };
                let position = |k: usize| order.get(k).copied().unwrap_or((start + k) % n);
                let found = (0..n).map(position).find(|&p| {
                    let m = &machines[p];
                    fits_one(unit.gpus, free[p].gpus)
                        && job.may_use(m.id)
                        && m.can_host(kind, &unit)
                        && span.charge(p, &unit, worker).fits(&free)
                })?;
                span.charge(found, &unit, worker).apply(&mut free);
                span.record(found, worker);
                match kind {
                    TaskKind::Worker => counts[found].workers += 1,
                    TaskKind::ParameterServer => counts[found].ps += 1,
                }
                pointer = (found + 1) % n.max(1);
            }
        }
        Some((counts, free, pointer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Architecture, Cluster, JobId, MachineId, RarJob, WorkerCounts};

    fn inst(gpus: &[f64]) -> Instance {
        inst_reserving(gpus, None)
    }

    /// Machines with `gpus` GPUs and a NIC of 10 per direction (units of
    /// 10⁹ B/s), and one ring job of up to 8 workers reserving `b`.
    fn inst_reserving(gpus: &[f64], b: Option<f64>) -> Instance {
        let machines = gpus
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                crate::model::Machine::new(
                    MachineId(i as u32),
                    Resources::zero()
                        .gpus(g)
                        .cpu_cores(64.0)
                        .memory(1e12)
                        .nic(1e10),
                    1e10,
                )
            })
            .collect();
        let rar = RarJob {
            workers: WorkerCounts::Allowed((1..=8).collect()),
            iterations: 10,
            convergence_iterations: None,
            model_bytes: 1e6,
            minibatch_size: 1,
            forward_per_sample_s: 0.01,
            backward_per_iteration_s: 0.01,
            reserved_bandwidth_bps: b,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9),
        };
        let job = crate::model::Job::new(JobId(0), 0.0, Architecture::RingAllReduce(rar));
        Instance::new(Cluster::new(machines), vec![job], 60.0, 10).unwrap()
    }

    #[test]
    fn consolidate_prefers_one_machine() {
        let i = inst(&[2.0, 4.0, 4.0]);
        let free: Vec<_> = i.cluster().machines.iter().map(|m| m.capacity).collect();
        let mut p = Placer::new(&i, &free, PlacementRule::Consolidate);
        let job = &i.jobs()[0];
        assert_eq!(
            p.place(job, 3, 0),
            Some(Placement::from(vec![(MachineId(1), Tasks::new(3, 0))]))
        );
        // 1 free on m1, 2 on m0, 4 on m2: 4 fits m2 alone.
        assert_eq!(
            p.place(job, 4, 0),
            Some(Placement::from(vec![(MachineId(2), Tasks::new(4, 0))]))
        );
        // 3 GPUs left in total (2 + 1): spread first fit.
        assert_eq!(
            p.place(job, 3, 0),
            Some(Placement::from(vec![
                (MachineId(0), Tasks::new(2, 0)),
                (MachineId(1), Tasks::new(1, 0))
            ]))
        );
        assert_eq!(p.place(job, 1, 0), None);
        assert!(p.free().iter().all(|r| r.gpus.abs() < 1e-12));
    }

    #[test]
    fn best_fit_uses_the_fewest_and_tightest_machines() {
        let i = inst(&[2.0, 4.0, 4.0, 1.0]);
        let job = &i.jobs()[0];
        let mut p = Placer::new(&i, &full(&i), PlacementRule::BestFit);
        let on = |m: u32, w: u32| (MachineId(m), Tasks::new(w, 0));
        // One machine: the one left with the fewest free GPUs.
        assert_eq!(p.place(job, 1, 0), Some(Placement::from(vec![on(3, 1)])));
        assert_eq!(p.place(job, 2, 0), Some(Placement::from(vec![on(0, 2)])));
        assert_eq!(p.place(job, 3, 0), Some(Placement::from(vec![on(1, 3)])));
        // Free: 1 on m1, 4 on m2: 5 workers take both.
        assert_eq!(
            p.place(job, 5, 0),
            Some(Placement::from(vec![on(1, 1), on(2, 4)]))
        );
        // Free 1, 1, 4, 4: first fit spans three machines, best fit two
        // (the roomiest, then the tightest that holds the rest).
        let mut free = full(&i);
        free[0].gpus = 1.0;
        free[1].gpus = 1.0;
        free[3].gpus = 4.0;
        for (rule, want) in [
            (PlacementRule::FirstFit, vec![on(0, 1), on(1, 1), on(2, 4)]),
            (
                PlacementRule::Consolidate,
                vec![on(0, 1), on(1, 1), on(2, 4)],
            ),
            (PlacementRule::BestFit, vec![on(2, 4), on(3, 2)]),
        ] {
            let mut p = Placer::new(&i, &free, rule);
            assert_eq!(p.place(job, 6, 0), Some(Placement::from(want)), "{rule}");
        }
        // Growing: the machines the job holds first, then the tightest.
        free[2].gpus = 0.0;
        free[3].gpus = 2.0;
        let mut p = Placer::new(&i, &free, PlacementRule::BestFit);
        let held = Placement::from(vec![on(3, 2)]);
        assert_eq!(
            p.grow(job, &held, 3, 0),
            Some(Placement::from(vec![on(0, 1), on(3, 2)]))
        );
        assert_eq!(p.place(job, 2, 0), None);
        assert_eq!(p.free()[1].gpus, 1.0);
    }

    #[test]
    fn take_is_all_or_nothing() {
        let i = inst(&[2.0, 2.0]);
        let free: Vec<_> = i.cluster().machines.iter().map(|m| m.capacity).collect();
        let mut p = Placer::new(&i, &free, PlacementRule::FirstFit);
        let job = &i.jobs()[0];
        let two = Placement::from([
            (MachineId(0), Tasks::new(1, 0)),
            (MachineId(1), Tasks::new(2, 0)),
        ]);
        assert!(p.take(job, &two));
        // Machine 1 is full: nothing is taken, not even machine 0's part.
        let before = p.free().to_vec();
        assert!(!p.take(job, &two));
        assert_eq!(p.free(), &before[..]);
        assert!(!p.take(job, &Placement::from([(MachineId(7), Tasks::new(1, 0))])));
        assert!(p.take(job, &Placement::from([(MachineId(0), Tasks::new(1, 0))])));
        p.release(job, &two);
        assert_eq!(p.free()[1].gpus, 2.0);
    }

    #[test]
    fn round_robin_rotates_and_rolls_back() {
        let i = inst(&[2.0, 2.0, 2.0]);
        let free: Vec<_> = i.cluster().machines.iter().map(|m| m.capacity).collect();
        let mut p = Placer::new(&i, &free, PlacementRule::RoundRobin);
        let job = &i.jobs()[0];
        assert_eq!(
            p.place(job, 2, 0),
            Some(Placement::from(vec![
                (MachineId(0), Tasks::new(1, 0)),
                (MachineId(1), Tasks::new(1, 0))
            ]))
        );
        assert_eq!(p.pointer(), 2);
        assert_eq!(
            p.place(job, 2, 0),
            Some(Placement::from(vec![
                (MachineId(0), Tasks::new(1, 0)),
                (MachineId(2), Tasks::new(1, 0))
            ]))
        );
        let before = p.free().to_vec();
        assert_eq!(p.place(job, 3, 0), None);
        assert_eq!(p.free(), &before[..]);
    }

    fn nics(p: &Placer<'_>) -> Vec<f64> {
        p.free().iter().map(|r| r.nic_bps / 1e9).collect()
    }

    fn full(i: &Instance) -> Vec<Resources> {
        i.cluster().machines.iter().map(|m| m.capacity).collect()
    }

    #[test]
    fn take_and_release_charge_the_reservation() {
        let i = inst_reserving(&[4.0, 4.0, 4.0], Some(4e9));
        let job = &i.jobs()[0];
        let mut p = Placer::new(&i, &full(&i), PlacementRule::FirstFit);
        let two = Placement::from([
            (MachineId(0), Tasks::new(2, 0)),
            (MachineId(1), Tasks::new(2, 0)),
        ]);
        assert!(p.take(job, &two));
        assert_eq!(nics(&p), [6.0, 6.0, 10.0]);
        // One machine: no reservation.
        assert!(p.take(job, &Placement::from([(MachineId(2), Tasks::new(2, 0))])));
        assert_eq!(nics(&p), [6.0, 6.0, 10.0]);
        p.release(job, &two);
        assert_eq!(nics(&p), [10.0, 10.0, 10.0]);
        // A NIC that cannot take `b`: nothing is taken.
        let mut low = full(&i);
        low[1].nic_bps = 3e9;
        let mut p = Placer::new(&i, &low, PlacementRule::FirstFit);
        assert!(!p.take(job, &two));
        assert_eq!(nics(&p), [10.0, 3.0, 10.0]);
    }

    #[test]
    fn growth_to_a_second_machine_charges_both() {
        let i = inst_reserving(&[4.0, 4.0, 4.0], Some(4e9));
        let job = &i.jobs()[0];
        let mut p = Placer::new(&i, &full(&i), PlacementRule::FirstFit);
        let mut held = p.place(job, 2, 0).unwrap();
        assert_eq!(held, vec![(MachineId(0), Tasks::new(2, 0))]);
        assert_eq!(nics(&p), [10.0, 10.0, 10.0]);
        // Two more fill machine 0: still one machine.
        held.merge(&p.grow(job, &held, 2, 0).unwrap());
        assert_eq!(nics(&p), [10.0, 10.0, 10.0]);
        // The next worker spans two machines: `b` on both.
        held.merge(&p.grow(job, &held, 1, 0).unwrap());
        assert_eq!(held.worker_machines(), 2);
        assert_eq!(nics(&p), [6.0, 6.0, 10.0]);
        // A third machine: `b` on it only.
        let mut rest = p.free().to_vec();
        rest[1].gpus = 0.0;
        let mut q = Placer::new(&i, &rest, PlacementRule::FirstFit);
        assert_eq!(
            q.grow(job, &held, 1, 0),
            Some(Placement::from([(MachineId(2), Tasks::new(1, 0))]))
        );
        assert_eq!(nics(&q), [6.0, 6.0, 6.0]);
        // Releasing the whole ring gives every reservation back.
        held.merge(&Placement::from([(MachineId(2), Tasks::new(1, 0))]));
        q.release(job, &held);
        assert_eq!(nics(&q), [10.0, 10.0, 10.0]);
    }

    #[test]
    fn no_spanning_worker_on_a_machine_without_room_for_b() {
        let i = inst_reserving(&[4.0, 4.0, 4.0], Some(4e9));
        let job = &i.jobs()[0];
        let mut free = full(&i);
        free[0].nic_bps = 1e9;
        for rule in [PlacementRule::FirstFit, PlacementRule::Consolidate] {
            // Three workers fit machine 0 alone, with no reservation.
            let mut p = Placer::new(&i, &free, rule);
            assert_eq!(
                p.place(job, 3, 0),
                Some(Placement::from([(MachineId(0), Tasks::new(3, 0))]))
            );
            // Six must span machines: machine 0 cannot carry `b`, so the
            // ring goes to machines 1 and 2, charged `b` on each.
            let mut p = Placer::new(&i, &free, rule);
            assert_eq!(
                p.place(job, 6, 0),
                Some(Placement::from([
                    (MachineId(1), Tasks::new(4, 0)),
                    (MachineId(2), Tasks::new(2, 0))
                ]))
            );
            assert_eq!(nics(&p), [1.0, 6.0, 6.0]);
            // A ring held on machine 0 cannot grow past it.
            let held = Placement::from([(MachineId(0), Tasks::new(4, 0))]);
            let mut rest = free.clone();
            rest[0].gpus = 0.0;
            let mut p = Placer::new(&i, &rest, rule);
            assert_eq!(p.grow(job, &held, 1, 0), None);
            assert_eq!(p.free(), &rest[..]);
        }
    }

    #[test]
    fn a_span_charges_the_reservation_once_it_spans() {
        let i = inst_reserving(&[4.0, 4.0, 4.0], Some(4e9));
        let job = &i.jobs()[0];
        let mut free = full(&i);
        let mut span = Span::new(job, []);
        let w = Resources::zero().gpus(1.0);
        for pos in [0, 1, 2] {
            assert!(span.try_put(&mut free, pos, &w, true).is_some());
        }
        let nic = |f: &[Resources]| f.iter().map(|r| r.nic_bps / 1e9).collect::<Vec<_>>();
        assert_eq!(nic(&free), [6.0, 6.0, 6.0]);
        // On one machine nothing is reserved; room for workers on a second
        // machine is net of `b`, and none when the first machine cannot
        // take it.
        let mut free = full(&i);
        let mut span = Span::new(job, []);
        assert!(span.try_put(&mut free, 1, &w, true).is_some());
        assert_eq!(nic(&free), [10.0, 10.0, 10.0]);
        assert_eq!(span.room(&free, 0).map(|r| r.nic_bps), Some(6e9));
        free[1].nic_bps = 3e9;
        assert_eq!(span.room(&free, 0), None);
        assert_eq!(span.room(&free, 1).map(|r| r.nic_bps), Some(3e9));
    }
}
