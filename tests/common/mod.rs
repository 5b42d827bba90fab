//! Shared test helpers: the packing–covering known-answer instances
//! (`known_answers.rs`, which the library's unit tests include too) and
//! the watchdog of the robustness tests.
#![allow(unused_imports)]

use dmlsched::certificate::Sense;
use dmlsched::pcip::{PcBuilder, PcProblem, RowLabels};

#[allow(dead_code)]
pub mod known_answers;
pub use known_answers::*;

/// Runs `f` on its own thread and waits at most `secs` seconds for it.
///
/// Returns `f`'s value; fails the test with `what` if `f` panicked or did
/// not return in time (a hang). Robustness tests wrap every case in it, so
/// that "a result or a typed error, never a panic, never a hang" is checked
/// case by case.
#[allow(dead_code)]
pub fn within<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: no answer within {secs} s (a hang)")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let cause = handle
                .join()
                .err()
                .and_then(|e| {
                    e.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                })
                .unwrap_or_default();
            panic!("{what}: panicked: {cause}")
        }
    }
}

/// The watchdog of every robustness case, in seconds.
#[allow(dead_code)]
pub const WATCHDOG_S: u64 = 60;

/// The tests' parameter-server job: one epoch of one chunk of `minibatches`
/// mini-batches of `compute_s` seconds each, no gradient traffic; workers of
/// 1 GPU, 1 core, 1 GB of memory and a 1 GB/s NIC, PSs of 1 core, 1 GB and
/// 1 GB/s; at most one worker and one PS; synchronous. Tests that need other
/// values start a struct literal from it (`PsJob { max_workers: 4, ..ps_job(10, 1.0) }`).
#[allow(dead_code)]
pub fn ps_job(minibatches: u32, compute_s: f64) -> dmlsched::model::PsJob {
    use dmlsched::model::{PsJob, Resources, SyncMode};
    PsJob {
        minibatches_per_chunk: minibatches,
        minibatch_compute_s: compute_s,
        worker: Resources::zero()
            .gpus(1.0)
            .cpu_cores(1.0)
            .memory(1e9)
            .nic(1e9),
        ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
        sync: SyncMode::Synchronous,
        ..PsJob::default()
    }
}

/// Job `id` arriving at `arrival_s` with default value, discipline and
/// placement (`architecture`: a `PsJob`, a `RarJob` or an `Architecture`).
#[allow(dead_code)]
pub fn job(
    id: u32,
    arrival_s: f64,
    architecture: impl Into<dmlsched::model::Architecture>,
) -> dmlsched::model::Job {
    dmlsched::model::Job::new(dmlsched::model::JobId(id), arrival_s, architecture)
}

/// The fields of one CSV line (quoted fields may hold commas).
#[allow(dead_code)]
pub fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The online framework's invariants after a run, as a proptest check:
/// `ALG = Σ` admitted utilities, `ALG ≥ (D − D_0)/α_eff`, a strictly
/// positive payoff at every admission (`payoff = utility − cost`), and
/// `D_end ≥ ALG` when `D_end` is a valid bound.
#[allow(dead_code)]
pub fn check_run_invariants<P>(
    run: &dmlsched::online::RunReport<P>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use dmlsched::online::Decision;
    use proptest::prop_assert;
    let sum: f64 = run.outcomes.iter().map(|o| o.utility()).sum();
    prop_assert!(
        (sum - run.total_utility).abs() <= 1e-9 * sum.abs().max(1.0),
        "ALG {} is not the sum of admitted utilities {sum}",
        run.total_utility
    );
    prop_assert!(
        run.total_utility + 1e-9 >= (run.dual_running - run.dual_initial) / run.alpha_eff,
        "ALG {} < (D {} − D_0 {}) / α_eff {}",
        run.total_utility,
        run.dual_running,
        run.dual_initial,
        run.alpha_eff
    );
    for o in &run.outcomes {
        if let Decision::Admitted {
            utility,
            cost,
            payoff,
            ..
        } = &o.decision
        {
            prop_assert!(
                *payoff > 0.0,
                "job {} admitted with payoff {payoff}",
                o.index
            );
            prop_assert!((utility - cost - payoff).abs() <= 1e-9 * utility.abs().max(1.0));
        }
    }
    if run.dual_end_valid
        && let Some(d) = run.dual_end
    {
        prop_assert!(
            d + 1e-9 >= run.total_utility,
            "D_end {d} < ALG {}",
            run.total_utility
        );
    }
    Ok(())
}

