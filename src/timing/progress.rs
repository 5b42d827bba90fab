//! Progress accounting shared by every timing model and simulator
//! ([algorithms guide, section 3.4](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-progress)): fractional
//! iterations `Δ/τ` per `Δ` seconds by default, or whole iterations `⌊Δ/τ⌋`
//! per slot, the rule of Yu, Ji, Rajan, Liu (ACM MobiHoc 2022).
//!
//! Work is in the model's unit ([`super::IterationTime::samples_per_iteration`]),
//! throughput in that unit per second, times in seconds. Slotted simulators
//! count iterations per slot with [`iterations_in`]; event-driven simulators
//! move a job forward with [`advance`], which also reports the exact instant
//! at which the job finishes inside the step.

use crate::model::units::floor_tol;

/// Relative tolerance of [`advance`] when deciding that a job finishes
/// inside a step: a job whose finish time exceeds the step by at most
/// `1e-9·dt` finishes (so that finishing at exactly `R·τ` is not lost to
/// rounding).
pub const PROGRESS_TOL: f64 = 1e-9;

/// How a slotted simulator counts the iterations of one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ProgressMode {
    /// `Δ/τ` iterations; fractions carry over (the default).
    #[default]
    Fractional,
    /// `⌊Δ/τ⌋` iterations: the ring-all-reduce paper's rule. A job with
    /// `τ > Δ` makes no progress in the slot.
    Floor,
}

/// Iterations completed in `dt_s` seconds at a constant `tau_s` seconds per
/// iteration: `dt/τ` ([`ProgressMode::Fractional`]) or `⌊dt/τ⌋`
/// ([`ProgressMode::Floor`], with the crate's 10⁻⁹ relative tolerance of
/// [`floor_tol`], so that `0.3/0.1` counts 3).
///
/// Returns 0 when `dt_s ≤ 0`. `tau_s` must be > 0 (a model's iteration time
/// always is when its compute or communication time is).
///
/// ```
/// use dmlsched::timing::{iterations_in, ProgressMode};
/// assert_eq!(iterations_in(10.0, 4.0, ProgressMode::Fractional), 2.5);
/// assert_eq!(iterations_in(10.0, 4.0, ProgressMode::Floor), 2.0);
/// assert_eq!(iterations_in(10.0, 12.0, ProgressMode::Floor), 0.0);
/// ```
pub fn iterations_in(dt_s: f64, tau_s: f64, mode: ProgressMode) -> f64 {
    if dt_s <= 0.0 {
        return 0.0;
    }
    let n = dt_s / tau_s;
    match mode {
        ProgressMode::Fractional => n,
        ProgressMode::Floor => floor_tol(n),
    }
}

/// Seconds needed to finish `remaining` units of work at `throughput` units
/// per second: `remaining / throughput` (0 when nothing remains, infinite at
/// zero throughput).
///
/// ```
/// use dmlsched::timing::remaining_time_s;
///
/// assert_eq!(remaining_time_s(300.0, 4.0), 75.0);
/// assert_eq!(remaining_time_s(0.0, 4.0), 0.0);
/// assert_eq!(remaining_time_s(300.0, 0.0), f64::INFINITY);
/// ```
pub fn remaining_time_s(remaining: f64, throughput: f64) -> f64 {
    if remaining <= 0.0 {
        0.0
    } else if throughput > 0.0 {
        remaining / throughput
    } else {
        f64::INFINITY
    }
}

/// The outcome of [`advance`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Advance {
    /// Work left after the step, ≥ 0 (units of work).
    pub remaining: f64,
    /// If the job finished within the step, the offset from the start of the
    /// step at which it finished, in `[0, dt_s]` seconds.
    pub finished_after_s: Option<f64>,
}

