//! [`Calibration`] (a fitting procedure, for validation), its four
//! implementations, and [`Predictor`]: a fitted timing model with its
//! validation and the accuracy target.

use super::alternation::{AlternationOptions, MaxLinearModel, fit_alternating};
use super::cv::{CvReport, cross_validate, split_holdout};
use super::linear::{LinearModel, fit_linear};
use super::models::RarFamily;
use super::profile::{ProfileOptions, fit_contention_profile};
use super::report::{Accuracy, FitReport, evaluate};
use super::search::{SearchOptions, fit_layered};
use super::{CalibrateError, FitOptions, Sample};
use crate::certificate::RunInfo;
use crate::timing::{IterationTime, LinearInParameters, MaxOfLinear, PsLayered, TimingError};

/// The accuracy target: a held-out MAPE below 10%, the average error
/// reported for the offline iteration-time predictor DeepProphet (J. Xia,
/// "Network scheduling for distributed machine learning", HKUST MPhil
/// thesis, 2019).
pub const TARGET_MAPE_PCT: f64 = 10.0;

/// A fitting procedure: a model family, its options and a method. Hold-out
/// validation and cross-validation refit it on parts of the data.
pub trait Calibration {
    /// The configuration of a sample.
    type Config: Clone;
    /// The fitted model.
    type Model: IterationTime<Config = Self::Config>;

    /// The number of parameters fitted; a fit needs one sample more.
    fn num_params(&self) -> usize;

    /// Fits on `samples`.
    ///
    /// # Errors
    ///
    /// Those of the underlying fit function.
    fn fit(
        &self,
        samples: &[Sample<Self::Config>],
    ) -> Result<(Self::Model, FitReport), CalibrateError>;
}

/// [`fit_linear`] as a [`Calibration`].
#[derive(Debug, Clone, PartialEq)]
pub struct Linear<M> {
    /// The template model (features, signs).
    pub(crate) model: M,
    /// Least-squares options.
    pub(crate) options: FitOptions,
}

impl<M> Linear<M> {
    /// A linear calibration of `model`.
    pub fn new(model: M, options: FitOptions) -> Self {
        Linear { model, options }
    }
}

impl<M: LinearInParameters + Clone> Calibration for Linear<M>
where
    M::Config: Clone,
{
    type Config = M::Config;
    type Model = LinearModel<M>;

    fn num_params(&self) -> usize {
        self.model.param_names().len()
    }

    fn fit(
        &self,
        samples: &[Sample<M::Config>],
    ) -> Result<(LinearModel<M>, FitReport), CalibrateError> {
        fit_linear(&self.model, samples, &self.options)
    }
}

/// [`fit_alternating`] as a [`Calibration`].
#[derive(Debug, Clone, PartialEq)]
pub struct Alternating<M> {
    /// The template model (features of each term, signs).
    pub model: M,
    /// Least-squares options of every round.
    pub options: FitOptions,
    /// Start and round cap.
    pub alternation: AlternationOptions,
}

impl<M: MaxOfLinear + Clone> Calibration for Alternating<M>
where
    M::Config: Clone,
{
    type Config = M::Config;
    type Model = MaxLinearModel<M>;

    fn num_params(&self) -> usize {
        self.model.param_names().len()
    }

    fn fit(
        &self,
        samples: &[Sample<M::Config>],
    ) -> Result<(MaxLinearModel<M>, FitReport), CalibrateError> {
        fit_alternating(&self.model, samples, &self.options, &self.alternation)
    }
}

/// [`fit_contention_profile`] as a [`Calibration`].
#[derive(Debug, Clone, PartialEq)]
pub struct ContentionProfile {
    /// The template family.
    pub model: RarFamily,
    /// Least-squares options of every linear fit.
    pub options: FitOptions,
    /// Grid and refinement.
    pub profile: ProfileOptions,
}

impl Calibration for ContentionProfile {
    type Config = super::RarJobConfig;
    type Model = LinearModel<RarFamily>;

    fn num_params(&self) -> usize {
        self.model.param_names().len()
    }

    fn fit(
        &self,
        samples: &[Sample<super::RarJobConfig>],
    ) -> Result<(LinearModel<RarFamily>, FitReport), CalibrateError> {
        fit_contention_profile(&self.model, samples, &self.options, &self.profile)
    }
}

/// [`fit_layered`] as a [`Calibration`].
#[derive(Debug, Clone, PartialEq)]
pub struct LayeredSearch {
    /// The template model: the profiled layers (scaled by the fitted `κ`).
    pub model: PsLayered,
    /// Least-squares options (only the loss and the validation of the
    /// samples apply).
    pub options: FitOptions,
    /// Ranges, grid and stopping rule.
    pub search: SearchOptions,
}

