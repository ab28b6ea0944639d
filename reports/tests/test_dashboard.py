"""Dashboard HTML: escaping, empty/partial/failed runs, latency and history sections."""

from __future__ import annotations

import html
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from cuparity_reports.cli import main
from cuparity_reports.dashboard import build
from cuparity_reports.json_input import ReportInputError
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


def coverage_of(page: str) -> str:
    """The coverage block of a page (its own element), or ''."""
    if 'id="coverage"' not in page:
        return ""
    start = page.rindex("<", 0, page.index('id="coverage"'))
    tag = page[start + 1:page.index(" ", start)]
    depth, at = 0, start
    for m in re.finditer(rf"<(/?){tag}\b", page[start:]):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            at = start + m.end()
            break
    return page[start:page.index(">", at) + 1]


def test_incomplete_run_shows_the_judges_verdict_message_and_missing_pairs() -> None:
    """One shard of two merged: the judge says incomplete (exit 1), which of its pairs have no result."""
    summary = json.loads((FIXTURES / "incomplete" / "summary.json").read_text())
    cov = summary["coverage"]
    assert summary["verdict"] == "incomplete" and not cov["complete"] and cov["missing_count"] == 4
    page = render("incomplete")
    assert re.search(r'<div class="verdict v-incomplete" id="verdict"[^>]*>incomplete</div>', page)
    assert ".v-incomplete{" in page  # a badge of its own, not the grey of an unknown word
    block = coverage_of(page)
    assert f'<span id="coverage-message">{cov["message"]}</span>' in html.unescape(block)
    assert "4 of 8 planned (cell, case) pairs have exactly one result" in block
    table = block[block.index('id="coverage-missing"'):]
    rows = re.findall(r'<tr><td class="mono">([^<]*)</td><td class="mono">([^<]*)</td></tr>', table)
    assert rows == [(p["cell"], p["case"]) for p in cov["missing"]] and len(rows) == 4
    assert "missing: 4 planned pairs without a result" in block
    assert 'id="coverage-duplicated"' not in block and 'id="coverage-unplanned"' not in block
    assert "capped" not in block  # the judge listed all four


def test_complete_coverage_is_one_line_and_older_summaries_show_none() -> None:
    block = coverage_of(render("latency-a"))
    assert block.startswith('<p class="muted" id="coverage">')
    assert "8 of 8 planned (cell, case) pairs have exactly one result" in block and "coverage-message" not in block
    assert 'id="coverage' not in render("cmp-a")  # written before the judge checked coverage
    assert 'id="coverage' not in render("interrupted")  # raw records: no verdict, no coverage


