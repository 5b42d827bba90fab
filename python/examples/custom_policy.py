"""A scheduling policy written in Python, run by the crate's simulator
beside the built-in baselines, with a table of the results.

    python python/examples/custom_policy.py [INSTANCE.json]

The policy starts the waiting job with the least work left first, at its
requested size, and lets later jobs start when an earlier one does not fit
(backfill). Placement is the baselines' best-fit, through
`View.placer`. Its runs are compared with FIFO, FIFO with backfill, SJF,
DRF and Tiresias on the same instance.
"""

from __future__ import annotations

import sys
from pathlib import Path

import dmlsched

DEFAULT = Path(__file__).resolve().parents[2] / "examples" / "data" / "instance_ps.json"


class LeastWorkFirst:
    """Least remaining work first, non-preemptive, with backfill."""

    name = "py-least-work"

    def __init__(self) -> None:
        self.decisions = 0

    def reset(self) -> None:
        self.decisions = 0

    def on_event(self, view: dmlsched.View, event: dict) -> list:
        self.decisions += 1
        placer = view.placer("best-fit")
        actions = []
        for job in sorted(view.queued, key=lambda j: (j.remaining_work, j.arrival_s, j.id)):
            placement = placer.place(job.id)  # its requested size
            if placement is not None:
                actions.append(dmlsched.Action.run(job.id, placement))
        return actions

    def notes(self) -> list:
        return [f"decided at {self.decisions} events"]


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    instance = dmlsched.Instance.from_file(path)
    mine = LeastWorkFirst()
    sim = dmlsched.simulate(
        instance, ["fifo", "fifo-backfill", "sjf", "drf", "tiresias", mine]
    )
    print(f"{instance.label}: {instance.n_jobs} jobs on {instance.n_machines} machines")
    columns = ["policy", "completed", "avg_jct_s", "p95_jct_s", "makespan_s",
               "gpu_utilization", "total_utility", "preemptions"]
    print(sim.summary[columns].to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    for note in sim.notes:
        print("note:", note)
    ours = sim.summary.set_index("policy").loc[mine.name]
    assert ours["completed"] + ours["rejected"] + ours["unfinished"] == instance.n_jobs


if __name__ == "__main__":
    main()
