//! Regression tests of the `dmlsched pcip` rows of the fuzz reproducers:
//! each runs the built binary under the watchdog (time and
//! 1 GiB peak memory) and checks the answer — the point against every bound
//! and row of the input file, the objective, the certificate's bounds — or
//! the one `error:` line naming the field, the value and the limit.
#![cfg(feature = "cli")]

mod common;
mod pcip_check;

use common::*;
use pcip_check::{Answer, check_answer};

/// Generous ceiling for a hang (not a timing target).
const HANG_S: f64 = 60.0;

/// Runs `dmlsched pcip FILE FLAGS…`, expects exit 0 and checks the answer.
fn solved(file: &str, flags: &[&str]) -> Answer {
    solved_within(HANG_S, file, flags)
}

fn solved_within(secs: f64, file: &str, flags: &[&str]) -> Answer {
    let mut args = vec!["pcip", file];
    args.extend_from_slice(flags);
    let what = format!("pcip {}", args[1..].join(" "));
    let run = dmlsched_within(secs, &args);
    let stdout = run.ok(&what);
    let text = std::fs::read_to_string(file).expect("the program file");
    check_answer(&text, stdout, &what)
}

/// Runs `dmlsched pcip FILE FLAGS…` and returns its one `error:` line.
fn refused(file: &str, flags: &[&str]) -> String {
    let mut args = vec!["pcip", file];
    args.extend_from_slice(flags);
    let what = format!("pcip {}", args[1..].join(" "));
    dmlsched_within(HANG_S, &args)
        .one_error_line(&what)
        .to_string()
}

/// A program written to a fresh file of the temporary folder.
fn temp_program(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("dmlsched-repro-pcip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp program");
    path.to_string_lossy().into_owned()
}

fn status(a: &Answer) -> String {
    a.json["certificate"]["exact"]["status"].to_string()
}

/// Row 1: a binary column with `upper` 0 is fixed at 0 (min x0 + 5·x1,
/// x0 + x1 ≥ 1: the optimum is 5 at x1 = 1), with and without `--exact`;
/// an `Optimal` status goes with that point only.
#[test]
fn binary_upper_zero_is_honoured() {
    let f = reproducer("pcip-binary-upper-0-ignored-wrong-optimum.json");
    for flags in [&["--exact"][..], &[]] {
        let a = solved(&f, flags);
        assert_eq!(a.x[0], 0.0, "{flags:?}: x0 is fixed at 0: {:?}", a.x);
        assert_eq!(a.objective, 5.0, "{flags:?}");
        if flags.contains(&"--exact") {
            assert!(status(&a).contains("Optimal"), "{}", status(&a));
            assert_eq!(a.json["certificate"]["exact"]["dual_bound"], 5.0);
        }
    }
    // Any other finite bound on a binary column is refused, naming it.
    let bad = temp_program(
        "binary-upper-2.json",
        r#"{"format_version":1,"sense":"minimise","n_vars":2,"objective":[1,5],
            "kinds":["binary","integer"],"upper":[2,3],
            "covering":[{"entries":[[0,1],[1,1]],"rhs":1}]}"#,
    );
    let line = refused(&bad, &[]);
    assert!(line.contains("upper[0]") && line.contains(" 2 "), "{line}");
}

/// Row 2: a row-less program under `--time-limit` used to spin in the
/// neighbourhood search (10⁶ `sub_mip` stage entries, gigabytes): it answers
/// at once, with a run record that does not grow with the limit.
#[test]
fn neighbourhood_stops_when_it_cannot_improve() {
    let f = reproducer("pcip-time-limit-neighbourhood-spin-oom.json");
    for limit in ["1", "10", "30", "1e300"] {
        let run = dmlsched_within(25.0, &["pcip", &f, "--time-limit", limit]);
        let what = format!("--time-limit {limit}");
        let text = std::fs::read_to_string(&f).unwrap();
        let a = check_answer(&text, run.ok(&what), &what);
        assert_eq!(a.objective, 0.0, "{what}");
        let stages = a.json["certificate"]["run"]["stage_seconds"]
            .as_array()
            .unwrap()
            .len();
        assert!(stages <= 8, "{what}: {stages} stage entries");
        assert!(
            run.stdout.len() < 20_000,
            "{what}: {} bytes",
            run.stdout.len()
        );
    }
}

/// Row 3: rhs 1e15 with `--time-limit 1` hung in the MIP solver (a sub-MIP
/// with an integer column at 2·10¹⁴); the whole call is bounded.
#[test]
fn time_limit_bounds_the_whole_call() {
    let f = reproducer("pcip-repair-hang-time-limit-ignored.json");
    let a = solved_within(20.0, &f, &["--time-limit", "1"]);
    assert!(a.x[2] > 1e14, "{:?}", a.x);
}

