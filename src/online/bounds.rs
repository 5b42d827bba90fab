//! The price constants `U_κ^r`, `L_κ`, `η_κ` and `α` ([algorithms guide,
//! section 6.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#online-price-bounds)).

use super::error::OnlineError;
use super::ledger::{Ledger, PoolId, ResourceId};
use crate::model::units::Num;

/// Smallest positive demand entry accepted (keeps `U = max f/d` finite, so
/// no price can overflow).
pub const MIN_POSITIVE_DEMAND: f64 = 1e-12;

/// One unit kind a job may place: its pool and per-unit demand vector
/// `d ∈ R^R_{≥0}` (at least one entry positive).
#[derive(Debug, Clone, PartialEq)]
pub struct UnitDemand {
    /// Pool the unit is placed in.
    pub pool: PoolId,
    /// Demand per resource, in the ledger's units.
    pub demand: Vec<f64>,
}

/// What a job model tells the framework about one job: schedulability, the
/// utility bounds, unit demands per pool and the normalisers `m_iκ`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundInputs {
    /// Arrival slot `a_i`, 0-based (`0 ≤ a_i < T`).
    pub arrival: u32,
    /// `false` if no plan exists even on the empty cluster; such a job is
    /// rejected without calling the oracle and excluded from all bounds.
    pub schedulable: bool,
    /// `ln f_i(δ_min)`: log of an upper bound on any utility the job can reach.
    pub ln_u_max: f64,
    /// `ln f_i(δ_max)`: log of the smallest utility of any admissible plan
    /// (`−∞` when it is 0).
    pub ln_u_min: f64,
    /// Unit kinds the job may place.
    pub unit_demands: Vec<UnitDemand>,
    /// `(κ, m_{iκ} > 0)`: resource-slot consumption of a reference feasible
    /// plan in pool `κ` (`Σ_units Σ_slots Σ_r d^r`, mixed units as in the
    /// paper).
    pub normalisers: Vec<(PoolId, f64)>,
}

