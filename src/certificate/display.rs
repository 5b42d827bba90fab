//! The [`Display`](std::fmt::Display) impls of the certificate's types and
//! their number formatting.

use std::fmt;

use super::{
    BoundKind, Certificate, ConstraintClass, ExactStatus, Guarantee, GuaranteeKind, GuaranteeScope,
    GuaranteeStanding, Sense,
};

impl fmt::Display for Sense {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sense::Minimise => "minimise",
            Sense::Maximise => "maximise",
        })
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundKind::LpDualSafe => f.write_str("safe LP dual bound"),
            BoundKind::LpPrimal => f.write_str("LP optimum"),
            BoundKind::MipDual => f.write_str("MIP dual bound"),
            BoundKind::Trivial => f.write_str("trivial bound"),
            BoundKind::OnlineDual { valid: true } => f.write_str("online dual bound"),
            BoundKind::OnlineDual { valid: false } => {
                f.write_str("online dual value, not a valid bound")
            }
        }
    }
}

impl fmt::Display for ExactStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExactStatus::Optimal => f.write_str("optimal"),
            ExactStatus::ProvenByBound => f.write_str("optimal by the bound"),
            ExactStatus::Limit { status } => write!(f, "stopped at a limit: {status}"),
        }
    }
}

impl fmt::Display for GuaranteeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuaranteeKind::Deterministic => f.write_str("deterministic"),
            GuaranteeKind::InExpectation => f.write_str("in expectation"),
            GuaranteeKind::WithProbability(p) => write!(f, "with probability ≥ {}", num(*p)),
        }
    }
}

impl fmt::Display for GuaranteeScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GuaranteeScope::RoundedBeforeRepair => "rounded before repair",
            GuaranteeScope::FinalPoint => "final point",
        })
    }
}

impl fmt::Display for ConstraintClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConstraintClass::Packing => "packing",
            ConstraintClass::Covering => "covering",
            ConstraintClass::Linking => "linking",
            ConstraintClass::Other => "other",
        })
    }
}

impl fmt::Display for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} ({})", self.algorithm, self.sense)?;

        // Summary line: objective, bound, exact result, best bound, ratio, trials.
        write!(
            f,
            "objective {} | bound {} ({})",
            num(self.objective),
            num(self.relaxation_bound.value),
            self.relaxation_bound.kind
        )?;
        if let Some(exact) = &self.exact {
            match exact.incumbent {
                Some(inc) => write!(f, " | exact {} ({})", num(inc), exact.status)?,
                None => write!(f, " | exact none ({})", exact.status)?,
            }
        }
        let best = self.best_bound();
        if !(self.relaxation_bound.is_usable() && best == self.relaxation_bound.value) {
            write!(f, " | best bound {}", num(best))?;
        }
        let ratio = self.achieved_ratio();
        if ratio.is_nan() {
            write!(f, " | ratio n/a")?;
        } else {
            write!(f, " | ratio {}", num(ratio))?;
        }
        let run = &self.run;
        write!(f, " | trials {}", run.trials)?;
        let mut details = Vec::new();
        if let Some(b) = run.best_trial {
            details.push(format!("best #{b}"));
        }
        if let Some(s) = run.seed {
            details.push(format!("seed {s}"));
        }
        if let Some(g) = &run.generator {
            details.push(g.clone());
        }
        if !details.is_empty() {
            write!(f, " ({})", details.join(", "))?;
        }

        if let Some(scope) = &self.scope {
            write!(f, "\n  scope: {scope}")?;
        }
        if let Some(exact) = &self.exact {
            write!(f, "\n  exact: incumbent ")?;
            match exact.incumbent {
                Some(inc) => write!(f, "{}", num(inc))?,
                None => write!(f, "none")?,
            }
            write!(
                f,
                ", dual bound {}, gap {}, {} s, {}",
                num(exact.dual_bound),
                num(exact.rel_gap),
                num(exact.seconds),
                if exact.returned {
                    "returned"
                } else {
                    "not returned"
                }
            )?;
        }

        write!(f, "\n  feasibility: ")?;
        let violated: Vec<String> = self
            .feasibility
            .iter()
            .filter(|(_, v)| !v.is_none())
            .map(|(class, v)| {
                let row = v
                    .max_absolute_row
                    .map(|r| format!(" at row {r}"))
                    .unwrap_or_default();
                format!(
                    "{class} {}{row} (relative {})",
                    num(v.max_absolute),
                    num(v.max_relative)
                )
            })
            .collect();
        if violated.is_empty() {
            write!(f, "no violation")?;
        } else {
            write!(f, "{}", violated.join(" | "))?;
        }
        if let Some(delta) = self.feasibility.allowed_packing_slack {
            write!(
                f,
                " | bicriteria: packing slack {} allowed, bounds not compared",
                num(delta)
            )?;
        }

        let mut parts = Vec::new();
        if let Some(beta) = run.beta {
            parts.push(format!("β {}", num(beta)));
        }
        parts.push(format!("repair moves {}", run.repair_moves));
        parts.push(format!(
            "LP solves {} ({} iterations)",
            run.lp_solves, run.lp_iterations
        ));
        if !run.stage_seconds.is_empty() {
            let stages: Vec<String> = run
                .stage_seconds
                .iter()
                .map(|(name, s)| format!("{name} {} s", num(*s)))
                .collect();
            parts.push(format!("stages {}", stages.join(", ")));
        }
        match run.timing_model_validated {
            Some(true) => parts.push("timing model validated".into()),
            Some(false) => {
                parts.push("timing model NOT validated (held-out error above target)".into())
            }
            None => {}
        }
        parts.push(format!("dmlsched {}", run.crate_version));
        write!(f, "\n  run: {}", parts.join(" | "))?;

        for g in &self.guarantees {
            write!(f, "\n  guarantee [{}] ", standing_label(self, g))?;
            write_guarantee(f, g)?;
        }
        Ok(())
    }
}

