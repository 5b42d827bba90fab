//! Regression tests of the fuzz reproducers where the command line exited
//! with code 1 on valid input: each now gives a checked answer,
//! or exit 2 with one `error:` line naming the field, the value and the
//! limit. Also: `--params` enums in snake case, a closed standard output
//! ends quietly, and trace messages stay short. Each command runs under the
//! watchdog of `tests/common` (time and 1 GiB peak memory).
#![cfg(feature = "cli")]

mod common;
use common::*;
use dmlsched::algorithms::Algorithm;
use rand::SeedableRng;

use std::path::{Path, PathBuf};

use dmlsched::Certificate;
use dmlsched::model::Instance;
use dmlsched::schedule::Schedule;

/// Ceiling of every run here: hangs only, not a performance target.
const SECS: f64 = 120.0;

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    // Numbered: two tests running at once may ask for the same name (both
    // `solve_checked("oasis", …)`), and one's clean-up removed the other's
    // files mid-run.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "dmlsched-repro-inputs-{name}-{}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `solve -a algorithm instance --out DIR [extra…]` must exit 0 with a
/// schedule that passes `schedule::verify` on the instance and a
/// certificate that passes its own check; returns the certificate.
fn solve_checked(algorithm: &str, instance: &str, extra: &[&str], what: &str) -> Certificate {
    let dir = scratch(&format!("solve-{algorithm}"));
    let mut args = vec!["solve", "-a", algorithm, instance, "--out", path_str(&dir)];
    args.extend_from_slice(extra);
    let run = dmlsched_within(SECS, &args);
    let stdout = run.ok(what);
    assert!(
        stdout.contains("the schedule passed schedule::verify"),
        "{what}: {stdout}"
    );
    let inst = Instance::from_json(&std::fs::read_to_string(instance).unwrap()).unwrap();
    let schedule: Schedule =
        serde_json::from_str(&std::fs::read_to_string(dir.join("schedule.json")).unwrap()).unwrap();
    dmlsched::schedule::verify(&inst, &schedule).unwrap_or_else(|v| panic!("{what}: {v}"));
    let cert: Certificate =
        serde_json::from_str(&std::fs::read_to_string(dir.join("certificate.json")).unwrap())
            .unwrap();
    cert.check(1e-9).unwrap_or_else(|v| panic!("{what}: {v}"));
    assert!(cert.objective.is_finite(), "{what}: {}", cert.objective);
    let _ = std::fs::remove_dir_all(&dir);
    cert
}

/// The column `name` of a CSV file with a header (no quoted commas in the
/// columns read here).
fn csv_column(path: &Path, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rdr = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header = rdr.headers().unwrap().clone();
    let at = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("{}: no column {name} in {header:?}", path.display()));
    rdr.records()
        .map(|r| r.unwrap().get(at).unwrap_or("").to_string())
        .collect()
}

/// `(jobs, completed, rejected)` of every row of `summary.csv` in `dir`.
fn end_states(dir: &Path) -> Vec<(u64, u64, u64)> {
    let summary = dir.join("summary.csv");
    let num = |c: &str| -> Vec<u64> {
        csv_column(&summary, c)
            .iter()
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let (jobs, done, rejected) = (num("jobs"), num("completed"), num("rejected"));
    (0..jobs.len())
        .map(|i| (jobs[i], done[i], rejected[i]))
        .collect()
}

/// The rejection reasons of the rejected jobs in every per-policy jobs CSV
/// of `dir`.
fn rejection_reasons(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("jobs") && name.ends_with(".csv") {
            let rejected = csv_column(&p, "rejected");
            let reason = csv_column(&p, "rejection");
            for (r, why) in rejected.iter().zip(reason) {
                if r == "true" || r == "1" {
                    out.push(why);
                }
            }
        }
    }
    out
}

// --- 1. OASiS with ~1e15 s slots --------------------------------------------

#[test]
fn oasis_with_a_1e15_s_slot_answers() {
    let f = reproducer("oasis-slot-1e15-normaliser-exit1.json");
    let cert = solve_checked("oasis", &f, &[], "oasis, 1e15 s slot");
    // Maximisation: the bound is on the right side of the objective, and
    // the one job fits the empty cluster, so it is admitted.
    assert!(cert.relaxation_bound.value >= cert.objective - 1e-9);
    assert!(cert.objective > 0.0, "{}", cert.objective);
}

// --- 2. GADGET-style with a 1e300 s slot ------------------------------------

