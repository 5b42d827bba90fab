//! Prices of ledger cells under price bounds: the read-only [`PriceView`]
//! that oracles see, and the price mass of the online dual. This module
//! depends on both the ledger and the bounds, which do not depend on it (the
//! bounds read the ledger's capacities; the ledger knows no prices).

use crate::model::MachineId;

use super::bounds::PriceBounds;
use super::ledger::{Ledger, ResourceId};

/// Up to this many cells (machines × slots × resources), the price mass of
/// [`Ledger::price_mass`] is summed cell by cell in (machine, slot, resource)
/// order; above, untouched cells are summed in closed form.
const DENSE_SUM_CELLS: u128 = 1 << 22;

impl Ledger {
    /// `Σ_cells c·p`: capacity times price over every cell with `c > 0`, the
    /// price part of the online dual.
    ///
    /// Cells never committed to are priced at `L_κ`, so their part is summed
    /// in closed form per (machine, resource): the cost is in the cells
    /// committed, not in the horizon. Ledgers of at most 2²² cells are summed
    /// cell by cell instead, in (machine, slot, resource) order, so that
    /// their results do not depend on the page layout.
    pub(crate) fn price_mass(&self, bounds: &PriceBounds) -> f64 {
        self.price_mass_with(bounds, DENSE_SUM_CELLS)
    }

    pub(crate) fn price_mass_with(&self, bounds: &PriceBounds, dense_limit: u128) -> f64 {
        let cell_price = |m: MachineId, r: ResourceId, t: u32| {
            let c = self.capacity(m, r);
            if c > 0.0 {
                c * ledger_ln_price(self, bounds, m, r, t).exp()
            } else {
                0.0
            }
        };
        let cells = self.machines() as u128 * u128::from(self.horizon()) * self.resources() as u128;
        if cells <= dense_limit {
            return self.cells().map(|(m, r, t)| cell_price(m, r, t)).sum();
        }
        let mut total = 0.0;
        for mi in 0..self.machines() {
            let m = MachineId(mi as u32);
            let ln_l = self.pool_of(m).map_or(f64::INFINITY, |p| bounds.ln_l(p));
            for ri in 0..self.resources() {
                let r = ResourceId(ri as u8);
                let c = self.capacity(m, r);
                if c <= 0.0 {
                    continue;
                }
                let mut touched = 0u64;
                for t in self.touched_slots(m) {
                    total += cell_price(m, r, t);
                    touched += 1;
                }
                let untouched = u64::from(self.horizon()) - touched;
                total += untouched as f64 * c * ln_l.exp();
            }
        }
        total
    }
}

/// How a [`PriceView`] reports residual capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResidualMode {
    /// `c − g`: what the job may still use (admission).
    Ledger,
    /// `c`: every plan that fits the empty cluster (final dual, witnesses).
    Capacity,
}

#[derive(Debug, Clone)]
enum Source<'a> {
    Ledger {
        ledger: &'a Ledger,
        bounds: &'a PriceBounds,
        mode: ResidualMode,
    },
    Explicit(Box<ExplicitCells>),
    /// The ledger's residuals at price 0 everywhere inside it.
    Unpriced(&'a Ledger),
}

#[derive(Debug, Clone)]
struct ExplicitCells {
    machines: usize,
    resources: usize,
    horizon: u32,
    ln_price: Vec<f64>,
    residual: Vec<f64>,
    capacity: Vec<f64>,
}

impl ExplicitCells {
    fn index(&self, m: MachineId, r: ResourceId, t: u32) -> Option<usize> {
        let (mi, ri) = (m.0 as usize, usize::from(r.0));
        (mi < self.machines && ri < self.resources && t < self.horizon)
            .then_some((mi * self.horizon as usize + t as usize) * self.resources + ri)
    }
}