def test_coverage_text_is_escaped(tmp_path: Path) -> None:
    summary = json.loads((FIXTURES / "incomplete" / "summary.json").read_text())
    cov = summary["coverage"]
    cov["message"] = XSS_RAW[0]
    cov["missing"][0] = {"cell": XSS_RAW[1], "case": XSS_RAW[0]}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    page = build([load_run(tmp_path)])
    block = coverage_of(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in block and "&#34;&gt;&lt;img src=x" in block
    for raw in XSS_RAW:
        assert raw not in page


def judged_coverage(tmp_path: Path, cuparity_bin: Path, matrix: str, records: list[dict]) -> dict:
    """summary.json of `cuparity merge` over `records` with `matrix` (exit 1: incomplete)."""
    (tmp_path / "m.toml").write_text(matrix)
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    done = subprocess.run([str(cuparity_bin), "merge", str(tmp_path / "m.toml"), str(run), "-o", str(run)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads((run / "summary.json").read_text())


def cmp_records() -> list[dict]:
    """cmp-a's run, cell and case records, as results.jsonl has them."""
    s = json.loads((FIXTURES / "cmp-a" / "summary.json").read_text())
    out: list[dict] = [{"type": "run", "schema": "cuparity.results/1", "matrix": "cmp", "matrix_path": "cmp.toml",
                        "shard": "", "started": s["started"], "provenance": s["provenance"]}]
    out += [{"type": "cell", "cell": c["id"], "pid": 1, "device": c["device"], "config": c["config"],
             "startup_ms": c["startup_ms"]} for c in s["cells"]]
    return out + [{"type": "case", **r, "pid": 1} for r in s["results"]]


def test_capped_and_unplanned_coverage_lists_as_the_judge_wrote_them(tmp_path: Path, cuparity_bin: Path) -> None:
    """A plan of 260 pairs against results of other cells: the judge counts 260 missing but lists 200, and
    lists the 8 results of no planned pair; the page shows what it listed and says the rest is left out."""
    matrix = ('[matrix]\nname = "cmp"\ncases = ["alloc.copy.dtod", "context.init.facts", "ipc.mem.peer_device", '
              '"stream.default.semantics"]\n\n[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]\n'
              f'CUPARITY_FIXTURE_AXIS = [{", ".join(f"{chr(34)}{i}{chr(34)}" for i in range(65))}]\n')
    summary = judged_coverage(tmp_path, cuparity_bin, matrix, cmp_records())
    cov = summary["coverage"]
    assert summary["verdict"] == "incomplete"
    assert (cov["missing_count"], len(cov["missing"]), cov["unplanned_count"]) == (520, 200, 8), cov["message"]
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "summary.json").write_text(json.dumps(summary))
    block = coverage_of(build([load_run(tmp_path / "page")]))
    assert "missing: 520 planned pairs without a result" in block
    assert 'id="coverage-missing-capped">(summary.json lists the first 200 of these 520 pairs)' in block
    missing = block[block.index('id="coverage-missing"'):block.index('id="coverage-unplanned"')]
    assert missing.count("<tr><td") == 200
    unplanned = block[block.index('id="coverage-unplanned"'):]
    assert unplanned.count("<tr><td") == 8 and "coverage-unplanned-capped" not in block
    assert "unplanned: 8 results that belong to no planned pair" in block


def test_duplicated_coverage_pairs_as_the_judge_wrote_them(tmp_path: Path, cuparity_bin: Path) -> None:
    """A pair recorded twice (a shard merged twice): the judge lists it as duplicated, and so does the page."""
    records = cmp_records()
    matrix = ('[matrix]\nname = "cmp"\ncases = ["alloc.copy.dtod", "context.init.facts", "ipc.mem.peer_device", '
              '"stream.default.semantics"]\n\n[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]\n')
    summary = judged_coverage(tmp_path, cuparity_bin, matrix, records + [records[-1]])
    cov = summary["coverage"]
    assert summary["verdict"] == "incomplete" and cov["duplicated_count"] == 1, cov
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "summary.json").write_text(json.dumps(summary))
    block = coverage_of(build([load_run(tmp_path / "page")]))
    assert "duplicated: 1 planned pairs with more than one result" in block
    pair = cov["duplicated"][0]
    assert f'<tr><td class="mono">{pair["cell"]}</td><td class="mono">{pair["case"]}</td></tr>' in \
        block[block.index('id="coverage-duplicated"'):]
    assert cov["message"] in html.unescape(block)


# A breakdown in the scale of an H200 run (the fixtures' simulated cases take milliseconds). The six
# disjoint parts sum to 205 s; the suites sum to the 92.25 s of case time, two of them tied.
BREAKDOWN = {
    "wall_s": 73.14, "processes": 120, "helper_starts": 16,
    "summed_ms": {"process_start": 10250.0, "cuInit": 41000.0, "primary_ctx": 20500.0, "gpu_lock_wait": 30750.0,
                  "cases": 92250.0, "helpers": 24600.0, "helper_start": 8000.0, "exit": 10250.0},
    "suites_ms": {"alloc": 18510.0, "context": 1500.0, "device": 1500.0, "ipc": 60000.0, "stream": 10740.0},
    "cases": [{"case": "ipc.mem.peer_device", "summed_ms": 24000.0, "max_ms": 3100.0, "runs": 8},
              {"case": "stream.default.semantics", "summed_ms": 9040.0, "max_ms": 1250.0, "runs": 8},
              {"case": "alloc.copy.dtod", "summed_ms": 9000.0, "max_ms": 1960.0, "runs": 7}],
    "longest_cell": {"cell": "nv=1", "wall_ms": 11520.0},
}


def with_breakdown(tmp_path: Path, breakdown: dict) -> str:
    """The page of latency-a (whose breakdown the judge wrote) with `breakdown` in its place."""
    summary = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    summary["breakdown"] = breakdown
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    return build([load_run(tmp_path)])


def table_rows(page: str, ident: str) -> list[list[str]]:
    """The body rows of the table `ident`, each as its cells' text."""
    table = page[page.index(f'id="{ident}"'):]
    body = table[table.index("<tbody>"):table.index("</table>")]
    return [[html.unescape(re.sub(r"<[^>]*>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_breakdown_shows_the_runners_parts_with_their_shares(tmp_path: Path) -> None:
    page = with_breakdown(tmp_path, BREAKDOWN)
    assert 'id="breakdown"' in page and page.index('id="latency"') < page.index('id="breakdown"')
    assert "The functional phase took 73.1 s of wall clock" in page and "its 120 cell processes" in page
    rows = table_rows(page, "breakdown-parts")
    assert [(r[1], r[2]) for r in rows] == [
        ("10.2 s", "5.0 %"), ("41.0 s", "20.0 %"), ("20.5 s", "10.0 %"), ("30.8 s", "15.0 %"), ("92.2 s", "45.0 %"),
        ("24.6 s", ""), ("8.0 s", ""), ("10.2 s", "5.0 %"), ("205.0 s", "100.0 %")]
    assert [r[0].split(" (")[0] for r in rows] == [
        "process start", "cuInit", "primary context", "waiting for the GPU lock", "cases", "↳ in helper requests",
        "↳ starting helper servers", "exit", "summed parts"]
    assert "(16 starts, within helper requests)" in rows[6][0]


def test_breakdown_lists_suites_costliest_first_and_cases_as_written(tmp_path: Path) -> None:
    page = with_breakdown(tmp_path, BREAKDOWN)
    # Ties (context, device) keep the runner's name order.
    assert table_rows(page, "breakdown-suites") == [
        ["ipc", "60.0 s", "65.0 %"], ["alloc", "18.5 s", "20.1 %"], ["stream", "10.7 s", "11.6 %"],
        ["context", "1.5 s", "1.6 %"], ["device", "1.5 s", "1.6 %"]]
    assert table_rows(page, "breakdown-cases") == [
        ["ipc.mem.peer_device", "8", "24.0 s", "3.1 s"], ["stream.default.semantics", "8", "9.0 s", "1.2 s"],
        ["alloc.copy.dtod", "7", "9.0 s", "2.0 s"]]
    longest = page[page.index('id="breakdown-longest-cell"'):]
    assert longest.startswith('id="breakdown-longest-cell">Longest cell: <span class="mono">nv=1</span>, '
                              "its processes lived 11.5 s.</p>")


def test_a_breakdown_of_nothing_shows_its_parts_only(tmp_path: Path) -> None:
    """An empty run: no suites, no cases, no cell named (the runner read no cell_exit records); the shares
    of a zero total are dashes, not a division by zero."""
    empty = {**BREAKDOWN, "processes": 0, "helper_starts": 0, "summed_ms": dict.fromkeys(BREAKDOWN["summed_ms"], 0),
             "suites_ms": {}, "cases": [], "longest_cell": {"cell": "", "wall_ms": 0}}
    page = with_breakdown(tmp_path, empty)
    assert {r[2] for r in table_rows(page, "breakdown-parts")} == {"–", ""}
    for ident in ("breakdown-suites", "breakdown-cases", "breakdown-longest-cell"):
        assert f'id="{ident}"' not in page


def test_the_judges_breakdown_of_the_fixture_records() -> None:
    """latency-a's breakdown is `cuparity merge`'s of make_fixtures' records: what it wrote is shown."""
    breakdown = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())["breakdown"]
    page = render("latency-a")
    assert [r[0] for r in table_rows(page, "breakdown-cases")] == [c["case"] for c in breakdown["cases"]]
    assert [r[0] for r in table_rows(page, "breakdown-suites")] == \
        sorted(breakdown["suites_ms"], key=lambda s: -breakdown["suites_ms"][s])
    assert f'<span class="mono">{breakdown["longest_cell"]["cell"]}</span>' in page
    # One shard merged alone: the judge read no cell_exit records, so it names no longest cell.
    incomplete = render("incomplete")
    assert 'id="breakdown-parts"' in incomplete and 'id="breakdown-longest-cell"' not in incomplete


def test_the_timeline_shows_how_long_k_cases_ran_at_once(tmp_path: Path) -> None:
    """breakdown.timeline.running_ms as the runner wrote it, levels with no time left out."""
    page = with_breakdown(tmp_path, {**BREAKDOWN, "timeline": {
        "first_case_ms": 900.0, "last_case_end_ms": 39100.0, "running_ms": [2800.0, 22100.0, 0.0, 14200.0]}})
    assert table_rows(page, "breakdown-timeline") == [
        ["0", "2.8 s", "7.2 %"], ["1", "22.1 s", "56.5 %"], ["3", "14.2 s", "36.3 %"]]
    assert 'id="breakdown-timeline"' not in with_breakdown(tmp_path, BREAKDOWN)


def test_a_garbled_timeline_is_refused_naming_the_member(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match=r"running_ms\[1\]"):
        with_breakdown(tmp_path, {**BREAKDOWN, "timeline": {"running_ms": [1.0, -5.0]}})


def test_older_summaries_show_no_breakdown() -> None:
    for name in ("cmp-a", "sim-div", "h200-trimmed.summary.json", "interrupted"):
        assert 'id="breakdown' not in render(name), name


def test_breakdown_text_is_escaped(tmp_path: Path) -> None:
    hostile = {**BREAKDOWN, "suites_ms": {XSS_RAW[0]: 1.0, "ipc\x1b[2J": 2.0},
               "cases": [{"case": XSS_RAW[1], "summed_ms": 1.0, "max_ms": 1.0, "runs": 1}],
               "longest_cell": {"cell": XSS_RAW[2] + "\u202e", "wall_ms": 1.0}}
    page = with_breakdown(tmp_path, hostile)
    block = page[page.index('id="breakdown"'):]
    for raw in XSS_RAW:
        assert raw not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in block and "&#34;&gt;&lt;img src=x onerror" in block
    assert r"ipc\x1b[2J" in block and r"&lt;img src=x\u202e" in block and "\x1b" not in page
    assert not any(t in ("script", "img") for t, _ in parse(block).tags)


# --- changes against the reference -----------------------------------------------------------------

def changes_block(page: str) -> str:
    """The changes section: its heading to the next section's heading (or the footer)."""
    start = page.index('<h2 id="changes">')
    ends = [i for i in (page.find("<h2", start + 1), page.find("<footer", start)) if i >= 0]
    return page[start:min(ends)]


def text_of(html_text: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", html_text))


# The judge's changes of the fixture `changes` (make_fixtures.py: CHANGES_MATRIX and changes_records),
# in its order: matrix order of the cells, then case order, then the binding entries.
CHANGES_ROWS = [
    ["A=x,B=1", "A=x,B=0", "context.init.facts", "observations.driver_version", "13000", "13010",
     "the candidate is driver 13.1"],
    ["A=x,B=1", "A=x,B=0", "context.init.facts", "observations.ptds_default", "null", "false", ""],
    ["A=x,B=1", "A=x,B=0", "", "binding.cuStreamGetId", '{"abi": 1, "missing": false, "symbol": "cuStreamGetId"}',
     "null", ""],
    ["A=y,B=1", "A=y,B=0", "alloc.copy.dtod", "outcome", "pass", "fail", ""],
    ["A=y,B=1", "A=y,B=0", "alloc.copy.dtod", "observations.checksum", "3441483798584083331", "null", ""],
    ["A=y,B=1", "A=y,B=0", "", "binding.cuMemAlloc", '{"abi": 2, "missing": false, "symbol": "cuMemAlloc_v2"}',
     '{"abi": 1, "missing": false, "symbol": "cuMemAlloc"}', ""],
]


def test_changes_show_the_judges_changes_in_its_order() -> None:
    """The fixture `changes` is `cuparity merge`'s summary of a matrix with reference = { B = "0" },
    fail_on_change and a known-changes file: the section shows its reference, its pairs, its count, every
    change as written with the reason of the known one, and the stale entry."""
    summary = json.loads((FIXTURES / "changes" / "summary.json").read_text())
    ch = summary["changes"]
    assert summary["verdict"] == "failed" and ch["fail_on_change"] and ch["count"] == len(ch["changes"]) == 6
    page = render("changes")
    assert page.index('id="details"') < page.index('id="changes"')
    block = changes_block(page)
    assert block.startswith('<h2 id="changes">Changes against the reference</h2>')
    line = block[block.index('<p id="changes-line">'):block.index("</p>")]
    assert text_of(line) == ("Reference: B=0. 2 cells compared with a reference cell, 6 changes: "
                             "5 that no known change accepts fail the run (fail_on_change), 1 known.")
    assert 'title="A=x,B=1 vs A=x,B=0\nA=y,B=1 vs A=y,B=0"' in line and '<b class="warn">6 changes</b>' in line
    rows = table_rows(page, "changes-table")
    assert rows == CHANGES_ROWS
    assert [tuple(r[:4]) for r in rows] == [(c["cell"], c["reference"], c["case"], c["key"]) for c in ch["changes"]]
    assert table_rows(page, "changes-stale") == [
        ["known.toml:7:1", "any cell", "", "binding.cuGraphCreate", "any value",
         "a stale entry: no cell changes cuGraphCreate"]]
    stale_line = block[block.index('<p id="changes-stale-line">'):]
    assert text_of(stale_line[:stale_line.index("</p>")]) == (
        "Known changes in known.toml that matched no change: 1, each fails the run (fail_on_change).")
    # With fail_on_change each change no known change accepts is also a problem of kind "change", which
    # the details section shows: a binding change (no case) with its message, a case's change in the
    # case's heading; the stale entry is a stale_expectation.
    changes = [p for p in summary["problems"] if p["kind"] == "change"]
    assert len(changes) == 5
    assert [p["kind"] for p in summary["problems"]].count("stale_expectation") == 1
    details = html.unescape(page[page.index('id="details"'):page.index('id="changes"')])
    for p in changes:
        assert (p["message"] if not p["case"] else f"change in {p['cell']}") in details, p


CHANGES_CASES = ["alloc.copy.dtod", "context.init.facts"]


def reference_run(a_values: list[str], b_values: list[str | bool], reference: str, fail_on_change: bool,
                  observe: Any) -> tuple[str, list[dict]]:
    """A matrix of axes A and B with `reference`, and records of its cells (cmp-a's nv=0 configuration):
    every case passes, with the observations `observe(cell, case)`; a binding map per cell."""
    def toml(v: str | bool) -> str:
        return "false" if v is False else "'" + str(v) + "'"

    matrix = (f'[matrix]\nname = "chg"\ncases = {json.dumps(CHANGES_CASES)}\nreference = {reference}\n'
              f'fail_on_change = {"true" if fail_on_change else "false"}\n'
              'inert = { A = "a test axis", B = "a test axis" }\n\n'
              f'[axes]\nA = [{", ".join(map(toml, a_values))}]\nB = [{", ".join(map(toml, b_values))}]\n')
    s = json.loads((FIXTURES / "cmp-a" / "summary.json").read_text())
    config = s["cells"][0]["config"]
    out: list[dict] = [{"type": "run", "schema": "cuparity.results/1", "matrix": "chg", "matrix_path": "m.toml",
                        "shard": "", "started": s["started"], "provenance": s["provenance"]}]
    for a in a_values:
        for b in b_values:
            cid = f"A={a},B={'-' if b is False else b}"
            out.append({"type": "cell", "cell": cid, "pid": 1, "device": "", "config": config, "startup_ms": {}})
            out += [{"type": "case", "cell": cid, "case": case, "outcome": "pass", "message": "", "duration_ms": 1.0,
                     "observations": observe(cid, case), "pid": 1} for case in CHANGES_CASES]
            entry = observe(cid, "binding")
            if entry:
                out.append({"type": "binding_map", "cell": cid, "map": [
                    {"entry": entry, "abi": 2, "symbol": "cuMemAlloc_v2", "exported": True, "address": "0x1",
                     "missing": False}]})
    return matrix, out


def merged_summary(tmp_path: Path, cuparity_bin: Path, matrix: str, records: list[dict], code: int) -> Path:
    """The folder of the summary.json `cuparity merge` writes for `records` with `matrix` (exit `code`)."""
    (tmp_path / "m.toml").write_text(matrix)
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    done = subprocess.run([str(cuparity_bin), "merge", str(tmp_path / "m.toml"), str(run), "-o", str(run)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stdout + done.stderr
    return run


def test_changes_reported_only_against_an_unset_reference(tmp_path: Path, cuparity_bin: Path) -> None:
    """reference = { B = false } (B unset) without fail_on_change: the judge reports the change and the run
    stays equivalent; the page says the reference is B unset and that the change does not fail the run."""
    matrix, records = reference_run(["x"], [False, "1"], "{ B = false }", False,
                                    lambda cell, case: {"checksum": 2 if cell.endswith("B=1") else 1}
                                    if case == "alloc.copy.dtod" else {})
    run = merged_summary(tmp_path, cuparity_bin, matrix, records, 0)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["verdict"] == "equivalent" and summary["changes"]["reference"] == {"B": None}
    assert not [p for p in summary["problems"] if p["kind"] == "change"]
    page = build([load_run(run)])
    block = changes_block(page)
    assert text_of(block[block.index('<p id="changes-line">'):block.index("</p>")]) == (
        "Reference: B unset. 1 cell compared with a reference cell, 1 change: "
        "they are reported only, not failing the run (no fail_on_change).")
    assert '<b>1 change</b>' in block
    assert table_rows(page, "changes-table") == [
        ["A=x,B=1", "A=x,B=-", "alloc.copy.dtod", "observations.checksum", "1", "2", ""]]


@pytest.mark.parametrize("fail_on_change, says", [
    (False, "a change would be reported only"), (True, "a change would fail the run (fail_on_change)")])
def test_no_changes_is_one_line_without_a_table(tmp_path: Path, cuparity_bin: Path, fail_on_change: bool,
                                                says: str) -> None:
    matrix, records = reference_run(["x", "y"], ["0", "1"], '{ B = "0" }', fail_on_change,
                                    lambda cell, case: {"checksum": 1} if case == "alloc.copy.dtod" else {})
    run = merged_summary(tmp_path, cuparity_bin, matrix, records, 0)
    assert json.loads((run / "summary.json").read_text())["changes"]["count"] == 0
    block = changes_block(build([load_run(run)]))
    assert text_of(block[block.index('<p id="changes-line">'):block.index("</p>")]) == (
        f"Reference: B=0. 2 cells compared with a reference cell, 0 changes: {says}.")
    assert 'id="changes-table"' not in block


def test_no_changes_section_without_a_reference() -> None:
    """Older summaries have no `changes`; a matrix without a reference writes `changes: null`; raw records none."""
    assert "changes" not in json.loads((FIXTURES / "cmp-a" / "summary.json").read_text())
    assert json.loads((FIXTURES / "incomplete" / "summary.json").read_text())["changes"] is None
    for name in ("cmp-a", "incomplete", "latency-a", "interrupted", "h200-trimmed.summary.json"):
        assert 'id="changes' not in render(name), name


def test_changes_text_is_escaped(tmp_path: Path, cuparity_bin: Path) -> None:
    """Markup and control characters in cell ids (axis values), the reference value, observation names and
    values and binding entries, as the judge wrote them: escaped, never markup; a long value cut, its full
    text in the title."""
    long = "v" * 300 + XSS_RAW[0]

    def observe(cell: str, case: str) -> Any:
        changed = cell.endswith("B=1")
        if case == "binding":
            return XSS_RAW[1] + ("\x1b[2J" if changed else "")
        if case == "alloc.copy.dtod":
            return {XSS_RAW[0]: XSS_RAW[1] + "\x1b[31m" if changed else "same", "long": long if changed else ""}
        return {}

    matrix, records = reference_run([XSS_RAW[0]], [XSS_RAW[1], "1"], "{ B = '" + XSS_RAW[1] + "' }", True, observe)
    run = merged_summary(tmp_path, cuparity_bin, matrix, records, 1)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["changes"]["count"] == 4, summary["changes"]  # two observations, two binding entries
    page = build([load_run(run)])
    block = changes_block(page)
    for raw in XSS_RAW:
        assert raw not in page
    assert "\x1b" not in page and r"\x1b[31m" in block and r"\x1b[2J" in block
    assert "observations.&lt;script&gt;alert(1)&lt;/script&gt;" in block
    assert 'id="changes-reference">B=&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</span>' in block
    assert not any(t in ("script", "img") for t, _ in parse(block).tags)
    rows = table_rows(page, "changes-table")
    assert [r[3] for r in rows] == ["observations.<script>alert(1)</script>", "observations.long",
                                    "binding." + XSS_RAW[1], "binding." + XSS_RAW[1] + r"\x1b[2J"]
    assert rows[1][5] == long[:239] + "…"
    assert f'title="{html.escape(long)}"' in block


def test_a_divergence_shows_the_bindings_the_judge_found_apart(tmp_path: Path) -> None:
    """External suites' cells: the functions bound to other symbols, per cell, as the judge listed
    them in summary.json; those bound to the same symbols another way in one row."""
    summary = json.loads((FIXTURES / "sim-div" / "summary.json").read_text())
    div = summary["divergences"][0]
    a, b = list(div["values"])[:2]
    div["bindings"] = [
        {"function": "cuMemGetInfo", "same_symbols": False,
         "cells": {a: ["cuMemGetInfo_v2 (dlsym)"], b: ["cuMemGetInfo (proc)"]}},
        {"function": "cuInit", "same_symbols": True,
         "cells": {a: ["cuInit (dlsym)"], b: ["cuInit (proc)"]}},
    ]
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    page = build([load_run(tmp_path)])
    topic = page[page.index(f"<code>{div['case']}</code>"):]
    topic = topic[:topic.index("</table>")]
    row = topic[topic.index("bound: cuMemGetInfo"):]
    row = row[:row.index("</tr>")]
    assert "cuMemGetInfo_v2 (dlsym)" in row and "cuMemGetInfo (proc)" in row
    assert "bound: cuInit" not in topic
    assert "bound the same symbols another way (1)" in topic and "cuInit" in topic
    # Without bindings (cuparity's own cells) no such row.
    assert "bound:" not in render("sim-div")


def test_python_path_table_renders_the_runners_rows(tmp_path: Path) -> None:
    """latency.python_path as the runner wrote it: each row's figures, and a Python process that used
    another binding than the C++ one is said so (nothing recomputed: the cost shown is the row's)."""
    summary = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    fig = {"median": 2000.0, "low": 1990.0, "high": 2010.0, "n": 5}
    cpp = {"median": 10.0, "low": 9.0, "high": 11.0, "n": 5}
    row = {"probe": "py.ctx.get_current", "cpp_probe": "ctx.get_current", "cell": "nv=1", "path": "raw",
           "binding": "internal", "python_series": "direct:nv=1", "cpp_series": "other:nv=1",
           "python_ns": fig, "cpp_ns": cpp, "cost_ns": 1234.5, "cost_low": 1200.0, "cost_high": 1300.0,
           "ratio": 200.0, "ratio_low": 190.0, "ratio_high": 210.0,
           "python_binding": "internal", "cpp_binding": "nvidia"}
    summary["latency"]["python_path"] = [row]
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    page = build([load_run(tmp_path)])
    table = page[page.index('id="latency-python-path"'):]
    table = table[:table.index("</table>")]
    assert "py.ctx.get_current" in table and "1234 [1200, 1300]" in table
    assert "Python used internal, C++ nvidia" in table
    del summary["latency"]["python_path"]
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    assert 'id="latency-python-path"' not in build([load_run(tmp_path)])
