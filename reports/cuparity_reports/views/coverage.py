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


def count(obj: Obj, key: str) -> int:
    """A required count of the views that read one (breakdown, changes)."""
    n = obj.integer(key, REQUIRED)
    if n < 0:
        raise obj.error(key, f"expected a count, got {describe(n)}")
    return n


def pair_list(cov: Obj, name: str, what: str) -> dict[str, Any]:
    """One list of pairs as recorded, and whether the judge listed fewer than it counted."""
    pairs = [{"cell": p.string("cell", REQUIRED), "case": p.string("case", REQUIRED)}
             for p in cov.objs(name, REQUIRED)]
    total = cov.integer(f"{name}_count", REQUIRED)
    capped = (f"summary.json lists the first {fmt_num(len(pairs))} of these {fmt_num(total)} pairs"
              if total > len(pairs) else None)
    return {"name": name, "count": total, "heading": f"{name}: {fmt_num(total)} {what}", "capped": capped,
            "pairs": pairs}


def coverage_view(ix: RunIndex) -> dict[str, Any] | None:
    """None where the summary has no coverage section (older summaries, raw records). The section
    was checked when the summary was read (summary_rules.check_coverage: counts, lists, a
    `complete` its counts do not contradict); this lays it out."""
    cov = ix.s.opt_obj("coverage")
    if cov is None:
        return None
    planned, recorded = cov.integer("planned", REQUIRED), cov.integer("recorded", REQUIRED)
    return {
        "complete": cov.boolean("complete", REQUIRED),
        "message": cov.string("message"),
        "line": f"{fmt_num(recorded)} of {fmt_num(planned)} planned (cell, case) pairs have exactly one result.",
        "lists": [l for l in (pair_list(cov, name, what) for name, what in LISTS) if l["count"]],
    }
