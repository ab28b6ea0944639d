"""The history site of a store: an interactive trend page, a regressions page, each run's dashboard
and each run's `cuparity compare` against the previous comparable run, as HTML in one folder.

index.html is self-contained (plotly.js inline, no network). Verdicts come from the runner
(summary.json) and from `cuparity compare`; change points are the page's own analysis
(changepoints.py) and are shown as such, never as a verdict.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

from markupsafe import Markup

from . import __version__
from .changepoints import change_points
from .compare import exit_code, render_text, run_compare
from .history import read_index
from .json_input import ReportInputError
from .output import write_atomically
from .reader import Run, read_summary
from .templating import render, stylesheet
from .trends import Point, latency_points, line_of, run_keys, run_values, series_labels, short_name

# Keys a change of which, between two runs of one line, is marked on every figure.
# (A GPU model or count change starts another line; a different board of one model is no change:
# a pool of machines hands out another one every time.)
MARKED = (("driver_release", "driver"), ("toolkit", "toolkit"), ("matrix_digest", "matrix content"))


@dataclass
class Site:
    """What `write_site` wrote, for the command's message."""

    runs: int = 0
    lines: int = 0
    change_points: int = 0
    regressions: int = 0
    compare_errors: list[str] = field(default_factory=list)


def stored_runs(store: str | os.PathLike[str]) -> list[tuple[str, Run]]:
    """(key, run) for every run of the store's index, oldest first."""
    root = Path(store)
    if not root.is_dir():
        raise ReportInputError(root, "no such history store")
    runs = [(e.string("key"), read_summary(root / e.string("key"))) for e in read_index(root)]
    return sorted(runs, key=lambda kr: (kr[1].started, kr[0]))


def point_id(key: str) -> str:
    """A file name for a stored run: its key with '/' as '~' and without '.json'."""
    return key.removesuffix(".json").replace("/", "~")


def make_points(runs: Sequence[tuple[str, Run]]) -> list[Point]:
    points: list[Point] = []
    last: dict[str, Point] = {}
    for key, run in runs:
        keys = run_keys(run)
        keys["gpu_uuids"] = ",".join(d.string("uuid") for d in run.provenance.objs("devices"))
        keys["gpu_config"] = f"{keys['gpu']} x{keys['gpu_count']}"
        p = Point(point_id(key), run, keys, line_of(keys), run_values(run))
        p.href = f"runs/{p.id}.html"
        prev = last.get(p.line)
        if prev is not None:
            p.previous = prev.id
            p.compare_href = f"compare/{p.id}.html"
        last[p.line] = p
        points.append(p)
    return points


def _known(v: str) -> bool:
    return bool(v) and v != "unknown"


def environment_changes(points: Sequence[Point]) -> list[dict[str, Any]]:
    """Per line, where the driver release, toolkit, GPU board or matrix content changed (both sides
    known: a run from before a key was recorded marks nothing)."""
    out = []
    by_id = {p.id: p for p in points}
    for p in points:
        prev = by_id.get(p.previous)
        if prev is None:
            continue
        for key, word in MARKED:
            a, b = prev.keys.get(key, ""), p.keys.get(key, "")
            if _known(a) and _known(b) and a != b:
                text = f"{word} {short_name(a, 24)} → {short_name(b, 24)}"
                out.append({"run": p.id, "line": p.line, "started": p.keys["started"], "what": text})
    return out


def _series_of(points: Sequence[Point], value: Callable[[Point], float | None]) -> dict[str, list[Point]]:
    lines: dict[str, list[Point]] = {}
    for p in points:
        if value(p) is not None:
            lines.setdefault(p.line, []).append(p)
    return lines


