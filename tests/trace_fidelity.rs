//! Trace replays faithful to their traces: a job on its trace GPU count,
//! placed on the fewest machines, runs its trace duration (within 1%), and
//! only worse placements slow it down; Gavel traces replay; a window that
//! selects no job is a typed error; bad throughput tables are typed errors.
//!
//! The real traces come from the folder named by `DMLSCHED_TRACES`; those
//! tests print a message and return when it is not set.

use std::path::PathBuf;

use dmlsched::baselines::Fifo;
use dmlsched::model::{Architecture, Instance, JobId, MachineId};
use dmlsched::placement::PlacementRule;
use dmlsched::schedule::Tasks;
use dmlsched::sim::{Action, Event, Policy, SimView};
use dmlsched::sim::{SimOptions, simulate};
use dmlsched::trace::*;

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

/// One trace row run alone.
#[derive(Debug)]
struct Alone {
    id: String,
    gpus: u32,
    duration_s: f64,
    jct_s: f64,
    machines: usize,
}

/// Every row of `rows` (ring-all-reduce recipe for `per_machine`-GPU
/// machines) run alone, arriving at 0, under FIFO with `rule`, on `machines`
/// machines of `sim_per_machine` GPUs.
fn run_alone(
    rows: &[TraceJob],
    per_machine: u32,
    sim_per_machine: u32,
    machines: u32,
    rule: PlacementRule,
) -> Vec<Alone> {
    let mut opts = RecipeOptions::rar();
    opts.gpus_per_machine = per_machine;
    let out = to_jobs(rows, &opts).unwrap();
    assert!(out.skipped.is_empty() && out.capped.is_empty());
    let cluster = gpu_cluster(machines * sim_per_machine, sim_per_machine).unwrap();
    let mut runs = Vec::new();
    for (mut job, origin) in out.jobs.into_iter().zip(&out.origins) {
        job.id = JobId(0);
        job.arrival_s = 0.0;
        let inst = Instance::new(cluster.clone(), vec![job], opts.slot_length_s, 1).unwrap();
        let mut fifo = Fifo {
            backfill: false,
            placement: rule,
            ..Fifo::default()
        };
        let r = simulate(&inst, &mut fifo, &SimOptions::default()).unwrap();
        let first = r.allocations.first().expect("the job ran");
        runs.push(Alone {
            id: origin.trace_id.clone(),
            gpus: origin.requested_gpus,
            duration_s: rows[origin.trace_index].duration_s.unwrap(),
            jct_s: r.jobs[0].jct_s.expect("the job completed"),
            machines: first.placement.worker_machines(),
        });
    }
    runs
}

/// Asserts that every run took its trace duration within 1% on
/// `⌈gpus / per_machine⌉` machines; returns the largest relative error.
fn assert_faithful(runs: &[Alone], per_machine: u32, too_short: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for a in runs {
        assert_eq!(
            a.machines,
            a.gpus.div_ceil(per_machine) as usize,
            "{}: not on the fewest machines",
            a.id
        );
        if a.duration_s < too_short {
            // Shorter than one iteration's communication: runs longer.
            assert!(a.jct_s >= a.duration_s, "{a:?}");
            continue;
        }
        let err = (a.jct_s / a.duration_s - 1.0).abs();
        assert!(err < 0.01, "{a:?}: {:.3}% off", 100.0 * err);
        worst = worst.max(err);
    }
    worst
}