/// Row 4: a feasible 4-variable program (x = (2, 0, 0, 1), cost 12, is
/// feasible) failed with exit 1: repair stalled on a packing row. The
/// optimum is 11 at (1, 1, 0, 1).
#[test]
fn the_feasible_point_is_found() {
    let f = reproducer("pcip-feasible-4var-mip-no-feasible-point-exit1.json");
    for flags in [&[][..], &["--exact"], &["--no-neighbourhood"]] {
        let a = solved(&f, flags);
        assert!(a.objective <= 12.0, "{flags:?}: {}", a.objective);
        assert_eq!(a.objective, 11.0, "{flags:?}: {:?}", a.x);
    }
}

/// Row 5: when the LP has not finished by the limit, the answer is a greedy
/// feasible point with the trivial bound; without a greedy point, exit 2
/// with a `time limit` line.
#[test]
fn tiny_time_limits_give_a_greedy_point_or_a_time_limit_error() {
    for limit in ["1e-6", "1e-9", "5e-324"] {
        let a = solved("examples/pcip/ka5.json", &["--time-limit", limit]);
        assert_eq!(a.json["method"], "Greedy", "{limit}");
        assert_eq!(
            a.json["certificate"]["relaxation_bound"]["kind"], "Trivial",
            "{limit}"
        );
    }
    // x0 ≥ 1 but x0 ≤ x1: the greedy point from zero cannot grow x0.
    let f = temp_program(
        "no-greedy-point.json",
        r#"{"format_version":1,"sense":"minimise","n_vars":2,"objective":[1,1],
            "covering":[{"entries":[[0,1]],"rhs":1}],
            "linking":[{"entries":[[0,1],[1,-1]],"sense":"le","rhs":0}]}"#,
    );
    let line = refused(&f, &["--time-limit", "1e-9"]);
    assert!(
        line.contains("time limit") && line.contains("1e-9"),
        "{line}"
    );
    // With time, the same program is solved.
    assert_eq!(solved(&f, &[]).objective, 2.0);
}

/// Row 6: the G1 value (c·y of the snapped LP point) was printed below the
/// proven bound; it is never beyond it.
#[test]
fn guarantee_value_is_not_below_the_bound() {
    let f = reproducer("pcip-min-guarantee-value-below-lp-bound.json");
    let a = solved(&f, &[]);
    assert_eq!(a.x, vec![1.0]);
    let g1 = a.json["certificate"]["guarantees"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["expression"].as_str().unwrap_or("").contains("(G1)"))
        .expect("a G1 statement");
    let v = g1["value"].as_f64().unwrap();
    assert!(
        a.bound > 0.0 && v >= a.bound,
        "G1 value {v} below the bound {}",
        a.bound
    );
}

/// Row 7: `--exact` with an integer bound 2^31 is refused, naming the field,
/// the value and the 2^30 limit; without `--exact` it is solved.
#[test]
fn exact_integer_bound_beyond_2p30_is_refused() {
    let f = reproducer("pcip-exact-integer-bound-2p31-exit1.json");
    let line = refused(&f, &["--exact"]);
    for part in ["upper bound", "column 0", "2147483648", "1073741824"] {
        assert!(line.contains(part), "{part}: {line}");
    }
    assert_eq!(solved(&f, &[]).objective, 1.0);
    assert_eq!(solved(&f, &["--bound-budget", "1"]).objective, 1.0);
}

/// Row 8: JSON errors carry the field path.
#[test]
fn json_errors_name_the_field_path() {
    let f = reproducer("pcip-json-error-without-field-path.json");
    let line = refused(&f, &[]);
    assert!(line.contains("objective[1]"), "{line}");
}

/// Row 9: `"upper": []` for 3 columns is a dimension mismatch, like any
/// other wrong length of a per-column list.
#[test]
fn per_column_lists_must_have_n_entries() {
    let f = reproducer("pcip-empty-upper-accepted.json");
    let line = refused(&f, &[]);
    assert!(
        line.contains("upper") && line.contains("expected 3, got 0"),
        "{line}"
    );
    for (field, list) in [("kinds", r#"[]"#), ("col_labels", r#"["a"]"#)] {
        let g = temp_program(
            &format!("{field}.json"),
            &format!(
                r#"{{"format_version":1,"sense":"minimise","n_vars":3,"objective":[3,3,4],
                    "{field}":{list},"covering":[{{"entries":[[0,2],[2,2]],"rhs":3}}]}}"#
            ),
        );
        let line = refused(&g, &[]);
        assert!(
            line.contains(field) && line.contains("expected 3"),
            "{line}"
        );
    }
}

/// Row 10: `--time-limit -1` is one line naming the value.
#[test]
fn negative_time_limit_is_one_line() {
    for v in ["-1", "0", "nan", "abc"] {
        let line = refused("examples/pcip/ka5.json", &["--time-limit", v]);
        assert!(line.contains("--time-limit") && line.contains(v), "{line}");
    }
}
