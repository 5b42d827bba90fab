#!/usr/bin/env python3
"""A Python client of `dmlsched session`, run by CI (issue 34, item 3).

It drives `dmlsched session` over pipes, one event at a time (write a line,
flush, read exactly one reply line, with a timeout so a hang fails the run),
with a few hundred mixed events drawn from a seeded `random.Random` on the
example cluster (`examples/data/session/`, 8 machines x 8 GPUs): ~150 jobs
alternating parameter-server and ring-all-reduce, early finishes inside the
plan, late ones extended at the plan's end (then finished or extended again),
~10 % cancels mid-plan, outside usage, certificates, and bad lines (malformed
JSON, an unknown event, a finish of a job never submitted, a time going
backwards, a job that fails validation, a duplicate job id).

It checks:
  * every event gets exactly one reply line, of the event's kind, and every
    bad line (and only a bad line) gets `{"error": ...}`; the bad lines
    include the id of a rejected job submitted again as a job of the other
    architecture (ids are unique for a session's life, whichever algorithm
    decides them);
  * decisions: a plan starts at the boundary at or after its submission and
    ends within the window; an extension continues the plan at its end;
  * its own GPU ledger, (machine, slot) -> GPU indices held, filled from the
    decisions', extensions' and usages' segments and emptied from the freed
    boundary on at finish/cancel: after every reply no GPU index is held twice
    in a slot and no machine holds more GPUs than its capacity;
  * `save`, `kill -9` and a restart from `--state` (twice, after 1/3 and 2/3
    of the jobs) decide exactly as an uninterrupted process (identical reply
    lines but the `save` replies), and the bad lines change nothing (a run
    without them gives the same replies to every other event);
  * a short second run with `--algorithm oasis` (parameter-server jobs only,
    `{"shared_machines": true}` as its params).

It prints one summary line per run and exits non-zero on any failed check.
Python 3.11 standard library only:

    python3 .ci/session_client.py target/release/dmlsched
"""

import copy
import heapq
import json
import math
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time

DATA = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "data", "session"))
SLOT_S = 60.0
WINDOW = 200
BOUNDARY_TOL = 1e-9
REPLY_TIMEOUT_S = 60.0
SEED = 34


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def slot_from(t):
    """The first slot boundary at or after `t` (as the state counts it)."""
    s = t / SLOT_S
    r = round(s)
    return int(r) if abs(s - r) <= BOUNDARY_TOL else math.ceil(s)


def slot_at(t):
    """The slot that holds `t`."""
    s = t / SLOT_S
    r = round(s)
    return int(r) if abs(s - r) <= BOUNDARY_TOL else math.floor(s)


