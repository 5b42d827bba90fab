"""Shared fixtures: the repository's example data, the command line's
release binary (for the tests that compare with it), and a large
generated instance (for the GIL test)."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Optional

import pytest

import dmlsched

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "examples" / "data"
INSTANCES = sorted(DATA.glob("instance_*.json"))
TRACES = Path(os.environ.get("DMLSCHED_TRACES", REPO.parent / "shared" / "traces"))


def cli_binary() -> Optional[Path]:
    """The release build of the `dmlsched` command line: $DMLSCHED_BIN,
    else target/release/dmlsched of $CARGO_TARGET_DIR or of the
    repository; None when there is none."""
    candidates = []
    if os.environ.get("DMLSCHED_BIN"):
        candidates.append(Path(os.environ["DMLSCHED_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "dmlsched")
    candidates.append(REPO / "target" / "release" / "dmlsched")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    found = shutil.which("dmlsched")
    return Path(found) if found else None


@pytest.fixture
def cli() -> Path:
    """The command line's release binary, or a skip."""
    b = cli_binary()
    if b is None:
        pytest.skip(
            "no release build of the command line (cargo build --release --features cli, "
            "or set DMLSCHED_BIN)"
        )
    return b


def many_jobs(n: int) -> dmlsched.Instance:
    """instance_ps.json's cluster with `n` of its jobs, one arriving every
    30 s, and a horizon they fit in."""
    base = json.loads((DATA / "instance_ps.json").read_text())
    jobs = []
    for i in range(n):
        j = copy.deepcopy(base["jobs"][i % len(base["jobs"])])
        j["id"] = i
        j["arrival_s"] = float(30 * i)
        jobs.append(j)
    base["jobs"] = jobs
    base["horizon_slots"] = 100_000
    return dmlsched.Instance.from_dict(base)


def strip_clock(value):
    """`value` without wall-clock fields (`*seconds*`, `*time_s`), as the
    pinned-output tests compare the command line's JSON."""
    if isinstance(value, dict):
        return {
            k: strip_clock(v)
            for k, v in value.items()
            if "seconds" not in k and not k.endswith("time_s")
        }
    if isinstance(value, list):
        return [strip_clock(v) for v in value]
    return value
