"""External [[suite]] runs against suites that misbehave (issue 47): each matrix here runs a small
suite written into the test's folder, `cuparity --driver sim run MATRIX --out DIR`, and the test
reads DIR's summary.json and results.jsonl.

- a JUnit file nested 20,000 <testsuite> levels deep is that cell's error, and the run goes on
  (it crashed the whole run: a recursive walk);
- a test id twice in one JUnit file (pass, then fail) is one result, the gravest, not flaky;
- a test that leaves a background process holding the suite's descriptors and a double-forked
  daemon: the suite ends when its process ends (not at timeout_s, when the pipe closes), and both
  leftovers are killed, reaped and named.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

from . import hostile_support as hs

PYTHON = sys.executable


def suite_matrix(folder: Path, axis: str, values: list[str], command: list[str],
                 timeout_s: int = 600, retries: int = 0) -> Path:
    matrix = folder / "suite.toml"
    matrix.write_text(textwrap.dedent(f"""\
        [matrix]
        name = "hostile-suite"
        description = "a suite that misbehaves"
        [axes]
        {axis} = {json.dumps(values)}
        [[suite]]
        name = "h"
        command = {json.dumps(command)}
        timeout_s = {timeout_s}
        retries = {retries}
        """), encoding="utf-8")
    return matrix


def run_suite(built, matrix: Path, out: Path, timeout: float = 120):
    env = {k: v for k, v in built.env().items() if not k.startswith("PYTEST_")}
    proc = built.run("run", str(matrix), "--out", str(out), "-j", "1", env=env, timeout=timeout)
    hs.no_traceback(proc)
    summary_path = out / "summary.json"
    assert summary_path.is_file(), f"exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["exit_code"] == proc.returncode
    return proc, summary


def cell_of(summary: dict, **env) -> str:
    [cell] = [c["id"] for c in summary["cells"]
              if all(c["env"].get(k) == v for k, v in env.items())]
    return cell


def records(out: Path, kind: str) -> list[dict]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == kind]


# A suite that is no pytest: it writes its JUnit file itself, as its cell's variable says.
JUNIT_WRITER = r'''
import os, sys
kind = os.environ["SUITE_JUNIT"]
case = '<testcase classname="m.C" name="{}"{}</testcase>'
with open(sys.argv[1], "w") as f:
    f.write('<testsuites>\n')
    if kind == "deep":
        f.write('<testsuite tests="1">' * 20000 + case.format("t", ">") + '</testsuite>' * 20000)
    elif kind == "duplicate":
        f.write('<testsuite tests="2">\n' + case.format("t", ">") + '\n' +
                case.format("t", '><failure message="boom">tb</failure>') + '\n</testsuite>')
    else:
        f.write('<testsuite tests="1">' + case.format("t", ">") + '</testsuite>')
    f.write('\n</testsuites>\n')
'''


def junit_suite(tmp_path: Path, values: list[str]) -> Path:
    writer = tmp_path / "write_junit.py"
    writer.write_text(JUNIT_WRITER, encoding="utf-8")
    return suite_matrix(tmp_path, "SUITE_JUNIT", values, [PYTHON, str(writer), "{junit}"])


def test_junit_nested_too_deep_is_that_cells_error_and_the_run_goes_on(built, tmp_path):
    proc, summary = run_suite(built, junit_suite(tmp_path, ["deep", "plain"]), tmp_path / "out")
    deep, plain = cell_of(summary, SUITE_JUNIT="deep"), cell_of(summary, SUITE_JUNIT="plain")
    errors = [p for p in summary["problems"] if p["kind"] == "cell_error"]
    assert [p["cell"] for p in errors] == [deep], errors
    assert "junit.xml:2: <testsuite> nested deeper than 256 levels" in errors[0]["message"]
    assert {r["cell"]: r["outcome"] for r in summary["results"] if r["case"] == "h.m.C.t"} == {
        plain: "pass"}
    assert proc.returncode == 1


def test_duplicate_test_id_in_one_junit_is_its_gravest_result_not_flaky(built, tmp_path):
    _, summary = run_suite(built, junit_suite(tmp_path, ["duplicate"]), tmp_path / "out")
    [record] = [r for r in summary["results"] if r["case"] == "h.m.C.t"]
    assert record["outcome"] == "fail", record
    assert record["message"].startswith(
        "duplicate test id in junit.xml: 2 <testcase> elements (passed at line 3, failed at line "
        "4), the gravest stands: boom"), record
    assert [p for p in summary["problems"] if p["kind"] == "flaky"] == []
    assert summary["exit_code"] == 1


# A pytest suite whose one test passes, leaving behind a sleeper that holds every descriptor it
# inherited (the log, the runner's events pipe) and a double-forked daemon in a session of its
# own. Each writes its pid to the suite's folder; the test waits for both files (an event, with a
# bound), so both are running when the suite's process ends.
LINGERING_TEST = r'''
import os, subprocess, sys, time

def wait_for(path):
    # A bound only for a broken run: a python start takes seconds on a host kept busy.
    for _ in range(24000):
        if os.path.exists(path):
            return
        time.sleep(0.005)
    raise AssertionError("never written: " + path)

def test_leaves_processes_behind():
    folder = os.environ["CUPARITY_SUITE_DIR"]
    sleeper = os.path.join(folder, "sleeper.pid")
    subprocess.Popen([sys.executable, "-c",
                      "import os, sys, time\n"
                      "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
                      "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
                      "time.sleep(3600)", sleeper], close_fds=False)
    daemon = os.path.join(folder, "daemon.pid")
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            with open(daemon + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(daemon + ".tmp", daemon)
            time.sleep(3600)
        os._exit(0)
    os.waitpid(middle, 0)
    wait_for(sleeper)
    wait_for(daemon)
'''


def running(pid: int) -> bool:
    """True while `pid` is a process that has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def test_lingering_processes_end_with_the_suite_killed_and_named(built, tmp_path):
    suite_dir = tmp_path / "lingering"
    suite_dir.mkdir()
    (suite_dir / "test_lingering.py").write_text(LINGERING_TEST, encoding="utf-8")
    # timeout_s is far past this test's own limit on the run: a suite that waited for the
    # sleeper's pipe (or its timeout) fails here by design; the limit itself is generous, as a
    # host kept busy (stress-ng beside a build) starts each python in seconds.
    matrix = suite_matrix(tmp_path, "SUITE_LINGER", ["1"],
                          [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(suite_dir), "--junitxml={junit}", str(suite_dir)],
                          timeout_s=3600)
    out = tmp_path / "out"
    _, summary = run_suite(built, matrix, out, timeout=600)
    found = [r for r in summary["results"]
             if r["case"] == "h.test_lingering.test_leaves_processes_behind"]
    # --rootdir: an ini file another test left in a parent of tmp_path would move pytest's
    # rootdir there, and the JUnit classname (the case id) with it.
    assert len(found) == 1, json.dumps([summary["problems"],
                                        [r["case"] for r in summary["results"]]])[:3000]
    [record] = found
    assert record["outcome"] == "pass", record
    [end] = records(out, "suite_end")
    [process] = end["processes"]
    # Ended by itself, well before timeout_s (capture's own exit status may note the leftovers).
    assert process["timed_out"] is False and process["signal"] == 0, process
    [folder] = (out / "suites").glob("*/h")
    pids = {name: int((folder / f"{name}.pid").read_text()) for name in ("sleeper", "daemon")}
    named = [int(p.split(" ")[0]) for p in process["left"]]
    assert set(pids.values()) <= set(named), process["left"]
    for name, pid in pids.items():
        assert not running(pid), f"the {name} ({pid}) outlived the run"
    log = (folder / "p1" / "output.log").read_text(errors="replace")
    assert f"cuparity: killed what the suite's process left running, {len(named)} processes: " in log
