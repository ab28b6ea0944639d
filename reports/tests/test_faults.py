"""`faults` renders `cuparity faults`' cuparity.faults/1 as the command judged it; bad input is exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, REPORTS
from cuparity_reports.cli import main

FAULTS = FIXTURES / "faults-sim.json"


def test_page_shows_totals_misses_and_every_trial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "faults.html"
    assert main(["faults", str(FAULTS), "--output", str(out)]) == 0
    assert "1 of 21 trials not caught" in capsys.readouterr().out
    page = out.read_text()
    assert 'id="faults-totals"' in page and "corrupt (both paths)" in page
    # The one trial no case caught is listed, and marked in the table.
    assert "cuDeviceGetUuid_v2:corrupt" in page.split('id="faults-missed"')[1].split("</ul>")[0]
    assert page.count("not caught</td>") == 1
    # Catching cases: the first four shown, all in the title.
    assert "and " in page and "more</td>" in page
    assert "cuCtxCreate_v4" in page.split('id="faults-unbound"')[1]
    assert "cuStreamSynchronize_ptsz:corrupt" in page  # a fault that does not apply, listed


def test_text_from_the_file_is_escaped(tmp_path: Path) -> None:
    data = json.loads(FAULTS.read_text())
    data["trials"][0]["note"] = "<script>alert(1)</script>"
    data["trials"][0]["caught"] = False
    assert (data["trials"][0]["fault"], data["trials"][0]["path"]) == ("error=999", "any")
    data["totals"]["error 999 (both paths)"]["caught"] -= 1  # the totals are the trials'
    src = tmp_path / "f.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "f.html"
    assert main(["faults", str(src), "--output", str(out)]) == 0
    page = out.read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page


@pytest.mark.parametrize("change, member", [
    (lambda d: d.update(schema="cuparity.summary/1"), "schema"),
    (lambda d: d.pop("totals"), "totals"),
    (lambda d: d["trials"][2].update(caught="yes"), "trials[2].caught"),
    (lambda d: d["totals"]["corrupt (both paths)"].update(caught=9), "caught"),
    (lambda d: d.update(unbound="all"), "unbound"),
    # Issue 47, 19: `trials: null` read as no trial, "0 of 0 trials not caught", exit 0.
    (lambda d: d.update(trials=None), "trials: expected a list, got null"),
    (lambda d: d.pop("trials"), "trials: expected a list, got nothing"),
    (lambda d: d.update(trials=[]), "totals: 21 tried in all, but the trials listed say 0"),
    (lambda d: d["totals"]["legacy (both paths)"].update(tried=-1), "legacy (both paths).tried: expected a count"),
    (lambda d: d["totals"]["legacy (both paths)"].update(tried=None), "legacy (both paths).tried: expected a count"),
    (lambda d: d["trials"][0].update(caught=False), "totals: 20 caught in all, but the trials listed say 19"),
])
def test_garbled_input_is_exit_2_naming_the_member(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   change, member: str) -> None:
    data = json.loads(FAULTS.read_text())
    change(data)
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(data))
    assert main(["faults", str(src), "--output", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert str(src) in err and member in err
    assert not (tmp_path / "x.html").exists()


COMMITTED_FAULTS = sorted((REPORTS / "runs").glob("*/faults.json*"))


@pytest.mark.parametrize("src", COMMITTED_FAULTS, ids=lambda p: p.parent.name)
def test_committed_fault_runs_render_as_stored(tmp_path: Path, src: Path) -> None:
    """reports/runs keeps faults.json gzipped: the page reads it as stored, with its totals."""
    out = tmp_path / "faults.html"
    assert main(["faults", str(src), "--output", str(out)]) == 0
    assert 'id="faults-totals"' in out.read_text()


def test_some_fault_runs_are_committed() -> None:
    assert len(COMMITTED_FAULTS) >= 2
