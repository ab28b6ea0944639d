"""Reading every schema the runner writes, rebuilding from results.jsonl, refusing unknown schemas."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, H200_RUN, REPORTS
from cuparity_reports.reader import NO_VERDICT, ReportInputError, load_run


def test_reads_summary_v1_dir_and_file() -> None:
    run = load_run(H200_RUN)
    assert run.summary["schema"] == "cuparity.summary/1"
    assert run.summary["results_count"] == len(run.summary["results"]) == 1062
    assert not run.simulated and not run.raw
    assert load_run(FIXTURES / "sim-div" / "summary.json").simulated


def test_reads_latency_block() -> None:
    run = load_run(FIXTURES / "latency-a")
    assert run.latency and run.latency.string("schema") == "cuparity.latency/2"
    assert {p.string("name") for p in run.latency.objs("probes")} >= {"launch.empty_kernel"}


def test_results_jsonl_alone_is_raw_records_without_a_verdict() -> None:
    run = load_run(FIXTURES / "interrupted")
    assert run.raw
    assert any("cut off" in n for n in run.notes)
    assert any("cuparity merge /work/main/matrices/smoke.toml" in n for n in run.notes)
    s = run.summary
    assert s["schema"] == "cuparity.summary/1" and s["verdict"] == NO_VERDICT and s["exit_code"] is None
    assert s["provenance"]["simulated"] is True
    # 20 lines kept: 1 run + 2 cell + 16 complete case events + 1 cut-off case event
    assert s["results_count"] == 16
    assert all(r["outcome"] == "pass" for r in s["results"])
    assert {c["id"] for c in s["cells"]} == {"nv=0,numba_ptds=0,cp_ptds=0", "nv=1,numba_ptds=0,cp_ptds=0"}
    assert s["groups"] == [] and s["divergences"] == [] and s["problems"] == []


def test_raw_records_get_no_divergences_of_their_own(tmp_path: Path) -> None:
    """Differing observations and a cell_error are shown as recorded; judging them is the C++ judge's."""
    lines = (FIXTURES / "interrupted" / "results.jsonl").read_text().splitlines()[:-1]
    events = [json.loads(l) for l in lines]
    for e in events:
        if e.get("type") == "case" and e["case"] == "context.init.facts" and e["cell"].startswith("nv=1"):
            e["observations"]["total_memory"] += 1
    events.append({"type": "cell_error", "cell": "broken", "kind": "config", "message": "bad value"})
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    run = load_run(tmp_path)
    s = run.summary
    assert s["divergences"] == [] and s["problems"] == []
    assert any("broken: config: bad value" in n for n in run.notes)
    assert next(c for c in s["cells"] if c["id"] == "broken")["config"] is None


def test_merge_gives_a_raw_run_its_verdict(tmp_path: Path, cuparity_bin: Path) -> None:
    """What the notes tell the user to run works: `cuparity merge` writes the judge's summary.json;
    an interrupted run is judged incomplete (exit 1), with what is missing."""
    shutil.copy(FIXTURES / "interrupted" / "results.jsonl", tmp_path / "results.jsonl")
    matrix = REPORTS.parent / "matrices" / "smoke.toml"
    done = subprocess.run([str(cuparity_bin), "merge", str(matrix), str(tmp_path), "-o", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    run = load_run(tmp_path)
    assert not run.raw and run.summary["verdict"] == "incomplete"
    assert run.summary["coverage"]["missing_count"] == 28
    assert run.summary["results_count"] == 16 and run.summary["groups"]


def test_results_jsonl_schema_is_checked(tmp_path: Path) -> None:
    first = json.loads((FIXTURES / "interrupted" / "results.jsonl").read_text().splitlines()[0])
    first["schema"] = "cuparity.results/2"
    (tmp_path / "results.jsonl").write_text(json.dumps(first) + "\n")
    with pytest.raises(ReportInputError, match="schema: 'cuparity.results/2' is a version this reader does not read") as e:
        load_run(tmp_path)
    assert "results.jsonl" in str(e.value)


@pytest.mark.parametrize("schema, message", [
    ("cuparity.summary/2", "schema: 'cuparity.summary/2' is a version this reader does not read"),
    ("cuparity.summary/1.5", r"schema: 'cuparity.summary/1.5' is a version this reader does not read \(it reads cuparity.summary/1\)"),
    ("acme.summary/1", "schema: 'acme.summary/1' where cuparity.summary/1 was expected"),
    ("cuparity.results/1", "where cuparity.summary/1 was expected"),
    (None, "schema: expected a string, got null"),
])
def test_refuses_unknown_or_newer_summary(tmp_path: Path, schema: str | None, message: str) -> None:
    data = json.loads((FIXTURES / "cmp-a" / "summary.json").read_text())
    data["schema"] = schema
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReportInputError, match=message) as e:
        load_run(path)
    assert str(path) in str(e.value)


def test_refuses_newer_latency_schema(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "latency-a" / "summary.json").read_text())
    data["latency"]["schema"] = "cuparity.latency/9"
    (tmp_path / "summary.json").write_text(json.dumps(data))
    with pytest.raises(ReportInputError, match="cuparity.latency/9"):
        load_run(tmp_path)


def test_bad_inputs_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match="neither summary.json nor results.jsonl"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(ReportInputError, match="not valid JSON") as e:
        load_run(tmp_path)
    assert "summary.json" in str(e.value)


def test_summary_preferred_over_results(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "cmp-a" / "summary.json", tmp_path / "summary.json")
    shutil.copy(FIXTURES / "interrupted" / "results.jsonl", tmp_path / "results.jsonl")
    assert not load_run(tmp_path).raw
