//! Rounding and repair of the joint program `P(T)` through the generic
//! packing–covering module: one choice group per (job, slot), PSs derived
//! from the rounded workers against the joint capacities, and the batch's
//! repair moves ([`MoveSource`]) run by the engine's driver
//! ([`repair_with`]), whose final check confirms every point.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::pcip::{
    Derive, Move, PcError, PcProblem, RepairOptions, RowClass, RowRef, Structure, evaluate,
    repair_with, round_structured,
};

use super::super::model::{LocalityCluster, LocalityJob, RESOURCES, Vector};
use super::super::plan::LocalityPlan;
use super::super::round::slot_choice_group;
use super::super::sub::ColumnKind;
use super::program::Joint;

/// Feasibility tolerance of the repair and the final check.
const FEAS_TOL: f64 = 1e-9;

/// How covering-repair moves are priced.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MoveCost<'w> {
    /// Normalised resource use `Σ_r demand^r/c_h^r` of the units added
    /// (makespan).
    Resource,
    /// `wt_i·t/Q_i` per unit of work added in slot `t` (1-based; the
    /// weighted proxy).
    Weighted(&'w [f64]),
}

/// The columns of one (job, slot).
#[derive(Debug, Clone, Default)]
struct JobSlot {
    /// The slot.
    t: u32,
    /// `(h, u, y^L)` of the LOCAL-capable machines.
    local: Vec<(usize, usize, usize)>,
    /// `v`.
    v: Option<usize>,
    /// `(h, y^D, z^D)` of every machine with either column.
    dist: Vec<(usize, Option<usize>, Option<usize>)>,
}

/// `P(T)` as the rounding sees it.
#[derive(Debug)]
pub(crate) struct BatchRounding<'a> {
    joint: &'a Joint,
    jobs: &'a [LocalityJob],
    cluster: &'a LocalityCluster,
    /// Per job, its slots with columns, ascending.
    slots: Vec<Vec<JobSlot>>,
    cost: MoveCost<'a>,
}

/// Value of column `j` at `x`, rounded to an integer count.
fn at(x: &[f64], j: usize) -> u32 {
    x.get(j).map_or(0.0, |v| v.round().max(0.0)) as u32
}

/// `v += n·d`.
fn add_to(v: &mut Vector, d: &Vector, n: f64) {
    for (a, b) in v.iter_mut().zip(d) {
        *a += n * b;
    }
}

/// Accumulated column changes of one move (each column once).
#[derive(Debug, Default)]
struct Deltas(BTreeMap<usize, f64>);

impl Deltas {
    fn add(&mut self, j: usize, d: f64) {
        *self.0.entry(j).or_insert(0.0) += d;
    }

    fn into_move(self) -> Move {
        Move::new(self.0.into_iter().filter(|e| e.1 != 0.0).collect())
    }
}

