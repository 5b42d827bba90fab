//! Public cluster traces, synthetic workloads, and recipes that turn them
//! into [`Job`](crate::model::Job)s.
//!
//! The module has four layers:
//!
//! 1. **Loaders**, one per public format, each returning the rows of a file
//!    as normalised [`TraceJob`]s **in file order** (loaders never sort),
//!    with any warnings, in a [`LoadReport`]:
//!
//!    | format | loader (path / reader) | source |
//!    |---|---|---|
//!    | [`TraceFormat::Philly`] | [`load_philly_pollux_csv`] / [`read_philly_pollux_csv`] | Pollux artifact's Philly CSV |
//!    | [`TraceFormat::Itp`] | [`load_itp_csv`] / [`read_itp_csv`] | Microsoft ITP 2021, ElasticFlow |
//!    | [`TraceFormat::Gavel`] | [`load_gavel_trace`] / [`read_gavel_trace`] | Gavel and Shockwave TSV traces |
//!    | [`TraceFormat::Tiresias`] | [`load_tiresias_csv`] / [`read_tiresias_csv`] | Tiresias simulator CSV |
//!    | [`TraceFormat::Alibaba`] | [`load_alibaba_openb_pods`] / [`read_alibaba_openb_pods`] | Alibaba PAI 2023 "openb" pods |
//!
//!    Cluster descriptions come with two more: [`load_tiresias_cluster_spec`]
//!    and [`load_alibaba_nodes`].
//!
//!    [`load`] picks the loader from a [`TraceFormat`], or guesses it from the
//!    first line ([`TraceFormat::guess_from_header`]). Every field is
//!    validated; a bad one is a [`TraceError::Format`] that names the 1-based
//!    line of the file and the column. Suspicious but usable rows (a
//!    Tiresias `interval` that disagrees with the submit times, a Philly
//!    `gpu_time` that is not `duration × num_gpus`) become
//!    [`TraceWarning`]s in the [`LoadReport`]; the library never prints.
//! 2. **Windows** ([`select`], [`sort_by_arrival`], [`scale_arrivals`],
//!    [`summary`]): sort, cut a window of jobs, re-base arrivals, scale the
//!    load, and describe a trace.
//! 3. **Generators** ([`synth`]): Philly-like GPU counts and durations,
//!    Gavel-like jobs, Poisson and diurnal arrivals and the 160-job
//!    ring-all-reduce mix, all driven by a caller's RNG. Generators with one
//!    paper's parameter ranges (e.g. OASiS-like parameter-server jobs) live
//!    in [`crate::experiments`].
//! 4. **Recipes** ([`recipe`]): documented, seeded conversions of trace rows
//!    into ring-all-reduce or parameter-server [`Job`](crate::model::Job)s,
//!    plus a matching homogeneous GPU cluster.
//!
//! # Arrival times
//!
//! Loaders return the *raw* arrival in seconds in [`TraceJob::arrival_s`]
//! (Philly: seconds since the Unix epoch of the naive timestamp; every other
//! format: the file's own seconds) and the original text in
//! [`TraceJob::raw_arrival`]. [`select`] re-bases a window so that its first
//! job arrives at 0 (or at the window's start, see [`Origin`]); deadlines move
//! with the arrivals.
//!
//! # Example
//!
//! ```
//! use dmlsched::trace::{read_philly_pollux_csv, select, summary, Window, WindowStart};
//!
//! let csv = "timestamp,duration,num_gpus,gpu_time,cluster\n\
//!            2017-10-07 01:11:39,193256.0,8,1546048.0,ee9e8c\n\
//!            2017-10-07 00:10:00,60.0,1,60.0,6214e9\n";
//! let report = read_philly_pollux_csv(csv.as_bytes())?;
//! assert!(report.warnings.is_empty());
//! // File order is kept; the window sorts and re-bases.
//! let window = Window { start: Some(WindowStart::Date("2017-10-07".into())), ..Window::default() };
//! let jobs = select(&report.jobs, &window)?;
//! assert_eq!(jobs[0].arrival_s, 0.0);
//! assert_eq!(jobs[1].arrival_s, 3699.0); // 01:11:39 − 00:10:00
//! assert_eq!(summary(&jobs).gpu_histogram[&8], 1);
//! # Ok::<(), dmlsched::trace::TraceError>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

