"""`dmlsched.sweep`: a grid of replays run cell by cell into a resumable
folder. Its tables are the same bytes whatever ran the cells (one worker or
two, threads or Ray tasks, one process or shards, the command line or
Python, a run killed and resumed), and bad input is InputError with the
library's message."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Set

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import dmlsched
from conftest import TRACES

PHILLY = TRACES / "philly.csv"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

needs_traces = pytest.mark.skipif(
    not PHILLY.is_file(), reason=f"no Philly trace at {PHILLY} (set DMLSCHED_TRACES)"
)
pytestmark = needs_traces


def small_grid(**changes) -> Dict:
    """2 windows x 2 policies x 2 load scales x 2 seeds of 200 Philly jobs:
    16 cells, about a second on two cores."""
    grid = {
        "trace": str(PHILLY),
        "windows": [{"start": "2017-11-01", "jobs": 200}, {"start": "2017-11-15", "jobs": 200}],
        "policies": ["fifo", "tiresias"],
        "load_scales": [1, 2],
        "seeds": [0, 1],
    }
    grid.update(changes)
    return grid


def slow_grid() -> Dict:
    """32 cells of 1000 jobs: a few seconds on one worker, so that a run
    can be killed half way."""
    return small_grid(
        windows=[{"start": "2017-11-01", "jobs": 1000}, {"start": "2017-11-15", "jobs": 1000}],
        seeds=[0, 1, 2, 3],
    )


def tables(out: Path) -> Dict[str, bytes]:
    """The two deterministic tables' bytes."""
    return {name: (Path(out) / name).read_bytes() for name in ("summary.csv", "jobs.csv")}


def finished(out: Path) -> Set[str]:
    """The keys of the cells finished in a sweep folder (scratch folders,
    `.partial-*`, are not cells)."""
    cells = Path(out) / "cells"
    if not cells.is_dir():
        return set()
    return {c.name for c in cells.iterdir() if not c.name.startswith(".")}


def read_csv(path: Path) -> pd.DataFrame:
    """A table file read as the package reads it."""
    from dmlsched._sweep import _table

    return _table(Path(path).read_text())


def write_grid(path: Path, grid: Dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(grid))
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dmlsched.Sweep:
    """The small grid run once, uninterrupted, on two workers."""
    out = tmp_path_factory.mktemp("reference")
    return dmlsched.sweep(small_grid(), out, workers=2, progress=False)


@pytest.fixture(scope="module")
def slow_reference(tmp_path_factory) -> dmlsched.Sweep:
    """The slow grid run once, uninterrupted."""
    out = tmp_path_factory.mktemp("slow-reference")
    return dmlsched.sweep(slow_grid(), out, workers=2, progress=False)


# An environment variable a grid's path names (`$NAME/philly.csv`); the
# workers of `ray_cluster` have it too.
TRACES_VAR = "DMLSCHED_SWEEP_TEST_TRACES"


@pytest.fixture(scope="module")
def ray_cluster():
    """A Ray cluster on this machine, for this module's Ray tests."""
    ray = pytest.importorskip("ray", reason="the Ray back end needs ray (pip install ./python[ray])")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={"env_vars": {TRACES_VAR: str(PHILLY.parent)}},
    )
    yield ray
    ray.shutdown()


def test_reference(reference):
    """What a sweep gives: every row of the grid once, with its axes as
    columns and the wall-clock column left out, read from the files."""
    r = reference
    out = Path(r.out)
    assert r.complete and r.ran == 16 and r.skipped == 0 and r.failed == []
    assert r.cells == r.grid_cells == 16 and r.merged == 0
    assert sorted(finished(out)) == sorted(r.timings["cell"])
    assert r.files == ["summary.csv", "jobs.csv", "timings.csv"]
    assert list(r.summary.columns[:5]) == ["cell", "window", "cluster_spec", "params", "policy"]
    assert "solver_time_s" not in r.summary.columns
    axes = r.summary[["window", "policy", "load_scale", "seed"]].drop_duplicates()
    assert len(axes) == len(r.summary) == 16
    assert set(r.summary["policy"]) == {"fifo", "tiresias"}
    assert set(r.jobs["cell"]) == set(r.summary["cell"])
    # 200 jobs per row, every row's jobs under its cell.
    assert r.jobs.groupby("cell").size().eq(200).all()
    # The frames are the files.
    assert_frame_equal(r.summary, read_csv(out / "summary.csv"), check_exact=True)
    assert_frame_equal(r.jobs, read_csv(out / "jobs.csv"), check_exact=True)
    assert_frame_equal(r.timings, read_csv(out / "timings.csv"), check_exact=True)


