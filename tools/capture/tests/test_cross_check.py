"""tools/capture/cross_check.py: the package capture of a process against `cuparity capture` of the
same process, with the test doubles on the simulated driver. Needs the built cuparity beside the
simulated driver ($CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin, else build/bin); skipped
without them, naming the folder."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

CAPTURE_DIR = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "cross_check_make_fixtures", CAPTURE_DIR / "fixtures" / "make_fixtures.py")
make_fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_fixtures)
CROSS_CHECK = CAPTURE_DIR / "cross_check.py"


@pytest.fixture(scope="module")
def tools() -> tuple:
    driver = make_fixtures.find_simdriver()
    cuparity = make_fixtures.bin_dir() / "cuparity"
    if driver is None or not cuparity.is_file():
        pytest.skip(f"no simulated driver or cuparity in {make_fixtures.bin_dir()}: scripts/build")
    return cuparity, driver


def both_maps(tmp_path, tools, package, **variables):
    """(package map, process map) of one run of cuparity_capture.py under `cuparity capture`."""
    cuparity, driver = tools
    env = make_fixtures.double_env(driver, NUMBA_CUDA_DRIVER=str(driver), PATH="/usr/bin:/bin",
                                   **variables)
    pkg, proc = tmp_path / "package.json", tmp_path / "process.json"
    run = subprocess.run(
        [str(cuparity), "capture", "--out", str(proc), "--", sys.executable,
         str(make_fixtures.CAPTURE), "--package", package, "--out", str(pkg)],
        env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return pkg, proc


def cross_check(a, b):
    return subprocess.run([sys.executable, str(CROSS_CHECK), str(a), str(b)],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("package,variable,value", [
    ("cuda.bindings", "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0"),
    ("cuda.bindings", "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1"),
    ("numba", "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "1"),
])
def test_the_universal_capture_sees_every_pointer_the_package_holds(tmp_path, tools, package,
                                                                    variable, value):
    pkg, proc = both_maps(tmp_path, tools, package, **{variable: value})
    with_pointer = [e for e in json.loads(pkg.read_text())["entries"] if e["symbol"]]
    assert len(with_pointer) > 90
    r = cross_check(pkg, proc)
    assert r.returncode == 0, r.stdout
    assert f"{len(with_pointer)} of {len(with_pointer)} functions with a pointer agree" in r.stdout


def test_a_symbol_the_process_did_not_bind_is_named(tmp_path, tools):
    pkg, proc = both_maps(tmp_path, tools, "cuda.bindings",
                          CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="0")
    doc = json.loads(pkg.read_text())
    for e in doc["entries"]:
        if e["raw_name"] == "__cuMemcpyHtoD_v2":
            e["symbol"] = "cuMemcpyHtoD_v2_ptds"
    pkg.write_text(json.dumps(doc))
    r = cross_check(pkg, proc)
    assert r.returncode == 1
    assert "DIFFERS __cuMemcpyHtoD_v2: the package holds cuMemcpyHtoD_v2_ptds, pid " in r.stdout
    assert "bound cuMemcpyHtoD_v2" in r.stdout


def test_a_file_that_is_no_such_map_exits_2(tmp_path, tools):
    pkg, proc = both_maps(tmp_path, tools, "numba", NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM="0")
    r = cross_check(proc, pkg)  # the wrong way round
    assert r.returncode == 2
    assert "schema: expected 'cuparity.binding_map/1'" in r.stderr
