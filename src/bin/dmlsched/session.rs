//! `dmlsched session`: the sessions as a line protocol. One JSON event per
//! line on standard input, exactly one JSON line per event on standard
//! output (flushed), so a scheduler in any language can run the crate as a
//! sidecar. The protocol is documented in `docs/session-protocol.md`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use dmlsched::model::{Architecture, Cluster, Job, JobId, MachineId, Resources};
use dmlsched::online::{AnySession, Overrun, SessionDecision};
use dmlsched::registry::{self, SESSION_ALGORITHMS};
use dmlsched::state::{ClusterState, Holder};
use dmlsched::trace::Arch;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::solve::lib_error;
use crate::{CliError, read};

/// The slot length without `--slot-length`, seconds.
const DEFAULT_SLOT_S: f64 = 60.0;
/// The planning window without `--window`, slots.
const DEFAULT_WINDOW: u32 = 200;
/// The version of the `--state` file's layout.
const STATE_VERSION: u32 = 1;

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

/// One algorithm's session and the architecture of the jobs it decides.
struct Route {
    arch: Arch,
    name: String,
    session: Box<dyn AnySession>,
}

/// The running sessions over one shared state.
struct Sessions {
    state: ClusterState,
    routes: Vec<Route>,
    window: u32,
    save_to: Option<PathBuf>,
}

/// An event, one per input line.
#[derive(Debug, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
enum Event {
    Submit {
        time_s: f64,
        job: Value,
    },
    Finish {
        time_s: f64,
        job: JobId,
    },
    Cancel {
        time_s: f64,
        job: JobId,
    },
    Resubmit {
        time_s: f64,
        job: JobId,
    },
    Extend {
        time_s: f64,
        job: JobId,
        more_s: f64,
    },
    Usage {
        machine: MachineId,
        from_s: f64,
        to_s: f64,
        resources: Resources,
    },
    Certificate {},
    Save {},
}

/// The `--state` file: the shared state and every session.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    dmlsched_session: u32,
    slot_length_s: f64,
    window: u32,
    sessions: Vec<SavedRoute>,
    state: ClusterState,
}

/// One saved session.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedRoute {
    arch: String,
    algorithm: String,
    session: Value,
}

/// `dmlsched session`.
pub(crate) fn run(args: &SessionArgs) -> Result<(), CliError> {
    let spec = parse_algorithms(&args.algorithm)?;
    let mut sessions = open(args, &spec)?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| CliError::Run(format!("standard input: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = sessions.handle(&line);
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            // The reader is gone: keep what was decided, stop reading.
            break;
        }
    }
    sessions.save()?;
    Ok(())
}

/// `ALGORITHM` or `ps=A,rar=B`: the algorithm of each architecture.
fn parse_algorithms(text: &str) -> Result<Vec<(Arch, String)>, CliError> {
    let bad = |why: String| CliError::Input(format!("--algorithm {text}: {why}"));
    let mut spec: Vec<(Arch, String)> = Vec::new();
    for part in text.split(',') {
        let (key, name) = match part.split_once('=') {
            Some((k, n)) => (Some(k.trim()), n.trim()),
            None => (None, part.trim()),
        };
        if !SESSION_ALGORITHMS.contains(&name) {
            return Err(bad(format!(
                "{name:?} is not a session algorithm (one of {})",
                SESSION_ALGORITHMS.join(", ")
            )));
        }
        let Some(arch) = registry::architecture(name) else {
            return Err(bad(format!("{name} schedules no single architecture")));
        };
        if let Some(key) = key {
            let wanted = match key {
                "ps" | "parameter-server" => Arch::ParameterServer,
                "rar" | "ring-all-reduce" => Arch::RingAllReduce,
                other => return Err(bad(format!("{other:?} is not ps or rar"))),
            };
            if wanted != arch {
                return Err(bad(format!(
                    "{name} schedules {} jobs, not {key}",
                    arch_name(arch)
                )));
            }
        } else if text.contains(',') {
            return Err(bad(format!(
                "name the architecture of {name} (ps= or rar=)"
            )));
        }
        if spec.iter().any(|(a, _)| *a == arch) {
            return Err(bad(format!("two algorithms for {} jobs", arch_name(arch))));
        }
        spec.push((arch, name.to_string()));
    }
    Ok(spec)
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::ParameterServer => "parameter-server",
        Arch::RingAllReduce => "ring-all-reduce",
    }
}

