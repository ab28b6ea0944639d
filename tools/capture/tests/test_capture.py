"""tools/capture/cuparity_capture.py against the test doubles (tests/doubles) and the simulated driver.

Every capture runs the script as a subprocess, as on a GPU host, with PYTHONPATH at the doubles and
CUPARITY_FAKE_DRIVER at libcuparity_simdriver.so: the doubles hold real addresses in the simulated
driver, so the names in a map come from dladdr as they do for the real packages. The simulated
driver is found in $CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin, else <repo>/build/bin; without it
the tests that need it are skipped, naming the folder.
"""

from __future__ import annotations

import ctypes
import datetime
import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

CAPTURE_DIR = Path(__file__).resolve().parents[1]
FIXTURES_DIR = CAPTURE_DIR / "fixtures"
REPO = CAPTURE_DIR.parents[1]
ENTRIES_LIST = REPO / "harness" / "driver" / "entries.list"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


capture_module = _load("cuparity_capture_under_test", CAPTURE_DIR / "cuparity_capture.py")
make_fixtures = _load("cuparity_capture_make_fixtures", FIXTURES_DIR / "make_fixtures.py")

TOP_KEYS = ["schema", "package", "python", "environment", "driver", "status", "error", "captured", "entries"]
ENV_KEYS = [
    "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM",
    "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM",
    "NUMBA_CUDA_DRIVER",
    "NUMBA_CUDA_USE_NVIDIA_BINDING",
    "CUDA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
]
ENTRY_KEYS = ["function", "raw_name", "symbol", "library"]

# What the doubles bind besides the entry table: a declared function outside it, which the simulated
# driver exports (as a stub, like every function of the API it does not implement), and a name no
# header declares, so no driver exports it (CUPARITY_SIM_HIDE would not do: it hides a function from
# cuGetProcAddress only, and the doubles bind by dlsym).
EXTRA_FUNCTIONS = ["cuGraphCreate", "cuNotADriverFunction"]
ABSENT_FUNCTION = "cuNotADriverFunction"
PINNED = ("cuCtxGetDevice", "cuCtxSynchronize")
PER_THREAD_SUFFIXES = ("_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz")


def table_names() -> list:
    """The entry names of harness/driver/entries.list (the source of the generated table the
    doubles read), parsed here independently of the doubles."""
    lines = (line.split("#", 1)[0].strip() for line in ENTRIES_LIST.read_text(encoding="utf-8").splitlines())
    return [line.split("=")[0].strip() for line in lines if line]


def probe(name: str, per_thread: bool) -> list:
    """Numba's _find_api candidates, which both doubles follow (cuCtxCreate aside)."""
    if name in PINNED:
        return [name]
    legacy = [name + "_v2", name]
    return [name + s for s in PER_THREAD_SUFFIXES] + legacy if per_thread else legacy


def first_exported(lib, names):
    return next((n for n in names if hasattr(lib, n)), None)


def expected_symbol(lib, name: str, package: str, per_thread: bool):
    """The symbol the double of package binds for name, None where the driver exports none."""
    if package == "cuda.bindings" and name == "cuCtxCreate" and hasattr(lib, "cuCtxCreate_v4"):
        return "cuCtxCreate_v4"
    return first_exported(lib, probe(name, per_thread))


def has_per_thread_variant(lib, name: str) -> bool:
    return name not in PINNED and any(hasattr(lib, name + s) for s in PER_THREAD_SUFFIXES)


@pytest.fixture(scope="session")
def simdriver() -> Path:
    path = make_fixtures.find_simdriver()
    if path is None:
        pytest.skip(
            f"no {make_fixtures.SIMDRIVER_NAME} in {make_fixtures.bin_dir()}: build it with "
            "scripts/build (or set CUPARITY_BIN_DIR)"
        )
    return path


def _env(driver, **variables):
    env = make_fixtures.double_env(driver, **variables)
    # The interpreter may need it to start; tests that look at it set it themselves.
    if "LD_LIBRARY_PATH" in os.environ and "LD_LIBRARY_PATH" not in variables:
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    return env


def run(tmp_path, package, driver, **variables):
    """(exit status, map or None, stderr) of one capture under the doubles."""
    out = tmp_path / f"{package}.json"
    if out.exists():
        out.unlink()
    proc = make_fixtures.run_capture(package, out, _env(driver, **variables))
    doc = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    return proc.returncode, doc, proc.stderr


def captured_ok(tmp_path, package, driver, **variables) -> dict:
    rc, doc, stderr = run(tmp_path, package, driver, **variables)
    assert rc == 0, stderr
    assert doc["status"] == "ok", doc["error"]
    assert "Traceback" not in stderr
    return doc


def nothing_captured(rc: int, stderr: str) -> None:
    """A map that records a failure is written, and the exit says nothing was captured (issue 47:
    `capture && audit` went on after an exit 0)."""
    assert rc == 1, stderr
    assert "nothing captured" in stderr, stderr
    assert "Traceback" not in stderr


