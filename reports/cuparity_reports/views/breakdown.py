"""Where the functional phase's time went: summary.json's `breakdown` as the runner summed it.

Everything shown is what the runner wrote (harness/report/breakdown.cpp): the parts of the cell
processes' time summed over every process, the summed time of each suite, the ten costliest cases
and the cell whose processes lived longest. The page only orders the suites (the runner writes them
by name) and says what share of the summed total each part is. Older summaries have no such
section and show none.
"""

from __future__ import annotations

import sys
from typing import Any

from ..formatting import fmt_num
from ..json_input import REQUIRED, Obj, describe
from .coverage import count
from .run_index import RunIndex

# (member of summed_ms, label): spans of a cell process's life that do not overlap (breakdown.hpp:
# the lock wait is outside a case's time, the start-up before its first case, the exit after its
# last), so their sum is the total the shares are of.
PARTS = (("process_start", "process start (spawn to the cell's start, less cuInit and the context)"),
         ("cuInit", "cuInit"),
         ("primary_ctx", "primary context (the cell's own retain)"),
         ("gpu_lock_wait", "waiting for the GPU lock (behind exclusive cases)"),
         ("cases", "cases"),
         ("exit", "exit (last event to exit: context teardown)"))
# Spans inside `cases` (helper requests, and the server start-ups among them): a share of the total
# would count them twice, so they are shown under `cases` without one.
WITHIN_CASES = (("helpers", "in helper requests (within cases, start-ups included)"),
                ("helper_start", "starting helper servers ({starts} starts, within helper requests)"))


def time_of(o: Obj, key: str) -> float:
    """A time the runner summed: a finite number, at least 0 (NaN and infinities are garbled too)."""
    v = o.number(key, REQUIRED)
    if not 0 <= v <= sys.float_info.max:
        raise o.error(key, f"expected a time, got {describe(v)}")
    return float(v)


def seconds(ms: float) -> str:
    """As the console prints the breakdown: seconds with one decimal."""
    return f"{ms / 1000:.1f} s"


def share(part: float, total: float) -> str:
    return f"{100 * part / total:.1f} %" if total > 0 else "–"


def part_rows(b: Obj) -> list[dict[str, Any]]:
    summed = b.obj("summed_ms", REQUIRED)
    times = {key: time_of(summed, key) for key, _ in PARTS + WITHIN_CASES}
    total = sum(times[key] for key, _ in PARTS)
    starts = count(b, "helper_starts")
    rows = []
    for key, label in PARTS:
        rows.append({"part": label, "time": seconds(times[key]), "share": share(times[key], total), "within": False})
        if key == "cases":
            rows += [{"part": what.format(starts=fmt_num(starts)), "time": seconds(times[inner]), "share": None,
                      "within": True} for inner, what in WITHIN_CASES]
    rows.append({"part": "summed parts", "time": seconds(total), "share": share(total, total), "within": False})
    return rows


def suite_rows(b: Obj) -> list[dict[str, Any]]:
    """Costliest first; suites of equal time stay in the runner's (name) order, as on the console."""
    m = b.obj("suites_ms", REQUIRED)
    times = [(suite, time_of(m, suite)) for suite in m.keys()]
    cases_ms = time_of(b.obj("summed_ms", REQUIRED), "cases")
    return [{"suite": suite, "time": seconds(ms), "share": share(ms, cases_ms)}
            for suite, ms in sorted(times, key=lambda t: -t[1])]


def case_rows(b: Obj) -> list[dict[str, Any]]:
    """In the runner's order (costliest first); it lists the ten costliest only."""
    return [{"case": c.string("case", REQUIRED), "runs": fmt_num(count(c, "runs")),
             "summed": seconds(time_of(c, "summed_ms")), "max": seconds(time_of(c, "max_ms"))}
            for c in b.objs("cases", REQUIRED)]


def longest_cell(b: Obj) -> dict[str, str] | None:
    """None where the runner named no cell: it read no cell_exit records (results written before them)."""
    lc = b.obj("longest_cell", REQUIRED)
    cell, wall = lc.string("cell", REQUIRED), time_of(lc, "wall_ms")
    return {"cell": cell, "time": seconds(wall)} if cell else None


def timeline_rows(b: Obj) -> list[dict[str, Any]]:
    """How long k cases ran at once (breakdown.timeline.running_ms[k]); none in older summaries."""
    t = b.opt_obj("timeline")
    if t is None:
        return []
    running = t.numbers("running_ms")
    for i, v in enumerate(running):
        if not 0 <= v <= sys.float_info.max:
            raise t.error(f"running_ms[{i}]", f"expected a time, got {describe(v)}")
    span = sum(running)
    return [{"running": fmt_num(k), "time": seconds(ms), "share": share(ms, span)}
            for k, ms in enumerate(running) if ms > 0]


def breakdown_view(ix: RunIndex) -> dict[str, Any] | None:
    """None where the summary has no breakdown (older summaries, raw records)."""
    b = ix.s.opt_obj("breakdown")
    if b is None:
        return None
    wall_s, processes = time_of(b, "wall_s"), count(b, "processes")
    return {
        "line": (f"The functional phase took {wall_s:.1f} s of wall clock. The times below are summed over "
                 f"its {fmt_num(processes)} cell processes: where cells ran side by side, they add up to more."),
        "parts": part_rows(b),
        "suites": suite_rows(b),
        "cases": case_rows(b),
        "longest": longest_cell(b),
        "timeline": timeline_rows(b),
    }
