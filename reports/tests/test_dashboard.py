"""Dashboard HTML: escaping, empty/partial/failed runs, latency and history sections."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import FIXTURES
from cuparity_reports.cli import main
from cuparity_reports.dashboard import build
from cuparity_reports.reader import load_run

XSS_RAW = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "<img src=x", "<script>alert"]


class Elements(HTMLParser):
    """Collects start tags with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parse(page: str) -> Elements:
    p = Elements()
    p.feed(page)
    return p


def render(*names: str) -> str:
    return build([load_run(FIXTURES / n) for n in names])


def test_escapes_everything() -> None:
    page = render("xss")
    for raw in XSS_RAW:
        assert raw not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    tags = parse(page)
    assert not any(t == "img" and (a.get("src") == "x" or "onerror" in a) for t, a in tags.tags)
    assert [t for t, _ in tags.tags].count("script") == 0
    assert not any(any(k.startswith("on") for k in a) for _, a in tags.tags)


def test_self_contained() -> None:
    page = render("latency-b")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<link" not in page and "<script" not in page
    imgs = [a["src"] for t, a in parse(page).tags if t == "img"]
    assert imgs and all(s.startswith("data:image/png;base64,") for s in imgs)


def test_simulated_banner_and_provenance() -> None:
    page = render("sim-div")
    assert 'id="simulated-banner"' in page and "SIMULATED DRIVER" in page
    assert "cuparity simulated device 0" in page and "dirty tree" in page
    real = render("h200-trimmed.summary.json")
    assert 'id="simulated-banner"' not in real and "NVIDIA H200" in real


def test_grid_rows_divergences_and_details() -> None:
    page = render("sim-div")
    rows = [a for t, a in parse(page).tags if t == "tr" and a.get("class") == "cell-row"]
    assert len(rows) == 4
    assert page.count(" diverges") >= 6  # 4 cells x alloc.copy.dtod + 2 x context.init.facts
    assert "observations.total_memory" in page and "17179869185" in page
    # environment on hover of each row
    ths = [a for t, a in parse(page).tags if t == "th" and a.get("class") == "cell"]
    assert any("CUPARITY_SIM_FAULTS=cuMemcpyDtoH_v2:corrupt" in (a.get("title") or "") for a in ths)


def test_empty_run_renders() -> None:
    page = render("empty")
    assert "This run has no results" in page
    assert page.count('class="cell-row"') == 4 and "not started" in page
    assert "CUDA_ERROR_NO_DEVICE" in page


def test_partial_run_renders() -> None:
    page = render("sim-partial")
    assert page.count('class="cell-row"') == 4
    assert page.count('class="notrun"') == 2 and "is not a valid file path" in page


def test_interrupted_run_renders_raw_records_without_a_verdict() -> None:
    page = render("interrupted")
    assert "no verdict (no summary.json)" in page and "cuparity merge" in page
    assert "no semantic groups" in page and not re.search(r'class="o o-\w+ diverges', page)


def test_latency_only_when_present() -> None:
    assert 'id="latency"' not in render("cmp-a")
    page = render("latency-b")
    for ident in ("latency-figure", "latency-stats", "latency-comparisons", "latency-overhead", "latency-paired",
                  "latency-baseline"):
        assert f'id="{ident}"' in page
    assert "REGRESSION" in page and "verd-slower" in page


def test_history_from_several_runs_and_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.html"
    assert main(["dashboard", str(FIXTURES / "latency-a"), str(FIXTURES / "latency-b"), "--output", str(out)]) == 0
    page = out.read_text()
    assert 'id="history-table"' in page and 'id="history-figure"' in page
    single = tmp_path / "s.html"
    assert main(["dashboard", str(FIXTURES / "cmp-a"), "--output", str(single)]) == 0
    assert 'id="history"' not in single.read_text()
    capsys.readouterr()


def test_noise_warning_is_the_runners(tmp_path: Path) -> None:
    """A series is flagged where the runner listed it in noise.over_target, whatever its numbers: a CV
    lifted by one slow round is not flagged unless the runner said so."""
    summary = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    lat = summary["latency"]
    flagged = lat["stats"][1]
    lat["noise"] = {"target_cv": 0.05, "reference": None,
                    "over_target": [{"probe": flagged["probe"], "series": flagged["series"], "rcv": 0.07, "cv": 0.04}]}
    lat["stats"][0].update(cv=0.15, rcv=0.01)
    flagged.update(cv=0.04, rcv=0.07)
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    page = build([load_run(tmp_path)])
    table = page[page.index('id="latency-stats"'):]
    table = table[:table.index("</table>")]
    rows = table.split("<tr")[2:]
    assert "warn" not in rows[0] and "15 %" in rows[0] and "1 %" in rows[0]
    assert "warn" in rows[1] and "above the 5% noise target" in rows[1]
    assert "warn" not in "".join(rows[2:])
    assert "robust CV" in table
    assert 'id="latency-noise"' in page and "1 of " in page


def test_noise_paragraph_names_probes_and_the_reference(tmp_path: Path) -> None:
    summary = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    lat = summary["latency"]
    lat["noise"] = {"target_cv": 0.03,
                    "over_target": [{"probe": "launch.empty_kernel", "series": "nv=0", "rcv": 0.05, "cv": 0.07},
                                    {"probe": "launch.empty_kernel", "series": "nv=1", "rcv": 0.04, "cv": 0.06}],
                    "reference": {"probe": "host.cpu_reference", "rcv_max": 0.065, "cv_max": 0.049}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    page = build([load_run(tmp_path)])
    para = page[page.index('id="latency-noise"'):]
    para = para[:para.index("</p>")]
    assert "1 of " in para and "(launch.empty_kernel)" in para and "3% robust-CV target" in para
    assert "host.cpu_reference spread up to 6.5%" in para


def test_every_template_escapes_and_the_css_is_inert() -> None:
    """The page is only as safe as its templates: each .html one autoescapes; the inlined CSS cannot close
    its <style> element."""
    from cuparity_reports.templating import environment, stylesheet

    env = environment()
    names = env.list_templates(extensions=["html"])
    assert {"dashboard.html", "grid.html", "details.html"} <= set(names)
    assert all(env.autoescape(n) for n in names)
    assert "</" not in stylesheet() and "--pass:" in stylesheet()
