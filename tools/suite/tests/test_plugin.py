"""tools/suite/cuparity_pytest.py: the progress lines and node id filters an external suite gets.

Each test runs a small suite through pytest's own `pytester` (in a subprocess where the test
kills its process, or where the plugin must be loaded exactly as the runner loads it: the folder
on PYTHONPATH and `-p cuparity_pytest` in PYTEST_ADDOPTS), and reads what the plugin wrote.
"""

from __future__ import annotations

import json
import time
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SUITE_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SUITE_DIR))

import cuparity_pytest  # noqa: E402  (needs SUITE_DIR on sys.path)

pytest_plugins = ["pytester"]

VARIABLES = ("CUPARITY_SUITE_PROGRESS", "CUPARITY_SUITE_DESELECT", "CUPARITY_SUITE_ONLY")
STOP_VARIABLES = ("CUPARITY_SUITE_SAME_FAILURES", "CUPARITY_SUITE_MAX_FAILS",
                  "CUPARITY_SUITE_CONTINUE_COLLECTION")

# Every kind of test the runner must name: pass, fail, skip, xfail, parametrised ids with brackets
# (and `::` and a space inside the parameters), a unittest.TestCase, a class of plain tests.
MIXED_SUITE = {
    "test_mixed.py": """
import unittest
import pytest

def test_pass():
    pass

def test_fail():
    assert 1 == 2

def test_skip():
    pytest.skip("not here")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.parametrize("value", ["a[1]", "x::y", "two words", 3])
def test_param(value):
    assert value != 3

@pytest.fixture
def broken():
    raise RuntimeError("setup broke")

def test_setup_error(broken):
    pass

class TestPlain:
    def test_method(self):
        pass

class Unit(unittest.TestCase):
    def test_ok(self):
        self.assertTrue(True)

    @unittest.skip("unittest skip")
    def test_skipped(self):
        pass
""",
    "sub/test_nested.py": """
def test_deep():
    pass
""",
}

EXPECTED_OUTCOMES = {
    "test_mixed.py::test_pass": "passed",
    "test_mixed.py::test_fail": "failed",
    "test_mixed.py::test_skip": "skipped",
    "test_mixed.py::test_xfail": "skipped",
    "test_mixed.py::test_param[a[1]]": "passed",
    "test_mixed.py::test_param[x::y]": "passed",
    "test_mixed.py::test_param[two words]": "passed",
    "test_mixed.py::test_param[3]": "failed",
    "test_mixed.py::test_setup_error": "failed",
    "test_mixed.py::TestPlain::test_method": "passed",
    "test_mixed.py::Unit::test_ok": "passed",
    "test_mixed.py::Unit::test_skipped": "skipped",
    "sub/test_nested.py::test_deep": "passed",
}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No variable of the plugin leaks in from the outer run."""
    for name in VARIABLES + STOP_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def make_suite(pytester, files=MIXED_SUITE) -> None:
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run_as_the_runner_does(pytester, monkeypatch, *args):
    """pytest in a fresh process, the plugin loaded through PYTHONPATH and PYTEST_ADDOPTS."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(SUITE_DIR), os.environ.get("PYTHONPATH", "")) if p))
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p cuparity_pytest")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def read_progress(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), "every progress line must be complete"
    return [json.loads(line) for line in text.splitlines()]


def junit_cases(path: Path) -> list[tuple[str, str]]:
    return [(case.get("classname"), case.get("name"))
            for case in ET.parse(path).getroot().iter("testcase")]


def test_progress_names_every_test_as_junitxml_does(pytester, monkeypatch):
    make_suite(pytester)
    progress = pytester.path / "progress.jsonl"
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    result = run_as_the_runner_does(pytester, monkeypatch, f"--junitxml={junit}")
    result.assert_outcomes(passed=7, failed=2, skipped=2, xfailed=1, errors=1)

    events = read_progress(progress)
    assert events[0] == {"event": "collected", "count": len(EXPECTED_OUTCOMES)}
    starts = [e for e in events if e["event"] == "start"]
    ends = {e["nodeid"]: e["outcome"] for e in events if e["event"] == "end"}
    assert ends == EXPECTED_OUTCOMES
    # Each start comes right before its own end: one test at a time, and nothing else in between.
    for start, end in zip(events[1::2], events[2::2]):
        assert (start["event"], end["event"], start["nodeid"]) == ("start", "end", end["nodeid"])
    # The same (classname, name) pairs as the JUnit file of the same run, in the same order
    # (junitxml writes the setup error of test_setup_error as that test's own testcase).
    assert [(s["classname"], s["name"]) for s in starts] == junit_cases(junit)
    by_id = {s["nodeid"]: (s["classname"], s["name"]) for s in starts}
    assert by_id["test_mixed.py::test_param[x::y]"] == ("test_mixed", "test_param[x::y]")
    assert by_id["test_mixed.py::Unit::test_ok"] == ("test_mixed.Unit", "test_ok")
    assert by_id["sub/test_nested.py::test_deep"] == ("sub.test_nested", "test_deep")


