//! Errors of the SMD-style scheduler.

use crate::lp::LpError;
use crate::model::JobId;
use crate::model::units::Num;

/// Why the SMD-style scheduler cannot decide an epoch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SmdError {
    /// A job is outside the model: not a parameter-server job, no layer
    /// profile, or a layered model the timing layer rejects.
    #[error("{job} not supported by the SMD-style scheduler: {reason}")]
    UnsupportedJob {
        /// The job.
        job: JobId,
        /// What is wrong.
        reason: String,
    },
    /// A job's smallest configuration (one worker, one PS) does not fit the
    /// whole cluster: it could never run.
    #[error("{job} can never run: one worker and one PS exceed the cluster's total capacity")]
    JobNeverFits {
        /// The job.
        job: JobId,
    },
    /// An input number is invalid (NaN, infinite or negative remaining
    /// work, capacity, cost or demand; an unknown job; a wrong length).
    #[error("invalid SMD-style input {name}: {reason}")]
    InvalidInput {
        /// The field.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An option is invalid.
    #[error("invalid SMD-style option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The epoch is beyond a size guard (candidates of one job, LP columns).
    #[error(
        "epoch too large for the SMD-style scheduler: {what} is {}, at most {}",
        Num(*value),
        Num(*limit)
    )]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The guard.
        limit: f64,
    },
    /// The LP or MIP layer failed (invalid model, solver failure, or no
    /// solver built: use [`Selection::Greedy`](super::Selection::Greedy)
    /// without the `highs` feature).
    #[error("LP layer: {0}")]
    Lp(#[from] LpError),
    /// An epoch's certificate failed its check.
    #[error("certificate: {0}")]
    Certificate(#[from] crate::certificate::CertificateViolation),
    /// A vertex LP point had more fractional groups than capacity rows.
    #[error("{count} fractional groups with {rows} capacity rows")]
    FractionalGroups {
        /// `|F|`.
        count: usize,
        /// `d`.
        rows: usize,
    },
    /// The LP relaxation ended without an optimal point (it is always
    /// feasible and bounded, so this is a solver failure).
    #[error("the epoch LP ended with status {status}")]
    LpNotOptimal {
        /// The solver's status.
        status: String,
    },
}

/// `Err(TooLarge)` when `value > limit`.
pub(crate) fn too_large(what: &'static str, value: f64, limit: f64) -> Result<(), SmdError> {
    if value > limit {
        Err(SmdError::TooLarge { what, value, limit })
    } else {
        Ok(())
    }
}

/// `Err(InvalidInput)` unless `value` is finite and `≥ 0`.
pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<(), SmdError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(SmdError::InvalidInput {
            name,
            reason: format!("{} is not finite and non-negative", Num(value)),
        })
    }
}
