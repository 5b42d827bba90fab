"""`simulate`: the command line's tables, bit for bit."""

from __future__ import annotations

import csv
import io
import math
import subprocess

import pandas as pd
import pytest

import dmlsched
from conftest import DATA


def cells(text: str):
    return list(csv.DictReader(io.StringIO(text)))


def test_tables_are_bit_exact():
    sim = dmlsched.simulate(DATA / "instance_ps.json", ["fifo", "drf", "tiresias", "oasis"])
    for frame, text in [(sim.summary, sim.summary_csv), (sim.jobs, sim.jobs_csv),
                        (sim.utilization, sim.utilization_csv)]:
        rows = cells(text)
        assert len(rows) == len(frame)
        for col in frame.columns:
            if not pd.api.types.is_float_dtype(frame[col]):
                continue
            for got, row in zip(frame[col], rows):
                want = float(row[col]) if row[col] != "" else math.nan
                assert (math.isnan(got) and math.isnan(want)) or got == want, (col, got, want)
    # The algorithm's run carries its certificate; the baselines' none.
    assert [c is not None for c in sim.certificates] == [False, False, False, True]
    assert sim.certificates[3].maximise


def test_simulate_matches_cli(cli, tmp_path):
    path = DATA / "instance_ps.json"
    policies = ["fifo", "sjf", "drf", "tiresias", "oasis"]
    subprocess.run(
        [str(cli), "simulate", str(path), "--policies", ",".join(policies), "--seed", "3",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    sim = dmlsched.simulate(path, policies, seeds=[3])
    clock = ["solver_time_s"]  # time spent deciding: wall-clock
    for name, frame in [("summary.csv", sim.summary), ("jobs.csv", sim.jobs),
                        ("utilization.csv", sim.utilization)]:
        text = (tmp_path / name).read_text()
        expected = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
        drop = [c for c in clock if c in expected.columns]
        pd.testing.assert_frame_equal(
            frame.drop(columns=drop), expected.drop(columns=drop), check_exact=True
        )


def test_seeds_and_options():
    sim = dmlsched.simulate(
        DATA / "instance_ring.json", "fifo,rar-online-random", seeds=[0, 1], stop="horizon",
        workload="rings",
    )
    assert sim.runs == [("fifo", 0), ("rar-online-random", 0), ("fifo", 1), ("rar-online-random", 1)]
    assert list(sim.summary["seed"]) == [0, 0, 1, 1]
    assert set(sim.summary["workload"]) == {"rings"}
    assert set(sim.jobs.groupby(["policy", "seed"]).size()) == {10}