def test_outcomes_agree_with_junitxml_in_every_phase(pytester, monkeypatch):
    make_suite(pytester, {"test_phases.py": """
import pytest

@pytest.fixture
def skips_in_teardown():
    yield
    pytest.skip("teardown skip")

@pytest.fixture
def fails_in_teardown():
    yield
    raise RuntimeError("teardown broke")

def test_teardown_skip(skips_in_teardown):
    pass

def test_teardown_error(fails_in_teardown):
    pass

def test_fail_and_teardown_skip(skips_in_teardown):
    assert False
"""})
    progress = pytester.path / "progress.jsonl"
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    run_as_the_runner_does(pytester, monkeypatch, f"--junitxml={junit}")
    ends = {e["nodeid"].split("::")[1]: e["outcome"] for e in read_progress(progress)
            if e["event"] == "end"}
    assert ends == {"test_teardown_skip": "skipped", "test_teardown_error": "failed",
                    "test_fail_and_teardown_skip": "failed"}
    # junitxml's verdict for the same tests: the first child element of each testcase.
    kinds = {case.get("name"): [child.tag for child in case if child.tag in
                                ("failure", "error", "skipped")]
             for case in ET.parse(junit).getroot().iter("testcase")}
    assert kinds["test_teardown_skip"] == ["skipped"]
    assert kinds["test_teardown_error"] == ["error"]
    assert kinds["test_fail_and_teardown_skip"][0] == "failure"


def test_junit_prefix_is_honoured(pytester, monkeypatch):
    make_suite(pytester, {"test_one.py": "def test_a():\n    pass\n"})
    progress = pytester.path / "progress.jsonl"
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    run_as_the_runner_does(pytester, monkeypatch, f"--junitxml={junit}", "--junit-prefix=pre")
    start = [e for e in read_progress(progress) if e["event"] == "start"][0]
    assert (start["classname"], start["name"]) == ("pre.test_one", "test_a")
    assert junit_cases(junit) == [("pre.test_one", "test_a")]


def test_a_killed_process_leaves_a_start_without_an_end(pytester, monkeypatch):
    make_suite(pytester, {"test_kill.py": """
import os, signal

def test_before():
    pass

def test_killed():
    os.kill(os.getpid(), signal.SIGKILL)

def test_after():
    pass
"""})
    progress = pytester.path / "progress.jsonl"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    before = time.time()
    result = run_as_the_runner_does(pytester, monkeypatch)
    assert result.ret == -9
    events = read_progress(progress)
    assert events[2].pop("duration") >= 0  # seconds vary; the rest is exact
    started = [events[1].pop("time"), events[3].pop("time")]
    assert before <= started[0] <= started[1] <= time.time()
    assert events == [
        {"event": "collected", "count": 3},
        {"event": "start", "nodeid": "test_kill.py::test_before", "classname": "test_kill",
         "name": "test_before"},
        {"event": "end", "nodeid": "test_kill.py::test_before", "outcome": "passed", "message": ""},
        {"event": "start", "nodeid": "test_kill.py::test_killed", "classname": "test_kill",
         "name": "test_killed"},
    ]


def test_resumed_process_appends_to_the_same_file(pytester, monkeypatch):
    make_suite(pytester, {"test_one.py": "def test_a():\n    pass\n"})
    progress = pytester.path / "progress.jsonl"
    progress.write_text('{"event": "collected", "count": 5}\n', encoding="utf-8")
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    pytester.runpytest("-p", "cuparity_pytest").assert_outcomes(passed=1)
    assert [e["event"] for e in read_progress(progress)] == ["collected", "collected", "start", "end"]