/// The bracketed label of a guarantee in a certificate's display.
fn standing_label(cert: &Certificate, g: &Guarantee) -> String {
    let rel = match cert.sense {
        Sense::Maximise => "≤",
        Sense::Minimise => "≥",
    };
    match cert.standing(g) {
        GuaranteeStanding::Valid => "valid".into(),
        GuaranteeStanding::NotValid(reasons) if reasons.is_empty() => "not valid".into(),
        GuaranteeStanding::NotValid(reasons) => format!("not valid: {}", reasons.join("; ")),
        GuaranteeStanding::Vacuous(reason) => format!("vacuous here: {reason}"),
        GuaranteeStanding::Superseded { implied, proven } => format!(
            "valid, superseded here: implies OPT {rel} {}, the bound proves OPT {rel} {}",
            num(implied),
            num(proven)
        ),
    }
}

/// A guarantee's statement, numbers, kind, scope and source.
fn write_guarantee(f: &mut fmt::Formatter<'_>, g: &Guarantee) -> fmt::Result {
    write!(f, "{}", g.expression)?;
    let mut vals = Vec::new();
    if let Some(v) = g.value {
        vals.push(format!("value {}", num(v)));
    }
    if let Some(r) = g.ratio {
        vals.push(format!("ratio {}", num(r)));
    }
    if let Some(r) = g.ratio_bound {
        vals.push(format!("ratio bound {}", num(r)));
    }
    if !vals.is_empty() {
        write!(f, ": {}", vals.join(", "))?;
    }
    write!(f, " ({}, {}; source: {})", g.kind, g.scope, g.source)
}

/// Formats a number with about six significant digits, trailing zeros
/// trimmed; infinities as `inf` / `-inf`.
pub(super) fn num(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let a = x.abs();
    if (1e-4..1e15).contains(&a) {
        let magnitude = a.log10().floor() as i32;
        let precision = (5 - magnitude).max(0) as usize;
        trim_zeros(format!("{x:.precision$}"))
    } else {
        let s = format!("{x:.5e}");
        match s.split_once('e') {
            Some((mantissa, exp)) => format!("{}e{exp}", trim_zeros(mantissa.to_string())),
            None => s,
        }
    }
}

