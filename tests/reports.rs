//! Run reports end to end: CSV tables and SVG plots of real simulator runs.
#![cfg(feature = "report")]

mod common;

use common::{job, ps_job};
use dmlsched::baselines::Fifo;
use dmlsched::model::*;
use dmlsched::report::csv::{
    SUMMARY_HEADER, write_jobs_csv, write_summary_csv, write_utilization_csv,
};
use dmlsched::report::plot::{MAX_ABS, PALETTE, jct_cdf_svg, jct_vs_load_svg, utilization_svg};
use dmlsched::report::{ReportError, RunMeta};
use dmlsched::sim::{SimOptions, SimResult, StopAt, simulate};

/// Three jobs (50 s, 50 s, 10 s of work arriving at 0, 10, 20 s) under FIFO
/// on `gpus` single-GPU machines.
fn run(gpus: u32) -> (Instance, SimResult) {
    let cluster = Cluster::homogeneous(
        gpus,
        Resources::zero()
            .gpus(1.0)
            .cpu_cores(64.0)
            .memory(1e12)
            .nic(1e11),
        1e10,
    );
    let jobs = vec![
        job(0, 0.0, ps_job(100, 0.5)),
        job(1, 10.0, ps_job(100, 0.5)),
        job(2, 20.0, ps_job(20, 0.5)),
    ];
    let inst = Instance::new(cluster, jobs, 60.0, 10).unwrap();
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    (inst, r)
}

fn meta(inst: &Instance, policy: &str, load_scale: f64) -> RunMeta {
    RunMeta {
        policy: policy.into(),
        seed: 42,
        workload: "three jobs".into(),
        cluster: RunMeta::describe_cluster(inst.cluster()),
        load_scale,
    }
}

fn jobs_csv(meta: &RunMeta, r: &SimResult) -> String {
    let mut buf = Vec::new();
    write_jobs_csv(&mut buf, meta, r).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn jobs_csv_header_and_rows_are_exact() {
    let (inst, r) = run(1);
    let text = jobs_csv(&meta(&inst, "fifo", 1.0), &r);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "policy,seed,job,arrival_s,start_s,finish_s,jct_s,queueing_s,utility,gpu_seconds,\
         preemptions,reconfigurations,admitted,rejected,completed,rejection,end"
    );
    // One GPU: job 0 runs 0–50 s, job 1 waits 10–50 and runs 50–100,
    // job 2 waits 20–100 and runs 100–110.
    assert_eq!(
        lines[1],
        "fifo,42,0,0,0,50,50,0,1,50,0,0,true,false,true,,completed"
    );
    assert_eq!(
        lines[2],
        "fifo,42,1,10,50,100,90,40,1,50,0,0,true,false,true,,completed"
    );
    assert_eq!(
        lines[3],
        "fifo,42,2,20,100,110,90,80,1,10,0,0,true,false,true,,completed"
    );
    assert_eq!(lines.len(), 4);
}

/// One job of 100 s on one GPU, stopped at the 50 s horizon.
fn unfinished() -> (Instance, SimResult) {
    let cluster = Cluster::homogeneous(
        1,
        Resources::zero()
            .gpus(1.0)
            .cpu_cores(64.0)
            .memory(1e12)
            .nic(1e11),
        1e10,
    );
    let inst = Instance::new(cluster, vec![job(0, 0.0, ps_job(100, 1.0))], 10.0, 5).unwrap();
    let mut opts = SimOptions::default();
    opts.stop = StopAt::Horizon;
    let r = simulate(&inst, &mut Fifo::default(), &opts).unwrap();
    (inst, r)
}

