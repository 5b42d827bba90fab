//! Alibaba PAI 2023 "openb" pod list (`openb_pod_list_default.csv` of
//! `alibaba/clusterdata`, `cluster-trace-gpu-v2023`; Weng et al., USENIX ATC
//! 2023).

use std::io::Read;
use std::path::Path;

use super::fields::{Row, with_header};
use super::{LoadReport, TraceError, TraceJob, with_file};
use crate::model::units::Num;

/// The header of `openb_pod_list_*.csv`.
pub(crate) const COLUMNS: &[&str] = &[
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
];

const PHASES: [&str; 4] = ["Running", "Failed", "Pending", "Succeeded"];

/// Loads an Alibaba 2023 openb pod list (`openb_pod_list_default.csv` and
/// its resamples). The file has no license: load it from the user's copy,
/// never ship it.
///
/// Mapping: `id = name`, `arrival_s = creation_time`,
/// `num_gpus = num_gpu` (0 for CPU-only pods), `gpu_fraction = gpu_milli /
/// 1000` when `num_gpu = 1` and `0 < gpu_milli < 1000` (GPU sharing),
/// `tenant = qos`, `duration_s = deletion_time − scheduled_time`, and
/// `censored = (pod_phase == "Running")` (still running at its last
/// observation). **Pending pods** (and any pod without a `scheduled_time`)
/// never ran: their `duration_s` is `None`; [`select`](super::select) drops
/// them by default. `cpu_milli`, `memory_mib` and `gpu_spec` are validated
/// but not kept. Rows come back in file order.
///
/// # Errors
///
/// [`TraceError::Io`], [`TraceError::Empty`], or [`TraceError::Format`] for
/// a wrong header, a missing or extra field, a negative or non-integer
/// count, `gpu_milli` above 1000, an unknown `pod_phase`, a non-finite or
/// negative time, or a `deletion_time` before the `scheduled_time` (or a
/// `scheduled_time` before the `creation_time`).
///
/// ```
/// use dmlsched::trace::load_alibaba_openb_pods;
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-pods-{}.csv", std::process::id()));
/// std::fs::write(&path, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,\
///                        qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
///                        pod-1,6000,12288,2,1000,V100M16,LS,Running,100,1100,200\n")?;
/// let report = load_alibaba_openb_pods(&path);
/// std::fs::remove_file(&path)?;
/// let pod = &report?.jobs[0];
/// assert_eq!((pod.id.as_str(), pod.num_gpus, pod.arrival_s), ("pod-1", 2, 100.0));
/// // Still running when last seen: 900 s is a lower bound on the duration.
/// assert_eq!((pod.duration_s, pod.censored), (Some(900.0), true));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_alibaba_openb_pods(path: impl AsRef<Path>) -> Result<LoadReport, TraceError> {
    with_file(path.as_ref(), read_alibaba_openb_pods)
}

/// [`load_alibaba_openb_pods`] from any reader.
///
/// # Errors
///
/// As [`load_alibaba_openb_pods`], without a path.
///
/// ```
/// use dmlsched::trace::read_alibaba_openb_pods;
///
/// let csv = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,\
///            qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
///            pod-1,6000,12288,1,500,,LS,Succeeded,100,1100,200\n\
///            pod-2,8000,30000,2,1000,V100M16,BE,Pending,150,400,\n";
/// let report = read_alibaba_openb_pods(csv.as_bytes())?;
/// let (shared, pending) = (&report.jobs[0], &report.jobs[1]);
/// assert_eq!(shared.gpu_fraction, Some(0.5)); // half of one GPU
/// assert_eq!(shared.duration_s, Some(900.0)); // deletion − scheduled
/// assert_eq!(shared.tenant.as_deref(), Some("LS"));
/// assert_eq!((pending.duration_s, pending.censored), (None, false)); // never ran
/// // An unknown phase is an error.
/// let lost = csv.replace("Succeeded", "Lost");
/// assert!(read_alibaba_openb_pods(lost.as_bytes()).is_err());
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
pub fn read_alibaba_openb_pods(reader: impl Read) -> Result<LoadReport, TraceError> {
    let mut report = LoadReport::default();
    for record in with_header(reader, COLUMNS)? {
        let (line, record) = record?;
        report.jobs.push(pod(&Row::new(line, &record, COLUMNS)?)?);
    }
    if report.jobs.is_empty() {
        return Err(TraceError::Empty { path: None });
    }
    Ok(report)
}

