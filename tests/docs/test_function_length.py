"""House rule: no function of the project's own code is longer than about 80 lines.

Measured by lizard (a C/C++ function analyser from PyPI, pinned in reports/requirements.txt) over
the harness, the backends, the cases and the tools, C and C++. The simulated driver and the tests
are fixtures, not the harness, and are left out. A function longer than the limit fails the test
with its place and length, so a new one is caught in review, not years later.
"""

from __future__ import annotations

from pathlib import Path

import lizard
import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("harness", "backends", "cases", "tools", "examples")
LIMIT = 80


def functions_over(limit: int, folders=FOLDERS):
    """(path:line, name, length) of each function longer than limit lines, longest first."""
    files = [p for folder in folders if (REPO / folder).is_dir()
             for p in sorted((REPO / folder).rglob("*")) if p.suffix in (".c", ".cpp", ".hpp", ".h")]
    found = []
    for path in files:
        info = lizard.analyze_file(str(path))
        for f in info.function_list:
            if f.length > limit:
                found.append((f"{path.relative_to(REPO)}:{f.start_line}", f.name, f.length))
    return sorted(found, key=lambda x: -x[2])


def test_no_function_over_the_limit():
    over = functions_over(LIMIT)
    assert not over, "functions over %d lines:\n%s" % (
        LIMIT, "\n".join(f"  {where} {name}: {length} lines" for where, name, length in over))


def test_the_measure_sees_a_long_function(tmp_path, monkeypatch):
    # The check can fail: a 90-line function in a scratch tree is reported with its place.
    folder = tmp_path / "harness"
    folder.mkdir()
    body = "\n".join(f"  x += {i};" for i in range(90))
    (folder / "long.cpp").write_text(f"int long_one(int x) {{\n{body}\n  return x;\n}}\n", encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "REPO", tmp_path)
    over = functions_over(LIMIT, ("harness",))
    assert over == [("harness/long.cpp:1", "long_one", 93)]
