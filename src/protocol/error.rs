//! The session protocol's errors.

use std::path::PathBuf;

use crate::model::{JobId, ModelError};
use crate::registry::SESSION_ALGORITHMS;
use crate::state::{MAX_SPAN_SLOTS, StateError};
use crate::trace::Arch;

use super::{LAYOUT_VERSION, arch_name};

/// Why a [`SessionSet`](super::SessionSet) refused an event, could not be
/// opened, saved or restored. The messages are the ones `dmlsched
/// session` answers in a bad line's `{"error": …}` (and prints, with a
/// file's path or an option's name before them, for a bad start).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The algorithm spec (`"gadget"`, `"ps=locality,rar=gadget"`) is
    /// invalid.
    #[error("{spec}: {reason}")]
    Spec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        reason: SpecError,
    },
    /// The planning window is outside 1 to
    /// [`MAX_SPAN_SLOTS`](crate::state::MAX_SPAN_SLOTS).
    #[error("window {0}: must be between 1 and {MAX_SPAN_SLOTS} slots")]
    Window(u32),
    /// JSON text that does not parse (past jobs, a saved file).
    #[error("{0}")]
    Json(serde_json::Error),
    /// Past jobs that are neither a list of jobs nor an instance.
    #[error("expected a list of jobs or an instance: {0}")]
    NotJobs(serde_json::Error),
    /// A past job the cluster state refuses (as an instance would).
    #[error("{0}")]
    PastJob(ModelError),
    /// No past job of an algorithm's architecture to learn its price
    /// bounds from.
    #[error("no {} job to learn {algorithm}'s price bounds from", arch_name(*.arch))]
    NoPastJob {
        /// The architecture.
        arch: Arch,
        /// The algorithm.
        algorithm: String,
    },
    /// An algorithm's session failed: its parameters, a job outside its
    /// model, a job id it refuses, a solver failure.
    #[error("{algorithm}: {source}")]
    Algorithm {
        /// The algorithm.
        algorithm: String,
        /// The library's error.
        source: Box<crate::Error>,
    },
    /// A line that is not an event (malformed JSON, an unknown event or
    /// field).
    #[error("not an event: {0}")]
    NotAnEvent(serde_json::Error),
    /// A submitted job that is not a job of the instance format.
    #[error("not a job: {0}")]
    NotAJob(serde_json::Error),
    /// An event's time that is not finite or before the session's.
    #[error("time {time_s} s is not finite or before the session's time {now_s} s")]
    Time {
        /// The event's time, seconds.
        time_s: f64,
        /// The session's time, seconds.
        now_s: f64,
    },
    /// A job of an architecture no algorithm of the set decides.
    #[error("{job}: no algorithm for {} jobs in this session", arch_name(*.arch))]
    NoAlgorithmFor {
        /// The job.
        job: JobId,
        /// Its architecture.
        arch: Arch,
    },
    /// An event about a job no session has.
    #[error("{0} was never submitted")]
    NeverSubmitted(JobId),
    /// Outside usage the cluster state refuses.
    #[error("{0}")]
    Usage(StateError),
    /// An algorithm named that the set does not run.
    #[error("algorithm {algorithm}: not in this session (it runs {runs})")]
    NotInSet {
        /// The name given.
        algorithm: String,
        /// The algorithms the set runs, comma-separated.
        runs: String,
    },
    /// A question about one algorithm's session, asked of a set of several
    /// without naming one.
    #[error("this session runs {runs}: name the algorithm, or call certificates()")]
    WhichAlgorithm {
        /// The algorithms the set runs, comma-separated.
        runs: String,
    },
    /// A `save` event with no file to save to.
    #[error("no --state FILE to save to")]
    NoSaveFile,
    /// A saved file of another layout version than this build's.
    #[error("the saved session has layout {0} (this build reads {LAYOUT_VERSION})")]
    Layout(u32),
    /// A saved algorithm's session that does not restore.
    #[error("{source}")]
    Restore {
        /// The algorithm.
        algorithm: String,
        /// The library's error.
        source: Box<crate::Error>,
    },
    /// A saved file that could not be encoded (a bug).
    #[error("{}{source}", .algorithm.as_ref().map(|a| format!("{a}: ")).unwrap_or_default())]
    Encode {
        /// The algorithm whose saved session failed, if one did.
        algorithm: Option<String>,
        /// The encoder's error.
        source: serde_json::Error,
    },
    /// A saved file that could not be written.
    #[error("{}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
}

impl ProtocolError {
    /// Whether the error is about the input (a bad line, option or file)
    /// rather than a run that failed on valid input: the command line
    /// exits with code 2 for the first, 1 for the second.
    pub fn is_input(&self) -> bool {
        match self {
            ProtocolError::Algorithm { source, .. } => source.is_input(),
            ProtocolError::Encode { .. } | ProtocolError::Write { .. } => false,
            _ => true,
        }
    }
}

/// What is wrong with an algorithm spec ([`parse_algorithms`](super::parse_algorithms)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// A name that is not one of
    /// [`SESSION_ALGORITHMS`](crate::registry::SESSION_ALGORITHMS).
    #[error("{0:?} is not a session algorithm (one of {known})", known = SESSION_ALGORITHMS.join(", "))]
    NotSessionAlgorithm(String),
    /// An algorithm that schedules jobs of both architectures.
    #[error("{0} schedules no single architecture")]
    NoSingleArchitecture(String),
    /// An architecture key other than `ps` or `rar`.
    #[error("{0:?} is not ps or rar")]
    UnknownArchitecture(String),
    /// An algorithm given for the architecture it does not schedule.
    #[error("{algorithm} schedules {} jobs, not {key}", arch_name(*.schedules))]
    WrongArchitecture {
        /// The algorithm.
        algorithm: String,
        /// The architecture it schedules.
        schedules: Arch,
        /// The key it was given for.
        key: String,
    },
    /// One of several algorithms without its architecture's key.
    #[error("name the architecture of {0} (ps= or rar=)")]
    UnnamedArchitecture(String),
    /// Two algorithms for one architecture.
    #[error("two algorithms for {} jobs", arch_name(*.0))]
    TwoAlgorithms(Arch),
}
