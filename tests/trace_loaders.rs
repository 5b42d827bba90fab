//! Trace loaders: one hand-checkable line per format, malformed
//! inputs for every format (with the error's line and column), and the real
//! files in the folder named by `DMLSCHED_TRACES`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use dmlsched::trace::catalog::PHILLY_GPU_COUNTS;
use dmlsched::trace::date::{format_datetime, parse_date};
use dmlsched::trace::*;

const PHILLY_HEADER: &str = "timestamp,duration,num_gpus,gpu_time,cluster";
const ITP_HEADER: &str = "job_id,submission_time,duration,num_gpu";
const EF_HEADER: &str =
    "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration";
const TIRESIAS_HEADER: &str = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval";
const ALIBABA_HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time";

const GAVEL_7: &str = "Transformer (batch size 128)\tcd %s/translation && python3 train.py -batch_size 128\t-step\t1\t20851471\t0.000000\t1";
const GAVEL_12: &str = "ResNet-18 (batch size 64)\tpython3 main.py --batch_size 64\timage_classification/cifar10\t--num_steps\t0\t2000\t1\tgns\t1\t-1.000000\t1418\t0";

/// Reads `text` with the loader of `format`.
fn read(format: TraceFormat, text: &str) -> Result<LoadReport, TraceError> {
    read_format(text.as_bytes(), format, None)
}

/// A file in the temp folder holding `text`, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("dmlsched-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn assert_format_error(result: Result<LoadReport, TraceError>, line: u64, column: Option<&str>) {
    match result {
        Err(TraceError::Format {
            line: l, column: c, ..
        }) => {
            assert_eq!((l, c.as_deref()), (line, column), "wrong place");
        }
        other => panic!("expected a format error at line {line}, got {other:?}"),
    }
}

// ------------------------------------------------- hand-checkable lines

#[test]
fn philly_spec_line() {
    let text = format!("{PHILLY_HEADER}\n2017-10-07 01:11:39,193256.0,8,1546048.0,ee9e8c\n");
    let jobs = read(TraceFormat::Philly, &text).unwrap().jobs;
    let j = &jobs[0];
    assert_eq!(j.num_gpus, 8);
    assert_eq!(j.duration_s, Some(193_256.0));
    assert_eq!(j.gpu_seconds(), Some(193_256.0 * 8.0));
    assert_eq!(j.tenant.as_deref(), Some("ee9e8c"));
    assert_eq!(j.model, None);
    // With origin 2017-10-07 00:00:00 the job arrives at 4,299 s.
    let window = Window {
        start: Some(WindowStart::Date("2017-10-07".into())),
        origin: Origin::WindowStart,
        ..Window::default()
    };
    let w = select(&jobs, &window).unwrap();
    assert_eq!(w[0].arrival_s, 4299.0);
    assert_eq!(w[0].raw_arrival, "2017-10-07 01:11:39");
    // The default origin is the first arrival.
    assert_eq!(select(&jobs, &Window::default()).unwrap()[0].arrival_s, 0.0);
}

#[test]
fn gavel_spec_lines() {
    let j = &read(TraceFormat::Gavel, GAVEL_7).unwrap().jobs[0];
    assert_eq!(j.model.as_deref(), Some("Transformer"));
    assert_eq!(j.batch_size, Some(128));
    assert_eq!(j.iterations, Some(20_851_471));
    assert_eq!((j.arrival_s, j.num_gpus), (0.0, 1));
    assert!(j.model_is_synthetic);
    assert_eq!(j.duration_s, None);
    assert_eq!(j.id, "gavel-0");

    let j = &read(TraceFormat::Gavel, GAVEL_12).unwrap().jobs[0];
    assert_eq!(j.num_gpus, 1);
    assert_eq!(j.mode.as_deref(), Some("gns"));
    assert_eq!(j.duration_s, Some(1418.0));
    assert_eq!(j.arrival_s, 0.0);
    assert_eq!(j.iterations, Some(2000));
    assert!(!j.model_is_synthetic);

    // A 9-field line is a format error naming its line.
    let nine = "A3C\tcmd\twd\t-s\t0\t5\t1\t1\t0";
    assert_format_error(read(TraceFormat::Gavel, nine), 1, None);
    let text = format!("{GAVEL_7}\n{GAVEL_7}\n{nine}\n");
    assert_format_error(read(TraceFormat::Gavel, &text), 3, None);
}