def test_deselect_drops_the_listed_tests(pytester, monkeypatch):
    make_suite(pytester)
    progress = pytester.path / "progress.jsonl"
    deselect = pytester.path / "deselect.txt"
    deselect.write_text("test_mixed.py::test_fail\n\ntest_mixed.py::test_param[a[1]]\n"
                        "test_mixed.py::Unit::test_ok\n", encoding="utf-8")
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    monkeypatch.setenv("CUPARITY_SUITE_DESELECT", str(deselect))
    result = pytester.runpytest("-p", "cuparity_pytest")
    # pytest is told, so its summary counts them as deselected.
    result.assert_outcomes(passed=5, failed=1, skipped=2, xfailed=1, errors=1, deselected=3)
    events = read_progress(progress)
    assert events[0] == {"event": "collected", "count": len(EXPECTED_OUTCOMES) - 3}
    ran = {e["nodeid"] for e in events if e["event"] == "start"}
    assert ran == set(EXPECTED_OUTCOMES) - {"test_mixed.py::test_fail",
                                            "test_mixed.py::test_param[a[1]]",
                                            "test_mixed.py::Unit::test_ok"}


def test_only_keeps_the_listed_tests(pytester, monkeypatch):
    make_suite(pytester)
    progress = pytester.path / "progress.jsonl"
    only = pytester.path / "only.txt"
    only.write_text("test_mixed.py::test_param[x::y]\nsub/test_nested.py::test_deep\n",
                    encoding="utf-8")
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    monkeypatch.setenv("CUPARITY_SUITE_ONLY", str(only))
    result = pytester.runpytest("-p", "cuparity_pytest")
    result.assert_outcomes(passed=2, deselected=len(EXPECTED_OUTCOMES) - 2)
    events = read_progress(progress)
    assert events[0] == {"event": "collected", "count": 2}
    assert sorted(e["nodeid"] for e in events if e["event"] == "end") == [
        "sub/test_nested.py::test_deep", "test_mixed.py::test_param[x::y]"]


def test_only_and_deselect_together(pytester, monkeypatch):
    make_suite(pytester)
    only = pytester.path / "only.txt"
    only.write_text("test_mixed.py::test_pass\ntest_mixed.py::test_fail\n", encoding="utf-8")
    deselect = pytester.path / "deselect.txt"
    deselect.write_text("test_mixed.py::test_fail\n", encoding="utf-8")
    monkeypatch.setenv("CUPARITY_SUITE_ONLY", str(only))
    monkeypatch.setenv("CUPARITY_SUITE_DESELECT", str(deselect))
    result = pytester.runpytest("-p", "cuparity_pytest")
    result.assert_outcomes(passed=1, deselected=len(EXPECTED_OUTCOMES) - 1)


@pytest.mark.parametrize("variable", VARIABLES)
def test_a_missing_file_is_a_usage_error_naming_the_variable(pytester, monkeypatch, variable):
    make_suite(pytester, {"test_one.py": "def test_a():\n    pass\n"})
    missing = pytester.path / "no-such-folder" / "file.txt"
    monkeypatch.setenv(variable, str(missing))
    result = run_as_the_runner_does(pytester, monkeypatch)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{variable}={missing}*"])
    result.stdout.no_fnmatch_line("*1 passed*")


def test_nothing_happens_without_variables(pytester, monkeypatch):
    make_suite(pytester)
    monkeypatch.chdir(pytester.path)
    result = run_as_the_runner_does(pytester, monkeypatch)
    result.assert_outcomes(passed=7, failed=2, skipped=2, xfailed=1, errors=1)
    assert list(pytester.path.rglob("*.jsonl")) == []
    # And the plugin, though loaded, registered no hooks of its own.
    inprocess = pytester.runpytest("-p", "cuparity_pytest", "--co", "-q")
    assert inprocess.ret == pytest.ExitCode.OK
    config = pytester.parseconfigure("-p", "cuparity_pytest")
    assert config.pluginmanager.get_plugin("cuparity_pytest") is not None
    assert config.pluginmanager.get_plugin("cuparity_suite_observer") is None


