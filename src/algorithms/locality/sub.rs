//! LOC-SUB(i, t̂): the per-job mixed packing–covering program at given
//! prices and residual capacities, its column index, and the decoding of
//! a point into a per-slot plan.

use std::collections::HashMap;

use crate::certificate::Sense;
use crate::model::MachineId;
use crate::online::{PriceView, ResourceId};
use crate::pcip::{PcBuilder, PcError, PcProblem, RowSense};
use crate::schedule::Tasks;

use super::model::{LocalityCluster, LocalityJob, RESOURCES, Vector, units_fitting};
use super::plan::{SlotConfig, SlotPlan};

/// The kind of a LOC-SUB column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ColumnKind {
    /// `y^L_{h,t}`: workers LOCAL on `h` (integer).
    LocalWorkers,
    /// `u_{h,t}`: LOCAL on `h` in `t`, also the one local PS (binary).
    Local,
    /// `y^D_{h,t}`: DISTRIBUTED workers on `h` (integer).
    DistWorkers,
    /// `z^D_{h,t}`: DISTRIBUTED PSs on `h` (integer).
    DistPs,
    /// `v_t`: DISTRIBUTED in `t` (binary; no machine).
    Distributed,
}

/// One column: its kind, machine position (`None` for `v_t`) and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Column {
    /// The kind.
    pub(crate) kind: ColumnKind,
    /// Machine position; `None` for [`ColumnKind::Distributed`].
    pub(crate) machine: Option<u32>,
    /// The 0-based slot.
    pub(crate) slot: u32,
}

/// The map `(kind, machine, slot) ↔ column` of one program. Cells whose
/// bound `Ȳ`/`Z̄` is 0 have no column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnIndex {
    columns: Vec<Column>,
    map: HashMap<Column, usize>,
}

impl ColumnIndex {
    fn push(&mut self, c: Column) -> usize {
        let j = self.columns.len();
        self.columns.push(c);
        self.map.insert(c, j);
        j
    }

    /// The column of `(kind, machine, slot)`, if it exists.
    pub fn get(&self, kind: ColumnKind, machine: Option<u32>, slot: u32) -> Option<usize> {
        self.map
            .get(&Column {
                kind,
                machine,
                slot,
            })
            .copied()
    }

    /// What column `j` is.
    pub fn column(&self, j: usize) -> Option<Column> {
        self.columns.get(j).copied()
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether there is no column.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
}

/// Prices and bounds of one (machine, slot) cell for one job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellData {
    /// `π^L = Σ_r p^r w^{L,r}`.
    pub(crate) pi_local: f64,
    /// `σ^L = Σ_r p^r s^{L,r}`.
    pub(crate) sigma_local: f64,
    /// `π^D = Σ_r p^r w^r`.
    pub(crate) pi_dist: f64,
    /// `σ^D = Σ_r p^r s^r`.
    pub(crate) sigma_dist: f64,
    /// `Ȳ^L`: most LOCAL workers beside one PS (0: no LOCAL).
    pub(crate) ybar_local: u32,
    /// `Ȳ^D`: most DISTRIBUTED workers.
    pub(crate) ybar_dist: u32,
    /// `Z̄^D`: most DISTRIBUTED PSs.
    pub(crate) zbar_dist: u32,
    /// Residual `ĉ^r`, ledger units (clamped at 0).
    pub(crate) residual: Vector,
}

/// A job's cells over its window at one price view: `cells[t − a][h]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cells {
    /// First slot (the arrival slot).
    pub(crate) first: u32,
    /// Per slot of the window, per machine.
    pub(crate) cells: Vec<Vec<CellData>>,
}

/// `Σ_r p^r d^r` over positive entries (`+∞` when a price is not finite).
fn unit_price(
    price: &impl Fn(MachineId, usize, u32) -> f64,
    m: MachineId,
    t: u32,
    d: &Vector,
) -> f64 {
    d.iter()
        .enumerate()
        .filter(|(_, v)| **v > 0.0)
        .map(|(r, v)| price(m, r, t) * v)
        .sum()
}

