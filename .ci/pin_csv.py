#!/usr/bin/env python3
"""Pins the rows of long-format CSV files (the OASiS reproduction's
fig3/5/6.csv) by a SHA-256 digest, leaving out the rows that depend on the
clock: wall-clock metrics (containing "seconds"), the rows of solvers that
stop at a time limit (Dorm's MILP; the offline optimum's `opt`,
`opt_upper`, `optimal`, `ratio`, `ratio_incumbent`, which the MIP's budget
decides).

Usage: pin_csv.py PINS FILE...   (DMLSCHED_UPDATE_PINS=1 rewrites PINS)
Exits 1 when a file's digest differs from its pin.
"""
import csv
import hashlib
import os
import sys

TIMED = {"opt", "opt_upper", "optimal", "ratio", "ratio_incumbent"}


def digest(path):
    h = hashlib.sha256()
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            metric = row.get("metric", "")
            if "seconds" in metric or metric in TIMED or row.get("policy") == "dorm":
                continue
            h.update("\x1f".join(row.values()).encode())
            h.update(b"\n")
    return h.hexdigest()[:16]


def main():
    pins, files = sys.argv[1], sys.argv[2:]
    got = {os.path.basename(f): digest(f) for f in files}
    if os.environ.get("DMLSCHED_UPDATE_PINS"):
        with open(pins, "w", encoding="utf-8") as f:
            f.writelines(f"{k} {v}\n" for k, v in sorted(got.items()))
        return
    with open(pins, encoding="utf-8") as f:
        want = dict(line.split() for line in f if line.strip())
    bad = [k for k in got if want.get(k) != got[k]]
    for k in bad:
        print(f"{k}: pinned {want.get(k, '-')}, now {got[k]}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"{len(got)} files match their pins")


if __name__ == "__main__":
    main()
