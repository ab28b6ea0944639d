"""The latency section: per-probe figure, per-series statistics and noise, comparison and overhead tables."""

from __future__ import annotations

import json
from typing import Any

from ..figures import probes_figure
from ..formatting import fmt_num, fmt_p, fmt_ratio, spread
from ..reader import Run
from .run_index import RunIndex, backend_of_series

def environment_line(lat: dict[str, Any]) -> str:
    envd = lat.get("environment") or {}
    items = [f"{k}: {json.dumps(v) if isinstance(v, (list, dict)) else fmt_num(v)}" for k, v in sorted(envd.items())]
    return f"{fmt_num(lat.get('rounds'))} rounds. " + ("; ".join(items) or "GPU clocks and temperature unreadable.")


def noise_line(lat: dict[str, Any], target_cv: float) -> str | None:
    """How many probes spread beyond the robust-CV target, and the driver-free reference's spread."""
    noise = lat.get("noise") or {}
    if not noise:
        return None
    over = sorted({str(o.get("probe")) for o in noise.get("over_target") or []})
    text = (f"Noise: {len(over)} of {len(lat.get('probes') or [])} probes spread beyond the "
            f"{fmt_num(target_cv * 100, 3)}% robust-CV target" + (f" ({', '.join(over)})" if over else "") + ".")
    ref = noise.get("reference")
    if isinstance(ref, dict):
        text += (f" The driver-free {ref.get('probe')} spread up to "
                 f"{fmt_num((ref.get('rcv_max') or 0) * 100, 3)}% over the same rounds: the host's own share.")
    return text


def over_target(lat: dict[str, Any]) -> set[tuple[str, str]]:
    """The (probe, series) the runner listed as spread beyond its noise target (latency.noise)."""
    return {(str(o.get("probe")), str(o.get("series")))
            for o in (lat.get("noise") or {}).get("over_target") or [] if isinstance(o, dict)}


def stats_rows(lat: dict[str, Any], backend_of: dict[str, str], units: dict[Any, str],
               target_cv: float) -> list[dict[str, Any]]:
    # A series is flagged where the runner flagged it (noise.over_target, on the robust CV); a
    # summary without a noise block flags nothing.
    noisy_series = over_target(lat)
    rows = []
    for s in lat.get("stats") or []:
        noisy = (str(s.get("probe")), str(s.get("series"))) in noisy_series
        rows.append({
            "probe": s.get("probe"), "series": s.get("series"), "backend": backend_of.get(str(s.get("series")), ""),
            "median": f"{fmt_num(s.get('median'))} {units.get(s.get('probe'), '')}",
            "spread": f"{fmt_num(spread(s) * 100, 3)} %", "spread_cls": "num" + (" warn" if noisy else ""),
            "spread_title": f"above the {fmt_num(target_cv * 100, 3)}% noise target" if noisy else None,
            "cv": f"{fmt_num((s.get('cv') or 0) * 100, 3)} %", "n": fmt_num(s.get("n")),
        })
    return rows


def comparison_row(c: dict[str, Any], group_name: dict[str, str]) -> dict[str, Any]:
    return {
        "probe": c.get("probe"), "group": group_name.get(str(c.get("group")), c.get("group") or ""),
        "group_title": c.get("group") or None, "a": c.get("a"), "b": c.get("b"),
        "median_a": fmt_num(c.get("median_a")), "median_b": fmt_num(c.get("median_b")),
        "ratio": fmt_ratio(c.get("ratio")), "ci": f"[{fmt_ratio(c.get('ci_low'))}, {fmt_ratio(c.get('ci_high'))}]",
        "p": fmt_p(c.get("p_value")), "mde": _pct(c.get("mde")),
        "verdict": c.get("verdict"), "verdict_cls": f"verd verd-{c.get('verdict')}",
        "regression": bool(c.get("regression")),
    }


