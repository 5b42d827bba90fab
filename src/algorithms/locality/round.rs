//! The LP-rounding inner solver of LOC-SUB: structured rounding of the LP
//! point with one choice group per slot, parameter servers derived from the
//! rounded workers, and repair with the model's moves, all through the
//! generic packing–covering module ([`crate::pcip`]).
//!
//! * **Choice groups.** Per slot `t` one group: the members `u_{h,t}`
//!   (LOCAL on `h`, dependent `y^L_{h,t}`) and `v_t` (DISTRIBUTED,
//!   dependents `y^D_{h,t}` for every `h`). The group's packing row is the
//!   slot's `Σ_h u + v ≤ 1`. A chosen member's dependents are rounded from
//!   `λ·x*_dep/x*_member`, clamped to their bounds.
//! * **Derivation** ([`Derive`]). PS counts `z^D` are not rounded: in a
//!   DISTRIBUTED slot with `Σ_h y^D ≥ 1` the rounded workers need
//!   `zreq = ⌈b·Σ y^D / B⌉` PSs, placed greedily by ascending `σ^D` (ties to
//!   the lower machine) on machines with room left after the workers; a
//!   DISTRIBUTED slot without workers becomes IDLE.
//! * **Repair moves** ([`MoveSource`]), each a list of `(column, change)`:
//!   shrink (capacity and worker cap): remove one worker (LOCAL: closing the
//!   slot when it was the last one; DISTRIBUTED: dropping the PSs `zreq` no
//!   longer needs, and the slot's flag with its last worker); grow
//!   (covering): one more worker in a LOCAL slot, one more DISTRIBUTED
//!   worker with a PS when `zreq` grows, opening an IDLE slot as LOCAL or
//!   DISTRIBUTED (one worker and one PS), switching a DISTRIBUTED slot to
//!   LOCAL on a machine that holds all its workers; prune: the shrink
//!   removals plus dropping a PS `zreq` does not need. The driver
//!   ([`repair_with`]) ranks them, never applies one that breaks a packing
//!   or linking row, and re-checks the result.
//! * **Whole-slot switches.** Slots share only the covering row, so each
//!   slot has a fixed list of *efficient configurations*, computed once
//!   per deadline: IDLE, LOCAL on each machine with `1..=Ȳ^L` workers, and
//!   for each `k ≤ N` the cheapest DISTRIBUTED placement of `k` workers
//!   with `zreq(k)` PSs (a dynamic programme over the machines, exact for
//!   the slot, skipped when it would take more than 2¹⁹ steps: machines ×
//!   PS counts × PS totals × worker totals), keeping only those no other
//!   beats on both work and cost. A switch sets all of a slot's columns to
//!   one of them at once, so it moves workers and PSs between machines and
//!   between LOCAL and DISTRIBUTED, which single-worker moves cannot: a
//!   draw that lands LOCAL on a machine with too little room, or puts the
//!   PSs where the workers should go, is stuck without it. Per slot the
//!   repair is offered, in shrink, the cheapest configuration with at
//!   least the slot's work and the one with the most work below it; in
//!   grow, the one with more work minimising `Δcost / min(Δwork,
//!   deficit)`; in prune, the cheapest one that keeps the workload
//!   covered, when it is cheaper.
//!
//! Every draw `k` has its own random stream,
//! `ChaCha8Rng::seed_from_u64(splitmix64(seed ⊕ job·K1 ⊕ t̂·K2 ⊕ k))` with
//! the odd constants [`SEED_K1`] and [`SEED_K2`] ([`draw_seed`]).

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::exact::Shortcut;
use crate::online::{PriceView, Reservation};
use crate::pcip::{
    ChoiceGroup, Derive, Move, MoveSource, PcError, PcProblem, RepairOptions, RepairReport,
    Structure, evaluate, repair_with, round_structured,
};

use super::model::{LocalityJob, RESOURCES, Vector};
use super::plan::LocalityPlan;
use super::sub::{CellData, Cells, ColumnKind, LocSub};

mod fast;

/// Default number of draws per deadline.
pub const DEFAULT_DRAWS: u32 = 8;
/// Default scalings `λ_k` of the draws (draw `k` uses `lambdas[k mod 8]`).
pub const DEFAULT_LAMBDAS: [f64; 8] = [1.0, 1.0, 1.1, 1.1, 1.2, 1.2, 1.3, 1.3];
/// Odd multiplier of the job index in [`draw_seed`] (`⌊2⁶⁴/φ⌋`, odd).
pub const SEED_K1: u64 = 0x9E37_79B9_7F4A_7C15;
/// Odd multiplier of the deadline in [`draw_seed`].
pub const SEED_K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
/// Most steps (machines × PS counts × PS totals × worker totals) the
/// placement programme of one slot may take; a wider slot (many workers
/// that each need a PS) gets no DISTRIBUTED configurations to switch to and
/// keeps the single-worker moves.
const PLACEMENT_BUDGET: u64 = 1 << 19;
/// Feasibility tolerance of the repair and the final check.
const FEAS_TOL: f64 = 1e-9;

