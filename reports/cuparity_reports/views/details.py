"""Divergences and failures: problems not tied to a case, and each case's observations side by side per cell."""

from __future__ import annotations

from typing import Any, Callable

from ..formatting import env_text, json_value
from .run_index import RunIndex

Topics = dict[tuple[str, str], dict[str, list[dict[str, Any]]]]


def topics_and_loose(ix: RunIndex) -> tuple[Topics, list[dict[str, Any]]]:
    """(group, case) -> its divergences and problems; and the problems that name no case or cell."""
    topics: Topics = {}
    for key, divs in ix.diverging.items():
        topics.setdefault(key, {"divs": [], "problems": []})["divs"] += divs
    loose = []
    for p in ix.s.get("problems") or []:
        cell = ix.cell_by_id.get(str(p.get("cell")))
        case = str(p.get("case") or "")
        if case and cell is not None:
            gkey = str(cell.get("group") or "")
            topics.setdefault((gkey, case), {"divs": [], "problems": []})["problems"].append(p)
        else:
            loose.append(p)
    return topics, loose


def topic_cells(ix: RunIndex, gkey: str, case: str, problems: list[dict[str, Any]]) -> list[str]:
    """The group's cells with a result for the case, then any other cell with a problem in it."""
    cells = [c for c in ix.cells if str(c.get("group") or "") == gkey and (str(c.get("id")), case) in ix.results]
    for p in problems:
        if not any(c.get("id") == p.get("cell") for c in cells) and p.get("cell") in ix.cell_by_id:
            cells.append(ix.cell_by_id[str(p.get("cell"))])
    return [str(c.get("id")) for c in cells]


def row_getters(ix: RunIndex, ids: list[str], case: str) -> list[tuple[str, Callable[[dict], Any]]]:
    obs_keys = sorted({k for cid in ids for k in ((ix.results.get((cid, case)) or {}).get("observations") or {})})
    rows: list[tuple[str, Callable[[dict], Any]]] = [("outcome", lambda r: r.get("outcome")),
                                                     ("message", lambda r: r.get("message") or "")]
    rows += [(f"observations.{k}", (lambda k: lambda r: (r.get("observations") or {}).get(k, None))(k))
             for k in obs_keys]
    return rows


def side_row(ix: RunIndex, ids: list[str], case: str, get: Callable[[dict], Any]) -> list[dict[str, Any]]:
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


def side_by_side(ix: RunIndex, gkey: str, case: str, divs: list[dict[str, Any]],
                 problems: list[dict[str, Any]]) -> dict[str, Any]:
    ids = topic_cells(ix, gkey, case, problems)
    div_keys = {str(d.get("key")) for d in divs}
    problem_cells = {str(p.get("cell")) for p in problems}
    what = []
    if divs:
        what.append(f"diverges on {', '.join(sorted(div_keys))}")
    if problems:
        what.append(f"{len(problems)} problem(s): "
                    + "; ".join(f"{p.get('kind')} in {p.get('cell')}" for p in problems))
    return {
        "case": case, "group": ix.group_name.get(gkey, "?"), "group_key": gkey, "what": f" — {'; '.join(what)}",
        "columns": [{"cid": cid, "cls": "mono" + (" warn" if cid in problem_cells else ""),
                     "title": env_text(ix.cell_by_id.get(cid, {}).get("env") or {})} for cid in ids],
        "rows": [{"key": key, "cls": "divkey" if key in div_keys else None, "cells": side_row(ix, ids, case, get)}
                 for key, get in row_getters(ix, ids, case)],
    }


def details_view(ix: RunIndex) -> dict[str, Any]:
    topics, loose = topics_and_loose(ix)
    ordered = sorted(topics.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    return {
        "nothing": not topics and not loose,
        "loose": [{"kind": p.get("kind"), "cell": p.get("cell"), "message": p.get("message")} for p in loose],
        "topics": [side_by_side(ix, gkey, case, t["divs"], t["problems"]) for (gkey, case), t in ordered],
    }
