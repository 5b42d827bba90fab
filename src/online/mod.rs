//! The generic online primal–dual admission framework
//! ([algorithms guide, section 6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#online)), shared by OASiS and the other
//! pricing schedulers.
//!
//! # The maths
//!
//! A [`Ledger`] holds the committed amount `g_m^r(t)` of every (machine,
//! resource, slot) cell, with capacity `c_m^r`; every machine belongs to one
//! pool `κ`. The unit price of a cell is exponential in its fill fraction,
//! computed in log space:
//!
//! ```text
//! p_m^r(t) = L_κ · (U_κ^r / L_κ)^(g/c),   ln p = ln L_κ + (g/c)·(ln U_κ^r − ln L_κ)
//! ```
//!
//! with `p = L_κ` when `c = 0` or `U_κ^r` is undefined. Headroom prices
//! ([`Ledger::with_price_capacity`]) replace `c` in the exponent by
//! `c' ≤ c`, so a cell is priced at `U` before it is full; the cell's
//! allocation–cost constant becomes `ln(U/L)·c/c'`. [`PriceBounds`] derive
//! the constants from every job's [`BoundInputs`] (with the crate's
//! corrections to the OASiS paper's formulas: `U` at the smallest achievable
//! elapsed time, positive demands only, unschedulable jobs left out):
//!
//! ```text
//! U_κ^r = max_i max_{d^r > 0} f_i(δ_min,i) / d^r
//! η_κ   = max(1, max_i T·C_κ / m_iκ),          C_κ = Σ_{m∈κ} Σ_r c_m^r
//! L_κ   = min_{i: f_i(δ_max,i) > 0} f_i(δ_max,i)/m_iκ  /  (max(4, 2P)·η_κ)   (η rule)
//! L_κ   = v_floor / (4·P·T·C_κ)                                          (value floor)
//! α     = max(1, max_{κ,r} ln(U_κ^r / L_κ))
//! ```
//!
//! For each arriving job, a [`PricingOracle`] returns the plan with the best
//! payoff `µ = f_i(t̂ − a_i) − Σ p·q` that fits the residual capacity. The
//! job is admitted iff `µ > 0` (strictly), and then its whole plan is
//! committed irrevocably ([`OnlinePrimalDual::step`]).
//!
//! # What the certificate claims
//!
//! [`RunReport::certificate`] (a maximisation, objective `ALG = Σ` admitted
//! utility) states:
//!
//! * **Bound** (`BoundKind::OnlineDual`): `D_end = Σ_i µ_i + Σ_cells c·p_final`,
//!   where every job's `µ_i` is recomputed as its best payoff at the final
//!   prices over all plans that fit the empty cluster. By weak duality it is
//!   an upper bound on `OPT` of the model the oracle searches, with no
//!   assumption, so it is marked valid for exact and payoff-approximate
//!   oracles (`µ_i` scaled by `ρ`), and for cost-approximate oracles with the
//!   prices scaled by the realised factor; not valid for heuristics. The
//!   certificate carries `D_end` when it is valid and below the trivial
//!   bound `Σ_i f_i(δ_min,i)` (`BoundKind::Trivial`), and the trivial bound
//!   otherwise: with full cells priced at `U`, `D_end` can be far looser.
//! * **`OPT ≤ 2α·ρ·ALG`** (Thm. 4 of the OASiS paper; `ρ = 1` for
//!   an exact oracle, its factor for a payoff-approximate one, the `L`
//!   allowance `ρ0` for a cost-approximate one): valid only
//!   when the bounds are clairvoyant (derived, `u_scale = 1`), every response
//!   met its declared quality, `D_0 ≤ OPT/2` was shown, and the small-demand
//!   assumption holds (`α_eff ≤ 1.5·α`). Otherwise kept with its reasons.
//! * **`OPT ≤ 2α_eff·ρ·ALG`** (the crate's): `α_eff` is exact bookkeeping of
//!   the discrete allocation–cost relationship, so `ALG ≥ (D − D_0)/α_eff`
//!   always holds for the running dual `D`; the ratio follows whenever that
//!   dual is feasible (checked against the recomputed `µ_i`) and
//!   `D_0 ≤ OPT/2` was shown.
//!
//! [`Certificate::check`](crate::Certificate::check) passes on a correct
//! run: the sandwich uses `D_end`, never `2α·ALG`.
//!
//! # Example
//!
//! A toy model: one machine, one resource of capacity 2, one slot; each job
//! needs one unit and is worth its value.
//!
//! ```
//! use dmlsched::model::MachineId;
//! use dmlsched::online::*;
//!
//! struct Unit(MachineId);
//! impl Reservation for Unit {
//!     fn consumption(&self) -> impl Iterator<Item = Consumption> + '_ {
//!         std::iter::once(Consumption { machine: self.0, resource: ResourceId(0), slot: 0, amount: 1.0 })
//!     }
//!     fn completion_slot(&self) -> u32 { 0 }
//! }
//! struct Toy;
//! impl PricingOracle for Toy {
//!     type Job = f64; // the job's value
//!     type Plan = Unit;
//!     fn bound_inputs(&self, v: &f64, _horizon: u32) -> dmlsched::Result<BoundInputs> {
//!         Ok(BoundInputs {
//!             arrival: 0, schedulable: true, ln_u_max: v.ln(), ln_u_min: v.ln(),
//!             unit_demands: vec![UnitDemand { pool: PoolId(0), demand: vec![1.0] }],
//!             normalisers: vec![(PoolId(0), 1.0)],
//!         })
//!     }
//!     fn best_response(&mut self, _i: usize, v: &f64, view: &PriceView<'_>) -> dmlsched::Result<Response<Unit>> {
//!         let m = MachineId(0);
//!         if view.residual(m, ResourceId(0), 0) < 1.0 { return Ok(Response::none()); }
//!         Ok(Response::exact(Unit(m), *v, view.price(m, ResourceId(0), 0)))
//!     }
//! }
//!
//! let ledger = Ledger::new(1, 1, vec![(PoolId(0), vec![2.0])])?;
//! let jobs = [4.0, 1.0, 8.0];
//! let pd = OnlinePrimalDual::with_derived_bounds(Toy, ledger, &jobs, BoundsRule::Eta, PdOptions::default())?;
//! let report = pd.run(&jobs)?;
//! assert!(report.outcomes[0].admitted());
//! assert!(report.total_utility >= report.dual_initial);
//! report.certificate.check(1e-9)?;
//! println!("α = {}, α_eff = {}, D_end = {:?}", report.alpha, report.alpha_eff, report.dual_end);
//! # Ok::<(), dmlsched::Error>(())
//! ```