#[test]
fn synthetic_rows_run_their_duration_and_only_worse_placements_slow_them() {
    let mut rows = Vec::new();
    for (i, d) in [0.5, 30.0, 1144.0, 86_400.0, 4_628_226.0]
        .into_iter()
        .enumerate()
    {
        for g in [1, 2, 3, 4, 8, 12, 16, 32] {
            let mut r = TraceJob::new(format!("{i}-{g}"), 0.0, g);
            r.duration_s = Some(d);
            rows.push(r);
        }
    }
    let runs = run_alone(&rows, 8, 8, 8, PlacementRule::BestFit);
    let worst = assert_faithful(&runs, 8, 0.0);
    eprintln!(
        "synthetic: {} rows, worst relative error {worst:.2e}",
        runs.len()
    );
    // Fewer GPUs per machine than the trace's: a ring that now spans more
    // machines runs longer (> 1%); one that still fits as few does not.
    let runs = run_alone(&rows, 8, 2, 32, PlacementRule::BestFit);
    for a in &runs {
        assert_eq!(a.machines, a.gpus.div_ceil(2) as usize);
        if a.machines == a.gpus.div_ceil(8) as usize {
            assert!((a.jct_s / a.duration_s - 1.0).abs() < 0.01, "{a:?}");
        } else if a.duration_s >= 30.0 {
            assert!(a.jct_s > 1.01 * a.duration_s, "{a:?}");
        } else {
            assert!(a.jct_s >= a.duration_s, "{a:?}");
        }
    }
    // First fit on a cluster whose first machines are nearly full spreads
    // a job that best fit keeps on one machine.
    let mut four = TraceJob::new("four", 0.0, 4);
    four.duration_s = Some(1000.0);
    let out = to_jobs(&[four], &RecipeOptions::rar()).unwrap();
    let mut blocker = TraceJob::new("blocker", 0.0, 6);
    blocker.duration_s = Some(1e6);
    // The blocker takes 6 GPUs of machine 0, leaving 2 there.
    let mut jobs = to_jobs(&[blocker], &RecipeOptions::rar()).unwrap().jobs;
    let mut job = out.jobs[0].clone();
    job.id = JobId(1);
    job.arrival_s = 1.0;
    jobs.push(job);
    let inst = Instance::new(gpu_cluster(24, 8).unwrap(), jobs, 10.0, 1).unwrap();
    let jct = |rule| {
        let mut fifo = Fifo {
            backfill: false,
            placement: rule,
            ..Fifo::default()
        };
        let r = simulate(&inst, &mut fifo, &SimOptions::default()).unwrap();
        r.jobs[1].jct_s.unwrap()
    };
    let (best, first) = (jct(PlacementRule::BestFit), jct(PlacementRule::FirstFit));
    assert!((best / 1000.0 - 1.0).abs() < 0.01, "best fit: {best}");
    assert!(first > 1.01 * 1000.0, "first fit: {first}");
}

#[test]
fn real_philly_rows_run_their_duration() {
    let Some(dir) = traces() else { return };
    let jobs = load_philly_pollux_csv(dir.join("philly.csv")).unwrap().jobs;
    let window = Window {
        start: Some(WindowStart::Date("2017-11-01".into())),
        jobs: Some(1500),
        ..Window::default()
    };
    let mut rows = select(&jobs, &window).unwrap();
    // Every job of the trace larger than a machine too (up to 128 GPUs).
    rows.extend(jobs.iter().filter(|j| j.num_gpus > 8).cloned());
    let runs = run_alone(&rows, 8, 8, 16, PlacementRule::BestFit);
    let worst = assert_faithful(&runs, 8, 0.0);
    eprintln!(
        "philly: {} rows, worst relative error {worst:.2e}",
        runs.len()
    );
}

#[test]
fn real_itp_rows_run_their_duration() {
    let Some(dir) = traces() else { return };
    let jobs = load_itp_csv(dir.join("itp-cluster02.csv")).unwrap().jobs;
    let mut rows = select(
        &jobs,
        &Window {
            jobs: Some(1000),
            ..Window::default()
        },
    )
    .unwrap();
    rows.extend(jobs.iter().filter(|j| j.num_gpus > 8).cloned());
    let runs = run_alone(&rows, 8, 8, 8, PlacementRule::BestFit);
    let worst = assert_faithful(&runs, 8, 0.0);
    eprintln!("itp: {} rows, worst relative error {worst:.2e}", runs.len());
}

