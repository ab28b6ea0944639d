"""History store: add/list/rebuild, safe keys, index (a damaged one refused and kept), stored copies checked;
the runner's medians and driver changes on the dashboard."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, H200_RUN, inflated, summary_file
from cuparity_reports.cli import main
from cuparity_reports.history import load_store, read_index, run_key
from cuparity_reports.reader import load_run


def test_key_is_safe() -> None:
    run = load_run(FIXTURES / "xss")
    key = run_key(run)
    parts = key.split("/")
    assert len(parts) == 5 and all(p and ".." not in p and "<" not in p and '"' not in p for p in parts)
    h200 = load_run(H200_RUN)
    digest = hashlib.sha256(inflated(summary_file(H200_RUN))).hexdigest()  # of the summary, not its gzip
    # Before provenance carried the driver release, a run files under the CUDA API version it reported.
    assert run_key(h200) == (f"default/NVIDIA_H200-x1/driver-api-13.0/vm/2026-11-29T173327Z-e7e1aac8acbd-dirty-"
                             f"{digest[:12]}.json")
    h200.summary["provenance"].update(driver_release="580.159.04", host_id="0123456789ab", gpu_count=2)
    assert run_key(h200).startswith("default/NVIDIA_H200-x2/driver-580.159.04/vm-0123456789ab/")


def make_series(tmp_path: Path) -> list[Path]:
    """Six runs: driver 13.0 then 13.1; launch.empty_kernel nv=1 jumps 30% at run 4 (the runner's
    median, in latency.stats, says 3003 to 3005 there)."""
    base = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    dirs = []
    for i in range(6):
        s = copy.deepcopy(base)
        s["started"] = f"2026-12-0{i + 1}T10:00:00Z"
        s["provenance"]["git_revision"] = f"{i:040x}"
        if i >= 3:
            s["provenance"]["driver_version"], s["provenance"]["driver_version_text"] = 13010, "13.1"
            for p in s["latency"]["probes"]:
                if p["name"] == "launch.empty_kernel":
                    p["samples"]["nv=1"] = [v * 1.3 for v in p["samples"]["nv=1"]]
            for st in s["latency"]["stats"]:
                if (st["probe"], st["series"]) == ("launch.empty_kernel", "nv=1"):
                    st["median"] = 3000.0 + i
        d = tmp_path / f"run{i}"
        d.mkdir()
        (d / "summary.json").write_text(json.dumps(s))
        dirs.append(d)
    return dirs


def test_add_list_and_dashboard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    dirs = make_series(tmp_path)
    for d in reversed(dirs):
        assert main(["history", "add", str(d), "--store", str(store)]) == 0
    assert main(["history", "add", str(dirs[0]), "--store", str(store)]) == 0  # idempotent
    assert "already stored" in capsys.readouterr().out
    index = [e.value for e in read_index(store)]
    assert len(index) == 6 and [e["started"] for e in index] == sorted(e["started"] for e in index)
    assert all((store / e["key"]).is_file() for e in index)
    assert len(load_store(store)) == 6
    assert main(["history", "list", "--store", str(store)]) == 0
    listing = capsys.readouterr().out
    assert listing.count("SIMULATED") == 6 and "13.1" in listing

    out = tmp_path / "h.html"
    assert main(["dashboard", str(dirs[-1]), "--history", str(store), "--output", str(out)]) == 0
    page = out.read_text()
    assert page.count("▲ changed") == 1  # driver 13.0 -> 13.1 at run 4
    assert "nv=1 3003" in page and "nv=1 3005" in page  # the runner's medians, not the reports'
    assert "Change points are not marked" in page and "change points" not in page.split('id="history-table"')[1][:600]
    assert 'id="history-figure"' in page


def test_history_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "add", str(FIXTURES / "interrupted"), "--store", str(tmp_path / "s")]) == 2
    assert main(["history", "list", "--store", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err


def test_incomplete_runs_show_as_incomplete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The judge's word for a run that did not judge all it planned, in `history list` and the page's table."""
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "latency-a"), str(FIXTURES / "incomplete"),
                 "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["history", "list", "--store", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines[0].index("verdict")
    assert [l[at:].split()[0] for l in lines[1:]] == ["equivalent", "incomplete"]  # oldest first
    out = tmp_path / "h.html"
    assert main(["dashboard", str(FIXTURES / "latency-a"), "--history", str(store), "--output", str(out)]) == 0
    table = out.read_text().split('id="history-table"')[1].split("</table>")[0]
    rows = [re.findall(r"<td[^>]*>([^<]*)", row) for row in table.split("<tr>")[2:]]
    assert [r[7] for r in rows] == ["equivalent", "incomplete"]


