#!/usr/bin/env python3
"""A cell stuck at its start does not get a healthy cell's exclusive cases killed.

Two cells on the simulated driver, one whose cuInit takes 6 s. That cell holds the GPU lock
shared through its start, so the healthy cell's exclusive case (alloc.info.drop) waits for it.
With the runner's between-cases clock at 2 s (CUPARITY_BETWEEN_CASES_TIMEOUT_S), a runner that
counted that wait killed the healthy cell and recorded its case as error; the wait must not count
(the cell says lock_wait), so both cells pass. Usage: lock_fairness.py --bin BUILD/bin --out DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

MATRIX = """[matrix]
name = "lock-fairness"
description = "one cell slow to start; the other's exclusive case waits for it"
cases = ["alloc.copy.dtod", "alloc.info.drop"]
[axes]
CUPARITY_SIM_FAULTS = ["", "cuInit:delay_ns=6000000000"]
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    work = Path(a.out)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "m.toml").write_text(MATRIX)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "CUPARITY_"))}
    env["CUPARITY_BETWEEN_CASES_TIMEOUT_S"] = "2"
    p = subprocess.run([str(Path(a.bin).resolve() / "cuparity"), "--driver", "sim", "run",
                        "m.toml", "--out", "run", "-j", "2", "--no-latency"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    cases = [json.loads(l) for l in (work / "run" / "results.jsonl").read_text().splitlines()
             if '"type":"case"' in l]
    bad = [f"{c['cell']} {c['case']}: {c['outcome']}: {c['message'][:200]}" for c in cases
           if c["outcome"] != "pass"]
    print(f"exit {p.returncode}, {len(cases)} results, {len(bad)} not passing")
    for b in bad:
        print("FAIL " + b)
    if p.returncode != 0 or len(cases) != 4 or bad:
        print(p.stdout[-1500:] + p.stderr[-800:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