mod alibaba;
pub mod catalog;
pub mod date;
mod fields;
mod gavel;
mod gavel_rates;
mod gavel_speeds;
mod gpu_mix;
mod itp;
mod philly;
pub mod recipe;
mod replay;
pub mod synth;
mod tiresias;
mod window;

pub use alibaba::{
    AlibabaNode, load_alibaba_nodes, load_alibaba_openb_pods, read_alibaba_nodes,
    read_alibaba_openb_pods,
};
pub use gavel::{
    load_gavel_trace, load_gavel_trace_with_rates, read_gavel_trace, read_gavel_trace_with_rates,
};
pub use gavel_rates::{
    Converted, GAVEL_THROUGHPUTS_FILE, GavelConversion, GavelThroughputs, SkipCause, SkippedRow,
    TRACES_ENV, gavel_job_type, gavel_steps_to_durations,
};
pub use gavel_speeds::assign_gavel_speeds;
pub use gpu_mix::GpuMix;
pub use itp::{load_itp_csv, read_itp_csv};
pub use philly::{PhillyFilter, load_philly_pollux_csv, read_philly_pollux_csv};
pub use recipe::{
    Arch, RecipeOptions, RecipeOutput, SkipReason, gpu_cluster, ps_reference_placement, to_jobs,
};
pub use replay::{
    MAX_SIGMOID_LN_DROP, ReplayHorizon, ReplayOptions, UtilityRecipe, replay_instance,
};
pub use tiresias::{
    TiresiasClusterSpec, load_tiresias_cluster_spec, load_tiresias_csv, read_tiresias_cluster_spec,
    read_tiresias_csv,
};
pub use window::{
    Origin, TraceSummary, Window, WindowStart, quantile_of_sorted, rebase, scale_arrivals, select,
    sort_by_arrival, summary,
};

/// Most machines a cluster built from a trace description may have (2²⁰ =
/// 1 048 576): [`read_tiresias_cluster_spec`], [`TiresiasClusterSpec::to_cluster`]
/// and [`gpu_cluster`] refuse larger clusters instead of allocating them.
pub const MAX_CLUSTER_MACHINES: u64 = 1 << 20;

/// One job of a trace, normalised across formats.
///
/// Times are seconds. After loading, [`arrival_s`](TraceJob::arrival_s) and
/// [`deadline_s`](TraceJob::deadline_s) are on the file's raw clock; after
/// [`select`] they are relative to the window's origin.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct TraceJob {
    /// The source's id, or a synthetic `"<source>-<row>"` (row 0-based
    /// among the data rows) when the source has none.
    pub id: String,
    /// Arrival (submission) time, seconds, relative to the current origin.
    pub arrival_s: f64,
    /// Whole GPUs requested (0 only for CPU-only Alibaba pods).
    pub num_gpus: u32,
    /// Fraction of one GPU for GPU-sharing pods (Alibaba `gpu_milli / 1000`
    /// when `num_gpu = 1` and `gpu_milli < 1000`).
    pub gpu_fraction: Option<f64>,
    /// Observed run time, seconds; its meaning depends on the source (see
    /// each loader's mapping: Philly's is the summed run time of the job's
    /// attempts, queueing excluded). `None` when the job never ran (Alibaba
    /// Pending).
    pub duration_s: Option<f64>,
    /// Iterations (steps) when the source gives them.
    pub iterations: Option<u64>,
    /// Model name; `None` when the source has no model information.
    pub model: Option<String>,
    /// Whether the source assigned the model at random (Gavel's
    /// Philly-derived traces, ElasticFlow's augmented columns, generators).
    pub model_is_synthetic: bool,
    /// Mini-batch size, when known.
    pub batch_size: Option<u32>,
    /// Absolute deadline, seconds on the same clock as `arrival_s`.
    pub deadline_s: Option<f64>,
    /// Tenant: virtual cluster, user or QoS class.
    pub tenant: Option<String>,
    /// Whether `duration_s` is only a lower bound (still running at the end
    /// of the trace: Alibaba Running pods).
    pub censored: bool,
    /// The arrival exactly as written in the file (or generated).
    pub raw_arrival: String,
    /// Batch-size adaptation mode of Shockwave's 12-field Gavel traces
    /// (`static`, `gns`, `accordion`); `None` elsewhere.
    #[cfg_attr(feature = "serde", serde(default))]
    pub mode: Option<String>,
    /// The job's compute speed on each GPU type, relative to `duration_s`
    /// (the speed of the GPUs it was measured on, or that its steps were
    /// converted at, is 1); empty for a trace without GPU types. Recipes
    /// copy it into [`Job::gpu_speeds`](crate::model::Job::gpu_speeds);
    /// [`assign_gavel_speeds`] fills it from Gavel's throughputs.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")
    )]
    pub gpu_speeds: std::collections::BTreeMap<String, f64>,
}