NODEIDS = [
    "test_a.py::test_b",
    "test_a.py",
    "pkg/sub/test_a.py::TestX::test_y",
    "pkg/test_a.py::TestX::Inner::test_y[1-2]",
    "test_a.py::test_b[a::b]",
    "test_a.py::test_b[a[1]]",
    "test_a.py::test_b[two words-\u00e9]",
    "test_a.py::test_b[\x07bell]",
    "tests/test_py.py.py::test_c",
]


@pytest.mark.parametrize("nodeid", NODEIDS)
def test_own_naming_agrees_with_junitxml(nodeid):
    from _pytest import junitxml  # the private originals the plugin prefers

    assert cuparity_pytest.own_mangle_test_address(nodeid) == junitxml.mangle_test_address(nodeid)
    last = junitxml.mangle_test_address(nodeid)[-1]
    assert cuparity_pytest.own_bin_xml_escape(last) == junitxml.bin_xml_escape(last)


def test_junit_names_prefix_and_escape():
    assert cuparity_pytest.junit_names("pkg/test_a.py::TestX::test_y[\x07]", "pre") == (
        "pre.pkg.test_a.TestX", "test_y[#x07]")
    assert cuparity_pytest.junit_names("test_a.py::test_b", None) == ("test_a", "test_b")


def test_end_lines_carry_what_junit_would_say(pytester, monkeypatch):
    """A killed process never writes its JUnit file: the end lines must hold the skip reason and
    the failure's cause the runner would otherwise have taken from it."""
    make_suite(pytester, {"test_msg.py": """
import pytest

def test_skip():
    pytest.skip("no GPU here")

def test_fail():
    assert 1 == 2, "one is not two"
"""})
    progress = pytester.path / "progress.jsonl"
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    run_as_the_runner_does(pytester, monkeypatch, f"--junitxml={junit}")
    ends = {e["nodeid"]: e for e in read_progress(progress) if e["event"] == "end"}
    assert ends["test_msg.py::test_skip"]["message"] == "no GPU here"
    assert ends["test_msg.py::test_fail"]["message"].startswith("AssertionError: one is not two")
    assert all(e["duration"] >= 0 for e in ends.values())
    import xml.etree.ElementTree as ET
    messages = {tc.get("name"): child.get("message")
                for tc in ET.parse(junit).getroot().iter("testcase") for child in tc}
    assert messages["test_skip"] == "no GPU here"
    assert messages["test_fail"].startswith("AssertionError: one is not two")


def test_a_fixture_not_found_is_named_the_same_for_every_test(pytester, monkeypatch):
    """A report with no crash line (a fixture pytest cannot find) is the test's source with the
    cause on an "E " line: that line is the message, identical for each test that hit it (the
    runner's environment rule compares them), and its phase says it is an error, not a failure."""
    make_suite(pytester, {"test_fix.py": """
import pytest

def test_a(absent):
    pass

@pytest.mark.parametrize("k", [1, 2])
def test_b(absent, k):
    pass

def test_c():
    assert False, "in the call"
"""})
    progress = pytester.path / "progress.jsonl"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    pytester.runpytest("-p", "cuparity_pytest").assert_outcomes(errors=3, failed=1)
    ends = {e["nodeid"]: e for e in read_progress(progress) if e["event"] == "end"}
    for nodeid in ("test_fix.py::test_a", "test_fix.py::test_b[1]", "test_fix.py::test_b[2]"):
        assert ends[nodeid]["message"] == "fixture 'absent' not found", ends[nodeid]
        assert (ends[nodeid]["outcome"], ends[nodeid]["when"]) == ("failed", "setup")
    assert ends["test_fix.py::test_c"]["when"] == "call"


# Ten tests needing a fixture nobody provides, then one that passes.
BROKEN_ENVIRONMENT = {"test_env.py": """
import pytest

@pytest.mark.parametrize("k", range(10))
def test_needs(absent, k):
    pass

def test_last():
    pass
"""}


