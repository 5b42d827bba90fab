//! Sweeps (`dmlsched::sweep`, `dmlsched sweep`): the same tables whatever
//! runs the cells (one worker or two, one process or two shards merged, a
//! run killed and resumed), each cell the replay (or simulation) of its
//! one policy, and bad grids answered with typed input errors.
#![cfg(feature = "cli")]

mod common;
use common::*;

use std::path::{Path, PathBuf};

use dmlsched::sweep::{Grid, RunOptions, Shard, Store, SweepError, run, run_cell, tables};

fn philly() -> String {
    traces_dir()
        .join("philly.csv")
        .to_string_lossy()
        .into_owned()
}

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dmlsched-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 2 windows × 2 policies × 2 load scales × 2 seeds of `jobs` Philly jobs.
fn grid_json(jobs: usize) -> String {
    serde_json::json!({
        "trace": philly(),
        "windows": [{"start": "2017-11-01", "jobs": jobs}, {"start": "2017-11-15", "jobs": jobs}],
        "policies": ["fifo", "tiresias"],
        "load_scales": [1, 2],
        "seeds": [0, 1],
    })
    .to_string()
}

fn grid(jobs: usize) -> Grid {
    Grid::from_json(&grid_json(jobs), Path::new(".")).expect("grid")
}