impl TraceJob {
    /// A job with the given id, arrival (also written to `raw_arrival`) and
    /// GPU count, and every optional field empty.
    pub fn new(id: impl Into<String>, arrival_s: f64, num_gpus: u32) -> TraceJob {
        TraceJob {
            id: id.into(),
            arrival_s,
            num_gpus,
            gpu_fraction: None,
            duration_s: None,
            iterations: None,
            model: None,
            model_is_synthetic: false,
            batch_size: None,
            deadline_s: None,
            tenant: None,
            censored: false,
            raw_arrival: arrival_s.to_string(),
            mode: None,
            gpu_speeds: std::collections::BTreeMap::new(),
        }
    }

    /// GPU-seconds of the job: `duration_s × num_gpus` (× `gpu_fraction` for
    /// shared GPUs); `None` without a duration.
    pub fn gpu_seconds(&self) -> Option<f64> {
        let gpus = self.gpu_fraction.unwrap_or(f64::from(self.num_gpus));
        self.duration_s.map(|d| d * gpus)
    }
}

/// The trace formats the crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum TraceFormat {
    /// Pollux-style Philly CSV (`timestamp,duration,num_gpus,gpu_time,cluster`).
    Philly,
    /// Microsoft ITP CSV (4 columns), ElasticFlow-augmented ITP (8 columns) or
    /// ElasticFlow's per-VC Philly-derived CSV (10 columns).
    Itp,
    /// Gavel TSV traces (7, 10 or 12 tab-separated fields, no header).
    Gavel,
    /// Tiresias simulator CSV.
    Tiresias,
    /// Alibaba PAI 2023 "openb" pod list.
    Alibaba,
}

impl TraceFormat {
    /// Every format, in declaration order.
    pub const ALL: [TraceFormat; 5] = [
        TraceFormat::Philly,
        TraceFormat::Itp,
        TraceFormat::Gavel,
        TraceFormat::Tiresias,
        TraceFormat::Alibaba,
    ];