impl BoundInputs {
    /// Checks the inputs of job `job` against a ledger of `pools` pools,
    /// `resources` resources and horizon `horizon` (arrival inside the horizon;
    /// every unit demand with a positive entry and no entry in `(0, 1e-12)`).
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidInstance`] naming the job.
    pub fn validate(&self, job: usize, ledger: &Ledger) -> Result<(), OnlineError> {
        let bad = |what: String| {
            Err(OnlineError::InvalidInstance {
                reason: format!("job {job}: {what}"),
            })
        };
        if self.arrival >= ledger.horizon() {
            return bad(format!(
                "arrival slot {} is not in 0..{}",
                self.arrival,
                ledger.horizon()
            ));
        }
        if !self.schedulable {
            return Ok(());
        }
        if self.ln_u_max.is_nan() || self.ln_u_max == f64::INFINITY {
            return bad(format!(
                "ln_u_max = {} is not a number < +∞",
                Num(self.ln_u_max)
            ));
        }
        if self.ln_u_min.is_nan()
            || self.ln_u_min > self.ln_u_max + 1e-9 * self.ln_u_max.abs().max(1.0)
        {
            return bad(format!(
                "ln_u_min = {} exceeds ln_u_max = {} (utility increases)",
                Num(self.ln_u_min),
                Num(self.ln_u_max)
            ));
        }
        for (k, u) in self.unit_demands.iter().enumerate() {
            if usize::from(u.pool.0) >= ledger.pools() {
                return bad(format!("unit kind {k}: unknown {}", u.pool));
            }
            if u.demand.len() != ledger.resources() {
                return bad(format!(
                    "unit kind {k}: {} demand entries, expected {}",
                    u.demand.len(),
                    ledger.resources()
                ));
            }
            if let Some(d) = u
                .demand
                .iter()
                .find(|d| !d.is_finite() || **d < 0.0 || (**d > 0.0 && **d < MIN_POSITIVE_DEMAND))
            {
                return bad(format!(
                    "unit kind {k}: demand entry {} is negative, non-finite or in (0, 1e-12)",
                    Num(*d)
                ));
            }
            if u.demand.iter().all(|d| *d == 0.0) {
                return bad(format!("unit kind {k} consumes nothing"));
            }
        }
        for (pool, m) in &self.normalisers {
            if usize::from(pool.0) >= ledger.pools() {
                return bad(format!("normaliser for unknown {pool}"));
            }
            if !m.is_finite() || *m <= 0.0 {
                return bad(format!(
                    "normaliser {} for {pool} is not positive and finite",
                    Num(*m)
                ));
            }
        }
        Ok(())
    }
}

/// How `L_κ` is derived from the job list.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BoundsRule {
    /// The clairvoyant `η` rule, `η_κ = max(1, max_i T·C_κ/m_iκ)` (the
    /// smallest value with `η_κ ≥ 1` and `1/η_κ ≤ m_iκ/(T·C_κ)`) and
    /// `L_κ = min_i (u_min_i / m_{iκ}) / (max(4, 2P)·η_κ)`: the divisor
    /// `max(4, 2P)` keeps `D_0 ≤ OPT/2` for any number `P` of pools (the
    /// OASiS paper's 4 is enough for at most two pools).
    #[cfg_attr(feature = "serde", serde(alias = "Eta"))]
    Eta,
    /// The value floor (the crate's alternative to the η rule, which can make
    /// α huge with sigmoid utilities): `L_κ = v_floor / (4·P·T·C_κ)`, so
    /// `D_0 = v_floor/4`, valid when some job alone on the empty
    /// cluster reaches utility `≥ 2·D_0` (checked at the end of the run).
    #[cfg_attr(feature = "serde", serde(alias = "ValueFloor"))]
    ValueFloor {
        /// `v_floor > 0`, at most the utility of a job feasible alone.
        v_floor: f64,
    },
}

/// How the price bounds `U`, `L` are derived: the η rule or the value floor
/// ([algorithms guide, section 6.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#online-price-bounds); OASiS runs
/// under both, [section 7.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-bounds)).
///
/// In JSON: `"eta"`, `"value_floor"` (the default floor) or
/// `{"value_floor": {"v_floor": 2.0}}`; the CamelCase names (`"Eta"`,
/// `"ValueFloor"`) are read too.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BoundsChoice {
    /// The paper's η rule (clairvoyant, from every job).
    #[default]
    Eta,
    /// The value floor `L_κ = v_floor/(4·P·T·C_κ)`; `None` takes
    /// [`default_v_floor`].
    ValueFloor {
        /// `v_floor > 0`, or `None` for the default.
        v_floor: Option<f64>,
    },
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for BoundsChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        #[derive(serde::Deserialize, Default)]
        #[serde(default, deny_unknown_fields)]
        struct Floor {
            v_floor: Option<f64>,
        }
        let (name, body) = crate::error::enum_variant(d, &["eta", "value_floor"])?;
        let fields = |b: Option<serde_json::Value>| -> Result<Floor, D::Error> {
            b.map_or(Ok(Floor::default()), |b| {
                serde_json::from_value(b).map_err(|e| D::Error::custom(format!("{name}: {e}")))
            })
        };
        Ok(match name {
            "eta" => BoundsChoice::Eta,
            _ => BoundsChoice::ValueFloor {
                v_floor: fields(body)?.v_floor,
            },
        })
    }
}

impl BoundsChoice {
    /// `"eta"` or `"value-floor"`.
    pub fn name(&self) -> &'static str {
        match self {
            BoundsChoice::Eta => "eta",
            BoundsChoice::ValueFloor { .. } => "value-floor",
        }
    }
}

/// The default value floor (the rule of the GADGET-style ring-embedding
/// scheduler, with `ε_v = 10⁻³`), from every job's bound
/// inputs: `max(10⁻³·median_i f_i(δ_min,i), min_i f_i(T − 1 − a_i))` over
/// the schedulable jobs (`f_i(δ_min,i) = exp(ln_u_max)`,
/// `f_i(T − 1 − a_i) = exp(ln_u_min)`); `None` when it is not positive.
pub fn default_v_floor(inputs: &[BoundInputs]) -> Option<f64> {
    value_floor_from(inputs, 1e-3)
}

/// The value floor `max(ε_v·median_i f_i(δ_min,i), min_i f_i(T − 1 − a_i))`
/// over the schedulable jobs' bound inputs ([`default_v_floor`] is
/// `ε_v = 10⁻³`); `None` when it is not positive and finite (no schedulable
/// job, or `ε_v` not positive and every late utility 0). The median of an
/// even count is the upper one. It is at most `max_i f_i(δ_min,i)` when
/// `ε_v ≤ 1`.
///
/// ```
/// use dmlsched::online::{value_floor_from, BoundInputs};
/// let job = |best: f64, late: f64| BoundInputs {
///     arrival: 0, schedulable: true, ln_u_max: best.ln(), ln_u_min: late.ln(),
///     unit_demands: vec![], normalisers: vec![],
/// };
/// let jobs = [job(10.0, 0.0), job(40.0, 1.0), job(100.0, 2.0)];
/// // median 40, min late 0: max(0.01·40, 0) = 0.4
/// assert!((value_floor_from(&jobs, 0.01).unwrap() - 0.4).abs() < 1e-12);
/// ```
pub fn value_floor_from(inputs: &[BoundInputs], epsilon_v: f64) -> Option<f64> {
    let schedulable = || inputs.iter().filter(|b| b.schedulable);
    let mut best: Vec<f64> = schedulable().map(|b| b.ln_u_max.exp()).collect();
    if best.is_empty() {
        return None;
    }
    best.sort_by(f64::total_cmp);
    let late = schedulable()
        .map(|b| b.ln_u_min.exp())
        .fold(f64::INFINITY, f64::min);
    let v = (epsilon_v * best[best.len() / 2]).max(late);
    (v > 0.0 && v.is_finite()).then_some(v)
}

/// Where the bounds of a run come from (decides the certificate's validity).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum BoundsOrigin {
    /// Derived from the whole job list by a [`BoundsRule`] (clairvoyant).
    Derived(BoundsRule),
    /// User estimates ([`PriceBounds::explicit`]): the certificate's `2α`
    /// is marked not valid (`EstimatedBounds`).
    Explicit,
}

