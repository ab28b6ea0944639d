"""History store of run summaries: one file per run, plus an index. It stores; it does not judge."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from .formatting import terminal_text as term
from .json_input import REQUIRED, Obj, ReportInputError, describe
from .output import write_atomically
from .reader import Run, load_run, read_bytes, read_json, read_summary

INDEX = "index.json"
INDEX_SCHEMA = "cuparity.history/1"


def safe_name(text: Any, fallback: str = "unknown") -> str:
    """A file-name-safe form of any text: letters, digits, '.', '_' and '-' only."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text if text is not None else "")).strip("._-")
    return s[:80] or fallback


KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")
DIGEST_CHARS = 12  # of the summary's sha256 in its key: what tells two runs of the same second apart


def run_key(run: Run) -> str:
    """The store path of a run: <host>/<gpu>/<driver>/<started>-<rev>[-dirty]-<digest>.json.

    `started` has whole seconds, so two runs of one revision started in the same second (two shards,
    two matrices) would share everything else; the first characters of the summary's own sha256 make
    the key unique, and stable: the same summary always gets the same key.
    """
    prov = run.provenance
    gpus = prov.strings("gpus")
    gpu = gpus[0] if gpus else "no-gpu"
    driver = prov.string("driver_version_text") or prov.integer("driver_version") or "unknown"
    rev = (prov.string("git_revision") or "norev")[:12] + ("-dirty" if prov.boolean("git_dirty") else "")
    started = safe_name(run.started.replace(":", ""), "unstarted")
    parts = [safe_name(prov.string("host")), safe_name(gpu), safe_name(f"driver-{driver}"),
             f"{started}-{safe_name(rev)}-{run.digest[:DIGEST_CHARS]}.json"]
    return "/".join(parts)


def index_entry(key: str, run: Run) -> dict[str, Any]:
    prov = run.provenance
    s = run.doc
    return {
        "key": key,
        "digest": run.digest,
        "started": run.started,
        "host": prov.string("host"),
        "gpu": (prov.strings("gpus") or [""])[0],
        "driver_version": prov.integer("driver_version"),
        "driver_version_text": prov.string("driver_version_text"),
        "git_revision": prov.string("git_revision"),
        "git_dirty": prov.boolean("git_dirty"),
        "simulated": prov.boolean("simulated"),
        "matrix": s.obj("matrix").string("name"),
        "verdict": s.string("verdict"),
        "counts": s.count_map("counts"),
        "divergences": len(s.items("divergences")),
    }


def read_index(store: str | os.PathLike[str]) -> list[Obj]:
    """The index's entries, oldest first; each entry's `key` is checked to be a path inside the store."""
    path = Path(store) / INDEX
    if not path.exists():
        return []
    data = read_json(path)
    if not isinstance(data, dict) or data.get("schema") != INDEX_SCHEMA:
        raise ReportInputError(path, f"not a history index (expected schema {INDEX_SCHEMA})")
    entries = Obj(data, str(path)).objs("runs")
    for e in entries:
        key = e.string("key", REQUIRED)
        if not KEY.fullmatch(key) or ".." in key.split("/"):
            raise e.error("key", f"not a file name inside the store: {describe(key)}")
        _list_line(e)  # every member `history list` shows, checked even where only keys are used
    return entries


def _write_index(store: Path, entries: list[dict[str, Any]]) -> None:
    entries = sorted(entries, key=lambda e: (e.get("started") or "", e["key"]))
    write_atomically(store / INDEX, json.dumps({"schema": INDEX_SCHEMA, "runs": entries}, indent=1,
                                               sort_keys=True) + "\n")


def _stored_digest(root: Path, entry: Obj) -> str:
    """An entry's summary digest: recorded in the index, or (older stores) computed from its file."""
    if entry.has("digest"):
        return entry.string("digest")
    try:
        return hashlib.sha256((root / entry.string("key")).read_bytes()).hexdigest()
    except OSError:
        return ""


def add(run_path: str | os.PathLike[str], store: str | os.PathLike[str]) -> tuple[str, bool]:
    """Copies a run's summary into the store; returns (key, whether it was new).

    A summary already in the store (the same bytes, under whatever key) is not stored twice.
    """
    run = load_run(run_path)
    if run.raw:
        raise ReportInputError(run.source, "the history store takes runs with a verdict (no summary.json here; "
                               "`cuparity merge` writes one)")
    from .dashboard import check_renderable  # matplotlib comes with it: only for `add`

    check_renderable(run)  # the store keeps only what the dashboard can show
    root = Path(store)
    if root.exists() and not root.is_dir():
        raise ReportInputError(root, "not a directory (--store names the history store's folder)")
    entries = read_index(root)
    for e in entries:
        if _stored_digest(root, e) == run.digest:
            return e.string("key"), False
    data = read_bytes(run.source)
    if hashlib.sha256(data).hexdigest() != run.digest:
        raise ReportInputError(run.source, "changed while it was read (add it again)")
    key = run_key(run)
    write_atomically(root / key, data)
    kept = [e.value for e in entries if e.string("key") != key]
    kept.append(index_entry(key, run))
    _write_index(root, kept)
    return key, True


def load_store(store: str | os.PathLike[str]) -> list[Run]:
    """Every run in a store, oldest first (each file's schema is checked)."""
    root = Path(store)
    if not root.is_dir():
        raise ReportInputError(root, "no such history store")
    runs = [read_summary(root / e.string("key")) for e in read_index(root)]
    return sorted(runs, key=lambda r: r.started)


LIST_HEADER = (f"{'started':<21} {'host':<12} {'gpu':<28} {'driver':<7} {'rev':<14} {'verdict':<11} "
               "pass/fail/div")


def _list_line(e: Obj) -> str:
    """One index entry for a terminal (text from the run with its control characters escaped)."""
    c = e.count_map("counts")
    fails = sum(v for k, v in c.items() if k not in ("pass", "not_supported"))
    rev = term(e.string("git_revision"))[:10] + ("+" if e.boolean("git_dirty") else "")
    sim = " SIMULATED" if e.boolean("simulated") else ""
    return (f"{term(e.string('started')):<21} {term(e.string('host'))[:12]:<12} "
            f"{term(e.string('gpu'))[:28]:<28} {term(e.string('driver_version_text')):<7} "
            f"{rev:<14} {term(e.string('verdict')):<11} "
            f"{c.get('pass', 0)}/{fails}/{e.integer('divergences', 0)}{sim}")


def render_list(store: str | os.PathLike[str]) -> str:
    """The stored runs for a terminal, oldest first."""
    entries = read_index(store)
    if not entries:
        return f"{term(store)}: empty history store\n"
    return "\n".join([LIST_HEADER] + [_list_line(e) for e in entries]) + "\n"