# --- a damaged index is refused, never rewritten; `history rebuild` makes a new one ----------------

def two_run_store(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A store of cmp-a and cmp-b; returns it and its stored files' bytes by key."""
    store = tmp_path / "store"
    assert main(["history", "add", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b"), "--store", str(store)]) == 0
    keys = [e["key"] for e in json.loads((store / "index.json").read_text())["runs"]]
    return store, {k: (store / k).read_bytes() for k in keys}


def damage(index: Path, how: str) -> None:
    good = index.read_text()
    index.unlink()
    if how == "symlink":  # to a sound copy: still not the store's own file, and a write would replace the link
        (index.parent / "elsewhere.txt").write_text(good)
        index.symlink_to("elsewhere.txt")
    elif how == "symlink-loop":
        index.symlink_to(index.name)
    elif how == "dangling-symlink":
        index.symlink_to("gone.json")
    elif how == "fifo":
        os.mkfifo(index)
    elif how == "not-json":
        index.write_text(good[: len(good) // 2])
    elif how == "runs-null":
        index.write_text(json.dumps({**json.loads(good), "runs": None}))
    elif how == "runs-missing":
        index.write_text(json.dumps({"schema": "cuparity.history/1"}))
    elif how == "runs-not-a-list":
        index.write_text(json.dumps({**json.loads(good), "runs": "all of them"}))


def index_state(index: Path) -> tuple[Any, ...]:
    st = os.lstat(index)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(index))
    if stat.S_ISFIFO(st.st_mode):
        return ("fifo", st.st_ino)
    return ("file", index.read_bytes())


DAMAGE = ["symlink", "symlink-loop", "dangling-symlink", "fifo", "not-json", "runs-null", "runs-missing",
          "runs-not-a-list"]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_index_is_refused_and_kept(tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str],
                                             no_blocking: None) -> None:
    """Before: each was read as an empty store, and the next `add` wrote an index of that one run,
    dropping every earlier entry (and a FIFO blocked)."""
    store, stored = two_run_store(tmp_path)
    index = store / "index.json"
    damage(index, how)
    before = index_state(index)
    capsys.readouterr()
    for argv in (["history", "add", str(FIXTURES / "latency-a"), "--store", str(store)],
                 ["history", "list", "--store", str(store)],
                 ["dashboard", str(FIXTURES / "cmp-a"), "--history", str(store), "--output",
                  str(tmp_path / "d.html")]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"cuparity-report: error: {index}: ") and "history rebuild" in err, (argv, err)
    assert index_state(index) == before
    assert {k: (store / k).read_bytes() for k in stored} == stored
    assert not (tmp_path / "d.html").exists()


@pytest.mark.parametrize("how", DAMAGE)
def test_rebuild_indexes_the_stored_runs_and_keeps_the_damaged_index(tmp_path: Path, how: str,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     no_blocking: None) -> None:
    store, stored = two_run_store(tmp_path)
    original = json.loads((store / "index.json").read_text())
    damage(store / "index.json", how)
    before = index_state(store / "index.json")
    capsys.readouterr()
    assert main(["history", "rebuild", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    aside = [p for p in store.iterdir() if p.name.startswith("index.json.damaged-")]
    assert len(aside) == 1 and index_state(aside[0]) == before
    assert f"kept the old index as {aside[0]}" in out and "rebuilt" in out and ": 2 runs" in out
    assert json.loads((store / "index.json").read_text()) == original
    assert {k: (store / k).read_bytes() for k in stored} == stored
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    assert "already stored" in capsys.readouterr().out


def test_rebuild_leaves_out_what_it_cannot_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A garbled stored file, a link, a copy of another run: named on stderr, left as they are."""
    store, stored = two_run_store(tmp_path)
    first, second = sorted(stored)
    garbled = store / "cmp" / "garbled.json"
    garbled.write_text("{not json")
    badly_named = store / "cmp" / "run\x1b[31m.json"
    badly_named.write_bytes(stored[second])
    copy = store / "cmp" / "copy.json"
    copy.write_bytes(stored[first])
    link = store / "cmp" / "link.json"
    link.symlink_to(store / second)
    (store / "notes.txt").write_text("not a run")
    healthy = (store / "index.json").read_bytes()
    capsys.readouterr()
    assert main(["history", "rebuild", "--store", str(store)]) == 0
    captured = capsys.readouterr()
    assert f"left out {garbled}: not valid JSON" in captured.err
    assert f"left out {store}/cmp/run\\x1b[31m.json: not a name the store gives a run" in captured.err
    assert "\x1b" not in captured.err
    assert f"left out {copy}: the same run as {first}" in captured.err  # the copy under its own key is kept
    assert f"left out {link}: is a symbolic link" in captured.err
    assert "2 runs (4 files left out" in captured.out
    previous = [p for p in store.iterdir() if p.name.startswith("index.json.previous-")]
    assert len(previous) == 1 and previous[0].read_bytes() == healthy
    assert garbled.read_text() == "{not json" and copy.read_bytes() == stored[first] and link.is_symlink()
    assert badly_named.read_bytes() == stored[second]
    assert sorted(e.string("key") for e in read_index(store)) == sorted(stored)


def test_rebuild_of_no_store_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "rebuild", "--store", str(tmp_path / "missing")]) == 2
    assert f"{tmp_path / 'missing'}: no such history store" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["missing", "garbage", "other-run"])
def test_add_restores_a_stored_copy_that_is_missing_or_altered(tmp_path: Path, how: str,
                                                               capsys: pytest.CaptureFixture[str],
                                                               no_blocking: None) -> None:
    """Before: `add` said "already stored" by the index alone, while the stored file was gone or garbage."""
    store, stored = two_run_store(tmp_path)
    key = next(k for k in stored if stored[k] == (FIXTURES / "cmp-a" / "summary.json").read_bytes())
    other = next(k for k in stored if k != key)
    index = (store / "index.json").read_bytes()
    if how == "missing":
        (store / key).unlink()
    elif how == "garbage":
        (store / key).write_bytes(b"\x00garbage")
    else:
        (store / key).write_bytes(stored[other])
    capsys.readouterr()
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    assert f"restored: {store / key} (its stored copy was missing or altered" in capsys.readouterr().out
    assert {k: (store / k).read_bytes() for k in stored} == stored
    assert (store / "index.json").read_bytes() == index
    assert main(["history", "add", str(FIXTURES / "cmp-a"), "--store", str(store)]) == 0
    assert f"already stored: {store / key}" in capsys.readouterr().out


def test_stored_runs_are_read_as_stored_gzipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run kept as summary.json.gz and results.jsonl.gz (reports/runs/) is added, shown and listed as its
    plain twin: the store keeps the text inside, so both give one entry."""
    plain = FIXTURES / "latency-a"
    packed = tmp_path / "packed"
    packed.mkdir()
    text = (plain / "summary.json").read_bytes()
    # Two members, as `cat a.gz b.gz` makes: read whole.
    (packed / "summary.json.gz").write_bytes(gzip.compress(text[:1000]) + gzip.compress(text[1000:]))
    store = tmp_path / "store"
    assert main(["history", "add", str(packed), "--store", str(store)]) == 0
    assert main(["history", "add", str(plain), "--store", str(store)]) == 0
    assert "already stored" in capsys.readouterr().out
    [entry] = [e.value for e in read_index(store)]
    assert (store / entry["key"]).read_bytes() == text
    assert load_run(packed).summary == load_run(plain).summary
    assert main(["dashboard", str(packed), "--output", str(tmp_path / "p.html")]) == 0
    # Cut short, or garbage that starts like gzip: refused naming the file, nothing stored.
    (packed / "summary.json.gz").write_bytes(gzip.compress(text)[:500])
    assert main(["history", "add", str(packed), "--store", str(tmp_path / "s2")]) == 2
    assert "summary.json.gz" in capsys.readouterr().err and not (tmp_path / "s2" / "index.json").exists()
    (packed / "summary.json.gz").write_bytes(b"\x1f\x8b garbage")
    assert main(["history", "add", str(packed), "--store", str(tmp_path / "s2")]) == 2
    assert "not a valid gzip stream" in capsys.readouterr().err