/// The choice group of one (job, slot): one member per LOCAL machine (its
/// selector `u` with its worker column `y` as dependent) and the
/// DISTRIBUTED selector `v` with the slot's DISTRIBUTED worker columns.
pub(crate) fn slot_choice_group(
    local: impl IntoIterator<Item = (usize, usize)>,
    v: Option<usize>,
    dist_workers: impl IntoIterator<Item = usize>,
) -> ChoiceGroup {
    let mut g = ChoiceGroup::new();
    for (u, y) in local {
        g = g.member(u, &[y]);
    }
    if let Some(v) = v {
        let ys: Vec<usize> = dist_workers.into_iter().collect();
        g = g.member(v, &ys);
    }
    g
}

/// The splitmix64 finaliser: a bijective mix of a 64-bit word.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of draw `k` of the job at position `job_index` (arrival order)
/// at deadline `deadline`:
/// `splitmix64(run_seed ⊕ job_index·K1 ⊕ deadline·K2 ⊕ k)` (wrapping
/// products).
pub fn draw_seed(run_seed: u64, job_index: u64, deadline: u32, k: u32) -> u64 {
    splitmix64(
        run_seed
            ^ job_index.wrapping_mul(SEED_K1)
            ^ u64::from(deadline).wrapping_mul(SEED_K2)
            ^ u64::from(k),
    )
}

/// The columns of one slot of LOC-SUB.
#[derive(Debug, Clone, Default)]
struct Slot {
    /// Position of the slot in the job's [`Cells`].
    pos: usize,
    /// `(h, u_{h,t}, y^L_{h,t})` of the LOCAL-capable machines.
    local: Vec<(usize, usize, usize)>,
    /// `v_t`.
    v: Option<usize>,
    /// `(h, y^D_{h,t}, z^D_{h,t})` of every machine with either column.
    dist: Vec<(usize, Option<usize>, Option<usize>)>,
    /// The slot's efficient configurations ([`LocRounding::front`]).
    front: Vec<Config>,
}

/// A whole configuration of one slot: IDLE, LOCAL on one machine with `k`
/// workers, or DISTRIBUTED with `k` workers and `zreq(k)` PSs, each
/// feasible for the slot's rows on its own.
#[derive(Debug, Clone, Default, PartialEq)]
struct Config {
    /// Work, mini-batches.
    work: f64,
    /// Cost (the objective's coefficients).
    cost: f64,
    /// The slot's columns with a non-zero value, and their values.
    cols: Vec<(usize, u32)>,
}

/// LOC-SUB at one deadline as the rounding sees it: its choice groups,
/// derivation and repair moves.
#[derive(Debug)]
pub struct LocRounding<'a> {
    job: &'a LocalityJob,
    cells: &'a Cells,
    sub: &'a LocSub,
    slots: Vec<Slot>,
    /// Whether the PS choice may take its shortcut (module `fast`).
    shortcut: Shortcut,
}

/// Value of column `j` at `x`, rounded to an integer count.
fn at(x: &[f64], j: usize) -> u32 {
    x.get(j).map_or(0.0, |v| v.round().max(0.0)) as u32
}

/// What a rounded point became.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The repaired plan.
    pub(crate) plan: LocalityPlan,
    /// What the repair did.
    pub(crate) repair: RepairReport,
}

impl<'a> LocRounding<'a> {
    /// The rounding view of `sub`, built from `job`'s `cells`.
    pub fn new(job: &'a LocalityJob, cells: &'a Cells, sub: &'a LocSub) -> Self {
        let mut slots = Vec::new();
        for (pos, row) in cells.cells.iter().enumerate() {
            let t = cells.first + pos as u32;
            if t > sub.deadline {
                break;
            }
            let col = |k, h: usize| sub.index.get(k, Some(h as u32), t);
            let mut s = Slot {
                pos,
                v: sub.index.get(ColumnKind::Distributed, None, t),
                ..Slot::default()
            };
            for h in 0..row.len() {
                if let (Some(u), Some(y)) =
                    (col(ColumnKind::Local, h), col(ColumnKind::LocalWorkers, h))
                {
                    s.local.push((h, u, y));
                }
                let (y, z) = (col(ColumnKind::DistWorkers, h), col(ColumnKind::DistPs, h));
                if y.is_some() || z.is_some() {
                    s.dist.push((h, y, z));
                }
            }
            slots.push(s);
        }
        let mut out = LocRounding {
            job,
            cells,
            sub,
            slots,
            shortcut: Shortcut::Allowed,
        };
        for k in 0..out.slots.len() {
            let front = out.front(&out.slots[k]);
            out.slots[k].front = front;
        }
        out
    }

    /// The model with its PS choice's shortcut switched by `shortcut`.
    pub(crate) fn with_shortcut(mut self, shortcut: Shortcut) -> Self {
        self.shortcut = shortcut;
        self
    }