fn pod(row: &Row<'_>) -> Result<TraceJob, TraceError> {
    let name = row.required("name")?;
    row.count("cpu_milli", 0)?;
    row.count("memory_mib", 0)?;
    let gpus = row.count_u32("num_gpu", 0)?;
    let milli = row.count("gpu_milli", 0)?;
    if milli > 1000 {
        return Err(row.error("gpu_milli", format!("must be ≤ 1000, found {milli}")));
    }
    let qos = row.required("qos")?;
    let phase = row.required("pod_phase")?;
    if !PHASES.contains(&phase) {
        return Err(row.error(
            "pod_phase",
            format!(
                "expected one of {}, found `{}`",
                PHASES.join(", "),
                super::shown(phase)
            ),
        ));
    }
    let created = row.non_negative("creation_time")?;
    let deleted = row.non_negative("deletion_time")?;
    let scheduled = row.optional_non_negative("scheduled_time")?;
    if deleted < created {
        return Err(row.error(
            "deletion_time",
            format!(
                "{} is before the creation_time {}",
                Num(deleted),
                Num(created)
            ),
        ));
    }
    let duration = match scheduled {
        Some(s) if phase != "Pending" => {
            if s < created {
                return Err(row.error(
                    "scheduled_time",
                    format!("{} is before the creation_time {}", Num(s), Num(created)),
                ));
            }
            if deleted < s {
                return Err(row.error(
                    "deletion_time",
                    format!(
                        "{} is before the scheduled_time {}: negative duration",
                        Num(deleted),
                        Num(s)
                    ),
                ));
            }
            Some(deleted - s)
        }
        _ => None,
    };
    let mut job = TraceJob::new(name, created, gpus);
    job.raw_arrival = row.text("creation_time")?.to_string();
    job.gpu_fraction = (gpus == 1 && milli > 0 && milli < 1000).then(|| milli as f64 / 1000.0);
    job.tenant = Some(qos.to_string());
    job.duration_s = duration;
    job.censored = phase == "Running";
    Ok(job)
}

const NODE_COLUMNS: &[&str] = &["sn", "cpu_milli", "memory_mib", "gpu", "model"];

/// One node of an Alibaba openb node list.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AlibabaNode {
    /// Serial number (node id).
    pub sn: String,
    /// CPU, 1/1000 core.
    pub cpu_milli: u64,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// GPUs (0 for CPU-only nodes).
    pub gpus: u32,
    /// GPU model (`G2`, `T4`, `P100`, `V100M16`, …); may be empty for
    /// CPU-only nodes.
    pub model: String,
}

/// Loads an Alibaba openb node list (`openb_node_list_gpu_node.csv` or
/// `openb_node_list_all_node.csv`; header `sn,cpu_milli,memory_mib,gpu,model`),
/// in file order. Load it from the user's copy; the data has no license.
///
/// # Errors
///
/// [`TraceError::Io`], [`TraceError::Empty`], or [`TraceError::Format`] for
/// a wrong header, a missing or extra field, an empty `sn`, or a negative or
/// non-integer count.
///
/// ```
/// use dmlsched::trace::load_alibaba_nodes;
///
/// let path = std::env::temp_dir().join(format!("dmlsched-doc-nodes-{}.csv", std::process::id()));
/// std::fs::write(&path, "sn,cpu_milli,memory_mib,gpu,model\nnode-1,96000,786432,8,V100M32\n")?;
/// let nodes = load_alibaba_nodes(&path);
/// std::fs::remove_file(&path)?;
/// let nodes = nodes?;
/// let node = &nodes[0];
/// assert_eq!((node.sn.as_str(), node.gpus, node.model.as_str()), ("node-1", 8, "V100M32"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_alibaba_nodes(path: impl AsRef<Path>) -> Result<Vec<AlibabaNode>, TraceError> {
    with_file(path.as_ref(), read_alibaba_nodes)
}

