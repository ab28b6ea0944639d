"""The dashboard's head: title, verdict, provenance list, count chips and notes of the detailed run."""

from __future__ import annotations

from typing import Any

from ..formatting import OUTCOME_SYMBOL, fmt_num, version_text
from .run_index import RunIndex


def gpu_text(prov: dict[str, Any]) -> str:
    devices = prov.get("devices") or []
    return ", ".join(
        f"{d.get('name', '?')} (sm {d.get('compute_capability', '?')}, "
        f"{fmt_num((d.get('total_memory') or 0) / 2**30, 3)} GiB)" for d in devices
    ) or ", ".join(prov.get("gpus") or []) or "–"


def provenance_items(ix: RunIndex, gpu: str) -> list[dict[str, Any]]:
    """(key, value, title) rows of the provenance list; only the driver path carries a tooltip."""
    s, prov = ix.s, ix.run.provenance
    matrix = s.get("matrix") or {}
    rev = str(prov.get("git_revision") or "–")
    items = [
        ("GPU", gpu),
        ("driver", f"{prov.get('driver_version_text', '–')} ({fmt_num(prov.get('driver_version'))})"),
        ("driver path", prov.get("driver_path", "–")),
        ("toolkit", version_text(prov.get("toolkit_version"))),
        ("git revision", f"{rev[:12]}{' (dirty tree)' if prov.get('git_dirty') else ''}"),
        ("host", prov.get("host", "–")),
        ("matrix", f"{matrix.get('name', '–')} ({matrix.get('path', '')})"),
        ("description", matrix.get("description") or "–"),
        ("started", s.get("started") or "–"),
        ("finished", s.get("finished") or "–"),
        ("functional", "–" if s.get("functional_wall_s") is None else f"{fmt_num(s.get('functional_wall_s'), 3)} s"),
        ("shard", s.get("shard") or "all"),
        ("cuparity", prov.get("cuparity_version", "–")),
    ]
    return [{"key": k, "value": v, "title": v if k == "driver path" else None} for k, v in items]


def chip(value: Any, label: str, outcome: str | None = None) -> dict[str, Any]:
    """A count chip; an outcome's chip also shows that outcome's swatch."""
    return {"value": value, "label": label, "outcome": outcome,
            "symbol": OUTCOME_SYMBOL.get(outcome, "") if outcome is not None else ""}


def chips(ix: RunIndex) -> list[dict[str, Any]]:
    """Totals, then one chip per outcome, then problems, divergences and allowed non-passes."""
    s = ix.s
    counts = s.get("counts") or {}
    return [chip(fmt_num(s.get("results_count", sum(counts.values()))), "results"),
            chip(len(ix.cells), "cells"),
            chip(len(ix.group_keys), "semantic groups"),
            *(chip(counts[k], k, outcome=k) for k in sorted(counts)),
            chip(len(s.get("problems") or []), "problems"),
            chip(len(s.get("divergences") or []), "divergences"),
            chip(fmt_num(s.get("allowed", 0)), "allowed non-passes")]


def header_view(ix: RunIndex, title: str | None) -> dict[str, Any]:
    s, prov = ix.s, ix.run.provenance
    gpu = gpu_text(prov)
    verdict = str(s.get("verdict") or "unknown")
    notes = list(ix.run.notes)
    if not s.get("results"):
        notes.append("This run has no results (no case ran in any cell).")
    return {
        "title": title or f"cuparity: {(s.get('matrix') or {}).get('name', 'run')}",
        "subtitle": f"{gpu} · driver {prov.get('driver_version_text', '?')} · {s.get('started', '')}",
        "verdict": verdict,
        "verdict_cls": f"v-{verdict}" if verdict in ("equivalent", "failed", "environment") else "v-none",
        "verdict_title": "no summary.json: `cuparity merge` writes one" if ix.run.raw else f"exit code {s.get('exit_code')}",
        "provenance": provenance_items(ix, gpu),
        "chips": chips(ix),
        "notes": notes,
    }
