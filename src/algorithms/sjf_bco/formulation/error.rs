//! Errors of the ring-all-reduce formulations.

#[cfg(doc)]
use super::FormulationInput;
use crate::algorithms::sjf_bco::SjfBcoError;
use crate::lp::{InvalidLimit, LpError, LpStatus};
use crate::model::units::Num;
use crate::model::{JobId, MachineId};

/// Why a formulation cannot be built or solved. Each case names the job,
/// machine, option or formulation concerned.
///
/// A missing solver is [`FormulationError::Lp`] wrapping
/// [`LpError::SolverUnavailable`] (the crate's solver-unavailable error): the
/// models can always be built, only solving needs the `highs` feature.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FormulationError {
    /// There is nothing to schedule on, or nothing to schedule.
    #[error("the input has no {what}")]
    Empty {
        /// `"jobs"` or `"servers with GPUs"`.
        what: &'static str,
    },
    /// Two jobs have the same id.
    #[error("{job} appears twice")]
    DuplicateJob {
        /// The repeated id.
        job: JobId,
    },
    /// A job requests no GPU.
    #[error("{job} requests no GPU")]
    ZeroGpus {
        /// The job.
        job: JobId,
    },
    /// A job needs more GPUs than the whole cluster has.
    #[error("{job} needs {demand} GPUs but the cluster has {cluster_gpus}")]
    JobCannotFit {
        /// The job.
        job: JobId,
        /// GPUs requested.
        demand: u32,
        /// GPUs of the whole cluster.
        cluster_gpus: u64,
    },
    /// A server has no GPU, or two servers are the same machine.
    #[error("{machine}: {reason}")]
    InvalidServer {
        /// The machine.
        machine: MachineId,
        /// What is wrong.
        reason: String,
    },
    /// A job's estimated execution time is NaN, infinite, or outside
    /// `[MIN_ESTIMATE_SLOTS, MAX_ESTIMATE_SLOTS]`.
    #[error(
        "{job}: estimated execution time {} slots is not finite or outside [{}, {}]",
        Num(*.value), Num(super::input::MIN_ESTIMATE_SLOTS), Num(super::input::MAX_ESTIMATE_SLOTS)
    )]
    InvalidEstimate {
        /// The job.
        job: JobId,
        /// The offending estimate, slots.
        value: f64,
    },
    /// The estimate bound `u` is NaN, infinite or below 1.
    #[error("the estimate bound u must be finite and at least 1, got {}", Num(*.value))]
    InvalidEstUpper {
        /// The offending value.
        value: f64,
    },
    /// The input or a formulation would be larger than its limit (checked
    /// before anything of that size is allocated).
    #[error("{formulation}: {what} would be {size}, above the limit {limit}")]
    TooLarge {
        /// Which input or formulation.
        formulation: &'static str,
        /// What is counted (`"columns"`, `"jobs"`, `"GPUs"`, `"slots"`).
        what: &'static str,
        /// The count.
        size: u128,
        /// The limit.
        limit: u64,
    },
    /// An option is invalid (a time limit, gap, thread count, duration or
    /// horizon).
    #[error("invalid option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The solver proved the program infeasible (only possible for the
    /// time-indexed program with a horizon, given by the caller, that is
    /// shorter than the optimal makespan).
    #[error("{formulation} is infeasible{hint}")]
    Infeasible {
        /// Which formulation.
        formulation: &'static str,
        /// A hint about the cause.
        hint: String,
    },
    /// The solver ended in a status that is neither optimal, a limit nor
    /// infeasible (unbounded, unknown), which the formulations rule out.
    #[error("{formulation} ended with solver status {status}")]
    UnexpectedStatus {
        /// Which formulation.
        formulation: &'static str,
        /// The status.
        status: LpStatus,
    },
    /// Converting an instance ([`FormulationInput::from_instance`] and
    /// [`FormulationInput::from_instance_with_estimates`]) failed in
    /// SJF-BCO's model of the instance: a job outside the model or wider
    /// than the usable GPUs, no job, no usable GPU, bad estimates, or a
    /// size guard.
    #[error("converting the instance: {0}")]
    Model(#[from] SjfBcoError),
    /// The LP layer failed: invalid model, solver failure, or no solver
    /// compiled in ([`LpError::SolverUnavailable`]).
    #[error(transparent)]
    Lp(#[from] LpError),
}

impl FormulationError {
    /// Whether the error is about the caller's input (an option, an
    /// estimate, a size beyond a limit, an instance outside the model)
    /// rather than a failed solve.
    pub fn is_input(&self) -> bool {
        match self {
            FormulationError::InvalidEstimate { .. }
            | FormulationError::InvalidEstUpper { .. }
            | FormulationError::TooLarge { .. }
            | FormulationError::InvalidOption { .. } => true,
            FormulationError::Model(e) => crate::Error::SjfBco(e.clone()).is_input(),
            _ => false,
        }
    }
}

impl From<InvalidLimit> for FormulationError {
    /// An invalid solver limit as [`FormulationError::InvalidOption`].
    fn from(e: InvalidLimit) -> Self {
        FormulationError::InvalidOption {
            name: e.name,
            reason: e.reason,
        }
    }
}