/// [`load_alibaba_nodes`] from any reader.
///
/// # Errors
///
/// As [`load_alibaba_nodes`], without a path.
///
/// ```
/// use dmlsched::trace::{TraceError, read_alibaba_nodes};
///
/// let csv = "sn,cpu_milli,memory_mib,gpu,model\n\
///            node-1,64000,262144,2,G2\n\
///            node-2,32000,131072,0,\n";
/// let nodes = read_alibaba_nodes(csv.as_bytes())?;
/// assert_eq!((nodes[0].cpu_milli, nodes[0].gpus, nodes[0].model.as_str()), (64000, 2, "G2"));
/// assert_eq!((nodes[1].gpus, nodes[1].model.as_str()), (0, "")); // a CPU-only node
/// let negative = csv.replace(",2,G2", ",-2,G2");
/// let err = read_alibaba_nodes(negative.as_bytes());
/// assert!(matches!(err, Err(TraceError::Format { line: 2, column: Some(c), .. }) if c == "gpu"));
/// # Ok::<(), TraceError>(())
/// ```
pub fn read_alibaba_nodes(reader: impl Read) -> Result<Vec<AlibabaNode>, TraceError> {
    let mut nodes = Vec::new();
    for record in with_header(reader, NODE_COLUMNS)? {
        let (line, record) = record?;
        let row = Row::new(line, &record, NODE_COLUMNS)?;
        nodes.push(AlibabaNode {
            sn: row.required("sn")?.to_string(),
            cpu_milli: row.count("cpu_milli", 0)?,
            memory_mib: row.count("memory_mib", 0)?,
            gpus: row.count_u32("gpu", 0)?,
            model: row.text("model")?.to_string(),
        });
    }
    if nodes.is_empty() {
        return Err(TraceError::Empty { path: None });
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rows: &str) -> Result<LoadReport, TraceError> {
        let text = format!("{}\n{rows}", COLUMNS.join(","));
        read_alibaba_openb_pods(text.as_bytes())
    }

    #[test]
    fn spec_rows() {
        let r = load(
            "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n\
             openb-pod-0002,8000,30000,2,1000,V100M16|V100M32,BE,Pending,500000,500100,\n\
             openb-pod-0003,4000,1024,0,0,,Burstable,Succeeded,10,100,20\n",
        )
        .unwrap();
        let a = &r.jobs[0];
        assert_eq!(a.num_gpus, 1);
        assert_eq!(a.gpu_fraction, Some(0.46));
        assert_eq!(a.duration_s, Some(12_475_899.0));
        assert!(a.censored);
        assert_eq!(a.tenant.as_deref(), Some("LS"));
        let p = &r.jobs[1];
        assert_eq!(
            (p.duration_s, p.censored, p.gpu_fraction),
            (None, false, None)
        );
        let c = &r.jobs[2];
        assert_eq!((c.num_gpus, c.duration_s), (0, Some(80.0)));
    }

    #[test]
    fn nodes() {
        let text = "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0001,64000,262144,2,G2\nopenb-node-0002,96000,786432,8,V100M32\n";
        let nodes = read_alibaba_nodes(text.as_bytes()).unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!((nodes[1].gpus, nodes[1].model.as_str()), (8, "V100M32"));
        let bad = "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,-2,T4\n";
        let e = read_alibaba_nodes(bad.as_bytes()).unwrap_err();
        assert!(matches!(e, TraceError::Format { line: 2, column: Some(ref c), .. } if c == "gpu"));
    }

    #[test]
    fn bad_rows() {
        let cases = [
            ("p,1,1,1,1001,,LS,Running,1,2,1", "gpu_milli"),
            ("p,1,1,1,100,,LS,Lost,1,2,1", "pod_phase"),
            ("p,1,1,1,100,,LS,Running,5,8,9", "deletion_time"),
            ("p,1,1,1,100,,LS,Running,5,8,4", "scheduled_time"),
            ("p,1,1,-1,100,,LS,Running,5,8,6", "num_gpu"),
            ("p,1,1,1,100,,LS,Running,NaN,8,6", "creation_time"),
        ];
        for (row, column) in cases {
            let e = load(row).unwrap_err();
            assert!(
                matches!(e, TraceError::Format { line: 2, column: Some(ref c), .. } if c == column),
                "{row}: {e}"
            );
        }
    }
}
