"""Changes against the reference: summary.json's `changes` as the judge wrote it.

Everything shown is what the judge wrote (harness/verdict/changes.hpp, summary_json_writer.cpp
`changes_section`): the matrix's reference values (`[matrix] reference`; null: unset), whether a
change fails the run (`fail_on_change`), the (cell, reference cell) pairs it compared and every
change it found, in its order (matrix order, then case order, then the binding entries), with the
reason of the known change that accepts it (`known`, from the matrix's known-changes file), and the
known changes that matched nothing (`stale_known`). With fail_on_change each change no known change
accepts is also a problem of kind "change", and each stale entry one of kind "stale_expectation",
which the details section shows. Whether a change fails is read from `known`, never re-decided.
Summaries of a matrix without a reference have `changes: null`, older ones none: no section.
"""

from __future__ import annotations

from typing import Any

from ..formatting import fmt_num, json_value
from ..json_input import REQUIRED, Obj
from .coverage import count
from .run_index import RunIndex


def reference_text(values: dict[str, str | None]) -> str:
    """`B=0, C unset`, in the judge's order."""
    return ", ".join(f"{var} unset" if v is None else f"{var}={v}" for var, v in values.items())


def value_of(change: Obj, key: str) -> Any:
    """`before` or `after`: any JSON value, null where that side has none; the member itself is always written."""
    if key not in change:
        raise change.error(key, "expected a JSON value (null where absent), got nothing")
    return change.raw(key)


def change_row(change: Obj) -> dict[str, Any]:
    before, before_full = json_value(value_of(change, "before"))
    after, after_full = json_value(value_of(change, "after"))
    return {"cell": change.string("cell", REQUIRED), "reference": change.string("reference", REQUIRED),
            "case": change.string("case", REQUIRED), "key": change.string("key", REQUIRED),
            "before": before, "before_title": before_full, "after": after, "after_title": after_full,
            "known": change.string("known") or ""}


def stale_row(entry: Obj) -> dict[str, Any]:
    after, after_full = json_value(entry.raw("after")) if "after" in entry else ("", None)
    return {"where": entry.string("where", REQUIRED), "cell": entry.string("cell") or "any cell",
            "case": entry.string("case", REQUIRED), "key": entry.string("key", REQUIRED),
            "after": "any value" if entry.raw("after") is None else after, "after_title": after_full,
            "reason": entry.string("reason", REQUIRED)}


def changes_view(ix: RunIndex) -> dict[str, Any] | None:
    """None where the summary has no changes section (no reference in the matrix, older summaries, raw records)."""
    ch = ix.s.opt_obj("changes")
    if ch is None:
        return None
    ch.obj("reference", REQUIRED)
    reference = ch.string_map("reference", nullable=True)
    fail = ch.boolean("fail_on_change", REQUIRED)
    pairs = [{"cell": p.string("cell", REQUIRED), "reference": p.string("reference", REQUIRED)}
             for p in ch.objs("pairs", REQUIRED)]
    rows = [change_row(c) for c in ch.objs("changes", REQUIRED)]
    # Summaries written before known changes existed have neither member: nothing known, none stale.
    stale = [stale_row(e) for e in ch.objs("stale_known")] if "stale_known" in ch else []
    total = count(ch, "count")
    if total != len(rows):  # the judge lists every change it counts
        raise ch.error("count", f"{total} where 'changes' lists {len(rows)}")
    known = sum(1 for r in rows if r["known"])
    if not total:
        effect = "a change would fail the run (fail_on_change)" if fail else "a change would be reported only"
    elif fail and known == total:
        effect = "each is a known change, so none fails the run"
    elif fail:
        effect = (f"{fmt_num(total - known)} that no known change accepts fail the run (fail_on_change)"
                  + (f", {fmt_num(known)} known" if known else ""))
    else:
        effect = ("they are reported only, not failing the run (no fail_on_change)"
                  + (f"; {fmt_num(known)} known" if known else ""))
    return {
        "reference": reference_text(reference),
        "compared": f"{fmt_num(len(pairs))} {'cell' if len(pairs) == 1 else 'cells'} compared with a reference cell",
        "pairs": "\n".join(f"{p['cell']} vs {p['reference']}" for p in pairs),
        "count": f"{fmt_num(total)} {'change' if total == 1 else 'changes'}",
        "effect": effect,
        "fails": fail and total > known,
        "rows": rows,
        "known_file": ch.string("known_changes") or "",
        "stale": stale,
        "stale_effect": "each fails the run (fail_on_change)" if fail else "reported only",
    }