#[test]
fn unfinished_jobs_and_nan_statistics_are_empty_cells() {
    let (inst, r) = unfinished();
    let m = meta(&inst, "fifo", 2.0);
    let text = jobs_csv(&m, &r);
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "fifo,42,0,0,0,,,0,0,50,0,0,true,false,false,,horizon"
    );
    let s = r.summary();
    assert!(s.avg_jct_s.is_nan() && s.makespan_s.is_nan());
    let mut buf = Vec::new();
    write_summary_csv(&mut buf, &[(m, s)]).unwrap();
    let text = String::from_utf8(buf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], SUMMARY_HEADER.join(","));
    let v = env!("CARGO_PKG_VERSION");
    // solver_time_s is wall-clock: compare the row around it. After the
    // version: one unfinished job, cut by the horizon, no stall, no bound,
    // no binding resource (the summary alone knows no capacity), no
    // fairness (nor solo runs).
    let (head, tail) = lines[1].split_once(&format!(",{v},")).unwrap();
    assert_eq!(tail, "1,0,0,1,0,false,,,,,,,,");
    // With the run's resource use: the job held the cluster's one GPU
    // over the whole run, so GPU binds at share 1 (as gpu_utilization).
    let held = r.summary().with_resource_use(&r.resource_use(&inst));
    let mut buf = Vec::new();
    write_summary_csv(&mut buf, &[(meta(&inst, "fifo", 2.0), held)]).unwrap();
    let with = String::from_utf8(buf).unwrap();
    assert!(
        with.lines().nth(1).unwrap().ends_with(",false,,GPU,1,,,,,"),
        "{with}"
    );
    let (head, solver) = head.rsplit_once(',').unwrap();
    assert!(solver.parse::<f64>().unwrap() >= 0.0);
    assert_eq!(
        head,
        "fifo,42,three jobs,\"1 GPU, 1 per machine\",2,1,0,0,,,,,0,,1,0,0"
    );
}

#[test]
fn summary_rows_follow_the_runs() {
    let (inst1, r1) = run(1);
    let (inst2, r2) = run(2);
    let rows = vec![
        (meta(&inst1, "fifo", 1.0), r1.summary()),
        (meta(&inst2, "fifo", 0.5), r2.summary()),
    ];
    let mut buf = Vec::new();
    write_summary_csv(&mut buf, &rows).unwrap();
    let mut rd = csv::Reader::from_reader(buf.as_slice());
    assert_eq!(
        rd.headers().unwrap().iter().collect::<Vec<_>>(),
        SUMMARY_HEADER
    );
    let recs: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 2);
    let col = |k: usize, name: &str| {
        let c = SUMMARY_HEADER.iter().position(|h| *h == name).unwrap();
        recs[k].get(c).unwrap().to_string()
    };
    // One GPU: JCTs 50, 90, 90. Two GPUs: job 2 waits 20–50 and runs
    // 50–60; JCTs 50, 50, 40.
    assert_eq!(col(0, "avg_jct_s"), "76.66666666666667");
    assert_eq!(col(0, "p50_jct_s"), "90");
    assert_eq!(col(0, "makespan_s"), "110");
    assert_eq!(col(0, "gpu_utilization"), "1");
    assert_eq!(col(1, "cluster"), "2 GPUs, 1 per machine");
    assert_eq!(col(1, "load_scale"), "0.5");
    assert_eq!(col(1, "p99_jct_s"), "50");
    assert_eq!(col(1, "makespan_s"), "60");
    for k in 0..2 {
        assert_eq!(col(k, "crate_version"), env!("CARGO_PKG_VERSION"));
        assert_eq!(col(k, "completed"), "3");
    }
}

#[test]
fn utilization_csv_is_a_closed_step_function() {
    let (inst, r) = run(2);
    let mut buf = Vec::new();
    write_utilization_csv(&mut buf, &meta(&inst, "fifo", 1.0), &r).unwrap();
    let text = String::from_utf8(buf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "policy,seed,time_s,gpus_used,gpus_total,fraction",
            "fifo,42,0,1,2,0.5",
            "fifo,42,10,2,2,1",
            "fifo,42,60,0,2,0",
        ]
    );
    // Stopped at the horizon while busy: a closing row at the end.
    let (inst, r) = unfinished();
    let mut buf = Vec::new();
    write_utilization_csv(&mut buf, &meta(&inst, "fifo", 1.0), &r).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert_eq!(text.lines().last().unwrap(), "fifo,42,50,1,1,1");
}

