//! Gavel's measured throughputs, and the conversion of Gavel trace rows
//! (which carry step counts) into durations.
//!
//! Gavel (Narayanan et al., OSDI 2020) publishes the training throughput,
//! in steps per second, of every (job type, scale factor) it profiled on
//! each GPU kind (`k80`, `p100`, `v100`), measured with the job's workers
//! on one machine, and again as `<gpu>_unconsolidated` with the workers
//! spread over machines. Its Philly-derived traces give each job a
//! `total_steps`; a duration follows as `total_steps / rate`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::{TraceError, TraceJob};
use crate::model::units::Num;

/// The file name of Gavel's simulation throughputs in the folder of traces
/// named by `DMLSCHED_TRACES`.
pub const GAVEL_THROUGHPUTS_FILE: &str = "gavel-simulation_throughputs.json";

/// The environment variable naming the folder of public traces.
pub const TRACES_ENV: &str = "DMLSCHED_TRACES";

/// Gavel's measured throughputs: steps per second of a job type alone on
/// its GPUs (the `null` entry of Gavel's table; the co-location pairs are
/// not kept), per GPU kind and `(job type, scale factor)`.
///
/// ```
/// use dmlsched::trace::GavelThroughputs;
/// let mut t = GavelThroughputs::new();
/// t.insert("v100", "ResNet-50 (batch size 64)", 2, 4.0)?;
/// assert_eq!(t.rate("v100", "ResNet-50 (batch size 64)", 2), Some(4.0));
/// assert_eq!(t.rate("v100", "ResNet-50 (batch size 64)", 4), None);
/// assert!(t.insert("v100", "A3C", 1, f64::NAN).is_err());
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GavelThroughputs {
    rates: BTreeMap<String, BTreeMap<(String, u32), f64>>,
}

impl GavelThroughputs {
    /// An empty table.
    pub fn new() -> GavelThroughputs {
        GavelThroughputs::default()
    }

    /// Records `steps_per_s` for `job_type` on `scale_factor` GPUs of kind
    /// `gpu` (replacing an earlier value).
    ///
    /// # Errors
    ///
    /// [`TraceError::Throughputs`] naming the entry unless the rate is
    /// finite and > 0 and the scale factor ≥ 1.
    pub fn insert(
        &mut self,
        gpu: &str,
        job_type: &str,
        scale_factor: u32,
        steps_per_s: f64,
    ) -> Result<(), TraceError> {
        let entry = || Some(format!("{gpu}: ('{job_type}', {scale_factor})"));
        if !(steps_per_s.is_finite() && steps_per_s > 0.0) {
            return Err(TraceError::Throughputs {
                path: None,
                entry: entry(),
                reason: format!(
                    "a rate must be finite and > 0 steps/s, found {}",
                    Num(steps_per_s)
                ),
            });
        }
        if scale_factor == 0 {
            return Err(TraceError::Throughputs {
                path: None,
                entry: entry(),
                reason: "the scale factor must be ≥ 1".into(),
            });
        }
        self.rates
            .entry(gpu.to_string())
            .or_default()
            .insert((job_type.to_string(), scale_factor), steps_per_s);
        Ok(())
    }

    /// Steps per second of `job_type` alone on `scale_factor` GPUs of kind
    /// `gpu` (e.g. `v100` or `v100_unconsolidated`); `None` when not
    /// measured.
    pub fn rate(&self, gpu: &str, job_type: &str, scale_factor: u32) -> Option<f64> {
        self.rates
            .get(gpu)?
            .get(&(job_type.to_string(), scale_factor))
            .copied()
    }

    /// The GPU kinds of the table, sorted.
    pub fn gpu_kinds(&self) -> Vec<&str> {
        self.rates.keys().map(String::as_str).collect()
    }

    /// The measured `(job type, scale factor)` entries of `gpu`, sorted.
    pub fn job_types(&self, gpu: &str) -> Vec<(&str, u32)> {
        self.rates
            .get(gpu)
            .into_iter()
            .flat_map(|m| m.keys().map(|(t, s)| (t.as_str(), *s)))
            .collect()
    }