fn options(workers: usize, shard: Option<Shard>) -> RunOptions {
    let mut o = RunOptions::default();
    o.workers = Some(workers);
    o.shard = shard;
    o
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One worker, two workers, and two shards in two folders merged: the
/// same bytes in both tables.
#[test]
fn workers_and_shards_give_the_same_tables() {
    let plan = grid(150).plan().unwrap();
    assert_eq!((plan.rows.len(), plan.cells.len()), (16, 16));
    let dir = scratch("same");
    let mut runs = Vec::new();
    for workers in [1, 2] {
        let store = Store::open(&dir.join(format!("w{workers}"))).unwrap();
        let report = run(&plan, &store, &options(workers, None), &mut ()).unwrap();
        assert_eq!((report.ran, report.skipped), (16, 0));
        assert!(report.failed.is_empty());
        runs.push(tables(&plan, &store).unwrap());
    }
    let merged = Store::open(&dir.join("merged")).unwrap();
    for index in 0..2 {
        let shard = Shard { index, count: 2 };
        let store = Store::open(&dir.join(format!("shard{index}"))).unwrap();
        let report = run(&plan, &store, &options(1, Some(shard)), &mut ()).unwrap();
        assert_eq!(report.ran, 8);
        // A shard alone is not the grid.
        assert!(matches!(tables(&plan, &store), Err(SweepError::Run(_))));
        assert_eq!(merged.absorb(&store, &plan).unwrap(), 8);
    }
    runs.push(tables(&plan, &merged).unwrap());
    for other in &runs[1..] {
        assert_eq!(other.summary_csv, runs[0].summary_csv);
        assert_eq!(other.jobs_csv, runs[0].jobs_csv);
    }
    // 16 summary rows and 16 × 150 job rows, each under its header.
    assert_eq!(runs[0].summary_csv.lines().count(), 17);
    assert_eq!(runs[0].jobs_csv.lines().count(), 1 + 16 * 150);
    let header = runs[0].summary_csv.lines().next().unwrap();
    assert!(header.starts_with("cell,window,cluster_spec,params,policy,seed,"));
    assert!(!header.contains("solver_time_s"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cell is `replay` of its one policy at its load scale and seed: the
/// cell's summary row is the replay's, less the wall-clock column, and
/// its per-job rows are the replay's.
#[test]
fn a_cell_is_the_replay_of_its_policy() {
    let plan = grid(120).plan().unwrap();
    let row = plan
        .rows
        .iter()
        .find(|r| {
            let s = plan.cells[r.cell].spec();
            s["policy"] == "tiresias" && s["load_scale"] == 2.0 && s["seed"] == 1
        })
        .unwrap();
    assert_eq!(row.source, "jobs=120,start=2017-11-01");
    let result = run_cell(&plan.cells[row.cell]);
    assert!(result.error.is_none(), "{:?}", result.error);

    let mut config = dmlsched::replay::ReplayConfig::new(philly());
    config.start = Some("2017-11-01".into());
    config.jobs = 120;
    config.policies = vec!["tiresias".into()];
    config.load_scales = vec![2.0];
    config.seeds = vec![1];
    let replayed = dmlsched::replay::replay(&config, &mut ()).unwrap();
    let dir = scratch("cell");
    replayed.write(&dir, &mut ()).unwrap();
    let summary = read(&dir.join("summary.csv"));
    let (head, row_line) = summary.split_once('\n').unwrap();
    let timed = csv_fields(head)
        .iter()
        .position(|h| h == "solver_time_s")
        .unwrap();
    let drop = |line: &str| {
        let mut f = csv_fields(line);
        f.remove(timed);
        f
    };
    let (cell_head, cell_row) = result.summary_csv.split_once('\n').unwrap();
    assert_eq!(csv_fields(cell_head), drop(head));
    assert_eq!(csv_fields(cell_row.trim_end()), drop(row_line.trim_end()));
    let jobs = read(&dir.join("jobs-tiresias-x2-seed1.csv"));
    assert_eq!(result.jobs_csv, jobs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rows that run the same thing share a cell: a baseline under two
/// parameter sets runs once and appears twice in the table; the
/// algorithm under two different sets runs twice.
#[test]
fn rows_that_run_the_same_share_a_cell() {
    let json = serde_json::json!({
        "instances": ["examples/data/instance_ps.json"],
        "policies": ["fifo", "oasis"],
        "seeds": [0],
        "params": {"paper": {}, "scaled": {"oasis": {"u_scale": 2.0}}},
    });
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let grid = Grid::from_value(&json, root).unwrap();
    let plan = grid.plan().unwrap();
    assert_eq!(plan.rows.len(), 4);
    assert_eq!(plan.cells.len(), 3);
    assert_eq!(plan.rows[0].cell, plan.rows[2].cell, "fifo under both sets");
    assert_ne!(plan.rows[1].cell, plan.rows[3].cell, "oasis under two sets");
    let dir = scratch("shared");
    let store = Store::open(&dir).unwrap();
    let report = run(&plan, &store, &options(2, None), &mut ()).unwrap();
    assert_eq!(report.ran, 3);
    let t = tables(&plan, &store).unwrap();
    let params: Vec<String> = t
        .summary_csv
        .lines()
        .skip(1)
        .map(|l| csv_fields(l)[3].clone())
        .collect();
    assert_eq!(params, ["paper", "paper", "scaled", "scaled"]);
    assert!(
        t.summary_csv
            .starts_with("cell,instance,cluster_spec,params,")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A simulation cell is `dmlsched simulate` of its policy: the same
/// summary row, less the wall-clock column.
#[test]
fn an_instance_cell_is_the_simulation_of_its_policy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let json = serde_json::json!({
        "instances": ["examples/data/instance_ps.json"],
        "policies": ["oasis"],
        "seeds": [3],
    });
    let plan = Grid::from_value(&json, root).unwrap().plan().unwrap();
    let result = run_cell(&plan.cells[0]);
    assert!(result.error.is_none(), "{:?}", result.error);
    let dir = scratch("simulate");
    let out = dir.to_string_lossy().into_owned();
    dmlsched_within(
        120.0,
        &[
            "simulate",
            "examples/data/instance_ps.json",
            "--policies",
            "oasis",
            "--seed",
            "3",
            "--out",
            &out,
        ],
    )
    .ok("simulate");
    let summary = read(&dir.join("summary.csv"));
    let mut lines = summary.lines();
    let head = csv_fields(lines.next().unwrap());
    let timed = head.iter().position(|h| h == "solver_time_s").unwrap();
    let mut want = csv_fields(lines.next().unwrap());
    want.remove(timed);
    let cell_row = result.summary_csv.lines().nth(1).unwrap();
    assert_eq!(csv_fields(cell_row), want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// FNV-1a, 64 bits, written out again here so that a change of the key
/// scheme (which would orphan every stored sweep) fails this test.
fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A cell's key hashes its description's canonical JSON (keys sorted at
/// every level), not its place in the grid: a grid grown by a seed keeps
/// every key it had.
#[test]
fn keys_hash_the_description_and_survive_a_grown_grid() {
    // The trace's path as the grid gives it, relative to the grid's folder.
    let mut json = serde_json::json!({
        "trace": "philly.csv",
        "windows": [{"start": "2017-11-01", "jobs": 10}],
        "policies": ["fifo"],
        "options": {"gpus": 32},
    });
    let base = traces_dir();
    let plan = Grid::from_value(&json, &base).unwrap().plan().unwrap();
    let canonical = format!(
        r#"{{"kind":"replay","load_scale":1.0,"options":{{"gpus":32,"jobs":10,"start":"2017-11-01"}},"params":null,"policy":"fifo","seed":0,"trace":"philly.csv","version":"{}"}}"#,
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(plan.cells[0].key(), fnv1a(&canonical));
    json["seeds"] = serde_json::json!([5, 0]);
    let grown = Grid::from_value(&json, &base).unwrap().plan().unwrap();
    assert_eq!(grown.cells[1].key(), plan.cells[0].key());
    // A cell travels as JSON and comes back the same.
    let back = dmlsched::sweep::Cell::from_json(&plan.cells[0].to_json()).unwrap();
    assert_eq!(back, plan.cells[0]);
}

/// The shards of any count are disjoint and cover the cells.
#[test]
fn shards_partition_the_cells() {
    let plan = grid(10).plan().unwrap();
    for count in 1..=7 {
        let mut seen = Vec::new();
        for index in 0..count {
            seen.extend(plan.shard(Shard { index, count }).iter().map(|c| c.key()));
        }
        seen.sort_unstable();
        let mut all: Vec<&str> = plan.cells.iter().map(|c| c.key()).collect();
        all.sort_unstable();
        assert_eq!(seen, all, "{count} shards");
    }
    for bad in ["2/2", "0/0", "1", "a/b", "-1/2", ""] {
        let e = bad.parse::<Shard>().unwrap_err();
        assert!(
            e.is_input() && e.to_string().contains("--shard"),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        "1/4".parse::<Shard>().unwrap(),
        Shard { index: 1, count: 4 }
    );
}

/// Bad grids: typed input errors naming the field, before anything runs.
#[test]
fn bad_grids_are_input_errors() {
    let trace = philly();
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (serde_json::json!([1]), "must be a JSON object"),
        (serde_json::json!({"policies": ["fifo"]}), "needs `trace`"),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "seed": [1]}),
            "unknown grid field `seed`",
        ),
        (
            serde_json::json!({"trace": trace}),
            "`policies` must be a non-empty list",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["nope"]}),
            "unknown policy nope",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo", "fifo"]}),
            "fifo is listed twice",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "seeds": [1, 1]}),
            "seeds: 1 is listed twice",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "seeds": [-1]}),
            "`seeds` must be",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "load_scales": [0]}),
            "positive numbers",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "options": {"jobz": 3}}),
            "unknown option `jobz`",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "windows": [{"jobs": "many"}]}),
            "option jobs",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "windows": [{"jobs": 0}]}),
            "--jobs must be at least 1",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "clusters": [{"gpus": 60}]}),
            "--gpus 60 --gpus-per-machine 8",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "windows": [{"jobs": 5}, {"name": "b", "jobs": 5}, {"jobs": 5}]}),
            "two entries are labelled `jobs=5`",
        ),
        (
            serde_json::json!({"trace": "no-such.csv", "policies": ["fifo"]}),
            "no-such.csv",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["fifo"], "params": {"a": {"fifo": {}}}}),
            "fifo takes no parameters",
        ),
        (
            serde_json::json!({"trace": trace, "policies": ["oasis"], "params": {"a": {"oasis": {"no_such": 1}}}}),
            "params of oasis",
        ),
        (
            serde_json::json!({"instances": ["x.json"], "policies": ["fifo"], "load_scales": [2]}),
            "`load_scales` applies to trace grids",
        ),
        (
            serde_json::json!({"instances": ["x.json"], "policies": ["fifo"], "options": {"jobs": 2}}),
            "unknown option `jobs`",
        ),
        (
            serde_json::json!({"trace": trace, "instances": ["x.json"], "policies": ["fifo"]}),
            "not both",
        ),
    ];
    // 1,001 seeds × 1,000 load scales: more rows than a grid may have,
    // refused at once, not planned.
    let seeds: Vec<u64> = (0..1001).collect();
    let scales: Vec<f64> = (1..=1000).map(f64::from).collect();
    let huge = serde_json::json!({"trace": trace, "policies": ["fifo"], "seeds": seeds, "load_scales": scales});
    let mut cases = cases;
    cases.push((huge, "more than 1000000 rows (1 × 1 × 1 × 1000 × 1001 × 1)"));
    for (json, want) in cases {
        let e = Grid::from_value(&json, Path::new("."))
            .and_then(|g| g.plan())
            .expect_err(&json.to_string());
        assert!(e.is_input(), "{json}: {e:?}");
        assert!(e.to_string().contains(want), "{json}: `{e}` lacks `{want}`");
    }
    let e = Grid::from_json("{", Path::new(".")).unwrap_err();
    assert!(e.to_string().starts_with("grid JSON:"), "{e}");
    let plan = grid(10).plan().unwrap();
    let store = Store::open(&scratch("workers0")).unwrap();
    let e = run(&plan, &store, &options(0, None), &mut ()).unwrap_err();
    assert!(e.is_input() && e.to_string().contains("--workers"), "{e}");
}

