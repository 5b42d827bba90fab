//! A sweep's grid read from JSON, and its cells planned.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Cell, CellKind, Plan, PlanRow, SweepError};
use crate::registry;

/// The replay options a grid may set (`options`, a window, a cluster),
/// named as the flags of `dmlsched replay` with `_` for `-`.
pub(crate) const REPLAY_OPTIONS: [&str; 17] = [
    "format",
    "arch",
    "start",
    "jobs",
    "gpus",
    "gpus_per_machine",
    "ps_servers",
    "horizon",
    "slot_length",
    "utility",
    "placement",
    "tiresias_thresholds",
    "tiresias_starve_factor",
    "round_s",
    "gpu_prices",
    "gavel_throughputs",
    "gavel_gpu",
];

/// The options of an instance grid: the baselines' (`dmlsched simulate`'s
/// flags).
pub(crate) const SIMULATE_OPTIONS: [&str; 5] = [
    "placement",
    "tiresias_thresholds",
    "tiresias_starve_factor",
    "round_s",
    "gpu_prices",
];

/// The most rows a grid may have: a million replays is weeks of work on
/// one machine; a bigger grid is a typo (or several grids).
pub const MAX_ROWS: usize = 1_000_000;

/// The grid's top-level fields.
const FIELDS: [&str; 9] = [
    "trace",
    "windows",
    "instances",
    "policies",
    "load_scales",
    "seeds",
    "clusters",
    "params",
    "options",
];

/// Named parameter sets: set name → policy → parameters.
pub(crate) type ParamSets = Vec<(String, Map<String, Value>)>;

/// One entry of an axis of option sets (a window, a cluster): its label
/// and its options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) label: String,
    pub(crate) options: Map<String, Value>,
}

/// What the cells run on: windows of one trace, or instance files.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    Trace { trace: String, windows: Vec<Entry> },
    Instances(Vec<String>),
}

/// A sweep's grid: the axes, each a list, and the options every cell
/// shares. Read it with [`Grid::from_file`] or [`Grid::from_json`];
/// [`Grid::plan`] lists its cells.
///
/// In JSON (every field but `policies` and one of `trace` and `instances`
/// optional):
///
/// ```json
/// {
///   "trace": "philly.csv",
///   "windows": [{"start": "2017-11-01", "jobs": 2000}, {"start": "2017-11-15", "jobs": 2000}],
///   "policies": ["fifo", "tiresias", "oasis"],
///   "load_scales": [0.5, 1, 2],
///   "seeds": [0, 1, 2, 3],
///   "clusters": [{"gpus": 64}, {"name": "big", "gpus": 128}],
///   "params": {"default": {}, "scaled": {"oasis": {"u_scale": 2}}},
///   "options": {"horizon": "cover:3", "placement": "best-fit"}
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Where relative paths in the grid are read from.
    pub(crate) base: PathBuf,
    pub(crate) source: Source,
    pub(crate) policies: Vec<String>,
    pub(crate) load_scales: Vec<f64>,
    pub(crate) seeds: Vec<u64>,
    pub(crate) clusters: Vec<Entry>,
    /// Named parameter sets: set name → policy → parameters.
    pub(crate) params: ParamSets,
    pub(crate) options: Map<String, Value>,
}

fn input(m: impl Into<String>) -> SweepError {
    SweepError::Input(m.into())
}

