//! The ledger of committed amounts per (machine, resource, slot) cell.

use std::collections::BTreeMap;
use std::fmt;

use crate::model::MachineId;
use crate::model::units::Num;

use super::error::OnlineError;

/// Relative tolerance of the capacity check `g + q ≤ c·(1 + 1e-9) + 1e-12`.
pub(crate) const CAPACITY_REL_TOL: f64 = 1e-9;
/// Absolute tolerance of the capacity check `g + q ≤ c·(1 + 1e-9) + 1e-12`.
pub(crate) const CAPACITY_ABS_TOL: f64 = 1e-12;

/// Identifier of a pool of machines that share `L_κ` and `U_κ^r`
/// (index into [`Ledger::pool_capacity_sum`] and the bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PoolId(pub u16);

impl fmt::Display for PoolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pool {}", self.0)
    }
}

/// Index of a resource type, the same list on every machine (the job model
/// decides what index `r` means, e.g. `[CPU, BW]` for OASiS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ResourceId(pub u8);

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "resource {}", self.0)
    }
}

/// Slots per page of the committed amounts: a machine's amounts are stored
/// only for the pages of 64 slots where something was committed.
const PAGE_SLOTS: u32 = 64;

/// Pages `0..NEAR_PAGES` (the first 65 536 slots) of a machine are found by
/// index; later pages, in a map.
const NEAR_PAGES: u32 = 1024;

/// The touched pages of one machine: page `p` holds slot `p·64 + s` at
/// `[s·R + r]`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Pages {
    /// Pages below [`NEAR_PAGES`], by index (grown to the last touched one).
    near: Vec<Option<Box<[f64]>>>,
    /// Pages from [`NEAR_PAGES`] on.
    far: BTreeMap<u32, Box<[f64]>>,
}

impl Pages {
    fn get(&self, page: u32) -> Option<&[f64]> {
        if page < NEAR_PAGES {
            self.near.get(page as usize).and_then(|p| p.as_deref())
        } else {
            self.far.get(&page).map(|p| &**p)
        }
    }

    fn get_or_insert(&mut self, page: u32, len: usize) -> &mut [f64] {
        let fresh = || vec![0.0; len].into_boxed_slice();
        if page < NEAR_PAGES {
            let i = page as usize;
            if self.near.len() <= i {
                self.near.resize(i + 1, None);
            }
            self.near[i].get_or_insert_with(fresh)
        } else {
            self.far.entry(page).or_insert_with(fresh)
        }
    }

    /// The indices of the touched pages, ascending.
    fn touched(&self) -> impl Iterator<Item = u32> + '_ {
        let near = self
            .near
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_some())
            .map(|(i, _)| i as u32);
        near.chain(self.far.keys().copied())
    }
}

/// One (machine, resource, slot) cell inside a ledger. Orders like the
/// cells of a dense (machine, slot, resource) array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Cell {
    machine: u32,
    slot: u32,
    resource: u8,
}

/// Committed amounts `g_m^r(t)` of every cell, with capacities `c_m^r` and
/// the pool `κ(m)` of every machine.
///
/// Machines are identified by their index (`MachineId(i)` is the `i`-th
/// machine given to [`Ledger::new`]); slots are 0-based, `0 ≤ t < T`.
/// Amounts only grow: there is no release operation, so prices never
/// decrease.
///
/// Memory grows with what is committed, not with the horizon: amounts are
/// kept per machine in pages of 64 slots, created when a plan first commits
/// to one of their cells, so an empty ledger over `T = 2³² − 1` slots costs
/// the capacities only.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Ledger {
    horizon: u32,
    resources: usize,
    pools: usize,
    pool_of: Vec<PoolId>,
    /// `capacity[m·R + r]`.
    capacity: Vec<f64>,
    /// `c'[m·R + r]`: the capacity in the price exponent (headroom prices;
    /// equal to `capacity` unless set).
    price_capacity: Vec<f64>,
    /// The touched pages of every machine.
    pages: Vec<Pages>,
}

