//! Reports of simulator runs: CSV tables ([`csv`]) and SVG plots
//! ([`plot`]).
//!
//! Behind the `report` feature, off by default (`dmlsched = { version =
//! "0.1", features = ["report"] }`; the `cli` feature turns it on): the
//! simulator engine ([`crate::sim`]) writes no files, and a library that
//! only schedules does not build `plotters`. The module reads what a run
//! returns ([`SimResult`], its [`RunSummary`](crate::sim::RunSummary)) and
//! never drives a run itself.
//!
//! * [`csv`] writes a run's [`SimResult`] as CSV tables: one row per job,
//!   one row per run with its [`RunMeta`], utilization over time;
//! * [`plot`] draws SVG plots (JCT CDF, average JCT or utility against
//!   load, any lines, GPU utilization over time) that need no fonts or
//!   system libraries.
//!
//! Both fail with one error type, [`ReportError`], which the crate's
//! [`Error`](crate::Error) wraps.

pub mod csv;
pub mod plot;

use crate::model::Cluster;
use crate::sim::SimResult;

/// A report could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Writing to the destination failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The CSV writer failed.
    #[error("CSV: {0}")]
    Csv(#[from] ::csv::Error),
    /// The plotting library failed to draw.
    #[error("plot: {reason}")]
    Plot {
        /// What the plotting library reported.
        reason: String,
    },
    /// Nothing to plot: no series, or no finite point in any series.
    #[error("nothing to report: {what}")]
    NoData {
        /// What was missing (e.g. "completed jobs").
        what: String,
    },
}

/// What identifies a run in a report: the rows of every table carry it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct RunMeta {
    /// Policy label as it should appear in tables and legends (may differ
    /// from [`SimResult::policy`], e.g. `"fifo (no backfill)"`).
    pub policy: String,
    /// Seed of the run (workload generation and any randomized policy).
    pub seed: u64,
    /// Workload label, e.g. a trace file name or `"synthetic, 200 jobs"`.
    pub workload: String,
    /// Cluster label, e.g. `"64 GPUs, 8 per machine"` (see
    /// [`RunMeta::describe_cluster`]).
    pub cluster: String,
    /// Factor applied to the workload's arrival rate (1 = as generated or
    /// as traced).
    pub load_scale: f64,
}

impl RunMeta {
    /// A short cluster label: `"64 GPUs, 8 per machine"` when every machine
    /// has the same number of GPUs, `"20 GPUs on 3 machines"` otherwise
    /// (GPU counts as written by `{}` of `f64`).
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Machine, MachineId, Resources};
    /// use dmlsched::report::RunMeta;
    ///
    /// let cluster = Cluster::homogeneous(8, Resources::zero().gpus(8.0).cpu_cores(64.0), 1e10);
    /// assert_eq!(RunMeta::describe_cluster(&cluster), "64 GPUs, 8 per machine");
    /// let mixed = Cluster::new(vec![
    ///     Machine::new(MachineId(0), Resources::zero().gpus(4.0), 1e10),
    ///     Machine::new(MachineId(1), Resources::zero().gpus(8.0), 1e10),
    ///     Machine::new(MachineId(2), Resources::zero().cpu_cores(32.0), 1e10),
    /// ]);
    /// assert_eq!(RunMeta::describe_cluster(&mixed), "12 GPUs on 3 machines");
    /// ```
    pub fn describe_cluster(cluster: &Cluster) -> String {
        // `+ 0.0` writes a −0 as 0.
        let total = cluster.total_capacity().gpus + 0.0;
        let gpus = if total == 1.0 { "GPU" } else { "GPUs" };
        let per: Vec<f64> = cluster
            .machines
            .iter()
            .map(|m| m.capacity.gpus + 0.0)
            .collect();
        match per.first() {
            Some(&first) if per.iter().all(|&g| g == first) => {
                format!("{total} {gpus}, {first} per machine")
            }
            _ => format!("{total} {gpus} on {} machines", per.len()),
        }
    }
}

/// The utilization step points of a run, closed by a point at the run's
/// end that repeats the last use (when the run ends after the last point).
fn utilization_steps(result: &SimResult) -> Vec<(f64, f64)> {
    let mut steps: Vec<(f64, f64)> = result
        .utilization
        .iter()
        .map(|p| (p.time_s, p.gpus_used))
        .collect();
    if let Some(&(t, used)) = steps.last()
        && result.end_s > t
    {
        steps.push((result.end_s, used));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Machine, MachineId, Resources};

    #[test]
    fn cluster_labels() {
        let cap = Resources::zero()
            .gpus(8.0)
            .cpu_cores(32.0)
            .memory(1e11)
            .nic(1e10);
        assert_eq!(
            RunMeta::describe_cluster(&Cluster::homogeneous(8, cap, 1e10)),
            "64 GPUs, 8 per machine"
        );
        let mixed = Cluster::new(vec![
            Machine::new(MachineId(0), cap, 1e10),
            Machine::new(
                MachineId(1),
                Resources::zero()
                    .gpus(4.0)
                    .cpu_cores(32.0)
                    .memory(1e11)
                    .nic(1e10),
                1e10,
            ),
        ]);
        assert_eq!(RunMeta::describe_cluster(&mixed), "12 GPUs on 2 machines");
    }
}