def _pct(value: Any) -> str:
    """A fraction as a percentage ("" where the runner wrote none: older summaries)."""
    return f"{fmt_num(value * 100, 2)} %" if isinstance(value, (int, float)) and not isinstance(value, bool) else ""


def comparison_tables(lat: dict[str, Any], group_name: dict[str, str]) -> list[dict[str, Any]]:
    """Backend-vs-backend and against-the-baseline tables, each only when it has rows."""
    specs = (("Backend vs backend (same semantic group)", lat.get("comparisons") or [], "latency-comparisons"),
             ("Against the baseline run", lat.get("baseline") or [], "latency-baseline"))
    return [{"title": title, "id": ident, "rows": [comparison_row(c, group_name) for c in rows]}
            for title, rows, ident in specs if rows]


def overhead_rows(lat: dict[str, Any], units: dict[Any, str]) -> list[dict[str, Any]]:
    rows = []
    for o in lat.get("overhead") or []:
        if "delta_ns" in o:  # cuparity.latency/2: paired blocks, the difference with its interval
            delta = (f"{fmt_num(o.get('delta_ns'), 3)} ns [{fmt_num(o.get('delta_low'), 3)}, "
                     f"{fmt_num(o.get('delta_high'), 3)}]")
        else:  # /1: the median of per-round differences, in the probe's unit
            delta = f"{fmt_num(o.get('delta'), 3)} {units.get(o.get('probe'), '')}"
        rows.append({"probe": o.get("probe"), "series": o.get("cell", o.get("series")),
                     "ratio": fmt_ratio(o.get("ratio")),
                     "ci": f"[{fmt_ratio(o.get('ci_low'))}, {fmt_ratio(o.get('ci_high'))}]",
                     "delta": delta, "pairs": fmt_num(o.get("pairs"))})
    return rows


def paired_rows(lat: dict[str, Any]) -> list[dict[str, Any]]:
    """Backend vs backend inside one process (nvidia / internal), as the runner judged each."""
    rows = []
    for p in lat.get("paired") or []:
        verdict = str(p.get("verdict", ""))
        measured = "ratio" in p
        rows.append({
            "probe": p.get("probe"), "cell": p.get("cell"), "own": p.get("own", ""),
            "ratio": fmt_ratio(p.get("ratio")) if measured else "",
            "ci": f"[{fmt_ratio(p.get('ci_low'))}, {fmt_ratio(p.get('ci_high'))}]" if measured else "",
            "p": fmt_p(p.get("p_value")) if measured else "", "mde": _pct(p.get("mde")),
            "pairs": fmt_num(p.get("pairs")) if measured else "",
            "control": "A/A (same addresses)" if p.get("same_address") else "",
            "verdict": verdict, "verdict_cls": f"verd verd-{verdict}",
            "reason": p.get("reason") or None,
        })
    return rows


def medians_of(lat: dict[str, Any]) -> dict[tuple[str, str], float]:
    """(probe, series) -> the median the runner computed (latency.stats)."""
    return {(str(s.get("probe")), str(s.get("series"))): float(s["median"]) for s in lat.get("stats") or []
            if isinstance(s.get("median"), (int, float)) and not isinstance(s.get("median"), bool)}


def latency_view(ix: RunIndex, run: Run) -> dict[str, Any] | None:
    """None when the run measured no latency."""
    lat = run.latency
    if not lat:
        return None
    probes = [p for p in lat.get("probes") or [] if p.get("samples")]
    backend_of = backend_of_series(run)
    units = {p.get("name"): p.get("unit", "") for p in lat.get("probes") or []}
    target_cv = float((lat.get("noise") or {}).get("target_cv") or 0.03)
    return {
        "environment": environment_line(lat),
        "figure": probes_figure(probes, backend_of, medians_of(lat)) if probes else None,
        "noise": noise_line(lat, target_cv),
        "stats": stats_rows(lat, backend_of, units, target_cv),
        "comparisons": comparison_tables(lat, ix.group_name),
        "overhead": overhead_rows(lat, units),
        "paired": paired_rows(lat),
    }
