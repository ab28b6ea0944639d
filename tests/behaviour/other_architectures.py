#!/usr/bin/env python3
"""Every GPU: the default matrix on the simulated driver at another compute capability gets the
verdict it gets at 9.0.

Usage:
  other_architectures.py MATRIX --cc 8.0 --reference DIR --bin DIR --out DIR
  other_architectures.py MATRIX --cc 7.0 --expect-refused --bin DIR --out DIR

The first runs MATRIX with CUPARITY_SIM_COMPUTE_CAPABILITY=CC and judges it against the 9.0 run in
DIR (behaviour_default_sim's output) with `cuparity compare`: not regressed, complete, every
(cell, case) pair's outcome unchanged, the same verdict; observations may differ only where they
report the architecture (the compute capability, a function's binary and PTX versions). The sim
refuses images built for another architecture (CUDA_ERROR_NO_BINARY_FOR_GPU), so the cases that
load basic.cubin, .ptx and .fatbin pass only if they loaded the image for the device's SM.

The second is the negative control: at a compute capability older than every architecture the
toolkit builds, the cubin cases fail, naming the architecture no image runs on.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# The observations that report the device's architecture: they differ between architectures.
ARCHITECTURE_KEYS = {"observations.compute_capability", "observations.binary_version",
                     "observations.ptx_version"}
CUBIN_CASE = "launch.module.cubin"


def run_matrix(args, extra: list[str]) -> dict:
    env = dict(os.environ, CUPARITY_SIM_COMPUTE_CAPABILITY=args.cc)
    cmd = [os.path.join(args.bin, "cuparity"), "--driver", "sim", "run", args.matrix, "-j", "2",
           "--force", "--out", args.out, *extra]
    rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, timeout=800).returncode
    print(f"CUPARITY_SIM_COMPUTE_CAPABILITY={args.cc} {' '.join(cmd)}: exit {rc}")
    with open(os.path.join(args.out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def same_verdict(args) -> list[str]:
    run = run_matrix(args, [])
    with open(os.path.join(args.reference, "summary.json"), encoding="utf-8") as f:
        reference = json.load(f)
    cmd = [os.path.join(args.bin, "cuparity"), "compare", args.reference, args.out, "--json", "-"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    problems = []
    if done.returncode != 0:
        problems.append(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    counts = report.get("counts", {})
    changed = {k: v for k, v in counts.items() if k != "unchanged" and v}
    if changed or counts.get("unchanged") != len(reference["results"]):
        problems.append(f"outcomes at {args.cc} vs 9.0: {counts}")
    for o in report.get("outcomes", [])[:10]:
        problems.append(f"  {o['cell']} {o['case']}: {o['outcome_a']} -> {o['outcome_b']}: "
                        f"{o.get('message_b')}")
    if run["verdict"] != reference["verdict"] or run["exit_code"] != reference["exit_code"]:
        problems.append(f"verdict at {args.cc}: {run['verdict']} (exit {run['exit_code']}); "
                        f"at 9.0: {reference['verdict']} (exit {reference['exit_code']})")
    other = sorted({o["key"] for o in report.get("observations", [])} - ARCHITECTURE_KEYS)
    if other:
        problems.append(f"observations that differ from 9.0 beyond the architecture: {other}")
    print(f"{len(reference['results'])} pairs, counts {counts}, verdict {run['verdict']}")
    return problems


def refused(args) -> list[str]:
    run = run_matrix(args, ["--case", CUBIN_CASE])
    results = [r for r in run["results"] if r["case"] == CUBIN_CASE]
    wanted = f"none runs on sm_{args.cc.replace('.', '')}"
    problems = [f"{r['cell']}: {r['outcome']}: {r.get('message')}" for r in results
                if r["outcome"] == "pass" or wanted not in (r.get("message") or "")]
    if not results:
        problems.append(f"no result of {CUBIN_CASE}")
    print(f"{len(results)} results of {CUBIN_CASE} at {args.cc}, each failing with '{wanted}'")
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("matrix")
    p.add_argument("--cc", required=True, help="CUPARITY_SIM_COMPUTE_CAPABILITY, e.g. 8.0")
    p.add_argument("--reference", help="the 9.0 run's output folder")
    p.add_argument("--expect-refused", action="store_true")
    p.add_argument("--bin", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if not a.expect_refused and not a.reference:
        p.error("--reference is required unless --expect-refused")
    problems = refused(a) if a.expect_refused else same_verdict(a)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