    /// The choice groups: per slot with a member, `{u_{h,t}}_h ∪ {v_t}`
    /// with dependents `y^L_{h,t}` of `u_{h,t}` and `{y^D_{h,t}}_h` of
    /// `v_t`.
    ///
    /// # Errors
    ///
    /// [`PcError::InvalidGroup`] when a group is not packed by the
    /// program (a bug of its construction).
    pub fn structure(&self) -> Result<Structure, PcError> {
        let groups = self
            .slots
            .iter()
            .filter(|s| !s.local.is_empty() || s.v.is_some())
            .map(|s| {
                let local = s.local.iter().map(|&(_, u, y)| (u, y));
                slot_choice_group(local, s.v, s.dist.iter().filter_map(|d| d.1))
            })
            .collect();
        Structure::new(&self.sub.problem, groups)
    }

    fn cell(&self, s: &Slot, h: usize) -> &CellData {
        &self.cells.cells[s.pos][h]
    }

    /// Usage of machine `h` in slot `s` at `x`, ledger units.
    fn used(&self, s: &Slot, x: &[f64], h: usize) -> Vector {
        let (wl, sl) = (self.job.worker_local(), self.job.ps_local());
        let mut out = [0.0; RESOURCES];
        let mut add = |n: u32, d: &Vector| {
            for r in 0..RESOURCES {
                out[r] += f64::from(n) * d[r];
            }
        };
        // Both lists are sorted by machine (built in machine order).
        if let Ok(k) = s.local.binary_search_by_key(&h, |l| l.0) {
            let (_, u, y) = s.local[k];
            add(at(x, u), &sl);
            add(at(x, y), &wl);
        }
        if let Ok(k) = s.dist.binary_search_by_key(&h, |d| d.0) {
            let (_, y, z) = s.dist[k];
            add(y.map_or(0, |j| at(x, j)), &self.job.worker);
            add(z.map_or(0, |j| at(x, j)), &self.job.ps);
        }
        out
    }

    /// How many more units of `d` fit on `h` in `s` at `x` beside `extra`.
    fn room(&self, s: &Slot, x: &[f64], h: usize, extra: &Vector, d: &Vector) -> u32 {
        let used = self.used(s, x, h);
        let res = self.cell(s, h).residual;
        let mut n = u32::MAX as f64;
        for r in 0..RESOURCES {
            if d[r] > 0.0 {
                let left = res[r] - used[r] - extra[r] + FEAS_TOL * res[r].max(1.0);
                n = n.min((left / d[r]).floor());
            }
        }
        if n <= 0.0 { 0 } else { n as u32 }
    }

    /// The cheapest machine (by `σ^D`, ties to the lower index) that can
    /// take one more DISTRIBUTED PS in `s` at `x`, with one more worker on
    /// `worker_on` when given.
    fn ps_slot(&self, s: &Slot, x: &[f64], worker_on: Option<usize>) -> Option<usize> {
        let zsum: u32 = s.dist.iter().filter_map(|d| d.2).map(|j| at(x, j)).sum();
        if zsum >= self.job.max_ps {
            return None;
        }
        let mut best: Option<(f64, usize)> = None;
        for &(h, _, z) in &s.dist {
            let Some(z) = z else { continue };
            let extra = if worker_on == Some(h) {
                self.job.worker
            } else {
                [0.0; RESOURCES]
            };
            let fits = at(x, z) < self.cell(s, h).zbar_dist
                && self.room(s, x, h, &extra, &self.job.ps) >= 1;
            let price = self.cell(s, h).sigma_dist;
            if fits && best.is_none_or(|(p, _)| price < p) {
                best = Some((price, z));
            }
        }
        best.map(|b| b.1)
    }

    /// Workers and PSs of the DISTRIBUTED part of `s` at `x`.
    fn dist_counts(&self, s: &Slot, x: &[f64]) -> (u32, u32) {
        let y = s.dist.iter().filter_map(|d| d.1).map(|j| at(x, j)).sum();
        let z = s.dist.iter().filter_map(|d| d.2).map(|j| at(x, j)).sum();
        (y, z)
    }

    /// Drops `n` PSs of `s` from the dearest machines (by `σ^D`, ties to
    /// the higher index) into `deltas`.
    fn drop_ps(&self, s: &Slot, x: &[f64], mut n: u32, deltas: &mut Vec<(usize, f64)>) {
        let mut zs: Vec<(f64, usize, usize)> = s
            .dist
            .iter()
            .filter_map(|&(h, _, z)| z.map(|z| (self.cell(s, h).sigma_dist, h, z)))
            .filter(|&(_, _, z)| at(x, z) > 0)
            .collect();
        zs.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        for (_, _, z) in zs {
            if n == 0 {
                break;
            }
            let k = at(x, z).min(n);
            deltas.push((z, -f64::from(k)));
            n -= k;
        }
    }

