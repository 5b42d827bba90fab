"""`Session`: jobs decided one by one over a shared cluster state, saved
and loaded, as `dmlsched session` does (docs/session-protocol.md)."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

import dmlsched
from conftest import DATA, strip_clock

SESSION = DATA / "session"
ALGORITHM = "ps=locality,rar=gadget"


def stream():
    """Protocol events: the example's outside usage, then 12 jobs built
    from the example's (one a minute), some finished or cancelled."""
    lines = [json.loads(l) for l in (SESSION / "events.jsonl").read_text().splitlines() if l.strip()]
    templates = [e["job"] for e in lines if e["event"] == "submit"]
    events = [lines[0]]  # usage
    for k in range(12):
        job = copy.deepcopy(templates[k % len(templates)])
        job["id"] = 100 + k
        events.append({"event": "submit", "time_s": 60.0 * k, "job": job})
        if k % 4 == 3:
            events.append({"event": "finish", "time_s": 60.0 * k + 30, "job": 100 + k - 2})
        if k % 5 == 4:
            events.append({"event": "cancel", "time_s": 60.0 * k + 40, "job": 100 + k - 1})
    return events


def apply(session: dmlsched.Session, e: dict):
    kind = e["event"]
    if kind == "submit":
        return session.submit(e["job"], time=e["time_s"])
    if kind in ("finish", "cancel"):
        return getattr(session, kind)(e["job"], e["time_s"])
    if kind == "usage":
        return session.usage(e["machine"], e["from_s"], e["to_s"], e["resources"])
    raise AssertionError(kind)


def new_session() -> dmlsched.Session:
    return dmlsched.Session(
        SESSION / "cluster.json", algorithm=ALGORITHM, past=SESSION / "past.json"
    )


def test_session_roundtrip(tmp_path):
    events = stream()
    whole = new_session()
    assert whole.algorithms == ["locality", "gadget"]
    expected = [apply(whole, e) for e in events]
    decisions = [r for r in expected if "admitted" in r]
    assert len(decisions) == 12 and any(d["admitted"] for d in decisions)
    assert {d["algorithm"] for d in decisions} == {"locality", "gadget"}

    half = len(events) // 2
    first = new_session()
    got = [apply(first, e) for e in events[:half]]
    path = tmp_path / "session.json"
    first.save(path)
    del first
    resumed = dmlsched.Session.load(path)
    assert resumed.algorithms == whole.algorithms
    got += [apply(resumed, e) for e in events[half:]]
    assert got == expected
    assert resumed.now == whole.now
    for name, c in whole.certificates().items():
        assert strip_clock(resumed.certificate(name).to_dict()) == strip_clock(c.to_dict())
    assert resumed.status(100) == whole.status(100)


def test_session_errors():
    s = new_session()
    events = stream()
    apply(s, events[1])
    with pytest.raises(dmlsched.InputError, match="is not finite or before the session's time"):
        s.finish(100, -1.0)
    with pytest.raises(dmlsched.InputError, match="was never submitted"):
        s.finish(99999, 100.0)
    with pytest.raises(dmlsched.InputError, match="not a session algorithm"):
        dmlsched.Session(SESSION / "cluster.json", algorithm="fifo", past=SESSION / "past.json")
    with pytest.raises(dmlsched.InputError, match="needs past jobs"):
        dmlsched.Session(SESSION / "cluster.json", algorithm="gadget")
    with pytest.raises(dmlsched.InputError, match="name the algorithm"):
        s.certificate()


def test_session_with_an_instance():
    inst = dmlsched.Instance.from_file(DATA / "instance_ring_batch.json")
    s = dmlsched.Session(inst)  # gadget, the instance's jobs as the past
    d = s.submit(inst.to_dict()["jobs"][0], time=0.0)
    assert d["algorithm"] == "gadget" and d["admitted"] == bool(d["segments"])
    c = s.certificate()
    assert c.algorithm and isinstance(c.objective, float)


def test_session_matches_cli(cli, tmp_path):
    events = stream()
    ours = new_session()
    expected = [apply(ours, e) for e in events]
    state = tmp_path / "state.json"
    run = subprocess.run(
        [str(cli), "session", "--algorithm", ALGORITHM, "--cluster", str(SESSION / "cluster.json"),
         "--past", str(SESSION / "past.json"), "--state", str(state)],
        input="".join(json.dumps(e) + "\n" for e in events),
        capture_output=True, text=True, timeout=120, check=True,
    )
    replies = [json.loads(l) for l in run.stdout.splitlines()]
    assert replies == expected
    # The command line's saved state continues here as it would there.
    loaded = dmlsched.Session.load(state)
    more = {"event": "submit", "time_s": 3600.0, "job": dict(events[1]["job"], id=999)}
    assert apply(loaded, more) == apply(ours, more)