impl Grid {
    /// Reads the grid in `path`; relative paths in it are read from the
    /// file's folder.
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] for an unreadable file or an invalid grid.
    pub fn from_file(path: &Path) -> Result<Grid, SweepError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| input(format!("{}: {e}", path.display())))?;
        // Absolute, so that a cell sent to another process (a Ray worker)
        // reads the same files whatever that process's current folder.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let base = absolute
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        Grid::from_json(&text, &base).map_err(|e| match e {
            SweepError::Input(m) => input(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// Reads a grid from JSON text; relative paths in it are read from
    /// `base`.
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] naming the field that is wrong.
    pub fn from_json(text: &str, base: &Path) -> Result<Grid, SweepError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| input(format!("grid JSON: {e}")))?;
        Grid::from_value(&value, base)
    }

    /// Reads a grid from a JSON value (see [`Grid::from_json`]).
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] naming the field that is wrong.
    pub fn from_value(value: &Value, base: &Path) -> Result<Grid, SweepError> {
        if base.to_str().is_none() {
            return Err(input(format!(
                "the grid's folder {} is not UTF-8: a cell names its files as text",
                base.display()
            )));
        }
        let Value::Object(g) = value else {
            return Err(input("the grid must be a JSON object"));
        };
        if let Some(k) = g.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(input(format!(
                "unknown grid field `{k}` (fields: {})",
                FIELDS.join(", ")
            )));
        }
        let source = source(g)?;
        let allowed: &[&str] = match source {
            Source::Trace { .. } => &REPLAY_OPTIONS,
            Source::Instances(_) => &SIMULATE_OPTIONS,
        };
        let grid = Grid {
            base: base.to_path_buf(),
            policies: policies(g)?,
            load_scales: load_scales(g, &source)?,
            seeds: seeds(g)?,
            clusters: entries(g, "clusters", allowed)?,
            params: params(g, base)?,
            options: options(g.get("options"), "options", allowed)?,
            source,
        };
        if let (Source::Instances(_), true) = (&grid.source, g.contains_key("clusters")) {
            return Err(input(
                "`clusters` applies to trace grids: an instance names its own cluster",
            ));
        }
        for (set, policies) in &grid.params {
            if let Some(p) = policies.keys().find(|p| !grid.policies.contains(p)) {
                return Err(input(format!(
                    "params.{set}.{p}: {p} is not among `policies`"
                )));
            }
        }
        if let Source::Trace { windows, .. } = &grid.source {
            for w in windows {
                check_options(&w.options, "windows", allowed)?;
            }
        }
        Ok(grid)
    }

    /// The grid's cells and table rows, every cell's options checked.
    ///
    /// Rows come in the grid's order: window (or instance), cluster,
    /// parameter set, load scale, seed, policy. Rows that run the same
    /// thing (a baseline under two parameter sets) share one cell.
    ///
    /// # Errors
    ///
    /// [`SweepError::Input`] for an option a cell cannot take.
    pub fn plan(&self) -> Result<Plan, SweepError> {
        let sizes = [
            match &self.source {
                Source::Trace { windows, .. } => windows.len(),
                Source::Instances(paths) => paths.len(),
            },
            self.clusters.len().max(1),
            self.params.len(),
            self.load_scales.len(),
            self.seeds.len(),
            self.policies.len(),
        ];
        let size = sizes.iter().try_fold(1usize, |n, s| n.checked_mul(*s));
        if size.is_none_or(|n| n > MAX_ROWS) {
            return Err(input(format!(
                "the grid has more than {MAX_ROWS} rows ({}): split it",
                sizes.map(|s| s.to_string()).join(" × ")
            )));
        }
        let mut cells: Vec<Cell> = Vec::new();
        let mut index_of: std::collections::HashMap<String, usize> = Default::default();
        let mut rows = Vec::new();
        let sources: Vec<(String, Value)> = match &self.source {
            Source::Trace { trace, windows } => windows
                .iter()
                .map(|w| {
                    let window = Value::Object(w.options.clone());
                    let source = serde_json::json!({ "trace": trace, "window": window });
                    (w.label.clone(), source)
                })
                .collect(),
            Source::Instances(paths) => paths
                .iter()
                .map(|p| (p.clone(), serde_json::json!({ "instance": p })))
                .collect(),
        };
        let clusters = if self.clusters.is_empty() {
            vec![Entry {
                label: String::new(),
                options: Map::new(),
            }]
        } else {
            self.clusters.clone()
        };
        for (source_label, source) in &sources {
            for cluster in &clusters {
                for (set, set_params) in &self.params {
                    for &scale in &self.load_scales {
                        for &seed in &self.seeds {
                            for policy in &self.policies {
                                let spec =
                                    self.spec(source, cluster, set_params, policy, scale, seed);
                                let cell = Cell::new(spec, &self.base)?;
                                let index = match index_of.get(&cell.key) {
                                    Some(&i) => i,
                                    None => {
                                        cell.check()?;
                                        index_of.insert(cell.key.clone(), cells.len());
                                        cells.push(cell);
                                        cells.len() - 1
                                    }
                                };
                                rows.push(PlanRow {
                                    cell: index,
                                    source: source_label.clone(),
                                    cluster: cluster.label.clone(),
                                    params: set.clone(),
                                });
                            }
                        }
                    }
                }
            }
        }
        Ok(Plan {
            cells,
            rows,
            instances: matches!(self.source, Source::Instances(_)),
        })
    }

    /// The description of one cell: everything it runs, nothing else.
    fn spec(
        &self,
        source: &Value,
        cluster: &Entry,
        set: &Map<String, Value>,
        policy: &str,
        scale: f64,
        seed: u64,
    ) -> Value {
        let mut options = self.options.clone();
        if let Some(Value::Object(w)) = source.get("window") {
            options.extend(w.clone());
        }
        options.extend(cluster.options.clone());
        let mut spec = Map::new();
        match source.get("trace") {
            Some(trace) => {
                spec.insert("kind".into(), CellKind::Replay.name().into());
                spec.insert("trace".into(), trace.clone());
                spec.insert("load_scale".into(), scale.into());
            }
            None => {
                spec.insert("kind".into(), CellKind::Simulate.name().into());
                spec.insert("instance".into(), source["instance"].clone());
            }
        }
        spec.insert("options".into(), Value::Object(options));
        spec.insert("policy".into(), policy.into());
        spec.insert(
            "params".into(),
            set.get(policy).cloned().unwrap_or(Value::Null),
        );
        spec.insert("seed".into(), seed.into());
        // Results may change from one release to the next: a sweep resumed
        // by another version runs its cells again rather than mixing them.
        spec.insert("version".into(), env!("CARGO_PKG_VERSION").into());
        Value::Object(spec)
    }
}

