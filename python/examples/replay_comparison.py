"""A replay of a real trace under several policies and load scales, from
Python: mean job completion time against load, one line per policy, and
the JCT distribution at the trace's own load, as a PNG.

    python python/examples/replay_comparison.py [PHILLY.csv] [--jobs N] [--out PLOT.png]

The trace is Philly's (`$DMLSCHED_TRACES/philly.csv` by default); the
window starts on 2017-11-01. The same run from the command line:

    dmlsched replay philly.csv --start 2017-11-01 --jobs 1000 \\
        --policies fifo,sjf,tiresias,drf --load-scales 1,2,3 --seeds 0,1
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

import dmlsched  # noqa: E402

POLICIES = ["fifo", "sjf", "tiresias", "drf"]
LOADS = [1.0, 2.0, 3.0]


def default_trace() -> Path:
    root = os.environ.get("DMLSCHED_TRACES")
    if root:
        return Path(root) / "philly.csv"
    return Path(__file__).resolve().parents[3] / "shared" / "traces" / "philly.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", type=Path, default=default_trace())
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("replay_comparison.png"))
    args = parser.parse_args()

    result = dmlsched.replay(
        args.trace,
        start="2017-11-01",
        jobs=args.jobs,
        gpus=64,
        policies=POLICIES,
        load_scales=LOADS,
        seeds=[0, 1],
    )
    for line in result.messages:
        print(line)

    # Mean over seeds of each run's mean JCT, per policy and load.
    s = result.summary
    table = s.groupby(["policy", "load_scale"], sort=False)["avg_jct_s"].mean().unstack()
    print("\nmean JCT (hours) by load scale")
    print((table / 3600).round(2).to_string())

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for policy in POLICIES:
        left.plot(LOADS, table.loc[policy] / 3600, marker="o", label=policy)
        jct = result.jobs.query("policy == @policy and load_scale == 1.0 and seed == 0")["jct_s"]
        jct = jct.dropna().sort_values() / 3600
        right.plot(jct.values, [(i + 1) / len(jct) for i in range(len(jct))], label=policy)
    left.set(xlabel="load scale (arrival-rate multiplier)", ylabel="mean JCT (h)",
             title="Mean JCT against load (mean of 2 seeds)")
    right.set(xscale="log", xlabel="JCT (h)", ylabel="fraction of jobs",
              title="JCT CDF, load 1, seed 0")
    left.legend()
    right.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
