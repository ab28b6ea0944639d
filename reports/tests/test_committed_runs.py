"""Every committed run is read as stored (gzipped) by both readers: each summary under reports/runs
by `cuparity compare S S --json -` (the C++ reader) and by the reports' reader, as `history add`
takes it; each run folder by `cuparity compare` (its summary and the records beside it, whose
binding maps it compares); each record file (results.jsonl.gz) by the reports' reader. Every
dashboard of them is drawn by test_agreement.py (each folder's leading summary, its verdicts
checked) and test_browser_site.py (every summary of a folder, opened in Chromium)."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPORTS, summary_file, summary_of
from cuparity_reports.dashboard import check_renderable
from cuparity_reports.reader import load_run

RUNS = REPORTS / "runs"
# Every summary file, at any depth (packages/maps-*-summary.json.gz, latency-floor/summary.json.gz),
# once: a symbolic link names another summary of its folder.
SUMMARIES = sorted(p for p in RUNS.rglob("*summary*.json*") if p.is_file() and not p.is_symlink())
FOLDERS = sorted(p for p in RUNS.iterdir() if p.is_dir() and summary_file(p).exists())
RECORDS = sorted(p for p in RUNS.rglob("*results*.jsonl*") if p.is_file())


def judged(binary: Path, run: Path) -> tuple[Path, int, str, str]:
    done = subprocess.run([str(binary), "compare", str(run), str(run), "--json", "-"], capture_output=True,
                          text=True, timeout=120)
    return run, done.returncode, done.stdout, done.stderr


def test_the_committed_runs_are_kept_gzipped() -> None:
    assert len(SUMMARIES) >= 100 and len(FOLDERS) >= 49
    plain = [p for p in RUNS.rglob("*.json*") if p.is_file() and p.stat().st_size > 4096
             and not p.name.endswith(".gz")]
    assert plain == [], "gzip these (the tools read .json.gz and .jsonl.gz as stored)"


def test_cuparity_compare_reads_every_summary_and_folder_as_stored(cuparity_bin: Path) -> None:
    """Each against itself: nothing changed, so exit 0 for a complete run; an incomplete one (the
    numba suite, by design) is exit 1 saying so. Exit 2 would be a summary the judge refuses."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(lambda run: judged(cuparity_bin, run), SUMMARIES + FOLDERS))
    import json

    for run, code, out, err in done:
        assert code in (0, 1), f"{run}: exit {code}: {err[-500:]}"
        data = json.loads(out)
        assert data["exit_code"] == code and data["a"]["verdict"] == summary_of(run)["verdict"], run
        assert not data["regressed"], run
        assert code == 0 or data["incomplete"], run


@pytest.mark.parametrize("summary", SUMMARIES, ids=lambda p: str(p.relative_to(RUNS)))
def test_the_reports_read_every_summary_as_stored(summary: Path) -> None:
    run = load_run(summary)
    assert run.summary["verdict"] == summary_of(summary)["verdict"]
    check_renderable(run)  # what `history add` (and so `scripts/report site`) requires


@pytest.mark.parametrize("records", RECORDS, ids=lambda p: str(p.relative_to(RUNS)))
def test_the_reports_read_every_committed_record_file_as_stored(records: Path) -> None:
    run = load_run(records)  # as the dashboard shows a run that has only its records
    assert run.raw and run.summary["results"]
