//! Regression tests for the `solve -a smd` rows of the fuzz reproducers:
//! the run stops at the horizon with a schedule the checker accepts, huge
//! slot lengths give checked schedules, and jobs outside the scheduler's
//! slotted model are one-line exit-2 rejections naming the job, the value
//! and the limit. Each answer is checked: the written `schedule.json` is
//! read back and verified against the instance, and the printed counts add
//! up to the jobs.
#![cfg(feature = "cli")]

#[path = "../benches/common/mod.rs"]
mod bench_common;
mod common;

use common::*;
use dmlsched::model::{Architecture, Instance};
use dmlsched::schedule::{Schedule, verify};

/// A fresh output folder for one test.
fn out_dir(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("dmlsched-repro-smd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn read_instance(path: &str) -> Instance {
    Instance::from_json(&std::fs::read_to_string(path).expect("instance file")).expect("instance")
}

/// Writes `inst` to `dir/instance.json` and returns the path.
fn write_instance(dir: &std::path::Path, inst: &Instance) -> String {
    std::fs::create_dir_all(dir).expect("temp dir");
    let path = dir.join("instance.json");
    std::fs::write(&path, inst.to_json().expect("instance JSON")).expect("write instance");
    path.to_string_lossy().into_owned()
}

/// Runs `solve -a smd FILE --out DIR`, expects exit 0, reads the schedule
/// back, verifies it against the instance (every segment within the
/// horizon), and returns the printed (completed, unfinished) counts, which
/// must add up to the jobs.
fn solve_checked(file: &str, inst: &Instance, dir: &std::path::Path) -> (usize, usize) {
    let run = dmlsched_within(
        120.0,
        &["solve", "-a", "smd", file, "--out", dir.to_str().unwrap()],
    );
    let stdout = run.ok(&format!("solve -a smd {file}"));
    let text = std::fs::read_to_string(dir.join("schedule.json")).expect("schedule.json");
    let schedule: Schedule = serde_json::from_str(&text).expect("schedule JSON");
    verify(inst, &schedule).expect("the written schedule passes the checker");
    for js in &schedule.jobs {
        for s in &js.segments {
            assert!(
                s.slots.end <= inst.horizon_slots(),
                "{:?} past the horizon",
                js
            );
        }
    }
    // "…: N jobs, C completed, U unfinished (horizon); …"
    let line = stdout.lines().next().unwrap_or_default();
    let count = |word: &str| -> usize {
        let at = line
            .find(word)
            .unwrap_or_else(|| panic!("no `{word}` in {line:?}"));
        line[..at]
            .trim_end()
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no count before `{word}` in {line:?}"))
    };
    let (jobs, done, left) = (count(" jobs,"), count(" completed,"), count(" unfinished"));
    assert_eq!(jobs, inst.jobs().len(), "{line}");
    assert_eq!(done + left, jobs, "{line}");
    let _ = std::fs::remove_dir_all(dir);
    (done, left)
}

/// Row "smd-solve-horizon-overrun.json": one job that cannot finish in the
/// one-slot horizon. Before: exit 1, "segment 0 ends at slot 6, past the
/// horizon of 1 slots". Now: the run stops at the horizon, the job is
/// reported unfinished, and the schedule passes the checker.
#[test]
fn horizon_overrun_stops_at_the_horizon() {
    let file = reproducer("smd-solve-horizon-overrun.json");
    let inst = read_instance(&file);
    let (done, left) = solve_checked(&file, &inst, &out_dir("horizon"));
    assert_eq!((done, left), (0, 1));
}

/// The same defect on an overloaded instance: 50 jobs drawn from
/// `instance_layered.json` (before: exit 1, a segment past the horizon).
#[test]
fn fifty_layered_jobs_stop_at_the_horizon() {
    let dir = out_dir("fifty");
    let inst = bench_common::grown_example("instance_layered.json", 50);
    let file = write_instance(&dir, &inst);
    let (done, left) = solve_checked(&file, &inst, &dir);
    assert!(done > 0 && left > 0, "{done} completed, {left} unfinished");
}

/// `data_chunks` = 2³²−1 on the 12 layered jobs. Before: 16 s and exit 1 at
/// the 50 M event limit (and, once stopped at the horizon, a HiGHS `status
/// Error` on costs up to 3.5e14 s). Now: it stops at the horizon with every
/// job unfinished, in bounded time.
#[test]
fn huge_data_chunks_stop_at_the_horizon() {
    let dir = out_dir("chunks");
    let base = read_instance("examples/data/instance_layered.json");
    let jobs = base
        .jobs()
        .iter()
        .cloned()
        .map(|mut j| {
            if let Architecture::ParameterServer(ps) = &mut j.architecture {
                ps.data_chunks = u32::MAX;
            }
            j
        })
        .collect();
    let inst = Instance::new(
        base.cluster().clone(),
        jobs,
        base.slot_length_s(),
        base.horizon_slots(),
    )
    .expect("instance");
    let file = write_instance(&dir, &inst);
    assert_eq!(solve_checked(&file, &inst, &dir), (0, 12));
}

/// Rows "smd-solve-huge-slot-nic-overcommit.json" and
/// "smd-solve-huge-slot-two-segments.json" (slot length 1e20 s). Before:
/// exit 1, the NIC over-committed in slot 0 / two segments covering slot 0
/// (the slot-boundary test's 10⁻⁹-slot tolerance spans 10¹¹ s there, so
/// every arrival in slot 0 was decided "at its boundary" again). Now: a
/// checked schedule with every job completed.
#[test]
fn huge_slot_lengths_give_checked_schedules() {
    for (name, jobs) in [
        ("smd-solve-huge-slot-nic-overcommit.json", 2),
        ("smd-solve-huge-slot-two-segments.json", 3),
    ] {
        let file = reproducer(name);
        let inst = read_instance(&file);
        let (done, left) = solve_checked(&file, &inst, &out_dir(&name[..24]));
        assert_eq!((done, left), (jobs, 0), "{name}");
    }
}

/// Row "smd-layer-update-9e15-lp-cost-range-exit1.json": a layer whose
/// update takes 9e15 s. Before: exit 1, an LP cost of 1.5e21 beyond the
/// solver's range. Now: exit 2 before simulating, naming the job, its
/// iteration time and the slot length it exceeds.
#[test]
fn layer_update_beyond_a_slot_is_rejected_up_front() {
    let file = reproducer("smd-layer-update-9e15-lp-cost-range-exit1.json");
    let run = dmlsched_within(60.0, &["solve", "-a", "smd", &file]);
    let line = run.one_error_line("9e15 s layer update");
    for part in [
        "job 8",
        "cannot progress",
        "9.007199254740992e15 s per iteration",
        "60 s",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line}");
    }
}

/// Row "smd-slow-iteration-no-progress-exit1.json": one layer of 9e15
/// bytes. Before: exit 1 from the simulation at t = 8460 s ("no running job
/// can progress"). Now: exit 2 before simulating, naming the job and why.
#[test]
fn slow_iteration_is_rejected_before_simulating() {
    let file = reproducer("smd-slow-iteration-no-progress-exit1.json");
    let run = dmlsched_within(60.0, &["solve", "-a", "smd", &file]);
    let line = run.one_error_line("9e15-byte layer");
    assert!(!line.contains("simulation"), "{line}");
    for part in ["job 9", "cannot progress", "per iteration", "60 s"] {
        assert!(line.contains(part), "{part:?} missing from {line}");
    }
}
