"""The latency section: per-probe figure, per-series statistics and noise, comparison and overhead tables."""

from __future__ import annotations

import json
from typing import Any

from ..figures import probes_figure
from ..formatting import fmt_num, fmt_p, fmt_ratio, spread
from ..json_input import Obj
from ..reader import Run
from .run_index import RunIndex, backend_of_series


def environment_line(lat: Obj) -> str:
    envd = lat.obj("environment")
    items = [f"{k}: {json.dumps(v) if isinstance(v, (list, dict)) else fmt_num(v)}"
             for k, v in sorted(envd.value.items())]
    return f"{fmt_num(lat.integer('rounds'))} rounds. " + ("; ".join(items) or "GPU clocks and temperature unreadable.")


def noise_line(lat: Obj, target_cv: float) -> str | None:
    """How many probes spread beyond the robust-CV target, and the driver-free reference's spread."""
    noise = lat.obj("noise")
    if not noise:
        return None
    over = sorted({o.string("probe") for o in noise.objs("over_target")})
    text = (f"Noise: {len(over)} of {len(lat.items('probes'))} probes spread beyond the "
            f"{fmt_num(target_cv * 100, 3)}% robust-CV target" + (f" ({', '.join(over)})" if over else "") + ".")
    ref = noise.opt_obj("reference")
    if ref is not None:
        text += (f" The driver-free {ref.string('probe')} spread up to "
                 f"{fmt_num((ref.number('rcv_max') or 0) * 100, 3)}% over the same rounds: the host's own share.")
    return text


def over_target(lat: Obj) -> set[tuple[str, str]]:
    """The (probe, series) the runner listed as spread beyond its noise target (latency.noise)."""
    return {(o.string("probe"), o.string("series")) for o in lat.obj("noise").objs("over_target")}


def stats_rows(lat: Obj, backend_of: dict[str, str], units: dict[str, str],
               target_cv: float) -> list[dict[str, Any]]:
    # A series is flagged where the runner flagged it (noise.over_target, on the robust CV); a
    # summary without a noise block flags nothing.
    noisy_series = over_target(lat)
    rows = []
    for s in lat.objs("stats"):
        probe, series = s.string("probe"), s.string("series")
        noisy = (probe, series) in noisy_series
        cv = s.number("cv")
        rows.append({
            "probe": probe, "series": series, "backend": backend_of.get(series, ""),
            "median": f"{fmt_num(s.number('median'))} {units.get(probe, '')}",
            "spread": f"{fmt_num(spread(s.number('rcv'), cv) * 100, 3)} %",
            "spread_cls": "num" + (" warn" if noisy else ""),
            "spread_title": f"above the {fmt_num(target_cv * 100, 3)}% noise target" if noisy else None,
            "cv": f"{fmt_num((cv or 0) * 100, 3)} %", "n": fmt_num(s.integer("n")),
        })
    return rows


def comparison_row(c: Obj, group_name: dict[str, str]) -> dict[str, Any]:
    group, verdict = c.string("group"), c.string("verdict")
    return {
        "probe": c.string("probe"), "group": group_name.get(group, group),
        "group_title": group or None, "a": c.string("a"), "b": c.string("b"),
        "median_a": fmt_num(c.number("median_a")), "median_b": fmt_num(c.number("median_b")),
        "ratio": fmt_ratio(c.number("ratio")),
        "ci": f"[{fmt_ratio(c.number('ci_low'))}, {fmt_ratio(c.number('ci_high'))}]",
        "p": fmt_p(c.number("p_value")), "mde": _pct(c.number("mde")),
        "verdict": verdict, "verdict_cls": f"verd verd-{verdict}",
        "regression": c.boolean("regression"),
    }


def _pct(value: Any) -> str:
    """A fraction as a percentage ("" where the runner wrote none: older summaries)."""
    return f"{fmt_num(value * 100, 2)} %" if value is not None else ""


def comparison_tables(lat: Obj, group_name: dict[str, str]) -> list[dict[str, Any]]:
    """Backend-vs-backend and against-the-baseline tables, each only when it has rows."""
    specs = (("Backend vs backend (same semantic group)", lat.objs("comparisons"), "latency-comparisons"),
             ("Against the baseline run", lat.objs("baseline"), "latency-baseline"))
    return [{"title": title, "id": ident, "rows": [comparison_row(c, group_name) for c in rows]}
            for title, rows, ident in specs if rows]


