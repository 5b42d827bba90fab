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
//! rules. The type follows `specs/packing-covering.md` §10 with the additions of
//! the design's interface sheet (guarantee sources, ratio-only guarantees,
//! validity flags and [`BoundKind::OnlineDual`] for the online primal–dual
//! framework).
//!
//! # JSON
//!
//! With the `serde` feature every type here serializes. JSON cannot hold
//! infinities, so every `f64` that may be infinite is written as a number when
//! finite and as the string `"inf"`, `"-inf"` (or `"nan"`) otherwise, and read
//! back the same way.

use std::fmt;

/// Magnitude below which a value counts as zero in ratio conventions.
const ZERO_EPS: f64 = 1e-12;

/// Direction of optimisation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Sense {
    /// Smaller objective values are better; bounds on `OPT` are lower bounds.
    Minimise,
    /// Larger objective values are better; bounds on `OPT` are upper bounds.
    Maximise,
}

impl Sense {
    /// `a` is on the bound side of `b`, within `tau`: `a ≤ b + tau` when
    /// minimising, `a ≥ b − tau` when maximising. NaN never is.
    fn bound_side(self, a: f64, b: f64, tau: f64) -> bool {
        match self {
            Sense::Minimise => a <= b + tau,
            Sense::Maximise => a >= b - tau,
        }
    }

    /// The trivial bound on `OPT`: `−∞` when minimising, `+∞` when maximising.
    fn no_bound(self) -> f64 {
        match self {
            Sense::Minimise => f64::NEG_INFINITY,
            Sense::Maximise => f64::INFINITY,
        }
    }

    /// The ratio of objective `obj` against `v` (a bound on `OPT`, or `OPT`
    /// itself) under [`ratio_convention`]: min `obj / max(v, 0)`, max
    /// `v / obj`.
    fn ratio(self, obj: f64, v: f64) -> f64 {
        match self {
            Sense::Minimise => ratio_convention(obj, v.max(0.0)),
            Sense::Maximise => ratio_convention(v, obj),
        }
    }
}

impl fmt::Display for Sense {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sense::Minimise => "minimise",
            Sense::Maximise => "maximise",
        })
    }
}

/// `a ≤ b`, false when either is NaN.
fn le(a: f64, b: f64) -> bool {
    a <= b
}

/// The ratio convention of `specs/packing-covering.md` §10: `1` when both are
/// zero (within `1e-12`), `+∞` when only the denominator is, NaN (undefined)
/// when either is negative or NaN.
fn ratio_convention(num: f64, den: f64) -> f64 {
    if num.is_nan() || den.is_nan() {
        return f64::NAN;
    }
    let num_zero = num.abs() <= ZERO_EPS;
    let den_zero = den.abs() <= ZERO_EPS;
    if num_zero && den_zero {
        1.0
    } else if num < -ZERO_EPS || den < -ZERO_EPS {
        f64::NAN
    } else if den_zero {
        f64::INFINITY
    } else {
        num / den
    }
}

// ---------------------------------------------------------------------------
// Bounds
// ---------------------------------------------------------------------------

/// A bound on the optimum `OPT`: a lower bound when minimising, an upper bound
/// when maximising.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Bound {
    /// The bound's value, in the user's sense. `−∞` (min) or `+∞` (max) means
    /// "no information".
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
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
    /// feasible by construction (`specs/packing-covering.md` §3.5): valid
    /// whatever the solver's numerical accuracy.
    LpDualSafe,
    /// The primal objective of the LP relaxation as reported by the solver:
    /// valid up to the solver's tolerances.
    LpPrimal,
    /// The dual bound of a MIP solve.
    MipDual,
    /// A simple analytic bound (for example `0`, or the sum of all utilities),
    /// or no bound at all (`∓∞`).
    Trivial,
    /// The dual objective of an online primal–dual run
    /// (`specs/primal-dual.md` §6.3, §11), which bounds `OPT` only under
    /// stated assumptions.
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
    fn is_relaxation_of_exact_model(self) -> bool {
        matches!(
            self,
            BoundKind::LpDualSafe | BoundKind::LpPrimal | BoundKind::MipDual
        )
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundKind::LpDualSafe => f.write_str("LpDualSafe"),
            BoundKind::LpPrimal => f.write_str("LpPrimal"),
            BoundKind::MipDual => f.write_str("MipDual"),
            BoundKind::Trivial => f.write_str("Trivial"),
            BoundKind::OnlineDual { valid: true } => f.write_str("OnlineDual"),
            BoundKind::OnlineDual { valid: false } => f.write_str("OnlineDual, not valid"),
        }
    }
}

