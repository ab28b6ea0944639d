"""Run-vs-run comparison as `cuparity compare` judged it: runs the binary, renders its JSON.

Nothing here decides anything: the classes of outcome change, new and gone divergences and the
latency verdicts all come from the C++ judge (cuparity.compare/1, docs/formats.md).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Sequence

from .formatting import terminal_text as term
from .json_input import REQUIRED, Obj, ReportInputError, describe
from .reader import ABSENT, check_schema, parse_json, read_json

SCHEMA = "cuparity.compare"
CLASSES = ("regression", "fix", "changed", "new", "missing", "unchanged")
REPO = Path(__file__).resolve().parents[2]


def find_cuparity() -> Path:
    """The cuparity binary: $CUPARITY_BIN, else the build tree's, else the one the cuparity wheel
    ships beside this package, else one on PATH."""
    named = os.environ.get("CUPARITY_BIN")
    if named:
        if Path(named).is_file() and os.access(named, os.X_OK):
            return Path(named)
        raise ReportInputError(named, "CUPARITY_BIN names no executable cuparity binary")
    build = Path(os.environ.get("CUPARITY_BUILD_DIR") or REPO / "build")
    candidates = [build / "bin" / "cuparity", REPO / "build" / "bin" / "cuparity"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    shipped = Path(__file__).resolve().parent.parent / "cuparity" / "bin" / "cuparity"
    if shipped.is_file() and os.access(shipped, os.X_OK):
        return shipped
    on_path = shutil.which("cuparity")
    if on_path:
        return Path(on_path)
    raise ReportInputError("cuparity", "binary not found (looked at $CUPARITY_BIN, "
                           f"{candidates[0]} and PATH): `cuparity compare` judges the runs, so build "
                           "it (scripts/build) or set CUPARITY_BIN")


def check_compare(data: Any, source: str) -> dict[str, Any]:
    """Checks a cuparity.compare/1 document: its schema, the judge's verdict (`regressed` and the
    `exit_code` that says the same), and every member the renderer reads (by rendering it)."""
    if not isinstance(data, dict):
        raise ReportInputError(source, f"(top level): expected an object (cuparity.compare/1), got {describe(data, 40)}")
    check_schema(data.get("schema", ABSENT), SCHEMA, source)
    doc = Obj(data, source)
    regressed = doc.boolean("regressed", REQUIRED)
    complete = doc.boolean("complete", True)  # older documents had no coverage: complete
    code = doc.integer("exit_code", REQUIRED)
    if code != (1 if regressed or not complete else 0):
        raise doc.error("exit_code", f"{code} where 'regressed' is {'true' if regressed else 'false'} "
                                     f"and 'complete' is {'true' if complete else 'false'} (the judge "
                                     "writes 1 for a regression or an incomplete comparison, else 0)")
    render_text(data, source)  # --json prints the document as it is, so refuse what text would refuse
    return data


def read_compare(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a compare JSON file written by `cuparity compare --json FILE`."""
    return check_compare(read_json(path), str(path))


