"""One run's summary indexed for the dashboard: cells, results by (cell, case), groups, divergences.

Every member is read through json_input.Obj, so a member of the wrong type is bad input naming the
file and the member, not a traceback in a view.
"""

from __future__ import annotations

from ..json_input import REQUIRED, Obj
from ..reader import Run


def backend(cell: Obj | None) -> str:
    """The binding a cell ran on, or 'not started'."""
    config = cell.opt_obj("config") if cell is not None else None
    if not config:
        return "not started"
    return config.string("binding", "?")


def backend_of_series(run: Run) -> dict[str, str]:
    """Latency series name -> its backend ('direct' for the facade-free series)."""
    cells = {c.string("id"): c for c in run.doc.objs("cells")}
    out: dict[str, str] = {}
    for probe in (run.latency or Obj({}, run.source, "latency")).objs("probes"):
        for series in probe.obj("samples").keys():
            if series.startswith("direct:"):
                out[series] = "direct"
            else:
                out[series] = backend(cells.get(series)) if series in cells else series
    return out


class RunIndex:
    """Lookups over one run's summary that every section shares."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.s = run.doc
        self.cells: list[Obj] = self.s.objs("cells")
        self.cell_by_id = {c.string("id"): c for c in self.cells}
        results = self.s.objs("results")
        # Cells named only by results (a hand-made or partial summary) still get a row.
        for r in results:
            cid = r.string("cell", REQUIRED)
            if cid not in self.cell_by_id:
                c = Obj({"id": cid, "label": "", "env": {}, "config": None, "_from_results": True}, run.source,
                        r.where("cell"))
                self.cells.append(c)
                self.cell_by_id[cid] = c
        self.results = {(r.string("cell", REQUIRED), r.string("case", REQUIRED)): r for r in results}
        self.group_keys: list[str] = [g.string("key") for g in self.s.objs("groups")]
        for c in self.cells:
            g = c.string("group")
            if g and g not in self.group_keys:
                self.group_keys.append(g)
        self.group_name = {k: f"G{i}" for i, k in enumerate(self.group_keys)}
        self.diverging: dict[tuple[str, str], list[Obj]] = {}
        for d in self.s.objs("divergences"):
            self.diverging.setdefault((d.string("group"), d.string("case")), []).append(d)
        self.problems: list[Obj] = self.s.objs("problems")

    def cases(self) -> list[str]:
        return sorted({case for _, case in self.results})
