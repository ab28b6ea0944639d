"""Hostile inputs: garbled files are exit 2 naming the file and the member (never a traceback, never the
exit 1 that means "regressed"); outputs are written whole or not at all; text from a run cannot drive
the terminal; the history store keeps every run, however close in time.

The fixtures are in tests/fixtures/hostile/: wrong-types.json (members of the wrong type, applied one
by one to copies of the fixture runs), a cut-off summary, a list at top level, control characters in
a summary and in a compare file, and a history index naming a file outside its store.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, REPORTS
from cuparity_reports import compare, output
from cuparity_reports.cli import main
from cuparity_reports.history import DAMAGED_HINT

HOSTILE = FIXTURES / "hostile"
WRONG = json.loads((HOSTILE / "wrong-types.json").read_text())
SCRIPT = REPORTS.parent / "scripts" / "report"
# What a terminal would act on: C0 controls but the newline, DEL, C1 controls, bidirectional controls.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def put(data: Any, path: list[Any], value: Any) -> Any:
    """A copy of `data` with the member at `path` (keys and indices) set to `value`."""
    out = copy.deepcopy(data)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def without(data: Any, path: list[Any]) -> Any:
    """A copy of `data` without the member at `path`."""
    out = put(data, path, None)
    target = out
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return out


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def bad_summary(tmp_path: Path, case: dict[str, Any]) -> Path:
    base = json.loads((FIXTURES / case["base"] / "summary.json").read_text())
    return write(tmp_path / "run" / "summary.json", put(base, case["path"], case["value"]))


def expected_error(path: Path | str, case: dict[str, Any]) -> str:
    got = case.get("got", json.dumps(case["value"]))
    return f"cuparity-report: error: {path}: {case['member']}: expected {case['expected']}, got {got}\n"


def no_tmp_left(root: Path) -> None:
    left = [p for p in root.rglob("*") if p.name.endswith(".tmp")]
    assert not left, left


# --- 1. garbled input: exit 2, naming the file and the member -------------------------------------

def summary_cases(command: str) -> list[Any]:
    return [pytest.param(c, id=f"{c['base']}:{c['member']}") for c in WRONG["summaries"]
            if command in c.get("read_by", [command])]


@pytest.mark.parametrize("case", summary_cases("dashboard"))
def test_dashboard_refuses_a_wrong_type(tmp_path: Path, case: dict[str, Any],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    summary = bad_summary(tmp_path, case)
    out = tmp_path / "d.html"
    assert main(["dashboard", str(summary.parent), "--output", str(out)]) == 2
    assert capsys.readouterr().err == expected_error(summary, case)
    assert not out.exists()


@pytest.mark.parametrize("case", summary_cases("history add"))
def test_history_add_refuses_a_wrong_type(tmp_path: Path, case: dict[str, Any],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The store keeps only what the dashboard can show, so a garbled summary never gets in."""
    summary = bad_summary(tmp_path, case)
    store = tmp_path / "store"
    assert main(["history", "add", str(summary.parent), "--store", str(store)]) == 2
    assert capsys.readouterr().err == expected_error(summary, case)
    assert not store.exists() or not any(p.is_file() for p in store.rglob("*"))


