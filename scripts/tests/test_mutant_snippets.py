"""Every mutant's snippet occurs exactly once in its file, as scripts/mutants requires: a file moved
or a line reworded must not leave a mutant that can no longer be applied (and so proves nothing)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MUTANTS = sorted((REPO / "tests" / "mutants").glob("*.mutants"))


def test_there_are_mutant_files():
    assert len(MUTANTS) >= 5


@pytest.mark.parametrize("path", MUTANTS, ids=lambda p: p.name)
def test_each_snippet_occurs_exactly_once(path: Path):
    problems = []
    for m in tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", []):
        target = REPO / m["file"]
        if not target.is_file():
            problems.append(f"{m['name']}: no file {m['file']}")
            continue
        count = target.read_text(encoding="utf-8").count(m["find"])
        if count != 1:
            problems.append(f"{m['name']}: its snippet occurs {count} times in {m['file']}")
    assert problems == []
