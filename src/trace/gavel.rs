//! Gavel TSV traces (Narayanan et al., OSDI 2020; `stanford-futuredata/gavel`):
//! 7, 10 or 12 tab-separated fields, no header.

use std::io::Read;
use std::path::Path;

use super::fields::{Row, format_error, records};
use super::gavel_rates::{GavelConversion, GavelThroughputs, convert};
use super::{LoadReport, TraceError, TraceJob, TraceWarning, with_file};

const MSR: &[&str] = &[
    "job_type",
    "command",
    "num_steps_arg",
    "needs_data_dir",
    "total_steps",
    "arrival_time",
    "scale_factor",
];
const PHYSICAL: &[&str] = &[
    "job_type",
    "command",
    "working_directory",
    "num_steps_arg",
    "needs_data_dir",
    "total_steps",
    "scale_factor",
    "priority_weight",
    "SLO",
    "arrival_time",
];
const SHOCKWAVE: &[&str] = &[
    "job_type",
    "command",
    "working_dir",
    "num_steps_arg",
    "needs_data_dir",
    "total_steps",
    "scale_factor",
    "mode",
    "priority_weight",
    "SLO",
    "duration",
    "arrival_time",
];

/// The three Gavel layouts, told apart by their field count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// 7 fields: Gavel's Philly-derived `traces/msr` traces.
    Msr,
    /// 10 fields: current Gavel `parse_trace` (physical-cluster traces).
    Physical,
    /// 12 fields: Shockwave's derivative.
    Shockwave,
}

impl Layout {
    /// The layout with `n` fields.
    pub(crate) fn from_field_count(n: usize) -> Option<Layout> {
        match n {
            7 => Some(Layout::Msr),
            10 => Some(Layout::Physical),
            12 => Some(Layout::Shockwave),
            _ => None,
        }
    }

    fn columns(self) -> &'static [&'static str] {
        match self {
            Layout::Msr => MSR,
            Layout::Physical => PHYSICAL,
            Layout::Shockwave => SHOCKWAVE,
        }
    }
}

/// Splits Gavel's `job_type` into model and batch size:
/// `ResNet-50 (batch size 64)` → (`ResNet-50`, 64); `A3C` → (`A3C`, none).
///
/// # Errors
///
/// A reason when the text has ` (batch size ` but no valid size before `)`.
pub(crate) fn parse_job_type(job_type: &str) -> Result<(String, Option<u32>), String> {
    match job_type.split_once(" (batch size ") {
        None => Ok((job_type.to_string(), None)),
        Some((model, rest)) => {
            let size = rest
                .strip_suffix(')')
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|&b| b >= 1)
                .ok_or_else(|| {
                    format!(
                        "expected `<model> (batch size <n>)` with n ≥ 1, found `{}`",
                        super::shown(job_type)
                    )
                })?;
            Ok((model.trim().to_string(), Some(size)))
        }
    }
}

/// Loads a Gavel TSV trace, detecting the layout (7, 10 or 12 fields) from
/// the first line; every line must then have that many fields.
///
/// Mapping: `id = "gavel-<row>"` (0-based row, as Gavel numbers its jobs),
/// model and batch size parsed from `job_type`, `iterations = total_steps`
/// (iterations, **not** seconds), `num_gpus = scale_factor`, `arrival_s =
/// arrival_time` (seconds from the trace start). The 12-field Shockwave
/// layout adds `mode` and `duration_s = duration`. `model_is_synthetic` is
/// true for the 7-field Philly-derived traces, whose job types Gavel's
/// authors assigned at random; the 10- and 12-field traces name the job
/// that will run, so it is false there. `priority_weight` and `SLO` are
/// validated (finite; weight ≥ 0) but not kept: their meaning is
/// scheduler-specific, and `SLO = -1` means none.
///
/// # Errors
///
/// [`TraceError::Io`], [`TraceError::Empty`], or [`TraceError::Format`] for a
/// line with another field count than 7, 10 or 12 (or than the first line),
/// a malformed `job_type`, `needs_data_dir` other than 0/1, `total_steps` not
/// a whole number, `scale_factor` below 1, or a non-finite or negative time.
///
/// ```
/// use dmlsched::trace::load_gavel_trace;
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-gavel-{}.tsv", std::process::id()));
/// let tsv = "ResNet-50 (batch size 64)\tpython3 main.py\t--num_steps\t1\t5000\t0\t4\n";
/// std::fs::write(&path, tsv)?;
/// let report = load_gavel_trace(&path);
/// std::fs::remove_file(&path)?;
/// let job = &report?.jobs[0];
/// assert_eq!((job.id.as_str(), job.num_gpus, job.iterations), ("gavel-0", 4, Some(5000)));
/// assert_eq!((job.model.as_deref(), job.batch_size), (Some("ResNet-50"), Some(64)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_gavel_trace(path: impl AsRef<Path>) -> Result<LoadReport, TraceError> {
    with_file(path.as_ref(), read_gavel_trace)
}