@pytest.mark.parametrize("member, value, says", [
    (["coverage", "missing_count"], 3, "coverage.missing_count: 3, fewer than the 4 pairs listed in 'missing'"),
    (["coverage", "unplanned_count"], -1, "coverage.unplanned_count: expected a count (0, 1, ...), got -1"),
    (["coverage", "complete"], True, "coverage.complete: true where missing_count is 4"),
], ids=["count-below-list", "negative-count", "complete-contradicted"])
def test_a_coverage_its_own_counts_contradict_is_exit_2(tmp_path: Path, member: list[Any], value: Any, says: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """As the judge's own reader refuses a count below its list, the page refuses to show a coverage
    whose `complete` or counts cannot be what the judge wrote; `history add` refuses to store it."""
    summary = bad_summary(tmp_path, {"base": "incomplete", "path": member, "value": value})
    for argv in (["dashboard", str(summary.parent), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(summary.parent), "--store", str(tmp_path / "store")]):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err == f"cuparity-report: error: {summary}: {says}\n", argv
    assert not (tmp_path / "d.html").exists() and not (tmp_path / "store").exists()


MISSING = object()  # the member taken out rather than set


@pytest.mark.parametrize("member, value, says", [
    (["breakdown", "wall_s"], -0.5, "breakdown.wall_s: expected a time, got -0.5"),
    (["breakdown", "processes"], -1, "breakdown.processes: expected a count, got -1"),
    (["breakdown", "summed_ms", "cases"], -128.2, "breakdown.summed_ms.cases: expected a time, got -128.2"),
    (["breakdown", "summed_ms", "exit"], float("nan"), "breakdown.summed_ms.exit: NaN is not JSON (the judge writes null where a number is not finite)"),
    (["breakdown", "summed_ms", "cuInit"], float("inf"), "breakdown.summed_ms.cuInit: Infinity is not JSON (the judge writes null where a number is not "
     "finite)"),
    (["breakdown", "helper_starts"], -2, "breakdown.helper_starts: expected a count, got -2"),
    (["breakdown", "suites_ms", "alloc"], -24.2, "breakdown.suites_ms.alloc: expected a time, got -24.2"),
    (["breakdown", "cases", 0, "summed_ms"], -1, "breakdown.cases[0].summed_ms: expected a time, got -1"),
    (["breakdown", "cases", 1, "runs"], -2, "breakdown.cases[1].runs: expected a count, got -2"),
    (["breakdown", "longest_cell", "wall_ms"], -126.5, "breakdown.longest_cell.wall_ms: expected a time, got -126.5"),
    (["breakdown", "cases", 0, "case"], MISSING, "breakdown.cases[0].case: expected a string, got nothing"),
    (["breakdown", "summed_ms", "helpers"], MISSING, "breakdown.summed_ms.helpers: expected a number, got nothing"),
    (["breakdown", "processes"], MISSING, "breakdown.processes: expected an integer, got nothing"),
    (["breakdown", "suites_ms"], MISSING, "breakdown.suites_ms: expected an object, got nothing"),
    (["breakdown", "cases"], MISSING, "breakdown.cases: expected a list, got nothing"),
    (["breakdown", "longest_cell"], MISSING, "breakdown.longest_cell: expected an object, got nothing"),
], ids=["negative-wall", "negative-processes", "negative-part", "nan-part", "infinite-part", "negative-starts",
        "negative-suite", "negative-case-time", "negative-runs", "negative-cell-wall", "case-without-id",
        "part-missing", "processes-missing", "suites-missing", "cases-missing", "longest-cell-missing"])
def test_a_garbled_breakdown_is_exit_2(tmp_path: Path, member: list[Any], value: Any, says: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The runner writes every member of its breakdown, each time and count at least 0 (and finite): a
    summary with one missing, negative or NaN is garbled, refused by the page and by `history add`
    (wrong kinds are in wrong-types.json)."""
    base = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    data = without(base, member) if value is MISSING else put(base, member, value)
    summary = write(tmp_path / "run" / "summary.json", data)
    for argv in (["dashboard", str(summary.parent), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(summary.parent), "--store", str(tmp_path / "store")]):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err == f"cuparity-report: error: {summary}: {says}\n", argv
    assert not (tmp_path / "d.html").exists() and not (tmp_path / "store").exists()


@pytest.mark.parametrize("member, value, says", [
    (["changes", "count"], 5, "changes.count: 5 where 'changes' lists 6"),
    (["changes", "count"], 7, "changes.count: 7 where 'changes' lists 6"),
    (["changes", "count"], -1, "changes.count: expected a count, got -1"),
    (["changes", "reference"], MISSING, "changes.reference: expected an object, got nothing"),
    (["changes", "fail_on_change"], MISSING, "changes.fail_on_change: expected true or false, got nothing"),
    (["changes", "pairs"], MISSING, "changes.pairs: expected a list, got nothing"),
    (["changes", "count"], MISSING, "changes.count: expected an integer, got nothing"),
    (["changes", "changes"], MISSING, "changes.changes: expected a list, got nothing"),
    (["changes", "pairs", 1, "reference"], MISSING, "changes.pairs[1].reference: expected a string, got nothing"),
    (["changes", "changes", 0, "cell"], MISSING, "changes.changes[0].cell: expected a string, got nothing"),
    (["changes", "changes", 1, "reference"], MISSING, "changes.changes[1].reference: expected a string, got nothing"),
    (["changes", "changes", 2, "case"], MISSING, "changes.changes[2].case: expected a string, got nothing"),
    (["changes", "changes", 3, "key"], MISSING, "changes.changes[3].key: expected a string, got nothing"),
    (["changes", "changes", 1, "before"], MISSING,
     "changes.changes[1].before: expected a JSON value (null where absent), got nothing"),
    (["changes", "changes", 4, "after"], MISSING,
     "changes.changes[4].after: expected a JSON value (null where absent), got nothing"),
], ids=["count-below-list", "count-above-list", "negative-count", "reference-missing", "fail-on-change-missing",
        "pairs-missing", "count-missing", "changes-missing", "pair-reference-missing", "change-cell-missing",
        "change-reference-missing", "change-case-missing", "change-key-missing", "before-missing", "after-missing"])
def test_garbled_changes_are_exit_2(tmp_path: Path, member: list[Any], value: Any, says: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The judge writes every member of its changes section and lists every change it counts (before and
    after too: null where a side has no value): a summary with one missing, a negative count or a count
    other than the list's length is garbled, refused by the page and by `history add` (wrong kinds are in
    wrong-types.json)."""
    base = json.loads((FIXTURES / "changes" / "summary.json").read_text())
    assert base["changes"]["count"] == len(base["changes"]["changes"]) == 6
    data = without(base, member) if value is MISSING else put(base, member, value)
    summary = write(tmp_path / "run" / "summary.json", data)
    for argv in (["dashboard", str(summary.parent), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(summary.parent), "--store", str(tmp_path / "store")]):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err == f"cuparity-report: error: {summary}: {says}\n", argv
    assert not (tmp_path / "d.html").exists() and not (tmp_path / "store").exists()


def test_changes_of_null_values_are_not_garbled(tmp_path: Path) -> None:
    """null is the judge's word for a side without a value (and for an unset reference variable): shown, not refused."""
    from cuparity_reports.dashboard import build
    from cuparity_reports.reader import load_run

    base = json.loads((FIXTURES / "changes" / "summary.json").read_text())
    data = put(put(put(base, ["changes", "changes", 0, "before"], None), ["changes", "changes", 0, "after"], None),
               ["changes", "reference", "B"], None)
    page = build([load_run(write(tmp_path / "run" / "summary.json", data))])
    assert 'id="changes-reference">B unset</span>' in page
    assert '<td class="mono">null</td><td class="mono differs">null</td>' in page


def test_a_garbled_summary_in_the_store_names_the_stored_file(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b"), "--store", str(store)]) == 0
    index = json.loads((store / "index.json").read_text())
    stored = store / index["runs"][1]["key"]
    data = json.loads(stored.read_text())
    stored.write_text(json.dumps(put(data, ["counts", "pass"], "6")))
    capsys.readouterr()
    assert main(["dashboard", str(FIXTURES / "cmp-a"), "--history", str(store), "--output",
                 str(tmp_path / "d.html")]) == 2
    assert capsys.readouterr().err == f"cuparity-report: error: {stored}: counts.pass: expected a count (0, 1, ...), got \"6\"\n"


def garbled_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (a summary.json that is no JSON object, what the error says)."""
    made = {
        "truncated": (HOSTILE / "truncated.summary.json", "not valid JSON"),
        "list": (HOSTILE / "list.summary.json", "(top level): expected an object"),
    }
    for name, content, says in (
        ("empty", b"", "not valid JSON"),
        ("not-utf8", b'{"schema": "cuparity.summary/1", "verdict": "\xff\xfe"}', "not UTF-8"),
        ("deep", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        ("huge-int", b'{"schema": "cuparity.summary/1", "allowed": ' + b"9" * 5000 + b"}", "not usable JSON"),
    ):
        path = tmp_path / "made" / f"{name}.summary.json"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
        made[name] = (path, says)
    return made


GARBLED = ["truncated", "list", "empty", "not-utf8", "deep", "huge-int"]


@pytest.mark.parametrize("name", GARBLED)
def test_garbled_summaries_are_exit_2(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path, says = garbled_files(tmp_path)[name]
    for argv in (["dashboard", str(path), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(path), "--store", str(tmp_path / "store")],
                 ["compare", "--from", str(path)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"cuparity-report: error: {path}: ") and says in err, (argv, err)
    assert not (tmp_path / "d.html").exists() and not (tmp_path / "store" / "index.json").exists()


@pytest.mark.parametrize("name", ["truncated", "list", "wrong-type"])
def test_compare_of_a_garbled_summary_is_exit_2_not_1(tmp_path: Path, name: str, cuparity_bin: Path) -> None:
    """scripts/report compare A B: B regressed would be 1; a B the judge cannot read is 2, and the message
    names the file (before, a traceback here exited 1 too)."""
    if name == "wrong-type":
        bad = bad_summary(tmp_path, WRONG["summaries"][0])
    else:
        bad = tmp_path / name / "summary.json"
        bad.parent.mkdir()
        shutil.copy(HOSTILE / f"{name}.summary.json", bad)
    for argv in ([str(FIXTURES / "cmp-a"), str(bad.parent)], [str(bad), str(FIXTURES / "cmp-b")]):
        r = subprocess.run([str(SCRIPT), "compare", *argv], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "CUPARITY_BIN": str(cuparity_bin)})
        assert r.returncode == 2, (argv, r.stdout, r.stderr)
        assert str(bad) in r.stderr and "Traceback" not in r.stderr and r.stdout == ""


COMPARE_CASES = [pytest.param(c, id=c["member"]) for c in WRONG["compare"]]


@pytest.mark.parametrize("case", COMPARE_CASES)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_compare_file_with_a_wrong_type_is_exit_2(tmp_path: Path, case: dict[str, Any], as_json: bool,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base = json.loads((HOSTILE / "control-chars.compare.json").read_text())
    path = write(tmp_path / "cmp.json", put(base, case["path"], case["value"]))
    assert main(["compare", "--from", str(path)] + (["--json"] if as_json else [])) == 2
    captured = capsys.readouterr()
    assert captured.err == expected_error(path, case) and captured.out == ""


def test_compare_file_whose_exit_code_contradicts_its_verdict_is_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = json.loads((HOSTILE / "control-chars.compare.json").read_text())
    path = write(tmp_path / "cmp.json", put(base, ["exit_code"], 0))
    assert main(["compare", "--from", str(path)]) == 2
    assert f"{path}: exit_code: 0 where 'regressed' is true" in capsys.readouterr().err


def test_results_jsonl_with_a_wrong_type_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (FIXTURES / "interrupted" / "results.jsonl").read_text().splitlines()[:-1]
    number = next(i for i, l in enumerate(lines, start=1) if json.loads(l).get("type") == "case")
    lines[number - 1] = json.dumps(put(json.loads(lines[number - 1]), ["outcome"], 5))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["dashboard", str(tmp_path), "--output", str(tmp_path / "d.html")]) == 2
    assert capsys.readouterr().err == \
        f"cuparity-report: error: {tmp_path / 'results.jsonl'}: line {number}: outcome: expected a string, got 5\n"


@pytest.mark.parametrize("member, value, says", [
    (["runs", 0, "counts", "pass"], "many", "runs[0].counts.pass: expected an integer, got \"many\""),
    (["runs", 0, "key"], 7, "runs[0].key: expected a string, got 7"),
    (["runs", 0], [], "runs[0]: expected an object, got []"),
    (["runs"], {}, "runs: expected a list, got {}"),
])
def test_history_index_with_a_wrong_type_is_exit_2(tmp_path: Path, member: list[Any], value: Any, says: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    index = store / "index.json"
    index.write_text(json.dumps(put(json.loads(index.read_text()), member, value)))
    capsys.readouterr()
    for argv in (["history", "list", "--store", str(store)],
                 ["history", "add", str(FIXTURES / "cmp-b"), "--store", str(store)],
                 ["dashboard", str(FIXTURES / "cmp-b"), "--history", str(store), "--output", str(tmp_path / "d.html")]):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err == f"cuparity-report: error: {index}: {says} ({DAMAGED_HINT})\n"


def test_history_index_cannot_name_a_file_outside_the_store(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = HOSTILE / "store-escape"
    assert (store / "../../cmp-a/summary.json").is_file()  # what the index points at exists
    for argv in (["history", "list", "--store", str(store)],
                 ["dashboard", str(FIXTURES / "cmp-b"), "--history", str(store), "--output", str(tmp_path / "d.html")]):
        assert main(argv) == 2
        assert "runs[0].key: not a file name inside the store" in capsys.readouterr().err


def test_a_bug_is_not_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 means "B regressed" and nothing else: an unexpected exception is 70, with its traceback."""
    def broken(*_: Any, **__: Any) -> str:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(compare, "render_text", broken)
    assert main(["compare", "--from", str(HOSTILE / "control-chars.compare.json")]) == 70
    err = capsys.readouterr().err
    assert "ZeroDivisionError: a bug" in err and "internal error" in err


# --- 2. outputs: whole or not at all --------------------------------------------------------------

def test_output_naming_a_folder_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    assert main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(folder)]) == 2
    assert f"{folder}: is a directory" in capsys.readouterr().err
    assert list(folder.iterdir()) == []
    no_tmp_left(tmp_path)


def test_output_under_a_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "d.html"
    assert main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(out)]) == 2
    assert f"{out}: cannot create its folder" in capsys.readouterr().err
    no_tmp_left(tmp_path)