/// Steps `engine` through `jobs` and checks after every decision that no
/// price fell (cells compared in log space) and that no cell's committed
/// amount exceeds its capacity (`g ≤ c`, relative tolerance 10⁻⁹). Returns
/// whether each job was admitted.
#[allow(dead_code)]
pub fn step_checking_prices_and_capacity<O: dmlsched::online::PricingOracle>(
    engine: &mut dmlsched::online::OnlinePrimalDual<O>,
    jobs: &[O::Job],
) -> Result<Vec<bool>, proptest::test_runner::TestCaseError> {
    use dmlsched::model::MachineId;
    use dmlsched::online::ResourceId;
    use proptest::prop_assert;
    let cells = |e: &dmlsched::online::OnlinePrimalDual<O>| -> Vec<(f64, f64, f64)> {
        let (v, l) = (e.view(), e.ledger());
        let mut out = Vec::new();
        for m in 0..l.machines() as u32 {
            for r in 0..l.resources() as u8 {
                for t in 0..l.horizon() {
                    let (m, r) = (MachineId(m), ResourceId(r));
                    out.push((v.ln_price(m, r, t), l.committed(m, r, t), l.capacity(m, r)));
                }
            }
        }
        out
    };
    let mut before = cells(engine);
    let mut admitted = Vec::with_capacity(jobs.len());
    for (k, job) in jobs.iter().enumerate() {
        let outcome = engine
            .step(job)
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("job {k}: {e}")))?;
        admitted.push(outcome.admitted());
        let after = cells(engine);
        for (b, a) in before.iter().zip(&after) {
            prop_assert!(a.0 >= b.0, "job {k}: a price fell from {} to {}", b.0, a.0);
            prop_assert!(
                a.1 <= a.2 * (1.0 + 1e-9) + 1e-12,
                "job {k}: g {} > c {}",
                a.1,
                a.2
            );
        }
        before = after;
    }
    Ok(admitted)
}

/// The locality tests' machine: `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with
/// `b_int_gbps` Gbit/s between tasks on it, hosting `hosts`.
#[allow(dead_code)]
pub fn l1_machine(
    id: u32,
    b_int_gbps: f64,
    hosts: dmlsched::model::Hosting,
) -> dmlsched::model::Machine {
    use dmlsched::model::units::{gb, gbps};
    use dmlsched::model::{Machine, MachineId, Resources};
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(16.0)
        .memory(gb(64.0))
        .nic(gbps(10.0));
    Machine::new(MachineId(id), cap, gbps(b_int_gbps)).hosting(hosts)
}

/// The locality tests' job (the hand-checkable set-up): `Q = 400` (one
/// epoch of 4 chunks of 100 mini-batches), `N = 4` (at most 4 workers and 4
/// PSs), `τ = 0.5 s`, `e = 125 MB`, `b = 1`, `B = 4` Gbit/s, worker
/// `[1 GPU, 2 vCPU, mem_w_gb, 1 Gbit/s]`, PS `[0, 2 vCPU, mem_s_gb,
/// 4 Gbit/s]`, the default utility. With 100-s slots `r^D = 100/(0.5 + 2) =
/// 40`, and `r^L = 100/(0.5 + 0.5) = 100` when `b_int = 4` Gbit/s.
#[allow(dead_code)]
pub fn l1_job(id: u32, arrival_s: f64, mem_w_gb: f64, mem_s_gb: f64) -> dmlsched::model::Job {
    use dmlsched::model::units::{gb, gbps, mb};
    use dmlsched::model::{Job, JobId, PsJob, Resources};
    Job::new(
        JobId(id),
        arrival_s,
        PsJob {
            epochs: 1,
            data_chunks: 4,
            minibatches_per_chunk: 100,
            minibatch_compute_s: 0.5,
            gradient_bytes: mb(125.0),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(2.0)
                .memory(gb(mem_w_gb))
                .nic(gbps(1.0)),
            ps: Resources::zero()
                .cpu_cores(2.0)
                .memory(gb(mem_s_gb))
                .nic(gbps(4.0)),
            max_workers: 4,
            max_ps: 4,
            ..PsJob::default()
        },
    )
}

