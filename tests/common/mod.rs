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