def by_raw(doc) -> dict:
    return {e["raw_name"]: e for e in doc["entries"]}


def by_function(doc) -> dict:
    entries = {}
    for e in doc["entries"]:
        assert e["function"] not in entries, f"{e['function']} twice"
        entries[e["function"]] = e
    return entries


def check_well_formed(doc: dict) -> None:
    assert list(doc) == TOP_KEYS
    assert doc["schema"] == "cuparity.binding_map/1"
    assert list(doc["package"]) == ["kind", "name", "version"]
    assert doc["package"]["kind"] in ("cuda.bindings", "numba")
    assert isinstance(doc["package"]["name"], str) and doc["package"]["name"]
    assert doc["package"]["version"] is None or isinstance(doc["package"]["version"], str)
    assert list(doc["python"]) == ["version", "executable"]
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", doc["python"]["version"])
    assert isinstance(doc["python"]["executable"], str)
    assert list(doc["environment"]) == ENV_KEYS
    assert all(v is None or isinstance(v, str) for v in doc["environment"].values())
    assert list(doc["driver"]) == ["path", "version"]
    assert doc["driver"]["path"] is None or isinstance(doc["driver"]["path"], str)
    assert doc["driver"]["version"] is None or type(doc["driver"]["version"]) is int
    assert doc["status"] in ("ok", "import_failed", "load_failed")
    assert isinstance(doc["error"], str)
    assert (doc["error"] == "") == (doc["status"] == "ok")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["captured"])
    datetime.datetime.strptime(doc["captured"], "%Y-%m-%dT%H:%M:%SZ")
    assert isinstance(doc["entries"], list)
    if doc["status"] != "ok":
        assert doc["entries"] == []
        assert doc["driver"] == {"path": None, "version": None}
    for e in doc["entries"]:
        assert list(e) == ENTRY_KEYS
        assert re.fullmatch(r"cu[A-Za-z0-9]+", e["function"]), e
        assert e["function"] == capture_module.base_function_name(e["raw_name"])
        assert e["symbol"] is None or capture_module.base_function_name(e["symbol"]) == e["function"], e
        assert e["library"] is None or isinstance(e["library"], str)
        if e["library"] is None:
            assert e["symbol"] is None
    keys = [(e["function"], e["raw_name"]) for e in doc["entries"]]
    assert keys == sorted(keys)
    assert len({e["raw_name"] for e in doc["entries"]}) == len(doc["entries"])


