//! Pollux-style Philly CSV: the Microsoft Philly trace (Jeon et al., USENIX
//! ATC 2019) as reduced by the Pollux artifact (Qiao et al., OSDI 2021;
//! `petuum/adaptdl`).

use std::io::Read;
use std::path::Path;

use super::date::parse_datetime;
use super::fields::{Row, with_header};
use super::{LoadReport, TraceError, TraceJob, with_file};
use crate::model::units::Num;

/// The header of the Pollux-style Philly CSV.
pub(crate) const COLUMNS: &[&str] = &["timestamp", "duration", "num_gpus", "gpu_time", "cluster"];

/// Relative tolerance of the `gpu_time = duration × num_gpus` check.
const GPU_TIME_TOL: f64 = 1e-6;

/// Loads a Pollux-style Philly CSV (`timestamp,duration,num_gpus,gpu_time,cluster`).
///
/// Mapping: `id = "philly-<row>"` (0-based data row),
/// `arrival_s` = the naive `timestamp` as Unix seconds (re-base with
/// [`select`](super::select) or [`rebase`](super::rebase)), `raw_arrival` =
/// the timestamp text, `duration_s = duration` (the summed run time of all
/// attempts, queueing excluded), `tenant = cluster` (the virtual cluster),
/// no model. Rows come back **in file order**; the real file is not sorted.
/// A `gpu_time` that differs from `duration × num_gpus` (relative 10⁻⁶) is a
/// warning.
///
/// # Errors
///
/// [`TraceError::Io`] (naming the path), [`TraceError::Empty`], or
/// [`TraceError::Format`] for a wrong header, a missing or extra field, an
/// invalid timestamp, a non-finite or negative `duration`/`gpu_time`, or a
/// `num_gpus` that is not a whole number ≥ 1.
///
/// ```
/// use dmlsched::trace::load_philly_pollux_csv;
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-philly-{}.csv", std::process::id()));
/// std::fs::write(&path, "timestamp,duration,num_gpus,gpu_time,cluster\n\
///                        2017-10-07 01:11:39,600.0,2,1200.0,ee9e8c\n")?;
/// let report = load_philly_pollux_csv(&path);
/// std::fs::remove_file(&path)?;
/// let job = &report?.jobs[0];
/// assert_eq!((job.id.as_str(), job.num_gpus), ("philly-0", 2));
/// assert_eq!(job.tenant.as_deref(), Some("ee9e8c"));
/// assert_eq!(job.gpu_seconds(), Some(1200.0));
/// // A missing file is an error that names it.
/// let missing = load_philly_pollux_csv(&path).unwrap_err();
/// assert!(missing.to_string().contains("dmlsched-doc-philly"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_philly_pollux_csv(path: impl AsRef<Path>) -> Result<LoadReport, TraceError> {
    with_file(path.as_ref(), read_philly_pollux_csv)
}

/// [`load_philly_pollux_csv`] from any reader.
///
/// # Errors
///
/// As [`load_philly_pollux_csv`], without a path.
///
/// ```
/// use dmlsched::trace::{TraceError, read_philly_pollux_csv};
///
/// let csv = "timestamp,duration,num_gpus,gpu_time,cluster\n\
///            2017-10-07 00:00:10,60.0,4,240.0,vc1\n\
///            2017-10-07 00:00:00,10.0,2,25.0,vc2\n";
/// let report = read_philly_pollux_csv(csv.as_bytes())?;
/// // File order, arrivals in raw Unix seconds of the naive timestamp.
/// assert_eq!(report.jobs[0].arrival_s - report.jobs[1].arrival_s, 10.0);
/// assert_eq!(report.jobs[1].raw_arrival, "2017-10-07 00:00:00");
/// // gpu_time 25 is not 10 × 2: a warning on line 3, not an error.
/// let warning = &report.warnings[0];
/// assert_eq!((warning.line, warning.column.as_deref()), (3, Some("gpu_time")));
/// // A value out of range is an error naming its line and column.
/// let zero_gpus = csv.replace(",4,240.0,", ",0,240.0,");
/// let err = read_philly_pollux_csv(zero_gpus.as_bytes());
/// let Err(TraceError::Format { line, column, .. }) = err else { panic!("{err:?}") };
/// assert_eq!((line, column.as_deref()), (2, Some("num_gpus")));
/// # Ok::<(), TraceError>(())
/// ```
pub fn read_philly_pollux_csv(reader: impl Read) -> Result<LoadReport, TraceError> {
    let mut report = LoadReport::default();
    for (row_index, record) in with_header(reader, COLUMNS)?.enumerate() {
        let (line, record) = record?;
        let row = Row::new(line, &record, COLUMNS)?;
        let timestamp = row.required("timestamp")?;
        let arrival = parse_datetime(timestamp).ok_or_else(|| {
            row.error(
                "timestamp",
                format!(
                    "expected `YYYY-MM-DD HH:MM:SS`, found `{}`",
                    super::shown(timestamp)
                ),
            )
        })?;
        let duration = row.non_negative("duration")?;
        let gpus = row.count_u32("num_gpus", 1)?;
        let gpu_time = row.non_negative("gpu_time")?;
        let expected = duration * f64::from(gpus);
        if (gpu_time - expected).abs() > GPU_TIME_TOL * expected.max(1.0) {
            report.warnings.push(row.warning(
                "gpu_time",
                format!(
                    "{} differs from duration × num_gpus = {}",
                    Num(gpu_time),
                    Num(expected)
                ),
            ));
        }
        let cluster = row.text("cluster")?;
        let mut job = TraceJob::new(format!("philly-{row_index}"), arrival as f64, gpus);
        job.raw_arrival = timestamp.to_string();
        job.duration_s = Some(duration);
        job.tenant = (!cluster.is_empty()).then(|| cluster.to_string());
        report.jobs.push(job);
    }
    if report.jobs.is_empty() {
        return Err(TraceError::Empty { path: None });
    }
    Ok(report)
}