#[test]
fn tiresias_spec_row() {
    let text = format!("{TIRESIAS_HEADER}\n0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n");
    let report = read(TraceFormat::Tiresias, &text).unwrap();
    let j = &report.jobs[1];
    assert_eq!((j.num_gpus, j.arrival_s), (8, 30.0));
    assert_eq!((j.iterations, j.duration_s), (Some(133), Some(147.0)));
    // The previous row's interval (30) matches 30 − 0: no warning.
    assert!(report.warnings.is_empty());
    // A mismatch is a warning on the earlier row's line, not an error.
    let text = format!("{TIRESIAS_HEADER}\n0,1,0,606,vgg19,164,29\n1,8,30,133,vgg11,147,23\n");
    let report = read(TraceFormat::Tiresias, &text).unwrap();
    assert_eq!(report.jobs.len(), 2);
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.warnings[0].line, 2);
    assert_eq!(report.warnings[0].column.as_deref(), Some("interval"));
}

#[test]
fn alibaba_spec_rows() {
    let text = format!(
        "{ALIBABA_HEADER}\n\
         openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n\
         openb-pod-0002,6000,12288,1,1000,,BE,Pending,500000,600000,\n"
    );
    let jobs = read(TraceFormat::Alibaba, &text).unwrap().jobs;
    let j = &jobs[0];
    assert_eq!(j.num_gpus, 1);
    assert_eq!(j.gpu_fraction, Some(0.46));
    assert_eq!(j.duration_s, Some(12_475_899.0));
    assert!(j.censored);
    // Queueing = scheduled − creation = 0; the arrival is the creation time.
    assert_eq!(j.arrival_s, 427_061.0);
    let pending = &jobs[1];
    assert_eq!(pending.duration_s, None);
    assert!(!pending.censored);
    // The window drops the pending pod by default, and keeps it on request.
    assert_eq!(select(&jobs, &Window::default()).unwrap().len(), 1);
    let keep = Window {
        drop_pending: false,
        ..Window::default()
    };
    assert_eq!(select(&jobs, &keep).unwrap().len(), 2);
}

#[test]
fn itp_and_elasticflow_spec_rows() {
    let text = format!(
        "{EF_HEADER}\nf60b9881-76f3-6fc7-d009-6b2a00419afc,5010,7628,bert,5985,64,1,1265\n"
    );
    let j = &read(TraceFormat::Itp, &text).unwrap().jobs[0];
    assert_eq!(j.arrival_s, 5010.0);
    assert_eq!(j.duration_s, Some(1265.0));
    assert_eq!(j.deadline_s, Some(5985.0));
    assert_eq!(j.model.as_deref(), Some("bert"));
    assert_eq!((j.batch_size, j.num_gpus), (Some(64), 1));
    assert!(j.model_is_synthetic);
    let slack = (j.deadline_s.unwrap() - j.arrival_s) / j.duration_s.unwrap();
    assert!((slack - 0.77).abs() < 0.005, "{slack}");

    let raw = format!("{ITP_HEADER}\nf60b9881,5010,1265,1\nfd9f45f4,5016,2066,1\n");
    let jobs = read(TraceFormat::Itp, &raw).unwrap().jobs;
    assert_eq!(jobs[1].id, "fd9f45f4");
    assert_eq!(
        (jobs[1].arrival_s, jobs[1].duration_s),
        (5016.0, Some(2066.0))
    );
    assert_eq!(jobs[1].model, None);
    assert!(!jobs[1].model_is_synthetic);
    // Re-basing moves the deadline with the arrival.
    let ef = read(TraceFormat::Itp, &text).unwrap().jobs;
    let w = select(&ef, &Window::default()).unwrap();
    assert_eq!((w[0].arrival_s, w[0].deadline_s), (0.0, Some(975.0)));
}

// ------------------------------------------------------------ malformed input

/// `(format, header, good row, bad row, column named by the error)`.
type Case = (
    TraceFormat,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
);