fn source(g: &Map<String, Value>) -> Result<Source, SweepError> {
    match (g.get("trace"), g.get("instances")) {
        (Some(Value::String(trace)), None) => {
            let windows = entries(g, "windows", &REPLAY_OPTIONS)?;
            Ok(Source::Trace {
                trace: trace.clone(),
                windows: if windows.is_empty() {
                    vec![Entry {
                        label: String::new(),
                        options: Map::new(),
                    }]
                } else {
                    windows
                },
            })
        }
        (Some(_), None) => Err(input("`trace` must be a path (a string)")),
        (None, Some(Value::Array(paths))) if !paths.is_empty() => {
            if g.contains_key("windows") {
                return Err(input("`windows` applies to trace grids, not `instances`"));
            }
            let mut out: Vec<String> = Vec::with_capacity(paths.len());
            for p in paths {
                let Value::String(s) = p else {
                    return Err(input("`instances` must be a list of paths"));
                };
                if out.contains(s) {
                    return Err(input(format!("instances: {s} is listed twice")));
                }
                out.push(s.clone());
            }
            Ok(Source::Instances(out))
        }
        (None, Some(_)) => Err(input("`instances` must be a non-empty list of paths")),
        (Some(_), Some(_)) => Err(input("give `trace` or `instances`, not both")),
        (None, None) => Err(input(
            "the grid needs `trace` (with `windows`) or `instances`",
        )),
    }
}

