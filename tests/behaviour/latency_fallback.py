#!/usr/bin/env python3
"""Latency runs whose other backend cannot be opened write a summary that --resume and merge read.

The paired probe records why the other series is missing (`other_missing`). On the legacy
simulated driver (no cuGetProcAddress: the nvidia backend falls back) and with
CUPARITY_NVIDIA_BACKEND pointing nowhere, that record once broke the record schema: the run ended
without a summary and could be neither resumed nor merged. Also `calibrate` on the legacy driver.
Usage: latency_fallback.py --bin BUILD/bin --out DIR; exit 1 naming what failed.
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
name = "latency-fallback"
description = "paired latency where the other backend cannot be opened"
cases = ["binding.config.effective"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
[latency]
probes = ["ctx.get_current"]
rounds = 1
max_rounds = 1
min_time_s = 0.01
"""


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    bin_dir = Path(a.bin).resolve()
    work = Path(a.out)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "m.toml").write_text(MATRIX)
    cuparity = str(bin_dir / "cuparity")
    legacy = str(bin_dir / "libcuparity_simdriver_legacy.so")
    sim = str(bin_dir / "libcuparity_simdriver.so")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "CUDA_", "CUPARITY_"))}
    setups = {
        "legacy-driver": (legacy, base),
        "backend-nowhere": (sim, {**base, "CUPARITY_NVIDIA_BACKEND": str(work / "nowhere.so")}),
    }
    failures = []
    for name, (driver, env) in setups.items():
        out = f"run-{name}"
        first = run([cuparity, "--driver", driver, "run", "m.toml", "--out", out], env, work)
        summary = work / out / "summary.json"
        if first.returncode not in (0, 1) or not summary.exists():
            failures.append(f"{name}: run exit {first.returncode}, summary "
                            f"{'written' if summary.exists() else 'missing'}: {first.stderr[-400:]}")
            continue
        pairs = [json.loads(l) for l in (work / out / "results.jsonl").read_text().splitlines()
                 if '"latency_pairs"' in l]
        if not any(isinstance(p.get("other_missing"), str) and p["other_missing"] for p in pairs):
            failures.append(f"{name}: no latency_pairs record says why the other series is missing")
        again = run([cuparity, "--driver", driver, "run", "m.toml", "--out", out, "--resume"],
                    env, work)
        merged = run([cuparity, "merge", "m.toml", out, "--out", f"merged-{name}"], env, work)
        for what, p in (("--resume", again), ("merge", merged)):
            if p.returncode not in (0, 1):
                failures.append(f"{name}: {what} exit {p.returncode}: {p.stderr[-400:]}")
        print(f"{name}: run exit {first.returncode}, --resume exit {again.returncode}, "
              f"merge exit {merged.returncode}")
    cal = run([cuparity, "--driver", legacy, "calibrate", "--out", "cal", "--target", legacy,
               "--min-time", "0.01", "--rounds", "1"], base, work)
    print(f"calibrate on the legacy driver: exit {cal.returncode}")
    if cal.returncode not in (0, 1) or not (work / "cal" / "calibrate.json").exists():
        failures.append(f"calibrate on the legacy driver: exit {cal.returncode}: "
                        f"{cal.stderr[-400:]}")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
