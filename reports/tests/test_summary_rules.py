"""The reports validate a summary with the same rules as the C++ reader (harness/report/summary_reader.cpp,
harness/io/input_file.cpp, outcome.cpp): a summary `cuparity compare` refuses, the dashboard and
`history add` refuse too, with exit 2 naming the file and the member.

Each bad summary is cmp-a's, with one change made to its JSON text. The C++ cross-check asserts only
that `cuparity compare GOOD BAD` does not exit 0: which refusals are its exit 2 and which its exit 3
is the C++ side's to say.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from cuparity_reports.cli import main

GOOD = FIXTURES / "cmp-a"
GOOD_TEXT = (GOOD / "summary.json").read_text()
# What a terminal would act on, and lone surrogates: never in what the reports print.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def edited(**members: Any) -> str:
    """cmp-a's summary with top-level members set (a value of DROP removes the member)."""
    data = json.loads(GOOD_TEXT)
    for k, v in members.items():
        if v is DROP:
            del data[k]
        else:
            data[k] = v
    return json.dumps(data)


DROP = object()


def replaced(old: str, new: str, count: int = 1) -> str:
    assert old in GOOD_TEXT, old
    return GOOD_TEXT.replace(old, new, count)


def first_result(**members: Any) -> str:
    data = json.loads(GOOD_TEXT)
    for k, v in members.items():
        if v is DROP:
            del data["results"][0][k]
        else:
            data["results"][0][k] = v
    return json.dumps(data)


def nested(depth: int) -> str:
    data = json.loads(GOOD_TEXT)
    data["results"][0]["observations"] = {"deep": json.loads("[" * depth + "]" * depth)}
    return json.dumps(data)


# name -> (the summary's text, the member and problem the error names).
CORPUS: dict[str, tuple[str, str]] = {
    "nan": (edited(functional_wall_s=float("nan")), "functional_wall_s: NaN is not JSON"),
    "infinity": (edited(functional_wall_s=float("inf")), "functional_wall_s: Infinity is not JSON"),
    "minus-infinity": (edited(functional_wall_s=float("-inf")), "functional_wall_s: -Infinity is not JSON"),
    "nan-in-a-result": (first_result(duration_ms=float("nan")), "results[0].duration_ms: NaN is not JSON"),
    "overflow": (edited(functional_wall_s=1.5).replace("1.5", "1e400"),
                 "functional_wall_s: 1e400 is out of range for a double"),
    "overflow-exit-code": (replaced('"exit_code": 0', '"exit_code": 1e400'),
                           "exit_code: 1e400 is out of range for a double"),
    "exit-code-1e300": (replaced('"exit_code": 0', '"exit_code": 1e300'),
                        "exit_code: expected an exit code (0-255), got 1e+300"),
    "exit-code-fraction": (replaced('"exit_code": 0', '"exit_code": 0.5'),
                           "exit_code: expected an exit code (0-255), got 0.5"),
    "exit-code-negative": (edited(exit_code=-1), "exit_code: expected an exit code (0-255), got -1"),
    "exit-code-too-large": (edited(exit_code=2**31), "exit_code: expected an exit code (0-255), got 2147483648"),
    "exit-code-text": (edited(exit_code="0"), "exit_code: expected an exit code (0-255), got \"0\""),
    "exit-code-null": (edited(exit_code=None), "exit_code: expected an exit code (0-255), got null"),
    "exit-code-missing": (edited(exit_code=DROP), "exit_code: expected an exit code (0-255), got nothing"),
    "verdict-missing": (edited(verdict=DROP), "verdict: expected a string, got nothing"),
    "verdict-null": (edited(verdict=None), "verdict: expected a string, got null"),
    "verdict-unknown": (edited(verdict="bogus"), "verdict: unknown verdict \"bogus\""),
    "outcome-unknown": (first_result(outcome="bogus"), "results[0].outcome: unknown outcome \"bogus\""),
    "outcome-missing": (first_result(outcome=DROP), "results[0].outcome: expected a string, got nothing"),
    "case-missing": (first_result(case=DROP), "results[0].case: expected a string, got nothing"),
    "results-missing": (edited(results=DROP), "results: expected a list, got nothing"),
    "divergences-missing": (edited(divergences=DROP), "divergences: expected a list, got nothing"),
    "lone-low-surrogate": (replaced('"started": "', '"started": "\\udcff'),
                           "started: a lone surrogate (\"\\udcff"),
    "lone-high-surrogate": (replaced('"verdict": "equivalent"', '"verdict": "equivalent\\ud800"'),
                            "verdict: a lone surrogate (\"equivalent\\ud800\")"),
    "lone-surrogate-in-a-key": (replaced('"provenance": {', '"provenance": {"x\\udcff": 1, '),
                                "provenance.x\\udcff: a lone surrogate"),
    "lone-surrogate-in-an-observation": (
        first_result(observations={"name": "placeholder"}).replace("placeholder", "\\udcff"),
        "results[0].observations.name: a lone surrogate"),
    "nested-deeper-than-256": (nested(300), "nested too deeply (more than 256 levels)"),
}


