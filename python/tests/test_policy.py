"""Policies written in Python, in the simulator beside the built-in ones."""

from __future__ import annotations

import traceback

import pandas as pd
import pytest

import dmlsched
from conftest import DATA


class PyFifo:
    """Strict FIFO at each job's requested size, placed best-fit: the rule
    of the built-in `fifo` (baselines::Fifo, start_in_order)."""

    name = "py-fifo"

    def __init__(self, rule: str = "best-fit"):
        self.rule = rule
        self.events = 0

    def reset(self):
        self.events = 0

    def on_event(self, view, event):
        self.events += 1
        placer = view.placer(self.rule)
        actions = []
        for job in view.queued:
            placement = placer.place(job.id, *job.requested_tasks)
            if placement is None:
                break  # head-of-line blocking, as strict FIFO
            actions.append(dmlsched.Action.run(job.id, placement))
        return actions


def per_job(sim: dmlsched.Simulation, policy: str) -> pd.DataFrame:
    jobs = sim.jobs[sim.jobs["policy"] == policy]
    return jobs.drop(columns=["policy"]).reset_index(drop=True)


@pytest.mark.parametrize(
    "name", ["instance_ps.json", "instance_ring.json", "instance_ring_batch.json"]
)
def test_python_policy(name):
    fifo = PyFifo()
    sim = dmlsched.simulate(DATA / name, ["fifo", fifo], seeds=[0, 1])
    assert sim.runs == [("fifo", 0), ("py-fifo", 0), ("fifo", 1), ("py-fifo", 1)]
    builtin, python = per_job(sim, "fifo"), per_job(sim, "py-fifo")
    assert len(builtin) == 2 * dmlsched.Instance.from_file(DATA / name).n_jobs
    pd.testing.assert_frame_equal(builtin, python, check_exact=True)
    assert builtin["completed"].any()
    assert fifo.events > 0
    assert sim.certificates == [None] * 4
    # The summaries agree too, but for the time spent deciding.
    s = sim.summary.drop(columns=["policy", "solver_time_s"])
    pd.testing.assert_frame_equal(
        s.iloc[[0]].reset_index(drop=True), s.iloc[[1]].reset_index(drop=True)
    )


def test_python_policy_dict_actions_and_placement_rules():
    class DictFifo(PyFifo):
        name = "dict-fifo"

        def on_event(self, view, event):
            return [
                {"action": "run", "job": a.job, "placement": a.placement}
                for a in super().on_event(view, event)
            ]

    sim = dmlsched.simulate(
        DATA / "instance_ps.json",
        ["fifo", DictFifo(rule="first-fit")],
        placement="first-fit",
    )
    pd.testing.assert_frame_equal(per_job(sim, "fifo"), per_job(sim, "dict-fifo"))


def test_view_contents():
    seen = []

    class Probe:
        def on_event(self, view, event):
            seen.append((view, event))
            return []

    inst = dmlsched.Instance.from_file(DATA / "instance_ps.json")
    dmlsched.simulate(inst, [Probe()], stop="horizon")
    view, event = seen[0]
    assert event["kind"] == "arrival" and event["time"] == view.time == 0.0
    assert [f["machine"] for f in view.free] == inst.machine_ids
    assert all(j.queued and j.status == "waiting" for j in view.jobs)
    assert view.job(event["job"]) is not None
    assert view.instance.n_jobs == inst.n_jobs
    job = view.jobs[0]
    assert job.remaining_work == job.total_work > 0
    assert job.architecture == "parameter_server"


def test_python_policy_exception():
    class Boom:
        def on_event(self, view, event):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom") as info:
        dmlsched.simulate(DATA / "instance_ps.json", ["fifo", Boom()])
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "on_event" in frames, frames


def test_malformed_action_names_the_event():
    class Bad:
        name = "bad"

        def on_event(self, view, event):
            return [dmlsched.Action.pause(event["job"]), {"action": "fly", "job": 0}]

    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.simulate(DATA / "instance_ps.json", [Bad()])
    message = str(info.value)
    assert message.startswith("policy bad: its answer to the arrival of job 0 at t = 0 s: action 1:")
    assert "unknown action" in message

    class NotAList:
        def on_event(self, view, event):
            return 5

    with pytest.raises(dmlsched.InputError, match="expected a list of actions"):
        dmlsched.simulate(DATA / "instance_ps.json", [NotAList()])


def test_refused_allocation_is_a_run_error():
    class Greedy:
        def on_event(self, view, event):
            return [dmlsched.Action.run(j.id, [(m, 10**6, 1)]) for j in view.queued for m in [0]]

    with pytest.raises(dmlsched.RunError, match="^simulation: t = 0 s"):
        dmlsched.simulate(DATA / "instance_ps.json", [Greedy()])
