"""cuparity's pytest plugin: what an external suite's process is doing, for `cuparity run`.

The runner starts an external pytest suite with this folder first on PYTHONPATH and
`-p cuparity_pytest` in PYTEST_ADDOPTS. Everything the plugin does is asked for by an environment
variable; with none of them set it registers nothing and the suite runs as if it were absent.

- CUPARITY_SUITE_PROGRESS=<file>: JSON lines appended as the suite runs, so that the runner knows
  which test was running when the process died (an OOM kill, a signal, its timeout), something
  pytest's JUnit file cannot say because it is only written at the end:
    {"event": "collected", "count": N}            the items that will run, after selection
    {"event": "start", "nodeid", "classname", "name", "time"}   a test begins (classname and
                                                  name as --junitxml writes them, so the two
                                                  files join; time: seconds since the epoch)
    {"event": "end", "nodeid", "outcome", "duration", "message", "when"}   it ended: passed,
                                                  failed or skipped, its phases' seconds summed,
                                                  a skip's reason or a failure's one-line cause,
                                                  and for a failure the phase it failed in
                                                  ("setup", "call", "teardown")
  Each line is one write and one flush: a killed process loses nothing it had written, since the
  page cache outlives it (no fsync: the machine is not expected to crash, only the process).
- CUPARITY_SUITE_DESELECT=<file>: node ids, one a line, deselected (the tests a crashed process
  had already finished, when the runner resumes the suite in a fresh one).
- CUPARITY_SUITE_ONLY=<file>: node ids, one a line; every other item is deselected (the tests
  that did not pass, re-run together in one process, or one of them alone).
- CUPARITY_SUITE_CONTINUE_COLLECTION=1: pytest goes on past a module that cannot be imported
  (--continue-on-collection-errors), and each such module is a line
    {"event": "collect_error", "nodeid", "classname", "name", "message"}   classname and name as
                                                  JUnit names the module's error; message: the
                                                  error's last line, or "missing test dependency
                                                  'cffi' (imported by pkg.test_x)" when the module
                                                  it could not import is no package installed
- CUPARITY_SUITE_SAME_FAILURES=K: once K tests failed with one identical message, and they are at
  least 90 % of the tests that ended so far (skips aside), the session stops (as --maxfail stops
  it) after a line {"event": "stopped", "reason": "environment", "message", "count"}: a broken
  environment (a fixture that does not exist) is named in seconds, not after every test. The
  share, not "every test": the few tests that do not use the broken fixture still pass
  (numba-cuda 0.30.4's driver tests under pytest 9: 9 passes beside 249 identical errors).
- CUPARITY_SUITE_MAX_FAILS=N: after N tests failed (or errored), the session stops after a line
  {"event": "stopped", "reason": "max_fails", "failures": N}.

A variable naming a file that cannot be read (or, for the progress file, opened for appending)
is a pytest usage error naming the variable and the path, so the suite exits non-zero at once
instead of running unobserved or unfiltered.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time

import pytest

PROGRESS_VAR = "CUPARITY_SUITE_PROGRESS"
DESELECT_VAR = "CUPARITY_SUITE_DESELECT"
ONLY_VAR = "CUPARITY_SUITE_ONLY"
CONTINUE_VAR = "CUPARITY_SUITE_CONTINUE_COLLECTION"
SAME_FAILURES_VAR = "CUPARITY_SUITE_SAME_FAILURES"
MAX_FAILS_VAR = "CUPARITY_SUITE_MAX_FAILS"

# The junitxml plugin's own functions, when this pytest has them under these names: the progress
# file must name each test exactly as the JUnit file does, and the surest way is the same code.
# They are private, so a pytest that moved them falls back to the copies below (which
# tests/test_plugin.py checks against the originals wherever both exist).
try:
    from _pytest.junitxml import bin_xml_escape as _pytest_bin_xml_escape
    from _pytest.junitxml import mangle_test_address as _pytest_mangle_test_address
except ImportError:  # pragma: no cover - depends on the installed pytest
    _pytest_bin_xml_escape = None
    _pytest_mangle_test_address = None


def own_mangle_test_address(nodeid: str) -> list[str]:
    """The junitxml split of a node id: dotted file path, then each `::` name, params kept.

    `pkg/test_a.py::TestX::test_y[1-a::b]` -> ["pkg.test_a", "TestX", "test_y[1-a::b]"]. The path
    ends at the first `::` (a file name may hold `[`), and the first `[` after it opens the
    parameters, which stay on the last name as one opaque bracket (they may hold `::`). This is
    pytest 9.2's rule; pytest 9.1 and older split at the first `[` anywhere, which differs only
    for a path holding `[`, and only matters here when the private import above failed.
    """
    path, sep, tail = nodeid.partition("::")
    path = re.sub(r"\.py$", "", path.replace("/", "."))
    if not sep:
        return [path]
    name_part, bracket, params = tail.partition("[")
    names = [path, *name_part.split("::")]
    names[-1] += bracket + params
    return names


# What junitxml does to a name before writing it: characters XML 1.0 cannot hold (and DEL) are
# shown as "#xNN", so that the attribute can be written at all.
_ILLEGAL_XML = re.compile(
    "[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def own_bin_xml_escape(text: str) -> str:
    """junitxml's escape of characters XML cannot carry: "\\x07" -> "#x07"."""
    def repl(match: re.Match) -> str:
        code = ord(match.group())
        return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"
    return _ILLEGAL_XML.sub(repl, str(text))