def test_identical_failures_stop_the_session(pytester, monkeypatch):
    make_suite(pytester, BROKEN_ENVIRONMENT)
    progress = pytester.path / "progress.jsonl"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    monkeypatch.setenv("CUPARITY_SUITE_SAME_FAILURES", "4")
    result = pytester.runpytest("-p", "cuparity_pytest")
    result.assert_outcomes(errors=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    events = read_progress(progress)
    assert events[-1] == {"event": "stopped", "reason": "environment", "count": 4,
                          "message": "failed on setup with \"fixture 'absent' not found\""}
    assert [e["event"] for e in events].count("end") == 4


def test_a_pass_or_another_message_keeps_the_session_going(pytester, monkeypatch):
    make_suite(pytester, {"test_mixed_env.py": """
import pytest

def test_first():
    pass

@pytest.mark.parametrize("k", range(5))
def test_needs(absent, k):
    pass
""", "test_other.py": """
import pytest

@pytest.mark.parametrize("k", range(5))
def test_differs(k):
    assert k < 0, f"case {k}"
"""})
    monkeypatch.setenv("CUPARITY_SUITE_SAME_FAILURES", "3")
    # test_first passed: no stop, however many fail alike after it.
    pytester.runpytest("-p", "cuparity_pytest", "test_mixed_env.py").assert_outcomes(
        passed=1, errors=5)
    # Failures with different messages: no broken environment either.
    pytester.runpytest("-p", "cuparity_pytest", "test_other.py").assert_outcomes(failed=5)


def test_max_fails_stops_the_session(pytester, monkeypatch):
    make_suite(pytester, {"test_many.py": """
import pytest

@pytest.mark.parametrize("k", range(10))
def test_fails(k):
    assert k < 0, f"case {k}"
"""})
    progress = pytester.path / "progress.jsonl"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    monkeypatch.setenv("CUPARITY_SUITE_MAX_FAILS", "3")
    pytester.runpytest("-p", "cuparity_pytest").assert_outcomes(failed=3)
    assert read_progress(progress)[-1] == {"event": "stopped", "reason": "max_fails",
                                           "failures": 3}


@pytest.mark.parametrize("value", ["-1", "three"])
def test_a_bad_count_is_a_usage_error(pytester, monkeypatch, value):
    make_suite(pytester, {"test_one.py": "def test_a():\n    pass\n"})
    monkeypatch.setenv("CUPARITY_SUITE_MAX_FAILS", value)
    result = run_as_the_runner_does(pytester, monkeypatch)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*CUPARITY_SUITE_MAX_FAILS={value}*"])


def test_collection_errors_are_per_module_and_the_rest_runs(pytester, monkeypatch):
    make_suite(pytester, {
        "pkg/__init__.py": "",
        "pkg/test_dep.py": "import cuparity_no_such_dependency\n\ndef test_a():\n    pass\n",
        "pkg/test_own.py": "import pkg.not_there\n\ndef test_b():\n    pass\n",
        "pkg/test_syntax.py": "def test_c(:\n    pass\n",
        "pkg/test_fine.py": "def test_d():\n    pass\n",
    })
    progress = pytester.path / "progress.jsonl"
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("CUPARITY_SUITE_PROGRESS", str(progress))
    monkeypatch.setenv("CUPARITY_SUITE_CONTINUE_COLLECTION", "1")
    result = run_as_the_runner_does(pytester, monkeypatch, f"--junitxml={junit}")
    result.assert_outcomes(passed=1, errors=3)
    errors = {e["nodeid"]: e for e in read_progress(progress) if e["event"] == "collect_error"}
    assert sorted(errors) == ["pkg/test_dep.py", "pkg/test_own.py", "pkg/test_syntax.py"]
    assert errors["pkg/test_dep.py"]["message"] == (
        "missing test dependency 'cuparity_no_such_dependency' (imported by pkg.test_dep)")
    # pkg is installed (here, found): its missing module is the suite's own error.
    assert errors["pkg/test_own.py"]["message"] == \
        "ModuleNotFoundError: No module named 'pkg.not_there'"
    assert errors["pkg/test_syntax.py"]["message"].startswith("SyntaxError"), errors
    # Named as JUnit names the module's error, so the runner can join the two.
    assert {(e["classname"], e["name"]) for e in errors.values()} <= set(junit_cases(junit))


def test_without_the_variable_a_collection_error_interrupts(pytester, monkeypatch):
    make_suite(pytester, {"test_dep.py": "import cuparity_no_such_dependency\n",
                          "test_fine.py": "def test_d():\n    pass\n"})
    result = pytester.runpytest("-p", "cuparity_pytest")
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED
