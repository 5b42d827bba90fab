//! The crate-wide certificate that every algorithm returns beside its schedule.
//!
//! A [`Certificate`] states what is *proven* about a returned point:
//!
//! * its objective, in the user's [`Sense`];
//! * a bound on the optimum `OPT` ([`Bound`], lower for minimisation, upper for
//!   maximisation) and, when an exact solve was run, its result ([`ExactInfo`]);
//! * the a-priori statements of the algorithm ([`Guarantee`]), each with its
//!   formula, source, kind (deterministic, in expectation, with probability p),
//!   scope and validity for this run;
//! * the feasibility of the point ([`FeasibilityReport`]) and how the run went
//!   ([`RunInfo`]).
//!
//! [`Certificate::check`] re-verifies the internal consistency of all of this
//! (feasibility, the bound sandwich, exact consistency, the deterministic
//! guarantees and the achieved ratio); see its documentation for the precise
//! rules. Beyond the objective and bound of a relaxation-and-rounding
//! algorithm, it records where each guarantee is proven, ratio-only
//! guarantees (`OPT ≤ 2α·ALG`), validity flags for guarantees whose
//! assumptions fail in a run, and [`BoundKind::OnlineDual`] bounds for the
//! online primal–dual framework.
//!
//! # JSON
//!
//! With the `serde` feature every type here serializes. JSON cannot hold
//! infinities, so every `f64` that may be infinite is written as a number when
//! finite and as the string `"inf"`, `"-inf"` (or `"nan"`) otherwise, and read
//! back the same way.

mod bound;
mod check;
mod display;
mod feasibility;
mod guarantee;
mod run;
mod sense;
#[cfg(feature = "serde")]
pub(crate) mod serde_inf;

pub use bound::{Bound, BoundKind, ExactInfo, ExactStatus};
pub use check::CertificateViolation;
pub use feasibility::{ClassViolation, ConstraintClass, FeasibilityReport};
pub use guarantee::{Guarantee, GuaranteeKind, GuaranteeScope, GuaranteeStanding};
pub use run::RunInfo;
pub use sense::Sense;

/// What is proven about the point an algorithm returns.
///
/// See the [module documentation](self) and [`Certificate::check`].
///
/// # Example
///
/// ```
/// use dmlsched::certificate::{
///     Bound, BoundKind, Certificate, CertificateViolation, ExactInfo, Guarantee, Sense,
/// };
///
/// // A minimisation whose returned point (cost 15) was proven optimal by a MIP
/// // solve, with an LP bound of 12.5 and a deterministic 2-approximation.
/// let cert = Certificate::new(
///     "example::greedy",
///     Sense::Minimise,
///     15.0,
///     Bound::new(12.5, BoundKind::LpDualSafe),
/// )
/// .with_exact(ExactInfo::optimal(15.0, 0.01, true))
/// .with_guarantee(Guarantee::deterministic_value("c·x ≤ 2·LP", "crate", 25.0));
///
/// assert_eq!(cert.best_bound(), 15.0); // the MIP dual bound is tighter
/// assert_eq!(cert.achieved_ratio(), 1.0);
/// cert.check(1e-9)?;
/// println!("{cert}");
///
/// // A bound above the objective of a minimisation is caught.
/// let bad = Certificate::new("bad", Sense::Minimise, 10.0, Bound::new(11.0, BoundKind::LpPrimal));
/// assert!(matches!(
///     bad.check(1e-9),
///     Err(CertificateViolation::BoundExceedsObjective { .. })
/// ));
/// # Ok::<(), CertificateViolation>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Certificate {
    /// Name of the algorithm, e.g. `"pc::randomized_rounding"`.
    pub algorithm: String,
    /// Direction of optimisation.
    pub sense: Sense,
    /// Objective of the returned point, in the user's sense.
    #[cfg_attr(feature = "serde", serde(with = "serde_inf::serde_f64"))]
    pub objective: f64,
    /// Bound on `OPT` from a relaxation (lower when minimising, upper when
    /// maximising).
    pub relaxation_bound: Bound,
    /// Result of an exact solve (MIP or enumeration), if one was run.
    pub exact: Option<ExactInfo>,
    /// A-priori statements (may be empty).
    pub guarantees: Vec<Guarantee>,
    /// Feasibility of the returned point.
    pub feasibility: FeasibilityReport,
    /// How the run went.
    pub run: RunInfo,
    /// What the bound and the guarantees cover, in words: the model, the
    /// horizon and the jobs (e.g. an online scheduler's bound covers its
    /// own plans within the horizon, not a simulator's replay of them).
    /// `None` when the certificate is about the returned point of the
    /// stated program only.
    #[cfg_attr(feature = "serde", serde(default))]
    pub scope: Option<String>,
}

