//! [`Sense`], the direction of optimisation, and the ratio convention.

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
    pub(super) fn bound_side(self, a: f64, b: f64, tau: f64) -> bool {
        match self {
            Sense::Minimise => a <= b + tau,
            Sense::Maximise => a >= b - tau,
        }
    }

    /// The trivial bound on `OPT`: `−∞` when minimising, `+∞` when maximising.
    pub(super) fn no_bound(self) -> f64 {
        match self {
            Sense::Minimise => f64::NEG_INFINITY,
            Sense::Maximise => f64::INFINITY,
        }
    }

    /// The ratio of objective `obj` against `v` (a bound on `OPT`, or `OPT`
    /// itself) under [`ratio_convention`]: min `obj / max(v, 0)`, max
    /// `v / obj`.
    pub(super) fn ratio(self, obj: f64, v: f64) -> f64 {
        match self {
            Sense::Minimise => ratio_convention(obj, v.max(0.0)),
            Sense::Maximise => ratio_convention(v, obj),
        }
    }
}

/// `a ≤ b`, false when either is NaN.
pub(super) fn le(a: f64, b: f64) -> bool {
    a <= b
}

/// The ratio convention: `1` when both are zero (within `1e-12`), `+∞` when
/// only the denominator is, NaN (undefined) when either is negative or NaN.
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