def test_one_worker_equals_two(reference, tmp_path):
    r = dmlsched.sweep(small_grid(), tmp_path, workers=1, progress=False)
    assert r.ran == 16
    assert tables(tmp_path) == tables(reference.out)


def test_run_again_skips_everything(reference, tmp_path):
    first = dmlsched.sweep(small_grid(), tmp_path, progress=False)
    mtimes = {k: (tmp_path / "cells" / k / "cell.json").stat().st_mtime_ns for k in finished(tmp_path)}
    again = dmlsched.sweep(small_grid(), tmp_path, progress=False)
    assert (first.ran, first.skipped) == (16, 0)
    assert (again.ran, again.skipped) == (0, 16)
    assert {k: (tmp_path / "cells" / k / "cell.json").stat().st_mtime_ns for k in mtimes} == mtimes
    assert tables(tmp_path) == tables(reference.out)
    # A grid grown by a seed runs only the new seed's cells.
    grown = dmlsched.sweep(small_grid(seeds=[0, 1, 2]), tmp_path, progress=False)
    assert (grown.ran, grown.skipped, len(grown.summary)) == (8, 16, 24)


def test_ray_equals_local(ray_cluster, reference, tmp_path, monkeypatch, capsys):
    # The cells run in Ray's workers: neither this process's thread pool
    # nor a cell run here is used.
    def here(*args, **kwargs):
        raise AssertionError("a cell ran in the driver")

    monkeypatch.setattr(dmlsched._native, "_sweep_run", here)
    monkeypatch.setattr(dmlsched._native, "_sweep_run_cell", here)
    r = dmlsched.sweep(small_grid(), tmp_path, backend="ray")
    assert r.complete and (r.ran, r.skipped) == (16, 0)
    assert tables(tmp_path) == tables(reference.out)
    # The same progress bar as the local back end.
    err = capsys.readouterr().err
    assert "16 cells to run, 0 already finished" in err
    assert "16/16 cells" in err and "ETA" in err


def test_ray_resumes_a_local_folder(ray_cluster, reference, tmp_path):
    quarter = dmlsched.sweep(small_grid(), tmp_path, shard=(0, 4), progress=False)
    assert not quarter.complete and quarter.ran == 4
    # Another shard on Ray: only its cells, no tables yet.
    shard = dmlsched.sweep(small_grid(), tmp_path, backend="ray", shard="1/4", progress=False)
    assert not shard.complete and (shard.cells, shard.ran, shard.skipped) == (4, 4, 0)
    assert set(shard.summary["cell"]) - set(quarter.summary["cell"]) == set(
        dmlsched.sweep(small_grid(), tmp_path / "alone", shard="1/4", progress=False).summary["cell"]
    )
    assert not (tmp_path / "summary.csv").exists()
    # The rest on Ray, at most 3 cells in flight.
    r = dmlsched.sweep(small_grid(), tmp_path, backend="ray", workers=3, progress=False)
    assert r.complete and (r.ran, r.skipped) == (8, 8)
    assert tables(tmp_path) == tables(reference.out)