/// A cell that fails loses only itself: the others are kept, the failed
/// one is named and runs again when the sweep does.
#[test]
fn a_failed_cell_is_named_and_runs_again() {
    // 10-s slots over a Philly window give the GADGET-style scheduler more
    // horizon × machines than it takes: its cells fail.
    let json = serde_json::json!({
        "trace": philly(),
        "windows": [{"jobs": 40, "slot_length": 10}],
        "policies": ["fifo", "gadget"],
    });
    let plan = Grid::from_value(&json, Path::new("."))
        .unwrap()
        .plan()
        .unwrap();
    let dir = scratch("failed");
    let store = Store::open(&dir).unwrap();
    let report = run(&plan, &store, &options(2, None), &mut ()).unwrap();
    assert_eq!(report.ran, 1);
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].0.spec()["policy"], "gadget");
    assert!(tables(&plan, &store).is_err());
    let again = run(&plan, &store, &options(2, None), &mut ()).unwrap();
    assert_eq!((again.skipped, again.ran, again.failed.len()), (1, 0, 1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The finished cells under `dir/cells`.
fn finished(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("cells")) else {
        return Vec::new();
    };
    let mut keys: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    keys.sort();
    keys
}

/// `dmlsched sweep` killed mid-sweep and run again: it runs only the cells
/// not finished, and the tables equal an uninterrupted run's.
#[test]
fn a_killed_sweep_resumes_without_repeating_cells() {
    let dir = scratch("killed");
    let grid_path = dir.join("grid.json");
    std::fs::write(&grid_path, grid_json(1500)).unwrap();
    let (g, resumed, fresh) = (
        grid_path.to_string_lossy().into_owned(),
        dir.join("resumed"),
        dir.join("fresh"),
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dmlsched"))
        .args(["sweep", &g, "--workers", "1", "--out"])
        .arg(&resumed)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while finished(&resumed).len() < 2 {
        assert!(
            started.elapsed().as_secs() < 120,
            "no cell finished in 120 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = finished(&resumed);
    assert!(before.len() < 16, "the sweep finished before it was killed");
    let out = resumed.to_string_lossy().into_owned();
    let second = dmlsched_within(300.0, &["sweep", &g, "--workers", "2", "--out", &out]);
    let stdout = second.ok("resumed sweep");
    let line = format!(
        "{} cells to run, {} already finished",
        16 - before.len(),
        before.len()
    );
    assert!(stdout.contains(&line), "`{line}` not in {stdout}");
    let fresh_out = fresh.to_string_lossy().into_owned();
    dmlsched_within(300.0, &["sweep", &g, "--out", &fresh_out]).ok("fresh sweep");
    for table in ["summary.csv", "jobs.csv"] {
        assert!(
            read(&resumed.join(table)) == read(&fresh.join(table)),
            "{table} differs"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command line: shards in one folder, then `--merge`; errors.
#[test]
fn the_command_line_shards_and_merges() {
    let dir = scratch("cli");
    let grid_path = dir.join("grid.json");
    std::fs::write(&grid_path, grid_json(100)).unwrap();
    let g = grid_path.to_string_lossy().into_owned();
    let (one, sharded) = (
        dir.join("one").to_string_lossy().into_owned(),
        dir.join("sharded").to_string_lossy().into_owned(),
    );
    let first = dmlsched_within(120.0, &["sweep", &g, "--out", &sharded, "--shard", "0/2"]);
    assert!(
        first
            .ok("shard 0")
            .contains("8 of 16 cells of the grid are finished")
    );
    assert!(!dir.join("sharded/summary.csv").exists());
    let merge = dmlsched_within(60.0, &["sweep", &g, "--out", &sharded, "--merge"]);
    assert_eq!(merge.code, Some(1), "{merge:?}");
    assert!(
        merge.stderr.contains("8 of 16 cells are not finished"),
        "{}",
        merge.stderr
    );
    // The second shard finishes the grid: its run writes the tables.
    let second = dmlsched_within(120.0, &["sweep", &g, "--out", &sharded, "--shard", "1/2"]);
    assert!(second.ok("shard 1").contains("wrote summary.csv"));
    dmlsched_within(120.0, &["sweep", &g, "--out", &one]).ok("one run");
    for table in ["summary.csv", "jobs.csv"] {
        assert!(read(&dir.join("one").join(table)) == read(&dir.join("sharded").join(table)));
    }
    // A killed run's scratch folder (older than ten minutes) goes once the
    // grid is finished; a fresh one may be a running sweep's, and stays.
    let partial = dir.join("one/cells/.partial-0123456789abcdef-1-0");
    let fresh = dir.join("one/cells/.partial-0123456789abcdef-1-1");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::create_dir_all(&fresh).unwrap();
    let touched = std::process::Command::new("touch")
        .args(["-d", "1 hour ago"])
        .arg(&partial)
        .status()
        .unwrap();
    assert!(touched.success());
    dmlsched_within(120.0, &["sweep", &g, "--out", &one]).ok("finished run");
    assert!(!partial.exists(), "the scratch folder was left");
    assert!(fresh.exists(), "a fresh scratch folder was removed");
    let missing = dir.join("no-such-folder").to_string_lossy().into_owned();
    let bad = dmlsched_within(
        30.0,
        &["sweep", &g, "--out", &one, "--merge", "--from", &missing],
    );
    assert!(
        bad.one_error_line("merge from nothing")
            .contains("not a sweep folder")
    );
    let bad = dmlsched_within(30.0, &["sweep", &g, "--out", &one, "--shard", "2/2"]);
    assert!(bad.one_error_line("bad shard").contains("--shard 2/2"));
    std::fs::write(
        dir.join("bad.json"),
        r#"{"trace": "philly.csv", "policies": []}"#,
    )
    .unwrap();
    let bad_grid = dir.join("bad.json").to_string_lossy().into_owned();
    let bad = dmlsched_within(30.0, &["sweep", &bad_grid, "--out", &one]);
    assert!(
        bad.one_error_line("bad grid")
            .contains("bad.json: `policies`")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Paths may name environment variables (`$NAME`, `${NAME}`): the cell is
/// keyed by the text as written, so a grid keeps its keys on a machine
/// whose files live elsewhere; an unset variable is an input error.
#[test]
fn paths_read_environment_variables() {
    let plan = |path: &str| {
        let json = serde_json::json!({"instances": [path], "policies": ["fifo"]});
        Grid::from_value(&json, Path::new("/no/such/base")).and_then(|g| g.plan())
    };
    // cargo sets CARGO_MANIFEST_DIR for the tests it runs.
    let plain = plan("$CARGO_MANIFEST_DIR/examples/data/instance_ps.json").unwrap();
    let braced = plan("${CARGO_MANIFEST_DIR}/examples/data/instance_ps.json").unwrap();
    assert_ne!(plain.cells[0].key(), braced.cells[0].key());
    for p in [&plain, &braced] {
        let result = run_cell(&p.cells[0]);
        assert!(result.error.is_none(), "{:?}", result.error);
    }
    assert_eq!(
        run_cell(&plain.cells[0]).summary_csv,
        run_cell(&braced.cells[0]).summary_csv
    );
    // Parameters files too.
    let json = serde_json::json!({
        "instances": ["$CARGO_MANIFEST_DIR/examples/data/instance_ps.json"],
        "policies": ["oasis"],
        "params": {"file": {"oasis": "$CARGO_MANIFEST_DIR/examples/data/params_oasis.json"}},
    });
    let with_params = Grid::from_value(&json, Path::new("/no/such/base"))
        .and_then(|g| g.plan())
        .unwrap();
    assert_eq!(with_params.cells[0].spec()["params"]["u_scale"], 1.0);
    for (path, want) in [
        (
            "$DMLSCHED_SWEEP_TEST_UNSET/x.json",
            "DMLSCHED_SWEEP_TEST_UNSET is not set",
        ),
        ("${CARGO_MANIFEST_DIR/x.json", "without `}`"),
        ("$/x.json", "without a variable's name"),
    ] {
        let e = plan(path).unwrap_err();
        assert!(e.is_input() && e.to_string().contains(want), "{path}: {e}");
    }
}

/// A cell whose files were damaged after it was kept: a table cut short
/// runs again; a table changed at the same length is named, not joined.
#[test]
fn damaged_cells_run_again_or_are_named() {
    let plan = grid(60).plan().unwrap();
    let dir = scratch("damaged");
    let store = Store::open(&dir).unwrap();
    run(&plan, &store, &options(2, None), &mut ()).unwrap();
    let want = tables(&plan, &store).unwrap();
    let cell = dir.join("cells").join(plan.cells[3].key());
    let jobs = read(&cell.join("jobs.csv"));
    std::fs::write(cell.join("jobs.csv"), &jobs[..jobs.len() / 2]).unwrap();
    std::fs::write(cell.join("cell.json").with_extension("bak"), "x").unwrap();
    let summary = dir
        .join("cells")
        .join(plan.cells[5].key())
        .join("summary.csv");
    std::fs::write(&summary, "").unwrap();
    let again = run(&plan, &store, &options(2, None), &mut ()).unwrap();
    assert_eq!((again.ran, again.skipped), (2, 14));
    let got = tables(&plan, &store).unwrap();
    assert!(got.summary_csv == want.summary_csv && got.jobs_csv == want.jobs_csv);
    // The same length, other bytes: kept as finished, refused when joined.
    let mut bytes = read(&summary).into_bytes();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b'1' { b'2' } else { b'1' };
    std::fs::write(&summary, bytes).unwrap();
    match tables(&plan, &store) {
        Err(e) => assert!(
            e.to_string().contains("is not the table kept for cell"),
            "{e}"
        ),
        Ok(_) => panic!("a changed table was joined"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run that will not finish the grid leaves no table of an earlier grid
/// in the folder.
#[test]
fn a_changed_grid_leaves_no_stale_table() {
    let dir = scratch("stale");
    let first = dir.join("first.json");
    std::fs::write(&first, grid_json(40)).unwrap();
    let mut changed: serde_json::Value = serde_json::from_str(&grid_json(40)).unwrap();
    changed["policies"] = serde_json::json!(["fifo", "sjf"]);
    let second = dir.join("second.json");
    std::fs::write(&second, changed.to_string()).unwrap();
    let out = dir.join("out").to_string_lossy().into_owned();
    let (f, s) = (
        first.to_string_lossy().into_owned(),
        second.to_string_lossy().into_owned(),
    );
    dmlsched_within(120.0, &["sweep", &f, "--out", &out]).ok("first grid");
    assert!(dir.join("out/summary.csv").exists());
    let shard = dmlsched_within(120.0, &["sweep", &s, "--out", &out, "--shard", "0/2"]);
    assert!(shard.ok("changed grid, one shard").contains("--merge"));
    for table in ["summary.csv", "jobs.csv", "timings.csv"] {
        assert!(!dir.join("out").join(table).exists(), "{table} was left");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// More bad grids and options, each a typed input error in bounded time.
#[test]
fn more_bad_input_is_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inst = "examples/data/instance_ps.json";
    let cases = [
        (
            serde_json::json!({"instances": [inst, inst], "policies": ["fifo"]}),
            "is listed twice",
        ),
        (
            serde_json::json!({"instances": [inst], "policies": ["fifo"], "params": {"a": {"oasis": {}}}}),
            "params.a.oasis: oasis is not among `policies`",
        ),
        (
            serde_json::json!({"instances": [inst], "policies": ["oasis"], "params": {"": {}}}),
            "must not be empty",
        ),
        (
            serde_json::json!({"instances": [inst], "policies": ["oasis"], "params": {"a": {"oasis": "/dev/zero"}}}),
            "not a regular file",
        ),
    ];
    for (json, want) in cases {
        let e = Grid::from_value(&json, root)
            .and_then(|g| g.plan())
            .expect_err(&json.to_string());
        assert!(e.is_input() && e.to_string().contains(want), "{json}: {e}");
    }
    let plan = Grid::from_value(
        &serde_json::json!({"instances": [inst], "policies": ["fifo"]}),
        root,
    )
    .unwrap()
    .plan()
    .unwrap();
    let store = Store::open(&scratch("bad-options")).unwrap();
    for (o, want) in [
        (
            options(1, Some(Shard { index: 0, count: 0 })),
            "--shard 0/0",
        ),
        (options(dmlsched::sweep::MAX_WORKERS + 1, None), "--workers"),
    ] {
        let e = run(&plan, &store, &o, &mut ()).unwrap_err();
        assert!(e.is_input() && e.to_string().contains(want), "{e}");
    }
    assert!(plan.shard(Shard { index: 0, count: 0 }).is_empty());
}