    /// The format's name as accepted by [`FromStr`].
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Philly => "philly",
            TraceFormat::Itp => "itp",
            TraceFormat::Gavel => "gavel",
            TraceFormat::Tiresias => "tiresias",
            TraceFormat::Alibaba => "alibaba",
        }
    }

    /// Guesses the format from the first line of a file: the exact header of
    /// a CSV format, or, for Gavel (which has no header), a line of 7, 10 or
    /// 12 tab-separated fields. `None` when nothing matches.
    ///
    /// ```
    /// use dmlsched::trace::TraceFormat;
    /// assert_eq!(
    ///     TraceFormat::guess_from_header("timestamp,duration,num_gpus,gpu_time,cluster"),
    ///     Some(TraceFormat::Philly)
    /// );
    /// assert_eq!(TraceFormat::guess_from_header("a\tb\tc\td\te\tf\tg"), Some(TraceFormat::Gavel));
    /// assert_eq!(TraceFormat::guess_from_header("a,b"), None);
    /// ```
    pub fn guess_from_header(first_line: &str) -> Option<TraceFormat> {
        let line = first_line
            .trim_start_matches('\u{feff}')
            .trim_end_matches(['\r', '\n']);
        if line.contains('\t') {
            let n = line.split('\t').count();
            return gavel::Layout::from_field_count(n).map(|_| TraceFormat::Gavel);
        }
        let header: Vec<&str> = line.split(',').map(str::trim).collect();
        let is = |columns: &[&str]| header.as_slice() == columns;
        if is(philly::COLUMNS) {
            Some(TraceFormat::Philly)
        } else if itp::Layout::from_header(&header).is_some() {
            Some(TraceFormat::Itp)
        } else if is(tiresias::COLUMNS) {
            Some(TraceFormat::Tiresias)
        } else if is(alibaba::COLUMNS) {
            Some(TraceFormat::Alibaba)
        } else {
            None
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    /// Case-insensitive: `philly` (or `pollux`), `itp` (or `elasticflow`),
    /// `gavel` (or `shockwave`), `tiresias`, `alibaba` (or `openb`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "philly" | "pollux" => Ok(TraceFormat::Philly),
            "itp" | "elasticflow" => Ok(TraceFormat::Itp),
            "gavel" | "shockwave" => Ok(TraceFormat::Gavel),
            "tiresias" => Ok(TraceFormat::Tiresias),
            "alibaba" | "openb" => Ok(TraceFormat::Alibaba),
            _ => Err(TraceError::UnknownFormat {
                detail: format!(
                    "`{}` is not a format name (expected philly, itp, gavel, tiresias or alibaba)",
                    shown(s)
                ),
            }),
        }
    }
}

/// A row that loaded but looks wrong (e.g. a redundant column that disagrees
/// with the others).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TraceWarning {
    /// 1-based line of the file.
    pub line: u64,
    /// The column concerned, if one.
    pub column: Option<String>,
    /// What is odd.
    pub(crate) message: String,
}

