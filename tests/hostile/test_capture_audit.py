"""`cuparity capture` and `cuparity audit` against hostile maps, drivers and commands (issue 47).

What a user chaining `capture && audit` needs: an audit that checked nothing is never exit 0 (4,
`NOT AUDITED`), a doubled or impossible map is bad input (2) naming the file and the entry, a
capture that missed processes says which and exits 3, a bad variable is 2 from every command, and
every message is readable (real line breaks, the real cause).
"""

from __future__ import annotations

import copy
import ctypes
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from . import hostile_support as hs

REPO = Path(__file__).resolve().parents[2]
FIXED_MAP = REPO / "tools" / "capture" / "fixtures" / "fixed-ptds0.json"  # a /1 map, status ok
NOT_AUDITED = 4


def map_1(tmp_path: Path, sim_driver: str, edit=None) -> Path:
    """The committed cuda.bindings capture, its placeholders filled, edited by `edit`."""
    text = FIXED_MAP.read_text().replace("{driver}", sim_driver).replace("{python}", "python3")
    m = json.loads(text)
    if edit:
        edit(m)
    p = tmp_path / "map.json"
    p.write_text(json.dumps(m))
    return p


def audit(built, path: Path, **kwargs) -> subprocess.CompletedProcess:
    r = built.run("audit", "--map", str(path), **kwargs)
    hs.no_traceback(r)
    return r


# ---- N3 and 14: an audit that checked nothing is not a pass ----

def test_a_map_that_passes_still_exits_0(built, tmp_path):
    r = audit(built, map_1(tmp_path, built.sim_driver))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASSED" in r.stdout


def test_an_empty_map_is_not_audited(built, tmp_path):
    r = audit(built, map_1(tmp_path, built.sim_driver, lambda m: m.update(entries=[])))
    assert r.returncode == NOT_AUDITED, r.stdout + r.stderr
    assert "NOT AUDITED" in r.stdout and "no entries" in r.stdout
    assert "PASSED" not in r.stdout


def test_a_package_that_did_not_load_is_not_audited(built, tmp_path):
    def failed(m):
        m.update(status="import_failed", error="ImportError: no cuda.bindings", entries=[])

    r = audit(built, map_1(tmp_path, built.sim_driver, failed))
    assert r.returncode == NOT_AUDITED, r.stdout + r.stderr
    assert "NOT AUDITED: the package did not load (import_failed)" in r.stdout


def test_a_driver_without_cugetprocaddress_v2_is_not_audited(built, tmp_path):
    legacy = built.bin / "libcuparity_simdriver_legacy.so"
    if not legacy.is_file():
        pytest.skip(f"no {legacy}: build the cuparity_simdriver_legacy target")
    r = audit(built, map_1(tmp_path, built.sim_driver), sim=False,
              env=built.env(NUMBA_CUDA_DRIVER=str(legacy)))
    assert r.returncode == NOT_AUDITED, r.stdout + r.stderr
    assert "does not export cuGetProcAddress_v2" in r.stdout


def test_a_capture_that_never_loaded_the_driver_is_not_audited(built, tmp_path):
    out = tmp_path / "none.json"
    c = built.run("capture", "--out", str(out), "--", "true")
    assert c.returncode == 0, c.stderr
    r = audit(built, out)
    assert r.returncode == NOT_AUDITED, r.stdout + r.stderr
    assert "NOT AUDITED: no_driver" in r.stdout


def test_json_says_not_audited_too(built, tmp_path):
    report = tmp_path / "audit.json"
    empty = map_1(tmp_path, built.sim_driver, lambda m: m.update(entries=[]))
    r = built.run("audit", "--map", str(empty), "--json", str(report))
    assert r.returncode == NOT_AUDITED, r.stdout + r.stderr
    assert json.loads(report.read_text())["audited"] is False


# ---- N3: a doubled or impossible map is bad input ----

def test_a_doubled_entry_of_a_package_map_is_refused(built, tmp_path):
    def doubled(m):
        m["entries"].append(copy.deepcopy(m["entries"][3]))

    path = map_1(tmp_path, built.sim_driver, doubled)
    r = audit(built, path)
    assert r.returncode == 2, r.stdout + r.stderr
    last = len(json.loads(path.read_text())["entries"]) - 1
    assert f"{path}: entries[{last}]" in r.stderr
    assert "entries[3] is the same" in r.stderr


