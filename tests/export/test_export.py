"""`cuparity export --format bencher|pyperf`: a run's figures in each dashboard's own format.

Two runs are exported: one made here on the simulated driver (latency-small.toml: two cells, a host
probe in ns and a bandwidth probe in GB/s, two rounds; about a second) and a committed H200 latency
run (reports/runs). The Bencher JSON is checked against the Bencher Metric Format's published
schema (bmf.schema.json, with the jsonschema package); the pyperf JSON is loaded back by pyperf
itself (BenchmarkSuite.load), and both against the summary.json they came from. Bad input is exit 2
naming the path or option (docs/export.md).
"""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import jsonschema
import pyperf
import pytest

from external.test_suite_matrix import bin_dir

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# A committed H200 latency run: 15 probes, 48 paired verdicts, driver 580.159.04. Given as a file
# (the folder's own summary.json.gz is the functional run).
H200_LATENCY = REPO / "reports/runs/2026-12-03-h200-5ad3140/latency-summary.json.gz"
# A committed run folder holding summary.json.gz (latency-floor: paired verdicts at 0.5 %).
H200_FLOOR_DIR = REPO / "reports/runs/2026-12-03-h200-cbe5c87-warmup"



def cuparity(*args: str) -> subprocess.CompletedProcess:
    exe = bin_dir() / "cuparity"
    if not exe.is_file():
        pytest.skip(f"no cuparity in {bin_dir()}: build with scripts/build")
    # From the repository root: a committed run named relatively is named so in the output.
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120, cwd=REPO)


