"""Renders dashboards and opens them in headless Chromium: screenshot, DOM, no console errors, no XSS."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, H200_RUN
from cuparity_reports.cli import main

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH")

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-extensions", "--window-size=1400,1000"]


def chromium(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, *FLAGS, "--enable-logging=stderr", "--v=0", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=60)


def console_lines(stderr: str) -> list[str]:
    return [l for l in stderr.splitlines() if ":CONSOLE" in l]


def test_dashboard_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "dash.html"
    assert main(["dashboard", str(H200_RUN), "--output", str(html)]) == 0
    capsys.readouterr()
    shot = tmp_path / "dash.png"
    r = chromium(html, f"--screenshot={shot}")
    assert shot.is_file() and shot.stat().st_size > 20_000, r.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert console_lines(r.stderr) == []
    dom = chromium(html, "--dump-dom")
    assert 'id="equivalence-grid"' in dom.stdout
    assert len(re.findall(r'<tr class="cell-row"', dom.stdout)) == 18
    assert console_lines(dom.stderr) == []


def test_hostile_strings_stay_text_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "xss.html"
    assert main(["dashboard", str(FIXTURES / "xss"), "--output", str(html)]) == 0
    capsys.readouterr()
    dom = chromium(html, "--dump-dom")
    assert 'id="equivalence-grid"' in dom.stdout
    assert "<script" not in dom.stdout and "<img src=\"x\"" not in dom.stdout
    assert "onerror=\"" not in dom.stdout
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom.stdout
    assert console_lines(dom.stderr) == []
