//! Tiresias simulator CSV (Gu et al., NSDI 2019; `SymbioticLab/Tiresias`).

use std::io::Read;
use std::path::Path;

use super::fields::{Row, format_error, with_header};
use super::recipe::{INTRA_BPS, NIC_BPS};
use super::{LoadReport, MAX_CLUSTER_MACHINES, TraceError, TraceJob, TraceWarning, with_file};
use crate::model::units::{GB, Num};
use crate::model::{Cluster, Machine, MachineId, Rack, RackId, Resources};

/// The header of a Tiresias job CSV.
pub(crate) const COLUMNS: &[&str] = &[
    "job_id",
    "num_gpu",
    "submit_time",
    "iterations",
    "model_name",
    "duration",
    "interval",
];

/// Loads a Tiresias job CSV
/// (`job_id,num_gpu,submit_time,iterations,model_name,duration,interval`).
///
/// Mapping: `id = job_id`, `num_gpus = num_gpu`, `arrival_s = submit_time`,
/// `iterations`, `model = model_name` (kept as written, even when Tiresias
/// would not know it, e.g. `googlenet`), `duration_s = duration` (the run
/// time when run alone). `interval` is redundant: where
/// `submit_time[i+1] − submit_time[i] ≠ interval[i]` the report gets a
/// warning naming line `i`, and loading goes on. Rows come back in file
/// order.
///
/// # Errors
///
/// [`TraceError::Io`], [`TraceError::Empty`], or [`TraceError::Format`] for
/// a wrong header, a missing or extra field, a non-integer `job_id`, a
/// `num_gpu` below 1, a non-finite or negative time or `iterations`, or an
/// empty `model_name`.
///
/// ```
/// use dmlsched::trace::load_tiresias_csv;
///
/// let name = format!("dmlsched-doc-tiresias-{}.csv", std::process::id());
/// let path = std::env::temp_dir().join(name);
/// std::fs::write(&path, "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n\
///                        1,4,0,1000,resnet50,3600,60\n\
///                        2,1,60,500,vgg16,900,0\n")?;
/// let report = load_tiresias_csv(&path);
/// std::fs::remove_file(&path)?;
/// let report = report?;
/// assert_eq!(report.jobs.len(), 2);
/// assert_eq!((report.jobs[0].num_gpus, report.jobs[0].duration_s), (4, Some(3600.0)));
/// assert!(report.warnings.is_empty()); // the interval matches the submit times
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_tiresias_csv(path: impl AsRef<Path>) -> Result<LoadReport, TraceError> {
    with_file(path.as_ref(), read_tiresias_csv)
}

/// [`load_tiresias_csv`] from any reader.
///
/// # Errors
///
/// As [`load_tiresias_csv`], without a path.
///
/// ```
/// use dmlsched::trace::read_tiresias_csv;
///
/// let csv = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n\
///            1,4,0,1000,resnet50,3600,30\n\
///            2,1,60,500,googlenet,900,0\n";
/// let report = read_tiresias_csv(csv.as_bytes())?;
/// let job = &report.jobs[1];
/// assert_eq!((job.id.as_str(), job.num_gpus, job.arrival_s), ("2", 1, 60.0));
/// assert_eq!((job.iterations, job.duration_s), (Some(500), Some(900.0)));
/// assert_eq!(job.model.as_deref(), Some("googlenet")); // kept as written
/// // Line 2's interval says 30 s, but the next job comes 60 s later: a warning.
/// assert_eq!(report.warnings.len(), 1);
/// assert_eq!(report.warnings[0].line, 2);
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn read_tiresias_csv(reader: impl Read) -> Result<LoadReport, TraceError> {
    let mut report = LoadReport::default();
    // The previous row's line, submit time and interval.
    let mut previous: Option<(u64, f64, f64)> = None;
    for record in with_header(reader, COLUMNS)? {
        let (line, record) = record?;
        let row = Row::new(line, &record, COLUMNS)?;
        let id = row.count("job_id", 0)?;
        let gpus = row.count_u32("num_gpu", 1)?;
        let submit = row.non_negative("submit_time")?;
        let iterations = row.count("iterations", 0)?;
        let model = row.required("model_name")?;
        let duration = row.non_negative("duration")?;
        let interval = row.number("interval")?;
        if let Some((prev_line, prev_submit, prev_interval)) = previous {
            let gap = submit - prev_submit;
            if gap != prev_interval {
                report.warnings.push(TraceWarning {
                    line: prev_line,
                    column: Some("interval".to_string()),
                    message: format!(
                        "interval {} differs from the next submit_time gap {}",
                        Num(prev_interval),
                        Num(gap)
                    ),
                });
            }
        }
        previous = Some((line, submit, interval));
        let mut job = TraceJob::new(id.to_string(), submit, gpus);
        job.raw_arrival = row.text("submit_time")?.to_string();
        job.iterations = Some(iterations);
        job.model = Some(model.to_string());
        job.duration_s = Some(duration);
        report.jobs.push(job);
    }
    if report.jobs.is_empty() {
        return Err(TraceError::Empty { path: None });
    }
    Ok(report)
}

