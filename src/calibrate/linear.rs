//! Weighted linear least squares for models linear in their parameters:
//! row scaling, column scaling, optional ridge, SVD with a rank check, and
//! sign constraints ([`fit_linear`]).

use nalgebra::{DMatrix, DVector};

use super::nnls::{default_rank_tol, solve_signed, svd};
use super::report::{FitMethod, FitReport, accuracy, loss_value};
use super::{CalibrateError, Constraints, FitOptions, FitWarning, Loss, Sample, check_samples};
use crate::timing::{IterationTime, LinearInParameters, Sign, TimingError, dot};

/// A fitted model that is linear in its parameters: the `template` timing
/// model (which supplies the features `φ(cfg)`) and the fitted `theta`.
///
/// It predicts `θ·φ(cfg)`, which equals the template's own formula with
/// the fitted parameters (the linearity invariant of
/// [`LinearInParameters`]), and it keeps predicting when `θ` maps to no
/// valid physical model (for example an inverse bandwidth fitted at 0).
/// [`LinearModel::physical`] builds the crate's timing model from `θ`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearModel<M> {
    /// The model whose features were fitted (its own parameter values are
    /// not used).
    pub template: M,
    /// The fitted parameters, in the order of
    /// [`LinearInParameters::param_names`].
    pub theta: Vec<f64>,
}

impl<M: LinearInParameters> LinearModel<M> {
    /// The crate's timing model with the fitted parameters
    /// ([`LinearInParameters::with_params`]).
    ///
    /// # Errors
    ///
    /// [`CalibrateError::Unphysical`] if `θ` maps to no valid model (e.g.
    /// an inverse bandwidth of 0, or a negative degradation slope).
    pub fn physical(&self) -> Result<M, CalibrateError> {
        self.template
            .with_params(&self.theta)
            .map_err(|source| CalibrateError::Unphysical { source })
    }
}

impl<M: LinearInParameters> IterationTime for LinearModel<M> {
    type Config = M::Config;

    /// `θ·φ(cfg)`.
    fn iteration_time_s(&self, cfg: &M::Config) -> Result<f64, TimingError> {
        Ok(dot(&self.theta, &self.template.features(cfg)?))
    }

    fn samples_per_iteration(&self, cfg: &M::Config) -> f64 {
        self.template.samples_per_iteration(cfg)
    }
}

