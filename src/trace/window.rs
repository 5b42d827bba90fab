//! Sorting, windows, re-basing, load scaling and summaries of traces.

use std::collections::BTreeMap;

use super::date::parse_date;
use super::{TraceError, TraceJob};
use crate::model::units::Num;

/// Where a window starts.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WindowStart {
    /// Raw arrival seconds (the file's own clock).
    Seconds(f64),
    /// A date `YYYY-MM-DD` at 00:00:00, as Unix seconds: meaningful for
    /// Philly, whose raw arrivals are Unix seconds of naive timestamps.
    Date(String),
}

impl WindowStart {
    /// The start in raw seconds.
    ///
    /// # Errors
    ///
    /// [`TraceError::InvalidArgument`] for a non-finite number or an invalid
    /// date.
    pub fn seconds(&self) -> Result<f64, TraceError> {
        match self {
            WindowStart::Seconds(s) if s.is_finite() => Ok(*s),
            WindowStart::Seconds(s) => Err(TraceError::invalid(
                "window start",
                format!("{} is not a finite number of seconds", Num(*s)),
            )),
            WindowStart::Date(d) => parse_date(d).map(|s| s as f64).ok_or_else(|| {
                TraceError::invalid(
                    "window start",
                    format!("`{}` is not a date YYYY-MM-DD", super::shown(d)),
                )
            }),
        }
    }
}

/// Which time becomes 0 after [`select`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Origin {
    /// The first selected job's arrival (the default origin).
    #[default]
    FirstArrival,
    /// The window's start (raw 0 when the window has no start).
    WindowStart,
}

/// A window of a trace: the first `jobs` jobs (by arrival) arriving at or
/// after `start`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Window {
    /// Earliest raw arrival to keep; `None` keeps from the first job.
    pub start: Option<WindowStart>,
    /// Most jobs to keep; `None` keeps all.
    pub jobs: Option<usize>,
    /// Drop jobs without a duration (Alibaba Pending pods) before counting.
    pub drop_pending: bool,
    /// The time that becomes 0.
    pub origin: Origin,
}

impl Default for Window {
    /// Everything, pending jobs dropped, re-based to the first arrival.
    fn default() -> Self {
        Window {
            start: None,
            jobs: None,
            drop_pending: true,
            origin: Origin::FirstArrival,
        }
    }
}

impl std::fmt::Display for Window {
    /// `from 2017-11-01, at most 500 jobs, pending dropped`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.start {
            None => write!(f, "from the first arrival")?,
            Some(WindowStart::Date(d)) => write!(f, "from {d}")?,
            Some(WindowStart::Seconds(s)) => write!(f, "from {} s", Num(*s))?,
        }
        if let Some(n) = self.jobs {
            write!(f, ", at most {n} jobs")?;
        }
        if self.drop_pending {
            write!(f, ", jobs without a duration dropped")?;
        }
        Ok(())
    }
}

/// Sorts jobs by arrival, stably: ties keep their current (file) order.
/// Non-finite arrivals, which loaders never produce, sort last.
///
/// ```
/// use dmlsched::trace::{TraceJob, sort_by_arrival};
///
/// let mut jobs = [
///     TraceJob::new("a", 5.0, 1),
///     TraceJob::new("b", 1.0, 1),
///     TraceJob::new("c", 5.0, 2),
/// ];
/// sort_by_arrival(&mut jobs);
/// let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
/// assert_eq!(ids, ["b", "a", "c"]); // "a" and "c" tie and keep their order
/// ```
pub fn sort_by_arrival(jobs: &mut [TraceJob]) {
    jobs.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
}

