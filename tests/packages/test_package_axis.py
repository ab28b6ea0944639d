"""The packages axis (docs/matrices.md#the-packages-axis), end to end on the simulated driver.

The test builds two wheels of "simbind", a tiny ctypes binding (1.0 binds cuMemGetInfo_v2, 2.0
the 32-bit cuMemGetInfo, by dlsym), into a folder of tmp_path, and runs a [[suite]] matrix whose
`packages` axis is ["simbind==1.0", "simbind==2.0", "simbind==9.9"] with find_links that folder:
- each installable value is installed once into the matrix's cache; a second run installs
  nothing: its provenance says `reused`, its log says "reused", and the cached folders keep their
  inode and mtime;
- provenance records each cell's installed distributions (simbind 1.0, simbind 2.0);
- the reference comparison (reference = simbind==1.0) names binding.cuMemGetInfo with the
  symbols before and after, and a [[change]] for it marks it known;
- `cuparity compare` of a run of the 1.0 cell against a run of the 2.0 cell pairs the two cells
  and names binding.cuMemGetInfo;
- simbind==9.9 (no such wheel) is one cell error naming the requirement, the installer's last
  lines and the cache, and the other cells run;
- two runs started at once on an empty cache install each value once between them (the lock);
- `cuparity list` prints each value's installed distributions, installing nothing;
- a [[program]] that sets its own PYTHONPATH (to a folder holding a decoy simbind) still finds the
  cell's installed simbind first, each cell its own version;
- a bad [packages] key is exit 2 at file:line:column.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from external.test_suite_matrix import bin_dir

REPO = Path(__file__).resolve().parents[2]

SIMBIND = '''"""simbind {version}: binds {symbol} by dlsym from the driver NUMBA_CUDA_DRIVER names."""
import ctypes
import os

VERSION = "{version}"
SYMBOL = "{symbol}"
_lib = ctypes.CDLL(os.environ.get("NUMBA_CUDA_DRIVER") or "libcuda.so.1")
mem_get_info = getattr(_lib, SYMBOL)
init = _lib.cuInit
'''

SUITE_TEST = '''import os

import simbind


def test_bound():
    # The axis is no variable: the runner turned its value into the folder simbind came from.
    assert "packages" not in os.environ
    # cuparity's own hooks (the pytest plugin, capture's Python hook) may come before it.
    folder = os.path.dirname(os.path.dirname(simbind.__file__))
    assert folder in os.environ["PYTHONPATH"].split(":")
    assert simbind.init(0) == 0
    assert simbind.mem_get_info is not None
'''

MATRIX = '''[matrix]
name = "{name}"
reference = {{ packages = "simbind==1.0" }}
{extra}
[axes]
packages = ["simbind==1.0", "simbind==2.0", "simbind==9.9"]

[packages]
find_links = ["{{matrix_dir}}/wheels"]
cache = "{{matrix_dir}}/cache"

[[suite]]
name = "simbind"
command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={{junit}}", "{{matrix_dir}}/suite"]
timeout_s = 120
retries = 0
'''

KNOWN = '''[[change]]
key = "binding.cuMemGetInfo"
reason = "simbind 2.0 binds the CUDA 2.0 ABI (the test's own wheel)"
'''

CELL_1 = "packages=simbind==1.0"
CELL_2 = "packages=simbind==2.0"
CELL_BAD = "packages=simbind==9.9"


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(folder: Path, version: str, symbol: str) -> Path:
    """A pure-Python wheel of simbind: a zip of the package and its dist-info (PEP 427)."""
    info = f"simbind-{version}.dist-info"
    files = {
        "simbind/__init__.py": SIMBIND.format(version=version, symbol=symbol).encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: simbind\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: cuparity-test\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
    }
    record = [record_line(p, d) for p, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / f"simbind-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CUPARITY_SUITE_", "NUMBA_CUDA_", "CUDA_PYTHON_", "PYTEST_",
                                 "PIP_", "UV_"))}


def cuparity(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    exe = bin_dir() / "cuparity"
    if not exe.is_file() or not (bin_dir() / "libcuparity_simdriver.so").is_file():
        pytest.skip(f"no cuparity or libcuparity_simdriver.so in {bin_dir()}: build with "
                    "scripts/build (or set CUPARITY_BIN_DIR)")
    return subprocess.run([str(exe), *args], env=clean_env(), capture_output=True, text=True,
                          timeout=timeout)


def run(matrix: Path, out: Path, *extra: str) -> tuple[dict, subprocess.CompletedProcess]:
    proc = cuparity("--driver", "sim", "run", str(matrix), "--out", str(out), "-j", "2", *extra)
    summary_path = out / "summary.json"
    assert summary_path.is_file(), f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr}"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["exit_code"] == proc.returncode, proc.stderr[-3000:]
    return summary, proc


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("package-axis")
    (root / "wheels").mkdir()
    build_wheel(root / "wheels", "1.0", "cuMemGetInfo_v2")
    build_wheel(root / "wheels", "2.0", "cuMemGetInfo")
    (root / "suite").mkdir()
    (root / "suite" / "test_bind.py").write_text(SUITE_TEST, encoding="utf-8")
    (root / "known.toml").write_text(KNOWN, encoding="utf-8")
    (root / "axis.toml").write_text(MATRIX.format(name="axis", extra=""), encoding="utf-8")
    (root / "known-axis.toml").write_text(
        MATRIX.format(name="known-axis", extra='known_changes = "known.toml"\n'),
        encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def first(project):
    return run(project / "axis.toml", project / "first")


def cache_state(project: Path, summary: dict) -> dict:
    """folder -> (inode, mtime_ns) of each installed environment."""
    out = {}
    for e in summary["provenance"]["packages"]["environments"]:
        if e["error"] is None:
            st = os.stat(e["folder"])
            out[e["folder"]] = (st.st_ino, st.st_mtime_ns)
    return out


def test_installs_each_value_once_and_records_versions(project, first):
    summary, proc = first
    packages = summary["provenance"]["packages"]
    assert packages["cache"] == str(project / "cache")
    by_value = {e["value"]: e for e in packages["environments"]}
    assert sorted(by_value) == ["simbind==1.0", "simbind==2.0", "simbind==9.9"]
    for value, version in (("simbind==1.0", "1.0"), ("simbind==2.0", "2.0")):
        e = by_value[value]
        assert e["error"] is None and e["reused"] is False, e
        assert e["distributions"] == [{"name": "simbind", "version": version}]
        assert Path(e["folder"]).parent == project / "cache"
        assert f"packages '{value}': installed by {e['installer']}" in proc.stderr
    assert packages["cells"][CELL_1]["distributions"] == {"simbind": "1.0"}
    assert packages["cells"][CELL_2]["distributions"] == {"simbind": "2.0"}
    assert packages["cells"][CELL_BAD]["distributions"] is None
    # Only complete environments are in the cache: no temporary folder is left.
    assert not [p for p in (project / "cache").iterdir() if p.name.startswith(".tmp-")]
    # The axis is no variable: the cells ran with the installed simbind, found on PYTHONPATH.
    outcomes = {r["cell"]: r["outcome"] for r in summary["results"]}
    assert outcomes == {CELL_1: "pass", CELL_2: "pass"}, summary["problems"]


def test_a_bad_requirement_is_one_cell_error(first):
    summary, proc = first
    errors = [p for p in summary["problems"] if p["kind"] == "cell_error"]
    assert [p["cell"] for p in errors] == [CELL_BAD], errors
    message = errors[0]["message"]
    assert "'simbind==9.9'" in message and "cache" in message and "/cache" in message
    # The installer's last lines: pip and uv both say no version matches.
    assert "simbind" in message.split(": ", 2)[-1] and ("9.9" in message)
    assert proc.returncode == 1


def test_reference_comparison_names_the_binding_change(first):
    summary, _ = first
    changes = [c for c in summary["changes"]["changes"] if c["key"] == "binding.cuMemGetInfo"]
    assert len(changes) == 1, summary["changes"]
    c = changes[0]
    assert (c["cell"], c["reference"]) == (CELL_2, CELL_1)
    assert "cuMemGetInfo_v2" in c["before"]["symbol"]
    assert "cuMemGetInfo_v2" not in c["after"]["symbol"] and "cuMemGetInfo" in c["after"]["symbol"]
    assert c["known"] is None


def test_second_run_reuses_the_cache_and_known_changes_apply(project, first):
    before = cache_state(project, first[0])
    summary, proc = run(project / "known-axis.toml", project / "second")
    by_value = {e["value"]: e for e in summary["provenance"]["packages"]["environments"]}
    assert by_value["simbind==1.0"]["reused"] and by_value["simbind==2.0"]["reused"]
    assert "installed by" not in proc.stderr.replace("simbind==9.9", "")
    assert "packages 'simbind==1.0': reused" in proc.stderr
    assert cache_state(project, summary) == before
    changes = [c for c in summary["changes"]["changes"] if c["key"] == "binding.cuMemGetInfo"]
    assert [c["known"] for c in changes] == [
        "simbind 2.0 binds the CUDA 2.0 ABI (the test's own wheel)"]


def test_compare_of_two_runs_names_the_binding_change(project, first):
    run(project / "axis.toml", project / "only-1", "--cell", CELL_1)
    run(project / "axis.toml", project / "only-2", "--cell", CELL_2)
    out = project / "compare.json"
    proc = cuparity("compare", str(project / "only-1"), str(project / "only-2"), "--json", str(out),
                    "--known-changes", str(project / "known.toml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    bindings = [b for b in report["bindings"] if b["key"] == "binding.cuMemGetInfo"]
    assert len(bindings) == 1, report["bindings"]
    b = bindings[0]
    assert (b["cell"], b["cell_a"]) == (CELL_2, CELL_1)
    assert "cuMemGetInfo_v2" in b["a"]["symbol"] and "cuMemGetInfo_v2" not in b["b"]["symbol"]
    assert b["known"].startswith("simbind 2.0 binds")
    assert any(CELL_2 in n and CELL_1 in n for n in report["notes"]), report["notes"]


def test_list_prints_the_installed_versions(project, first):
    proc = cuparity("list", str(project / "axis.toml"))
    assert proc.returncode == 0, proc.stderr
    folders = {e["value"]: e["folder"] for e in first[0]["provenance"]["packages"]["environments"]}
    assert f"'simbind==1.0': simbind 1.0 [{folders['simbind==1.0']}]" in proc.stdout
    assert f"'simbind==2.0': simbind 2.0 [{folders['simbind==2.0']}]" in proc.stdout
    assert "'simbind==9.9': not installed yet" in proc.stdout
    assert not Path(folders["simbind==9.9"]).exists()


def test_two_runs_at_once_install_each_value_once(project, tmp_path):
    """Both runs want both values from an empty cache: the key's lock file makes the second wait
    and find the first one's folder, so between them each value is installed once."""
    exe = bin_dir() / "cuparity"
    if not exe.is_file():
        pytest.skip(f"no cuparity in {bin_dir()}")
    matrix = tmp_path / "race.toml"
    matrix.write_text(MATRIX.format(name="race", extra="").replace(
        "{matrix_dir}/wheels", str(project / "wheels")).replace(', "simbind==9.9"', ""),
        encoding="utf-8")
    procs = [subprocess.Popen([str(exe), "--driver", "sim", "run", str(matrix), "--out",
                               str(tmp_path / f"out{k}")], env=clean_env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k in (1, 2)]
    logs = [p.communicate(timeout=300)[1] for p in procs]
    for value in ("simbind==1.0", "simbind==2.0"):
        installs = sum(log.count(f"packages '{value}': installed by") for log in logs)
        reuses = sum(log.count(f"packages '{value}': reused") for log in logs)
        assert (installs, reuses) == (1, 1), logs
    assert sorted(p.name for p in (tmp_path / "cache").iterdir() if p.is_dir()) == sorted(
        e["key"] for e in json.loads((tmp_path / "out1" / "summary.json").read_text())
        ["provenance"]["packages"]["environments"])


def test_bad_packages_key_is_exit_2_at_its_position(tmp_path):
    matrix = tmp_path / "bad.toml"
    matrix.write_text('[axes]\npackages = ["simbind==1.0"]\n\n[packages]\ninstaller = "conda"\n'
                      '[[suite]]\nname = "s"\ncommand = ["true"]\n', encoding="utf-8")
    proc = cuparity("--driver", "sim", "run", str(matrix), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"{matrix}:5:13: packages.installer must be" in proc.stderr, proc.stderr
    matrix.write_text('[axes]\nSOMETHING = ["1"]\n\n[packages]\ncache = "x"\n', encoding="utf-8")
    proc = cuparity("list", str(matrix))
    assert proc.returncode == 2
    assert f"{matrix}:4:1: [packages] installs the values of a `packages` axis" in proc.stderr


PROGRAM = '''import os
import sys

import simbind

# The program's own PYTHONPATH names the decoy's folder; the cell's packages folder must come first.
path = os.environ["PYTHONPATH"].split(":")
folder = os.path.dirname(os.path.dirname(simbind.__file__))
if simbind.VERSION == "decoy" or folder not in path or path.index(folder) > path.index(sys.argv[1]):
    print(f"simbind {simbind.VERSION} from {folder}; PYTHONPATH {path}")
    sys.exit(3)
assert simbind.init(0) == 0 and simbind.mem_get_info is not None
print(f"simbind {simbind.VERSION}")
'''

PROGRAM_MATRIX = '''[matrix]
name = "program-axis"
reference = {{ packages = "simbind==1.0" }}
[axes]
packages = ["simbind==1.0", "simbind==2.0"]

[packages]
find_links = ["{wheels}"]
cache = "{{matrix_dir}}/cache"

[[program]]
name = "simbind_program"
command = ["python3", "{{matrix_dir}}/program.py", "{{matrix_dir}}/decoy"]
environment = {{ PYTHONPATH = "{{matrix_dir}}/decoy" }}
timeout_s = 120
'''


def test_a_program_setting_pythonpath_still_finds_the_package_first(project, tmp_path):
    (tmp_path / "decoy" / "simbind").mkdir(parents=True)
    (tmp_path / "decoy" / "simbind" / "__init__.py").write_text('VERSION = "decoy"\n',
                                                                 encoding="utf-8")
    (tmp_path / "program.py").write_text(PROGRAM, encoding="utf-8")
    matrix = tmp_path / "program-axis.toml"
    matrix.write_text(PROGRAM_MATRIX.format(wheels=project / "wheels"), encoding="utf-8")
    summary, proc = run(matrix, tmp_path / "out")
    outcomes = {r["cell"]: (r["outcome"], r["message"]) for r in summary["results"]}
    assert {cell: o for cell, (o, _) in outcomes.items()} == {CELL_1: "pass", CELL_2: "pass"}, (
        outcomes, summary["problems"])
    # Each cell imported its own version: 2.0 binds the 32-bit cuMemGetInfo, 1.0 the _v2.
    changes = [c for c in summary["changes"]["changes"] if c["key"] == "binding.cuMemGetInfo"]
    assert len(changes) == 1, summary["changes"]
    assert "cuMemGetInfo_v2" in changes[0]["before"]["symbol"]
    assert "cuMemGetInfo_v2" not in changes[0]["after"]["symbol"]
    assert proc.returncode == 0, proc.stdout[-3000:]
