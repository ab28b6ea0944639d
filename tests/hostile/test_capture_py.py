"""tools/capture/cuparity_capture.py against hostile packages and a hostile environment (issue 47).

Each fake package is a folder put on PYTHONPATH: a `cuda` package that shadows any installed one, so
`import cuda.bindings` finds the fake (or nothing) whatever this machine has installed. The answer
a user chaining `capture && audit` needs: nothing captured is never exit 0 (1, naming the package
and why), an old map at --out is never left to pass for this run's, a write that fails is one line
and exit 3, and never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from . import hostile_support as hs

REPO = Path(__file__).resolve().parents[2]
CAPTURE = REPO / "tools" / "capture" / "cuparity_capture.py"
OLD_MAP = REPO / "tools" / "capture" / "fixtures" / "fixed-ptds0.json"  # a map with status "ok"
DOUBLES = REPO / "tools" / "capture" / "tests" / "doubles"


def fake_bindings(root: Path, init: str, table: str | None = None) -> Path:
    """A `cuda.bindings` under root whose __init__ runs `init`; `table` is the source of its
    _bindings/cydriver.py (the driver table module), none when None."""
    package = root / "cuda" / "bindings"
    package.mkdir(parents=True)
    (root / "cuda" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text(init, encoding="utf-8")
    if table is not None:
        (package / "_bindings").mkdir()
        (package / "_bindings" / "__init__.py").write_text("", encoding="utf-8")
        (package / "_bindings" / "cydriver.py").write_text(table, encoding="utf-8")
    return root


def capture(tmp_path: Path, pythonpath: Path, package: str = "cuda.bindings", out: Path | None = None,
            stdout=None, stderr=None, extra_env: dict | None = None,
            args: list | None = None) -> subprocess.CompletedProcess:
    out = out if out is not None else tmp_path / "map.json"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(pythonpath),
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", **(extra_env or {})}
    argv = args if args is not None else ["--package", package, "--out", str(out)]
    return subprocess.run([sys.executable, str(CAPTURE), *argv], env=env, cwd=tmp_path,
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=stderr if stderr is not None else subprocess.PIPE,
                          text=True, timeout=60)


def with_old_map(tmp_path: Path) -> Path:
    out = tmp_path / "map.json"
    shutil.copyfile(OLD_MAP, out)
    return out


def assert_not_the_old_map(out: Path) -> dict | None:
    """The map at out, if any: never the old one, never "ok" (this run captured nothing)."""
    if not out.exists():
        return None
    assert out.read_bytes() != OLD_MAP.read_bytes(), "the old map was left as if it were new"
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["status"] != "ok", doc
    assert doc["entries"] == []
    return doc


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# --- N3: a package that is not there ------------------------------------------------------------


def test_missing_cuda_bindings_exits_1_naming_it(tmp_path):
    """Before: `import_failed: 0 entries`, exit 0, so `capture && audit` went on."""
    root = tmp_path / "path"
    (root / "cuda").mkdir(parents=True)
    (root / "cuda" / "__init__.py").write_text("", encoding="utf-8")  # no cuda.bindings under it
    proc = capture(tmp_path, root)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    line = one_line(proc.stderr)
    assert "cuda.bindings" in line and "ModuleNotFoundError: No module named 'cuda.bindings'" in line
    assert "nothing captured" in line
    doc = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert doc["status"] == "import_failed" and doc["entries"] == []


def test_missing_numba_exits_1_naming_it(tmp_path):
    probe = subprocess.run([sys.executable, "-c", "import numba"], capture_output=True,
                           env={"PYTHONNOUSERSITE": "1", "PATH": os.environ.get("PATH", "")})
    if probe.returncode == 0:
        pytest.skip(f"numba is installed for {sys.executable}, so it is not missing here")
    (tmp_path / "empty").mkdir()
    proc = capture(tmp_path, tmp_path / "empty", package="numba")
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "numba" in proc.stderr and "No module named 'numba'" in proc.stderr


# --- 5: a package that exits (or is killed) while it imports -------------------------------------


def test_package_calling_os_exit_at_import_exits_1(tmp_path):
    """Before: exit 0, no output, and the old map at --out stayed as if it were new."""
    root = fake_bindings(tmp_path / "path", "import os\nos._exit(0)\n")
    out = with_old_map(tmp_path)
    proc = capture(tmp_path, root, out=out)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "package exited during import" in one_line(proc.stderr)
    doc = assert_not_the_old_map(out)
    assert doc is not None and doc["status"] == "import_failed"
    assert doc["error"] == "package exited during import (exit status 0)"


def test_package_killed_at_import_exits_1(tmp_path):
    root = fake_bindings(tmp_path / "path", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    out = with_old_map(tmp_path)
    proc = capture(tmp_path, root, out=out)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "killed by signal 9 (SIGKILL) during import" in one_line(proc.stderr)
    assert_not_the_old_map(out)


def test_package_exiting_while_it_binds_the_driver_exits_1(tmp_path):
    root = fake_bindings(tmp_path / "path", "", table=(
        "import os\n"
        "def _inspect_function_pointers():\n"
        "    os._exit(3)\n"))
    out = with_old_map(tmp_path)
    proc = capture(tmp_path, root, out=out)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "package exited while binding the driver (exit status 3)" in one_line(proc.stderr)
    doc = assert_not_the_old_map(out)
    assert doc is not None and doc["status"] == "load_failed"


# --- 9: KeyboardInterrupt raised by the package -------------------------------------------------


def test_package_raising_keyboard_interrupt_at_import_exits_1(tmp_path):
    """Before: a traceback and exit 130."""
    root = fake_bindings(tmp_path / "path", "raise KeyboardInterrupt('from the package')\n")
    proc = capture(tmp_path, root)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "KeyboardInterrupt: from the package" in one_line(proc.stderr)
    doc = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert doc["status"] == "import_failed"
    assert doc["error"] == "KeyboardInterrupt: from the package"


def test_package_raising_keyboard_interrupt_while_binding_exits_1(tmp_path):
    root = fake_bindings(tmp_path / "path", "", table=(
        "def _inspect_function_pointers():\n"
        "    raise KeyboardInterrupt\n"))
    proc = capture(tmp_path, root)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert doc["status"] == "load_failed" and doc["error"] == "KeyboardInterrupt: "


# --- nothing bound -----------------------------------------------------------------------------


def test_package_that_binds_no_function_exits_1(tmp_path):
    root = fake_bindings(tmp_path / "path", "", table="def _inspect_function_pointers():\n    return {}\n")
    proc = capture(tmp_path, root)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "bound no driver function" in one_line(proc.stderr)


# --- writes that fail --------------------------------------------------------------------------


def test_help_on_a_full_stdout_exits_3(tmp_path, full_stdout):
    """Before: Python's "Exception ignored ... OSError" at exit, status 120."""
    proc = capture(tmp_path, tmp_path, stdout=full_stdout, args=["--help"])
    hs.no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert "standard output" in one_line(proc.stderr)
    assert "Exception ignored" not in proc.stderr


