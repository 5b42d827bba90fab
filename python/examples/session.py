"""A session: jobs decided one by one by the crate's online schedulers
over a shared cluster state, saved and resumed, as a scheduler would drive
`dmlsched session` (docs/session-protocol.md).

    python python/examples/session.py

Parameter-server jobs go to the locality-aware scheduler, ring-all-reduce
jobs to the GADGET-style one. Each decision is printed with its plan and
the session's certificate snapshot; halfway through, the session is saved
to a file and loaded again, and it goes on deciding as before.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import dmlsched

DATA = Path(__file__).resolve().parents[2] / "examples" / "data" / "session"


def jobs():
    """Twelve jobs, one a minute, made from the example's four kinds."""
    events = [json.loads(l) for l in (DATA / "events.jsonl").read_text().splitlines() if l.strip()]
    kinds = [e["job"] for e in events if e["event"] == "submit"][:4]
    for k in range(12):
        job = copy.deepcopy(kinds[k % len(kinds)])
        job["id"] = 100 + k
        yield 60.0 * k, job


def show(d: dict) -> str:
    if not d["admitted"]:
        return f"job {d['job']}: rejected by {d['algorithm']} ({d['rejection']['reason']})"
    first, last = d["segments"][0]["slots"], d["segments"][-1]["slots"]
    return (f"job {d['job']}: admitted by {d['algorithm']}, slots {first['start']}..{last['end']}, "
            f"utility {d['utility']:.1f}, price {d['price']:.3g}; "
            f"session ALG {d['certificate']['alg']:.1f} ≤ OPT ≤ {d['certificate']['trivial_bound']:.1f}")


def main() -> None:
    session = dmlsched.Session(
        DATA / "cluster.json", algorithm="ps=locality,rar=gadget", past=DATA / "past.json"
    )
    print(session)
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "session.json"
        for k, (time, job) in enumerate(jobs()):
            if k == 6:
                session.save(saved)
                session = dmlsched.Session.load(saved)
                print(f"-- saved to and loaded from {saved.name} at t = {session.now} s")
            decision = session.submit(job, time=time)
            print(show(decision))
            if decision["admitted"] and k % 4 == 3:
                reply = session.finish(decision["job"], time + 30.0)
                print(f"job {reply['job']}: {reply['status']} (plan released: {reply['released']})")
    for name, c in session.certificates().items():
        print(f"{name}: objective {c.objective:.1f}, bound {c.bound.value:.1f} ({c.bound.kind}), "
              f"certificate valid: {c.valid}")


if __name__ == "__main__":
    main()
