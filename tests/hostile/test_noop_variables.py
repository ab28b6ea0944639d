"""Issue 47, N1: a misspelt matrix variable never gives a green run that tested nothing.

On the simulated driver: a two-cell matrix whose only axis is misspelt, a copy of the shipped
smoke.toml with its PTDS variable misspelt everywhere, and the same with the typo in the axis alone
(an [[expect]] then names the right spelling). The suite matrix's misspelt SIMPKG_PTDSS is
tests/external/test_suite_matrix.py's."""

from __future__ import annotations

import json
from pathlib import Path

from . import hostile_support as hs

REPO = Path(__file__).resolve().parents[2]
TYPO = "NUMBA_CUDA_PER_THREAD_DEFAULT_STREM"
RIGHT = "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM"


def noops(out: Path) -> list[str]:
    summary = json.loads((out / "summary.json").read_text())
    return [p["message"] for p in summary["problems"] if p["kind"] == "no_op_configuration"]


def test_a_misspelt_only_axis_fails_the_run_naming_line_and_right_spelling(built, tmp_path):
    matrix = tmp_path / "typo.toml"
    matrix.write_text('[matrix]\nname = "typo"\ndescription = "a misspelt binding variable"\n'
                      'cases = ["alloc.copy.dtod", "stream.create.flags_priorities"]\n'
                      '[axes]\nNUMBA_CUDA_USE_NVIDA_BINDING = ["0", "1"]\n')
    proc = built.run("run", str(matrix), "--out", str(tmp_path / "out"))
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "EQUIVALENT" not in proc.stderr
    [message] = noops(tmp_path / "out")
    assert message.startswith(f"NUMBA_CUDA_USE_NVIDA_BINDING changed nothing (written at {matrix}:6:1)")
    assert "closest to it is NUMBA_CUDA_USE_NVIDIA_BINDING;" in message
    # Declared inert, with a reason, the same matrix passes.
    matrix.write_text(matrix.read_text().replace(
        'description', 'inert = { NUMBA_CUDA_USE_NVIDA_BINDING = "kept to show the typo" }\ndescription'))
    proc = built.run("run", str(matrix), "--out", str(tmp_path / "inert"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert noops(tmp_path / "inert") == []


def test_smoke_with_its_ptds_variable_misspelt_everywhere_fails_naming_the_axis(built, tmp_path):
    smoke = (REPO / "matrices" / "smoke.toml").read_text()
    assert RIGHT in smoke
    matrix = tmp_path / "smoke.toml"
    matrix.write_text(smoke.replace(RIGHT, TYPO))
    axis_line = next(i for i, line in enumerate(matrix.read_text().splitlines(), 1)
                     if line.startswith(TYPO))
    proc = built.run("run", str(matrix), "--out", str(tmp_path / "out"), "-j", "2", timeout=300)
    hs.no_traceback(proc)
    assert proc.returncode == 1, proc.stderr[-2000:]
    [message] = noops(tmp_path / "out")
    assert message.startswith(f"{TYPO} changed nothing (written at {matrix}:{axis_line}:1)")
    assert f"closest to it is {RIGHT};" in message


def test_smoke_with_the_typo_in_its_axis_alone_names_the_axis_at_load(built, tmp_path):
    smoke = (REPO / "matrices" / "smoke.toml").read_text()
    matrix = tmp_path / "smoke.toml"
    matrix.write_text(smoke.replace(f'{RIGHT} = ["0"]', f'{TYPO} = ["0"]'))
    axis_line = next(i for i, line in enumerate(matrix.read_text().splitlines(), 1)
                     if line.startswith(TYPO))
    for command in ("list", "run"):
        proc = built.run(command, str(matrix), "--out", str(tmp_path / command)) \
            if command == "run" else built.run(command, str(matrix))
        hs.no_traceback(proc)
        assert proc.returncode == 2, proc.stderr
        assert (f"its `when` asks {RIGHT} = \"0\", which no cell has (the matrix's closest other variable is "
                f"{TYPO}, written at {matrix}:{axis_line}:1)") in proc.stderr