/// The three-layer parameter-server job of the hand-computed timing table:
/// 62 500 mini-batches in one chunk of one epoch, layers of (forward ms,
/// backward ms, MB) = (3, 6, 2), (3, 6, 4), (4, 8, 8); a worker holds 1 GPU
/// and 2 cores, a PS 4 cores, and each has a NIC of `bw` B/s.
#[allow(dead_code)]
pub fn layered_table_job(
    bw: f64,
    max_workers: u32,
    max_ps: u32,
    ps_at_most_workers: bool,
) -> dmlsched::model::PsJob {
    use dmlsched::model::{Layer, PsJob, Resources, SyncMode};
    let layer = |f: f64, g: f64, mb: f64| Layer {
        forward_s: f * 1e-3,
        backward_s: g * 1e-3,
        bytes: mb * 1e6,
        update_s: 0.0,
    };
    PsJob {
        epochs: 1,
        data_chunks: 1,
        minibatches_per_chunk: 62_500,
        worker: Resources::zero().gpus(1.0).cpu_cores(2.0).nic(bw),
        ps: Resources::zero().cpu_cores(4.0).nic(bw),
        max_workers,
        max_ps,
        ps_at_most_workers,
        sync: SyncMode::Synchronous,
        layers: Some(vec![
            layer(3.0, 6.0, 2.0),
            layer(3.0, 6.0, 4.0),
            layer(4.0, 8.0, 8.0),
        ]),
        ..PsJob::default()
    }
}

/// Peak resident memory a `dmlsched` child may reach in a robustness case:
/// 1 GiB, in KiB (the unit of `/proc/<pid>/status`).
#[allow(dead_code)]
pub const PEAK_RSS_LIMIT_KIB: u64 = 1 << 20;

/// What one run of the `dmlsched` binary did.
#[allow(dead_code)]
#[derive(Debug)]
pub struct CliRun {
    /// The exit code (`None` when a signal ended the process).
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
    /// The highest `VmHWM` (peak resident set, KiB) read while it ran.
    pub peak_rss_kib: u64,
    /// Wall-clock seconds from spawn to exit.
    pub seconds: f64,
}

impl CliRun {
    /// The one `error:` line of an exit-2 answer; fails the test unless the
    /// run exited with code 2 and printed exactly one line on stderr that
    /// starts with `error: `.
    #[allow(dead_code)]
    pub fn one_error_line(&self, what: &str) -> &str {
        assert_eq!(self.code, Some(2), "{what}: expected exit 2: {self:?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            lines.len() == 1 && lines[0].starts_with("error: "),
            "{what}: expected one `error:` line on stderr, got {:?}",
            self.stderr
        );
        lines[0]
    }

    /// Fails the test unless the run exited with code 0.
    #[allow(dead_code)]
    pub fn ok(&self, what: &str) -> &str {
        assert_eq!(self.code, Some(0), "{what}: expected exit 0: {self:?}");
        &self.stdout
    }
}

