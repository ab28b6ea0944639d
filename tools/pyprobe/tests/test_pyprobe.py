"""The Python latency probe (tools/pyprobe/cuparity_pyprobe.py) on the simulated driver.

Numba and cuda.bindings are not installed on CI: fake_numba/ is a Numba whose config decides the
binding as Numba 0.68's does (falling back to ctypes, with its warning, when `cuda` does not
import) and fake_cuda/ a cuda.bindings driver module that opens libcuda.so.1 and calls through
cuGetProcAddress's pointers, as the real one does; PYPROBE_FAKE_CUDA=1 makes it importable.
fake_cupy/ and fake_core/ stand in for CuPy and cuda.core (0.3/0.4's cuda.core.experimental
layout, importable where fake_cuda is, as cuda.core needs cuda.bindings), each reaching the
simulated driver the way the real library does.
cuparity and the simulated driver are found in $CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin,
else build/bin.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SCRIPT = REPO / "tools" / "pyprobe" / "cuparity_pyprobe.py"
FAKES = f"{HERE / 'fake_numba'}:{HERE / 'fake_cuda'}"
LIBRARY_FAKES = f"{HERE / 'fake_cupy'}:{HERE / 'fake_core'}"


def bin_dir() -> Path:
    if os.environ.get("CUPARITY_BIN_DIR"):
        return Path(os.environ["CUPARITY_BIN_DIR"])
    if os.environ.get("CUPARITY_BUILD_DIR"):
        return Path(os.environ["CUPARITY_BUILD_DIR"]) / "bin"
    return REPO / "build" / "bin"


def sim() -> Path:
    driver = bin_dir() / "libcuparity_simdriver.so"
    if not driver.is_file() or not (bin_dir() / "cuparity").is_file():
        pytest.skip(f"no cuparity or simulated driver in {bin_dir()}: build with scripts/build")
    return driver


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "CUDA_", "CUPARITY_", "PYPROBE_"))
           and k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(extra)
    return env


def probe_events(*args: str, **env: str) -> list:
    """The events of one probe process on the simulated driver (written to stdout: fd 1)."""
    proc = subprocess.run([sys.executable, str(SCRIPT), "--events-fd", "1", "--min-time", "0.003",
                           "--block-time", "0.0001", *args],
                          env=clean_env(NUMBA_CUDA_DRIVER=str(sim()), **env),
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_probe_lists_the_names_the_matrix_knows():
    listed = subprocess.run([sys.executable, str(SCRIPT), "--list"], capture_output=True,
                            text=True, check=True).stdout.split()[::3]
    known = re.findall(r'"(py\.[a-z0-9_.]+)"',
                       (REPO / "harness/matrix/python_probes.cpp").read_text())
    assert listed == known


def test_the_ctypes_probe_runs_against_the_simulated_driver():
    events = probe_events("--probe", "py.ctx.get_current", "--probe", "py.launch.empty_kernel")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "cell_start" and kinds[-1] == "round_done"
    config = events[0]["config"]
    assert config["binding"] == "internal" and config["process"] == "python"
    assert config["driver_path"] == str(sim())
    assert "No module named 'numba'" in config["facade_missing"]
    samples = {e["probe"]: e for e in events if e["event"] == "probe"}
    assert set(samples) == {"py.ctx.get_current", "py.launch.empty_kernel"}
    assert all(e["series"] == "direct" and e["value"] > 0 for e in samples.values())
    pairs = {e["probe"]: e for e in events if e["event"] == "probe_pairs"}
    launch = pairs["py.launch.empty_kernel"]
    assert launch["own"] == "internal" and launch["symbols"] == ["cuLaunchKernel"]
    assert len(launch["per_call_ns"]["direct"]) >= 2
    assert "cuda.bindings does not import" in launch["other_missing"]
    # Neither library imports here: absent, each with its reason, in the config and the blocks.
    assert "cupy does not import" in config["cupy_missing"] and config["cupy"] is None
    assert "No module named 'cuda'" in config["cuda_core_missing"]
    assert launch["cupy_missing"] == config["cupy_missing"]
    assert launch["cuda_core_missing"] == config["cuda_core_missing"]
    assert set(launch["per_call_ns"]) == {"direct"}


def library_events(*probes: str, **env: str) -> tuple[dict, dict, dict]:
    """One probe process with both bindings and both library stand-ins: its config, the probe
    events by (probe, series) and the blocks by probe."""
    args = [a for p in probes for a in ("--probe", p)]
    events = probe_events(*args, PYTHONPATH=f"{FAKES}:{LIBRARY_FAKES}", PYPROBE_FAKE_CUDA="1",
                          **env)
    samples = {(e["probe"], e["series"]): e for e in events if e["event"] == "probe"}
    pairs = {e["probe"]: e for e in events if e["event"] == "probe_pairs"}
    return events[0]["config"], samples, pairs


def test_cupy_and_cuda_core_are_timed_where_they_import():
    config, samples, pairs = library_events("py.memcpy.htod_4b", "py.launch.empty_kernel")
    assert (config["cupy"], config["cupy_missing"]) == ("0.0+cuparity.fake", None)
    assert (config["cuda_core_module"], config["cuda_core_missing"]) == (
        "cuda.core.experimental", None)
    launch = pairs["py.launch.empty_kernel"]
    assert set(launch["per_call_ns"]) == {"facade", "direct", "other", "cupy", "cuda_core"}
    # Interleaved in the bindings' blocks: every series has one block per row of the orders.
    assert len({len(v) for v in launch["per_call_ns"].values()}) == 1
    assert (launch["own"], launch["other"]) == ("internal", "nvidia")
    assert "cupy_missing" not in launch and "cuda_core_missing" not in launch
    assert samples[("py.launch.empty_kernel", "cuda_core")]["value"] > 0
    # cuda.core has no synchronous host-to-device copy: left out by name, not an error.
    copy = pairs["py.memcpy.htod_4b"]
    assert "cuda_core" not in copy["per_call_ns"] and "cupy" in copy["per_call_ns"]
    assert "no synchronous host-to-device copy" in copy["cuda_core_missing"]
    assert ("py.memcpy.htod_4b", "cuda_core") not in samples


def test_a_library_that_cannot_start_or_moves_the_context_is_named():
    """A CuPy that leaves no context current: it cannot start (its stream needs one), which its
    config names, and the probe sets the primary context back, so the other series still run."""
    config, _, pairs = library_events("py.ctx.get_current", PYPROBE_FAKE_CUPY_CONTEXT="none")
    assert config["cupy_missing"].startswith("cupy cannot start: CUDARuntimeError")
    assert any(w.startswith("cupy left no context current, not device 0's primary context")
               for w in config["warnings"])
    blocks = pairs["py.ctx.get_current"]
    assert set(blocks["per_call_ns"]) == {"facade", "direct", "other", "cuda_core"}
    assert blocks["cupy_missing"] == config["cupy_missing"]


def test_a_library_call_that_differs_or_breaks_is_named_and_the_others_run_on():
    """cuda.core 0.1's launch order: the launch is absent from its series, by name, at start.
    A CuPy whose stream synchronize breaks after its start-up calls: its series ends in each
    probe that synchronizes, named in the sample and the blocks; the bindings' series run on."""
    config, samples, pairs = library_events("py.launch.empty_kernel", "py.stream.sync_idle",
                                            PYPROBE_FAKE_CORE_LAUNCH="0.1",
                                            PYPROBE_FAKE_CUPY_SYNC_LIMIT="2")
    assert config["cuda_core_missing"] is None and config["cupy_missing"] is None
    launch, sync = pairs["py.launch.empty_kernel"], pairs["py.stream.sync_idle"]
    assert "TypeError: launch: expected a Kernel" in launch["cuda_core_missing"]
    assert "cuda_core" in sync["per_call_ns"]
    for probe in ("py.launch.empty_kernel", "py.stream.sync_idle"):
        assert "CUDARuntimeError" in samples[(probe, "cupy")]["error"]
        assert "CUDARuntimeError" in pairs[probe]["cupy_missing"]
        assert {"facade", "direct", "other"} <= set(pairs[probe]["per_call_ns"])