/// Fits the parameters of a model that is linear in them, by weighted
/// least squares on the model's features ([module docs](super) for the
/// maths).
///
/// Returns the fitted [`LinearModel`] and its [`FitReport`] (in-sample
/// accuracy, rank, condition number, parameters at their bound,
/// warnings).
///
/// # Errors
///
/// [`CalibrateError::BadOption`], [`CalibrateError::NonFiniteMeasurement`],
/// [`CalibrateError::NonPositiveMeasurement`], [`CalibrateError::BadWeight`],
/// [`CalibrateError::TooFewSamples`] (fewer than `q + 1` samples),
/// [`CalibrateError::BadSample`] (a configuration the model rejects),
/// [`CalibrateError::ZeroFeature`], [`CalibrateError::RankDeficient`],
/// [`CalibrateError::NonFinite`], [`CalibrateError::NoConvergence`].
///
/// # Complexity
///
/// `O(n q²)` for the SVD of the `n × q` scaled matrix; with sign
/// constraints active, at most `3q` outer NNLS iterations of at most
/// `q + 1` solves each.
///
/// ```
/// use dmlsched::calibrate::{CalibrateError, FitOptions, Sample, fit_linear, synthetic};
/// use dmlsched::timing::{IterationTime, PsConfig, PsLocality};
///
/// // Noise-free RAR-C measurements: the fit recovers the true parameters.
/// let samples = synthetic::rar_c_samples(60, 0.0, 3)?;
/// let (fitted, report) = fit_linear(&synthetic::rar_c_template(), &samples, &FitOptions::default())?;
/// for (got, want) in report.theta.iter().zip(synthetic::RAR_C_THETA) {
///     assert!((got / want - 1.0).abs() < 1e-6);
/// }
/// assert!(report.accuracy.mape_pct < 1e-6);
/// // The crate's ring-all-reduce timing at 16 workers, with fitted parameters.
/// let timing = fitted.physical()?.timing(16)?;
/// assert!((timing.external_bps / 1.25e9 - 1.0).abs() < 1e-6);
///
/// // PS-L's two-configuration form has two distinct times (LOCAL and
/// // DISTRIBUTED) for three parameters: `1 = [LOCAL] + [DISTRIBUTED]`, so
/// // t_c cannot be told apart from the transfer terms.
/// let truth = PsLocality::new(0.1, 1e8, 1.6e10, 1.25e9, 2.5e9, 0.0)?;
/// let ps: Vec<_> = [PsConfig::Local { workers: 2 }, PsConfig::Distributed { workers: 4 },
///                   PsConfig::Local { workers: 8 }, PsConfig::Distributed { workers: 8 }]
///     .iter()
///     .map(|c| Ok(Sample::new(*c, truth.iteration_time_s(c)?)))
///     .collect::<Result<_, dmlsched::Error>>()?;
/// let err = fit_linear(&truth, &ps, &FitOptions::default()).unwrap_err();
/// assert!(matches!(err, CalibrateError::RankDeficient { rank: 2, .. }));
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn fit_linear<M: LinearInParameters + Clone>(
    model: &M,
    samples: &[Sample<M::Config>],
    opts: &FitOptions,
) -> Result<(LinearModel<M>, FitReport), CalibrateError> {
    let names = model.param_names();
    check_samples(samples, names.len())?;
    let phi = feature_rows(samples, names.len(), |cfg| model.features(cfg))?;
    let report = fit_rows(
        &phi,
        samples,
        names,
        &model.signs(),
        opts,
        FitMethod::Linear,
    )?;
    let theta = report.theta.clone();
    Ok((
        LinearModel {
            template: model.clone(),
            theta,
        },
        report,
    ))
}

/// The feature rows of all samples, each checked for its length `q`.
pub(crate) fn feature_rows<C>(
    samples: &[Sample<C>],
    q: usize,
    mut features: impl FnMut(&C) -> Result<Vec<f64>, TimingError>,
) -> Result<Vec<Vec<f64>>, CalibrateError> {
    samples
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let row = features(&s.config)
                .map_err(|source| CalibrateError::BadSample { index, source })?;
            if row.len() == q {
                Ok(row)
            } else {
                Err(CalibrateError::BadSample {
                    index,
                    source: TimingError::BadConfig {
                        reason: format!("{} features for {q} parameters", row.len()),
                    },
                })
            }
        })
        .collect()
}

