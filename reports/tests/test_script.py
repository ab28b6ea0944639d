"""scripts/report works from any directory and passes exit codes through."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import FIXTURES, REPORTS

SCRIPT = REPORTS.parent / "scripts" / "report"


def test_script_from_another_directory(tmp_path: Path) -> None:
    r = subprocess.run([str(SCRIPT), "compare", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b"), "--json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and '"regressed": true' in r.stdout
    r = subprocess.run([str(SCRIPT), "compare", "nope-a", "nope-b"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "nope-a" in r.stderr
