"""The history site and the run dashboard in Chromium (Playwright driving Debian's chromium): no
console error, filters change what is shown, a point opens its run, nothing overflows at 1280 px."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import pytest

from conftest import FIXTURES, REPORTS
from cuparity_reports.cli import main
from test_history_site import make_history

# scripts/bootstrap installs chromium; without it these tests fail (they are how CI sees the pages).
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
WIDTH = 1280
LONG_NAMES_RUN = REPORTS / "runs" / "2026-12-01-h200-6dec4bf"  # latency-shim: 150-character series names


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, "no chromium on PATH (scripts/bootstrap installs it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, cuparity_bin: Path) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "site"
    assert main(["history", "site", "--store", str(make_history(tmp)), "--output", str(out)]) == 0
    return out


class Page:
    """A page at 1280 px with every console error and uncaught exception collected."""

    def __init__(self, browser: object, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": WIDTH, "height": 900})  # type: ignore[attr-defined]
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")

    def overflow(self) -> int:
        return int(self.page.evaluate("document.documentElement.scrollWidth")) - WIDTH

    def traces(self, figure: str) -> int:
        return int(self.page.evaluate(f"document.getElementById('{figure}').data.length"))

    def rows_shown(self) -> int:
        return int(self.page.evaluate(
            "[...document.querySelectorAll('#runs-table tr.run-row')].filter(r => !r.hidden).length"))


def test_history_page_draws_without_errors_and_fits(browser: object, site: Path) -> None:
    p = Page(browser, site / "index.html")
    assert p.traces("fig-wall") == 2 and p.traces("fig-breakdown") == 6
    assert p.page.locator("#fig-wall .scatterlayer .trace").count() == 2
    assert p.page.locator("#fig-wall .shapelayer path").count() >= 2  # the change point and the driver mark
    assert "change -52.0 %" in p.page.inner_text("#fig-wall")
    assert p.errors == [] and p.overflow() <= 0
    assert p.page.inner_text("#shown") == "9 of 9 runs shown"


def test_filters_change_what_is_shown(browser: object, site: Path) -> None:
    p = Page(browser, site / "index.html")
    p.page.select_option("#filter-driver_release", "590.10.01")
    assert p.page.inner_text("#shown") == "2 of 9 runs shown"
    assert p.rows_shown() == 2 and p.traces("fig-wall") == 1
    matrices = p.page.eval_on_selector_all("#filter-matrix option", "os => os.map(o => o.value)")
    assert matrices == ["", "cmp", "default"]  # "all", then latency-a's matrix and the H200 runs'
    p.page.select_option("#filter-driver_release", "")
    p.page.select_option("#filter-matrix", "cmp")
    assert p.page.inner_text("#shown") == "1 of 9 runs shown" and p.rows_shown() == 1
    assert p.page.locator(".probe-figure:not([hidden])").count() > 0
    assert p.errors == []


def test_a_point_opens_its_run(browser: object, site: Path) -> None:
    p = Page(browser, site / "index.html")
    p.page.select_option("#filter-matrix", "default")
    point = p.page.locator("#fig-wall .scatterlayer .trace").first.locator(".points path").nth(4)
    box = point.bounding_box()
    assert box is not None
    with p.page.expect_navigation():
        p.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert "/runs/" in p.page.url and p.page.url.endswith(".html")
    assert p.page.locator("#equivalence-grid").count() == 1 and p.errors == []


def test_regressions_and_compare_pages_link_and_fit(browser: object, site: Path) -> None:
    p = Page(browser, site / "regressions.html")
    assert p.page.locator("#regressions-table tbody tr").count() >= 3 and p.overflow() <= 0
    p.page.locator("#regressions-table a", has_text="compare").first.click()
    p.page.wait_for_load_state("load")
    assert "/compare/" in p.page.url and p.page.locator("#compare-verdict").count() == 1
    assert p.overflow() <= 0 and p.errors == []


@pytest.mark.parametrize("run", [FIXTURES / "latency-a", LONG_NAMES_RUN], ids=["latency-a", "long-names"])
def test_run_dashboard_fits_1280(browser: object, tmp_path: Path, run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "dash.html"
    assert main(["dashboard", str(run), "--output", str(html)]) == 0
    capsys.readouterr()
    p = Page(browser, html)
    assert p.overflow() <= 0 and p.errors == []
