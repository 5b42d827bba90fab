"""``dmlsched.sweep``: a grid of replays (or simulations) run cell by cell
into a folder that keeps every finished cell, on this machine's cores or
as Ray tasks, as ``dmlsched sweep`` runs it, with its tables as pandas
DataFrames."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, TextIO, Tuple, Union

import pandas as pd

from . import _native
from ._native import InputError, RunError
from ._simulation import _frame

__all__ = ["sweep", "Sweep"]

GridLike = Union[Mapping[str, Any], str, "os.PathLike[str]"]
"""A grid: a dict, JSON text (starting with ``{``) or a grid file's path."""
ShardLike = Union[None, str, Tuple[int, int]]
"""A slice of the cells: ``(index, count)`` or ``"index/count"``, index from 0."""
PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Sweep:
    """What :func:`sweep` returns.

    Attributes:
        summary: ``summary.csv``: one row per row of the grid (window or
            instance, cluster, parameter set, load scale, seed, policy, in
            that order): ``cell`` (the cell's key), ``window`` (or
            ``instance``), ``cluster_spec``, ``params``, then the columns of
            a replay's summary (policy, seed, workload, cluster,
            load_scale, jobs, completed, JCT statistics, utilization,
            utility, ...) without ``solver_time_s``.
        jobs: ``jobs.csv``: every job of every row, led by the same four
            columns and ``load_scale``, then a replay's per-job columns.
        timings: ``timings.csv``: ``cell``, ``wall_s``, once per cell (the
            one table that changes from run to run).
        complete: whether every cell of the grid is finished in ``out``.
            Then the tables hold every row and were written into ``out``;
            else (a shard while others have not run, failed cells) they hold
            the finished cells' rows only and no table file was written.
        ran: cells run and kept by this call.
        skipped: cells of this call found finished in ``out`` (an earlier
            run, a merged folder) and not run again.
        failed: the cells that failed in this call, ``(label, message)``,
            in the grid's order; they are not kept, and run again when the
            sweep runs again.
        cells: this call's cells: the shard's, or the whole grid's.
        grid_cells: the grid's distinct cells (rows that run the same
            thing, e.g. a baseline under two parameter sets, share one).
        merged: cells copied from the ``merge_from`` folders.
        out: the sweep folder (absolute).
        files: the table files written into ``out`` (empty when
            incomplete).
    """

    summary: pd.DataFrame = field(repr=False)
    jobs: pd.DataFrame = field(repr=False)
    timings: pd.DataFrame = field(repr=False)
    complete: bool
    ran: int
    skipped: int
    failed: List[Tuple[str, str]]
    cells: int
    grid_cells: int
    merged: int
    out: str
    files: List[str] = field(default_factory=list)


#: The columns that are labels, read as text whatever they look like: a
#: key of decimal digits (or ``1e05``) is not a number, a window named
#: ``007`` keeps its zeros.
_TEXT_COLUMNS = ("cell", "window", "instance", "cluster_spec", "params")

#: The tables a sweep writes into its folder.
_TABLE_FILES = ("summary.csv", "jobs.csv", "timings.csv", "summary.parquet", "jobs.parquet")


def _table(text: str) -> pd.DataFrame:
    """A sweep's table (CSV text) as a DataFrame: numbers read bit for bit,
    the key and the axes' labels as text."""
    header = text.split("\n", 1)[0].split(",")
    text_columns = {c: str for c in _TEXT_COLUMNS if c in header}
    frame = _frame(text, dtype=text_columns)
    for c in text_columns:
        # An empty label (no clusters axis) is missing as a value; keep it "".
        frame[c] = frame[c].fillna("")
    return frame


def _clear_tables(out_dir: str) -> None:
    for name in _TABLE_FILES:
        try:
            os.remove(os.path.join(out_dir, name))
        except FileNotFoundError:
            pass


def sweep(
    grid: GridLike,
    out: Optional[PathLike] = None,
    *,
    backend: str = "local",
    workers: Optional[int] = None,
    shard: ShardLike = None,
    merge_from: Union[PathLike, Iterable[PathLike]] = (),
    progress: bool = True,
    format: str = "csv",
) -> Sweep:
    """Runs a sweep: every cell of ``grid`` (one replay of one policy at one
    load scale and seed, or one simulation of an instance) that the folder
    ``out`` lacks, keeping each cell there as it finishes; then joins the
    cells into the grid's tables, as ``dmlsched sweep GRID --out DIR`` does.

    Args:
        grid: a dict (relative paths in it are read from the current
            folder), JSON text, or the path of a grid file (relative paths
            from the file's folder). The format (``trace`` with ``windows``,
            or ``instances``; ``policies``, ``load_scales``, ``seeds``,
            ``clusters``, ``params``, ``options``) is in docs/python.md,
            "Sweeps".
        out: the sweep folder: ``out/cells/KEY/`` keeps each finished cell,
            and ``summary.csv``, ``jobs.csv`` and ``timings.csv`` are written
            once every cell is finished (the command's layout: either can
            resume or merge the other's folder). A sweep run again on the
            same folder skips the finished cells, so a killed sweep resumes
            where it stopped. ``None``: a new temporary folder (kept after
            the call, as ``Sweep.out``), so that the sweep cannot resume.
        backend: ``"local"``: this process's threads, ``workers`` of them
            (default: one per core). ``"ray"``: each cell a Ray task
            (``num_cpus=1``) on the Ray cluster this process is connected to
            (``ray.init(address=...)`` first), or on a local one started by
            ``ray.init()`` when Ray is not initialised; at most ``workers``
            cells in flight (default: twice the cluster's CPUs). This
            process keeps each cell as its result arrives, so a killed
            driver loses only the cells in flight. The workers need this
            package installed, and the grid's files at the same paths.
        workers: see ``backend``.
        shard: run only slice ``(index, count)`` (or ``"index/count"``,
            index from 0) of the cells, as ``--shard``; the slices are
            disjoint and cover the grid. The tables are written when every
            cell of the grid is finished in ``out`` (the last shard to finish
            into a shared folder writes them).
        merge_from: other sweep folders of the same grid (shards' own
            ``out``): their finished cells are copied into ``out`` first, as
            ``--merge --from``; then the cells still missing are run.
        progress: a progress bar on stderr (cells done of this call's, rate,
            elapsed time, time left) and a line per failed cell; ``False``
            prints nothing.
        format: ``"csv"``; ``"parquet"`` also writes ``summary.parquet`` and
            ``jobs.parquet`` beside the CSV tables (needs pyarrow: ``pip
            install ./python[parquet]``).

    Every cell's tables are a function of the cell alone, so the tables are
    the same bytes whatever ran the cells: one worker or many, one process
    or shards, threads or Ray tasks.

    The local back end releases the GIL. Ctrl-C stops the sweep once the
    cells under way (the Ray tasks in flight) finish; every finished cell
    is kept, and the exception carries ``runs_done`` and ``runs_total``
    (cells). With Ray, a second Ctrl-C leaves the tasks in flight.

    Raises:
        InputError: an invalid grid, option or file (before anything runs),
            with the library's message; Ray or pyarrow missing for
            ``backend="ray"`` or ``format="parquet"``.
        RunError: a table that cannot be written. When cells failed (after
            the others finished), InputError if every failed cell failed on
            its input, else RunError, with the :class:`Sweep` of what did
            finish as the error's ``result``.
    """
    if backend not in ("local", "ray"):
        raise InputError(f"backend {backend!r}: expected 'local' or 'ray'")
    if format not in ("csv", "parquet"):
        raise InputError(f"format {format!r}: expected 'csv' or 'parquet'")
    if workers is not None:
        workers = _workers(workers)
    shard_text = _shard_text(shard)
    if format == "parquet":
        _import_pyarrow()
    ray = _import_ray() if backend == "ray" else None
    plan = _plan(grid)
    out_dir = (
        tempfile.mkdtemp(prefix="dmlsched-sweep-")
        if out is None
        else os.path.abspath(os.fspath(out))
    )
    bar = _Progress(progress)
    bar.say(f"{plan.rows} rows, {plan.cells} distinct cells")
    # Tables of an earlier run of this folder would look current until this
    # run writes its own, which it may not (a shard, failed cells).
    _clear_tables(out_dir)
    merged = 0
    for d in _folders(merge_from):
        n = _native._sweep_absorb(plan, out_dir, d)
        merged += n
        bar.say(f"{n} cells copied from {d}")
    started = time.monotonic()
    if ray is None:
        report = _native._sweep_run(
            plan, out_dir, workers=workers, shard=shard_text,
            on_start=bar.start, on_cell=bar.cell,
        )
    else:
        report = _run_ray(ray, plan, out_dir, workers, shard_text, bar)
    took = time.monotonic() - started
    bar.say(
        f"ran {report['ran']} cells in {took:.1f} s ({report['ran'] / max(took, 1e-9):.2f} cells/s)"
        + (f", shard {shard_text}" if shard_text else "")
    )
    failed = report["failed"]
    tables = _native._sweep_tables(plan, out_dir, write=not failed)
    result = Sweep(
        summary=_table(tables["summary_csv"]),
        jobs=_table(tables["jobs_csv"]),
        timings=_table(tables["timings_csv"]),
        complete=tables["complete"],
        ran=report["ran"],
        skipped=report["skipped"],
        failed=[(label, message) for label, _, message in failed],
        cells=report["cells"],
        grid_cells=plan.cells,
        merged=merged,
        out=out_dir,
    )
    if failed:
        label, _, message = failed[0]
        error = (InputError if all(k == "input" for _, k, _ in failed) else RunError)(
            f"{len(failed)} of {report['cells']} cells failed (the first: {label}: {message}); "
            f"the finished cells are kept in {out_dir}, and the failed ones run again when "
            "the sweep runs again"
        )
        error.result = result
        raise error
    if result.complete:
        result.files = ["summary.csv", "jobs.csv", "timings.csv"]
        if format == "parquet":
            _write_parquet(result.summary, os.path.join(out_dir, "summary.parquet"))
            _write_parquet(result.jobs, os.path.join(out_dir, "jobs.parquet"))
            result.files += ["summary.parquet", "jobs.parquet"]
        bar.say(f"wrote {', '.join(result.files)} to {out_dir}")
    else:
        bar.say(
            f"{tables['finished']} of {plan.cells} cells of the grid are finished; the tables "
            "are written once every shard has run (or sweep(..., merge_from=[...]))"
        )
    return result


def _workers(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"workers: expected an int, got {value!r}")
    if value < 1:
        raise InputError("--workers must be at least 1")
    return value


def _shard_text(shard: ShardLike) -> Optional[str]:
    """``shard`` as ``--shard``'s text, checked by the library."""
    if shard is None:
        return None
    if isinstance(shard, str):
        text = shard
    elif isinstance(shard, (tuple, list)) and len(shard) == 2 and all(
        isinstance(x, int) and not isinstance(x, bool) for x in shard
    ):
        text = f"{shard[0]}/{shard[1]}"
    else:
        raise TypeError(f"shard: expected (index, count) or 'index/count', got {shard!r}")
    _native._sweep_shard(text)
    return text


def _json_value(value: Any) -> Any:
    """What ``json.dumps`` cannot write itself: paths, and numpy's numbers
    and arrays."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    for method in ("tolist", "item"):
        if hasattr(value, method):
            return getattr(value, method)()
    raise TypeError(f"grid: {value!r} ({type(value).__name__}) is not JSON")


def _plan(grid: GridLike) -> Any:
    """The grid planned by the library (every cell checked)."""
    if isinstance(grid, Mapping):
        try:
            text = json.dumps(grid, default=_json_value, allow_nan=False)
        except ValueError as e:
            raise InputError(f"grid JSON: {e}") from None
        return _native._sweep_plan(text=text, base=os.getcwd())
    if isinstance(grid, str) and grid.lstrip().startswith("{"):
        return _native._sweep_plan(text=grid, base=os.getcwd())
    if isinstance(grid, (str, os.PathLike)):
        return _native._sweep_plan(path=os.path.abspath(os.fspath(grid)))
    raise TypeError(
        f"grid: expected a dict, JSON text or a file's path, got {type(grid).__name__}"
    )


def _folders(value: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    return [os.path.abspath(os.fspath(d)) for d in value]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise InputError(
            "backend='ray' needs Ray, which is not installed: pip install ./python[ray] "
            f"(or pip install 'ray>=2.9') ({e})"
        ) from e
    return ray


def _import_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError as e:
        raise InputError(
            "format='parquet' needs pyarrow, which is not installed: "
            f"pip install ./python[parquet] (or pip install pyarrow) ({e})"
        ) from e


def _write_parquet(frame: pd.DataFrame, path: str) -> None:
    """``frame`` as a Parquet file, written beside it and renamed over it."""
    partial = path + ".partial"
    frame.to_parquet(partial, engine="pyarrow", index=False)
    os.replace(partial, path)


def _ray_task(cell_json: str) -> Dict[str, Any]:
    """One cell, in a Ray worker (the GIL released while it runs)."""
    return _native._sweep_run_cell(cell_json)


def _run_ray(
    ray: Any, plan: Any, out: str, workers: Optional[int], shard: Optional[str], bar: "_Progress"
) -> Dict[str, Any]:
    """The Ray back end: each missing cell a task, each result kept in the
    store by this process as it arrives (``ray.wait``)."""
    if not ray.is_initialized():
        ray.init()
    cells, todo = _native._sweep_missing(plan, out, shard=shard)
    total = len(todo)
    bar.start(total, cells - total)
    if workers is None:
        workers = max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
    task = ray.remote(num_cpus=1)(_ray_task)
    queue = iter(enumerate(todo))
    pending: Dict[Any, Tuple[int, str, str]] = {}
    done = ran = 0
    failed: List[Tuple[int, str, str, str]] = []

    def submit() -> None:
        while len(pending) < workers:
            nxt = next(queue, None)
            if nxt is None:
                return
            index, (_, label, cell_json) = nxt
            pending[task.remote(cell_json)] = (index, label, cell_json)

    def collect(more: bool) -> None:
        """Keeps each result as it arrives; submits more cells if `more`."""
        nonlocal done, ran
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index, label, cell_json = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as e:
                    # The task raised, or its worker died: the cell failed.
                    result = {"error": ("run", f"Ray: {type(e).__name__}: {e}")}
                error = result["error"]
                if error is None:
                    _native._sweep_put(
                        out, cell_json, result["summary_csv"], result["jobs_csv"],
                        result["wall_s"],
                    )
                    ran += 1
                else:
                    failed.append((index, label, error[0], error[1]))
                done += 1
                bar.cell(done, total, label, error)
            if more:
                submit()

    try:
        submit()
        collect(more=True)
    except KeyboardInterrupt as e:
        # As the local back end: the cells under way finish and are kept.
        # (Not ray.cancel: in Ray 2.x it races with a finishing task and
        # can abort this process, ray-project/ray#54846.) A second Ctrl-C
        # leaves them.
        try:
            collect(more=False)
        except KeyboardInterrupt:
            pass
        # Counted from the store, not the loop's counter: the interrupt may
        # have come between keeping a cell and counting it.
        _, still = _native._sweep_missing(plan, out, shard=shard)
        _stopped(e, total - len(still) + len(failed), total)
        raise
    failed.sort()
    return {
        "cells": cells,
        "skipped": cells - total,
        "ran": ran,
        "failed": [f[1:] for f in failed],
    }


def _stopped(e: BaseException, done: int, total: int) -> None:
    """As the local back end tells an interrupt how far the sweep got."""
    e.runs_done = done  # type: ignore[attr-defined]
    e.runs_total = total  # type: ignore[attr-defined]
    if hasattr(e, "add_note"):
        e.add_note(f"dmlsched stopped after {done} of {total} cells")


def _clock(seconds: float) -> str:
    """``h:mm:ss``."""
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}"


class _Progress:
    """The progress bar on stderr, the same for both back ends: redrawn in
    place on a terminal or in Jupyter (at most ten times a second), else a
    line at every tenth of the cells, so that a log file stays readable."""

    WIDTH = 30

    def __init__(self, enabled: bool, stream: Optional[TextIO] = None) -> None:
        self.enabled = bool(enabled)
        self.stream = sys.stderr if stream is None else stream
        self.redraw = self.enabled and _redraws(self.stream)
        self.started = time.monotonic()
        self.drawn = float("-inf")
        self.open = False
        self.tenth = 0

    def say(self, text: str) -> None:
        """A line of its own."""
        if not self.enabled:
            return
        if self.open:
            self.stream.write("\n")
            self.open = False
        print(text, file=self.stream, flush=True)

    def start(self, to_run: int, skipped: int) -> None:
        self.started = time.monotonic()
        self.say(f"{to_run} cells to run, {skipped} already finished")

    def cell(self, done: int, total: int, label: str, error: Optional[Tuple[str, str]]) -> None:
        if error is not None:
            self.say(f"failed: {label}: {error[1]}")
        if not self.enabled or total == 0:
            return
        now = time.monotonic()
        last = done >= total
        if self.redraw:
            if not last and now - self.drawn < 0.1:
                return
        else:
            tenth = 10 * done // total
            if tenth == self.tenth and not last:
                return
            self.tenth = tenth
        self.drawn = now
        elapsed = now - self.started
        rate = done / max(elapsed, 1e-9)
        filled = self.WIDTH * done // total
        line = (
            f"[{'#' * filled}{'-' * (self.WIDTH - filled)}] {done}/{total} cells, "
            f"{rate:.2f}/s, {_clock(elapsed)} elapsed, ETA {_clock((total - done) / rate)}"
        )
        if self.redraw:
            self.stream.write("\r" + line + "   ")
            self.open = not last
            if last:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _redraws(stream: TextIO) -> bool:
    """Whether ``stream`` shows a carriage return as a redraw: a terminal,
    or a Jupyter kernel's stream."""
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):
        return False
    return type(stream).__module__.startswith("ipykernel")
