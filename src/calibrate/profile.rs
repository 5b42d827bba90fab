//! RAR-C's contender ratio `ξ₁` by profiling ([`fit_contention_profile`]).

use super::linear::{LinearModel, fit_linear};
use super::models::{RarFamily, RarJobConfig};
use super::report::{FitMethod, FitReport};
use super::{CalibrateError, FitOptions, Sample};

/// The `ξ₁` grid and refinement of [`fit_contention_profile`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProfileOptions {
    /// Candidate values of `ξ₁`, each in `(0, 1]` (default `0.1, 0.2, …,
    /// 1.0`).
    pub grid: Vec<f64>,
    /// Refine the best grid value by golden-section search over its two
    /// neighbouring cells (default true).
    pub refine: bool,
    /// Width at which the refinement stops (default `10⁻³`).
    pub tolerance: f64,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            grid: (1..=10).map(|i| f64::from(i) / 10.0).collect(),
            refine: true,
            tolerance: 1e-3,
        }
    }
}

impl ProfileOptions {
    /// Checks the grid (non-empty, every value in `(0, 1]`) and the
    /// tolerance (finite, > 0); returns the grid sorted ascending without
    /// duplicates.
    fn sorted_grid(&self) -> Result<Vec<f64>, CalibrateError> {
        if self.grid.is_empty() || self.grid.iter().any(|x| !(*x > 0.0 && *x <= 1.0)) {
            return Err(CalibrateError::BadOption {
                option: "grid",
                reason: format!(
                    "need a non-empty grid of values in (0, 1], got {:?}",
                    self.grid
                ),
            });
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(CalibrateError::BadOption {
                option: "tolerance",
                reason: format!("must be finite and > 0, got {}", self.tolerance),
            });
        }
        let mut grid = self.grid.clone();
        grid.sort_by(f64::total_cmp);
        grid.dedup();
        Ok(grid)
    }
}

/// The golden ratio's conjugate `(√5 − 1)/2`.
const INV_PHI: f64 = 0.618_033_988_749_894_9;

