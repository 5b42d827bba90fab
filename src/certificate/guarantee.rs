//! A-priori statements of an algorithm: [`Guarantee`], [`GuaranteeKind`],
//! [`GuaranteeScope`].

#[cfg(doc)]
use super::Certificate;

/// An a-priori statement of an algorithm, evaluated for this instance.
///
/// A guarantee whose assumptions do not hold in this run is kept with
/// `valid = false` and its `reasons`, never dropped. [`Certificate::check`]
/// verifies only the guarantees for which [`Guarantee::is_checked`] holds
/// (valid, deterministic, about the final point); the others are tested
/// statistically.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Guarantee {
    /// Human-readable statement, e.g. `"E[c·X] ≤ β·LP"` or `"OPT ≤ 2α·ALG"`.
    pub expression: String,
    /// Where the statement is proven: a paper citation, or `"crate"` for the
    /// crate's own proofs.
    pub source: String,
    /// The statement's right-hand side evaluated for this instance (e.g.
    /// `β·LP = 10.5`), when it has one. For a deterministic final-point
    /// guarantee: min `objective ≤ value`, max `objective ≥ value`.
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_opt_f64"))]
    pub value: Option<f64>,
    /// `value` divided by the relaxation bound, when meaningful
    /// (informational).
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_opt_f64"))]
    pub ratio: Option<f64>,
    /// A ratio-only statement: min `ALG ≤ ratio_bound·OPT`, max
    /// `OPT ≤ ratio_bound·ALG` (e.g. the `2α` of an online primal–dual run).
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_opt_f64"))]
    pub ratio_bound: Option<f64>,
    /// Deterministic, in expectation, or with a probability.
    pub kind: GuaranteeKind,
    /// Which point the statement is about.
    pub scope: GuaranteeScope,
    /// `false` when the theorem's assumptions are not met in this run.
    pub valid: bool,
    /// Why the guarantee is not valid (empty when valid).
    pub reasons: Vec<String>,
}

impl Guarantee {
    /// A valid guarantee with no value, ratio or ratio bound yet.
    pub fn new(
        expression: impl Into<String>,
        source: impl Into<String>,
        kind: GuaranteeKind,
        scope: GuaranteeScope,
    ) -> Self {
        Guarantee {
            expression: expression.into(),
            source: source.into(),
            value: None,
            ratio: None,
            ratio_bound: None,
            kind,
            scope,
            valid: true,
            reasons: Vec::new(),
        }
    }

    /// A valid deterministic statement about the final point with right-hand
    /// side `value` (min `objective ≤ value`, max `objective ≥ value`).
    pub fn deterministic_value(
        expression: impl Into<String>,
        source: impl Into<String>,
        value: f64,
    ) -> Self {
        Guarantee::new(
            expression,
            source,
            GuaranteeKind::Deterministic,
            GuaranteeScope::FinalPoint,
        )
        .with_value(value)
    }

    /// A valid deterministic ratio-only statement about the final point
    /// (min `ALG ≤ bound·OPT`, max `OPT ≤ bound·ALG`).
    pub fn ratio_bound(
        expression: impl Into<String>,
        source: impl Into<String>,
        bound: f64,
    ) -> Self {
        Guarantee::new(
            expression,
            source,
            GuaranteeKind::Deterministic,
            GuaranteeScope::FinalPoint,
        )
        .with_ratio_bound(bound)
    }

    /// A valid statement in expectation with right-hand side `value`.
    pub fn in_expectation(
        expression: impl Into<String>,
        source: impl Into<String>,
        value: f64,
        scope: GuaranteeScope,
    ) -> Self {
        Guarantee::new(expression, source, GuaranteeKind::InExpectation, scope).with_value(value)
    }

    /// A valid statement that holds with probability at least `probability`.
    pub fn probabilistic(
        expression: impl Into<String>,
        source: impl Into<String>,
        probability: f64,
        scope: GuaranteeScope,
    ) -> Self {
        Guarantee::new(
            expression,
            source,
            GuaranteeKind::WithProbability(probability),
            scope,
        )
    }

    /// Sets [`Guarantee::value`].
    pub fn with_value(mut self, value: f64) -> Self {
        self.value = Some(value);
        self
    }

    /// Sets [`Guarantee::ratio`].
    pub fn with_ratio(mut self, ratio: f64) -> Self {
        self.ratio = Some(ratio);
        self
    }

    /// Sets [`Guarantee::ratio_bound`].
    pub fn with_ratio_bound(mut self, bound: f64) -> Self {
        self.ratio_bound = Some(bound);
        self
    }

    /// Marks the guarantee not valid for this run and records why. May be
    /// called several times.
    pub fn invalid(mut self, reason: impl Into<String>) -> Self {
        self.valid = false;
        self.reasons.push(reason.into());
        self
    }

    /// Whether [`Certificate::check`] verifies this guarantee: valid,
    /// [`GuaranteeKind::Deterministic`] and [`GuaranteeScope::FinalPoint`].
    pub fn is_checked(&self) -> bool {
        self.valid
            && self.kind == GuaranteeKind::Deterministic
            && self.scope == GuaranteeScope::FinalPoint
    }
}

/// How a [`Guarantee`] holds.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum GuaranteeKind {
    /// On every run.
    Deterministic,
    /// In expectation over the algorithm's randomness.
    InExpectation,
    /// With at least the given probability over the algorithm's randomness.
    WithProbability(
        #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))] f64,
    ),
}

/// Which point a [`Guarantee`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum GuaranteeScope {
    /// The rounded point before repair (repair may change the objective).
    RoundedBeforeRepair,
    /// The point the algorithm returns.
    FinalPoint,
}