/// [`load_gavel_trace`] from any reader.
///
/// # Errors
///
/// As [`load_gavel_trace`], without a path.
///
/// ```
/// use dmlsched::trace::{TraceError, read_gavel_trace};
///
/// // Job type, command, steps argument, needs data dir, steps, arrival, GPUs.
/// let tsv = "ResNet-50 (batch size 64)\tpython3 main.py\t--num_steps\t1\t5000\t0\t4\n\
///            A3C\tpython3 main.py\t--max-steps\t0\t2000\t12.5\t1\n";
/// let report = read_gavel_trace(tsv.as_bytes())?;
/// let (resnet, a3c) = (&report.jobs[0], &report.jobs[1]);
/// assert_eq!((resnet.model.as_deref(), resnet.batch_size), (Some("ResNet-50"), Some(64)));
/// assert!(resnet.model_is_synthetic); // 7-field traces drew job types at random
/// assert_eq!((a3c.id.as_str(), a3c.arrival_s, a3c.batch_size), ("gavel-1", 12.5, None));
/// assert_eq!((a3c.iterations, a3c.duration_s), (Some(2000), None)); // steps, not seconds
/// // Every line has the first line's field count.
/// let mixed = format!("{tsv}A3C\tpython3 main.py\t--max-steps\t0\t2000\t12.5\t1\t0\n");
/// assert!(matches!(read_gavel_trace(mixed.as_bytes()), Err(TraceError::Format { line: 3, .. })));
/// # Ok::<(), TraceError>(())
/// ```
pub fn read_gavel_trace(reader: impl Read) -> Result<LoadReport, TraceError> {
    read_rows(reader).map(|(report, _)| report)
}

/// Loads a Gavel trace and gives its rows durations from Gavel's measured
/// throughputs ([`gavel_steps_to_durations`](super::gavel_steps_to_durations)):
/// `total_steps / rate`, with the `<gpu>` rate for a job that fits one
/// machine and `<gpu>_unconsolidated` otherwise. Rows without a measured
/// rate are left out: each is listed in [`LoadReport::skipped`] (with its
/// line, id, job type and GPU count) and named in a warning.
///
/// # Errors
///
/// As [`load_gavel_trace`], and [`TraceError::InvalidArgument`] when the
/// table has no rate for `conv.gpu` or `conv.gpus_per_machine` is 0.
///
/// ```
/// use dmlsched::trace::{GavelConversion, GavelThroughputs, load_gavel_trace_with_rates};
///
/// let mut rates = GavelThroughputs::new();
/// rates.insert("v100", "A3C", 1, 5.0)?; // steps per second on one V100
/// let name = format!("dmlsched-doc-gavel-rates-{}.tsv", std::process::id());
/// let path = std::env::temp_dir().join(name);
/// std::fs::write(&path, "A3C\tpython3 main.py\t--max-steps\t0\t500\t0\t1\n")?;
/// let report = load_gavel_trace_with_rates(&path, &rates, &GavelConversion::default());
/// std::fs::remove_file(&path)?;
/// assert_eq!(report?.jobs[0].duration_s, Some(100.0)); // 500 steps at 5 steps/s
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_gavel_trace_with_rates(
    path: impl AsRef<Path>,
    rates: &GavelThroughputs,
    conv: &GavelConversion,
) -> Result<LoadReport, TraceError> {
    with_file(path.as_ref(), |f| {
        read_gavel_trace_with_rates(f, rates, conv)
    })
}