def load_summary(path: Path) -> dict:
    if path.is_dir():
        path = path / "summary.json" if (path / "summary.json").is_file() else path / "summary.json.gz"
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def export(run: Path, fmt: str, out: Path, *extra: str) -> Path:
    proc = cuparity("export", str(run), "--format", fmt, "-o", str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    return out


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim") / "run"
    if not (bin_dir() / "libcuparity_simdriver.so").is_file():
        pytest.skip("no simulated driver: build with scripts/build")
    proc = cuparity("--driver", "sim", "run", str(HERE / "latency-small.toml"), "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def series_of(summary: dict):
    """(name, probe, unit, values) of every latency series, as export names them."""
    matrix = summary["matrix"]["name"]
    for probe in summary["latency"]["probes"]:
        for series, values in probe["samples"].items():
            kind, _, cell = series.partition(":") if series.startswith(("direct:", "other:")) \
                else ("facade", "", series)
            yield f"{matrix} | {cell} | {probe['name']} | {kind}", probe, values


def measured_paired(summary: dict):
    matrix = summary["matrix"]["name"]
    for p in summary["latency"]["paired"]:
        if p["verdict"] != "not_measured":
            yield f"{matrix} | {p['cell']} | {p['probe']} | paired-nvidia-internal", p


def check_bencher(path: Path, summary: dict) -> dict:
    bmf = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(bmf, json.loads((HERE / "bmf.schema.json").read_text(encoding="utf-8")))
    matrix = summary["matrix"]["name"]
    expected = {f"{matrix} | functional-phase"}
    for name, probe, values in series_of(summary):
        expected.add(name)
        measure = {"ns": "latency", "GB/s": "bandwidth-gb-s"}[probe["unit"]]
        metric = bmf[name][measure]
        assert metric["lower_value"] == min(values) and metric["upper_value"] == max(values)
        assert min(values) <= metric["value"] <= max(values)
    for name, p in measured_paired(summary):
        expected.add(name)
        assert bmf[name]["ratio-nvidia-internal"] == {
            "value": p["ratio"], "lower_value": p["ci_low"], "upper_value": p["ci_high"]}
    assert set(bmf) == expected
    assert bmf[f"{matrix} | functional-phase"] == {"wall-time-s": {"value": summary["functional_wall_s"]}}
    return bmf


def check_pyperf(path: Path, summary: dict) -> pyperf.BenchmarkSuite:
    suite = pyperf.BenchmarkSuite.load(str(path))
    prov = summary["provenance"]
    meta = suite.get_metadata()
    assert meta["cuparity_matrix"] == summary["matrix"]["name"]
    assert meta["cuparity_revision"] == prov["git_revision"]
    assert meta["cuparity_gpu"] == prov["gpus"][0]
    assert meta["cuparity_driver_release"] == prov["driver_release"]
    by_name = {b.get_name(): b for b in suite.get_benchmarks()}
    expected = {f"{summary['matrix']['name']} | functional-phase"}
    for name, probe, values in series_of(summary):
        expected.add(name)
        bench = by_name[name]
        assert bench.get_unit() == "second"
        want = [v * 1e-9 for v in values] if probe["unit"] == "ns" else [1 / v for v in values]
        assert list(bench.get_values()) == pytest.approx(want, rel=1e-12)
    for name, p in measured_paired(summary):
        facade = by_name[name.replace("paired-nvidia-internal", "facade")].get_metadata()
        assert facade["cuparity_paired_ratio"] == p["ratio"]
        assert facade["cuparity_paired_ci_low"] == p["ci_low"]
        assert facade["cuparity_paired_ci_high"] == p["ci_high"]
        assert facade["cuparity_paired_verdict"] == p["verdict"]
    assert set(by_name) == expected
    phase = by_name[f"{summary['matrix']['name']} | functional-phase"]
    assert list(phase.get_values()) == [summary["functional_wall_s"]]
    return suite


def test_bencher_of_a_simulated_run_matches_the_metric_format(sim_run, tmp_path):
    summary = load_summary(sim_run)
    bmf = check_bencher(export(sim_run, "bencher", tmp_path / "bmf.json"), summary)
    # Both probes' series of both cells, and a paired ratio per cell and probe.
    assert len(bmf) == 1 + 2 * 2 * 3 + 2 * 2


def test_pyperf_reads_back_a_simulated_run(sim_run, tmp_path):
    suite = check_pyperf(export(sim_run, "pyperf", tmp_path / "run.json"), load_summary(sim_run))
    assert suite.get_metadata()["cuparity_simulated"] == "true"
    # The values are the rounds' latency_sample records of results.jsonl, in round order.
    records = [json.loads(line) for line in
               (sim_run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    by_name = {b.get_name(): b for b in suite.get_benchmarks()}
    samples = sorted((r for r in records if r["type"] == "latency_sample"), key=lambda r: r["round"])
    assert samples
    for kind in ("facade", "direct", "other"):
        for cell in ("nv=0", "nv=1"):
            values = [r["value"] for r in samples if (r["series"], r["cell"], r["probe"]) ==
                      (kind, cell, "launch.empty_kernel")]
            name = f"export-latency | {cell} | launch.empty_kernel | {kind}"
            assert list(by_name[name].get_values()) == pytest.approx([v / 1e9 for v in values])


def test_stdout_is_the_default_output(sim_run):
    proc = cuparity("export", str(sim_run), "--format", "bencher")
    assert proc.returncode == 0, proc.stderr
    assert "export-latency | functional-phase" in json.loads(proc.stdout)


def test_context_in_names_adds_gpu_driver_and_revision(sim_run, tmp_path):
    summary = load_summary(sim_run)
    prov = summary["provenance"]
    bmf = json.loads(export(sim_run, "bencher", tmp_path / "b.json", "--context-in-names")
                     .read_text(encoding="utf-8"))
    tail = f" [{prov['gpus'][0]}, driver {prov['driver_release']}, {prov['git_revision'][:12]}]"
    assert all(name.endswith(tail) for name in bmf), list(bmf)[:3]
    suite = pyperf.BenchmarkSuite.load(
        str(export(sim_run, "pyperf", tmp_path / "p.json", "--context-in-names")))
    assert all(name.endswith(tail) for name in suite.get_benchmark_names())


@pytest.mark.parametrize("run", [H200_LATENCY, H200_FLOOR_DIR], ids=["latency", "floor-dir"])
def test_a_committed_h200_run_exports_in_both_formats(run, tmp_path):
    summary = load_summary(run)
    assert summary["provenance"]["gpus"] == ["NVIDIA H200"]
    check_bencher(export(run, "bencher", tmp_path / "bmf.json"), summary)
    suite = check_pyperf(export(run, "pyperf", tmp_path / "run.json"), summary)
    assert suite.get_metadata()["cuparity_driver_release"] == "580.159.04"


def refused(*args: str) -> str:
    proc = cuparity("export", *args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    return proc.stderr


def test_a_missing_run_is_refused_by_its_path(tmp_path):
    missing = tmp_path / "nothing-here"
    assert str(missing) in refused(str(missing), "--format", "pyperf")


def test_an_unknown_format_is_refused_by_its_option(sim_run):
    assert "--format" in refused(str(sim_run), "--format", "csv")


def test_a_garbled_or_foreign_summary_is_refused_by_file_and_member(sim_run, tmp_path):
    garbled = tmp_path / "garbled" / "summary.json"
    garbled.parent.mkdir()
    garbled.write_text("{not json", encoding="utf-8")
    assert str(garbled) in refused(str(garbled.parent), "--format", "bencher")
    foreign = load_summary(sim_run)
    foreign["schema"] = "cuparity.summary/2"
    path = tmp_path / "foreign.summary.json"
    path.write_text(json.dumps(foreign), encoding="utf-8")
    err = refused(str(path), "--format", "pyperf")
    assert str(path) in err and "schema" in err
    bad_ratio = load_summary(sim_run)
    bad_ratio["latency"]["paired"][0]["ratio"] = "fast"
    path.write_text(json.dumps(bad_ratio), encoding="utf-8")
    assert "latency.paired[0].ratio" in refused(str(path), "--format", "bencher")


def test_a_run_with_nothing_to_export_is_not_exit_0(sim_run, tmp_path):
    empty = load_summary(sim_run)
    del empty["functional_wall_s"]
    empty["latency"] = None
    path = tmp_path / "empty.summary.json"
    path.write_text(json.dumps(empty), encoding="utf-8")
    assert "nothing to export" in refused(str(path), "--format", "pyperf")


def test_the_output_is_never_the_input(sim_run):
    summary = sim_run / "summary.json"
    before = summary.read_bytes()
    assert "-o" in refused(str(sim_run), "--format", "bencher", "-o", str(summary))
    assert summary.read_bytes() == before
    results = sim_run / "results.jsonl"
    before = results.read_bytes()
    assert "-o" in refused(str(sim_run), "--format", "pyperf", "-o", str(results))
    assert results.read_bytes() == before


def doc_examples() -> list[dict]:
    """The ```json blocks of docs/export.md, in order (the Bencher example, then the pyperf one)."""
    text = (REPO / "docs/export.md").read_text(encoding="utf-8")
    blocks = text.split("```json\n")[1:]
    return [json.loads(b.split("\n```", 1)[0]) for b in blocks]


def test_the_doc_examples_are_what_the_command_writes():
    bencher_example, pyperf_example = doc_examples()
    proc = cuparity("export", str(H200_LATENCY.relative_to(REPO)), "--format", "bencher")
    assert proc.returncode == 0, proc.stderr
    bmf = json.loads(proc.stdout)
    assert {name: bmf[name] for name in bencher_example} == bencher_example
    proc = cuparity("export", str(H200_LATENCY.relative_to(REPO)), "--format", "pyperf")
    assert proc.returncode == 0, proc.stderr
    suite = json.loads(proc.stdout)
    assert suite["version"] == pyperf_example["version"]
    assert suite["metadata"] == pyperf_example["metadata"]
    names = {b["metadata"]["name"]: b for b in suite["benchmarks"]}
    for b in pyperf_example["benchmarks"]:
        assert names[b["metadata"]["name"]] == b
