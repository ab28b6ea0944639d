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

from .reader import ReportInputError, check_schema, read_json

SCHEMA = "cuparity.compare"
CLASSES = ("regression", "fix", "changed", "new", "missing", "unchanged")
REPO = Path(__file__).resolve().parents[2]


def find_cuparity() -> Path:
    """The cuparity binary: $CUPARITY_BIN, else the build tree's, else one on PATH."""
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
    on_path = shutil.which("cuparity")
    if on_path:
        return Path(on_path)
    raise ReportInputError("cuparity", "binary not found (looked at $CUPARITY_BIN, "
                           f"{candidates[0]} and PATH): `cuparity compare` judges the runs, so build "
                           "it (scripts/build) or set CUPARITY_BIN")


def _expect(data: dict[str, Any], key: str, kind: type, source: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ReportInputError(source, f"'{key}' is missing or not {kind.__name__} (cuparity.compare/1)")
    return value


def check_compare(data: Any, source: str) -> dict[str, Any]:
    """Checks a cuparity.compare/1 document's schema and the members the renderer reads."""
    if not isinstance(data, dict):
        raise ReportInputError(source, "expected a JSON object (cuparity.compare/1)")
    check_schema(data.get("schema"), SCHEMA, source)
    for key, kind in (("a", dict), ("b", dict), ("regressed", bool), ("exit_code", int), ("counts", dict),
                      ("outcomes", list), ("divergences", dict), ("latency", list), ("notes", list)):
        _expect(data, key, kind, source)
    for side in ("new", "gone"):
        _expect(data["divergences"], side, list, source)
    for name in ("outcomes", "latency"):
        if not all(isinstance(row, dict) for row in data[name]):
            raise ReportInputError(source, f"'{name}' holds a row that is not an object")
    return data


def read_compare(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a compare JSON file written by `cuparity compare --json FILE`."""
    return check_compare(read_json(path), str(path))


def run_compare(a: str, b: str, options: Sequence[str] = ()) -> dict[str, Any]:
    """Runs `cuparity compare A B --json -` and returns its checked JSON.

    Bad input (exit 2) raises ReportInputError with the binary's own message, which names the file.
    """
    binary = find_cuparity()
    try:
        done = subprocess.run([str(binary), "compare", a, b, "--json", "-", *options],
                              capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise ReportInputError(binary, f"cannot run: {e}") from None
    if done.returncode == 2:
        raise _refused(done.stderr)
    if done.returncode not in (0, 1):
        raise ReportInputError(binary, f"compare ended with exit code {done.returncode}: "
                               f"{done.stderr.strip()[-800:]}")
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise ReportInputError(binary, f"compare wrote no valid JSON: {e}") from None
    return check_compare(data, f"{binary} compare")


def _refused(stderr: str) -> ReportInputError:
    """The binary refused an input (exit 2); its message already names the file and the member."""
    message = stderr.strip().removeprefix("cuparity compare: ") or "bad input (exit code 2)"
    path, _, detail = message.partition(": ")
    return ReportInputError(path, detail) if detail else ReportInputError("cuparity compare", message)


def exit_code(data: dict[str, Any]) -> int:
    """The judge's exit code: 1 when B regressed, else 0."""
    return 1 if data.get("regressed") else 0


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def _num(v: Any, spec: str) -> str:
    return f"{v:{spec}}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _p(v: Any) -> str:
    return "<0.001" if isinstance(v, (int, float)) and v < 0.001 else _num(v, ".2g")


def _run_line(label: str, run: dict[str, Any]) -> str:
    sim = ", SIMULATED" if run.get("simulated") else ""
    return f"{label}: {run.get('source', '?')} ({run.get('verdict', '?')}{sim})"


def _outcome_lines(data: dict[str, Any]) -> list[str]:
    counts = data["counts"]
    out = ["", "outcomes: " + ", ".join(f"{counts.get(c, 0)} {c}" for c in CLASSES)]
    order = {c: i for i, c in enumerate(CLASSES)}
    rows = [[str(o.get("change")), str(o.get("cell")), str(o.get("case")), str(o.get("outcome_a") or "-"),
             str(o.get("outcome_b") or "-"), str(o.get("message_b") or "")[:60]]
            for o in sorted(data["outcomes"], key=lambda o: order.get(str(o.get("change")), len(CLASSES)))]
    if rows:
        out += ["", _table(rows, ["change", "cell", "case", "A", "B", "B message"])]
    return out


def _divergence_lines(data: dict[str, Any]) -> list[str]:
    div = data["divergences"]
    lines = [f"new divergence: {d.get('identity', '?')}" for d in div["new"] if isinstance(d, dict)]
    lines += [f"divergence gone: {d.get('identity', '?')}" for d in div["gone"] if isinstance(d, dict)]
    return [""] + lines if lines else []


def _latency_lines(data: dict[str, Any]) -> list[str]:
    if not data["latency"]:
        return []
    rows = [[str(l.get("probe")), str(l.get("series")), _num(l.get("median_a"), ".4g"), _num(l.get("median_b"), ".4g"),
             str(l.get("unit", "")), _num(l.get("ratio"), ".3f"),
             f"[{_num(l.get('ci_low'), '.3f')}, {_num(l.get('ci_high'), '.3f')}]", _p(l.get("p_value")),
             _num(100 * l["threshold"], "g") + "%" if isinstance(l.get("threshold"), (int, float)) else "-",
             str(l.get("verdict"))] for l in data["latency"]]
    return ["", "latency (B vs A; ratio = median B / median A, 95% bootstrap CI, Mann-Whitney p):",
            _table(rows, ["probe", "series", "A", "B", "unit", "ratio", "CI", "p", "threshold", "verdict"])]


def render_text(data: dict[str, Any]) -> str:
    """The judge's comparison for a terminal: runs, outcome changes, divergences, latency, verdict."""
    out = [_run_line("A", data["a"]), _run_line("B", data["b"])]
    out += _outcome_lines(data) + _divergence_lines(data) + _latency_lines(data)
    if data["notes"]:
        out += [""] + [f"note: {n}" for n in data["notes"]]
    slower = sum(1 for l in data["latency"] if l.get("verdict") == "slower")
    out += ["", "REGRESSED" if data["regressed"] else "no regression",
            f"({data['counts'].get('regression', 0)} outcome regressions, {len(data['divergences']['new'])} "
            f"new divergences, {slower} slower latency series; judged by cuparity compare)"]
    return "\n".join(out) + "\n"


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
