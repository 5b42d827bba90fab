//! Shared test helpers: the packing–covering known-answer instances (they
//! live in the library, `dmlsched::pcip::known_answers`, re-exported here)
//! and the watchdog of the robustness tests.
#![allow(unused_imports)]

pub use dmlsched::pcip::known_answers::*;

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
