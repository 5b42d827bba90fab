//! What a fit reports: [`FitReport`], [`FitMethod`] and the accuracy
//! metrics [`Accuracy`] (also used on held-out samples, [`evaluate`]).

use super::{CalibrateError, FitWarning, Loss, Sample, check_measurements};
use crate::timing::IterationTime;

/// The accuracy of predictions `ŷ` against measurements `y`, on the
/// original scale and unweighted.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    /// Number of samples.
    pub n: usize,
    /// `R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)²`; `None` when all `y` are equal.
    pub r2: Option<f64>,
    /// Mean absolute percentage error `(100/n)·Σ|ŷ_i − y_i|/y_i`, percent.
    pub mape_pct: f64,
    /// Root mean squared error `√(Σ(ŷ − y)²/n)`, seconds.
    pub rmse_s: f64,
    /// Largest absolute percentage error, percent.
    pub max_ape_pct: f64,
    /// Relative residuals `(ŷ_i − y_i)/y_i`, in sample order.
    pub residuals: Vec<f64>,
}

/// How the parameters were found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FitMethod {
    /// One weighted linear least-squares solve.
    Linear,
    /// RAR-C's contender ratio `ξ₁` by profiling: a linear fit at every
    /// grid value, the best kept (ties to the larger `ξ₁`), optionally
    /// refined by golden-section search.
    ContentionProfile {
        /// The chosen `ξ₁`.
        contender_ratio: f64,
        /// `(ξ₁, loss)` at every grid value; `None` where the linear fit
        /// failed (e.g. every `k = 1`, so `θ_B` is unidentifiable).
        profile: Vec<(f64, Option<f64>)>,
        /// Whether the golden-section refinement improved on the grid.
        refined: bool,
    },
    /// A maximum of linear terms, by alternating between choosing each
    /// sample's binding term and a linear fit.
    Alternation {
        /// Linear fits done.
        rounds: usize,
        /// Whether the binding terms stopped changing (otherwise the round
        /// cap was reached, or a later round failed, and the best round was
        /// kept).
        converged: bool,
    },
    /// A deterministic grid then compass search in log space.
    PatternSearch {
        /// Loss evaluations on the grid.
        grid_evaluations: usize,
        /// Loss evaluations of the compass search.
        search_evaluations: usize,
        /// The final step, in log units.
        final_step: f64,
    },
}

/// The result of a fit.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FitReport {
    /// Fitted parameters, in the order of `names`.
    pub theta: Vec<f64>,
    /// Parameter names.
    pub names: Vec<&'static str>,
    /// In-sample accuracy.
    pub accuracy: Accuracy,
    /// Samples fitted.
    pub n: usize,
    /// Parameters fitted.
    pub q: usize,
    /// Numerical rank of the scaled feature matrix (`None` for the pattern
    /// search, which has no feature matrix).
    pub rank: Option<usize>,
    /// Condition number `σ_max/σ_min` of the scaled feature matrix (with
    /// the ridge rows, if any); `None` for the pattern search.
    pub cond: Option<f64>,
    /// Sign-constrained parameters that ended at 0.
    pub at_bound: Vec<&'static str>,
    /// Warnings.
    pub warnings: Vec<FitWarning>,
    /// The minimised loss `Σ w_i r_i²` with `r_i = (ŷ_i − y_i)/y_i`
    /// (relative loss) or `ŷ_i − y_i` (absolute), without the ridge term.
    pub loss_value: f64,
    /// How the parameters were found.
    pub method: FitMethod,
}

impl FitReport {
    /// The fitted value of parameter `name`, if the model has it.
    pub fn param(&self, name: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|n| *n == name)
            .map(|j| self.theta[j])
    }
}

/// The [`Accuracy`] of predictions `yhat` against measurements `y` (same
/// length, `y > 0`).
pub(crate) fn accuracy(y: &[f64], yhat: &[f64]) -> Accuracy {
    let n = y.len();
    let nf = n.max(1) as f64;
    let residuals: Vec<f64> = y.iter().zip(yhat).map(|(y, h)| (h - y) / y).collect();
    let ape = residuals.iter().map(|r| 100.0 * r.abs());
    let mean = y.iter().sum::<f64>() / nf;
    let ss_res: f64 = y.iter().zip(yhat).map(|(y, h)| (y - h) * (y - h)).sum();
    let ss_tot: f64 = y.iter().map(|y| (y - mean) * (y - mean)).sum();
    Accuracy {
        n,
        r2: (ss_tot > 0.0).then(|| 1.0 - ss_res / ss_tot),
        mape_pct: ape.clone().sum::<f64>() / nf,
        rmse_s: (ss_res / nf).sqrt(),
        max_ape_pct: ape.fold(0.0, f64::max),
        residuals,
    }
}

