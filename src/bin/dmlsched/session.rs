//! `dmlsched session`: the sessions as a line protocol. One JSON event per
//! line on standard input, exactly one JSON line per event on standard
//! output (flushed), so a scheduler in any language can run the crate as a
//! sidecar. The protocol is documented in `docs/session-protocol.md`.
//!
//! The driver is the library's [`dmlsched::protocol::SessionSet`] (the
//! Python package's `Session` is its other front end); this file reads the
//! options and files, runs the standard input/output loop and puts a
//! file's path or an option's name before a message.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use dmlsched::model::{Cluster, Job};
use dmlsched::protocol::{
    self, DEFAULT_SLOT_S, DEFAULT_WINDOW, OpenOptions, ProtocolError, SessionSet,
};
use dmlsched::registry::SESSION_ALGORITHMS;
use dmlsched::state::ClusterState;
use dmlsched::trace::Arch;

use crate::solve::lib_error;
use crate::{CliError, read};

#[derive(Debug, Args)]
pub(crate) struct SessionArgs {
    /// The algorithm that decides every job (one of
    /// `registry::SESSION_ALGORITHMS`: oasis, locality, gadget), or one per
    /// job architecture over one shared cluster state:
    /// `ps=locality,rar=gadget`.
    #[arg(long, short, value_name = "ALGORITHM | ps=A,rar=B")]
    algorithm: String,
    /// The cluster: the instance format's `cluster` object (JSON).
    #[arg(long, value_name = "CLUSTER.json")]
    cluster: PathBuf,
    /// Jobs like the ones to come, to learn each algorithm's price bounds
    /// from (each as if it arrived at the start of a window): a JSON array
    /// of the instance format's job objects, or an instance file (its jobs
    /// are used). Each algorithm learns from the jobs of its architecture.
    /// Needed unless --state names a saved session.
    #[arg(long, value_name = "JOBS.json")]
    past: Option<PathBuf>,
    /// Parameters: `PARAMS.json` for a single algorithm, or
    /// `NAME=PARAMS.json` (repeatable) for any (the JSON as for `solve
    /// --params`).
    #[arg(long = "params", value_name = "[NAME=]PARAMS.json")]
    params: Vec<String>,
    /// Slot length, seconds [default: 60].
    #[arg(long, value_name = "S")]
    slot_length: Option<f64>,
    /// Planning window W, slots: a job's plan ends within W slots of its
    /// submission, 1 to 2^20 (what the cluster state stores ahead)
    /// [default: 200].
    #[arg(long, value_name = "W", value_parser = clap::value_parser!(u32).range(1..=i64::from(dmlsched::state::MAX_SPAN_SLOTS)))]
    window: Option<u32>,
    /// A file the session is loaded from at start when it exists, and saved
    /// to on a `save` event and at the end of input.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Seed of what the algorithms draw (the locality scheduler's inner
    /// solver).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

impl From<ProtocolError> for CliError {
    fn from(e: ProtocolError) -> Self {
        if e.is_input() {
            CliError::Input(e.to_string())
        } else {
            CliError::Run(e.to_string())
        }
    }
}

/// `dmlsched session`.
pub(crate) fn run(args: &SessionArgs) -> Result<(), CliError> {
    let spec = protocol::parse_algorithms(&args.algorithm)
        .map_err(|e| CliError::Input(format!("--algorithm {e}")))?;
    let mut sessions = open(args, &spec)?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| CliError::Run(format!("standard input: {e}")))?;
        let Some(reply) = sessions.handle_line(&line) else {
            continue;
        };
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            // The reader is gone: keep what was decided, stop reading.
            break;
        }
    }
    if let Some(path) = &args.state {
        sessions.save_file(path)?;
    }
    Ok(())
}

/// The sessions of `args`: loaded from `--state` when the file exists,
/// new otherwise; a `save` event writes to `--state`.
fn open(args: &SessionArgs, spec: &[(Arch, String)]) -> Result<SessionSet, CliError> {
    let cluster: Cluster = serde_json::from_str(&read(&args.cluster)?)
        .map_err(|e| CliError::input(&args.cluster, e))?;
    let mut sessions = match args.state.as_ref().filter(|p| p.exists()) {
        Some(path) => load(path, args, spec, &cluster)?,
        None => open_new(args, spec, &cluster)?,
    };
    sessions.set_save_path(args.state.clone());
    Ok(sessions)
}

