"""simpkg bound three wrong ways is judged three ways by `cuparity audit` (issue 48).

Each test captures `python3 -c 'import simpkg; ...'` under `cuparity --driver sim capture`, with
one SIMPKG_DEFECT (tests/external/simpkg/__init__.py says what each binds), audits the map with
`--json`, and checks that the audit names the defect with its kind:
- ptds_under_legacy: cuStreamSynchronize_ptsz beside legacy binds of one binder -> mixed_modes
  (a failure: exit 1);
- old_abi: the bare cuMemAlloc (CUDA 2.0, 32-bit sizes) by dlsym -> old_semantics;
- null_answer: cuMemAllocAsync asked at 11000, below its first ABI -> null_entry, with that reason.
A run without SIMPKG_DEFECT has none of the three. cuparity and the simulated driver are found as
test_suite_matrix.py finds them; without them every test here is skipped, naming the folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_suite_matrix import bin_dir  # noqa: E402  (one rule for where the binaries are)

PROGRAM = "import simpkg; simpkg.init(); print(simpkg.device_count())"


def audit_of(tmp_path: Path, defect: str | None, binding: str = "dlsym") -> tuple[int, dict]:
    """(audit exit code, audit JSON) of simpkg captured under SIMPKG_DEFECT=`defect`."""
    cuparity, driver = bin_dir() / "cuparity", bin_dir() / "libcuparity_simdriver.so"
    if not cuparity.is_file() or not driver.is_file():
        pytest.skip(f"no cuparity or libcuparity_simdriver.so in {bin_dir()}: build with "
                    "scripts/build (or set CUPARITY_BIN_DIR)")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SIMPKG_", "NUMBA_CUDA_", "CUDA_PYTHON_", "PYTHONPATH"))}
    env.update(PYTHONPATH=str(HERE), NUMBA_CUDA_DRIVER=str(driver), SIMPKG_BINDING=binding)
    if defect:
        env["SIMPKG_DEFECT"] = defect
    out, report = tmp_path / "map.json", tmp_path / "audit.json"
    run = subprocess.run([str(cuparity), "--driver", "sim", "capture", "--out", str(out), "--",
                          sys.executable, "-c", PROGRAM],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"capture: exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    audit = subprocess.run([str(cuparity), "--driver", "sim", "audit", "--map", str(out),
                            "--json", str(report)],
                           env=env, capture_output=True, text=True, timeout=120)
    assert report.is_file(), f"audit: exit {audit.returncode}\n{audit.stdout}\n{audit.stderr}"
    return audit.returncode, json.loads(report.read_text(encoding="utf-8"))


def findings(report: dict, kind: str) -> list[dict]:
    return [f for f in report["findings"] if f["kind"] == kind]


def test_a_per_thread_variant_among_legacy_binds_is_mixed_modes(tmp_path):
    code, report = audit_of(tmp_path, "ptds_under_legacy")
    mixed = findings(report, "mixed_modes")
    assert len(mixed) == 1, report["findings"]
    assert "per-thread cuStreamSynchronize" in mixed[0]["message"]
    assert "legacy cuMemcpyDtoH, cuMemcpyHtoD, cuMemsetD8" in mixed[0]["message"]
    assert mixed[0]["raw_name"].endswith(".so") and "ctypes" in mixed[0]["raw_name"]
    assert report["failed"] is True and code == 1
    # Its entries are unchecked, each with the reason, not judged against a guessed mode.
    assert {u["captured"] for u in report["unchecked"]} == {
        "cuStreamSynchronize_ptsz", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemsetD8_v2"}
    assert all("bound both stream-0 modes" in u["reason"] for u in report["unchecked"])


def test_the_32_bit_cuMemAlloc_is_old_semantics(tmp_path):
    code, report = audit_of(tmp_path, "old_abi")
    old = [f for f in findings(report, "old_semantics") if f["function"] == "cuMemAlloc"]
    assert len(old) == 1, report["findings"]
    assert old[0]["captured"] == "cuMemAlloc" and old[0]["source"] == "dlsym"
    assert "`unsigned int` where it has `size_t` (32-bit sizes)" in old[0]["message"]
    assert "older than cuMemAlloc_v2 (ABI 3020)" in old[0]["message"]
    assert code == 0  # reported, not a failure


def test_a_request_below_the_first_abi_is_a_null_entry_with_its_reason(tmp_path):
    code, report = audit_of(tmp_path, "null_answer")
    null = findings(report, "null_entry")
    assert [f["function"] for f in null] == ["cuMemAllocAsync"], report["findings"]
    assert "asked at 11000 (flags 1)" in null[0]["message"]
    assert "below its first ABI (11020)" in null[0]["message"]
    assert code == 0


@pytest.mark.parametrize("binding", ["dlsym", "proc"])
def test_a_clean_run_has_none_of_the_three(tmp_path, binding):
    code, report = audit_of(tmp_path, None, binding)
    assert findings(report, "mixed_modes") == []
    assert findings(report, "null_entry") == []
    assert [f for f in findings(report, "old_semantics") if f["function"] == "cuMemAlloc"] == []
    assert report["unknown"] == [] and report["unchecked"] == []
    assert report["failed"] is False and code == 0
