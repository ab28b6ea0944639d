"""`cuparity run --cell ID` times only that cell: the latency phase (and the benchmark phase) take the
cells the functional phase ran, not the whole matrix (on the H100 a run of python-path.toml's two A/A
cells timed all ten)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from external.test_suite_matrix import bin_dir

MATRIX = Path(__file__).resolve().parents[1] / "export" / "latency-small.toml"


def test_cell_option_selects_the_timed_cells_too(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = subprocess.run([str(bin_dir() / "cuparity"), "--driver", "sim", "run", str(MATRIX), "--cell", "nv=1",
                        "-o", str(out), "--no-summary-md"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "latency phase: 1 cells" in r.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    timed = {x["cell"] for x in records if x.get("type") == "latency_sample"}
    assert timed == {"nv=1"}
    summary = json.loads((out / "summary.json").read_text())
    series = {s for p in summary["latency"]["probes"] for s in p["samples"]}
    assert series and all(s.endswith("nv=1") for s in series), series
