//! [`CalibrateError`] and [`FitWarning`].

use crate::timing::TimingError;

/// Why a calibration failed. Every variant names its witness: the sample,
/// the parameter or the option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// A measured iteration time is zero or negative.
    #[error("sample {index}: measured iteration time {value} s is not positive")]
    NonPositiveMeasurement {
        /// 0-based index of the sample.
        index: usize,
        /// The measurement, seconds.
        value: f64,
    },
    /// A measured iteration time is NaN or infinite.
    #[error("sample {index}: measured iteration time {value} is not finite")]
    NonFiniteMeasurement {
        /// 0-based index of the sample.
        index: usize,
        /// The measurement.
        value: f64,
    },
    /// A sample weight is NaN, infinite or negative.
    #[error("sample {index}: weight {value} is not finite and ≥ 0")]
    BadWeight {
        /// 0-based index of the sample.
        index: usize,
        /// The weight.
        value: f64,
    },
    /// Fewer samples than parameters plus one.
    #[error("{n} samples are too few: fitting these parameters needs at least {needed}")]
    TooFewSamples {
        /// Samples given.
        n: usize,
        /// Samples needed: the number of parameters plus one.
        needed: usize,
    },
    /// A parameter's feature is zero in every sample of positive weight:
    /// the data say nothing about it.
    #[error(
        "parameter `{param}` is unidentifiable from these data: its feature is zero in every sample"
    )]
    ZeroFeature {
        /// The parameter's name.
        param: &'static str,
    },
    /// The (scaled) feature matrix has lower rank than the number of
    /// parameters: some combination of parameters is unidentifiable.
    #[error(
        "the features have rank {rank} < {params} parameters; parameters involved: {}",
        suspects.join(", ")
    )]
    RankDeficient {
        /// Numerical rank.
        rank: usize,
        /// Number of parameters.
        params: usize,
        /// The parameters with the largest entries in the right singular
        /// vector of the smallest singular value (at least a tenth of the
        /// largest entry), largest first.
        suspects: Vec<&'static str>,
    },
    /// A sample's configuration is invalid for the timing model.
    #[error("sample {index}: {source}")]
    BadSample {
        /// 0-based index of the sample.
        index: usize,
        /// The timing model's complaint.
        #[source]
        source: TimingError,
    },
    /// The scaled problem or its solution left the floating-point range
    /// (e.g. a measurement within a few ulps of 0, or a feature near
    /// `f64::MAX`).
    #[error("out of floating-point range: {what}")]
    NonFinite {
        /// What overflowed.
        what: String,
    },
    /// An iterative step (SVD, non-negative least squares) did not converge.
    #[error("{what} did not converge within {iterations} iterations")]
    NoConvergence {
        /// The step.
        what: &'static str,
        /// The iteration cap.
        iterations: usize,
    },
    /// An option is out of range.
    #[error("invalid option `{option}`: {reason}")]
    BadOption {
        /// The option's name.
        option: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A cross-validation fold leaves too few samples to fit on.
    #[error(
        "cross-validation fold {fold}: its training part has {train} samples, the fit needs {needed}"
    )]
    EmptyFold {
        /// 0-based fold index.
        fold: usize,
        /// Training samples of the fold.
        train: usize,
        /// Samples needed.
        needed: usize,
    },
    /// The fitted parameters map to no valid timing model (a negative or
    /// zero inverse bandwidth, a negative degradation slope). The fitted
    /// predictor still predicts; only the physical model cannot be built.
    #[error("the fitted parameters map to no valid timing model: {source}")]
    Unphysical {
        /// The timing model's complaint, naming the parameter.
        #[source]
        source: TimingError,
    },
}

/// A fit that succeeded but deserves attention.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FitWarning {
    /// The condition number `σ_max/σ_min` of the column-scaled feature
    /// matrix exceeds [`FitOptions::cond_warn`](super::FitOptions::cond_warn):
    /// the parameters are sensitive to noise even though they are
    /// identifiable.
    IllConditioned {
        /// The condition number.
        cond: f64,
    },
}