fn malformed_cases() -> Vec<Case> {
    use TraceFormat::*;
    let ph = PHILLY_HEADER;
    let pg = "2017-10-07 01:11:39,10.0,1,10.0,vc";
    let ip = ITP_HEADER;
    let ig = "a,5010,1265,1";
    let ti = TIRESIAS_HEADER;
    let tg = "0,1,0,606,vgg19,164,30";
    let al = ALIBABA_HEADER;
    let ag = "p0,6000,12288,1,460,,LS,Succeeded,10,20,10";
    vec![
        // Missing columns.
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,10.0,1,10.0",
            Some("cluster"),
        ),
        (Itp, ip, ig, "b,5011,1265", Some("num_gpu")),
        (Tiresias, ti, tg, "1,8,30,133,vgg11,147", Some("interval")),
        (
            Alibaba,
            al,
            ag,
            "p1,6000,12288,1,460,,LS,Running,10,20",
            Some("scheduled_time"),
        ),
        // Negative durations and arrivals.
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,-10.0,1,10.0,vc",
            Some("duration"),
        ),
        (Itp, ip, ig, "b,5011,-3,1", Some("duration")),
        (Itp, ip, ig, "b,-5011,3,1", Some("submission_time")),
        (
            Tiresias,
            ti,
            tg,
            "1,8,30,133,vgg11,-147,23",
            Some("duration"),
        ),
        (
            Tiresias,
            ti,
            tg,
            "1,8,-30,133,vgg11,147,23",
            Some("submit_time"),
        ),
        (
            Alibaba,
            al,
            ag,
            "p1,6000,12288,1,460,,LS,Running,10,20,30",
            Some("deletion_time"),
        ),
        // NaN and infinity.
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,NaN,1,10.0,vc",
            Some("duration"),
        ),
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,10,1,inf,vc",
            Some("gpu_time"),
        ),
        (Itp, ip, ig, "b,NaN,3,1", Some("submission_time")),
        (
            Tiresias,
            ti,
            tg,
            "1,8,30,133,vgg11,NaN,23",
            Some("duration"),
        ),
        (
            Alibaba,
            al,
            ag,
            "p1,6000,12288,1,460,,LS,Running,10,inf,10",
            Some("deletion_time"),
        ),
        // Non-numeric values, zero GPUs, fractional counts.
        (
            Philly,
            ph,
            pg,
            "yesterday,10.0,1,10.0,vc",
            Some("timestamp"),
        ),
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,10.0,0,0.0,vc",
            Some("num_gpus"),
        ),
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,10.0,1.5,15.0,vc",
            Some("num_gpus"),
        ),
        (Itp, ip, ig, "b,5011,3,zero", Some("num_gpu")),
        (Tiresias, ti, tg, "1,0,30,133,vgg11,147,23", Some("num_gpu")),
        (Tiresias, ti, tg, "1,8,30,133,,147,23", Some("model_name")),
        (
            Alibaba,
            al,
            ag,
            "p1,6000,12288,one,460,,LS,Running,10,20,10",
            Some("num_gpu"),
        ),
        // Too many fields.
        (
            Philly,
            ph,
            pg,
            "2017-10-07 01:11:39,10.0,1,10.0,vc,extra",
            None,
        ),
    ]
}

#[test]
fn malformed_rows_name_line_and_column() {
    for (format, header, good, bad, column) in malformed_cases() {
        // Bad row on line 3, after a blank line 2... no: good row on 2, bad on 3.
        let text = format!("{header}\n{good}\n{bad}\n");
        assert_format_error(read(format, &text), 3, column);
        // Lines count blank lines and CRLF terminators too.
        let text = format!("{header}\r\n{good}\r\n\r\n{bad}\r\n");
        assert_format_error(read(format, &text), 4, column);
    }
    // Gavel (tab-separated, no header).
    let bad_gavel = [
        ("A3C\tc\t-s\t1\t100\t-5\t1", "arrival_time"),
        ("A3C\tc\t-s\t1\tNaN\t5\t1", "total_steps"),
        ("A3C\tc\t-s\t1\t100\tinf\t1", "arrival_time"),
        ("A3C\tc\t-s\t1\t100\t5\t0", "scale_factor"),
        ("A3C (batch size x)\tc\t-s\t1\t100\t5\t1", "job_type"),
        ("\tc\t-s\t1\t100\t5\t1", "job_type"),
    ];
    for (bad, column) in bad_gavel {
        let text = format!("{GAVEL_7}\n{bad}\n");
        assert_format_error(read(TraceFormat::Gavel, &text), 2, Some(column));
    }
    let bad_shockwave = GAVEL_12.replace("\t1418\t", "\t-1418\t");
    assert_format_error(
        read(TraceFormat::Gavel, &format!("{GAVEL_12}\n{bad_shockwave}")),
        2,
        Some("duration"),
    );
}

