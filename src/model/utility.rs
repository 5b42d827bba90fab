//! Utility of a job as a function of its completion delay.
//!
//! The delay is counted in elapsed slots `δ = t̂ − a`, where `a` is the
//! arrival slot and `t̂` the completion slot (the last slot the job runs in):
//! a job that completes in its arrival slot has `δ = 0`. Formulations
//! that count `δ` from 1 (as some papers do) convert when they are built.

/// A non-negative, non-increasing utility of the elapsed slots `δ`.
///
/// ```
/// use dmlsched::model::Utility;
/// let u = Utility::Sigmoid { g1: 10.0, g2: 1.0, g3: 3.0 };
/// assert_eq!(u.value(3), 5.0);
/// assert!(u.value(4) < u.value(3));
/// // ln_value stays finite where value underflows to 0.
/// assert!(u.value(2000) == 0.0 && u.ln_value(2000).is_finite());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)
)]
pub enum Utility {
    /// `g1 / (1 + exp(g2·(δ − g3)))` (OASiS): `g1 ≥ 0` the priority, `g2 ≥ 0`
    /// the time sensitivity, `g3` the target delay in slots.
    Sigmoid {
        /// Scale (priority), ≥ 0.
        g1: f64,
        /// Steepness, ≥ 0 (0 gives the constant `g1/2`).
        g2: f64,
        /// Midpoint in slots (any finite value).
        g3: f64,
    },
    /// `value` if `δ ≤ deadline_slots`, else 0: a hard deadline.
    DeadlineStep {
        /// Utility when the deadline is met, ≥ 0.
        value: f64,
        /// Largest delay (in slots) that still meets the deadline.
        deadline_slots: u32,
    },
    /// `max(0, g1 − slope·δ)`.
    Linear {
        /// Utility at δ = 0, ≥ 0.
        g1: f64,
        /// Loss per slot of delay, ≥ 0.
        slope: f64,
    },
    /// `value` whatever the delay.
    Constant {
        /// The utility, ≥ 0.
        value: f64,
    },
    /// `values[δ]`; delays past the end take the last entry. Must be
    /// non-empty, non-negative and non-increasing.
    Table {
        /// Utility at δ = 0, 1, 2, …
        values: Vec<f64>,
    },
}

impl Default for Utility {
    /// `Constant { value: 1 }`: every completion is worth 1.
    fn default() -> Self {
        Utility::Constant { value: 1.0 }
    }
}

/// Why a utility is invalid (see [`Utility::check`]).
#[derive(Debug, Clone, PartialEq)]
pub enum UtilityDefect {
    /// A parameter is NaN or infinite.
    NonFinite(&'static str),
    /// A parameter that must be ≥ 0 is negative.
    Negative(&'static str, f64),
    /// The utility increases from delay `at` to `at + 1`.
    Increasing {
        /// The delay where the increase starts.
        at: u32,
    },
    /// A table utility has no entries.
    EmptyTable,
}

impl Utility {
    /// Utility of completing `delta` slots after the arrival slot.
    pub fn value(&self, delta: u32) -> f64 {
        let d = f64::from(delta);
        match self {
            Utility::Sigmoid { g1, g2, g3 } => g1 / (1.0 + (g2 * (d - g3)).exp()),
            Utility::DeadlineStep {
                value,
                deadline_slots,
            } => {
                if delta <= *deadline_slots {
                    *value
                } else {
                    0.0
                }
            }
            Utility::Linear { g1, slope } => (g1 - slope * d).max(0.0),
            Utility::Constant { value } => *value,
            Utility::Table { values } => table_entry(values, delta),
        }
    }

    /// `ln(value(delta))`, computed analytically where `value` would underflow
    /// (sigmoid: `ln g1 − softplus(g2·(δ − g3))`). `−∞` when the utility is 0.
    pub fn ln_value(&self, delta: u32) -> f64 {
        match self {
            Utility::Sigmoid { g1, g2, g3 } => {
                let z = g2 * (f64::from(delta) - g3);
                // softplus(z) = ln(1 + e^z), stable for both signs.
                let softplus = if z > 0.0 {
                    z + (-z).exp().ln_1p()
                } else {
                    z.exp().ln_1p()
                };
                g1.ln() - softplus
            }
            other => other.value(delta).ln(),
        }
    }

    /// Validates the parameters: finite, non-negative where required, and
    /// non-increasing in `δ` (checked analytically for every variant).
    pub fn check(&self) -> Result<(), UtilityDefect> {
        let finite = |name: &'static str, v: f64| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(UtilityDefect::NonFinite(name))
            }
        };
        let nonneg = |name: &'static str, v: f64| {
            finite(name, v)?;
            if v < 0.0 {
                Err(UtilityDefect::Negative(name, v))
            } else {
                Ok(())
            }
        };
        match self {
            Utility::Sigmoid { g1, g2, g3 } => {
                nonneg("g1", *g1)?;
                finite("g2", *g2)?;
                finite("g3", *g3)?;
                if *g2 < 0.0 && *g1 > 0.0 {
                    // The value rises with δ; report where it first does.
                    return Err(UtilityDefect::Increasing { at: 0 });
                }
                nonneg("g2", *g2)
            }
            Utility::DeadlineStep { value, .. } => nonneg("value", *value),
            Utility::Linear { g1, slope } => {
                nonneg("g1", *g1)?;
                finite("slope", *slope)?;
                if *slope < 0.0 && *g1 >= 0.0 {
                    return Err(UtilityDefect::Increasing { at: 0 });
                }
                Ok(())
            }
            Utility::Constant { value } => nonneg("value", *value),
            Utility::Table { values } => {
                if values.is_empty() {
                    return Err(UtilityDefect::EmptyTable);
                }
                for &v in values {
                    nonneg("values", v)?;
                }
                match values.windows(2).position(|w| w[1] > w[0]) {
                    Some(i) => Err(UtilityDefect::Increasing {
                        at: u32::try_from(i).unwrap_or(u32::MAX),
                    }),
                    None => Ok(()),
                }
            }
        }
    }
}

