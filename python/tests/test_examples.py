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