/// [`load_gavel_trace_with_rates`] from any reader.
///
/// # Errors
///
/// As [`load_gavel_trace_with_rates`], without a path.
///
/// ```
/// use dmlsched::trace::{GavelConversion, GavelThroughputs, read_gavel_trace_with_rates};
///
/// let mut rates = GavelThroughputs::new();
/// rates.insert("v100", "A3C", 1, 5.0)?; // steps per second on one V100
/// let tsv = "A3C\tpython3 main.py\t--max-steps\t0\t500\t0\t1\n\
///            A3C\tpython3 main.py\t--max-steps\t0\t500\t10\t2\n";
/// let report = read_gavel_trace_with_rates(tsv.as_bytes(), &rates, &GavelConversion::default())?;
/// assert_eq!(report.jobs.len(), 1);
/// assert_eq!(report.jobs[0].duration_s, Some(100.0)); // 500 steps at 5 steps/s
/// // No measured rate for A3C on two V100s: the row is left out, with a warning.
/// assert_eq!((report.skipped[0].index, report.skipped[0].line), (1, Some(2)));
/// assert_eq!(report.warnings[0].line, 2);
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn read_gavel_trace_with_rates(
    reader: impl Read,
    rates: &GavelThroughputs,
    conv: &GavelConversion,
) -> Result<LoadReport, TraceError> {
    let (report, lines) = read_rows(reader)?;
    let converted = convert(&report.jobs, Some(&lines), rates, conv)?;
    let mut warnings = report.warnings;
    for s in &converted.skipped {
        warnings.push(TraceWarning {
            line: s.line.unwrap_or(0),
            column: Some("job_type".into()),
            message: format!("skipped: {s}"),
        });
    }
    warnings.sort_by_key(|w| w.line);
    Ok(LoadReport {
        jobs: converted.jobs,
        warnings,
        skipped: converted.skipped,
    })
}

/// The rows of a Gavel trace and the 1-based line of each.
fn read_rows(reader: impl Read) -> Result<(LoadReport, Vec<u64>), TraceError> {
    let mut report = LoadReport::default();
    let mut lines = Vec::new();
    let mut layout = None;
    let mut rows = records(reader, b'\t')?;
    let mut row_index = 0;
    while let Some(record) = rows.next() {
        let (line, record) = record?;
        let n = record.len();
        let this = Layout::from_field_count(n).ok_or_else(|| {
            format_error(
                line,
                None,
                format!("expected 7, 10 or 12 tab-separated fields, found {n}"),
            )
        })?;
        let layout = *layout.get_or_insert_with(|| {
            rows.set_columns(this.columns());
            this
        });
        if this != layout {
            return Err(format_error(
                line,
                None,
                format!(
                    "found {n} fields, but the first line has {}",
                    layout.columns().len()
                ),
            ));
        }
        report.jobs.push(job(
            &Row::new(line, &record, layout.columns())?,
            layout,
            row_index,
        )?);
        lines.push(line);
        row_index += 1;
    }
    if report.jobs.is_empty() {
        return Err(TraceError::Empty { path: None });
    }
    Ok((report, lines))
}