def test_a_failed_write_leaves_no_tmp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Permissions do not stop root, so the rename is made to fail as an unwritable place would."""
    def refuse(src: Any, dst: Any, **_: Any) -> None:  # the store renames inside an open folder (dir_fd)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(output.os, "replace", refuse)
    out = tmp_path / "d.html"
    assert main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(out)]) == 2
    assert f"{out}: cannot write: Permission denied" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 2
    assert "cannot write: Permission denied" in capsys.readouterr().err
    assert not any(p.is_file() for p in store.rglob("*"))


def test_store_naming_a_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "store").write_text("x")
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(tmp_path / "store")]) == 2
    assert "not a directory" in capsys.readouterr().err
    no_tmp_left(tmp_path)


# --- 3. control characters are escaped on the terminal, and in the page --------------------------

def test_compare_file_text_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--from", str(HOSTILE / "control-chars.compare.json")]) == 1
    out = capsys.readouterr().out
    assert not UNSAFE.search(out), UNSAFE.findall(out)
    for shown in (r"A\x1b[2J/summary.json", r"B/summary.json\r\x1b[32mlooks fine", r"nv=0\x1b[1A",
                  r"alloc.copy.dtod\u202e", r"failed\n\x1b[32mno regression", r"[stream0=legacy\x1b[8m]",
                  r"launch\x1b[5m", r"nv=0\x07", r"note\x1b]0;title\x07"):
        assert shown in out, shown
    assert not any(line.startswith("forged") for line in out.splitlines())


def test_compare_of_runs_is_escaped(cuparity_bin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(FIXTURES / "cmp-a"), str(HOSTILE / "control-chars.summary.json")]) == 1
    out = capsys.readouterr().out
    assert not UNSAFE.search(out), UNSAFE.findall(out)
    assert r"stream.default.\x1b[1Asemantics\u202e" in out
    assert r"copy failed\r\x1b[32mno regression\x1b[0m\nforged line"[:60 + 12] in out


def test_the_compare_verdict_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the judge's verdict word of a compare file was printed as it was, escape sequences and all."""
    base = json.loads((HOSTILE / "control-chars.compare.json").read_text())
    path = write(tmp_path / "cmp.json", put(base, ["verdict"], "regressed\x1b[2J\rno regression\u202e"))
    assert main(["compare", "--from", str(path)]) == 1
    out = capsys.readouterr().out
    assert not UNSAFE.search(out), UNSAFE.findall(out)
    assert r"REGRESSED\x1b[2J\rNO REGRESSION\u202e" in out


