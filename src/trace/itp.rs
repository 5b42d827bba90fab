//! Microsoft ITP and ElasticFlow CSVs (the traces of the ElasticFlow
//! artifact, Gu et al., ASPLOS 2023).

use std::io::Read;
use std::path::Path;

use super::fields::{Row, check_header, format_error, header_fields, records};
use super::{LoadReport, TraceError, TraceJob, with_file};
use crate::model::units::Num;

const RAW: &[&str] = &["job_id", "submission_time", "duration", "num_gpu"];
const ELASTICFLOW: &[&str] = &[
    "job_id",
    "submission_time",
    "num_iteration",
    "model_name",
    "deadline",
    "batch_size",
    "num_gpu",
    "duration",
];
const ELASTICFLOW_VC: &[&str] = &[
    "job_id",
    "submit_time",
    "real_iteration",
    "model_name",
    "ddl",
    "batch_size",
    "num_gpu",
    "real_duration",
    "duration",
    "iteration",
];

/// The three ITP-family layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Raw ITP: `job_id,submission_time,duration,num_gpu`.
    Raw,
    /// ElasticFlow-augmented ITP (8 columns).
    ElasticFlow,
    /// ElasticFlow's per-VC Philly-derived file (10 columns).
    ElasticFlowVc,
}

impl Layout {
    fn columns(self) -> &'static [&'static str] {
        match self {
            Layout::Raw => RAW,
            Layout::ElasticFlow => ELASTICFLOW,
            Layout::ElasticFlowVc => ELASTICFLOW_VC,
        }
    }

    /// The layout whose header this is exactly.
    pub(crate) fn from_header(header: &[&str]) -> Option<Layout> {
        [Layout::Raw, Layout::ElasticFlow, Layout::ElasticFlowVc]
            .into_iter()
            .find(|l| header == l.columns())
    }

    /// The layout a (possibly wrong) header is closest to, for the error
    /// message: chosen by field count, then by the second column.
    fn closest(header: &[&str]) -> Layout {
        match header.len() {
            0..=5 => Layout::Raw,
            6..=8 => Layout::ElasticFlow,
            _ if header.get(1) == Some(&"submission_time") => Layout::ElasticFlow,
            _ => Layout::ElasticFlowVc,
        }
    }
}

/// The tenant an ITP file's jobs get: the file stem (e.g. `cluster02` for
/// `cluster02.csv`).
pub(crate) fn tenant_from_path(path: &Path) -> Option<String> {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}

/// Loads an ITP-family CSV, detecting the layout from the header: raw ITP
/// (4 columns), ElasticFlow-augmented ITP (8 columns) or ElasticFlow's per-VC
/// Philly-derived file (10 columns). The tenant of every job is the file
/// stem (the cluster or VC name).
///
/// Mapping: `id = job_id`, `arrival_s` =
/// `submission_time` / `submit_time` (raw seconds), `duration_s = duration`,
/// `num_gpus = num_gpu`. The ElasticFlow layouts add `iterations`
/// (`num_iteration` / `iteration`), `model` (`model_is_synthetic = true`),
/// `batch_size` and the **absolute** `deadline_s` (`deadline` / `ddl`). In
/// the 10-column layout the `real_*` columns must equal the unprefixed ones;
/// a difference is a warning. Rows come back in file order.
///
/// # Errors
///
/// [`TraceError::Io`], [`TraceError::Empty`], or [`TraceError::Format`] for
/// an unknown header, a missing or extra field, a non-finite or negative
/// time, a GPU count or batch size below 1, or a deadline before the
/// submission.
///
/// ```
/// use dmlsched::trace::load_itp_csv;
///
/// // The file stem names the tenant: write `cluster02.csv` in a fresh folder.
/// let dir = std::env::temp_dir().join(format!("dmlsched-doc-itp-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("cluster02.csv");
/// std::fs::write(&path, "job_id,submission_time,duration,num_gpu\nj1,120,3600,4\n")?;
/// let report = load_itp_csv(&path);
/// std::fs::remove_dir_all(&dir)?;
/// let job = &report?.jobs[0];
/// assert_eq!((job.id.as_str(), job.arrival_s, job.num_gpus), ("j1", 120.0, 4));
/// assert_eq!((job.duration_s, job.tenant.as_deref()), (Some(3600.0), Some("cluster02")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_itp_csv(path: impl AsRef<Path>) -> Result<LoadReport, TraceError> {
    let path = path.as_ref();
    let tenant = tenant_from_path(path);
    with_file(path, |f| read_itp_csv(f, tenant.as_deref()))
}