def same_file(a: str, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


# --- the entry-name normalisation and dladdr, in process --------------------------------------


@pytest.mark.parametrize(
    "raw, base",
    [
        ("__cuMemcpyHtoD_v2", "cuMemcpyHtoD"),
        ("__cuCtxCreate_v4", "cuCtxCreate"),
        ("__cuStreamSynchronize", "cuStreamSynchronize"),
        ("__cuStreamGetCaptureInfo_v3", "cuStreamGetCaptureInfo"),
        ("__cuMemcpy3DBatchAsync_v2", "cuMemcpy3DBatchAsync"),
        ("__cuGLGetDevices_v2", "cuGLGetDevices"),
        ("cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoD"),
        ("cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync"),
        ("cuLaunchKernel_ptsz", "cuLaunchKernel"),
        ("cuMemAlloc", "cuMemAlloc"),
        ("cuMemcpy3D_v2", "cuMemcpy3D"),
        ("cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
        ("cuMemcpy2DUnaligned_v2", "cuMemcpy2DUnaligned"),
    ],
)
def test_base_function_name(raw, base):
    assert capture_module.base_function_name(raw) == base


def test_describe_address_needs_an_exact_symbol(simdriver):
    lib = ctypes.CDLL(str(simdriver))
    address = ctypes.cast(lib.cuMemcpyHtoD_v2_ptds, ctypes.c_void_p).value
    symbol, library = capture_module.describe_address(address)
    assert symbol == "cuMemcpyHtoD_v2_ptds"
    assert same_file(library, simdriver)
    # Inside the function: the library is known, but no exported symbol starts there.
    assert capture_module.describe_address(address + 1) == (None, library)
    assert capture_module.describe_address(0) == (None, None)


# --- cuda.bindings ----------------------------------------------------------------------------


def test_cuda_bindings_map_is_well_formed(tmp_path, simdriver):
    doc = captured_ok(tmp_path, "cuda.bindings", simdriver, CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="0")
    check_well_formed(doc)
    assert doc["package"] == {"kind": "cuda.bindings", "name": "cuda.bindings", "version": "13.0.0+cuparity.double.fixed"}
    assert doc["python"]["executable"] == sys.executable
    assert doc["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] == "0"
    assert doc["environment"]["NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM"] is None
    assert same_file(doc["driver"]["path"], simdriver)
    assert doc["driver"]["version"] == 13000
    # One entry per key of _inspect_function_pointers(), the key kept as raw_name: every entry of
    # entries.inl plus EXTRA_FUNCTIONS, keyed "__" plus the legacy symbol the driver exports.
    lib = ctypes.CDLL(str(simdriver))
    expected = []
    for name in table_names() + EXTRA_FUNCTIONS:
        symbol = expected_symbol(lib, name, "cuda.bindings", False)
        expected.append("__" + (symbol or name))
    assert len(expected) == len(set(expected)) == len(table_names()) + len(EXTRA_FUNCTIONS)
    assert sorted(by_raw(doc)) == sorted(expected)
    assert len(doc["entries"]) == len(expected)
    assert {"__cuInit", "__cuCtxCreate_v4", "__cuMemAlloc_v2", "__cuMemcpyHtoD_v2", "__cuStreamSynchronize",
            "__cuCtxGetDevice", "__cuCtxSynchronize", "__cuMemPrefetchAsync_v2", "__cuGraphCreate",
            "__cuNotADriverFunction"} <= set(expected)


def test_fixed_double_binds_legacy_symbols_for_0(tmp_path, simdriver):
    doc = captured_ok(tmp_path, "cuda.bindings", simdriver, CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="0")
    f = by_function(doc)
    assert f["cuMemcpyHtoD"]["raw_name"] == "__cuMemcpyHtoD_v2"
    assert f["cuMemcpyHtoD"]["symbol"] == "cuMemcpyHtoD_v2"
    assert f["cuMemcpyHtoDAsync"]["symbol"] == "cuMemcpyHtoDAsync_v2"
    assert f["cuStreamSynchronize"]["symbol"] == "cuStreamSynchronize"
    assert f["cuLaunchKernel"]["symbol"] == "cuLaunchKernel"
    assert f["cuCtxCreate"] == {
        "function": "cuCtxCreate", "raw_name": "__cuCtxCreate_v4", "symbol": "cuCtxCreate_v4",
        "library": f["cuCtxCreate"]["library"],
    }
    for e in doc["entries"]:
        if e["symbol"] is not None:
            assert same_file(e["library"], simdriver), e


def test_buggy_double_binds_per_thread_symbols_for_0(tmp_path, simdriver):
    doc = captured_ok(
        tmp_path, "cuda.bindings", simdriver,
        CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="0", CUPARITY_FAKE_PTDS_PARSE="buggy",
    )
    check_well_formed(doc)
    assert doc["package"]["version"] == "13.0.0+cuparity.double.buggy"
    f = by_function(doc)
    assert f["cuMemcpyHtoD"]["raw_name"] == "__cuMemcpyHtoD_v2"
    assert f["cuMemcpyHtoD"]["symbol"] == "cuMemcpyHtoD_v2_ptds"
    assert f["cuMemcpyHtoDAsync"]["symbol"] == "cuMemcpyHtoDAsync_v2_ptsz"
    assert f["cuStreamSynchronize"]["symbol"] == "cuStreamSynchronize_ptsz"
    assert f["cuCtxCreate"]["symbol"] == "cuCtxCreate_v4"  # no per-thread variant


@pytest.mark.parametrize("parse", ["fixed", "buggy"])
@pytest.mark.parametrize("value, per_thread", [(None, False), ("1", True), ("2", True)])
def test_ptds_variable_as_each_double_reads_it(tmp_path, simdriver, parse, value, per_thread):
    variables = {"CUPARITY_FAKE_PTDS_PARSE": parse}
    if value is not None:
        variables["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = value
    doc = captured_ok(tmp_path, "cuda.bindings", simdriver, **variables)
    assert doc["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] == value
    expected = "cuMemcpyHtoD_v2_ptds" if per_thread else "cuMemcpyHtoD_v2"
    assert by_function(doc)["cuMemcpyHtoD"]["symbol"] == expected


def test_non_integer_ptds_value_is_import_failed(tmp_path, simdriver):
    rc, doc, stderr = run(tmp_path, "cuda.bindings", simdriver, CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="yes")
    nothing_captured(rc, stderr)
    assert "Traceback" not in stderr
    check_well_formed(doc)
    assert doc["status"] == "import_failed"
    assert doc["error"] == "ValueError: invalid literal for int() with base 10: 'yes'"
    assert doc["entries"] == []
    assert doc["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] == "yes"
    # cuda.bindings itself imported: the version is still known.
    assert doc["package"]["version"] == "13.0.0+cuparity.double.fixed"


def test_driver_that_cannot_load_is_load_failed(tmp_path, simdriver):
    missing = tmp_path / "no-such-libcuda.so.1"
    rc, doc, stderr = run(tmp_path, "cuda.bindings", missing)
    nothing_captured(rc, stderr)
    check_well_formed(doc)
    assert doc["status"] == "load_failed"
    assert doc["error"].startswith(f"RuntimeError: Failed to dlopen {missing}")
    assert doc["entries"] == []


def test_function_the_driver_lacks_has_null_symbol(tmp_path, simdriver):
    assert not hasattr(ctypes.CDLL(str(simdriver)), ABSENT_FUNCTION)
    doc = captured_ok(tmp_path, "cuda.bindings", simdriver)
    f = by_function(doc)
    assert f[ABSENT_FUNCTION] == {
        "function": ABSENT_FUNCTION, "raw_name": "__" + ABSENT_FUNCTION, "symbol": None, "library": None,
    }
    # A declared function outside the entry table that the driver has is bound like the rest.
    assert f["cuGraphCreate"]["raw_name"] == "__cuGraphCreate"
    assert f["cuGraphCreate"]["symbol"] == "cuGraphCreate"
    assert same_file(f["cuGraphCreate"]["library"], simdriver)


def _bindings_tree(root: Path, table_module: str | None) -> Path:
    """A cuda.bindings with its driver table (the double's cydriver) at table_module, or none."""
    package = root / "cuda" / "bindings"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "13.5.0+cuparity.layout"\n', encoding="utf-8")
    if table_module is not None:
        *folders, name = table_module.split(".")[2:]
        target = package.joinpath(*folders)
        target.mkdir(parents=True)
        (target / "__init__.py").write_text("", encoding="utf-8")
        # The double itself, loaded by path: it finds entries.inl from its own location, which a
        # copy in tmp_path would not be.
        source = make_fixtures.DOUBLES / "cuda" / "bindings" / "_bindings" / "cydriver.py"
        (target / f"{name}.py").write_text(
            "import importlib.util as _util\n"
            f"_spec = _util.spec_from_file_location('cuparity_layout_cydriver', {str(source)!r})\n"
            "_double = _util.module_from_spec(_spec)\n"
            "_spec.loader.exec_module(_double)\n"
            "_inspect_function_pointers = _double._inspect_function_pointers\n"
            "_inspect_function_pointer = _double._inspect_function_pointer\n",
            encoding="utf-8",
        )
    return root


def test_newer_layout_internal_driver_is_used(tmp_path, simdriver):
    # cuda.bindings 13.5 has no _bindings.cydriver; its table is cuda.bindings._internal.driver.
    tree = _bindings_tree(tmp_path / "tree", "cuda.bindings._internal.driver")
    reference = captured_ok(tmp_path, "cuda.bindings", simdriver, CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="1")
    doc = captured_ok(
        tmp_path, "cuda.bindings", simdriver, PYTHONPATH=str(tree), CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="1"
    )
    check_well_formed(doc)
    assert doc["package"]["version"] == "13.5.0+cuparity.layout"
    assert doc["entries"] == reference["entries"]
    assert by_function(doc)["cuMemcpyHtoD"]["symbol"] == "cuMemcpyHtoD_v2_ptds"


def test_bindings_without_a_driver_table_is_import_failed(tmp_path, simdriver):
    tree = _bindings_tree(tmp_path / "tree", None)
    rc, doc, stderr = run(tmp_path, "cuda.bindings", simdriver, PYTHONPATH=str(tree))
    nothing_captured(rc, stderr)
    check_well_formed(doc)
    assert doc["status"] == "import_failed"
    assert doc["error"] == "ModuleNotFoundError: No module named 'cuda.bindings._bindings'"
    assert doc["package"]["version"] == "13.5.0+cuparity.layout"


def test_driver_version_comes_from_the_library(tmp_path, simdriver):
    doc = captured_ok(tmp_path, "cuda.bindings", simdriver, CUPARITY_SIM_DRIVER_VERSION="12080")
    assert doc["driver"]["version"] == 12080


def _importable_without_doubles(module: str) -> bool:
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True)
    return proc.returncode == 0


@pytest.mark.parametrize("package, module", [("cuda.bindings", "cuda.bindings"), ("numba", "numba")])
def test_missing_package_is_import_failed(tmp_path, package, module):
    if _importable_without_doubles(module):
        pytest.skip(f"{module} is installed for {sys.executable}, so it is not missing here")
    out = tmp_path / "missing.json"
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONPATH": str(tmp_path)}
    proc = make_fixtures.run_capture(package, out, env)
    nothing_captured(proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    check_well_formed(doc)
    assert doc["status"] == "import_failed"
    assert doc["error"] == f"ModuleNotFoundError: No module named '{module.split('.')[0]}'"
    assert doc["package"] == {"kind": package, "name": package, "version": None}
    assert doc["entries"] == []


def test_environment_is_recorded(tmp_path, simdriver):
    doc = captured_ok(
        tmp_path, "cuda.bindings", simdriver,
        LD_LIBRARY_PATH="/opt/example/lib", CUDA_VISIBLE_DEVICES="0,1", NUMBA_CUDA_USE_NVIDIA_BINDING="0",
    )
    env = doc["environment"]
    assert env["LD_LIBRARY_PATH"] == "/opt/example/lib"
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert env["NUMBA_CUDA_USE_NVIDIA_BINDING"] == "0"
    assert env["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] is None
    assert env["NUMBA_CUDA_DRIVER"] is None


# --- numba ------------------------------------------------------------------------------------


def test_numba_map_binds_what_find_api_finds(tmp_path, simdriver):
    doc = captured_ok(tmp_path, "numba", simdriver)
    check_well_formed(doc)
    assert doc["package"] == {"kind": "numba", "name": "numba", "version": "0.60.0+cuparity.double"}
    assert same_file(doc["driver"]["path"], simdriver)
    assert doc["driver"]["version"] == 13000
    f = by_function(doc)
    # One entry per API_PROTOTYPES name, which is already the base name.
    assert all(e["raw_name"] == e["function"] for e in doc["entries"])
    assert f["cuCtxCreate"]["symbol"] == "cuCtxCreate_v2"
    assert f["cuMemAlloc"]["symbol"] == "cuMemAlloc_v2"
    assert f["cuMemcpyHtoD"]["symbol"] == "cuMemcpyHtoD_v2"
    assert f["cuStreamSynchronize"]["symbol"] == "cuStreamSynchronize"
    assert f["cuInit"]["symbol"] == "cuInit"
    assert f["cuGraphCreate"]["symbol"] == "cuGraphCreate"
    # numba's absent_function stand-in: no pointer.
    assert f[ABSENT_FUNCTION] == {"function": ABSENT_FUNCTION, "raw_name": ABSENT_FUNCTION, "symbol": None, "library": None}
    for e in doc["entries"]:
        if e["symbol"] is not None:
            assert same_file(e["library"], simdriver), e


@pytest.mark.parametrize("value, per_thread", [("0", False), ("1", True), ("yes", False)])
def test_numba_ptds_variable(tmp_path, simdriver, value, per_thread):
    doc = captured_ok(tmp_path, "numba", simdriver, NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=value)
    assert doc["environment"]["NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM"] == value
    f = by_function(doc)
    assert f["cuMemcpyHtoD"]["symbol"] == ("cuMemcpyHtoD_v2_ptds" if per_thread else "cuMemcpyHtoD_v2")
    assert f["cuStreamSynchronize"]["symbol"] == ("cuStreamSynchronize_ptsz" if per_thread else "cuStreamSynchronize")
    assert f["cuCtxCreate"]["symbol"] == "cuCtxCreate_v2"


@pytest.mark.parametrize("value, per_thread", [(None, False), ("1", True)])
def test_numba_map_covers_the_entry_table(tmp_path, simdriver, value, per_thread):
    variables = {} if value is None else {"NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM": value}
    doc = captured_ok(tmp_path, "numba", simdriver, **variables)
    check_well_formed(doc)
    lib = ctypes.CDLL(str(simdriver))
    f = by_function(doc)
    names = table_names()
    assert sorted(f) == sorted(names + EXTRA_FUNCTIONS)
    for name in names:
        # cuCtxCreate probes like the rest: cuCtxCreate_v2, not cuda.bindings' _v4.
        assert f[name]["symbol"] == expected_symbol(lib, name, "numba", per_thread), name
    assert f["cuCtxCreate"]["symbol"] == "cuCtxCreate_v2"
    assert f["cuCtxGetDevice"]["symbol"] == "cuCtxGetDevice"  # pinned: not CUDA 13's cuCtxGetDevice_v2
    assert f["cuCtxSynchronize"]["symbol"] == "cuCtxSynchronize"


def test_numba_prototypes_follow_the_entry_table(simdriver):
    env = _env(simdriver)
    code = (
        "import json\n"
        "from numba.cuda.cudadrv import drvapi\n"
        "print(json.dumps({k: [t.__name__ for t in v] for k, v in drvapi.API_PROTOTYPES.items()}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    prototypes = json.loads(proc.stdout)
    assert list(prototypes) == table_names() + EXTRA_FUNCTIONS
    assert prototypes["cuCtxSynchronize"] == ["c_int"]
    size_t = ctypes.c_size_t.__name__
    assert prototypes["cuMemcpyHtoD"] == ["c_int", size_t, "c_void_p", size_t]
    assert prototypes["cuGetErrorName"] == ["c_int", "c_int", "LP_c_char_p"]
    assert len(prototypes["cuLaunchKernel"]) == 12


def test_numba_driver_from_numba_cuda_driver(tmp_path, simdriver):
    # The double, like numba, prefers NUMBA_CUDA_DRIVER to anything else.
    doc = captured_ok(tmp_path, "numba", None, NUMBA_CUDA_DRIVER=str(simdriver))
    assert doc["environment"]["NUMBA_CUDA_DRIVER"] == str(simdriver)
    assert same_file(doc["driver"]["path"], simdriver)


def test_numba_driver_that_cannot_load_is_load_failed(tmp_path, simdriver):
    missing = tmp_path / "no-such-libcuda.so"
    rc, doc, stderr = run(tmp_path, "numba", None, NUMBA_CUDA_DRIVER=str(missing))
    nothing_captured(rc, stderr)
    check_well_formed(doc)
    assert doc["status"] == "load_failed"
    assert doc["error"].startswith(f"CudaSupportError: Driver not found: {missing}")
    assert doc["package"]["version"] == "0.60.0+cuparity.double"


# --- the command line and the output file -----------------------------------------------------


def _capture_cli(*args, env=None):
    env = env if env is not None else make_fixtures.double_env(None)
    return subprocess.run(
        [sys.executable, str(make_fixtures.CAPTURE), *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "args",
    [[], ["--package", "cuda.bindings"], ["--out", "x.json"], ["--package", "cupy", "--out", "x.json"]],
)
def test_bad_usage_exits_2(tmp_path, args):
    proc = _capture_cli(*[a if a != "x.json" else str(tmp_path / a) for a in args])
    assert proc.returncode == 2
    assert "usage:" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_out_in_a_missing_folder_exits_2(tmp_path):
    out = tmp_path / "no" / "such" / "folder" / "map.json"
    proc = _capture_cli("--package", "cuda.bindings", "--out", str(out))
    assert proc.returncode == 2
    assert str(out) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_out_that_is_a_folder_exits_2(tmp_path):
    out = tmp_path / "a-folder"
    out.mkdir()
    proc = _capture_cli("--package", "numba", "--out", str(out))
    assert proc.returncode == 2
    assert str(out) in proc.stderr
    assert list(out.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder"]


def test_map_replaces_an_old_file_and_leaves_no_temporary(tmp_path, simdriver):
    out = tmp_path / "cuda.bindings.json"
    out.write_text("old\n", encoding="utf-8")
    doc = captured_ok(tmp_path, "cuda.bindings", simdriver)  # run() removes out first, so again:
    out.write_text("old\n", encoding="utf-8")
    proc = make_fixtures.run_capture("cuda.bindings", out, _env(simdriver))
    assert proc.returncode == 0, proc.stderr
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["entries"] == doc["entries"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cuda.bindings.json"]
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_map_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    out = tmp_path / "map.json"
    out.write_text("old\n", encoding="utf-8")

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(capture_module.os, "replace", refuse)
    with pytest.raises(OSError):
        capture_module.write_map({"schema": "x"}, str(out))
    assert out.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.json"]


# --- the committed example maps ---------------------------------------------------------------


@pytest.mark.parametrize("name, symbol", [("fixed-ptds0.json", "cuMemcpyHtoD_v2"), ("buggy-ptds0.json", "cuMemcpyHtoD_v2_ptds")])
def test_fixture_is_a_neutral_map(name, symbol):
    doc = json.loads((FIXTURES_DIR / name).read_text(encoding="utf-8"))
    check_well_formed(doc)
    assert doc["status"] == "ok"
    assert doc["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] == "0"
    assert doc["driver"] == {"path": "{driver}", "version": 13000}
    assert doc["python"]["executable"] == "{python}"
    assert {e["library"] for e in doc["entries"]} == {"{driver}", None}
    assert by_function(doc)["cuMemcpyHtoD"]["symbol"] == symbol
    assert '"/' not in json.dumps(doc)  # no absolute path left


@pytest.mark.parametrize("name", sorted(make_fixtures.FIXTURES))
def test_fixture_matches_what_the_script_makes_now(tmp_path, simdriver, name):
    committed = json.loads((FIXTURES_DIR / name).read_text(encoding="utf-8"))
    fresh = make_fixtures.generate(make_fixtures.FIXTURES[name], simdriver, tmp_path)
    for doc in (committed, fresh):
        doc.pop("captured")
        doc["python"].pop("version")
    assert fresh == committed, f"run python3 {FIXTURES_DIR / 'make_fixtures.py'} to regenerate {name}"


@pytest.mark.parametrize("name, per_thread", [("fixed-ptds0.json", False), ("buggy-ptds0.json", True)])
def test_fixture_covers_the_entry_table(simdriver, name, per_thread):
    # Every entry of entries.inl is in the map, with the symbol the double's probing lands on: never
    # null unless the simulated driver exports none of the names probed.
    doc = json.loads((FIXTURES_DIR / name).read_text(encoding="utf-8"))
    lib = ctypes.CDLL(str(simdriver))
    f = by_function(doc)
    names = table_names()
    assert len(names) > 90
    assert sorted(f) == sorted(names + EXTRA_FUNCTIONS)
    assert len(doc["entries"]) == len(names) + len(EXTRA_FUNCTIONS)
    for name_ in names:
        expected = expected_symbol(lib, name_, "cuda.bindings", per_thread)
        if expected is None:
            assert not any(hasattr(lib, c) for c in probe(name_, per_thread)), name_
        assert f[name_]["symbol"] == expected, name_
        assert f[name_]["library"] == (None if expected is None else "{driver}"), name_
    assert f["cuGraphCreate"]["symbol"] == "cuGraphCreate" and f["cuGraphCreate"]["library"] == "{driver}"
    assert f[ABSENT_FUNCTION]["symbol"] is None and not hasattr(lib, ABSENT_FUNCTION)


def test_fixtures_differ_exactly_in_the_per_thread_symbols(simdriver):
    # Under "0" the fixed parse binds the legacy symbol of every entry the driver has a per-thread
    # variant of, the buggy parse that variant; the keys are the same (the legacy versioned name).
    fixed = by_function(json.loads((FIXTURES_DIR / "fixed-ptds0.json").read_text(encoding="utf-8")))
    buggy = by_function(json.loads((FIXTURES_DIR / "buggy-ptds0.json").read_text(encoding="utf-8")))
    lib = ctypes.CDLL(str(simdriver))
    with_variant = [n for n in table_names() if has_per_thread_variant(lib, n)]
    assert {"cuMemcpyHtoD", "cuMemcpyHtoDAsync", "cuStreamSynchronize", "cuLaunchKernel", "cuMemPrefetchAsync"} <= set(with_variant)
    per_thread = re.compile(r".*_(?:ptds|ptsz)")
    for name in table_names():
        assert fixed[name]["raw_name"] == buggy[name]["raw_name"], name
        assert not per_thread.fullmatch(fixed[name]["symbol"] or ""), fixed[name]
        if name in with_variant:
            assert fixed[name]["symbol"] == first_exported(lib, probe(name, False)), name
            assert fixed[name]["symbol"] in probe(name, False), name
            assert per_thread.fullmatch(buggy[name]["symbol"] or ""), buggy[name]
            assert buggy[name]["symbol"] in probe(name, True), name
        else:
            assert buggy[name]["symbol"] == fixed[name]["symbol"], name


# --- the entry table the doubles read ---------------------------------------------------------


def test_doubles_read_the_entry_table(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ among the doubles
    entries = _load("cuparity_capture_double_entries", make_fixtures.DOUBLES / "_cuparity_entries.py")
    generated = make_fixtures.bin_dir().resolve().parent / entries.ENTRIES_RELATIVE
    assert entries.ENTRIES_PATH == generated
    assert list(entries.NAMES) == table_names()
    by_name = {e.name: e for e in entries.ENTRIES}
    assert by_name["cuCtxCreate"].abi == 3020
    assert by_name["cuCtxSynchronize"].parameters == []
    assert by_name["cuModuleLoadDataEx"].parameters == [
        "CUmodule *", "const void *", "unsigned int", "CUjit_option *", "void **"
    ]
    text = (
        "// CUPARITY_ENTRY(cuCommented, 1, (int))\n"
        "/* CUPARITY_ENTRY(cuBlockComment, 1, ()) */\n"
        "#define CUPARITY_ENTRY(name, abi, params)\n"
        "CUPARITY_ENTRY(cuOne, 2000, ())\n"
        "CUPARITY_ENTRY(  cuTwo ,\n   3020,\n   (CUdeviceptr, const void *,\n    size_t))\n"
        "CUPARITY_ENTRY(cuOne, 2000, ())\n"
    )
    parsed = entries.parse(text)
    assert [(e.name, e.abi, e.parameters) for e in parsed] == [
        ("cuOne", 2000, []), ("cuTwo", 3020, ["CUdeviceptr", "const void *", "size_t"])
    ]


@pytest.mark.parametrize("package", ["cuda.bindings", "numba"])
def test_doubles_without_the_entry_table_say_so(tmp_path, simdriver, package):
    # A copy of the doubles in a checkout that was never built: the generated table is missing.
    root = tmp_path.resolve() / "checkout"
    doubles = root / "tools" / "capture" / "tests" / "doubles"
    shutil.copytree(make_fixtures.DOUBLES, doubles, ignore=shutil.ignore_patterns("__pycache__"))
    rc, doc, stderr = run(tmp_path, package, simdriver, PYTHONPATH=str(doubles), CUPARITY_BIN_DIR="")
    nothing_captured(rc, stderr)
    assert "Traceback" not in stderr
    check_well_formed(doc)
    assert doc["status"] == "import_failed"
    missing = root / "build" / "generated" / "entry_tables" / "include" / "harness" / "driver" / "entries.inl"
    assert doc["error"].startswith(
        f"EntryTableError: cuparity test double: the driver entry table {missing} does not exist"
    ), doc["error"]
    assert "ImportError" not in doc["error"]
    assert doc["entries"] == []


# --- --out must be a regular file or new; the map is valid UTF-8 ---------------------------------


def _special(path: Path, kind: str):
    """Makes path a file of kind (a device node only as root: /dev/null's numbers, in tmp_path)."""
    if kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        (path.parent / "real.json").write_text("the link's own file\n", encoding="utf-8")
        path.symlink_to("real.json")
    elif kind == "dangling-symlink":
        path.symlink_to("nothing-here.json")


def _state(path: Path):
    st = os.lstat(path)
    real = path.parent / "real.json"
    return (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev,
            os.readlink(path) if stat.S_ISLNK(st.st_mode) else None,
            real.read_text(encoding="utf-8") if real.exists() else None)


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink", "dangling-symlink"])
def test_out_that_is_not_a_regular_file_exits_2(tmp_path, kind):
    """Before: the map replaced a device node, a FIFO or a link with a regular file, and exited 0."""
    out = tmp_path / "map.json"
    _special(out, kind)
    before = _state(out)
    proc = _capture_cli("--package", "numba", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert str(out) in proc.stderr and "not a regular file" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _state(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_write_map_refuses_what_is_not_a_regular_file(tmp_path, kind):
    out = tmp_path / "map.json"
    _special(out, kind)
    before = _state(out)
    with pytest.raises(capture_module.OutRefused, match="not a regular file"):
        capture_module.write_map({"schema": "x"}, str(out))
    assert _state(out) == before


def test_the_capture_imports_nothing_of_the_reports():
    text = (CAPTURE_DIR / "cuparity_capture.py").read_text(encoding="utf-8")
    assert "cuparity_reports" not in text


@pytest.mark.parametrize("text, shown", [
    ("0", "0"),
    (os.fsdecode(b"0\xff"), "0\\xff"),
    (os.fsdecode(b"/opt/\xc3/lib:\x80"), "/opt/\\xc3/lib:\\x80"),
    ("lone \ud800 high", "lone \\ud800 high"),
    ("caf\u00e9 \u202e", "caf\u00e9 \u202e"),  # valid text stays as it is
])
def test_visible_text(text, shown):
    assert capture_module.visible_text(text) == shown


def test_bytes_that_are_not_utf8_are_written_visibly(tmp_path):
    """Before: CUDA_VISIBLE_DEVICES=$'0\\xff' was written as "0\\udcff", a lone surrogate, which the
    C++ audit refuses as invalid JSON."""
    out = tmp_path / "map.json"
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONPATH": str(tmp_path / "none"),
           "CUDA_VISIBLE_DEVICES": os.fsdecode(b"0\xff"), "LD_LIBRARY_PATH": os.fsdecode(b"/opt/\xfe\x1b")}
    proc = make_fixtures.run_capture("numba", out, env)
    nothing_captured(proc.returncode, proc.stderr)
    raw = out.read_bytes()
    assert not re.search(rb"\\u[dD][89a-fA-F]", raw), raw
    doc = json.loads(raw.decode("utf-8"))
    assert doc["environment"]["CUDA_VISIBLE_DEVICES"] == "0\\xff"
    assert doc["environment"]["LD_LIBRARY_PATH"] == "/opt/\\xfe\x1b"


def test_the_audit_reads_a_map_of_bytes_that_are_not_utf8(tmp_path, simdriver):
    cuparity = make_fixtures.bin_dir() / "cuparity"
    if not cuparity.is_file():
        pytest.skip(f"no cuparity in {make_fixtures.bin_dir()}")
    doc = captured_ok(tmp_path, "numba", simdriver, CUDA_VISIBLE_DEVICES=os.fsdecode(b"0\xff"))
    assert doc["environment"]["CUDA_VISIBLE_DEVICES"] == "0\\xff"
    audit = subprocess.run([str(cuparity), "audit", "--map", str(tmp_path / "numba.json")],
                           env={**os.environ, "NUMBA_CUDA_DRIVER": str(simdriver)},
                           capture_output=True, text=True, errors="replace", timeout=120)
    assert audit.returncode in (0, 1), audit.stdout + audit.stderr
    assert "not valid JSON" not in audit.stderr


# --- the command in process: the old map never outlives a failed run ------------------------------


def _main_with_doubles(monkeypatch, simdriver, out):
    """main() of the capture in this process (its child Python is real), over the doubles."""
    for name, value in _env(simdriver).items():
        monkeypatch.setenv(name, value)
    return capture_module.main(["--package", "cuda.bindings", "--out", str(out)])


def test_a_failed_write_leaves_no_old_map_behind(tmp_path, monkeypatch, capsys, simdriver):
    """Issue 47: a run that writes no map must not leave an older one to be read as its own."""
    out = tmp_path / "map.json"
    out.write_bytes((FIXTURES_DIR / "fixed-ptds0.json").read_bytes())

    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(capture_module.os, "replace", full)
    assert _main_with_doubles(monkeypatch, simdriver, out) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and str(out) in err
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_run_writes_no_map(tmp_path, monkeypatch, capsys, simdriver):
    out = tmp_path / "map.json"
    out.write_bytes((FIXTURES_DIR / "fixed-ptds0.json").read_bytes())

    real_wait = subprocess.Popen.wait
    calls = []

    def wait(self, timeout=None):  # Ctrl-C in the first wait; the one after the kill returns
        calls.append(self.pid)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real_wait(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", wait)
    assert _main_with_doubles(monkeypatch, simdriver, out) == 130
    assert "interrupted: no map written" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