impl Ledger {
    /// An empty ledger (`g = 0` everywhere) over `horizon` slots and
    /// `resources` resource types; `machines[i] = (pool, capacity vector)`.
    ///
    /// Pools must be numbered `0..P` with at least one machine each.
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidInstance`] when the horizon, the resource count
    /// or the machine list is empty, a capacity vector has the wrong length,
    /// a capacity is negative or not finite, or a pool has no machine.
    pub fn new(
        horizon: u32,
        resources: usize,
        machines: Vec<(PoolId, Vec<f64>)>,
    ) -> Result<Self, OnlineError> {
        let bad = |reason: String| Err(OnlineError::InvalidInstance { reason });
        if horizon == 0 {
            return bad("the horizon must have at least one slot".into());
        }
        if resources == 0 || resources > usize::from(u8::MAX) + 1 {
            return bad(format!("resource count {resources} is not in 1..=256"));
        }
        if machines.is_empty() {
            return bad("the ledger needs at least one machine".into());
        }
        let pools = machines
            .iter()
            .map(|(p, _)| usize::from(p.0) + 1)
            .max()
            .unwrap_or(0);
        let mut seen = vec![false; pools];
        let mut capacity = Vec::with_capacity(machines.len() * resources);
        let mut pool_of = Vec::with_capacity(machines.len());
        for (i, (pool, caps)) in machines.into_iter().enumerate() {
            if caps.len() != resources {
                return bad(format!(
                    "machine {i} has {} capacities, expected {resources}",
                    caps.len()
                ));
            }
            if let Some((r, c)) = caps
                .iter()
                .enumerate()
                .find(|(_, c)| !c.is_finite() || **c < 0.0)
            {
                return bad(format!(
                    "machine {i}, resource {r}: capacity {} is not ≥ 0 and finite",
                    Num(*c)
                ));
            }
            seen[usize::from(pool.0)] = true;
            pool_of.push(pool);
            capacity.extend(caps);
        }
        if let Some(p) = seen.iter().position(|s| !s) {
            return bad(format!(
                "pool {p} has no machine (pools must be numbered 0..P)"
            ));
        }
        Ok(Ledger {
            horizon,
            resources,
            pools,
            pages: vec![Pages::default(); pool_of.len()],
            pool_of,
            price_capacity: capacity.clone(),
            capacity,
        })
    }

    /// The same machines and capacities with nothing committed.
    pub fn emptied(&self) -> Ledger {
        Ledger {
            horizon: self.horizon,
            resources: self.resources,
            pools: self.pools,
            pool_of: self.pool_of.clone(),
            capacity: self.capacity.clone(),
            price_capacity: self.price_capacity.clone(),
            pages: vec![Pages::default(); self.pool_of.len()],
        }
    }

    /// Number of slots `T`.
    pub fn horizon(&self) -> u32 {
        self.horizon
    }

    /// Number of resource types `R`.
    pub fn resources(&self) -> usize {
        self.resources
    }

    /// Number of machines.
    pub fn machines(&self) -> usize {
        self.pool_of.len()
    }

    /// Number of pools `P`.
    pub fn pools(&self) -> usize {
        self.pools
    }

    /// The pool of machine `m`, `None` for an unknown machine.
    pub fn pool_of(&self, m: MachineId) -> Option<PoolId> {
        self.pool_of.get(m.0 as usize).copied()
    }

    /// `C_κ = Σ_{m∈κ} Σ_r c_m^r`: the resource sum over the pool. It mixes
    /// units exactly as the OASiS paper does, so it depends on the units the
    /// job model chose.
    pub fn pool_capacity_sum(&self, pool: PoolId) -> f64 {
        self.pool_of
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == pool)
            .map(|(m, _)| {
                self.capacity[m * self.resources..(m + 1) * self.resources]
                    .iter()
                    .sum::<f64>()
            })
            .sum()
    }

    fn cap_index(&self, m: MachineId, r: ResourceId) -> Option<usize> {
        let (m, r) = (m.0 as usize, usize::from(r.0));
        (m < self.pool_of.len() && r < self.resources).then_some(m * self.resources + r)
    }

    /// The cell `(m, r, t)`, `None` outside the ledger.
    pub(crate) fn cell_index(&self, m: MachineId, r: ResourceId, t: u32) -> Option<Cell> {
        (usize::try_from(m.0).is_ok_and(|mi| mi < self.pool_of.len())
            && usize::from(r.0) < self.resources
            && t < self.horizon)
            .then_some(Cell {
                machine: m.0,
                slot: t,
                resource: r.0,
            })
    }

    /// The stored amount of a cell (0 when its page was never touched).
    fn amount(&self, c: Cell) -> f64 {
        let page = c.slot / PAGE_SLOTS;
        let offset = (c.slot % PAGE_SLOTS) as usize * self.resources + usize::from(c.resource);
        self.pages
            .get(c.machine as usize)
            .and_then(|p| p.get(page))
            .and_then(|v| v.get(offset))
            .copied()
            .unwrap_or(0.0)
    }

    /// Capacity `c_m^r` (0 for an unknown machine or resource).
    pub fn capacity(&self, m: MachineId, r: ResourceId) -> f64 {
        self.cap_index(m, r).map_or(0.0, |i| self.capacity[i])
    }

    /// The same ledger with the capacity in the price exponent of machine
    /// `m`, resource `r` set to `c' ∈ [0, c]`: the price becomes
    /// `L·(U/L)^(g/c')`, reaching `U` once `g ≥ c'` (with `c' = 0`, as soon
    /// as anything is committed). Headroom prices: with `c' = c − δ + 1`
    /// (counts) or `c − δ` (amounts), `δ` the largest amount one plan can
    /// place in the cell, every plan blocked by the cell's residual meets
    /// the price `U` there, so the final dual is feasible whatever the
    /// demand sizes. The allocation–cost constant of the cell becomes
    /// `ln(U/L)·c/c'` (see `α_eff`).
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidInstance`] for an unknown machine or resource,
    /// or `c'` not in `[0, c]`.
    pub fn with_price_capacity(
        mut self,
        m: MachineId,
        r: ResourceId,
        c_prime: f64,
    ) -> Result<Self, OnlineError> {
        let Some(i) = self.cap_index(m, r) else {
            return Err(OnlineError::InvalidInstance {
                reason: format!("no {m}, {r} to set a price capacity for"),
            });
        };
        if !(c_prime >= 0.0 && c_prime <= self.capacity[i]) {
            return Err(OnlineError::InvalidInstance {
                reason: format!(
                    "{m}, {r}: price capacity {} is not in [0, {}]",
                    Num(c_prime),
                    Num(self.capacity[i])
                ),
            });
        }
        self.price_capacity[i] = c_prime;
        Ok(self)
    }

