//! Models that are a maximum of linear terms (PS-L's placement-level form):
//! alternate between choosing each sample's binding term and a linear fit
//! ([`fit_alternating`]).

use super::linear::{feature_rows, fit_rows};
use super::report::{FitMethod, FitReport, accuracy, loss_value};
use super::{CalibrateError, FitOptions, Sample, check_samples};
use crate::timing::{IterationTime, MaxOfLinear, TimingError, dot};

/// A fitted maximum-of-linear model: the `template` (which supplies the
/// terms' features) and the fitted `theta`. It predicts
/// `θ·features_at(cfg, θ)`, the largest term under `θ`, which equals the
/// template's own formula with the fitted parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxLinearModel<M> {
    /// The model whose terms were fitted.
    pub(crate) template: M,
    /// The fitted parameters, in the order of
    /// [`MaxOfLinear::param_names`].
    pub(crate) theta: Vec<f64>,
}

impl<M: MaxOfLinear> MaxLinearModel<M> {
    /// The crate's timing model with the fitted parameters.
    ///
    /// # Errors
    ///
    /// [`CalibrateError::Unphysical`] if `θ` maps to no valid model (e.g.
    /// an inverse bandwidth fitted at 0).
    pub fn physical(&self) -> Result<M, CalibrateError> {
        self.template
            .with_params(&self.theta)
            .map_err(|source| CalibrateError::Unphysical { source })
    }
}

impl<M: MaxOfLinear> IterationTime for MaxLinearModel<M> {
    type Config = M::Config;

    /// `θ·features_at(cfg, θ)`.
    fn iteration_time_s(&self, cfg: &M::Config) -> Result<f64, TimingError> {
        Ok(dot(
            &self.theta,
            &self.template.features_at(cfg, &self.theta)?,
        ))
    }

    fn samples_per_iteration(&self, cfg: &M::Config) -> f64 {
        self.template.samples_per_iteration(cfg)
    }
}

/// The starting point and round cap of [`fit_alternating`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AlternationOptions {
    /// `θ⁰`, which chooses the binding terms of the first round; `None`
    /// starts from the template's own parameters.
    pub start: Option<Vec<f64>>,
    /// Rounds (linear fits) at most (default 50).
    pub max_rounds: usize,
}

impl Default for AlternationOptions {
    fn default() -> Self {
        AlternationOptions {
            start: None,
            max_rounds: 50,
        }
    }
}

impl AlternationOptions {
    /// The start `θ⁰ = (0, 10⁻⁹, 10⁻⁹, 10⁻⁹, 0)` for PS-L's placement-level
    /// form (`t_c, 1/b_int, 1/b_w, 1/B_s, ξ₂`: all bandwidths 1 GB/s, no
    /// compute, no overhead), 50 rounds.
    pub fn ps_locality() -> Self {
        AlternationOptions {
            start: Some(vec![0.0, 1e-9, 1e-9, 1e-9, 0.0]),
            max_rounds: 50,
        }
    }
}