/// Runs a job with `remaining` units of work at `throughput` units per second
/// for `dt_s` seconds. Remaining work is clamped at 0; a job that finishes
/// reports the exact offset `remaining / throughput` inside the step (up to
/// [`PROGRESS_TOL`]).
///
/// A job with nothing left finishes at offset 0; a job with zero throughput
/// (or a step `dt_s ≤ 0`) makes no progress.
///
/// ```
/// use dmlsched::timing::advance;
/// let a = advance(10.0, 4.0, 1.0);
/// assert_eq!((a.remaining, a.finished_after_s), (6.0, None));
/// let b = advance(10.0, 4.0, 5.0);
/// assert_eq!((b.remaining, b.finished_after_s), (0.0, Some(2.5)));
/// ```
pub fn advance(remaining: f64, throughput: f64, dt_s: f64) -> Advance {
    if remaining <= 0.0 {
        return Advance {
            remaining: 0.0,
            finished_after_s: Some(0.0),
        };
    }
    if throughput <= 0.0 || dt_s <= 0.0 || throughput.is_nan() {
        return Advance {
            remaining,
            finished_after_s: None,
        };
    }
    let finish = remaining / throughput;
    if finish <= dt_s * (1.0 + PROGRESS_TOL) {
        Advance {
            remaining: 0.0,
            finished_after_s: Some(finish.min(dt_s)),
        }
    } else {
        Advance {
            remaining: (remaining - throughput * dt_s).max(0.0),
            finished_after_s: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_versus_floor() {
        // A slot of 60 s at τ = 0.42975 s (the contended ring of `rar`'s example).
        let f = iterations_in(60.0, 0.42975, ProgressMode::Fractional);
        assert!((f - 139.616).abs() < 5e-4);
        assert_eq!(iterations_in(60.0, 0.42975, ProgressMode::Floor), 139.0);
        // Floating-point noise does not lose an iteration.
        assert_eq!(iterations_in(0.3, 0.1, ProgressMode::Floor), 3.0);
        assert!(iterations_in(0.3, 0.1, ProgressMode::Fractional) < 3.0);
        // τ > Δ: no progress under Floor, a fraction under Fractional.
        assert_eq!(iterations_in(1.0, 1.5, ProgressMode::Floor), 0.0);
        assert!((iterations_in(1.0, 1.5, ProgressMode::Fractional) - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(iterations_in(0.0, 1.0, ProgressMode::Fractional), 0.0);
        assert_eq!(ProgressMode::default(), ProgressMode::Fractional);
    }

    #[test]
    fn advance_completes_exactly_at_r_tau() {
        // R iterations at τ seconds each: throughput 1/τ iterations per
        // second, finish at R·τ.
        for &(r, tau) in &[(7.0, 0.3), (139.0, 0.42975), (1.0, 1e-3), (1e6, 0.1165)] {
            let thr = 1.0 / tau;
            let exact = r * tau;
            assert!((remaining_time_s(r, thr) - exact).abs() <= 1e-12 * exact);
            // A step of exactly R·τ finishes the job at its end.
            let a = advance(r, thr, exact);
            assert_eq!(a.remaining, 0.0);
            let t = a.finished_after_s.unwrap();
            assert!((t - exact).abs() <= 1e-12 * exact);
            // A longer step reports the finish inside it.
            let b = advance(r, thr, 2.0 * exact);
            assert!((b.finished_after_s.unwrap() - exact).abs() <= 1e-12 * exact);
            // A shorter step leaves work behind.
            let c = advance(r, thr, 0.5 * exact);
            assert_eq!(c.finished_after_s, None);
            assert!((c.remaining - 0.5 * r).abs() <= 1e-12 * r);
        }
    }

    #[test]
    fn advance_edge_cases() {
        assert_eq!(
            advance(0.0, 1.0, 1.0),
            Advance {
                remaining: 0.0,
                finished_after_s: Some(0.0)
            }
        );
        assert_eq!(
            advance(5.0, 0.0, 1.0),
            Advance {
                remaining: 5.0,
                finished_after_s: None
            }
        );
        assert_eq!(remaining_time_s(5.0, 0.0), f64::INFINITY);
        assert_eq!(remaining_time_s(-1.0, 2.0), 0.0);
    }
}