/// Subtracts `origin_s` from every arrival and deadline.
///
/// ```
/// use dmlsched::trace::{TraceJob, rebase};
///
/// let mut jobs = [TraceJob::new("a", 1000.0, 1), TraceJob::new("b", 1500.0, 2)];
/// jobs[1].deadline_s = Some(2100.0);
/// rebase(&mut jobs, 1000.0);
/// assert_eq!((jobs[0].arrival_s, jobs[1].arrival_s), (0.0, 500.0));
/// assert_eq!(jobs[1].deadline_s, Some(1100.0)); // deadlines move with the arrivals
/// assert_eq!(jobs[1].raw_arrival, "1500"); // the original text stays
/// ```
pub fn rebase(jobs: &mut [TraceJob], origin_s: f64) {
    for j in jobs {
        j.arrival_s -= origin_s;
        if let Some(d) = &mut j.deadline_s {
            *d -= origin_s;
        }
    }
}

/// Cuts a window out of a trace (the input is not modified).
///
/// In order: sort by arrival (stable, ties by file order), drop jobs without
/// a duration if `drop_pending`, keep arrivals `≥ start`, keep the first
/// `jobs`, and re-base arrivals and deadlines so that the [`Origin`] is 0
/// (by default the first selected job arrives at 0). `raw_arrival` keeps the
/// original text.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] for an invalid start, and
/// [`TraceError::EmptyWindow`] when the window selects no job (an empty
/// trace, a start after the last arrival, `jobs = Some(0)`, or only jobs
/// without a duration): the error names the window and the trace's span of
/// arrivals as written in the file (dates for Philly).
///
/// ```
/// use dmlsched::trace::{Origin, TraceError, TraceJob, Window, WindowStart, select};
///
/// let job = |id: &str, arrival_s, duration_s| {
///     let mut j = TraceJob::new(id, arrival_s, 1);
///     j.duration_s = duration_s;
///     j
/// };
/// let trace = [job("a", 300.0, Some(60.0)), job("b", 160.0, None), job("c", 200.0, Some(60.0)),
///              job("d", 400.0, Some(60.0)), job("e", 100.0, Some(60.0))];
/// // From raw second 150, at most two jobs; "b" never ran and is dropped.
/// let start = Some(WindowStart::Seconds(150.0));
/// let window = Window { start, jobs: Some(2), ..Window::default() };
/// let picked = select(&trace, &window)?;
/// let got: Vec<_> = picked.iter().map(|j| (j.id.as_str(), j.arrival_s)).collect();
/// assert_eq!(got, [("c", 0.0), ("a", 100.0)]); // sorted, the first at 0
/// let from_start = Window { origin: Origin::WindowStart, ..window };
/// assert_eq!(select(&trace, &from_start)?[0].arrival_s, 50.0);
/// // A window that selects nothing is an error.
/// let late = Window { start: Some(WindowStart::Seconds(1e6)), ..Window::default() };
/// assert!(matches!(select(&trace, &late), Err(TraceError::EmptyWindow { jobs: 5, .. })));
/// # Ok::<(), TraceError>(())
/// ```
pub fn select(jobs: &[TraceJob], window: &Window) -> Result<Vec<TraceJob>, TraceError> {
    let start = window
        .start
        .as_ref()
        .map(WindowStart::seconds)
        .transpose()?;
    let mut sorted: Vec<&TraceJob> = jobs.iter().collect();
    sorted.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let mut out: Vec<TraceJob> = sorted
        .into_iter()
        .filter(|j| !window.drop_pending || j.duration_s.is_some())
        .filter(|j| start.is_none_or(|s| j.arrival_s >= s))
        .take(window.jobs.unwrap_or(usize::MAX))
        .cloned()
        .collect();
    if out.is_empty() {
        return Err(empty_window(jobs, window));
    }
    let origin = match window.origin {
        Origin::FirstArrival => out.first().map_or(0.0, |j| j.arrival_s),
        Origin::WindowStart => start.unwrap_or(0.0),
    };
    rebase(&mut out, origin);
    Ok(out)
}