def run_compare(a: str, b: str, options: Sequence[str] = (), cwd: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Runs `cuparity compare A B --json -` (in `cwd`, when given) and returns its checked JSON.

    Bad input (exit 2) raises ReportInputError with the binary's own message, which names the file.
    """
    binary = find_cuparity()
    try:
        # Bytes, not text: the JSON is parsed as any input is (strict UTF-8), and the message quotes
        # the runs' paths, which need not be UTF-8.
        done = subprocess.run([str(binary.resolve()), "compare", a, b, "--json", "-", *options],
                              capture_output=True, timeout=600, cwd=cwd)
    except (OSError, subprocess.SubprocessError) as e:
        raise ReportInputError(binary, f"cannot run: {e}") from None
    stderr = os.fsdecode(done.stderr)
    if done.returncode == 2:
        raise _refused(stderr)
    if done.returncode not in (0, 1):
        raise ReportInputError(binary, f"compare ended with exit code {done.returncode}: "
                               f"{stderr.strip()[-800:]}")
    source = f"{binary} compare"
    return check_compare(parse_json(done.stdout, source), source)


def _refused(stderr: str) -> ReportInputError:
    """The binary refused an input (exit 2); its message already names the file and the member."""
    message = stderr.strip().removeprefix("cuparity compare: ") or "bad input (exit code 2)"
    path, _, detail = message.partition(": ")
    return ReportInputError(path, detail) if detail else ReportInputError("cuparity compare", message)


def exit_code(data: dict[str, Any]) -> int:
    """The judge's exit code: 1 when B regressed or the comparison is incomplete, else 0
    (check_compare saw that the members agree)."""
    return 1 if data.get("regressed") is True or data.get("complete") is False else 0


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def _num(v: float | None, spec: str) -> str:
    return f"{v:{spec}}" if v is not None and math.isfinite(v) else "-"


def _p(v: float | None) -> str:
    return "<0.001" if v is not None and v < 0.001 else _num(v, ".2g")


def _run_line(label: str, run: Obj) -> str:
    sim = ", SIMULATED" if run.boolean("simulated") else ""
    return f"{label}: {term(run.string('source', '?'))} ({term(run.string('verdict', '?'))}{sim})"


def _outcome_lines(doc: Obj) -> list[str]:
    doc.obj("counts", REQUIRED)
    counts = doc.count_map("counts")
    out = ["", "outcomes: " + ", ".join(f"{counts.get(c, 0)} {c}" for c in CLASSES)]
    order = {c: i for i, c in enumerate(CLASSES)}
    rows = [[term(o.string("change", REQUIRED)), term(o.string("cell", REQUIRED)), term(o.string("case", REQUIRED)),
             term(o.string("outcome_a") or "-"), term(o.string("outcome_b") or "-"),
             term(o.string("message_b")[:60])]
            for o in doc.objs("outcomes", REQUIRED)]
    rows.sort(key=lambda r: order.get(r[0], len(CLASSES)))
    if rows:
        out += ["", _table(rows, ["change", "cell", "case", "A", "B", "B message"])]
    return out


def _divergence_lines(doc: Obj) -> list[str]:
    div = doc.obj("divergences", REQUIRED)
    lines = [f"new divergence: {term(d.string('identity', '?'))}" for d in div.objs("new", REQUIRED)]
    lines += [f"divergence gone: {term(d.string('identity', '?'))}" for d in div.objs("gone", REQUIRED)]
    return [""] + lines if lines else []


def _value(v: Any) -> str:
    return "-" if v is None else term(json.dumps(v, sort_keys=True))[:60]


def _changed_lines(doc: Obj) -> list[str]:
    """Observations and binding entries that differ: reported, never a regression. Empty sections
    say "none changed", as the judge's console does, so they are never ambiguous."""
    obs = [[term(o.string("cell")), term(o.string("case")), term(o.string("key")), _value(o.raw("a")),
            _value(o.raw("b"))] for o in doc.objs("observations")]
    out = ["", "observations: " + ("none changed" if not obs else f"{len(obs)} changed")]
    if obs:
        out += [_table(obs, ["cell", "case", "key", "A", "B"])]
    if not doc.boolean("bindings_compared"):
        return out
    bind = [[term(b.string("cell")), term(b.string("key")), _value(b.raw("a")), _value(b.raw("b"))]
            for b in doc.objs("bindings")]
    out += ["", "binding entries: " + ("none changed" if not bind else f"{len(bind)} changed")]
    if bind:
        out += [_table(bind, ["cell", "key", "A", "B"])]
    return out


def _latency_row(l: Obj) -> list[str]:
    threshold = l.number("threshold")
    return [term(l.string("probe")), term(l.string("series")), _num(l.number("median_a"), ".4g"),
            _num(l.number("median_b"), ".4g"), term(l.string("unit")), _num(l.number("ratio"), ".3f"),
            f"[{_num(l.number('ci_low'), '.3f')}, {_num(l.number('ci_high'), '.3f')}]", _p(l.number("p_value")),
            _num(100 * threshold, "g") + "%" if threshold is not None else "-", term(l.string("verdict"))]


def _latency_lines(latency: list[Obj]) -> list[str]:
    if not latency:
        return []
    return ["", "latency (B vs A; ratio = median B / median A, 95% bootstrap CI, Mann-Whitney p):",
            _table([_latency_row(l) for l in latency],
                   ["probe", "series", "A", "B", "unit", "ratio", "CI", "p", "threshold", "verdict"])]


def render_text(data: dict[str, Any], source: str = "compare") -> str:
    """The judge's comparison for a terminal: runs, outcome changes, divergences, latency, verdict.

    Every member is checked as it is read (a wrong type is a ReportInputError naming `source` and
    the member), and every text from the runs is shown with its control characters escaped.
    """
    doc = Obj(data, source)
    out = [_run_line("A", doc.obj("a", REQUIRED)), _run_line("B", doc.obj("b", REQUIRED))]
    latency = doc.objs("latency", REQUIRED)
    out += _outcome_lines(doc) + _changed_lines(doc) + _divergence_lines(doc) + _latency_lines(latency)
    notes = doc.strings("notes")
    if notes:
        out += [""] + [f"note: {term(n)}" for n in notes]
    incomplete = doc.strings("incomplete")
    if incomplete:
        out += [""] + [f"INCOMPLETE: {term(why)}" for why in incomplete]
    slower = sum(1 for l in latency if l.string("verdict") == "slower")
    new = len(doc.obj("divergences", REQUIRED).items("new", REQUIRED))
    regressed = doc.boolean("regressed", REQUIRED)
    # The judge's word; older documents have none, and then it follows from `regressed`.
    verdict = doc.string("verdict", "regressed" if regressed else "no regression")
    out += ["", term(verdict.upper() if verdict != "no regression" else verdict),
            f"({doc.count_map('counts').get('regression', 0)} outcome regressions, {new} "
            f"new divergences, {slower} slower latency series; judged by cuparity compare)"]
    return "\n".join(out) + "\n"


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