def test_environment_variables_in_paths(ray_cluster, reference, tmp_path, monkeypatch):
    # A path may name environment variables, read where the cell runs: the
    # cell's key holds the text, so a machine whose traces live elsewhere
    # reuses the cells.
    grid = small_grid(trace=f"${{{TRACES_VAR}}}/philly.csv")
    monkeypatch.setenv(TRACES_VAR, str(PHILLY.parent))
    local = dmlsched.sweep(grid, tmp_path / "local", progress=False)
    on_ray = dmlsched.sweep(grid, tmp_path / "ray", backend="ray", progress=False)
    assert local.ran == on_ray.ran == 16
    assert tables(tmp_path / "ray") == tables(tmp_path / "local")
    # The rows are the reference's, under other keys.
    assert set(local.summary["cell"]).isdisjoint(reference.summary["cell"])
    assert_frame_equal(
        local.summary.drop(columns="cell"), reference.summary.drop(columns="cell"), check_exact=True
    )
    # The traces elsewhere (a link, not a copy): every cell is found finished.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "philly.csv").symlink_to(PHILLY)
    monkeypatch.setenv(TRACES_VAR, str(elsewhere))
    again = dmlsched.sweep(grid, tmp_path / "local", progress=False)
    assert (again.skipped, again.ran) == (16, 0)
    monkeypatch.delenv(TRACES_VAR)
    with pytest.raises(dmlsched.InputError, match=f"the environment variable {TRACES_VAR} is not set"):
        dmlsched.sweep(grid, tmp_path / "local", progress=False)


def test_shards_merged_equal_one_run(reference, tmp_path):
    a = dmlsched.sweep(small_grid(), tmp_path / "a", shard=(0, 2), progress=False)
    b = dmlsched.sweep(small_grid(), tmp_path / "b", shard="1/2", progress=False)
    for s in (a, b):
        # A shard alone: its own cells, no table file.
        assert not s.complete and s.ran == s.cells == 8 and s.files == []
        assert not (Path(s.out) / "summary.csv").exists()
    assert set(a.summary["cell"]).isdisjoint(b.summary["cell"])
    assert set(a.summary["cell"]) | set(b.summary["cell"]) == set(reference.summary["cell"])
    m = dmlsched.sweep(small_grid(), tmp_path / "m", merge_from=[a.out, b.out], progress=False)
    assert m.complete and (m.merged, m.ran, m.skipped) == (16, 0, 16)
    assert tables(tmp_path / "m") == tables(reference.out)
    # Shards into one shared folder: the last one writes the tables.
    s0 = dmlsched.sweep(small_grid(), tmp_path / "s", shard="0/2", progress=False)
    assert not s0.complete
    s1 = dmlsched.sweep(small_grid(), tmp_path / "s", shard="1/2", progress=False)
    assert s1.complete and s1.ran == 8
    assert tables(tmp_path / "s") == tables(reference.out)


def test_merge_from_runs_what_is_missing(reference, tmp_path):
    a = dmlsched.sweep(small_grid(), tmp_path / "a", shard=(1, 4), progress=False)
    m = dmlsched.sweep(small_grid(), tmp_path / "m", merge_from=a.out, progress=False)
    assert (m.merged, m.skipped, m.ran) == (4, 4, 12)
    assert tables(tmp_path / "m") == tables(reference.out)
    with pytest.raises(dmlsched.InputError, match="not a sweep folder"):
        dmlsched.sweep(small_grid(), tmp_path / "m", merge_from=[tmp_path / "nowhere"])
    assert not (tmp_path / "nowhere").exists()


def kill_after_first_cell(code: str, args: List[str], out: Path) -> Set[str]:
    """Runs `python -c code *args`, SIGKILLs it once a cell is finished in
    `out`, and returns the cells finished then."""
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not finished(out):
            if p.poll() is not None:
                _, err = p.communicate()
                pytest.fail(f"the sweep ended (exit {p.returncode}) before a cell finished: {err}")
            if time.monotonic() > deadline:
                pytest.fail("no cell finished in 120 s")
            time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
    finally:
        if p.poll() is None:
            p.kill()
        p.communicate()
    assert p.returncode == -signal.SIGKILL
    return finished(out)