fn arch_of(job: &Job) -> Arch {
    match job.architecture {
        Architecture::ParameterServer(_) => Arch::ParameterServer,
        Architecture::RingAllReduce(_) => Arch::RingAllReduce,
    }
}

/// The sessions of `args`: loaded from `--state` when the file exists,
/// new otherwise.
fn open(args: &SessionArgs, spec: &[(Arch, String)]) -> Result<Sessions, CliError> {
    let cluster: Cluster = serde_json::from_str(&read(&args.cluster)?)
        .map_err(|e| CliError::input(&args.cluster, e))?;
    if let Some(path) = args.state.as_ref().filter(|p| p.exists()) {
        return load(path, args, spec, &cluster);
    }
    let slot_s = args.slot_length.unwrap_or(DEFAULT_SLOT_S);
    let window = args.window.unwrap_or(DEFAULT_WINDOW);
    let state =
        ClusterState::new(&cluster, slot_s).map_err(|e| CliError::input(&args.cluster, e))?;
    let Some(past_path) = &args.past else {
        return Err(CliError::Input(
            "a new session needs --past JOBS.json (jobs like the ones to come, to learn price \
             bounds from), or --state FILE of a saved session"
                .into(),
        ));
    };
    let past = read_past(past_path, &state)?;
    let mut routes = Vec::new();
    for (arch, name) in spec {
        let theirs: Vec<Job> = past
            .iter()
            .filter(|j| arch_of(j) == *arch)
            .cloned()
            .collect();
        if theirs.is_empty() {
            return Err(CliError::input(
                past_path,
                format!(
                    "no {} job to learn {name}'s price bounds from",
                    arch_name(*arch)
                ),
            ));
        }
        let file = params_path(&args.params, name, spec.len())?;
        let text = file.map(|p| read(&p.to_path_buf())).transpose()?;
        let session = registry::session(name, &state, window, &theirs, text.as_deref(), args.seed)
            .map_err(|e| lib_error(name, file, &e))?;
        routes.push(Route {
            arch: *arch,
            name: name.clone(),
            session,
        });
    }
    Ok(Sessions {
        state,
        routes,
        window,
        save_to: args.state.clone(),
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

/// The past jobs of `path` (a JSON array of jobs, or an instance file),
/// each checked on the state's cluster.
fn read_past(path: &PathBuf, state: &ClusterState) -> Result<Vec<Job>, CliError> {
    let value: Value = serde_json::from_str(&read(path)?).map_err(|e| CliError::input(path, e))?;
    let jobs = match value {
        Value::Object(mut o) if o.contains_key("jobs") => o.remove("jobs").unwrap_or(Value::Null),
        v => v,
    };
    let jobs: Vec<Job> = serde_json::from_value(jobs).map_err(|e| {
        CliError::input(path, format!("expected a list of jobs or an instance: {e}"))
    })?;
    for j in &jobs {
        state.check_job(j).map_err(|e| CliError::input(path, e))?;
    }
    Ok(jobs)
}

/// The sessions saved in `path`, checked against the command line.
fn load(
    path: &PathBuf,
    args: &SessionArgs,
    spec: &[(Arch, String)],
    cluster: &Cluster,
) -> Result<Sessions, CliError> {
    let saved: Saved = serde_json::from_str(&read(path)?).map_err(|e| CliError::input(path, e))?;
    let mismatch = |what: String| {
        CliError::input(
            path,
            format!("the saved session {what}; start a new --state file"),
        )
    };
    if saved.dmlsched_session != STATE_VERSION {
        return Err(mismatch(format!(
            "has layout {} (this build reads {STATE_VERSION})",
            saved.dmlsched_session
        )));
    }
    if saved.state.cluster() != cluster {
        return Err(mismatch("has another cluster than --cluster".into()));
    }
    if args.slot_length.is_some_and(|s| s != saved.slot_length_s)
        || args.window.is_some_and(|w| w != saved.window)
    {
        return Err(mismatch(format!(
            "has slots of {} s and a window of {} slots",
            saved.slot_length_s, saved.window
        )));
    }
    let names: Vec<&str> = saved
        .sessions
        .iter()
        .map(|r| r.algorithm.as_str())
        .collect();
    let wanted: Vec<&str> = spec.iter().map(|(_, n)| n.as_str()).collect();
    if names != wanted {
        return Err(mismatch(format!("runs {}", names.join(", "))));
    }
    let mut routes = Vec::new();
    for ((arch, name), r) in spec.iter().zip(saved.sessions) {
        let session = registry::restore_session(name, &r.session.to_string())
            .map_err(|e| CliError::input(path, e))?;
        routes.push(Route {
            arch: *arch,
            name: name.clone(),
            session,
        });
    }
    Ok(Sessions {
        state: saved.state,
        routes,
        window: saved.window,
        save_to: Some(path.clone()),
    })
}

impl Sessions {
    /// The reply to one input line.
    fn handle(&mut self, line: &str) -> Value {
        let result = serde_json::from_str::<Event>(line)
            .map_err(|e| format!("not an event: {e}"))
            .and_then(|event| self.apply(event));
        match result {
            Ok(v) => v,
            Err(e) => json!({ "error": e }),
        }
    }

    fn apply(&mut self, event: Event) -> Result<Value, String> {
        match event {
            Event::Submit { time_s, job } => self.submit(time_s, job),
            Event::Finish { time_s, job } => self.stop(time_s, job, false),
            Event::Cancel { time_s, job } => self.stop(time_s, job, true),
            Event::Resubmit { time_s, job } => self.resubmit(time_s, job),
            Event::Extend {
                time_s,
                job,
                more_s,
            } => self.extend(time_s, job, more_s),
            Event::Usage {
                machine,
                from_s,
                to_s,
                resources,
            } => self.usage(machine, from_s, to_s, resources),
            Event::Certificate {} => self.certificates(),
            Event::Save {} => {
                if self.save_to.is_none() {
                    return Err("no --state FILE to save to".into());
                }
                self.save().map_err(|e| match e {
                    CliError::Input(m) | CliError::Run(m) => m,
                })?;
                Ok(json!({ "ok": true, "event": "save" }))
            }
        }
    }

    /// Refuses a time that is not finite or before the state's.
    fn check_time(&self, time_s: f64) -> Result<(), String> {
        if !time_s.is_finite() || time_s < self.state.now_s() {
            return Err(format!(
                "time {time_s} s is not finite or before the session's time {} s",
                self.state.now_s()
            ));
        }
        Ok(())
    }

    fn submit(&mut self, time_s: f64, job: Value) -> Result<Value, String> {
        self.check_time(time_s)?;
        let job = parse_job(job, time_s)?;
        let arch = arch_of(&job);
        let Some(route) = self.routes.iter_mut().find(|r| r.arch == arch) else {
            return Err(format!(
                "{}: no algorithm for {} jobs in this session",
                job.id,
                arch_name(arch)
            ));
        };
        let d = route
            .session
            .submit(&mut self.state, &job, time_s)
            .map_err(|e| format!("{}: {e}", route.name))?;
        Ok(decision_line(&d, &route.name))
    }

    /// Decides again on a job its session rejected.
    fn resubmit(&mut self, time_s: f64, job: JobId) -> Result<Value, String> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let d = route
            .session
            .resubmit(state, job, time_s)
            .map_err(|e| format!("{}: {e}", route.name))?;
        Ok(decision_line(&d, &route.name))
    }

    /// The position of the route whose session has `job`.
    fn owner(&self, job: JobId) -> Result<usize, String> {
        self.routes
            .iter()
            .position(|r| r.session.status(job).is_some())
            .ok_or_else(|| format!("{job} was never submitted"))
    }

    fn stop(&mut self, time_s: f64, job: JobId, cancel: bool) -> Result<Value, String> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let r = if cancel {
            route.session.cancel(state, job, time_s)
        } else {
            route.session.finish(state, job, time_s)
        };
        let released = r.map_err(|e| format!("{}: {e}", route.name))?;
        Ok(json!({
            "ok": true,
            "event": if cancel { "cancel" } else { "finish" },
            "job": job,
            "released": released,
            "status": route.session.status(job),
        }))
    }

    fn extend(&mut self, time_s: f64, job: JobId, more_s: f64) -> Result<Value, String> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let r = route
            .session
            .overrun(state, job, time_s, more_s)
            .map_err(|e| format!("{}: {e}", route.name))?;
        let mut v = json!({ "ok": true, "event": "extend", "job": job });
        match r {
            Overrun::Extended { segment, utility } => {
                v["extended"] = true.into();
                v["segments"] = json!([segment]);
                v["utility"] = utility.into();
            }
            Overrun::Preempted { reason } => {
                v["extended"] = false.into();
                v["preempted"] = reason.into();
            }
        }
        v["certificate"] = json!(route.session.snapshot());
        Ok(v)
    }

    fn usage(
        &mut self,
        machine: MachineId,
        from_s: f64,
        to_s: f64,
        resources: Resources,
    ) -> Result<Value, String> {
        let id = self
            .state
            .record_usage(machine, from_s, to_s, resources)
            .map_err(|e| e.to_string())?;
        let uses = self.state.hold(Holder::Usage(id)).unwrap_or(&[]);
        let held: Vec<Value> = uses
            .iter()
            .map(|u| json!({ "slots": u.slots, "gpus": u.gpus }))
            .collect();
        Ok(json!({ "ok": true, "event": "usage", "usage": id.0, "machine": machine, "held": held }))
    }

    fn certificates(&mut self) -> Result<Value, String> {
        let mut all = Vec::new();
        for r in &mut self.routes {
            let c = r
                .session
                .certificate()
                .map_err(|e| format!("{}: {e}", r.name))?;
            all.push(json!({ "algorithm": r.name, "certificate": c }));
        }
        Ok(json!({ "ok": true, "event": "certificate", "certificates": all }))
    }

    /// Writes every session and the state to the `--state` file, if any
    /// (to a temporary file first, then renamed over it).
    fn save(&self) -> Result<(), CliError> {
        let Some(path) = &self.save_to else {
            return Ok(());
        };
        let mut sessions = Vec::new();
        for r in &self.routes {
            let text = r.session.save().map_err(|e| CliError::lib(&r.name, &e))?;
            let session: Value = serde_json::from_str(&text)
                .map_err(|e| CliError::Run(format!("{}: {e}", r.name)))?;
            sessions.push(SavedRoute {
                arch: arch_name(r.arch).into(),
                algorithm: r.name.clone(),
                session,
            });
        }
        let saved = Saved {
            dmlsched_session: STATE_VERSION,
            slot_length_s: self.state.slot_length_s(),
            window: self.window,
            sessions,
            state: self.state.clone(),
        };
        let text = serde_json::to_string(&saved).map_err(|e| CliError::Run(e.to_string()))?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text + "\n")
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
    }
}

/// The job of a submit event: the instance format's job object, its
/// `arrival_s` the submission time when left out.
fn parse_job(mut job: Value, time_s: f64) -> Result<Job, String> {
    if let Value::Object(o) = &mut job {
        o.entry("arrival_s").or_insert(json!(time_s));
    }
    serde_json::from_value(job).map_err(|e| format!("not a job: {e}"))
}

/// A decision as a line: the fields of a `schedule.json` job entry, the
/// rejection, the plan's utility and price, and the certificate snapshot.
fn decision_line(d: &SessionDecision, algorithm: &str) -> Value {
    let mut v = json!({
        "job": d.job,
        "admitted": d.admitted,
        "segments": d.segments,
        "algorithm": algorithm,
        "utility": d.utility,
        "price": d.price,
        "certificate": d.snapshot,
    });
    if let Some(r) = &d.rejection {
        v["rejection"] = json!({ "kind": r.kind(), "reason": r.to_string() });
    }
    v
}
