"""Builds the self-contained HTML dashboard (grid, details, latency, history) for one or more runs."""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any, Iterable, Sequence

from . import __version__
from .figures import history_figure, probes_figure
from .history import change_points
from .markup import Markup, el, esc, join, raw_css
from .reader import OK_OUTCOMES, Run

OUTCOME_SYMBOL = {"pass": "", "not_supported": "–", "fail": "✗", "crash": "☠", "timeout": "⧗",
                  "resource_error": "R", "error": "!", "missing": "·"}

CSS = """
:root{--pass:#b6dfb6;--ns:#e3e3e3;--fail:#e53935;--crash:#6a1b9a;--timeout:#ef6c00;--res:#f9a825;
--err:#ad1457;--ink:#1d2329;--muted:#5f6b76;--line:#d7dde3;--bg:#f6f8fa;--div:#ff6f00}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);
margin:0;background:var(--bg)}
main{max-width:1500px;margin:0 auto;padding:14px 22px 40px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:2px solid var(--line);
padding-bottom:4px}h3{font-size:14px;margin:16px 0 6px}
code,.mono{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
.sim-banner{background:repeating-linear-gradient(45deg,#b71c1c,#b71c1c 18px,#c62828 18px,#c62828 36px);
color:#fff;font-weight:800;font-size:20px;letter-spacing:.04em;text-align:center;padding:14px 10px;
border-bottom:4px solid #7f0000}
.sim-banner small{display:block;font-weight:500;font-size:13px;letter-spacing:0}
.head{display:flex;gap:18px;align-items:flex-start;justify-content:space-between;flex-wrap:wrap}
.verdict{font-weight:800;font-size:18px;padding:8px 16px;border-radius:6px;color:#fff;text-transform:uppercase}
.v-equivalent{background:#2e7d32}.v-failed{background:#c62828}.v-environment{background:#ef6c00}
.v-incomplete,.v-unknown{background:#546e7a}
.prov{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:2px 18px;margin:10px 0;
background:#fff;border:1px solid var(--line);border-radius:6px;padding:10px 14px}
.prov div{display:flex;gap:8px;min-width:0}.prov dt{color:var(--muted);min-width:92px;flex:none}
.prov dd{margin:0;overflow-wrap:anywhere}
.chips{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0}
.chip{background:#fff;border:1px solid var(--line);border-radius:14px;padding:3px 11px;font-size:13px}
.chip b{font-size:15px}
.note{background:#fff8e1;border:1px solid #ffe082;border-radius:6px;padding:6px 10px;margin:6px 0}
.scroll{overflow-x:auto;background:#fff;border:1px solid var(--line);border-radius:6px;padding:6px}
table{border-collapse:collapse}
table.data{font-size:12.5px;background:#fff}
table.data th,table.data td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
table.data th{background:#eef2f5;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
#equivalence-grid{font-size:11px}
#equivalence-grid td.o{width:17px;min-width:17px;height:19px;text-align:center;border:1px solid #fff;
padding:0;font-size:11px;line-height:17px;color:#fff;font-weight:700}
#equivalence-grid th.cell{text-align:left;font-weight:500;white-space:nowrap;padding:0 8px 0 4px;
font-family:"DejaVu Sans Mono",Menlo,monospace;font-size:11px;max-width:360px;overflow:hidden;text-overflow:ellipsis}
#equivalence-grid th.cell .bk{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:5px}
#equivalence-grid th.suite{font-size:11px;border-left:2px solid #fff;background:#e4eaef;padding:2px 4px;
text-align:left;white-space:nowrap;overflow:hidden}
#equivalence-grid th.case{height:150px;vertical-align:bottom;padding:0;font-weight:400;font-size:10.5px}
#equivalence-grid th.case div{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;
max-height:148px;overflow:hidden;text-overflow:ellipsis;margin:0 auto}
#equivalence-grid tr.grp th{background:#eef2f5;text-align:left;font-size:11px;padding:3px 6px;font-weight:600}
#equivalence-grid td.first{border-left:2px solid #fff}
.o-pass{background:var(--pass)}.o-not_supported{background:var(--ns);color:#777!important}
.o-fail{background:var(--fail)}.o-crash{background:var(--crash)}.o-timeout{background:var(--timeout)}
.o-resource_error{background:var(--res)}.o-error{background:var(--err)}
.o-missing{background:#fff;color:#aaa!important;outline:1px dashed #c5ccd3;outline-offset:-3px}
#equivalence-grid td.diverges{box-shadow:inset 0 0 0 3px var(--div)}
#equivalence-grid td.diverges.o-pass{color:var(--div)}
td.notrun{background:repeating-linear-gradient(45deg,#fafafa,#fafafa 6px,#eceff1 6px,#eceff1 12px);
color:#b71c1c;font-size:11px;padding:1px 8px}
.legend{display:flex;gap:14px;flex-wrap:wrap;font-size:12px;margin:6px 0;align-items:center}
.legend span.sw{display:inline-block;width:15px;height:15px;vertical-align:-3px;margin-right:4px;border-radius:2px;
text-align:center;color:#fff;font-size:11px;font-weight:700;line-height:15px}
.sw.diverges{box-shadow:inset 0 0 0 3px var(--div)}
.env{font-family:"DejaVu Sans Mono",Menlo,monospace;font-size:11.5px}
.env .unset{color:var(--muted);font-style:italic}
.side td.differs{background:#fff3e0;box-shadow:inset 3px 0 0 var(--div)}
.side th{max-width:240px;overflow-wrap:anywhere}.side th.key{white-space:nowrap;max-width:none}.side td{max-width:380px;overflow-wrap:anywhere}
.side tr.divkey th.key{color:#bf360c}
.verd{font-weight:700;padding:1px 7px;border-radius:10px;color:#fff;font-size:11.5px}
.verd-same{background:#607d8b}.verd-faster{background:#2e7d32}.verd-slower{background:#c62828}
.verd-ambiguous{background:#f9a825;color:#222}
.warn{color:#c62828;font-weight:700}
.figure{background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px;margin:8px 0}
.figure img{max-width:100%;height:auto;display:block}
.muted{color:var(--muted)}
footer{margin-top:30px;color:var(--muted);font-size:12px}
details summary{cursor:pointer;color:#1f5f99}
"""