fn policies(g: &Map<String, Value>) -> Result<Vec<String>, SweepError> {
    let list = match g.get("policies") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::String(s)) if !s.trim().is_empty() => {
            return check_policies(s.split(',').map(|p| p.trim().to_string()).collect());
        }
        _ => return Err(input("`policies` must be a non-empty list of policy names")),
    };
    let names = list
        .iter()
        .map(|p| match p {
            Value::String(s) => Ok(s.trim().to_string()),
            _ => Err(input("`policies` must be a list of policy names")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_policies(names)
}

fn check_policies(names: Vec<String>) -> Result<Vec<String>, SweepError> {
    for (i, n) in names.iter().enumerate() {
        if !registry::is_policy(n) {
            return Err(input(format!(
                "policies: unknown policy {n} ({})",
                registry::known_policies()
            )));
        }
        if names[..i].contains(n) {
            return Err(input(format!("policies: {n} is listed twice")));
        }
    }
    Ok(names)
}

/// A list of distinct values, each read by `read`.
fn list<T: std::fmt::Display>(
    g: &Map<String, Value>,
    field: &str,
    default: T,
    read: impl Fn(&Value) -> Option<T>,
    what: &str,
) -> Result<Vec<T>, SweepError> {
    let Some(v) = g.get(field) else {
        return Ok(vec![default]);
    };
    let bad = || input(format!("`{field}` must be a non-empty list of {what}"));
    let Value::Array(a) = v else {
        return Err(bad());
    };
    if a.is_empty() {
        return Err(bad());
    }
    let mut out: Vec<T> = Vec::with_capacity(a.len());
    let mut seen = std::collections::HashSet::with_capacity(a.len());
    for x in a {
        let t = read(x).ok_or_else(bad)?;
        if !seen.insert(t.to_string()) {
            return Err(input(format!("{field}: {t} is listed twice")));
        }
        out.push(t);
    }
    Ok(out)
}

fn load_scales(g: &Map<String, Value>, source: &Source) -> Result<Vec<f64>, SweepError> {
    if let (Source::Instances(_), true) = (source, g.contains_key("load_scales")) {
        return Err(input(
            "`load_scales` applies to trace grids: an instance's arrivals are as given",
        ));
    }
    list(
        g,
        "load_scales",
        1.0,
        |v| v.as_f64().filter(|s| s.is_finite() && *s > 0.0),
        "positive numbers",
    )
}

fn seeds(g: &Map<String, Value>) -> Result<Vec<u64>, SweepError> {
    list(g, "seeds", 0, Value::as_u64, "whole numbers ≥ 0")
}

/// An axis of option sets (`windows`, `clusters`): each entry an object of
/// options with an optional `name`, its label (else the options, as
/// `key=value` pairs).
fn entries(
    g: &Map<String, Value>,
    field: &str,
    allowed: &[&str],
) -> Result<Vec<Entry>, SweepError> {
    let Some(v) = g.get(field) else {
        return Ok(Vec::new());
    };
    let bad = || input(format!("`{field}` must be a non-empty list of objects"));
    let Value::Array(a) = v else {
        return Err(bad());
    };
    if a.is_empty() {
        return Err(bad());
    }
    let mut out: Vec<Entry> = Vec::with_capacity(a.len());
    for (i, e) in a.iter().enumerate() {
        let mut options = match e {
            Value::Object(o) => o.clone(),
            _ => return Err(bad()),
        };
        let name = match options.remove("name") {
            None => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            Some(_) => {
                return Err(input(format!(
                    "{field}[{i}]: `name` must be a non-empty string"
                )));
            }
        };
        let options = self::options(Some(&Value::Object(options)), field, allowed)?;
        let label = name.unwrap_or_else(|| auto_label(&options));
        if out.iter().any(|o| o.label == label) {
            return Err(input(format!(
                "{field}: two entries are labelled `{label}`"
            )));
        }
        out.push(Entry { label, options });
    }
    Ok(out)
}

/// `key=value,…` of an entry without a name.
fn auto_label(options: &Map<String, Value>) -> String {
    options
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// An object of options, keys with `-` read as `_`, each one `allowed`.
fn options(
    v: Option<&Value>,
    field: &str,
    allowed: &[&str],
) -> Result<Map<String, Value>, SweepError> {
    let Some(v) = v else {
        return Ok(Map::new());
    };
    let Value::Object(o) = v else {
        return Err(input(format!("`{field}` must be an object of options")));
    };
    let out: Map<String, Value> = o
        .iter()
        .map(|(k, v)| (k.replace('-', "_"), v.clone()))
        .collect();
    check_options(&out, field, allowed)?;
    Ok(out)
}

fn check_options(o: &Map<String, Value>, field: &str, allowed: &[&str]) -> Result<(), SweepError> {
    for k in o.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(input(format!(
                "{field}: unknown option `{k}` here (options: {})",
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

/// A parameters file: a regular file (not a device or a pipe, which could
/// never end) of at most 16 MiB, as text.
fn read_small(path: &Path) -> Result<String, String> {
    const MAX_BYTES: u64 = 16 << 20;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "{} bytes, more than a parameters file's 16 MiB",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// `params`: named sets, each an object of policy → parameters (a JSON
/// object, or the path of a JSON file read now, so that a cell's key
/// holds the parameters themselves). Default: one set, `default`, empty.
fn params(g: &Map<String, Value>, base: &Path) -> Result<ParamSets, SweepError> {
    let Some(v) = g.get("params") else {
        return Ok(vec![("default".into(), Map::new())]);
    };
    let Value::Object(sets) = v else {
        return Err(input(
            "`params` must be an object of named sets, each {policy: parameters}",
        ));
    };
    if sets.is_empty() {
        return Err(input("`params` needs at least one named set"));
    }
    let mut out = Vec::with_capacity(sets.len());
    for (name, set) in sets {
        if name.is_empty() {
            return Err(input("params: a set's name must not be empty"));
        }
        let Value::Object(set) = set else {
            return Err(input(format!(
                "params.{name} must be an object of {{policy: parameters}}"
            )));
        };
        let mut read = Map::new();
        for (policy, p) in set {
            if !registry::ALGORITHM_POLICIES.contains(&policy.as_str()) {
                return Err(input(format!(
                    "params.{name}.{policy}: {policy} takes no parameters (one of {})",
                    registry::ALGORITHM_POLICIES.join(", ")
                )));
            }
            let value = match p {
                Value::Object(_) => p.clone(),
                Value::String(path) => {
                    let path = super::cell::resolve(base, path)
                        .map_err(|e| input(format!("params.{name}.{policy}: {e}")))?;
                    let text = read_small(&path).map_err(|e| {
                        input(format!("params.{name}.{policy}: {}: {e}", path.display()))
                    })?;
                    serde_json::from_str(&text).map_err(|e| {
                        input(format!("params.{name}.{policy}: {}: {e}", path.display()))
                    })?
                }
                _ => {
                    return Err(input(format!(
                        "params.{name}.{policy} must be an object or a file's path"
                    )));
                }
            };
            read.insert(policy.clone(), value);
        }
        out.push((name.clone(), read));
    }
    Ok(out)
}
