//! A-priori statements of an algorithm: [`Guarantee`], [`GuaranteeKind`],
//! [`GuaranteeScope`], and how one stands on an instance
//! ([`GuaranteeStanding`], [`Certificate::standing`]).

use super::{Certificate, Sense};

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

    /// Sets the guarantee's value.
    pub fn with_value(mut self, value: f64) -> Self {
        self.value = Some(value);
        self
    }

    /// Sets the guarantee's ratio.
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

/// How a [`Guarantee`] stands on the instance of its certificate
/// ([`Certificate::standing`]): whether it tells the reader anything here.
#[derive(Clone, Debug, PartialEq)]
pub enum GuaranteeStanding {
    /// Valid, and it bounds something on this instance.
    Valid,
    /// The theorem's assumptions do not hold in this run (its reasons).
    NotValid(Vec<String>),
    /// Valid, but it bounds nothing on this instance: it holds with
    /// probability 0, or its ratio bound or right-hand side is infinite or
    /// undefined. The reason, in words.
    Vacuous(String),
    /// A valid ratio statement whose implied bound on `OPT` (`ratio_bound ·
    /// ALG` when maximising, `ALG / ratio_bound` when minimising) is looser
    /// than the bound the certificate proves ([`Certificate::best_bound`]):
    /// true, but it adds nothing on this instance.
    Superseded {
        /// The bound on `OPT` the guarantee implies.
        implied: f64,
        /// The bound on `OPT` the certificate proves.
        proven: f64,
    },
}

impl Guarantee {
    /// Why this guarantee bounds nothing whatever the instance's numbers,
    /// if it does not.
    fn vacuity(&self, sense: Sense) -> Option<String> {
        if let GuaranteeKind::WithProbability(p) = self.kind
            && (p.is_nan() || p <= 0.0)
        {
            return Some(format!("holds with probability {}", super::display::num(p)));
        }
        if let Some(r) = self.ratio_bound
            && !(r.is_finite() && r > 0.0)
        {
            return Some(format!("ratio bound {}", super::display::num(r)));
        }
        match self.value {
            Some(v) if v.is_nan() => Some("right-hand side undefined".into()),
            // min `objective ≤ +∞`, max `objective ≥ −∞`.
            Some(v) if v == -sense.no_bound() => {
                Some(format!("right-hand side {}", super::display::num(v)))
            }
            _ => None,
        }
    }

    /// The bound on `OPT` a valid deterministic ratio statement about the
    /// final point implies for the objective `alg`: `ratio_bound·alg`
    /// (max, `alg ≥ 0`) or `alg/ratio_bound` (min, `alg ≥ 0`).
    fn implied_bound(&self, sense: Sense, alg: f64) -> Option<f64> {
        let r = self.ratio_bound?;
        if !(self.is_checked() && r.is_finite() && r > 0.0 && alg.is_finite() && alg >= 0.0) {
            return None;
        }
        Some(match sense {
            Sense::Maximise => r * alg,
            Sense::Minimise => alg / r,
        })
    }
}

impl Certificate {
    /// How `guarantee` stands on this certificate's instance: not valid
    /// (its reasons), vacuous (it bounds nothing), superseded (a true ratio
    /// statement whose implied bound on `OPT` is looser than the one the
    /// certificate proves), or valid. The display of a certificate labels
    /// each guarantee by it; the data is unchanged.
    ///
    /// ```
    /// use dmlsched::certificate::{
    ///     Bound, BoundKind, Certificate, Guarantee, GuaranteeKind, GuaranteeScope,
    ///     GuaranteeStanding, Sense,
    /// };
    ///
    /// let cert = Certificate::new(
    ///     "online",
    ///     Sense::Maximise,
    ///     100.0,
    ///     Bound::new(150.0, BoundKind::OnlineDual { valid: true }),
    /// );
    /// let tight = Guarantee::ratio_bound("OPT ≤ 2α·ALG", "crate", 1.2);
    /// assert_eq!(cert.standing(&tight), GuaranteeStanding::Valid);
    /// let loose = Guarantee::ratio_bound("OPT ≤ 2α·ALG", "crate", 1e12);
    /// assert!(matches!(cert.standing(&loose), GuaranteeStanding::Superseded { .. }));
    /// let never = Guarantee::probabilistic(
    ///     "c·x ≤ β·LP",
    ///     "crate",
    ///     0.0,
    ///     GuaranteeScope::RoundedBeforeRepair,
    /// );
    /// assert!(matches!(cert.standing(&never), GuaranteeStanding::Vacuous(_)));
    /// ```
    pub fn standing(&self, guarantee: &Guarantee) -> GuaranteeStanding {
        if !guarantee.valid {
            return GuaranteeStanding::NotValid(guarantee.reasons.clone());
        }
        if let Some(reason) = guarantee.vacuity(self.sense) {
            return GuaranteeStanding::Vacuous(reason);
        }
        let proven = self.best_bound();
        if let Some(implied) = guarantee.implied_bound(self.sense, self.objective) {
            let looser = match self.sense {
                Sense::Maximise => implied > proven,
                Sense::Minimise => implied < proven,
            };
            if proven.is_finite() && looser {
                return GuaranteeStanding::Superseded { implied, proven };
            }
        }
        GuaranteeStanding::Valid
    }
}
