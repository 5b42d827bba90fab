//! The robustness watchdog itself: a child that outlives its time or
//! grows past 1 GiB fails the test, and a quick answer is read back whole.
#![cfg(feature = "cli")]

mod common;
use common::*;

#[test]
fn the_watchdog_reads_a_quick_answer_and_its_peak_memory() {
    // An answer of some milliseconds: `--version` can end before the first
    // sample of its memory, under load.
    let run = dmlsched_within(60.0, &["pcip", "examples/pcip/ka5.json", "--exact"]);
    assert!(run.ok("pcip ka5").contains("\"objective\""), "{run:?}");
    assert!(
        run.peak_rss_kib > 0 && run.peak_rss_kib < PEAK_RSS_LIMIT_KIB,
        "{run:?}"
    );
}

#[test]
fn the_watchdog_sees_a_one_line_error() {
    let run = dmlsched_within(60.0, &["solve", "-a", "gadget", "no-such-file.json"]);
    let line = run.one_error_line("a missing file");
    assert!(line.contains("no-such-file.json"), "{line}");
}

#[test]
#[should_panic(expected = "no answer within")]
fn the_watchdog_fails_a_run_past_its_time() {
    // Any real run takes longer than a microsecond.
    dmlsched_within(1e-6, &["pcip", "examples/pcip/ka5.json", "--exact"]);
}

#[test]
fn the_reproducers_and_traces_are_found() {
    assert!(reproducers_dir().join("README.md").is_file());
    assert!(traces_dir().join("philly.csv").is_file());
}
