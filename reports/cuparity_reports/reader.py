"""Reads cuparity run outputs (summary.json, results.jsonl), checking every file's schema.

One way to read a file: `read_bytes` (the file's type and size), then `parse_json` (the JSON text),
then the checks of what the file is (`read_summary`, `read_events`, and the other modules' readers
built on `read_json`). Every problem is a ReportInputError naming the file, and the member where one
is to blame (exit code 2), never a traceback and never a hang.

What is refused, before anything is shown:

- A path that is not a regular file (a link to one is fine): a directory, a FIFO, a socket or a
  device. The type is checked before the file is opened, and the file is opened non-blocking, so a
  FIFO never blocks (nor does one put in its place between the check and the open).
- A file larger than its kind's limit: MAX_RUN_BYTES (256 MiB) for a run's summary.json and
  results.jsonl (a 1,000-case run's summary is about 0.5 MiB), MAX_DOCUMENT_BYTES (64 MiB) for the
  other commands' documents (a compare or faults file, a history index).
- JSON that the C++ reader (harness/io/input_file.cpp, nlohmann) refuses too: text that is
  not UTF-8, an escaped lone surrogate ("\\udcff"), the tokens NaN and Infinity, a number too large
  for a double (1e400), nesting deeper than MAX_JSON_DEPTH (256) levels. The judge writes
  non-finite numbers as null, so none of these is ever in a file it wrote.
- A summary.json that `cuparity compare` would not read (harness/report/summary_reader.cpp; see
  summary_rules.check_summary): the reports validate a summary with the same rules as the C++
  reader, and tests/summaries/ holds both readers to the same answers.
- A schema version this reader does not read (KNOWN_SCHEMAS: exactly those versions).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

# ReportInputError is defined in json_input; it is imported from here too, as before.
from .json_input import REQUIRED, Obj, ReportInputError, describe, element_path, member_path
# The summary's rules (shared with the C++ reader through tests/summaries/) and their words.
from .summary_rules import MAX_EXIT_CODE, OUTCOMES, VERDICTS, check_summary  # noqa: F401 - re-exported

# The versions of each schema this reader reads: exactly these, as the C++ readers take exactly the
# versions they know (harness/report/summary_reader.cpp). A newer version, minor or major, is
# refused: a reader never claims to understand what was written after it.
KNOWN_SCHEMAS: dict[str, tuple[str, ...]] = {
    "cuparity.summary": ("1",),
    "cuparity.results": ("1",),
    "cuparity.latency": ("2", "1"),
    "cuparity.compare": ("1",),
    "cuparity.faults": ("1",),
}

MiB = 1 << 20
MAX_RUN_BYTES = 256 * MiB  # summary.json, results.jsonl
MAX_DOCUMENT_BYTES = 64 * MiB  # compare and faults files, the history index
MAX_JSON_DEPTH = 256  # as the C++ reader's max_json_depth

# What a run without summary.json shows instead of a verdict: the C++ judge gives verdicts.
NO_VERDICT = "no verdict (no summary.json)"

OK_OUTCOMES = ("pass", "not_supported")  # for display counts only; no verdict is made from it


@dataclass
class Run:
    """One run, as a summary-like dict, plus where it came from.

    Renderers read it through `doc` (json_input.Obj), which checks each member's type as it is read.
    """

    summary: dict[str, Any]
    source: str
    raw: bool = False  # True for results.jsonl alone: raw records, no verdict
    notes: list[str] = field(default_factory=list)
    digest: str = ""  # sha256 of the file read: the run's identity in the history store

    @cached_property
    def doc(self) -> Obj:
        return Obj(self.summary, self.source)

    @property
    def provenance(self) -> Obj:
        return self.doc.obj("provenance")

    @property
    def started(self) -> str:
        return self.doc.string("started")

    @property
    def simulated(self) -> bool:
        return self.provenance.boolean("simulated")

    @property
    def latency(self) -> Obj | None:
        lat = self.doc.opt_obj("latency")
        return lat if lat else None


ABSENT: Any = object()  # a member that is not there at all (null is there): `doc.get("schema", ABSENT)`


def check_schema(value: Any, expected: str, path: str | os.PathLike[str], member: str = "schema") -> str:
    """Checks a `schema` value (`member` names it in errors) against the versions of `expected`
    this reader reads (KNOWN_SCHEMAS), with the C++ reader's messages; returns the version."""
    if not isinstance(value, str):
        raise ReportInputError(path, f"{member}: expected a string, got {'nothing' if value is ABSENT else describe(value)}")
    versions = KNOWN_SCHEMAS[expected]
    reads = " or ".join(f"{expected}/{v}" for v in versions)
    name, _, version = value.rpartition("/")
    if name != expected:
        raise ReportInputError(path, f"{member}: '{value}' where {expected}/{versions[0]} was expected")
    if version not in versions:
        raise ReportInputError(path, f"{member}: '{value}' is a version this reader does not read (it reads {reads})")
    return version