const SPEC_COLUMNS: &[&str] = &[
    "num_switch",
    "num_node_p_switch",
    "num_gpu_p_node",
    "num_cpu_p_node",
    "mem_p_node",
];

/// A Tiresias cluster spec: switches × nodes per switch, identical nodes.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TiresiasClusterSpec {
    /// Switches (racks).
    pub switches: u32,
    /// Nodes per switch.
    pub nodes_per_switch: u32,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// CPU cores per node.
    pub cpus_per_node: u32,
    /// Memory per node, GB.
    pub memory_per_node_gb: f64,
}

impl TiresiasClusterSpec {
    /// Machines of the spec, `switches × nodes_per_switch` (exact).
    pub fn machines(&self) -> u64 {
        u64::from(self.switches) * u64::from(self.nodes_per_switch)
    }

    /// The cluster: one rack per switch, `nodes_per_switch` machines in each
    /// (ids `0..`), with the spec's GPUs, cores and memory, no storage, and
    /// the NIC, intra-machine bandwidth and ring parameters of
    /// [`gpu_cluster`](super::gpu_cluster) (the spec names no network).
    ///
    /// # Errors
    ///
    /// [`TraceError::InvalidArgument`] when the spec has no machine, more
    /// than [`MAX_CLUSTER_MACHINES`] machines, or a memory that is not
    /// positive and finite.
    pub fn to_cluster(&self) -> Result<Cluster, TraceError> {
        let machines = self.machines();
        if machines == 0 || machines > MAX_CLUSTER_MACHINES {
            return Err(TraceError::invalid(
                "Tiresias cluster spec",
                format!(
                    "{} switches × {} nodes = {machines} machines; a cluster has 1 to {MAX_CLUSTER_MACHINES}",
                    self.switches, self.nodes_per_switch
                ),
            ));
        }
        if !(self.memory_per_node_gb.is_finite() && self.memory_per_node_gb > 0.0) {
            return Err(TraceError::invalid(
                "Tiresias cluster spec",
                format!(
                    "memory per node {} GB is not positive and finite",
                    Num(self.memory_per_node_gb)
                ),
            ));
        }
        let capacity = Resources::zero()
            .gpus(f64::from(self.gpus_per_node))
            .cpu_cores(f64::from(self.cpus_per_node))
            .memory(self.memory_per_node_gb * GB)
            .nic(NIC_BPS);
        // At most MAX_CLUSTER_MACHINES (< 2^32) ids: `s·n + k` fits a u32.
        let machines = (0..self.switches)
            .flat_map(|s| {
                (0..self.nodes_per_switch).map(move |n| (s, s * self.nodes_per_switch + n))
            })
            .map(|(s, id)| Machine::new(MachineId(id), capacity, INTRA_BPS).in_rack(RackId(s)))
            .collect();
        let mut cluster = Cluster::new(machines);
        cluster.racks = (0..self.switches)
            .map(|s| Rack {
                id: RackId(s),
                uplink_bps: None,
            })
            .collect();
        cluster.ring = super::recipe::physical_ring_params();
        Ok(cluster)
    }
}

/// Loads a Tiresias cluster spec CSV
/// (`num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node`,
/// one data row; e.g. `1,32,4,40,256` is 32 nodes of 4 GPUs).
///
/// # Errors
///
/// [`TraceError::Io`], [`TraceError::Empty`], or [`TraceError::Format`] for
/// a wrong header, a count below 1, more than [`MAX_CLUSTER_MACHINES`]
/// machines (`num_switch × num_node_p_switch`), a non-finite or
/// non-positive memory, or more than one data row.
///
/// ```
/// use dmlsched::trace::load_tiresias_cluster_spec;
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-spec-{}.csv", std::process::id()));
/// std::fs::write(&path, "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n\
///                        1,32,4,40,256\n")?;
/// let spec = load_tiresias_cluster_spec(&path);
/// std::fs::remove_file(&path)?;
/// let spec = spec?;
/// assert_eq!((spec.machines(), spec.gpus_per_node, spec.memory_per_node_gb), (32, 4, 256.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_tiresias_cluster_spec(
    path: impl AsRef<Path>,
) -> Result<TiresiasClusterSpec, TraceError> {
    with_file(path.as_ref(), read_tiresias_cluster_spec)
}