class Process:
    """One `dmlsched session` process, driven one line at a time."""

    def __init__(self, argv):
        self.argv = argv
        self.p = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines = queue.Queue()
        self.err = []
        threading.Thread(target=self._read, args=(self.p.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    @staticmethod
    def _read(stream, q):
        for line in stream:
            q.put(line)
        q.put(None)

    def _drain(self):
        for line in self.p.stderr:
            self.err.append(line)

    def ask(self, line):
        """Sends one line, returns exactly one reply line."""
        check("\n" not in line, f"an event line with a newline: {line!r}")
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            raise Failure(f"the process is gone (stderr: {''.join(self.err)!r}) before {line!r}")
        try:
            reply = self.lines.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            self.p.kill()
            raise Failure(f"no reply within {REPLY_TIMEOUT_S} s to {line!r}")
        if reply is None:
            self.p.wait()
            raise Failure(
                f"the process ended (exit {self.p.returncode}, stderr {''.join(self.err)!r}) "
                f"without replying to {line!r}"
            )
        return reply.rstrip("\n")

    def kill9(self):
        self.p.kill()  # SIGKILL
        self.p.wait()
        self.p.stdin.close()

    def close(self):
        """Ends input; the process must exit 0 with no further output."""
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=REPLY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Failure("the process did not exit at the end of its input")
        rest = []
        while True:
            try:
                x = self.lines.get(timeout=REPLY_TIMEOUT_S)
            except queue.Empty:
                break
            if x is None:
                break
            rest.append(x)
        check(rc == 0, f"exit {rc} at the end of input, stderr {''.join(self.err)!r}")
        check(not rest, f"{len(rest)} reply lines that answer no event: {rest[:3]!r}")


class Ledger:
    """(machine, slot) -> {holder: (GPU indices, GPU count)}."""

    def __init__(self, cluster):
        self.capacity = {m["id"]: m["capacity"]["gpus"] for m in cluster["machines"]}
        self.cells = {}
        self.over = 0
        self.problems = []

    def hold(self, holder, machine, slots, ids, count):
        check(machine in self.capacity, f"{holder}: unknown machine {machine}")
        for g in ids:
            check(0 <= g < self.capacity[machine], f"{holder}: GPU {machine}/{g} out of range")
        check(len(set(ids)) == len(ids), f"{holder}: GPU ids repeated in one use: {ids}")
        for t in range(slots[0], slots[1]):
            cell = self.cells.setdefault((machine, t), {})
            old_ids, old_count = cell.get(holder, (set(), 0.0))
            cell[holder] = (old_ids | set(ids), old_count + count)
            self.check_cell(machine, t, cell, new_ids=ids, holder=holder, old_ids=old_ids)

    def check_cell(self, machine, t, cell, new_ids, holder, old_ids):
        taken = {}
        for h, (ids, _) in cell.items():
            for g in ids:
                taken.setdefault(g, []).append(h)
        twice = {g: hs for g, hs in taken.items() if len(hs) > 1}
        total = sum(c for _, c in cell.values())
        ids_dup = set(new_ids) & old_ids
        if twice or ids_dup or len(taken) > self.capacity[machine] or total > self.capacity[machine] + 1e-9:
            self.over += 1
            self.problems.append(
                f"machine {machine} slot {t}: GPUs held twice {twice or sorted(ids_dup)}, "
                f"{total} GPUs held of {self.capacity[machine]} (holders {sorted(map(str, cell))})"
            )

    def free_ids(self, machine, lo, hi):
        """How many GPU ids of `machine` no holder has in any slot of lo..hi."""
        taken, count = set(), 0.0
        for t in range(lo, hi):
            cell = self.cells.get((machine, t), {})
            for ids, _ in cell.values():
                taken |= ids
            count = max(count, sum(c for _, c in cell.values()))
        return min(self.capacity[machine] - len(taken), self.capacity[machine] - count)

    def release(self, holder, from_slot):
        freed = 0
        for (m, t), cell in self.cells.items():
            if t >= from_slot and holder in cell:
                freed += 1
                del cell[holder]
        return freed


def job_gpus(job, tasks):
    """GPUs the tasks of `job` use on one machine."""
    arch = job["architecture"]
    if "parameter_server" in arch:
        a = arch["parameter_server"]
        return tasks["workers"] * a["worker"]["gpus"] + tasks["ps"] * a["ps"]["gpus"]
    a = arch["ring_all_reduce"]
    return tasks["workers"] * a["worker"]["gpus"]


def placement_entries(placement):
    for e in placement:
        if isinstance(e, dict):
            yield e["machine"], e["tasks"]
        else:
            yield e[0], e[1]


def make_jobs(rng, past, n, kinds):
    """`n` jobs like `past`'s, alternating among `kinds` (architectures)."""
    by_kind = {k: [j for j in past if k in j["architecture"]] for k in kinds}
    jobs, t = [], 0.0
    for i in range(n):
        kind = kinds[i % len(kinds)]
        j = copy.deepcopy(rng.choice(by_kind[kind]))
        j["id"] = i + 1
        j.pop("arrival_s", None)
        a = j["architecture"][kind]
        if kind == "parameter_server":
            a["epochs"] = rng.randint(1, 4)
            a["max_workers"] = rng.choice([2, 4, 8])
            a["max_ps"] = min(a["max_ps"], a["max_workers"])
        else:
            a["iterations"] = rng.randint(800, 8000)
            a["workers"] = {"fixed": rng.choice([1, 2, 4, 8])}
        t += rng.uniform(20.0, 60.0)
        jobs.append((round(t, 3), j))
    return jobs


class Run:
    """One stream through one or more processes (restarts) of a session."""

    def __init__(self, name, binary, algorithm, kinds, n_jobs, restarts, bad_lines, tmp, params=None,
                 past=f"{DATA}/past.json"):
        self.name = name
        self.binary = binary
        self.algorithm = algorithm
        self.kinds = kinds
        self.n_jobs = n_jobs
        self.restarts = restarts
        self.bad_lines = bad_lines
        self.state = os.path.join(tmp, "state-" + "".join(c if c.isalnum() else "-" for c in name) + ".json")
        self.params = params
        self.cluster = json.load(open(f"{DATA}/cluster.json"))
        self.past_path = past
        self.past = json.load(open(past))
        self.ledger = Ledger(self.cluster)
        self.count = dict(events=0, replies=0, admitted=0, rejected=0, errors=0, extended=0, preempted=0)
        self.restarted = 0
        self.transcript = []  # (kind, line, reply) of every event but `save`
        self.now = 0.0

    def argv(self, first):
        a = [self.binary, "session", "--algorithm", self.algorithm, "--cluster", f"{DATA}/cluster.json"]
        if first:
            a += ["--past", self.past_path]
        if self.params:
            a += ["--params", self.params]
        a += ["--state", self.state]
        return a

    def send(self, kind, event, raw=None):
        line = raw if raw is not None else json.dumps(event, separators=(",", ":"))
        self.count["events"] += 1
        reply_text = self.proc.ask(line)
        self.count["replies"] += 1
        try:
            reply = json.loads(reply_text)
        except json.JSONDecodeError:
            raise Failure(f"{self.name}: a reply that is not JSON: {reply_text!r} to {line!r}")
        check(isinstance(reply, dict), f"{self.name}: a reply that is not an object: {reply_text!r}")
        if kind != "save":
            self.transcript.append((kind, line, reply_text))
        if kind.startswith("bad"):
            check(set(reply) == {"error"} and isinstance(reply["error"], str),
                  f"{self.name}: a bad line ({kind}) was not refused: {line[:300]!r} answered {reply_text[:300]!r}")
            self.count["errors"] += 1
        else:
            check("error" not in reply, f"{self.name}: {line[:300]!r} answered {reply_text[:300]!r}")
        return reply

    def start(self):
        if os.path.exists(self.state):
            os.remove(self.state)
        self.proc = Process(self.argv(first=True))

    def restart(self):
        reply = self.send("save", {"event": "save"})
        check(reply == {"ok": True, "event": "save"}, f"{self.name}: save answered {reply!r}")
        check(os.path.exists(self.state), f"{self.name}: save wrote no {self.state}")
        self.proc.kill9()
        self.proc = Process(self.argv(first=False))
        self.restarted += 1

    def hold_segments(self, job, segments, holder):
        for seg in segments:
            s = (seg["slots"]["start"], seg["slots"]["end"])
            check(s[0] < s[1], f"{self.name}: job {holder}: an empty segment {seg}")
            # A head start may begin in the slot in progress.
            check(s[0] >= slot_at(self.now), f"{self.name}: job {holder}: a segment {s} before now {self.now}")
            ids = {}
            for g in seg.get("gpus") or []:
                ids.setdefault(g["machine"], []).append(g["index"])
            for m, tasks in placement_entries(seg["placement"]):
                n = job_gpus(job, tasks)
                got = ids.get(m, [])
                if n > 0 and len(got) != n:
                    self.ledger.problems.append(
                        f"job {holder}: {len(got)} GPU ids for {n} GPUs on machine {m} in {seg}")
                self.ledger.hold(holder, m, s, got, n)

    def run(self):
        rng = random.Random(SEED)
        jobs = make_jobs(rng, self.past, self.n_jobs, self.kinds)
        end_s = jobs[-1][0]
        # Events: (time, seq, kind, payload); seq keeps ties in insertion order.
        heap, seq = [], 0

        def push(t, kind, payload):
            nonlocal seq
            heapq.heappush(heap, (t, seq, kind, payload))
            seq += 1

        for t, j in jobs:
            push(t, "submit", j)
        for k in range(6):
            push(round(end_s * (k + 0.5) / 6, 3), "usage", k)
        for k in range(4):
            push(round(end_s * (k + 1) / 4.5, 3) + 0.5, "certificate", None)
        # The bad lines, spread over the stream; the ids two of them use are
        # submitted validly later (in every run), which they must not block.
        bad = ["bad-json", "bad-event", "bad-finish", "bad-time", "bad-job", "bad-job-negative",
               "bad-duplicate", "bad-duplicate-rejected", "bad-field", "bad-usage", "bad-extend",
               "bad-finish-backwards"]
        if len(self.kinds) > 1:
            bad.append("bad-duplicate-other-arch")
        for k, kind in enumerate(bad):
            at = round(end_s * (k + 1) / (len(bad) + 1), 3) + 0.25
            if self.bad_lines:
                push(at, kind, None)
            if kind in ("bad-time", "bad-job"):
                retry = copy.deepcopy(jobs[0][1])
                retry["id"] = 9002 if kind == "bad-time" else 9003
                push(at + 1.0, "submit", retry)
        restart_after = [round(self.n_jobs * (k + 1) / (self.restarts + 1)) for k in range(self.restarts)]
        submitted, job_of, plan = 0, {}, {}
        admitted_ids, rejected_ids = [], []
        self.start()
        while heap:
            t, _, kind, payload = heapq.heappop(heap)
            if kind == "submit":
                j = payload
                self.now = t
                reply = self.send(kind, {"event": "submit", "time_s": t, "job": j})
                check(reply.get("job") == j["id"] and "admitted" in reply,
                      f"{self.name}: submit {j['id']} answered {reply!r}")
                check("certificate" in reply, f"{self.name}: a decision without its snapshot: {reply!r}")
                job_of[j["id"]] = j
                if reply["admitted"]:
                    segs = reply["segments"]
                    check(segs and "rejection" not in reply, f"{self.name}: admitted {reply!r}")
                    self.count["admitted"] += 1
                    admitted_ids.append(j)
                    self.hold_segments(j, segs, j["id"])
                    start = min(s["slots"]["start"] for s in segs)
                    end = max(s["slots"]["end"] for s in segs)
                    check(start >= slot_at(t), f"{self.name}: job {j['id']} starts at slot {start} before its submission {t}")
                    check(end <= slot_at(t) + WINDOW,
                          f"{self.name}: job {j['id']} submitted at {t} s ends at slot {end}, past the window")
                    length = (end - start) * SLOT_S
                    # It runs from its submission at the earliest (a head
                    # start begins inside the slot in progress).
                    begin = max(t, start * SLOT_S)
                    actual_end = begin + length * rng.uniform(0.7, 1.3)
                    plan[j["id"]] = end
                    if rng.random() < 0.1:
                        stop = begin + rng.uniform(0.1, 0.9) * (min(actual_end, end * SLOT_S) - begin)
                        push(round(stop, 3), "cancel", (j["id"], None))
                    elif actual_end < end * SLOT_S:
                        stop = round(actual_end, 3)
                        if rng.random() < 0.2 and math.floor(actual_end / SLOT_S) > start:
                            # On a slot boundary, or within the state's
                            # tolerance after it: frees from that boundary.
                            stop = math.floor(actual_end / SLOT_S) * SLOT_S + rng.choice([0.0, 1e-8])
                        push(stop, "finish", (j["id"], None))
                    else:
                        push(end * SLOT_S, "extend", (j["id"], actual_end))
                else:
                    check(not reply["segments"] and "rejection" in reply
                          and {"kind", "reason"} <= set(reply["rejection"]),
                          f"{self.name}: rejected {reply!r}")
                    self.count["rejected"] += 1
                    rejected_ids.append(j)
                submitted += 1
                if restart_after and submitted == restart_after[0]:
                    restart_after.pop(0)
                    self.restart()
            elif kind in ("finish", "cancel"):
                job, _ = payload
                self.now = t
                reply = self.send(kind, {"event": kind, "time_s": t, "job": job})
                want = "finished" if kind == "finish" else "cancelled"
                check(reply.get("ok") is True and reply.get("event") == kind and reply.get("job") == job
                      and reply.get("released") is True and str(reply.get("status", "")).lower() == want,
                      f"{self.name}: {kind} {job} answered {reply!r}")
                self.ledger.release(job, slot_from(t))
            elif kind == "extend":
                job, actual_end = payload
                self.now = t
                more = round(actual_end - t, 3)
                if more <= 0:
                    push(t, "finish", (job, None))
                    continue
                reply = self.send(kind, {"event": "extend", "time_s": t, "job": job, "more_s": more})
                check(reply.get("ok") is True and reply.get("event") == "extend" and reply.get("job") == job
                      and "certificate" in reply,
                      f"{self.name}: extend {job} answered {reply!r}")
                if reply.get("extended"):
                    segs = reply["segments"]
                    check(len(segs) == 1 and segs[0]["slots"]["start"] == max(plan[job], slot_from(t)),
                          f"{self.name}: extend {job} (plan end {plan[job]}) answered {reply!r}")
                    self.count["extended"] += 1
                    self.hold_segments(job_of[job], segs, job)
                    plan[job] = segs[0]["slots"]["end"]
                    if actual_end <= plan[job] * SLOT_S:
                        push(round(actual_end, 3), "finish", (job, None))
                    else:
                        push(plan[job] * SLOT_S, "extend", (job, actual_end))
                else:
                    check(reply.get("extended") is False and isinstance(reply.get("preempted"), str),
                          f"{self.name}: extend {job} answered {reply!r}")
                    self.count["preempted"] += 1
            elif kind == "usage":
                # On a machine where the ledger shows 2 GPU ids free over the
                # whole range (the state holds the same ids throughout).
                lo, hi = slot_at(self.now), slot_from(self.now + 1200.0)
                machines = sorted(self.ledger.capacity)
                free = [m for m in machines if self.ledger.free_ids(m, lo, hi) >= 2]
                if not free:
                    continue
                m = free[payload % len(free)]
                ev = {"event": "usage", "machine": m, "from_s": self.now, "to_s": self.now + 1200.0,
                      "resources": {"gpus": 2.0, "cpu_cores": 2.0, "memory_bytes": 0.0, "nic_bps": 0.0}}
                reply = self.send(kind, ev)
                check(reply.get("ok") is True and reply.get("event") == "usage" and reply.get("machine") == m
                      and isinstance(reply.get("held"), list),
                      f"{self.name}: usage answered {reply!r}")
                for h in reply["held"]:
                    got = [g["index"] for g in h["gpus"] if g["machine"] == m]
                    check(len(got) == len(h["gpus"]), f"{self.name}: usage of {m} holds GPUs elsewhere: {reply!r}")
                    check(len(got) == 2, f"{self.name}: usage of 2 GPUs holds {got}: {reply!r}")
                    self.ledger.hold(f"usage {reply['usage']}", m,
                                     (h["slots"]["start"], h["slots"]["end"]), got, 2.0)
            elif kind == "certificate":
                reply = self.send(kind, {"event": "certificate"})
                certs = reply.get("certificates")
                check(reply.get("ok") is True and reply.get("event") == "certificate"
                      and isinstance(certs, list) and len(certs) == len(self.kinds),
                      f"{self.name}: certificate answered {reply_text_short(reply)}")
            else:
                self.send(kind, None, raw=self.bad_line(kind, admitted_ids, rejected_ids))
            if self.ledger.problems:
                raise Failure(f"{self.name}: {self.ledger.problems[0]} (after {self.transcript[-1][1][:200]})")
        self.proc.close()
        check(self.count["events"] == self.count["replies"], f"{self.name}: events and replies differ")
        check(self.count["admitted"] > 0, f"{self.name}: no job admitted")
        check(self.restarted == self.restarts, f"{self.name}: {self.restarted} restarts")

    def bad_line(self, kind, admitted, rejected):
        """A line the session must refuse, leaving its state unchanged."""
        ps = copy.deepcopy(next(j for j in self.past if "parameter_server" in j["architecture"]))
        ps.pop("arrival_s", None)
        a = ps["architecture"]["parameter_server"]
        t = self.now
        submit = lambda job, at=t: json.dumps({"event": "submit", "time_s": at, "job": job})
        if kind == "bad-json":
            return '{"event": "submit", "time_s": ' + str(t) + ', "job": {"id": 9001,'
        if kind == "bad-event":
            return json.dumps({"event": "migrate", "time_s": t, "job": admitted[-1]["id"]})
        if kind == "bad-finish":  # a job never submitted
            return json.dumps({"event": "finish", "time_s": t, "job": 9999})
        if kind == "bad-time":  # before the session's time
            ps["id"] = 9002
            return submit(ps, t - 100.0)
        if kind == "bad-job":  # fails validation: more PS than workers allowed
            ps["id"] = 9003
            a["max_workers"], a["max_ps"] = 2, 4
            return submit(ps)
        if kind == "bad-job-negative":
            ps["id"] = 9004
            a["minibatch_compute_s"] = -0.4
            if "ring_all_reduce" in self.kinds:
                rar = copy.deepcopy(next(j for j in self.past if "ring_all_reduce" in j["architecture"]))
                rar.pop("arrival_s", None)
                rar["id"] = 9004
                rar["architecture"]["ring_all_reduce"]["iterations"] = -5
                return submit(rar)
            return submit(ps)
        if kind == "bad-duplicate":  # an admitted job again
            return submit(admitted[-1])
        if kind == "bad-duplicate-rejected":  # a rejected job again
            return submit(rejected[-1] if rejected else admitted[0])
        if kind == "bad-duplicate-other-arch":
            # The id of a rejected job (admitted when none was) on a job of
            # the other architecture, which another session decides.
            first = rejected[-1] if rejected else admitted[-1]
            other = next(k for k in self.kinds if k not in first["architecture"])
            job = copy.deepcopy(next(j for j in self.past if other in j["architecture"]))
            job.pop("arrival_s", None)
            job["id"] = first["id"]
            return submit(job)
        if kind == "bad-field":  # a string where a count belongs
            ps["id"] = 9005
            a["epochs"] = "three"
            return submit(ps)
        if kind == "bad-usage":  # a machine the cluster lacks
            return json.dumps({"event": "usage", "machine": 99, "from_s": t, "to_s": t + 600.0,
                               "resources": {"gpus": 1.0, "cpu_cores": 1.0, "memory_bytes": 0.0, "nic_bps": 0.0}})
        if kind == "bad-extend":  # no extra time
            return json.dumps({"event": "extend", "time_s": t, "job": admitted[-1]["id"], "more_s": -60.0})
        if kind == "bad-finish-backwards":  # a finish before the session's time
            return json.dumps({"event": "finish", "time_s": t - 100.0, "job": admitted[-1]["id"]})
        raise AssertionError(kind)

    def summary(self):
        c = self.count
        return (f"{self.name}: events {c['events']}, replies {c['replies']}, admitted {c['admitted']}, "
                f"rejected {c['rejected']}, errors {c['errors']}, extended {c['extended']}, "
                f"preempted {c['preempted']}, over-commitments {self.ledger.over}, restarts {self.restarted}")


def reply_text_short(reply):
    return json.dumps(reply)[:300]


def same_replies(a, b, what, skip_bad_in_a=False):
    """`a`'s and `b`'s reply lines are identical (the bad lines of `a`
    left out when `b` ran without them)."""
    ta = [x for x in a.transcript if not (skip_bad_in_a and x[0].startswith("bad"))]
    tb = b.transcript
    for k, (x, y) in enumerate(zip(ta, tb)):
        check(x[1] == y[1], f"{what}: event {k} differs: {x[1][:200]!r} vs {y[1][:200]!r}")
        check(x[2] == y[2], f"{what}: the reply to event {k} ({x[1][:200]}) differs:\n  {x[2][:400]}\n  {y[2][:400]}")
    check(len(ta) == len(tb), f"{what}: {len(ta)} vs {len(tb)} events")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    began = time.monotonic()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        params = os.path.join(tmp, "params-oasis.json")
        with open(params, "w") as f:
            json.dump({"shared_machines": True}, f)
        # OASiS derives its price bounds from utilities still positive at
        # the window's end, and plans whole data chunks per slot: the
        # example's parameter-server jobs with a utility that decays more
        # slowly and chunks a worker trains within a slot.
        oasis_past = os.path.join(tmp, "past-oasis.json")
        with open(oasis_past, "w") as f:
            ps = [j for j in json.load(open(f"{DATA}/past.json")) if "parameter_server" in j["architecture"]]
            for j in ps:
                j["utility"] = {"kind": "linear", "g1": 200.0, "slope": 0.5}
                # Two workers train a whole data chunk within a slot (OASiS's
                # unit of work; with 200 minibatches a chunk most jobs were
                # refused as too slow for the slot).
                j["architecture"]["parameter_server"]["minibatches_per_chunk"] = 50
            json.dump(ps, f)
        both = ["parameter_server", "ring_all_reduce"]
        mixed = "ps=locality,rar=gadget"
        runs = [
            ("restarted", Run("ps=locality,rar=gadget", binary, mixed, both, 150, 2, True, tmp)),
            ("straight", Run("uninterrupted", binary, mixed, both, 150, 0, True, tmp)),
            ("clean", Run("no bad lines", binary, mixed, both, 150, 0, False, tmp)),
            ("oasis", Run("oasis", binary, "oasis", ["parameter_server"], 60, 2, True, tmp, params, oasis_past)),
            ("oasis-straight", Run("oasis uninterrupted", binary, "oasis", ["parameter_server"], 60, 0, True, tmp, params, oasis_past)),
        ]
        done = {}
        for key, r in runs:
            t0 = time.monotonic()
            try:
                r.run()
            except Failure as e:
                ok = False
                print(f"FAILED {r.name}: {e}", file=sys.stderr)
                try:
                    r.proc.p.kill()
                except Exception:
                    pass
                continue
            done[key] = r
            print(f"{r.summary()} ({time.monotonic() - t0:.1f} s)")
        comparisons = [
            ("restarted", "straight", False, "restarts from --state vs an uninterrupted process"),
            ("straight", "clean", True, "bad lines vs none (they must change nothing)"),
            ("oasis", "oasis-straight", False, "oasis: restarts vs an uninterrupted process"),
        ]
        for a, b, skip, what in comparisons:
            if a in done and b in done:
                try:
                    same_replies(done[a], done[b], what, skip_bad_in_a=skip)
                    print(f"identical replies: {what}")
                except Failure as e:
                    ok = False
                    print(f"FAILED {e}", file=sys.stderr)
    print(f"session client: {'ok' if ok else 'FAILED'} in {time.monotonic() - began:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
