"""scripts/bench-overhead (tests/bench/overhead.py) runs and writes its figures' JSON.

The figures themselves are not checked (a benchmark, not a timed test): two pairs, no warm-up, of
simpkg under `cuparity capture` and of the generated 200-test suite under `cuparity run`, on the
simulated driver. The binaries are found in $CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin, else
<repo>/build/bin; without them the test is skipped, naming the folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "bench-overhead"

RESULT_KEYS = {
    "kind", "label", "measures", "part", "bare_command", "command", "environment", "order", "bare_s",
    "wrapped_s", "bare_median_s", "wrapped_median_s", "ratio", "ratio_ci95", "overhead_pct",
    "diff_ms", "paired_diff_median_ms", "paired_diff_ci95_ms", "goal", "meets_goal",
}


def _bin_dir() -> Path:
    if os.environ.get("CUPARITY_BIN_DIR"):
        return Path(os.environ["CUPARITY_BIN_DIR"])
    return Path(os.environ.get("CUPARITY_BUILD_DIR", REPO / "build")) / "bin"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHON=sys.executable)
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_two_pairs_of_simpkg_and_suite200_give_every_figure(tmp_path):
    cuparity = _bin_dir() / "cuparity"
    if not (cuparity.exists() and (_bin_dir() / "libcuparity_simdriver.so").exists()):
        pytest.skip(f"no cuparity and simulated driver in {_bin_dir()}: build them with scripts/build")
    out = tmp_path / "bench.json"
    r = _run("--pairs", "2", "--warmup", "0", "--driver", "sim", "--cuparity", str(cuparity),
             "--json", str(out), "simpkg", "suite200")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "cuparity.bench_overhead/1" and doc["pairs"] == 2
    assert [x["label"] for x in doc["results"]] == ["simpkg", "suite200"]
    assert [x["measures"] for x in doc["results"]] == ["capture", "suite"]
    for result in doc["results"]:
        assert set(result) == RESULT_KEYS
    for result, full in zip(doc["results"], ["capture", "runner"]):
        assert result["part"] == full
        assert result["order"] == [["bare", full], [full, "bare"]]  # interleaved, alternating
        assert len(result["bare_s"]) == len(result["wrapped_s"]) == 2
        assert all(t > 0 for t in result["bare_s"] + result["wrapped_s"])
        lo, hi = result["ratio_ci95"]
        assert lo <= hi and result["paired_diff_ci95_ms"] is None  # 2 pairs: too few for an interval
        assert result["ratio"] == pytest.approx(result["wrapped_median_s"] / result["bare_median_s"])
    assert doc["results"][0]["command"][1:5] == ["--driver", "sim", "capture", "--quiet"]
    assert doc["results"][1]["command"][1:4] == ["--driver", "sim", "run"]
    # the table on stdout: a header and one line per kind
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] == "kind" and [line.split()[0] for line in lines[1:]] == ["simpkg", "suite200"]


def test_a_failing_command_is_named_and_not_a_figure(tmp_path):
    cuparity = _bin_dir() / "cuparity"
    if not cuparity.exists():
        pytest.skip(f"no cuparity in {_bin_dir()}: build it with scripts/build")
    out = tmp_path / "bench.json"
    r = _run("--pairs", "1", "--warmup", "0", "--cuparity", str(cuparity), "--json", str(out), "capture:false=false")
    assert r.returncode == 1
    assert "false (bare) exited 1" in r.stderr and not out.exists()


def test_an_unknown_kind_is_usage():
    r = _run("--cuparity", "/bin/true", "nonesuch")
    assert r.returncode == 2 and "unknown kind 'nonesuch'" in r.stderr


def test_parts_split_a_capture_into_the_audit_library_the_hook_and_the_rest(tmp_path):
    cuparity = _bin_dir() / "cuparity"
    if not (cuparity.exists() and (_bin_dir() / "libcuparity_simdriver.so").exists()):
        pytest.skip(f"no cuparity and simulated driver in {_bin_dir()}: build them with scripts/build")
    out = tmp_path / "bench.json"
    r = _run("--pairs", "1", "--warmup", "0", "--driver", "sim", "--cuparity", str(cuparity),
             "--json", str(out), "--parts", "simpkg")
    assert r.returncode == 0, r.stderr
    results = json.loads(out.read_text())["results"]
    assert [(x["label"], x["part"]) for x in results] == [
        ("simpkg/audit", "audit"), ("simpkg/audit+hook", "audit+hook"), ("simpkg", "capture")]
    audit, hook, full = results
    assert audit["command"] == audit["bare_command"] == full["bare_command"]
    assert audit["environment"]["LD_AUDIT"].endswith("/libcuparity_audit.so")
    assert "PYTHONPATH" in hook["environment"] and hook["environment"]["PYTHONPATH"].split(":")[0].endswith("python-hook")
    assert full["order"] == [["bare", "audit", "audit+hook", "capture"]]
