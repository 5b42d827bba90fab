//! [`Certificate::check`] and the [`CertificateViolation`]s it reports.

use super::sense::le;
use super::{Certificate, ConstraintClass, ExactInfo, Sense};

impl Certificate {
    /// Checks the certificate's internal consistency with tolerance `tol ≥ 0`
    /// and returns the first violation. With `τ = tol·max(1, |objective|)`,
    /// in this order:
    ///
    /// 0. **Finite values.** The objective is finite; the relaxation bound and
    ///    the exact dual bound are not NaN; an exact incumbent is finite
    ///    ([`CertificateViolation::NonFinite`]).
    /// 1. **Feasibility.** Every class's largest absolute violation is `≤ τ`
    ///    ([`CertificateViolation::Infeasible`]). In bicriteria mode
    ///    (`allowed_packing_slack = Some(δ)`), packing rows are compared with
    ///    `(1+δ)p` instead: largest relative violation `≤ δ + tol`
    ///    ([`CertificateViolation::PackingSlackExceeded`]).
    /// 2. **Sandwich** (skipped in bicriteria mode): min
    ///    `best_bound ≤ objective + τ`, max `objective ≤ best_bound + τ`
    ///    ([`CertificateViolation::BoundExceedsObjective`]). An
    ///    [`OnlineDual`](super::BoundKind::OnlineDual) bound marked not valid is not
    ///    used.
    /// 3. **Exact consistency**, when `exact` is present
    ///    ([`CertificateViolation::ExactInconsistent`]); for min (max
    ///    mirrored):
    ///    * `relaxation_bound ≤ dual_bound + τ`, when the relaxation bound is
    ///      usable and of an LP/MIP kind and the dual bound is finite (a solver
    ///      stopped before its root relaxation has no bound yet; online and
    ///      trivial bounds are bounds on `OPT` of possibly other models and
    ///      need not be weaker than the MIP's);
    ///    * with an incumbent: `relaxation_bound ≤ incumbent + τ` (usable
    ///      relaxation bound) and `dual_bound ≤ incumbent + τ`;
    ///    * when the exact point was `returned`: `|incumbent − objective| ≤ τ`
    ///      (whatever the status; an incumbent must exist);
    ///    * when the status proves optimality (`Optimal`, `ProvenByBound`), an
    ///      incumbent exists and, if not returned and not in bicriteria mode,
    ///      `incumbent ≤ objective + τ`.
    /// 4. **Guarantees** that are valid, deterministic and about the final
    ///    point ([`Guarantee::is_checked`](super::Guarantee::is_checked)):
    ///    * with a `value`: min `objective ≤ value + τ`, max
    ///      `objective ≥ value − τ` ([`CertificateViolation::GuaranteeViolated`]);
    ///    * with a finite `ratio_bound` **and** a proven optimum
    ///      ([`Certificate::optimum`]): the ratio of objective to `OPT`
    ///      (min `objective/OPT`, max `OPT/objective`, same conventions as
    ///      [`achieved_ratio`](Self::achieved_ratio)) is `≤ ratio_bound + tol`,
    ///      or the absolute form holds within τ (min
    ///      `objective ≤ ratio_bound·OPT + τ`, max
    ///      `OPT ≤ ratio_bound·objective + τ`)
    ///      ([`CertificateViolation::RatioAboveGuarantee`]). Against a mere
    ///      bound on `OPT` the achieved ratio over-estimates the true one, so a
    ///      ratio above `ratio_bound` proves nothing and is not reported;
    ///      undefined (NaN) ratios are skipped.
    ///
    ///    Other guarantees are reported but not checked: probabilistic ones
    ///    may legitimately miss on one run and are tested statistically.
    /// 5. **Ratio** (skipped in bicriteria mode): `achieved_ratio ≥ 1 − tol`
    ///    when it is finite ([`CertificateViolation::RatioBelowOne`]).
    ///
    /// # Errors
    ///
    /// The first [`CertificateViolation`] found.
    pub fn check(&self, tol: f64) -> Result<(), CertificateViolation> {
        let sense = self.sense;
        let obj = self.objective;
        let tau = tol * obj.abs().max(1.0);
        let bicriteria = self.feasibility.allowed_packing_slack.is_some();

        // 0. Finite values.
        if !obj.is_finite() {
            return Err(CertificateViolation::NonFinite { field: "objective" });
        }
        if self.relaxation_bound.value.is_nan() {
            return Err(CertificateViolation::NonFinite {
                field: "relaxation_bound.value",
            });
        }
        if let Some(exact) = &self.exact {
            if exact.dual_bound.is_nan() {
                return Err(CertificateViolation::NonFinite {
                    field: "exact.dual_bound",
                });
            }
            if exact.incumbent.is_some_and(|v| !v.is_finite()) {
                return Err(CertificateViolation::NonFinite {
                    field: "exact.incumbent",
                });
            }
        }

        // 1. Feasibility.
        for (class, v) in self.feasibility.iter() {
            match (class, self.feasibility.allowed_packing_slack) {
                (ConstraintClass::Packing, Some(delta)) => {
                    if !le(v.max_relative, delta + tol) {
                        return Err(CertificateViolation::PackingSlackExceeded {
                            row: v.max_relative_row,
                            relative: v.max_relative,
                            allowed: delta,
                        });
                    }
                }
                _ => {
                    if !le(v.max_absolute, tau) {
                        return Err(CertificateViolation::Infeasible {
                            class,
                            row: v.max_absolute_row,
                            violation: v.max_absolute,
                        });
                    }
                }
            }
        }

        // 2. Sandwich.
        let best = self.best_bound();
        if !bicriteria && !sense.bound_side(best, obj, tau) {
            return Err(CertificateViolation::BoundExceedsObjective {
                bound: best,
                objective: obj,
            });
        }

        // 3. Exact consistency.
        if let Some(exact) = &self.exact {
            self.check_exact(exact, tau, bicriteria)?;
        }

        // 4. Deterministic guarantees about the final point.
        let optimum = self.optimum();
        for g in self.guarantees.iter().filter(|g| g.is_checked()) {
            if let Some(value) = g.value
                && !sense.bound_side(obj, value, tau)
            {
                return Err(CertificateViolation::GuaranteeViolated {
                    expression: g.expression.clone(),
                    value,
                    objective: obj,
                });
            }
            if let (Some(bound), Some(opt)) = (g.ratio_bound, optimum)
                && bound.is_finite()
            {
                let ratio = sense.ratio(obj, opt);
                let absolute_ok = match sense {
                    Sense::Minimise => obj <= bound * opt + tau,
                    Sense::Maximise => opt <= bound * obj + tau,
                };
                if !ratio.is_nan() && !le(ratio, bound + tol) && !absolute_ok {
                    return Err(CertificateViolation::RatioAboveGuarantee {
                        expression: g.expression.clone(),
                        ratio,
                        bound,
                    });
                }
            }
        }

        // 5. Ratio at least one.
        let ratio = self.achieved_ratio();
        if !bicriteria && ratio.is_finite() && ratio < 1.0 - tol {
            return Err(CertificateViolation::RatioBelowOne { ratio });
        }
        Ok(())
    }