/// Fits a maximum of linear terms by alternation.
///
/// Round `r`: every sample's binding term under `θ^{r−1}` gives its
/// feature row (`features_at(cfg, θ^{r−1})`; ties go to the term the model
/// lists first); a linear fit ([`fit_linear`](super::fit_linear)'s
/// method) on those rows gives `θ^r`. The loop stops when the terms `θ^r`
/// was fitted on still bind under `θ^r` (each within `10⁻¹²` relative of
/// the largest term, so that exact ties do not count as a change), or after
/// `max_rounds` fits, or when the assignment repeats an earlier one (the
/// iteration is deterministic, so it would cycle), and returns the `θ`
/// of smallest loss seen, with the rounds and whether the assignment
/// converged ([`FitMethod::Alternation`]). A failing round after the first
/// (e.g. no sample binds on a term any more, so its parameter is
/// unidentifiable) stops the loop with the best `θ` so far.
///
/// # Errors
///
/// As [`fit_linear`](super::fit_linear) in the first round;
/// [`CalibrateError::BadOption`] for a start of the wrong length or no
/// round.
///
/// # Complexity
///
/// At most `max_rounds` linear fits.
///
/// ```
/// use dmlsched::calibrate::{AlternationOptions, FitMethod, FitOptions};
/// use dmlsched::calibrate::{fit_alternating, synthetic};
///
/// // PS-L's placement-level form from 200 measurements with 1% noise.
/// let samples = synthetic::ps_l_samples(200, 0.01, 5)?;
/// let (model, report) = fit_alternating(
///     &synthetic::ps_l_template(), &samples, &FitOptions::default(),
///     &AlternationOptions::ps_locality(),
/// )?;
/// assert!(matches!(report.method, FitMethod::Alternation { converged: true, .. }));
/// assert!(report.accuracy.mape_pct < 2.0);
/// // The crate's own timing model with the fitted parameters: t_c is 0.12 s.
/// let fitted = model.physical()?;
/// assert!((fitted.0.compute_s / 0.12 - 1.0).abs() < 0.05);
/// assert_eq!(report.param("t_c"), Some(fitted.0.compute_s));
/// # Ok::<(), dmlsched::calibrate::CalibrateError>(())
/// ```
pub fn fit_alternating<M: MaxOfLinear + Clone>(
    model: &M,
    samples: &[Sample<M::Config>],
    opts: &FitOptions,
    alternation: &AlternationOptions,
) -> Result<(MaxLinearModel<M>, FitReport), CalibrateError> {
    let names = model.param_names();
    let q = names.len();
    check_samples(samples, q)?;
    let mut theta = alternation.start.clone().unwrap_or_else(|| model.params());
    if theta.len() != q || alternation.max_rounds == 0 {
        return Err(CalibrateError::BadOption {
            option: "alternation",
            reason: format!(
                "need a start of {q} values and at least one round, got {} values and {} rounds",
                theta.len(),
                alternation.max_rounds
            ),
        });
    }
    let signs = model.signs();
    let mut phi = feature_rows(samples, q, |cfg| model.features_at(cfg, &theta))?;
    let mut best: Option<FitReport> = None;
    let (mut rounds, mut converged) = (0, false);
    let mut seen: Vec<Vec<Vec<f64>>> = Vec::new();
    while rounds < alternation.max_rounds {
        rounds += 1;
        let mut report = match fit_rows(&phi, samples, names, &signs, opts, FitMethod::Linear) {
            Ok(r) => r,
            Err(e) if best.is_none() => return Err(e),
            Err(_) => break,
        };
        theta.clone_from(&report.theta);
        // Score θ by its own binding terms: the model's real predictions.
        let next = feature_rows(samples, q, |cfg| model.features_at(cfg, &theta))?;
        rescore(&mut report, &next, samples, opts);
        if best
            .as_ref()
            .is_none_or(|b| report.loss_value < b.loss_value)
        {
            best = Some(report);
        }
        if binding_unchanged(&theta, &phi, &next) {
            converged = true;
            break;
        }
        // A deterministic iteration that returns to an earlier assignment
        // would cycle for ever.
        if seen.contains(&next) {
            break;
        }
        seen.push(std::mem::replace(&mut phi, next));
    }
    let mut report = best.ok_or(CalibrateError::BadOption {
        option: "alternation",
        reason: "no round ran".into(),
    })?;
    report.method = FitMethod::Alternation { rounds, converged };
    let fitted = MaxLinearModel {
        template: model.clone(),
        theta: report.theta.clone(),
    };
    Ok((fitted, report))
}

/// Whether the terms `phi` that `theta` was fitted on still bind under
/// `theta`: every sample's fitted term is within `10⁻¹²` (relative) of the
/// largest term `next`. Comparing values rather than feature vectors keeps
/// exact ties (two terms of equal value, e.g. the worker and the PS side of
/// a balanced placement) from flipping the assignment for ever.
fn binding_unchanged(theta: &[f64], phi: &[Vec<f64>], next: &[Vec<f64>]) -> bool {
    phi.iter().zip(next).all(|(fitted, binding)| {
        let (a, b) = (dot(theta, fitted), dot(theta, binding));
        b - a <= 1e-12 * b.abs()
    })
}

/// Recomputes the report's accuracy and loss with the feature rows `phi`
/// (the binding terms under the report's own `θ`).
fn rescore<C>(report: &mut FitReport, phi: &[Vec<f64>], samples: &[Sample<C>], opts: &FitOptions) {
    let y: Vec<f64> = samples.iter().map(|s| s.measured_s).collect();
    let w: Vec<f64> = samples.iter().map(|s| s.weight).collect();
    let yhat: Vec<f64> = phi.iter().map(|row| dot(&report.theta, row)).collect();
    report.accuracy = accuracy(&y, &yhat);
    report.loss_value = loss_value(&y, &yhat, &w, opts.loss);
}