impl<'a> BatchRounding<'a> {
    /// The rounding view of `joint`.
    pub(crate) fn new(
        joint: &'a Joint,
        jobs: &'a [LocalityJob],
        cluster: &'a LocalityCluster,
        cost: MoveCost<'a>,
    ) -> Self {
        let slots = joint
            .blocks
            .iter()
            .map(|blk| {
                let mut out: Vec<JobSlot> = Vec::new();
                for t in 0..joint.slots {
                    let col =
                        |k, h: usize| blk.index.get(k, Some(h as u32), t).map(|j| j + blk.offset);
                    let mut s = JobSlot {
                        t,
                        v: blk
                            .index
                            .get(ColumnKind::Distributed, None, t)
                            .map(|j| j + blk.offset),
                        ..JobSlot::default()
                    };
                    for h in 0..cluster.machines() {
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
                    if !s.local.is_empty() || s.v.is_some() {
                        out.push(s);
                    }
                }
                out
            })
            .collect();
        BatchRounding {
            joint,
            jobs,
            cluster,
            slots,
            cost,
        }
    }

    fn problem(&self) -> &PcProblem {
        &self.joint.problem
    }

    /// The choice groups: per (job, slot), `{u_{i,h,t}}_h ∪ {v_{i,t}}`
    /// with dependents `y^L_{i,h,t}` of `u_{i,h,t}` and `{y^D_{i,h,t}}_h`
    /// of `v_{i,t}`.
    pub(crate) fn structure(&self) -> Result<Structure, PcError> {
        let groups = self
            .slots
            .iter()
            .flatten()
            .map(|s| {
                let local = s.local.iter().map(|&(_, u, y)| (u, y));
                slot_choice_group(local, s.v, s.dist.iter().filter_map(|d| d.1))
            })
            .collect();
        Structure::new(self.problem(), groups)
    }

    /// Usage of every machine in every slot at `x`: `[t][h]`.
    fn usage(&self, x: &[f64]) -> Vec<Vec<Vector>> {
        let mut out =
            vec![vec![[0.0; RESOURCES]; self.cluster.machines()]; self.joint.slots as usize];
        for (job, slots) in self.jobs.iter().zip(&self.slots) {
            let (wl, sl) = (job.worker_local(), job.ps_local());
            for s in slots {
                let row = &mut out[s.t as usize];
                let mut add = |h: usize, n: u32, d: &Vector| add_to(&mut row[h], d, f64::from(n));
                for &(h, u, y) in &s.local {
                    add(h, at(x, u), &sl);
                    add(h, at(x, y), &wl);
                }
                for &(h, y, z) in &s.dist {
                    add(h, y.map_or(0, |j| at(x, j)), &job.worker);
                    add(h, z.map_or(0, |j| at(x, j)), &job.ps);
                }
            }
        }
        out
    }

    /// How many more units of `d` fit on `h` beside `used` and `extra`.
    fn room(&self, h: usize, used: &Vector, extra: &Vector, d: &Vector) -> u32 {
        let cap = &self.cluster.capacity[h];
        let mut n = f64::from(u32::MAX);
        for r in 0..RESOURCES {
            if d[r] > 0.0 {
                let left = cap[r] - used[r] - extra[r] + FEAS_TOL * cap[r].max(1.0);
                n = n.min((left / d[r]).floor());
            }
        }
        if n <= 0.0 { 0 } else { n as u32 }
    }

    /// Whether `used` exceeds machine `h`'s capacity.
    fn over(&self, h: usize, used: &Vector) -> bool {
        let cap = &self.cluster.capacity[h];
        (0..RESOURCES).any(|r| used[r] - cap[r] > FEAS_TOL * cap[r].max(1.0))
    }

    /// Normalised resource use of one unit of `d` on `h`, `Σ_r d^r/c_h^r`.
    fn norm(&self, h: usize, d: &Vector) -> f64 {
        let cap = &self.cluster.capacity[h];
        (0..RESOURCES)
            .filter(|&r| d[r] > 0.0 && cap[r] > 0.0)
            .map(|r| d[r] / cap[r])
            .sum()
    }

    /// Workers and PSs of the DISTRIBUTED part of `s` at `x`.
    fn dist_counts(s: &JobSlot, x: &[f64]) -> (u32, u32) {
        let y = s.dist.iter().filter_map(|d| d.1).map(|j| at(x, j)).sum();
        let z = s.dist.iter().filter_map(|d| d.2).map(|j| at(x, j)).sum();
        (y, z)
    }

    /// The machine (and PS column) by ascending normalised PS use, ties to
    /// the lower index, that takes one more PS of job `i` in `s` beside
    /// `used` plus `extra(h)`.
    fn ps_machine(
        &self,
        i: usize,
        s: &JobSlot,
        x: &[f64],
        used: &[Vector],
        extra: &dyn Fn(usize) -> Vector,
    ) -> Option<(usize, usize)> {
        let job = &self.jobs[i];
        let mut best: Option<(f64, usize, usize)> = None;
        for &(h, _, z) in &s.dist {
            let Some(z) = z else { continue };
            let fits = f64::from(at(x, z)) < self.problem().upper(z)
                && self.room(h, &used[h], &extra(h), &job.ps) >= 1;
            let price = self.norm(h, &job.ps);
            if fits && best.is_none_or(|b| price < b.0) {
                best = Some((price, h, z));
            }
        }
        best.map(|b| (b.1, b.2))
    }

    /// The covering move cost of adding `dwork` mini-batches of job `i`
    /// in slot `t` with the units `(machine, demand, count)`.
    fn grow_cost(&self, i: usize, t: u32, units: &[(usize, Vector, f64)], dwork: f64) -> f64 {
        match self.cost {
            MoveCost::Resource => units.iter().map(|(h, d, n)| n * self.norm(*h, d)).sum(),
            MoveCost::Weighted(w) => w[i] * (f64::from(t) + 1.0) * dwork / self.jobs[i].minibatches,
        }
    }
}

mod moves;

/// One repair pass: the batch's moves, with the covering order fixed at
/// the first covering step.
struct Pass<'r, 'a> {
    model: &'r BatchRounding<'a>,
    order: OnceCell<Vec<usize>>,
}

impl Derive for BatchRounding<'_> {
    /// PS counts are not rounded: every PS column is cleared; then, jobs in
    /// index order and slots ascending, a DISTRIBUTED slot without workers
    /// becomes IDLE, and one with `Σ y^D ≥ 1` gets `zreq = ⌈b·Σy/B⌉` PSs
    /// (at most the PS cap) placed greedily by ascending normalised PS use
    /// (ties to the lower machine) where the joint capacity has room.
    fn derive(&self, _: &PcProblem, x: &mut [f64]) {
        for s in self.slots.iter().flatten() {
            for z in s.dist.iter().filter_map(|d| d.2) {
                x[z] = 0.0;
            }
        }
        let mut used = self.usage(x);
        for (i, slots) in self.slots.iter().enumerate() {
            let job = &self.jobs[i];
            for s in slots {
                let Some(v) = s.v else { continue };
                let (ys, _) = Self::dist_counts(s, x);
                if at(x, v) != 1 || ys == 0 {
                    x[v] = 0.0;
                    continue;
                }
                let mut need = job.zreq(ys).min(job.max_ps);
                let row = &mut used[s.t as usize];
                while need > 0 {
                    let Some((h, z)) = self.ps_machine(i, s, x, row, &|_| [0.0; RESOURCES]) else {
                        break;
                    };
                    x[z] += 1.0;
                    add_to(&mut row[h], &job.ps, 1.0);
                    need -= 1;
                }
            }
        }
    }
}

