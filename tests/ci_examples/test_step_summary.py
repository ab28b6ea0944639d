"""A run in a CI job reads like one (issue 50): the step summary and junit.xml's properties.

`cuparity run` appends a Markdown verdict to $GITHUB_STEP_SUMMARY (or writes --summary-md FILE),
and `cuparity markdown RUN` renders the same page again from summary.json. Runs here are the CI
examples' tiny matrix on the simulated driver, two cases per cell; a failing one has the fault
shim's corrupted cuMemcpyDtoH_v2 (CUPARITY_SIM_FAULTS, inherited by every cell). junit.xml is read
by junitparser, the reader of the publish-unit-test-result GitHub Action.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from junitparser import JUnitXml

from ci_examples.test_ci_examples import TINY, job_env

CASES = ["--case", "alloc.copy.dtod", "--case", "binding.config.effective"]
FAULT = {"CUPARITY_SIM_FAULTS": "cuMemcpyDtoH_v2:corrupt"}


def cuparity(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["cuparity", *args], cwd=cwd, env=job_env(**env), capture_output=True,
                          text=True, timeout=120)


def test_failing_run_appends_its_failing_cases_to_the_step_summary(tmp_path: Path) -> None:
    page = tmp_path / "step_summary.md"
    page.write_text("an earlier step's text")  # GitHub's file holds the step's other writes
    run = cuparity(tmp_path, "run", str(TINY), "--out", "out", *CASES,
                   GITHUB_STEP_SUMMARY=str(page), **FAULT)
    assert run.returncode == 1, run.stderr
    text = page.read_text()
    assert text.startswith("an earlier step's text\n\n## cuparity: ci-tiny — FAILED (SIMULATED "
                           "DRIVER)\n"), text
    assert "> **SIMULATED DRIVER**" in text
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    failing = [p for p in summary["problems"] if p["case"]]
    assert len(failing) == 2  # alloc.copy.dtod in both cells
    for p in failing:
        assert f"| {p['cell']} | alloc.copy.dtod | failure | " in text
    assert "device-to-device copies keep the data \\[alloc\\_cases.cpp:" in text
    # One renderer: `cuparity markdown` gives the page the run appended, from summary.json.
    again = cuparity(tmp_path, "markdown", "out")
    assert again.returncode == 0, again.stderr
    assert text == "an earlier step's text\n\n" + again.stdout


def test_junit_properties_carry_each_cells_environment(tmp_path: Path) -> None:
    run = cuparity(tmp_path, "run", str(TINY), "--out", "out", *CASES, "--no-summary-md")
    assert run.returncode == 0, run.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    xml = JUnitXml.fromfile(str(tmp_path / "out" / "junit.xml"))
    suites = {s.name: s for s in xml}
    assert len(summary["cells"]) == 2
    for cell in summary["cells"]:
        props = {p.name: p.value for p in suites[cell["id"]].properties()}
        for var, value in cell["env"].items():
            assert props[f"env.{var}"] == ("<unset>" if value is None else value)
        assert props["cuparity.binding"] == cell["config"]["binding"]
        assert props["cuparity.stream0"] == cell["config"]["stream0"]
        assert props["cuparity.driver"] == cell["config"]["driver_path"]
        assert props["cuparity.driver_version"] == summary["provenance"]["driver_version_text"]
        assert props["cuparity.simulated"] == "true"
        assert "cuparity.packages" not in props  # the tiny matrix has no packages axis


def test_summary_md_flag_wins_and_no_summary_md_turns_the_default_off(tmp_path: Path) -> None:
    github = tmp_path / "github.md"
    github.write_text("kept\n")
    run = cuparity(tmp_path, "run", str(TINY), "--out", "a", *CASES, "--summary-md", "own.md",
                   GITHUB_STEP_SUMMARY=str(github))
    assert run.returncode == 0, run.stderr
    assert github.read_text() == "kept\n"
    assert (tmp_path / "own.md").read_text().startswith("## cuparity: ci-tiny — EQUIVALENT")
    run = cuparity(tmp_path, "run", str(TINY), "--out", "b", *CASES, "--no-summary-md",
                   GITHUB_STEP_SUMMARY=str(github))
    assert run.returncode == 0, run.stderr
    assert github.read_text() == "kept\n"
    # Without --out, the page is still the run's: the runner's default folder.
    run = cuparity(tmp_path, "run", str(TINY), *CASES, GITHUB_STEP_SUMMARY=str(github))
    assert run.returncode == 0, run.stderr
    assert "— EQUIVALENT (SIMULATED DRIVER)" in github.read_text()
    assert (tmp_path / "cuparity-results" / "ci-tiny" / "summary.json").exists()


def test_an_unwritable_step_summary_is_refused_before_the_run(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "page.md"
    run = cuparity(tmp_path, "run", str(TINY), "--out", "out", *CASES, "--summary-md",
                   str(missing))
    assert run.returncode == 2
    assert f"--summary-md {missing}: its folder" in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()  # nothing ran
    # Never one of the run's own files (in an --out folder that exists already).
    (tmp_path / "out").mkdir()
    run = cuparity(tmp_path, "run", str(TINY), "--out", "out", *CASES, "--summary-md",
                   "out/../out/summary.json")
    assert run.returncode == 2
    assert "is the run's own summary.json" in run.stderr, run.stderr
    # The same of $GITHUB_STEP_SUMMARY, named as such.
    run = cuparity(tmp_path, "run", str(TINY), "--out", "out", *CASES,
                   GITHUB_STEP_SUMMARY=str(missing))
    assert run.returncode == 2
    assert f"GITHUB_STEP_SUMMARY {missing}: its folder" in run.stderr, run.stderr


def test_a_run_without_a_verdict_says_so_and_a_full_step_summary_gets_the_verdict_only(
        tmp_path: Path) -> None:
    github = tmp_path / "github.md"
    bad = tmp_path / "bad.toml"
    bad.write_text("[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = 0\n")
    run = cuparity(tmp_path, "run", str(bad), "--out", "out", GITHUB_STEP_SUMMARY=str(github))
    assert run.returncode == 2
    assert "NO VERDICT" in github.read_text() and "exit 2 (bad input)" in github.read_text()
    # A step summary that holds most of GitHub's cap already: the page is what still fits.
    github.write_text("x" * (895 << 10))
    run = cuparity(tmp_path, "run", str(TINY), "--out", "full", *CASES,
                   GITHUB_STEP_SUMMARY=str(github), **FAULT)
    assert run.returncode == 1, run.stderr
    text = github.read_text()
    assert len(text.encode()) <= 900 << 10
    assert text[895 << 10:].startswith("\n\n## cuparity: ci-tiny — FAILED (SIMULATED DRIVER)\n")
    assert "**FAILED** (exit 1)" in text