#[test]
fn wrong_headers_name_the_column() {
    let cases = [
        (
            TraceFormat::Philly,
            "timestamp,duration,gpus,gpu_time,cluster",
            Some("num_gpus"),
        ),
        (
            TraceFormat::Philly,
            "timestamp,duration,num_gpus,gpu_time",
            Some("cluster"),
        ),
        (
            TraceFormat::Philly,
            "timestamp,duration,num_gpus,gpu_time,cluster,x",
            None,
        ),
        (
            TraceFormat::Itp,
            "job_id,submission_time,runtime,num_gpu",
            Some("duration"),
        ),
        (
            TraceFormat::Tiresias,
            "job_id,num_gpus,submit_time,iterations,model_name,duration,interval",
            Some("num_gpu"),
        ),
        (TraceFormat::Alibaba, "name,cpu_milli", Some("memory_mib")),
    ];
    for (format, header, column) in cases {
        let text = format!("{header}\n1,2,3,4,5\n");
        assert_format_error(read(format, &text), 1, column);
    }
}

#[test]
fn empty_inputs() {
    for format in TraceFormat::ALL {
        for text in ["", "\n\n"] {
            assert!(
                matches!(read(format, text), Err(TraceError::Empty { path: None })),
                "{format}: {text:?}"
            );
        }
    }
    for (format, header) in [
        (TraceFormat::Philly, PHILLY_HEADER),
        (TraceFormat::Itp, ITP_HEADER),
        (TraceFormat::Tiresias, TIRESIAS_HEADER),
        (TraceFormat::Alibaba, ALIBABA_HEADER),
    ] {
        let text = format!("{header}\n");
        assert!(
            matches!(read(format, &text), Err(TraceError::Empty { .. })),
            "{format}"
        );
    }
    let empty = TempFile::new("empty.csv", "");
    match load(&empty.0, None) {
        Err(TraceError::Empty { path: Some(p) }) => assert_eq!(p, empty.0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unsorted_rows_come_back_in_file_order() {
    let cases = [
        (
            TraceFormat::Philly,
            format!(
                "{PHILLY_HEADER}\n2017-10-09 07:01:55,66.0,1,66.0,a\n2017-10-09 06:13:03,10.0,2,20.0,b\n2017-09-29 07:58:32,5.0,1,5.0,c\n"
            ),
        ),
        (
            TraceFormat::Itp,
            format!("{ITP_HEADER}\na,300,700,1\nb,200,700,1\nc,100,700,1\n"),
        ),
        (
            TraceFormat::Gavel,
            "A3C\tc\t-s\t0\t5\t300\t1\nA3C\tc\t-s\t0\t5\t200\t1\nA3C\tc\t-s\t0\t5\t100\t1\n"
                .to_string(),
        ),
        (
            TraceFormat::Tiresias,
            format!(
                "{TIRESIAS_HEADER}\n0,1,300,1,vgg19,5,-100\n1,1,200,1,vgg19,5,-100\n2,1,100,1,vgg19,5,0\n"
            ),
        ),
        (
            TraceFormat::Alibaba,
            format!(
                "{ALIBABA_HEADER}\na,1,1,1,1000,,LS,Failed,300,400,300\nb,1,1,1,1000,,LS,Failed,200,400,300\nc,1,1,1,1000,,LS,Failed,100,400,300\n"
            ),
        ),
    ];
    for (format, text) in cases {
        let mut jobs = read(format, &text).unwrap().jobs;
        let arrivals: Vec<f64> = jobs.iter().map(|j| j.arrival_s).collect();
        assert!(
            arrivals[0] > arrivals[1] && arrivals[1] > arrivals[2],
            "{format}: {arrivals:?}"
        );
        let ids: Vec<String> = jobs.iter().map(|j| j.id.clone()).collect();
        sort_by_arrival(&mut jobs);
        let sorted: Vec<String> = jobs.iter().map(|j| j.id.clone()).collect();
        assert_eq!(
            sorted,
            [ids[2].clone(), ids[1].clone(), ids[0].clone()],
            "{format}"
        );
        assert!(jobs.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
    }
}

#[test]
fn load_guesses_the_format_and_names_the_path() {
    let philly = TempFile::new(
        "p.csv",
        &format!("{PHILLY_HEADER}\n2017-10-07 01:11:39,193256.0,8,1546048.0,ee9e8c\n"),
    );
    let jobs = load(&philly.0, None).unwrap();
    assert_eq!(jobs[0].num_gpus, 8);
    assert_eq!(load(&philly.0, Some(TraceFormat::Philly)).unwrap(), jobs);
    // A format that does not match the header is a header error on line 1.
    match load(&philly.0, Some(TraceFormat::Tiresias)) {
        Err(TraceError::Format { path, line: 1, .. }) => {
            assert_eq!(path.as_deref(), Some(philly.0.as_path()))
        }
        other => panic!("{other:?}"),
    }

    let gavel = TempFile::new("g.trace", &format!("\u{feff}{GAVEL_7}\n{GAVEL_7}\n"));
    let jobs = load(&gavel.0, None).unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].model.as_deref(), Some("Transformer"));
    // Leading blank lines are skipped when guessing, and still counted.
    let blank = TempFile::new(
        "b.csv",
        &format!("\n\n{PHILLY_HEADER}\n2017-10-07 01:11:39,x,8,1.0,a\n"),
    );
    match load(&blank.0, None) {
        Err(TraceError::Format { line: 4, .. }) => {}
        other => panic!("{other:?}"),
    }

    let itp = TempFile::new("cluster02.csv", &format!("{ITP_HEADER}\na,5010,1265,1\n"));
    let jobs = load(&itp.0, None).unwrap();
    let stem = itp.0.file_stem().unwrap().to_string_lossy().into_owned();
    assert_eq!(jobs[0].tenant.as_deref(), Some(stem.as_str()));

    let unknown = TempFile::new("u.csv", "a,b,c\n1,2,3\n");
    assert!(matches!(
        load(&unknown.0, None),
        Err(TraceError::UnknownFormat { .. })
    ));

    let bad = TempFile::new(
        "bad.csv",
        &format!("{PHILLY_HEADER}\n2017-10-07 01:11:39,x,8,1.0,a\n"),
    );
    let e = load(&bad.0, None).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("bad.csv") && msg.contains("line 2") && msg.contains("duration"),
        "{msg}"
    );

    let missing = Path::new("/nonexistent/dmlsched/trace.csv");
    for result in [
        load(missing, None).map(|_| ()),
        load_philly_pollux_csv(missing).map(|_| ()),
        load_gavel_trace(missing).map(|_| ()),
        load_itp_csv(missing).map(|_| ()),
        load_tiresias_csv(missing).map(|_| ()),
        load_alibaba_openb_pods(missing).map(|_| ()),
    ] {
        match result {
            Err(TraceError::Io { path: Some(p), .. }) => assert_eq!(p, missing),
            other => panic!("{other:?}"),
        }
    }
    // The crate error wraps trace errors.
    let e: dmlsched::Error = load(missing, None).unwrap_err().into();
    assert!(e.to_string().starts_with("trace: "));
}

// ---------------------------------------------------------------- real files

/// The folder of real traces, or `None` (with a visible message) when
/// `DMLSCHED_TRACES` is not set.
fn traces() -> Option<PathBuf> {
    match std::env::var_os("DMLSCHED_TRACES") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("skipping: DMLSCHED_TRACES is not set");
            None
        }
    }
}