impl BatchRounding<'_> {
    /// Rounds `lp_x` with scaling `lambda` and the stream of `rng`, derives
    /// the PSs, repairs, and checks: every job's plan, or `None` when the
    /// repair fails or some plan does not cover its workload.
    ///
    /// # Errors
    ///
    /// Rounding errors for a malformed point or `λ`; repair errors other
    /// than a failed repair.
    pub(crate) fn draw(
        &self,
        structure: &Structure,
        lp_x: &[f64],
        lambda: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Option<Vec<LocalityPlan>>, PcError> {
        let p = self.problem();
        let mut x = round_structured(p, structure, lp_x, lambda, rng)?;
        self.derive(p, &mut x);
        let pass = Pass {
            model: self,
            order: OnceCell::new(),
        };
        let opts = RepairOptions {
            feas_tol: FEAS_TOL,
            ..RepairOptions::default()
        };
        match repair_with(p, &mut x, &opts, &pass) {
            Ok(_) => {}
            Err(PcError::RepairFailed(_)) => return Ok(None),
            Err(e) => return Err(e),
        }
        if !evaluate(p, &x, FEAS_TOL).is_feasible() {
            return Ok(None);
        }
        let plans = self.joint.decode(self.jobs, &x);
        let covers = plans
            .iter()
            .zip(self.jobs)
            .all(|(p, j)| !p.slots.is_empty() && p.work() >= j.minibatches * (1.0 - 1e-9));
        Ok(covers.then_some(plans))
    }

    /// The covering row of job `i` at `x`: `(activity, threshold)`, where
    /// the row holds when the activity reaches the threshold.
    fn cover(&self, i: usize, x: &[f64]) -> (f64, f64) {
        let p = self.problem();
        let row = RowRef {
            class: RowClass::Covering,
            row: i,
        };
        let (cols, vals) = p.row(row);
        let act: f64 = cols.iter().zip(vals).map(|(&j, &a)| a * x[j]).sum();
        let rhs = p.rhs(row);
        (act, rhs - FEAS_TOL * rhs.abs().max(1.0))
    }
}

/// What the draws at one horizon did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Draws {
    /// Draws run.
    pub(crate) draws: u32,
    /// The 0-based draw that succeeded, if any.
    pub(crate) success: Option<u32>,
}

/// A score of every job's plans (smaller is better).
pub(crate) type Score<'s> = dyn Fn(&[LocalityPlan]) -> f64 + 's;

/// Runs up to `draws` draws (draw `k` with `lambdas[k mod len]` and the
/// stream of `seed_of(k)`). Without `score` the first draw that gives every
/// job a plan wins; with it every draw runs and the plans of the smallest
/// score win (ties to the earlier draw).
///
/// # Errors
///
/// As [`BatchRounding::draw`]; [`PcError::InvalidGroup`] from the
/// structure (a bug of its construction).
pub(crate) fn round_horizon(
    model: &BatchRounding<'_>,
    lp_x: &[f64],
    (draws, lambdas): (u32, &[f64]),
    seed_of: impl Fn(u32) -> u64,
    score: Option<&Score<'_>>,
) -> Result<(Option<Vec<LocalityPlan>>, Draws), PcError> {
    let structure = model.structure()?;
    let mut out = Draws::default();
    let mut best: Option<(f64, Vec<LocalityPlan>)> = None;
    for k in 0..draws {
        let lambda = lambdas[k as usize % lambdas.len().max(1)];
        let mut rng = ChaCha8Rng::seed_from_u64(seed_of(k));
        out.draws += 1;
        let Some(plans) = model.draw(&structure, lp_x, lambda, &mut rng)? else {
            continue;
        };
        let Some(score) = score else {
            out.success = Some(k);
            return Ok((Some(plans), out));
        };
        let v = score(&plans);
        if best.as_ref().is_none_or(|b| v < b.0) {
            out.success = Some(k);
            best = Some((v, plans));
        }
    }
    Ok((best.map(|b| b.1), out))
}
