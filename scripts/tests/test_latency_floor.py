"""scripts/device/latency-floor on the simulated driver: a run with the shim's log, whose delayed
probe processes are matched to their cells, and the errors of --table."""

from __future__ import annotations

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
    bad.write_text('{"run": 1, "paired": []}\n{"run": 2,\n')
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(bad)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and f"{bad} line 2:" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, SCRIPT, "--table", str(tmp_path / "missing.jsonl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "missing.jsonl" in r.stderr and "Traceback" not in r.stderr