    /// `c'_m^r`, the capacity in the price exponent (the capacity unless
    /// [set](Self::with_price_capacity); 0 for an unknown machine or
    /// resource).
    pub fn price_capacity(&self, m: MachineId, r: ResourceId) -> f64 {
        self.cap_index(m, r).map_or(0.0, |i| self.price_capacity[i])
    }

    /// The exponent `g/c'` of the price, clamped into `[0, 1]` (with
    /// `c' = 0`: 1 once anything is committed, else 0).
    pub(crate) fn price_fill(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        let cp = self.price_capacity(m, r);
        let g = self.committed(m, r, t);
        if cp > 0.0 {
            (g / cp).clamp(0.0, 1.0)
        } else if g > 0.0 {
            1.0
        } else {
            0.0
        }
    }

    /// Committed amount `g_m^r(t)` (0 outside the ledger).
    pub fn committed(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        self.cell_index(m, r, t).map_or(0.0, |c| self.amount(c))
    }

    /// Residual capacity `c_m^r − g_m^r(t)`, never below 0 (0 outside the
    /// ledger).
    pub fn residual(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        match self.cell_index(m, r, t) {
            Some(c) => (self.capacity(m, r) - self.amount(c)).max(0.0),
            None => 0.0,
        }
    }

    /// Fill fraction `g/c` clamped into `[0, 1]` (0 when `c = 0`).
    pub fn fill(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        let c = self.capacity(m, r);
        if c > 0.0 {
            (self.committed(m, r, t) / c).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Adds `amount` to cell `c` (from [`Ledger::cell_index`]), creating
    /// its page on the first non-zero amount.
    pub(crate) fn add(&mut self, c: Cell, amount: f64) {
        if amount == 0.0 {
            return;
        }
        let resources = self.resources;
        let Some(pages) = self.pages.get_mut(c.machine as usize) else {
            return;
        };
        let page = pages.get_or_insert(c.slot / PAGE_SLOTS, PAGE_SLOTS as usize * resources);
        let offset = (c.slot % PAGE_SLOTS) as usize * resources + usize::from(c.resource);
        if let Some(v) = page.get_mut(offset) {
            *v += amount;
        }
    }

    /// Sets the committed amount of a cell (a session's ledger, synced
    /// from the shared cluster state before each decision: amounts may go
    /// down after a release).
    pub(crate) fn set(&mut self, c: Cell, amount: f64) {
        let resources = self.resources;
        let Some(pages) = self.pages.get_mut(c.machine as usize) else {
            return;
        };
        let page = c.slot / PAGE_SLOTS;
        if amount == 0.0 && pages.get(page).is_none() {
            return;
        }
        let page = pages.get_or_insert(page, PAGE_SLOTS as usize * resources);
        let offset = (c.slot % PAGE_SLOTS) as usize * resources + usize::from(c.resource);
        if let Some(v) = page.get_mut(offset) {
            *v = amount;
        }
    }

    /// Grows the horizon to `horizon` slots (a session's planning window
    /// moving on); a smaller value changes nothing.
    pub(crate) fn grow_horizon(&mut self, horizon: u32) {
        self.horizon = self.horizon.max(horizon);
    }

    /// Drops the pages that end at or before `slot`: their cells read as
    /// never committed (priced at `L`), so a session's memory follows its
    /// planning window, not its age.
    pub(crate) fn forget_before(&mut self, slot: u32) {
        let pages = slot / PAGE_SLOTS;
        for p in &mut self.pages {
            let near = (pages as usize).min(p.near.len());
            for page in &mut p.near[..near] {
                *page = None;
            }
            p.far.retain(|&k, _| k >= pages);
        }
    }

    /// Every cell as `(machine, resource, slot)`, in (machine, slot,
    /// resource) order (`machines × T × R` items: for small ledgers).
    pub(crate) fn cells(&self) -> impl Iterator<Item = (MachineId, ResourceId, u32)> + '_ {
        (0..self.pool_of.len()).flat_map(move |m| {
            (0..self.horizon).flat_map(move |t| {
                (0..self.resources).map(move |r| (MachineId(m as u32), ResourceId(r as u8), t))
            })
        })
    }

    /// The slots of machine `m` in pages where something was committed,
    /// ascending (clamped to the horizon); empty for an unknown machine.
    pub(crate) fn touched_slots(&self, m: MachineId) -> impl Iterator<Item = u32> + '_ {
        let horizon = self.horizon;
        self.pages
            .get(m.0 as usize)
            .into_iter()
            .flat_map(Pages::touched)
            .flat_map(move |page| {
                let first = page.saturating_mul(PAGE_SLOTS);
                first..first.saturating_add(PAGE_SLOTS).min(horizon)
            })
    }
}