def test_paths_that_are_not_utf8_are_printed_escaped(tmp_path: Path) -> None:
    """A run folder and an output named with a byte that is not UTF-8: the page and the terminal show
    it escaped (before: UnicodeEncodeError, exit 70, and no page)."""
    run = Path(os.fsdecode(bytes(tmp_path) + b"/run\xff"))
    shutil.copytree(FIXTURES / "cmp-a", run)
    out = Path(os.fsdecode(bytes(tmp_path) + b"/page\xfe.html"))
    r = subprocess.run([str(SCRIPT), "dashboard", str(run), "--output", str(out)], capture_output=True,
                       timeout=120, env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert r.stdout.decode("utf-8").startswith(f"cuparity-report: wrote {tmp_path}/page\\udcfe.html")
    page = out.read_text(encoding="utf-8")
    assert "run\\udcff/summary.json" in page


def test_history_list_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["history", "add", str(HOSTILE / "control-chars.summary.json"), "--store", str(store)]) == 0
    assert main(["history", "list", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert not UNSAFE.search(out) and r"vm\x1b]0;pw" in out


def test_error_messages_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = json.loads((FIXTURES / "cmp-a" / "summary.json").read_text())
    summary = write(tmp_path / "run\x1b[2J" / "summary.json", put(base, ["cells", 0, "env", "X\x1b[31m"], 5))
    assert main(["dashboard", str(summary), "--output", str(tmp_path / "d.html")]) == 2
    err = capsys.readouterr().err
    assert not UNSAFE.search(err)
    assert r"run\x1b[2J/summary.json: cells[0].env.X\x1b[31m: expected a string, got 5" in err


def test_page_escapes_markup_and_shows_control_characters() -> None:
    from cuparity_reports.dashboard import build
    from cuparity_reports.reader import load_run

    page = build([load_run(HOSTILE / "control-chars.summary.json")])
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page)
    assert r"label\x1b[31mred" in page and r"stream.default.\x1b[1Asemantics\u202e" in page
    xss = build([load_run(FIXTURES / "xss")])
    assert "<script>alert(1)</script>" not in xss and "&lt;script&gt;alert(1)&lt;/script&gt;" in xss


# --- 4. the history store keeps every run ---------------------------------------------------------

def test_runs_of_the_same_second_are_both_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmp-a and cmp-b started in the same second on the same revision and host."""
    a, b = (json.loads((FIXTURES / n / "summary.json").read_text()) for n in ("cmp-a", "cmp-b"))
    assert (a["started"], a["provenance"]["git_revision"], a["provenance"]["host"]) == \
        (b["started"], b["provenance"]["git_revision"], b["provenance"]["host"])
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    assert main(["history", "add", str(FIXTURES / "cmp-b"), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.count("added") == 2 and "already stored" not in out
    index = json.loads((store / "index.json").read_text())["runs"]
    assert len(index) == 2 and len({e["key"] for e in index}) == 2
    assert sorted(e["verdict"] for e in index) == ["equivalent", "failed"]
    assert all((store / e["key"]).read_bytes() in ((FIXTURES / n / "summary.json").read_bytes()
                                                  for n in ("cmp-a", "cmp-b")) for e in index)

    # Stable: the same summary gets the same key in another store, and is not stored twice.
    again = tmp_path / "again"
    assert main(["history", "add", str(FIXTURES / "cmp-b"), str(FIXTURES / "cmp-a"), "--store", str(again)]) == 0
    assert {e["key"] for e in json.loads((again / "index.json").read_text())["runs"]} == {e["key"] for e in index}
    capsys.readouterr()
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    assert "already stored" in capsys.readouterr().out
    assert len(json.loads((store / "index.json").read_text())["runs"]) == 2

    # And the dashboard shows both (the run given is the store's cmp-a, shown once).
    page_path = tmp_path / "d.html"
    assert main(["dashboard", str(FIXTURES / "cmp-a"), "--history", str(store), "--output", str(page_path)]) == 0
    table = page_path.read_text().split('id="history-table"')[1].split("</table>")[0]
    assert table.count("<tr>\n<td class=\"num\">") == 2


def test_a_store_of_older_keys_is_not_given_a_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store written before keys carried the digest: the same run added again is recognised by its bytes."""
    store = tmp_path / "store"
    old_key = "vm/cuparity_simulated_device_0/driver-13.0/2026-11-29T173949Z-e0713a55c3f1-dirty.json"
    (store / old_key).parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "cmp-a" / "summary.json", store / old_key)
    write(store / "index.json", {"schema": "cuparity.history/1",
                                 "runs": [{"key": old_key, "started": "2026-11-29T17:39:49Z"}]})
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    assert f"already stored: {store / old_key}" in capsys.readouterr().out
    assert main(["history", "add", str(FIXTURES / "cmp-b"), "--store", str(store)]) == 0
    assert len(json.loads((store / "index.json").read_text())["runs"]) == 2