/// The peak resident set of process `pid` so far, KiB (0 once it is gone).
#[allow(dead_code)]
fn vm_hwm_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Runs the built `dmlsched` binary with `args` (from the crate's root, so
/// `examples/…` paths work) under the robustness watchdog: the test fails
/// if the process runs longer than `secs` seconds (it is killed) or if its
/// peak resident memory (`VmHWM`, polled every 5 ms) exceeds
/// [`PEAK_RSS_LIMIT_KIB`] (1 GiB; it is killed as soon as that is seen).
/// `stdin`, when given, is written to the child's standard input.
///
/// The binary exists only with the `cli` feature: call it from test files
/// gated with `#![cfg(feature = "cli")]`.
#[allow(dead_code)]
#[cfg(feature = "cli")]
pub fn dmlsched_within(secs: f64, args: &[&str]) -> CliRun {
    dmlsched_watched(secs, args).unwrap_or_else(|e| panic!("{e}"))
}

/// [`dmlsched_within`] that returns a hang or a run past 1 GiB as an
/// error message instead of failing the test (for fuzz runs that collect
/// every finding).
#[allow(dead_code)]
#[cfg(feature = "cli")]
pub fn dmlsched_watched(secs: f64, args: &[&str]) -> Result<CliRun, String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let what = format!("dmlsched {}", args.join(" "));
    let start = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dmlsched"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dmlsched binary runs");
    let pid = child.id();
    // Drain both pipes on their own threads so a chatty child never blocks.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let mut peak = 0u64;
    let status = loop {
        peak = peak.max(vm_hwm_kib(pid));
        if let Some(status) = child.try_wait().expect("waiting on dmlsched") {
            break status;
        }
        if peak > PEAK_RSS_LIMIT_KIB {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{what}: peak resident memory {peak} KiB exceeds 1 GiB"
            ));
        }
        if start.elapsed().as_secs_f64() > secs {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: no answer within {secs} s (a hang)"));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let seconds = start.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned();
    Ok(CliRun {
        code: status.code(),
        stdout,
        stderr,
        peak_rss_kib: peak,
        seconds,
    })
}

/// The folder of the command line's fuzz reproducers: `DMLSCHED_REPRODUCERS`
/// when set, else `../shared/fuzz-reproducers` beside the checkout (where CI
/// has it). Fails the test, saying so, when the folder is absent: these
/// inputs are the regression suite, not optional data.
#[allow(dead_code)]
pub fn reproducers_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("DMLSCHED_REPRODUCERS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fuzz-reproducers")
        });
    assert!(
        dir.join("README.md").is_file(),
        "the fuzz reproducers are not at {} (set DMLSCHED_REPRODUCERS)",
        dir.display()
    );
    dir
}

/// The path of reproducer `name` as a string, for a command line.
#[allow(dead_code)]
pub fn reproducer(name: &str) -> String {
    let p = reproducers_dir().join(name);
    assert!(p.is_file(), "reproducer {} is missing", p.display());
    p.to_string_lossy().into_owned()
}

/// The folder of the real traces: `DMLSCHED_TRACES` when set, else
/// `../shared/traces` beside the checkout. Fails the test, saying so, when
/// the folder is absent.
#[allow(dead_code)]
pub fn traces_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("DMLSCHED_TRACES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces")
        });
    assert!(
        dir.join("philly.csv").is_file(),
        "the real traces are not at {} (set DMLSCHED_TRACES)",
        dir.display()
    );
    dir
}

/// Asserts that a GADGET-style session in the simulator decided as the
/// offline run: the same admissions, and every admitted ring in the same
/// slots on the same servers with the same workers.
#[allow(dead_code)]
pub fn same_ring_decisions(
    decisions: &[dmlsched::online::SessionDecision],
    run: &[dmlsched::algorithms::gadget::JobRecord],
) {
    assert_eq!(decisions.len(), run.len());
    for rec in run {
        let d = decisions
            .iter()
            .find(|d| d.job == rec.job)
            .expect("decided");
        match &rec.decision {
            Ok(a) => {
                assert!(d.admitted, "{}: {:?}", rec.job, d.rejection);
                let [seg] = d.segments.as_slice() else {
                    panic!("{}: {} segments", rec.job, d.segments.len())
                };
                assert_eq!(seg.slots, a.start..a.start + a.slots, "{}", rec.job);
                let placed: Vec<_> = seg.placement.iter().map(|(m, t)| (*m, t.workers)).collect();
                let planned: Vec<_> = a.placement.iter().map(|(m, y)| (*m, *y)).collect();
                assert_eq!(placed, planned, "{}", rec.job);
            }
            Err(_) => assert!(!d.admitted, "{}", rec.job),
        }
    }
}

