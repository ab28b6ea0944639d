"""History store of run summaries (one file per run, plus an index) and change-point detection."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .reader import ReportInputError, Run, load_run, read_summary

INDEX = "index.json"
INDEX_SCHEMA = "cuparity.history/1"

# Change points: a run is flagged when the median of the WINDOW points from it onwards differs
# from the median of the WINDOW points before it by more than CHANGE_THRESHOLD (relative to the
# smaller of the two), and that shift is the largest among its neighbours (one step, one flag).
WINDOW = 3
CHANGE_THRESHOLD = 0.10
MIN_SIDE = 2  # points needed on each side: one odd run is not a change point


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
    if run.rebuilt:
        raise ReportInputError(run.source, "the history store takes finished runs (no summary.json here)")
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


@dataclass
class ChangePoint:
    index: int  # first point after the change
    before: float
    after: float

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else math.inf


def _median(values: list[float]) -> float:
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def _rel(before: float, after: float) -> float:
    """Symmetric relative shift: |after - before| over the smaller magnitude (up and down alike)."""
    low = min(abs(before), abs(after))
    if low == 0:
        return math.inf if after != before else 0.0
    return abs(after - before) / low


def change_points(values: Sequence[float | None], window: int = WINDOW,
                  threshold: float = CHANGE_THRESHOLD) -> list[ChangePoint]:
    """Median-shift change points over a series ordered by time (None = no value, skipped).

    For each point j with at least MIN_SIDE points on either side, compare the median of the `window` points before it with the median of
    `window` points from j on. A shift beyond `threshold` is a change point at j when it is the
    largest within `window - 1` points either side (ties broken by the shift of the window means,
    which peaks exactly at a step), so one step is flagged once.
    """
    pts = [(i, float(v)) for i, v in enumerate(values) if v is not None and math.isfinite(float(v))]
    scored: list[tuple[tuple[float, float, float], ChangePoint]] = []
    for j in range(MIN_SIDE, len(pts) - MIN_SIDE + 1):
        before = [v for _, v in pts[max(0, j - window):j]]
        after = [v for _, v in pts[j:j + window]]
        mb, ma = _median(before), _median(after)
        mean_b, mean_a = sum(before) / len(before), sum(after) / len(after)
        score = (_rel(mb, ma), _rel(mean_b, mean_a), abs(mean_a - mean_b))
        scored.append((score, ChangePoint(pts[j][0], mb, ma)))
    found: list[ChangePoint] = []
    last_k = -window
    for k, (score, cp) in enumerate(scored):
        if score[0] <= threshold:
            continue
        neighbours = scored[max(0, k - window + 1):k + window]
        if all(score >= other for other, _ in neighbours) and k - last_k >= window:
            found.append(cp)
            last_k = k
    return found