    /// Number of measured `(job type, scale factor)` entries for `gpu`.
    pub fn entries(&self, gpu: &str) -> usize {
        self.rates.get(gpu).map_or(0, BTreeMap::len)
    }

    /// The table's path: `explicit` when given, otherwise
    /// `$DMLSCHED_TRACES/gavel-simulation_throughputs.json`.
    ///
    /// # Errors
    ///
    /// [`TraceError::InvalidArgument`] when no path is given and
    /// `DMLSCHED_TRACES` is not set.
    pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, TraceError> {
        if let Some(p) = explicit {
            return Ok(p.to_path_buf());
        }
        std::env::var_os(TRACES_ENV)
            .map(|dir| PathBuf::from(dir).join(GAVEL_THROUGHPUTS_FILE))
            .ok_or_else(|| {
                TraceError::invalid(
                    "Gavel throughputs",
                    format!(
                        "no path given and {TRACES_ENV} is not set (it names the folder holding {GAVEL_THROUGHPUTS_FILE})"
                    ),
                )
            })
    }

    /// Loads Gavel's `simulation_throughputs.json`.
    ///
    /// # Errors
    ///
    /// [`TraceError::Io`] if the file cannot be read, [`TraceError::Empty`]
    /// if it holds no rate, and [`TraceError::Throughputs`] (with the path)
    /// for malformed JSON or an entry that is not as described in
    /// [`GavelThroughputs::read`].
    #[cfg(feature = "serde")]
    pub fn load(path: impl AsRef<Path>) -> Result<GavelThroughputs, TraceError> {
        super::with_file(path.as_ref(), GavelThroughputs::read)
    }

    /// Reads Gavel's throughput JSON from any reader: an object of GPU
    /// kinds, each an object keyed by `('<job type>', <scale factor>)`
    /// whose value is an object with a `"null"` rate (steps per second,
    /// finite and ≥ 0) and co-location pairs (ignored). A rate of 0 (Gavel's
    /// mark for a configuration it could not run, e.g. ResNet-50 with batch
    /// 128 on two K80s) is read as not measured.
    ///
    /// # Errors
    ///
    /// As [`GavelThroughputs::load`], without a path.
    #[cfg(feature = "serde")]
    pub fn read(mut reader: impl std::io::Read) -> Result<GavelThroughputs, TraceError> {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|source| TraceError::Io { path: None, source })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(TraceError::Empty { path: None });
        }
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| malformed(None, format!("not valid JSON: {e}")))?;
        let kinds = value
            .as_object()
            .ok_or_else(|| malformed(None, "the top level is not an object of GPU kinds"))?;
        let mut table = GavelThroughputs::new();
        for (gpu, entries) in kinds {
            let entries = entries
                .as_object()
                .ok_or_else(|| malformed(Some(gpu.clone()), "not an object of job types"))?;
            for (key, entry) in entries {
                let name = || Some(format!("{gpu}: {key}"));
                let (job_type, scale) = parse_key(key).ok_or_else(|| {
                    malformed(name(), "the key is not `('<job type>', <scale factor>)`")
                })?;
                let rate = entry
                    .get("null")
                    .and_then(serde_json::Value::as_f64)
                    .ok_or_else(|| malformed(name(), "no numeric `null` (isolated) rate"))?;
                // Gavel writes 0 for a configuration it could not run (e.g.
                // out of memory on a K80): not measured.
                if rate != 0.0 {
                    table.insert(gpu, &job_type, scale, rate)?;
                }
            }
        }
        if table.rates.values().all(BTreeMap::is_empty) {
            return Err(TraceError::Empty { path: None });
        }
        Ok(table)
    }
}

#[cfg(feature = "serde")]
fn malformed(entry: Option<String>, reason: impl Into<String>) -> TraceError {
    TraceError::Throughputs {
        path: None,
        entry,
        reason: reason.into(),
    }
}

