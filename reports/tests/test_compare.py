"""`compare`: outcome classes, latency verdicts, exit codes, text and JSON output."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import FIXTURES
from cuparity_reports.cli import main
from cuparity_reports.compare import classify, compare_runs
from cuparity_reports.reader import Run, load_run


def run_with(results: list[tuple[str, str, str]]) -> Run:
    base = load_run(FIXTURES / "cmp-a")
    s = copy.deepcopy(base.summary)
    s["results"] = [{"cell": c, "case": k, "outcome": o, "message": "", "observations": {}} for c, k, o in results]
    s["latency"] = None
    return Run(summary=s, source="synthetic")


def test_classify() -> None:
    assert classify("pass", "fail") == "regression"
    assert classify("not_supported", "crash") == "regression"
    assert classify("fail", "pass") == "fix"
    assert classify("timeout", "not_supported") == "fix"
    assert classify("fail", "crash") == "changed"
    assert classify("pass", "not_supported") == "changed"
    assert classify(None, "pass") == "new"
    assert classify("pass", None) == "missing"
    assert classify("pass", "pass") == "unchanged"


def test_every_outcome_class() -> None:
    a = run_with([("c0", "x.reg", "pass"), ("c0", "x.fix", "fail"), ("c0", "x.gone", "pass"),
                  ("c0", "x.same", "pass"), ("c0", "x.other", "fail")])
    b = run_with([("c0", "x.reg", "crash"), ("c0", "x.fix", "pass"), ("c0", "x.new", "pass"),
                  ("c0", "x.same", "pass"), ("c0", "x.other", "timeout")])
    res = compare_runs(a, b)
    got = {o.case: o.change for o in res.outcomes}
    assert got == {"x.reg": "regression", "x.fix": "fix", "x.gone": "missing", "x.new": "new",
                   "x.same": "unchanged", "x.other": "changed"}
    assert res.regressed
    assert not compare_runs(b, b).regressed


def test_real_regression_and_fix_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b")]) == 1
    out = capsys.readouterr().out
    assert "2 regression" in out and "alloc.copy.dtod" in out and "REGRESSED" in out
    assert main(["compare", str(FIXTURES / "cmp-b"), str(FIXTURES / "cmp-a")]) == 0
    assert "2 fix" in capsys.readouterr().out


def test_latency_verdicts_between_runs(capsys: pytest.CaptureFixture[str]) -> None:
    res = compare_runs(load_run(FIXTURES / "latency-a"), load_run(FIXTURES / "latency-b"))
    v = {(l.probe, l.series): l.verdict for l in res.latency}
    assert v[("launch.empty_kernel", "nv=1")] == "slower"
    assert v[("ctx.get_current", "nv=0")] == "faster"
    assert v[("memcpy.htod_64mib", "nv=0")] == "same"
    assert res.count("regression") == 0 and res.regressed
    assert main(["compare", str(FIXTURES / "latency-a"), str(FIXTURES / "latency-b"), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["regressed"] is True
    slow = [l for l in data["latency"] if l["verdict"] == "slower"]
    assert [(l["probe"], l["series"]) for l in slow] == [("launch.empty_kernel", "nv=1")]
    assert slow[0]["ci_low"] > 1.05 and slow[0]["p_value"] < 0.05


def test_a_a_run_comparison_is_not_a_regression(capsys: pytest.CaptureFixture[str]) -> None:
    a = FIXTURES / "latency-a"
    assert main(["compare", str(a), str(a)]) == 0
    res = compare_runs(load_run(a), load_run(a))
    assert res.latency and all(l.verdict in ("same", "ambiguous") for l in res.latency)
    capsys.readouterr()


def test_bad_input_exit_2_names_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "summary.json"
    bad.write_text(json.dumps({"schema": "cuparity.summary/7"}))
    assert main(["compare", str(FIXTURES / "cmp-a"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "newer" in err
    assert main(["compare", str(tmp_path / "nope"), str(FIXTURES / "cmp-a")]) == 2
    assert "nope" in capsys.readouterr().err
