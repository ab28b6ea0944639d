"""Fixtures of the hostile tests (tests/hostile/test_*.py): the built tools, a full device.

Each test_*.py file here attacks one surface as a careless or unlucky user would (issue 47's
defects) and asserts the answer a demanding user expects: a named error and a non-zero exit,
never an abort, a traceback or an exit 0 over nothing done. run_corpus.py and surfaces.py are
scripts CTest runs; pytest collects only the test_*.py files.

cuparity and the simulated driver are found in $CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin,
else <repo>/build/bin; without them the tests that need them are skipped, naming the folder.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def bin_dir() -> Path:
    if os.environ.get("CUPARITY_BIN_DIR"):
        return Path(os.environ["CUPARITY_BIN_DIR"])
    if os.environ.get("CUPARITY_BUILD_DIR"):
        return Path(os.environ["CUPARITY_BUILD_DIR"]) / "bin"
    return REPO / "build" / "bin"


@dataclass
class tools:
    bin: Path
    cuparity: str
    sim_driver: str
    report: str  # scripts/report
    capture_py: str  # tools/capture/cuparity_capture.py

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment less the variables that would change what a cell does."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NUMBA_CUDA_", "CUDA_PYTHON_", "CUPARITY_", "SIMPKG_"))}
        env.update(extra)
        return env

    def run(self, *argv: str, timeout: float = 120, stdout=None, env: dict | None = None,
            cwd: Path | None = None, sim: bool = True) -> subprocess.CompletedProcess:
        """`cuparity [--driver sim] ARGV`; stdout captured unless a file object is given."""
        cmd = [self.cuparity, *(["--driver", "sim"] if sim else []), *argv]
        return run_process(cmd, timeout=timeout, stdout=stdout, env=env or self.env(), cwd=cwd)


def run_process(cmd: list[str], *, timeout: float = 120, stdout=None, env=None,
                cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env=env, cwd=cwd)


@pytest.fixture(scope="session")
def built() -> tools:
    b = bin_dir()
    cuparity, sim = b / "cuparity", b / "libcuparity_simdriver.so"
    if not cuparity.is_file() or not sim.is_file():
        pytest.skip(f"no cuparity or libcuparity_simdriver.so in {b}: build with scripts/build "
                    "(or set CUPARITY_BIN_DIR)")
    return tools(b, str(cuparity), str(sim), str(REPO / "scripts" / "report"),
                 str(REPO / "tools" / "capture" / "cuparity_capture.py"))


@pytest.fixture
def full_stdout():
    """A file object on /dev/full: every write to it fails with ENOSPC."""
    if not os.path.exists("/dev/full"):
        pytest.skip("this machine has no /dev/full")
    with open("/dev/full", "w") as f:
        yield f


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "cuparity-full", str(where)],
                          capture_output=True)
    return done.returncode == 0


@pytest.fixture
def small_device(tmp_path):
    """A factory: small_device(size="64k") mounts a tmpfs of that size and returns its folder.

    Skipped, saying so, where this machine cannot mount one (not root, no CAP_SYS_ADMIN)."""
    mounted: list[Path] = []

    def make(size: str = "64k") -> Path:
        where = tmp_path / f"device-{uuid.uuid4().hex[:8]}"
        if not _mount_tmpfs(where, size):
            pytest.skip("cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): the full-disk "
                        "test did not run")
        mounted.append(where)
        return where

    yield make
    for m in mounted:
        subprocess.run(["umount", "-l", str(m)], capture_output=True)


SMALL_MATRIX = """[matrix]
name = "hostile"
description = "two cells, three cases"
cases = ["alloc.copy.dtod", "alloc.sizes.pattern", "stream.create.flags_priorities"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
"""


@pytest.fixture
def small_matrix(tmp_path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL_MATRIX)
    return p