/// Parses a key `('<job type>', <n>)` (Python's repr of a tuple; the job
/// type quoted with `'` or `"`).
#[cfg(feature = "serde")]
fn parse_key(key: &str) -> Option<(String, u32)> {
    let inner = key.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (quoted, scale) = inner.rsplit_once(',')?;
    let quoted = quoted.trim();
    let job_type = quoted
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| quoted.strip_prefix('"').and_then(|s| s.strip_suffix('"')))?;
    let scale = scale.trim().parse::<u32>().ok().filter(|&s| s >= 1)?;
    Some((job_type.to_string(), scale))
}

/// How [`gavel_steps_to_durations`] turns steps into seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GavelConversion {
    /// The GPU kind whose rates are used (`k80`, `p100`, `v100`, …).
    pub gpu: String,
    /// GPUs per machine of the replayed cluster: a job of at most this many
    /// GPUs runs on one machine and gets the `<gpu>` rate; a larger one gets
    /// `<gpu>_unconsolidated`.
    pub gpus_per_machine: u32,
}

impl Default for GavelConversion {
    /// V100 rates, 8 GPUs per machine.
    fn default() -> Self {
        GavelConversion {
            gpu: "v100".into(),
            gpus_per_machine: 8,
        }
    }
}

/// Why a trace row was left out of a load or conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipCause {
    /// The throughput table has no rate for the row's job type and GPU count
    /// on the chosen GPU kind (`gpu`: the table's kind looked up, e.g.
    /// `v100` or `v100_unconsolidated`).
    NoMeasuredRate {
        /// The GPU kind looked up.
        gpu: String,
        /// The row's job type, as Gavel writes it.
        job_type: String,
        /// The row's GPU count.
        scale_factor: u32,
    },
    /// The row has neither a duration nor a step count.
    NoSteps,
}

/// A row left out of a load or conversion, with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedRow {
    /// 0-based index of the row among the input rows (file order).
    pub index: usize,
    /// 1-based line of the file, when read from one.
    pub line: Option<u64>,
    /// The row's id.
    pub id: String,
    /// Why it was left out.
    pub cause: SkipCause,
}

impl fmt::Display for SkippedRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "row {} (`{}`", self.index, super::shown(&self.id))?;
        if let Some(l) = self.line {
            write!(f, ", line {l}")?;
        }
        write!(f, "): {}", self.cause)
    }
}

impl fmt::Display for SkipCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipCause::NoMeasuredRate {
                gpu,
                job_type,
                scale_factor,
            } => write!(
                f,
                "no measured {gpu} rate for ('{job_type}', {scale_factor})"
            ),
            SkipCause::NoSteps => write!(f, "neither a duration nor a step count"),
        }
    }
}

/// Rows with durations, and the rows left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Converted {
    /// The rows that have a duration, in input order.
    pub jobs: Vec<TraceJob>,
    /// The rows left out, in input order.
    pub skipped: Vec<SkippedRow>,
}

/// The Gavel job type of a row: `<model> (batch size <b>)`, or the model
/// alone when the row has no batch size (`A3C`, `CycleGAN`).
///
/// ```
/// use dmlsched::trace::{TraceJob, gavel_job_type};
///
/// let mut row = TraceJob::new("gavel-0", 0.0, 1);
/// assert_eq!(gavel_job_type(&row), None); // no model
/// row.model = Some("A3C".into());
/// assert_eq!(gavel_job_type(&row).as_deref(), Some("A3C"));
/// row.model = Some("ResNet-50".into());
/// row.batch_size = Some(64);
/// assert_eq!(gavel_job_type(&row).as_deref(), Some("ResNet-50 (batch size 64)"));
/// ```
pub fn gavel_job_type(row: &TraceJob) -> Option<String> {
    let model = row.model.as_deref()?;
    Some(match row.batch_size {
        Some(b) => format!("{model} (batch size {b})"),
        None => model.to_string(),
    })
}

