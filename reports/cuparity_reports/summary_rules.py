"""The rules a summary.json must keep to be read at all: the same as the C++ reader's
(harness/report/summary_reader.cpp), with the same member paths and, for the rules below, the
same words.

tests/summaries/ is the one corpus both readers are held to: each file there is accepted by
both, or refused by both naming the same member (reports/tests/test_summary_corpus.py here,
tests/unit/test_report.cpp there). These rules check a summary; they never make a verdict: the
judge's `verdict`, `exit_code` and `coverage.complete` are read as written, and a summary whose
own members contradict each other is refused as garbled, not re-judged.
"""

from __future__ import annotations

from typing import Any

from .json_input import REQUIRED, Obj, describe, is_int

# The judge's verdict words (docs/formats.md) and the outcomes of a result
# (harness/protocol/outcome.cpp): a summary with another is refused, as the C++ reader refuses it.
VERDICTS = ("equivalent", "failed", "incomplete", "environment")
OUTCOMES = ("pass", "fail", "not_supported", "resource_error", "crash", "timeout", "error", "flaky")
MAX_EXIT_CODE = 255  # an exit code is what a process can return
# What a run that is not complete can be (the judge's precedence: environment, then incomplete).
INCOMPLETE_VERDICTS = ("environment", "incomplete")
PAIR_LISTS = ("missing", "duplicated", "unplanned")


def _got(obj: Obj, key: str) -> str:
    return "nothing" if key not in obj else describe(obj.raw(key))


def count(obj: Obj, key: str) -> int:
    """A required count: a whole number, 0 or more (null, a fraction, a negative number or a
    boolean is refused, as the C++ reader refuses it)."""
    n = obj.raw(key)
    if not is_int(n) or n < 0:
        raise obj.error(key, f"expected a count (0, 1, ...), got {_got(obj, key)}")
    return n


def _check_result(r: Obj) -> None:
    r.string("cell", REQUIRED)
    r.string("case", REQUIRED)
    outcome = r.string("outcome", REQUIRED)
    if outcome not in OUTCOMES:
        raise r.error("outcome", f"unknown outcome {describe(outcome)} (one of {', '.join(OUTCOMES)})")
    r.string("message")
    r.opt_obj("observations")


def _check_divergence(d: Obj) -> None:
    for key in ("group", "case", "key"):
        d.string(key, REQUIRED)
    d.obj("values", REQUIRED)


def check_coverage(cov: Obj, verdict: str) -> None:
    """summary.json's `coverage`: counts that are counts, lists of (cell, case) pairs no longer than
    their counts (the lists are capped at 200, the counts are not), `planned` = `recorded` +
    `missing_count` + `duplicated_count` (each planned pair has one result, none, or several), and a
    `complete` and a `verdict` its counts do not contradict."""
    complete = cov.boolean("complete", REQUIRED)
    planned, recorded = count(cov, "planned"), count(cov, "recorded")
    counts: dict[str, int] = {}
    for name in PAIR_LISTS:
        pairs = cov.objs(name, REQUIRED)
        for p in pairs:
            p.string("cell", REQUIRED)
            p.string("case", REQUIRED)
        counts[name] = count(cov, f"{name}_count")
        if counts[name] < len(pairs):
            raise cov.error(f"{name}_count", f"{counts[name]}, fewer than the {len(pairs)} pairs listed in '{name}'")
    if planned != recorded + counts["missing"] + counts["duplicated"]:
        raise cov.error("planned", f"{planned}, but recorded + missing_count + duplicated_count is "
                                   f"{recorded + counts['missing'] + counts['duplicated']} ({recorded} + "
                                   f"{counts['missing']} + {counts['duplicated']})")
    found = [name for name in PAIR_LISTS if counts[name]]
    if complete != (planned > 0 and not found):
        why = ("planned is 0" if planned == 0 else f"{found[0]}_count is {counts[found[0]]}" if found
               else f"planned is {planned} and no pair is missing, duplicated or unplanned")
        raise cov.error("complete", f"{'true' if complete else 'false'} where {why}")
    if not complete and verdict not in INCOMPLETE_VERDICTS:
        raise Obj(cov.value, cov.source).error(
            "verdict", f"'{verdict}' where coverage.complete is false (a run that is not complete is "
                       "'incomplete' or 'environment')")


def check_summary(doc: Obj) -> None:
    """What the C++ reader reads, checked as it checks it: a known `verdict`, an `exit_code` a
    process can return, `counts` that are counts, `results` of known outcomes, `divergences`, and
    `coverage` (check_coverage). The schemas are checked before (reader.read_summary); every other
    member is checked where the renderers read it."""
    verdict = doc.string("verdict", REQUIRED)
    if verdict not in VERDICTS:
        raise doc.error("verdict", f"unknown verdict {describe(verdict)} (one of {', '.join(VERDICTS)})")
    code = doc.raw("exit_code")
    if not is_int(code) or not 0 <= code <= MAX_EXIT_CODE:
        raise doc.error("exit_code", f"expected an exit code (0-{MAX_EXIT_CODE}), got {_got(doc, 'exit_code')}")
    counts = doc.obj("counts")
    for name in counts.keys():
        count(counts, name)
    doc.string("started")
    provenance = doc.obj("provenance")
    provenance.string("git_revision")
    provenance.boolean("simulated")
    for r in doc.objs("results", REQUIRED):
        _check_result(r)
    for d in doc.objs("divergences", REQUIRED):
        _check_divergence(d)
    cov = doc.opt_obj("coverage")
    if cov is not None:
        check_coverage(cov, verdict)