fn job(row: &Row<'_>, layout: Layout, row_index: usize) -> Result<TraceJob, TraceError> {
    let job_type = row.required("job_type")?.trim_start_matches('\u{feff}');
    let (model, batch) = parse_job_type(job_type).map_err(|r| row.error("job_type", r))?;
    let data_dir = row.count("needs_data_dir", 0)?;
    if data_dir > 1 {
        return Err(row.error(
            "needs_data_dir",
            format!("must be 0 or 1, found {data_dir}"),
        ));
    }
    row.required("num_steps_arg")?;
    let steps = row.count("total_steps", 0)?;
    let gpus = row.count_u32("scale_factor", 1)?;
    let arrival = row.non_negative("arrival_time")?;
    if layout != Layout::Msr {
        row.non_negative("priority_weight")?;
        row.number("SLO")?;
    }
    let mut job = TraceJob::new(format!("gavel-{row_index}"), arrival, gpus);
    job.raw_arrival = row.text("arrival_time")?.to_string();
    job.iterations = Some(steps);
    job.model = Some(model);
    job.batch_size = batch;
    job.model_is_synthetic = layout == Layout::Msr;
    if layout == Layout::Shockwave {
        job.mode = Some(row.required("mode")?.to_string());
        job.duration_s = Some(row.non_negative("duration")?);
    }
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_types() {
        assert_eq!(
            parse_job_type("ResNet-50 (batch size 64)"),
            Ok(("ResNet-50".to_string(), Some(64)))
        );
        assert_eq!(
            parse_job_type("CycleGAN"),
            Ok(("CycleGAN".to_string(), None))
        );
        assert!(parse_job_type("LM (batch size x)").is_err());
        assert!(parse_job_type("LM (batch size 0)").is_err());
        assert!(parse_job_type("LM (batch size 5").is_err());
    }

    #[test]
    fn ten_field_layout() {
        let line = "ResNet-18 (batch size 32)\tpython3 main.py\timage_classification/cifar10\t--num_steps\t1\t1000\t2\t1.5\t-1\t12.5\n";
        let r = read_gavel_trace(line.as_bytes()).unwrap();
        let j = &r.jobs[0];
        assert_eq!(
            (j.num_gpus, j.iterations, j.arrival_s),
            (2, Some(1000), 12.5)
        );
        assert!(!j.model_is_synthetic);
        assert_eq!(j.duration_s, None);
    }

    #[test]
    fn mixed_layouts_are_an_error() {
        let text = "A3C\tc\t-s\t0\t5\t0\t1\nA3C\tc\twd\t-s\t0\t5\t1\t1\t-1\t0\n";
        let e = read_gavel_trace(text.as_bytes()).unwrap_err();
        assert!(matches!(e, TraceError::Format { line: 2, .. }), "{e}");
    }

    #[test]
    fn rates_give_durations_and_skips_are_listed() {
        let text = "A3C\tc\t-s\t0\t50\t0\t1\n\nA3C\tc\t-s\t0\t50\t3\t2\nLM (batch size 5)\tc\t-s\t0\t9\t4\t16\n";
        let mut rates = GavelThroughputs::new();
        rates.insert("v100", "A3C", 1, 5.0).unwrap();
        rates
            .insert("v100_unconsolidated", "LM (batch size 5)", 16, 3.0)
            .unwrap();
        let r = read_gavel_trace_with_rates(text.as_bytes(), &rates, &GavelConversion::default())
            .unwrap();
        let got: Vec<_> = r
            .jobs
            .iter()
            .map(|j| (j.id.as_str(), j.duration_s))
            .collect();
        assert_eq!(got, [("gavel-0", Some(10.0)), ("gavel-2", Some(3.0))]);
        assert_eq!(r.skipped.len(), 1);
        assert_eq!((r.skipped[0].index, r.skipped[0].line), (1, Some(3)));
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].line, 3);
        assert!(
            r.warnings[0]
                .message
                .contains("no measured v100 rate for ('A3C', 2)"),
            "{}",
            r.warnings[0]
        );
    }

    #[test]
    fn bad_needs_data_dir() {
        let text = "A3C\tc\t-s\t2\t5\t0\t1\n";
        let e = read_gavel_trace(text.as_bytes()).unwrap_err();
        assert!(
            matches!(e, TraceError::Format { line: 1, column: Some(ref c), .. } if c == "needs_data_dir")
        );
    }
}