fn table_entry(values: &[f64], delta: u32) -> f64 {
    let i = usize::try_from(delta).unwrap_or(usize::MAX);
    values
        .get(i)
        .or_else(|| values.last())
        .copied()
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_by_hand() {
        let s = Utility::Sigmoid {
            g1: 4.0,
            g2: 0.0,
            g3: 7.0,
        };
        assert_eq!(s.value(100), 2.0);
        let d = Utility::DeadlineStep {
            value: 3.0,
            deadline_slots: 2,
        };
        assert_eq!((d.value(2), d.value(3)), (3.0, 0.0));
        let l = Utility::Linear {
            g1: 5.0,
            slope: 2.0,
        };
        assert_eq!((l.value(0), l.value(2), l.value(3)), (5.0, 1.0, 0.0));
        let t = Utility::Table {
            values: vec![3.0, 2.0, 2.0],
        };
        assert_eq!((t.value(0), t.value(1), t.value(9)), (3.0, 2.0, 2.0));
        assert_eq!(Utility::Constant { value: 1.5 }.value(1000), 1.5);
    }

    #[test]
    fn ln_value_matches_and_does_not_underflow() {
        let s = Utility::Sigmoid {
            g1: 10.0,
            g2: 2.0,
            g3: 1.0,
        };
        for d in 0..20 {
            assert!((s.ln_value(d) - s.value(d).ln()).abs() < 1e-12);
        }
        assert_eq!(s.value(1000), 0.0);
        let expect = 10f64.ln() - 2.0 * 999.0;
        assert!((s.ln_value(1000) - expect).abs() < 1e-9);
        let l = Utility::Linear {
            g1: 1.0,
            slope: 1.0,
        };
        assert_eq!(l.ln_value(5), f64::NEG_INFINITY);
    }

    #[test]
    fn checks() {
        assert!(
            Utility::Sigmoid {
                g1: 1.0,
                g2: 1.0,
                g3: 1.0
            }
            .check()
            .is_ok()
        );
        assert_eq!(
            Utility::Sigmoid {
                g1: 1.0,
                g2: -1.0,
                g3: 1.0
            }
            .check(),
            Err(UtilityDefect::Increasing { at: 0 })
        );
        assert_eq!(
            Utility::Linear {
                g1: 1.0,
                slope: -0.5
            }
            .check(),
            Err(UtilityDefect::Increasing { at: 0 })
        );
        assert_eq!(
            Utility::Table {
                values: vec![2.0, 1.0, 1.5]
            }
            .check(),
            Err(UtilityDefect::Increasing { at: 1 })
        );
        assert_eq!(
            Utility::Table { values: vec![] }.check(),
            Err(UtilityDefect::EmptyTable)
        );
        assert_eq!(
            Utility::Constant { value: -1.0 }.check(),
            Err(UtilityDefect::Negative("value", -1.0))
        );
        assert_eq!(
            Utility::Constant { value: f64::NAN }.check(),
            Err(UtilityDefect::NonFinite("value"))
        );
    }
}
