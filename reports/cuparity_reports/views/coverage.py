"""The judge's coverage of the detailed run: its planned (cell, case) pairs against its results.

Everything shown is summary.json's `coverage` section as the judge wrote it: whether the run is
complete, its message, and the missing, duplicated and unplanned pairs it listed (at most 200 a
list; the counts are not capped). Older summaries have no such section and show none.
"""

from __future__ import annotations

from typing import Any

from ..formatting import fmt_num
from ..json_input import REQUIRED, Obj, describe
from .run_index import RunIndex

# (member, what its pairs are): the order of the judge's message.
LISTS = (("missing", "planned pairs without a result"),
         ("duplicated", "planned pairs with more than one result"),
         ("unplanned", "results that belong to no planned pair"))


def count(cov: Obj, key: str) -> int:
    n = cov.integer(key, REQUIRED)
    if n < 0:
        raise cov.error(key, f"expected a count, got {describe(n)}")
    return n


def pair_list(cov: Obj, name: str, what: str) -> dict[str, Any]:
    """One list of pairs as recorded, and whether the judge listed fewer than it counted."""
    pairs = [{"cell": p.string("cell", REQUIRED), "case": p.string("case", REQUIRED)}
             for p in cov.objs(name, REQUIRED)]
    total = count(cov, f"{name}_count")
    if total < len(pairs):  # as the judge's own reader refuses it (coverage_from_json)
        raise cov.error(f"{name}_count", f"{total}, fewer than the {len(pairs)} pairs listed in '{name}'")
    capped = (f"summary.json lists the first {fmt_num(len(pairs))} of these {fmt_num(total)} pairs"
              if total > len(pairs) else None)
    return {"name": name, "count": total, "heading": f"{name}: {fmt_num(total)} {what}", "capped": capped,
            "pairs": pairs}


def coverage_view(ix: RunIndex) -> dict[str, Any] | None:
    """None where the summary has no coverage section (older summaries, raw records)."""
    cov = ix.s.opt_obj("coverage")
    if cov is None:
        return None
    complete = cov.boolean("complete", REQUIRED)
    planned = count(cov, "planned")
    recorded = count(cov, "recorded")
    lists = [pair_list(cov, name, what) for name, what in LISTS]
    found = [l for l in lists if l["count"]]
    # `complete` is the judge's word; one its own counts contradict is a garbled section (the judge
    # writes true exactly for a plan of at least one pair, each with one result, and nothing else).
    if complete != (planned > 0 and not found):
        why = ("planned is 0" if planned == 0 else f"{found[0]['name']}_count is {found[0]['count']}" if found
               else f"planned is {planned} and no pair is missing, duplicated or unplanned")
        raise cov.error("complete", f"{'true' if complete else 'false'} where {why}")
    return {
        "complete": complete,
        "message": cov.string("message"),
        "line": f"{fmt_num(recorded)} of {fmt_num(planned)} planned (cell, case) pairs have exactly one result.",
        "lists": found,
    }
