"""The equivalence grid: one row per cell, one column per case, rows grouped by semantic group."""

from __future__ import annotations

from typing import Any

from ..formatting import OUTCOME_SYMBOL, env_text, fmt_num, json_value
from ..json_input import REQUIRED, Obj
from .run_index import RunIndex, backend

LEGEND_OUTCOMES = ("pass", "not_supported", "fail", "crash", "timeout", "resource_error", "error", "flaky",
                   "missing")
BINDING_SWATCH = {"internal": "#1f6fb4", "nvidia": "#e07b00"}


def suite_spans(cases: list[str]) -> tuple[list[tuple[str, int]], set[str]]:
    """Runs of cases sharing a suite (the name up to the first dot), and each run's first case."""
    suites: list[tuple[str, int]] = []
    first: set[str] = set()
    for c in cases:
        suite = c.split(".")[0]
        if suites and suites[-1][0] == suite:
            suites[-1] = (suite, suites[-1][1] + 1)
        else:
            suites.append((suite, 1))
            first.add(c)
    return suites, first


def cell_tip(cell: Obj) -> str:
    cid = cell.string("id")
    config = cell.opt_obj("config")
    label = cell.string("label")
    fallback = bool(config and config.boolean("fallback"))
    tip = f"{cid}{' [' + label + ']' if label else ''}\nbinding: {backend(cell)}{' (fallback)' if fallback else ''}"
    if config:
        tip += f"\nstream0: {config.string('stream0', '?')}"
    return tip + "\n" + env_text(cell.string_map("env", nullable=True))


def result_square(ix: RunIndex, cid: str, gkey: str, case: str, first: set[str]) -> dict[str, Any]:
    """One square: its classes (outcome, divergence, suite start), tooltip and symbol."""
    r = ix.results.get((cid, case))
    outcome = r.string("outcome", REQUIRED) if r else "missing"
    cell_divs = [d for d in ix.diverging.get((gkey, case), []) if cid in d.obj("values")]
    cls = f"o o-{outcome}" + (" diverges" if cell_divs else "") + (" first" if case in first else "")
    t = f"{case}\n{cid}\noutcome: {outcome}"
    if r and r.string("message"):
        t += f"\nmessage: {r.string('message')}"
    if r and r.number("duration_ms") is not None:
        t += f"\n{fmt_num(r.number('duration_ms'), 3)} ms"
    for d in cell_divs:
        t += f"\nDIVERGES on {d.string('key')}: {json_value(d.obj('values').raw(cid), 80)[0]}"
    sym = "◆" if cell_divs and outcome == "pass" else OUTCOME_SYMBOL.get(outcome, "?")
    return {"cls": cls, "title": t, "symbol": sym}


def grid_row(ix: RunIndex, cell: Obj, cases: list[str], first: set[str]) -> dict[str, Any]:
    """A cell's row: its heading, and either its squares or why it never started."""
    cid = cell.string("id")
    config = cell.opt_obj("config")
    row: dict[str, Any] = {
        "cid": cid, "tip": cell_tip(cell), "swatch": BINDING_SWATCH.get(backend(cell), "#bbb"),
        "name": cid + ("*" if config and config.boolean("fallback") else ""), "notrun": None, "squares": [],
    }
    if config is None and not any((cid, c) in ix.results for c in cases):
        err = next((p.string("message") for p in ix.problems
                    if p.string("cell") == cid and p.string("kind") == "cell_error"), "")
        row["notrun"] = {"text": f"not started{': ' + err if err else ''}", "colspan": max(1, len(cases)),
                         "title": err or None}
        return row
    gkey = cell.string("group")
    row["squares"] = [result_square(ix, cid, gkey, case, first) for case in cases]
    return row


def grid_view(ix: RunIndex) -> dict[str, Any]:
    if not ix.cells:
        return {"empty": True}
    cases = ix.cases()
    suites, first = suite_spans(cases)
    by_group: dict[str, list[Obj]] = {}
    for c in ix.cells:
        by_group.setdefault(c.string("group"), []).append(c)
    ordered = [k for k in ix.group_keys if k in by_group] + [k for k in by_group if k not in ix.group_keys]
    ungrouped = "cells (no summary.json, so no semantic groups)" if ix.run.raw else "cells that never started"
    groups = [{"label": f"{ix.group_name[g]}: {g}" if g else ungrouped,
               "rows": [grid_row(ix, cell, cases, first) for cell in by_group[g]]} for g in ordered]
    return {
        "empty": False,
        "legend": [(o, OUTCOME_SYMBOL.get(o, "")) for o in LEGEND_OUTCOMES],
        "bindings": list(BINDING_SWATCH.items()),
        "suites": suites,
        "cases": [(c, c.split(".", 1)[-1]) for c in cases],
        "width": len(cases) + 1,
        "cell_count": len(ix.cells),
        "groups": groups,
    }
