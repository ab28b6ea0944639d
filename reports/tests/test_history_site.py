"""The history site: lines, change points, environment marks, regressions, links, bad input."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, H200_RUN, REPORTS, summary_of
from cuparity_reports.changepoints import MIN_POINTS, change_points
from cuparity_reports.cli import main
from cuparity_reports.reader import load_run
from cuparity_reports.trends import short_name

WALLS = [77.0, 75.5, 76.2, 78.1, 37.0, 36.1, 38.3, 36.6]


def site_data(site: Path) -> dict:
    text = (site / "index.html").read_text()
    found = re.search(r'<script type="application/json" id="history-data">(.*?)</script>', text, re.S)
    assert found, "no data element"
    return json.loads(found.group(1))


def make_history(tmp_path: Path, hostile: str = "") -> Path:
    """Eight H200 default-matrix runs: the wall drops from ~77 s to ~37 s at the fifth; the driver
    release changes at the seventh; the third is a failed run. Plus a latency run on its own line."""
    base = summary_of(H200_RUN)
    store = tmp_path / "store"
    for i, wall in enumerate(WALLS):
        s = copy.deepcopy(base)
        s["started"] = f"2026-12-0{i + 1}T10:00:00Z"
        s["functional_wall_s"] = wall
        s["provenance"]["git_revision"] = f"{i + 1:040x}"
        s["provenance"]["driver_release"] = "580.159.04" if i < 6 else "590.10.01"
        if hostile:
            s["matrix"]["name"] = hostile
        if i == 2:  # one case fails: the runner's verdict, and a regression for `cuparity compare`
            s["verdict"], s["exit_code"] = "failed", 1
            s["results"][0].update(outcome="fail", message="injected")
            s["counts"]["pass"] -= 1
            s["counts"]["fail"] = s["counts"].get("fail", 0) + 1
        d = tmp_path / f"run{i}"
        d.mkdir()
        (d / "summary.json").write_text(json.dumps(s))
        assert main(["history", "add", str(d), "--store", str(store)]) == 0
    assert main(["history", "add", str(FIXTURES / "latency-a"), "--store", str(store)]) == 0
    return store


@pytest.fixture
def site(tmp_path: Path, cuparity_bin: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "site"
    assert main(["history", "site", "--store", str(make_history(tmp_path)), "--output", str(out)]) == 0
    assert "9 runs on 2 lines" in capsys.readouterr().out
    return out


def test_change_point_of_the_wall_is_found_and_sized(site: Path) -> None:
    data = site_data(site)
    walls = [c for c in data["change_points"] if c["metric"] == "functional-phase wall"]
    assert len(walls) == 1
    c = walls[0]
    assert c["started"] == "2026-12-05T10:00:00Z" and c["direction"] == "better"
    assert c["before"] == pytest.approx(76.6) and c["after"] == pytest.approx(36.8)
    assert c["step"] == pytest.approx(36.8 / 76.6 - 1)


def test_lines_filters_and_environment_marks(site: Path) -> None:
    data = site_data(site)
    lines = {r["line"] for r in data["runs"]}
    assert len(lines) == 2 and any(line.startswith("default · NVIDIA H200 x1") for line in lines)
    filters = {f["key"]: f["values"] for f in data["filters"]}
    assert filters["driver_release"] == ["580.159.04", "590.10.01", "unknown"]
    assert set(filters) == {"matrix", "gpu_config", "driver_release", "toolkit", "host"}
    marks = data["environment_changes"]
    assert [m["started"] for m in marks] == ["2026-12-07T10:00:00Z"]
    assert "driver 580.159.04 → 590.10.01" in marks[0]["what"]


def test_regressions_page_lists_failed_run_compare_and_change_point(site: Path) -> None:
    page = (site / "regressions.html").read_text()
    rows = re.findall(r'<tr class="dir-(\w+)"><td class="mono">([^<]+)</td>.*?</tr>', page, re.S)
    started = [s for _, s in rows]
    assert started == sorted(started, reverse=True), "newest first"
    assert "run failed: " in page and "(the runner&#39;s verdict)" in page
    assert "compare against the previous run: regressed" in page
    assert "change point: functional-phase wall 76.6 → 36.8 s (-52.0 %, better)" in page


def test_every_run_and_compare_link_resolves(site: Path) -> None:
    data = site_data(site)
    index = (site / "index.html").read_text()
    for r in data["runs"]:
        assert (site / r["href"]).is_file()
        assert f'href="{r["href"]}"' in index
        if r["previous"]:
            page = (site / r["compare_href"]).read_text()
            assert 'id="compare-verdict"' in page and "judged by cuparity compare" in page
        else:
            assert r["compare_href"] == ""
    firsts = [r for r in data["runs"] if not r["previous"]]
    assert len(firsts) == 2  # one per line


def test_a_hostile_matrix_name_stays_data(tmp_path: Path, cuparity_bin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
    out = tmp_path / "site"
    assert main(["history", "site", "--store", str(make_history(tmp_path, evil)), "--output", str(out)]) == 0
    capsys.readouterr()
    text = (out / "index.html").read_text()
    assert "<script>alert(1)" not in text and "<img src=x" not in text
    assert any(r["matrix"] == evil for r in site_data(out)["runs"])


def test_empty_or_missing_store_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "site", "--store", str(tmp_path / "nope"), "--output", str(tmp_path / "o")]) == 2
    assert "no such history store" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["history", "site", "--store", str(tmp_path / "empty"), "--output", str(tmp_path / "o")]) == 2
    assert "empty history store" in capsys.readouterr().err
    store = make_history(tmp_path)
    capsys.readouterr()
    (tmp_path / "file").write_text("x")
    assert main(["history", "site", "--store", str(store), "--output", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_change_points_need_a_step_and_enough_runs() -> None:
    assert change_points([5.0] * 12) == []
    assert change_points([1.0, 9.0] * ((MIN_POINTS - 1) // 2)) == []
    noise = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.1, 10.2, 9.9, 10.0]
    assert change_points(noise) == []
    found = change_points(noise + [13.0, 13.1, 12.9, 13.2, 13.0, 12.8])
    assert [c.index for c in found] == [10] and found[0].step == pytest.approx(0.3, abs=0.01)
    assert change_points(noise + [13.0, 13.1, 12.9, 13.2, 13.0, 12.8]) == found  # seeded: the same page


def test_short_names_never_cut_a_word() -> None:
    assert short_name("internal-ptds") == "internal-ptds"
    long = "NUMBA_CUDA_USE_NVIDIA_BINDING=1,NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=0,CUDA_PYTHON_X=1"
    s = short_name(long, 40)
    assert s.endswith("…") and len(s) <= 40 and long.startswith(s[:-1])
    assert s == "NUMBA_CUDA_USE_NVIDIA_BINDING=1…"  # cut at the ',' rather than inside NUMBA_CU...


def test_every_committed_run_folder_has_a_summary_or_says_why() -> None:
    """Each folder under reports/runs/ holds a summary.json(.gz) `history add` takes, or is one of
    the folders reports/runs/README.md names as holding none."""
    runs = REPORTS / "runs"
    readme = (runs / "README.md").read_text()
    for folder in sorted(p for p in runs.iterdir() if p.is_dir()):
        has = any((folder / n).is_file() for n in ("summary.json", "summary.json.gz"))
        assert has or f"`{folder.name}`" in readme, f"{folder.name}: no summary.json(.gz) and not in README.md"
        if has:
            load_run(folder)  # readable as stored


def test_the_same_store_writes_the_same_pages(tmp_path: Path, cuparity_bin: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A rebuild of an unchanged store writes every page byte for byte (the committed history does
    not churn): no clock in a page, compare pages name runs by their keys."""
    store = make_history(tmp_path)
    for name in ("one", "two"):
        assert main(["history", "site", "--store", str(store), "--output", str(tmp_path / name)]) == 0
    capsys.readouterr()
    one = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.html"))
    assert one == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*.html"))
    for rel in one:
        assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes(), rel
    # The footers say when the store was, not when the page was written (two builds in one second
    # would hide a clock).
    stamp = "as of the store&#39;s newest run, 2026-12-08T10:00:00Z"
    assert stamp in (tmp_path / "one" / "index.html").read_text()
    # A run's page is dated by its own run: adding a run rewrites no other run's page.
    assert all("for the history site (run of 2026-" in p.read_text() for p in (tmp_path / "one" / "runs").iterdir())
    compare = next((tmp_path / "one" / "compare").iterdir()).read_text()
    assert str(tmp_path) not in compare and "A: default/NVIDIA_H200-x1/" in compare


def test_list_filters_and_the_dashboard_keeps_to_its_line(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    store = make_history(tmp_path)
    capsys.readouterr()
    assert main(["history", "list", "--store", str(store), "--driver", "590.10.01"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and all("590.10.01" in line for line in out[1:])
    assert main(["history", "list", "--store", str(store), "--matrix", "cmp", "--gpu", "simulated"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert main(["history", "list", "--store", str(store), "--host", "nowhere"]) == 0
    assert "no stored run of host nowhere (9 stored)" in capsys.readouterr().out
    page = tmp_path / "dash.html"
    assert main(["dashboard", str(FIXTURES / "latency-a"), "--history", str(store), "--output", str(page)]) == 0
    assert "history: 1 of 9 stored runs, those of this run's line (cmp" in capsys.readouterr().err
    assert main(["dashboard", str(FIXTURES / "latency-a"), "--history", str(store), "--all-lines",
                 "--output", str(page)]) == 0
    assert "stored runs" not in capsys.readouterr().err