#[test]
fn real_philly() {
    let Some(dir) = traces() else { return };
    let path = dir.join("philly.csv");
    let t = Instant::now();
    let report = load_philly_pollux_csv(&path).unwrap();
    eprintln!(
        "philly.csv: {} rows loaded in {:.2?}",
        report.jobs.len(),
        t.elapsed()
    );
    assert!(report.warnings.is_empty(), "{:?}", &report.warnings[..1]);
    let jobs = report.jobs;
    let s = summary(&jobs);
    assert_eq!(s.jobs, 82_247);
    assert_eq!(s.gpu_histogram[&1], 76_627);
    let expected: BTreeMap<u32, usize> = PHILLY_GPU_COUNTS
        .iter()
        .map(|&(g, n)| (g, n as usize))
        .collect();
    assert_eq!(s.gpu_histogram, expected);
    assert_eq!(s.duration_p10_s, Some(61.0));
    assert_eq!(s.duration_p50_s, Some(1144.0));
    assert_eq!(s.duration_p90_s, Some(11_266.0));
    assert_eq!(s.duration_p99_s, Some(254_884.0));
    assert_eq!(s.duration_max_s, Some(4_628_226.0));
    assert!(
        (s.total_gpu_hours - 978_078.5).abs() < 1.0,
        "{}",
        s.total_gpu_hours
    );
    assert_eq!(
        jobs.iter().filter(|j| j.duration_s < Some(60.0)).count(),
        7654
    );
    let (first, last) = s.arrival_span_s.unwrap();
    assert_eq!(format_datetime(first as i64), "2017-09-04 10:30:41");
    assert_eq!(format_datetime(last as i64), "2017-12-22 08:02:11");
    // The file is not sorted; loaders keep its order.
    assert!(jobs.windows(2).any(|w| w[0].arrival_s > w[1].arrival_s));
    assert_eq!(jobs[0].raw_arrival, "2017-10-09 07:01:55");
    // The largest VC.
    assert_eq!(
        jobs.iter()
            .filter(|j| j.tenant.as_deref() == Some("6214e9"))
            .count(),
        41_226
    );

    // A 5,000-job window from 2017-11-01, re-based to its first job.
    let window = Window {
        start: Some(WindowStart::Date("2017-11-01".into())),
        jobs: Some(5000),
        ..Window::default()
    };
    let w = select(&jobs, &window).unwrap();
    assert_eq!(w.len(), 5000);
    assert_eq!(w[0].arrival_s, 0.0);
    assert!(w.windows(2).all(|p| p[0].arrival_s <= p[1].arrival_s));
    assert!(parse_date(&w[0].raw_arrival[..10]).unwrap() >= parse_date("2017-11-01").unwrap());

    // The generic loader guesses the format and agrees.
    assert_eq!(load(&path, None).unwrap().len(), 82_247);
    let filtered = PhillyFilter::pollux().apply(&jobs);
    eprintln!(
        "philly.csv: {} jobs pass the Pollux filters",
        filtered.len()
    );
    assert!(filtered.len() < jobs.len() - 7654 + 1);
}