/// Gives every row without a duration the duration of its steps:
/// `duration_s = iterations / rate`, with the rate of its job type
/// ([`gavel_job_type`]) on `num_gpus` GPUs of kind `conv.gpu` when
/// `num_gpus ≤ conv.gpus_per_machine` (the job fits one machine), and of
/// `<gpu>_unconsolidated` otherwise. Rows that already have a duration
/// (Shockwave's 12-field traces) keep it. A row without a measured rate
/// (Gavel's table has none for e.g. `('A3C', 2)`) or without steps is left
/// out and listed in [`Converted::skipped`]; the others keep their order.
///
/// ```
/// use dmlsched::trace::{GavelConversion, GavelThroughputs, SkipCause, TraceJob, gavel_steps_to_durations};
/// let mut t = GavelThroughputs::new();
/// t.insert("v100", "LM (batch size 20)", 1, 10.0)?;
/// t.insert("v100_unconsolidated", "LM (batch size 20)", 16, 40.0)?;
/// let mut rows = Vec::new();
/// for (gpus, model) in [(1, "LM"), (16, "LM"), (2, "A3C")] {
///     let mut r = TraceJob::new(format!("j{gpus}"), 0.0, gpus);
///     r.model = Some(model.into());
///     r.batch_size = (model == "LM").then_some(20);
///     r.iterations = Some(1000);
///     rows.push(r);
/// }
/// let out = gavel_steps_to_durations(&rows, &t, &GavelConversion::default())?;
/// assert_eq!(out.jobs[0].duration_s, Some(100.0));
/// assert_eq!(out.jobs[1].duration_s, Some(25.0)); // 16 GPUs > 8 per machine
/// assert_eq!(out.skipped[0].index, 2);
/// assert!(matches!(out.skipped[0].cause, SkipCause::NoMeasuredRate { .. }));
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] when `conv.gpus_per_machine` is 0 or the
/// table has no rate at all for `conv.gpu` (naming the kinds it has).
pub fn gavel_steps_to_durations(
    rows: &[TraceJob],
    rates: &GavelThroughputs,
    conv: &GavelConversion,
) -> Result<Converted, TraceError> {
    convert(rows, None, rates, conv)
}