def check_resumed(grid_file: Path, out: Path, kept: Set[str], fresh: dmlsched.Sweep, **kw):
    """The killed sweep resumed: the kept cells skipped (not written again),
    the others run, the tables those of an uninterrupted run."""
    total = fresh.grid_cells
    assert 0 < len(kept) < total, "the sweep was not killed half way"
    assert not (out / "summary.csv").exists()
    before = {k: (out / "cells" / k / "cell.json").read_bytes() for k in kept}
    r = dmlsched.sweep(grid_file, out, progress=False, **kw)
    assert (r.skipped, r.ran) == (len(kept), total - len(kept))
    assert {k: (out / "cells" / k / "cell.json").read_bytes() for k in kept} == before
    assert tables(out) == tables(fresh.out)


def test_killed_and_resumed(slow_reference, tmp_path):
    grid_file = write_grid(tmp_path / "grid.json", slow_grid())
    out = tmp_path / "out"
    code = (
        "import sys, dmlsched; "
        "dmlsched.sweep(sys.argv[1], sys.argv[2], workers=1, progress=False)"
    )
    kept = kill_after_first_cell(code, [str(grid_file), str(out)], out)
    check_resumed(grid_file, out, kept, slow_reference, workers=2)


def test_ray_killed_and_resumed(ray_cluster, slow_reference, tmp_path):
    # The driver, in another process, connects to this process's cluster
    # (as a driver on a Ray cluster does): killing it ends only it.
    grid_file = write_grid(tmp_path / "grid.json", slow_grid())
    out = tmp_path / "out"
    address = ray_cluster.get_runtime_context().gcs_address
    code = (
        "import sys, ray, dmlsched; ray.init(address=sys.argv[3]); "
        "dmlsched.sweep(sys.argv[1], sys.argv[2], backend='ray', workers=1, progress=False)"
    )
    kept = kill_after_first_cell(code, [str(grid_file), str(out), address], out)
    check_resumed(grid_file, out, kept, slow_reference, backend="ray")