/// New sessions of `args` over `cluster`.
fn open_new(
    args: &SessionArgs,
    spec: &[(Arch, String)],
    cluster: &Cluster,
) -> Result<SessionSet, CliError> {
    let slot_s = args.slot_length.unwrap_or(DEFAULT_SLOT_S);
    let state =
        ClusterState::new(cluster, slot_s).map_err(|e| CliError::input(&args.cluster, e))?;
    let Some(past_path) = &args.past else {
        return Err(CliError::Input(
            "a new session needs --past JOBS.json (jobs like the ones to come, to learn price \
             bounds from), or --state FILE of a saved session"
                .into(),
        ));
    };
    let past: Vec<Job> =
        protocol::past_jobs(&read(past_path)?).map_err(|e| CliError::input(past_path, e))?;
    let mut options = OpenOptions::default();
    options.window = args.window.unwrap_or(DEFAULT_WINDOW);
    options.seed = args.seed;
    let mut files = Vec::new();
    for (_, name) in spec {
        if let Some(file) = params_path(&args.params, name, spec.len())? {
            options
                .params
                .push((name.clone(), read(&file.to_path_buf())?));
            files.push((name.as_str(), file));
        }
    }
    SessionSet::open(state, spec, &past, &options).map_err(|e| match e {
        ProtocolError::PastJob(_) | ProtocolError::NoPastJob { .. } => {
            CliError::input(past_path, e)
        }
        ProtocolError::Algorithm { algorithm, source } => {
            let file = files.iter().find(|(n, _)| *n == algorithm).map(|f| f.1);
            lib_error(&algorithm, file, &source)
        }
        e => e.into(),
    })
}

/// The parameters file of `name` among `--params` entries: a bare path
/// when there is one algorithm, `NAME=PATH` otherwise.
fn params_path<'a>(
    entries: &'a [String],
    name: &str,
    algorithms: usize,
) -> Result<Option<&'a Path>, CliError> {
    let mut found = None;
    for e in entries {
        match e.split_once('=') {
            Some((n, p)) if SESSION_ALGORITHMS.contains(&n) => {
                if n == name {
                    found = Some(Path::new(p));
                }
            }
            _ if algorithms == 1 => found = Some(Path::new(e.as_str())),
            _ => {
                return Err(CliError::Input(format!(
                    "--params {e}: with several algorithms, name the one it is for \
                     (NAME=PARAMS.json, NAME one of {})",
                    SESSION_ALGORITHMS.join(", ")
                )));
            }
        }
    }
    Ok(found)
}

/// The sessions saved in `path`, checked against the command line.
fn load(
    path: &PathBuf,
    args: &SessionArgs,
    spec: &[(Arch, String)],
    cluster: &Cluster,
) -> Result<SessionSet, CliError> {
    let start_anew =
        |what: String| CliError::input(path, format!("{what}; start a new --state file"));
    let sessions = SessionSet::restore(&read(path)?).map_err(|e| match e {
        ProtocolError::Layout(_) => start_anew(e.to_string()),
        e => CliError::input(path, e),
    })?;
    let mismatch = |what: String| start_anew(format!("the saved session {what}"));
    if sessions.state().cluster() != cluster {
        return Err(mismatch("has another cluster than --cluster".into()));
    }
    let (slot_s, window) = (sessions.slot_length_s(), sessions.window());
    if args.slot_length.is_some_and(|s| s != slot_s) || args.window.is_some_and(|w| w != window) {
        return Err(mismatch(format!(
            "has slots of {slot_s} s and a window of {window} slots"
        )));
    }
    let saved = sessions.algorithms();
    let names: Vec<&str> = saved.iter().map(|(_, n)| n.as_str()).collect();
    let wanted: Vec<&str> = spec.iter().map(|(_, n)| n.as_str()).collect();
    if names != wanted {
        return Err(mismatch(format!("runs {}", names.join(", "))));
    }
    Ok(sessions)
}
