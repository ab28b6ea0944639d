"""What the Python probe's own loop costs per operation, against a bare perf_counter_ns loop.

A benchmark that prints figures, not a timed test (docs/latency.md#the-python-path). Three ways
of timing N iterations, interleaved over --pairs repetitions (the order alternating, so drift
weighs on all alike), each figure the median per-iteration ns:
  bare      for _ in repeat(None, N): pass, timed with perf_counter_ns around it
  op        cuparity_pyprobe.timed_loop around a no-op op: the loop plus one Python call, what
            every series of every probe pays on top of its driver call
  schedule  cuparity_pyprobe.run_blocks with three no-op series (blocks grown to --block-time,
            triples in the Williams order): the per-call value a probe would report for a call
            that costs nothing
The probe's overhead per operation is `op - bare` (and `schedule - bare` with the block
bookkeeping spread over the block). Subtract it, or compare with it, when reading a py.* figure
as the binding's own cost. Standard library only; no driver is opened.
Usage: python3 tools/pyprobe/pyprobe_overhead.py [--iterations N] [--pairs K] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from itertools import repeat

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuparity_pyprobe as probe  # noqa: E402


def bare(n: int) -> float:
    clock = time.perf_counter_ns
    t0 = clock()
    for _ in repeat(None, n):
        pass
    return (clock() - t0) / n


def noop() -> None:
    pass


def op(n: int) -> float:
    return probe.timed_loop(noop, n) / n


def schedule(block_s: float, budget_s: float) -> float:
    blocks = {s: (lambda k: probe.timed_loop(noop, k)) for s in probe.SERIES}
    times, iterations = probe.run_blocks(blocks, block_s, budget_s, False)
    return statistics.median(t / iterations for t in times["direct"])


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=200_000)
    ap.add_argument("--pairs", type=int, default=21)
    ap.add_argument("--block-time", type=float, default=2.5e-4)
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args(argv)
    if a.iterations < 1 or a.pairs < 1:
        print("pyprobe_overhead: --iterations and --pairs must be at least 1", file=sys.stderr)
        return 2
    runs = {"bare": [], "op": [], "schedule": []}
    for i in range(a.pairs):
        order = ["bare", "op", "schedule"]
        for kind in (order if i % 2 == 0 else order[::-1]):
            if kind == "bare":
                runs[kind].append(bare(a.iterations))
            elif kind == "op":
                runs[kind].append(op(a.iterations))
            else:
                runs[kind].append(schedule(a.block_time, 0.02))
    med = {k: statistics.median(v) for k, v in runs.items()}
    result = {
        "python": sys.version.split()[0],
        "iterations": a.iterations,
        "pairs": a.pairs,
        "ns_per_iteration": med,
        "overhead_ns": {"op": med["op"] - med["bare"], "schedule": med["schedule"] - med["bare"]},
    }
    print(f"Python {result['python']}, {a.iterations} iterations, {a.pairs} repetitions "
          "(median ns per iteration):")
    for k, v in med.items():
        print(f"  {k:9s} {v:8.2f}")
    print(f"  the probe's own cost per operation: {result['overhead_ns']['op']:.2f} ns (loop and "
          f"call), {result['overhead_ns']['schedule']:.2f} ns in its block schedule")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
