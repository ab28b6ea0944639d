"""`cuparity run` of benchmarks.toml: a package's own benchmarks as latency series ([[benchmark]]).

One run (a module fixture) on the simulated driver: examples/benchmarks' drvcalls timed by a real
pytest-benchmark run (with its A/A control) and a real pyperf run in two cells of different
bindings, two rounds each, and a benchmark that cannot run (a missing package in one cell,
malformed JSON in the other). The tests read its summary.json, `cuparity compare` of the run
against a copy of it, and its dashboard.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from .test_suite_matrix import REPO, bin_dir, problems, run_matrix

pytest.importorskip("pytest_benchmark", reason="pytest-benchmark (reports/requirements.txt)")
pytest.importorskip("pyperf", reason="pyperf (reports/requirements.txt)")

PYTEST_PROBE = "bench:drvcalls:test_driver_calls.py::test_ctx_get_current"
PYPERF_PROBE = "bench:drvcalls-pyperf:ctx_get_current"


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("benchmarks") / "out"
    return run_matrix("benchmarks.toml", out), out


@pytest.fixture(scope="module")
def bench(bench_run):
    return bench_run[0]


def test_each_benchmark_is_a_latency_series_of_every_cell(bench):
    probes = {p["name"]: p for p in bench["latency"]["probes"]}
    for name in (PYTEST_PROBE, PYPERF_PROBE, "bench:drvcalls:test_driver_calls.py::test_alloc_free_4k"):
        assert probes[name]["unit"] == "ns" and probes[name]["kind"] == "benchmark", name
        for cell in ("nv=0", "nv=1"):
            values = probes[name]["samples"][cell]
            assert len(values) == 2 and all(v > 0 for v in values), (name, cell, values)
    # The A/A control is a series of its own, pytest-benchmark's only (pyperf's has none).
    assert len(probes[PYTEST_PROBE]["samples"]["control:nv=0"]) == 2
    assert "control:nv=0" not in probes[PYPERF_PROBE]["samples"]
    assert not [p for p in probes if p.startswith("bench:broken:")]


def test_cells_of_different_bindings_are_compared_and_the_control_against_its_cell(bench):
    rows = [c for c in bench["latency"]["comparisons"] if c["probe"] == PYTEST_PROBE]
    across = [c for c in rows if not c.get("control")]
    assert [(c["a"], c["b"], c["a_backend"], c["b_backend"]) for c in across] == [
        ("nv=0", "nv=1", "internal", "nvidia")]
    controls = sorted((c["a"], c["b"]) for c in rows if c.get("control"))
    assert controls == [("nv=0", "control:nv=0"), ("nv=1", "control:nv=1")]
    assert all(c["verdict"] in ("same", "ambiguous", "slower", "faster") for c in rows)
    assert [c for c in bench["latency"]["comparisons"] if c["probe"] == PYPERF_PROBE]


def test_a_benchmark_that_cannot_run_is_its_cells_named_error(bench):
    errors = {p["cell"]: p["message"] for p in problems(bench, "cell_error")
              if "'broken'" in p["message"]}
    assert set(errors) == {"nv=0", "nv=1"}, errors
    assert errors["nv=0"].startswith("benchmark 'broken' could not run: its process exited with "
                                     "code 1 and wrote no JSON at ")
    assert "No module named 'cuparity_no_such_package'" in errors["nv=0"]
    assert errors["nv=1"].startswith("benchmark 'broken' could not run: ")
    assert "/broken/r0/benchmark.json: benchmarks[0].stats.median: missing" in errors["nv=1"]
    assert errors["nv=1"].endswith("(read as pytest-benchmark JSON)")
    assert bench["verdict"] == "failed" and bench["exit_code"] == 1


def test_a_benchmark_that_bound_another_binding_than_its_cell_is_named_not_compared(bench):
    """A benchmark's own word on its binding (extra_info.cuparity_binding): where it differs from
    the cell's (a Numba fallback), its figures are left out and the cell has a named error."""
    errors = [p for p in problems(bench, "cell_error") if "'fallback'" in p["message"]]
    assert [p["cell"] for p in errors] == ["nv=1"]
    assert errors[0]["message"].startswith(
        "benchmark 'fallback' did not time the cell's binding: 't.py::test_launch' reports it "
        "bound internal (benchmarks[0].extra_info.cuparity_binding) where the cell's variables "
        "select nvidia (a fallback)")
    probes = {p["name"]: p for p in bench["latency"]["probes"]}
    assert list(probes["bench:fallback:t.py::test_launch"]["samples"]) == ["nv=0"]
    # The examples say which binding they used, and it is their cell's: nothing left out.
    assert not [p for p in problems(bench, "cell_error") if "'drvcalls" in p["message"]]


def test_compare_of_two_runs_lists_the_benchmark_series(bench_run, tmp_path):
    _, out = bench_run
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(out / "summary.json", other / "summary.json")
    proc = subprocess.run([str(bin_dir() / "cuparity"), "compare", str(out), str(other), "--json",
                           "-"], capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    rows = json.loads(proc.stdout)["latency"]
    series = {(r["probe"], r["series"]) for r in rows}
    for probe in (PYTEST_PROBE, PYPERF_PROBE):
        assert {(probe, "nv=0"), (probe, "nv=1")} <= series, probe
    assert (PYTEST_PROBE, "control:nv=1") in series
    assert all(r["ratio"] == 1.0 for r in rows if r["probe"].startswith("bench:"))


def test_the_dashboard_draws_the_benchmark_series(bench_run, tmp_path):
    _, out = bench_run
    html = tmp_path / "dashboard.html"
    env = dict(os.environ, PYTHONPATH=str(REPO / "reports"))
    proc = subprocess.run(["python3", "-m", "cuparity_reports", "dashboard", str(out), "--output",
                           str(html)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = html.read_text(encoding="utf-8")
    for text in (PYTEST_PROBE, PYPERF_PROBE, "control:nv=0"):
        assert text in page, text