// ---------------------------------------------------------------------------
// Exact solves
// ---------------------------------------------------------------------------

/// The result of an exact solve (MIP or exhaustive enumeration), when one was
/// run.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ExactInfo {
    /// How the exact solve ended.
    pub status: ExactStatus,
    /// Objective of the best integer point found, if any.
    #[cfg_attr(feature = "serde", serde(with = "serde_opt_f64"))]
    pub incumbent: Option<f64>,
    /// A valid bound on `OPT` proven by the solve (lower when minimising,
    /// upper when maximising); equals the incumbent when optimal. May be
    /// infinite when the solve stopped before bounding anything.
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
    pub dual_bound: f64,
    /// Relative gap between incumbent and dual bound (`+∞` without incumbent).
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
    pub rel_gap: f64,
    /// Wall-clock seconds spent in the exact solve.
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
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

impl fmt::Display for ExactStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExactStatus::Optimal => f.write_str("Optimal"),
            ExactStatus::ProvenByBound => f.write_str("ProvenByBound"),
            ExactStatus::Limit { status } => write!(f, "Limit: {status}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Guarantees
// ---------------------------------------------------------------------------

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
    #[cfg_attr(feature = "serde", serde(with = "serde_opt_f64"))]
    pub value: Option<f64>,
    /// `value` divided by the relaxation bound, when meaningful
    /// (informational).
    #[cfg_attr(feature = "serde", serde(with = "serde_opt_f64"))]
    pub ratio: Option<f64>,
    /// A ratio-only statement: min `ALG ≤ ratio_bound·OPT`, max
    /// `OPT ≤ ratio_bound·ALG` (e.g. the `2α` of an online primal–dual run).
    #[cfg_attr(feature = "serde", serde(with = "serde_opt_f64"))]
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
    WithProbability(#[cfg_attr(feature = "serde", serde(with = "serde_f64"))] f64),
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

/// Which point a [`Guarantee`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum GuaranteeScope {
    /// The rounded point before repair (repair may change the objective).
    RoundedBeforeRepair,
    /// The point the algorithm returns.
    FinalPoint,
}

impl fmt::Display for GuaranteeScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GuaranteeScope::RoundedBeforeRepair => "rounded before repair",
            GuaranteeScope::FinalPoint => "final point",
        })
    }
}

// ---------------------------------------------------------------------------
// Feasibility
// ---------------------------------------------------------------------------

/// A class of constraints whose violations are recorded separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ConstraintClass {
    /// `a·x ≤ p` rows with non-negative coefficients (capacities).
    Packing,
    /// `c·x ≥ q` rows with non-negative coefficients (requirements).
    Covering,
    /// Rows with any signs (e.g. linking columns in `pcip`).
    Linking,
    /// Anything else: variable bounds, schedule constraints checked by
    /// `schedule::verify` (gang, arrival, non-preemption).
    Other,
}

impl ConstraintClass {
    /// All classes, in report order.
    pub const ALL: [ConstraintClass; 4] = [
        ConstraintClass::Packing,
        ConstraintClass::Covering,
        ConstraintClass::Linking,
        ConstraintClass::Other,
    ];
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

/// Worst violations of one [`ConstraintClass`].
///
/// The absolute violation of a row is how far it misses its right-hand side
/// (`max(0, a·x − p)` for `≤`, `max(0, q − c·x)` for `≥`); the relative
/// violation divides it by `|rhs|` (`0` when there is no violation, `+∞` when
/// the right-hand side is 0). For packing rows `a·x ≤ (1+δ)p` holds exactly
/// when the relative violation is at most δ.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClassViolation {
    /// Largest absolute violation (0 when none).
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
    pub max_absolute: f64,
    /// Row (or constraint) index of the largest absolute violation.
    pub max_absolute_row: Option<usize>,
    /// Largest relative violation (0 when none).
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
    pub max_relative: f64,
    /// Row (or constraint) index of the largest relative violation.
    pub max_relative_row: Option<usize>,
}