/// The price constants of a run: `ln L_κ` per pool and `ln U_κ^r` per pool
/// and resource (`None` = undefined, the price stays at `L_κ`), in log space.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PriceBounds {
    ln_l: Vec<f64>,
    ln_u: Vec<Vec<Option<f64>>>,
    ln_eta: Vec<Option<f64>>,
    origin: BoundsOrigin,
    u_scale: f64,
    l_allowance: f64,
    /// α of the η rule, when it could be derived from the same inputs.
    alpha_eta_rule: Option<f64>,
}

/// `ln U_κ^r = max_i max_{d^r > 0} (ln f_i(δ_min,i) − ln d^r)` from the
/// schedulable jobs (unschedulable jobs and zero demands are left out; with
/// no positive demand `U_κ^r` is undefined).
fn derive_ln_u(ledger: &Ledger, inputs: &[BoundInputs]) -> Vec<Vec<Option<f64>>> {
    let mut ln_u = vec![vec![None::<f64>; ledger.resources()]; ledger.pools()];
    for job in inputs
        .iter()
        .filter(|j| j.schedulable && j.ln_u_max.is_finite())
    {
        for unit in &job.unit_demands {
            for (r, d) in unit.demand.iter().enumerate() {
                if *d > 0.0 {
                    let v = job.ln_u_max - d.ln();
                    let slot = &mut ln_u[usize::from(unit.pool.0)][r];
                    *slot = Some(slot.map_or(v, |u| u.max(v)));
                }
            }
        }
    }
    ln_u
}

/// `(ln η_κ, ln L_κ)` of the η rule, with the divisor `max(4, 2P)` for `P`
/// pools.
fn derive_eta(
    ledger: &Ledger,
    inputs: &[BoundInputs],
    ln_u: &[Vec<Option<f64>>],
) -> Result<(Vec<f64>, Vec<f64>), OnlineError> {
    let pools = ledger.pools();
    let ln_t = f64::from(ledger.horizon()).ln();
    let divisor = (2.0 * pools as f64).max(4.0);
    let mut ln_eta = Vec::with_capacity(pools);
    let mut ln_l = Vec::with_capacity(pools);
    for k in 0..pools {
        let pool = PoolId(k as u16);
        let ln_c = ledger.pool_capacity_sum(pool).ln();
        let norms = || {
            inputs.iter().filter(|j| j.schedulable).flat_map(move |j| {
                j.normalisers
                    .iter()
                    .filter(move |(p, m)| *p == pool && *m > 0.0)
                    .map(move |(_, m)| (j, *m))
            })
        };
        if norms().next().is_none() {
            // No schedulable job uses the pool (every job rejected up
            // front, or none places units there): its prices are never
            // read, so any `L` below its `U` does.
            let below_u = ln_u.get(k).map_or(0.0, |row| {
                row.iter().flatten().fold(0.0_f64, |a, &u| a.min(u))
            });
            ln_eta.push(0.0);
            ln_l.push(below_u - 1.0);
            continue;
        }
        let eta = norms()
            .map(|(_, m)| ln_t + ln_c - m.ln())
            .fold(0.0_f64, f64::max);
        let min = norms()
            .filter(|(j, _)| j.ln_u_min.is_finite())
            .map(|(j, m)| j.ln_u_min - m.ln())
            .fold(f64::INFINITY, f64::min);
        if !min.is_finite() {
            return Err(OnlineError::CannotDeriveBounds { pool });
        }
        ln_eta.push(eta);
        ln_l.push(-divisor.ln() - eta + min);
    }
    Ok((ln_eta, ln_l))
}