/// Fits RAR-C with an unknown contender ratio `ξ₁`.
///
/// `ξ₁` enters through the clamp `k = max(1, ξ₁p)`, so the model is not
/// linear in it. For each `ξ₁` of the grid the linear parameters are fitted
/// ([`fit_linear`]); the smallest loss wins (ties to the larger `ξ₁`).
/// With `refine`, a golden-section search over `[ξ₁⁻, ξ₁⁺]` (the
/// neighbouring grid values) narrows it to `tolerance`, and its end point
/// replaces the grid value if its loss is smaller. A grid value whose fit
/// fails (for instance every `k = 1`, so that `θ_B` is unidentifiable)
/// has no loss in the profile.
///
/// `ξ₁` is identified only through samples where the clamp binds for some
/// `ξ₁` of the grid and not for others (small contention counts): when
/// every `ξ₁p ≥ 1`, `θ_B·(ξ₁p − 1)` is affine in `p` and trades off
/// exactly against `θ_A`.
///
/// # Errors
///
/// [`CalibrateError::BadOption`] for a bad grid or tolerance; if every grid
/// value fails, the error of the largest one.
///
/// # Complexity
///
/// One linear fit per grid value, plus about
/// `log(2h/tolerance)/log(1.618)` fits for the refinement (`h` the grid
/// step): about 25 fits by default.
///
/// ```
/// use dmlsched::calibrate::{FitMethod, FitOptions, ProfileOptions, RarJobConfig};
/// use dmlsched::calibrate::{fit_contention_profile, synthetic};
/// use dmlsched::timing::IterationTime;
///
/// // Noise-free RAR-C measurements of a ring whose contender ratio ξ₁ is 0.8.
/// let samples = synthetic::rar_c_samples(120, 0.0, 3)?;
/// let (model, report) = fit_contention_profile(
///     &synthetic::rar_c_template(), &samples, &FitOptions::default(), &ProfileOptions::default(),
/// )?;
/// let FitMethod::ContentionProfile { contender_ratio: xi1, .. } = report.method else { panic!() };
/// assert!((xi1 - synthetic::RAR_C_CONTENDER_RATIO).abs() < 0.01);
/// // The fitted model predicts an unmeasured configuration as the truth does.
/// let cfg = RarJobConfig { workers: 64, servers: 8, contention: 3 };
/// let truth = synthetic::rar_c_truth().iteration_time_s(&cfg)?;
/// assert!((model.iteration_time_s(&cfg)? / truth - 1.0).abs() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_contention_profile(
    model: &RarFamily,
    samples: &[Sample<RarJobConfig>],
    opts: &FitOptions,
    profile: &ProfileOptions,
) -> Result<(LinearModel<RarFamily>, FitReport), CalibrateError> {
    let grid = profile.sorted_grid()?;
    let fit_at = |xi: f64| fit_linear(&model.with_contender_ratio(xi), samples, opts);
    let mut table = Vec::with_capacity(grid.len());
    let mut best: Option<(usize, LinearModel<RarFamily>, FitReport)> = None;
    let mut last_err = None;
    for (i, &xi) in grid.iter().enumerate() {
        match fit_at(xi) {
            Ok((m, r)) => {
                table.push((xi, Some(r.loss_value)));
                if best.as_ref().is_none_or(|b| r.loss_value <= b.2.loss_value) {
                    best = Some((i, m, r));
                }
            }
            Err(e) => {
                table.push((xi, None));
                last_err = Some(e);
            }
        }
    }
    let Some((i, mut fitted, mut report)) = best else {
        return Err(last_err.unwrap_or(CalibrateError::BadOption {
            option: "grid",
            reason: "empty".into(),
        }));
    };
    let mut refined = false;
    if profile.refine && grid.len() > 1 {
        let lo = grid[i.saturating_sub(1)];
        let hi = grid[(i + 1).min(grid.len() - 1)];
        let loss = |xi: f64| fit_at(xi).map_or(f64::INFINITY, |(_, r)| r.loss_value);
        let xi = golden_section(loss, lo, hi, profile.tolerance);
        if let Ok((m, r)) = fit_at(xi)
            && r.loss_value < report.loss_value
        {
            (fitted, report, refined) = (m, r, true);
        }
    }
    report.method = FitMethod::ContentionProfile {
        contender_ratio: fitted.template.contender_ratio,
        profile: table,
        refined,
    };
    Ok((fitted, report))
}

/// Golden-section search for a minimum of `f` on `[lo, hi]`, until the
/// bracket is narrower than `tol`; returns the better of the two interior
/// points.
fn golden_section(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64, tol: f64) -> f64 {
    let mut x1 = hi - INV_PHI * (hi - lo);
    let mut x2 = lo + INV_PHI * (hi - lo);
    let (mut f1, mut f2) = (f(x1), f(x2));
    // The bracket shrinks by 0.618 per step; 200 steps cover any width.
    for _ in 0..200 {
        if hi - lo <= tol {
            break;
        }
        if f1 <= f2 {
            (hi, x2, f2) = (x2, x1, f1);
            x1 = hi - INV_PHI * (hi - lo);
            f1 = f(x1);
        } else {
            (lo, x1, f1) = (x1, x2, f2);
            x2 = lo + INV_PHI * (hi - lo);
            f2 = f(x2);
        }
    }
    if f1 <= f2 { x1 } else { x2 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_section_finds_a_parabola_minimum() {
        let x = golden_section(|x| (x - 0.37) * (x - 0.37), 0.2, 0.6, 1e-6);
        assert!((x - 0.37).abs() < 1e-6);
        // A minimum at the edge.
        let x = golden_section(|x| x, 0.2, 0.6, 1e-6);
        assert!((x - 0.2).abs() < 1e-6);
    }

    #[test]
    fn bad_grids_are_rejected() {
        for grid in [vec![], vec![0.0], vec![1.2], vec![f64::NAN]] {
            let p = ProfileOptions {
                grid,
                ..ProfileOptions::default()
            };
            assert!(matches!(
                p.sorted_grid(),
                Err(CalibrateError::BadOption { .. })
            ));
        }
        let p = ProfileOptions {
            grid: vec![0.5, 0.2, 0.5],
            ..ProfileOptions::default()
        };
        assert_eq!(p.sorted_grid().unwrap(), vec![0.2, 0.5]);
    }
}