/// The cells of `job` over `[a_i, end_i]` (clipped to the view's horizon)
/// at the prices and residuals of `view`: unit prices per configuration,
/// the bounds `Ȳ^L, Ȳ^D, Z̄^D` from residuals, role flags and allowed
/// machines. A unit whose price exceeds `f_i(0)` (the most the job can be
/// worth) can be in no plan with a positive payoff and gets bound 0, as
/// does a unit with a non-finite price.
pub fn cells(job: &LocalityJob, cluster: &LocalityCluster, view: &PriceView<'_>) -> Cells {
    let last = job.end.min(view.horizon().saturating_sub(1));
    let machines = view.machines() as u32;
    let source = CellSource {
        last,
        price_cap: job.utility.value(0),
        price: |m: MachineId, r: usize, t| view.price(m, ResourceId(r as u8), t),
        residual: |m: MachineId, r: usize, t| view.residual(m, ResourceId(r as u8), t),
        in_view: |m: MachineId| m.0 < machines,
    };
    cells_from(job, cluster, &source)
}

/// The cells of `job` over slots `a_i..=last` at price 0 with every
/// machine's full capacity as its residual (the offline programs, where
/// all jobs share the empty cluster through joint capacity rows).
pub(crate) fn full_capacity_cells(
    job: &LocalityJob,
    cluster: &LocalityCluster,
    last: u32,
) -> Cells {
    let source = CellSource {
        last,
        price_cap: f64::INFINITY,
        price: |_: MachineId, _: usize, _: u32| 0.0,
        residual: |m: MachineId, r: usize, _: u32| cluster.capacity[m.0 as usize][r],
        in_view: |_: MachineId| true,
    };
    cells_from(job, cluster, &source)
}

/// Where the prices and residuals of [`cells_from`] come from.
struct CellSource<P, R, V> {
    /// Last slot (inclusive).
    last: u32,
    /// Units priced above this get bound 0.
    price_cap: f64,
    /// Unit price of resource `r` on machine `m` in slot `t`.
    price: P,
    /// Residual of resource `r` on machine `m` in slot `t`.
    residual: R,
    /// Whether machine `m` exists in the source.
    in_view: V,
}

/// The cells of `job` from `source` (see [`cells`]).
fn cells_from<P, R, V>(
    job: &LocalityJob,
    cluster: &LocalityCluster,
    source: &CellSource<P, R, V>,
) -> Cells
where
    P: Fn(MachineId, usize, u32) -> f64,
    R: Fn(MachineId, usize, u32) -> f64,
    V: Fn(MachineId) -> bool,
{
    let last = source.last;
    let cap = source.price_cap;
    let ok = |p: f64| p.is_finite() && p <= cap;
    let (wl, sl) = (job.worker_local(), job.ps_local());
    let n = job.max_workers;
    let mut out = Vec::new();
    for t in job.arrival..=last {
        if job.arrival > last {
            break;
        }
        let mut row = Vec::with_capacity(cluster.machines());
        for h in 0..cluster.machines() {
            let m = MachineId(h as u32);
            let mut residual = [0.0; RESOURCES];
            for (r, v) in residual.iter_mut().enumerate() {
                *v = (source.residual)(m, r, t).max(0.0);
            }
            let res = |r: usize| residual[r];
            let pi_local = unit_price(&source.price, m, t, &wl);
            let sigma_local = unit_price(&source.price, m, t, &sl);
            let pi_dist = unit_price(&source.price, m, t, &job.worker);
            let sigma_dist = unit_price(&source.price, m, t, &job.ps);
            let usable = job.may_use(h) && (source.in_view)(m);
            let local = usable
                && job.local_allowed(cluster, h)
                && ok(pi_local)
                && ok(sigma_local)
                && units_fitting(&sl, res, 1) == 1;
            let ybar_local = if local {
                units_fitting(&wl, |r| residual[r] - sl[r], n)
            } else {
                0
            };
            let ybar_dist = if usable && cluster.hosts_workers[h] && ok(pi_dist) {
                units_fitting(&job.worker, res, n)
            } else {
                0
            };
            let zbar_dist = if usable && cluster.hosts_ps[h] && ok(sigma_dist) {
                units_fitting(&job.ps, res, n.min(job.max_ps))
            } else {
                0
            };
            row.push(CellData {
                pi_local,
                sigma_local,
                pi_dist,
                sigma_dist,
                ybar_local,
                ybar_dist,
                zbar_dist,
                residual,
            });
        }
        out.push(row);
    }
    Cells {
        first: job.arrival,
        cells: out,
    }
}