def overhead_rows(lat: Obj, units: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for o in lat.objs("overhead"):
        if "delta_ns" in o:  # cuparity.latency/2: paired blocks, the difference with its interval
            delta = (f"{fmt_num(o.number('delta_ns'), 3)} ns [{fmt_num(o.number('delta_low'), 3)}, "
                     f"{fmt_num(o.number('delta_high'), 3)}]")
        else:  # /1: the median of per-round differences, in the probe's unit
            delta = f"{fmt_num(o.number('delta'), 3)} {units.get(o.string('probe'), '')}"
        rows.append({"probe": o.string("probe"), "series": o.string("cell") if "cell" in o else o.string("series"),
                     "ratio": fmt_ratio(o.number("ratio")),
                     "ci": f"[{fmt_ratio(o.number('ci_low'))}, {fmt_ratio(o.number('ci_high'))}]",
                     "delta": delta, "pairs": fmt_num(o.integer("pairs"))})
    return rows


def python_path_rows(lat: Obj) -> list[dict[str, Any]]:
    """What the Python call path costs above cuparity's C++ one, per operation, cell and binding, as
    the runner computed it (latency.python_path): nothing is recomputed here."""
    def figure(o: Obj) -> str:
        return f"{fmt_num(o.number('median'), 4)} [{fmt_num(o.number('low'), 4)}, {fmt_num(o.number('high'), 4)}]"
    rows = []
    for r in lat.objs("python_path"):
        fell_back = r.string("python_binding") != r.string("cpp_binding")
        rows.append({
            "probe": r.string("probe"), "cell": r.string("cell"), "path": r.string("path"),
            "binding": r.string("binding"), "python": figure(r.obj("python_ns")), "cpp": figure(r.obj("cpp_ns")),
            "cost": (f"{fmt_num(r.number('cost_ns'), 4)} [{fmt_num(r.number('cost_low'), 4)}, "
                     f"{fmt_num(r.number('cost_high'), 4)}]"),
            "ratio": fmt_ratio(r.number("ratio")),
            "note": (f"Python used {r.string('python_binding')}, C++ {r.string('cpp_binding')}" if fell_back else ""),
        })
    return rows


def paired_rows(lat: Obj) -> list[dict[str, Any]]:
    """Backend vs backend inside one process (nvidia / internal), as the runner judged each."""
    rows = []
    for p in lat.objs("paired"):
        verdict = p.string("verdict")
        measured = "ratio" in p
        rows.append({
            "probe": p.string("probe"), "cell": p.string("cell"), "own": p.string("own"),
            "ratio": fmt_ratio(p.number("ratio")) if measured else "",
            "ci": f"[{fmt_ratio(p.number('ci_low'))}, {fmt_ratio(p.number('ci_high'))}]" if measured else "",
            "p": fmt_p(p.number("p_value")) if measured else "", "mde": _pct(p.number("mde")),
            "pairs": fmt_num(p.integer("pairs")) if measured else "",
            "control": "A/A (same addresses)" if p.boolean("same_address") else "",
            # The run's method floor the verdict had to clear (absent before the floor existed).
            "floor": _pct(p.number("floor")) if p.number("floor") is not None else "",
            "verdict": verdict, "verdict_cls": f"verd verd-{verdict}",
            "reason": p.string("reason") or None,
        })
    return rows


def medians_of(lat: Obj) -> dict[tuple[str, str], float]:
    """(probe, series) -> the median the runner computed (latency.stats)."""
    return {(s.string("probe"), s.string("series")): float(s.number("median")) for s in lat.objs("stats")
            if s.number("median") is not None}


def figure_probes(lat: Obj) -> list[dict[str, Any]]:
    """The probes with samples, as plain data for the figure (every member checked here)."""
    out = []
    for p in lat.objs("probes"):
        samples = p.number_list_map("samples")
        if samples:
            out.append({"name": p.string("name", "?"), "unit": p.string("unit"), "kind": p.string("kind"),
                        "lower_is_better": p.boolean("lower_is_better", True), "samples": samples})
    return out


def latency_view(ix: RunIndex, run: Run, draw: bool = True) -> dict[str, Any] | None:
    """None when the run measured no latency; without `draw`, no figure (the members are still read)."""
    lat = run.latency
    if not lat:
        return None
    probes = figure_probes(lat)
    backend_of = backend_of_series(run)
    units = {p.string("name"): p.string("unit") for p in lat.objs("probes")}
    target_cv = float(lat.obj("noise").number("target_cv") or 0.03)
    return {
        "environment": environment_line(lat),
        "figure": probes_figure(probes, backend_of, medians_of(lat)) if probes and draw else None,
        "noise": noise_line(lat, target_cv),
        "stats": stats_rows(lat, backend_of, units, target_cv),
        "comparisons": comparison_tables(lat, ix.group_name),
        "overhead": overhead_rows(lat, units),
        "paired": paired_rows(lat),
        "python_path": python_path_rows(lat),
        "floors": [{"probe": f.string("probe"), "floor": _pct(f.number("floor")),
                    "floor_ns": fmt_num(f.number("floor_ns"), 3), "controls": len(f.strings("controls")),
                    "within": f.boolean("within_threshold", True)} for f in lat.objs("floors")],
    }