/// Checks that `L_κ = v_floor/(4·P·T·C_κ)` stays below every defined
/// `U_κ^r`: `v_floor` must be below `min_{κ,r} U_κ^r·4·P·T·C_κ`.
///
/// # Errors
///
/// [`OnlineError::ValueFloorTooLarge`] naming the value and that limit.
fn value_floor_in_range(
    ledger: &Ledger,
    ln_u: &[Vec<Option<f64>>],
    v_floor: f64,
) -> Result<(), OnlineError> {
    let ln_4pt = (4.0 * ledger.pools() as f64 * f64::from(ledger.horizon())).ln();
    let ln_limit = ln_u
        .iter()
        .enumerate()
        .flat_map(|(k, row)| {
            let ln_c = ledger.pool_capacity_sum(PoolId(k as u16)).ln();
            row.iter().flatten().map(move |u| u + ln_4pt + ln_c)
        })
        .fold(f64::INFINITY, f64::min);
    if ln_limit.is_nan() || v_floor.ln() < ln_limit {
        return Ok(());
    }
    Err(OnlineError::ValueFloorTooLarge {
        v_floor,
        limit: ln_limit.exp(),
    })
}

impl PriceBounds {
    /// Derives the bounds from the bound inputs of **all** jobs (the
    /// clairvoyant mode; unschedulable jobs are skipped), by `rule`.
    ///
    /// # Errors
    ///
    /// * [`OnlineError::InvalidInstance`] for invalid inputs;
    /// * [`OnlineError::CannotDeriveBounds`] (η rule) when a pool has no job
    ///   with `f(δ_max) > 0` and a normaliser there;
    /// * [`OnlineError::InvalidPriceBounds`] when a bound is not finite or
    ///   some `U ≤ L`, or `v_floor` is not positive and finite.
    pub fn derive(
        ledger: &Ledger,
        inputs: &[BoundInputs],
        rule: BoundsRule,
    ) -> Result<Self, OnlineError> {
        for (i, j) in inputs.iter().enumerate() {
            j.validate(i, ledger)?;
        }
        let ln_u = derive_ln_u(ledger, inputs);
        let eta = derive_eta(ledger, inputs, &ln_u);
        let (ln_l, ln_eta) = match rule {
            BoundsRule::Eta => {
                let (ln_eta, ln_l) = eta.clone()?;
                (ln_l, ln_eta.into_iter().map(Some).collect())
            }
            BoundsRule::ValueFloor { v_floor } => {
                if !(v_floor.is_finite() && v_floor > 0.0) {
                    return Err(OnlineError::InvalidPriceBounds {
                        pool: PoolId(0),
                        resource: None,
                        reason: format!("v_floor = {} is not positive and finite", Num(v_floor)),
                    });
                }
                let p = ledger.pools() as f64;
                let t = f64::from(ledger.horizon());
                value_floor_in_range(ledger, &ln_u, v_floor)?;
                let ln_l = (0..ledger.pools())
                    .map(|k| {
                        v_floor.ln()
                            - (4.0 * p * t * ledger.pool_capacity_sum(PoolId(k as u16))).ln()
                    })
                    .collect();
                (ln_l, vec![None; ledger.pools()])
            }
        };
        let mut bounds = PriceBounds {
            ln_l,
            ln_u: ln_u.clone(),
            ln_eta,
            origin: BoundsOrigin::Derived(rule),
            u_scale: 1.0,
            l_allowance: 1.0,
            alpha_eta_rule: None,
        };
        bounds.validate()?;
        bounds.alpha_eta_rule = match eta {
            Ok((_, ln_l)) => Some(alpha_of(&ln_l, &ln_u)),
            Err(_) => None,
        };
        Ok(bounds)
    }

    /// [`derive`](Self::derive) with [`BoundsRule::Eta`].
    ///
    /// # Errors
    ///
    /// As [`derive`](Self::derive).
    pub fn from_jobs(ledger: &Ledger, inputs: &[BoundInputs]) -> Result<Self, OnlineError> {
        Self::derive(ledger, inputs, BoundsRule::Eta)
    }