def _check_latency(latency: Any, path: str | os.PathLike[str]) -> None:
    if latency is None:
        return
    if not isinstance(latency, dict):
        raise ReportInputError(path, f"latency: expected an object, got {describe(latency, 40)}")
    check_schema(latency.get("schema", ABSENT), "cuparity.latency", path, "latency.schema")


# --- the file -------------------------------------------------------------------------------------

def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a message."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _open_regular(path: str | os.PathLike[str]) -> int:
    """A descriptor of `path`, which must be a regular file; never blocks on a FIFO."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise ReportInputError(path, f"a link to nothing ({os.readlink(path)})") from None
        raise ReportInputError(path, "no such file") from None
    except (OSError, ValueError) as e:  # a link loop, a folder without permission, a NUL in the name
        raise ReportInputError(path, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ReportInputError(path, f"is {kind_of(st.st_mode)}, not a file to read")
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO after the stat, opening it cannot block.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise ReportInputError(path, f"cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ReportInputError(path, "changed while it was opened: not a regular file any more")
    return fd


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n and n % MiB == 0 else f"{n} bytes"


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (MAX_DOCUMENT_BYTES unless given; see
    the module's docstring)."""
    limit = MAX_DOCUMENT_BYTES if limit is None else limit
    fd = _open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise ReportInputError(path, f"{size} bytes, more than the {_size(limit)} this reader takes")
        chunks: list[bytes] = []
        got = 0
        while got <= limit:  # the file may grow while it is read: never past the limit
            chunk = os.read(fd, min(limit + 1 - got, 16 * MiB))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise ReportInputError(path, f"more than the {_size(limit)} this reader takes (it grew while read)")
        return b"".join(chunks)
    except OSError as e:
        raise ReportInputError(path, f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


# --- the JSON text --------------------------------------------------------------------------------

class JSONSyntaxError(ReportInputError):
    """Text that is no JSON at all (a cut-off line is one): kept apart from valid JSON whose values
    are refused, which is never a cut-off line."""


class _Refused:
    """A number the C++ reader refuses (NaN, Infinity, 1e400), kept until its member is named."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _constant(token: str) -> _Refused:
    return _Refused(f"{token} is not JSON (the judge writes null where a number is not finite)")


def _finite(text: str) -> float | _Refused:
    v = float(text)
    if math.isfinite(v):
        return v
    return _Refused(f"{text if len(text) <= 40 else text[:39] + '…'} is out of range for a double")


# An escaped surrogate: only then can a decoded string hold a lone one (UTF-8 text cannot).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_json(text: bytes | str, path: str | os.PathLike[str]) -> Any:
    """JSON text, or a ReportInputError naming `path`, and the member where one is to blame (never a
    traceback: not UTF-8, a number of thousands of digits, deep nesting, NaN, a lone surrogate)."""
    try:
        data = json.loads(text, parse_constant=_constant, parse_float=_finite)
    except json.JSONDecodeError as e:
        raise JSONSyntaxError(path, f"not valid JSON: {e}") from None
    except UnicodeDecodeError as e:
        raise JSONSyntaxError(path, f"not UTF-8 text: {e}") from None
    except ValueError as e:  # e.g. an integer beyond Python's digit limit
        raise ReportInputError(path, f"not usable JSON: {e}") from None
    except RecursionError:
        raise ReportInputError(path, "not usable JSON: nested too deeply") from None
    escape = _SURROGATE_ESCAPE if isinstance(text, str) else _SURROGATE_ESCAPE_BYTES
    _check_values(data, path, strings=escape.search(text) is not None)  # type: ignore[arg-type]
    return data


def _values(data: Any) -> Iterator[tuple[str, Any, int]]:
    """(member path, value, depth) of every key and value in document order (a key's path is its
    member's), without recursion: the depth is what is checked."""
    stack: list[tuple[str, Any, int, str | None]] = [("", data, 0, None)]
    while stack:
        where, value, depth, key = stack.pop()
        if key is not None:
            yield where, key, depth
        yield where, value, depth
        if isinstance(value, dict):
            stack.extend((member_path(where, k), v, depth + 1, k) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((element_path(where, i), value[i], depth + 1, None) for i in reversed(range(len(value))))


def _check_values(data: Any, path: str | os.PathLike[str], strings: bool) -> None:
    """Refuses what json.loads takes but the C++ reader does not: a NaN, Infinity or overflowing
    number, a lone surrogate (looked for only where the text escapes one), deep nesting."""
    for where, value, depth in _values(data):
        shown = where or "(top level)"
        if depth >= MAX_JSON_DEPTH and isinstance(value, (dict, list)):
            raise ReportInputError(path, f"not usable JSON: nested too deeply (more than {MAX_JSON_DEPTH} levels)")
        if isinstance(value, _Refused):
            raise ReportInputError(path, f"{shown}: {value.problem}")
        if strings and isinstance(value, str) and _SURROGATE.search(value):
            raise ReportInputError(path, f"{shown}: a lone surrogate ({describe(value)}) is not Unicode text")


def read_json(path: str | os.PathLike[str], limit: int | None = None) -> Any:
    """One JSON file, or a ReportInputError naming it and what is wrong (never a traceback)."""
    return parse_json(read_bytes(path, limit), path)


# --- summary.json ---------------------------------------------------------------------------------

def read_run_bytes(path: str | os.PathLike[str]) -> bytes:
    """A run's summary.json or results.jsonl as its text: a gzipped one (a stored run's
    summary.json.gz, results.jsonl.gz) is inflated, at most MAX_RUN_BYTES either way, as the C++
    reader does (harness/io/gzip_input.cpp)."""
    data = read_bytes(path, MAX_RUN_BYTES)
    if not data.startswith(b"\x1f\x8b"):
        return data
    out: list[bytes] = []
    got = 0
    rest = data
    try:
        while rest:  # several members are joined, as gzip -d does
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = inflater.decompress(rest, MAX_RUN_BYTES + 1 - got)
            while True:
                got += len(chunk)
                out.append(chunk)
                if got > MAX_RUN_BYTES:
                    raise ReportInputError(path, f"inflates to more than the {_size(MAX_RUN_BYTES)} this reader takes")
                if not inflater.unconsumed_tail:
                    break
                chunk = inflater.decompress(inflater.unconsumed_tail, MAX_RUN_BYTES + 1 - got)
            if not inflater.eof:
                raise ReportInputError(path, "the gzip stream ends early (a truncated file?)")
            rest = inflater.unused_data
    except zlib.error as e:
        raise ReportInputError(path, f"not a valid gzip stream ({e})") from None
    return b"".join(out)


def stored(run_dir: Path, name: str) -> Path:
    """`run_dir/name` where it exists in any form, else `name.gz` where that exists (a stored run)."""
    plain = run_dir / name
    if os.path.lexists(plain) or not os.path.lexists(run_dir / (name + ".gz")):
        return plain
    return run_dir / (name + ".gz")


def read_summary(path: str | os.PathLike[str]) -> Run:
    """Reads and checks one summary.json (or summary.json.gz): what the C++ reader checks now
    (check_summary), every other member where the renderers read it."""
    text = read_run_bytes(path)
    data = parse_json(text, path)
    if not isinstance(data, dict):
        raise ReportInputError(path, f"(top level): expected an object (cuparity.summary/1), got {describe(data, 40)}")
    check_schema(data.get("schema", ABSENT), "cuparity.summary", path)
    _check_latency(data.get("latency"), path)
    check_summary(Obj(data, str(path)))
    data.setdefault("cells", [])
    data.setdefault("problems", [])
    data.setdefault("groups", [])
    data.setdefault("counts", {})
    return Run(summary=data, source=str(path), digest=hashlib.sha256(text).hexdigest())


def read_events(path: str | os.PathLike[str], text: bytes | None = None) -> tuple[list[Obj], bool]:
    """Reads results.jsonl (or parses its bytes, `text`): returns its events (each names its line in
    errors) and whether a cut-off last line was skipped.

    Each line is decoded on its own, strictly: a line that is not UTF-8 is refused (the C++ reader
    refuses it too), unless it is the last, which a killed run may have cut inside a character."""
    if text is None:
        text = read_run_bytes(path)
    lines = text.split(b"\n")
    # Drop trailing empty strings (a final newline), keep track of the last real line.
    while lines and not lines[-1].strip():
        lines.pop()
    events: list[Obj] = []
    truncated = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            event = parse_json(line, where)
        except JSONSyntaxError:
            if number == len(lines):
                truncated = True  # a killed run's cut-off last line (valid JSON refused is never one)
                break
            raise
        if not isinstance(event, dict):
            raise ReportInputError(where, f"expected a JSON object, got {describe(event, 40)}")
        events.append(Obj(event, where))
    if not events:
        raise ReportInputError(path, "no complete events (empty or cut-off file)")
    first = events[0]
    if first.raw("type") != "run":
        raise ReportInputError(path, "first line is not a 'run' event")
    check_schema(first.raw("schema", ABSENT), "cuparity.results", path)
    return events, truncated


def merge_hint(matrix_path: str, run_dir: str) -> str:
    """The command that gives a run without summary.json its verdict (from the C++ judge)."""
    return f"cuparity merge {matrix_path or 'MATRIX'} {run_dir} -o {run_dir}"


def raw_from_events(events: list[Obj], source: str, truncated: bool, digest: str = "") -> Run:
    """The records of results.jsonl as they are: cells, the last result per (cell, case), counts.

    No verdict, groups, problems or divergences: those are the judge's (`cuparity merge` writes
    them into summary.json from the same records), and the notes say how to get them. Each member
    taken is checked as it is read, so an error names the line and the member.
    """
    head = events[0]
    cells: dict[str, dict[str, Any]] = {}
    results: dict[tuple[str, str], dict[str, Any]] = {}
    errors: list[str] = []
    wall: Any = None

    def cell_entry(cell_id: str) -> dict[str, Any]:
        return cells.setdefault(cell_id, {"id": cell_id, "label": "", "env": {}, "config": None})

    for e in events[1:]:
        kind = e.raw("type")
        if kind == "cell":
            c = cell_entry(e.string("cell"))
            config = e.opt_obj("config")
            c.update(config=None if config is None else config.value, device=e.string("device"),
                     startup_ms=e.obj("startup_ms").value,
                     env=dict(config.string_map("variables", nullable=True)) if config is not None else {})
        elif kind == "cell_error":
            cell_entry(e.string("cell"))
            errors.append(f"cell_error record: {e.string('cell')}: {e.string('kind')}: {e.string('message')}")
        elif kind == "case":
            cell, case = e.string("cell", REQUIRED), e.string("case", REQUIRED)
            outcome = e.string("outcome", REQUIRED)
            if outcome not in OUTCOMES:  # as the C++ reader of results.jsonl (record_schema.cpp)
                raise e.error("outcome", f"unknown outcome {describe(outcome)} (one of {', '.join(OUTCOMES)})")
            cell_entry(cell)
            results[(cell, case)] = {
                "cell": cell, "case": case, "outcome": outcome,
                "message": e.string("message"), "duration_ms": e.number("duration_ms"),
                "observations": e.obj("observations").value,
            }
        elif kind == "functional_phase":
            wall = e.number("wall_s")

    result_list = sorted(results.values(), key=lambda r: (r["cell"], r["case"]))
    counts: dict[str, int] = {}
    for r in result_list:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        cc = cells[r["cell"]].setdefault("counts", {})
        cc[r["outcome"]] = cc.get(r["outcome"], 0) + 1
    run_dir = str(Path(source).parent)
    notes = [f"No summary.json, so no verdict, groups or divergences: these are the raw records of {source}. `{merge_hint(head.string('matrix_path'), run_dir)}` writes the "
             "summary.json (the verdict) of what was recorded; `cuparity run MATRIX --out DIR --resume` "
             "completes the run."]
    if truncated:
        notes.append("the last line of results.jsonl was cut off and skipped")
    notes += errors
    summary: dict[str, Any] = {
        "schema": "cuparity.summary/1",
        "verdict": NO_VERDICT,
        "exit_code": None,
        "provenance": head.obj("provenance").value,
        "matrix": {"name": head.string("matrix"), "path": head.string("matrix_path"), "description": ""},
        "started": head.string("started"),
        "finished": "",
        "shard": head.string("shard"),
        "functional_wall_s": wall,
        "counts": counts,
        "results_count": len(result_list),
        "allowed": None,
        "cells": list(cells.values()),
        "groups": [],
        "divergences": [],
        "problems": [],
        "results": result_list,
        "latency": None,
    }
    return Run(summary=summary, source=source, raw=True, notes=notes, digest=digest)


def read_raw(path: Path) -> Run:
    """A run directory's results.jsonl alone, as raw records without a verdict."""
    text = read_run_bytes(path)  # read once: the digest is of the bytes shown
    events, truncated = read_events(path, text)
    return raw_from_events(events, str(path), truncated, hashlib.sha256(text).hexdigest())


def load_run(path: str | os.PathLike[str]) -> Run:
    """Loads a run directory, a summary.json, or a results.jsonl.

    In a directory, a summary.json that is there in any form (a FIFO, a link to nothing) is the one
    read, and refused as such: the page never falls back to results.jsonl behind a broken summary."""
    p = Path(path)
    if p.is_dir():
        if os.path.lexists(stored(p, "summary.json")):
            return read_summary(stored(p, "summary.json"))
        if os.path.lexists(stored(p, "results.jsonl")):
            return read_raw(stored(p, "results.jsonl"))
        raise ReportInputError(p, "run directory holds neither summary.json nor results.jsonl (nor their .gz)")
    if not os.path.lexists(p):
        raise ReportInputError(p, "no such file or directory")
    if p.name.endswith((".jsonl", ".jsonl.gz")):
        return read_raw(p)
    return read_summary(p)