impl Certificate {
    /// A certificate with no exact result, no guarantees, a feasible point
    /// ([`FeasibilityReport::feasible`]) and [`RunInfo::new`].
    pub fn new(
        algorithm: impl Into<String>,
        sense: Sense,
        objective: f64,
        relaxation_bound: Bound,
    ) -> Self {
        Certificate {
            algorithm: algorithm.into(),
            sense,
            objective,
            relaxation_bound,
            exact: None,
            guarantees: Vec::new(),
            feasibility: FeasibilityReport::feasible(),
            run: RunInfo::new(),
            scope: None,
        }
    }

    /// Sets [`Certificate::exact`].
    pub fn with_exact(mut self, exact: ExactInfo) -> Self {
        self.exact = Some(exact);
        self
    }

    /// Appends a guarantee.
    pub fn with_guarantee(mut self, guarantee: Guarantee) -> Self {
        self.guarantees.push(guarantee);
        self
    }

    /// Sets [`Certificate::feasibility`].
    pub fn with_feasibility(mut self, feasibility: FeasibilityReport) -> Self {
        self.feasibility = feasibility;
        self
    }

    /// Sets [`Certificate::run`].
    pub fn with_run(mut self, run: RunInfo) -> Self {
        self.run = run;
        self
    }

    /// Sets [`Certificate::scope`].
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The tightest usable bound on `OPT`: the maximum (min) or minimum (max)
    /// of the relaxation bound, if [usable](Bound::is_usable), and the exact
    /// solve's dual bound, if any (NaN values are skipped). `−∞` (min) or
    /// `+∞` (max) when there is none.
    pub fn best_bound(&self) -> f64 {
        let mut best = self.sense.no_bound();
        let mut consider = |v: f64| {
            if !v.is_nan() {
                best = match self.sense {
                    Sense::Minimise => best.max(v),
                    Sense::Maximise => best.min(v),
                };
            }
        };
        if self.relaxation_bound.is_usable() {
            consider(self.relaxation_bound.value);
        }
        if let Some(exact) = &self.exact {
            consider(exact.dual_bound);
        }
        best
    }

    /// `OPT`, when an exact solve proved it ([`ExactInfo::optimum`]).
    pub fn optimum(&self) -> Option<f64> {
        self.exact.as_ref().and_then(ExactInfo::optimum)
    }

    /// The achieved ratio against [`best_bound`](Self::best_bound), always
    /// `≥ 1` for a correct certificate with non-negative values:
    ///
    /// * min: `objective / max(best_bound, 0)`; max: `best_bound / objective`;
    /// * `1` when numerator and denominator are both 0 (within `1e-12`);
    /// * `+∞` when the denominator is 0 and the numerator positive (also when
    ///   there is no bound);
    /// * NaN (undefined) when the numerator or denominator is negative (e.g. a
    ///   negative objective), where no ratio statement applies.
    pub fn achieved_ratio(&self) -> f64 {
        self.sense.ratio(self.objective, self.best_bound())
    }
}

/// Certificates and exact results shared by the unit tests of this module's
/// files.
#[cfg(test)]
mod fixtures {
    use super::*;

    pub(super) const TOL: f64 = 1e-9;

    pub(super) fn min_cert() -> Certificate {
        Certificate::new(
            "test::min",
            Sense::Minimise,
            15.0,
            Bound::new(12.5, BoundKind::LpDualSafe),
        )
    }

    pub(super) fn max_cert() -> Certificate {
        Certificate::new(
            "test::max",
            Sense::Maximise,
            10.0,
            Bound::new(12.0, BoundKind::LpDualSafe),
        )
    }

