"""scripts/report (reports/cuparity_reports) as a careless or unlucky user meets it (issue 47).

Every subcommand with its stdout on a full device (/dev/full), and every one that writes files
with its output on a full small tmpfs: exit 3 naming where the write failed, never a traceback,
never exit 0 over a page or a line that was not written. Every path option given the empty
string: exit 2, nothing written (an empty path is not the current folder). A history store with
a symbolic link among its folders: refused, naming the link, nothing written outside the store.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from . import hostile_support as hs
from .conftest import REPO, run_process

FIXTURES = REPO / "reports" / "tests" / "fixtures"
RUN_A, RUN_B = FIXTURES / "cmp-a", FIXTURES / "cmp-b"
COMPARE_JSON = FIXTURES / "hostile" / "control-chars.compare.json"
FAULTS_JSON = FIXTURES / "faults-sim.json"
FULL = "No space left on device"


def report(built, *argv: str, stdout=None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """scripts/report ARGV, the judge being the cuparity built (compare, the sites)."""
    return run_process([built.report, *argv], stdout=stdout, cwd=cwd, timeout=300,
                       env=built.env(CUPARITY_BIN=built.cuparity))


@pytest.fixture
def store(built, tmp_path) -> Path:
    """A history store holding run A."""
    where = tmp_path / "store"
    done = report(built, "history", "add", str(RUN_A), "--store", str(where))
    assert done.returncode == 0, done.stderr
    return where


@pytest.fixture
def runs_dir(tmp_path) -> Path:
    """A folder of run folders, as reports/runs is, with one run."""
    where = tmp_path / "runs"
    (where / "one").mkdir(parents=True)
    shutil.copy(RUN_A / "summary.json", where / "one" / "summary.json")
    return where


def stdout_commands(tmp_path: Path, store: Path, runs_dir: Path) -> dict[str, list[str]]:
    """Every subcommand, each writing something to stdout when it succeeds."""
    out = tmp_path / "out"
    return {
        "help": ["--help"],
        "version": ["--version"],
        "history-help": ["history", "add", "--help"],
        "dashboard": ["dashboard", str(RUN_A), "--output", str(out / "d.html")],
        "compare": ["compare", str(RUN_A), str(RUN_B)],
        "compare-json": ["compare", str(RUN_A), str(RUN_B), "--json"],
        "compare-from": ["compare", "--from", str(COMPARE_JSON)],
        "faults": ["faults", str(FAULTS_JSON), "--output", str(out / "f.html")],
        "history-add": ["history", "add", str(RUN_B), "--store", str(store)],
        "history-list": ["history", "list", "--store", str(store)],
        "history-rebuild": ["history", "rebuild", "--store", str(store)],
        "history-site": ["history", "site", "--store", str(store), "--output", str(out / "site")],
        "site": ["site", "--runs-dir", str(runs_dir), "--output", str(out / "all")],
    }


STDOUT_NAMES = ["help", "version", "history-help", "dashboard", "compare", "compare-json", "compare-from", "faults",
                "history-add", "history-list", "history-rebuild", "history-site", "site"]


@pytest.mark.parametrize("name", STDOUT_NAMES)
def test_a_full_stdout_is_exit_3_naming_it(built, full_stdout, tmp_path, store, runs_dir, name) -> None:
    """Before: `history list` and `compare --json` ended in a traceback and exit 70; the others
    exited 0 (argparse drops a failed --help) or 1 (a regression that was never printed)."""
    argv = stdout_commands(tmp_path, store, runs_dir)[name]
    done = report(built, *argv, stdout=full_stdout)
    hs.no_traceback(done)
    assert done.returncode == 3, (argv, done.returncode, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == f"cuparity-report: error: stdout: {FULL}", done.stderr
    assert "Exception ignored" not in done.stderr


def test_a_bad_input_with_a_full_stdout_stays_exit_2(built, full_stdout, tmp_path) -> None:
    done = report(built, "compare", str(tmp_path / "nope-a"), str(RUN_B), stdout=full_stdout)
    hs.no_traceback(done)
    assert done.returncode == 2 and "nope-a" in done.stderr, done.stderr


def full_device(small_device) -> Path:
    where = small_device("64k")
    hs.fill(where)
    return where


def files_left(where: Path) -> list[str]:
    """What a failed command left on the device: folders it made may stay, files may not."""
    return sorted(str(p.relative_to(where)) for p in where.rglob("*")
                  if p.is_file() and not p.name.startswith("filler"))


def test_outputs_on_a_full_device_are_exit_3(built, small_device, tmp_path, store, runs_dir) -> None:
    dev = full_device(small_device)
    commands = {
        "dashboard": ["dashboard", str(RUN_A), "--output", str(dev / "d.html")],
        "faults": ["faults", str(FAULTS_JSON), "--output", str(dev / "f.html")],
        "history-add": ["history", "add", str(RUN_A), "--store", str(dev / "store")],
        "history-site": ["history", "site", "--store", str(store), "--output", str(dev / "site")],
        "site": ["site", "--runs-dir", str(runs_dir), "--output", str(dev / "all")],
    }
    for name, argv in commands.items():
        done = report(built, *argv)
        hs.no_traceback(done)
        assert done.returncode == 3, (name, done.returncode, done.stderr)
        assert FULL in done.stderr and "cuparity-report: error: " + str(dev) in done.stderr, (name, done.stderr)
    assert files_left(dev) == []


def test_rebuilding_a_store_on_a_full_device_is_exit_3(built, small_device) -> None:
    dev = small_device("256k")
    added = report(built, "history", "add", str(RUN_A), "--store", str(dev / "store"))
    assert added.returncode == 0, added.stderr
    hs.fill(dev)
    done = report(built, "history", "rebuild", "--store", str(dev / "store"))
    hs.no_traceback(done)
    assert done.returncode == 3 and FULL in done.stderr, done.stderr
    assert "the old index is kept as" in done.stderr  # nothing is lost: the index set aside stays


# Every path option and argument of every subcommand, given "" (defect 10: `history add RUN
# --store ''` wrote a store into the current folder).
EMPTY = {
    "dashboard-run": ["dashboard", "", "--output", "d.html"],
    "dashboard-output": ["dashboard", str(RUN_A), "--output", ""],
    "dashboard-history": ["dashboard", str(RUN_A), "--output", "d.html", "--history", ""],
    "compare-a": ["compare", "", str(RUN_B)],
    "compare-b": ["compare", str(RUN_A), ""],
    "compare-from": ["compare", "--from", ""],
    "compare-matrix": ["compare", str(RUN_A), str(RUN_B), "--matrix", ""],
    "faults-input": ["faults", "", "--output", "f.html"],
    "faults-output": ["faults", str(FAULTS_JSON), "--output", ""],
    "history-add-run": ["history", "add", "", "--store", "store"],
    "history-add-store": ["history", "add", str(RUN_A), "--store", ""],
    "history-list-store": ["history", "list", "--store", ""],
    "history-rebuild-store": ["history", "rebuild", "--store", ""],
    "history-site-store": ["history", "site", "--store", "", "--output", "site"],
    "history-site-output": ["history", "site", "--store", "store", "--output", ""],
    "site-runs-dir": ["site", "--runs-dir", "", "--output", "all"],
    "site-output": ["site", "--runs-dir", "runs", "--output", ""],
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_an_empty_path_is_exit_2_and_writes_nothing(built, tmp_path, name) -> None:
    here = tmp_path / "here"
    here.mkdir()
    done = report(built, *EMPTY[name], cwd=here)
    hs.no_traceback(done)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "an empty path" in done.stderr, done.stderr
    assert list(here.iterdir()) == []


def test_a_linked_folder_in_the_store_is_refused_naming_it(built, tmp_path, store) -> None:
    """Defect 12: `history add` wrote through a symbolic link among the store's folders."""
    outside = tmp_path / "outside"
    outside.mkdir()
    key = next(p for p in store.rglob("*.json") if p.name != "index.json").relative_to(store)
    for depth in range(len(key.parts) - 1):  # each folder of the key in turn is a link
        fresh = tmp_path / f"store-{depth}"
        real = fresh.joinpath(*key.parts[:depth])
        real.mkdir(parents=True)
        link = real / key.parts[depth]
        link.symlink_to(outside, target_is_directory=True)
        done = report(built, "history", "add", str(RUN_A), "--store", str(fresh))
        hs.no_traceback(done)
        assert done.returncode == 2, (depth, done.stderr)
        assert f"{link}: is a symbolic link" in done.stderr, done.stderr
        assert list(outside.iterdir()) == [], depth
        assert not (fresh / "index.json").exists()
