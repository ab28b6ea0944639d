"""scripts/device/latency-floor on the simulated driver: a run with the shim's log, whose delayed
probe processes are matched to their cells, and the errors of --table."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "device", "latency-floor")
BUILD = os.environ.get("CUPARITY_BUILD_DIR", os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "bin")


def sim_matrix(tmp_path) -> str:
    """latency-floor.toml in front of the simulated driver, with short series."""
    with open(os.path.join(ROOT, "matrices", "latency-floor.toml"), encoding="utf-8") as f:
        text = f.read()
    text = text.replace('CUPARITY_SHIM_TARGET = ["libcuda.so.1"]',
                        'CUPARITY_SHIM_TARGET = ["{bin}/libcuparity_simdriver.so"]')
    text = text.replace("min_time_s = 3.6", "min_time_s = 0.1")
    text = text.replace('"ctx.get_current" = 0.3', '"ctx.get_current" = 0.05')
    path = tmp_path / "floor.toml"
    path.write_text(text)
    return str(path)


def test_a_run_with_the_shim_log_matches_each_delayed_probe_process_to_its_cell(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, SCRIPT, str(out), "--runs", "1", "--first", "7",
                        "--matrix", sim_matrix(tmp_path), "--bin", BIN, "--shim-log"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert run["run"] == 7 and run["exit_code"] == 0
    # 4 cells x 2 delayed faults; each probe process's line carries its cell and its figures.
    assert len(run["shim"]) == 8
    delayed_cells = {tuple(p["cell_key"]) for p in run["paired"] if p["fault"] != "none"}
    assert {tuple(s["cell"]) for s in run["shim"]} == delayed_cells
    for s in run["shim"]:
        assert s["loop_calls"] > 0 and s["samples"] > 0
        assert 0 < s["rate_min"] <= s["rate_max"]
        paths = {c["path"] for c in s["slow_calls"] if c["symbol"].startswith("cuLaunchKernel")}
        assert paths == {"dlsym", "proc"}  # a fault on one path sends both through the slow path
    assert (out / "shim-7.jsonl").exists()
    table = (out / "floor.txt").read_text()
    assert "shim log (1 runs): delayed probe processes 8;" in table
    # Each fault verdict that did not read as expected is listed with its cell's figures.
    misses = [p for p in run["paired"] if p["probe"] == "launch.empty_kernel" and
              p["fault"] != "none" and p["verdict"] != {"proc": "slower", "dlsym": "faster"}[p["fault"]]]
    assert table.count(" miss: ") == len(misses)


def test_table_errors_name_the_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(empty)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and str(empty) in r.stderr

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"run": 1, "wall_s": 1, "exit_code": 0, "floors": [], "paired": []}\n'
                   '{"run": 2,\n')
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(bad)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and f"{bad} line 2:" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(tmp_path / "missing.jsonl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "missing.jsonl" in r.stderr and "Traceback" not in r.stderr
    partial = tmp_path / "partial.jsonl"
    partial.write_text('{"paired": []}\n')
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(partial)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and f"{partial} line 1: not a run of latency-floor (no run, wall_s" \
        in r.stderr
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\n")
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(binary)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and str(binary) in r.stderr and "Traceback" not in r.stderr


def test_table_lists_a_miss_without_a_ratio_and_every_process_of_its_cell(tmp_path):
    """A not_measured verdict has no ratio; a cell may have had two delayed probe processes."""
    cell = ["0", "0", "0", "cuLaunchKernel:delay_ns=18@proc"]
    proc = {"cell": cell, "slow_calls": [], "loops_per_ns": 2.0, "long_overhead_loops": 5.0}
    run = {"run": 3, "wall_s": 150.0, "exit_code": 1, "floors": [],
           "paired": [{"probe": "launch.empty_kernel", "own": "internal", "ratio": None,
                       "verdict": "not_measured", "fault": "proc", "ptds": False,
                       "cell_key": cell}],
           "shim": [proc, dict(proc, loops_per_ns=3.0)]}
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(run) + "\n")
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(runs)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    misses = [line for line in r.stdout.splitlines() if " miss: " in line]
    assert len(misses) == 2 and all("no ratio not_measured" in m for m in misses)
    assert "loops_per_ns 2" in misses[0] and "loops_per_ns 3" in misses[1]


def test_a_shim_log_with_broken_lines_keeps_the_good_ones(tmp_path, capsys):
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("latency_floor", SCRIPT)
    spec = importlib.util.spec_from_loader("latency_floor", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    good = {"command": "cuparity run-cell --probe launch.empty_kernel --serve",
            "variables": {"NUMBA_CUDA_USE_NVIDIA_BINDING": "1"}, "slow_calls": [],
            "delay": {"loops_per_ns": 2.5, "loop_calls": 10}}
    log = tmp_path / "shim.jsonl"
    log.write_text(json.dumps(good) + "\n" + '{"command": "cut sh\n' + "[1, 2]\n"
                   + json.dumps(dict(good, delay=None)) + "\n")
    (kept,) = module.shim_digest(str(log))
    assert kept["cell"][0] == "1" and kept["loops_per_ns"] == 2.5 and kept["loop_calls"] == 10
    assert "2 of 4 lines are no process's record" in capsys.readouterr().err


def test_table_reads_a_gzipped_runs_file_and_names_a_cut_one(tmp_path):
    """Committed runs keep runs.jsonl gzipped (reports/runs/*/runs.jsonl.gz): --table reads them as stored."""
    import gzip
    cell = ["0", "0", "0", "none"]
    run = {"run": 1, "wall_s": 100.0, "exit_code": 0, "floors": [],
           "paired": [{"probe": "launch.empty_kernel", "own": "internal", "ratio": 1.0,
                       "verdict": "same", "fault": "none", "ptds": False, "cell_key": cell}]}
    packed = tmp_path / "runs.jsonl.gz"
    packed.write_bytes(gzip.compress((json.dumps(run) + "\n").encode()))
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(packed)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:-12])
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(cut)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith(f"latency-floor --table: {cut}: "), r.stderr


def test_table_reads_every_committed_runs_file():
    committed = sorted(glob.glob(os.path.join(ROOT, "reports", "runs", "*", "**", "runs*.jsonl*"),
                                 recursive=True))
    assert committed
    for path in committed:
        r = subprocess.run([sys.executable, SCRIPT, "--table", path], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and "launch.empty_kernel" in r.stdout, (path, r.stderr)