/// [`load_itp_csv`] from any reader; `tenant` names the cluster.
///
/// # Errors
///
/// As [`load_itp_csv`], without a path.
///
/// ```
/// use dmlsched::trace::{TraceError, read_itp_csv};
///
/// let csv = "job_id,submission_time,num_iteration,model_name,\
///            deadline,batch_size,num_gpu,duration\n\
///            7,100,5000,resnet50,4100,64,8,3000\n";
/// let report = read_itp_csv(csv.as_bytes(), Some("vc1"))?;
/// let job = &report.jobs[0];
/// assert_eq!((job.num_gpus, job.iterations, job.batch_size), (8, Some(5000), Some(64)));
/// assert_eq!(job.deadline_s, Some(4100.0)); // absolute, on the arrivals' clock
/// assert_eq!(job.model.as_deref(), Some("resnet50"));
/// assert!(job.model_is_synthetic);
/// assert_eq!(job.tenant.as_deref(), Some("vc1"));
/// // A deadline before the submission is an error naming its line and column.
/// let early = csv.replace(",4100,", ",50,");
/// let err = read_itp_csv(early.as_bytes(), None);
/// let Err(TraceError::Format { line, column, .. }) = err else { panic!("{err:?}") };
/// assert_eq!((line, column.as_deref()), (2, Some("deadline")));
/// # Ok::<(), TraceError>(())
/// ```
pub fn read_itp_csv(reader: impl Read, tenant: Option<&str>) -> Result<LoadReport, TraceError> {
    let mut it = records(reader, b',')?;
    let (line, header) = it.next().ok_or(TraceError::Empty { path: None })??;
    let found = header_fields(&header);
    let layout = match Layout::from_header(&found) {
        Some(l) => l,
        None => {
            let closest = Layout::closest(&found);
            check_header(line, &found, closest.columns())?;
            return Err(format_error(line, None, "unknown ITP header"));
        }
    };
    let columns = layout.columns();
    it.set_columns(columns);
    let mut report = LoadReport::default();
    for record in it {
        let (line, record) = record?;
        let row = Row::new(line, &record, columns)?;
        let job = match layout {
            Layout::Raw => raw_job(&row)?,
            Layout::ElasticFlow => {
                elasticflow_job(&row, "submission_time", "num_iteration", "deadline")?
            }
            Layout::ElasticFlowVc => {
                for (real, plain) in [
                    ("real_iteration", "iteration"),
                    ("real_duration", "duration"),
                ] {
                    let (a, b) = (row.number(real)?, row.number(plain)?);
                    if a != b {
                        report.warnings.push(row.warning(
                            real,
                            format!("{real} = {} differs from {plain} = {}", Num(a), Num(b)),
                        ));
                    }
                }
                elasticflow_job(&row, "submit_time", "iteration", "ddl")?
            }
        };
        report.jobs.push(TraceJob {
            tenant: tenant.map(str::to_string),
            ..job
        });
    }
    if report.jobs.is_empty() {
        return Err(TraceError::Empty { path: None });
    }
    Ok(report)
}

/// The fields every layout shares.
fn common(row: &Row<'_>, submit: &str) -> Result<TraceJob, TraceError> {
    let id = row.required("job_id")?;
    let arrival = row.non_negative(submit)?;
    let gpus = row.count_u32("num_gpu", 1)?;
    let mut job = TraceJob::new(id, arrival, gpus);
    job.raw_arrival = row.text(submit)?.to_string();
    job.duration_s = Some(row.non_negative("duration")?);
    Ok(job)
}

fn raw_job(row: &Row<'_>) -> Result<TraceJob, TraceError> {
    common(row, "submission_time")
}

fn elasticflow_job(
    row: &Row<'_>,
    submit: &str,
    iterations: &str,
    deadline: &str,
) -> Result<TraceJob, TraceError> {
    let mut job = common(row, submit)?;
    job.iterations = Some(row.count(iterations, 0)?);
    job.model = Some(row.required("model_name")?.to_string());
    job.model_is_synthetic = true;
    job.batch_size = Some(row.count_u32("batch_size", 1)?);
    let d = row.non_negative(deadline)?;
    if d < job.arrival_s {
        return Err(row.error(
            deadline,
            format!(
                "deadline {} is before the submission at {}",
                Num(d),
                Num(job.arrival_s)
            ),
        ));
    }
    job.deadline_s = Some(d);
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_elasticflow_line() {
        let text = "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n\
                    f60b9881-x,5010,7628,bert,5985,64,1,1265\n";
        let r = read_itp_csv(text.as_bytes(), Some("cluster02")).unwrap();
        let j = &r.jobs[0];
        assert_eq!(j.arrival_s, 5010.0);
        assert_eq!(j.duration_s, Some(1265.0));
        assert_eq!(j.deadline_s, Some(5985.0));
        assert_eq!(j.model.as_deref(), Some("bert"));
        assert!(j.model_is_synthetic);
        assert_eq!(
            (j.batch_size, j.num_gpus, j.iterations),
            (Some(64), 1, Some(7628))
        );
        assert_eq!(j.tenant.as_deref(), Some("cluster02"));
        let slack = (j.deadline_s.unwrap() - j.arrival_s) / j.duration_s.unwrap();
        assert!((slack - 0.77).abs() < 0.005);
    }

    #[test]
    fn per_vc_layout_and_real_column_check() {
        let text = "job_id,submit_time,real_iteration,model_name,ddl,batch_size,num_gpu,real_duration,duration,iteration\n\
                    7,100,50,resnet50,400,32,2,200,200,50\n\
                    8,150,60,vgg16,300,32,1,100,101,60\n";
        let r = read_itp_csv(text.as_bytes(), None).unwrap();
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs[0].deadline_s, Some(400.0));
        assert_eq!(r.jobs[0].iterations, Some(50));
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].line, 3);
    }

    #[test]
    fn wrong_header_names_the_column() {
        let text = "job_id,submit_time,duration,num_gpu\n1,2,3,4\n";
        let e = read_itp_csv(text.as_bytes(), None).unwrap_err();
        assert!(
            matches!(e, TraceError::Format { line: 1, column: Some(ref c), .. } if c == "submission_time"),
            "{e}"
        );
    }

    #[test]
    fn deadline_before_submission() {
        let text = "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n\
                    a,5010,7628,bert,5000,64,1,1265\n";
        let e = read_itp_csv(text.as_bytes(), None).unwrap_err();
        assert!(
            matches!(e, TraceError::Format { line: 2, column: Some(ref c), .. } if c == "deadline")
        );
    }
}