/// Read-only prices and residual capacities, as seen by a
/// [`PricingOracle`](super::PricingOracle).
///
/// Cells outside the ledger (unknown machine or resource, slot `≥ T`) have
/// residual and capacity 0 and price `+∞`, so an oracle never places there.
#[derive(Debug, Clone)]
pub struct PriceView<'a> {
    source: Source<'a>,
}

impl<'a> PriceView<'a> {
    /// Current prices and residuals of `ledger` under `bounds`.
    pub fn new(ledger: &'a Ledger, bounds: &'a PriceBounds) -> Self {
        PriceView {
            source: Source::Ledger {
                ledger,
                bounds,
                mode: ResidualMode::Ledger,
            },
        }
    }

    /// Current prices of `ledger`, but the residual of every cell is its
    /// full capacity: the plans searched are all plans that fit the empty
    /// cluster (used for the final dual `D_end` and for witnesses).
    pub fn with_full_capacity(ledger: &'a Ledger, bounds: &'a PriceBounds) -> Self {
        PriceView {
            source: Source::Ledger {
                ledger,
                bounds,
                mode: ResidualMode::Capacity,
            },
        }
    }

    /// The residuals of `ledger` with every price inside it 0 (cells
    /// outside it are priced `+∞` as always): an oracle then returns the
    /// plan of largest utility that fits, for schedulers that use an oracle
    /// without prices (ablations of the pricing). Needs no bounds, since
    /// none of `U` and `L` is read.
    ///
    /// ```
    /// use dmlsched::model::MachineId;
    /// use dmlsched::online::{Ledger, PoolId, PriceView, ResourceId};
    /// let ledger = Ledger::new(4, 1, vec![(PoolId(0), vec![2.0])])?;
    /// let view = PriceView::unpriced(&ledger);
    /// assert_eq!(view.price(MachineId(0), ResourceId(0), 3), 0.0);
    /// assert_eq!(view.residual(MachineId(0), ResourceId(0), 3), 2.0);
    /// assert_eq!(view.price(MachineId(0), ResourceId(0), 4), f64::INFINITY);
    /// # Ok::<(), dmlsched::online::OnlineError>(())
    /// ```
    pub fn unpriced(ledger: &'a Ledger) -> Self {
        PriceView {
            source: Source::Unpriced(ledger),
        }
    }

