"""`allocate`: every allocation policy on the shipped input equals
`dmlsched allocate`'s JSON."""

from __future__ import annotations

import json
import subprocess

import pytest

import dmlsched
from conftest import DATA, strip_clock

INPUT = DATA / "allocate.json"


@pytest.mark.parametrize("policy", dmlsched.ALLOCATION_POLICIES)
def test_allocate(cli, policy):
    run = subprocess.run(
        [str(cli), "allocate", "--policy", policy, str(INPUT)],
        capture_output=True, text=True, timeout=60, check=True,
    )
    expected = json.loads(run.stdout)
    got = dmlsched.allocate(policy, INPUT)
    assert strip_clock(got) == strip_clock(expected)
    # The input as a dict and as JSON text give the same answer.
    text = INPUT.read_text()
    assert strip_clock(dmlsched.allocate(policy, json.loads(text))) == strip_clock(got)
    assert strip_clock(dmlsched.allocate(policy, text)) == strip_clock(got)


@pytest.mark.parametrize("policy", dmlsched.ALLOCATION_POLICIES)
def test_allocate_answers(policy):
    got = dmlsched.allocate(policy, INPUT)
    assert got["policy"] == policy
    assert set(got) == {"policy", "objective", "allocation", "effective_throughput", "certificate"}
    assert (got["certificate"] is None) == policy.startswith("fifo")
