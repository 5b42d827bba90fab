"""`dmlsched.replay`: the command line's replay from Python, its tables
equal to the files `dmlsched replay --out` writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import dmlsched
from conftest import TRACES

PHILLY = TRACES / "philly.csv"

needs_traces = pytest.mark.skipif(
    not PHILLY.is_file(), reason=f"no Philly trace at {PHILLY} (set DMLSCHED_TRACES)"
)

# Wall-clock seconds inside the policy: not reproducible from run to run.
CLOCK = "solver_time_s"


def read_cli_csv(path: Path) -> pd.DataFrame:
    """A CSV file of the command line, read as a user reads it."""
    with warnings.catch_warnings():
        # pandas 3.1 reads round-trip by default and deprecates the option.
        warnings.simplefilter("ignore")
        return pd.read_csv(path, float_precision="round_trip")


def cli_replay(cli: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(cli), "replay", str(PHILLY), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_traces
def test_replay_equals_cli(cli, tmp_path):
    kwargs = dict(
        start="2017-11-01",
        jobs=500,
        gpus=64,
        policies=["fifo", "tiresias"],
        seeds=[0, 1],
        load_scales=[1.0, 2.0],
    )
    result = dmlsched.replay(PHILLY, **kwargs)
    run = cli_replay(
        cli,
        tmp_path,
        "--start", "2017-11-01", "--jobs", "500", "--gpus", "64",
        "--policies", "fifo,tiresias", "--seeds", "0,1", "--load-scales", "1,2",
    )
    assert run.returncode == 0, run.stderr
    summary = read_cli_csv(tmp_path / "summary.csv")
    assert list(result.summary.columns) == list(summary.columns)
    assert len(summary) == 8
    assert_frame_equal(
        result.summary.drop(columns=[CLOCK]),
        summary.drop(columns=[CLOCK]),
        check_exact=True,
    )
    # The per-job tables, one after the other, with the run's load scale.
    frames = []
    for scale in ["1", "2"]:
        for seed in [0, 1]:
            for policy in ["fifo", "tiresias"]:
                f = read_cli_csv(tmp_path / f"jobs-{policy}-x{scale}-seed{seed}.csv")
                f.insert(f.columns.get_loc("seed") + 1, "load_scale", float(scale))
                frames.append(f)
    jobs = pd.concat(frames, ignore_index=True)
    assert_frame_equal(result.jobs, jobs, check_exact=True)
    # The messages open the command's output.
    assert run.stdout.splitlines()[: len(result.messages)] == result.messages


@needs_traces
def test_replay_out_writes_the_commands_files(tmp_path):
    result = dmlsched.replay(PHILLY, start="2017-11-01", jobs=100, policies="fifo,sjf", out=tmp_path)
    for name in ["summary.csv", "jobs-fifo-x1-seed0.csv", "jobs-sjf-x1-seed0.csv", "utilization.csv"]:
        assert (tmp_path / name).stat().st_size > 0, name
    written = read_cli_csv(tmp_path / "summary.csv")
    assert_frame_equal(result.summary.drop(columns=[CLOCK]), written.drop(columns=[CLOCK]), check_exact=True)


@needs_traces
def test_replay_certificates(cli, tmp_path):
    result = dmlsched.replay(PHILLY, start="2017-11-01", jobs=60, policies=["fifo", "oasis"])
    assert [c["policy"] for c in result.certificates] == ["oasis"]
    cert = result.certificates[0]["certificate"]
    assert isinstance(cert, dmlsched.Certificate)
    row = result.summary.set_index("policy").loc["oasis"]
    # A maximisation: the proven bound is at least the plans' objective (its
    # scope is the algorithm's plans, not the simulator's replay of them).
    assert cert.sense == "maximise"
    assert cert.bound.value >= cert.objective
    assert cert.valid
    assert row["utility_bound"] == cert.bound.value
    # certificates.json as the command writes it.
    run = cli_replay(cli, tmp_path, "--start", "2017-11-01", "--jobs", "60", "--policies", "fifo,oasis")
    assert run.returncode == 0, run.stderr
    ours = json.loads(result.certificates_json)
    theirs = json.loads((tmp_path / "certificates.json").read_text())
    strip = lambda v: {k: strip(x) for k, x in v.items() if "seconds" not in k and not k.endswith("time_s")} \
        if isinstance(v, dict) else [strip(x) for x in v] if isinstance(v, list) else v
    assert strip(ours) == strip(theirs)


@needs_traces
def test_replay_bad_input_raises_input_error():
    cases = [
        (dict(jobs=0), "--jobs must be at least 1"),
        (dict(policies=["nope"]), "unknown policy nope"),
        (dict(load_scales=[float("nan")]), "--load-scales: NaN"),
        (dict(horizon="cover:x"), "--horizon cover:x"),
        (dict(gpus="v100"), "--gpus v100"),
        (dict(gpus_per_machine=7), "--gpus-per-machine 7"),
        (dict(round_s=0), "--round-s 0"),
        (dict(policies=["gavel-max-throughput-per-cost"]), "needs --gpu-prices"),
        (dict(params={"fifo": {}}), "--params fifo"),
        (dict(arch="tpu"), "--arch tpu"),
        (dict(format="csv"), "--format"),
    ]
    for kwargs, message in cases:
        with pytest.raises(dmlsched.InputError, match=message.replace("(", r"\(")):
            dmlsched.replay(PHILLY, **kwargs)
    with pytest.raises(dmlsched.InputError, match="no-such-trace.csv"):
        dmlsched.replay(TRACES / "no-such-trace.csv")


@needs_traces
def test_replay_failed_run_keeps_the_others():
    # 10-s slots over a Philly window give the GADGET-style scheduler more
    # horizon × machines than it takes: it fails, FIFO's results stay.
    with pytest.raises(dmlsched.DmlschedError) as info:
        dmlsched.replay(PHILLY, jobs=40, policies=["fifo", "gadget"], slot_length=10)
    result = info.value.result
    assert list(result.summary["policy"]) == ["fifo"]
    assert result.summary["completed"].tolist() == [40]
    assert list(result.failures["policy"]) == ["gadget"]
    assert "1 of 2 runs failed" in str(info.value)


@needs_traces
def test_replay_stops_on_ctrl_c_between_runs():
    # Two hundred runs (about 1.3 s in all here, more on a loaded machine);
    # Ctrl-C 0.3 s in stops the replay at its next check, before the next
    # run, not at its end. The interrupt says how far the replay got, so
    # the test times nothing: load only makes the replay longer, and the
    # signal comes earlier in it.
    import _thread
    import threading

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt) as info:
        dmlsched.replay(PHILLY, start="2017-11-01", jobs=500, policies=["fifo"], seeds=list(range(200)))
    timer.join()
    assert info.value.runs_total == 200
    assert 0 <= info.value.runs_done < 200
    if sys.version_info >= (3, 11):
        assert f"dmlsched stopped after {info.value.runs_done} of 200 runs" in info.value.__notes__


@needs_traces
def test_replay_python_values():
    with pytest.raises(dmlsched.InputError, match="--jobs -1"):
        dmlsched.replay(PHILLY, jobs=-1)
    with pytest.raises(TypeError, match="--jobs"):
        dmlsched.replay(PHILLY, jobs="500")
    with pytest.raises(dmlsched.InputError, match="--seeds -1"):
        dmlsched.replay(PHILLY, seeds=[-1])
    # A horizon in slots that no slot length brings under the GADGET-style
    # scheduler's cell limit: refused at once, naming --horizon.
    with pytest.raises(dmlsched.InputError, match="--horizon 10000000"):
        dmlsched.replay(PHILLY, jobs=40, policies="gadget", horizon=10**7)
