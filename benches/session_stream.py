#!/usr/bin/env python3
"""Writes the event streams of the protocol-throughput measurement of
`dmlsched session` (docs/benchmarks.md, "Protocol throughput").

    python3 benches/session_stream.py OUT_DIR
    time target/release/dmlsched session --algorithm gadget \
        --cluster examples/data/session/cluster.json \
        --past examples/data/session/past.json < OUT_DIR/rar.jsonl > /dev/null

Three streams of 2,000 jobs each, drawn from examples/data/session/past.json
with new ids: `mixed.jsonl` (alternating parameter-server and ring jobs),
`ps.jsonl` and `rar.jsonl`. A job is submitted every 30 s and finished
300-1,800 s later (uniform, seed 1): 4,000 events sorted by time.
"""

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAST = os.path.join(HERE, "..", "examples", "data", "session", "past.json")


def stream(kinds, rng, jobs=2000):
    events = []
    for i in range(jobs):
        t = 30.0 * i
        job = dict(rng.choice(kinds[i % len(kinds)]))
        job["id"] = i
        job.pop("arrival_s", None)
        events.append((t, 0, {"event": "submit", "time_s": t, "job": job}))
        done = t + rng.uniform(300, 1800)
        events.append((done, 1, {"event": "finish", "time_s": done, "job": i}))
    events.sort(key=lambda e: (e[0], e[1]))
    return [e for _, _, e in events]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    past = json.load(open(PAST))
    ps = [j for j in past if "parameter_server" in j["architecture"]]
    rar = [j for j in past if "ring_all_reduce" in j["architecture"]]
    rng = random.Random(1)
    for name, kinds in [("mixed", [ps, rar]), ("ps", [ps]), ("rar", [rar])]:
        with open(os.path.join(out, f"{name}.jsonl"), "w") as f:
            for e in stream(kinds, rng):
                f.write(json.dumps(e) + "\n")


if __name__ == "__main__":
    main()