#[test]
fn real_tiresias_rows_run_their_duration_and_fifo_matches_the_trace() {
    let Some(dir) = traces() else { return };
    let rows = load_tiresias_csv(dir.join("tiresias-60_job.csv"))
        .unwrap()
        .jobs;
    // The Tiresias simulator's cluster: 4-GPU machines.
    let runs = run_alone(&rows, 4, 4, 16, PlacementRule::BestFit);
    let worst = assert_faithful(&runs, 4, 0.0);
    eprintln!("tiresias: worst relative error {worst:.2e}");
    // The whole trace on 64 GPUs: nothing queues, so FIFO's average JCT is
    // the trace's average duration (178.4 s) with best fit; first fit
    // splits 8-GPU jobs over more machines than they need.
    let rows = select(&rows, &Window::default()).unwrap();
    let mean = rows.iter().map(|r| r.duration_s.unwrap()).sum::<f64>() / rows.len() as f64;
    let mut opts = ReplayOptions::default();
    opts.gpus = 64.into();
    opts.gpus_per_machine = 4;
    let (inst, _) = replay_instance(&rows, &opts).unwrap();
    let avg = |rule| {
        let mut fifo = Fifo {
            backfill: false,
            placement: rule,
            ..Fifo::default()
        };
        simulate(&inst, &mut fifo, &SimOptions::default())
            .unwrap()
            .summary()
            .avg_jct_s
    };
    let (best, first) = (avg(PlacementRule::BestFit), avg(PlacementRule::FirstFit));
    eprintln!(
        "tiresias 60 jobs, FIFO: best fit {best:.1} s, first fit {first:.1} s, trace mean {mean:.1} s"
    );
    assert!((best / mean - 1.0).abs() < 0.01, "{best} vs {mean}");
    assert!(first > 1.05 * best, "{first} vs {best}");
}

#[cfg(feature = "serde")]
#[test]
fn real_gavel_rows_convert_and_run_their_duration() {
    let Some(dir) = traces() else { return };
    let rates = GavelThroughputs::load(dir.join(GAVEL_THROUGHPUTS_FILE)).unwrap();
    let report = load_gavel_trace_with_rates(
        dir.join("gavel-msr-seed0-6214e9.trace"),
        &rates,
        &GavelConversion::default(),
    )
    .unwrap();
    assert_eq!(report.jobs.len(), 1985);
    assert_eq!(report.skipped.len(), 15);
    assert_eq!(report.warnings.len(), 15);
    assert!(report.skipped.iter().any(|s| matches!(
        &s.cause,
        SkipCause::NoMeasuredRate { gpu, job_type, scale_factor: 2 } if gpu == "v100" && job_type == "A3C"
    )));
    // A row's duration is its steps over its measured rate.
    let first = &report.jobs[0];
    let rate = rates
        .rate("v100", "Transformer (batch size 128)", 1)
        .unwrap();
    assert_eq!(first.duration_s, Some(20_851_471.0 / rate));
    let runs = run_alone(&report.jobs, 8, 8, 1, PlacementRule::BestFit);
    let worst = assert_faithful(&runs, 8, 0.0);
    eprintln!("gavel: worst relative error {worst:.2e}");
}

#[cfg(feature = "serde")]
#[test]
fn real_gavel_replay_completes_jobs() {
    let Some(dir) = traces() else { return };
    let rates = GavelThroughputs::load(
        GavelThroughputs::locate(Some(&dir.join(GAVEL_THROUGHPUTS_FILE))).unwrap(),
    )
    .unwrap();
    let trace = dir.join("gavel-msr-seed0-6214e9.trace");
    // Without durations a Gavel window is empty, and says why.
    let plain = load_gavel_trace(&trace).unwrap().jobs;
    let e = select(&plain, &Window::default()).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::EmptyWindow {
                jobs: 2000,
                without_duration: 2000,
                ..
            }
        ),
        "{e}"
    );
    let rows = load_gavel_trace_with_rates(&trace, &rates, &GavelConversion::default())
        .unwrap()
        .jobs;
    let window = Window {
        jobs: Some(300),
        ..Window::default()
    };
    let rows = select(&rows, &window).unwrap();
    let (inst, out) = replay_instance(&rows, &ReplayOptions::default()).unwrap();
    assert_eq!(out.jobs.len(), 300);
    for name in ["fifo", "tiresias"] {
        let mut p = dmlsched::registry::by_name(name).unwrap();
        let r = simulate(&inst, &mut p, &SimOptions::default()).unwrap();
        let s = r.summary();
        eprintln!(
            "gavel 300 jobs, {name}: {} completed, avg JCT {:.0} s",
            s.completed, s.avg_jct_s
        );
        assert_eq!(s.completed, 300, "{name}");
    }
}

