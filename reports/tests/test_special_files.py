"""Files that are not regular files, as inputs and as outputs: refused with exit 2 naming them, never
opened in a way that blocks, never replaced; an output is never one of the inputs; sizes are bounded.

A device node is made only when running as root (os.mknod of /dev/null's numbers in tmp_path; the
real /dev/null is never touched); those cases are skipped otherwise. Every case runs under an
alarm: a read that blocked on a FIFO would end the test as an error, not hang the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Callable

import pytest

from conftest import FIXTURES
from cuparity_reports import output, reader
from cuparity_reports.cli import main
from cuparity_reports.json_input import ReportInputError

KINDS = ["device", "fifo", "symlink", "dangling-symlink", "symlink-loop", "directory"]


@pytest.fixture(autouse=True)
def alarm(no_blocking: None) -> None:
    """Every test here: see conftest.no_blocking."""


def make_special(path: Path, kind: str) -> Callable[[], object]:
    """Makes `path` a file of `kind`; returns what identifies it as it is (to see it unchanged)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":  # to a regular file, which must stay as it is too
        target = path.parent / f"{path.name}.target"
        target.write_text("the link's own file\n")
        path.symlink_to(target.name)
    elif kind == "dangling-symlink":
        path.symlink_to("nothing-here")
    elif kind == "symlink-loop":
        path.symlink_to(path.name)
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text("x")

    def state() -> object:
        st = os.lstat(path)
        linked = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
        target = path.parent / f"{path.name}.target"
        return (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev, linked,
                target.read_text() if target.exists() else None,
                sorted(p.name for p in path.iterdir()) if stat.S_ISDIR(st.st_mode) else None)

    return state


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


# --- outputs --------------------------------------------------------------------------------------

OUTPUT_KINDS = ["device", "fifo", "symlink", "dangling-symlink", "symlink-loop"]


@pytest.mark.parametrize("kind", OUTPUT_KINDS)
@pytest.mark.parametrize("command", ["dashboard", "faults"])
def test_an_output_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str, command: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the page replaced a device node, a FIFO or a link with a regular file, and exited 0."""
    out = tmp_path / "out.html"
    state = make_special(out, kind)
    before = state()
    source = str(FIXTURES / "cmp-a") if command == "dashboard" else str(FIXTURES / "faults-sim.json")
    code, err = run_main([command, source, "--output", str(out)], capsys)
    assert code == 2, err
    assert err.startswith(f"cuparity-report: error: {out}: is a ") and "not a regular file" in err, err
    assert state() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("kind", OUTPUT_KINDS + ["directory"])
def test_write_atomically_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """The one writer of the reports (dashboard, faults page, history store and index)."""
    out = tmp_path / "target"
    state = make_special(out, kind)
    before = state()
    with pytest.raises(ReportInputError) as e:
        output.write_atomically(out, "data")
    assert e.value.path == str(out)
    assert state() == before


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_history_add_does_not_replace_a_stored_file_that_is_not_regular(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    key = json.loads((store / "index.json").read_text())["runs"][0]["key"]
    stored = store / key
    stored.unlink()
    state = make_special(stored, kind)
    before = state()
    capsys.readouterr()
    code, err = run_main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)], capsys)
    if kind == "symlink":  # a link to a file of other bytes: the stored copy is altered, the link refused
        assert code == 2 and f"{stored}: is a symbolic link" in err, err
    else:
        assert code == 2 and f"{stored}: is a " in err, err
    assert state() == before


def test_the_page_is_never_written_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `dashboard RUN --output RUN/summary.json` replaced the summary with the page."""
    run = tmp_path / "run"
    run.mkdir()
    summary = run / "summary.json"
    shutil.copy(FIXTURES / "cmp-a" / "summary.json", summary)
    original = summary.read_bytes()
    (tmp_path / "hard.html").hardlink_to(summary)
    records = run / "results.jsonl"  # not read where there is a summary, but the run's all the same
    shutil.copy(FIXTURES / "interrupted" / "results.jsonl", records)
    for out in (summary, tmp_path / "hard.html", run / "." / "summary.json", records):
        code, err = run_main(["dashboard", str(run), "--output", str(out)], capsys)
        assert code == 2, err
        assert f"{out}: is one of the inputs" in err, err
        assert summary.read_bytes() == original
    assert records.read_bytes() == (FIXTURES / "interrupted" / "results.jsonl").read_bytes()


