"""The sdist and wheel under test: those scripts/test built (CUPARITY_DIST_DIR), else built now."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def dist_dir(tmp: Path) -> Path:
    """A folder holding one cuparity sdist and one repaired wheel of this tree."""
    named = os.environ.get("CUPARITY_DIST_DIR")
    if named:
        return Path(named)
    out = tmp / "dist"
    r = subprocess.run([str(REPO / "scripts" / "wheel"), str(out)], capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"{folder}: expected one {pattern}, found {[p.name for p in found]}"
    return found[0]
