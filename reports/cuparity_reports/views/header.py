"""The dashboard's head: title, verdict, provenance list, count chips and notes of the detailed run."""

from __future__ import annotations

from typing import Any

from ..formatting import OUTCOME_SYMBOL, fmt_num, version_text
from ..json_input import Obj
from ..reader import VERDICTS  # the judge's verdict words, each with a badge class of its own
from .run_index import RunIndex


def gpu_text(prov: Obj) -> str:
    return ", ".join(
        f"{d.string('name', '?')} (sm {d.string('compute_capability', '?')}, "
        f"{fmt_num((d.number('total_memory') or 0) / 2**30, 3)} GiB)" for d in prov.objs("devices")
    ) or ", ".join(prov.strings("gpus")) or "–"


def provenance_items(ix: RunIndex, gpu: str) -> list[dict[str, Any]]:
    """(key, value, title) rows of the provenance list; only the driver path carries a tooltip."""
    s, prov = ix.s, ix.run.provenance
    matrix = s.obj("matrix")
    rev = prov.string("git_revision") or "–"
    wall = s.number("functional_wall_s")
    items = [
        ("GPU", gpu),
        ("driver", f"{prov.string('driver_version_text', '–')} ({fmt_num(prov.integer('driver_version'))})"),
        ("driver path", prov.string("driver_path", "–")),
        ("toolkit", version_text(prov.integer("toolkit_version"))),
        ("git revision", f"{rev[:12]}{' (dirty tree)' if prov.boolean('git_dirty') else ''}"),
        ("host", prov.string("host", "–")),
        ("matrix", f"{matrix.string('name', '–')} ({matrix.string('path')})"),
        ("description", matrix.string("description") or "–"),
        ("started", s.string("started") or "–"),
        ("finished", s.string("finished") or "–"),
        ("functional", "–" if wall is None else f"{fmt_num(wall, 3)} s"),
        ("shard", s.string("shard") or "all"),
        ("cuparity", prov.string("cuparity_version", "–")),
    ]
    return [{"key": k, "value": v, "title": v if k == "driver path" else None} for k, v in items]


def chip(value: Any, label: str, outcome: str | None = None) -> dict[str, Any]:
    """A count chip; an outcome's chip also shows that outcome's swatch."""
    return {"value": value, "label": label, "outcome": outcome,
            "symbol": OUTCOME_SYMBOL.get(outcome, "") if outcome is not None else ""}


def chips(ix: RunIndex) -> list[dict[str, Any]]:
    """Totals, then one chip per outcome, then problems, divergences and allowed non-passes."""
    s = ix.s
    counts = s.count_map("counts")
    return [chip(fmt_num(s.integer("results_count", sum(counts.values()))), "results"),
            chip(len(ix.cells), "cells"),
            chip(len(ix.group_keys), "semantic groups"),
            *(chip(counts[k], k, outcome=k) for k in sorted(counts)),
            chip(len(ix.problems), "problems"),
            chip(len(s.items("divergences")), "divergences"),
            chip(fmt_num(s.integer("allowed")), "allowed non-passes")]


def header_view(ix: RunIndex, title: str | None) -> dict[str, Any]:
    s, prov = ix.s, ix.run.provenance
    gpu = gpu_text(prov)
    verdict = s.string("verdict") or "unknown"
    notes = list(ix.run.notes)
    if not s.items("results"):
        notes.append("This run has no results (no case ran in any cell).")
    return {
        "title": title or f"cuparity: {s.obj('matrix').string('name', 'run')}",
        "subtitle": f"{gpu} · driver {prov.string('driver_version_text', '?')} · {s.string('started')}",
        "verdict": verdict,
        "verdict_cls": f"v-{verdict}" if verdict in VERDICTS else "v-none",
        "verdict_title": "no summary.json: `cuparity merge` writes one" if ix.run.raw else f"exit code {fmt_num(s.integer('exit_code'))}",
        "provenance": provenance_items(ix, gpu),
        "chips": chips(ix),
        "notes": notes,
    }
