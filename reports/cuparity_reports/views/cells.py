"""The cells table: each cell's binding, group, environment, outcome counts, start-up times, warnings."""

from __future__ import annotations

from typing import Any

from ..formatting import fmt_num
from .run_index import RunIndex, backend

def cell_row(ix: RunIndex, c: dict[str, Any]) -> dict[str, Any]:
    config = c.get("config") or {}
    counts = c.get("counts") or {}
    startup = c.get("startup_ms") or {}
    return {
        "id": c.get("id"),
        "label": c.get("label") or "",
        "binding": backend(c) + (" (fallback)" if config.get("fallback") else ""),
        "binding_title": config.get("fallback_reason") or None,
        "stream0": config.get("stream0", "–"),
        "group": ix.group_name.get(str(c.get("group")), "–"),
        "group_title": c.get("group") or None,
        "env": sorted((c.get("env") or {}).items()),
        "outcomes": ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "–",
        "startup": " / ".join(fmt_num(startup.get(k), 3) for k in ("cuInit", "primary_ctx_retain"))
                   if startup else "–",
        "warnings": "; ".join(str(w) for w in config.get("warnings") or []) or "",
    }


def cells_view(ix: RunIndex) -> dict[str, Any]:
    return {
        "groups": [(ix.group_name[k], k) for k in ix.group_keys],
        "rows": [cell_row(ix, c) for c in ix.cells],
    }
