"""The cells table: each cell's binding, group, environment, outcome counts, start-up times, warnings."""

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


def cells_view(ix: RunIndex) -> dict[str, Any]:
    return {
        "groups": [(ix.group_name[k], k) for k in ix.group_keys],
        "rows": [cell_row(ix, c) for c in ix.cells],
    }
