//! The session protocol (docs/session-protocol.md): several online
//! sessions over one shared cluster state, one per job architecture, driven
//! by events and answering reply lines.
//!
//! A [`SessionSet`] holds a [`ClusterState`] and one session of a
//! [`SESSION_ALGORITHMS`](crate::registry::SESSION_ALGORITHMS) algorithm
//! per job architecture (`"gadget"`, or `"ps=locality,rar=gadget"`:
//! [`parse_algorithms`]), built by [`registry::session`] and routed to by
//! each submitted job's architecture. It applies an [`Event`] (submit,
//! finish, cancel, resubmit, extend, usage, certificate, save) and answers
//! the protocol's reply as JSON, a refused event as `{"error": "…"}` with
//! the set unchanged. Its saved text ([`SessionSet::save_text`],
//! [`SessionSet::restore`]) is the `--state` file of `dmlsched session`.
//!
//! The command line's `dmlsched session` (one event per line on standard
//! input, [`SessionSet::handle_line`]) and the Python package's `Session`
//! are two front ends of this one driver, so both answer the same replies
//! and save the same files.
//!
//! ```
//! use dmlsched::model::{Cluster, Job, JobId, RarJob, Resources, WorkerCounts};
//! use dmlsched::protocol::{OpenOptions, SessionSet, parse_algorithms};
//! use dmlsched::state::ClusterState;
//!
//! let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
//! let ring = |id, gpus| Job::new(JobId(id), 0.0, RarJob {
//!     workers: WorkerCounts::Fixed(gpus), iterations: 600, ..RarJob::default()
//! });
//! let state = ClusterState::new(&cluster, 60.0)?;
//! let spec = parse_algorithms("gadget")?;
//! let mut set = SessionSet::open(state, &spec, &[ring(0, 2), ring(1, 4)], &OpenOptions::default())?;
//!
//! let job = serde_json::to_string(&ring(7, 2))?;
//! let reply = set.handle_line(&format!(r#"{{"event": "submit", "time_s": 0, "job": {job}}}"#));
//! let reply = reply.unwrap();
//! assert_eq!(reply["algorithm"], "gadget");
//! assert_eq!(reply["job"], 7);
//!
//! let late = set.handle_line(r#"{"event": "finish", "time_s": -1, "job": 7}"#).unwrap();
//! assert_eq!(late["error"], "time -1 s is not finite or before the session's time 0 s");
//!
//! // Saved and restored, the set decides as it would have.
//! let again = SessionSet::restore(&set.save_text()?)?;
//! assert_eq!(again.save_text()?, set.save_text()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod events;
mod saved;
mod spec;

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::certificate::Certificate;
use crate::model::{Job, JobId, MachineId, Resources};
use crate::online::{AnySession, JobStatus};
use crate::registry;
use crate::state::{ClusterState, MAX_SPAN_SLOTS};
use crate::trace::Arch;

pub use error::{ProtocolError, SpecError};
pub use spec::{arch_name, parse_algorithms, past_jobs};

/// The slot length when none is given, seconds.
pub const DEFAULT_SLOT_S: f64 = 60.0;
/// The planning window when none is given, slots.
pub const DEFAULT_WINDOW: u32 = 200;
/// The version of the saved file's layout ([`SessionSet::save_text`]).
pub const LAYOUT_VERSION: u32 = 1;

/// An event of the protocol: one JSON object per line, tagged by its
/// `event` field (`{"event": "finish", "time_s": 600, "job": 2}`). Times
/// are seconds on the set's clock, which starts at 0 and never goes back.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Event {
    /// Decides on a job.
    Submit {
        /// The submission time.
        time_s: f64,
        /// The instance format's job object (`arrival_s` may be left out:
        /// the submission time stands for it).
        job: Value,
    },
    /// The job finished: the rest of its plan is released.
    Finish {
        /// The time.
        time_s: f64,
        /// The job.
        job: JobId,
    },
    /// As `Finish`, and the job adds no utility.
    Cancel {
        /// The time.
        time_s: f64,
        /// The job.
        job: JobId,
    },
    /// Decides again on a job its session rejected.
    Resubmit {
        /// The time.
        time_s: f64,
        /// The job.
        job: JobId,
    },
    /// The job still runs at its plan's end and needs about `more_s`
    /// seconds more: its last segment is extended if there is room, else
    /// it is preempted.
    Extend {
        /// The time.
        time_s: f64,
        /// The job.
        job: JobId,
        /// The time it still needs, seconds.
        more_s: f64,
    },
    /// Capacity used by something outside the sessions.
    Usage {
        /// The machine.
        machine: MachineId,
        /// The start, seconds.
        from_s: f64,
        /// The end, seconds.
        to_s: f64,
        /// What is used.
        resources: Resources,
    },
    /// Every session's full certificate now.
    Certificate {},
    /// Saves the set to its save file ([`SessionSet::set_save_path`]).
    Save {},
}

/// How [`SessionSet::open`] builds its sessions, besides the state and
/// the past jobs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenOptions {
    /// The planning window `W`, slots (1 to [`MAX_SPAN_SLOTS`]): a job's
    /// plan ends within `W` slots of its submission.
    pub window: u32,
    /// Parameters by algorithm name, as JSON text (the JSON of `dmlsched
    /// solve --params`); an algorithm without any runs on its defaults, and
    /// a name the set does not run is ignored.
    pub params: Vec<(String, String)>,
    /// The seed of what the algorithms draw (the locality scheduler's
    /// inner solver).
    pub seed: u64,
}