    pub(super) fn limit(incumbent: Option<f64>, dual_bound: f64, returned: bool) -> ExactInfo {
        ExactInfo {
            status: ExactStatus::Limit {
                status: "ReachedTimeLimit".into(),
            },
            incumbent,
            dual_bound,
            rel_gap: 0.1,
            seconds: 30.0,
            returned,
        }
    }

    pub(super) fn full_min() -> Certificate {
        let mut run = RunInfo::new().with_seed(7, "ChaCha8");
        run.trials = 16;
        run.best_trial = Some(3);
        run.beta = Some(1.0);
        run.repair_moves = 2;
        run.lp_solves = 1;
        run.lp_iterations = 120;
        run.add_stage("lp", 0.01);
        run.add_stage("rounding", 0.002);
        min_cert()
            .with_exact(ExactInfo::optimal(15.0, 0.12, false))
            .with_guarantee(
                Guarantee::in_expectation(
                    "E[c·X] ≤ β·LP",
                    "crate",
                    12.5,
                    GuaranteeScope::RoundedBeforeRepair,
                )
                .with_ratio(1.0),
            )
            .with_guarantee(Guarantee::deterministic_value("c·x ≤ 2·LP", "crate", 25.0))
            .with_guarantee(Guarantee::ratio_bound("c·x ≤ 1.5·OPT", "crate", 1.5))
            .with_guarantee(
                Guarantee::deterministic_value("c·x ≤ LP", "Some paper (2020), Thm. 1", 12.5)
                    .invalid("estimated price bounds")
                    .invalid("placement adjusted"),
            )
            .with_run(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::fixtures::*;

    #[test]
    fn achieved_ratio_conventions() {
        let mut c = Certificate::new(
            "r",
            Sense::Minimise,
            0.0,
            Bound::new(0.0, BoundKind::Trivial),
        );
        assert_eq!(c.achieved_ratio(), 1.0);
        c.objective = 1e-13;
        assert_eq!(c.achieved_ratio(), 1.0);
        c.objective = 3.0;
        assert_eq!(c.achieved_ratio(), f64::INFINITY);
        c.relaxation_bound.value = -5.0; // max(bound, 0) = 0
        assert_eq!(c.achieved_ratio(), f64::INFINITY);
        c.relaxation_bound = Bound::none(Sense::Minimise);
        assert_eq!(c.best_bound(), f64::NEG_INFINITY);
        assert_eq!(c.achieved_ratio(), f64::INFINITY);
        c.objective = -1.0;
        assert!(c.achieved_ratio().is_nan());
        c.relaxation_bound = Bound::new(-2.0, BoundKind::LpPrimal);
        assert_eq!(c.check(TOL), Ok(()), "undefined ratio is not checked");
        c.objective = 2.0;
        c.relaxation_bound.value = 1.6;
        assert!((c.achieved_ratio() - 1.25).abs() < 1e-12);

        // Max form: best_bound / objective.
        let mut c = Certificate::new(
            "r",
            Sense::Maximise,
            4.0,
            Bound::new(5.0, BoundKind::LpDualSafe),
        );
        assert_eq!(c.achieved_ratio(), 1.25);
        c.objective = 0.0;
        assert_eq!(c.achieved_ratio(), f64::INFINITY);
        c.relaxation_bound.value = 0.0;
        assert_eq!(c.achieved_ratio(), 1.0);
        c.relaxation_bound = Bound::none(Sense::Maximise);
        assert_eq!(c.best_bound(), f64::INFINITY);
        assert_eq!(c.achieved_ratio(), f64::INFINITY);
        assert_eq!(c.check(TOL), Ok(()));
    }

    #[test]
    fn best_bound_takes_tighter_mip_dual() {
        let c = min_cert().with_exact(limit(Some(16.0), 14.0, false));
        assert_eq!(c.best_bound(), 14.0);
        assert!((c.achieved_ratio() - 15.0 / 14.0).abs() < 1e-12);
        // A weaker dual bound does not loosen it.
        let c = min_cert().with_exact(limit(Some(16.0), f64::NEG_INFINITY, false));
        assert_eq!(c.best_bound(), 12.5);
        let c = max_cert().with_exact(limit(Some(10.0), 11.0, false));
        assert_eq!(c.best_bound(), 11.0);
        let c = max_cert().with_exact(limit(Some(10.0), f64::INFINITY, false));
        assert_eq!(c.best_bound(), 12.0);
    }
}