def _spread(stat: dict) -> float:
    """A series' spread over the rounds: its robust CV where the run recorded one, else its CV."""
    value = stat.get("rcv")
    return float(stat.get("cv") or 0) if value is None else float(value)


def _fmt_num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return "–"
        if isinstance(v, int):
            return str(v)
        return f"{v:.{digits}g}"
    return str(v)


def _json_value(v: Any, limit: int = 240) -> tuple[str, str | None]:
    """Display text of an observation value, and the full text when cut."""
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    if len(text) > limit:
        return text[: limit - 1] + "…", text
    return text, None


def _fmt_p(v: Any) -> str:
    if isinstance(v, (int, float)) and math.isfinite(v) and v < 0.001:
        return "< 0.001"
    return _fmt_num(v, 3)


def _fmt_ratio(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) and math.isfinite(v) else "–"


def _version_text(v: Any) -> str:
    if isinstance(v, int) and v >= 1000:
        return f"{v // 1000}.{(v % 1000) // 10}"
    return _fmt_num(v)


def _backend(cell: dict[str, Any] | None) -> str:
    if not cell or not cell.get("config"):
        return "not started"
    return str(cell["config"].get("binding", "?"))


def _env_text(env: dict[str, Any]) -> str:
    return "\n".join(f"{k}={'<unset>' if v is None else v}" for k, v in sorted((env or {}).items()))


