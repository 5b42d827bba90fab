//! The algorithm spec, job architectures and past jobs.

use serde_json::Value;

use crate::model::{Architecture, Job};
use crate::registry::{self, SESSION_ALGORITHMS};
use crate::trace::Arch;

use super::{ProtocolError, SpecError};

/// `ALGORITHM` or `ps=A,rar=B`: the algorithm of each job architecture,
/// in the spec's order (`dmlsched session --algorithm`, the Python
/// `Session`'s `algorithm`). Each name is one of
/// [`SESSION_ALGORITHMS`]; a single name needs no key, several need
/// theirs (`ps` or `parameter-server`, `rar` or `ring-all-reduce`), and
/// an architecture has one algorithm at most.
///
/// ```
/// use dmlsched::protocol::parse_algorithms;
/// use dmlsched::trace::Arch;
///
/// assert_eq!(parse_algorithms("gadget")?, [(Arch::RingAllReduce, "gadget".to_string())]);
/// let both = parse_algorithms("ps=locality,rar=gadget")?;
/// assert_eq!(both[0], (Arch::ParameterServer, "locality".to_string()));
/// let e = parse_algorithms("rar=locality").unwrap_err();
/// assert_eq!(e.to_string(), "rar=locality: locality schedules parameter-server jobs, not rar");
/// # Ok::<(), dmlsched::protocol::ProtocolError>(())
/// ```
///
/// # Errors
///
/// [`ProtocolError::Spec`], with the [`SpecError`] that says what is
/// wrong.
pub fn parse_algorithms(text: &str) -> Result<Vec<(Arch, String)>, ProtocolError> {
    let bad = |reason: SpecError| ProtocolError::Spec {
        spec: text.to_string(),
        reason,
    };
    let mut spec: Vec<(Arch, String)> = Vec::new();
    for part in text.split(',') {
        let (key, name) = match part.split_once('=') {
            Some((k, n)) => (Some(k.trim()), n.trim()),
            None => (None, part.trim()),
        };
        if !SESSION_ALGORITHMS.contains(&name) {
            return Err(bad(SpecError::NotSessionAlgorithm(name.into())));
        }
        let Some(arch) = registry::architecture(name) else {
            return Err(bad(SpecError::NoSingleArchitecture(name.into())));
        };
        if let Some(key) = key {
            let wanted = match key {
                "ps" | "parameter-server" => Arch::ParameterServer,
                "rar" | "ring-all-reduce" => Arch::RingAllReduce,
                other => return Err(bad(SpecError::UnknownArchitecture(other.into()))),
            };
            if wanted != arch {
                return Err(bad(SpecError::WrongArchitecture {
                    algorithm: name.into(),
                    schedules: arch,
                    key: key.into(),
                }));
            }
        } else if text.contains(',') {
            return Err(bad(SpecError::UnnamedArchitecture(name.into())));
        }
        if spec.iter().any(|(a, _)| *a == arch) {
            return Err(bad(SpecError::TwoAlgorithms(arch)));
        }
        spec.push((arch, name.to_string()));
    }
    Ok(spec)
}

/// The architecture's name in messages and saved files:
/// `parameter-server` or `ring-all-reduce`.
pub fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::ParameterServer => "parameter-server",
        Arch::RingAllReduce => "ring-all-reduce",
    }
}

/// The architecture of `job`.
pub(super) fn arch_of(job: &Job) -> Arch {
    match job.architecture {
        Architecture::ParameterServer(_) => Arch::ParameterServer,
        Architecture::RingAllReduce(_) => Arch::RingAllReduce,
    }
}

/// The past jobs in `text`: a JSON array of the instance format's job
/// objects, or an instance (its `jobs`). They are checked on a cluster by
/// [`SessionSet::open`](super::SessionSet::open).
///
/// # Errors
///
/// [`ProtocolError::Json`] for text that is not JSON,
/// [`ProtocolError::NotJobs`] for JSON that holds no list of jobs.
pub fn past_jobs(text: &str) -> Result<Vec<Job>, ProtocolError> {
    let value: Value = serde_json::from_str(text).map_err(ProtocolError::Json)?;
    let jobs = match value {
        Value::Object(mut o) if o.contains_key("jobs") => o.remove("jobs").unwrap_or(Value::Null),
        v => v,
    };
    serde_json::from_value(jobs).map_err(ProtocolError::NotJobs)
}
