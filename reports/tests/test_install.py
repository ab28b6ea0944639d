"""The package installs with pip from the cuparity wheel (no index) and its console script runs from there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPORTS


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A --target install of the cuparity wheel (pyproject.toml at the top: the one distribution,
    which carries this package) that scripts/test built, or one built now."""
    sys.path.insert(0, str(REPORTS.parent / "tests"))
    from distribution.dist_under_test import dist_dir, only

    wheel = only(dist_dir(tmp_path_factory.mktemp("dist")), "*.whl")
    target = tmp_path_factory.mktemp("install") / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                        "--disable-pip-version-check", "--root-user-action=ignore", "--quiet",
                        "--target", str(target), str(wheel)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return target


def run_installed(target: Path, *args: str, cwd: Path, binary: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the installed console script; only the install directory is on PYTHONPATH. Away from the
    repository it finds the judge through CUPARITY_BIN (or PATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUPARITY_BIN", "CUPARITY_BUILD_DIR")}
    env["PYTHONPATH"] = str(target)
    if binary:
        env["CUPARITY_BIN"] = str(binary)
    return subprocess.run([str(target / "bin" / "cuparity-report"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_console_script_compare_json(installed: Path, tmp_path: Path, cuparity_bin: Path) -> None:
    a, b = str(FIXTURES / "cmp-a"), str(FIXTURES / "cmp-b")
    r = run_installed(installed, "compare", a, b, "--json", cwd=tmp_path, binary=cuparity_bin)
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["regressed"] is True and data["counts"]["regression"] == 2
    back = run_installed(installed, "compare", b, a, "--json", cwd=tmp_path, binary=cuparity_bin)
    assert back.returncode == 0 and json.loads(back.stdout)["counts"]["fix"] == 2
    bad = run_installed(installed, "compare", "nope-a", "nope-b", cwd=tmp_path, binary=cuparity_bin)
    assert bad.returncode == 2 and "nope-a" in bad.stderr


def test_installed_copy_is_used_and_carries_its_templates(installed: Path, tmp_path: Path) -> None:
    r = run_installed(installed, "--version", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "cuparity-report 0.1.0"
    page = tmp_path / "d.html"
    r = run_installed(installed, "dashboard", str(FIXTURES / "sim-div"), "--output", str(page), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert 'id="equivalence-grid"' in text and "SIMULATED DRIVER" in text
    where = subprocess.run([sys.executable, "-c", "import cuparity_reports; print(cuparity_reports.__file__)"],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(installed)},
                           capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(installed), where.stdout + where.stderr
