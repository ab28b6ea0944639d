"""Reads cuparity run outputs (summary.json, results.jsonl), checking every file's schema."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

# ReportInputError is defined in json_input; it is imported from here too, as before.
from .json_input import REQUIRED, Obj, ReportInputError, describe

# Highest major version of each schema this reader understands.
KNOWN_SCHEMAS: dict[str, int] = {
    "cuparity.summary": 1,
    "cuparity.results": 1,
    "cuparity.latency": 2,
    "cuparity.compare": 1,
    "cuparity.faults": 1,
}

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


def check_schema(value: Any, expected: str, path: str | os.PathLike[str]) -> int:
    """Checks a `schema` value like "cuparity.summary/1" and returns its major version."""
    if not isinstance(value, str) or "/" not in value:
        raise ReportInputError(path, f"missing or malformed 'schema' (got {value!r}; expected {expected}/N)")
    name, _, version = value.rpartition("/")
    known = ", ".join(f"{k}/{v}" for k, v in KNOWN_SCHEMAS.items())
    if name not in KNOWN_SCHEMAS:
        raise ReportInputError(path, f"unknown schema {value!r} (this reader knows {known})")
    if name != expected:
        raise ReportInputError(path, f"schema {value!r} where {expected}/N was expected")
    try:
        major = int(version.split(".")[0])
    except ValueError:
        raise ReportInputError(path, f"malformed schema version in {value!r}") from None
    if major > KNOWN_SCHEMAS[name]:
        raise ReportInputError(
            path,
            f"schema {value!r} is newer than this reader ({name}/{KNOWN_SCHEMAS[name]}); "
            "update cuparity_reports",
        )
    if major < 1:
        raise ReportInputError(path, f"unsupported schema version in {value!r}")
    return major


def _check_latency(latency: Any, path: str | os.PathLike[str]) -> None:
    if latency is None:
        return
    if not isinstance(latency, dict):
        raise ReportInputError(path, "'latency' must be an object or null")
    check_schema(latency.get("schema"), "cuparity.latency", path)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise ReportInputError(path, "no such file") from None
    except IsADirectoryError:
        raise ReportInputError(path, "is a directory, not a file") from None
    except OSError as e:
        raise ReportInputError(path, f"cannot read: {e.strerror or e}") from None


def parse_json(text: bytes | str, path: str | os.PathLike[str]) -> Any:
    """JSON text, or a ReportInputError naming `path` (never a traceback: not UTF-8, a number of
    thousands of digits, nesting deeper than Python's recursion limit)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportInputError(path, f"not valid JSON: {e}") from None
    except UnicodeDecodeError as e:
        raise ReportInputError(path, f"not UTF-8 text: {e}") from None
    except ValueError as e:  # e.g. an integer beyond Python's digit limit
        raise ReportInputError(path, f"not usable JSON: {e}") from None
    except RecursionError:
        raise ReportInputError(path, "not usable JSON: nested too deeply") from None


def read_json(path: str | os.PathLike[str]) -> Any:
    """One JSON file, or a ReportInputError naming it and what is wrong (never a traceback)."""
    return parse_json(read_bytes(path), path)


def read_summary(path: str | os.PathLike[str]) -> Run:
    """Reads and checks one summary.json (its members are checked where the renderers read them)."""
    text = read_bytes(path)
    data = parse_json(text, path)
    if not isinstance(data, dict):
        raise ReportInputError(path, f"expected a JSON object (cuparity.summary/1), got {describe(data, 40)}")
    check_schema(data.get("schema"), "cuparity.summary", path)
    _check_latency(data.get("latency"), path)
    data.setdefault("results", [])
    data.setdefault("cells", [])
    data.setdefault("divergences", [])
    data.setdefault("problems", [])
    data.setdefault("groups", [])
    data.setdefault("counts", {})
    return Run(summary=data, source=str(path), digest=hashlib.sha256(text).hexdigest())


def read_events(path: str | os.PathLike[str]) -> tuple[list[Obj], bool]:
    """Reads results.jsonl: returns its events (each names its line in errors) and whether a
    cut-off last line was skipped."""
    text = read_bytes(path)
    lines = text.decode("utf-8", errors="replace").split("\n")
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
        except ReportInputError:
            if number == len(lines):
                truncated = True  # a killed run's cut-off last line
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
    check_schema(first.raw("schema"), "cuparity.results", path)
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
            cell_entry(cell)
            results[(cell, case)] = {
                "cell": cell, "case": case, "outcome": e.string("outcome", "error"),
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
    events, truncated = read_events(path)
    return raw_from_events(events, str(path), truncated, hashlib.sha256(read_bytes(path)).hexdigest())


def load_run(path: str | os.PathLike[str]) -> Run:
    """Loads a run directory, a summary.json, or a results.jsonl."""
    p = Path(path)
    if p.is_dir():
        if (p / "summary.json").is_file():
            return read_summary(p / "summary.json")
        if (p / "results.jsonl").is_file():
            return read_raw(p / "results.jsonl")
        raise ReportInputError(p, "run directory holds neither summary.json nor results.jsonl")
    if not p.exists():
        raise ReportInputError(p, "no such file or directory")
    if p.name.endswith(".jsonl"):
        return read_raw(p)
    return read_summary(p)