/// Removes trailing zeros (and a trailing point) after a decimal point.
fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::fixtures::*;
    use crate::certificate::*;

    #[test]
    fn display_contains_key_numbers() {
        let s = full_min().to_string();
        assert!(s.starts_with("test::min (minimise)\n"), "{s}");
        assert!(
            s.contains(
                "objective 15 | bound 12.5 (safe LP dual bound) | exact 15 (optimal) | best bound 15 | ratio 1 | trials 16 (best #3, seed 7, ChaCha8)"
            ),
            "{s}"
        );
        assert!(
            s.contains("dual bound 15, gap 0, 0.12 s, not returned"),
            "{s}"
        );
        assert!(s.contains("feasibility: no violation"), "{s}");
        assert!(
            s.contains("β 1 | repair moves 2 | LP solves 1 (120 iterations)"),
            "{s}"
        );
        assert!(s.contains("stages lp 0.01 s, rounding 0.002 s"), "{s}");
        assert!(s.contains(env!("CARGO_PKG_VERSION")), "{s}");
        assert!(s.contains("guarantee [valid] c·x ≤ 2·LP: value 25"), "{s}");
        assert!(
            s.contains(
                "guarantee [not valid: estimated price bounds; placement adjusted] c·x ≤ LP: value 12.5"
            ),
            "{s}"
        );
        assert!(s.contains("ratio bound 1.5"), "{s}");
        assert!(
            s.contains("in expectation, rounded before repair; source: crate"),
            "{s}"
        );
        assert!(!s.ends_with('\n'));

        let mut f = FeasibilityReport::bicriteria(0.25);
        f.record(ConstraintClass::Packing, 3, 0.5, 4.0);
        let c = Certificate::new(
            "online",
            Sense::Maximise,
            10.0,
            Bound::new(f64::INFINITY, BoundKind::OnlineDual { valid: false }),
        )
        .with_feasibility(f);
        let s = c.to_string();
        assert!(
            s.contains("bound inf (online dual value, not a valid bound)"),
            "{s}"
        );
        assert!(s.contains("best bound inf | ratio inf | trials 1"), "{s}");
        assert!(s.contains("packing 0.5 at row 3 (relative 0.125)"), "{s}");
        assert!(s.contains("packing slack 0.25 allowed"), "{s}");
    }

    #[test]
    fn guarantees_are_labelled_by_their_standing() {
        let c = Certificate::new(
            "online",
            Sense::Maximise,
            100.0,
            Bound::new(150.0, BoundKind::OnlineDual { valid: true }),
        )
        .with_scope("the scheduler's own plans within the horizon T = 10")
        .with_guarantee(Guarantee::ratio_bound("OPT ≤ 2α·ALG", "crate", 1.2))
        .with_guarantee(Guarantee::ratio_bound("OPT ≤ 2α_eff·ALG", "crate", 1e12))
        .with_guarantee(Guarantee::ratio_bound(
            "OPT ≤ ∞·ALG",
            "crate",
            f64::INFINITY,
        ))
        .with_guarantee(Guarantee::probabilistic(
            "c·x ≤ β·LP",
            "crate",
            0.0,
            GuaranteeScope::RoundedBeforeRepair,
        ))
        .with_guarantee(Guarantee::ratio_bound("OPT ≤ 2α·ALG", "paper", 3.0).invalid("greedy"));
        let s = c.to_string();
        assert!(
            s.contains("\n  scope: the scheduler's own plans within the horizon T = 10"),
            "{s}"
        );
        assert!(
            s.contains("guarantee [valid] OPT ≤ 2α·ALG: ratio bound 1.2"),
            "{s}"
        );
        assert!(
            s.contains(
                "guarantee [valid, superseded here: implies OPT ≤ 100000000000000, the bound proves OPT ≤ 150] OPT ≤ 2α_eff·ALG"
            ),
            "{s}"
        );
        assert!(
            s.contains("guarantee [vacuous here: ratio bound inf] OPT ≤ ∞·ALG"),
            "{s}"
        );
        assert!(
            s.contains("guarantee [vacuous here: holds with probability 0] c·x ≤ β·LP"),
            "{s}"
        );
        assert!(
            s.contains("guarantee [not valid: greedy] OPT ≤ 2α·ALG"),
            "{s}"
        );
        assert_eq!(s.matches("[valid]").count(), 1, "{s}");

        // Minimisation: the implied bound is a lower bound.
        let m = Certificate::new(
            "m",
            Sense::Minimise,
            30.0,
            Bound::new(20.0, BoundKind::LpDualSafe),
        )
        .with_guarantee(Guarantee::ratio_bound("ALG ≤ 2·OPT", "crate", 2.0))
        .with_guarantee(Guarantee::ratio_bound("ALG ≤ 1.2·OPT", "crate", 1.2))
        .with_guarantee(Guarantee::deterministic_value(
            "c·x ≤ ∞",
            "crate",
            f64::INFINITY,
        ));
        let s = m.to_string();
        assert!(
            s.contains(
                "[valid, superseded here: implies OPT ≥ 15, the bound proves OPT ≥ 20] ALG ≤ 2·OPT"
            ),
            "{s}"
        );
        assert!(s.contains("guarantee [valid] ALG ≤ 1.2·OPT"), "{s}");
        assert!(
            s.contains("guarantee [vacuous here: right-hand side inf] c·x ≤ ∞"),
            "{s}"
        );
    }

    #[test]
    fn number_format() {
        assert_eq!(num(15.0), "15");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(1.2), "1.2");
        assert_eq!(num(0.1 + 0.2), "0.3");
        assert_eq!(num(-2.0 / 3.0), "-0.666667");
        assert_eq!(num(123456.7), "123457");
        assert_eq!(num(1e-9), "1e-9");
        assert_eq!(num(1.5e20), "1.5e20");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(f64::INFINITY), "inf");
        assert_eq!(num(f64::NEG_INFINITY), "-inf");
        assert_eq!(num(f64::NAN), "nan");
    }
}
