"""A sweep from Python: two windows of a real trace under three policies at
two loads and two seeds, run cell by cell into a folder that keeps every
finished cell, then the mean job completion time per policy and load.

    python python/examples/sweep.py [PHILLY.csv] [--out DIR] [--backend local|ray]

The trace is Philly's (`$DMLSCHED_TRACES/philly.csv` by default). Run it
twice with the same --out: the second run finds every cell finished and
only reads the tables. The same sweep from the command line, with the grid
saved as grid.json:

    dmlsched sweep grid.json --out DIR
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import dmlsched


def default_trace() -> Path:
    root = os.environ.get("DMLSCHED_TRACES")
    if root:
        return Path(root) / "philly.csv"
    return Path(__file__).resolve().parents[3] / "shared" / "traces" / "philly.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", type=Path, default=default_trace())
    parser.add_argument("--out", type=Path, default=None,
                        help="the sweep folder (default: a temporary one, deleted after)")
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    args = parser.parse_args()

    grid = {
        "trace": str(args.trace),
        "windows": [
            {"name": "early-nov", "start": "2017-11-01", "jobs": 300},
            {"name": "mid-nov", "start": "2017-11-15", "jobs": 300},
        ],
        "policies": ["fifo", "sjf", "tiresias"],
        "load_scales": [1, 2],
        "seeds": [0, 1],
        "options": {"gpus": 64},
    }
    with tempfile.TemporaryDirectory(prefix="dmlsched-sweep-example-") as scratch:
        out = args.out or Path(scratch)
        result = dmlsched.sweep(grid, out, backend=args.backend, progress=False)
    print(f"{len(result.summary)} rows ({result.ran} cells run, {result.skipped} already "
          f"finished)" + (f" in {result.out}" if args.out else ""))

    # Mean over windows and seeds of each row's mean JCT, per policy and load.
    s = result.summary
    table = s.groupby(["policy", "load_scale"], sort=False)["avg_jct_s"].mean().unstack()
    print("\nmean JCT (hours) by load scale")
    print((table / 3600).round(2).to_string())
    print(f"\nwall time of the cells: {result.timings['wall_s'].sum():.1f} s in all")


if __name__ == "__main__":
    main()
