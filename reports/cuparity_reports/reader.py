"""Reads cuparity run outputs (summary.json, results.jsonl), checking every file's schema."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Highest major version of each schema this reader understands.
KNOWN_SCHEMAS: dict[str, int] = {
    "cuparity.summary": 1,
    "cuparity.results": 1,
    "cuparity.latency": 2,
    "cuparity.compare": 1,
}

# What a run without summary.json shows instead of a verdict: the C++ judge gives verdicts.
NO_VERDICT = "no verdict (no summary.json)"

OK_OUTCOMES = ("pass", "not_supported")  # for display counts only; no verdict is made from it


class ReportInputError(Exception):
    """A file given to the reports could not be used; the message names the file."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = str(path)
        self.detail = message
        super().__init__(f"{self.path}: {message}")


@dataclass
class Run:
    """One run, as a summary-like dict, plus where it came from."""

    summary: dict[str, Any]
    source: str
    raw: bool = False  # True for results.jsonl alone: raw records, no verdict
    notes: list[str] = field(default_factory=list)

    @property
    def provenance(self) -> dict[str, Any]:
        return self.summary.get("provenance") or {}

    @property
    def started(self) -> str:
        return str(self.summary.get("started") or "")

    @property
    def simulated(self) -> bool:
        return bool(self.provenance.get("simulated"))

    @property
    def latency(self) -> dict[str, Any] | None:
        return self.summary.get("latency") or None


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


def read_json(path: str | os.PathLike[str]) -> Any:
    """One JSON file, or a ReportInputError naming it and what is wrong (never a traceback)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise ReportInputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReportInputError(path, f"cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise ReportInputError(path, f"not valid JSON: {e}") from None


def read_summary(path: str | os.PathLike[str]) -> Run:
    """Reads and checks one summary.json."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise ReportInputError(path, "expected a JSON object")
    check_schema(data.get("schema"), "cuparity.summary", path)
    _check_latency(data.get("latency"), path)
    data.setdefault("results", [])
    data.setdefault("cells", [])
    data.setdefault("divergences", [])
    data.setdefault("problems", [])
    data.setdefault("groups", [])
    data.setdefault("counts", {})
    return Run(summary=data, source=str(path))


def read_events(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], bool]:
    """Reads results.jsonl: returns its events and whether a cut-off last line was skipped."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        raise ReportInputError(path, "no such file") from None
    except OSError as e:
        raise ReportInputError(path, f"cannot read: {e}") from None
    # Drop trailing empty strings (a final newline), keep track of the last real line.
    while lines and not lines[-1].strip():
        lines.pop()
    events: list[dict[str, Any]] = []
    truncated = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines):
                truncated = True  # a killed run's cut-off last line
                break
            raise ReportInputError(path, f"line {number} is not valid JSON: {e}") from None
        if not isinstance(event, dict):
            raise ReportInputError(path, f"line {number} is not a JSON object")
        events.append(event)
    if not events:
        raise ReportInputError(path, "no complete events (empty or cut-off file)")
    first = events[0]
    if first.get("type") != "run":
        raise ReportInputError(path, "first line is not a 'run' event")
    check_schema(first.get("schema"), "cuparity.results", path)
    return events, truncated


def merge_hint(matrix_path: str, run_dir: str) -> str:
    """The command that gives a run without summary.json its verdict (from the C++ judge)."""
    return f"cuparity merge {matrix_path or 'MATRIX'} {run_dir} -o {run_dir}"


def raw_from_events(events: list[dict[str, Any]], source: str, truncated: bool) -> Run:
    """The records of results.jsonl as they are: cells, the last result per (cell, case), counts.

    No verdict, groups, problems or divergences: those are the judge's (`cuparity merge` writes
    them into summary.json from the same records), and the notes say how to get them.
    """
    head = events[0]
    cells: dict[str, dict[str, Any]] = {}
    results: dict[tuple[str, str], dict[str, Any]] = {}
    errors: list[str] = []
    wall: Any = None

    def cell_entry(cell_id: str) -> dict[str, Any]:
        return cells.setdefault(cell_id, {"id": cell_id, "label": "", "env": {}, "config": None})

    for e in events[1:]:
        kind = e.get("type")
        if kind == "cell":
            c = cell_entry(str(e.get("cell", "")))
            config = e.get("config") if isinstance(e.get("config"), dict) else None
            c.update(config=config, device=e.get("device", ""), startup_ms=e.get("startup_ms") or {},
                     env=dict((config or {}).get("variables") or {}))
        elif kind == "cell_error":
            cell_entry(str(e.get("cell", "")))
            errors.append(f"cell_error record: {e.get('cell', '')}: {e.get('kind', '')}: {e.get('message', '')}")
        elif kind == "case":
            cell_entry(str(e.get("cell", "")))
            results[(str(e.get("cell", "")), str(e.get("case", "")))] = {
                "cell": e.get("cell", ""), "case": e.get("case", ""), "outcome": e.get("outcome", "error"),
                "message": e.get("message", ""), "duration_ms": e.get("duration_ms"),
                "observations": e.get("observations") or {},
            }
        elif kind == "functional_phase":
            wall = e.get("wall_s")

    result_list = sorted(results.values(), key=lambda r: (r["cell"], r["case"]))
    counts: dict[str, int] = {}
    for r in result_list:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        cc = cells[r["cell"]].setdefault("counts", {})
        cc[r["outcome"]] = cc.get(r["outcome"], 0) + 1
    run_dir = str(Path(source).parent)
    notes = [f"No summary.json, so no verdict, groups or divergences: these are the raw records of {source}. `{merge_hint(str(head.get('matrix_path', '')), run_dir)}` writes the "
             "summary.json (the verdict) of what was recorded; `cuparity run MATRIX --out DIR --resume` "
             "completes the run."]
    if truncated:
        notes.append("the last line of results.jsonl was cut off and skipped")
    notes += errors
    summary: dict[str, Any] = {
        "schema": "cuparity.summary/1",
        "verdict": NO_VERDICT,
        "exit_code": None,
        "provenance": head.get("provenance") or {},
        "matrix": {"name": head.get("matrix", ""), "path": head.get("matrix_path", ""), "description": ""},
        "started": head.get("started", ""),
        "finished": "",
        "shard": head.get("shard", ""),
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
    return Run(summary=summary, source=source, raw=True, notes=notes)


def load_run(path: str | os.PathLike[str]) -> Run:
    """Loads a run directory, a summary.json, or a results.jsonl."""
    p = Path(path)
    if p.is_dir():
        if (p / "summary.json").is_file():
            return read_summary(p / "summary.json")
        if (p / "results.jsonl").is_file():
            events, truncated = read_events(p / "results.jsonl")
            return raw_from_events(events, str(p / "results.jsonl"), truncated)
        raise ReportInputError(p, "run directory holds neither summary.json nor results.jsonl")
    if not p.exists():
        raise ReportInputError(p, "no such file or directory")
    if p.name.endswith(".jsonl"):
        events, truncated = read_events(p)
        return raw_from_events(events, str(p), truncated)
    return read_summary(p)
