"""scripts/run: the matrix as its argument, a mistyped one refused by name, and the newest run
always at cuparity-results/latest. A fake `cuparity` (CUPARITY_BIN, so nothing is installed or
built) records how it was called and writes a run folder; the script runs from a copy of the
repository's scripts/run in a scratch root, so its cuparity-results/ is the test's own."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE = r"""#!/usr/bin/env bash
printf '%s\n' "$*" >> "$FAKE_LOG"
if [ "$1" = env ] || [ "$2" = env ]; then exit "${FAKE_ENV_RC:-0}"; fi
out=""; prev=""
for a in "$@"; do
  [ "$prev" = --out ] && out="$a"
  case "$a" in --out=*) out="${a#--out=}" ;; esac
  prev="$a"
done
if [ -n "$out" ] && [ "${FAKE_WRITE:-1}" = 1 ]; then
  mkdir -p "$out"; echo '{}' > "$out/summary.json"; : > "$out/results.jsonl"
fi
exit "${FAKE_RUN_RC:-0}"
"""


@pytest.fixture
def repo(tmp_path):
    """A scratch root holding scripts/run, two matrices and a fake cuparity."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "run", tmp_path / "scripts" / "run")
    (tmp_path / "matrices").mkdir()
    for name in ("default.toml", "smoke.toml"):
        (tmp_path / "matrices" / name).write_text("# a matrix\n")
    fake = tmp_path / "fake-cuparity"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    return tmp_path


def run(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items()
            if k not in ("CUPARITY_MATRIX", "CUPARITY_OUT", "CUPARITY_JOBS", "CUPARITY_BUILD_DIR")}
    full.update(CUPARITY_BIN=str(repo / "fake-cuparity"), FAKE_LOG=str(repo / "calls.log"),
                CUPARITY_JOBS="2")
    full.update(env)
    return subprocess.run(["bash", str(repo / "scripts" / "run"), *args], cwd=repo, env=full,
                          capture_output=True, text=True, timeout=60)


def run_calls(repo: Path) -> list[list[str]]:
    log = repo / "calls.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split() for line in lines if " run " in f" {line} "]


def test_the_matrix_is_the_first_argument_and_the_rest_go_to_cuparity_run(repo):
    r = run(repo, "matrices/smoke.toml", "--resume", "--shard", "0/2")
    assert r.returncode == 0, r.stderr
    [call] = run_calls(repo)
    assert call[:4] == ["run", "matrices/smoke.toml", "-j", "2"]
    assert call[-3:] == ["--resume", "--shard", "0/2"]
    out = Path(call[call.index("--out") + 1])  # as the user would type it, from where they ran it
    assert out.parent == Path("cuparity-results") and out.name.startswith("smoke-")
    assert "scripts/run: cuparity-results/latest -> smoke-" in r.stderr


def test_cuparity_matrix_still_chooses_when_no_argument_does(repo):
    r = run(repo, "-j", "1", CUPARITY_MATRIX="matrices/smoke.toml")
    assert r.returncode == 0, r.stderr
    [call] = run_calls(repo)
    assert call[1] == "matrices/smoke.toml" and call[-2:] == ["-j", "1"]
    r = run(repo)
    assert run_calls(repo)[-1][1] == str(repo / "matrices" / "default.toml")


@pytest.mark.parametrize("matrix, why", [("matrices/smok.toml", "no such file"),
                                         ("matrices", "a directory")])
def test_a_bad_matrix_is_named_and_nothing_runs(repo, matrix, why):
    r = run(repo, matrix, "-j", "2")
    assert r.returncode == 2
    assert f"matrix '{matrix}': {why}" in r.stderr
    assert not (repo / "calls.log").exists()  # refused before cuparity (or a build) is started
    r = run(repo, CUPARITY_MATRIX=matrix)
    assert r.returncode == 2 and f"'{matrix}'" in r.stderr


def test_latest_is_the_newest_run_and_the_next_step_compares_with_the_one_before(repo):
    results = repo / "cuparity-results"
    assert run(repo, "matrices/smoke.toml", "--out", str(results / "first")).returncode == 0
    latest = results / "latest"
    assert latest.is_symlink() and os.readlink(latest) == "first"  # relative: the folder can move
    r = run(repo, "matrices/smoke.toml", "--out", str(results / "second"))
    assert r.returncode == 0
    assert os.readlink(latest) == "second" and (latest / "summary.json").exists()
    assert f"compare cuparity-results/first {results / 'second'}" in r.stderr
    assert not [p for p in results.iterdir() if p.name.startswith(".latest")]  # no temporary left


def test_latest_follows_a_failed_run_too_but_not_one_that_wrote_nothing(repo):
    results = repo / "cuparity-results"
    run(repo, "matrices/smoke.toml", "--out", str(results / "good"))
    r = run(repo, "matrices/smoke.toml", f"--out={results / 'failed'}", FAKE_RUN_RC="1")
    assert r.returncode == 1  # cuparity run's own exit status
    assert os.readlink(results / "latest") == "failed"
    r = run(repo, "matrices/smoke.toml", "--out", str(results / "nothing"), FAKE_RUN_RC="2",
            FAKE_WRITE="0")
    assert r.returncode == 2 and os.readlink(results / "latest") == "failed"


def test_a_run_outside_cuparity_results_is_linked_by_its_absolute_path(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "run"
    assert run(repo, "matrices/smoke.toml", CUPARITY_OUT=str(elsewhere)).returncode == 0
    assert os.readlink(repo / "cuparity-results" / "latest") == str(elsewhere.resolve())


def test_a_latest_that_is_not_a_link_is_left_alone(repo):
    real = repo / "cuparity-results" / "latest"
    real.mkdir(parents=True)
    (real / "mine.txt").write_text("keep")
    r = run(repo, "matrices/smoke.toml")
    assert r.returncode == 0
    assert "is not a symbolic link; left as it is" in r.stderr
    assert not real.is_symlink() and (real / "mine.txt").read_text() == "keep"


def test_off_a_gpu_it_runs_on_the_simulated_driver(repo):
    r = run(repo, "matrices/smoke.toml", FAKE_ENV_RC="3")
    assert r.returncode == 0
    [call] = run_calls(repo)
    assert call[:3] == ["--driver", "sim", "run"]
    assert "SIMULATED" in r.stderr


def test_help_names_the_matrix_argument_and_latest():
    r = subprocess.run(["bash", str(ROOT / "scripts" / "run"), "--help"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0
    assert "scripts/run [MATRIX.toml]" in r.stdout and "cuparity-results/latest" in r.stdout