#[test]
fn real_philly_window_after_the_trace_is_an_error_naming_its_dates() {
    let Some(dir) = traces() else { return };
    let jobs = load_philly_pollux_csv(dir.join("philly.csv")).unwrap().jobs;
    let window = Window {
        start: Some(WindowStart::Date("2018-01-01".into())),
        jobs: Some(500),
        ..Window::default()
    };
    let e = select(&jobs, &window).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, TraceError::EmptyWindow { jobs: 82_247, .. }),
        "{e}"
    );
    for part in ["2018-01-01", "2017-09-04 10:30:41", "2017-12-22 08:02:11"] {
        assert!(text.contains(part), "{text}");
    }
}

#[cfg(feature = "serde")]
#[test]
fn bad_throughput_files_are_typed_errors() {
    let dir = std::env::temp_dir().join(format!("dmlsched-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.json");
    assert!(matches!(
        GavelThroughputs::load(&missing),
        Err(TraceError::Io { path: Some(p), .. }) if p == missing
    ));
    let cases = [
        ("empty.json", "", "Empty"),
        ("blank.json", "  \n", "Empty"),
        ("cut.json", "{\"v100\": {", "Throughputs"),
        (
            "nan.json",
            "{\"v100\": {\"('A3C', 1)\": {\"null\": NaN}}}",
            "Throughputs",
        ),
        ("list.json", "[]", "Throughputs"),
        (
            "key.json",
            "{\"v100\": {\"A3C\": {\"null\": 1.0}}}",
            "Throughputs",
        ),
        (
            "neg.json",
            "{\"v100\": {\"('A3C', 1)\": {\"null\": -2}}}",
            "Throughputs",
        ),
    ];
    for (name, text, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let e = GavelThroughputs::load(&path).unwrap_err();
        let got = match &e {
            TraceError::Empty { path: Some(p) } if *p == path => "Empty",
            TraceError::Throughputs { path: Some(p), .. } if *p == path => "Throughputs",
            _ => "other",
        };
        assert_eq!(got, want, "{name}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs a job, on arrival, on the placement given (the simulator checks it).
struct OnPlacement(Vec<(MachineId, Tasks)>);

impl Policy for OnPlacement {
    fn name(&self) -> String {
        "on-placement".into()
    }

    fn on_event(&mut self, _view: &SimView<'_>, event: &Event) -> dmlsched::Result<Vec<Action>> {
        Ok(match event {
            Event::Arrival { job } => vec![Action::run(*job, self.0.clone())],
            _ => Vec::new(),
        })
    }
}

/// Every row of `rows` as a parameter-server job (the PS recipe, 8-GPU
/// machines) run alone, arriving at 0, on its reference placement (the
/// fewest machines, as many PSs as workers on each) in the simulator, on
/// `machines` 8-GPU machines: it runs its trace duration within `1e-9` (a
/// row shorter than one mini-batch's communication runs longer). Returns
/// the rows run and the largest relative error. (That OASiS plans every
/// such row within a `cover:3` horizon is a unit test of
/// `algorithms::oasis`, which reads OASiS's crate-private model.)
fn assert_ps_faithful(rows: &[TraceJob], machines: u32) -> (usize, f64) {
    let opts = RecipeOptions::ps();
    let out = to_jobs(rows, &opts).unwrap();
    assert!(out.capped.is_empty());
    let cluster = gpu_cluster(machines * 8, 8).unwrap();
    let (n, mut worst) = (out.jobs.len(), 0.0f64);
    for (k, (mut job, origin)) in out.jobs.into_iter().zip(&out.origins).enumerate() {
        job.id = JobId(0);
        job.arrival_s = 0.0;
        // OASiS's chunk grid fits the slot: one worker trains a whole chunk
        // (`M` mini-batches of compute plus a push and a pull over its NIC)
        // within a slot, so no row is "too slow for the slot".
        let Architecture::ParameterServer(p) = &job.architecture else {
            panic!("a PS recipe made another architecture")
        };
        let chunk_s = f64::from(p.minibatches_per_chunk) * p.minibatch_time_s();
        assert!(
            chunk_s <= opts.slot_length_s,
            "{}: a chunk takes one worker {chunk_s} s",
            origin.trace_id
        );
        let d = rows[origin.trace_index].duration_s.unwrap();
        let inst = Instance::new(cluster.clone(), vec![job], opts.slot_length_s, 1).unwrap();
        let placement = ps_reference_placement(origin.requested_gpus, 8)
            .machines
            .iter()
            .enumerate()
            .map(|(m, &(w, p))| (MachineId(m as u32), Tasks::new(w, p)))
            .collect();
        let r = simulate(&inst, &mut OnPlacement(placement), &SimOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", origin.trace_id));
        let jct = r.jobs[0].jct_s.expect("the job completed");
        if out.too_short.contains(&k) {
            assert!(jct >= d, "{}: {jct} s for {d} s", origin.trace_id);
            continue;
        }
        let err = (jct / d - 1.0).abs();
        assert!(err <= 1e-9, "{}: {jct} s for {d} s", origin.trace_id);
        worst = worst.max(err);
    }
    (n, worst)
}

#[test]
fn ps_recipe_rows_run_their_duration_on_their_reference_placement() {
    let mut rows = Vec::new();
    for (i, d) in [0.01, 30.0, 1144.0, 86_400.0, 4_628_226.0]
        .into_iter()
        .enumerate()
    {
        for g in [1, 2, 3, 4, 8, 12, 16, 32] {
            let mut r = TraceJob::new(format!("{i}-{g}"), 0.0, g);
            r.duration_s = Some(d);
            rows.push(r);
        }
    }
    let (n, worst) = assert_ps_faithful(&rows, 8);
    eprintln!("ps synthetic: {n} rows, worst relative error {worst:.2e}");
    let Some(dir) = traces() else { return };
    for (name, jobs) in [
        (
            "philly",
            load_philly_pollux_csv(dir.join("philly.csv")).unwrap().jobs,
        ),
        (
            "itp",
            load_itp_csv(dir.join("itp-cluster02.csv")).unwrap().jobs,
        ),
        (
            "tiresias",
            load_tiresias_csv(dir.join("tiresias-60_job.csv"))
                .unwrap()
                .jobs,
        ),
        #[cfg(feature = "serde")]
        (
            "gavel",
            load_gavel_trace_with_rates(
                dir.join("gavel-msr-seed0-6214e9.trace"),
                &GavelThroughputs::load(dir.join(GAVEL_THROUGHPUTS_FILE)).unwrap(),
                &GavelConversion::default(),
            )
            .unwrap()
            .jobs,
        ),
    ] {
        // Every row that ran on a whole GPU.
        let mut rows = jobs;
        rows.retain(|r| r.num_gpus > 0 && r.duration_s.is_some_and(f64::is_finite));
        let machines = rows
            .iter()
            .map(|r| r.num_gpus.div_ceil(8))
            .max()
            .unwrap_or(1);
        let (n, worst) = assert_ps_faithful(&rows, machines);
        eprintln!("ps {name}: {n} rows, worst relative error {worst:.2e}");
    }
}