/// LOC-SUB(i, t̂) as a validated packing–covering program with its column
/// index.
#[derive(Debug, Clone, PartialEq)]
pub struct LocSub {
    /// The deadline `t̂` (0-based): slots `a_i..=t̂`.
    pub(crate) deadline: u32,
    /// The program.
    pub(crate) problem: PcProblem,
    /// Its columns.
    pub(crate) index: ColumnIndex,
}

/// The columns of slots `first..=deadline`, with objective and upper
/// bounds.
pub(crate) fn columns(cells: &Cells, deadline: u32) -> (ColumnIndex, Vec<f64>, Vec<u32>) {
    let mut index = ColumnIndex::default();
    let (mut cost, mut upper) = (Vec::new(), Vec::new());
    let mut add = |index: &mut ColumnIndex, c: Column, price: f64, u: u32| {
        index.push(c);
        cost.push(price);
        upper.push(u);
    };
    for (k, row) in cells.cells.iter().enumerate() {
        let t = cells.first + k as u32;
        if t > deadline {
            break;
        }
        for (h, c) in row.iter().enumerate() {
            let machine = Some(h as u32);
            if c.ybar_local > 0 {
                let col = |kind| Column {
                    kind,
                    machine,
                    slot: t,
                };
                add(
                    &mut index,
                    col(ColumnKind::LocalWorkers),
                    c.pi_local,
                    c.ybar_local,
                );
                add(&mut index, col(ColumnKind::Local), c.sigma_local, 1);
            }
        }
        let dist = row.iter().any(|c| c.ybar_dist > 0) && row.iter().any(|c| c.zbar_dist > 0);
        if dist {
            for (h, c) in row.iter().enumerate() {
                let machine = Some(h as u32);
                let col = |kind| Column {
                    kind,
                    machine,
                    slot: t,
                };
                if c.ybar_dist > 0 {
                    add(
                        &mut index,
                        col(ColumnKind::DistWorkers),
                        c.pi_dist,
                        c.ybar_dist,
                    );
                }
                if c.zbar_dist > 0 {
                    add(
                        &mut index,
                        col(ColumnKind::DistPs),
                        c.sigma_dist,
                        c.zbar_dist,
                    );
                }
            }
            let v = Column {
                kind: ColumnKind::Distributed,
                machine: None,
                slot: t,
            };
            add(&mut index, v, 0.0, 1);
        }
    }
    (index, cost, upper)
}