def bad_run(tmp_path: Path, name: str) -> Path:
    run = tmp_path / name
    run.mkdir()
    (run / "summary.json").write_text(CORPUS[name][0], encoding="utf-8")
    return run


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_reports_refuse_what_the_cxx_reader_refuses(tmp_path: Path, name: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Before: each was shown (NaN, 1e400, an unknown outcome or verdict, no verdict), or, for a lone
    surrogate, a UnicodeEncodeError traceback and exit 70."""
    run = bad_run(tmp_path, name)
    says = CORPUS[name][1]
    summary = run / "summary.json"
    for argv in (["dashboard", str(run), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(run), "--store", str(tmp_path / "store")]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"cuparity-report: error: {summary}: "), (argv, err)
        assert says in err, (argv, err)
        assert not UNSAFE.search(err) and "Traceback" not in err
    assert not (tmp_path / "d.html").exists() and not (tmp_path / "store").exists()


def test_a_good_summary_still_passes(tmp_path: Path) -> None:
    """The corpus's base is good, and an exit code other than 0, 1 and 3 that a process can return is
    not the reader's to refuse."""
    for name, text in (("good", GOOD_TEXT), ("seven", edited(exit_code=7))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(text)
        assert main(["dashboard", str(tmp_path / name), "--output", str(tmp_path / f"{name}.html")]) == 0


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_cuparity_compare_refuses_the_same(tmp_path: Path, name: str, cuparity_bin: Path) -> None:
    run = bad_run(tmp_path, name)
    done = subprocess.run([str(cuparity_bin), "compare", str(GOOD), str(run)], capture_output=True, timeout=60)
    assert done.returncode != 0, done.stdout.decode(errors="replace")


def test_compare_renders_a_refusal_of_the_judge_as_exit_2(tmp_path: Path, cuparity_bin: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """scripts/report compare passes the judge's refusal on, naming the file (NaN: the judge's exit 2)."""
    run = bad_run(tmp_path, "nan")
    monkeypatch.setenv("CUPARITY_BIN", str(cuparity_bin))
    assert main(["compare", str(GOOD), str(run)]) == 2
    assert str(run / "summary.json") in capsys.readouterr().err


def test_a_lone_surrogate_in_results_jsonl_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (FIXTURES / "interrupted" / "results.jsonl").read_text().splitlines()[:-1]
    number = next(i for i, l in enumerate(lines, start=1) if json.loads(l).get("type") == "case")
    lines[number - 1] = lines[number - 1].replace('"message":"', '"message":"\\udcff', 1)
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["dashboard", str(tmp_path), "--output", str(tmp_path / "d.html")]) == 2
    assert capsys.readouterr().err == (f"cuparity-report: error: {tmp_path / 'results.jsonl'}: line {number}: "
                                       "message: a lone surrogate (\"\\udcff\") is not Unicode text\n")


@pytest.mark.parametrize("last", ['"duration_ms": NaN', '"outcome": "bogus"'])
def test_a_refused_last_line_is_not_taken_for_a_cut_off_one(tmp_path: Path, last: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A killed run's cut-off last line is skipped; valid JSON the reader refuses never is."""
    lines = (FIXTURES / "interrupted" / "results.jsonl").read_text().splitlines()[:-1]
    case = next(json.loads(l) for l in lines if json.loads(l).get("type") == "case")
    key, _, value = last.partition(": ")
    text = json.dumps({**case, "case": "a.new.case", key.strip('"'): "PLACEHOLDER"}).replace('"PLACEHOLDER"', value)
    (tmp_path / "results.jsonl").write_text("\n".join(lines + [text]) + "\n")
    assert main(["dashboard", str(tmp_path), "--output", str(tmp_path / "d.html")]) == 2
    err = capsys.readouterr().err
    assert f"results.jsonl: line {len(lines) + 1}: {key.strip(chr(34))}: " in err, err


def test_a_line_that_is_not_utf8_is_refused_unless_it_is_the_cut_off_last(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = [l for l in (FIXTURES / "interrupted" / "results.jsonl").read_bytes().split(b"\n") if l][:-1]
    at = raw[-1].index(b'"message":"') + len(b'"message":"')
    cut = raw[-1][:at] + b"\xc3"  # a killed writer stopped inside a two-byte character
    (tmp_path / "results.jsonl").write_bytes(b"\n".join(raw[:-1] + [cut]))
    assert main(["dashboard", str(tmp_path), "--output", str(tmp_path / "d.html")]) == 0
    at = raw[1].index(b'":"') + 3
    broken = raw[1][:at] + b"\xff" + raw[1][at:]
    (tmp_path / "results.jsonl").write_bytes(b"\n".join([raw[0], broken] + raw[2:]) + b"\n")
    assert main(["dashboard", str(tmp_path), "--output", str(tmp_path / "d.html")]) == 2
    assert "results.jsonl: line 2: not UTF-8 text" in capsys.readouterr().err


def test_compare_from_a_file_with_nan_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = json.loads((FIXTURES / "hostile" / "control-chars.compare.json").read_text())
    base["latency"] = [{**row, "ratio": float("nan")} for row in base.get("latency", [])] or [{"ratio": float("nan")}]
    path = tmp_path / "cmp.json"
    path.write_text(json.dumps(base))
    assert main(["compare", "--from", str(path)]) == 2
    assert f"{path}: latency[0].ratio: NaN is not JSON" in capsys.readouterr().err