    /// Item 3 of [`Certificate::check`].
    fn check_exact(
        &self,
        exact: &ExactInfo,
        tau: f64,
        bicriteria: bool,
    ) -> Result<(), CertificateViolation> {
        let sense = self.sense;
        let min = sense == Sense::Minimise;
        let fail = |what_min: &'static str, what_max: &'static str, lhs: f64, rhs: f64| {
            Err(CertificateViolation::ExactInconsistent {
                what: if min { what_min } else { what_max },
                lhs,
                rhs,
            })
        };
        let rel = &self.relaxation_bound;
        if rel.is_usable()
            && rel.kind.is_relaxation_of_exact_model()
            && exact.dual_bound.is_finite()
            && !sense.bound_side(rel.value, exact.dual_bound, tau)
        {
            return fail(
                "relaxation bound ≤ exact dual bound",
                "relaxation bound ≥ exact dual bound",
                rel.value,
                exact.dual_bound,
            );
        }
        if let Some(inc) = exact.incumbent {
            if rel.is_usable() && !sense.bound_side(rel.value, inc, tau) {
                return fail(
                    "relaxation bound ≤ exact incumbent",
                    "relaxation bound ≥ exact incumbent",
                    rel.value,
                    inc,
                );
            }
            if !sense.bound_side(exact.dual_bound, inc, tau) {
                return fail(
                    "exact dual bound ≤ exact incumbent",
                    "exact dual bound ≥ exact incumbent",
                    exact.dual_bound,
                    inc,
                );
            }
        }
        if exact.returned {
            match exact.incumbent {
                None => {
                    return fail(
                        "returned exact point has an incumbent",
                        "returned exact point has an incumbent",
                        f64::NAN,
                        self.objective,
                    );
                }
                Some(inc) if !le((inc - self.objective).abs(), tau) => {
                    return fail(
                        "returned exact incumbent = objective",
                        "returned exact incumbent = objective",
                        inc,
                        self.objective,
                    );
                }
                Some(_) => {}
            }
        }
        if exact.status.proves_optimality() {
            match exact.incumbent {
                None => {
                    return fail(
                        "optimal status has an incumbent",
                        "optimal status has an incumbent",
                        exact.dual_bound,
                        f64::NAN,
                    );
                }
                Some(inc) => {
                    if !exact.returned && !bicriteria && !sense.bound_side(inc, self.objective, tau)
                    {
                        return fail(
                            "exact optimum ≤ objective",
                            "exact optimum ≥ objective",
                            inc,
                            self.objective,
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

/// Why [`Certificate::check`] failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CertificateViolation {
    /// A value that must be finite (or not NaN) is not.
    #[error("certificate field `{field}` is not finite")]
    NonFinite {
        /// The field, e.g. `"objective"`.
        field: &'static str,
    },
    /// The point violates a constraint by more than the tolerance.
    #[error("{class} constraint{} violated by {violation}", row_suffix(.row))]
    Infeasible {
        /// Class of the violated constraint.
        class: ConstraintClass,
        /// Index of the worst row, if recorded.
        row: Option<usize>,
        /// Its absolute violation.
        violation: f64,
    },
    /// Bicriteria mode: a packing row exceeds `(1+δ)p`.
    #[error(
        "packing constraint{} exceeds its capacity by a relative {relative}, more than the allowed slack {allowed}",
        row_suffix(.row)
    )]
    PackingSlackExceeded {
        /// Index of the worst row, if recorded.
        row: Option<usize>,
        /// Its relative violation.
        relative: f64,
        /// The allowed slack δ.
        allowed: f64,
    },
    /// The bound is on the wrong side of the objective: min `bound > objective`,
    /// max `objective > bound` (beyond the tolerance).
    #[error("bound {bound} is on the wrong side of the objective {objective}")]
    BoundExceedsObjective {
        /// The best bound.
        bound: f64,
        /// The objective.
        objective: f64,
    },
    /// The exact solve's results contradict each other or the certificate.
    #[error("exact result inconsistent: {what} fails ({lhs} vs {rhs})")]
    ExactInconsistent {
        /// The relation that fails, e.g. `"exact dual bound ≤ exact incumbent"`.
        what: &'static str,
        /// Its left-hand side (NaN when missing).
        lhs: f64,
        /// Its right-hand side (NaN when missing).
        rhs: f64,
    },
    /// A valid deterministic guarantee about the final point does not hold.
    #[error("guarantee `{expression}` violated: objective {objective}, guaranteed {value}")]
    GuaranteeViolated {
        /// The guarantee's expression.
        expression: String,
        /// Its value (right-hand side).
        value: f64,
        /// The objective.
        objective: f64,
    },
    /// A valid deterministic ratio guarantee does not hold against the proven
    /// optimum.
    #[error(
        "ratio guarantee `{expression}` violated: ratio {ratio} to the optimum exceeds {bound}"
    )]
    RatioAboveGuarantee {
        /// The guarantee's expression.
        expression: String,
        /// The ratio of objective to the optimum.
        ratio: f64,
        /// The guaranteed ratio bound.
        bound: f64,
    },
    /// The achieved ratio is below 1: the bound is better than the objective.
    #[error("achieved ratio {ratio} is below 1")]
    RatioBelowOne {
        /// The achieved ratio.
        ratio: f64,
    },
}

/// `" at row r"` or nothing.
fn row_suffix(row: &Option<usize>) -> String {
    row.map(|r| format!(" at row {r}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::fixtures::*;
    use crate::certificate::*;

    #[test]
    fn correct_min_certificate_passes() {
        let c = full_min();
        assert_eq!(c.check(TOL), Ok(()));
        assert_eq!(c.best_bound(), 15.0);
        assert_eq!(c.achieved_ratio(), 1.0);
        assert_eq!(c.optimum(), Some(15.0));
        min_cert().check(TOL).unwrap();
        assert!((min_cert().achieved_ratio() - 1.2).abs() < 1e-12);
    }

    #[test]
    fn correct_max_certificate_passes() {
        let c = max_cert()
            .with_exact(limit(Some(10.5), 11.0, false))
            .with_guarantee(Guarantee::deterministic_value("v·x ≥ LP/2", "crate", 6.0))
            .with_guarantee(Guarantee::ratio_bound("OPT ≤ 2α·ALG", "OASiS", 4.0));
        assert_eq!(c.check(TOL), Ok(()));
        assert_eq!(c.best_bound(), 11.0);
        assert!((c.achieved_ratio() - 1.1).abs() < 1e-12);
        let opt = max_cert().with_exact(ExactInfo::optimal(10.0, 1.0, true));
        assert_eq!(opt.check(TOL), Ok(()));
        assert_eq!(opt.achieved_ratio(), 1.0);
    }

    #[test]
    fn non_finite_objective() {
        for obj in [f64::NAN, f64::INFINITY] {
            let mut c = min_cert();
            c.objective = obj;
            assert_eq!(
                c.check(TOL),
                Err(CertificateViolation::NonFinite { field: "objective" })
            );
        }
        let mut c = max_cert();
        c.relaxation_bound.value = f64::NAN;
        assert!(matches!(
            c.check(TOL),
            Err(CertificateViolation::NonFinite { .. })
        ));
        let c = max_cert().with_exact(limit(Some(f64::INFINITY), 11.0, false));
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::NonFinite {
                field: "exact.incumbent"
            })
        );
    }

    #[test]
    fn infeasible() {
        let mut f = FeasibilityReport::feasible();
        f.record(ConstraintClass::Covering, 4, 0.5, 2.0);
        f.record(ConstraintClass::Covering, 2, 0.25, 0.5);
        f.record(ConstraintClass::Covering, 3, -1.0, 2.0);
        assert_eq!(f.covering.max_absolute, 0.5);
        assert_eq!(f.covering.max_absolute_row, Some(4));
        assert_eq!(f.covering.max_relative, 0.5);
        assert_eq!(f.covering.max_relative_row, Some(2));
        assert_eq!(f.max_absolute(), 0.5);
        let c = min_cert().with_feasibility(f);
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::Infeasible {
                class: ConstraintClass::Covering,
                row: Some(4),
                violation: 0.5,
            })
        );
        // Within τ = tol·max(1, |objective|) it passes.
        let mut f = FeasibilityReport::feasible();
        f.record(ConstraintClass::Other, 0, 1e-9, 1.0);
        assert_eq!(min_cert().with_feasibility(f.clone()).check(1e-10), Ok(()));
        assert!(matches!(
            max_cert().with_feasibility(f).check(1e-11),
            Err(CertificateViolation::Infeasible {
                class: ConstraintClass::Other,
                ..
            })
        ));
        // NaN violations fail.
        let mut f = FeasibilityReport::feasible();
        f.record(ConstraintClass::Linking, 1, f64::NAN, 1.0);
        f.record(ConstraintClass::Linking, 2, 5.0, 1.0);
        assert!(f.max_absolute().is_nan());
        assert!(matches!(
            min_cert().with_feasibility(f).check(TOL),
            Err(CertificateViolation::Infeasible {
                class: ConstraintClass::Linking,
                row: Some(1),
                ..
            })
        ));
    }

