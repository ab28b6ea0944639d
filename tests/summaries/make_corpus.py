#!/usr/bin/env python3
"""Writes the summary corpus of this folder: `<name>.summary.json` files and `expected.json`,
what both summary readers must answer for each (README.md). Run it after changing CASES; the
files it writes are committed, and the readers' tests read those, not this script.

Each case is one of two small bases with one change: a complete run (two cells, one case, both
passed) and an incomplete one (two of four planned pairs missing). They hold the members the
readers check and little else, so the corpus stays a few kilobytes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent


def _pairs(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"cell": cell, "case": case} for cell, case in pairs]


def complete_base() -> dict[str, Any]:
    return {
        "schema": "cuparity.summary/1", "verdict": "equivalent", "exit_code": 0,
        "started": "2026-12-06T00:00:00Z", "matrix": {"name": "corpus"},
        "provenance": {"git_revision": "0123456789ab", "simulated": True},
        "counts": {"pass": 2}, "divergences": [], "latency": None,
        "results": [{**p, "outcome": "pass"} for p in _pairs(("a", "x"), ("b", "x"))],
        "coverage": {"complete": True, "planned": 2, "recorded": 2, "missing_count": 0, "duplicated_count": 0,
                     "unplanned_count": 0, "missing": [], "duplicated": [], "unplanned": [], "message": ""},
    }


def incomplete_base() -> dict[str, Any]:
    s = complete_base()
    s["verdict"], s["exit_code"] = "incomplete", 1
    s["coverage"].update(complete=False, planned=4, missing_count=2, missing=_pairs(("a", "y"), ("b", "y")),
                         message="2 of 4 planned pairs have no result (first: cell 'a', case 'y')")
    return s


BASES = {"complete": complete_base, "incomplete": incomplete_base}
DROP = object()


def at(*path: Any, value: Any) -> Callable[[dict], None]:
    """Sets the member at `path` (keys and indexes) to `value`; DROP removes it."""
    def edit(s: dict) -> None:
        parent = s
        for p in path[:-1]:
            parent = parent[p]
        if value is DROP:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return edit


def several(*edits: Callable[[dict], None]) -> Callable[[dict], None]:
    def edit(s: dict) -> None:
        for e in edits:
            e(s)
    return edit


def whole(value: Any) -> Callable[[dict], Any]:
    return lambda s: value


COUNT = "expected a count (0, 1, ...), got "
ANSWERS = "a run that is not complete is 'incomplete' or 'environment'"

# name -> (base, edit, expected): expected is None for a summary both accept, else (member, says):
# both refuse it naming `member`, their message holding `says` ("" where their words differ).
CASES: dict[str, tuple[str, Callable[[dict], Any] | None, tuple[str, str] | None]] = {
    "valid-complete": ("complete", None, None),
    "valid-incomplete": ("incomplete", None, None),
    "valid-no-coverage": ("complete", at("coverage", value=DROP), None),  # written before coverage existed
    "valid-coverage-null": ("complete", at("coverage", value=None), None),
    "valid-list-capped": ("incomplete", several(at("coverage", "missing_count", value=300),
                                                 at("coverage", "planned", value=302)), None),
    "valid-environment-incomplete": ("incomplete", several(at("verdict", value="environment"),
                                                           at("exit_code", value=3)), None),
    "valid-exit-code-7": ("complete", at("exit_code", value=7), None),  # a process can return it
    "valid-counts-null": ("complete", at("counts", value=None), None),  # null members read as absent
    # schema: exactly the versions both read (defect 19: /1.5 was shown by the dashboard)
    "schema-missing": ("complete", at("schema", value=DROP), ("schema", "expected a string")),
    "schema-number": ("complete", at("schema", value=1), ("schema", "expected a string")),
    "schema-newer-minor": ("complete", at("schema", value="cuparity.summary/1.5"),
                           ("schema", "'cuparity.summary/1.5' is a version this reader does not read (it reads "
                                      "cuparity.summary/1)")),
    "schema-newer-major": ("complete", at("schema", value="cuparity.summary/2"),
                           ("schema", "'cuparity.summary/2' is a version this reader does not read")),
    "schema-major-0": ("complete", at("schema", value="cuparity.summary/0"),
                       ("schema", "'cuparity.summary/0' is a version this reader does not read")),
    "schema-no-version": ("complete", at("schema", value="cuparity.summary/"),
                          ("schema", "'cuparity.summary/' is a version this reader does not read")),
    "schema-other-family": ("complete", at("schema", value="cuparity.results/1"),
                            ("schema", "'cuparity.results/1' where cuparity.summary/1 was expected")),
    "schema-other-name": ("complete", at("schema", value="acme.summary/1"),
                          ("schema", "'acme.summary/1' where cuparity.summary/1 was expected")),
    "schema-extra-part": ("complete", at("schema", value="cuparity.summary/1/1"),
                          ("schema", "'cuparity.summary/1/1' where cuparity.summary/1 was expected")),
    "latency-schema-newer": ("complete", at("latency", value={"schema": "cuparity.latency/3"}),
                             ("latency.schema", "'cuparity.latency/3' is a version this reader does not read (it "
                                                "reads cuparity.latency/2 or cuparity.latency/1)")),
    "latency-not-object": ("complete", at("latency", value=[]), ("latency", "expected an object")),
    "top-level-array": ("complete", whole([]), ("(top level)", "expected an object")),
    "verdict-missing": ("complete", at("verdict", value=DROP), ("verdict", "a string")),
    "verdict-unknown": ("complete", at("verdict", value="bogus"), ("verdict", "bogus")),
    "exit-code-missing": ("complete", at("exit_code", value=DROP), ("exit_code", "expected an exit code (0-255), "
                                                                                 "got nothing")),
    "exit-code-null": ("complete", at("exit_code", value=None), ("exit_code", "expected an exit code (0-255), got null")),
    "exit-code-negative": ("complete", at("exit_code", value=-1), ("exit_code", "expected an exit code (0-255), got -1")),
    "exit-code-fraction": ("complete", at("exit_code", value=0.5), ("exit_code", "expected an exit code (0-255), got 0.5")),
    "exit-code-256": ("complete", at("exit_code", value=256), ("exit_code", "expected an exit code (0-255), got 256")),
    "exit-code-true": ("complete", at("exit_code", value=True), ("exit_code", "expected an exit code (0-255), got true")),
    # counts: whole numbers, 0 or more; null is not zero (defect 19)
    "counts-null": ("complete", at("counts", "pass", value=None), ("counts.pass", COUNT + "null")),
    "counts-negative": ("complete", at("counts", "pass", value=-1), ("counts.pass", COUNT + "-1")),
    "counts-fraction": ("complete", at("counts", "pass", value=1.5), ("counts.pass", COUNT + "1.5")),
    "counts-true": ("complete", at("counts", "pass", value=True), ("counts.pass", COUNT + "true")),
    "results-missing": ("complete", at("results", value=DROP), ("results", "")),
    "result-outcome-unknown": ("complete", at("results", 0, "outcome", value="exploded"),
                               ("results[0].outcome", "unknown outcome")),
    "result-outcome-null": ("complete", at("results", 0, "outcome", value=None), ("results[0].outcome", "a string")),
    "result-not-object": ("complete", at("results", 0, value=5), ("results[0]", "expected an object")),
    "divergences-missing": ("complete", at("divergences", value=DROP), ("divergences", "")),
    "divergence-values-missing": ("complete", at("divergences", value=[{"group": "g", "case": "c", "key": "outcome"}]),
                                  ("divergences[0].values", "")),
    # coverage: its members agree with each other and with the verdict (defect 19)
    "coverage-not-object": ("complete", at("coverage", value=[]), ("coverage", "expected an object")),
    "coverage-complete-missing": ("complete", at("coverage", "complete", value=DROP),
                                  ("coverage.complete", "true or false")),
    "coverage-complete-but-5-missing": ("incomplete", several(at("coverage", "complete", value=True),
                                                              at("coverage", "missing_count", value=5),
                                                              at("coverage", "planned", value=7)),
                                        ("coverage.complete", "true where missing_count is 5")),
    "coverage-incomplete-but-nothing-wrong": ("complete", at("coverage", "complete", value=False),
                                              ("coverage.complete", "false where planned is 2 and no pair is missing, "
                                                                    "duplicated or unplanned")),
    "coverage-complete-empty-plan": ("complete", several(at("coverage", "planned", value=0),
                                                         at("coverage", "recorded", value=0)),
                                     ("coverage.complete", "true where planned is 0")),
    "coverage-complete-but-unplanned": ("complete", several(at("coverage", "unplanned_count", value=2)),
                                        ("coverage.complete", "true where unplanned_count is 2")),
    "coverage-planned-not-the-sum": ("incomplete", at("coverage", "planned", value=10),
                                     ("coverage.planned", "10, but recorded + missing_count + duplicated_count is 4 "
                                                          "(2 + 2 + 0)")),
    "coverage-count-null": ("incomplete", at("coverage", "missing_count", value=None),
                            ("coverage.missing_count", COUNT + "null")),
    "coverage-count-missing": ("complete", at("coverage", "planned", value=DROP), ("coverage.planned", COUNT + "nothing")),
    "coverage-count-negative": ("complete", at("coverage", "unplanned_count", value=-1),
                                ("coverage.unplanned_count", COUNT + "-1")),
    "coverage-count-fraction": ("complete", at("coverage", "recorded", value=2.0), ("coverage.recorded", COUNT + "2.0")),
    "coverage-count-smaller-than-list": ("incomplete", at("coverage", "missing_count", value=1),
                                         ("coverage.missing_count", "1, fewer than the 2 pairs listed in 'missing'")),
    "coverage-list-missing": ("complete", at("coverage", "duplicated", value=DROP), ("coverage.duplicated", "")),
    "coverage-pair-not-object": ("incomplete", at("coverage", "missing", 0, value=5),
                                 ("coverage.missing[0]", "expected an object")),
    "coverage-pair-cell-missing": ("incomplete", at("coverage", "missing", 0, "cell", value=DROP),
                                   ("coverage.missing[0].cell", "a string")),
    "verdict-equivalent-but-incomplete": ("incomplete", several(at("verdict", value="equivalent"),
                                                                at("exit_code", value=0)),
                                          ("verdict", f"'equivalent' where coverage.complete is false ({ANSWERS})")),
    "verdict-failed-but-incomplete": ("incomplete", at("verdict", value="failed"),
                                      ("verdict", f"'failed' where coverage.complete is false ({ANSWERS})")),
}


def main() -> None:
    for old in HERE.glob("*.summary.json"):
        old.unlink()
    expected: dict[str, Any] = {}
    for name, (base, edit, answer) in sorted(CASES.items()):
        doc = copy.deepcopy(BASES[base]())
        if edit is not None:
            changed = edit(doc)
            doc = doc if changed is None else changed
        file = f"{name}.summary.json"
        (HERE / file).write_text(json.dumps(doc, sort_keys=True) + "\n")
        expected[file] = {"accepted": True} if answer is None else {"member": answer[0], "says": answer[1]}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} summaries and expected.json into {HERE}")


if __name__ == "__main__":
    main()
