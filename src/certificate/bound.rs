//! Bounds on the optimum ([`Bound`], [`BoundKind`]) and the result of an
//! exact solve ([`ExactInfo`], [`ExactStatus`]).

#[cfg(doc)]
use super::Certificate;
use super::Sense;

/// A bound on the optimum `OPT`: a lower bound when minimising, an upper bound
/// when maximising.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Bound {
    /// The bound's value, in the user's sense. `−∞` (min) or `+∞` (max) means
    /// "no information".
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))]
    pub value: f64,
    /// Where the bound comes from, and whether it may be relied on.
    pub kind: BoundKind,
}

impl Bound {
    /// A bound of the given kind.
    pub fn new(value: f64, kind: BoundKind) -> Self {
        Bound { value, kind }
    }

    /// The bound that carries no information: [`BoundKind::Trivial`] at `−∞`
    /// (min) or `+∞` (max).
    pub fn none(sense: Sense) -> Self {
        Bound::new(sense.no_bound(), BoundKind::Trivial)
    }

    /// Whether the bound may be used as a bound on `OPT`: false for an
    /// [`BoundKind::OnlineDual`] whose assumptions do not hold
    /// (`valid == false`) and for a NaN value.
    pub fn is_usable(&self) -> bool {
        !self.value.is_nan() && self.kind.is_valid()
    }
}

/// Where a [`Bound`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum BoundKind {
    /// The objective of a dual-feasible point of the LP relaxation, made
    /// feasible by construction (the solver's row duals clamped to their
    /// signs, every negative reduced cost charged to its column's finite
    /// upper bound): valid whatever the solver's numerical accuracy.
    LpDualSafe,
    /// The primal objective of the LP relaxation as reported by the solver:
    /// valid up to the solver's tolerances.
    LpPrimal,
    /// The dual bound of a MIP solve.
    MipDual,
    /// A simple analytic bound (for example `0`, or the sum of all utilities),
    /// or no bound at all (`∓∞`).
    Trivial,
    /// The dual objective of an online primal–dual run (every job's best
    /// payoff at the final prices plus the priced capacity, `D_end`), which
    /// bounds `OPT` by weak duality only under stated assumptions (e.g. a
    /// pricing oracle that is exact, or approximate within a known factor).
    ///
    /// When `valid` is `false` the value is reported but **not used**:
    /// [`Certificate::best_bound`] skips it, so [`Certificate::check`] neither
    /// compares it with the objective (sandwich) nor with the exact result.
    OnlineDual {
        /// Whether the assumptions that make the value a bound on `OPT` hold
        /// in this run (e.g. `D_end` at final prices: always `true`).
        valid: bool,
    },
}

impl BoundKind {
    /// False only for an [`BoundKind::OnlineDual`] marked not valid.
    pub fn is_valid(self) -> bool {
        !matches!(self, BoundKind::OnlineDual { valid: false })
    }

    /// Bounds from the relaxation of the same model a MIP solver would solve,
    /// which its dual bound can only tighten.
    pub(super) fn is_relaxation_of_exact_model(self) -> bool {
        matches!(
            self,
            BoundKind::LpDualSafe | BoundKind::LpPrimal | BoundKind::MipDual
        )
    }
}

/// The result of an exact solve (MIP or exhaustive enumeration), when one was
/// run.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ExactInfo {
    /// How the exact solve ended.
    pub status: ExactStatus,
    /// Objective of the best integer point found, if any.
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_opt_f64"))]
    pub incumbent: Option<f64>,
    /// A valid bound on `OPT` proven by the solve (lower when minimising,
    /// upper when maximising); equals the incumbent when optimal. May be
    /// infinite when the solve stopped before bounding anything.
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))]
    pub dual_bound: f64,
    /// Relative gap between incumbent and dual bound (`+∞` without incumbent).
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))]
    pub rel_gap: f64,
    /// Wall-clock seconds spent in the exact solve.
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))]
    pub seconds: f64,
    /// Whether the exact incumbent is the point the algorithm returned (then
    /// `objective` must equal `incumbent`), rather than a comparison point.
    pub returned: bool,
}

impl ExactInfo {
    /// A solve that proved `value` optimal (status [`ExactStatus::Optimal`],
    /// incumbent and dual bound `value`, gap 0).
    pub fn optimal(value: f64, seconds: f64, returned: bool) -> Self {
        ExactInfo {
            status: ExactStatus::Optimal,
            incumbent: Some(value),
            dual_bound: value,
            rel_gap: 0.0,
            seconds,
            returned,
        }
    }

    /// A MIP solve used as a comparison point (`returned = false`), not the
    /// algorithm's answer: status [`ExactStatus::Optimal`] when `optimal`,
    /// else [`ExactStatus::Limit`] with the solver's `status`; the
    /// incumbent `objective` (an empty schedule counts as an incumbent of
    /// value 0) and the proven `dual_bound`.
    pub fn comparison(
        optimal: bool,
        status: impl std::fmt::Display,
        (objective, dual_bound, rel_gap): (f64, f64, f64),
        seconds: f64,
    ) -> Self {
        ExactInfo {
            status: if optimal {
                ExactStatus::Optimal
            } else {
                ExactStatus::Limit {
                    status: status.to_string(),
                }
            },
            incumbent: Some(objective),
            dual_bound,
            rel_gap,
            seconds,
            returned: false,
        }
    }

    /// `upper_bound / alg` for a maximisation: a proven bound on `OPT/ALG`
    /// for an algorithm with value `alg` when `upper_bound ≥ OPT`; `+∞` when
    /// `alg = 0 < upper_bound`, 1 when both are 0.
    pub fn ratio_bound(upper_bound: f64, alg: f64) -> f64 {
        if alg > 0.0 {
            upper_bound / alg
        } else if upper_bound > 0.0 {
            f64::INFINITY
        } else {
            1.0
        }
    }

    /// `OPT`, when the status proves the incumbent optimal
    /// ([`ExactStatus::Optimal`] or [`ExactStatus::ProvenByBound`]).
    pub fn optimum(&self) -> Option<f64> {
        if self.status.proves_optimality() {
            self.incumbent
        } else {
            None
        }
    }
}

/// How an exact solve ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ExactStatus {
    /// The incumbent is optimal (MIP optimal within its gap, or enumeration).
    Optimal,
    /// The incumbent is optimal because it meets a bound (e.g. integer costs
    /// and incumbent `= ⌈LB⌉`), without a MIP solve.
    ProvenByBound,
    /// The solver stopped at a limit; incumbent (if any) and dual bound are
    /// still valid.
    Limit {
        /// The solver's status, as it reported it (e.g. `"ReachedTimeLimit"`).
        status: String,
    },
}

impl ExactStatus {
    /// True for [`ExactStatus::Optimal`] and [`ExactStatus::ProvenByBound`].
    pub fn proves_optimality(&self) -> bool {
        matches!(self, ExactStatus::Optimal | ExactStatus::ProvenByBound)
    }
}
