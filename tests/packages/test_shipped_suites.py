"""The shipped matrices of package suites load as their comments say (docs/package-suites.md).

- matrices/numba-cuda-suite.toml takes numba-cuda's checkout from NUMBA_CUDA_SOURCE: with it, its
  two cells pin numpy below 2.5 and pytest below 9 (each a requirement of its own, not one
  string), and the suite starts in the checkout's testing/ folder; without it, `cuparity list`
  is bad input naming the variable and the matrix's line.
- matrices/numba-suite.toml puts cuda-python 12.9.10 (the last to ship `cuda.cuda`) on every cell.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from external.test_suite_matrix import bin_dir

REPO = Path(__file__).resolve().parents[2]


def list_matrix(matrix: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "NUMBA_CUDA_SOURCE"}
    environment.update(env)
    return subprocess.run([str(bin_dir() / "cuparity"), "list", str(REPO / "matrices" / matrix)],
                          capture_output=True, text=True, env=environment, timeout=60)


def test_numba_cuda_suite_runs_from_the_checkout_with_its_pins(tmp_path):
    (tmp_path / "testing").mkdir()
    listed = list_matrix("numba-cuda-suite.toml", NUMBA_CUDA_SOURCE=str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("packages=numpy==2.4.6 pytest==8.4.2 ") == 4  # 2 cells, 2 lines each
    assert "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=0" in listed.stdout
    assert "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1" in listed.stdout


def test_numba_cuda_suite_without_a_checkout_is_named():
    listed = list_matrix("numba-cuda-suite.toml")
    assert listed.returncode == 2
    assert "numba-cuda-suite.toml:" in listed.stderr
    assert "NUMBA_CUDA_SOURCE" in listed.stderr and "suite.root" in listed.stderr


def test_numba_suite_gives_every_cell_cuda_python_12():
    listed = list_matrix("numba-suite.toml")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("packages=cuda-python==12.9.10 cuda-bindings==12.9.10") == 8
