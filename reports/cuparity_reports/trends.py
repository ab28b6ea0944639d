"""The history page's data: each stored run's provenance keys and figures, grouped into lines.

A line is one matrix on one GPU configuration (model x count): the runs a team compares with each
other. Driver release, toolkit, host and matrix content are a run's keys too: filters select them,
and a change of one along a line is marked. Nothing here judges a run: verdicts are the runner's
(summary.json) and `cuparity compare`'s; change points are the page's analysis (changepoints.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from .reader import OK_OUTCOMES, Run
from .views.run_index import backend_of_series

# The breakdown's parts, in the order the runner lists them (summary.json breakdown.summed_ms).
PARTS = ("process_start", "cuInit", "primary_ctx", "gpu_lock_wait", "cases", "exit")
UNKNOWN = "unknown"


def short_name(name: str, limit: int = 40) -> str:
    """`name` whole when it fits, else cut at the last word boundary before `limit` with an ellipsis:
    never mid-word (words are split at ',', ':', ' ', '=', '/', '-' and '.')."""
    if len(name) <= limit:
        return name
    cut = max((m.end() for m in re.finditer(r"[,: =/.-]", name[:limit - 1])), default=0)
    return (name[:cut].rstrip(",: =/.-") if cut else name[:limit - 1]) + "…"


def _jobs(argv: Sequence[str]) -> int | None:
    """The `-j N` (or --jobs N / -jN) the run was started with, if its argv says."""
    for i, a in enumerate(argv):
        if a in ("-j", "--jobs") and i + 1 < len(argv) and argv[i + 1].isdigit():
            return int(argv[i + 1])
        if a.startswith("-j") and a[2:].isdigit():
            return int(a[2:])
        if a.startswith("--jobs=") and a[7:].isdigit():
            return int(a[7:])
    return None


def _toolkit(version: int | None) -> str:
    return f"{version // 1000}.{version % 1000 // 10}" if version else UNKNOWN


@dataclass
class Point:
    """One run on the page: its keys (what filters select), its figures and its links."""

    id: str
    run: Run
    keys: dict[str, str]
    line: str
    values: dict[str, Any] = field(default_factory=dict)
    href: str = ""
    compare_href: str = ""
    previous: str = ""  # the id of the previous comparable run (same line), "" for the first

    def record(self) -> dict[str, Any]:
        return {"id": self.id, "line": self.line, "href": self.href, "compare_href": self.compare_href,
                "previous": self.previous, **self.keys, **self.values}


def run_keys(run: Run) -> dict[str, str]:
    """What a run is filed under: matrix, GPU model and count, driver release, toolkit, host."""
    prov = run.provenance
    gpus = prov.strings("gpus")
    devices = prov.objs("devices")
    count = prov.integer("gpu_count") or len(devices) or len(gpus)
    matrix = run.doc.obj("matrix")
    host = prov.string("host") or UNKNOWN
    host_id = prov.string("host_id")
    return {
        "matrix": matrix.string("name") or UNKNOWN,
        "matrix_digest": matrix.string("digest"),
        "gpu": (gpus[0] if gpus else "no GPU") + (" (simulated)" if run.simulated else ""),
        "gpu_count": str(count),
        "driver_release": prov.string("driver_release") or UNKNOWN,
        "driver_api": prov.string("driver_version_text") or str(prov.integer("driver_version") or UNKNOWN),
        "toolkit": _toolkit(prov.integer("toolkit_version")),
        "host": host + (f" ({host_id})" if host_id else ""),
        "started": run.started,
        "revision": prov.string("git_revision")[:10] + ("+dirty" if prov.boolean("git_dirty") else ""),
    }


def line_of(keys: dict[str, str]) -> str:
    return f"{keys['matrix']} · {keys['gpu']} x{keys['gpu_count']}"


def run_values(run: Run) -> dict[str, Any]:
    """The run's figures the page plots: verdict, counts, functional-phase wall and its breakdown."""
    s = run.doc
    counts = s.count_map("counts")
    bd = s.opt_obj("breakdown")
    summed = bd.obj("summed_ms") if bd else None
    return {
        "verdict": s.string("verdict"),
        "pass": counts.get("pass", 0),
        "not_supported": counts.get("not_supported", 0),
        "fail": sum(v for k, v in counts.items() if k not in OK_OUTCOMES),
        "divergences": len(s.items("divergences")),
        "results": s.integer("results_count") or sum(counts.values()),
        "wall_s": s.number("functional_wall_s"),
        "jobs": _jobs(run.provenance.strings("argv")),
        "breakdown_s": {p: (summed.number(p) or 0.0) / 1000.0 for p in PARTS} if summed else None,
    }


@dataclass
class SeriesPoint:
    run: str
    median: float
    low: float
    high: float
    verdict: str


def _series_verdicts(lat: Any) -> dict[tuple[str, str], str]:
    """(probe, series) -> the judge's verdict that names it: a paired verdict for its cell (its
    `direct:`/`other:` series too), else the cross-process comparison where it is `b`."""
    out: dict[tuple[str, str], str] = {}
    for c in lat.objs("comparisons"):
        out[(c.string("probe"), c.string("b"))] = c.string("verdict")
    for p in lat.objs("paired"):
        cell = p.string("cell")
        for series in (cell, f"direct:{cell}", f"other:{cell}"):
            out[(p.string("probe"), series)] = p.string("verdict")
    return out


def latency_points(run: Run, run_id: str) -> dict[tuple[str, str], SeriesPoint]:
    """(probe, series) -> the runner's median of it, the range of its per-round samples, and the
    verdict that names it (summary.json latency.stats, .probes[].samples, .comparisons, .paired)."""
    lat = run.latency
    if lat is None:
        return {}
    samples = {p.string("name"): p.obj("samples") for p in lat.objs("probes")}
    verdicts = _series_verdicts(lat)
    out: dict[tuple[str, str], SeriesPoint] = {}
    for st in lat.objs("stats"):
        probe, series, median = st.string("probe"), st.string("series"), st.number("median")
        if median is None:
            continue
        got = samples.get(probe)
        values = [v for v in (got.numbers(series) if got is not None and got.has(series) else []) if v is not None]
        out[(probe, series)] = SeriesPoint(run_id, float(median), float(min(values, default=median)),
                                           float(max(values, default=median)), verdicts.get((probe, series), ""))
    return out


def series_labels(runs: Sequence[Run]) -> dict[str, str]:
    """Series name -> the label the matrix gives its cell (`direct:`/`other:` keep their prefix)."""
    labels: dict[str, str] = {}
    for r in runs:
        for c in r.doc.objs("cells"):
            if c.string("label"):
                labels[c.string("id")] = c.string("label")
        labels.update({s: s for s, b in backend_of_series(r).items() if s not in labels})
    out = {}
    for name in list(labels):
        prefix, _, rest = name.partition(":")
        if rest and prefix in ("direct", "other") and rest in labels:
            out[name] = f"{prefix}:{labels[rest]}"
        else:
            out[name] = labels[name]
    return out