def test_the_page_is_never_written_over_a_history_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    index = store / "index.json"
    stored = store / json.loads(index.read_text())["runs"][0]["key"]
    saved = {p: p.read_bytes() for p in (index, stored)}
    for out in saved:
        code, err = run_main(["dashboard", str(FIXTURES / "cmp-b"), "--history", str(store), "--output", str(out)],
                             capsys)
        assert code == 2 and f"{out}: is one of the inputs" in err, err
    assert {p: p.read_bytes() for p in saved} == saved


def test_the_faults_page_is_never_written_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = tmp_path / "faults.json"
    shutil.copy(FIXTURES / "faults-sim.json", faults)
    code, err = run_main(["faults", str(faults), "--output", str(faults)], capsys)
    assert code == 2 and f"{faults}: is one of the inputs" in err, err
    assert faults.read_bytes() == (FIXTURES / "faults-sim.json").read_bytes()


def test_a_failed_write_keeps_the_previous_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.html"
    out.write_text("the previous page")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "replace", refuse)
    code, err = run_main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(out)], capsys)
    assert code == 3 and f"{out}: cannot write: No space left on device" in err  # the environment's, not bad input
    assert out.read_text() == "the previous page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.html"]


def test_a_regular_output_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.html"
    out.write_text("the previous page")
    code, err = run_main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(out)], capsys)
    assert code == 0, err
    assert out.read_text().startswith("<!DOCTYPE html>")


# --- inputs ---------------------------------------------------------------------------------------

INPUT_KINDS = ["device", "fifo", "dangling-symlink", "symlink-loop", "directory"]


@pytest.mark.parametrize("kind", INPUT_KINDS)
@pytest.mark.parametrize("name", ["summary.json", "results.jsonl"])
def test_a_run_file_that_is_not_regular_is_refused(tmp_path: Path, kind: str, name: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a FIFO as summary.json blocked the dashboard for ever."""
    run = tmp_path / "run"
    bad = run / name
    make_special(bad, kind)
    for argv in (["dashboard", str(run), "--output", str(tmp_path / "d.html")],
                 ["dashboard", str(bad), "--output", str(tmp_path / "d.html")],
                 ["history", "add", str(run), "--store", str(tmp_path / "store")]):
        code, err = run_main(argv, capsys)
        assert code == 2, (argv, err)
        assert err.startswith(f"cuparity-report: error: {bad}: "), (argv, err)
    assert not (tmp_path / "d.html").exists() and not (tmp_path / "store").exists()


@pytest.mark.parametrize("kind", INPUT_KINDS)
def test_other_documents_that_are_not_regular_are_refused(tmp_path: Path, kind: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "doc.json"
    make_special(bad, kind)
    for argv in (["compare", "--from", str(bad)], ["faults", str(bad), "--output", str(tmp_path / "f.html")]):
        code, err = run_main(argv, capsys)
        assert code == 2 and err.startswith(f"cuparity-report: error: {bad}: "), (argv, err)


def test_read_bytes_does_not_block_on_a_fifo_put_in_after_the_check(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The type is checked, then the file opened non-blocking and checked again: a FIFO swapped in
    between is refused, not waited on."""
    path = tmp_path / "summary.json"
    path.write_text("{}")
    real_open = os.open

    def swap(p: object, flags: int, *args: object) -> int:
        os.unlink(path)
        os.mkfifo(path)
        return real_open(p, flags, *args)

    monkeypatch.setattr(reader.os, "open", swap)
    with pytest.raises(ReportInputError, match="not a regular file any more"):
        reader.read_bytes(path)


def test_inputs_are_bounded_in_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    size = (FIXTURES / "cmp-a" / "summary.json").stat().st_size
    monkeypatch.setattr(reader, "MAX_RUN_BYTES", size - 1)
    code, err = run_main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(tmp_path / "d.html")], capsys)
    assert code == 2 and f"summary.json: {size} bytes, more than the {size - 1} bytes this reader takes" in err
    monkeypatch.setattr(reader, "MAX_DOCUMENT_BYTES", 100)
    code, err = run_main(["compare", "--from", str(FIXTURES / "faults-sim.json")], capsys)
    assert code == 2 and "more than the 100 bytes this reader takes" in err
