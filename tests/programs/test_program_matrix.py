"""`cuparity run` of the [[program]] matrices beside this file, on the simulated driver.

A program is a plain command with no JUnit: its exit status and its captured map are the result
(docs/configuration.md#programs). Each matrix runs once (a module fixture), and the tests read
its summary.json:
- simpkg-programs.toml: a program using simpkg under SIMPKG_BINDING, SIMPKG_PTDS and the misspelt
  SIMPKG_PTDSS. The summary's `variables` names the functions each real variable changed, and
  SIMPKG_PTDSS, which changed nothing, is a no_op_configuration problem (exit 1);
- program-outcomes.toml: programs that fail (a fail with their status), never load the driver
  (an error, "nothing captured", never a pass), exit with their skip_exit_code (not_supported, its
  reason) and outlive their timeout_s (a timeout), beside one that passes;
- program-nothing.toml: two programs that exit their skip_exit_code in every cell: nothing was
  tested, which is never equivalent (a nothing_tested problem, exit 1).
The runner and its helpers are tests/external/test_suite_matrix.py's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from external.test_suite_matrix import outcomes, problems, run_matrix

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def simpkg_programs(tmp_path_factory):
    return run_matrix(str(HERE / "simpkg-programs.toml"), tmp_path_factory.mktemp("programs"))


@pytest.fixture(scope="module")
def program_outcomes(tmp_path_factory):
    return run_matrix(str(HERE / "program-outcomes.toml"), tmp_path_factory.mktemp("outcomes"))


@pytest.fixture(scope="module")
def program_nothing(tmp_path_factory):
    return run_matrix(str(HERE / "program-nothing.toml"), tmp_path_factory.mktemp("nothing"))


def effect(summary: dict, variable: str) -> dict:
    found = [v for v in summary["variables"] if v["variable"] == variable]
    assert len(found) == 1, summary["variables"]
    return found[0]


def test_a_variable_the_program_ignores_is_a_no_op(simpkg_programs):
    assert simpkg_programs["exit_code"] == 1
    noops = problems(simpkg_programs, "no_op_configuration")
    assert [p["message"].split(" ")[0] for p in noops] == ["SIMPKG_PTDSS"]
    assert "the package does not read it" in noops[0]["message"]
    assert [p["kind"] for p in simpkg_programs["problems"]] == ["no_op_configuration"]
    ptdss = effect(simpkg_programs, "SIMPKG_PTDSS")
    assert ptdss["pairs"] == 4 and ptdss["bindings"] == [] and ptdss["outcome_pairs"] == 0
    assert set(outcomes(simpkg_programs, "simpkg").values()) == {"pass"}


def test_the_report_names_the_bindings_each_variable_changed(simpkg_programs):
    ptds = effect(simpkg_programs, "SIMPKG_PTDS")
    changed = {b["function"]: b for b in ptds["bindings"]}
    assert set(changed) == {"cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemsetD8", "cuStreamSynchronize"}
    htod = changed["cuMemcpyHtoD"]
    assert htod["suite"] == "simpkg" and htod["pairs"] == 4
    assert htod["values"] == [None, "1"]
    assert htod["before"] == ["cuMemcpyHtoD_v2 (dlsym)"]
    assert htod["after"] == ["cuMemcpyHtoD_v2_ptds (dlsym)"]
    binding = effect(simpkg_programs, "SIMPKG_BINDING")
    other = {b["function"]: b for b in binding["bindings"] if not b["same_symbols"]}
    # The proc path asks cuMemGetInfo at 3000: the 32-bit ABI (simpkg's deliberate bug).
    assert other["cuMemGetInfo"]["before"] == ["cuMemGetInfo_v2 (dlsym)"]
    assert other["cuMemGetInfo"]["after"] == ["cuMemGetInfo (proc)"]
    assert any(b["function"] == "cuInit" and b["same_symbols"] for b in binding["bindings"])


def test_a_program_ends_as_its_one_case(program_outcomes):
    assert program_outcomes["exit_code"] == 1
    by_case = {r["case"]: r for r in program_outcomes["results"]}
    assert {case: r["outcome"] for case, r in by_case.items()} == {
        "binds": "pass", "fails": "fail", "idle": "error", "skips": "not_supported",
        "hangs": "timeout"}
    assert "exited with code 3" in by_case["fails"]["message"]
    assert "exiting 3" in by_case["fails"]["message"]  # the end of its output
    assert by_case["idle"]["message"].startswith("nothing captured:")
    assert "skips: simpkg2 is not installed" in by_case["skips"]["message"]
    assert by_case["skips"]["requirement"] == "skips: simpkg2 is not installed"
    assert "killed at the program's timeout_s, 1 s" in by_case["hangs"]["message"]
    failed = sorted(p["case"] for p in problems(program_outcomes, "failure"))
    assert failed == ["fails", "hangs", "idle"]  # not_supported is no failure
    assert program_outcomes["coverage"]["complete"] is True


def test_a_run_where_every_program_skipped_tested_nothing(program_nothing):
    assert {r["outcome"] for r in program_nothing["results"]} == {"not_supported"}
    assert len(program_nothing["results"]) == 4  # two programs x two cells: all planned, all ran
    assert program_nothing["coverage"]["complete"] is True
    assert program_nothing["exit_code"] == 1 and program_nothing["verdict"] == "failed"
    assert [p["kind"] for p in program_nothing["problems"]] == ["nothing_tested"]
    message = program_nothing["problems"][0]["message"]
    assert message.startswith("every one of the 4 results of the programs ended not_supported")
    assert "needs_simpkg2: simpkg2 is not installed" in message  # the first one's reason
    assert "nothing was tested" in message
