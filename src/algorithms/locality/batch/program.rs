//! The joint program `P(T)` of the offline batch: every job's LOC-SUB
//! columns and rows over slots `0..T` (bounds from full capacities), one
//! block of columns per job, and joint capacity rows per machine, resource
//! and slot.

use crate::certificate::Sense;
use crate::pcip::{PcBuilder, PcError, PcProblem};

use super::super::model::{LocalityCluster, LocalityJob, RESOURCES, Vector};
use super::super::plan::LocalityPlan;
use super::super::sub::{
    self, Cells, ColumnIndex, ColumnKind, Shifted, column_kinds, covering, slot_rows,
};

/// What `P(T)` minimises.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Objective<'w> {
    /// Nothing (feasibility).
    Zero,
    /// The front-loading tie-break `Σ_i Σ_t (t/T)·work_{i,t}/Q_i`
    /// (`t` 1-based).
    FrontLoad,
    /// The weighted completion-time proxy `Σ_i wt_i Σ_t t·work_{i,t}/Q_i`.
    Weighted(&'w [f64]),
}

/// One job's columns in `P(T)`.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    /// First column of the job.
    pub(crate) offset: usize,
    /// The job's columns (local indices).
    pub(crate) index: ColumnIndex,
    /// Upper bounds of its columns.
    pub(crate) upper: Vec<u32>,
}

/// `P(T)` and its column blocks.
#[derive(Debug, Clone)]
pub(crate) struct Joint {
    /// `T`: slots `0..T`.
    pub(crate) slots: u32,
    /// The program (covering row `i` is job `i`'s).
    pub(crate) problem: PcProblem,
    /// Per job, in job order.
    pub(crate) blocks: Vec<Block>,
}

/// Objective coefficient of column `c` of `job` (position `i`).
fn coefficient(
    objective: Objective<'_>,
    job: &LocalityJob,
    i: usize,
    slots: u32,
    kind: ColumnKind,
    machine: Option<u32>,
    slot: u32,
) -> f64 {
    let rate = match (kind, machine) {
        (ColumnKind::LocalWorkers, Some(h)) => job.rate_local[h as usize],
        (ColumnKind::DistWorkers, _) => job.rate_dist,
        _ => return 0.0,
    };
    let t = f64::from(slot) + 1.0;
    match objective {
        Objective::Zero => 0.0,
        Objective::FrontLoad => t / f64::from(slots) * rate / job.minibatches,
        Objective::Weighted(w) => w[i] * t * rate / job.minibatches,
    }
}

/// Builds `P(T)` over slots `0..slots` from every job's full-capacity
/// [`Cells`] (which must reach slot `slots − 1`). `None` when some job
/// cannot finish within `T` slots even with every column at its bound
/// (then the LP relaxation is infeasible too).
///
/// # Errors
///
/// [`PcError`] when the engine rejects the program (a coefficient out of
/// its range, too many columns).
pub(crate) fn build(
    jobs: &[LocalityJob],
    cells: &[Cells],
    cluster: &LocalityCluster,
    slots: u32,
    objective: Objective<'_>,
) -> Result<Option<Joint>, PcError> {
    let Some(deadline) = slots.checked_sub(1) else {
        return Ok(None);
    };
    let mut blocks = Vec::with_capacity(jobs.len());
    let mut cost = Vec::new();
    let mut offset = 0;
    for (i, (job, c)) in jobs.iter().zip(cells).enumerate() {
        let (index, _, upper) = sub::columns(c, deadline);
        for j in 0..index.len() {
            cost.push(index.column(j).map_or(0.0, |col| {
                coefficient(objective, job, i, slots, col.kind, col.machine, col.slot)
            }));
        }
        let n = index.len();
        blocks.push(Block {
            offset,
            index,
            upper,
        });
        offset += n;
    }
    let mut b = PcBuilder::new(Sense::Minimise, offset).objective(cost);
    for blk in &blocks {
        b = column_kinds(&blk.index, &blk.upper, blk.offset, b);
    }
    for (job, blk) in jobs.iter().zip(&blocks) {
        let Some((cov, rhs)) = covering(job, &blk.index, &blk.upper) else {
            return Ok(None);
        };
        let cov: Vec<(usize, f64)> = cov.iter().map(|&(j, a)| (j + blk.offset, a)).collect();
        b = b.covering_row(&cov, rhs);
    }
    for ((job, c), blk) in jobs.iter().zip(cells).zip(&blocks) {
        let sink = Shifted {
            builder: b,
            offset: blk.offset,
        };
        b = slot_rows(job, c, &blk.index, &blk.upper, deadline, false, sink).builder;
    }
    b = capacity_rows(jobs, cluster, &blocks, slots, b);
    match b.build() {
        Ok(problem) => Ok(Some(Joint {
            slots,
            problem,
            blocks,
        })),
        Err(PcError::CoveringUnreachable { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Joint capacity per machine `h`, resource `r` and slot `t`:
/// `Σ_i (w^{L,r} y^L + s^{L,r} u + w^r y^D + s^r z^D) ≤ c_h^r`, left out
/// when the column bounds already imply it.
fn capacity_rows(
    jobs: &[LocalityJob],
    cluster: &LocalityCluster,
    blocks: &[Block],
    slots: u32,
    mut b: PcBuilder,
) -> PcBuilder {
    let demands: Vec<[(ColumnKind, Vector); 4]> = jobs
        .iter()
        .map(|j| {
            [
                (ColumnKind::LocalWorkers, j.worker_local()),
                (ColumnKind::Local, j.ps_local()),
                (ColumnKind::DistWorkers, j.worker),
                (ColumnKind::DistPs, j.ps),
            ]
        })
        .collect();
    for t in 0..slots {
        for h in 0..cluster.machines() {
            let mut cols: Vec<(usize, u32, &Vector)> = Vec::new();
            for (blk, d) in blocks.iter().zip(&demands) {
                for (kind, v) in d {
                    if let Some(j) = blk.index.get(*kind, Some(h as u32), t) {
                        cols.push((blk.offset + j, blk.upper[j], v));
                    }
                }
            }
            for r in 0..RESOURCES {
                let entries: Vec<(usize, f64)> = cols
                    .iter()
                    .filter(|c| c.2[r] > 0.0)
                    .map(|c| (c.0, c.2[r]))
                    .collect();
                let most: f64 = cols.iter().map(|c| c.2[r] * f64::from(c.1)).sum();
                let cap = cluster.capacity[h][r];
                if !entries.is_empty() && most > cap * (1.0 + 1e-12) {
                    b = b.packing_row(&entries, cap);
                }
            }
        }
    }
    b
}

impl Joint {
    /// Every job's plan at an integral point `x` of the program.
    pub(crate) fn decode(&self, jobs: &[LocalityJob], x: &[f64]) -> Vec<LocalityPlan> {
        jobs.iter()
            .zip(&self.blocks)
            .map(|(job, blk)| {
                let end = (blk.offset + blk.index.len()).min(x.len());
                let part = x.get(blk.offset..end).unwrap_or(&[]);
                LocalityPlan {
                    job: job.id,
                    slots: blk.index.decode(job, part),
                    worker: job.worker,
                    ps: job.ps,
                }
            })
            .collect()
    }

    /// Estimated columns of `P(T)` before pruning: `I·T·(4H + 1)`.
    pub(crate) fn size_estimate(jobs: usize, machines: usize, slots: u32) -> u64 {
        (jobs as u64)
            .saturating_mul(u64::from(slots))
            .saturating_mul((machines as u64).saturating_mul(4).saturating_add(1))
    }
}
