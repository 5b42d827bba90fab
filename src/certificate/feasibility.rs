//! Feasibility of the returned point: [`ConstraintClass`], [`ClassViolation`],
//! [`FeasibilityReport`].

#[cfg(doc)]
use super::Certificate;

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
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))]
    pub max_absolute: f64,
    /// Row (or constraint) index of the largest absolute violation.
    pub max_absolute_row: Option<usize>,
    /// Largest relative violation (0 when none).
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_f64"))]
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
#[non_exhaustive]
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
    /// [`Certificate::check`] skips the
    /// comparisons of objective against bounds.
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_opt_f64"))]
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
