"""One run's summary indexed for the dashboard: cells, results by (cell, case), groups, divergences."""

from __future__ import annotations

from typing import Any

from ..reader import Run


def backend(cell: dict[str, Any] | None) -> str:
    """The binding a cell ran on, or 'not started'."""
    if not cell or not cell.get("config"):
        return "not started"
    return str(cell["config"].get("binding", "?"))


def backend_of_series(run: Run) -> dict[str, str]:
    """Latency series name -> its backend ('direct' for the facade-free series)."""
    cells = {str(c.get("id")): c for c in run.summary.get("cells") or []}
    out: dict[str, str] = {}
    for probe in (run.latency or {}).get("probes") or []:
        for series in probe.get("samples") or {}:
            if series.startswith("direct:"):
                out[series] = "direct"
            else:
                out[series] = backend(cells.get(series)) if series in cells else series
    return out


class RunIndex:
    """Lookups over one run's summary that every section shares."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.s = run.summary
        self.cells: list[dict[str, Any]] = [c for c in self.s.get("cells") or [] if isinstance(c, dict)]
        self.cell_by_id = {str(c.get("id")): c for c in self.cells}
        # Cells named only by results (a hand-made or partial summary) still get a row.
        for r in self.s.get("results") or []:
            if str(r.get("cell")) not in self.cell_by_id:
                c = {"id": str(r.get("cell")), "label": "", "env": {}, "config": None, "_from_results": True}
                self.cells.append(c)
                self.cell_by_id[c["id"]] = c
        self.results = {(str(r.get("cell")), str(r.get("case"))): r for r in self.s.get("results") or []}
        self.group_keys: list[str] = [str(g.get("key")) for g in self.s.get("groups") or []]
        for c in self.cells:
            g = c.get("group")
            if g and g not in self.group_keys:
                self.group_keys.append(str(g))
        self.group_name = {k: f"G{i}" for i, k in enumerate(self.group_keys)}
        self.diverging: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for d in self.s.get("divergences") or []:
            self.diverging.setdefault((str(d.get("group")), str(d.get("case"))), []).append(d)

    def cases(self) -> list[str]:
        return sorted({case for _, case in self.results})