def test_message_on_a_full_stderr_exits_3(tmp_path, full_stdout):
    """The package is missing and the message cannot be written: still not 0, and 3 (a write
    failed). Before: the print raised, and Python ended with 120."""
    root = fake_bindings(tmp_path / "path", "raise ImportError('no')\n")
    proc = capture(tmp_path, root, stderr=full_stdout)
    assert proc.returncode == 3


def test_out_on_a_full_device_exits_3(tmp_path, built, small_device):
    """Before: exit 2, as for a bad --out argument."""
    folder = small_device("256k")
    hs.fill(folder)
    out = folder / "map.json"
    env = {"CUPARITY_FAKE_DRIVER": built.sim_driver, "CUPARITY_BIN_DIR": str(built.bin)}
    proc = capture(tmp_path, DOUBLES, out=out, extra_env=env)
    hs.no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    line = one_line(proc.stderr)
    assert str(out) in line and "No space left on device" in line
    assert not out.exists()
    assert sorted(p.name for p in folder.iterdir()) == ["filler", "filler-tail"]


def test_child_python_that_never_starts_the_capture_exits_1(tmp_path):
    """The package is not to blame when the capture's own Python ends before it began (here a
    sitecustomize that ends only the child)."""
    root = tmp_path / "path"
    root.mkdir()
    (root / "sitecustomize.py").write_text(
        "import os, sys\nif '--child-fd' in sys.argv:\n    os._exit(7)\n", encoding="utf-8")
    out = with_old_map(tmp_path)
    proc = capture(tmp_path, root, out=out)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "the capture's Python exited at start-up" in one_line(proc.stderr)
    assert not out.exists()