def interrupt_after_first_cell(tmp_path: Path, fresh: dmlsched.Sweep, backend: str, *args: str):
    """Ctrl-C (SIGINT) once a cell is finished: the sweep stops after the
    cells under way, keeps every finished cell and says how far it got;
    run again, it resumes."""
    grid_file = write_grid(tmp_path / "grid.json", slow_grid())
    out = tmp_path / "out"
    code = (
        "import sys, dmlsched\n"
        "if sys.argv[3:]:\n"
        "    import ray; ray.init(address=sys.argv[3])\n"
        "try:\n"
        f"    dmlsched.sweep(sys.argv[1], sys.argv[2], backend={backend!r}, workers=1, "
        "progress=False)\n"
        "except KeyboardInterrupt as e:\n"
        "    print(e.runs_done, e.runs_total, *getattr(e, '__notes__', []), sep='|')\n"
        "    sys.exit(3)\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(grid_file), str(out), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 120
    while not finished(out) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 3, stderr
    done, total, note = stdout.strip().split("|")
    kept = finished(out)
    # Stopped after the cell under way: every finished cell kept, none lost.
    assert int(done) == len(kept) and 0 < len(kept) < int(total) == fresh.grid_cells
    assert note == f"dmlsched stopped after {done} of {total} cells"
    check_resumed(grid_file, out, kept, fresh, backend=backend)


def test_ctrl_c_keeps_finished_cells(slow_reference, tmp_path):
    interrupt_after_first_cell(tmp_path, slow_reference, "local")


def test_ray_ctrl_c_keeps_finished_cells(ray_cluster, slow_reference, tmp_path):
    address = ray_cluster.get_runtime_context().gcs_address
    interrupt_after_first_cell(tmp_path, slow_reference, "ray", address)


def test_cli_and_python_agree(cli, tmp_path, monkeypatch):
    # A grid file whose trace is a path relative to the file's folder.
    folder = tmp_path / "grids"
    folder.mkdir()
    grid = small_grid(trace=os.path.relpath(PHILLY, folder))
    grid_file = write_grid(folder / "grid.json", grid)
    run = subprocess.run(
        [str(cli), "sweep", str(grid_file), "--out", str(tmp_path / "cli")],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "wrote summary.csv, jobs.csv and timings.csv" in run.stdout
    cli_tables = tables(tmp_path / "cli")
    # The file from another folder; a dict and JSON text from the grid's
    # folder (relative paths from the current folder).
    by_file = dmlsched.sweep(str(grid_file), tmp_path / "file", progress=False)
    assert tables(tmp_path / "file") == cli_tables
    monkeypatch.chdir(folder)
    dmlsched.sweep(grid, tmp_path / "dict", progress=False)
    assert tables(tmp_path / "dict") == cli_tables
    dmlsched.sweep(json.dumps(grid), tmp_path / "text", progress=False)
    assert tables(tmp_path / "text") == cli_tables
    # Each resumes the other's folder: the same layout.
    half = subprocess.run(
        [str(cli), "sweep", str(grid_file), "--out", str(tmp_path / "mixed"), "--shard", "1/2"],
        capture_output=True, text=True, timeout=600,
    )
    assert half.returncode == 0, half.stderr
    mixed = dmlsched.sweep(grid_file, tmp_path / "mixed", progress=False)
    assert (mixed.skipped, mixed.ran) == (8, 8)
    assert tables(tmp_path / "mixed") == cli_tables
    assert_frame_equal(by_file.summary, read_csv(tmp_path / "cli" / "summary.csv"), check_exact=True)


BAD_GRIDS = [
    # (change to the small grid, what the library says)
    ({"policy": ["fifo"]}, "unknown grid field `policy` (fields: trace, windows, instances, "),
    ({"policies": ["fifo", "no-such-policy"]}, "policies: unknown policy no-such-policy ("),
    ({"trace": "/no/such/trace.csv"}, "/no/such/trace.csv: No such file or directory"),
    ({"load_scales": [1, -2]}, "`load_scales` must be a non-empty list of positive numbers"),
    ({"options": {"gpus": "lots"}}, "option gpus lots: "),
]


@pytest.mark.parametrize("change,message", BAD_GRIDS)
def test_bad_grid(change, message, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.sweep(small_grid(**change), out)
    assert message in str(info.value)
    # Refused before anything ran: no folder made.
    assert not out.exists()


def test_bad_grid_equals_cli(cli, tmp_path):
    """The message is the command line's, word for word."""
    for i, (change, _) in enumerate(BAD_GRIDS):
        grid_file = write_grid(tmp_path / f"bad{i}.json", small_grid(**change))
        run = subprocess.run(
            [str(cli), "sweep", str(grid_file), "--out", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=60,
        )
        assert run.returncode == 2
        with pytest.raises(dmlsched.InputError) as info:
            dmlsched.sweep(grid_file, tmp_path / "out")
        assert run.stderr.strip() == f"error: {info.value}"


def test_bad_arguments(tmp_path):
    out = tmp_path / "out"
    grid = small_grid()
    for shard in [(2, 2), "1/0", "-1/2", "a/b"]:
        with pytest.raises(dmlsched.InputError, match=r"^--shard .*: expected INDEX/COUNT with 0 <= INDEX < COUNT"):
            dmlsched.sweep(grid, out, shard=shard)
    with pytest.raises(TypeError, match="shard"):
        dmlsched.sweep(grid, out, shard=(0, 2, 3))
    with pytest.raises(dmlsched.InputError, match="--workers must be at least 1"):
        dmlsched.sweep(grid, out, workers=0)
    with pytest.raises(dmlsched.InputError, match="backend 'dask'"):
        dmlsched.sweep(grid, out, backend="dask")
    with pytest.raises(dmlsched.InputError, match="format 'xlsx'"):
        dmlsched.sweep(grid, out, format="xlsx")
    with pytest.raises(dmlsched.InputError, match=r"^grid JSON: "):
        dmlsched.sweep("{not json", out)
    with pytest.raises(dmlsched.InputError, match="No such file"):
        dmlsched.sweep(tmp_path / "no-grid.json", out)
    with pytest.raises(TypeError, match="grid"):
        dmlsched.sweep(42, out)
    assert not out.exists()


def test_missing_extras_are_named(tmp_path, monkeypatch):
    """Without Ray or pyarrow, the message says what to install, and
    nothing runs."""
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(dmlsched.InputError, match=r"pip install \./python\[ray\]"):
        dmlsched.sweep(small_grid(), tmp_path / "out", backend="ray")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(dmlsched.InputError, match=r"pip install \./python\[parquet\]"):
        dmlsched.sweep(small_grid(), tmp_path / "out", format="parquet")
    assert not (tmp_path / "out").exists()


def test_failed_cells(tmp_path):
    # A window the trace has no job in fails when its cells run (bad input,
    # found only then); the other window's cells are kept.
    grid = small_grid(windows=[{"start": "2017-11-01", "jobs": 200}, {"start": "2030-01-01", "jobs": 200}])
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.sweep(grid, tmp_path, progress=False)
    r = info.value.result
    assert str(info.value).startswith("8 of 16 cells failed (the first: fifo x1 seed 0 (window 2030-01-01): ")
    assert "selects none of the trace's" in str(info.value)
    assert not r.complete and (r.ran, r.skipped, len(r.failed)) == (8, 0, 8)
    assert all("window 2030-01-01" in label for label, _ in r.failed)
    assert len(finished(tmp_path)) == 8 and not (tmp_path / "summary.csv").exists()
    # The finished rows are in the partial tables.
    assert len(r.summary) == 8 and set(r.summary["window"]) == {"jobs=200,start=2017-11-01"}
    # Run again: the failed cells run again, the finished ones do not.
    with pytest.raises(dmlsched.InputError) as again:
        dmlsched.sweep(grid, tmp_path, progress=False)
    assert (again.value.result.skipped, again.value.result.ran) == (8, 0)


def test_no_finished_cell(tmp_path):
    # Every cell fails: the error still carries a result, its tables empty
    # but with their leading columns, not a pandas parsing error.
    grid = small_grid(windows=[{"start": "2030-01-01", "jobs": 200}])
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.sweep(grid, tmp_path, progress=False)
    r = info.value.result
    assert len(r.summary) == 0 and len(r.jobs) == 0
    assert list(r.summary.columns) == ["cell", "window", "cluster_spec", "params"]


def test_labels_are_text(tmp_path):
    # The key and the axes' labels come back as the text in the file, even
    # when they look like numbers: a window named 007, keys of digits.
    grid = small_grid(windows=[{"name": "007", "start": "2017-11-01", "jobs": 200}])
    r = dmlsched.sweep(grid, tmp_path, progress=False)
    with open(tmp_path / "summary.csv", newline="") as f:
        rows = list(csv.reader(f))[1:]
    assert list(r.summary["cell"]) == [row[0] for row in rows]
    assert set(r.summary["window"]) == {"007"}
    assert set(r.summary["cluster_spec"]) == {""}
    assert r.jobs["cell"].map(type).eq(str).all()


def test_a_changed_grid_leaves_no_stale_table(tmp_path):
    dmlsched.sweep(small_grid(), tmp_path, progress=False)
    assert (tmp_path / "summary.csv").exists()
    r = dmlsched.sweep(small_grid(seeds=[0, 1, 2]), tmp_path, shard=(0, 2), progress=False)
    assert not r.complete
    for name in ("summary.csv", "jobs.csv", "timings.csv"):
        assert not (tmp_path / name).exists(), name


def test_parquet_round_trips(tmp_path):
    pytest.importorskip("pyarrow", reason="format='parquet' needs pyarrow")
    r = dmlsched.sweep(small_grid(), tmp_path, format="parquet", progress=False)
    assert r.files == ["summary.csv", "jobs.csv", "timings.csv", "summary.parquet", "jobs.parquet"]
    for name, frame in [("summary", r.summary), ("jobs", r.jobs)]:
        parquet = pd.read_parquet(tmp_path / f"{name}.parquet")
        csv = read_csv(tmp_path / f"{name}.csv")
        assert_frame_equal(parquet, csv, check_exact=True)
        assert_frame_equal(parquet, frame, check_exact=True)
    # A shard's incomplete folder gets no table, Parquet or CSV.
    s = dmlsched.sweep(small_grid(), tmp_path / "shard", shard="0/2", format="parquet", progress=False)
    assert s.files == [] and not list((tmp_path / "shard").glob("*.parquet"))


def test_temporary_folder():
    r = dmlsched.sweep(small_grid(policies=["fifo"], seeds=[0], load_scales=[1]), progress=False)
    try:
        out = Path(r.out)
        assert out.is_dir() and r.complete and r.ran == 2
        assert (out / "summary.csv").is_file() and len(finished(out)) == 2
    finally:
        import shutil

        shutil.rmtree(r.out)


def test_progress(tmp_path, capsys):
    grid = small_grid(seeds=[0])
    dmlsched.sweep(grid, tmp_path / "quiet", progress=False)
    assert capsys.readouterr() == ("", "")
    dmlsched.sweep(grid, tmp_path / "loud")
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0] == "8 rows, 8 distinct cells"
    assert lines[1] == "8 cells to run, 0 already finished"
    # Not a terminal: a line per tenth of the cells, the last one full.
    bars = [l for l in lines if l.startswith("[")]
    assert bars and len(bars) <= 8
    assert bars[-1].startswith("[" + "#" * 30 + "] 8/8 cells, ")
    assert " elapsed, ETA 0:00:00" in bars[-1]
    assert lines[-1] == f"wrote summary.csv, jobs.csv, timings.csv to {tmp_path / 'loud'}"


def test_progress_redraws_on_a_terminal():
    from dmlsched._sweep import _Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = _Progress(True, stream)
    bar.start(4, 1)
    for done in range(1, 5):
        bar.drawn = float("-inf")  # no throttling in the test
        bar.cell(done, 4, f"cell {done}", ("run", "boom") if done == 2 else None)
    text = stream.getvalue()
    assert text.startswith("4 cells to run, 1 already finished\n")
    assert "\r[#######-----------------------] 1/4 cells, " in text
    # A failure starts its own line, then the bar goes on.
    assert "\nfailed: cell 2: boom\n\r[###############" in text
    assert text.endswith("\n") and text.count("\n") == 4
    assert "4/4 cells" in text.splitlines()[-1]


def test_numpy_values_in_a_grid_dict(reference, tmp_path):
    np = pytest.importorskip("numpy")
    grid = small_grid(seeds=np.array([0, 1]), load_scales=[np.float64(1), np.int64(2)])
    dmlsched.sweep(grid, tmp_path, progress=False)
    assert tables(tmp_path) == tables(reference.out)


def test_slurm_script(cli, reference, tmp_path):
    """examples/sweep_slurm.sh's commands, each array task run here by
    setting SLURM_ARRAY_TASK_ID, then the merge: the tables of one run."""
    grid_file = write_grid(tmp_path / "grid.json", small_grid())
    out = tmp_path / "sweep-out"
    env = dict(os.environ, DMLSCHED=str(cli), GRID=str(grid_file), OUT=str(out))
    script = EXAMPLES / "sweep_slurm.sh"
    tasks = [
        subprocess.Popen(
            ["bash", str(script)],
            env=dict(env, SLURM_ARRAY_TASK_ID=str(i)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for i in range(4)
    ]
    for t in tasks:
        stdout, stderr = t.communicate(timeout=300)
        assert t.returncode == 0, stderr
        assert f"shard {tasks.index(t)}/4" in stdout
    assert len(finished(out)) == 16
    merge = subprocess.run(
        ["bash", str(script), "merge"], env=env, capture_output=True, text=True, timeout=300
    )
    assert merge.returncode == 0, merge.stderr
    assert "wrote summary.csv, jobs.csv and timings.csv" in merge.stdout
    assert tables(out) == tables(reference.out)