/// The Pollux authors' filters on the Philly trace, each optional;
/// [`Default`] filters nothing.
///
/// The Pollux artifact used `min_duration_s = 60` and `max_gpu_hours =
/// 1000`.
///
/// ```
/// use dmlsched::trace::{PhillyFilter, TraceJob};
/// let mut short = TraceJob::new("a", 0.0, 1);
/// short.duration_s = Some(30.0);
/// let f = PhillyFilter { min_duration_s: Some(60.0), ..PhillyFilter::default() };
/// assert!(!f.keeps(&short));
/// assert!(PhillyFilter::default().keeps(&short));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PhillyFilter {
    /// Keep jobs whose duration is at least this many seconds.
    pub min_duration_s: Option<f64>,
    /// Keep jobs whose GPU time is strictly below this many GPU-hours.
    pub max_gpu_hours: Option<f64>,
    /// Keep jobs with at most this many GPUs.
    pub max_gpus: Option<u32>,
}

impl PhillyFilter {
    /// The filters of the Pollux artifact: at least 60 s, under 1000
    /// GPU-hours, any size.
    pub fn pollux() -> PhillyFilter {
        PhillyFilter {
            min_duration_s: Some(60.0),
            max_gpu_hours: Some(1000.0),
            max_gpus: None,
        }
    }

    /// Whether `job` passes every filter. Duration filters keep jobs without
    /// a duration.
    pub fn keeps(&self, job: &TraceJob) -> bool {
        let duration_ok = match (self.min_duration_s, job.duration_s) {
            (Some(min), Some(d)) => d >= min,
            _ => true,
        };
        let gpu_hours_ok = match (self.max_gpu_hours, job.gpu_seconds()) {
            (Some(max), Some(s)) => s / 3600.0 < max,
            _ => true,
        };
        let size_ok = self.max_gpus.is_none_or(|m| job.num_gpus <= m);
        duration_ok && gpu_hours_ok && size_ok
    }

    /// The jobs that pass, in their order.
    pub fn apply(&self, jobs: &[TraceJob]) -> Vec<TraceJob> {
        jobs.iter().filter(|j| self.keeps(j)).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "timestamp,duration,num_gpus,gpu_time,cluster\n";

    #[test]
    fn spec_line() {
        let text = format!("{HEADER}2017-10-07 01:11:39,193256.0,8,1546048.0,ee9e8c\n");
        let r = read_philly_pollux_csv(text.as_bytes()).unwrap();
        assert!(r.warnings.is_empty());
        let j = &r.jobs[0];
        assert_eq!(j.id, "philly-0");
        assert_eq!(j.num_gpus, 8);
        assert_eq!(j.duration_s, Some(193_256.0));
        assert_eq!(j.gpu_seconds(), Some(1_546_048.0));
        assert_eq!(j.tenant.as_deref(), Some("ee9e8c"));
        assert_eq!(j.raw_arrival, "2017-10-07 01:11:39");
        let origin = crate::trace::date::parse_date("2017-10-07").unwrap() as f64;
        assert_eq!(j.arrival_s - origin, 4299.0);
    }

    #[test]
    fn gpu_time_mismatch_is_a_warning() {
        let text = format!("{HEADER}2017-10-07 01:11:39,10,2,25,vc\n");
        let r = read_philly_pollux_csv(text.as_bytes()).unwrap();
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].line, 2);
        assert_eq!(r.warnings[0].column.as_deref(), Some("gpu_time"));
    }

    #[test]
    fn filters() {
        let mut a = TraceJob::new("a", 0.0, 8);
        a.duration_s = Some(500.0 * 3600.0); // 4000 GPU-hours
        let mut b = TraceJob::new("b", 0.0, 1);
        b.duration_s = Some(59.0);
        let mut c = TraceJob::new("c", 0.0, 2);
        c.duration_s = Some(600.0);
        let jobs = vec![a, b, c];
        let kept = PhillyFilter::pollux().apply(&jobs);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].id, "c");
        let small = PhillyFilter {
            max_gpus: Some(4),
            ..PhillyFilter::default()
        };
        assert_eq!(small.apply(&jobs).len(), 2);
        assert_eq!(PhillyFilter::default().apply(&jobs).len(), 3);
    }
}