/// The error of a window that selects none of `jobs`.
fn empty_window(jobs: &[TraceJob], window: &Window) -> TraceError {
    let shown = |j: &TraceJob| {
        if j.raw_arrival.trim().parse::<f64>().is_ok() {
            format!("{} s", j.raw_arrival.trim())
        } else {
            j.raw_arrival.clone()
        }
    };
    let first = jobs
        .iter()
        .min_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    let last = jobs
        .iter()
        .max_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    TraceError::EmptyWindow {
        window: window.to_string(),
        jobs: jobs.len(),
        without_duration: jobs.iter().filter(|j| j.duration_s.is_none()).count(),
        span: first.zip(last).map(|(a, b)| (shown(a), shown(b))),
    }
}

/// Multiplies every inter-arrival time by `factor`, keeping the earliest
/// arrival fixed: `a ↦ a₀ + factor·(a − a₀)`. A factor of 0.5 doubles the
/// offered load, 2 halves it. Deadlines move with their job's arrival, so
/// each job keeps its slack. Works in any order.
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] unless `factor` is finite and > 0.
///
/// ```
/// use dmlsched::trace::{TraceJob, scale_arrivals};
///
/// let mut jobs = [TraceJob::new("a", 100.0, 1), TraceJob::new("b", 300.0, 1)];
/// jobs[1].deadline_s = Some(500.0);
/// scale_arrivals(&mut jobs, 0.5)?; // twice the load
/// assert_eq!((jobs[0].arrival_s, jobs[1].arrival_s), (100.0, 200.0));
/// assert_eq!(jobs[1].deadline_s, Some(400.0)); // the same 200 s of slack
/// assert!(scale_arrivals(&mut jobs, 0.0).is_err());
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn scale_arrivals(jobs: &mut [TraceJob], factor: f64) -> Result<(), TraceError> {
    if !(factor.is_finite() && factor > 0.0) {
        return Err(TraceError::invalid(
            "arrival scale factor",
            format!("must be finite and > 0, got {}", Num(factor)),
        ));
    }
    let Some(first) = jobs.iter().map(|j| j.arrival_s).min_by(f64::total_cmp) else {
        return Ok(());
    };
    for j in jobs {
        let new = first + factor * (j.arrival_s - first);
        if let Some(d) = &mut j.deadline_s {
            *d += new - j.arrival_s;
        }
        j.arrival_s = new;
    }
    Ok(())
}

/// Aggregate facts about a set of jobs.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TraceSummary {
    /// Number of jobs.
    pub jobs: usize,
    /// Jobs by whole GPUs requested.
    pub gpu_histogram: BTreeMap<u32, usize>,
    /// Jobs with a duration.
    pub with_duration: usize,
    /// Jobs whose duration is a lower bound.
    pub censored: usize,
    /// Duration quantiles ([`quantile_of_sorted`]) over the jobs with a duration,
    /// seconds; `None` without any.
    pub duration_p10_s: Option<f64>,
    /// Median duration, seconds.
    pub duration_p50_s: Option<f64>,
    /// 90th percentile duration, seconds.
    pub duration_p90_s: Option<f64>,
    /// 99th percentile duration, seconds.
    pub duration_p99_s: Option<f64>,
    /// Longest duration, seconds.
    pub duration_max_s: Option<f64>,
    /// Total GPU time, GPU-hours ([`TraceJob::gpu_seconds`] / 3600).
    pub total_gpu_hours: f64,
    /// Earliest and latest arrival, seconds; `None` for no jobs.
    pub arrival_span_s: Option<(f64, f64)>,
}