    /// Single-worker removals of `s` at `x` (LOCAL: closing the slot with
    /// its last worker; DISTRIBUTED: dropping the PSs `zreq` no longer
    /// needs, and the flag with the last worker).
    fn removals(&self, s: &Slot, x: &[f64], out: &mut Vec<Move>) {
        for &(_, u, y) in &s.local {
            match at(x, y) {
                0 => {}
                1 if at(x, u) == 1 => out.push(Move::new(vec![(y, -1.0), (u, -1.0)])),
                _ => out.push(Move::unit(y, -1.0)),
            }
        }
        let (ys, zs) = self.dist_counts(s, x);
        for &(_, y, _) in &s.dist {
            let Some(y) = y.filter(|&y| at(x, y) > 0) else {
                continue;
            };
            let mut deltas = vec![(y, -1.0)];
            let left = ys - 1;
            let keep = if left == 0 { 0 } else { self.job.zreq(left) };
            if zs > keep {
                self.drop_ps(s, x, zs - keep, &mut deltas);
            }
            if left == 0
                && let Some(v) = s.v.filter(|&v| at(x, v) == 1)
            {
                deltas.push((v, -1.0));
            }
            out.push(Move::new(deltas));
        }
    }

    /// Grow moves of one slot (see the module documentation).
    fn grows(&self, s: &Slot, x: &[f64], out: &mut Vec<Move>) {
        let local_on = s.local.iter().find(|l| at(x, l.1) == 1);
        let dist_on = s.v.is_some_and(|v| at(x, v) == 1);
        if let Some(&(_, _, y)) = local_on {
            out.push(Move::unit(y, 1.0));
            return;
        }
        let (ys, zs) = self.dist_counts(s, x);
        // The PS machine beside one more worker on `h`: `ps_slot`, or its
        // fast path (module `fast`), computed once per slot.
        let choice = std::cell::OnceCell::new();
        let ps_beside = |h: usize| {
            if !self.shortcut.taken() {
                return self.ps_slot(s, x, Some(h));
            }
            let fast = choice
                .get_or_init(|| fast::PsChoice::new(self, s, x))
                .as_ref()
                .and_then(|c| c.with_worker_on(self, s, x, h));
            if self.shortcut == Shortcut::Checked {
                let rule = self.ps_slot(s, x, Some(h));
                assert_eq!(fast, rule, "PS choice of slot {}, machine {h}", s.pos);
            }
            fast
        };
        if dist_on {
            for &(h, y, _) in &s.dist {
                let Some(y) = y else { continue };
                let mut deltas = vec![(y, 1.0)];
                if self.job.zreq(ys + 1) > zs {
                    match ps_beside(h) {
                        Some(z) => deltas.push((z, 1.0)),
                        None => continue,
                    }
                }
                out.push(Move::new(deltas));
            }
            self.switches(s, x, ys, out);
            return;
        }
        if ys > 0 {
            return; // workers without their flag: left to the generic phases
        }
        for &(_, u, y) in &s.local {
            out.push(Move::new(vec![(u, 1.0), (y, 1.0)]));
        }
        if let Some(v) = s.v {
            for &(h, y, _) in &s.dist {
                let Some(y) = y else { continue };
                if let Some(z) = ps_beside(h) {
                    out.push(Move::new(vec![(v, 1.0), (y, 1.0), (z, 1.0)]));
                }
            }
        }
    }

    /// Switches of a DISTRIBUTED slot with `ys` workers to LOCAL on a
    /// machine that holds them all plus one PS.
    fn switches(&self, s: &Slot, x: &[f64], ys: u32, out: &mut Vec<Move>) {
        let Some(v) = s.v else { return };
        if ys == 0 {
            return;
        }
        // The DISTRIBUTED columns each switch empties (the same for every
        // machine switched to).
        let mut empty = Vec::new();
        for &(_, yd, zd) in &s.dist {
            for j in [yd, zd].into_iter().flatten() {
                if at(x, j) > 0 {
                    empty.push((j, -f64::from(at(x, j))));
                }
            }
        }
        for &(h, u, y) in &s.local {
            if ys > self.cell(s, h).ybar_local {
                continue;
            }
            let mut deltas = vec![(v, -1.0), (u, 1.0), (y, f64::from(ys))];
            deltas.extend_from_slice(&empty);
            out.push(Move::new(deltas));
        }
    }