/// The loss `Σ w_i r_i²` of predictions `yhat`.
pub(crate) fn loss_value(y: &[f64], yhat: &[f64], w: &[f64], loss: Loss) -> f64 {
    y.iter()
        .zip(yhat)
        .zip(w)
        .map(|((y, h), w)| {
            let r = match loss {
                Loss::Relative => (h - y) / y,
                Loss::Absolute => h - y,
            };
            w * r * r
        })
        .sum()
}

/// The accuracy of `model` on `samples` (for instance held-out ones):
/// predictions by [`IterationTime::iteration_time_s`], metrics unweighted.
///
/// # Errors
///
/// [`CalibrateError::TooFewSamples`] for no sample; the measurement errors
/// of [`fit_linear`](super::fit_linear); [`CalibrateError::BadSample`] for
/// a configuration the model rejects; [`CalibrateError::NonFinite`] for a
/// prediction that is not finite.
///
/// # Complexity
///
/// `n` predictions.
///
/// ```
/// use dmlsched::calibrate::{Sample, evaluate, synthetic};
///
/// let truth = synthetic::ps_w_truth();
/// let samples = synthetic::ps_w_samples(50, 0.0, 1)?;
/// let exact = evaluate(&truth, &samples)?;
/// assert!(exact.mape_pct < 1e-9 && exact.r2.is_some_and(|r2| r2 > 0.999_999));
/// // Measurements 25% above the predictions: every error is 20%.
/// let slow: Vec<_> = samples.iter().map(|s| Sample::new(s.config, 1.25 * s.measured_s)).collect();
/// let acc = evaluate(&truth, &slow)?;
/// assert!((acc.mape_pct - 20.0).abs() < 1e-9 && (acc.max_ape_pct - 20.0).abs() < 1e-9);
/// assert!(acc.residuals.iter().all(|r| (r + 0.2).abs() < 1e-12));
/// assert!(evaluate(&truth, &slow[..0]).is_err()); // no sample
/// # Ok::<(), dmlsched::calibrate::CalibrateError>(())
/// ```
pub fn evaluate<M: IterationTime>(
    model: &M,
    samples: &[Sample<M::Config>],
) -> Result<Accuracy, CalibrateError> {
    if samples.is_empty() {
        return Err(CalibrateError::TooFewSamples { n: 0, needed: 1 });
    }
    check_measurements(samples)?;
    let mut yhat = Vec::with_capacity(samples.len());
    for (index, s) in samples.iter().enumerate() {
        let v = model
            .iteration_time_s(&s.config)
            .map_err(|source| CalibrateError::BadSample { index, source })?;
        if !v.is_finite() {
            return Err(CalibrateError::NonFinite {
                what: format!("the prediction for sample {index}"),
            });
        }
        yhat.push(v);
    }
    let y: Vec<f64> = samples.iter().map(|s| s.measured_s).collect();
    Ok(accuracy(&y, &yhat))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_by_hand() {
        let a = accuracy(&[1.0, 2.0, 4.0], &[1.1, 1.8, 4.0]);
        assert_eq!(a.n, 3);
        assert!((a.mape_pct - (10.0 + 10.0 + 0.0) / 3.0).abs() < 1e-12);
        assert!((a.max_ape_pct - 10.0).abs() < 1e-12);
        assert!((a.rmse_s - ((0.01 + 0.04) / 3.0f64).sqrt()).abs() < 1e-12);
        // ȳ = 7/3, Σ(y − ȳ)² = 14/3.
        let r2 = a.r2.unwrap();
        assert!((r2 - (1.0 - 0.05 / (14.0 / 3.0))).abs() < 1e-12);
        assert!((a.residuals[1] + 0.1).abs() < 1e-12);
        assert_eq!(accuracy(&[2.0, 2.0], &[2.0, 2.5]).r2, None);
    }

    #[test]
    fn loss_relative_and_absolute() {
        let (y, h, w) = ([1.0, 2.0], [1.5, 1.0], [1.0, 2.0]);
        assert!((loss_value(&y, &h, &w, Loss::Relative) - (0.25 + 2.0 * 0.25)).abs() < 1e-12);
        assert!((loss_value(&y, &h, &w, Loss::Absolute) - (0.25 + 2.0 * 1.0)).abs() < 1e-12);
    }
}