def test_the_nvidia_path_and_the_facade_with_numba_and_cuda_bindings():
    events = probe_events("--probe", "py.stream.sync_idle", PYTHONPATH=FAKES,
                          PYPROBE_FAKE_CUDA="1", NUMBA_CUDA_USE_NVIDIA_BINDING="1")
    config = events[0]["config"]
    assert (config["binding"], config["fallback"], config["use_nv_binding"]) == (
        "nvidia", False, True)
    (pairs,) = [e for e in events if e["event"] == "probe_pairs"]
    assert (pairs["own"], pairs["other"], pairs["same_address"]) == ("nvidia", "internal", False)
    assert set(pairs["per_call_ns"]) == {"facade", "direct", "other"}


def test_a_numba_whose_driver_module_fails_is_named_and_its_facade_left_out():
    events = probe_events("--probe", "py.ctx.get_current", PYTHONPATH=FAKES,
                          PYPROBE_FAKE_CUDA="1", NUMBA_CUDA_USE_NVIDIA_BINDING="1",
                          PYPROBE_FAKE_NUMBA_DRIVER="broken")
    config = events[0]["config"]
    assert (config["binding"], config["use_nv_binding"], config["fallback"]) == (
        "nvidia", True, False)
    assert "cannot import name 'cuda'" in config["facade_missing"]
    (error,) = [e for e in events if e["event"] == "probe_error"]
    assert "numba.cuda.cudadrv.driver does not import" in error["message"]
    assert {e["series"] for e in events if e["event"] == "probe"} == {"direct", "other"}


