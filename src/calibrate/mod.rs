//! Calibration: fit the parameters of the crate's timing models to measured
//! iteration times, and predict the iteration time of configurations that
//! were never measured.
//!
//! The fitted models are the crate's own ([`crate::timing`]): the features
//! come from the timing types, and a fitted model predicts through the same
//! formulas the schedulers use ([`LinearModel::physical`] and friends
//! return the timing structs themselves).
//!
//! | model | configuration | parameters | method |
//! |---|---|---|---|
//! | PS-L, two-configuration form ([`PsLocality`](crate::timing::PsLocality)) | [`PsConfig`](crate::timing::PsConfig) | `t_c, 1/b_int, 1/b_w` | [`fit_linear`]; rank-deficient for one gradient size (two distinct times, three parameters: `1 = [LOCAL] + [DISTRIBUTED]`), so it reports [`CalibrateError::RankDeficient`] unless the data come from several job types |
//! | PS-L, placement-level form ([`PsLocalityPlacement`](crate::timing::PsLocalityPlacement)) | [`PsPlacement`](crate::timing::PsPlacement) | `t_c, 1/b_int, 1/b_w, 1/B_s, ξ₂` | [`fit_alternating`] (a maximum of linear terms) |
//! | RAR-C across worker counts ([`RarFamily`]) | [`RarJobConfig`] | `θ_A, θ_B, θ_C, ξ₂, t_c` | [`fit_linear`] (known `ξ₁`) or [`fit_contention_profile`] (`ξ₁` profiled) |
//! | PS-W ([`PsLayered`](crate::timing::PsLayered)) | `(w, p)` | compute scale `κ` and `1/B` (or `1/B_w, 1/B_s`) | [`fit_layered`] (pattern search) |
//!
//! The full statement, with every decision, is in the
//! [algorithms guide](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#calibrate).
//!
//! # Linear least squares
//!
//! A model linear in its parameters predicts `ŷ_i = φ_iᵀθ` with features
//! `φ_i = φ(cfg_i) ∈ Rᵠ` ([`LinearInParameters::features`](crate::timing::LinearInParameters::features)).
//! Given measurements `y_i > 0` and weights `w_i ≥ 0`, [`fit_linear`]:
//!
//! 1. **scales rows**: `s_i = √w_i / y_i` for the relative loss (default),
//!    so that it minimises `Σ w_i ((φ_iᵀθ − y_i)/y_i)²`, the quantity the
//!    MAPE target is about; `s_i = √w_i` for the absolute loss.
//!    `A = diag(s)Φ`, `b = diag(s)y`;
//! 2. **scales columns** to unit norm, `c_j = ‖A_{:,j}‖₂`, `Ã = A·diag(1/c)`
//!    (a zero column is [`CalibrateError::ZeroFeature`]: nothing in the data
//!    moves that parameter);
//! 3. optionally appends **ridge** rows `√λ·I` (zeros in `b`);
//! 4. takes the **SVD** of `Ã`: the rank is the number of singular values
//!    above `max(rows, q)·ε·σ_max` (or [`FitOptions::rank_tol`]); rank below
//!    `q` is [`CalibrateError::RankDeficient`], naming the parameters with
//!    the largest entries in the right singular vector of the smallest
//!    singular value; a condition number `σ_max/σ_min` above
//!    [`FitOptions::cond_warn`] adds [`FitWarning::IllConditioned`];
//!    `θ̃ = Ã⁺b`, `θ_j = θ̃_j / c_j`;
//! 5. if that breaks a **sign constraint** (parameters marked
//!    [`Sign::NonNeg`](crate::timing::Sign::NonNeg) by the model), solves the
//!    scaled problem again by the Lawson–Hanson active-set method for
//!    non-negative least squares, free parameters projected out first;
//!    parameters that end at 0 are listed in [`FitReport::at_bound`];
//! 6. reports, on the original scale and unweighted, `R²`, the MAPE
//!    `(100/n)Σ|ŷ_i − y_i|/y_i`, the RMSE, the largest APE and the relative
//!    residuals ([`Accuracy`]).
//!
//! # Models that are not linear in their parameters
//!
//! * **RAR-C's contender ratio `ξ₁`** enters through the clamp
//!   `k = max(1, ξ₁p)`. [`fit_contention_profile`] fits the linear part at
//!   every `ξ₁` of a grid (default `0.1, 0.2, …, 1.0`), keeps the smallest
//!   loss (ties to the larger `ξ₁`) and refines by golden-section search on
//!   the two neighbouring grid cells to `10⁻³`.
//! * **PS-L's placement-level form** is a maximum of linear terms whose
//!   binding term depends on `θ`. [`fit_alternating`] starts from `θ⁰`,
//!   selects every sample's binding term, fits the resulting linear model,
//!   and repeats until the fitted terms still bind under the new `θ` (exact
//!   ties are not a change), the assignment returns to an earlier one (a
//!   cycle), or 50 rounds were done, keeping the `θ` of smallest loss.
//! * **PS-W** is a max-plus recursion over the layers. [`fit_layered`]
//!   searches a compute scale `κ` (multiplying every per-layer forward and
//!   backward time of the profile) and a common bandwidth `B = B_w = B_s`
//!   (or both separately): a 25 × 25 grid in log space, then a compass search
//!   that halves its step when no neighbour improves.
//!
//! # Validation and the accuracy target
//!
//! [`split_holdout`] and [`k_fold`] shuffle with a Fisher–Yates pass driven
//! by the crate's portable uniform draw on stream 0 of
//! `ChaCha8Rng::seed_from_u64(seed)`, so the same seed gives the same split
//! on every platform. A [`Predictor`] carries the fitted model, its report
//! and its validation; it meets the target when its held-out MAPE (or mean
//! cross-validation MAPE) is below [`TARGET_MAPE_PCT`] = 10%, the average
//! error reported for the offline iteration-time predictor DeepProphet
//! (J. Xia, HKUST MPhil thesis, 2019). A predictor that misses the target may
//! still be used; a certificate built on it records
//! [`RunInfo::timing_model_validated`](crate::certificate::RunInfo::timing_model_validated)
//! `= Some(false)` ([`Predictor::certify`]).
//!
//! **On synthetic data the MAPE echoes the injected noise.** The recipes of
//! [`synthetic`] multiply the true time by `exp(σξ)`, `ξ ~ N(0,1)`, so even
//! the true model has a held-out MAPE of about `σ·√(2/π) ≈ 0.8σ`: meeting
//! the target on synthetic data shows that the fit works, not that the
//! timing model describes a real cluster. Only measurements can show that.
//!
//! # Complexity
//!
//! A linear fit costs `O(n q²)` (one SVD of the `n × q` scaled matrix, `q ≤
//! 5` here); sign constraints add at most `3q` NNLS iterations of at most
//! `q + 1` solves. The ξ₁ profile costs about 25 linear fits, the
//! alternation at most 50, the PS-W search at most 625 + 400 evaluations of
//! the `O(L)` recursion per sample.
//!
//! # Errors
//!
//! Every failure is a [`CalibrateError`] naming its witness: a measurement
//! that is not finite or not positive, a bad weight, too few samples, a
//! configuration the model rejects, an unidentifiable parameter
//! (`ZeroFeature`, `RankDeficient` with suspects), an out-of-range option,
//! a cross-validation fold too small to fit, a numerical overflow, or
//! fitted parameters that map to no valid timing model (`Unphysical`: the
//! fitted predictor still predicts). Nothing here panics on user input.
//!
//! # Example
//!
//! ```
//! use dmlsched::calibrate::{FitOptions, Linear, Predictor, synthetic};
//! use dmlsched::timing::IterationTime;
//!
//! // 240 synthetic RAR-C measurements with 2% log-normal noise.
//! let samples = synthetic::rar_c_samples(240, 0.02, 7)?;
//! let fit = Linear::new(synthetic::rar_c_template(), FitOptions::default());
//! // Fit on 80%, measure the error on the held-out 20%.
//! let predictor = Predictor::holdout(&fit, &samples, 0.2, 1)?;
//! assert!(predictor.meets_target(10.0));
//! assert!(predictor.heldout_mape_pct().unwrap() < 3.0);
//! // Predict an unseen configuration: 64 workers on 8 servers, 2 contenders.
//! let cfg = dmlsched::calibrate::RarJobConfig { workers: 64, servers: 8, contention: 2 };
//! let tau = predictor.iteration_time_s(&cfg)?;
//! assert!(tau > 0.1 && tau < 1.0);
//! // The crate's own timing struct with the fitted parameters.
//! let ring = predictor.model.physical()?.timing(64)?;
//! assert!((ring.external_bps / 1.25e9 - 1.0).abs() < 0.1);
//! # Ok::<(), dmlsched::Error>(())
//! ```

