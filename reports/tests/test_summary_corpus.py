"""Both summary readers give the same answer for every file of tests/summaries/ (issue 47, 19).

The corpus (tests/summaries/expected.json) says, for each summary, that it is accepted, or that
it is refused naming a member (and with what words, where the readers share them). Here the
Python reader (reader.read_summary), the commands built on it (`dashboard`, `history add`) and
the C++ reader (`cuparity compare F F`) are each held to it; tests/unit/test_report.cpp holds the
C++ reader to it again inside the unit tests. Before, the dashboard refused `coverage.complete:
true` with five pairs missing where `cuparity compare` took it, and showed a
`cuparity.summary/1.5` that `cuparity compare` refused.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REPORTS
from cuparity_reports.cli import main
from cuparity_reports.reader import ReportInputError, read_summary

CORPUS = REPORTS.parent / "tests" / "summaries"
EXPECTED: dict[str, dict[str, str | bool]] = json.loads((CORPUS / "expected.json").read_text())


def test_the_corpus_and_its_answers_name_the_same_files() -> None:
    assert sorted(p.name for p in CORPUS.glob("*.summary.json")) == sorted(EXPECTED)
    assert any(e.get("accepted") for e in EXPECTED.values()) and not all(e.get("accepted") for e in EXPECTED.values())


def refusal(expected: dict, path: Path, message: str) -> None:
    """`message` is the refusal `expected` names: `<file>: <member>: ...`, holding its words."""
    assert message.startswith(f"{path}: {expected['member']}: "), message
    assert expected["says"] in message, message


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_python_reader_answers_as_the_corpus_says(name: str) -> None:
    path, expected = CORPUS / name, EXPECTED[name]
    if expected.get("accepted"):
        read_summary(path)
        return
    with pytest.raises(ReportInputError) as e:
        read_summary(path)
    refusal(expected, path, str(e.value))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_commands_answer_alike(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the reader accepts is shown and stored; what it refuses is exit 2 for both, named."""
    path, expected = CORPUS / name, EXPECTED[name]
    for argv in (["dashboard", str(path), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(path), "--store", str(tmp_path / "store")]):
        code = main(argv)
        err = capsys.readouterr().err
        if expected.get("accepted"):
            assert code == 0, (argv, err)
        else:
            assert code == 2, (argv, err)
            refusal(expected, path, err.removeprefix("cuparity-report: error: ").strip())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cuparity_compare_answers_as_the_corpus_says(name: str, cuparity_bin: Path) -> None:
    path, expected = CORPUS / name, EXPECTED[name]
    done = subprocess.run([str(cuparity_bin), "compare", str(path), str(path)], capture_output=True, text=True,
                          timeout=60)
    if expected.get("accepted"):
        assert done.returncode in (0, 1), done.stderr  # 1: a run that is incomplete compares as such
        return
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    line = next(l for l in done.stderr.splitlines() if str(path) in l)
    refusal(expected, path, line[line.index(str(path)):])