def test_a_serving_probe_answers_rounds_and_names_a_bad_command():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--events-fd", "1", "--serve",
                           "--min-time", "0.002", "--probe", "py.ctx.get_current"],
                          input="round 3 1\nnonsense\n",
                          env=clean_env(NUMBA_CUDA_DRIVER=str(sim())),
                          capture_output=True, text=True, timeout=120)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["event"] for e in events] == ["cell_start", "probe", "probe_pairs", "round_done",
                                            "probe_error"]
    assert events[3]["round"] == 3 and "nonsense" in events[4]["message"]


MATRIX = """[matrix]
name = "pyprobe"
description = "the Python probe beside the C++ one"
cases = ["binding.config.effective"]
inert = { CUPARITY_PYPROBE_OTHER = "the Python probe's A/A control", PYPROBE_FAKE_CUDA = "the tests' stand-in cuda.bindings" }

[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
PYPROBE_FAKE_CUDA = ["0", "1"]

[[include]]
label = "aa"
NUMBA_CUDA_USE_NVIDIA_BINDING = "0"
PYPROBE_FAKE_CUDA = "1"
CUPARITY_PYPROBE_OTHER = "same"

[latency]
processes = "persistent"
python = true
probes = ["py.ctx.get_current", "py.launch.empty_kernel", "ctx.get_current"]
python_environment = { PYTHONPATH = "ALL_FAKES" }
rounds = 1
max_rounds = 1
min_time_s = 0.005
"""


def run_matrix(tmp: Path, text: str) -> tuple[dict, list]:
    (tmp / "m.toml").write_text(text.replace("ALL_FAKES", f"{FAKES}:{LIBRARY_FAKES}")
                                .replace("FAKES", FAKES))
    proc = subprocess.run([str(bin_dir() / "cuparity"), "--driver", str(sim()), "run",
                           str(tmp / "m.toml"), "--out", str(tmp / "out")],
                          env=clean_env(), capture_output=True, text=True, timeout=300)
    assert (tmp / "out" / "summary.json").is_file(), proc.stderr
    records = [json.loads(line) for line in (tmp / "out" / "results.jsonl").read_text()
               .splitlines()]
    return json.loads((tmp / "out" / "summary.json").read_text()), records