#[test]
fn report_errors_convert_to_the_crate_error() {
    fn plot_nothing() -> dmlsched::Result<String> {
        Ok(jct_cdf_svg(&[], "nothing")?)
    }
    match plot_nothing() {
        Err(dmlsched::Error::Report(ReportError::NoData { what })) => {
            assert!(what.contains("completed jobs"));
        }
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------------------------- plots

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Polylines drawn in a palette colour at series width: one for the line and
/// one for its legend sample.
fn series_polylines(svg: &str, k: usize) -> usize {
    let stroke = format!("stroke=\"{}\" stroke-width=\"2\"", hex(PALETTE[k]));
    svg.lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
        .count()
}

fn assert_svg(svg: &str, labels: &[&str], axes: &[&str], title: &str) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..50]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<text"));
    for t in labels.iter().chain(axes).chain([&title]) {
        assert!(svg.contains(&format!("\n{t}\n")), "missing text {t:?}");
    }
    for k in 0..labels.len() {
        assert_eq!(series_polylines(svg, k), 2, "series {k}");
    }
    assert_eq!(series_polylines(svg, labels.len()), 0);
}

#[test]
fn jct_cdf_plot_has_legend_axes_and_one_line_per_run() {
    let (_, one) = run(1);
    let (_, two) = run(2);
    let runs = [("fifo, 1 GPU", &one), ("fifo, 2 GPUs", &two)];
    let svg = jct_cdf_svg(&runs, "JCT distribution").unwrap();
    assert_svg(
        &svg,
        &["fifo, 1 GPU", "fifo, 2 GPUs"],
        &["JCT (s)", "fraction of all jobs done"],
        "JCT distribution",
    );
    // Deterministic: byte-identical on a second call.
    assert_eq!(svg, jct_cdf_svg(&runs, "JCT distribution").unwrap());
    // Linear axis (40–90 s): ticks every 5 s.
    assert!(svg.contains("\n45\n") && svg.contains("\n85\n"));
}

#[test]
fn jct_cdf_uses_a_log_axis_over_more_than_two_decades() {
    // JCTs 1 s and 1000 s on two GPUs.
    let cluster = Cluster::homogeneous(
        2,
        Resources::zero()
            .gpus(1.0)
            .cpu_cores(64.0)
            .memory(1e12)
            .nic(1e11),
        1e10,
    );
    let jobs = vec![job(0, 0.0, ps_job(2, 0.5)), job(1, 0.0, ps_job(2000, 0.5))];
    let inst = Instance::new(cluster, jobs, 60.0, 100).unwrap();
    let r = simulate(&inst, &mut Fifo::default(), &SimOptions::default()).unwrap();
    assert_eq!(r.sorted_jcts(), [1.0, 1000.0]);
    let svg = jct_cdf_svg(&[("fifo", &r)], "log").unwrap();
    assert_svg(
        &svg,
        &["fifo"],
        &["JCT (s)", "fraction of all jobs done"],
        "log",
    );
    // Decade ticks of a log axis.
    for t in ["1", "10", "100", "1000"] {
        assert!(svg.contains(&format!("\n{t}\n")), "tick {t}");
    }
}

#[test]
fn jct_cdf_keeps_runs_without_completions_in_the_legend() {
    let (_, one) = run(1);
    let (_, none) = unfinished();
    let svg = jct_cdf_svg(&[("done", &one), ("stuck", &none)], "t").unwrap();
    assert!(svg.contains("\nstuck (none of 1 done)\n"));
    assert!(matches!(
        jct_cdf_svg(&[("stuck", &none)], "t"),
        Err(ReportError::NoData { .. })
    ));
}

