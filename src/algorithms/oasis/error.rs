//! Errors of OASiS.

use crate::lp::InvalidLimit;
use crate::model::JobId;

/// Why OASiS cannot run on an instance.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OasisError {
    /// The cluster does not have OASiS's shape (disjoint worker and PS
    /// servers).
    #[error("cluster not supported by OASiS: {reason}")]
    UnsupportedCluster {
        /// What is wrong.
        reason: String,
    },
    /// A job is outside OASiS's model.
    #[error("{job} not supported by OASiS: {reason}")]
    UnsupportedJob {
        /// The job.
        job: JobId,
        /// What is wrong.
        reason: String,
    },
    /// A job inside OASiS's model whose exact chunk program would need more
    /// DP cells `T·(D_i + 1)` than the implementation supports (a job of
    /// weeks over thousands of slots). The simulator rejects such a job
    /// (that job only) instead of failing the run.
    #[error(
        "{job} needs {cells} DP cells (D_i = E·N = {chunk_trainings} chunk-trainings over {slots} slots); OASiS's exact chunk program supports at most {limit}"
    )]
    JobTooLarge {
        /// The job.
        job: JobId,
        /// `D_i = E·N`.
        chunk_trainings: u64,
        /// The slots of its window.
        slots: u32,
        /// `slots·(D_i + 1)`.
        cells: u64,
        /// The supported maximum.
        limit: u64,
    },
    /// An option is invalid.
    #[error("invalid OASiS option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The exact MIP would need more columns than
    /// [`EXACT_MAX_COLUMNS`](super::EXACT_MAX_COLUMNS) (an upper estimate:
    /// slots from each job's arrival to the horizon × (machines + shared
    /// servers + 2)).
    #[error(
        "the exact MIP would need up to {columns} columns, more than its limit of {limit} (shorten the horizon or use fewer jobs)"
    )]
    ExactTooLarge {
        /// The estimate.
        columns: u128,
        /// The limit.
        limit: u64,
    },
    /// The simulator handed the policy a job it was not built for, or the
    /// same arrival twice.
    #[error("{job} is not in the instance the OASiS policy was built for, or arrived twice")]
    UnknownJob {
        /// The job.
        job: JobId,
    },
}

impl From<InvalidLimit> for OasisError {
    /// An invalid solver limit as [`OasisError::InvalidOption`].
    fn from(e: InvalidLimit) -> Self {
        OasisError::InvalidOption {
            name: e.name,
            reason: e.reason,
        }
    }
}