mod alternation;
mod cv;
mod error;
mod linear;
mod models;
mod nnls;
mod predictor;
mod profile;
mod report;
mod search;
pub mod synthetic;

pub use alternation::{AlternationOptions, MaxLinearModel, fit_alternating};
pub use cv::{CvReport, TrainTest, cross_validate, k_fold, shuffled_indices, split_holdout};
pub use error::{CalibrateError, FitWarning};
pub use linear::{LinearModel, fit_linear};
pub use models::{RarFamily, RarJobConfig};
pub use predictor::{
    Alternating, Calibration, ContentionProfile, LayeredSearch, Linear, Predictor, TARGET_MAPE_PCT,
    Validation,
};
pub use profile::{ProfileOptions, fit_contention_profile};
pub use report::{Accuracy, FitMethod, FitReport, evaluate};
pub use search::{SearchOptions, fit_layered};

/// One measurement: a configuration and its measured iteration time.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<C> {
    /// The configuration that was measured.
    pub config: C,
    /// Measured seconds per iteration, finite and > 0.
    pub measured_s: f64,
    /// Weight in the loss, finite and ≥ 0 (default 1).
    pub weight: f64,
}

impl<C> Sample<C> {
    /// A sample of weight 1.
    pub fn new(config: C, measured_s: f64) -> Self {
        Sample {
            config,
            measured_s,
            weight: 1.0,
        }
    }