    /// [`derive`](Self::derive) with [`BoundsRule::ValueFloor`].
    ///
    /// # Errors
    ///
    /// As [`derive`](Self::derive).
    pub fn value_floor(
        ledger: &Ledger,
        inputs: &[BoundInputs],
        v_floor: f64,
    ) -> Result<Self, OnlineError> {
        Self::derive(ledger, inputs, BoundsRule::ValueFloor { v_floor })
    }

    /// User estimates: `ln_l[κ]` and `ln_u[κ][r]` (`None` = undefined). The
    /// certificate's `2α` is then marked not valid (`EstimatedBounds`).
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidPriceBounds`] when the shapes differ, a bound is
    /// not finite, or some `U ≤ L`.
    pub fn explicit(ln_l: Vec<f64>, ln_u: Vec<Vec<Option<f64>>>) -> Result<Self, OnlineError> {
        if ln_l.len() != ln_u.len() {
            return Err(OnlineError::InvalidPriceBounds {
                pool: PoolId(0),
                resource: None,
                reason: format!(
                    "{} values of ln L but {} rows of ln U",
                    ln_l.len(),
                    ln_u.len()
                ),
            });
        }
        let bounds = PriceBounds {
            ln_eta: vec![None; ln_l.len()],
            ln_l,
            ln_u,
            origin: BoundsOrigin::Explicit,
            u_scale: 1.0,
            l_allowance: 1.0,
            alpha_eta_rule: None,
        };
        bounds.validate()?;
        Ok(bounds)
    }

    /// Multiplies every `U_κ^r` by `φ > 0` (`ln U += ln φ`), keeping `L`
    /// (OASiS Fig. 6). The `2α` is marked not valid when `φ ≠ 1`.
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidPriceBounds`] when `φ` is not positive and
    /// finite or some scaled `U ≤ L`.
    pub fn with_u_scale(mut self, phi: f64) -> Result<Self, OnlineError> {
        if !(phi.is_finite() && phi > 0.0) {
            return Err(OnlineError::InvalidPriceBounds {
                pool: PoolId(0),
                resource: None,
                reason: format!("u_scale φ = {} is not positive and finite", Num(phi)),
            });
        }
        let ln_phi = phi.ln();
        for u in self.ln_u.iter_mut().flatten().flatten() {
            *u += ln_phi;
        }
        self.u_scale *= phi;
        self.validate()?;
        Ok(self)
    }

    /// Divides every `L_κ` by `ρ0 ≥ 1`, for cost-approximate oracles: if every
    /// job's realised factor is at most `ρ0`, the prices `ρ0·p_final` give a
    /// feasible dual and `OPT ≤ 2α'ρ0·ALG` with `α'` the `α` of the shrunk
    /// `L`.
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidPriceBounds`] when `ρ0 < 1` or not finite.
    pub fn with_l_allowance(mut self, rho0: f64) -> Result<Self, OnlineError> {
        if !(rho0.is_finite() && rho0 >= 1.0) {
            return Err(OnlineError::InvalidPriceBounds {
                pool: PoolId(0),
                resource: None,
                reason: format!("L allowance ρ0 = {} is not a finite number ≥ 1", Num(rho0)),
            });
        }
        for l in &mut self.ln_l {
            *l -= rho0.ln();
        }
        self.l_allowance *= rho0;
        self.validate()?;
        Ok(self)
    }

    fn validate(&self) -> Result<(), OnlineError> {
        for (k, (ln_l, row)) in self.ln_l.iter().zip(&self.ln_u).enumerate() {
            let pool = PoolId(k as u16);
            if !ln_l.is_finite() {
                return Err(OnlineError::InvalidPriceBounds {
                    pool,
                    resource: None,
                    reason: format!("ln L = {} is not finite", Num(*ln_l)),
                });
            }
            for (r, u) in row.iter().enumerate() {
                if let Some(u) = u
                    && !(u.is_finite() && u > ln_l)
                {
                    return Err(OnlineError::InvalidPriceBounds {
                        pool,
                        resource: Some(ResourceId(r as u8)),
                        reason: format!(
                            "ln U = {} is not finite and > ln L = {}",
                            Num(*u),
                            Num(*ln_l)
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Checks that the bounds have the ledger's shape (pools, resources).
    pub(crate) fn fits(&self, ledger: &Ledger) -> Result<(), OnlineError> {
        if self.ln_l.len() != ledger.pools()
            || self.ln_u.iter().any(|row| row.len() != ledger.resources())
        {
            return Err(OnlineError::InvalidPriceBounds {
                pool: PoolId(0),
                resource: None,
                reason: format!(
                    "bounds for {} pools do not match a ledger with {} pools and {} resources",
                    self.ln_l.len(),
                    ledger.pools(),
                    ledger.resources()
                ),
            });
        }
        Ok(())
    }

    /// `ln L_κ` (`+∞` for an unknown pool).
    pub fn ln_l(&self, pool: PoolId) -> f64 {
        self.ln_l
            .get(usize::from(pool.0))
            .copied()
            .unwrap_or(f64::INFINITY)
    }

    /// `ln U_κ^r`, `None` when undefined (no unit kind demands `r` in `κ`).
    pub fn ln_u(&self, pool: PoolId, r: ResourceId) -> Option<f64> {
        self.ln_u
            .get(usize::from(pool.0))
            .and_then(|row| row.get(usize::from(r.0)).copied().flatten())
    }

    /// Why these bounds do not cover a job with `inputs`: a unit whose
    /// value per unit of some resource, `f_i(δ_min)/d^r`, is above that
    /// resource's `U_κ^r` (or has no `U`), so a full cell could still be
    /// worth buying for it — the premise of the `2α` analysis. `None` when
    /// they cover it (or it is unschedulable: it is rejected whatever the
    /// prices).
    pub fn uncovered(&self, inputs: &BoundInputs) -> Option<String> {
        if !inputs.schedulable || !inputs.ln_u_max.is_finite() {
            return None;
        }
        for unit in &inputs.unit_demands {
            for (r, &d) in unit.demand.iter().enumerate() {
                if d <= 0.0 {
                    continue;
                }
                let v = inputs.ln_u_max - d.ln();
                let resource = ResourceId(r as u8);
                match self.ln_u(unit.pool, resource) {
                    Some(u) if v <= u + 1e-9 * u.abs().max(1.0) => {}
                    Some(u) => {
                        return Some(format!(
                            "value per unit {} of resource {r} in pool {} is above U = {}",
                            Num(v.exp()),
                            unit.pool.0,
                            Num(u.exp())
                        ));
                    }
                    None => {
                        return Some(format!(
                            "resource {r} in pool {} has no U, and the job uses it",
                            unit.pool.0
                        ));
                    }
                }
            }
        }
        None
    }

    /// `ln η_κ` of the η rule (`None` for other origins).
    pub fn ln_eta(&self, pool: PoolId) -> Option<f64> {
        self.ln_eta.get(usize::from(pool.0)).copied().flatten()
    }

    /// `α_cell = ln(U_κ^r / L_κ)`, 0 when `U` is undefined.
    pub fn alpha_cell(&self, pool: PoolId, r: ResourceId) -> f64 {
        self.ln_u(pool, r).map_or(0.0, |u| u - self.ln_l(pool))
    }

    /// `α = max(1, max_{κ,r} ln(U_κ^r/L_κ))` over defined `U` (with every
    /// override applied; with an `L` allowance `ρ0` this is the `α'` of the
    /// shrunk `L`, which enters `OPT ≤ 2α'ρ0·ALG`).
    pub fn alpha(&self) -> f64 {
        alpha_of(&self.ln_l, &self.ln_u)
    }

    /// α the η rule would give on the same job list (`None` when it cannot
    /// be derived or the bounds are explicit), reported beside the α in use:
    /// with sigmoid utilities it runs into the thousands, against tens under
    /// the value floor.
    pub fn alpha_eta_rule(&self) -> Option<f64> {
        self.alpha_eta_rule
    }

    /// Where the bounds come from.
    pub fn origin(&self) -> &BoundsOrigin {
        &self.origin
    }

    /// The `φ` of [`with_u_scale`](Self::with_u_scale) (1 when not used).
    pub fn u_scale(&self) -> f64 {
        self.u_scale
    }

    /// The `ρ0` of [`with_l_allowance`](Self::with_l_allowance) (1 when not
    /// used).
    pub fn l_allowance(&self) -> f64 {
        self.l_allowance
    }

    /// Number of pools.
    pub fn pools(&self) -> usize {
        self.ln_l.len()
    }
}

fn alpha_of(ln_l: &[f64], ln_u: &[Vec<Option<f64>>]) -> f64 {
    ln_l.iter()
        .zip(ln_u)
        .flat_map(|(l, row)| row.iter().flatten().map(move |u| u - l))
        .fold(1.0, f64::max)
}
