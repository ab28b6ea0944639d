"""`compare` renders what `cuparity compare` judged: classes, divergences, latency, exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES
from cuparity_reports import compare
from cuparity_reports.cli import main


def judged(binary: Path, a: Path, b: Path) -> dict:
    """The judge's own JSON for B against A."""
    done = subprocess.run([str(binary), "compare", str(a), str(b), "--json", "-"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_outcome_classes_and_exit_codes(cuparity_bin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b")]) == 1
    out = capsys.readouterr().out
    assert "2 regression" in out and "alloc.copy.dtod" in out and "REGRESSED" in out
    assert "judged by cuparity compare" in out
    assert main(["compare", str(FIXTURES / "cmp-b"), str(FIXTURES / "cmp-a")]) == 0
    assert "2 fix" in capsys.readouterr().out


def test_json_is_the_judges(cuparity_bin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = FIXTURES / "latency-a", FIXTURES / "latency-b"
    assert main(["compare", str(a), str(b), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data == judged(cuparity_bin, a, b)
    assert data["schema"] == "cuparity.compare/1" and data["regressed"] is True
    verdicts = {(l["probe"], l["series"]): l["verdict"] for l in data["latency"]}
    assert verdicts[("launch.empty_kernel", "nv=1")] == "slower"
    # 15 % faster on an 8 ns call: thresholds are relative to the probe, so it counts.
    assert verdicts[("ctx.get_current", "nv=0")] == "faster"
    assert verdicts[("memcpy.htod_64mib", "nv=0")] == "same"
    assert [k for k, v in verdicts.items() if v == "slower"] == [("launch.empty_kernel", "nv=1")]


def test_options_reach_the_judge(cuparity_bin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = FIXTURES / "latency-a", FIXTURES / "latency-b"
    assert main(["compare", str(a), str(b), "--json", "--threshold", "0.5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(l["threshold"] == 0.5 and l["verdict"] != "slower" for l in data["latency"])


def test_renders_a_compare_file(cuparity_bin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = FIXTURES / "cmp-a", FIXTURES / "cmp-b"
    saved = tmp_path / "cmp.json"
    subprocess.run([str(cuparity_bin), "compare", str(a), str(b), "--json", str(saved)], capture_output=True,
                   timeout=60)
    assert main(["compare", "--from", str(saved)]) == 1
    from_file = capsys.readouterr().out
    assert main(["compare", str(a), str(b)]) == 1
    assert capsys.readouterr().out == from_file
    saved.write_text("{not json")
    assert main(["compare", "--from", str(saved)]) == 2
    assert str(saved) in capsys.readouterr().err
    saved.write_text(json.dumps({"schema": "cuparity.compare/2"}))
    assert main(["compare", "--from", str(saved)]) == 2
    assert "schema: 'cuparity.compare/2' is a version this reader does not read" in capsys.readouterr().err


def test_bad_input_exit_2_names_file(cuparity_bin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "summary.json"
    bad.write_text(json.dumps({"schema": "cuparity.summary/7"}))
    assert main(["compare", str(FIXTURES / "cmp-a"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "schema" in err and "Traceback" not in err
    assert main(["compare", str(tmp_path / "nope"), str(FIXTURES / "cmp-a")]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["compare", str(FIXTURES / "interrupted"), str(FIXTURES / "cmp-a")]) == 2
    assert "cuparity merge" in capsys.readouterr().err
    assert main(["compare", str(FIXTURES / "cmp-a")]) == 2
    assert "needs runs A and B" in capsys.readouterr().err


def test_no_binary_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CUPARITY_BIN", str(tmp_path / "cuparity"))
    assert main(["compare", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b")]) == 2
    assert "CUPARITY_BIN names no executable" in capsys.readouterr().err
    monkeypatch.delenv("CUPARITY_BIN")
    monkeypatch.setenv("CUPARITY_BUILD_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(compare, "REPO", tmp_path)
    assert main(["compare", str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b")]) == 2
    err = capsys.readouterr().err
    assert "binary not found" in err and "scripts/build" in err
