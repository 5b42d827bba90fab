"""Every run releases the GIL: two runs in two Python threads overlap."""

from __future__ import annotations

import threading
import time

import dmlsched
from conftest import many_jobs


def timed(f, *args):
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


def test_gil_released():
    inst = many_jobs(1200)

    def run():
        dmlsched.simulate(inst, ["drf"])

    run()  # warm up
    serial = timed(run) + timed(run)
    assert serial >= 1.0, f"each run should take ≥ 0.5 s, took {serial / 2:.2f} s"

    def both():
        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    parallel = min(timed(both) for _ in range(2))
    # Serialised by the GIL, the pair would take the serial time; on two
    # cores it takes about half. Allow for a busy machine.
    assert parallel < 0.8 * serial, f"parallel {parallel:.2f} s, serial {serial:.2f} s"


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