    /// A view with arbitrary per-cell prices and residuals, bypassing ledger
    /// and bounds: for oracle unit tests. The
    /// capacity of `(m, r)` is the largest residual over the slots. Negative
    /// or NaN values are read as 0.
    #[doc(hidden)]
    pub fn from_explicit(
        machines: usize,
        resources: usize,
        horizon: u32,
        price: impl Fn(MachineId, ResourceId, u32) -> f64,
        residual: impl Fn(MachineId, ResourceId, u32) -> f64,
    ) -> PriceView<'static> {
        let mut cells = ExplicitCells {
            machines,
            resources,
            horizon,
            ln_price: Vec::new(),
            residual: Vec::new(),
            capacity: vec![0.0; machines * resources],
        };
        let clean = |v: f64| if v > 0.0 { v } else { 0.0 };
        for m in 0..machines {
            for t in 0..horizon {
                for r in 0..resources {
                    let (mid, rid) = (MachineId(m as u32), ResourceId(r as u8));
                    cells.ln_price.push(clean(price(mid, rid, t)).ln());
                    let res = clean(residual(mid, rid, t));
                    cells.residual.push(res);
                    let c = &mut cells.capacity[m * resources + r];
                    *c = c.max(res);
                }
            }
        }
        PriceView {
            source: Source::Explicit(Box::new(cells)),
        }
    }

    /// Number of slots `T`.
    pub fn horizon(&self) -> u32 {
        match &self.source {
            Source::Ledger { ledger, .. } | Source::Unpriced(ledger) => ledger.horizon(),
            Source::Explicit(c) => c.horizon,
        }
    }

    /// Number of machines.
    pub fn machines(&self) -> usize {
        match &self.source {
            Source::Ledger { ledger, .. } | Source::Unpriced(ledger) => ledger.machines(),
            Source::Explicit(c) => c.machines,
        }
    }

    /// Number of resource types.
    pub fn resources(&self) -> usize {
        match &self.source {
            Source::Ledger { ledger, .. } | Source::Unpriced(ledger) => ledger.resources(),
            Source::Explicit(c) => c.resources,
        }
    }

    /// `ln p_m^r(t)` (`+∞` outside the ledger, `−∞` for a zero explicit
    /// price and inside an [unpriced](Self::unpriced) ledger).
    pub fn ln_price(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        match &self.source {
            Source::Ledger { ledger, bounds, .. } => ledger_ln_price(ledger, bounds, m, r, t),
            Source::Unpriced(ledger) => {
                if ledger.cell_index(m, r, t).is_some() {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Source::Explicit(c) => c.index(m, r, t).map_or(f64::INFINITY, |i| c.ln_price[i]),
        }
    }

    /// `p_m^r(t) = exp(ln p)` (may underflow to 0, which is harmless).
    pub fn price(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        self.ln_price(m, r, t).exp()
    }

    /// Residual capacity the job may use in the cell.
    pub fn residual(&self, m: MachineId, r: ResourceId, t: u32) -> f64 {
        match &self.source {
            Source::Ledger { ledger, mode, .. } => match mode {
                ResidualMode::Ledger => ledger.residual(m, r, t),
                ResidualMode::Capacity => {
                    if t < ledger.horizon() {
                        ledger.capacity(m, r)
                    } else {
                        0.0
                    }
                }
            },
            Source::Unpriced(ledger) => ledger.residual(m, r, t),
            Source::Explicit(c) => c.index(m, r, t).map_or(0.0, |i| c.residual[i]),
        }
    }

    /// Capacity `c_m^r`.
    pub fn capacity(&self, m: MachineId, r: ResourceId) -> f64 {
        match &self.source {
            Source::Ledger { ledger, .. } | Source::Unpriced(ledger) => ledger.capacity(m, r),
            Source::Explicit(c) => {
                let (mi, ri) = (m.0 as usize, usize::from(r.0));
                if mi < c.machines && ri < c.resources {
                    c.capacity[mi * c.resources + ri]
                } else {
                    0.0
                }
            }
        }
    }

    /// `Σ p·q` over `consumption`, the cost the framework recomputes.
    pub fn cost_of(&self, consumption: impl IntoIterator<Item = super::Consumption>) -> f64 {
        consumption
            .into_iter()
            .filter(|c| c.amount != 0.0)
            .map(|c| self.price(c.machine, c.resource, c.slot) * c.amount)
            .sum()
    }
}

/// `ln p = ln L_κ + (g/c')·(ln U_κ^r − ln L_κ)` with `g/c'` clamped into
/// `[0, 1]` (`c'` the price capacity, `c` unless headroom is set), and
/// `p = L_κ` for `c = 0` or undefined `U_κ^r` (no job demands `r` in the
/// pool; the cell is never consumed).
pub(crate) fn ledger_ln_price(
    ledger: &Ledger,
    bounds: &PriceBounds,
    m: MachineId,
    r: ResourceId,
    t: u32,
) -> f64 {
    let Some(pool) = ledger.pool_of(m) else {
        return f64::INFINITY;
    };
    if ledger.cell_index(m, r, t).is_none() {
        return f64::INFINITY;
    }
    let ln_l = bounds.ln_l(pool);
    match bounds.ln_u(pool, r) {
        Some(ln_u) if ledger.capacity(m, r) > 0.0 => {
            let f = ledger.price_fill(m, r, t);
            // Exact at both ends and non-decreasing in `f` despite rounding.
            if f >= 1.0 {
                ln_u
            } else {
                (ln_l + f * (ln_u - ln_l)).min(ln_u)
            }
        }
        _ => ln_l,
    }
}
