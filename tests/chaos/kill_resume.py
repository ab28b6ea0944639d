#!/usr/bin/env python3
"""Chaos check: runs of a matrix on the simulated driver, killed at random moments, resumed.

Usage:
  kill_resume.py --bin DIR --source DIR --out DIR [--runs N] [--kills K] [--seed S] [--jobs J]
                 [--matrix TOML] [--reference FIXTURE|run] [--window F]

Each of N runs (default 20, or $CUPARITY_CHAOS_RUNS) starts `cuparity --driver sim run MATRIX`
and, after a random delay (seeded: --seed or $CUPARITY_CHAOS_SEED; one in five within the first
second, the others within the first F of the matrix's uninterrupted wall time), stops it one of
four ways: SIGKILL of the runner alone (as the OOM killer would), or SIGKILL, SIGTERM or SIGINT of
its whole process group (as a terminal's Ctrl-C would; cells live in process groups of their own,
so the group is the runner). With --kills K the next K-1 `--resume`s are stopped the same way.
Then `--resume` until the run completes. After every kill and after the completion:
- no process of that run is alive a second later (every process of a run carries a marker
  variable in its environment: the runner's, inherited by its cells, helpers and probes);
- a SIGINT or SIGTERM that reached a running phase ended the runner with 130 or 143;
- results.jsonl holds each (cell, case) pair at most once (exactly once at the end);
- the summary equals one uninterrupted run's, field by field, once provenance, clock times and
  durations are removed (tests/behaviour/summary_fields.py decides what varies);
- /dev/shm holds no object of the run's cell processes (killed ones are swept by the simulated
  driver at the next cuInit and at the exit of every simulated process:
  tests/simdriver/src/shm_names.cpp).

The reference is the committed fixture of the default matrix (tests/behaviour/default-sim.summary
.json) unless --reference run asks for one uninterrupted run first (or names another fixture).
Exit code 0 when every run passed every check, 1 otherwise; every failure is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "behaviour"))
import summary_fields  # noqa: E402  (tests/behaviour, for the same normalisation)

MARKER = "CUPARITY_TEST_RUN_MARKER"  # tests/unit/run_processes.hpp uses the same name
WAYS = ["runner-SIGKILL", "group-SIGKILL", "group-SIGTERM", "group-SIGINT"]
STOPPED = {"SIGTERM": 143, "SIGINT": 130}


def marked(marker: str) -> list[int]:
    """Live processes whose environment holds MARKER=marker (zombies have an empty environ)."""
    wanted = f"{MARKER}={marker}".encode()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if wanted in f.read().split(b"\0"):
                    pids.append(int(name))
        except OSError:
            pass  # gone meanwhile, or not ours
    return pids


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def survivors(marker: str, limit_s: float = 1.0) -> list[str]:
    deadline = time.monotonic() + limit_s
    while True:
        left = marked(marker)
        if not left or time.monotonic() >= deadline:
            return [f"{p}: {command_line(p)}" for p in left]
        time.sleep(0.02)


def kill_all(marker: str) -> None:
    for pid in marked(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def records(path: str) -> list[dict]:
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a cut-off last line: what readers skip
    return out


def duplicate_pairs(results_path: str) -> list[tuple[str, str]]:
    seen, dups = set(), []
    for r in records(results_path):
        if r.get("type") == "case":
            key = (r.get("cell"), r.get("case"))
            if key in seen:
                dups.append(key)
            seen.add(key)
    return dups


def shm_objects_of(pids: set[int]) -> list[str]:
    out = []
    for name in os.listdir("/dev/shm"):
        for prefix in ("cuparity-sim.", "cuparity-sim-ev."):
            if name.startswith(prefix):
                pid = name[len(prefix):].split(".", 1)[0]
                if pid.isdigit() and int(pid) in pids:
                    out.append(name)
    return out


class chaos:
    def __init__(self, a: argparse.Namespace):
        self.a = a
        self.exe = os.path.join(a.bin, "cuparity")
        self.env = dict(os.environ)
        self.failures: list[str] = []

    def command(self, out: str, resume: bool) -> list[str]:
        return [self.exe, "--driver", "sim", "run", self.a.matrix, "-j", str(self.a.jobs), "--out",
                out, "--resume" if resume else "--force"]

    def start(self, out: str, marker: str, resume: bool) -> subprocess.Popen:
        env = dict(self.env, **{MARKER: marker})
        with open(out + ".runner.log", "ab") as log:
            # A session (and so a process group) of its own: the group kill reaches the runner
            # and nothing of this script.
            return subprocess.Popen(self.command(out, resume), env=env, stdout=log, stderr=log,
                                    start_new_session=True)

    def fail(self, run: str, message: str) -> None:
        self.failures.append(f"{run}: {message}")
        print(f"  FAIL {message}", flush=True)

    def reference(self) -> tuple[dict, float]:
        """The normalised summary of one uninterrupted run, and that run's wall time."""
        if self.a.reference != "run":
            with open(self.a.reference, encoding="utf-8") as f:
                return json.load(f), self.a.reference_wall_s
        out = os.path.join(self.a.out, "reference")
        t0 = time.monotonic()
        p = self.start(out, f"chaos-reference-{os.getpid()}", resume=False)
        rc = p.wait(timeout=self.a.run_timeout_s)
        wall = time.monotonic() - t0
        print(f"reference run: exit {rc}, {wall:.1f} s", flush=True)
        return self.normalised(out), wall

    def normalised(self, out: str) -> dict:
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
            return summary_fields.normalise(json.load(f), self.a.bin, self.a.source)

    def stop(self, run: str, p: subprocess.Popen, way: str) -> None:
        target, name = way.split("-")
        sig = getattr(signal, name)
        try:
            if target == "group":
                os.killpg(p.pid, sig)
            else:
                os.kill(p.pid, sig)
        except ProcessLookupError:
            pass
        rc = p.wait(timeout=120)
        # A stop signal outside a running phase (the driver check, the verdict) finds the default
        # disposition: the runner dies of it, which is fine; inside a phase it must exit 130/143.
        allowed = {-sig, STOPPED.get(name, -sig)}
        if rc not in allowed:
            self.fail(run, f"{way}: runner exit {rc}, expected one of {sorted(allowed)}")
        print(f"  {way}: exit {rc}", flush=True)

    def one_run(self, i: int, rng: random.Random, window_s: float, expected: dict) -> None:
        """A fresh run killed --kills times (the first time as it runs, then each --resume),
        then resumed without interruption until it completes."""
        run = f"run {i}"
        out = os.path.join(self.a.out, f"run{i:03d}")
        marker = f"chaos-{self.a.seed}-{i}-{os.getpid()}"
        shutil.rmtree(out, ignore_errors=True)
        if os.path.exists(out + ".runner.log"):
            os.remove(out + ".runner.log")
        failures = len(self.failures)
        for k in range(self.a.kills):
            way = rng.choice(WAYS)
            # One kill in five lands in the first second (the driver check, the first cells'
            # start), the others anywhere in the window.
            delay = rng.uniform(0.05, 1.0 if rng.random() < 0.2 else max(1.0, window_s))
            print(f"{run}: {'start' if k == 0 else '--resume'}, {way} after {delay:.2f} s",
                  flush=True)
            p = self.start(out, marker, resume=k > 0)
            try:
                p.wait(timeout=delay)
                print(f"  finished before the kill (exit {p.returncode})", flush=True)
            except subprocess.TimeoutExpired:
                self.stop(run, p, way)
            left = survivors(marker)
            if left:
                self.fail(run, f"alive 1 s after the kill: {left}")
                kill_all(marker)
            results = os.path.join(out, "results.jsonl")
            dups = duplicate_pairs(results) if os.path.exists(results) else []
            if dups:
                self.fail(run, f"{len(dups)} duplicate pairs after the kill, e.g. {dups[:3]}")
        self.complete(run, out, marker, expected)
        if len(self.failures) == failures and not self.a.keep:
            shutil.rmtree(out, ignore_errors=True)  # kept only when something failed
            os.remove(out + ".runner.log")

    def complete(self, run: str, out: str, marker: str, expected: dict) -> None:
        for attempt in range(3):
            p = self.start(out, marker, resume=True)
            try:
                rc = p.wait(timeout=self.a.run_timeout_s)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
                self.fail(run, f"--resume did not finish within {self.a.run_timeout_s} s")
            if rc in (0, 1, 3) and os.path.exists(os.path.join(out, "summary.json")):
                if rc != expected.get("exit_code"):
                    self.fail(run, f"--resume: exit {rc}, the uninterrupted run's was "
                              f"{expected.get('exit_code')}")
                break
            self.fail(run, f"--resume attempt {attempt + 1}: exit {rc} (see {out}.runner.log)")
        else:
            return
        left = survivors(marker)
        if left:
            self.fail(run, f"alive 1 s after the resumed run: {left}")
            kill_all(marker)
        results = os.path.join(out, "results.jsonl")
        dups = duplicate_pairs(results)
        if dups:
            self.fail(run, f"{len(dups)} duplicate (cell, case) pairs, e.g. {dups[:3]}")
        diffs = summary_fields.differences(self.normalised(out), expected)
        if diffs:
            self.fail(run, f"{len(diffs)} differences from the uninterrupted run: {diffs[:5]}")
            for r in records(results):  # what went wrong, where: the kept folder may be gone (CI)
                if r.get("type") == "case" and r.get("outcome") not in ("pass", "not_supported"):
                    print(f"    {r.get('cell')} {r.get('case')}: {r.get('outcome')}: "
                          f"{str(r.get('message', ''))[:400]}", flush=True)
        # Every cell's binding map covers the whole entry table, resumed or not (a resumed cell
        # that mapped only the entries of the cases left made compare report changes).
        maps = {r.get("cell"): frozenset(b.get("entry") for b in r.get("map", []))
                for r in records(results) if r.get("type") == "binding_map"}
        if len(set(maps.values())) > 1:
            sizes = sorted({(len(v), c) for c, v in maps.items()})
            self.fail(run, f"binding maps cover different entries: {sizes[0]} vs {sizes[-1]}")
        pids = {r.get("pid", 0) for r in records(results) if r.get("type") in ("cell", "case")}
        leaked = shm_objects_of(pids)
        if leaked:
            self.fail(run, f"{len(leaked)} objects of its cells in /dev/shm, e.g. {leaked[:3]}")
        print(f"  resumed: exit {rc}, {len(diffs)} differences", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, help="the build's bin folder (cuparity, the sim)")
    p.add_argument("--source", required=True, help="the source tree (for the default paths)")
    p.add_argument("--out", required=True, help="scratch folder (replaced run by run)")
    p.add_argument("--matrix", help="default: SOURCE/matrices/default.toml")
    p.add_argument("--runs", type=int, default=int(os.environ.get("CUPARITY_CHAOS_RUNS", "20")))
    p.add_argument("--seed", type=int, default=int(os.environ.get("CUPARITY_CHAOS_SEED", "1")))
    p.add_argument("--kills", type=int, default=1,
                   help="kills per run: the first as it runs, the others in its --resume")
    p.add_argument("--jobs", type=int, default=2, help="-j of every run")
    p.add_argument("--reference", help="a normalised summary to compare with, or 'run' "
                   "(default: SOURCE/tests/behaviour/default-sim.summary.json)")
    p.add_argument("--reference-wall-s", type=float, default=60.0,
                   help="with a fixture as reference: the matrix's uninterrupted wall time")
    p.add_argument("--window", type=float, default=0.5,
                   help="kills fall in the first WINDOW of the uninterrupted wall time")
    p.add_argument("--run-timeout-s", type=float, default=600.0)
    p.add_argument("--keep", action="store_true", help="keep the folders of passing runs too")
    a = p.parse_args()
    # Absolute, as the summary's paths are, so that normalise() can replace them.
    a.bin, a.source, a.out = (os.path.abspath(x) for x in (a.bin, a.source, a.out))
    a.matrix = a.matrix or os.path.join(a.source, "matrices", "default.toml")
    a.reference = a.reference or os.path.join(a.source, "tests", "behaviour",
                                              "default-sim.summary.json")
    os.makedirs(a.out, exist_ok=True)
    c = chaos(a)
    t0 = time.monotonic()
    expected, wall = c.reference()
    rng = random.Random(a.seed)
    for i in range(a.runs):
        c.one_run(i, rng, a.window * wall, expected)
    total = time.monotonic() - t0
    print(f"{a.runs} runs x {a.kills} kills, seed {a.seed}, -j {a.jobs}: {len(c.failures)} "
          f"failures, {total:.0f} s")
    for f in c.failures:
        print(f"FAIL {f}")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
