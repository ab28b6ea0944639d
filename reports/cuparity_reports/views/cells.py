"""The cells table: each cell's binding, group, environment, outcome counts, start-up times, warnings;
and for suites and programs, what each collected, recorded and cost per cell (summary.json's `suites`)."""

from __future__ import annotations

from typing import Any

from ..formatting import fmt_num
from ..json_input import Obj
from .run_index import RunIndex, backend


def cell_row(ix: RunIndex, c: Obj) -> dict[str, Any]:
    config = c.obj("config")
    counts = c.count_map("counts")
    startup = c.obj("startup_ms")
    return {
        "id": c.string("id"),
        "label": c.string("label"),
        "binding": backend(c) + (" (fallback)" if config.boolean("fallback") else ""),
        "binding_title": config.string("fallback_reason") or None,
        "stream0": config.string("stream0", "–"),
        "group": ix.group_name.get(c.string("group"), "–"),
        "group_title": c.string("group") or None,
        "env": sorted(c.string_map("env", nullable=True).items()),
        "outcomes": ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "–",
        "startup": " / ".join(fmt_num(startup.number(k), 3) for k in ("cuInit", "primary_ctx_retain"))
                   if startup else "–",
        "warnings": "; ".join(config.strings("warnings")),
    }


def suite_row(s: Obj) -> dict[str, Any]:
    """One (cell, suite) as the judge wrote it: its counts, and what stopped or broke it there."""
    collected = s.integer("collected")
    environment = s.opt_obj("environment")
    budget = s.opt_obj("budget")
    notes = []
    if s.has("error"):
        notes.append("could not run: " + s.string("error"))
    if environment is not None:
        notes.append(f"environment broken: {environment.integer('count', 0)} alike"
                     + (f", {environment.integer('not_run', 0)} not run" if environment.boolean("stopped") else "")
                     + ": " + environment.string("message"))
    if budget is not None:
        notes.append(f"failure budget: {budget.integer('failures', 0)} failures (max_fails "
                     f"{budget.integer('max_fails', 0)}), {budget.integer('not_run', 0)} not run")
    ended = not s.has("error")
    return {
        "suite": s.string("suite") + (" (program)" if s.boolean("program") else ""),
        "cell": s.string("cell"),
        "collected": ("?" if collected is None else str(collected)) if ended else "–",
        "tests": str(s.integer("tests", 0)) if ended else "–",
        "processes": str(s.integer("process_count", 0)) if ended else "–",
        "wall": fmt_num(s.number("wall_ms") / 1000, 3) + " s" if ended and s.has("wall_ms") else "–",
        "notes": "; ".join(notes),
    }


def cells_view(ix: RunIndex) -> dict[str, Any]:
    return {
        "groups": [(ix.group_name[k], k) for k in ix.group_keys],
        "rows": [cell_row(ix, c) for c in ix.cells],
        # Null (a matrix of built-in cases) or absent (older summaries): no table.
        "suites": [suite_row(s) for s in ix.s.objs("suites")],
    }