mangle_test_address = _pytest_mangle_test_address or own_mangle_test_address
bin_xml_escape = _pytest_bin_xml_escape or own_bin_xml_escape


def junit_names(nodeid: str, prefix: str | None) -> tuple[str, str]:
    """(classname, name) of a test as --junitxml (with --junit-prefix PREFIX) writes them."""
    names = mangle_test_address(nodeid)
    classnames = names[:-1]
    if prefix:
        classnames.insert(0, prefix)
    return ".".join(classnames), bin_xml_escape(names[-1])


def one_line_cause(report) -> str:
    """A skip's reason ("no GPU") or a failure's crash line, as JUnit's message says it."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        reason = str(longrepr[2])
        # junitxml drops the "Skipped: " prefix from its message: the same reason either way.
        return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
    crash = getattr(longrepr, "reprcrash", None)
    message = str(getattr(crash, "message", "") or "")
    if message:
        return message.splitlines()[0]
    text = str(longrepr or "").strip()
    # No crash line (a fixture pytest cannot find: its report is the test's source with the error
    # on an "E " line, then the file and line): the first "E " line says what went wrong, and says
    # it identically for every test that hit it, which the runner's environment rule relies on.
    for line in text.splitlines():
        if line.startswith("E "):
            return line[2:].strip()
    return text.splitlines()[-1] if text else ""


def junit_style(outcome: str, when: str | None, message: str) -> str:
    """A failed test's message as the runner records it: JUnit's form for an error (a failure
    outside the test's call), `failed on setup with "<cause>"`, else the cause."""
    if outcome == "failed" and when and when != "call":
        return f'failed on {when} with "{message}"'
    return message


_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([^']+)'")


def is_installed(name: str) -> bool:
    """Whether the top-level package `name` can be found on this process's path."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def collect_error_message(report, module: str) -> str:
    """The error's last line, without pytest's "E" gutter: "ModuleNotFoundError: No module named
    'x'". A module the test module could not import whose package is not installed at all is a
    missing test dependency (a package of the suite's own is: only its module is missing)."""
    text = str(report.longrepr or "").strip()
    lines = [line[1:].strip() if line.startswith("E ") else line.strip()
             for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else "collection failed"
    missing = _NO_MODULE.search(last)
    if missing:
        top = missing.group(1).split(".")[0]
        if not is_installed(top):
            return f"missing test dependency '{top}' (imported by {module})"
    return last


def read_count(variable: str) -> int | None:
    """A whole number >= 0 from `variable`; None when it is unset or 0 (nothing asked)."""
    text = os.environ.get(variable)
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise pytest.UsageError(f"{variable}={text}: expected a whole number >= 0")
    return value or None


def read_nodeids(variable: str) -> set[str] | None:
    """The node ids of the file named by `variable` (blank lines ignored), None when it is unset."""
    path = os.environ.get(variable)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return {line.strip() for line in f if line.strip()}
    except (OSError, UnicodeDecodeError) as e:
        raise pytest.UsageError(f"{variable}={path}: cannot read the node id list: {e}") from e


class SuiteObserver:
    """The hooks registered when at least one variable is set."""

    def __init__(self, config: pytest.Config, progress, deselect, only) -> None:
        self.config = config
        self.progress = progress      # an open text file, or None
        self.deselect = deselect      # node ids to drop, or None
        self.only = only              # node ids to keep, or None
        self.same_failures = read_count(SAME_FAILURES_VAR)  # stop after K identical failures
        self.max_fails = read_count(MAX_FAILS_VAR)          # stop after N failures
        self.session = None
        self.failures = 0
        self.ended = 0                        # tests that ended, skips aside
        self.alike: dict[str, int] = {}       # failure message -> tests that failed with it
        self.stopped = False
        self.outcomes: dict[str, str] = {}
        self.durations: dict[str, float] = {}
        self.messages: dict[str, str] = {}
        self.phases: dict[str, str] = {}  # where a failed test first failed

    def emit(self, record: dict) -> None:
        if self.progress is None:
            return
        # One write of one whole line, then flush: a line is in the page cache before the test
        # body runs, and a kill can cut at most the line being written, never an earlier one.
        self.progress.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.progress.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        # trylast: -k, -m and other selection plugins have had their say, so the items left are
        # what would run; both lists then only narrow them further.
        if self.only is None and self.deselect is None:
            return
        kept, dropped = [], []
        for item in items:
            if self.only is not None and item.nodeid not in self.only:
                dropped.append(item)
            elif self.deselect is not None and item.nodeid in self.deselect:
                dropped.append(item)
            else:
                kept.append(item)
        if dropped:
            # Reported as deselected, as -k does, so the summary line counts them.
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_collectreport(self, report) -> None:
        if not report.failed:
            return
        prefix = getattr(self.config.option, "junitprefix", None)
        classname, name = junit_names(report.nodeid, prefix)
        module = ".".join(mangle_test_address(report.nodeid))
        self.emit({"event": "collect_error", "nodeid": report.nodeid, "classname": classname,
                   "name": name, "message": collect_error_message(report, module)})

    def count_outcome(self, outcome: str, message: str) -> None:
        """The two stops, after each test that ended."""
        if outcome in ("passed", "failed"):
            self.ended += 1
        if outcome != "failed" or self.stopped:
            return
        self.failures += 1
        count = self.alike[message] = self.alike.get(message, 0) + 1
        # The runner's rule (harness/run/suite_tests.cpp, identical_failures): 90 % alike.
        if self.same_failures and count >= self.same_failures and count * 10 >= self.ended * 9:
            self.stop(f"{count} tests failed alike: {message}",
                      {"reason": "environment", "message": message, "count": count})
        elif self.max_fails and self.failures >= self.max_fails:
            self.stop(f"stopping after {self.failures} failures (cuparity's max_fails)",
                      {"reason": "max_fails", "failures": self.failures})

    def stop(self, why: str, event: dict) -> None:
        # shouldfail, as --maxfail sets it: pytest ends the run after this test, its JUnit file
        # written, exit status 1.
        self.stopped = True
        if self.session is not None:
            self.session.shouldfail = why
        self.emit({"event": "stopped", **event})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.emit({"event": "collected", "count": len(session.items)})

    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        # junitprefix is junitxml's option: absent when that plugin is disabled (-p no:junitxml).
        prefix = getattr(self.config.option, "junitprefix", None)
        classname, name = junit_names(nodeid, prefix)
        self.outcomes[nodeid] = "passed"
        # The wall-clock time: a test the process dies in has no end line, and the runner takes
        # its duration from this to the moment the process ended.
        self.emit({"event": "start", "nodeid": nodeid, "classname": classname, "name": name,
                   "time": time.time()})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # A failure in any phase (setup, call, teardown) fails the test, and a skip in any phase
        # that did not fail skips it. That is what junitxml writes (a fixture that skips in its
        # teardown gives the test a <skipped> element), so a test's outcome is the same whether
        # the runner reads it from the JUnit file or, after a crash, from this file.
        current = self.outcomes.get(report.nodeid, "passed")
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            if current != "failed":
                self.messages[report.nodeid] = one_line_cause(report)
                self.phases[report.nodeid] = report.when
            self.outcomes[report.nodeid] = "failed"
        elif report.skipped and current != "failed":
            self.outcomes[report.nodeid] = "skipped"
            self.messages[report.nodeid] = one_line_cause(report)

    def pytest_runtest_logfinish(self, nodeid: str, location) -> None:
        # The message and duration matter when the process is killed later: its JUnit file is then
        # never written, and these lines are all the runner has of the tests it finished.
        record = {"event": "end", "nodeid": nodeid, "outcome": self.outcomes.pop(nodeid, "passed"),
                  "duration": round(self.durations.pop(nodeid, 0.0), 6),
                  "message": self.messages.pop(nodeid, "")}
        if nodeid in self.phases:  # a failure in setup or teardown is what JUnit calls an error
            record["when"] = self.phases.pop(nodeid)
        self.emit(record)
        self.count_outcome(record["outcome"],
                           junit_style(record["outcome"], record.get("when"), record["message"]))

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None


def pytest_configure(config: pytest.Config) -> None:
    progress_path = os.environ.get(PROGRESS_VAR)
    deselect = read_nodeids(DESELECT_VAR)
    only = read_nodeids(ONLY_VAR)
    if os.environ.get(CONTINUE_VAR) == "1":
        # One module that cannot import is that module's error; the others still run.
        config.option.continue_on_collection_errors = True
    stops = read_count(SAME_FAILURES_VAR) or read_count(MAX_FAILS_VAR)
    if not progress_path and deselect is None and only is None and not stops:
        return  # nothing asked: leave the suite exactly as it is
    progress = None
    if progress_path:
        try:
            # Appending: a suite resumed after a crash continues the same file.
            progress = open(progress_path, "a", encoding="utf-8")
        except OSError as e:
            raise pytest.UsageError(
                f"{PROGRESS_VAR}={progress_path}: cannot open the progress file: {e}") from e
    config.pluginmanager.register(SuiteObserver(config, progress, deselect, only),
                                  "cuparity_suite_observer")