def _change_rows(metric: str, unit: str, line: str, pts: Sequence[Point], ys: Sequence[float],
                 extra: dict[str, str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for cp in change_points(ys):
        p = pts[cp.index]
        rows.append({"metric": metric, "unit": unit, "line": line, "run": p.id, "started": p.keys["started"],
                     "revision": p.keys["revision"], "before": cp.before, "after": cp.after,
                     "step": cp.step if cp.before else None,
                     "direction": "worse" if cp.after > cp.before else "better", **(extra or {})})
    return rows


def wall_change_points(points: Sequence[Point]) -> list[dict[str, Any]]:
    out = []
    for line, pts in _series_of(points, lambda p: p.values["wall_s"]).items():
        out += _change_rows("functional-phase wall", "s", line, pts, [p.values["wall_s"] for p in pts])
    return out


def latency_data(points: Sequence[Point]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per (line, probe, series): the runs' medians, ranges and verdicts; and their change points."""
    labels = series_labels([p.run for p in points])
    traces: dict[tuple[str, str, str], dict[str, Any]] = {}
    units: dict[str, str] = {}
    for p in points:
        lat = p.run.latency
        if lat is None:
            continue
        units.update({q.string("name"): q.string("unit") for q in lat.objs("probes")})
        for (probe, series), sp in latency_points(p.run, p.id).items():
            t = traces.setdefault((p.line, probe, series), {
                "line": p.line, "probe": probe, "series": series, "label": labels.get(series, series),
                "short": short_name(labels.get(series, series)), "points": []})
            t["points"].append({"run": sp.run, "median": sp.median, "low": sp.low, "high": sp.high,
                                "verdict": sp.verdict})
    found = []
    by_id = {p.id: p for p in points}
    for t in traces.values():
        t["unit"] = units.get(t["probe"], "")
        pts = [by_id[q["run"]] for q in t["points"]]
        found += _change_rows(f"{t['probe']} {t['label']}", t["unit"], t["line"], pts,
                              [q["median"] for q in t["points"]], {"probe": t["probe"], "series": t["series"]})
    return list(traces.values()), found


def compare_point(p: Point, prev: Point, store: Path) -> dict[str, Any]:
    """`cuparity compare` of the previous comparable run (A) against this one (B): the judge's
    document, or why it could not judge (a message naming the file; the site goes on). It runs in
    the store, so the page names the runs by their keys, not by where the store happened to be."""
    try:
        doc = run_compare(os.path.relpath(prev.run.source, store), os.path.relpath(p.run.source, store),
                          cwd=store)
    except ReportInputError as e:
        return {"error": str(e)}
    counts = doc.get("counts") or {}
    return {"doc": doc, "regressed": bool(doc.get("regressed")), "complete": doc.get("complete") is not False,
            "verdict": doc.get("verdict") or ("regressed" if doc.get("regressed") else "no regression"),
            "regressions": counts.get("regression", 0), "slower": doc.get("slower", 0),
            "new_divergences": len((doc.get("divergences") or {}).get("new") or [])}


def regression_rows(points: Sequence[Point], compares: dict[str, dict[str, Any]],
                    found: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every change point, failed run and run-vs-run regression, newest first."""
    by_id = {p.id: p for p in points}
    rows = []
    for c in found:
        p = by_id[c["run"]]
        step = f"{100 * c['step']:+.1f} %, " if c["step"] is not None else ""
        what = (f"change point: {c['metric']} {c['before']:.4g} → {c['after']:.4g} {c['unit']} "
                f"({step}{c['direction']})")
        rows.append({"kind": "change point", "what": what, "point": p, "direction": c["direction"]})
    for p in points:
        if p.values["verdict"] not in ("equivalent", ""):
            what = (f"run {p.values['verdict']}: {p.values['fail']} not passing, "
                    f"{p.values['divergences']} divergences (the runner's verdict)")
            rows.append({"kind": "run verdict", "what": what, "point": p, "direction": "worse"})
        c = compares.get(p.id) or {}
        if c.get("regressed") or c.get("complete") is False:
            what = (f"compare against the previous run: {c['verdict']} ({c['regressions']} outcome regressions, "
                    f"{c['new_divergences']} new divergences, {c['slower']} slower latency series)")
            rows.append({"kind": "run vs run", "what": what, "point": p, "direction": "worse"})
    rows.sort(key=lambda r: (r["point"].keys["started"], r["point"].id), reverse=True)
    return [{**{k: v for k, v in r.items() if k != "point"}, "run": r["point"].id, "href": r["point"].href,
             "compare_href": r["point"].compare_href, "started": r["point"].keys["started"],
             "revision": r["point"].keys["revision"], "line": r["point"].line} for r in rows]


def _package_text(name: str) -> str:
    text = (resources.files("cuparity_reports") / "templates" / name).read_text(encoding="utf-8")
    if "</script" in text.lower():
        raise ValueError(f"{name} must not contain '</script'")
    return text


def _plotly_js() -> Markup:
    import plotly.offline

    js = plotly.offline.get_plotlyjs()
    if "</script" in js.lower():
        raise ValueError("plotly.js must not contain '</script'")
    return Markup(js)


def data_json(data: dict[str, Any]) -> Markup:
    """JSON for a <script type="application/json"> element: '<', '>' and '&' escaped, so no text
    from a run can end the element or start markup."""
    text = json.dumps(data, sort_keys=True, allow_nan=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _filters(points: Sequence[Point]) -> list[dict[str, Any]]:
    dims = (("matrix", "matrix"), ("gpu_config", "GPU"), ("driver_release", "driver release"),
            ("toolkit", "toolkit"), ("host", "host"))
    return [{"key": k, "label": label, "values": sorted({p.record()[k] for p in points})} for k, label in dims]


def _write(path: Path, text: str, inputs: Sequence[str]) -> None:
    write_atomically(path, text, inputs)  # which makes the folders


def _compare_page(p: Point, prev: Point, c: dict[str, Any]) -> str:
    text = render_text(c["doc"], f"{prev.id} vs {p.id}") if "doc" in c else ""
    return render("compare_page.html", css=stylesheet(), a=prev.record(), b=p.record(), text=text,
                  error=c.get("error", ""), verdict=c.get("verdict", "not judged"),
                  exit_code=exit_code(c["doc"]) if "doc" in c else None, version=__version__)


def write_runs(out: Path, points: Sequence[Point], site: Site, store: Path) -> dict[str, dict[str, Any]]:
    """Each run's dashboard, and its compare page against the previous run of its line."""
    from .dashboard import build

    by_id = {p.id: p for p in points}
    compares: dict[str, dict[str, Any]] = {}
    for p in points:
        # Dated by its own run, not the store: a new run leaves every other run's page as it was.
        _write(out / p.href, build([p.run], title=f"cuparity {p.keys['matrix']} {p.keys['started']}",
                                   generated=f"for the history site (run of {p.keys['started']})"),
               [p.run.source])
        prev = by_id.get(p.previous)
        if prev is None:
            continue
        compares[p.id] = compare_point(p, prev, store)
        if "error" in compares[p.id]:
            site.compare_errors.append(f"{p.id}: {compares[p.id]['error']}")
        _write(out / p.compare_href, _compare_page(p, prev, compares[p.id]), [p.run.source, prev.run.source])
    return compares


def write_site(store: str | os.PathLike[str], output: str | os.PathLike[str], title: str | None = None) -> Site:
    """Writes index.html, regressions.html, runs/ and compare/ into `output` (made if missing)."""
    runs = stored_runs(store)
    if not runs:
        raise ReportInputError(store, "empty history store (nothing to draw: `history add` runs first)")
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise ReportInputError(out, "not a directory (--output names the site's folder)")
    points = make_points(runs)
    site = Site(runs=len(points), lines=len({p.line for p in points}))
    # The index and regressions pages say "as of" the store's newest run rather than the clock, and
    # each run's pages are dated by that run: a rebuild writes the same bytes for what did not
    # change (the committed history does not churn).
    generated = f"as of the store's newest run, {max(p.keys['started'] for p in points)},"
    compares = write_runs(out, points, site, Path(store).resolve())
    traces, latency_found = latency_data(points)
    found = wall_change_points(points) + latency_found
    rows = regression_rows(points, compares, found)
    site.change_points, site.regressions = len(found), len(rows)
    for p in points:
        c = compares.get(p.id) or {}
        p.values["compare_verdict"] = c.get("verdict", "error" if "error" in c else "")
    data = {"runs": [{k: v for k, v in p.record().items()} for p in points], "latency": traces,
            "change_points": found, "environment_changes": environment_changes(points),
            "filters": _filters(points)}
    common = {"css": stylesheet(), "title": title or "cuparity history", "generated": generated,
              "version": __version__, "site": site, "rows": rows}
    inputs = [p.run.source for p in points]
    _write(out / "index.html", render("history_site.html", data=data_json(data), plotly=_plotly_js(),
                                      script=Markup(_package_text("history_site.js")), data_filters=data["filters"],
                                      runs=[p.record() for p in reversed(points)], **common), inputs)
    _write(out / "regressions.html", render("regressions_page.html", **common), inputs)
    return site