impl fmt::Display for TraceWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(c) = &self.column {
            write!(f, ", column `{c}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// What a loader read: the jobs in file order, warnings about rows that
/// loaded but look wrong, and the rows left out.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct LoadReport {
    /// The jobs, in file order.
    pub jobs: Vec<TraceJob>,
    /// Non-fatal findings, in file order.
    pub warnings: Vec<TraceWarning>,
    /// Rows that were read but produced no job (e.g. Gavel rows without a
    /// measured throughput, [`read_gavel_trace_with_rates`]), in file
    /// order; each also has a warning. Empty for the plain loaders, which
    /// keep every valid row.
    pub skipped: Vec<SkippedRow>,
}

/// Why a trace could not be read, or a trace tool rejected its input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// Opening or reading failed.
    #[error("{}: {source}", path_or_input(path))]
    Io {
        /// The file, when reading from a path.
        path: Option<PathBuf>,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is malformed: wrong header, missing or extra fields, a value
    /// that does not parse or is out of range.
    #[error("{}line {line}{}: {reason}", path_prefix(path), column_suffix(column))]
    Format {
        /// The file, when reading from a path.
        path: Option<PathBuf>,
        /// 1-based line of the file.
        line: u64,
        /// The column (field name) concerned, if one.
        column: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// The input has no data rows (no bytes, or a header only).
    #[error("{}: the trace has no jobs", path_or_input(path))]
    Empty {
        /// The file, when reading from a path.
        path: Option<PathBuf>,
    },
    /// The format could not be guessed, or a format name is unknown.
    #[error("unknown trace format: {detail}")]
    UnknownFormat {
        /// Which name or first line did not match.
        detail: String,
    },
    /// A throughput table (Gavel's `simulation_throughputs.json`) is
    /// malformed: not JSON, not the expected shape, or a rate that is not
    /// finite and positive.
    #[error("{}: {}{reason}", path_or_input(path), entry_prefix(entry))]
    Throughputs {
        /// The file, when reading from a path.
        path: Option<PathBuf>,
        /// The entry concerned (`<gpu>: ('<job type>', <scale factor>)`),
        /// if one.
        entry: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// A window selects no job of the trace.
    #[error("{}", empty_window(window, *jobs, *without_duration, span))]
    EmptyWindow {
        /// The window, described (start, job count, pending rule).
        window: String,
        /// Jobs in the trace.
        jobs: usize,
        /// Jobs without a duration in the trace (dropped when the window
        /// drops pending jobs).
        without_duration: usize,
        /// The earliest and latest arrival of the trace, as written in the
        /// file (dates for Philly) and in raw seconds; `None` for an empty
        /// trace.
        span: Option<(String, String)>,
    },
    /// An argument of a window, generator or recipe is invalid.
    #[error("invalid {name}: {reason}")]
    InvalidArgument {
        /// The parameter.
        name: String,
        /// Why it is invalid.
        reason: String,
    },
}

fn path_or_input(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map_or_else(|| "<input>".to_string(), |p| p.display().to_string())
}

fn path_prefix(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map_or_else(String::new, |p| format!("{}: ", p.display()))
}

fn empty_window(
    window: &str,
    jobs: usize,
    without_duration: usize,
    span: &Option<(String, String)>,
) -> String {
    let mut s = format!("the window {window} selects none of the trace's {jobs} jobs");
    if let Some((a, b)) = span {
        s += &format!(", which arrive from {a} to {b}");
    }
    if without_duration > 0 {
        s += &format!(
            " ({without_duration} have no duration and are dropped as pending; Gavel rows need a throughput table to get one)"
        );
    }
    s
}

fn entry_prefix(entry: &Option<String>) -> String {
    entry
        .as_ref()
        .map_or_else(String::new, |e| format!("entry `{e}`: "))
}

fn column_suffix(column: &Option<String>) -> String {
    column
        .as_ref()
        .map_or_else(String::new, |c| format!(", column `{c}`"))
}

impl TraceError {
    /// The same error with `path` recorded where the error has a path slot
    /// that is still empty.
    pub fn with_path(mut self, file: &Path) -> TraceError {
        match &mut self {
            TraceError::Io { path, .. }
            | TraceError::Format { path, .. }
            | TraceError::Throughputs { path, .. }
            | TraceError::Empty { path }
                if path.is_none() =>
            {
                *path = Some(file.to_path_buf());
            }
            _ => {}
        }
        self
    }

    pub(crate) fn invalid(name: &str, reason: impl Into<String>) -> TraceError {
        TraceError::InvalidArgument {
            name: name.to_string(),
            reason: reason.into(),
        }
    }
}

/// Opens `path` for reading, naming it in the error.
pub(crate) fn open(path: &Path) -> Result<File, TraceError> {
    File::open(path).map_err(|source| TraceError::Io {
        path: Some(path.to_path_buf()),
        source,
    })
}

/// Runs a reader-based loader on the file at `path`, naming the path in
/// every error.
pub(crate) fn with_file<T>(
    path: &Path,
    read: impl FnOnce(File) -> Result<T, TraceError>,
) -> Result<T, TraceError> {
    read(open(path)?).map_err(|e| e.with_path(path))
}

/// Loads a trace file, guessing the format from its first line when `format`
/// is `None`, and returns its jobs in file order (warnings are dropped; use
/// [`load_report`] to keep them).
///
/// # Errors
///
/// [`TraceError::Io`] if the file cannot be read, [`TraceError::Empty`] if it
/// has no data rows, [`TraceError::UnknownFormat`] if the format cannot be
/// guessed, and [`TraceError::Format`] for a malformed line.
///
/// ```
/// use dmlsched::trace::{TraceFormat, load};
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-load-{}.csv", std::process::id()));
/// std::fs::write(&path, "job_id,submission_time,duration,num_gpu\nj1,120,3600,4\nj2,60,60,1\n")?;
/// let guessed = load(&path, None); // the header is ITP's
/// let named = load(&path, Some(TraceFormat::Itp));
/// let wrong = load(&path, Some(TraceFormat::Philly));
/// std::fs::remove_file(&path)?;
/// let jobs = guessed?;
/// assert_eq!(jobs, named?);
/// assert_eq!((jobs[0].id.as_str(), jobs[1].id.as_str()), ("j1", "j2")); // file order
/// assert!(wrong.is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(
    path: impl AsRef<Path>,
    format: Option<TraceFormat>,
) -> Result<Vec<TraceJob>, TraceError> {
    load_report(path, format).map(|r| r.jobs)
}

/// Like [`load`], keeping the loader's warnings.
///
/// ITP files get the file stem as their tenant (e.g. `cluster02`).
///
/// # Errors
///
/// As [`load`].
///
/// ```
/// use dmlsched::trace::load_report;
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-report-{}.csv", std::process::id()));
/// std::fs::write(&path, "timestamp,duration,num_gpus,gpu_time,cluster\n\
///                        2017-10-07 00:00:00,10,2,25,vc\n")?;
/// let report = load_report(&path, None);
/// std::fs::remove_file(&path)?;
/// let report = report?;
/// assert_eq!(report.jobs.len(), 1);
/// // gpu_time 25 is not duration × num_gpus: the row loads, with a warning.
/// assert_eq!(report.warnings[0].line, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_report(
    path: impl AsRef<Path>,
    format: Option<TraceFormat>,
) -> Result<LoadReport, TraceError> {
    let path = path.as_ref();
    let mut reader = BufReader::new(open(path)?);
    let (prefix, first) = first_line(&mut reader, path)?;
    let format = match format {
        Some(f) => f,
        None => guess(&first, path)?,
    };
    let input = Cursor::new(prefix.into_bytes()).chain(reader);
    read_format(input, format, itp::tenant_from_path(path).as_deref())
        .map_err(|e| e.with_path(path))
}

/// Reads up to the first non-blank line, returning what was read (so that
/// a loader can still see the whole file and count its lines right) and
/// that line.
fn first_line(reader: &mut impl BufRead, path: &Path) -> Result<(String, String), TraceError> {
    let mut prefix = String::new();
    loop {
        let start = prefix.len();
        let n = reader
            .read_line(&mut prefix)
            .map_err(|source| TraceError::Io {
                path: Some(path.to_path_buf()),
                source,
            })?;
        if n == 0 {
            return Err(TraceError::Empty {
                path: Some(path.to_path_buf()),
            });
        }
        if !prefix[start..].trim().is_empty() {
            let first = prefix[start..].to_string();
            return Ok((prefix, first));
        }
    }
}

fn guess(first: &str, path: &Path) -> Result<TraceFormat, TraceError> {
    TraceFormat::guess_from_header(first).ok_or_else(|| TraceError::UnknownFormat {
        detail: format!(
            "{}: first line `{}` matches no known header",
            path.display(),
            shown(first.trim_end())
        ),
    })
}

/// The format of the trace file at `path`, guessed from its first non-blank
/// line ([`TraceFormat::guess_from_header`]).
///
/// # Errors
///
/// [`TraceError::Io`] if the file cannot be read, [`TraceError::Empty`] if
/// it has no non-blank line, [`TraceError::UnknownFormat`] if no format
/// matches.
///
/// ```
/// use dmlsched::trace::{TraceError, TraceFormat, guess_format};
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-guess-{}.txt", std::process::id()));
/// // A blank line, then a Gavel row of 7 tab-separated fields.
/// std::fs::write(&path, "\nA3C\tpython3 main.py\t--max-steps\t0\t500\t0\t1\n")?;
/// let gavel = guess_format(&path);
/// std::fs::write(&path, "id,arrival\n1,0\n")?;
/// let unknown = guess_format(&path);
/// std::fs::remove_file(&path)?;
/// assert_eq!(gavel?, TraceFormat::Gavel);
/// assert!(matches!(unknown, Err(TraceError::UnknownFormat { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn guess_format(path: impl AsRef<Path>) -> Result<TraceFormat, TraceError> {
    let path = path.as_ref();
    let (_, first) = first_line(&mut BufReader::new(open(path)?), path)?;
    guess(&first, path)
}

