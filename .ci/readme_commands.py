#!/usr/bin/env python3
"""Runs every command of the README's shell blocks, as a reader would.

Usage: readme_commands.py README.md ROOT

Each ```sh block's lines are commands (a trailing backslash continues a
line; `#` after two spaces starts a comment). `cargo install` installs into
ROOT (sharing the workspace's target folder, so nothing is rebuilt), and
every later command runs with ROOT/bin first on PATH, so `dmlsched` is the
installed tool. Four commands are covered by other CI steps and skipped:
the system packages (the toolchain step), `cargo test` (the test steps), the
quickstart and the event-loop example (their own steps).
Exits 1 when a command fails, after running the others.
"""
import os
import re
import subprocess
import sys
import time

SKIP = {
    "apt-get": "the toolchain step installs the system packages",
    "cargo test": "the test steps run the suite",
    "pip install ./python": "the Python step runs it in a fresh virtual environment",
    "cargo run --release --example quickstart":
        "the quickstart step runs it, in the release build CI shares (--features cli)",
    "cargo run --release --example event_loop":
        "the event_loop step runs it, in the release build CI shares (--features cli)",
}


def commands(text):
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", "", block)
        for line in joined.splitlines():
            line = re.split(r"\s{2,}#", line)[0].strip()
            if line and not line.startswith("#"):
                yield line


def main():
    readme, root = sys.argv[1], os.path.abspath(sys.argv[2])
    env = dict(os.environ)
    env["PATH"] = os.path.join(root, "bin") + os.pathsep + env["PATH"]
    env["CARGO_TARGET_DIR"] = os.path.abspath("target")
    failed = []
    with open(readme, encoding="utf-8") as f:
        cmds = list(commands(f.read()))
    for cmd in cmds:
        reason = next((r for p, r in SKIP.items() if cmd.startswith(p)), None)
        if reason:
            print(f"skip: {cmd}  ({reason})")
            continue
        if cmd.startswith("cargo install"):
            cmd = f"{cmd} --root {root} --quiet"
        started = time.time()
        rc = subprocess.run(["bash", "-c", cmd], env=env, stdout=subprocess.DEVNULL).returncode
        print(f"exit {rc} in {time.time() - started:.1f} s: {cmd}", flush=True)
        if rc != 0:
            failed.append(cmd)
    print(f"{len(cmds)} README commands, {len(failed)} failed")
    for cmd in failed:
        print(f"failed: {cmd}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
