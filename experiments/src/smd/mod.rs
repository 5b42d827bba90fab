//! The evaluation of the crate's SMD-style scheduler (its own design after
//! the abstract of Yu, Wu, Ji, Liu, IEEE INFOCOM 2021): runs over offered
//! loads and seeds, the epoch LP study (E5), and the Philly window the
//! trace-driven runs use. The workload generator itself (layered
//! parameter-server jobs of four model types, Poisson arrivals at an offered
//! GPU load) is part of the library:
//! [`dmlsched::algorithms::smd::workload`].

mod runs;

/// The epoch program's rounding quality (E5), which needs the library's
/// internals: [`dmlsched::experiments::smd_rounding`].
pub use dmlsched::experiments::smd_rounding::{E5Options, E5Row, run_e5};
pub use runs::*;

/// Where [`philly_window`] looks for the trace: `$DMLSCHED_TRACES/philly.csv`.
pub fn philly_path() -> Option<std::path::PathBuf> {
    std::env::var_os(crate::gadget::TRACES_ENV)
        .map(|d| std::path::Path::new(&d).join(crate::gadget::PHILLY_FILE))
}

/// The first `jobs` rows of the Pollux Philly CSV at `path` submitted from
/// 2017-11-01 (local midnight of the trace's clock) that ask for 1 to 16
/// GPUs, sorted by arrival and re-based to start at 0.
///
/// # Errors
///
/// [`dmlsched::Error::Trace`] when the file cannot be read or parsed, or the
/// window is empty.
pub fn philly_window(
    path: &std::path::Path,
    jobs: usize,
) -> dmlsched::Result<Vec<dmlsched::trace::TraceJob>> {
    use dmlsched::trace::{Origin, Window, WindowStart, load_philly_pollux_csv, select};
    let mut rows = load_philly_pollux_csv(path)?.jobs;
    rows.retain(|j| (1..=16).contains(&j.num_gpus));
    let window = Window {
        start: Some(WindowStart::Date(PHILLY_START.into())),
        jobs: Some(jobs),
        drop_pending: true,
        origin: Origin::FirstArrival,
    };
    Ok(select(&rows, &window)?)
}

/// The first day of [`philly_window`].
pub const PHILLY_START: &str = "2017-11-01";
