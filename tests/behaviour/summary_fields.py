#!/usr/bin/env python3
"""Behaviour check: a run's summary.json against a committed one, field by field, provenance aside.

Usage:
  summary_fields.py normalise SUMMARY --bin DIR --source DIR > FIXTURE
  summary_fields.py check SUMMARY FIXTURE --bin DIR --source DIR
  summary_fields.py run MATRIX FIXTURE --bin DIR --source DIR --out DIR   (runs cuparity first)

What a run cannot reproduce is removed before the comparison: provenance (with the host's name
and id and the driver's release), clock times and durations. Paths of the build and source folders
become {bin} and {source}, so a fixture made in one clone checks a run in another. The matrix's
digest becomes "sha256:{matrix file}" when it is the SHA-256 of the matrix file as it is now (so
editing a comment in the matrix does not change the fixture, and a wrong digest still shows).
Every other field must be equal; the first 20 differences are printed with their JSON path, and
the exit code is 1 when there is any.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from typing import Any

VOLATILE_TOP = {"provenance", "started", "finished", "functional_wall_s", "breakdown"}
VOLATILE_ANYWHERE = {"duration_ms", "startup_ms"}


def scrub(value: Any, paths: list[tuple[str, str]]) -> Any:
    if isinstance(value, dict):
        return {k: scrub(v, paths) for k, v in sorted(value.items()) if k not in VOLATILE_ANYWHERE}
    if isinstance(value, list):
        return [scrub(v, paths) for v in value]
    if isinstance(value, str):
        for real, marker in paths:
            value = value.replace(real, marker)
        return value
    return value


def matrix_digest_marker(digest: Any, path: Any, source_dir: str) -> Any:
    """The marker for a digest that is the matrix file's own; any other value as it is."""
    if not isinstance(digest, str) or not isinstance(path, str) or not path:
        return digest
    # The path as the user typed it: relative to where the run started, here or the source.
    for candidate in [path] if os.path.isabs(path) else [path, os.path.join(source_dir, path)]:
        try:
            with open(candidate, "rb") as f:
                if digest == "sha256:" + hashlib.sha256(f.read()).hexdigest():
                    return "sha256:{matrix file}"
        except OSError:
            continue
    return digest


def normalise(summary: dict, bin_dir: str, source_dir: str) -> dict:
    paths = sorted([(bin_dir.rstrip("/"), "{bin}"), (source_dir.rstrip("/"), "{source}")],
                   key=lambda p: -len(p[0]))
    kept = {k: v for k, v in summary.items() if k not in VOLATILE_TOP}
    if isinstance(kept.get("matrix"), dict) and "path" in kept["matrix"]:
        matrix = kept["matrix"]
        if "digest" in matrix:
            matrix = dict(matrix, digest=matrix_digest_marker(matrix["digest"], matrix["path"],
                                                              source_dir))
        # The path as the user typed it (relative or absolute): only its file name is behaviour.
        kept["matrix"] = dict(matrix, path=os.path.basename(matrix["path"]))
    return scrub(kept, paths)


def differences(a: Any, b: Any, where: str = "$") -> list[str]:
    if type(a) is not type(b):
        return [f"{where}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'run' if k in a else 'fixture'}")
            else:
                out += differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list):
        out = [] if len(a) == len(b) else [f"{where}: {len(a)} items != {len(b)}"]
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{where}[{i}]")
        return out
    return [] if a == b else [f"{where}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["normalise", "check", "run"])
    p.add_argument("summary", help="summary.json (run: the matrix to run)")
    p.add_argument("fixture", nargs="?")
    p.add_argument("--bin", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--out", help="run: the output folder (replaced)")
    a = p.parse_args()
    if a.mode == "run":
        if not a.out:
            p.error("run needs --out")
        cmd = [os.path.join(a.bin, "cuparity"), "--driver", "sim", "run", a.summary, "-j", "2",
               "--force", "--out", a.out]
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, timeout=600).returncode
        print(f"{' '.join(cmd)}: exit {rc}")
        a.summary = os.path.join(a.out, "summary.json")
    with open(a.summary, encoding="utf-8") as f:
        run = normalise(json.load(f), a.bin, a.source)
    if a.mode == "normalise":
        json.dump(run, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    if not a.fixture:
        p.error("check needs FIXTURE")
    with open(a.fixture, encoding="utf-8") as f:
        fixture = json.load(f)
    diffs = differences(run, fixture)
    for d in diffs[:20]:
        print(d)
    print(f"{a.summary} vs {a.fixture}: {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
