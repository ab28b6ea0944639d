"""Issue 47: `cuparity run` under a full disk, a hang-up, a doctored --resume, a 50,000-character
variable name, and a slow driver start (defects 1, 2, 16, 17, 18), on the simulated driver."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from . import hostile_support as hs

CASES = ["alloc.copy.dtod", "alloc.sizes.pattern", "stream.create.flags_priorities",
         "context.init.facts", "binding.config.effective", "stream.default.semantics"]


def matrix_file(folder: Path, name: str = "m", extra: str = "") -> Path:
    p = folder / f"{name}.toml"
    p.write_text(f'[matrix]\nname = "{name}"\ncases = {json.dumps(CASES)}\n{extra}[axes]\n'
                 'NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]\n')
    return p


# --- 1: a disk that fills mid-run ------------------------------------------------------------

@pytest.mark.parametrize("room", [2048, 6144, 16384])
def test_a_disk_full_mid_run_is_exit_3_naming_the_file_and_resume_completes(
        built, tmp_path, small_device, room):
    matrix = matrix_file(tmp_path)
    device = small_device("512k")
    hs.fill(device)
    # Free `room` bytes: the run starts, and its results fill the rest part of the way in.
    filler = device / "filler"
    os.truncate(filler, max(0, filler.stat().st_size - room))
    (device / "filler-tail").unlink()
    out = device / "out"
    proc = built.run("run", str(matrix), "--out", str(out), "-j", "2")
    hs.no_traceback(proc)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "No space left on device" in proc.stderr, proc.stderr[-3000:]
    assert "terminate called" not in proc.stderr
    filler.unlink()  # make room, then the run completes where it stopped
    done = built.run("run", str(matrix), "--out", str(out), "--resume", "-j", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "equivalent"
    assert summary["coverage"]["complete"] is True


# --- 2: a variable name of 50,000 characters ---------------------------------------------------

@pytest.mark.parametrize("where", ["axes", "include"])
def test_a_50k_variable_name_is_exit_2_quoted_short(built, tmp_path, where):
    name = "A" * 50_000
    body = (f'[axes]\n{name} = ["0"]\n' if where == "axes"
            else f'[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]\n[[include]]\n{name} = "1"\n')
    matrix = tmp_path / "long.toml"
    matrix.write_text('[matrix]\ncases = ["binding.*"]\n' + body)
    for argv in (["list", str(matrix)], ["run", str(matrix), "--out", str(tmp_path / "o")]):
        proc = built.run(*argv)
        hs.no_traceback(proc)
        assert proc.returncode == 2, proc.stderr[-500:]
        assert f"{matrix}:" in proc.stderr and "(50000 bytes)" in proc.stderr
        assert len(proc.stderr) < 1000, "the name must be quoted cut, not whole"


# --- 16: a cell's start-up starts the driver once -----------------------------------------------

def test_a_cell_start_calls_cuinit_once(built, tmp_path):
    log = tmp_path / "shim.jsonl"
    matrix = tmp_path / "init.toml"
    matrix.write_text('[matrix]\nname = "init"\ncases = ["binding.config.effective"]\n[axes]\n'
                      'NUMBA_CUDA_DRIVER = ["{bin}/libcuparity_fault_shim.so"]\n'
                      'CUPARITY_SHIM_TARGET = ["{bin}/libcuparity_simdriver.so"]\n'
                      # A fault makes the shim count the symbol's calls; 1 ns changes nothing.
                      'CUPARITY_SHIM_FAULTS = ["cuInit:delay_ns=1"]\n'
                      f'CUPARITY_SHIM_LOG = ["{log}"]\n')
    proc = built.run("run", str(matrix), "--out", str(tmp_path / "out"), sim=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cells = [json.loads(line) for line in log.read_text().splitlines()
             if " cell " in json.loads(line)["command"]]
    assert len(cells) == 1, log.read_text()
    calls = {(c["symbol"], c["path"]): c["calls"] for c in cells[0]["slow_calls"]}
    # Two before: the start-up's own and the one inside the driver facts that follow it; with a
    # slow driver start (a simulated 40 s cuInit) each was paid in full.
    assert calls == {("cuInit", "dlsym"): 1}


# --- 17: SIGHUP is an interruption, like SIGTERM ------------------------------------------------

def wait_for_a_case(results: Path, proc: subprocess.Popen, limit_s: float = 120) -> None:
    """Until results.jsonl holds a case record (an event, not a guess at how long a case lasts)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end and proc.poll() is None:
        if results.is_file() and '"type":"case"' in results.read_text().replace(" ", ""):
            return
        time.sleep(0.05)
    pytest.fail(f"no case recorded in {results} (run exit {proc.poll()})")