impl Default for OpenOptions {
    /// A window of [`DEFAULT_WINDOW`] slots, default parameters, seed 0.
    fn default() -> Self {
        OpenOptions {
            window: DEFAULT_WINDOW,
            params: Vec::new(),
            seed: 0,
        }
    }
}

/// One algorithm's session and the architecture of the jobs it decides.
struct Route {
    arch: Arch,
    name: String,
    session: Box<dyn AnySession + Send>,
}

impl Route {
    /// A library error of this route's session.
    fn error(&self, source: crate::Error) -> ProtocolError {
        ProtocolError::Algorithm {
            algorithm: self.name.clone(),
            source: Box::new(source),
        }
    }
}

/// Sessions over one shared cluster state, one per job architecture:
/// the driver behind `dmlsched session` and the Python `Session` (see the
/// [module documentation](self)). It is `Send`, so a binding may run it on
/// another thread.
pub struct SessionSet {
    state: ClusterState,
    routes: Vec<Route>,
    window: u32,
    save_path: Option<PathBuf>,
}

impl std::fmt::Debug for SessionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionSet")
            .field("algorithms", &self.algorithms())
            .field("now_s", &self.now_s())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl SessionSet {
    /// New sessions over `state`, one per entry of `algorithms` (from
    /// [`parse_algorithms`]), each learning its price bounds from the
    /// `past` jobs of its architecture ([`registry::session`]). Every past
    /// job is checked on the state's cluster first. The set has no save
    /// file.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::Window`] for a window out of range,
    /// [`ProtocolError::PastJob`] for a past job the cluster refuses,
    /// [`ProtocolError::NoPastJob`] for an algorithm without past jobs of
    /// its architecture, [`ProtocolError::Algorithm`] for a session the
    /// registry cannot build (its parameters, the cluster or a past job
    /// outside its model).
    pub fn open(
        state: ClusterState,
        algorithms: &[(Arch, String)],
        past: &[Job],
        options: &OpenOptions,
    ) -> Result<SessionSet, ProtocolError> {
        let window = options.window;
        if !(1..=MAX_SPAN_SLOTS).contains(&window) {
            return Err(ProtocolError::Window(window));
        }
        for j in past {
            state.check_job(j).map_err(ProtocolError::PastJob)?;
        }
        let mut routes = Vec::new();
        for (arch, name) in algorithms {
            let theirs: Vec<Job> = past
                .iter()
                .filter(|j| spec::arch_of(j) == *arch)
                .cloned()
                .collect();
            if theirs.is_empty() {
                return Err(ProtocolError::NoPastJob {
                    arch: *arch,
                    algorithm: name.clone(),
                });
            }
            let params = options
                .params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, text)| text.as_str());
            let session = registry::session(name, &state, window, &theirs, params, options.seed)
                .map_err(|source| ProtocolError::Algorithm {
                    algorithm: name.clone(),
                    source: Box::new(source),
                })?;
            routes.push(Route {
                arch: *arch,
                name: name.clone(),
                session,
            });
        }
        Ok(SessionSet {
            state,
            routes,
            window,
            save_path: None,
        })
    }

    /// The file a `save` event writes to ([`save_file`](Self::save_file));
    /// `None`: a `save` event is refused.
    pub fn set_save_path(&mut self, path: Option<PathBuf>) {
        self.save_path = path;
    }

    /// The set's time: the latest event's, seconds.
    pub fn now_s(&self) -> f64 {
        self.state.now_s()
    }

    /// The slot length, seconds.
    pub fn slot_length_s(&self) -> f64 {
        self.state.slot_length_s()
    }

    /// The planning window, slots.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// The algorithm of each architecture, in the order of the spec the
    /// set was opened with ([`parse_algorithms`]).
    pub fn algorithms(&self) -> Vec<(Arch, String)> {
        self.routes
            .iter()
            .map(|r| (r.arch, r.name.clone()))
            .collect()
    }

    /// The shared cluster state.
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// Where `job` stands in the session that decided on it; `None` if it
    /// was never submitted.
    pub fn status(&self, job: JobId) -> Option<JobStatus> {
        self.routes.iter().find_map(|r| r.session.status(job))
    }

    /// The full certificate of the session of `algorithm`, or without a
    /// name of the set's only session.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::NotInSet`] for an algorithm the set does not run,
    /// [`ProtocolError::WhichAlgorithm`] without a name in a set of
    /// several, [`ProtocolError::Algorithm`] for a certificate that cannot
    /// be computed.
    pub fn certificate(&mut self, algorithm: Option<&str>) -> Result<Certificate, ProtocolError> {
        let runs = || {
            let names: Vec<&str> = self.routes.iter().map(|r| r.name.as_str()).collect();
            names.join(", ")
        };
        let i = match algorithm {
            Some(a) => self
                .routes
                .iter()
                .position(|r| r.name == a)
                .ok_or_else(|| ProtocolError::NotInSet {
                    algorithm: a.into(),
                    runs: runs(),
                })?,
            None if self.routes.len() == 1 => 0,
            None => return Err(ProtocolError::WhichAlgorithm { runs: runs() }),
        };
        let r = &mut self.routes[i];
        r.session.certificate().map_err(|e| r.error(e))
    }

    /// Every session's full certificate, by algorithm, in the spec's
    /// order.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::Algorithm`] for a certificate that cannot be
    /// computed.
    pub fn certificates(&mut self) -> Result<Vec<(String, Certificate)>, ProtocolError> {
        let mut all = Vec::new();
        for r in &mut self.routes {
            let c = r.session.certificate().map_err(|e| r.error(e))?;
            all.push((r.name.clone(), c));
        }
        Ok(all)
    }
}
