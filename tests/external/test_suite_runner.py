"""The suite runner's rules for real packages' suites (issue 49), on simpkg and the simulated driver.

- suite-root.toml: simpkg's packaged tests (simpkg.tests) need a fixture that only the conftest.py
  of their "source tree" provides (tests/external/simpkg_root); the suite's `root` key
  ({env:CUPARITY_TEST_SIMPKG_SOURCE}) or `--suite-root simpkg=DIR` makes its processes start
  there, as numba-cuda's testing/ folder is used by its own CI;
- suite-order.toml: the tests that did not pass re-run together (batches), then a sample alone,
  which finds an order-dependent failure;
- suite-environment.toml: every test erroring alike is one environment failure, from one process;
- suite-budget.toml: max_fails stops the suite;
- suite-collect.toml: a module that cannot import is that module's error case, the others run;
  every module failing, and zero tests collected, are cell errors naming the counts;
- suite-fewer.toml: a cell that collects fewer tests than another is a `collection` problem
  naming both counts, though every test that ran passed.
Each matrix run here takes a few seconds; the helpers are test_suite_matrix.py's. The suite_end
records are read from the run's results.jsonl, where the runner writes them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .test_suite_matrix import HERE, bin_dir, outcomes, problems, run_matrix

SOURCE_VAR = "CUPARITY_TEST_SIMPKG_SOURCE"
ROOT = HERE / "simpkg_root"    # the packaged tests' conftest.py and pytest.ini
WHEEL = HERE / "simpkg_wheel"  # the same pytest.ini, without the conftest.py
PLAIN = ["simpkg.test_attributes.test_binding_is_named",
         "simpkg.test_attributes.test_module_has_a_file"]  # need no fixture: pass anywhere
CONFIGURED = ["simpkg.test_configured.test_configured_device",
              *(f"simpkg.test_configured.test_fill_size[{k}]" for k in range(1, 41))]
PACKAGED = PLAIN + CONFIGURED


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
    # The two that need no fixture pass; then 25 (environment_after's default) errors alike, 25 of
    # 27 tests (over 90 %): the suite's environment is broken, and it stops there.
    assert {c: records[c]["outcome"] for c in PLAIN} == {c: "pass" for c in PLAIN}
    configured = {c: r for c, r in records.items() if c not in PLAIN}
    assert len(configured) == 25 and set(configured) <= set(CONFIGURED)
    for r in configured.values():
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


def run_records(matrix: str, out: Path) -> tuple[dict, list[dict]]:
    """The summary of a run of `matrix`, and its results.jsonl records (where the case records
    keep their tries and collection_error, which summary.json does not)."""
    summary = run_matrix(matrix, out)
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return summary, [json.loads(line) for line in lines]


def recorded_cases(records: list[dict], prefix: str) -> dict:
    return {r["case"]: r for r in records if r.get("type") == "case" and
            r["case"].startswith(prefix)}


def suite_end(records: list[dict], suite: str) -> dict:
    [end] = [r for r in records if r.get("type") == "suite_end" and r["suite"] == suite]
    return end


def tries(record: dict) -> list[tuple[str, str]]:
    return [(t["process"], t["outcome"]) for t in record["tries"]]


@pytest.fixture(scope="module")
def order(tmp_path_factory):
    return run_records("suite-order.toml", tmp_path_factory.mktemp("order") / "out")


@pytest.fixture(scope="module")
def collect(tmp_path_factory):
    return run_records("suite-collect.toml", tmp_path_factory.mktemp("collect") / "out")


def test_failed_tests_rerun_together_then_a_sample_alone(order):
    summary, records = order
    cases = recorded_cases(records, "order.")
    poisons, poisoned = cases["order.test_order.test_poisons"], cases["order.test_order.test_poisoned"]
    # Both fail again together in the batch (b1); alone (a1, a2), test_poisoned passes.
    assert tries(poisons) == [("p1", "fail"), ("b1", "fail"), ("a1", "fail")]
    assert poisons["outcome"] == "fail" and "(the same in 3 tries)" in poisons["message"]
    assert tries(poisoned) == [("p1", "fail"), ("b1", "fail"), ("a2", "pass")]
    assert poisoned["outcome"] == "flaky"
    assert "it changed only when run alone (a2): order-dependent" in poisoned["message"]
    end = suite_end(records, "order")
    assert [p["process"] for p in end["processes"]] == ["p1", "b1", "a1", "a2"]
    assert end["process_count"] == 4 and end["collected"] == 3
    # The batch held both failed tests, each alone process one.
    assert [p["only"] for p in end["processes"]] == [
        None, ["test_order.py::test_poisons", "test_order.py::test_poisoned"],
        ["test_order.py::test_poisons"], ["test_order.py::test_poisoned"]]


def test_rerun_alone_zero_runs_none_alone(order):
    summary, records = order
    poisoned = recorded_cases(records, "together.")["together.test_order.test_poisoned"]
    assert tries(poisoned) == [("p1", "fail"), ("b1", "fail")]
    assert poisoned["outcome"] == "fail"
    assert suite_end(records, "together")["process_count"] == 2


def test_identical_errors_are_one_environment_failure_in_seconds(tmp_path):
    summary, records = run_records("suite-environment.toml", tmp_path / "out")
    message = 'failed on setup with "fixture \'simpkg_config\' not found"'
    early, late = suite_end(records, "early"), suite_end(records, "late")
    # Two tests pass first (they need no fixture), then 41 error alike: a share of at least 90 %,
    # not every test, makes the environment broken (numba-cuda's case: 9 passes, 249 errors).
    # The plugin stopped the session after environment_after (25) identical errors.
    assert early["environment"] == {"message": message, "count": 25, "stopped": True,
                                    "not_run": 16}
    # environment_after = 0: every test ran, and the runner found 41 of 43 alike.
    assert late["environment"] == {"message": message, "count": 41, "stopped": False,
                                   "not_run": 0}
    for end, errors in ((early, 25), (late, 41)):
        assert end["process_count"] == 1 and [p["process"] for p in end["processes"]] == ["p1"]
        assert end["collected"] == 43 and end["tests"] == errors + 2 and end["budget"] is None
        assert end["wall_ms"] < 30000, end["wall_ms"]
        cases = recorded_cases(records, end["suite"] + ".")
        assert len(cases) == errors + 2  # nothing recorded is lost
        assert sorted((r["outcome"], r["message"]) for r in cases.values()) == \
            [("error", message)] * errors + [("pass", "")] * 2


def test_the_failure_budget_stops_the_suite(tmp_path):
    summary, records = run_records("suite-budget.toml", tmp_path / "out")
    end = suite_end(records, "failing")
    assert end["budget"] == {"max_fails": 5, "failures": 5, "not_run": 25}
    assert end["environment"] is None and end["collected"] == 30
    assert end["process_count"] == 1  # no re-run once the budget is spent
    cases = recorded_cases(records, "failing.")
    assert sorted(cases) == sorted(f"failing.test_many_failures.test_fails[{k}]" for k in range(5))
    assert {tuple(tries(r)) for r in cases.values()} == {(("p1", "fail"),)}


def test_a_module_that_cannot_import_is_its_own_error(collect):
    summary, records = collect
    cases = recorded_cases(records, "modules.")
    assert {c: r["outcome"] for c, r in cases.items()} == {
        "modules.test_fine.test_device": "pass", "modules.test_fine.test_version": "pass",
        "modules.test_needs_dependency": "error", "modules.test_own_module": "error"}
    assert cases["modules.test_needs_dependency"]["message"] == (
        "missing test dependency 'cuparity_absent_test_dependency' (imported by "
        "test_needs_dependency)")
    assert cases["modules.test_own_module"]["message"] == \
        "ModuleNotFoundError: No module named 'simpkg.not_a_module'"
    for case in ("modules.test_needs_dependency", "modules.test_own_module"):
        assert cases[case]["collection_error"] is True
        assert tries(cases[case]) == [("p1", "error")]  # never re-run
    assert all("collection_error" not in cases[c] for c in cases if ".test_fine." in c)
    end = suite_end(records, "modules")
    assert end["collected"] == 2 and end["process_count"] == 1


def test_every_module_failing_and_zero_tests_are_cell_errors(collect):
    summary, records = collect
    errors = {p["message"].split(":")[0]: p["message"] for p in problems(summary, "cell_error")}
    assert sorted(errors) == ["broken", "nothing"]
    assert "its collection failed in 2 modules (first: missing test dependency" in errors["broken"]
    assert "collected 0 tests" in errors["nothing"], errors["nothing"]
    assert recorded_cases(records, "broken.") == recorded_cases(records, "nothing.") == {}
    assert [r["suite"] for r in records if r.get("type") == "suite_end"] == ["modules"]


def test_a_cell_that_collects_fewer_tests_fails_naming_the_counts(tmp_path):
    """suite-fewer.toml: every test that ran passed, in both cells; the run still fails."""
    summary = run_matrix("suite-fewer.toml", tmp_path / "out")
    assert summary["verdict"] == "failed" and summary["exit_code"] == 1
    assert {r["outcome"] for r in summary["results"]} == {"pass"}
    [problem] = problems(summary, "collection")
    assert problem["cell"] == "SIMPKG_FEWER=1", problem
    assert "collected 2 tests" in problem["message"] and "4" in problem["message"], problem
    assert "SIMPKG_FEWER=0" in problem["message"], problem
    counts = {s["cell"]: s["collected"] for s in summary["suites"]}
    assert counts == {"SIMPKG_FEWER=0": 4, "SIMPKG_FEWER=1": 2}
    assert [p["kind"] for p in summary["problems"]] == ["collection"]