impl ClassViolation {
    /// No violation.
    pub fn none() -> Self {
        ClassViolation {
            max_absolute: 0.0,
            max_absolute_row: None,
            max_relative: 0.0,
            max_relative_row: None,
        }
    }

    /// Records that `row` misses its right-hand side `rhs` by `absolute`
    /// (non-positive values are no violation), keeping the maxima. A NaN
    /// violation is kept, so that [`Certificate::check`] fails.
    pub fn record(&mut self, row: usize, absolute: f64, rhs: f64) {
        if !(absolute > 0.0 || absolute.is_nan()) {
            return;
        }
        let relative = if absolute.is_nan() || rhs.is_nan() {
            f64::NAN
        } else if rhs == 0.0 {
            f64::INFINITY
        } else {
            absolute / rhs.abs()
        };
        if absolute.is_nan() || absolute > self.max_absolute {
            self.max_absolute = absolute;
            self.max_absolute_row = Some(row);
        }
        if relative.is_nan() || relative > self.max_relative {
            self.max_relative = relative;
            self.max_relative_row = Some(row);
        }
    }

    /// Whether nothing is violated (both maxima ≤ 0).
    pub fn is_none(&self) -> bool {
        self.max_absolute <= 0.0 && self.max_relative <= 0.0
    }
}

impl Default for ClassViolation {
    fn default() -> Self {
        ClassViolation::none()
    }
}

/// Feasibility of the returned point: worst violations per constraint class,
/// and the packing slack allowed in bicriteria mode.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FeasibilityReport {
    /// Packing rows (capacities).
    pub packing: ClassViolation,
    /// Covering rows (requirements).
    pub covering: ClassViolation,
    /// Linking rows.
    pub linking: ClassViolation,
    /// Everything else (variable bounds, schedule constraints).
    pub other: ClassViolation,
    /// Bicriteria mode: packing rows only need `a·x ≤ (1+δ)p` with this δ.
    /// When set, the returned point may be better than `OPT`, so
    /// [`Certificate::check`] skips the comparisons of objective against bounds
    /// (`specs/packing-covering.md` §15.5).
    #[cfg_attr(feature = "serde", serde(with = "serde_opt_f64"))]
    pub allowed_packing_slack: Option<f64>,
}

impl FeasibilityReport {
    /// No violation, no slack: for points checked exactly (e.g. schedules that
    /// passed `schedule::verify`).
    pub fn feasible() -> Self {
        FeasibilityReport {
            packing: ClassViolation::none(),
            covering: ClassViolation::none(),
            linking: ClassViolation::none(),
            other: ClassViolation::none(),
            allowed_packing_slack: None,
        }
    }

    /// No violation recorded yet, with packing slack δ allowed (bicriteria
    /// mode).
    pub fn bicriteria(delta: f64) -> Self {
        FeasibilityReport {
            allowed_packing_slack: Some(delta),
            ..FeasibilityReport::feasible()
        }
    }

    /// The violations of one class.
    pub fn class(&self, class: ConstraintClass) -> &ClassViolation {
        match class {
            ConstraintClass::Packing => &self.packing,
            ConstraintClass::Covering => &self.covering,
            ConstraintClass::Linking => &self.linking,
            ConstraintClass::Other => &self.other,
        }
    }

    /// The violations of one class, mutably.
    pub fn class_mut(&mut self, class: ConstraintClass) -> &mut ClassViolation {
        match class {
            ConstraintClass::Packing => &mut self.packing,
            ConstraintClass::Covering => &mut self.covering,
            ConstraintClass::Linking => &mut self.linking,
            ConstraintClass::Other => &mut self.other,
        }
    }

    /// Records a violation; see [`ClassViolation::record`].
    pub fn record(&mut self, class: ConstraintClass, row: usize, absolute: f64, rhs: f64) {
        self.class_mut(class).record(row, absolute, rhs);
    }

    /// Every class with its violations, in [`ConstraintClass::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (ConstraintClass, &ClassViolation)> {
        ConstraintClass::ALL.into_iter().map(|c| (c, self.class(c)))
    }

    /// Largest absolute violation over all classes (NaN if any is NaN).
    pub fn max_absolute(&self) -> f64 {
        self.iter().fold(0.0, |m: f64, (_, v)| {
            if m.is_nan() || v.max_absolute.is_nan() {
                f64::NAN
            } else {
                m.max(v.max_absolute)
            }
        })
    }
}

impl Default for FeasibilityReport {
    fn default() -> Self {
        FeasibilityReport::feasible()
    }
}

// ---------------------------------------------------------------------------
// Run information
// ---------------------------------------------------------------------------

/// How the run that produced the certificate went.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RunInfo {
    /// Seed of the run's random streams, if random.
    pub seed: Option<u64>,
    /// Name of the portable generator (e.g. `"ChaCha8"`), if random.
    pub generator: Option<String>,
    /// Number of candidate points (draws) tried; 1 for a deterministic
    /// algorithm.
    pub trials: u32,
    /// 0-based index of the trial whose point was returned.
    pub best_trial: Option<u32>,
    /// Scaling factor β (= λ) applied before rounding, if any.
    #[cfg_attr(feature = "serde", serde(with = "serde_opt_f64"))]
    pub beta: Option<f64>,
    /// Repair moves applied to the returned point.
    pub repair_moves: u64,
    /// Number of LP solves.
    pub lp_solves: u32,
    /// Total simplex / IPM iterations over all LP solves.
    pub lp_iterations: u64,
    /// Wall-clock seconds per stage, in the order the stages ran.
    pub stage_seconds: Vec<(String, f64)>,
    /// Version of this crate that produced the certificate.
    pub crate_version: String,
}

impl RunInfo {
    /// One deterministic trial, nothing else recorded, this crate's version.
    pub fn new() -> Self {
        RunInfo {
            seed: None,
            generator: None,
            trials: 1,
            best_trial: None,
            beta: None,
            repair_moves: 0,
            lp_solves: 0,
            lp_iterations: 0,
            stage_seconds: Vec::new(),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// Sets the seed and the generator's name.
    pub fn with_seed(mut self, seed: u64, generator: impl Into<String>) -> Self {
        self.seed = Some(seed);
        self.generator = Some(generator.into());
        self
    }

    /// Appends the time spent in a stage.
    pub fn add_stage(&mut self, name: impl Into<String>, seconds: f64) {
        self.stage_seconds.push((name.into(), seconds));
    }
}

impl Default for RunInfo {
    fn default() -> Self {
        RunInfo::new()
    }
}

// ---------------------------------------------------------------------------
// Certificate
// ---------------------------------------------------------------------------

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
    #[cfg_attr(feature = "serde", serde(with = "serde_f64"))]
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
    ///    [`OnlineDual`](BoundKind::OnlineDual) bound marked not valid is not
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
    ///    point ([`Guarantee::is_checked`]):
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

impl fmt::Display for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} ({})", self.algorithm, self.sense)?;

        // Summary line, as in specs/packing-covering.md §10.
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
        parts.push(format!("dmlsched {}", run.crate_version));
        write!(f, "\n  run: {}", parts.join(" | "))?;

        for g in &self.guarantees {
            if g.valid {
                write!(f, "\n  guarantee [valid] {}", g.expression)?;
            } else if g.reasons.is_empty() {
                write!(f, "\n  guarantee [not valid] {}", g.expression)?;
            } else {
                write!(
                    f,
                    "\n  guarantee [not valid: {}] {}",
                    g.reasons.join("; "),
                    g.expression
                )?;
            }
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
            write!(f, " ({}, {}; source: {})", g.kind, g.scope, g.source)?;
        }
        Ok(())
    }
}

