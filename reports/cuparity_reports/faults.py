"""The fault coverage page: renders `cuparity faults`' cuparity.faults/1 as the judge wrote it.

Nothing here decides whether a trial was caught: `caught`, `by` and the totals are the C++
command's (harness/fault_coverage/fault_coverage.cpp); this module checks the document and lays it out.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from . import __version__
from .json_input import REQUIRED, Obj, ReportInputError, describe
from .reader import ABSENT, check_schema, parse_json, read_run_bytes
from .summary_rules import count
from .templating import render, stylesheet

SCHEMA = "cuparity.faults"
SHOWN = 4  # catching cases shown per trial; the title holds them all


def read_faults(path: str) -> dict[str, Any]:
    """Reads and checks one faults.json (or a committed faults.json.gz, inflated as a run's files
    are); the view it gives is what the page shows."""
    data = parse_json(read_run_bytes(path), path)
    if not isinstance(data, dict):
        raise ReportInputError(path, f"(top level): expected an object (cuparity.faults/1), got {describe(data, 40)}")
    check_schema(data.get("schema", ABSENT), SCHEMA, path)
    return faults_view(Obj(data, str(path)))


def _trial(t: Obj) -> dict[str, Any]:
    by = t.strings("by")
    caught = t.boolean("caught", REQUIRED)
    return {
        "symbol": t.string("symbol", REQUIRED),
        "fault": t.string("fault", REQUIRED),
        "path": t.string("path", REQUIRED),
        "spec": t.string("spec", REQUIRED),
        "caught": caught,
        "exit_code": t.integer("exit_code", REQUIRED),  # as recorded; the page shows it
        "by": ", ".join(by[:SHOWN]) + (f" and {len(by) - SHOWN} more" if len(by) > SHOWN else ""),
        "by_all": ", ".join(by),
        "note": t.string("note", ""),
    }


def faults_view(doc: Obj) -> dict[str, Any]:
    """The page's view. `trials` is required (null or absent is not "no trial": the page would say
    0 of 0 not caught), and the totals must be the trials' own (each trial counted once in its
    class, the command's way): a total the trials contradict is a garbled file, never shown."""
    totals = []
    for name in sorted(doc.obj("totals", REQUIRED).keys()):
        t = doc.obj("totals").obj(name)
        caught, tried = count(t, "caught"), count(t, "tried")
        if caught > tried:
            raise t.error("caught", f"{caught} of {tried} tried")
        totals.append({"fault": name, "caught": caught, "tried": tried, "all": caught == tried})
    trials = [_trial(t) for t in doc.objs("trials", REQUIRED)]
    for what, of_trials, of_totals in (("tried", len(trials), sum(t["tried"] for t in totals)),
                                       ("caught", sum(t["caught"] for t in trials), sum(t["caught"] for t in totals))):
        if of_trials != of_totals:
            raise doc.error("totals", f"{of_totals} {what} in all, but the trials listed say {of_trials}")
    return {
        "driver": doc.string("driver", REQUIRED),
        "matrix": doc.string("matrix", REQUIRED),
        "bound": len(doc.strings("bound")),
        "unbound": doc.strings("unbound"),
        "not_applicable": doc.strings("not_applicable"),
        "totals": totals,
        "missed": [t for t in trials if not t["caught"]],
        "trials": trials,
    }


def render_faults(view: dict[str, Any], source: str, title: str | None = None) -> str:
    return render(
        "faults.html",
        css=stylesheet(),
        page_title=title or f"cuparity fault coverage: {view['driver']}",
        faults=view,
        source=source,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        version=__version__,
    )