def test_sighup_interrupts_the_run_and_resume_completes_it(built, tmp_path):
    # Every DtoD copy takes 0.3 s: after the first case there is always more left to cut short.
    matrix = matrix_file(tmp_path, "hup")
    matrix.write_text(matrix.read_text() + 'CUPARITY_SIM_FAULTS = '
                      '["cuMemcpyDtoD_v2:delay_ns=300000000"]\n')
    out = tmp_path / "out"
    proc = subprocess.Popen([built.cuparity, "--driver", "sim", "run", str(matrix), "--out",
                             str(out), "-j", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=built.env())
    wait_for_a_case(out / "results.jsonl", proc)
    proc.send_signal(signal.SIGHUP)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 129, stderr[-2000:]
    assert "interrupted; every finished case is in" in stderr and "--resume" in stderr
    done = built.run("run", str(matrix), "--out", str(out), "--resume", "-j", "2", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


# --- 18: --resume reads only an untouched record of this run ------------------------------------

@pytest.fixture
def finished(built, tmp_path) -> tuple[Path, Path]:
    matrix = matrix_file(tmp_path)
    out = tmp_path / "out"
    proc = built.run("run", str(matrix), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return matrix, out


def zero_fingerprint(plan: dict) -> None:
    plan["fingerprint"] = "0" * len(plan["fingerprint"])


def one_more_pair(plan: dict) -> None:
    plan["pairs"] += 1


@pytest.mark.parametrize("edit", [zero_fingerprint, one_more_pair])
def test_resume_refuses_a_run_record_whose_plan_was_edited(built, finished, edit):
    """An altered fingerprint, or an edited plan under its old one."""
    matrix, out = finished
    lines = (out / "results.jsonl").read_text().splitlines()
    run = json.loads(lines[0])
    edit(run["plan"])
    (out / "results.jsonl").write_text("\n".join([json.dumps(run), *lines[1:]]) + "\n")
    proc = built.run("run", str(matrix), "--out", str(out), "--resume")
    assert proc.returncode == 2, proc.stderr
    assert "does not match its fingerprint" in proc.stderr


def test_resume_refuses_a_doubled_run_record(built, finished):
    matrix, out = finished
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join([lines[0], *lines]) + "\n")
    proc = built.run("run", str(matrix), "--out", str(out), "--resume")
    assert proc.returncode == 2, proc.stderr
    assert "holds 2 run record(s)" in proc.stderr


@pytest.mark.parametrize("content", [b"garbage, not gzip\n", b"\x1f\x8b\x08garbled"])
def test_a_garbage_results_gz_is_named_never_ignored(built, tmp_path, content):
    matrix = matrix_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl.gz").write_bytes(content)
    fresh = built.run("run", str(matrix), "--out", str(out))
    assert fresh.returncode == 2, fresh.stderr
    assert "results.jsonl.gz" in fresh.stderr
    resumed = built.run("run", str(matrix), "--out", str(out), "--resume")
    assert resumed.returncode == 2, resumed.stderr
    assert f"{out}/results.jsonl.gz" in resumed.stderr
    assert not (out / "results.jsonl").exists(), "a run started over beside it"


def test_a_stored_results_gz_is_kept_aside_by_force(built, finished):
    matrix, out = finished
    raw = (out / "results.jsonl").read_bytes()
    (out / "results.jsonl").unlink()
    for name in ("summary.json", "junit.xml"):
        (out / name).unlink()
    stored = gzip.compress(raw)
    (out / "results.jsonl.gz").write_bytes(stored)
    resumed = built.run("run", str(matrix), "--out", str(out), "--resume")
    assert resumed.returncode == 2 and "decompress it" in resumed.stderr, resumed.stderr
    forced = built.run("run", str(matrix), "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr[-2000:]
    kept = [p for p in out.iterdir() if p.name.startswith("results.jsonl.gz.")]
    assert len(kept) == 1 and kept[0].read_bytes() == stored
