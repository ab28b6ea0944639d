"""Issue 47: every subcommand with its stdout, then its --out, on a full device.

No command may exit 0 having lost what it wrote, print a traceback or abort: a full stdout is
"stdout: No space left on device" and exit 3 (a command that already failed keeps its own code), a
full --out names the file it could not write. stdout is /dev/full; --out is a small tmpfs filled
to the last byte (skipped, saying so, where this machine cannot mount one). The reports' own
sweep is test_reports.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import hostile_support as hs

FAST_CALIBRATE = ["--probe", "ctx.get_current", "--delays", "50", "--rounds", "1",
                  "--min-time", "0.001"]


@pytest.fixture(scope="module")
def runs(built, tmp_path_factory) -> dict[str, Path]:
    """Two small runs of one matrix, and a captured map, made once."""
    work = tmp_path_factory.mktemp("full-device")
    matrix = work / "small.toml"
    matrix.write_text('[matrix]\nname = "small"\ncases = ["alloc.copy.dtod", '
                      '"stream.create.flags_priorities"]\n[axes]\n'
                      'NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]\n')
    out = {"matrix": matrix}
    for name in ("a", "b"):
        proc = built.run("run", str(matrix), "--out", str(work / name))
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[name] = work / name
    probe = built.bin / "capture_numba_probe"
    if probe.is_file():
        proc = built.run("capture", "--out", str(work / "map.json"), "--", str(probe))
        if proc.returncode == 0:
            out["map"] = work / "map.json"
    return out


def stdout_commands(runs: dict[str, Path], tmp: Path) -> dict[str, list[str]]:
    m, a, b = str(runs["matrix"]), str(runs["a"]), str(runs["b"])
    commands = {
        "env": ["env"], "env --json": ["env", "--json"], "env --bindings": ["env", "--bindings"],
        "env --audit": ["env", "--audit"],
        "list": ["list"], "list MATRIX": ["list", m], "list --json": ["list", "--json", m],
        "run": ["run", m, "--out", str(tmp / "run")],
        "compare": ["compare", a, b], "compare --json -": ["compare", "--json", "-", a, b],
        "merge": ["merge", m, a, "--out", str(tmp / "merged")],
        "probe --list": ["probe", "--list"],
        "calibrate": ["calibrate", "--out", str(tmp / "cal"), *FAST_CALIBRATE],
        "faults": ["faults", m, "--out", str(tmp / "faults"), "-j", "1", "--cell-jobs", "2",
                   "--symbol", "cuMemcpyDtoD_v2", "--kind", "corrupt"],
        "ctest": ["ctest", m, "--out", str(tmp / "ctest")],
        "--help": ["--help"], "--version": ["--version"], "run --help": ["run", "--help"],
    }
    if "map" in runs:
        commands["audit"] = ["audit", "--map", str(runs["map"])]
    return commands


COMMANDS = ["env", "env --json", "env --bindings", "env --audit", "list", "list MATRIX",
            "list --json", "run", "compare", "compare --json -", "merge", "probe --list",
            "calibrate", "faults", "ctest", "--help", "--version", "run --help", "audit"]


@pytest.mark.parametrize("name", COMMANDS)
def test_a_full_stdout_is_never_exit_0(built, runs, tmp_path, full_stdout, name):
    commands = stdout_commands(runs, tmp_path)
    if name not in commands:
        pytest.skip(f"{name}: no captured map on this machine (capture_numba_probe)")
    argv = commands[name]
    extra = ["--target", built.sim_driver] if argv[0] == "calibrate" else []
    proc = built.run(*argv, *extra, stdout=full_stdout, timeout=300)
    hs.no_traceback(proc)
    assert proc.returncode != 0, f"{name}: exit 0 with its stdout lost\n{proc.stderr[-2000:]}"
    assert "stdout: No space left on device" in proc.stderr, proc.stderr[-2000:]


OUT_COMMANDS = {
    "run --out": lambda r, d: ["run", str(r["matrix"]), "--out", str(d / "run")],
    "merge --out": lambda r, d: ["merge", str(r["matrix"]), str(r["a"]), "--out", str(d / "m")],
    "compare --json FILE": lambda r, d: ["compare", "--json", str(d / "c.json"), str(r["a"]),
                                         str(r["b"])],
    "faults --out": lambda r, d: ["faults", str(r["matrix"]), "--out", str(d / "f"), "-j", "1",
                                  "--symbol", "cuMemcpyDtoD_v2", "--kind", "corrupt"],
    "ctest --out": lambda r, d: ["ctest", str(r["matrix"]), "--out", str(d / "ct")],
    "run --write-baseline": lambda r, d: ["run", str(r["matrix"]), "--out", str(d.parent / "rb"),
                                          "--write-baseline", str(d / "base.txt")],
}


@pytest.mark.parametrize("name", sorted(OUT_COMMANDS))
def test_a_full_out_device_is_named_never_exit_0(built, runs, small_device, name):
    device = small_device("64k")
    hs.fill(device)
    proc = built.run(*OUT_COMMANDS[name](runs, device), timeout=300)
    hs.no_traceback(proc)
    assert proc.returncode not in (0, 1), f"{name}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert "No space left on device" in proc.stderr, proc.stderr[-2000:]


def test_capture_and_audit_outputs_on_a_full_device(built, runs, small_device):
    if "map" not in runs:
        pytest.skip("no captured map on this machine (capture_numba_probe)")
    device = small_device("64k")
    hs.fill(device)
    probe = str(built.bin / "capture_numba_probe")
    for argv in (["capture", "--out", str(device / "map.json"), "--", probe],
                 ["audit", "--map", str(runs["map"]), "--json", str(device / "audit.json")]):
        proc = built.run(*argv)
        hs.no_traceback(proc)
        assert proc.returncode not in (0, 1), f"{argv[0]}: exit {proc.returncode}\n{proc.stderr}"
        assert "No space left on device" in proc.stderr, proc.stderr[-2000:]
