//! One cell of a sweep: its options turned into a replay (or a
//! simulation), checked, and run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value};

use super::{Cell, CellKind, CellResult, SweepError};
use crate::model::Instance;
use crate::registry;
use crate::replay::{BaselineOptions, ReplayArch, ReplayConfig, ReplayError, replay, solo_runs};
use crate::report::RunMeta;
use crate::report::csv::{write_jobs_csv, write_summary_csv};
use crate::sim::{RunSummary, SimOptions, SimResult, simulate};
use crate::trace::{GpuMix, TraceFormat};

/// The one column of a run's summary that is wall-clock time: a sweep's
/// table leaves it out, so that tables are equal run to run.
const WALL_CLOCK_COLUMN: &str = "solver_time_s";

/// `v` as text: a string as it is, a number as JSON writes it.
fn text(key: &str, v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(format!("option {key}: expected a string or a number")),
    }
}

fn number(key: &str, v: &Value) -> Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("option {key}: expected a number"))
}

fn whole<T: TryFrom<u64>>(key: &str, v: &Value) -> Result<T, String> {
    v.as_u64()
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("option {key}: expected a whole number in range"))
}

/// Sets one of the baselines' options.
fn set_baseline(o: &mut BaselineOptions, key: &str, v: &Value) -> Result<(), String> {
    match key {
        "placement" => {
            o.placement = text(key, v)?
                .parse()
                .map_err(|e| format!("option placement: {e}"))?;
        }
        "tiresias_thresholds" => {
            o.tiresias_thresholds = match v {
                Value::Array(a) => a.iter().map(|x| number(key, x)).collect::<Result<_, _>>()?,
                _ => return Err("option tiresias_thresholds: expected a list of numbers".into()),
            };
        }
        "tiresias_starve_factor" => o.tiresias_starve_factor = Some(number(key, v)?),
        "round_s" => o.round_s = number(key, v)?,
        "gpu_prices" => o.gpu_prices = Some(text(key, v)?),
        _ => return Err(format!("option {key}: not one of the baselines' options")),
    }
    Ok(())
}

/// Sets the replay option `key` (a flag of `dmlsched replay`).
fn set_replay(c: &mut ReplayConfig, base: &Path, key: &str, v: &Value) -> Result<(), String> {
    match key {
        "format" => {
            c.format = Some(
                text(key, v)?
                    .parse::<TraceFormat>()
                    .map_err(|e| format!("option format: {e}"))?,
            );
        }
        "arch" => {
            c.arch = Some(
                text(key, v)?
                    .parse::<ReplayArch>()
                    .map_err(|e| e.to_string())?,
            );
        }
        "start" => c.start = Some(text(key, v)?),
        "jobs" => c.jobs = whole(key, v)?,
        "gpus" => {
            let t = text(key, v)?;
            c.gpus = t
                .parse::<GpuMix>()
                .map_err(|e| format!("option gpus {t}: {e}"))?;
        }
        "gpus_per_machine" => c.gpus_per_machine = whole(key, v)?,
        "ps_servers" => c.ps_servers = Some(whole(key, v)?),
        "horizon" => c.horizon = Some(text(key, v)?),
        "slot_length" => c.slot_length = Some(number(key, v)?),
        "utility" => c.utility = Some(text(key, v)?),
        "gavel_throughputs" => c.gavel_throughputs = Some(resolve(base, &text(key, v)?)?),
        "gavel_gpu" => c.gavel_gpu = text(key, v)?,
        _ => set_baseline(&mut c.baselines, key, v)?,
    }
    Ok(())
}

impl Cell {
    fn field(&self, name: &str) -> &Value {
        &self.spec[name]
    }