@pytest.fixture(scope="module")
def python_run(tmp_path_factory):
    sim()
    return run_matrix(tmp_path_factory.mktemp("pyprobe"), MATRIX)


def paired(summary: dict, probe: str) -> dict:
    return {p["cell"]: p for p in summary["latency"]["paired"] if p["probe"] == probe}


def test_a_latency_run_with_python_has_the_py_probes_beside_the_cpp_ones(python_run):
    summary, records = python_run
    probes = {p["name"]: p for p in summary["latency"]["probes"]}
    assert {"py.ctx.get_current", "py.launch.empty_kernel", "ctx.get_current"} <= set(probes)
    cells = {r["cell"] for r in records if r.get("type") == "latency_cell"}
    for cell in cells:
        assert f"direct:{cell}" in probes["py.launch.empty_kernel"]["samples"]
        assert cell in probes["py.ctx.get_current"]["samples"]  # the facade: fake Numba
    python_cells = [r for r in records
                    if r.get("type") == "latency_cell" and r.get("process") == "python"]
    assert len(python_cells) == len(cells) == 4
    assert summary["latency"]["errors"] == []
    nvidia = paired(summary, "py.ctx.get_current")["nv=1,PYPROBE_FAKE_CUDA=1"]
    assert (nvidia["own"], nvidia["other"], nvidia["control"]) == ("nvidia", "internal", False)


def test_the_library_series_reach_the_summary_beside_the_bindings(python_run):
    """CuPy in every cell, cuda.core where its cuda.bindings imports: series `cupy:<cell>` and
    `cuda_core:<cell>` with statistics like any series; where cuda.core is absent its blocks say
    why; the paired verdict still reads the bindings only."""
    summary, records = python_run
    launch = summary["latency"]["probes"]
    (launch,) = [p for p in launch if p["name"] == "py.launch.empty_kernel"]
    stats = {(s["probe"], s["series"]) for s in summary["latency"]["stats"]}
    cells = {r["cell"] for r in records if r.get("type") == "latency_cell"}
    with_core = {c for c in cells if "PYPROBE_FAKE_CUDA=0" not in c}
    assert with_core and with_core != cells
    for cell in cells:
        assert f"cupy:{cell}" in launch["samples"]
        assert ("py.launch.empty_kernel", f"cupy:{cell}") in stats
        assert (f"cuda_core:{cell}" in launch["samples"]) == (cell in with_core)
    for r in records:
        if (r.get("type") == "latency_pairs" and r["probe"].startswith("py.")
                and r["cell"] not in with_core):
            assert "cuda_core does not import: cuda.core: ImportError" in r["cuda_core_missing"]
    for p in summary["latency"]["paired"]:
        assert (p["a"], p["b"]) == ("internal", "nvidia")


def test_the_aa_mode_is_a_control(python_run):
    summary, _ = python_run
    for probe in ("py.ctx.get_current", "py.launch.empty_kernel"):
        aa = paired(summary, probe)["aa"]
        assert (aa["own"], aa["other"], aa["same_address"], aa["control"]) == (
            "internal", "internal", True, True)
        # Whether it reads `same` is a statistical outcome, shown on the GPU (reports/runs); on a
        # shared 2-core CI machine one 5 ms round can read either way, so only what is certain
        # here is asserted: it is judged, and it sets its probe's method floor.
        assert aa["verdict"] in ("same", "ambiguous", "slower", "faster")
        floor = {f["probe"]: f for f in summary["latency"]["floors"]}[probe]
        assert floor["controls"] == ["aa"]
        assert floor["floor"] == pytest.approx(max(aa["ratio"], 1 / aa["ratio"]) - 1)


def test_a_numba_that_fell_back_is_reported_and_never_timed_as_nvidia(python_run):
    summary, records = python_run
    fell = "nv=1,PYPROBE_FAKE_CUDA=0"
    (config,) = [r["config"] for r in records if r.get("type") == "latency_cell"
                 and r.get("process") == "python" and r["cell"] == fell]
    assert (config["binding"], config["requested_binding"], config["fallback"]) == (
        "internal", "nvidia", True)
    assert "CUDA Python bindings requested" in config["fallback_reason"]
    entry = paired(summary, "py.ctx.get_current")[fell]
    assert (entry["own"], entry["fallback"], entry["requested"]) == ("internal", True, "nvidia")
    for c in summary["latency"]["comparisons"]:
        if c["probe"].startswith("py.") and fell in (c["a"], c["b"]):
            assert (c["a_backend"] if c["a"] == fell else c["b_backend"]) == "internal"
    # The C++ probe of the same cell still runs the nvidia backend it asked for.
    cpp = paired(summary, "ctx.get_current")[fell]
    assert cpp["own"] == "nvidia"


ONE_CELL = """[matrix]
name = "pyprobe-errors"
description = "a Python probe process that cannot run"
cases = ["binding.config.effective"]

[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]

[latency]
probes = ["py.ctx.get_current"]
rounds = 1
max_rounds = 1
min_time_s = 0.005
"""


@pytest.mark.parametrize("setting, message", [
    ('python_requires = ["no_such_module_here"]',
     "the matrix requires the Python module no_such_module_here, which does not import"),
    ('python_interpreter = "{matrix_dir}/broken-python"',
     "python probe: the process ended before it started (exit code 1"),
    ('python_interpreter = "no-such-python-here"',
     "python_interpreter 'no-such-python-here' is not found on the cell's PATH"),
])
def test_a_python_that_cannot_run_is_the_cells_named_latency_error(tmp_path, setting, message):
    sim()
    broken = tmp_path / "broken-python"
    broken.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import no_such_module_either'\n")
    broken.chmod(0o755)
    summary, _ = run_matrix(tmp_path, ONE_CELL + setting + "\n")
    errors = summary["latency"]["errors"]
    assert len(errors) == 1 and message in errors[0]["message"], errors
    assert errors[0]["cell"] == "nv=0"
    # Not green over nothing: the cell's probe process is a named cell_error problem of the verdict.
    problems = [p for p in summary["problems"] if p["kind"] == "cell_error" and p["cell"] == "nv=0"]
    assert [p["message"] for p in problems] == ["latency probe process: " + errors[0]["message"]]
    assert summary["verdict"] != "EQUIVALENT"


