"""One judge: the renderers show exactly the verdicts the C++ judge wrote, for every committed run.

The dashboard must show each summary's verdict (with its own badge), its coverage (the judge's
message and every pair it listed as missing, duplicated or unplanned; none for older summaries),
mark each of its divergences (and no other), list each latency comparison with the runner's
verdict, show the runner's time breakdown as written (none for older summaries), and list the
judge's changes against the reference in its order with its count (none without a reference);
`scripts/report compare` must show what `cuparity compare` computed, and `cuparity compare` must agree with the runner's own
--latency-baseline rows. Nothing here recomputes a verdict: it reads them and looks for them.
"""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, REPORTS, summary_file, summary_of
from cuparity_reports.dashboard import build
from cuparity_reports.formatting import json_value
from cuparity_reports.reader import load_run

SCRIPT = REPORTS.parent / "scripts" / "report"
# Each committed folder's leading summary (summary.json[.gz], or the one its link names), as stored
# (gzipped): every vintage of the summary, one per folder; test_committed_runs.py reads every one.
COMMITTED = sorted({summary_file(p).resolve() for p in (REPORTS / "runs").iterdir()
                    if p.is_dir() and summary_file(p).exists()})
FIXTURE_SUMMARIES = sorted(FIXTURES.glob("*/summary.json")) + [FIXTURES / "h200-trimmed.summary.json"]


def started(path: Path) -> tuple[str, str]:
    return (summary_of(path).get("started", ""), str(path))


# Committed runs next to each other in time, then fixture pairs that exercise every part.
PAIRS = [(a, b) for a, b in zip(sorted(COMMITTED, key=started), sorted(COMMITTED, key=started)[1:])] + [
    (FIXTURES / "cmp-a", FIXTURES / "cmp-b"), (FIXTURES / "cmp-b", FIXTURES / "cmp-a"),
    (FIXTURES / "latency-a", FIXTURES / "latency-b"), (FIXTURES / "sim-div", FIXTURES / "sim-partial"),
    (FIXTURES / "sim-partial", FIXTURES / "sim-div"), (FIXTURES / "h200-trimmed.summary.json", FIXTURES / "cmp-a"),
    (FIXTURES / "cmp-a", FIXTURES / "incomplete"), (FIXTURES / "incomplete", FIXTURES / "latency-a"),
]


def name(path: Path) -> str:
    return str(path.relative_to(REPORTS))


class Page(HTMLParser):
    """The parts of a dashboard that carry verdicts: the verdict, grid squares, detail headings, tables."""

    def __init__(self) -> None:
        super().__init__()
        self.verdict = ""
        self.verdict_class = ""
        self.ids: set[str] = set()  # every element id on the page
        self.coverage_message: str | None = None
        self.changes_line: str | None = None
        self.squares: list[str] = []  # titles of grid squares
        self.topics: list[dict[str, str]] = []  # detail headings: case, group key, what
        self.tables: dict[str, list[list[str]]] = {}
        self.warn_rows: dict[str, list[int]] = {}  # table id -> rows with a 'warn' cell
        self._stack: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._in_verdict = False
        self._in_coverage_message = False
        self._in_changes_line = False
        self._topic: dict[str, str] | None = None
        self._topic_part = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "div" and a.get("id") == "verdict":
            self._in_verdict = True
            self.verdict_class = " ".join(c for c in a.get("class", "").split() if c.startswith("v-"))
        if tag == "span" and a.get("id") == "coverage-message":
            self._in_coverage_message = True
            self.coverage_message = ""
        if tag == "p" and a.get("id") == "changes-line":
            self._in_changes_line = True
            self.changes_line = ""
        if tag == "table":
            self._table = a.get("id") or None
            if self._table:
                self.tables[self._table] = []
        if tag == "tr" and self._table:
            self.tables[self._table].append([])
        if tag in ("td", "th") and self._table:
            self._cell = []
            if "warn" in a.get("class", "").split() and self.tables[self._table]:
                self.warn_rows.setdefault(self._table, []).append(len(self.tables[self._table]) - 1)
        if tag == "td" and a.get("class", "").startswith("o o-"):
            self.squares.append(a.get("title", ""))
        if tag == "h3":
            self._topic = {"case": "", "group": "", "what": ""}
        if self._topic is not None and tag == "code":
            self._topic_part = "case"
        if self._topic is not None and tag == "span":
            if "title" in a:
                self._topic["group"] = a["title"]
            elif "muted" in a.get("class", ""):
                self._topic_part = "what"

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            self._in_verdict = False
        if tag == "span":
            self._in_coverage_message = False
        if tag == "p":
            self._in_changes_line = False
        if tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "table":
            self._table = None
        if tag == "code":
            self._topic_part = ""
        if tag == "h3" and self._topic is not None:
            if self._topic["case"]:
                self.topics.append(self._topic)
            self._topic = None

    def handle_data(self, data: str) -> None:
        if self._in_verdict:
            self.verdict += data
        if self._in_coverage_message and self.coverage_message is not None:
            self.coverage_message += data
        if self._in_changes_line and self.changes_line is not None:
            self.changes_line += data
        if self._cell is not None:
            self._cell.append(data)
        if self._topic is not None and self._topic_part:
            self._topic[self._topic_part] += data