    fn options(&self) -> Map<String, Value> {
        self.field("options")
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    fn policy(&self) -> &str {
        self.field("policy").as_str().unwrap_or_default()
    }

    fn seed(&self) -> u64 {
        self.field("seed").as_u64().unwrap_or_default()
    }

    fn params(&self) -> Option<String> {
        match self.field("params") {
            Value::Null => None,
            p => Some(p.to_string()),
        }
    }

    fn path(&self, field: &str) -> Result<PathBuf, SweepError> {
        let text = self.field(field).as_str().unwrap_or_default();
        resolve(&self.base, text).map_err(SweepError::Input)
    }

    /// The replay of a replay cell: one policy, one load scale, one seed.
    pub(crate) fn replay_config(&self) -> Result<ReplayConfig, SweepError> {
        let mut c = ReplayConfig::new(self.path("trace")?);
        for (k, v) in &self.options() {
            set_replay(&mut c, &self.base, k, v).map_err(SweepError::Input)?;
        }
        c.policies = vec![self.policy().to_string()];
        c.load_scales = vec![self.field("load_scale").as_f64().unwrap_or(1.0)];
        c.seeds = vec![self.seed()];
        if let Some(p) = self.params() {
            c.params.push((self.policy().to_string(), p));
        }
        Ok(c)
    }

    /// The baselines' options of a simulation cell.
    fn baseline_options(&self) -> Result<BaselineOptions, SweepError> {
        let mut o = BaselineOptions::default();
        for (k, v) in &self.options() {
            set_baseline(&mut o, k, v).map_err(SweepError::Input)?;
        }
        Ok(o)
    }

    /// Checks what needs no run: the options, the policy's parameters,
    /// and that the files named exist.
    pub(crate) fn check(&self) -> Result<(), SweepError> {
        let what = |e: String| SweepError::Input(format!("cell {}: {e}", self.label()));
        match self.kind {
            CellKind::Replay => {
                let c = self.replay_config()?;
                c.check().map_err(|e| what(e.message()))?;
                c.baselines
                    .params(&c.policies)
                    .map_err(|e| what(e.message()))?;
                exists(&c.trace).map_err(what)?;
            }
            CellKind::Simulate => {
                let o = self.baseline_options()?;
                o.params(&[self.policy().to_string()])
                    .map_err(|e| what(e.message()))?;
                exists(&self.path("instance")?).map_err(what)?;
            }
        }
        if let Some(p) = self.params() {
            registry::check_params(self.policy(), &p)
                .map_err(|e| what(format!("params of {}: {e}", self.policy())))?;
        }
        Ok(())
    }

    /// A short name for messages: policy, load scale, seed and source.
    pub fn label(&self) -> String {
        let source = match self.kind {
            CellKind::Replay => {
                let o = self.options();
                let start = o.get("start").map(|s| text("start", s).unwrap_or_default());
                format!("window {}", start.unwrap_or_else(|| "first".into()))
            }
            CellKind::Simulate => self
                .field("instance")
                .as_str()
                .unwrap_or_default()
                .to_string(),
        };
        match self.kind {
            CellKind::Replay => format!(
                "{} x{} seed {} ({source})",
                self.policy(),
                crate::replay::scale_label(self.field("load_scale").as_f64().unwrap_or(1.0)),
                self.seed()
            ),
            CellKind::Simulate => format!("{} seed {} ({source})", self.policy(), self.seed()),
        }
    }
}

/// A path of the grid: `$NAME` or `${NAME}` replaced by the environment
/// variable (so that a grid names `$DMLSCHED_TRACES/philly.csv` and cells
/// keep their keys on a machine whose traces live elsewhere), then read
/// from `base` when relative.
pub(crate) fn resolve(base: &Path, text: &str) -> Result<PathBuf, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced
                .find('}')
                .ok_or_else(|| format!("path {text}: `${{` without `}}`"))?;
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            return Err(format!("path {text}: `$` without a variable's name"));
        }
        let value = std::env::var(name)
            .map_err(|_| format!("path {text}: the environment variable {name} is not set"))?;
        out.push_str(&value);
        rest = tail;
    }
    out.push_str(rest);
    Ok(base.join(out))
}

