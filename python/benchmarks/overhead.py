"""The Python package's overhead, measured in one run:

1. a replay of 5,000 Philly jobs from Python (`dmlsched.replay`, the tables
   as DataFrames) against the same replay by the command line (`dmlsched
   replay ... --out DIR`, a process of its own, writing its files), median
   of several alternating runs of each;
2. a policy written in Python against the built-in one it copies (FIFO on
   best-fit placement) on the same instance: the cost per event of the
   view's copy and the call.

    python python/benchmarks/overhead.py [--cli target/release/dmlsched] [--repeats 5]

Prints a Markdown table (docs/benchmarks.md, "Python package").
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import dmlsched

REPO = Path(__file__).resolve().parents[2]
TRACES = Path(os.environ.get("DMLSCHED_TRACES", REPO.parent / "shared" / "traces"))
ARGS = dict(start="2017-10-01", jobs=5000, policies=["fifo", "tiresias"])
FLAGS = ["--start", "2017-10-01", "--jobs", "5000", "--policies", "fifo,tiresias"]


class Counted:
    """Counts its events and the active jobs their views held; `decide`
    answers."""

    name = "py-noop"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.events = 0
        self.active = 0

    def on_event(self, view, event):
        self.events += 1
        self.active += len(view.jobs)
        return self.decide(view)

    def decide(self, view):
        """Does nothing: what the call and the view's copy cost alone."""
        return []


class PyFifo(Counted):
    """Strict FIFO at requested sizes, best-fit placement: the built-in
    `fifo`'s rule, written in Python."""

    name = "py-fifo"

    def decide(self, view):
        placer = view.placer("best-fit")
        actions = []
        for job in view.queued:
            placement = placer.place(job.id)
            if placement is None:
                break
            actions.append(dmlsched.Action.run(job.id, placement))
        return actions


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def replay_overhead(cli: Path, repeats: int):
    trace = TRACES / "philly.csv"
    py, cmd = [], []
    with tempfile.TemporaryDirectory() as out:
        dmlsched.replay(trace, **ARGS)  # warm the page cache
        for _ in range(repeats):
            py.append(timed(lambda: dmlsched.replay(trace, **ARGS)))
            cmd.append(timed(lambda: subprocess.run(
                [str(cli), "replay", str(trace), *FLAGS, "--out", out],
                check=True, stdout=subprocess.DEVNULL)))
    return statistics.median(py), statistics.median(cmd)


def instance(n: int, every_s: float) -> dmlsched.Instance:
    """instance_ps.json's cluster with `n` of its jobs, one every `every_s`."""
    base = json.loads((REPO / "examples" / "data" / "instance_ps.json").read_text())
    jobs = []
    for i in range(n):
        j = copy.deepcopy(base["jobs"][i % 5])  # the first five fit the cluster under fifo
        j["id"] = i
        j["arrival_s"] = float(every_s * i)
        jobs.append(j)
    base["jobs"] = jobs
    base["horizon_slots"] = 1_000_000
    return dmlsched.Instance.from_dict(base)


def policy_cost(repeats: int, every_s: float):
    inst = instance(2000, every_s)
    rows = []
    builtin = statistics.median(timed(lambda: dmlsched.simulate(inst, ["fifo"])) for _ in range(repeats))
    for policy in [Counted(), PyFifo()]:
        runs = []
        for _ in range(repeats):
            runs.append(timed(lambda: dmlsched.simulate(inst, [policy])))
        events = policy.events
        t = statistics.median(runs)
        rows.append((policy.name, events, policy.active / events, t, (t - builtin) / events))
    return inst, builtin, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", type=Path, default=REPO / "target" / "release" / "dmlsched")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"Python {platform.python_version()}; dmlsched {dmlsched.__version__}")
    py, cmd = replay_overhead(args.cli, args.repeats)
    print("\n| replay of 5,000 Philly jobs (fifo, tiresias) | median wall time |")
    print("|---|---|")
    print(f"| `dmlsched replay ... --out DIR` (process) | {cmd:.3f} s |")
    print(f"| `dmlsched.replay(...)` (DataFrames) | {py:.3f} s |")
    print(f"| Python / command line | {py / cmd:.3f} |")
    print("\n| 2,000 jobs on 10 machines, one every | policy | events | active jobs per event (mean) "
          "| run | per event over built-in fifo |")
    print("|---|---|---|---|---|---|")
    for every_s in [100_000.0, 30.0]:
        inst, builtin, rows = policy_cost(args.repeats, every_s)
        print(f"| {every_s:.0f} s | built-in `fifo` | — | — | {builtin:.3f} s | — |")
        for name, events, active, t, per in rows:
            print(f"| {every_s:.0f} s | `{name}` | {events} | {active:.0f} | {t:.3f} s | {per * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