def calibrate(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, dict]:
    shim = bin_dir() / "libcuparity_fault_shim.so"
    if not shim.is_file():
        pytest.skip("no fault shim built")
    proc = subprocess.run([str(bin_dir() / "cuparity"), "calibrate", "--probe",
                           "py.ctx.get_current", "--target", str(sim()), "--out",
                           str(tmp_path / "cal"), "--min-time", "0.02", "--delays", "50",
                           "--rounds", "1"], env=clean_env(**env), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    (report,) = json.loads((tmp_path / "cal" / "calibrate.json").read_text())["probes"]
    return proc, report


def test_calibrate_slows_the_python_ctypes_and_cuda_bindings_paths(tmp_path):
    """`cuparity calibrate --probe py.*`: ctypes through the symbol (dlsym) against ctypes through
    cuGetProcAddress's pointer (proc), behind the fault shim; and cuda.bindings against itself,
    direct's calls behind the probe's spin (bindings). A 50 % delay on any path reads as that side
    slower: a delay that large is far outside the simulated driver's noise, and a spin never ends
    before its time."""
    proc, report = calibrate(tmp_path, PYTHONPATH=FAKES, PYPROBE_FAKE_CUDA="1")
    assert report["probe"] == "py.ctx.get_current" and report["cost_ns"] > 0
    assert report["symbols"] == ["cuCtxGetCurrent"]
    rows = {r["cell"]: r for r in report["rows"]}
    assert rows["aa"]["same_address"] is True
    assert rows["proc+50%"]["verdict"] == "slower" and rows["dlsym+50%"]["verdict"] == "faster"
    assert report["smallest"]["proc"]["delay_pct"] == 50
    # The bindings path: its own A/A, its delay a share of cuda.bindings' own cost, the spin the
    # probe measured beside it, and no shim fault (the pointer is the same for both series).
    assert "bindings_error" not in report and report["bindings_cost_ns"] > 0
    assert rows["aa-bindings"]["same_address"] is True
    delayed = rows["bindings+50%"]
    assert (delayed["path"], delayed["faults"], delayed["same_address"]) == ("bindings", "", False)
    assert delayed["delay_ns"] == round(report["bindings_cost_ns"] / 2)
    assert delayed["actual_ns"] > 0 and delayed["verdict"] == "slower"
    assert report["smallest"]["bindings"]["delay_pct"] == 50
    assert "bindings path: cuda.bindings costs" in proc.stdout


def test_calibrate_names_a_cuda_bindings_path_it_cannot_time(tmp_path):
    proc, report = calibrate(tmp_path)
    assert "does not import here" in report["bindings_error"]
    assert report["bindings_cost_ns"] is None and "bindings" not in report["smallest"]
    assert {r["cell"] for r in report["rows"]} == {"aa", "proc+50%", "dlsym+50%"}
    assert "bindings path: not calibrated: python probe: CUPARITY_PYPROBE_OTHER=bindings" in (
        proc.stdout)


def test_a_delay_is_read_only_in_the_bindings_mode():
    for env, message in (({}, "a delay is read only with CUPARITY_PYPROBE_OTHER=bindings"),
                         ({"CUPARITY_PYPROBE_OTHER": "bindings"}, "want whole nanoseconds")):
        proc = subprocess.run([sys.executable, str(SCRIPT), "--events-fd", "1", "--probe",
                               "py.ctx.get_current"],
                              env=clean_env(NUMBA_CUDA_DRIVER=str(sim()),
                                            CUPARITY_PYPROBE_DELAY_NS="-5", **env),
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        (event,) = [json.loads(line) for line in proc.stdout.splitlines()]
        assert event["event"] == "cell_error" and message in event["message"]


def test_python_path_rows_set_each_py_probe_against_its_cpp_twin(python_run):
    """latency.python_path: py.ctx.get_current against ctx.get_current, per cell and binding, matched
    by what each process really used; py.launch.empty_kernel has no C++ twin in this run."""
    summary, records = python_run
    rows = summary["latency"]["python_path"]
    assert rows and {r["probe"] for r in rows} == {"py.ctx.get_current"}
    python_binding = {r["cell"]: r["config"]["binding"] for r in records
                      if r.get("type") == "latency_cell" and r.get("process") == "python"}
    for r in rows:
        assert r["cpp_probe"] == "ctx.get_current"
        assert r["python_binding"] == python_binding[r["cell"]]
        assert r["python_ns"]["median"] - r["cpp_ns"]["median"] == pytest.approx(r["cost_ns"])
    raw = {(r["cell"], r["binding"]) for r in rows if r["path"] == "raw"}
    assert ("nv=0,PYPROBE_FAKE_CUDA=0", "internal") in raw
    # The libraries against the C++ pointer of the binding each calls through, which is the C++
    # process's `other` series where that process used the other binding.
    cpp_binding = {r["cell"]: r["config"]["binding"] for r in records
                   if r.get("type") == "latency_cell" and r.get("process") != "python"}
    libraries = {(r["cell"], r["path"]): r for r in rows if r["path"] in ("cupy", "cuda_core")}
    for cell, own in cpp_binding.items():
        cupy = libraries[(cell, "cupy")]
        assert (cupy["binding"], cupy["python_series"]) == ("internal", f"cupy:{cell}")
        assert cupy["cpp_series"] == ("direct:" if own == "internal" else "other:") + cell
        core = libraries.get((cell, "cuda_core"))
        assert (core is not None) == ("PYPROBE_FAKE_CUDA=0" not in cell)
        if core:
            assert core["binding"] == "nvidia"
            assert core["cpp_series"] == ("direct:" if own == "nvidia" else "other:") + cell
