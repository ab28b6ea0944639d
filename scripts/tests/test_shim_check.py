"""scripts/device/shim-check on the simulated driver: every section it writes holds what the GPU
run's NOTES.md reads from it, so its commands cannot drift from the CLI unseen (they did once:
a flag the probe command had dropped left six empty sections)."""

from __future__ import annotations

import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "device", "shim-check")
BUILD = os.environ.get("CUPARITY_BUILD_DIR", os.path.join(ROOT, "build"))
BIN = os.path.abspath(os.path.join(BUILD, "bin"))
SIM = os.path.join(BIN, "libcuparity_simdriver.so")


def shim_check(out, bin_dir=BIN):
    env = dict(os.environ, CUPARITY_DEVICE_BIN=bin_dir, CUPARITY_SHIM_TARGET=SIM,
               SHIM_CHECK_QUICK="1")
    env.pop("NUMBA_CUDA_DRIVER", None)
    env.pop("CUPARITY_SHIM_FAULTS", None)
    return subprocess.run(["bash", SCRIPT, str(out)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env=env)


def sections(text: str) -> dict[str, str]:
    """The text after each '===== label' line, by label."""
    parts = re.split(r"^===== (.*)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_every_section_on_the_simulated_driver(tmp_path):
    assert os.path.exists(SIM), f"build the simulated driver first: {SIM}"
    out = tmp_path / "out"
    r = shim_check(out)
    assert r.returncode == 0, r.stdout + r.stderr

    audit = sections((out / "shim-env.txt").read_text())
    assert len(audit) == 4
    for label, text in audit.items():
        assert "0 mismatches" in text and "exit code: 0" in text, label

    smoke = {k.split(":")[0]: v for k, v in sections((out / "smoke.txt").read_text()).items()}
    assert smoke["smoke direct"].rstrip().endswith("EQUIVALENT")
    assert smoke["smoke shim"].rstrip().endswith("EQUIVALENT")
    assert smoke["smoke bad-spec"].rstrip().endswith("EQUIVALENT")
    # Corrupt fails copy-checking cases in both bindings alike; the proc-path error splits them.
    assert "10 problems, 0 divergences" in smoke["smoke corrupt"]
    assert re.search(r"[1-9]\d* divergences.*FAILED", smoke["smoke proc-error"])
    for name in ("direct", "shim"):
        summary = json.loads((out / f"smoke-{name}-summary.json").read_text())
        assert summary["verdict"] == "equivalent", name
        assert len((out / f"smoke-{name}.jsonl").read_text().splitlines()) >= 44

    probes = sections((out / "probes.txt").read_text())
    assert len(probes) == 6
    for label, text in probes.items():
        events = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        assert "exit code: 0" in text, label
        assert {(e["probe"], e["series"]) for e in events} == {
            (p, s) for p in ("ctx.get_current", "launch.empty_kernel")
            for s in ("facade", "direct", "other")}, label

    bench = (out / "bench.txt").read_text()
    assert re.search(r"BM_precise_delay/20_median", bench)
    shim_bench = {k: v for k, v in sections(bench).items() if k.startswith("through the shim")}
    assert len(shim_bench) == 7
    for label, text in shim_bench.items():
        assert "BM_shim_cuCtxGetCurrent_median" in text, label


def test_a_missing_binary_fails_the_check_and_its_section_says_why(tmp_path):
    out = tmp_path / "out"
    r = shim_check(out, bin_dir=str(tmp_path / "no-bin"))
    assert r.returncode == 1, r.stdout + r.stderr
    smoke = (out / "smoke.txt").read_text()
    assert "no-bin/cuparity" in smoke and "exit code: 127" in smoke
    assert "exit code: 127" in (out / "probes.txt").read_text()