    /// The same sample with weight `weight`.
    pub fn with_weight(mut self, weight: f64) -> Self {
        self.weight = weight;
        self
    }
}

/// Which residual the fit minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Loss {
    /// `Σ w_i ((ŷ_i − y_i)/y_i)²`: relative errors, matching the MAPE
    /// target (default).
    #[default]
    Relative,
    /// `Σ w_i (ŷ_i − y_i)²`: absolute errors in seconds.
    Absolute,
}

/// Whether the model's sign constraints are imposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Constraints {
    /// Parameters the model marks non-negative stay ≥ 0 (default).
    #[default]
    FromModelSigns,
    /// Every parameter is free.
    Unconstrained,
}

/// Options of a least-squares fit.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct FitOptions {
    /// The residual minimised (default [`Loss::Relative`]).
    pub loss: Loss,
    /// Sign constraints (default [`Constraints::FromModelSigns`]).
    pub constraints: Constraints,
    /// Ridge weight `λ ≥ 0` on the column-scaled parameters (default 0).
    pub ridge: f64,
    /// Singular values at or below this count as zero; default
    /// `max(rows, q)·ε·σ_max`.
    pub rank_tol: Option<f64>,
    /// Condition number above which the fit warns (default `10⁸`).
    pub cond_warn: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            loss: Loss::Relative,
            constraints: Constraints::FromModelSigns,
            ridge: 0.0,
            rank_tol: None,
            cond_warn: 1e8,
        }
    }
}

impl FitOptions {
    /// Checks the options: `ridge` finite and ≥ 0, `rank_tol` finite and
    /// ≥ 0, `cond_warn` > 0 (may be infinite to never warn).
    ///
    /// # Errors
    ///
    /// [`CalibrateError::BadOption`] naming the option.
    pub fn validate(&self) -> Result<(), CalibrateError> {
        let bad = |option, value: f64| CalibrateError::BadOption {
            option,
            reason: format!("got {value}"),
        };
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return Err(bad("ridge", self.ridge));
        }
        if let Some(t) = self.rank_tol
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(bad("rank_tol", t));
        }
        if self.cond_warn.is_nan() || self.cond_warn <= 0.0 {
            return Err(bad("cond_warn", self.cond_warn));
        }
        Ok(())
    }
}

/// Measurements finite and > 0, weights finite and ≥ 0.
pub(crate) fn check_measurements<C>(samples: &[Sample<C>]) -> Result<(), CalibrateError> {
    for (index, s) in samples.iter().enumerate() {
        let value = s.measured_s;
        if !value.is_finite() {
            return Err(CalibrateError::NonFiniteMeasurement { index, value });
        }
        if value <= 0.0 {
            return Err(CalibrateError::NonPositiveMeasurement { index, value });
        }
        if !(s.weight.is_finite() && s.weight >= 0.0) {
            return Err(CalibrateError::BadWeight {
                index,
                value: s.weight,
            });
        }
    }
    Ok(())
}

/// [`check_measurements`], and at least `q + 1` samples for `q` parameters.
pub(crate) fn check_samples<C>(samples: &[Sample<C>], q: usize) -> Result<(), CalibrateError> {
    check_measurements(samples)?;
    if samples.len() < q + 1 {
        return Err(CalibrateError::TooFewSamples {
            n: samples.len(),
            needed: q + 1,
        });
    }
    Ok(())
}