/// Formats a number with about six significant digits, trailing zeros
/// trimmed; infinities as `inf` / `-inf`.
fn num(x: f64) -> String {
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

// ---------------------------------------------------------------------------
// Violations
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Serde helpers: non-finite floats as strings.
// ---------------------------------------------------------------------------

/// `f64` as a JSON number when finite, else `"inf"`, `"-inf"` or `"nan"`.
#[cfg(feature = "serde")]
mod serde_f64 {
    use serde::{Deserializer, Serializer, de};
    use std::fmt;

    pub(super) fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else if x.is_nan() {
            s.serialize_str("nan")
        } else if *x > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        d.deserialize_any(F64Visitor)
    }

    struct F64Visitor;

    impl de::Visitor<'_> for F64Visitor {
        type Value = f64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(r#"a number or one of "inf", "-inf", "nan""#)
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
            match v {
                "inf" | "+inf" | "infinity" | "Infinity" => Ok(f64::INFINITY),
                "-inf" | "-infinity" | "-Infinity" => Ok(f64::NEG_INFINITY),
                "nan" | "NaN" => Ok(f64::NAN),
                _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
            }
        }
    }

    /// Wrapper serializing through this module.
    pub(super) struct Wrapped(pub(super) f64);

    impl serde::Serialize for Wrapped {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            serialize(&self.0, s)
        }
    }

    impl<'de> serde::Deserialize<'de> for Wrapped {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize(d).map(Wrapped)
        }
    }
}

/// `Option<f64>` as `null` or as [`serde_f64`] does.
#[cfg(feature = "serde")]
mod serde_opt_f64 {
    use super::serde_f64::Wrapped;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        x.map(Wrapped).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: f64 = 1e-9;

    fn min_cert() -> Certificate {
        Certificate::new(
            "test::min",
            Sense::Minimise,
            15.0,
            Bound::new(12.5, BoundKind::LpDualSafe),
        )
    }

    fn max_cert() -> Certificate {
        Certificate::new(
            "test::max",
            Sense::Maximise,
            10.0,
            Bound::new(12.0, BoundKind::LpDualSafe),
        )
    }

    fn limit(incumbent: Option<f64>, dual_bound: f64, returned: bool) -> ExactInfo {
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

    fn full_min() -> Certificate {
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
    fn display_contains_key_numbers() {
        let s = full_min().to_string();
        assert!(s.starts_with("test::min (minimise)\n"), "{s}");
        assert!(
            s.contains(
                "objective 15 | bound 12.5 (LpDualSafe) | exact 15 (Optimal) | best bound 15 | ratio 1 | trials 16 (best #3, seed 7, ChaCha8)"
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
        assert!(s.contains("bound inf (OnlineDual, not valid)"), "{s}");
        assert!(s.contains("best bound inf | ratio inf | trials 1"), "{s}");
        assert!(s.contains("packing 0.5 at row 3 (relative 0.125)"), "{s}");
        assert!(s.contains("packing slack 0.25 allowed"), "{s}");
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

    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trip_with_infinities() {
        let mut c = full_min();
        c.relaxation_bound = Bound::none(Sense::Minimise);
        c.exact = Some(limit(None, f64::NEG_INFINITY, false));
        c.exact.as_mut().unwrap().rel_gap = f64::INFINITY;
        c.guarantees.push(
            Guarantee::probabilistic("P ≥ 0.5", "crate", 0.5, GuaranteeScope::FinalPoint)
                .with_ratio(f64::INFINITY)
                .with_value(1.0),
        );
        let mut f = FeasibilityReport::bicriteria(0.1);
        f.record(ConstraintClass::Linking, 2, 0.5, 0.0);
        c.feasibility = f;
        let json = serde_json::to_string_pretty(&c).unwrap();
        assert!(json.contains(r#""value": "-inf""#), "{json}");
        assert!(json.contains(r#""rel_gap": "inf""#), "{json}");
        assert!(json.contains(r#""max_relative": "inf""#), "{json}");
        assert!(json.contains(r#""incumbent": null"#), "{json}");
        let back: Certificate = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);

        // Plain numbers (integers too) and NaN strings are read.
        let b: Bound =
            serde_json::from_str(r#"{"value": 3, "kind": {"OnlineDual": {"valid": false}}}"#)
                .unwrap();
        assert_eq!(b, Bound::new(3.0, BoundKind::OnlineDual { valid: false }));
        let b: Bound = serde_json::from_str(r#"{"value": "nan", "kind": "Trivial"}"#).unwrap();
        assert!(b.value.is_nan());
        assert!(serde_json::from_str::<Bound>(r#"{"value": "big", "kind": "Trivial"}"#).is_err());
        let g: GuaranteeKind = serde_json::from_str(r#"{"WithProbability": 0.25}"#).unwrap();
        assert_eq!(g, GuaranteeKind::WithProbability(0.25));
    }
}