@pytest.fixture
def process_map(built, tmp_path) -> dict:
    probe = built.bin / "capture_numba_probe"
    if not probe.is_file():
        pytest.skip(f"no {probe}: build the capture_numba_probe target")
    out = tmp_path / "probe.json"
    c = built.run("capture", "--out", str(out), "--", str(probe), built.sim_driver)
    assert c.returncode == 0, c.stderr
    return json.loads(out.read_text())


def write(tmp_path: Path, m: dict) -> Path:
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(m))
    return p


def test_a_doubled_entry_of_a_process_map_is_refused(built, tmp_path, process_map):
    process_map["entries"].append(copy.deepcopy(process_map["entries"][0]))
    path = write(tmp_path, process_map)
    r = audit(built, path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{path}: entries[{len(process_map['entries']) - 1}]: the same binding again" in r.stderr


def test_a_doubled_process_is_refused(built, tmp_path, process_map):
    process_map["processes"].append(copy.deepcopy(process_map["processes"][0]))
    path = write(tmp_path, process_map)
    r = audit(built, path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{path}: processes[1]" in r.stderr


@pytest.mark.parametrize("pid", [-1, 0, 2**40])
def test_a_pid_no_process_can_have_is_refused(built, tmp_path, process_map, pid):
    for e in process_map["entries"]:
        e["process"] = pid
    process_map["processes"][0]["pid"] = pid  # so the only complaint can be the range
    path = write(tmp_path, process_map)
    r = audit(built, path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{path}: processes[0].pid: expected an integer from 1 to 2147483647" in r.stderr


# ---- N4: a driver that cannot be loaded, said in lines as `env` says it ----

def test_no_driver_is_said_with_real_line_breaks(built, tmp_path):
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has a libcuda.so.1: the audit would load it")
    except OSError:
        pass
    r = audit(built, map_1(tmp_path, built.sim_driver), sim=False, env=built.env())
    assert r.returncode == 3, r.stdout + r.stderr
    assert "\\x0a" not in r.stderr
    assert "cannot load the CUDA driver library; tried:\n  libcuda.so.1" in r.stderr


# ---- 20: one bad variable, one exit code, from every command ----

def test_a_4k_driver_variable_is_bad_input_for_env_capture_and_audit(built, tmp_path):
    env = built.env(NUMBA_CUDA_DRIVER="/" + "a" * 4096)
    runs = {
        "env": built.run("env", sim=False, env=env),
        "capture": built.run("capture", "--out", str(tmp_path / "c.json"), "--", "true",
                             sim=False, env=env),
        "audit": built.run("audit", "--map", str(map_1(tmp_path, built.sim_driver)), sim=False,
                           env=env),
    }
    for name, r in runs.items():
        hs.no_traceback(r)
        assert r.returncode == 2, f"{name}: {r.returncode} {r.stderr[:300]}"
        assert f"cuparity {name}: NUMBA_CUDA_DRIVER=" in r.stderr, f"{name}: {r.stderr[:300]}"
    assert not (tmp_path / "c.json").exists()  # nothing ran


# ---- 22: a huge argument list is captured, or its real cause named ----

def test_100000_arguments_are_captured_not_blamed_on_setuid(built, tmp_path):
    out = tmp_path / "big.json"
    args = [str(i) for i in range(100000)]
    r = built.run("capture", "--out", str(out), "--", "/bin/true", *args)
    hs.no_traceback(r)
    assert "setuid" not in r.stderr
    assert r.returncode == 0, r.stderr[-2000:]
    m = json.loads(out.read_text())
    assert len(m["processes"]) == 1
    argv = m["processes"][0]["argv"]
    assert argv[:3] == ["/bin/true", "0", "1"] and len(argv) < len(args)  # cut, and it says so


def test_an_exec_that_is_too_big_names_e2big(built, tmp_path):
    # The capture's variables hold TMPDIR's long path once more than cuparity's own environment:
    # padded to the most cuparity itself can be started with, the command's exec is E2BIG.
    tmpdir = tmp_path
    for _ in range(6):
        tmpdir = tmpdir / ("d" * 200)
    tmpdir.mkdir(parents=True)
    out = tmp_path / "e2big.json"

    def attempt(pad: int):
        env = built.env(TMPDIR=str(tmpdir))
        for i in range(0, pad, 100000):  # no one string over the kernel's 128 KiB limit
            env[f"CUPARITY_PAD{i}"] = "p" * min(100000, pad - i)
        try:
            return built.run("capture", "--out", str(out), "--", "/bin/true", env=env)
        except OSError as e:  # cuparity itself could not be started: too big already
            if e.errno != 7:  # E2BIG
                raise
            return None

    low, high = 0, 8 << 20  # low starts, high does not
    assert attempt(high) is None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if attempt(mid) is not None else (low, mid)
    r = attempt(low)
    hs.no_traceback(r)
    assert r.returncode == 3, r.stderr[-2000:]
    assert "E2BIG" in r.stderr and "too big for exec" in r.stderr, r.stderr[-2000:]
    assert "setuid" not in r.stderr


# ---- 6: processes the capture misses are named, exit 3 ----

def probe_of(built) -> Path:
    probe = built.bin / "capture_numba_probe"
    if not probe.is_file():
        pytest.skip(f"no {probe}: build the capture_numba_probe target")
    return probe


def test_a_child_still_running_after_the_command_is_named(built, tmp_path):
    probe = probe_of(built)
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    out = tmp_path / "late.json"
    # The child waits on the FIFO, which the test opens only after cuparity has ended: it is
    # certainly still running then, and binds the driver only afterwards. Its output is not
    # cuparity's pipes, so cuparity's end is not held up by it.
    script = (f'(read x < "{fifo}"; exec "{probe}" "{built.sim_driver}") '
              '>/dev/null 2>&1 </dev/null & exit 0')
    try:
        r = built.run("capture", "--out", str(out), "--", "sh", "-c", script, timeout=60)
    finally:
        with open(fifo, "w") as release:  # let the child go, whatever happened
            release.write("go\n")
    hs.no_traceback(r)
    assert r.returncode == 3, r.stderr
    assert "but 1 process of it is missing from the map" in r.stderr
    assert "still running when the command exited" in r.stderr
    m = json.loads(out.read_text())
    assert len(m["lost"]) == 1 and m["lost"][0]["exe"] == "sh"


def nobody_can_run(built, probe: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv(1) to change user")
    check = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh",
                            "-c", f'test -x "{probe}" && test -r "{built.sim_driver}"'])
    if check.returncode != 0:
        pytest.skip("uid 65534 cannot run the probe or read the simulated driver here")


def test_a_program_run_through_setpriv_is_captured(built, tmp_path):
    probe = probe_of(built)
    nobody_can_run(built, probe)
    out = tmp_path / "setpriv.json"
    r = built.run("capture", "--out", str(out), "--", "setpriv", "--reuid=65534",
                  "--regid=65534", "--clear-groups", str(probe), built.sim_driver)
    hs.no_traceback(r)
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    assert m["status"] == "ok"
    images = [(p["pid"], p["image"], Path(p["exe"]).name) for p in m["processes"]]
    assert [i[2] for i in images] == ["setpriv", "capture_numba_probe"], images
    assert images[0][0] == images[1][0]
    assert {e["image"] for e in m["entries"]} == {1} and len(m["entries"]) == 4


def test_a_child_that_cannot_write_its_events_is_named(built, tmp_path):
    probe = probe_of(built)
    nobody_can_run(built, probe)
    out = tmp_path / "lost.json"
    # sh runs as uid 65534 and forks the probe: the probe's own file cannot be made in the
    # capture's folder (root's), so it is lost, and says so in its parent's file.
    r = built.run("capture", "--out", str(out), "--", "setpriv", "--reuid=65534",
                  "--regid=65534", "--clear-groups", "sh", "-c",
                  f'"{probe}" "{built.sim_driver}"; true')
    hs.no_traceback(r)
    assert r.returncode == 3, r.stderr
    assert "could not write its events as uid 65534" in r.stderr
    assert "capture_numba_probe" in r.stderr
    m = json.loads(out.read_text())
    assert [Path(x["exe"]).name for x in m["lost"]] == ["capture_numba_probe"]
