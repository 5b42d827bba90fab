//! Run reports as SVG plots: JCT distributions, JCT against load, and GPU
//! utilization over time.
//!
//! Each function returns the SVG document as a `String` (the caller writes
//! it to a file). Plots are drawn with [`plotters`]' SVG backend only: text
//! is emitted as SVG `<text>` elements and laid out by the viewer, so no font
//! files, fontconfig or system libraries are needed, and the same input
//! gives a byte-identical SVG on every machine.
//!
//! Every plot is [`SIZE_PX`] pixels, has a title, labelled axes and a
//! legend, and draws series in the order given with colours from a fixed
//! palette ([`PALETTE`], cycled after ten series). Non-finite values are
//! left out; an input with nothing left to draw is
//! [`ReportError::NoData`], and a coordinate beyond [`MAX_ABS`] (after
//! conversion, e.g. to hours) is [`ReportError::Plot`].
//!
//! # Example
//!
//! ```
//! use dmlsched::report::plot::jct_vs_load_svg;
//!
//! let points = [
//!     ("fifo", 0.5, 120.0), ("fifo", 1.0, 300.0),
//!     ("drf", 0.5, 100.0), ("drf", 1.0, 210.0),
//! ];
//! let svg = jct_vs_load_svg(&points, "Average JCT")?;
//! assert!(svg.starts_with("<svg"));
//! // std::fs::write("jct_vs_load.svg", svg)?;
//! # Ok::<(), dmlsched::report::ReportError>(())
//! ```

use std::ops::Range;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{ReportError, utilization_steps};
use crate::sim::SimResult;

/// Width and height of every plot, pixels.
pub const SIZE_PX: (u32, u32) = (800, 500);

/// Series colours, in order (Tableau 10); series beyond the tenth reuse
/// them from the start.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (0x4E, 0x79, 0xA7),
    (0xF2, 0x8E, 0x2B),
    (0xE1, 0x57, 0x59),
    (0x76, 0xB7, 0xB2),
    (0x59, 0xA1, 0x4F),
    (0xED, 0xC9, 0x48),
    (0xB0, 0x7A, 0xA1),
    (0xFF, 0x9D, 0xA7),
    (0x9C, 0x75, 0x5F),
    (0xBA, 0xB0, 0xAC),
];

/// JCT ratios above which [`jct_cdf_svg`] switches to a log axis: the
/// largest JCT over the smallest exceeds 10² (more than two decades).
const LOG_SPAN: f64 = 100.0;

/// Smallest JCT for a log axis (seconds); below it the axis stays linear.
const LOG_MIN: f64 = 1e-9;

/// Largest magnitude of a plotted coordinate: beyond it axis ticks cannot be
/// computed reliably, and the value is surely not seconds or a load factor.
pub const MAX_ABS: f64 = 1e15;

fn color(k: usize) -> RGBColor {
    let (r, g, b) = PALETTE[k % PALETTE.len()];
    RGBColor(r, g, b)
}

fn plot_err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Plot {
        reason: e.to_string(),
    }
}

fn no_data(what: &str) -> ReportError {
    ReportError::NoData { what: what.into() }
}

/// One line of a plot.
struct Series {
    label: String,
    points: Vec<(f64, f64)>,
}

/// What to draw: lines over a linear or log10 x axis and a linear y axis.
struct Figure<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    series: Vec<Series>,
    x_log: bool,
    x: Range<f64>,
    y: Range<f64>,
    markers: bool,
    /// Continue each line at its last value to the right edge.
    extend_right: bool,
    legend: SeriesLabelPosition,
}

/// `[lo, hi]` of the finite values, or `None`.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A linear range around `[lo, hi]` with 5% padding, not below 0 when the
/// data are not. Data too close together to tell apart on an axis (a single
/// value) get a range of `±max(|v|, 1)/2` around them.
fn padded(lo: f64, hi: f64) -> Range<f64> {
    let span = hi - lo;
    let mag = lo.abs().max(hi.abs());
    let pad = if span > 1e-9 * mag && span > 1e-12 {
        0.05 * span
    } else {
        0.5 * mag.max(1.0)
    };
    let from = if lo >= 0.0 {
        (lo - pad).max(0.0)
    } else {
        lo - pad
    };
    from..hi + pad
}

