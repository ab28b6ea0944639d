"""The Python start-up hook of `cuparity capture` (python_hook/sitecustomize.py), end to end.

Each test captures a Python program with `cuparity --driver sim capture`, the program importing a
fake cuda.bindings (table_double/, installed here into a temporary site-packages with a
cuda_bindings dist-info, its table module resolving four functions through the simulated
driver's cuGetProcAddress_v2). The map must hold the table the package reported, checked against
what the capture saw it bind; the hook must leave the program as it was: its exit status, its
own sitecustomize, its sys.path. The binaries are found in $CUPARITY_BIN_DIR, else
$CUPARITY_BUILD_DIR/bin, else <repo>/build/bin; without them the tests are skipped, naming it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DOUBLE = HERE / "table_double"
VERSION = "13.9.0"


def _bin_dir() -> Path:
    if os.environ.get("CUPARITY_BIN_DIR"):
        return Path(os.environ["CUPARITY_BIN_DIR"])
    if os.environ.get("CUPARITY_BUILD_DIR"):
        return Path(os.environ["CUPARITY_BUILD_DIR"]) / "bin"
    return REPO / "build" / "bin"


@pytest.fixture(scope="session")
def bins() -> Path:
    b = _bin_dir()
    for name in ("cuparity", "libcapture_fake_cydriver.so", "libcuparity_simdriver.so", "python-hook/sitecustomize.py"):
        if not (b / name).exists():
            pytest.skip(f"no {name} in {b}: build it with scripts/build (or set CUPARITY_BIN_DIR)")
    return b


@pytest.fixture
def site(tmp_path, bins) -> Path:
    """site-packages holding the fake cuda.bindings, owned by a cuda_bindings dist-info."""
    site = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    shutil.copytree(DOUBLE / "cuda", site / "cuda")
    shutil.copy(bins / "libcapture_fake_cydriver.so", site / "cuda/bindings/_internal/libfake_table.so")
    info = site / f"cuda_bindings-{VERSION}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: cuda-bindings\nVersion: {VERSION}\n\n")
    files = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files + [f"{info.name}/RECORD"]))
    return site


def capture(tmp_path, bins, site, code, *options, pythonpath=None, **variables):
    """(completed process, map) of `cuparity --driver sim capture [options] -- python3 -c code`."""
    out = tmp_path / "map.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_PYTHON", "CUPARITY_", "PYTHON"))}
    env.update(PYTHONPATH=pythonpath or str(site), CUPARITY_FAKE_DRIVER=str(bins / "libcuparity_simdriver.so"))
    env.update(variables)
    argv = [str(bins / "cuparity"), "--driver", "sim", "capture", "--out", str(out), *options]
    ran = subprocess.run([*argv, "--", sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    return ran, (json.loads(out.read_text()) if out.exists() else None)


def audit(bins, tmp_path):
    out = tmp_path / "audit.json"
    ran = subprocess.run(
        [str(bins / "cuparity"), "--driver", "sim", "audit", "--map", str(tmp_path / "map.json"), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return ran, json.loads(out.read_text()) if out.exists() else None


BIND = "import cuda.bindings.driver as d; d.cuInit(0)"


def only_table(doc):
    assert len(doc["package_tables"]) == 1, doc["package_tables"]
    return doc["package_tables"][0]


def test_the_table_is_recorded_beside_what_the_capture_saw(tmp_path, bins, site):
    ran, doc = capture(tmp_path, bins, site, BIND)
    assert ran.returncode == 0, ran.stderr
    t = only_table(doc)
    assert (t["package"], t["version"], t["module"], t["status"]) == (
        "cuda-bindings",
        VERSION,
        "cuda.bindings._internal.driver",
        "ok",
    )
    assert t["file"].endswith("/cuda/bindings/_internal/driver.py")
    assert t["functions"]["cuMemcpyHtoD_v2"]["symbol"] == "cuMemcpyHtoD_v2"
    assert t["functions"]["cuStreamSynchronize"]["library"].endswith("libcuparity_simdriver.so")
    # The capture's own cuGetProcAddress wrapper is what the package holds for cuGetProcAddress.
    assert t["functions"]["cuGetProcAddress_v2"]["library"].endswith("libcuparity_audit.so")
    packages = {e["caller_package"] for e in doc["entries"] if e["source"] == "proc"}
    assert packages == {"cuda-bindings"}
    assert "cuda-bindings 13.9.0's own table of 4 functions agrees with the capture" in ran.stderr


@pytest.mark.parametrize("owner", [None, "cuda_python", "other_pkg"])
def test_the_package_is_named_by_its_distribution_else_its_module_and_version(tmp_path, bins, site, owner):
    """The capture names the table's distribution from the RECORD listing cuda/bindings/__init__.py
    (the hook no longer imports importlib.metadata): cuda-bindings or cuda-python, spelt as pip
    compares names; no such RECORD, or another distribution's, leaves the module and __version__."""
    info = site / f"cuda_bindings-{VERSION}.dist-info"
    if owner is None:
        shutil.rmtree(info)
    else:
        record = (info / "RECORD").read_text()
        shutil.rmtree(info)
        info = site / f"{owner}-12.9.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {owner.replace('_', '.')}\nVersion: 12.9.1\n\n")
        (info / "RECORD").write_text(record)
    ran, doc = capture(tmp_path, bins, site, BIND)
    assert ran.returncode == 0, ran.stderr
    t = only_table(doc)
    expected = ("cuda.python", "12.9.1") if owner == "cuda_python" else ("cuda.bindings", VERSION)
    assert (t["package"], t["version"], t["status"]) == (*expected, "ok")