#[test]
fn gadget_refuses_a_slot_whose_nic_data_overflows() {
    let f = reproducer("gadget-slot-1e300-capacity-inf-exit1.json");
    for args in [
        vec!["solve", "-a", "gadget", f.as_str()],
        vec![
            "simulate",
            f.as_str(),
            "--policies",
            "gadget,gadget-noprice",
        ],
    ] {
        let what = args.join(" ");
        let run = dmlsched_within(SECS, &args);
        let line = run.one_error_line(&what);
        assert!(line.contains("slot_length_s = 1e300"), "{line}");
        assert!(line.contains("at most 1.6e296 s"), "{line}");
    }
    // The library answers with a typed input error.
    let inst = Instance::from_json(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let e = dmlsched::algorithms::gadget::Gadget::default()
        .solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
        .unwrap_err();
    assert!(e.is_input(), "{e}");
    assert!(
        matches!(
            e,
            dmlsched::Error::Gadget(dmlsched::error::GadgetError::SlotTooLong { .. })
        ),
        "{e}"
    );
}

// --- 3. Locality with a 1e15 utility ----------------------------------------

#[test]
fn locality_with_a_1e15_utility_answers() {
    let f = reproducer("locality-utility-1e15-highs-error-exit1.json");
    let cert = solve_checked("locality", &f, &["--seed", "1"], "locality, 1e15 utility");
    assert!(cert.relaxation_bound.value >= cert.objective * (1.0 - 1e-12));
    // The one job is admitted: its utility is of the order of 1e15.
    assert!(cert.objective > 1e14, "{}", cert.objective);
}

// --- 4. Dorm with 1e300 bytes of memory -------------------------------------

#[test]
fn dorm_with_1e300_bytes_of_memory_runs_every_job() {
    let f = reproducer("sim-dorm-memory-1e300-lp-bound-exit1.json");
    let dir = scratch("dorm");
    let run = dmlsched_within(
        SECS,
        &[
            "simulate",
            &f,
            "--policies",
            "dorm",
            "--out",
            path_str(&dir),
        ],
    );
    run.ok("dorm, 1e300 bytes of memory");
    assert_eq!(end_states(&dir), vec![(1, 1, 0)]);
    let _ = std::fs::remove_dir_all(&dir);
}

// --- 5. Replays with nothing schedulable ------------------------------------

#[test]
fn an_oasis_replay_with_nothing_schedulable_runs() {
    // A CPU-only pod: the recipe makes no job of it, and says so.
    let f = reproducer("replay-alibaba-cpu-only-oasis-exit1.csv");
    let dir = scratch("alibaba");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &f,
            "--format",
            "alibaba",
            "--jobs",
            "5",
            "--gpus",
            "8",
            "--policies",
            "oasis,locality",
            "--out",
            path_str(&dir),
        ],
    );
    let stdout = run.ok("alibaba CPU-only pod under oasis");
    assert!(
        stdout.contains("1 trace rows produced no job and are skipped (0 without a duration, 1 asking for no whole GPU); 0 jobs remain"),
        "{stdout}"
    );
    assert_eq!(end_states(&dir), vec![(0, 0, 0), (0, 0, 0)]);
    let _ = std::fs::remove_dir_all(&dir);

    // ITP rows on one 100 000-GPU machine with the trace's utilities: no
    // job can train a chunk per slot, so OASiS rejects each, with a reason.
    let itp = traces_dir().join("itp-cluster02.csv");
    let dir = scratch("itp");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            path_str(&itp),
            "--jobs",
            "5",
            "--gpus",
            "100000",
            "--gpus-per-machine",
            "100000",
            "--utility",
            "trace",
            "--policies",
            "oasis",
            "--out",
            path_str(&dir),
        ],
    );
    run.ok("ITP rows, one 100 000-GPU machine, oasis");
    assert_eq!(end_states(&dir), vec![(5, 0, 5)]);
    let reasons = rejection_reasons(&dir);
    assert_eq!(reasons.len(), 5);
    assert!(
        reasons.iter().all(|r| r.contains("unschedulable")),
        "{reasons:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// --- 6. --utility sigmoid:1e-300:4 ------------------------------------------

#[test]
fn utility_refuses_a_sigmoid_multiple_the_policies_cannot_use() {
    let f = reproducer("replay-gavel-gadget-tiny-sigmoid-price-bounds-exit1.trace");
    let rates = traces_dir().join("gavel-simulation_throughputs.json");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            &f,
            "--format",
            "gavel",
            "--gpus",
            "256",
            "--policies",
            "gadget",
            "--utility",
            "sigmoid:1e-300:4",
            "--gavel-throughputs",
            path_str(&rates),
        ],
    );
    let line = run.one_error_line("--utility sigmoid:1e-300:4");
    assert!(line.contains("--utility sigmoid:1e-300:4"), "{line}");
    assert!(line.contains("M = 1e-300"), "{line}");
    assert!(line.contains("≥ S/(S + 20) = 0.1666"), "{line}");
    // The library's check is typed, and the smallest accepted multiple
    // passes it.
    use dmlsched::trace::UtilityRecipe;
    let tiny = UtilityRecipe::Sigmoid {
        multiple: 1e-300,
        steepness: 4.0,
    };
    let e = dmlsched::Error::from(tiny.validate().unwrap_err());
    assert!(e.is_input(), "{e}");
    let edge = UtilityRecipe::Sigmoid {
        multiple: UtilityRecipe::min_sigmoid_multiple(4.0),
        steepness: 4.0,
    };
    edge.validate().unwrap();
}