class Dashboard:
    """Renders one run in detail, plus history over `history_runs`."""

    def __init__(self, run: Run, history_runs: Sequence[Run] = (), title: str | None = None) -> None:
        self.run = run
        self.s = run.summary
        self.history_runs = list(history_runs)
        self.title = title
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

    # -- header ---------------------------------------------------------------------------
    def header(self) -> Markup:
        s, prov = self.s, self.run.provenance
        matrix = s.get("matrix") or {}
        verdict = str(s.get("verdict") or "unknown")
        devices = prov.get("devices") or []
        gpu = ", ".join(
            f"{d.get('name', '?')} (sm {d.get('compute_capability', '?')}, "
            f"{_fmt_num((d.get('total_memory') or 0) / 2**30, 3)} GiB)" for d in devices
        ) or ", ".join(prov.get("gpus") or []) or "–"
        rev = str(prov.get("git_revision") or "–")
        items = [
            ("GPU", gpu),
            ("driver", f"{prov.get('driver_version_text', '–')} ({_fmt_num(prov.get('driver_version'))})"),
            ("driver path", prov.get("driver_path", "–")),
            ("toolkit", _version_text(prov.get("toolkit_version"))),
            ("git revision", f"{rev[:12]}{' (dirty tree)' if prov.get('git_dirty') else ''}"),
            ("host", prov.get("host", "–")),
            ("matrix", f"{matrix.get('name', '–')} ({matrix.get('path', '')})"),
            ("description", matrix.get("description") or "–"),
            ("started", s.get("started") or "–"),
            ("finished", s.get("finished") or "–"),
            ("functional", f"{_fmt_num(s.get('functional_wall_s'), 3)} s" if s.get("functional_wall_s") is not None else "–"),
            ("shard", s.get("shard") or "all"),
            ("cuparity", prov.get("cuparity_version", "–")),
        ]
        prov_dl = el("dl", [el("div", el("dt", k), el("dd", v, title=v if k in ("driver path",) else None))
                            for k, v in items], class_="prov", id="provenance")
        counts = s.get("counts") or {}
        chips = [el("span", el("b", _fmt_num(s.get("results_count", sum(counts.values())))), " results", class_="chip"),
                 el("span", el("b", len(self.cells)), " cells", class_="chip"),
                 el("span", el("b", len(self.group_keys)), " semantic groups", class_="chip")]
        for k in sorted(counts):
            chips.append(el("span", el("span", OUTCOME_SYMBOL.get(k, ""), class_=f"sw o-{k}"), " ",
                            el("b", counts[k]), f" {k}", class_="chip legend"))
        chips.append(el("span", el("b", len(s.get("problems") or [])), " problems", class_="chip"))
        chips.append(el("span", el("b", len(s.get("divergences") or [])), " divergences", class_="chip"))
        chips.append(el("span", el("b", _fmt_num(s.get("allowed", 0))), " allowed non-passes", class_="chip"))
        title = self.title or f"cuparity: {matrix.get('name', 'run')}"
        notes = [el("div", n, class_="note") for n in self.run.notes]
        if not self.s.get("results"):
            notes.append(el("div", "This run has no results (no case ran in any cell).", class_="note"))
        return join([
            el("div", el("div", el("h1", title),
                         el("div", f"{gpu} · driver {prov.get('driver_version_text', '?')} · "
                                   f"{s.get('started', '')}", class_="muted")),
               el("div", verdict, class_=f"verdict v-{verdict}", id="verdict",
                  title=f"exit code {s.get('exit_code')}"), class_="head"),
            prov_dl, el("div", chips, class_="chips"), notes,
        ])

    # -- equivalence grid ------------------------------------------------------------------
    def cases(self) -> list[str]:
        return sorted({case for _, case in self.results})

    def grid(self) -> Markup:
        cases = self.cases()
        if not self.cells:
            return el("p", "No cells in this run.", class_="muted")
        suites: list[tuple[str, int]] = []
        for c in cases:
            suite = c.split(".")[0]
            if suites and suites[-1][0] == suite:
                suites[-1] = (suite, suites[-1][1] + 1)
            else:
                suites.append((suite, 1))
        first_of_suite = set()
        prev = None
        for c in cases:
            if c.split(".")[0] != prev:
                first_of_suite.add(c)
                prev = c.split(".")[0]
        head1 = el("tr", el("th", ""), [el("th", s, colspan=n, class_="suite", title=s) for s, n in suites])
        head2 = el("tr", el("th", "cell (hover for its environment)", class_="cell", style="vertical-align:bottom"),
                   [el("th", el("div", c.split(".", 1)[-1]), class_="case", title=c) for c in cases])
        rows = []
        groups: dict[str, list[dict[str, Any]]] = {}
        for c in self.cells:
            groups.setdefault(str(c.get("group") or ""), []).append(c)
        ordered = [k for k in self.group_keys if k in groups] + [k for k in groups if k not in self.group_keys]
        width = len(cases) + 1
        for gkey in ordered:
            label = (f"{self.group_name[gkey]}: {gkey}" if gkey else "cells that never started")
            rows.append(el("tr", el("th", label, colspan=width), class_="grp"))
            for cell in groups[gkey]:
                rows.append(self._grid_row(cell, cases, first_of_suite))
        legend = el("div", [el("span", el("span", OUTCOME_SYMBOL.get(o, ""), class_=f"sw o-{o}"), o)
                            for o in ("pass", "not_supported", "fail", "crash", "timeout", "resource_error",
                                      "error", "missing")],
                    el("span", el("span", "", class_="sw o-pass diverges"), "diverges within its group"),
                    [el("span", el("span", "", class_="sw", style=f"background:{c}"), f"{b} binding")
                     for b, c in (("internal", "#1f6fb4"), ("nvidia", "#e07b00"))],
                    class_="legend")
        table = el("table", el("thead", head1, head2), el("tbody", rows), id="equivalence-grid",
                   data_cells=len(self.cells), data_cases=len(cases))
        return join([legend, el("div", table, class_="scroll")])

    def _grid_row(self, cell: dict[str, Any], cases: list[str], first: set[str]) -> Markup:
        cid = str(cell.get("id"))
        config = cell.get("config")
        label = cell.get("label") or ""
        backend = _backend(cell)
        fallback = bool(config and config.get("fallback"))
        tip = f"{cid}{' [' + label + ']' if label else ''}\nbinding: {backend}{' (fallback)' if fallback else ''}"
        if config:
            tip += f"\nstream0: {config.get('stream0', '?')}"
        tip += "\n" + _env_text(cell.get("env") or {})
        swatch = {"internal": "#1f6fb4", "nvidia": "#e07b00"}.get(backend, "#bbb")
        th = el("th", el("span", "", class_="bk", style=f"background:{swatch}"),
                cid + ("*" if fallback else ""), class_="cell", title=tip)
        if config is None and not any((cid, c) in self.results for c in cases):
            err = next((p.get("message", "") for p in self.s.get("problems") or []
                        if p.get("cell") == cid and p.get("kind") == "cell_error"), "")
            return el("tr", th, el("td", f"not started{': ' + err if err else ''}", colspan=max(1, len(cases)),
                                   class_="notrun", title=err or None),
                      class_="cell-row", data_cell=cid)
        tds = []
        gkey = str(cell.get("group") or "")
        for case in cases:
            r = self.results.get((cid, case))
            outcome = str(r.get("outcome")) if r else "missing"
            divs = self.diverging.get((gkey, case), [])
            cell_divs = [d for d in divs if cid in (d.get("values") or {})]
            cls = f"o o-{outcome}" + (" diverges" if cell_divs else "") + (" first" if case in first else "")
            t = f"{case}\n{cid}\noutcome: {outcome}"
            if r and r.get("message"):
                t += f"\nmessage: {r.get('message')}"
            if r and r.get("duration_ms") is not None:
                t += f"\n{_fmt_num(r.get('duration_ms'), 3)} ms"
            for d in cell_divs:
                t += f"\nDIVERGES on {d.get('key')}: {_json_value((d.get('values') or {}).get(cid), 80)[0]}"
            sym = "◆" if cell_divs and outcome == "pass" else OUTCOME_SYMBOL.get(outcome, "?")
            tds.append(el("td", sym, class_=cls, title=t))
        return el("tr", th, tds, class_="cell-row", data_cell=cid)

    # -- cells legend ----------------------------------------------------------------------
    def cells_table(self) -> Markup:
        rows = []
        for c in self.cells:
            config = c.get("config") or {}
            env = c.get("env") or {}
            env_m = [join([el("span", k), "=", el("span", "unset", class_="unset") if v is None else el("b", v),
                           el("br")]) for k, v in sorted(env.items())]
            counts = c.get("counts") or {}
            startup = c.get("startup_ms") or {}
            warnings = config.get("warnings") or []
            rows.append(el("tr",
                           el("td", c.get("id"), class_="mono"), el("td", c.get("label") or ""),
                           el("td", _backend(c) + (" (fallback)" if config.get("fallback") else ""),
                              title=config.get("fallback_reason") or None),
                           el("td", config.get("stream0", "–")),
                           el("td", self.group_name.get(str(c.get("group")), "–"), title=c.get("group") or None),
                           el("td", env_m, class_="env"),
                           el("td", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "–"),
                           el("td", " / ".join(_fmt_num(startup.get(k), 3) for k in ("cuInit", "primary_ctx_retain"))
                              if startup else "–", class_="num"),
                           el("td", "; ".join(str(w) for w in warnings) or ""),
                           ))
        head = el("tr", [el("th", h) for h in ("cell", "label", "binding", "stream0", "group", "environment",
                                              "outcomes", "startup ms (cuInit / ctx)", "warnings")])
        groups = el("ul", [el("li", el("b", self.group_name[k]), ": ", el("code", k)) for k in self.group_keys])
        return join([groups, el("div", el("table", el("thead", head), el("tbody", rows), class_="data",
                                          id="cells-legend"), class_="scroll")])

    # -- divergence and failure details ----------------------------------------------------
    def details(self) -> Markup:
        problems = self.s.get("problems") or []
        topics: dict[tuple[str, str], dict[str, Any]] = {}
        for (gkey, case), divs in self.diverging.items():
            topics.setdefault((gkey, case), {"divs": [], "problems": []})["divs"] += divs
        loose = []
        for p in problems:
            cell = self.cell_by_id.get(str(p.get("cell")))
            case = str(p.get("case") or "")
            if case and cell is not None:
                gkey = str(cell.get("group") or "")
                topics.setdefault((gkey, case), {"divs": [], "problems": []})["problems"].append(p)
            else:
                loose.append(p)
        if not topics and not loose:
            return el("p", "No divergences and no problems.", class_="muted", id="no-problems")
        parts = []
        if loose:
            parts.append(el("h3", "Problems not tied to a case"))
            parts.append(el("table", el("tr", el("th", "kind"), el("th", "cell"), el("th", "message")),
                            [el("tr", el("td", p.get("kind")), el("td", p.get("cell"), class_="mono"),
                                el("td", p.get("message"))) for p in loose], class_="data"))
        for (gkey, case), t in sorted(topics.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            parts.append(self._side_by_side(gkey, case, t["divs"], t["problems"]))
        return join(parts)

    def _side_by_side(self, gkey: str, case: str, divs: list[dict[str, Any]],
                      problems: list[dict[str, Any]]) -> Markup:
        cells = [c for c in self.cells if str(c.get("group") or "") == gkey and (str(c.get("id")), case) in self.results]
        for p in problems:
            if not any(c.get("id") == p.get("cell") for c in cells) and p.get("cell") in self.cell_by_id:
                cells.append(self.cell_by_id[str(p.get("cell"))])
        ids = [str(c.get("id")) for c in cells]
        div_keys = {str(d.get("key")) for d in divs}
        obs_keys = sorted({k for cid in ids for k in ((self.results.get((cid, case)) or {}).get("observations") or {})})
        rows_spec = [("outcome", lambda r: r.get("outcome")), ("message", lambda r: r.get("message") or "")]
        rows_spec += [(f"observations.{k}", (lambda k: lambda r: (r.get("observations") or {}).get(k, None))(k))
                      for k in obs_keys]
        problem_cells = {str(p.get("cell")) for p in problems}
        head = el("tr", el("th", ""), [el("th", cid, class_="mono" + (" warn" if cid in problem_cells else ""),
                                          title=_env_text(self.cell_by_id.get(cid, {}).get("env") or {}))
                                       for cid in ids])
        body = []
        for key, get in rows_spec:
            values = []
            for cid in ids:
                r = self.results.get((cid, case))
                values.append(get(r) if r else None)
            texts = [_json_value(v) for v in values]
            counts: dict[str, int] = {}
            for text, _ in texts:
                counts[text] = counts.get(text, 0) + 1
            majority = max(counts, key=lambda k: counts[k]) if counts else ""
            differs = len(counts) > 1
            tds = [el("td", text if (cid, case) in self.results else "(no result)",
                      class_="mono" + (" differs" if differs and text != majority else ""),
                      title=full) for cid, (text, full) in zip(ids, texts)]
            body.append(el("tr", el("th", key, class_="key"), tds, class_="divkey" if key in div_keys else None))
        what = []
        if divs:
            what.append(f"diverges on {', '.join(sorted(div_keys))}")
        if problems:
            what.append(f"{len(problems)} problem(s): " + "; ".join(
                f"{p.get('kind')} in {p.get('cell')}" for p in problems))
        return join([
            el("h3", el("code", case), " in ", el("span", self.group_name.get(gkey, "?"), title=gkey),
               el("span", f" — {'; '.join(what)}", class_="muted")),
            el("div", el("table", el("thead", head), el("tbody", body), class_="data side"), class_="scroll"),
        ])

    # -- latency --------------------------------------------------------------------------
    def backend_of_series(self, run: Run | None = None) -> dict[str, str]:
        run = run or self.run
        cells = {str(c.get("id")): c for c in run.summary.get("cells") or []}
        out: dict[str, str] = {}
        for probe in (run.latency or {}).get("probes") or []:
            for series in probe.get("samples") or {}:
                if series.startswith("direct:"):
                    out[series] = "direct"
                else:
                    out[series] = _backend(cells.get(series)) if series in cells else series
        return out

    def latency(self) -> Markup | None:
        lat = self.run.latency
        if not lat:
            return None
        probes = [p for p in lat.get("probes") or [] if p.get("samples")]
        backend_of = self.backend_of_series()
        parts: list[Any] = []
        envd = lat.get("environment") or {}
        env_items = [f"{k}: {_fmt_num(v) if not isinstance(v, (list, dict)) else json.dumps(v)}"
                     for k, v in sorted(envd.items())]
        parts.append(el("p", f"{_fmt_num(lat.get('rounds'))} rounds. ", "; ".join(env_items) or
                        "GPU clocks and temperature unreadable.", class_="muted"))
        if probes:
            parts.append(el("div", el("img", src=probes_figure(probes, backend_of),
                                      alt="latency per probe and series: samples, median, 95% interval"),
                            el("div", "Dots: one per round. Diamond: median. Bar: 95% bootstrap interval of the "
                                      "median. Blue internal, orange nvidia, grey direct (no facade).",
                               class_="muted"), class_="figure", id="latency-figure"))
        units = {p.get("name"): p.get("unit", "") for p in lat.get("probes") or []}
        stats = lat.get("stats") or []
        if stats:
            parts.append(el("h3", "Per-series statistics"))
            # The noise target applies to the robust CV (MAD-based, what the median comparisons
            # depend on); older summaries without it fall back to the CV.
            target_cv = float((lat.get("noise") or {}).get("target_cv") or 0.03)
            noise = lat.get("noise") or {}
            if noise:
                over = sorted({str(o.get("probe")) for o in noise.get("over_target") or []})
                text = (f"Noise: {len(over)} of {len(lat.get('probes') or [])} probes spread beyond the "
                        f"{_fmt_num(target_cv * 100, 3)}% robust-CV target"
                        + (f" ({', '.join(over)})" if over else "") + ".")
                ref = noise.get("reference")
                if isinstance(ref, dict):
                    text += (f" The driver-free {ref.get('probe')} spread up to "
                             f"{_fmt_num((ref.get('rcv_max') or 0) * 100, 3)}% over the same rounds: "
                             "the host's own share.")
                parts.append(el("p", text, class_="muted", id="latency-noise"))
            parts.append(el("table", el("tr", [el("th", h) for h in ("probe", "series", "backend", "median",
                                                                     "robust CV", "CV", "n")]),
                            [el("tr", el("td", s.get("probe")), el("td", s.get("series"), class_="mono"),
                                el("td", backend_of.get(str(s.get("series")), "")),
                                el("td", f"{_fmt_num(s.get('median'))} {units.get(s.get('probe'), '')}", class_="num"),
                                el("td", f"{_fmt_num(_spread(s) * 100, 3)} %",
                                   class_="num" + (" warn" if _spread(s) > target_cv else ""),
                                   title=(f"above the {_fmt_num(target_cv * 100, 3)}% noise target"
                                          if _spread(s) > target_cv else None)),
                                el("td", f"{_fmt_num((s.get('cv') or 0) * 100, 3)} %", class_="num"),
                                el("td", _fmt_num(s.get("n")), class_="num")) for s in stats],
                            class_="data", id="latency-stats"))
        for title, rows, ident in (("Backend vs backend (same semantic group)", lat.get("comparisons") or [],
                                    "latency-comparisons"),
                                   ("Against the baseline run", lat.get("baseline") or [], "latency-baseline")):
            if not rows:
                continue
            parts.append(el("h3", title))
            parts.append(el("table",
                            el("tr", [el("th", h) for h in ("probe", "group", "A", "B", "median A", "median B",
                                                            "ratio B/A", "95% CI", "p (Mann-Whitney)",
                                                            "verdict")]),
                            [el("tr", el("td", c.get("probe")),
                                el("td", self.group_name.get(str(c.get("group")), c.get("group") or ""),
                                   title=c.get("group") or None),
                                el("td", c.get("a"), class_="mono"), el("td", c.get("b"), class_="mono"),
                                el("td", _fmt_num(c.get("median_a")), class_="num"),
                                el("td", _fmt_num(c.get("median_b")), class_="num"),
                                el("td", _fmt_ratio(c.get("ratio")), class_="num"),
                                el("td", f"[{_fmt_ratio(c.get('ci_low'))}, {_fmt_ratio(c.get('ci_high'))}]",
                                   class_="num"),
                                el("td", _fmt_p(c.get("p_value")), class_="num"),
                                el("td", el("span", c.get("verdict"), class_=f"verd verd-{c.get('verdict')}"),
                                   el("span", " REGRESSION", class_="warn") if c.get("regression") else None))
                             for c in rows], class_="data", id=ident))
        overhead = lat.get("overhead") or []
        if overhead:
            parts.append(el("h3", "Facade overhead (facade call vs direct pointer, same process)"))
            parts.append(el("table",
                            el("tr", [el("th", h) for h in ("probe", "series", "ratio", "95% CI", "delta")]),
                            [el("tr", el("td", o.get("probe")), el("td", o.get("series"), class_="mono"),
                                el("td", _fmt_ratio(o.get("ratio")), class_="num"),
                                el("td", f"[{_fmt_ratio(o.get('ci_low'))}, {_fmt_ratio(o.get('ci_high'))}]",
                                   class_="num"),
                                el("td", f"{_fmt_num(o.get('delta'), 3)} {units.get(o.get('probe'), '')}",
                                   class_="num")) for o in overhead], class_="data", id="latency-overhead"))
        return join(parts)

    # -- history ---------------------------------------------------------------------------
    def history(self) -> Markup | None:
        runs = self.history_runs
        if len(runs) < 2:
            return None
        labels = [f"{r.started[:16].replace('T', ' ')} {str(r.provenance.get('git_revision', ''))[:7]}" for r in runs]
        nonpass = [float(sum(v for k, v in (r.summary.get("counts") or {}).items() if k not in OK_OUTCOMES))
                   for r in runs]
        count_series: dict[str, list[float | None]] = {
            "pass": [float((r.summary.get("counts") or {}).get("pass", 0)) for r in runs],
            "non-pass": list(nonpass),
            "divergences": [float(len(r.summary.get("divergences") or [])) for r in runs],
        }
        probe_series: dict[str, dict[str, list[float | None]]] = {}
        units: dict[str, str] = {}
        for i, r in enumerate(runs):
            lat = r.latency or {}
            backend_of = self.backend_of_series(r)
            for p in lat.get("probes") or []:
                name = str(p.get("name"))
                units[name] = str(p.get("unit", ""))
                per_backend: dict[str, list[float]] = {}
                for series, vals in (p.get("samples") or {}).items():
                    if vals:
                        s_sorted = sorted(float(v) for v in vals)
                        mid = len(s_sorted) // 2
                        med = s_sorted[mid] if len(s_sorted) % 2 else (s_sorted[mid - 1] + s_sorted[mid]) / 2
                        per_backend.setdefault(backend_of.get(series, series), []).append(med)
                for backend, meds in per_backend.items():
                    meds.sort()
                    mid = len(meds) // 2
                    value = meds[mid] if len(meds) % 2 else (meds[mid - 1] + meds[mid]) / 2
                    probe_series.setdefault(name, {}).setdefault(backend, [None] * len(runs))[i] = value
        marks: dict[tuple[str, str], list[int]] = {}
        found_rows = []
        for name, ys in count_series.items():
            cps = change_points(ys)
            marks[("counts", name)] = [cp.index for cp in cps]
            found_rows += [("results", name, cp) for cp in cps]
        for probe, series in probe_series.items():
            for backend, ys in series.items():
                cps = change_points(ys)
                marks[(probe, backend)] = [cp.index for cp in cps]
                found_rows += [(probe, backend, cp) for cp in cps]
        drivers = [str(r.provenance.get("driver_version_text") or r.provenance.get("driver_version") or "?")
                   for r in runs]
        driver_changes = [(i, drivers[i]) for i in range(1, len(runs)) if drivers[i] != drivers[i - 1]]
        changed_at = {i for i, _ in driver_changes}
        cp_at: dict[int, list[str]] = {}
        for what, series, cp in found_rows:
            cp_at.setdefault(cp.index, []).append(f"{what}/{series}")
        probe_names = sorted(probe_series)
        head = el("tr", [el("th", h) for h in ("#", "started", "host", "GPU", "driver", "revision", "matrix",
                                              "verdict", "pass", "non-pass", "divergences")],
                  [el("th", f"{p} median ({units.get(p, '')})") for p in probe_names], el("th", "change points"))
        rows = []
        for i, r in enumerate(runs):
            prov = r.provenance
            counts = r.summary.get("counts") or {}
            rev = str(prov.get("git_revision") or "")[:10] + ("+dirty" if prov.get("git_dirty") else "")
            med_cells = []
            for p in probe_names:
                vals = [f"{b} {_fmt_num(v)}" for b, ys in sorted(probe_series[p].items()) if (v := ys[i]) is not None]
                med_cells.append(el("td", ", ".join(vals) or "–", class_="num"))
            rows.append(el("tr",
                           el("td", i + 1, class_="num"),
                           el("td", r.started),
                           el("td", prov.get("host", "")),
                           el("td", (prov.get("gpus") or ["–"])[0],
                              el("b", " SIMULATED", class_="warn") if r.simulated else None),
                           el("td", drivers[i], el("b", " ▲ changed", class_="warn") if i in changed_at else None),
                           el("td", rev, class_="mono"),
                           el("td", (r.summary.get("matrix") or {}).get("name", "")),
                           el("td", r.summary.get("verdict", "")),
                           el("td", counts.get("pass", 0), class_="num"),
                           el("td", int(nonpass[i]), class_="num"),
                           el("td", len(r.summary.get("divergences") or []), class_="num"),
                           med_cells,
                           el("td", ", ".join(cp_at.get(i, [])), class_="warn"),
                           ))
        img = history_figure(labels, count_series, probe_series, driver_changes, marks, units)
        method = ("Change points: a run is flagged where the median of the 3 runs from it on differs from the "
                  "median of the 3 runs before it by more than 10% (of the smaller), and that shift is the "
                  "largest nearby. Dashed lines: driver version changes.")
        return join([
            el("p", f"{len(runs)} runs, oldest first. ", method, class_="muted"),
            el("div", el("table", el("thead", head), el("tbody", rows), class_="data", id="history-table"),
               class_="scroll"),
            el("div", el("img", src=img, alt="history of counts and latency medians"), class_="figure",
               id="history-figure"),
        ])

    # -- page --------------------------------------------------------------------------------
    def render(self) -> str:
        banner = None
        if self.run.simulated or any(r.simulated for r in self.history_runs):
            which = "this run" if self.run.simulated else "some runs in the history"
            banner = el("div", "SIMULATED DRIVER — NOT A GPU",
                        el("small", f"{which} ran on cuparity's CPU stand-in for libcuda; "
                                    "nothing here describes a real driver or GPU."),
                        class_="sim-banner", id="simulated-banner", role="alert")
        sections = [
            el("h2", "Equivalence grid", id="grid"),
            el("p", "One row per cell (an environment), one column per case; grouped by semantic group. "
                    "Cells in one group must agree on every outcome and observation. "
                    "Hover a row for its environment, a square for the result.", class_="muted"),
            self.grid(),
            el("h2", "Cells and environments", id="cells"),
            self.cells_table(),
            el("h2", "Divergences and failures", id="details"),
            self.details(),
        ]
        lat = self.latency()
        if lat is not None:
            sections += [el("h2", "Latency", id="latency"), lat]
        hist = self.history()
        if hist is not None:
            sections += [el("h2", "History", id="history"), hist]
        now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        footer = el("footer", f"Generated {now} by cuparity_reports {__version__} from {self.run.source}.")
        title = self.title or f"cuparity {(self.s.get('matrix') or {}).get('name', '')} {self.run.started}"
        page = el("html",
                  el("head", el("meta", charset="utf-8"),
                     el("meta", name="viewport", content="width=device-width, initial-scale=1"),
                     el("title", ("[SIMULATED] " if self.run.simulated else "") + title),
                     raw_css(CSS)),
                  el("body", banner, el("main", self.header(), sections, footer)),
                  lang="en")
        return "<!DOCTYPE html>\n" + page + "\n"


def _identity(run: Run) -> tuple[str, str, str]:
    prov = run.provenance
    return (run.started, str(prov.get("git_revision", "")), str(prov.get("host", "")))


def build(runs: Sequence[Run], history: Iterable[Run] = (), title: str | None = None) -> str:
    """The dashboard: the newest of `runs` in detail; all runs plus `history` in the history section."""
    if not runs:
        raise ValueError("no runs")
    ordered = sorted(runs, key=lambda r: r.started)
    seen: dict[tuple[str, str, str], Run] = {}
    for r in list(history) + ordered:
        seen[_identity(r)] = r
    timeline = sorted(seen.values(), key=lambda r: r.started)
    return Dashboard(ordered[-1], timeline, title).render()
