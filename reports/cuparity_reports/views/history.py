"""The history section: counts and per-backend probe medians over runs, driver changes and change points."""

from __future__ import annotations

from typing import Any, Sequence

from ..figures import history_figure
from ..formatting import fmt_num
from ..history import change_points
from ..reader import OK_OUTCOMES, Run
from .run_index import backend_of_series

Series = dict[str, list[float | None]]

METHOD = ("Change points: a run is flagged where the median of the 3 runs from it on differs from the "
          "median of the 3 runs before it by more than 10% (of the smaller), and that shift is the "
          "largest nearby. Dashed lines: driver version changes.")


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def nonpass_count(r: Run) -> float:
    return float(sum(v for k, v in (r.summary.get("counts") or {}).items() if k not in OK_OUTCOMES))


def count_series(runs: Sequence[Run]) -> Series:
    return {
        "pass": [float((r.summary.get("counts") or {}).get("pass", 0)) for r in runs],
        "non-pass": [nonpass_count(r) for r in runs],
        "divergences": [float(len(r.summary.get("divergences") or [])) for r in runs],
    }


def probe_series(runs: Sequence[Run]) -> tuple[dict[str, Series], dict[str, str]]:
    """probe -> backend -> per run the median over that backend's series medians; and each probe's unit."""
    out: dict[str, Series] = {}
    units: dict[str, str] = {}
    for i, r in enumerate(runs):
        backend_of = backend_of_series(r)
        for p in (r.latency or {}).get("probes") or []:
            name = str(p.get("name"))
            units[name] = str(p.get("unit", ""))
            per_backend: dict[str, list[float]] = {}
            for series, vals in (p.get("samples") or {}).items():
                if vals:
                    per_backend.setdefault(backend_of.get(series, series), []).append(_median([float(v) for v in vals]))
            for backend, meds in per_backend.items():
                out.setdefault(name, {}).setdefault(backend, [None] * len(runs))[i] = _median(meds)
    return out, units


def change_point_marks(counts: Series, probes: dict[str, Series]) -> tuple[dict[tuple[str, str], list[int]],
                                                                           dict[int, list[str]]]:
    """Change points per plotted series (for the figure) and, per run, the series that changed there."""
    marks: dict[tuple[str, str], list[int]] = {}
    at: dict[int, list[str]] = {}
    named = [("counts", "results", name, ys) for name, ys in counts.items()]
    named += [(probe, probe, backend, ys) for probe, series in probes.items() for backend, ys in series.items()]
    for plot, what, series, ys in named:
        cps = change_points(ys)
        marks[(plot, series)] = [cp.index for cp in cps]
        for cp in cps:
            at.setdefault(cp.index, []).append(f"{what}/{series}")
    return marks, at


def history_row(i: int, r: Run, driver: str, changed: bool, medians: list[str], cps: list[str]) -> dict[str, Any]:
    prov = r.provenance
    return {
        "number": i + 1, "started": r.started, "host": prov.get("host", ""),
        "gpu": (prov.get("gpus") or ["–"])[0], "simulated": r.simulated, "driver": driver, "changed": changed,
        "revision": str(prov.get("git_revision") or "")[:10] + ("+dirty" if prov.get("git_dirty") else ""),
        "matrix": (r.summary.get("matrix") or {}).get("name", ""), "verdict": r.summary.get("verdict", ""),
        "passed": (r.summary.get("counts") or {}).get("pass", 0), "nonpass": int(nonpass_count(r)),
        "divergences": len(r.summary.get("divergences") or []), "medians": medians, "change_points": ", ".join(cps),
    }


def history_view(runs: Sequence[Run]) -> dict[str, Any] | None:
    """None with fewer than two runs."""
    if len(runs) < 2:
        return None
    counts = count_series(runs)
    probes, units = probe_series(runs)
    marks, cp_at = change_point_marks(counts, probes)
    drivers = [str(r.provenance.get("driver_version_text") or r.provenance.get("driver_version") or "?") for r in runs]
    driver_changes = [(i, drivers[i]) for i in range(1, len(runs)) if drivers[i] != drivers[i - 1]]
    changed_at = {i for i, _ in driver_changes}
    names = sorted(probes)
    rows = []
    for i, r in enumerate(runs):
        medians = [", ".join(f"{b} {fmt_num(ys[i])}" for b, ys in sorted(probes[p].items()) if ys[i] is not None)
                   or "–" for p in names]
        rows.append(history_row(i, r, drivers[i], i in changed_at, medians, cp_at.get(i, [])))
    labels = [f"{r.started[:16].replace('T', ' ')} {str(r.provenance.get('git_revision', ''))[:7]}" for r in runs]
    return {
        "intro": f"{len(runs)} runs, oldest first. {METHOD}",
        "probe_headings": [f"{p} median ({units.get(p, '')})" for p in names],
        "rows": rows,
        "figure": history_figure(labels, counts, probes, driver_changes, marks, units),
    }