    #[test]
    fn bicriteria_slack_and_skipped_sandwich() {
        // Packing exceeded by 10% with δ = 0.2, objective below the bound: fine.
        let mut f = FeasibilityReport::bicriteria(0.2);
        f.record(ConstraintClass::Packing, 1, 1.0, 10.0);
        let mut c = min_cert().with_feasibility(f.clone());
        c.objective = 11.0;
        assert_eq!(c.check(TOL), Ok(()));
        // A non-returned exact optimum above the bicriteria objective is fine too.
        let c2 = c.clone().with_exact(ExactInfo::optimal(13.0, 0.1, false));
        assert_eq!(c2.check(TOL), Ok(()));
        // Exceeding (1+δ)p fails.
        f.record(ConstraintClass::Packing, 5, 3.0, 10.0);
        let c = c.with_feasibility(f);
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::PackingSlackExceeded {
                row: Some(5),
                relative: 0.3,
                allowed: 0.2,
            })
        );
        // Zero capacity with any excess is infinitely relative.
        let mut f = FeasibilityReport::bicriteria(0.5);
        f.record(ConstraintClass::Packing, 0, 0.1, 0.0);
        assert!(matches!(
            max_cert().with_feasibility(f).check(TOL),
            Err(CertificateViolation::PackingSlackExceeded { .. })
        ));
        // Covering rows stay absolute in bicriteria mode.
        let mut f = FeasibilityReport::bicriteria(0.5);
        f.record(ConstraintClass::Covering, 0, 0.1, 1.0);
        assert!(matches!(
            max_cert().with_feasibility(f).check(TOL),
            Err(CertificateViolation::Infeasible { .. })
        ));
    }

    #[test]
    fn bound_exceeds_objective_min_and_max() {
        let mut c = min_cert();
        c.relaxation_bound.value = 15.5;
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::BoundExceedsObjective {
                bound: 15.5,
                objective: 15.0
            })
        );
        let mut c = max_cert();
        c.relaxation_bound.value = 9.0;
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::BoundExceedsObjective {
                bound: 9.0,
                objective: 10.0
            })
        );
        // The exact dual bound takes part in the sandwich.
        let c = max_cert().with_exact(limit(None, 9.5, false));
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::BoundExceedsObjective {
                bound: 9.5,
                objective: 10.0
            })
        );
    }

    fn what(r: Result<(), CertificateViolation>) -> &'static str {
        match r {
            Err(CertificateViolation::ExactInconsistent { what, .. }) => what,
            other => panic!("expected ExactInconsistent, got {other:?}"),
        }
    }

    #[test]
    fn exact_inconsistent_min() {
        // LP bound above the MIP dual bound.
        let c = min_cert().with_exact(limit(Some(16.0), 12.0, false));
        assert_eq!(what(c.check(TOL)), "relaxation bound ≤ exact dual bound");
        // Not compared when the dual bound is infinite, or for trivial bounds.
        let c = min_cert().with_exact(limit(Some(16.0), f64::NEG_INFINITY, false));
        assert_eq!(c.check(TOL), Ok(()));
        let mut c = min_cert().with_exact(limit(Some(16.0), 12.0, false));
        c.relaxation_bound.kind = BoundKind::Trivial;
        assert_eq!(c.check(TOL), Ok(()));
        // Dual bound above the incumbent.
        let mut c = min_cert().with_exact(limit(Some(14.0), 14.5, false));
        c.relaxation_bound.kind = BoundKind::OnlineDual { valid: true };
        assert_eq!(what(c.check(TOL)), "exact dual bound ≤ exact incumbent");
        // Relaxation bound above the incumbent (online bound, not compared with the dual).
        let mut c = min_cert().with_exact(limit(Some(12.0), 10.0, false));
        c.relaxation_bound.kind = BoundKind::OnlineDual { valid: true };
        assert_eq!(what(c.check(TOL)), "relaxation bound ≤ exact incumbent");
        // Optimal, returned, but not the objective.
        let c = min_cert().with_exact(ExactInfo::optimal(14.0, 0.1, true));
        assert_eq!(what(c.check(TOL)), "returned exact incumbent = objective");
        // Optimal, not returned, but worse than the objective.
        let mut e = ExactInfo::optimal(15.5, 0.1, false);
        e.dual_bound = 13.0;
        let c = min_cert().with_exact(e);
        assert_eq!(what(c.check(TOL)), "exact optimum ≤ objective");
        // Optimal without an incumbent.
        let mut e = ExactInfo::optimal(13.0, 0.1, false);
        e.incumbent = None;
        assert_eq!(
            what(min_cert().with_exact(e).check(TOL)),
            "optimal status has an incumbent"
        );
        // Returned without an incumbent.
        let c = min_cert().with_exact(limit(None, 13.0, true));
        assert_eq!(what(c.check(TOL)), "returned exact point has an incumbent");
        // A returned limit incumbent must equal the objective.
        let c = min_cert().with_exact(limit(Some(15.0), 13.0, true));
        assert_eq!(c.check(TOL), Ok(()));
    }

    #[test]
    fn exact_inconsistent_max() {
        let c = max_cert().with_exact(limit(Some(9.0), 12.5, false));
        assert_eq!(what(c.check(TOL)), "relaxation bound ≥ exact dual bound");
        let mut c = max_cert().with_exact(limit(Some(11.0), 10.5, false));
        c.relaxation_bound.kind = BoundKind::Trivial;
        assert_eq!(what(c.check(TOL)), "exact dual bound ≥ exact incumbent");
        let c = max_cert().with_exact(ExactInfo::optimal(10.5, 0.1, true));
        assert_eq!(what(c.check(TOL)), "returned exact incumbent = objective");
        let mut e = ExactInfo::optimal(9.5, 0.1, false);
        e.dual_bound = 10.5;
        let c = max_cert().with_exact(e);
        assert_eq!(what(c.check(TOL)), "exact optimum ≥ objective");
        let mut e = ExactInfo::optimal(10.0, 0.1, false);
        e.status = ExactStatus::ProvenByBound;
        assert_eq!(max_cert().with_exact(e).check(TOL), Ok(()));
    }

    #[test]
    fn guarantee_violated_min_and_max() {
        let c =
            min_cert().with_guarantee(Guarantee::deterministic_value("c·x ≤ 14", "crate", 14.0));
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::GuaranteeViolated {
                expression: "c·x ≤ 14".into(),
                value: 14.0,
                objective: 15.0
            })
        );
        let c =
            max_cert().with_guarantee(Guarantee::deterministic_value("v·x ≥ 11", "crate", 11.0));
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::GuaranteeViolated {
                expression: "v·x ≥ 11".into(),
                value: 11.0,
                objective: 10.0
            })
        );
        // Exactly on the value passes.
        let c =
            max_cert().with_guarantee(Guarantee::deterministic_value("v·x ≥ 10", "crate", 10.0));
        assert_eq!(c.check(TOL), Ok(()));
    }

    #[test]
    fn invalid_and_probabilistic_guarantees_not_checked() {
        let c = min_cert()
            .with_guarantee(
                Guarantee::deterministic_value("c·x ≤ 1", "crate", 1.0).invalid("assumption fails"),
            )
            .with_guarantee(Guarantee::in_expectation(
                "E[c·X] ≤ 1",
                "crate",
                1.0,
                GuaranteeScope::FinalPoint,
            ))
            .with_guarantee(
                Guarantee::probabilistic(
                    "P[c·X ≤ 1] ≥ 0.9",
                    "crate",
                    0.9,
                    GuaranteeScope::FinalPoint,
                )
                .with_value(1.0),
            )
            .with_guarantee(Guarantee::new(
                "c·Y ≤ 1",
                "crate",
                GuaranteeKind::Deterministic,
                GuaranteeScope::RoundedBeforeRepair,
            ))
            .with_exact(ExactInfo::optimal(13.0, 0.1, false))
            .with_guarantee(Guarantee::ratio_bound("c·x ≤ OPT", "crate", 1.0).invalid("heuristic"));
        assert_eq!(c.check(TOL), Ok(()));
        assert!(c.guarantees.iter().all(|g| !g.is_checked()));
    }

    #[test]
    fn ratio_above_guarantee_only_against_proven_optimum() {
        // max: OPT ≤ 2α·ALG with 2α = 1.1, but ALG = 10 and the bound is 12.
        let g = Guarantee::ratio_bound("OPT ≤ 2α·ALG", "OASiS (2018), Thm. 4", 1.1);
        let c = max_cert().with_guarantee(g.clone());
        assert!(c.achieved_ratio() > 1.1);
        assert_eq!(c.check(TOL), Ok(()), "a bound on OPT proves nothing");
        let c = c.with_exact(limit(Some(11.5), 12.0, false));
        assert_eq!(c.check(TOL), Ok(()), "nor does a limit result");
        let c = max_cert()
            .with_guarantee(g)
            .with_exact(ExactInfo::optimal(11.5, 0.1, false));
        assert_eq!(
            c.check(TOL),
            Err(CertificateViolation::RatioAboveGuarantee {
                expression: "OPT ≤ 2α·ALG".into(),
                ratio: 1.15,
                bound: 1.1
            })
        );
        // min: ALG ≤ 1.15·OPT with OPT = 12.5, ALG = 15.
        let c = min_cert()
            .with_guarantee(Guarantee::ratio_bound("c·x ≤ 1.15·OPT", "crate", 1.15))
            .with_exact(ExactInfo::optimal(12.5, 0.1, false));
        assert!(matches!(
            c.check(TOL),
            Err(CertificateViolation::RatioAboveGuarantee { bound: 1.15, .. })
        ));
        let c = min_cert()
            .with_guarantee(Guarantee::ratio_bound("c·x ≤ 1.2·OPT", "crate", 1.2))
            .with_exact(ExactInfo::optimal(12.5, 0.1, false));
        assert_eq!(c.check(TOL), Ok(()));
        // min with OPT = 0: any positive objective violates a finite ratio, a
        // tiny one within τ does not.
        let mut c = Certificate::new(
            "zero",
            Sense::Minimise,
            1.0,
            Bound::new(0.0, BoundKind::LpDualSafe),
        )
        .with_guarantee(Guarantee::ratio_bound("c·x ≤ 3·OPT", "crate", 3.0))
        .with_exact(ExactInfo::optimal(0.0, 0.1, false));
        assert!(matches!(
            c.check(TOL),
            Err(CertificateViolation::RatioAboveGuarantee { .. })
        ));
        c.objective = 1e-10;
        assert_eq!(c.check(TOL), Ok(()));
    }

    #[test]
    fn ratio_below_one() {
        // The sandwich passes within τ = 1e-6, but the ratio is 1 − 1.8e-6.
        let c = Certificate::new(
            "r",
            Sense::Minimise,
            0.5,
            Bound::new(0.5 + 9e-7, BoundKind::LpPrimal),
        );
        assert!(matches!(
            c.check(1e-6),
            Err(CertificateViolation::RatioBelowOne { .. })
        ));
        let c = Certificate::new(
            "r",
            Sense::Maximise,
            0.5 + 9e-7,
            Bound::new(0.5, BoundKind::LpPrimal),
        );
        assert!(matches!(
            c.check(1e-6),
            Err(CertificateViolation::RatioBelowOne { .. })
        ));
        assert_eq!(c.check(1e-5), Ok(()));
    }

    #[test]
    fn invalid_online_dual_ignored() {
        // Not valid: value 100 would violate the sandwich of a max... it is skipped.
        let mut c = Certificate::new(
            "online",
            Sense::Maximise,
            10.0,
            Bound::new(5.0, BoundKind::OnlineDual { valid: false }),
        );
        assert!(!c.relaxation_bound.is_usable());
        assert_eq!(c.best_bound(), f64::INFINITY);
        assert_eq!(c.check(TOL), Ok(()));
        // With an exact result the invalid bound is not compared either.
        c = c.with_exact(limit(Some(10.0), 20.0, false));
        assert_eq!(c.best_bound(), 20.0);
        assert_eq!(c.check(TOL), Ok(()));
        // The same value, valid, is caught.
        c.relaxation_bound.kind = BoundKind::OnlineDual { valid: true };
        assert!(matches!(
            c.check(TOL),
            Err(CertificateViolation::BoundExceedsObjective { .. })
        ));
        // Min form.
        let c = Certificate::new(
            "online",
            Sense::Minimise,
            10.0,
            Bound::new(100.0, BoundKind::OnlineDual { valid: false }),
        );
        assert_eq!(c.best_bound(), f64::NEG_INFINITY);
        assert_eq!(c.check(TOL), Ok(()));
    }

    #[test]
    fn violation_messages() {
        let e = CertificateViolation::Infeasible {
            class: ConstraintClass::Packing,
            row: Some(3),
            violation: 0.5,
        };
        assert_eq!(e.to_string(), "packing constraint at row 3 violated by 0.5");
        let e = CertificateViolation::Infeasible {
            class: ConstraintClass::Other,
            row: None,
            violation: 1.0,
        };
        assert_eq!(e.to_string(), "other constraint violated by 1");
        let e: crate::error::Error = CertificateViolation::RatioBelowOne { ratio: 0.5 }.into();
        assert!(e.to_string().contains("0.5"));
    }
}