/// The `q`-quantile of ascending values: the value at 0-based index
/// `⌊q·n⌋` (clamped to the last). This is the rule behind the crate's
/// quoted trace figures: it gives Philly's p10/p50/p90/p99 = 61 / 1,144 / 11,266 /
/// 254,884 s and ITP cluster02's p50 = 6,185 s exactly.
///
/// ```
/// use dmlsched::trace::quantile_of_sorted;
///
/// let durations = [10.0, 20.0, 30.0, 40.0];
/// assert_eq!(quantile_of_sorted(&durations, 0.5), Some(30.0)); // index ⌊0.5 · 4⌋ = 2
/// assert_eq!(quantile_of_sorted(&durations, 0.1), Some(10.0));
/// assert_eq!(quantile_of_sorted(&durations, 1.0), Some(40.0)); // clamped to the last
/// assert_eq!(quantile_of_sorted(&[], 0.5), None);
/// ```
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let index = (q.clamp(0.0, 1.0) * n as f64).floor() as usize;
    Some(sorted[index.min(n - 1)])
}

/// Summarises jobs: size histogram, duration quantiles, GPU-hours.
///
/// ```
/// use dmlsched::trace::{TraceJob, summary};
///
/// let job = |arrival_s, gpus, duration_s| {
///     let mut j = TraceJob::new("j", arrival_s, gpus);
///     j.duration_s = duration_s;
///     j
/// };
/// let s = summary(&[job(0.0, 1, Some(3600.0)), job(60.0, 4, Some(1800.0)), job(30.0, 4, None)]);
/// assert_eq!((s.jobs, s.with_duration, s.gpu_histogram[&4]), (3, 2, 2));
/// assert_eq!(s.total_gpu_hours, 3.0); // 1 GPU × 1 h + 4 GPUs × 0.5 h
/// assert_eq!((s.duration_p50_s, s.duration_max_s), (Some(3600.0), Some(3600.0)));
/// assert_eq!(s.arrival_span_s, Some((0.0, 60.0)));
/// ```
pub fn summary(jobs: &[TraceJob]) -> TraceSummary {
    let mut gpu_histogram = BTreeMap::new();
    for j in jobs {
        *gpu_histogram.entry(j.num_gpus).or_insert(0) += 1;
    }
    let mut durations: Vec<f64> = jobs.iter().filter_map(|j| j.duration_s).collect();
    durations.sort_by(f64::total_cmp);
    let q = |p| quantile_of_sorted(&durations, p);
    let arrivals = jobs.iter().map(|j| j.arrival_s);
    let arrival_span_s = arrivals
        .clone()
        .min_by(f64::total_cmp)
        .zip(arrivals.max_by(f64::total_cmp));
    TraceSummary {
        jobs: jobs.len(),
        gpu_histogram,
        with_duration: durations.len(),
        censored: jobs.iter().filter(|j| j.censored).count(),
        duration_p10_s: q(0.10),
        duration_p50_s: q(0.50),
        duration_p90_s: q(0.90),
        duration_p99_s: q(0.99),
        duration_max_s: durations.last().copied(),
        total_gpu_hours: jobs.iter().filter_map(TraceJob::gpu_seconds).sum::<f64>() / 3600.0,
        arrival_span_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, arrival: f64, gpus: u32, duration: Option<f64>) -> TraceJob {
        let mut j = TraceJob::new(id, arrival, gpus);
        j.duration_s = duration;
        j
    }

    #[test]
    fn sort_is_stable() {
        let mut jobs = vec![
            job("a", 5.0, 1, Some(1.0)),
            job("b", 1.0, 1, Some(1.0)),
            job("c", 5.0, 1, Some(1.0)),
            job("d", 0.0, 1, Some(1.0)),
        ];
        sort_by_arrival(&mut jobs);
        let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["d", "b", "a", "c"]);
    }

    #[test]
    fn window_selects_rebases_and_drops_pending() {
        let mut late = job("late", 300.0, 2, Some(5.0));
        late.deadline_s = Some(400.0);
        let jobs = vec![
            late,
            job("pending", 150.0, 1, None),
            job("early", 50.0, 1, Some(1.0)),
            job("mid", 200.0, 4, Some(2.0)),
        ];
        let w = Window {
            start: Some(WindowStart::Seconds(100.0)),
            jobs: Some(2),
            ..Window::default()
        };
        let out = select(&jobs, &w).unwrap();
        let got: Vec<(&str, f64)> = out.iter().map(|j| (j.id.as_str(), j.arrival_s)).collect();
        assert_eq!(got, [("mid", 0.0), ("late", 100.0)]);
        assert_eq!(out[1].deadline_s, Some(200.0));
        assert_eq!(out[1].raw_arrival, "300");

        let keep = Window {
            drop_pending: false,
            origin: Origin::WindowStart,
            ..w
        };
        let out = select(&jobs, &keep).unwrap();
        let got: Vec<(&str, f64)> = out.iter().map(|j| (j.id.as_str(), j.arrival_s)).collect();
        assert_eq!(got, [("pending", 50.0), ("mid", 100.0)]);

        let bad = Window {
            start: Some(WindowStart::Date("2017-02-30".into())),
            ..Window::default()
        };
        assert!(matches!(
            select(&jobs, &bad),
            Err(TraceError::InvalidArgument { .. })
        ));
        assert!(matches!(
            select(&[], &Window::default()),
            Err(TraceError::EmptyWindow {
                jobs: 0,
                span: None,
                ..
            })
        ));
        // A start after the last arrival names the window and the span.
        let late = Window {
            start: Some(WindowStart::Seconds(1000.0)),
            ..Window::default()
        };
        let e = select(&jobs, &late).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the window from 1000 s, jobs without a duration dropped selects none of the \
             trace's 4 jobs, which arrive from 50 s to 300 s (1 have no duration and are \
             dropped as pending; Gavel rows need a throughput table to get one)"
        );
        let none = Window {
            jobs: Some(0),
            ..Window::default()
        };
        assert!(matches!(
            select(&jobs, &none),
            Err(TraceError::EmptyWindow {
                jobs: 4,
                without_duration: 1,
                ..
            })
        ));
    }

    #[test]
    fn scaling_keeps_first_arrival_and_slack() {
        let mut a = job("a", 10.0, 1, Some(1.0));
        a.deadline_s = Some(20.0);
        let mut jobs = vec![job("b", 30.0, 1, Some(1.0)), a];
        scale_arrivals(&mut jobs, 0.5).unwrap();
        assert_eq!(jobs[0].arrival_s, 20.0);
        assert_eq!(jobs[1].arrival_s, 10.0);
        assert_eq!(jobs[1].deadline_s, Some(20.0));
        scale_arrivals(&mut jobs, 4.0).unwrap();
        assert_eq!(jobs[0].arrival_s, 50.0);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(scale_arrivals(&mut jobs, bad).is_err());
        }
        scale_arrivals(&mut [], 2.0).unwrap();
    }

    #[test]
    fn quantiles_and_summary() {
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile_of_sorted(&sorted, 0.5), Some(6.0));
        assert_eq!(quantile_of_sorted(&sorted, 0.45), Some(5.0));
        assert_eq!(quantile_of_sorted(&sorted, 0.99), Some(10.0));
        assert_eq!(quantile_of_sorted(&sorted, 1.0), Some(10.0));
        assert_eq!(quantile_of_sorted(&sorted, 0.0), Some(1.0));
        assert_eq!(quantile_of_sorted(&[], 0.5), None);

        let jobs = vec![
            job("a", 3.0, 1, Some(3600.0)),
            job("b", 1.0, 4, Some(1800.0)),
            job("c", 2.0, 1, None),
        ];
        let s = summary(&jobs);
        assert_eq!(s.jobs, 3);
        assert_eq!(s.gpu_histogram, BTreeMap::from([(1, 2), (4, 1)]));
        assert_eq!(s.with_duration, 2);
        assert_eq!(s.duration_p10_s, Some(1800.0));
        assert_eq!(s.duration_p50_s, Some(3600.0));
        assert_eq!(s.duration_max_s, Some(3600.0));
        assert!((s.total_gpu_hours - 3.0).abs() < 1e-12);
        assert_eq!(s.arrival_span_s, Some((1.0, 3.0)));
    }
}