/// Whether the plans `held` in `state` (each cut where a finish or a
/// cancel released it, and from the state's current slot on) pass
/// `schedule::verify` together.
#[allow(dead_code)]
pub fn held_plans_verify(
    state: &dmlsched::state::ClusterState,
    held: &[(dmlsched::model::Job, Vec<dmlsched::schedule::Segment>)],
) -> bool {
    use dmlsched::model::{Instance, Job};
    use dmlsched::schedule::{JobSchedule, Schedule, Segment, verify};
    let now = state.current_slot();
    let jobs: Vec<Job> = held.iter().map(|(j, _)| j.clone()).collect();
    let inst = Instance::new(
        state.cluster().clone(),
        jobs,
        state.slot_length_s(),
        now + 64,
    )
    .unwrap();
    let jobs = held
        .iter()
        .map(|(j, segs)| {
            let segments: Vec<Segment> = segs
                .iter()
                .filter(|sg| sg.slots.end > now)
                .map(|sg| Segment {
                    slots: sg.slots.start.max(now)..sg.slots.end,
                    ..sg.clone()
                })
                .collect();
            JobSchedule {
                job: j.id,
                admitted: !segments.is_empty(),
                segments,
            }
        })
        .collect();
    verify(&inst, &Schedule { jobs }).is_ok()
}

/// Cuts `segments` at the first slot boundary of `state` at or after
/// `at_s` (where a release frees them).
#[allow(dead_code)]
pub fn cut_at(
    state: &dmlsched::state::ClusterState,
    segments: &mut Vec<dmlsched::schedule::Segment>,
    at_s: f64,
) {
    let end = state.slot_from(at_s).max(state.current_slot());
    for sg in segments.iter_mut() {
        sg.slots.end = sg.slots.end.min(end.max(sg.slots.start));
    }
    segments.retain(|sg| !sg.slots.is_empty());
}

/// The ring jobs of the stop-at-convergence tests (GADGET-style baselines
/// and metrics): three servers, rings of 2–8 workers reserving 4 Gbit/s,
/// converging after 70% of their iterations, arriving on slot boundaries;
/// `F·τ` is never a whole number of slots.
#[allow(dead_code)]
pub fn convergence_instance() -> dmlsched::model::Instance {
    use dmlsched::model::*;
    let m = |i| {
        Machine::new(
            MachineId(i),
            Resources::zero().gpus(4.0).cpu_cores(8.0).nic(1.25e9),
            1e10,
        )
    };
    let cluster = Cluster::new((0..3).map(m).collect());
    let jobs = (0..8u32)
        .map(|i| {
            let r = RarJob {
                workers: WorkerCounts::Fixed([2, 4, 6, 8][i as usize % 4]),
                iterations: 1000 + 37 * u64::from(i),
                convergence_iterations: Some(700 + 23 * u64::from(i)),
                model_bytes: 1e8,
                backward_per_iteration_s: 0.1,
                reserved_bandwidth_bps: Some(5e8),
                ..RarJob::default()
            };
            Job::new(JobId(i), f64::from(i / 2) * 60.0, r).with_utility(Utility::Linear {
                g1: 50.0,
                slope: 1.0,
            })
        })
        .collect();
    Instance::new(cluster, jobs, 60.0, 60).unwrap()
}

/// The ring tests' cluster (GADGET-style baselines and metrics): `n`
/// servers with 4 GPUs, a NIC of `nic` per direction, internal
/// bandwidth 20, no per-server overhead: a ring without model bytes takes
/// exactly its compute time per iteration on any placement.
#[allow(dead_code)]
pub fn ring_cluster(n: u32, nic: f64) -> dmlsched::model::Cluster {
    use dmlsched::model::*;
    let mut c = Cluster::homogeneous(
        n,
        Resources::zero().gpus(4.0).cpu_cores(16.0).nic(nic),
        20.0,
    );
    c.ring.overhead_per_server_s = 0.0;
    c
}

/// A ring of `w` workers that runs exactly `d` one-second iterations on
/// any placement, reserving 2 per cross-server edge.
#[allow(dead_code)]
pub fn fixed_ring(id: u32, w: u32, d: u64) -> dmlsched::model::Job {
    use dmlsched::model::*;
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(w),
            iterations: d,
            backward_per_iteration_s: 1.0,
            reserved_bandwidth_bps: Some(2.0),
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
            ..RarJob::default()
        },
    )
}
