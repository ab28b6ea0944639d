"""History store of run summaries: one file per run, plus an index. It stores; it does not judge."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from .reader import ReportInputError, Run, load_run, read_summary

INDEX = "index.json"
INDEX_SCHEMA = "cuparity.history/1"


def safe_name(text: Any, fallback: str = "unknown") -> str:
    """A file-name-safe form of any text: letters, digits, '.', '_' and '-' only."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text if text is not None else "")).strip("._-")
    return s[:80] or fallback


def run_key(run: Run) -> str:
    """The store path of a run: <host>/<gpu>/<driver>/<started>-<rev>.json."""
    prov = run.provenance
    gpus = prov.get("gpus") or []
    gpu = gpus[0] if gpus else "no-gpu"
    driver = prov.get("driver_version_text") or prov.get("driver_version") or "unknown"
    rev = str(prov.get("git_revision") or "norev")[:12] + ("-dirty" if prov.get("git_dirty") else "")
    started = safe_name(run.started.replace(":", ""), "unstarted")
    parts = [safe_name(prov.get("host")), safe_name(gpu), safe_name(f"driver-{driver}"),
             f"{started}-{safe_name(rev)}.json"]
    return "/".join(parts)


def index_entry(key: str, run: Run) -> dict[str, Any]:
    prov = run.provenance
    s = run.summary
    return {
        "key": key,
        "started": run.started,
        "host": prov.get("host", ""),
        "gpu": (prov.get("gpus") or [""])[0],
        "driver_version": prov.get("driver_version"),
        "driver_version_text": prov.get("driver_version_text", ""),
        "git_revision": prov.get("git_revision", ""),
        "git_dirty": bool(prov.get("git_dirty")),
        "simulated": bool(prov.get("simulated")),
        "matrix": (s.get("matrix") or {}).get("name", ""),
        "verdict": s.get("verdict", ""),
        "counts": s.get("counts") or {},
        "divergences": len(s.get("divergences") or []),
    }


def read_index(store: str | os.PathLike[str]) -> list[dict[str, Any]]:
    path = Path(store) / INDEX
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ReportInputError(path, f"cannot read the history index: {e}") from None
    if not isinstance(data, dict) or data.get("schema") != INDEX_SCHEMA:
        raise ReportInputError(path, f"not a history index (expected schema {INDEX_SCHEMA})")
    return list(data.get("runs") or [])


def _write_index(store: Path, entries: list[dict[str, Any]]) -> None:
    entries = sorted(entries, key=lambda e: (e.get("started", ""), e["key"]))
    tmp = store / (INDEX + ".tmp")
    tmp.write_text(json.dumps({"schema": INDEX_SCHEMA, "runs": entries}, indent=1, sort_keys=True) + "\n",
                   encoding="utf-8")
    os.replace(tmp, store / INDEX)


def add(run_path: str | os.PathLike[str], store: str | os.PathLike[str]) -> tuple[str, bool]:
    """Copies a run's summary into the store; returns (key, whether it was new)."""
    run = load_run(run_path)
    if run.raw:
        raise ReportInputError(run.source, "the history store takes runs with a verdict (no summary.json here; "
                               "`cuparity merge` writes one)")
    root = Path(store)
    root.mkdir(parents=True, exist_ok=True)
    key = run_key(run)
    dest = root / key
    dest.parent.mkdir(parents=True, exist_ok=True)
    new = not dest.exists()
    shutil.copyfile(run.source, dest)
    entries = [e for e in read_index(root) if e.get("key") != key]
    entries.append(index_entry(key, run))
    _write_index(root, entries)
    return key, new


def load_store(store: str | os.PathLike[str]) -> list[Run]:
    """Every run in a store, oldest first (each file's schema is checked)."""
    root = Path(store)
    if not root.is_dir():
        raise ReportInputError(root, "no such history store")
    runs = [read_summary(root / e["key"]) for e in read_index(root)]
    return sorted(runs, key=lambda r: r.started)


def render_list(store: str | os.PathLike[str]) -> str:
    entries = read_index(store)
    if not entries:
        return f"{store}: empty history store\n"
    lines = []
    header = f"{'started':<21} {'host':<12} {'gpu':<28} {'driver':<7} {'rev':<14} {'verdict':<11} pass/fail/div"
    lines.append(header)
    for e in entries:
        c = e.get("counts") or {}
        fails = sum(v for k, v in c.items() if k not in ("pass", "not_supported"))
        rev = str(e.get("git_revision", ""))[:10] + ("+" if e.get("git_dirty") else "")
        sim = " SIMULATED" if e.get("simulated") else ""
        lines.append(f"{e.get('started', ''):<21} {str(e.get('host', ''))[:12]:<12} "
                     f"{str(e.get('gpu', ''))[:28]:<28} {str(e.get('driver_version_text', '')):<7} "
                     f"{rev:<14} {str(e.get('verdict', '')):<11} "
                     f"{c.get('pass', 0)}/{fails}/{e.get('divergences', 0)}{sim}")
    return "\n".join(lines) + "\n"