/// Reads a trace of a known format from any reader. `tenant` is used by the
/// ITP loader only (the cluster name; other formats carry their own).
///
/// # Errors
///
/// As [`load`], without a path in the errors.
///
/// ```
/// use dmlsched::trace::{TraceFormat, read_format};
///
/// let csv = "job_id,submission_time,duration,num_gpu\nj1,120,3600,4\n";
/// let report = read_format(csv.as_bytes(), TraceFormat::Itp, Some("cluster02"))?;
/// assert_eq!(report.jobs[0].tenant.as_deref(), Some("cluster02"));
/// assert_eq!(report.jobs[0].gpu_seconds(), Some(14_400.0));
/// // The format is not guessed: the Philly reader refuses ITP's header.
/// assert!(read_format(csv.as_bytes(), TraceFormat::Philly, None).is_err());
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn read_format(
    reader: impl Read,
    format: TraceFormat,
    tenant: Option<&str>,
) -> Result<LoadReport, TraceError> {
    match format {
        TraceFormat::Philly => read_philly_pollux_csv(reader),
        TraceFormat::Itp => read_itp_csv(reader, tenant),
        TraceFormat::Gavel => read_gavel_trace(reader),
        TraceFormat::Tiresias => read_tiresias_csv(reader),
        TraceFormat::Alibaba => read_alibaba_openb_pods(reader),
    }
}