/// Builds LOC-SUB(i, t̂) over slots `a_i..=deadline` from the job's
/// [`Cells`]. Returns `None` when no plan can finish by `deadline`
/// because the covering row cannot be met even with every column at its
/// bound (including when there is no column).
///
/// Rows: (COV) `Σ r^L_h y^L + r^D y^D ≥ Q` (scaled by `1/max r`); per
/// machine, resource and slot (CAP), omitted when the column bounds
/// already imply it; per slot (NCAP) `Σ y ≤ N`, (ONE) `Σ_h u + v ≤ 1`,
/// (BW) `(b/B)·Σ y^D − Σ z^D ≤ 0`, (PSN) `Σ z^D − Σ y^D ≤ 0` and, when
/// the job's PS cap binds, `Σ z^D ≤ max_ps`; per cell (LU)
/// `u − y^L ≤ 0`, `y^L − Ȳ^L u ≤ 0` and (DV) `y^D − Ȳ^D v ≤ 0`,
/// `z^D − Z̄^D v ≤ 0`.
///
/// # Errors
///
/// [`PcError`] when the program is invalid for the engine (a coefficient
/// out of its range).
pub fn build(job: &LocalityJob, cells: &Cells, deadline: u32) -> Result<Option<LocSub>, PcError> {
    let (index, cost, upper) = columns(cells, deadline);
    if index.is_empty() {
        return Ok(None);
    }
    let mut b = PcBuilder::new(Sense::Minimise, index.len()).objective(cost);
    b = column_kinds(&index, &upper, 0, b);
    let Some((cov, rhs)) = covering(job, &index, &upper) else {
        return Ok(None);
    };
    b = b.covering_row(&cov, rhs);
    b = slot_rows(job, cells, &index, &upper, deadline, true, b);
    match b.build() {
        Ok(problem) => Ok(Some(LocSub {
            deadline,
            problem,
            index,
        })),
        Err(PcError::CoveringUnreachable { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Binary selectors and bounded integer counts of the columns of `index`
/// (at `offset` in the builder's columns).
pub(crate) fn column_kinds(
    index: &ColumnIndex,
    upper: &[u32],
    offset: usize,
    mut b: PcBuilder,
) -> PcBuilder {
    for (j, &u) in upper.iter().enumerate() {
        b = match index.columns[j].kind {
            ColumnKind::Local | ColumnKind::Distributed => b.binary(offset + j),
            _ => b.upper(offset + j, Some(u)),
        };
    }
    b
}

/// (COV) `Σ r^L_h y^L + r^D y^D ≥ Q`, scaled by `1/max r` (entries in the
/// columns of `index`), or `None` when even every column at its bound
/// cannot meet it.
pub(crate) fn covering(
    job: &LocalityJob,
    index: &ColumnIndex,
    upper: &[u32],
) -> Option<(Vec<(usize, f64)>, f64)> {
    let rmax = job.rate_local.iter().copied().fold(job.rate_dist, f64::max);
    let cov: Vec<(usize, f64)> = index
        .columns
        .iter()
        .enumerate()
        .filter_map(|(j, c)| match (c.kind, c.machine) {
            (ColumnKind::LocalWorkers, Some(h)) => Some((j, job.rate_local[h as usize] / rmax)),
            (ColumnKind::DistWorkers, _) => Some((j, job.rate_dist / rmax)),
            _ => None,
        })
        .collect();
    let reach: f64 = cov.iter().map(|&(j, a)| a * f64::from(upper[j])).sum();
    let rhs = job.minibatches / rmax;
    if cov.is_empty() || reach < rhs * (1.0 - 1e-12) {
        return None;
    }
    Some((cov, rhs))
}

/// Where the rows of one job's program go: a [`PcBuilder`] whose columns
/// are the job's, or one where they start at an offset (a job's block of
/// a joint program).
pub(crate) trait RowSink: Sized {
    /// Adds `Σ entries ≤ rhs`, a packing row.
    fn packing(self, entries: &[(usize, f64)], rhs: f64) -> Self;
    /// Adds a linking row.
    fn linking(self, entries: &[(usize, f64)], sense: RowSense, rhs: f64) -> Self;
}

impl RowSink for PcBuilder {
    fn packing(self, entries: &[(usize, f64)], rhs: f64) -> Self {
        self.packing_row(entries, rhs)
    }

    fn linking(self, entries: &[(usize, f64)], sense: RowSense, rhs: f64) -> Self {
        self.linking_row(entries, sense, rhs)
    }
}

/// A builder whose row entries are shifted by `offset` columns.
#[derive(Debug)]
pub(crate) struct Shifted {
    /// The builder.
    pub(crate) builder: PcBuilder,
    /// Offset added to every column index.
    pub(crate) offset: usize,
}

impl Shifted {
    fn shift(&self, entries: &[(usize, f64)]) -> Vec<(usize, f64)> {
        entries.iter().map(|&(j, a)| (j + self.offset, a)).collect()
    }
}

impl RowSink for Shifted {
    fn packing(mut self, entries: &[(usize, f64)], rhs: f64) -> Self {
        let e = self.shift(entries);
        self.builder = self.builder.packing_row(&e, rhs);
        self
    }

    fn linking(mut self, entries: &[(usize, f64)], sense: RowSense, rhs: f64) -> Self {
        let e = self.shift(entries);
        self.builder = self.builder.linking_row(&e, sense, rhs);
        self
    }
}

/// The packing and linking rows of every slot and cell; the per-cell
/// capacity rows (CAP) only with `capacity` (a joint program replaces them
/// with rows over all jobs).
pub(crate) fn slot_rows<B: RowSink>(
    job: &LocalityJob,
    cells: &Cells,
    index: &ColumnIndex,
    upper: &[u32],
    deadline: u32,
    capacity: bool,
    mut b: B,
) -> B {
    let (wl, sl) = (job.worker_local(), job.ps_local());
    for (k, row) in cells.cells.iter().enumerate() {
        let t = cells.first + k as u32;
        if t > deadline {
            break;
        }
        let col = |kind, h: usize| index.get(kind, Some(h as u32), t);
        let v = index.get(ColumnKind::Distributed, None, t);
        let (mut ys, mut us, mut yd, mut zd) = (vec![], vec![], vec![], vec![]);
        for (h, c) in row.iter().enumerate() {
            let cols = [
                (col(ColumnKind::LocalWorkers, h), &wl),
                (col(ColumnKind::Local, h), &sl),
                (col(ColumnKind::DistWorkers, h), &job.worker),
                (col(ColumnKind::DistPs, h), &job.ps),
            ];
            // (CAP), unless implied by the bounds.
            for r in (0..RESOURCES).filter(|_| capacity) {
                let entries: Vec<(usize, f64)> = cols
                    .iter()
                    .filter_map(|(j, d)| j.filter(|_| d[r] > 0.0).map(|j| (j, d[r])))
                    .collect();
                let most: f64 = entries.iter().map(|&(j, a)| a * f64::from(upper[j])).sum();
                if !entries.is_empty() && most > c.residual[r] * (1.0 + 1e-12) {
                    b = b.packing(&entries, c.residual[r]);
                }
            }
            if let (Some(y), Some(u)) = (cols[0].0, cols[1].0) {
                // (LU)
                b = b.linking(&[(u, 1.0), (y, -1.0)], RowSense::Le, 0.0);
                b = b.linking(
                    &[(y, 1.0), (u, -f64::from(c.ybar_local))],
                    RowSense::Le,
                    0.0,
                );
                ys.push(y);
                us.push(u);
            }
            if let Some(v) = v {
                // (DV)
                for (j, bound, list) in [
                    (cols[2].0, c.ybar_dist, &mut yd),
                    (cols[3].0, c.zbar_dist, &mut zd),
                ] {
                    if let Some(j) = j {
                        b = b.linking(&[(j, 1.0), (v, -f64::from(bound))], RowSense::Le, 0.0);
                        list.push(j);
                    }
                }
            }
        }
        b = per_slot_rows(job, upper, &ys, &us, &yd, &zd, v, b);
    }
    b
}

/// (NCAP), (ONE), (BW), (PSN) and the PS cap of one slot.
#[allow(clippy::too_many_arguments)]
fn per_slot_rows<B: RowSink>(
    job: &LocalityJob,
    upper: &[u32],
    ys: &[usize],
    us: &[usize],
    yd: &[usize],
    zd: &[usize],
    v: Option<usize>,
    mut b: B,
) -> B {
    let n = f64::from(job.max_workers);
    let workers: Vec<(usize, f64)> = ys.iter().chain(yd).map(|&j| (j, 1.0)).collect();
    let most: f64 = workers.iter().map(|&(j, _)| f64::from(upper[j])).sum();
    if most > n {
        b = b.packing(&workers, n);
    }
    let one: Vec<(usize, f64)> = us.iter().copied().chain(v).map(|j| (j, 1.0)).collect();
    // Also with one member: the slot's choice group needs its packing row.
    if !one.is_empty() {
        b = b.packing(&one, 1.0);
    }
    if v.is_some() {
        let ratio = job.bandwidth_ratio();
        let bw: Vec<(usize, f64)> = yd
            .iter()
            .map(|&j| (j, ratio))
            .chain(zd.iter().map(|&j| (j, -1.0)))
            .collect();
        b = b.linking(&bw, RowSense::Le, 0.0);
        let psn: Vec<(usize, f64)> = zd
            .iter()
            .map(|&j| (j, 1.0))
            .chain(yd.iter().map(|&j| (j, -1.0)))
            .collect();
        b = b.linking(&psn, RowSense::Le, 0.0);
        let zmost: f64 = zd.iter().map(|&j| f64::from(upper[j])).sum();
        if zmost > f64::from(job.max_ps) {
            let cap: Vec<(usize, f64)> = zd.iter().map(|&j| (j, 1.0)).collect();
            b = b.packing(&cap, f64::from(job.max_ps));
        }
    }
    b
}

impl LocSub {
    /// Decodes a point (integral on the integer columns) into the slots
    /// with work: LOCAL(h, y) where `u_{h,t} = 1`, DIST({h: (y_h, z_h)})
    /// where `v_t = 1` and some `y^D ≥ 1`; every other slot is IDLE and
    /// left out. Values are rounded to the nearest integer.
    pub fn decode(&self, job: &LocalityJob, x: &[f64]) -> Vec<SlotPlan> {
        self.index.decode(job, x)
    }
}

impl ColumnIndex {
    /// Decodes a point of a program with these columns (see
    /// [`LocSub::decode`]); `x[j]` is column `j`'s value.
    pub fn decode(&self, job: &LocalityJob, x: &[f64]) -> Vec<SlotPlan> {
        let val = |j: usize| x.get(j).copied().unwrap_or(0.0).round().max(0.0) as u32;
        let mut slots: Vec<SlotPlan> = Vec::new();
        let mut dist: HashMap<u32, Vec<(u32, Tasks)>> = HashMap::new();
        for (j, c) in self.columns.iter().enumerate() {
            match (c.kind, c.machine) {
                (ColumnKind::Local, Some(h)) if val(j) == 1 => {
                    let y = self
                        .get(ColumnKind::LocalWorkers, Some(h), c.slot)
                        .map_or(0, val);
                    if y > 0 {
                        slots.push(SlotPlan {
                            slot: c.slot,
                            config: SlotConfig::Local {
                                machine: h,
                                workers: y,
                            },
                            work: f64::from(y) * job.rate_local[h as usize],
                        });
                    }
                }
                (ColumnKind::DistWorkers | ColumnKind::DistPs, Some(h)) if val(j) > 0 => {
                    let on = self
                        .get(ColumnKind::Distributed, None, c.slot)
                        .is_some_and(|v| val(v) == 1);
                    if on {
                        let n = val(j);
                        let t = if c.kind == ColumnKind::DistWorkers {
                            Tasks::new(n, 0)
                        } else {
                            Tasks::new(0, n)
                        };
                        let list = dist.entry(c.slot).or_default();
                        match list.iter_mut().find(|(m, _)| *m == h) {
                            Some((_, acc)) => {
                                *acc = Tasks::new(acc.workers + t.workers, acc.ps + t.ps)
                            }
                            None => list.push((h, t)),
                        }
                    }
                }
                _ => {}
            }
        }
        for (slot, mut tasks) in dist {
            let y: u32 = tasks.iter().map(|(_, t)| t.workers).sum();
            if y == 0 || slots.iter().any(|s| s.slot == slot) {
                continue;
            }
            tasks.sort_by_key(|(m, _)| *m);
            slots.push(SlotPlan {
                slot,
                config: SlotConfig::Distributed { tasks },
                work: f64::from(y) * job.rate_dist,
            });
        }
        slots.sort_by_key(|s| s.slot);
        slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::locality::model::tests_support::l1;
    use crate::model::Hosting;

    #[test]
    fn locality_columns_rows_and_decode() {
        let (cl, job) = l1(Hosting::Both);
        let caps = [4.0, 16.0, 64.0, 0.0, 10.0];
        let view = PriceView::from_explicit(
            2,
            RESOURCES,
            4,
            |_, _, _| 1.0,
            move |_, r, _| caps[r.0 as usize],
        );
        let cells = cells(&job, &cl, &view);
        let c = cells.cells[0][0];
        assert_eq!(
            (c.pi_local, c.sigma_local, c.pi_dist, c.sigma_dist),
            (11.0, 10.0, 12.0, 14.0)
        );
        // Z̄^D: two PSs of 4 Gbit/s fill the 10 Gbit/s NIC.
        assert_eq!((c.ybar_local, c.ybar_dist, c.zbar_dist), (4, 4, 2));
        let sub = build(&job, &cells, 0).unwrap().unwrap();
        // Per machine y^L, u, y^D, z^D, plus v.
        assert_eq!(sub.index.len(), 9);
        let u = sub.index.get(ColumnKind::Local, Some(0), 0).unwrap();
        let y = sub.index.get(ColumnKind::LocalWorkers, Some(0), 0).unwrap();
        assert_eq!(sub.index.column(u).map(|c| c.kind), Some(ColumnKind::Local));
        assert!(sub.index.get(ColumnKind::Distributed, Some(0), 0).is_none());
        let mut x = vec![0.0; sub.index.len()];
        x[u] = 1.0;
        x[y] = 4.0;
        let plan = sub.decode(&job, &x);
        assert_eq!(plan.len(), 1);
        assert_eq!(
            plan[0].config,
            SlotConfig::Local {
                machine: 0,
                workers: 4
            }
        );
        assert!((plan[0].work - 400.0).abs() < 1e-9);
        // A PS-only machine gets no LOCAL and no worker columns.
        let (cl, job) = l1(Hosting::ParameterServers);
        let cells = super::cells(&job, &cl, &view);
        assert_eq!(
            (cells.cells[0][0].ybar_local, cells.cells[0][0].ybar_dist),
            (0, 0)
        );
        assert!(cells.cells[0][0].zbar_dist > 0);
    }
}