#[test]
fn jct_cdf_counts_every_job_and_tops_out_at_the_share_done() {
    // One GPU, a 1-s job then a 100-s job, stopped at 50 s: one of two done.
    let cluster = Cluster::homogeneous(
        1,
        Resources::zero()
            .gpus(1.0)
            .cpu_cores(64.0)
            .memory(1e12)
            .nic(1e11),
        1e10,
    );
    let jobs = vec![job(0, 0.0, ps_job(2, 0.5)), job(1, 0.0, ps_job(100, 1.0))];
    let inst = Instance::new(cluster, jobs, 10.0, 5).unwrap();
    let mut opts = SimOptions::default();
    opts.stop = StopAt::Horizon;
    let r = simulate(&inst, &mut Fifo::default(), &opts).unwrap();
    assert_eq!(r.sorted_jcts().len(), 1);
    let svg = jct_cdf_svg(&[("half", &r)], "t").unwrap();
    assert!(svg.contains("\nhalf (1 of 2 done)\n"), "{svg}");
    // The curve's highest point is half-way up the y axis (0 to 1.02),
    // not at its top: the y pixel of 0.5 and of 1.0 differ.
    let full = jct_cdf_svg(&[("one", &run(1).1)], "t").unwrap();
    let top = |svg: &str| -> f64 {
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
            .flat_map(|l| {
                l.split("points=\"")
                    .skip(1)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .flat_map(|p| {
                p.split('"')
                    .next()
                    .unwrap_or("")
                    .split(' ')
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter_map(|xy| xy.split(',').nth(1).and_then(|y| y.parse::<f64>().ok()))
            .fold(f64::INFINITY, f64::min)
    };
    // SVG y grows downwards: the half-done run's top lies below the full run's.
    assert!(
        top(&svg) > top(&full) + 50.0,
        "{} vs {}",
        top(&svg),
        top(&full)
    );
}

#[test]
fn jct_vs_load_plot_groups_points_by_policy() {
    let points = [
        ("fifo", 1.0, 120.0),
        ("drf", 0.5, 40.0),
        ("fifo", 0.5, 60.0),
        ("drf", 1.0, 80.0),
        ("drf", 1.5, f64::NAN),
        ("sjf", 1.0, 70.0),
    ];
    let svg = jct_vs_load_svg(&points, "JCT vs load").unwrap();
    assert_svg(
        &svg,
        &["fifo", "drf", "sjf"],
        &["load scale", "average JCT (s)"],
        "JCT vs load",
    );
    // A filled marker per finite point, in the series' colour.
    for (k, n) in [(0, 2), (1, 2), (2, 1)] {
        let fill = format!("fill=\"{}\"", hex(PALETTE[k]));
        let markers = svg
            .lines()
            .filter(|l| l.starts_with("<circle") && l.contains(&fill))
            .count();
        assert_eq!(markers, n, "series {k}");
    }
    assert_eq!(svg, jct_vs_load_svg(&points, "JCT vs load").unwrap());
}

#[test]
fn utilization_plot_draws_step_lines() {
    let (_, one) = run(1);
    let (_, two) = run(2);
    let runs = [("1 GPU", &one), ("2 GPUs", &two)];
    let svg = utilization_svg(&runs, "GPU utilization").unwrap();
    assert_svg(
        &svg,
        &["1 GPU", "2 GPUs"],
        &["time since first arrival (h)", "fraction of GPUs allocated"],
        "GPU utilization",
    );
    assert_eq!(svg, utilization_svg(&runs, "GPU utilization").unwrap());
    assert!(matches!(
        utilization_svg(&[], "t"),
        Err(ReportError::NoData { .. })
    ));
}

#[test]
fn labels_are_escaped() {
    let svg = jct_vs_load_svg(&[("a<b & c", 1.0, 2.0)], "x > y").unwrap();
    assert!(svg.contains("a&lt;b &amp; c"));
    assert!(svg.contains("x &gt; y"));
    assert!(!svg.contains("a<b"));
    // An empty title or label is fine.
    assert!(jct_vs_load_svg(&[("", 1.0, 2.0)], "").is_ok());
}

#[test]
fn many_series_cycle_the_palette() {
    let names: Vec<String> = (0..12).map(|k| format!("p{k}")).collect();
    let points: Vec<(&str, f64, f64)> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (n.as_str(), 1.0, k as f64))
        .collect();
    let svg = jct_vs_load_svg(&points, "many").unwrap();
    for n in &names {
        assert!(svg.contains(&format!("\n{n}\n")));
    }
    // p10 and p11 reuse the first two colours: 4 polylines each.
    assert_eq!(series_polylines(&svg, 0), 4);
    assert_eq!(series_polylines(&svg, 1), 4);
    assert_eq!(series_polylines(&svg, 2), 2);
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    fn any_value() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            -1e6..1e6f64,
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
            Just(5e-324),
            Just(0.0),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 200,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/reports.txt"))),
            ..ProptestConfig::default()
        })]

        /// Any input draws or is a typed error: never a panic or a hang.
        #[test]
        fn jct_vs_load_never_panics(points in prop::collection::vec((0usize..3, any_value(), any_value()), 0..8)) {
            let names = ["a", "b", "c"];
            let pts: Vec<(&str, f64, f64)> = points.iter().map(|&(k, x, y)| (names[k], x, y)).collect();
            let finite: Vec<_> = pts.iter().filter(|p| p.1.is_finite() && p.2.is_finite()).collect();
            let huge = finite.iter().any(|p| p.1.abs() > MAX_ABS || p.2.abs() > MAX_ABS);
            match jct_vs_load_svg(&pts, "t") {
                Ok(svg) => prop_assert!(svg.starts_with("<svg") && !huge),
                Err(ReportError::NoData { .. }) => prop_assert!(finite.is_empty()),
                Err(ReportError::Plot { .. }) => prop_assert!(huge),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }

        /// Arbitrary JCTs (extreme spans switch to a log axis).
        #[test]
        fn jct_cdf_never_panics(jcts in prop::collection::vec(any_value(), 1..6)) {
            let (_, mut r) = run(1);
            r.jobs.truncate(1);
            let mut template = r.jobs[0].clone();
            r.jobs = jcts.iter().map(|&j| { template.jct_s = Some(j); template.clone() }).collect();
            let finite: Vec<f64> = jcts.iter().copied().filter(|j| j.is_finite()).collect();
            let huge = finite.iter().any(|j| j.abs() > MAX_ABS);
            match jct_cdf_svg(&[("x", &r)], "t") {
                Ok(svg) => prop_assert!(svg.starts_with("<svg") && !huge),
                Err(ReportError::NoData { .. }) => prop_assert!(finite.is_empty()),
                Err(ReportError::Plot { .. }) => prop_assert!(huge),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }

        /// Arbitrary utilization steps, run ends and GPU totals.
        #[test]
        fn utilization_never_panics(
            steps in prop::collection::vec((any_value(), any_value()), 0..6),
            end in any_value(),
            total in any_value(),
        ) {
            let (_, mut r) = run(1);
            r.utilization = steps
                .iter()
                .map(|&(time_s, gpus_used)| dmlsched::sim::UtilizationPoint { time_s, gpus_used })
                .collect();
            r.end_s = end;
            r.gpus_total = total;
            match utilization_svg(&[("x", &r)], "t") {
                Ok(svg) => prop_assert!(svg.starts_with("<svg")),
                Err(ReportError::NoData { .. } | ReportError::Plot { .. }) => {}
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}

#[test]
fn resource_use_charges_every_task_of_every_allocation() {
    let (inst, r) = run(1);
    let u = r.resource_use(&inst);
    // GPUs: the same area as the utilization timeline.
    assert!((u.gpus - r.gpu_utilization()).abs() < 1e-9, "{u:?}");
    // One worker + one PS (1 + 1 cores of 64) whenever the GPU is held.
    assert!((u.cpu_cores - u.gpus * 2.0 / 64.0).abs() < 1e-9, "{u:?}");
    // NIC: 1e9 per task, two tasks, of 1e11.
    assert!((u.nic - u.gpus * 2e9 / 1e11).abs() < 1e-9, "{u:?}");
    assert!(u.gpus > 0.0 && u.gpus <= 1.0);
}

#[test]
fn several_runs_share_one_header() {
    let (inst, r) = run(1);
    let (_, r2) = run(2);
    let runs = [(meta(&inst, "a", 1.0), &r), (meta(&inst, "b", 1.0), &r2)];
    let mut buf = Vec::new();
    dmlsched::report::csv::write_jobs_csv_runs(&mut buf, &runs).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("policy,")).count(), 1);
    assert_eq!(text.lines().count(), 1 + 3 + 3);
    let mut buf = Vec::new();
    dmlsched::report::csv::write_utilization_csv_runs(&mut buf, &runs).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("policy,")).count(), 1);
    assert!(text.lines().any(|l| l.starts_with("a,")) && text.lines().any(|l| l.starts_with("b,")));
}
