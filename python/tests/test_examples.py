"""The examples run (as a user runs them, in a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("name", ["custom_policy.py", "session.py"])
def test_example(name):
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()
    if name == "custom_policy.py":
        assert "py-least-work" in run.stdout and "tiresias" in run.stdout
    else:
        assert "saved to and loaded from" in run.stdout and "admitted by" in run.stdout


def test_replay_comparison(tmp_path):
    pytest.importorskip("matplotlib", reason="the example plots with matplotlib")
    from test_replay import PHILLY

    if not PHILLY.is_file():
        pytest.skip(f"no Philly trace at {PHILLY} (set DMLSCHED_TRACES)")
    plot = tmp_path / "replay.png"
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "replay_comparison.py"), str(PHILLY), "--jobs", "300",
         "--out", str(plot)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "mean JCT (hours) by load scale" in run.stdout
    for policy in ["fifo", "sjf", "tiresias", "drf"]:
        assert policy in run.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep(tmp_path):
    from test_replay import PHILLY

    if not PHILLY.is_file():
        pytest.skip(f"no Philly trace at {PHILLY} (set DMLSCHED_TRACES)")
    out = tmp_path / "sweep"
    command = [sys.executable, str(EXAMPLES / "sweep.py"), str(PHILLY), "--out", str(out)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("24 rows (24 cells run, 0 already finished)")
    assert "mean JCT (hours) by load scale" in first.stdout
    for policy in ["fifo", "sjf", "tiresias"]:
        assert policy in first.stdout
    assert (out / "summary.csv").is_file()
    # Run again on the same folder: every cell found finished, same table.
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("24 rows (0 cells run, 24 already finished)")
    table = lambda text: text[text.index("mean JCT"):text.index("wall time")]  # noqa: E731
    assert table(again.stdout) == table(first.stdout)