#[test]
fn real_itp_cluster02() {
    let Some(dir) = traces() else { return };
    let report = load_itp_csv(dir.join("itp-cluster02.csv")).unwrap();
    assert!(report.warnings.is_empty());
    let jobs = report.jobs;
    let s = summary(&jobs);
    // The file has 5,778 data rows (the count the loader was specified with; the traces README says 5,777).
    assert_eq!(s.jobs, 5778);
    let expected = BTreeMap::from([
        (1, 4937),
        (2, 102),
        (4, 301),
        (8, 352),
        (16, 36),
        (32, 36),
        (64, 14),
    ]);
    assert_eq!(s.gpu_histogram, expected);
    assert_eq!(s.duration_p50_s, Some(6185.0));
    assert_eq!(s.duration_p90_s, Some(56_639.0));
    assert_eq!(s.duration_max_s, Some(1_114_383.0));
    assert!(jobs.iter().all(|j| j.duration_s >= Some(600.0)));
    assert_eq!(jobs[0].arrival_s, 5010.0);
    assert!(jobs.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
    assert_eq!(jobs[0].tenant.as_deref(), Some("itp-cluster02"));
}

#[test]
fn real_gavel() {
    let Some(dir) = traces() else { return };
    let jobs = load_gavel_trace(dir.join("gavel-msr-seed0-6214e9.trace"))
        .unwrap()
        .jobs;
    let s = summary(&jobs);
    assert_eq!(s.jobs, 2000);
    assert_eq!(
        s.gpu_histogram,
        BTreeMap::from([(1, 1928), (2, 27), (4, 32), (8, 13)])
    );
    let (first, last) = s.arrival_span_s.unwrap();
    assert!(((last - first) / 86_400.0 - 48.4).abs() < 0.05);
    assert!(
        jobs.iter()
            .all(|j| j.model_is_synthetic && j.iterations.is_some())
    );
    // The file's first line is the hand-checkable line above.
    assert_eq!(jobs[0].model.as_deref(), Some("Transformer"));
    assert_eq!(
        (jobs[0].batch_size, jobs[0].iterations),
        (Some(128), Some(20_851_471))
    );
    let types: std::collections::BTreeSet<(String, Option<u32>)> = jobs
        .iter()
        .map(|j| (j.model.clone().unwrap(), j.batch_size))
        .collect();
    assert_eq!(types.len(), 26);
}

#[test]
fn real_tiresias() {
    let Some(dir) = traces() else { return };
    let report = load_tiresias_csv(dir.join("tiresias-60_job.csv")).unwrap();
    assert_eq!(report.jobs.len(), 60);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let mut models: BTreeMap<String, usize> = BTreeMap::new();
    for j in &report.jobs {
        *models.entry(j.model.clone().unwrap()).or_default() += 1;
    }
    assert_eq!(models.len(), 10);
    assert!(models.values().all(|&n| n == 6));
    assert_eq!(
        summary(&report.jobs).gpu_histogram,
        BTreeMap::from([(1, 30), (2, 10), (4, 10), (8, 10)])
    );
    let j = &report.jobs[1];
    assert_eq!(
        (j.num_gpus, j.arrival_s, j.iterations, j.duration_s),
        (8, 30.0, Some(133), Some(147.0))
    );
}