def dashboard(path: Path) -> Page:
    page = Page()
    page.feed(build([load_run(path)]))
    return page


def expected_marks(summary: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(cell, case, key) for every divergence and every cell of its group that it names."""
    group_of = {str(c.get("id")): c.get("group") for c in summary.get("cells") or []}
    return {(cell, d["case"], d["key"]) for d in summary.get("divergences") or []
            for cell in d.get("values") or {} if group_of.get(cell) == d["group"]}


def shown_marks(page: Page) -> set[tuple[str, str, str]]:
    marks = set()
    for title in page.squares:
        lines = title.split("\n")
        for line in lines[2:]:
            if line.startswith("DIVERGES on "):
                marks.add((lines[1], lines[0], line.removeprefix("DIVERGES on ").split(": ")[0]))
    return marks


COVERAGE_LISTS = ("missing", "duplicated", "unplanned")


def check_coverage(page: Page, summary: dict[str, Any]) -> None:
    """The judge's coverage as written: for an incomplete run its message and every pair it listed,
    with the cap said where a list is shorter than its count; a complete one in one line; none where
    the summary has no coverage section (older summaries)."""
    cov = summary.get("coverage")
    if cov is None:
        assert "coverage" not in page.ids and page.coverage_message is None
        return
    assert "coverage" in page.ids
    if cov["complete"]:
        assert page.coverage_message is None
        assert not any(f"coverage-{l}" in page.ids for l in COVERAGE_LISTS)
        return
    assert page.coverage_message == cov["message"] and cov["message"]
    for l in COVERAGE_LISTS:
        rows = page.tables.get(f"coverage-{l}")
        if cov[f"{l}_count"] == 0:
            assert rows is None, l
            continue
        assert rows is not None, l
        assert [tuple(r) for r in rows[1:]] == [(p["cell"], p["case"]) for p in cov[l]], l
        assert (f"coverage-{l}-capped" in page.ids) == (cov[f"{l}_count"] > len(cov[l])), l


def check_breakdown(page: Page, summary: dict[str, Any]) -> None:
    """The runner's breakdown as written: its costliest cases in its order, each of its suites, its
    longest cell where it named one; none where the summary has no breakdown (older summaries)."""
    b = summary.get("breakdown")
    if b is None:
        assert not any(i.startswith("breakdown") for i in page.ids)
        return
    assert {"breakdown", "breakdown-parts"} <= page.ids
    assert [r[0] for r in page.tables.get("breakdown-cases", [[]])[1:]] == [c["case"] for c in b["cases"]]
    assert sorted(r[0] for r in page.tables.get("breakdown-suites", [[]])[1:]) == sorted(b["suites_ms"])
    assert ("breakdown-longest-cell" in page.ids) == bool(b["longest_cell"]["cell"])


def check_changes(page: Page, summary: dict[str, Any]) -> None:
    """The judge's changes against the reference as written: its count and pairs in one line, with whether
    they fail the run, and every change in its order with its before and after values; none where the
    summary has no changes (a matrix without a reference, older summaries)."""
    ch = summary.get("changes")
    if ch is None:
        assert not any(i.startswith("changes") for i in page.ids) and page.changes_line is None
        return
    assert {"changes", "changes-line"} <= page.ids and page.changes_line is not None
    n = len(ch["pairs"])
    assert f"{n} {'cell' if n == 1 else 'cells'} compared with a reference cell" in page.changes_line
    assert f"{ch['count']} {'change' if ch['count'] == 1 else 'changes'}:" in page.changes_line
    unknown = sum(1 for c in ch["changes"] if not c.get("known"))
    assert ("fail the run (fail_on_change)" in page.changes_line) == (ch["fail_on_change"] and unknown > 0)
    stale = ch.get("stale_known", [])
    assert [r[3] for r in page.tables.get("changes-stale", [[]])[1:]] == [k["key"] for k in stale]
    if not ch["changes"]:
        assert "changes-table" not in page.tables
        return
    assert [tuple(r) for r in page.tables["changes-table"][1:]] == [
        (c["cell"], c["reference"], c["case"], c["key"], json_value(c["before"])[0], json_value(c["after"])[0],
         c.get("known") or "")
        for c in ch["changes"]]


@pytest.mark.parametrize("path", COMMITTED + FIXTURE_SUMMARIES, ids=name)
def test_dashboard_shows_the_runners_verdicts(path: Path) -> None:
    summary = summary_of(path)
    page = dashboard(path)
    assert page.verdict.strip() == summary["verdict"]
    assert page.verdict_class == f"v-{summary['verdict']}"  # each of the judge's words has its badge
    check_coverage(page, summary)
    check_breakdown(page, summary)
    check_changes(page, summary)
    assert shown_marks(page) == expected_marks(summary)
    divs: dict[tuple[str, str], set[str]] = {}
    for d in summary["divergences"]:
        divs.setdefault((d["group"], d["case"]), set()).add(d["key"])
    for t in page.topics:
        keys = divs.get((t["group"], t["case"]))
        if keys:
            assert f"diverges on {', '.join(sorted(keys))}" in t["what"]
        else:
            assert "diverges on" not in t["what"]
    assert {(t["group"], t["case"]) for t in page.topics if "diverges on" in t["what"]} == set(divs)
    lat = summary.get("latency") or {}
    for ident, rows in (("latency-comparisons", lat.get("comparisons")), ("latency-baseline", lat.get("baseline"))):
        want = [(c["probe"], c["a"], c["b"], c["verdict"] + (" REGRESSION" if c.get("regression") else ""))
                for c in rows or []]
        got = [(r[0], r[2], r[3], " ".join(r[-1].split())) for r in page.tables.get(ident, [])[1:]]
        assert got == want, ident
    # The paired verdicts (nvidia / internal in one process), cell by cell, as the runner wrote them.
    want_paired = [(p["probe"], p["cell"], p["verdict"]) for p in lat.get("paired") or []]
    got_paired = [(r[0], r[1], " ".join(r[-1].split())) for r in page.tables.get("latency-paired", [])[1:]]
    assert got_paired == want_paired
    flagged = {(o["probe"], o["series"]) for o in (lat.get("noise") or {}).get("over_target") or []}
    stats = page.tables.get("latency-stats", [])
    assert {(stats[i][0], stats[i][1]) for i in page.warn_rows.get("latency-stats", [])} == flagged


def judged(binary: Path, a: Path, b: Path) -> dict[str, Any]:
    done = subprocess.run([str(binary), "compare", str(a), str(b), "--json", "-"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert data["exit_code"] == done.returncode
    return data


def report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "compare", *args], capture_output=True, text=True, timeout=120)


def table_rows(lines: list[str], header_start: str) -> list[list[str]]:
    """The rows of the fixed-width table whose header line starts with `header_start`."""
    at = next((i for i, l in enumerate(lines) if l.startswith(header_start)), None)
    if at is None:
        return []
    starts = [0] + [i + 2 for i, c in enumerate(lines[at + 1]) if c == " " and lines[at + 1][i + 1:i + 2] == " "]
    rows = []
    for line in lines[at + 2:]:
        if not line.strip():
            break
        rows.append([line[s:e].strip() for s, e in zip(starts, starts[1:] + [len(line)])])
    return rows


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{name(a)}->{name(b)}" for a, b in PAIRS])
def test_report_compare_shows_what_cuparity_compare_judged(a: Path, b: Path, cuparity_bin: Path) -> None:
    data = judged(cuparity_bin, a, b)
    as_json = report(str(a), str(b), "--json")
    assert as_json.returncode == data["exit_code"], as_json.stderr
    assert json.loads(as_json.stdout) == data
    text = report(str(a), str(b))
    assert text.returncode == data["exit_code"], text.stderr
    lines = text.stdout.splitlines()
    for label, run, path in (("A", data["a"], a), ("B", data["b"], b)):
        assert run["verdict"] == summary_of(path)["verdict"]
        assert any(l.startswith(f"{label}: ") and f"({run['verdict']}" in l for l in lines)
    assert [(r[0], r[1], r[2]) for r in table_rows(lines, "change ")] == sorted(
        [(o["change"], o["cell"], o["case"]) for o in data["outcomes"]],
        key=lambda t: ["regression", "fix", "changed", "new", "missing"].index(t[0]))
    assert [l.removeprefix("new divergence: ") for l in lines if l.startswith("new divergence: ")] == \
        [d["identity"] for d in data["divergences"]["new"]]
    assert [l.removeprefix("divergence gone: ") for l in lines if l.startswith("divergence gone: ")] == \
        [d["identity"] for d in data["divergences"]["gone"]]
    assert [(r[0], r[1], r[-1]) for r in table_rows(lines, "probe ")] == \
        [(l["probe"], l["series"], l["verdict"]) for l in data["latency"]]
    verdict = data["verdict"]
    assert (verdict.upper() if verdict != "no regression" else verdict) in lines
    assert [l.removeprefix("INCOMPLETE: ") for l in lines if l.startswith("INCOMPLETE: ")] == \
        data["incomplete"]


def test_compare_agrees_with_the_runners_latency_baseline(cuparity_bin: Path) -> None:
    """latency-b was summarised by `cuparity merge --latency-baseline latency-a`: the runner's baseline
    rows and `cuparity compare latency-a latency-b` are one rule, so they must be equal row by row."""
    runner = json.loads((FIXTURES / "latency-b" / "summary.json").read_text())["latency"]["baseline"]
    data = judged(cuparity_bin, FIXTURES / "latency-a", FIXTURES / "latency-b")
    assert runner and len(runner) == len(data["latency"])
    for row, l in zip(runner, data["latency"]):
        assert (row["probe"], row["b"], row["a"]) == (l["probe"], l["series"], f"baseline:{l['series']}")
        assert row["verdict"] == l["verdict"] and row["regression"] == (l["verdict"] == "slower")
        for key in ("median_a", "median_b", "ratio", "ci_low", "ci_high", "p_value", "threshold"):
            assert row[key] == pytest.approx(l[key], rel=1e-12), key
