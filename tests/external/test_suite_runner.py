"""The suite runner's rules for real packages' suites (issue 49), on simpkg and the simulated driver.

- suite-root.toml: simpkg's packaged tests (simpkg.tests) need a fixture that only the conftest.py
  of their "source tree" provides (tests/external/simpkg_root); the suite's `root` key
  ({env:CUPARITY_TEST_SIMPKG_SOURCE}) or `--suite-root simpkg=DIR` makes its processes start
  there, as numba-cuda's testing/ folder is used by its own CI.
Each matrix run here takes a few seconds; the helpers are test_suite_matrix.py's.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .test_suite_matrix import HERE, bin_dir, outcomes, problems, run_matrix

SOURCE_VAR = "CUPARITY_TEST_SIMPKG_SOURCE"
ROOT = HERE / "simpkg_root"    # the packaged tests' conftest.py and pytest.ini
WHEEL = HERE / "simpkg_wheel"  # the same pytest.ini, without the conftest.py
PACKAGED = ["simpkg.test_configured.test_configured_device",
            *(f"simpkg.test_configured.test_fill_size[{k}]" for k in range(1, 41))]


def run_cuparity(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    """`cuparity --driver sim ARGS` with this shell's variables but SOURCE_VAR, plus env_extra."""
    cuparity = bin_dir() / "cuparity"
    if not cuparity.is_file():
        pytest.skip(f"no cuparity in {bin_dir()}: build with scripts/build")
    env = {k: v for k, v in os.environ.items() if k != SOURCE_VAR}
    env.update(env_extra or {})
    return subprocess.run([str(cuparity), "--driver", "sim", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def case_records(summary: dict, prefix: str = "simpkg.") -> dict:
    return {r["case"]: r for r in summary["results"] if r["case"].startswith(prefix)}


def test_suite_runs_from_its_root(tmp_path):
    summary = run_matrix("suite-root.toml", tmp_path / "out", env_extra={SOURCE_VAR: str(ROOT)})
    records = case_records(summary)
    assert sorted(records) == sorted(PACKAGED)
    assert {r["outcome"] for r in records.values()} == {"pass"}
    assert problems(summary, "cell_error") == []


def test_without_the_roots_conftest_every_test_errors(tmp_path):
    """The other side of the test above: the root really is where the fixture came from."""
    summary = run_matrix("suite-root.toml", tmp_path / "out", env_extra={SOURCE_VAR: str(WHEEL)})
    records = case_records(summary)
    assert sorted(records) == sorted(PACKAGED)
    for r in records.values():
        assert r["outcome"] == "error", r
        assert r["message"] == 'failed on setup with "fixture \'simpkg_config\' not found"', r


def test_suite_root_option_overrides_the_key(tmp_path):
    summary = run_matrix("suite-root.toml", tmp_path / "out", "--suite-root", f"simpkg={ROOT}",
                         env_extra={SOURCE_VAR: str(WHEEL)})
    assert {r["outcome"] for r in case_records(summary).values()} == {"pass"}


def test_an_unset_or_empty_root_variable_is_a_matrix_error(tmp_path):
    toml = HERE / "suite-root.toml"
    line = next(n for n, text in enumerate(toml.read_text().splitlines(), 1)
                if text.startswith("root = "))
    for value, said in ((None, "unset"), ("", "empty")):
        extra = {} if value is None else {SOURCE_VAR: value}
        proc = run_cuparity("run", str(toml), "--out", str(tmp_path / "out"), env_extra=extra)
        assert proc.returncode == 2, proc.stderr
        assert f"suite-root.toml:{line}:8: suite.root: {{env:{SOURCE_VAR}}}: the variable " \
               f"{SOURCE_VAR} is {said}" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_root_that_does_not_exist_is_a_matrix_error(tmp_path):
    missing = tmp_path / "no-checkout"
    proc = run_cuparity("run", str(HERE / "suite-root.toml"), "--out", str(tmp_path / "out"),
                        env_extra={SOURCE_VAR: str(missing)})
    assert proc.returncode == 2, proc.stderr
    assert f"suite.root: the suite's root '{missing}' does not exist" in proc.stderr, proc.stderr


@pytest.mark.parametrize("value, said", [
    ("nope={root}", "no [[suite]] named 'nope'"),
    ("simpkg={missing}", "the suite's root '{missing}' does not exist"),
    ("simpkg", "expected NAME=DIR"),
])
def test_a_bad_suite_root_option_is_bad_input(tmp_path, value, said):
    fill = {"root": ROOT, "missing": tmp_path / "nowhere"}
    proc = run_cuparity("run", str(HERE / "suite-root.toml"), "--out", str(tmp_path / "out"),
                        "--suite-root", value.format(**fill), env_extra={SOURCE_VAR: str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert f"cuparity run: --suite-root '{value.format(**fill)}': " in proc.stderr, proc.stderr
    assert said.format(**fill) in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()