/// Longest value, in characters, that an error message echoes whole.
pub(crate) const SHOWN_CHARS: usize = 48;

/// `text` as an error message shows it: whole up to [`SHOWN_CHARS`]
/// characters, else its start, `…` and its length (a 2 000-digit field
/// would otherwise fill a 38 KB line).
pub(crate) fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        return std::borrow::Cow::Borrowed(text);
    }
    let head: String = text.chars().take(SHOWN_CHARS).collect();
    std::borrow::Cow::Owned(format!("{head}… ({n} characters)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guess_every_header() {
        let cases = [
            (
                "timestamp,duration,num_gpus,gpu_time,cluster\r\n",
                Some(TraceFormat::Philly),
            ),
            (
                "job_id,submission_time,duration,num_gpu",
                Some(TraceFormat::Itp),
            ),
            (
                "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration",
                Some(TraceFormat::Itp),
            ),
            (
                "job_id,submit_time,real_iteration,model_name,ddl,batch_size,num_gpu,real_duration,duration,iteration",
                Some(TraceFormat::Itp),
            ),
            (
                "job_id,num_gpu,submit_time,iterations,model_name,duration,interval",
                Some(TraceFormat::Tiresias),
            ),
            (
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
                Some(TraceFormat::Alibaba),
            ),
            (
                "\u{feff}a\tb\tc\td\te\tf\tg\th\ti\tj",
                Some(TraceFormat::Gavel),
            ),
            (
                "a\tb\tc\td\te\tf\tg\th\ti\tj\tk\tl\n",
                Some(TraceFormat::Gavel),
            ),
            ("a\tb\tc\td\te\tf\tg\th\ti", None),
            ("job_id,num_gpu", None),
            ("", None),
        ];
        for (line, want) in cases {
            assert_eq!(TraceFormat::guess_from_header(line), want, "{line:?}");
        }
    }

    #[test]
    fn format_names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
            assert_eq!(
                f.to_string().to_uppercase().parse::<TraceFormat>().unwrap(),
                f
            );
        }
        assert!(matches!(
            "csv".parse::<TraceFormat>(),
            Err(TraceError::UnknownFormat { .. })
        ));
    }

    #[test]
    fn error_messages_name_path_line_and_column() {
        let e = TraceError::Format {
            path: None,
            line: 3,
            column: Some("duration".into()),
            reason: "negative".into(),
        }
        .with_path(Path::new("x.csv"));
        assert_eq!(e.to_string(), "x.csv: line 3, column `duration`: negative");
        let e = TraceError::Empty { path: None };
        assert_eq!(e.to_string(), "<input>: the trace has no jobs");
    }

    #[test]
    fn gpu_seconds() {
        let mut j = TraceJob::new("a", 0.0, 2);
        assert_eq!(j.gpu_seconds(), None);
        j.duration_s = Some(10.0);
        assert_eq!(j.gpu_seconds(), Some(20.0));
        j.gpu_fraction = Some(0.5);
        assert_eq!(j.gpu_seconds(), Some(5.0));
    }
}
