"""The Python distribution (pyproject.toml, scripts/wheel): the wheel installs into a fresh venv
with pip alone (no index, no compiler, no Debian package: nothing is built) and the installed
`cuparity` runs the shipped smoke matrix on the simulated driver, finding its libraries and
matrices inside the package; auditwheel agrees with the tag the wheel states; no binary links
libcuda; the sdist holds what a build from it needs and none of the stored runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from distribution.dist_under_test import REPO, dist_dir, only

BUILD_BIN = Path(os.environ.get("CUPARITY_BUILD_DIR") or REPO / "build") / "bin"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dist_dir(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no system site-packages) with the wheel installed from the file alone."""
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    r = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-index",
                        "--disable-pip-version-check", "--quiet", str(only(dist, "*.whl"))],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "CC": "false", "CXX": "false"})
    assert r.returncode == 0, r.stdout + r.stderr
    return env_dir


def clean_env() -> dict[str, str]:
    """This shell's environment without anything pointing at the build tree or a chosen driver."""
    drop = ("CUPARITY_BUILD_DIR", "CUPARITY_BIN", "CUPARITY_BIN_DIR", "PYTHONPATH", "NUMBA_CUDA_DRIVER")
    return {k: v for k, v in os.environ.items() if k not in drop}


def run(exe: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=cwd, env=clean_env(), capture_output=True,
                          text=True, timeout=300)


def test_installed_cuparity_is_this_tree_and_runs_the_shipped_smoke_matrix(installed: Path,
                                                                             tmp_path: Path) -> None:
    exe = installed / "bin" / "cuparity"
    version = run(exe, "--version", cwd=tmp_path)
    built = subprocess.run([str(BUILD_BIN / "cuparity"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout == built.stdout, version.stdout + version.stderr
    listed = run(exe, "list", "--matrices", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    by_name = {m["name"]: Path(m["path"]) for m in json.loads(listed.stdout)}
    site = next((installed / "lib").glob("python3*/site-packages"))
    assert by_name["smoke"].resolve() == (site / "cuparity/share/cuparity/matrices/smoke.toml").resolve()
    assert {"default", "smoke", "latency", "numba-suite"} <= by_name.keys()
    r = run(exe, "--driver", "sim", "run", "smoke", "-o", str(tmp_path / "out"), "-j", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "EQUIVALENT" in r.stdout + r.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["matrix"]["path"] == str(site / "cuparity/share/cuparity/matrices/smoke.toml")
    assert str(site / "cuparity/lib/cuparity/libcuparity_simdriver.so") in (r.stdout + r.stderr)
    # `python -m cuparity` is the same command; a matrix named wrongly is refused, naming it.
    bad = subprocess.run([str(installed / "bin" / "python"), "-m", "cuparity", "run", "smok"],
                         cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "smok: no such matrix file" in bad.stderr


def test_wheel_tag_agrees_with_auditwheel_and_nothing_links_libcuda(dist: Path, tmp_path: Path) -> None:
    wheel = only(dist, "*.whl")
    assert "-py3-none-manylinux_2_" in wheel.name, wheel.name
    tag = wheel.name.rsplit("-", 1)[1].removesuffix(".whl")
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f'platform tag: "{tag}"' in " ".join(shown.stdout.split()), shown.stdout
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(tmp_path)
    for expected in ("cuparity/bin/cuparity", "cuparity/lib/cuparity/libcuparity_nvidia.so",
                     "cuparity/lib/cuparity/libcuparity_audit.so", "cuparity/lib/cuparity/libcuparity_simdriver.so",
                     "cuparity/lib/cuparity/libcuparity_fault_shim.so", "cuparity/lib/cuparity/python/cuparity_pytest.py",
                     "cuparity/share/cuparity/matrices/smoke.toml", "cuparity/share/cuparity/matrices/numba-suite/sitecustomize.py",
                     "cuparity_reports/cli.py"):
        assert expected in names, expected
    assert not [n for n in names if "__pycache__" in n or n.startswith("cuparity/include/")]
    elves = [tmp_path / n for n in names if n.endswith(".so") or n.endswith("/bin/cuparity")]
    for elf in elves:
        dyn = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True, check=True).stdout
        assert "libcuda.so" not in dyn, f"{elf.name} links libcuda"


def test_sdist_holds_the_build_and_no_stored_runs(dist: Path) -> None:
    with tarfile.open(only(dist, "*.tar.gz")) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in ("pyproject.toml", "CMakeLists.txt", "cmake/dependencies.cmake", "harness/cli/main.cpp",
                   "tests/simdriver/CMakeLists.txt", "tools/capture/audit/cuparity_audit.c",
                   "python/cuparity/__init__.py", "reports/cuparity_reports/cli.py", "matrices/smoke.toml"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("reports/runs/", "build/", "dist/", ".device/"))]


def test_reports_command_runs_from_the_wheel(dist: Path, tmp_path: Path) -> None:
    """`cuparity-report` from the wheel, its dependencies taken from this machine's site (the
    `reports` extra, which a fresh venv would fetch from PyPI), judging through the shipped binary."""
    env_dir = tmp_path / "v"
    venv.EnvBuilder(with_pip=True, system_site_packages=True).create(env_dir)
    r = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps",
                        "--disable-pip-version-check", "--quiet", "--force-reinstall", str(only(dist, "*.whl"))],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    report = env_dir / "bin" / "cuparity-report"
    v = run(report, "--version", cwd=tmp_path)
    assert v.returncode == 0 and v.stdout.strip() == "cuparity-report 0.1.0", v.stdout + v.stderr
    a, b = REPO / "reports/tests/fixtures/cmp-a", REPO / "reports/tests/fixtures/cmp-b"
    cmp = run(report, "compare", str(a), str(b), "--json", cwd=tmp_path)
    assert cmp.returncode == 1 and json.loads(cmp.stdout)["counts"]["regression"] == 2, cmp.stderr