/// A log range around `[lo, hi]` (both positive) with 5% padding in decades.
fn padded_log(lo: f64, hi: f64) -> Range<f64> {
    let pad = 10f64.powf(0.05 * (hi / lo).log10().max(0.2));
    lo / pad..hi * pad
}

/// A short tick label: up to three decimals, or `1.5e6` style outside
/// `[1e-3, 1e5)`.
fn tick(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((m, e)) => {
                let m = if m.contains('.') {
                    m.trim_end_matches('0').trim_end_matches('.')
                } else {
                    m
                };
                format!("{m}e{e}")
            }
            None => s,
        };
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// Draws `fig` and returns the SVG text.
fn render(fig: &Figure<'_>) -> Result<String, ReportError> {
    for s in &fig.series {
        for &(x, y) in &s.points {
            if !(x.abs() <= MAX_ABS && y.abs() <= MAX_ABS) {
                return Err(ReportError::Plot {
                    reason: format!(
                        "point ({x:e}, {y:e}) of series {:?} is beyond ±{MAX_ABS:e}, too large to plot",
                        s.label
                    ),
                });
            }
            // The axis ranges are built from the data; a point outside them
            // would overflow pixel coordinates in plotters.
            if !(fig.x.contains(&x) || x == fig.x.end) || !(fig.y.contains(&y) || y == fig.y.end) {
                return Err(ReportError::Plot {
                    reason: format!(
                        "point ({x:e}, {y:e}) of series {:?} lies outside the axes",
                        s.label
                    ),
                });
            }
        }
    }
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE_PX).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(fig.title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(70);
        if fig.x_log {
            let chart = builder
                .build_cartesian_2d(fig.x.clone().log_scale(), fig.y.clone())
                .map_err(plot_err)?;
            draw(chart, fig)?;
        } else {
            let chart = builder
                .build_cartesian_2d(fig.x.clone(), fig.y.clone())
                .map_err(plot_err)?;
            draw(chart, fig)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(buf)
}

fn draw<'a, X>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, RangedCoordf64>>,
    fig: &Figure<'_>,
) -> Result<(), ReportError>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(fig.x_desc)
        .y_desc(fig.y_desc)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 13))
        .max_light_lines(0)
        .draw()
        .map_err(plot_err)?;
    for (k, s) in fig.series.iter().enumerate() {
        let c = color(k);
        let tail = match s.points.last() {
            Some(&(_, y)) if fig.extend_right => Some((fig.x.end, y)),
            _ => None,
        };
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied().chain(tail),
                c.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        if fig.markers {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled())))
                .map_err(plot_err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(fig.legend.clone())
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .draw()
        .map_err(plot_err)?;
    Ok(())
}

