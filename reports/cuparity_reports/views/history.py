"""The history section: counts and the runner's probe medians over runs, and driver changes."""

from __future__ import annotations

from typing import Any, Sequence

from ..figures import history_figure
from ..formatting import fmt_num
from ..reader import OK_OUTCOMES, Run
from .run_index import backend_of_series

Series = dict[str, list[float | None]]

METHOD = ("Latency medians are the runner's (each summary.json's latency.stats), one line per series. "
          "Change points are not marked: the reports do not judge, and the C++ judge has no change-point "
          "rule; `cuparity compare A B` judges any two runs (scripts/report compare). "
          "Dashed lines: driver version changes.")


def nonpass_count(r: Run) -> float:
    return float(sum(v for k, v in r.doc.count_map("counts").items() if k not in OK_OUTCOMES))


def count_series(runs: Sequence[Run]) -> Series:
    return {
        "pass": [float(r.doc.count_map("counts").get("pass", 0)) for r in runs],
        "non-pass": [nonpass_count(r) for r in runs],
        "divergences": [float(len(r.doc.items("divergences"))) for r in runs],
    }


def probe_series(runs: Sequence[Run]) -> tuple[dict[str, Series], dict[str, str], dict[str, str]]:
    """probe -> series -> each run's median of it (from latency.stats); each probe's unit; each series' backend."""
    out: dict[str, Series] = {}
    units: dict[str, str] = {}
    backends: dict[str, str] = {}
    for i, r in enumerate(runs):
        lat = r.latency
        if lat is None:
            continue
        units.update({p.string("name"): p.string("unit") for p in lat.objs("probes")})
        backends.update(backend_of_series(r))
        for st in lat.objs("stats"):
            median = st.number("median")
            if median is not None:
                out.setdefault(st.string("probe"), {}).setdefault(st.string("series"), [None] * len(runs))[i] = \
                    float(median)
    return out, units, backends


def driver_text(r: Run) -> str:
    """The driver version as the run wrote it ("13.0"), else its number, else '?'."""
    prov = r.provenance
    return prov.string("driver_version_text") or str(prov.integer("driver_version") or "?")


def history_row(i: int, r: Run, driver: str, changed: bool, medians: list[str]) -> dict[str, Any]:
    prov = r.provenance
    return {
        "number": i + 1, "started": r.started, "host": prov.string("host"),
        "gpu": (prov.strings("gpus") or ["–"])[0], "simulated": r.simulated, "driver": driver, "changed": changed,
        "revision": prov.string("git_revision")[:10] + ("+dirty" if prov.boolean("git_dirty") else ""),
        "matrix": r.doc.obj("matrix").string("name"), "verdict": r.doc.string("verdict"),
        "passed": r.doc.count_map("counts").get("pass", 0), "nonpass": int(nonpass_count(r)),
        "divergences": len(r.doc.items("divergences")), "medians": medians,
    }


def history_view(runs: Sequence[Run], draw: bool = True) -> dict[str, Any] | None:
    """None with fewer than two runs; without `draw`, no figure (the members are still read)."""
    if len(runs) < 2:
        return None
    counts = count_series(runs)
    probes, units, backends = probe_series(runs)
    drivers = [driver_text(r) for r in runs]
    driver_changes = [(i, drivers[i]) for i in range(1, len(runs)) if drivers[i] != drivers[i - 1]]
    changed_at = {i for i, _ in driver_changes}
    names = sorted(probes)
    rows = []
    for i, r in enumerate(runs):
        medians = [", ".join(f"{s} {fmt_num(ys[i])}" for s, ys in sorted(probes[p].items()) if ys[i] is not None)
                   or "–" for p in names]
        rows.append(history_row(i, r, drivers[i], i in changed_at, medians))
    labels = [f"{r.started[:16].replace('T', ' ')} {r.provenance.string('git_revision')[:7]}" for r in runs]
    return {
        "intro": f"{len(runs)} runs, oldest first. {METHOD}",
        "probe_headings": [f"{p} median ({units.get(p, '')})" for p in names],
        "rows": rows,
        "figure": history_figure(labels, counts, probes, backends, driver_changes, units) if draw else None,
    }