/// Fits `θ` on given feature rows and builds the report: the one
/// implementation behind every linear fit (plain, ξ₁ profile, alternation).
/// The samples must have passed [`check_samples`].
pub(crate) fn fit_rows<C>(
    phi: &[Vec<f64>],
    samples: &[Sample<C>],
    names: &[&'static str],
    signs: &[Sign],
    opts: &FitOptions,
    method: FitMethod,
) -> Result<FitReport, CalibrateError> {
    opts.validate()?;
    if signs.len() != names.len() {
        return Err(CalibrateError::BadOption {
            option: "model",
            reason: format!("{} signs for {} parameters", signs.len(), names.len()),
        });
    }
    let y: Vec<f64> = samples.iter().map(|s| s.measured_s).collect();
    let w: Vec<f64> = samples.iter().map(|s| s.weight).collect();
    let sol = solve_linear(phi, &y, &w, names, signs, opts)?;
    let yhat: Vec<f64> = phi.iter().map(|row| dot(&sol.theta, row)).collect();
    if let Some(i) = yhat.iter().position(|v| !v.is_finite()) {
        return Err(CalibrateError::NonFinite {
            what: format!("the prediction for sample {i}"),
        });
    }
    Ok(FitReport {
        loss_value: loss_value(&y, &yhat, &w, opts.loss),
        accuracy: accuracy(&y, &yhat),
        names: names.to_vec(),
        n: samples.len(),
        q: names.len(),
        rank: Some(sol.rank),
        cond: Some(sol.cond),
        at_bound: sol.at_bound.iter().map(|&j| names[j]).collect(),
        warnings: sol.warnings,
        theta: sol.theta,
        method,
    })
}

/// The solution of one linear least-squares problem.
struct LinearSolution {
    theta: Vec<f64>,
    rank: usize,
    cond: f64,
    at_bound: Vec<usize>,
    warnings: Vec<FitWarning>,
}

/// Row and column scaling, ridge, SVD with rank check, then the
/// unconstrained solution or, if it breaks a sign, NNLS.
fn solve_linear(
    phi: &[Vec<f64>],
    y: &[f64],
    w: &[f64],
    names: &[&'static str],
    signs: &[Sign],
    opts: &FitOptions,
) -> Result<LinearSolution, CalibrateError> {
    let q = names.len();
    let ScaledSystem {
        mut a,
        mut b,
        scale,
    } = scaled_system(phi, y, w, names, opts.loss)?;
    if opts.ridge > 0.0 {
        let n = a.nrows();
        a = a.resize_vertically(n + q, 0.0);
        b = b.resize_vertically(n + q, 0.0);
        for j in 0..q {
            a[(n + j, j)] = opts.ridge.sqrt();
        }
    }
    let rows = a.nrows();
    let dec = svd(a.clone())?;
    let sv = &dec.singular_values;
    let smax = sv.max();
    let tol = opts
        .rank_tol
        .unwrap_or_else(|| default_rank_tol(rows, q, smax));
    let rank = sv.iter().filter(|&&s| s > tol).count();
    if rank < q {
        return Err(rank_deficient(&dec, names, rank));
    }
    let cond = smax / sv.min();
    let mut warnings = Vec::new();
    if cond > opts.cond_warn {
        warnings.push(FitWarning::IllConditioned { cond });
    }
    let unconstrained = dec
        .solve(&b, tol)
        .map_err(|_| CalibrateError::NoConvergence {
            what: "singular value decomposition",
            iterations: super::nnls::SVD_MAX_ITER,
        })?;
    let nonneg: Vec<bool> = signs
        .iter()
        .map(|s| opts.constraints == Constraints::FromModelSigns && *s == Sign::NonNeg)
        .collect();
    let breaks_sign = (0..q).any(|j| nonneg[j] && unconstrained[j] < 0.0);
    let (scaled, at_bound) = if breaks_sign {
        solve_signed(&a, &b, &nonneg)?
    } else {
        (unconstrained, Vec::new())
    };
    let theta: Vec<f64> = (0..q).map(|j| scaled[j] / scale[j]).collect();
    if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
        return Err(CalibrateError::NonFinite {
            what: format!("the fitted parameter `{}`", names[j]),
        });
    }
    Ok(LinearSolution {
        theta,
        rank,
        cond,
        at_bound,
        warnings,
    })
}

/// `RankDeficient` with the suspects: the parameters whose entries in the
/// right singular vector of the smallest singular value are at least a
/// tenth of the largest entry, largest first.
fn rank_deficient(
    dec: &nalgebra::SVD<f64, nalgebra::Dyn, nalgebra::Dyn>,
    names: &[&'static str],
    rank: usize,
) -> CalibrateError {
    let sv = &dec.singular_values;
    let mut suspects = Vec::new();
    if let Some(v_t) = &dec.v_t {
        let k = sv.imin();
        let v: Vec<f64> = v_t.row(k).iter().map(|x| x.abs()).collect();
        let vmax = v.iter().copied().fold(0.0, f64::max);
        let mut idx: Vec<usize> = (0..v.len()).filter(|&j| v[j] >= 0.1 * vmax).collect();
        idx.sort_by(|&i, &j| v[j].total_cmp(&v[i]).then(i.cmp(&j)));
        suspects = idx.into_iter().map(|j| names[j]).collect();
    }
    CalibrateError::RankDeficient {
        rank,
        params: names.len(),
        suspects,
    }
}

/// The scaled least-squares problem `Ã θ̃ ≈ b`, `θ_j = θ̃_j / scale_j`.
struct ScaledSystem {
    a: DMatrix<f64>,
    b: DVector<f64>,
    scale: Vec<f64>,
}

/// `Ã = diag(s)·Φ·diag(1/c)` and `b = diag(s)·y`, with the column scales
/// `c`. Row scales: `s_i = √w_i / y_i` (relative loss) or `√w_i`
/// (absolute). Each column is first divided by its largest entry, so that
/// scaling cannot overflow where the result is representable.
fn scaled_system(
    phi: &[Vec<f64>],
    y: &[f64],
    w: &[f64],
    names: &[&'static str],
    loss: Loss,
) -> Result<ScaledSystem, CalibrateError> {
    let (n, q) = (y.len(), names.len());
    let mut s = Vec::with_capacity(n);
    let mut b = DVector::zeros(n);
    for i in 0..n {
        let root = w[i].sqrt();
        let (si, bi) = match loss {
            Loss::Relative => (root / y[i], root),
            Loss::Absolute => (root, root * y[i]),
        };
        if !(si.is_finite() && bi.is_finite()) {
            return Err(CalibrateError::NonFinite {
                what: format!("the row scale of sample {i} (measurement {} s)", y[i]),
            });
        }
        s.push(si);
        b[i] = bi;
    }
    let mut a = DMatrix::zeros(n, q);
    let mut scale = Vec::with_capacity(q);
    for (j, &param) in names.iter().enumerate() {
        if let Some(i) = (0..n).find(|&i| !phi[i][j].is_finite()) {
            return Err(CalibrateError::NonFinite {
                what: format!("feature `{param}` of sample {i}"),
            });
        }
        let raw = (0..n).map(|i| phi[i][j].abs()).fold(0.0, f64::max);
        if raw == 0.0 {
            return Err(CalibrateError::ZeroFeature { param });
        }
        for i in 0..n {
            a[(i, j)] = phi[i][j] / raw * s[i];
        }
        let norm = stable_norm(a.column(j).iter().copied());
        if norm == 0.0 {
            return Err(CalibrateError::ZeroFeature { param });
        }
        if !norm.is_finite() {
            return Err(CalibrateError::NonFinite {
                what: format!("the scale of feature `{param}`"),
            });
        }
        a.column_mut(j).unscale_mut(norm);
        scale.push(raw * norm);
    }
    Ok(ScaledSystem { a, b, scale })
}

/// `‖x‖₂` without intermediate overflow: `m·√Σ(x/m)²` with `m = max|x|`.
fn stable_norm(x: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = x.clone().map(f64::abs).fold(0.0, f64::max);
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    m * x.map(|v| (v / m) * (v / m)).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_norm_survives_huge_entries() {
        let v = [1e300, 1e300, 1e300, 1e300];
        assert!((stable_norm(v.iter().copied()) / 2e300 - 1.0).abs() < 1e-15);
        assert_eq!(stable_norm([0.0, 0.0].iter().copied()), 0.0);
    }

    #[test]
    fn ridge_shrinks_towards_zero() {
        // y = 2·x exactly; ridge pulls the scaled coefficient below 2.
        let phi: Vec<Vec<f64>> = (1..=5).map(|i| vec![f64::from(i)]).collect();
        let y: Vec<f64> = (1..=5).map(|i| 2.0 * f64::from(i)).collect();
        let w = vec![1.0; 5];
        let opts = FitOptions::default();
        let plain = solve_linear(&phi, &y, &w, &["a"], &[Sign::Free], &opts).unwrap();
        assert!((plain.theta[0] - 2.0).abs() < 1e-12);
        let ridge = FitOptions { ridge: 0.5, ..opts };
        let shrunk = solve_linear(&phi, &y, &w, &["a"], &[Sign::Free], &ridge).unwrap();
        // Scaled problem: one unit column ã, b = (1, …, 1): θ̃ = ãᵀb/(1 + λ).
        assert!((shrunk.theta[0] / plain.theta[0] - 1.0 / 1.5).abs() < 1e-12);
    }
}