def test_a_pip_target_folder_names_the_distribution_too(tmp_path, bins, site):
    """`pip install --target DIR` leaves no site-packages in the path; the RECORD in DIR still names
    the distribution, as importlib.metadata finds it on sys.path."""
    target = tmp_path / "target"
    shutil.copytree(site, target)
    ran, doc = capture(tmp_path, bins, target, BIND, pythonpath=str(target))
    assert ran.returncode == 0, ran.stderr
    t = only_table(doc)
    assert (t["package"], t["version"], t["status"], t["folder"]) == (
        "cuda-bindings", VERSION, "ok", str(target.resolve() / "cuda" / "bindings"))


def test_a_pointer_the_package_reports_wrong_is_named(tmp_path, bins, site):
    ran, doc = capture(tmp_path, bins, site, BIND, CUPARITY_FAKE_TABLE_WRONG="cuMemcpyHtoD_v2")
    assert ran.returncode == 0, ran.stderr
    assert only_table(doc)["functions"]["cuMemcpyHtoD_v2"]["symbol"] == "cuCtxSynchronize"
    assert "own table of 4 functions disagrees with the capture on 1" in ran.stderr


# table_findings() (harness/capture/table_check.cpp) is called by the audit
# (harness/capture/map_audit.cpp's audit_entries): a disagreement fails it.
def test_the_audit_is_clean_when_they_agree_and_fails_naming_table_disagrees(tmp_path, bins, site):
    capture(tmp_path, bins, site, BIND)
    ran, clean = audit(bins, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "table_disagrees" not in clean["counts"]
    capture(tmp_path, bins, site, BIND, CUPARITY_FAKE_TABLE_WRONG="cuMemcpyHtoD_v2")
    ran, report = audit(bins, tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    wrong = [f for f in report["findings"] if f["kind"] == "table_disagrees"]
    assert [f["function"] for f in wrong] == ["cuMemcpyHtoD"]
    assert "holds cuCtxSynchronize" in wrong[0]["message"] and "bind cuMemcpyHtoD_v2" in wrong[0]["message"]


def test_a_package_that_bound_nothing_is_not_bound_by_the_hook(tmp_path, bins, site):
    ran, doc = capture(tmp_path, bins, site, "import cuda.bindings.driver")
    assert ran.returncode == 0, ran.stderr
    t = only_table(doc)
    assert t["status"] == "not_bound" and t["functions"] == {}
    # Reading the table would have bound the driver at exit: the map would show its requests.
    assert [e for e in doc["entries"] if e["source"] == "proc"] == []


def test_an_old_version_without_a_table_is_said_so(tmp_path, bins, site):
    ran, doc = capture(tmp_path, bins, site, BIND, CUPARITY_FAKE_TABLE_OLD="1")
    assert ran.returncode == 0, ran.stderr
    t = only_table(doc)
    assert t["status"] == "no_table"
    assert "has no _inspect_function_pointers()" in t["note"]
    assert "own table not checked (no_table)" in ran.stderr


@pytest.mark.parametrize("exit_code", [0, 3])
def test_a_hook_failure_leaves_the_exit_status_and_output_alone(tmp_path, bins, site, exit_code):
    code = BIND + f"; print('out'); import sys; sys.exit({exit_code})"
    ran, doc = capture(tmp_path, bins, site, code, CUPARITY_FAKE_TABLE_RAISE="1")
    assert ran.returncode == exit_code, ran.stderr
    assert ran.stdout == "out\n"
    assert "Traceback" not in ran.stderr
    t = only_table(doc)
    assert t["status"] == "failed"
    assert t["note"] == "RuntimeError: the fake table raises, as told"


def test_the_sites_own_sitecustomize_still_runs_and_sys_path_is_the_programs(tmp_path, bins, site):
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.environ['OWN_SITECUSTOMIZE'] = 'ran'\n")
    code = (
        BIND + "; import os, sys, sitecustomize; "
        "print(os.environ.get('OWN_SITECUSTOMIZE'), sitecustomize.__file__, "
        "any('python-hook' in p for p in sys.path))"
    )
    ran, doc = capture(tmp_path, bins, site, code, pythonpath=f"{site}:{own}")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["ran", str(own / "sitecustomize.py"), "False"]
    assert only_table(doc)["status"] == "ok"


def test_no_python_hook_leaves_pythonpath_alone_and_the_map_says_no_table(tmp_path, bins, site):
    code = BIND + "; import os; print(os.environ['PYTHONPATH'])"
    ran, doc = capture(tmp_path, bins, site, code, "--no-python-hook")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(site)
    t = only_table(doc)
    assert t["status"] == "not_recorded"
    assert "--no-python-hook" in t["note"]


def test_a_process_that_skips_its_exit_handlers_is_named(tmp_path, bins, site):
    ran, doc = capture(tmp_path, bins, site, BIND + "; import os; os._exit(0)")
    assert ran.returncode == 0, ran.stderr
    t = only_table(doc)
    assert t["status"] == "not_recorded"
    assert "os._exit" in t["note"]


def test_the_summary_counts_the_functions_and_names_those_the_headers_lack(tmp_path, bins, site):
    sim = bins / "libcuparity_simdriver.so"
    code = f"import ctypes; d = ctypes.CDLL('{sim}'); d.cuInit; d.cuMemAlloc_v2; d.cuparity_simulated_driver"
    ran, _ = capture(tmp_path, bins, site, code)
    assert ran.returncode == 0, ran.stderr
    assert re.search(
        r": 3 dlsym; 3 functions bound, 1 name not in the CUDA \d+\.\d+ headers: cuparity_simulated_driver\n",
        ran.stderr,
    ), ran.stderr
    ran, _ = capture(tmp_path, bins, site, BIND)
    assert re.search(r"; 4 functions bound, every name in the CUDA \d+\.\d+ headers; cuda-bindings", ran.stderr), ran.stderr