    /// Rounds `lp_x` with scaling `lambda` and the stream of `rng`,
    /// derives the PSs, repairs with the model's moves, and checks the
    /// result: the plan, or `None` when repair fails or the point decodes
    /// to no plan that covers the workload.
    ///
    /// # Errors
    ///
    /// Rounding errors for a point or `λ` the rounding rejects (wrong
    /// length, a non-finite entry, `λ` negative or not finite); other
    /// repair errors than a failed repair.
    pub fn draw(
        &self,
        structure: &Structure,
        lp_x: &[f64],
        lambda: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Option<Drawn>, PcError> {
        let mut x = round_structured(&self.sub.problem, structure, lp_x, lambda, rng)?;
        self.derive(&self.sub.problem, &mut x);
        self.finish(x)
    }

    /// The price-aware greedy: the grow and prune phases from the all-IDLE
    /// point.
    ///
    /// # Errors
    ///
    /// As [`draw`](Self::draw).
    pub fn greedy(&self) -> Result<Option<Drawn>, PcError> {
        self.finish(vec![0.0; self.sub.problem.n_vars()])
    }

    /// Repair, check, decode.
    fn finish(&self, mut x: Vec<f64>) -> Result<Option<Drawn>, PcError> {
        let p = &self.sub.problem;
        let opts = RepairOptions {
            feas_tol: FEAS_TOL,
            ..RepairOptions::default()
        };
        let repair = match repair_with(p, &mut x, &opts, self) {
            Ok(r) => r,
            Err(PcError::RepairFailed(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        if !evaluate(p, &x, FEAS_TOL).is_feasible() {
            return Ok(None);
        }
        let slots = self.sub.decode(self.job, &x);
        let plan = LocalityPlan {
            job: self.job.id,
            slots,
            worker: self.job.worker,
            ps: self.job.ps,
        };
        let covers = plan.work() >= self.job.minibatches * (1.0 - 1e-9);
        Ok((covers && !plan.slots.is_empty()).then_some(Drawn { plan, repair }))
    }
}

/// Whole-slot reconfiguration: the efficient configurations of a slot and
/// the moves that switch a slot to one of them.
impl LocRounding<'_> {
    /// Workers of demand `w` that fit on `h` in `s` beside `b` PSs (at most
    /// `cap`), or `None` when the `b` PSs alone do not fit.
    fn beside(&self, s: &Slot, h: usize, b: u32, cap: u32) -> Option<u32> {
        let res = self.cell(s, h).residual;
        let (w, ps) = (&self.job.worker, &self.job.ps);
        let mut n = f64::from(cap);
        for r in 0..RESOURCES {
            let left = res[r] - f64::from(b) * ps[r] + FEAS_TOL * res[r].max(1.0);
            if left < 0.0 {
                return None;
            }
            if w[r] > 0.0 {
                n = n.min((left / w[r]).floor());
            }
        }
        Some(n.max(0.0) as u32)
    }

    /// The slot's efficient configurations, by increasing work: IDLE, then
    /// every configuration no other beats on both work and cost (LOCAL on
    /// each machine with `1..=Ȳ^L` workers, the cheapest DISTRIBUTED
    /// placement of `k` workers and `zreq(k)` PSs for each `k`), keeping
    /// for equal work the cheapest (ties to the earlier: LOCAL by machine,
    /// then DISTRIBUTED).
    fn front(&self, s: &Slot) -> Vec<Config> {
        let mut all = vec![Config::default()];
        for &(h, u, y) in &s.local {
            let c = self.cell(s, h);
            for k in 1..=c.ybar_local.min(self.job.max_workers) {
                all.push(Config {
                    work: f64::from(k) * self.job.rate_local[h],
                    cost: c.sigma_local + f64::from(k) * c.pi_local,
                    cols: vec![(u, 1), (y, k)],
                });
            }
        }
        all.extend(self.dist_configs(s));
        // Stable: equal keys keep the order above.
        all.sort_by(|a, b| b.work.total_cmp(&a.work).then(a.cost.total_cmp(&b.cost)));
        let mut front: Vec<Config> = Vec::new();
        for c in all {
            if front.last().is_none_or(|f| c.cost < f.cost) {
                front.push(c);
            }
        }
        front.reverse();
        front
    }

    /// For each `k = 1..=N` with `zreq(k) ≤ max_ps`, the cheapest
    /// DISTRIBUTED configuration of `s` with `k` workers and `zreq(k)` PSs
    /// that fits every machine, if any: a dynamic programme over the
    /// machines on (workers, PSs) placed so far, exact for the slot; none
    /// beyond [`PLACEMENT_BUDGET`] steps.
    fn dist_configs(&self, s: &Slot) -> Vec<Config> {
        let Some(v) = s.v else { return Vec::new() };
        let n = self.job.max_workers;
        let zmax = self.job.zreq(n).min(self.job.max_ps);
        let steps: u64 = s
            .dist
            .iter()
            .map(|&(h, _, zc)| u64::from(zc.map_or(0, |_| self.cell(s, h).zbar_dist.min(zmax)) + 1))
            .sum::<u64>()
            * u64::from(zmax + 1)
            * u64::from(n + 1);
        if steps > PLACEMENT_BUDGET {
            return Vec::new();
        }
        let stride = zmax as usize + 1;
        let at_yz = |y: u32, z: u32| y as usize * stride + z as usize;
        let mut cost = vec![f64::INFINITY; (n as usize + 1) * stride];
        cost[0] = 0.0;
        let mut picks: Vec<Vec<(u32, u32)>> = Vec::with_capacity(s.dist.len());
        // Workers and PSs the machines so far can hold (no state beyond).
        let (mut yreach, mut zreach) = (0, 0);
        for &(h, yc, zc) in &s.dist {
            let c = self.cell(s, h);
            let ybar = yc.map_or(0, |_| c.ybar_dist.min(n));
            let zbar = zc.map_or(0, |_| c.zbar_dist.min(zmax));
            let mut next = vec![f64::INFINITY; cost.len()];
            let mut pick = vec![(0, 0); cost.len()];
            for b in 0..=zbar {
                let Some(ymax) = self.beside(s, h, b, ybar) else {
                    break;
                };
                for z in 0..=(zmax - b).min(zreach) {
                    let step = (c.pi_dist, c.sigma_dist * f64::from(b));
                    let col = |y: u32| cost[at_yz(y, z)];
                    let top = (yreach + ymax).min(n);
                    window_min(top, ymax, step, col, |y, a, value| {
                        let k = at_yz(y, z + b);
                        if value < next[k] {
                            next[k] = value;
                            pick[k] = (a, b);
                        }
                    });
                }
            }
            (yreach, zreach) = ((yreach + ybar).min(n), (zreach + zbar).min(zmax));
            cost = next;
            picks.push(pick);
        }
        let mut out = Vec::new();
        for k in 1..=n {
            let zk = self.job.zreq(k);
            if zk > zmax || !cost[at_yz(k, zk)].is_finite() {
                continue;
            }
            let mut cols = vec![(v, 1)];
            let (mut y, mut z) = (k, zk);
            for (m, &(_, yc, zc)) in s.dist.iter().enumerate().rev() {
                let (a, b) = picks[m][at_yz(y, z)];
                cols.extend(yc.filter(|_| a > 0).map(|j| (j, a)));
                cols.extend(zc.filter(|_| b > 0).map(|j| (j, b)));
                (y, z) = (y - a, z - b);
            }
            out.push(Config {
                work: f64::from(k) * self.job.rate_dist,
                cost: cost[at_yz(k, zk)],
                cols,
            });
        }
        out
    }

    /// Work (mini-batches) and cost of slot `s` at `x`.
    fn slot_state(&self, s: &Slot, x: &[f64]) -> (f64, f64) {
        let obj = self.sub.problem.objective();
        let mut work = 0.0;
        let mut cost = 0.0;
        for &(h, u, y) in &s.local {
            work += x[y] * self.job.rate_local[h];
            cost += obj[u] * x[u] + obj[y] * x[y];
        }
        for &(_, y, z) in &s.dist {
            if let Some(y) = y {
                work += x[y] * self.job.rate_dist;
                cost += obj[y] * x[y];
            }
            if let Some(z) = z {
                cost += obj[z] * x[z];
            }
        }
        (work, cost)
    }

    /// The move that sets slot `s` to `c` at `x` (`None`: already there).
    fn switch_to(&self, s: &Slot, x: &[f64], c: &Config) -> Option<Move> {
        let locals = s.local.iter().flat_map(|l| [Some(l.1), Some(l.2)]);
        let dists = s.dist.iter().flat_map(|d| [d.1, d.2]);
        let deltas: Vec<(usize, f64)> = locals
            .chain(dists)
            .chain([s.v])
            .flatten()
            .filter_map(|j| {
                let to = c.cols.iter().find(|e| e.0 == j).map_or(0, |e| e.1);
                let d = f64::from(to) - x[j];
                (d != 0.0).then_some((j, d))
            })
            .collect();
        (!deltas.is_empty()).then(|| Move::new(deltas))
    }

    /// Total work of `x`, mini-batches.
    fn work(&self, x: &[f64]) -> f64 {
        self.slots.iter().map(|s| self.slot_state(s, x).0).sum()
    }

    /// Shrink: per slot, a switch to the cheapest configuration with at
    /// least its work and one to the configuration with the most work
    /// below it (the driver keeps those that relieve a violated row).
    fn reconfigure_shrink(&self, s: &Slot, x: &[f64], out: &mut Vec<Move>) {
        let (work, _) = self.slot_state(s, x);
        let up = s.front.iter().find(|c| c.work >= work);
        let down = s.front.iter().rev().find(|c| c.work < work);
        out.extend(
            [up, down]
                .into_iter()
                .flatten()
                .filter_map(|c| self.switch_to(s, x, c)),
        );
    }

    /// Grow: per slot, the switch to a configuration with more work that
    /// minimises `Δcost / min(Δwork, deficit)` (ties to less work).
    fn reconfigure_grow(&self, s: &Slot, x: &[f64], deficit: f64, out: &mut Vec<Move>) {
        let (work, cost) = self.slot_state(s, x);
        let mut best: Option<(f64, &Config)> = None;
        for c in s.front.iter().filter(|c| c.work > work) {
            let key = (c.cost - cost) / (c.work - work).min(deficit);
            if best.is_none_or(|b| key < b.0) {
                best = Some((key, c));
            }
        }
        out.extend(best.and_then(|b| self.switch_to(s, x, b.1)));
    }

    /// Prune: per slot, the switch to the cheapest configuration that
    /// keeps the workload covered (`surplus` is the work above `Q`), when
    /// it is cheaper than the slot now.
    fn reconfigure_prune(&self, s: &Slot, x: &[f64], surplus: f64, out: &mut Vec<Move>) {
        let (work, cost) = self.slot_state(s, x);
        let floor = work - surplus + 1e-9 * self.job.minibatches.max(1.0);
        let cheapest = s.front.iter().find(|c| c.work >= floor);
        out.extend(
            cheapest
                .filter(|c| c.cost < cost)
                .and_then(|c| self.switch_to(s, x, c)),
        );
    }
}

/// For `y = 0..=n`, the cheapest way to reach `y` workers by adding
/// `a ≤ amax` workers at `step.0` each (plus `step.1` once) to a state of
/// `y − a` workers that costs `col(y − a)`: `emit(y, a, cost)` for every
/// `y` with a finite cost. A sliding-window minimum of
/// `col(y') − step.0·y'`, `O(n)`; ties to the larger `a`.
fn window_min(
    n: u32,
    amax: u32,
    step: (f64, f64),
    col: impl Fn(u32) -> f64,
    mut emit: impl FnMut(u32, u32, f64),
) {
    let g = |y: u32| col(y) - step.0 * f64::from(y);
    let mut deque = std::collections::VecDeque::with_capacity(n as usize + 1);
    for y in 0..=n {
        let gy = g(y);
        while deque.back().is_some_and(|&b| g(b) > gy) {
            deque.pop_back();
        }
        deque.push_back(y);
        while deque.front().is_some_and(|&f| f + amax < y) {
            deque.pop_front();
        }
        if let Some(&f) = deque.front()
            && col(f).is_finite()
        {
            emit(y, y - f, col(f) + step.0 * f64::from(y - f) + step.1);
        }
    }
}

impl Derive for LocRounding<'_> {
    /// Per DISTRIBUTED slot: no workers ⇒ IDLE (flag and PSs 0); otherwise
    /// `zreq` PSs placed greedily by ascending `σ^D` (ties to the lower
    /// machine) on machines with room after the workers, at most `Z̄^D`
    /// each and `max_ps` in all. PS columns of other slots become 0.
    fn derive(&self, _: &PcProblem, x: &mut [f64]) {
        for s in &self.slots {
            for z in s.dist.iter().filter_map(|d| d.2) {
                x[z] = 0.0;
            }
            let Some(v) = s.v else { continue };
            let (ys, _) = self.dist_counts(s, x);
            if at(x, v) != 1 || ys == 0 {
                x[v] = 0.0;
                continue;
            }
            let mut need = self.job.zreq(ys).min(self.job.max_ps);
            let mut order: Vec<(f64, usize, usize)> = s
                .dist
                .iter()
                .filter_map(|&(h, _, z)| z.map(|z| (self.cell(s, h).sigma_dist, h, z)))
                .collect();
            order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (_, h, z) in order {
                if need == 0 {
                    break;
                }
                let fit = self
                    .room(s, x, h, &[0.0; RESOURCES], &self.job.ps)
                    .min(self.cell(s, h).zbar_dist);
                let k = fit.min(need);
                x[z] = f64::from(k);
                need -= k;
            }
        }
    }
}

impl MoveSource for LocRounding<'_> {
    fn shrink_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        for s in &self.slots {
            self.removals(s, x, out);
            self.reconfigure_shrink(s, x, out);
        }
    }