/// [`gavel_steps_to_durations`], with the rows' file lines when known.
pub(crate) fn convert(
    rows: &[TraceJob],
    lines: Option<&[u64]>,
    rates: &GavelThroughputs,
    conv: &GavelConversion,
) -> Result<Converted, TraceError> {
    if conv.gpus_per_machine == 0 {
        return Err(TraceError::invalid("gpus_per_machine", "must be ≥ 1"));
    }
    let unconsolidated = format!("{}_unconsolidated", conv.gpu);
    if rates.entries(&conv.gpu) == 0 {
        return Err(TraceError::invalid(
            "Gavel GPU kind",
            format!(
                "the throughput table has no `{}` rates (it has: {})",
                conv.gpu,
                rates.gpu_kinds().join(", ")
            ),
        ));
    }
    let mut out = Converted::default();
    for (index, row) in rows.iter().enumerate() {
        let skip = |cause| SkippedRow {
            index,
            line: lines.and_then(|l| l.get(index)).copied(),
            id: row.id.clone(),
            cause,
        };
        if row.duration_s.is_some() {
            out.jobs.push(row.clone());
            continue;
        }
        let (Some(steps), Some(job_type)) = (row.iterations, gavel_job_type(row)) else {
            out.skipped.push(skip(SkipCause::NoSteps));
            continue;
        };
        let gpu = if row.num_gpus <= conv.gpus_per_machine {
            conv.gpu.as_str()
        } else {
            unconsolidated.as_str()
        };
        match rates.rate(gpu, &job_type, row.num_gpus) {
            Some(rate) => {
                let mut job = row.clone();
                job.duration_s = Some(steps as f64 / rate);
                out.jobs.push(job);
            }
            None => out.skipped.push(skip(SkipCause::NoMeasuredRate {
                gpu: gpu.to_string(),
                job_type,
                scale_factor: row.num_gpus,
            })),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "serde")]
    #[test]
    fn keys() {
        assert_eq!(
            parse_key("('ResNet-50 (batch size 64)', 2)"),
            Some(("ResNet-50 (batch size 64)".into(), 2))
        );
        assert_eq!(parse_key("(\"A3C\", 1)"), Some(("A3C".into(), 1)));
        for bad in ["A3C", "('A3C', 0)", "('A3C', x)", "('A3C, 1)", "('A3C' 1)"] {
            assert_eq!(parse_key(bad), None, "{bad}");
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn reads_and_rejects() {
        let text = r#"{"v100": {"('A3C', 1)": {"null": 2.5, "('A3C', 1)": [1.0, 1.0]}},
                       "v100_unconsolidated": {}}"#;
        let t = GavelThroughputs::read(text.as_bytes()).unwrap();
        assert_eq!(t.rate("v100", "A3C", 1), Some(2.5));
        assert_eq!(t.gpu_kinds(), ["v100"]);
        let err = |s: &str| GavelThroughputs::read(s.as_bytes()).unwrap_err();
        assert!(matches!(err(""), TraceError::Empty { .. }));
        assert!(matches!(err("{}"), TraceError::Empty { .. }));
        for bad in [
            "{",
            "[1]",
            r#"{"v100": 3}"#,
            r#"{"v100": {"A3C": {"null": 1}}}"#,
            r#"{"v100": {"('A3C', 1)": {"null": "x"}}}"#,
            r#"{"v100": {"('A3C', 1)": {"null": -1}}}"#,
            r#"{"v100": {"('A3C', 1)": {"null": NaN}}}"#,
            r#"{"v100": {"('A3C', 1)": {}}}"#,
        ] {
            assert!(
                matches!(err(bad), TraceError::Throughputs { .. }),
                "{bad}: {:?}",
                err(bad)
            );
        }
        let e = err(r#"{"v100": {"('A3C', 1)": {"null": -0.5}}}"#);
        assert!(e.to_string().contains("v100: ('A3C', 1)"), "{e}");
        // 0: not measured.
        let zero = r#"{"k80": {"('A3C', 1)": {"null": 0}, "('A3C', 2)": {"null": 1.5}}}"#;
        let t = GavelThroughputs::read(zero.as_bytes()).unwrap();
        assert_eq!(t.rate("k80", "A3C", 1), None);
        assert_eq!(t.entries("k80"), 1);
        assert!(matches!(
            err(r#"{"k80": {"('A3C', 1)": {"null": 0}}}"#),
            TraceError::Empty { .. }
        ));
    }

    #[test]
    fn conversion_errors_and_existing_durations() {
        let mut t = GavelThroughputs::new();
        t.insert("k80", "A3C", 1, 2.0).unwrap();
        let mut row = TraceJob::new("a", 0.0, 1);
        row.model = Some("A3C".into());
        row.iterations = Some(10);
        let conv = GavelConversion::default();
        let e = gavel_steps_to_durations(std::slice::from_ref(&row), &t, &conv).unwrap_err();
        assert!(e.to_string().contains("k80"), "{e}");
        let k80 = GavelConversion {
            gpu: "k80".into(),
            ..conv.clone()
        };
        let zero = GavelConversion {
            gpus_per_machine: 0,
            ..k80.clone()
        };
        assert!(gavel_steps_to_durations(&[], &t, &zero).is_err());
        let mut shockwave = row.clone();
        shockwave.duration_s = Some(7.0);
        let bare = TraceJob::new("b", 0.0, 1);
        let out = gavel_steps_to_durations(&[row, shockwave, bare], &t, &k80).unwrap();
        let durations: Vec<_> = out.jobs.iter().map(|j| j.duration_s).collect();
        assert_eq!(durations, [Some(5.0), Some(7.0)]);
        assert_eq!(out.skipped.len(), 1);
        assert_eq!(out.skipped[0].cause, SkipCause::NoSteps);
        assert_eq!(
            out.skipped[0].to_string(),
            "row 2 (`b`): neither a duration nor a step count"
        );
    }
}
