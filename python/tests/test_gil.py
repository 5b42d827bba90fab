"""Every run releases the GIL: a Python thread runs while a replay, a
simulation or a sweep runs in another."""

from __future__ import annotations

import json
import threading
import time

import pytest

import dmlsched
from conftest import TRACES, many_jobs


def spin_rate_while(f) -> float:
    """Increments per second a pure-Python thread makes while `f` runs in
    this thread (and whatever threads `f` starts). A call that holds the
    GIL stops it for the whole call."""
    stop = threading.Event()
    count = [0]

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)  # let it start
    before, started = count[0], time.perf_counter()
    f()
    after, took = count[0], time.perf_counter() - started
    stop.set()
    t.join()
    return (after - before) / took, took


def assert_releases_gil(f):
    """`f` lets a Python thread run meanwhile: at least a quarter of the
    rate it runs at while this thread sleeps (the GIL released). Robust on
    a busy machine: both rates are measured under the same load."""
    idle, _ = spin_rate_while(lambda: time.sleep(0.4))
    busy, took = spin_rate_while(f)
    assert took >= 0.2, f"the run should take ≥ 0.2 s to tell, took {took:.2f} s"
    assert busy >= 0.25 * idle, f"{busy:.0f}/s while running against {idle:.0f}/s idle"


def test_gil_released():
    # Two threads run replays concurrently while a third runs Python: all
    # three make progress, and the replays give what they give alone.
    trace = TRACES / "philly.csv"
    if not trace.is_file():
        pytest.skip(f"no Philly trace at {trace} (set DMLSCHED_TRACES)")

    def replay():
        return dmlsched.replay(trace, start="2017-11-01", jobs=3000, policies=["drf"])

    alone = replay().summary.drop(columns=["solver_time_s"])
    results = {}

    def both():
        def run(k):
            results[k] = replay()

        threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert_releases_gil(both)
    for r in results.values():
        assert r.summary.drop(columns=["solver_time_s"]).equals(alone)


def test_gil_released_by_simulate():
    inst = many_jobs(1200)
    assert_releases_gil(lambda: dmlsched.simulate(inst, ["drf"]))


def test_gil_released_by_sweep(tmp_path):
    # The local back end (its thread pool; the GIL taken back only to
    # report each cell), and one cell as a Ray task runs it.
    trace = TRACES / "philly.csv"
    if not trace.is_file():
        pytest.skip(f"no Philly trace at {trace} (set DMLSCHED_TRACES)")
    grid = {
        "trace": str(trace),
        "windows": [{"start": "2017-11-01", "jobs": 3000}],
        "policies": ["drf", "tiresias"],
    }
    assert_releases_gil(
        lambda: dmlsched.sweep(grid, tmp_path / "local", workers=1, progress=False)
    )
    native = dmlsched._native
    plan = native._sweep_plan(text=json.dumps(grid), base=str(tmp_path))
    _, missing = native._sweep_missing(plan, str(tmp_path / "cell"))
    _, _, cell = missing[0]
    assert_releases_gil(lambda: native._sweep_run_cell(cell))


def test_python_policies_in_threads():
    # Two simulations of a Python policy at once: each takes the GIL only
    # for its policy's calls, and both finish with the built-in's results.
    from test_policy import PyFifo, per_job
    from conftest import DATA

    results = {}

    def run(k):
        results[k] = dmlsched.simulate(DATA / "instance_ps.json", ["fifo", PyFifo()])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results) == [0, 1, 2, 3]
    for sim in results.values():
        assert per_job(sim, "fifo").equals(per_job(sim, "py-fifo"))