    fn grow_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let deficit = self.job.minibatches - self.work(x);
        for s in &self.slots {
            self.grows(s, x, out);
            if deficit > 0.0 {
                self.reconfigure_grow(s, x, deficit, out);
            }
        }
    }

    fn prune_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let surplus = self.work(x) - self.job.minibatches;
        for s in &self.slots {
            self.removals(s, x, out);
            let (ys, zs) = self.dist_counts(s, x);
            let keep = if ys == 0 { 0 } else { self.job.zreq(ys) };
            if zs > keep {
                let mut deltas = Vec::new();
                self.drop_ps(s, x, 1, &mut deltas);
                out.push(Move::new(deltas));
            }
            if surplus >= 0.0 {
                self.reconfigure_prune(s, x, surplus, out);
            }
        }
    }
}

/// What the draws at one deadline did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DrawCounts {
    /// Draws run.
    pub(crate) draws: u32,
    /// Draws that ended with a plan passing the checker.
    pub(crate) plans: u32,
    /// Draws whose repair needed covering (grow) moves.
    pub(crate) covering_repairs: u32,
    /// Whether the greedy fallback ran (every draw failed).
    pub(crate) fallback: bool,
    /// Whether the fallback found a plan.
    pub(crate) fallback_plan: bool,
}

/// Runs `draws` draws at one deadline (draw `k` with `lambdas[k mod len]`
/// and the stream of `seed_of(k)`) and keeps the cheapest plan at the
/// prices of `view` (ties to the earlier draw); the greedy fallback when no
/// draw gives a plan.
///
/// # Errors
///
/// As [`LocRounding::draw`]; [`PcError::InvalidGroup`] from
/// [`LocRounding::structure`].
pub fn round_deadline(
    model: &LocRounding<'_>,
    view: &PriceView<'_>,
    lp_x: &[f64],
    draws: u32,
    lambdas: &[f64],
    seed_of: impl Fn(u32) -> u64,
) -> Result<(Option<(LocalityPlan, f64)>, DrawCounts), PcError> {
    let structure = model.structure()?;
    let mut counts = DrawCounts::default();
    let mut best: Option<(LocalityPlan, f64)> = None;
    let keep = |d: Drawn, best: &mut Option<(LocalityPlan, f64)>| {
        let cost = view.cost_of(d.plan.consumption());
        if best.as_ref().is_none_or(|b| cost < b.1) {
            *best = Some((d.plan, cost));
        }
    };
    for k in 0..draws {
        let lambda = lambdas[k as usize % lambdas.len().max(1)];
        let mut rng = ChaCha8Rng::seed_from_u64(seed_of(k));
        counts.draws += 1;
        if let Some(d) = model.draw(&structure, lp_x, lambda, &mut rng)? {
            counts.plans += 1;
            counts.covering_repairs += u32::from(d.repair.grow_moves > 0);
            keep(d, &mut best);
        }
    }
    if best.is_none() {
        counts.fallback = true;
        if let Some(d) = model.greedy()? {
            counts.fallback_plan = true;
            keep(d, &mut best);
        }
    }
    Ok((best, counts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::locality::model::tests_support::l1;
    use crate::algorithms::locality::sub::{self, ColumnKind};
    use crate::model::Hosting;

    #[test]
    fn window_min_matches_brute_force() {
        let costs = [0.0, f64::INFINITY, 3.0, 2.5, f64::INFINITY, 7.0, 1.0];
        let n = costs.len() as u32 - 1;
        for amax in 0..=n {
            let mut got = Vec::new();
            window_min(
                n,
                amax,
                (1.5, 0.25),
                |y| costs[y as usize],
                |y, a, c| got.push((y, a, c)),
            );
            let mut want = Vec::new();
            for y in 0..=n {
                let best = (0..=amax.min(y))
                    .map(|a| (costs[(y - a) as usize] + 1.5 * f64::from(a) + 0.25, a))
                    .filter(|p| p.0.is_finite())
                    .min_by(|p, q| p.0.total_cmp(&q.0).then(q.1.cmp(&p.1)));
                want.extend(best.map(|(c, a)| (y, a, c)));
            }
            assert_eq!(got, want, "amax {amax}");
        }
    }

    /// The hand set-up (worker `[1, 2, 8, 0, 1]` at 12 per unit price, PS
    /// `[0, 2, 8, 0, 4]` at 14, `zreq(k) = 1` for `k ≤ 4`) with unit price
    /// 1 on machine 0 and 1.1 on machine 1, two free GPUs on each and 5
    /// Gbit/s of NIC on machine 0: two workers and a PS do not fit there
    /// together, so the cheapest placements are `k = 1`: worker and PS on
    /// 0 (26); `k = 2`: one more worker on 1 (39.2, not 2 workers on 0 and
    /// the PS on 1: 39.4); `k = 3`: two on 1 (52.4, not 52.6); `k = 4`:
    /// two and two, the PS on 1 (65.8).
    #[test]
    fn distributed_configurations_are_the_cheapest_placements() {
        let (cl, job) = l1(Hosting::Both);
        let view = PriceView::from_explicit(
            2,
            RESOURCES,
            4,
            |m, _, _| if m.0 == 0 { 1.0 } else { 1.1 },
            |m, r, _| [2.0, 16.0, 64.0, 0.0, if m.0 == 0 { 5.0 } else { 10.0 }][r.0 as usize],
        );
        let cells = sub::cells(&job, &cl, &view);
        let s = sub::build(&job, &cells, 0).unwrap().unwrap();
        let model = LocRounding::new(&job, &cells, &s);
        let col = |k, h| s.index.get(k, Some(h), 0).unwrap();
        let (y0, z0) = (col(ColumnKind::DistWorkers, 0), col(ColumnKind::DistPs, 0));
        let (y1, z1) = (col(ColumnKind::DistWorkers, 1), col(ColumnKind::DistPs, 1));
        let v = s.index.get(ColumnKind::Distributed, None, 0).unwrap();
        let got: Vec<(f64, Vec<(usize, u32)>)> = model
            .dist_configs(&model.slots[0])
            .into_iter()
            .map(|c| {
                let mut cols = c.cols;
                cols.sort();
                ((c.cost * 1e9).round() / 1e9, cols)
            })
            .collect();
        let sorted = |mut v: Vec<(usize, u32)>| {
            v.sort();
            v
        };
        assert_eq!(
            got,
            vec![
                (26.0, sorted(vec![(v, 1), (y0, 1), (z0, 1)])),
                (39.2, sorted(vec![(v, 1), (y0, 1), (z0, 1), (y1, 1)])),
                (52.4, sorted(vec![(v, 1), (y0, 1), (z0, 1), (y1, 2)])),
                (65.8, sorted(vec![(v, 1), (y0, 2), (y1, 2), (z1, 1)])),
            ]
        );
        // LOCAL (100 mini-batches per worker, 10 + 11k on machine 0, at
        // most two workers) beats every DISTRIBUTED configuration (40 per
        // worker): the front is IDLE, LOCAL(0, 1), LOCAL(0, 2).
        let front: Vec<(f64, f64)> = model.slots[0]
            .front
            .iter()
            .map(|c| (c.work, (c.cost * 1e9).round() / 1e9))
            .collect();
        assert_eq!(front, vec![(0.0, 0.0), (100.0, 21.0), (200.0, 32.0)]);
    }
}