#[cfg(feature = "serde")]
mod any_session;
mod bounds;
mod engine;
mod error;
mod ledger;
mod offline;
mod oracle;
mod prices;
mod run;
mod session;
mod session_policy;
#[cfg(test)]
mod tests;
mod units;

#[cfg(feature = "serde")]
pub use any_session::AnySession;
pub use bounds::{
    BoundInputs, BoundsChoice, BoundsOrigin, BoundsRule, MIN_POSITIVE_DEMAND, PriceBounds,
    UnitDemand, default_v_floor, value_floor_from,
};
pub use engine::{Decision, JobOutcome, OnlinePrimalDual, PdOptions, RejectReason, RunReport};
pub use error::OnlineError;
pub use ledger::{Ledger, PoolId, ResourceId};
pub use offline::{OfflineResult, proven_upper_bound};
pub use oracle::{
    Consumption, DeadlineBound, OracleQuality, PricingOracle, Reservation, Response,
    realised_factor,
};
pub use prices::PriceView;
pub use run::{OnlineModel, OnlineRun, schedule_of};
pub use session::{
    BoundsSource, JobStatus, Overrun, Session, SessionAlgorithm, SessionBounds, SessionDecision,
    SessionJob, SessionPlan, Snapshot,
};
pub use session_policy::SessionPolicy;
pub use units::{
    PS_RESOURCE_NAMES, PS_RESOURCES, PsVector, ps_cluster_machines, ps_ledger, ps_machines,
    ps_units,
};