/// Empirical CDF of job completion times, one line per run.
///
/// Each run contributes the step function `F(x)` = fraction of *all* its
/// jobs with JCT ≤ x, rising by `1/N` at each completed job's JCT, where
/// `N` counts every job of the run: rejected and unfinished jobs never
/// finish, so a run that did not complete every job tops out below 1, at
/// its completed share, continued to the right edge. A run that did not
/// complete every job says so in its legend entry ("(c of N done)", or
/// "(none of N done)").
/// The x axis ("JCT (s)") is log10 when the largest JCT over all runs
/// exceeds the smallest by more than a factor 100 (two decades) and the
/// smallest is at least 10⁻⁹ s, otherwise linear; the y axis is "fraction of all jobs done", 0 to 1. `label` is the legend
/// text of each run.
///
/// # Errors
///
/// [`ReportError::NoData`] when `runs` is empty or no run completed a job
/// with a finite JCT; [`ReportError::Plot`] for a JCT beyond [`MAX_ABS`] or
/// if drawing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::{ReportError, plot::jct_cdf_svg};
/// use dmlsched::sim::{SimOptions, StopAt, simulate};
///
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let job = |id, n| {
///     Job::new(JobId(id), 0.0, PsJob { minibatches_per_chunk: n, ..PsJob::default() })
/// };
/// // One slot of 60 s: job 0 runs 10 s; job 1, after it, cannot finish its 100 s.
/// let instance = Instance::new(cluster, vec![job(0, 10), job(1, 100)], 60.0, 1)?;
/// let mut options = SimOptions::default();
/// options.stop = StopAt::Horizon;
/// let result = simulate(&instance, &mut Fifo::default(), &options)?;
/// let svg = jct_cdf_svg(&[("fifo", &result)], "JCT distribution")?;
/// assert!(svg.starts_with("<svg") && svg.contains("JCT distribution"));
/// assert!(svg.contains("fifo (1 of 2 done)")); // the legend says the run is incomplete
/// assert!(svg.contains("fraction of all jobs done"));
/// assert!(matches!(jct_cdf_svg(&[], "none"), Err(ReportError::NoData { .. })));
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn jct_cdf_svg(runs: &[(&str, &SimResult)], title: &str) -> Result<String, ReportError> {
    let jcts: Vec<Vec<f64>> = runs
        .iter()
        .map(|(_, r)| {
            r.sorted_jcts()
                .into_iter()
                .filter(|v| v.is_finite())
                .collect()
        })
        .collect();
    let Some((lo, hi)) = bounds(jcts.iter().flatten().copied()) else {
        return Err(no_data("completed jobs (JCT CDF)"));
    };
    let x_log = lo >= LOG_MIN && hi / lo > LOG_SPAN;
    let x = if x_log {
        padded_log(lo, hi)
    } else {
        padded(lo, hi)
    };
    let series = runs
        .iter()
        .zip(&jcts)
        .map(|((label, r), v)| {
            let all = r.jobs.len().max(v.len());
            if v.is_empty() {
                return Series {
                    label: format!("{label} (none of {all} done)"),
                    points: Vec::new(),
                };
            }
            let n = all as f64;
            let mut points = Vec::with_capacity(2 * v.len() + 1);
            for (i, &t) in v.iter().enumerate() {
                points.push((t, i as f64 / n));
                points.push((t, (i + 1) as f64 / n));
            }
            let label = if v.len() < all {
                format!("{label} ({} of {all} done)", v.len())
            } else {
                (*label).to_string()
            };
            Series { label, points }
        })
        .collect();
    render(&Figure {
        title,
        x_desc: "JCT (s)",
        y_desc: "fraction of all jobs done",
        series,
        x_log,
        x,
        y: 0.0..1.02,
        markers: false,
        extend_right: true,
        legend: SeriesLabelPosition::LowerRight,
    })
}

/// Average JCT against load, one line per policy with a marker at each
/// point.
///
/// `points` are `(policy, load scale, average JCT in seconds)`; lines follow
/// the policies' first appearance in `points`, and each line joins its
/// points in increasing load. Points with a non-finite load or JCT (a run in
/// which no job completed has a `NaN` average) are left out. Axes: "load
/// scale" (linear) and "average JCT (s)" (linear, from 0).
///
/// # Errors
///
/// [`ReportError::NoData`] when no point is finite; [`ReportError::Plot`] for
/// a value beyond [`MAX_ABS`] or if drawing fails.
///
/// ```
/// use dmlsched::report::plot::jct_vs_load_svg;
///
/// // (policy, load scale, average JCT): DRF's run at load 2 completed no job.
/// let points = [("fifo", 1.0, 300.0), ("drf", 1.0, 210.0), ("fifo", 0.5, 120.0),
///               ("drf", 0.5, 100.0), ("drf", 2.0, f64::NAN)];
/// let svg = jct_vs_load_svg(&points, "Average JCT")?;
/// for text in ["Average JCT", "load scale", "average JCT (s)", "fifo", "drf"] {
///     assert!(svg.contains(text), "{text}");
/// }
/// assert_eq!(svg, jct_vs_load_svg(&points, "Average JCT")?); // byte-identical
/// assert!(jct_vs_load_svg(&[("drf", 2.0, f64::NAN)], "Average JCT").is_err());
/// # Ok::<(), dmlsched::report::ReportError>(())
/// ```
pub fn jct_vs_load_svg(points: &[(&str, f64, f64)], title: &str) -> Result<String, ReportError> {
    lines_svg(points, title, "load scale", "average JCT (s)")
}

/// Total utility against load, one line per policy with a marker at each
/// point: `points` are `(policy, load scale, total utility)`, drawn as
/// [`jct_vs_load_svg`] draws its points. Axes: "load scale" and "total
/// utility" (linear, from 0 unless a value is negative).
///
/// # Errors
///
/// [`ReportError::NoData`] when no point is finite; [`ReportError::Plot`] for
/// a value beyond [`MAX_ABS`] or if drawing fails.
///
/// ```
/// use dmlsched::report::plot::utility_vs_load_svg;
///
/// // (policy, load scale, total utility).
/// let points = [("oasis", 0.5, 41.0), ("oasis", 1.0, 65.5), ("fifo", 0.5, 30.0),
///               ("fifo", 1.0, 38.0)];
/// let svg = utility_vs_load_svg(&points, "Utility against load")?;
/// for text in ["Utility against load", "load scale", "total utility", "oasis", "fifo"] {
///     assert!(svg.contains(text), "{text}");
/// }
/// assert!(utility_vs_load_svg(&[], "nothing").is_err());
/// # Ok::<(), dmlsched::report::ReportError>(())
/// ```
pub fn utility_vs_load_svg(
    points: &[(&str, f64, f64)],
    title: &str,
) -> Result<String, ReportError> {
    lines_svg(points, title, "load scale", "total utility")
}

/// A line per series through `(series, x, y)` points: lines follow the
/// series' first appearance in `points`, each joins its points in
/// increasing `x`, with markers. Points with a non-finite coordinate are
/// left out. Both axes are linear; `y` starts at 0 unless a value is
/// negative. (Reproduction figures: total utility against the number of
/// jobs, one line per scheduler.)
///
/// # Errors
///
/// [`ReportError::NoData`] when no point is finite; [`ReportError::Plot`] for
/// a value beyond [`MAX_ABS`] or if drawing fails.
///
/// ```
/// use dmlsched::report::{ReportError, plot::lines_svg};
///
/// // Total utility against the number of jobs, one line per scheduler.
/// let points = [("oasis", 50.0, 31.5), ("fifo", 50.0, 20.0), ("oasis", 25.0, 18.0),
///               ("fifo", 25.0, 12.0)];
/// let svg = lines_svg(&points, "Utility", "jobs", "total utility")?;
/// for text in ["Utility", "jobs", "total utility", "oasis", "fifo"] {
///     assert!(svg.contains(text), "{text}");
/// }
/// // Legend entries follow the series' first appearance.
/// assert!(svg.rfind("oasis") < svg.rfind("fifo"));
/// let nothing = [("oasis", f64::INFINITY, 1.0)];
/// assert!(matches!(lines_svg(&nothing, "t", "x", "y"), Err(ReportError::NoData { .. })));
/// # Ok::<(), ReportError>(())
/// ```
pub fn lines_svg(
    points: &[(&str, f64, f64)],
    title: &str,
    x_desc: &str,
    y_desc: &str,
) -> Result<String, ReportError> {
    let mut series: Vec<Series> = Vec::new();
    for &(label, x, y) in points {
        let k = match series.iter().position(|s| s.label == label) {
            Some(k) => k,
            None => {
                series.push(Series {
                    label: label.to_string(),
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        if x.is_finite() && y.is_finite() {
            series[k].points.push((x, y));
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let all = || series.iter().flat_map(|s| s.points.iter());
    let (Some((x_lo, x_hi)), Some((_, y_hi))) =
        (bounds(all().map(|p| p.0)), bounds(all().map(|p| p.1)))
    else {
        return Err(no_data("finite (x, y) points"));
    };
    let y_top = if y_hi > 0.0 { 1.1 * y_hi } else { 1.0 };
    let y_bottom = bounds(all().map(|p| p.1)).map_or(0.0, |(lo, _)| lo.min(0.0));
    render(&Figure {
        title,
        x_desc,
        y_desc,
        series,
        x_log: false,
        x: padded(x_lo, x_hi),
        y: y_bottom..y_top,
        markers: true,
        extend_right: false,
        legend: SeriesLabelPosition::UpperLeft,
    })
}

/// GPU utilization over time, one step line per run.
///
/// x: hours since the run's first arrival ([`SimResult::start_s`]); y: the
/// fraction of the cluster's GPUs allocated, 0 to 1 (widened only if a
/// fraction lies outside, which a simulator run never produces). Each run's step
/// function holds its last value until the run's end
/// ([`SimResult::end_s`]). A run on a cluster without GPUs, or without
/// utilization points, keeps its legend entry but draws nothing.
///
/// # Errors
///
/// [`ReportError::NoData`] when `runs` is empty or no run has a finite
/// utilization point; [`ReportError::Plot`] for a time or fraction beyond
/// [`MAX_ABS`] or if drawing fails.
///
/// ```
/// use dmlsched::baselines::Fifo;
/// use dmlsched::model::{Cluster, Instance, Job, JobId, PsJob, Resources};
/// use dmlsched::report::plot::utilization_svg;
/// use dmlsched::sim::{SimOptions, simulate};
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(1.0).cpu_cores(4.0), 1e10);
/// let work = PsJob { minibatches_per_chunk: 3600, ..PsJob::default() }; // an hour
/// let jobs = vec![Job::new(JobId(0), 0.0, work.clone()), Job::new(JobId(1), 1800.0, work)];
/// let instance = Instance::new(cluster, jobs, 600.0, 10)?;
/// let result = simulate(&instance, &mut Fifo::default(), &SimOptions::default())?;
/// let svg = utilization_svg(&[("fifo", &result)], "GPU utilization")?;
/// for text in ["GPU utilization", "time since first arrival (h)", "fraction of GPUs allocated"] {
///     assert!(svg.contains(text), "{text}");
/// }
/// assert!(svg.contains("fifo"));
/// assert!(utilization_svg(&[], "nothing").is_err());
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn utilization_svg(runs: &[(&str, &SimResult)], title: &str) -> Result<String, ReportError> {
    let series: Vec<Series> = runs
        .iter()
        .map(|(label, r)| {
            let mut points: Vec<(f64, f64)> = Vec::new();
            if r.gpus_total > 0.0 {
                for (t, used) in utilization_steps(r) {
                    let x = (t - r.start_s) / 3600.0;
                    let y = used / r.gpus_total;
                    if !(x.is_finite() && y.is_finite()) {
                        continue;
                    }
                    if let Some(&(_, prev)) = points.last() {
                        points.push((x, prev));
                    }
                    points.push((x, y));
                }
            }
            Series {
                label: (*label).to_string(),
                points,
            }
        })
        .collect();
    let all = || series.iter().flat_map(|s| s.points.iter());
    let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) =
        (bounds(all().map(|p| p.0)), bounds(all().map(|p| p.1)))
    else {
        return Err(no_data("utilization points"));
    };
    // 0 to 1, widened only for inconsistent input (more GPUs used than the
    // cluster has, or negative use).
    let y = y_lo.min(0.0)..1.02 * y_hi.max(1.0);
    render(&Figure {
        title,
        x_desc: "time since first arrival (h)",
        y_desc: "fraction of GPUs allocated",
        series,
        x_log: false,
        x: padded(x_lo, x_hi),
        y,
        markers: false,
        extend_right: false,
        legend: SeriesLabelPosition::UpperRight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(1.5), "1.5");
        assert_eq!(tick(100.0), "100");
        assert_eq!(tick(0.12345), "0.123");
        assert_eq!(tick(1e6), "1e6");
        assert_eq!(tick(2.5e7), "2.5e7");
        assert_eq!(tick(-0.0001), "-1e-4");
    }

    #[test]
    fn ranges_are_padded_and_never_empty() {
        assert_eq!(padded(0.0, 10.0), 0.0..10.5);
        let r = padded(5.0, 5.0);
        assert!(r.start < 5.0 && r.end > 5.0);
        assert!(padded(1.0, 100.0).start >= 0.0);
        let l = padded_log(1.0, 1e4);
        assert!(l.start < 1.0 && l.start > 0.0 && l.end > 1e4);
    }

    #[test]
    fn empty_inputs_are_no_data() {
        assert!(matches!(
            jct_cdf_svg(&[], "t"),
            Err(ReportError::NoData { .. })
        ));
        assert!(matches!(
            utilization_svg(&[], "t"),
            Err(ReportError::NoData { .. })
        ));
        assert!(matches!(
            jct_vs_load_svg(&[], "t"),
            Err(ReportError::NoData { .. })
        ));
        assert!(matches!(
            jct_vs_load_svg(&[("a", 1.0, f64::NAN)], "t"),
            Err(ReportError::NoData { .. })
        ));
    }
}