// --- 7. Locality replay with a one-slot horizon -----------------------------

#[test]
fn a_locality_replay_with_a_one_slot_horizon_rejects_what_cannot_run() {
    let t = traces_dir().join("tiresias-60_job.csv");
    let dir = scratch("horizon1");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            path_str(&t),
            "--jobs",
            "5",
            "--gpus",
            "32",
            "--gpus-per-machine",
            "4",
            "--policies",
            "locality",
            "--horizon",
            "1",
            "--out",
            path_str(&dir),
        ],
    );
    run.ok("locality, --horizon 1");
    let states = end_states(&dir);
    assert_eq!(states.len(), 1);
    let (jobs, done, rejected) = states[0];
    assert_eq!((jobs, done + rejected), (5, 5), "{states:?}");
    assert!(rejected >= 1, "{states:?}");
    let reasons = rejection_reasons(&dir);
    assert!(
        reasons
            .iter()
            .all(|r| r.contains("window") || r.contains("horizon")),
        "{reasons:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// --- 8. SJF-BCO's time-indexed bound options --------------------------------

#[test]
fn sjf_bco_time_indexed_options_are_refused_before_the_run() {
    let f = reproducer("params-sjf-bco-mip-rel-gap-4-exit1.json");
    let ring = "examples/data/instance_ring_batch.json";
    let run = dmlsched_within(SECS, &["solve", "-a", "sjf-bco", ring, "--params", &f]);
    let line = run.one_error_line("sjf-bco, mip_rel_gap 4");
    assert!(line.contains("time_indexed_bound.limits"), "{line}");
    assert!(line.contains("mip_rel_gap: 4 is not in [0, 1)"), "{line}");

    let dir = scratch("sjf-bco");
    let params = dir.join("max_jobs.json");
    std::fs::write(&params, r#"{"time_indexed_bound": {"max_jobs": 2}}"#).unwrap();
    let run = dmlsched_within(
        SECS,
        &[
            "solve",
            "-a",
            "sjf-bco",
            ring,
            "--params",
            path_str(&params),
        ],
    );
    let line = run.one_error_line("sjf-bco, time-indexed max_jobs 2");
    assert!(line.contains("max_jobs"), "{line}");
    assert!(
        line.contains("jobs would be 10, above the limit 2"),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The library refuses the gap when the parameters are checked.
    let p: dmlsched::algorithms::sjf_bco::SjfBcoParams =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let e = dmlsched::Error::from(p.validate().unwrap_err());
    assert!(e.is_input(), "{e}");
}

// --- 9. OASiS v_floor beyond the instance's limit ---------------------------

#[test]
fn oasis_refuses_a_value_floor_above_its_limit() {
    let f = reproducer("params-oasis-v-floor-1e19-price-bounds-exit1.json");
    let ps = "examples/data/instance_ps.json";
    let run = dmlsched_within(SECS, &["solve", "-a", "oasis", ps, "--params", &f]);
    let line = run.one_error_line("oasis, v_floor 1e19");
    assert!(line.contains("v_floor = 1e19 is too large"), "{line}");
    assert!(line.contains("must be below 11365853.1"), "{line}");
    // The library's error is typed, and a floor below the limit runs.
    let inst = Instance::from_json(&std::fs::read_to_string(ps).unwrap()).unwrap();
    let with_floor = |v| {
        let mut built = dmlsched::algorithms::oasis::OasisParams::default();
        built.bounds = dmlsched::online::BoundsChoice::ValueFloor { v_floor: Some(v) };
        built
    };
    let e = dmlsched::algorithms::oasis::Oasis::new(with_floor(1e19))
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap_err();
    assert!(e.is_input(), "{e}");
    assert!(
        matches!(
            e,
            dmlsched::Error::Online(dmlsched::online::OnlineError::ValueFloorTooLarge { .. })
        ),
        "{e}"
    );
    dmlsched::algorithms::oasis::Oasis::new(with_floor(1e7))
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
}

// --- 10. --params enums in snake case ----------------------------------------

#[test]
fn params_enums_are_read_in_snake_case() {
    let bounds = reproducer("params-oasis-bounds-snake-case-rejected.json");
    solve_checked(
        "oasis",
        "examples/data/instance_ps.json",
        &["--params", &bounds],
        "oasis, bounds value_floor",
    );
    let objective = reproducer("params-locality-batch-objective-snake-case-rejected.json");
    let batch = reproducer("instance_ps_batch.json");
    let cert = solve_checked(
        "locality-batch",
        &batch,
        &["--params", &objective],
        "locality-batch, objective weighted_completion",
    );
    assert!(
        cert.algorithm.contains("weighted_completion"),
        "{}",
        cert.algorithm
    );
    // Minimisation: the bound is at most the objective.
    assert!(cert.relaxation_bound.value <= cert.objective * (1.0 + 1e-9));
}

// --- 11. Locality in a Philly replay, default flags --------------------------

#[test]
fn a_locality_replay_gets_working_defaults() {
    let philly = traces_dir().join("philly.csv");
    let dir = scratch("philly");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            path_str(&philly),
            "--jobs",
            "20",
            "--gpus",
            "64",
            "--policies",
            "locality",
            "--out",
            path_str(&dir),
        ],
    );
    let stdout = run.ok("philly, locality, default flags");
    assert!(
        stdout.contains("horizon cover:3, utility sigmoid:2:4"),
        "{stdout}"
    );
    let states = end_states(&dir);
    assert_eq!(states.len(), 1);
    let (jobs, done, rejected) = states[0];
    assert_eq!((jobs, done + rejected), (20, 20), "{states:?}");
    // A rejected job's reason names the window that is too short.
    for r in rejection_reasons(&dir) {
        assert!(r.contains("plan window"), "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// --- 12. Closed pipes ---------------------------------------------------------

/// Runs `args` with a standard output whose reader is gone before the
/// first write: the command must end as if nothing happened (exit 0, no
/// panic, nothing on stderr).
fn closed_stdout(args: &[&str]) {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_dmlsched"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dmlsched binary runs");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("piped stderr")
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "{args:?}: {status:?}, stderr {err:?}"
    );
    assert!(err.is_empty(), "{args:?}: stderr {err:?}");
}

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    let t = traces_dir().join("tiresias-60_job.csv");
    closed_stdout(&[
        "solve",
        "-a",
        "sjf-bco",
        "examples/data/instance_ring_batch.json",
    ]);
    closed_stdout(&["pcip", "examples/pcip/ka5.json"]);
    closed_stdout(&[
        "simulate",
        "examples/data/instance_ring_batch.json",
        "--policies",
        "fifo,gadget",
    ]);
    closed_stdout(&[
        "replay",
        path_str(&t),
        "--jobs",
        "5",
        "--gpus",
        "16",
        "--policies",
        "fifo",
    ]);
    // With --out the files are still written after the output is dropped.
    let dir = scratch("pipe-out");
    closed_stdout(&[
        "solve",
        "-a",
        "gadget",
        "examples/data/instance_ring.json",
        "--out",
        path_str(&dir),
    ]);
    assert!(dir.join("schedule.json").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

// --- 13. Short trace messages ---------------------------------------------------

#[test]
fn trace_messages_truncate_long_values_and_skipped_rows_are_one_line() {
    let dir = scratch("trace-msg");
    let big = dir.join("big.csv");
    std::fs::write(
        &big,
        format!(
            "job_id,submission_time,duration,num_gpu\na,5010,{},1\n",
            "1".repeat(2000)
        ),
    )
    .unwrap();
    let run = dmlsched_within(
        SECS,
        &["replay", path_str(&big), "--format", "itp", "--gpus", "64"],
    );
    let line = run.one_error_line("a 2 000-digit duration");
    assert!(line.len() < 400, "{} bytes: {line}", line.len());
    assert!(line.contains("column `duration`"), "{line}");
    assert!(line.contains("… (2000 characters)"), "{line}");

    // Gavel rows without a k80 rate are skipped; the window then starts
    // past the trace's end, an exit 2 that must stay one line.
    let gavel = traces_dir().join("gavel-msr-seed0-6214e9.trace");
    let rates = traces_dir().join("gavel-simulation_throughputs.json");
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            path_str(&gavel),
            "--format",
            "gavel",
            "--gavel-gpu",
            "k80",
            "--gavel-throughputs",
            path_str(&rates),
            "--start",
            "1e12",
            "--policies",
            "fifo",
        ],
    );
    run.one_error_line("gavel, k80, start past the end");
    // On success the skipped rows are one note on standard output.
    let run = dmlsched_within(
        SECS,
        &[
            "replay",
            path_str(&gavel),
            "--format",
            "gavel",
            "--gavel-gpu",
            "k80",
            "--gavel-throughputs",
            path_str(&rates),
            "--jobs",
            "5",
            "--policies",
            "fifo",
        ],
    );
    let stdout = run.ok("gavel, k80");
    let notes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("Gavel rows have no measured k80 rate"))
        .collect();
    assert_eq!(notes.len(), 1, "{stdout}");
    assert!(notes[0].contains("(the first: row "), "{}", notes[0]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

// --- Library: bounds with nothing schedulable ------------------------------------

#[test]
fn price_bounds_derive_when_no_job_is_schedulable() {
    use dmlsched::online::{BoundInputs, BoundsRule, Ledger, PoolId, PriceBounds, UnitDemand};
    let ledger = Ledger::new(4, 1, vec![(PoolId(0), vec![1.0]), (PoolId(1), vec![1.0])]).unwrap();
    let unschedulable = BoundInputs {
        arrival: 0,
        schedulable: false,
        ln_u_max: 0.0,
        ln_u_min: f64::NEG_INFINITY,
        unit_demands: vec![UnitDemand {
            pool: PoolId(0),
            demand: vec![1.0],
        }],
        normalisers: vec![(PoolId(0), 1.0)],
    };
    for rule in [BoundsRule::Eta, BoundsRule::ValueFloor { v_floor: 1.0 }] {
        let b = PriceBounds::derive(&ledger, std::slice::from_ref(&unschedulable), rule)
            .unwrap_or_else(|e| panic!("{rule:?}: {e}"));
        assert!(b.ln_l(PoolId(0)).is_finite());
    }
    // A schedulable job with no late utility still leaves the η rule
    // nothing to set L with: a typed input error.
    let late_zero = BoundInputs {
        schedulable: true,
        ..unschedulable
    };
    let e = PriceBounds::derive(&ledger, &[late_zero], BoundsRule::Eta).unwrap_err();
    assert!(dmlsched::Error::from(e).is_input());
}

/// Every subcommand writes its output through `out!`/`out_raw!` (a closed
/// pipe ends it quietly); a `println!` or `print!` in the command line's
/// sources would panic on `EPIPE` again.
#[test]
fn the_command_line_prints_only_through_out() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin/dmlsched");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for bad in ["println!(", "print!("] {
                let hit = code.match_indices(bad).any(|(at, _)| {
                    !code[..at].ends_with('e') // eprintln!, eprint! are fine
                });
                assert!(!hit, "{}:{}: {line}", p.display(), i + 1);
            }
        }
    }
}

/// Found by a long `fuzz_cli` run: the SJF-BCO family on an instance whose
/// horizon is too short for its jobs exited with code 1 ("no trial placed
/// every job within the horizon"); it is bad input, exit 2 naming the
/// horizon and the field to change.
#[test]
fn sjf_bco_family_refuses_a_horizon_too_short_for_its_jobs() {
    let dir = scratch("short-horizon");
    let mut inst: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("examples/data/instance_ring_batch.json").unwrap(),
    )
    .unwrap();
    inst["horizon_slots"] = serde_json::json!(20);
    let file = dir.join("instance.json");
    std::fs::write(&file, inst.to_string()).unwrap();
    for a in ["rar-ff", "rar-ls", "rar-rand"] {
        let run = dmlsched_within(SECS, &["solve", "-a", a, path_str(&file)]);
        let line = run.one_error_line(a);
        assert!(
            line.contains("20 slots") && line.contains("horizon_slots"),
            "{line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
