"""`cuparity faults` and `cuparity calibrate` given what a careless or unlucky user gives them
(issue 47): a selection that selects nothing, an output folder that is not theirs to fill, a
target that is not there, a full disk, options out of order. Each answer is a named error and a
non-zero exit, before anything is run where the input alone decides it.

faults runs on the simulated driver with the 2-cell matrix and one trial at most; calibrate is
refused before it measures anything, but for the one --force run (one probe, one delay, one
round of 1 ms series).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from . import hostile_support as hs

FAST_CALIBRATE = ["--probe", "ctx.get_current", "--delays", "50", "--rounds", "1",
                  "--min-time", "0.001"]


def faults(built, matrix: Path, out: Path, *argv: str):
    return built.run("faults", str(matrix), "--out", str(out), "-j", "1", "--cell-jobs", "2",
                     *argv)


def calibrate(built, out: Path, *argv: str):
    return built.run("calibrate", "--out", str(out), "--target", built.sim_driver, *argv)


# --- faults: an empty selection is never exit 0 (defect 4) ---------------------------------

@pytest.mark.parametrize("glob", ["cuNoSuchSymbol", "", "["])
def test_faults_symbol_matching_no_exported_symbol_is_refused(built, small_matrix, tmp_path,
                                                              glob):
    proc = faults(built, small_matrix, tmp_path / "out", "--symbol", glob)
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--symbol '{glob}'" in proc.stderr
    assert "trials caught" not in proc.stdout
    # Refused before the control run: nothing was run for a typo.
    assert not (tmp_path / "out" / "control").exists()


def test_faults_one_typo_among_good_globs_is_refused(built, small_matrix, tmp_path):
    proc = faults(built, small_matrix, tmp_path / "out", "--symbol", "cuMemcpyDtoD_v2",
                  "--symbol", "cuMemcpyDtoDx")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--symbol 'cuMemcpyDtoDx'" in proc.stderr


def test_faults_symbol_no_cell_binds_is_refused(built, small_matrix, tmp_path):
    # Exported by the driver, but the matrix's cells never bind it: no trial could be planned.
    proc = faults(built, small_matrix, tmp_path / "out", "--symbol", "cuCtxCreate_v4")
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--symbol 'cuCtxCreate_v4'" in proc.stderr
    assert "control run bound" in proc.stderr


def test_faults_selection_leaving_no_trial_is_refused(built, small_matrix, tmp_path):
    # legacy is tried on per-thread (_ptds/_ptsz) symbols only: this selection plans nothing.
    proc = faults(built, small_matrix, tmp_path / "out", "--symbol", "cuMemcpyDtoD_v2",
                  "--kind", "legacy")
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no trial to run" in proc.stderr
    assert "trials caught" not in proc.stdout


# --- faults: the real cause named (defect 13) ----------------------------------------------

def test_faults_missing_target_is_named(built, small_matrix, tmp_path):
    target = tmp_path / "no-such" / "libcuda.so.1"
    proc = faults(built, small_matrix, tmp_path / "out", "--shim", "--target", str(target))
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--target {target}: no such file" in proc.stderr
    assert "not equivalent" not in proc.stderr
    assert not (tmp_path / "out" / "control").exists()


def test_faults_target_that_is_no_library_is_named(built, small_matrix, tmp_path):
    target = tmp_path / "not-a-library.so"
    target.write_text("not an ELF file\n")
    proc = faults(built, small_matrix, tmp_path / "out", "--shim", "--target", str(target))
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--target {target}: cannot be opened" in proc.stderr


def test_faults_target_without_shim_is_refused(built, small_matrix, tmp_path):
    # The simulated driver has no target: the flag would be ignored and the run read as its.
    proc = faults(built, small_matrix, tmp_path / "out", "--target", built.sim_driver)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--shim" in proc.stderr and "--target" in proc.stderr


def test_faults_default_target_missing_is_the_environment(built, small_matrix, tmp_path):
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has libcuda.so.1: the shim's default target opens")
    except OSError:
        pass
    proc = faults(built, small_matrix, tmp_path / "out", "--shim")
    hs.no_traceback(proc)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "libcuda.so.1" in proc.stderr and "--target" in proc.stderr
    assert "not equivalent" not in proc.stderr


def test_faults_out_on_a_full_disk_names_the_file(built, small_matrix, small_device):
    device = small_device("64k")
    hs.fill(device)
    proc = faults(built, small_matrix, device / "out", "--symbol", "cuMemcpyDtoD_v2", "--kind",
                  "corrupt")
    hs.no_traceback(proc)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"{device}/out" in proc.stderr
    assert "No space left on device" in proc.stderr
    assert "not equivalent" not in proc.stderr


# --- faults: --out over a run folder (defect 15) -------------------------------------------

@pytest.mark.parametrize("run_file", ["results.jsonl", "summary.json"])
def test_faults_out_over_a_run_folder_is_refused(built, small_matrix, tmp_path, run_file):
    run = tmp_path / "run"
    run.mkdir()
    (run / run_file).write_text("{}\n")
    proc = faults(built, small_matrix, run, "--symbol", "cuMemcpyDtoD_v2", "--kind", "corrupt")
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--out {run}: holds a cuparity run ({run_file})" in proc.stderr
    assert sorted(p.name for p in run.iterdir()) == [run_file]


def test_faults_out_over_a_real_run_is_refused(built, small_matrix, tmp_path):
    run = tmp_path / "run"
    done = built.run("run", str(small_matrix), "--out", str(run), "--no-latency")
    assert done.returncode == 0, done.stdout + done.stderr
    before = sorted(p.name for p in run.iterdir())
    proc = faults(built, small_matrix, run)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--out {run}: holds a cuparity run" in proc.stderr
    assert sorted(p.name for p in run.iterdir()) == before


# --- calibrate: no overwrite, no nonsense (defect 8) ---------------------------------------

def test_calibrate_refuses_to_replace_an_earlier_calibration(built, tmp_path):
    out = tmp_path / "cal"
    out.mkdir()
    earlier = out / "calibrate.json"
    earlier.write_text('{"schema": "cuparity.calibrate/2", "earlier": true}\n')
    proc = calibrate(built, out, *FAST_CALIBRATE)
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{earlier}: an earlier calibration" in proc.stderr
    assert "--force" in proc.stderr
    assert earlier.read_text() == '{"schema": "cuparity.calibrate/2", "earlier": true}\n'
    assert sorted(p.name for p in out.iterdir()) == ["calibrate.json"]


def test_calibrate_force_replaces_an_earlier_calibration(built, tmp_path):
    out = tmp_path / "cal"
    out.mkdir()
    (out / "calibrate.json").write_text('{"earlier": true}\n')
    proc = calibrate(built, out, "--force", *FAST_CALIBRATE)
    hs.no_traceback(proc)
    # 0, or 1 when the 1 ms A/A read a difference: either way a calibration, written over.
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert '"earlier"' not in (out / "calibrate.json").read_text()
    assert "cuparity.calibrate/2" in (out / "calibrate.json").read_text()


def test_calibrate_out_over_a_run_folder_is_refused(built, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}\n")
    proc = calibrate(built, run, "--force", *FAST_CALIBRATE)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--out {run}: holds a cuparity run (summary.json)" in proc.stderr
    assert sorted(p.name for p in run.iterdir()) == ["summary.json"]


@pytest.mark.parametrize("delays", [["5", "1"], ["5,1"], ["1", "1"]])
def test_calibrate_delays_out_of_order_are_refused(built, tmp_path, delays):
    out = tmp_path / "cal"
    proc = calibrate(built, out, "--probe", "ctx.get_current", "--rounds", "1", "--min-time",
                     "0.001", "--delays", *delays)
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    first, second = (delays[0].split(",") + delays[1:])[:2]
    assert f"--delays: {second} after {first}" in proc.stderr
    assert not (out / "calibrate.json").exists()


@pytest.mark.parametrize("symbol", ["cuNoSuch", "cuparity_simulated_driver"])
def test_calibrate_symbol_the_driver_does_not_export_is_refused(built, tmp_path, symbol):
    out = tmp_path / "cal"
    proc = calibrate(built, out, "--symbol", symbol, *FAST_CALIBRATE)
    hs.no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--symbol '{symbol}'" in proc.stderr
    assert "not a symbol the driver exports" in proc.stderr
    assert not (out / "calibrate.json").exists()
