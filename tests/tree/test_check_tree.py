"""scripts/check-tree: a tracked file over 1 MB, tracked HTML outside the report templates, and a
tracked tree over 8 MB are each refused, naming the file (or the total); a clean tree passes; and
this repository is clean. Each fixture is a small git repository made in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check-tree"
MB = 1_000_000


def check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(repo)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clean tree: sources, a report template, a gzipped run, one file of exactly 1 MB."""
    r = tmp_path / "repo"
    r.mkdir()
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    files = {"README.md": "# x\n", "harness/a.cpp": "int a;\n",
             "reports/cuparity_reports/templates/page.html": "<p>{{ x }}</p>\n",
             "reports/cuparity_reports/templates/sub/part.html": "<b></b>\n"}
    for name, text in files.items():
        (r / name).parent.mkdir(parents=True, exist_ok=True)
        (r / name).write_text(text)
    (r / "reports/runs/x").mkdir(parents=True)
    (r / "reports/runs/x/summary.json.gz").write_bytes(b"\x1f\x8b" + bytes(MB - 2))  # at the limit, not over
    os.symlink("summary.json.gz", r / "reports/runs/x/summary.json")
    add(r)
    return r


def add(repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)


def test_a_clean_tree_passes(repo: Path) -> None:
    done = check(repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("check-tree: clean: 6 tracked files") and done.stderr == ""


def test_a_file_over_1_mb_is_refused_by_name(repo: Path) -> None:
    (repo / "reports/runs/x/results.jsonl").write_bytes(b"{}\n" * (MB // 3 + 1))
    add(repo)
    done = check(repo)
    assert done.returncode == 1
    assert f"check-tree: refused: reports/runs/x/results.jsonl: {3 * (MB // 3 + 1)} bytes, over the {MB}" in done.stderr
    assert "1 refused" in done.stderr and "summary.json.gz" not in done.stderr  # 1 MB exactly is allowed


@pytest.mark.parametrize("page", ["reports/history/index.html", "docs/report.HTML", "out/site.htm",
                                  "reports/cuparity_reports/templates.html"])
def test_html_outside_the_templates_is_refused_by_name(repo: Path, page: str) -> None:
    (repo / page).parent.mkdir(parents=True, exist_ok=True)
    (repo / page).write_text("<html></html>\n")
    add(repo)
    done = check(repo)
    assert done.returncode == 1
    assert f"check-tree: refused: {page}: generated HTML outside reports/cuparity_reports/templates/" in done.stderr
    assert "page.html" not in done.stderr and "part.html" not in done.stderr


def test_a_tree_over_8_mb_is_refused_with_its_total(repo: Path) -> None:
    for i in range(8):  # each under the file limit; with the 1 MB run, over 8 MB in all
        (repo / f"data/part-{i}.bin").parent.mkdir(exist_ok=True)
        (repo / f"data/part-{i}.bin").write_bytes(bytes(900_000))
    add(repo)
    done = check(repo)
    assert done.returncode == 1
    total = 8 * 900_000 + MB + sum(len(t) for t in ("# x\n", "int a;\n", "<p>{{ x }}</p>\n", "<b></b>\n")) + len(
        "summary.json.gz")
    assert f"check-tree: refused: the tracked tree: {total} bytes in 14 files, over the 8000000" in done.stderr
    assert "part-" not in done.stderr  # no one file is to blame


def test_untracked_files_do_not_count(repo: Path) -> None:
    (repo / "build").mkdir()
    (repo / "build/site.html").write_text("<html></html>\n")
    (repo / "build/big.bin").write_bytes(bytes(9 * MB))
    assert check(repo).returncode == 0


def test_no_repository_is_exit_2(tmp_path: Path) -> None:
    done = check(tmp_path)
    assert done.returncode == 2 and done.stderr.startswith(f"check-tree: {tmp_path}: ")


def test_this_repository_is_clean() -> None:
    done = check(REPO)
    assert done.returncode == 0, done.stderr
