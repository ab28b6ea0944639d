"""`scripts/report site`, the one command that builds the history site and every run's dashboard
from the committed runs (reports/runs), run as CI runs it, on every committed folder (about a
minute on two cores), and its pages opened in Chromium (Playwright driving Debian's chromium):
every page loads without a console error or an uncaught exception, every link resolves, and each
committed summary is there with the runner's verdict."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import REPORTS
from cuparity_reports.cli import main
from cuparity_reports.committed_site import MARKER, committed_summaries
from test_browser_pages import Page, browser  # noqa: F401  (the module's Chromium)
from test_history_site import site_data

SCRIPT = REPORTS.parent / "scripts" / "report"
RUNS = REPORTS / "runs"


class Links(HTMLParser):
    """Every href and src of a page's elements (not text inside its scripts: plotly.js is inline)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("href", "src") and v]


class Built:
    def __init__(self, out: Path, seconds: float, stdout: str) -> None:
        self.out, self.seconds, self.stdout = out, seconds, stdout
        self.data = site_data(out)
        self.pages = sorted(out.rglob("*.html"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, cuparity_bin: Path) -> Built:
    out = tmp_path_factory.mktemp("committed") / "site"
    began = time.monotonic()
    done = subprocess.run([str(SCRIPT), "site", "--output", str(out)], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "CUPARITY_BIN": str(cuparity_bin)})
    seconds = time.monotonic() - began
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not judged" not in done.stderr, done.stderr[-3000:]  # every pair was compared by the judge
    print(f"scripts/report site: {seconds:.0f} s for the committed runs")
    return Built(out, seconds, done.stdout)


def inflated(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def test_the_site_holds_every_committed_summary_with_its_verdict(built: Built) -> None:
    summaries = committed_summaries(RUNS)
    by_digest = {hashlib.sha256(inflated(p)).hexdigest(): p for p in summaries}
    runs = {r["id"][-12:]: r for r in built.data["runs"]}  # a stored run's id ends with its digest's 12 digits
    assert len(runs) == len(by_digest) == len(built.data["runs"])
    for digest, path in by_digest.items():
        record = runs.get(digest[:12])
        assert record is not None, f"{path}: not in the site"
        assert record["verdict"] == json.loads(inflated(path))["verdict"], path
        assert (built.out / record["href"]).is_file(), record["href"]
        assert not record["previous"] or (built.out / record["compare_href"]).is_file(), record["compare_href"]
    assert f"{len(summaries)} summaries from {len({p.parent for p in summaries})} folders" in built.stdout
    assert (built.out / MARKER).is_file() and (built.out / "store" / "index.json").is_file()


def test_every_link_of_every_page_resolves(built: Built) -> None:
    assert len(built.pages) > len(built.data["runs"])  # index, regressions, a page per run, the compares
    broken, checked = [], 0
    for page in built.pages:
        for link in Links(page.read_text(encoding="utf-8")).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("#") or not parts.path:
                continue  # another site (none is loaded: the pages are self-contained), or this page
            checked += 1
            if not (page.parent / unquote(parts.path)).is_file():
                broken.append(f"{page.relative_to(built.out)}: {link}")
    assert broken == [] and checked >= 2 * len(built.data["runs"])  # the index's table: each run, its compare


def test_the_index_and_regressions_draw_the_committed_runs(browser: object, built: Built) -> None:  # noqa: F811
    n = len(built.data["runs"])
    p = Page(browser, built.out / "index.html")
    assert p.page.inner_text("#shown") == f"{n} of {n} runs shown" and p.rows_shown() == n
    lines = {r["line"] for r in built.data["runs"] if r.get("wall_s") is not None}
    assert p.traces("fig-wall") >= len(lines) > 1
    assert p.page.locator(".probe-figure:not([hidden])").count() > 0  # the latency runs' probes
    assert p.errors == []
    rows = int(re.search(r"(\d+) rows on regressions.html", built.stdout).group(1))  # type: ignore[union-attr]
    r = Page(browser, built.out / "regressions.html")
    assert r.page.locator("#regressions-table tbody tr").count() == rows > 0 and r.errors == []


def test_every_run_and_compare_page_loads_without_errors(browser: object, built: Built) -> None:  # noqa: F811
    """Each run's dashboard shows its verdict and grid, each compare page the judge's word; in one
    tab, page after page, every console error and uncaught exception collected."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(f"{tab.url}: {m.text}") if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(f"{tab.url}: {e}"))
    began = time.monotonic()
    for r in built.data["runs"]:
        tab.goto((built.out / r["href"]).as_uri())
        assert (tab.locator("#verdict").text_content() or "").strip() == r["verdict"], r["href"]
        assert tab.locator("#equivalence-grid").count() == 1, r["href"]
        if r["previous"]:
            tab.goto((built.out / r["compare_href"]).as_uri())
            assert tab.locator("#compare-verdict").inner_text().strip(), r["compare_href"]
    print(f"{len(built.data['runs'])} runs' pages in {time.monotonic() - began:.0f} s")
    assert errors == []


def test_site_takes_a_subset_and_replaces_only_its_own_folder(tmp_path: Path, cuparity_bin: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    only = ["--only", "2026-12-03-h200-9180e0e", "--only", "2026-12-03-h200-96b82b9"]
    assert main(["site", "--output", str(out), *only]) == 0
    assert "2 summaries from 2 folders" in capsys.readouterr().out
    assert len(site_data(out)["runs"]) == 2 and len(list((out / "compare").iterdir())) == 1
    (out / "runs" / "stale.html").write_text("from an earlier build")
    assert main(["site", "--output", str(out), "--only", "2026-12-03-h200-9180e0e"]) == 0
    assert not (out / "runs" / "stale.html").exists() and len(site_data(out)["runs"]) == 1
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["site", "--output", str(other), *only]) == 2
    assert "not an earlier site" in capsys.readouterr().err and (other / "notes.txt").is_file()
    assert main(["site", "--output", str(tmp_path / "none"), "--only", "no-such-folder"]) == 2
    assert "no run summary" in capsys.readouterr().err
