"""Divergences and failures: problems not tied to a case, and each case's observations side by side per cell."""

from __future__ import annotations

from typing import Any, Callable

from ..formatting import env_text, json_value
from ..json_input import REQUIRED, Obj
from .run_index import RunIndex

Topics = dict[tuple[str, str], dict[str, list[Obj]]]


def topics_and_loose(ix: RunIndex) -> tuple[Topics, list[Obj]]:
    """(group, case) -> its divergences and problems; and the problems that name no case or cell."""
    topics: Topics = {}
    for key, divs in ix.diverging.items():
        topics.setdefault(key, {"divs": [], "problems": []})["divs"] += divs
    loose = []
    for p in ix.problems:
        cell = ix.cell_by_id.get(p.string("cell"))
        case = p.string("case")
        if case and cell is not None:
            gkey = cell.string("group")
            topics.setdefault((gkey, case), {"divs": [], "problems": []})["problems"].append(p)
        else:
            loose.append(p)
    return topics, loose


def topic_cells(ix: RunIndex, gkey: str, case: str, problems: list[Obj]) -> list[str]:
    """The group's cells with a result for the case, then any other cell with a problem in it."""
    ids = [c.string("id") for c in ix.cells if c.string("group") == gkey and (c.string("id"), case) in ix.results]
    for p in problems:
        cell = p.string("cell")
        if cell not in ids and cell in ix.cell_by_id:
            ids.append(cell)
    return ids


def row_getters(ix: RunIndex, ids: list[str], case: str) -> list[tuple[str, Callable[[Obj], Any]]]:
    obs_keys = sorted({k for cid in ids if (cid, case) in ix.results
                       for k in ix.results[(cid, case)].obj("observations").keys()})
    rows: list[tuple[str, Callable[[Obj], Any]]] = [("outcome", lambda r: r.string("outcome", REQUIRED)),
                                                    ("message", lambda r: r.string("message"))]
    rows += [(f"observations.{k}", (lambda k: lambda r: r.obj("observations").raw(k))(k)) for k in obs_keys]
    return rows


def side_row(ix: RunIndex, ids: list[str], case: str, get: Callable[[Obj], Any]) -> list[dict[str, Any]]:
    """One field across the cells; values other than the most common one are marked as differing."""
    texts = []
    for cid in ids:
        r = ix.results.get((cid, case))
        texts.append(json_value(get(r) if r else None))
    counts: dict[str, int] = {}
    for text, _ in texts:
        counts[text] = counts.get(text, 0) + 1
    majority = max(counts, key=lambda k: counts[k]) if counts else ""
    differs = len(counts) > 1
    return [{"text": text if (cid, case) in ix.results else "(no result)",
             "cls": "mono" + (" differs" if differs and text != majority else ""), "title": full}
            for cid, (text, full) in zip(ids, texts)]


def binding_rows(divs: list[Obj], ids: list[str]) -> list[dict[str, Any]]:
    """The judge's binding differences beside a divergence of external suites' cells: one row per
    function bound to other symbols (each cell's symbols, how bound), then one naming the functions
    bound to the same symbols another way. Rendered as the judge listed them, never recomputed."""
    diffs = next((d.objs("bindings") for d in divs if d.items("bindings")), [])
    rows, same = [], []
    for b in diffs:
        function = b.string("function", REQUIRED)
        if b.boolean("same_symbols"):
            same.append(function)
            continue
        cells = b.obj("cells", REQUIRED)
        texts = [", ".join(cells.strings(cid)) if cid in cells.value else "" for cid in ids]
        counts = {t: texts.count(t) for t in texts}
        majority = max(counts, key=lambda t: counts[t]) if counts else ""
        rows.append({"key": f"bound: {function}", "cls": "divkey",
                     "cells": [{"text": t or "nothing", "title": t,
                                "cls": "mono" + (" differs" if len(counts) > 1 and t != majority else "")}
                               for t in texts]})
    if same:
        rows.append({"key": f"bound the same symbols another way ({len(same)})", "cls": None,
                     "cells": [{"text": ", ".join(same), "title": ", ".join(same), "cls": "mono"}]
                              + [{"text": "", "title": "", "cls": "mono"} for _ in ids[1:]]})
    return rows


def side_by_side(ix: RunIndex, gkey: str, case: str, divs: list[Obj], problems: list[Obj]) -> dict[str, Any]:
    ids = topic_cells(ix, gkey, case, problems)
    div_keys = {d.string("key") for d in divs}
    problem_cells = {p.string("cell") for p in problems}
    what = []
    if divs:
        what.append(f"diverges on {', '.join(sorted(div_keys))}")
    if problems:
        what.append(f"{len(problems)} problem(s): "
                    + "; ".join(f"{p.string('kind')} in {p.string('cell')}" for p in problems))
    return {
        "case": case, "group": ix.group_name.get(gkey, "?"), "group_key": gkey, "what": f" — {'; '.join(what)}",
        "columns": [{"cid": cid, "cls": "mono" + (" warn" if cid in problem_cells else ""),
                     "title": env_text(ix.cell_by_id[cid].string_map("env", nullable=True)
                                       if cid in ix.cell_by_id else {})} for cid in ids],
        "rows": [{"key": key, "cls": "divkey" if key in div_keys else None, "cells": side_row(ix, ids, case, get)}
                 for key, get in row_getters(ix, ids, case)] + binding_rows(divs, ids),
    }


def details_view(ix: RunIndex) -> dict[str, Any]:
    topics, loose = topics_and_loose(ix)
    ordered = sorted(topics.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    return {
        "nothing": not topics and not loose,
        "loose": [{"kind": p.string("kind"), "cell": p.string("cell"), "message": p.string("message")}
                  for p in loose],
        "topics": [side_by_side(ix, gkey, case, t["divs"], t["problems"]) for (gkey, case), t in ordered],
    }
