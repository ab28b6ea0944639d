"""History store: add/list, safe keys, index; the runner's medians and driver changes on the dashboard."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, H200_RUN
from cuparity_reports.cli import main
from cuparity_reports.history import load_store, read_index, run_key
from cuparity_reports.reader import load_run


def test_key_is_safe() -> None:
    run = load_run(FIXTURES / "xss")
    key = run_key(run)
    parts = key.split("/")
    assert len(parts) == 4 and all(p and ".." not in p and "<" not in p and '"' not in p for p in parts)
    h200 = load_run(H200_RUN)
    digest = hashlib.sha256((H200_RUN / "summary.json").read_bytes()).hexdigest()
    assert run_key(h200) == f"vm/NVIDIA_H200/driver-13.0/2026-11-29T173327Z-e7e1aac8acbd-dirty-{digest[:12]}.json"


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