fn exists(path: &Path) -> Result<(), String> {
    std::fs::metadata(path)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `cell`: its summary row (without the wall-clock column) and its
/// per-job rows as CSV, or why it failed. Never panics on a cell's input:
/// a bad option or file is a failure with a message.
pub fn run_cell(cell: &Cell) -> CellResult {
    let started = Instant::now();
    let outcome = match cell.kind {
        CellKind::Replay => run_replay(cell),
        CellKind::Simulate => run_simulation(cell),
    };
    let wall_s = started.elapsed().as_secs_f64();
    match outcome {
        Ok((summary_csv, jobs_csv)) => CellResult {
            summary_csv,
            jobs_csv,
            error: None,
            wall_s,
        },
        Err(e) => CellResult {
            summary_csv: String::new(),
            jobs_csv: String::new(),
            error: Some(e),
            wall_s,
        },
    }
}

fn run_replay(cell: &Cell) -> Result<(String, String), SweepError> {
    let config = cell.replay_config()?;
    let mut replayed = replay(&config, &mut ())?;
    if let Some(f) = replayed.failures.pop() {
        return Err(f.error.into());
    }
    let rows = replayed.summary_rows();
    let run = replayed
        .runs
        .first()
        .ok_or_else(|| SweepError::Run("the replay gave no run".into()))?;
    tables(&rows, &run.meta, &run.result)
}

fn run_simulation(cell: &Cell) -> Result<(String, String), SweepError> {
    let path = cell.path("instance")?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| SweepError::Input(format!("{}: {e}", path.display())))?;
    let inst = Instance::from_json(&text)
        .map_err(|e| SweepError::Input(format!("{}: {e}", path.display())))?;
    let name = cell.policy();
    let baselines = cell
        .baseline_options()?
        .params(&[name.to_string()])
        .map_err(|e| SweepError::Input(e.message()))?;
    let lib = |e: crate::Error| SweepError::from(ReplayError::lib(name, &e));
    let params = cell.params();
    let mut policy =
        registry::policy(name, &inst, params.as_deref(), cell.seed(), &baselines).map_err(lib)?;
    let result = simulate(&inst, policy.as_mut(), &SimOptions::default()).map_err(lib)?;
    let solos = solo_runs(&inst, &mut ());
    let summary = result
        .summary()
        .with_resource_use(&result.resource_use(&inst))
        .with_fairness(result.fairness(&solos));
    let meta = RunMeta {
        policy: name.to_string(),
        seed: cell.seed(),
        workload: path
            .file_name()
            .map_or_else(|| "instance".into(), |n| n.to_string_lossy().into_owned()),
        cluster: RunMeta::describe_cluster(inst.cluster()),
        load_scale: 1.0,
    };
    tables(&[(meta.clone(), summary)], &meta, &result)
}

/// The summary row (the wall-clock column dropped) and the per-job rows,
/// as CSV with their headers.
fn tables(
    rows: &[(RunMeta, RunSummary)],
    meta: &RunMeta,
    result: &SimResult,
) -> Result<(String, String), SweepError> {
    let mut summary = Vec::new();
    write_summary_csv(&mut summary, rows).map_err(|e| SweepError::Run(e.to_string()))?;
    let mut jobs = Vec::new();
    write_jobs_csv(&mut jobs, meta, result).map_err(|e| SweepError::Run(e.to_string()))?;
    let summary = drop_column(&summary, WALL_CLOCK_COLUMN)?;
    let jobs = String::from_utf8(jobs).map_err(|e| SweepError::Run(e.to_string()))?;
    Ok((summary, jobs))
}

/// `csv` without the column `name`.
fn drop_column(csv_bytes: &[u8], name: &str) -> Result<String, SweepError> {
    let bad = |e: csv::Error| SweepError::Run(format!("summary table: {e}"));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv_bytes);
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut drop = None;
    for record in reader.records() {
        let record = record.map_err(bad)?;
        let drop = *drop.get_or_insert_with(|| record.iter().position(|f| f == name));
        let kept = record
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != drop)
            .map(|(_, f)| f);
        writer.write_record(kept).map_err(bad)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| SweepError::Run(format!("summary table: {e}")))?;
    String::from_utf8(bytes).map_err(|e| SweepError::Run(e.to_string()))
}