/// [`load_tiresias_cluster_spec`] from any reader.
///
/// # Errors
///
/// As [`load_tiresias_cluster_spec`], without a path.
///
/// ```
/// use dmlsched::trace::read_tiresias_cluster_spec;
///
/// let csv = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n\
///            2,4,8,64,512\n";
/// let spec = read_tiresias_cluster_spec(csv.as_bytes())?;
/// assert_eq!((spec.switches, spec.machines()), (2, 8));
/// let cluster = spec.to_cluster()?;
/// assert_eq!(cluster.racks.len(), 2);
/// assert_eq!(cluster.total_capacity().gpus, 64.0);
/// // One data row only.
/// let two_rows = format!("{csv}1,1,1,1,1\n");
/// assert!(read_tiresias_cluster_spec(two_rows.as_bytes()).is_err());
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn read_tiresias_cluster_spec(reader: impl Read) -> Result<TiresiasClusterSpec, TraceError> {
    let mut records = with_header(reader, SPEC_COLUMNS)?;
    let (line, record) = records.next().ok_or(TraceError::Empty { path: None })??;
    let row = Row::new(line, &record, SPEC_COLUMNS)?;
    let memory = row.non_negative("mem_p_node")?;
    if memory == 0.0 {
        return Err(row.error("mem_p_node", "must be > 0"));
    }
    let spec = TiresiasClusterSpec {
        switches: row.count_u32("num_switch", 1)?,
        nodes_per_switch: row.count_u32("num_node_p_switch", 1)?,
        gpus_per_node: row.count_u32("num_gpu_p_node", 1)?,
        cpus_per_node: row.count_u32("num_cpu_p_node", 1)?,
        memory_per_node_gb: memory,
    };
    if spec.machines() > MAX_CLUSTER_MACHINES {
        return Err(row.error(
            "num_node_p_switch",
            format!(
                "num_switch × num_node_p_switch = {} × {} = {} machines exceeds the limit of {MAX_CLUSTER_MACHINES}",
                spec.switches,
                spec.nodes_per_switch,
                spec.machines()
            ),
        ));
    }
    if let Some(extra) = records.next() {
        let (line, _) = extra?;
        return Err(format_error(line, None, "a cluster spec has one data row"));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";

    #[test]
    fn spec_rows_and_interval_check() {
        let text = format!(
            "{HEADER}0,1,0,606,vgg19,164,30\r\n1,8,30,133,vgg11,147,23\r\n2,2,54,157,inception4,127,26\r\n"
        );
        let r = read_tiresias_csv(text.as_bytes()).unwrap();
        let j = &r.jobs[1];
        assert_eq!(
            (j.num_gpus, j.arrival_s, j.iterations, j.duration_s),
            (8, 30.0, Some(133), Some(147.0))
        );
        assert_eq!(j.id, "1");
        assert_eq!(j.model.as_deref(), Some("vgg11"));
        // Row 0's interval (30) matches 30 − 0; row 1's (23) does not match 54 − 30.
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].line, 3);
    }

    #[test]
    fn cluster_spec() {
        let text = format!("{}\n2,16,4,40,256\n", SPEC_COLUMNS.join(","));
        let spec = read_tiresias_cluster_spec(text.as_bytes()).unwrap();
        assert_eq!(
            (spec.switches, spec.nodes_per_switch, spec.gpus_per_node),
            (2, 16, 4)
        );
        let c = spec.to_cluster().unwrap();
        assert_eq!(c.machines.len(), 32);
        assert_eq!(c.total_capacity().gpus, 128.0);
        assert_eq!(c.machines[31].rack, Some(RackId(1)));
        crate::model::Instance::new(c, vec![], 10.0, 1).unwrap();
        let two = format!("{text}1,1,1,1,1\n");
        let e = read_tiresias_cluster_spec(two.as_bytes()).unwrap_err();
        assert!(matches!(e, TraceError::Format { line: 3, .. }));
        let zero = format!("{}\n1,0,4,40,256\n", SPEC_COLUMNS.join(","));
        let e = read_tiresias_cluster_spec(zero.as_bytes()).unwrap_err();
        assert!(
            matches!(e, TraceError::Format { line: 2, column: Some(ref c), .. } if c == "num_node_p_switch")
        );
    }
}