impl Calibration for LayeredSearch {
    type Config = (u32, u32);
    type Model = PsLayered;

    fn num_params(&self) -> usize {
        self.search.num_params()
    }

    fn fit(
        &self,
        samples: &[Sample<(u32, u32)>],
    ) -> Result<(PsLayered, FitReport), CalibrateError> {
        fit_layered(&self.model, samples, &self.options, &self.search)
    }
}

/// How a predictor was validated.
#[derive(Debug, Clone, PartialEq)]
pub enum Validation {
    /// Fitted on a training part, evaluated on the held-out rest.
    Holdout {
        /// Training samples.
        n_train: usize,
        /// Accuracy on the held-out samples.
        test: Accuracy,
    },
    /// Fitted on all samples; k-fold cross-validation estimates the error.
    CrossValidation(CvReport),
}

/// A fitted timing model, its fit report, and how well it predicts unseen
/// configurations. It is itself an [`IterationTime`] (delegating to
/// `model`), so a scheduler or simulator can call `iteration_time_s` on it.
///
/// A predictor that misses its target may still be used; a certificate of
/// any decision built on it should record it ([`Predictor::certify`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Predictor<M> {
    /// The fitted model.
    pub model: M,
    /// The report of the fit that produced `model`.
    pub fit: FitReport,
    /// The validation, if any.
    pub validation: Option<Validation>,
}

impl<M: IterationTime> Predictor<M>
where
    M::Config: Clone,
{
    /// Fits on a training part of `samples` and evaluates on the held-out
    /// rest ([`split_holdout`] with `fraction` and `seed`). The model is the
    /// one fitted on the training part, so the held-out error is honest.
    ///
    /// # Errors
    ///
    /// As [`split_holdout`], the fit and [`evaluate`].
    pub fn holdout<K>(
        calibration: &K,
        samples: &[Sample<M::Config>],
        fraction: f64,
        seed: u64,
    ) -> Result<Self, CalibrateError>
    where
        K: Calibration<Model = M, Config = M::Config>,
    {
        let (train, test) = split_holdout(samples, fraction, seed)?;
        let (model, fit) = calibration.fit(&train)?;
        let test = evaluate(&model, &test)?;
        Ok(Predictor {
            model,
            fit,
            validation: Some(Validation::Holdout {
                n_train: train.len(),
                test,
            }),
        })
    }

    /// Fits on all `samples`, and estimates the error by `k`-fold
    /// cross-validation ([`cross_validate`]).
    ///
    /// # Errors
    ///
    /// As [`cross_validate`] and the fit.
    pub fn cross_validated<K>(
        calibration: &K,
        samples: &[Sample<M::Config>],
        k: usize,
        seed: u64,
    ) -> Result<Self, CalibrateError>
    where
        K: Calibration<Model = M, Config = M::Config>,
    {
        let cv = cross_validate(calibration, samples, k, seed)?;
        let (model, fit) = calibration.fit(samples)?;
        Ok(Predictor {
            model,
            fit,
            validation: Some(Validation::CrossValidation(cv)),
        })
    }
}

impl<M> Predictor<M> {
    /// The held-out MAPE (percent): of the test part, or the mean over the
    /// cross-validation folds; `None` without validation.
    pub fn heldout_mape_pct(&self) -> Option<f64> {
        match &self.validation {
            Some(Validation::Holdout { test, .. }) => Some(test.mape_pct),
            Some(Validation::CrossValidation(cv)) => Some(cv.mean_mape_pct),
            None => None,
        }
    }

    /// Whether the held-out MAPE is below `target_pct` (false without
    /// validation).
    pub fn meets_target(&self, target_pct: f64) -> bool {
        self.heldout_mape_pct().is_some_and(|m| m < target_pct)
    }

    /// [`Predictor::meets_target`] at [`TARGET_MAPE_PCT`] = 10%.
    pub fn validated(&self) -> bool {
        self.meets_target(TARGET_MAPE_PCT)
    }

    /// `run` with [`RunInfo::timing_model_validated`] set to
    /// [`Predictor::validated`]: a certificate built on a predictor that
    /// misses its target records `false`.
    pub fn certify(&self, run: RunInfo) -> RunInfo {
        run.with_timing_model_validated(self.validated())
    }
}

impl<M: IterationTime> IterationTime for Predictor<M> {
    type Config = M::Config;

    fn iteration_time_s(&self, cfg: &M::Config) -> Result<f64, TimingError> {
        self.model.iteration_time_s(cfg)
    }

    fn samples_per_iteration(&self, cfg: &M::Config) -> f64 {
        self.model.samples_per_iteration(cfg)
    }
}
