"""scripts/device/context-contention on the simulated driver: the three scenarios, what it
measures, and its errors (a bad argument, a driver that cannot load, a call that fails)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "device", "context-contention")
BUILD = os.environ.get("CUPARITY_BUILD_DIR", os.path.join(ROOT, "build"))
SIM = os.path.join(BUILD, "bin", "libcuparity_simdriver.so")


def run(tmp_path, *args, env=None):
    e = dict(os.environ)
    e.pop("CUDA_VISIBLE_DEVICES", None)
    e.update(env or {})
    return subprocess.run([sys.executable, SCRIPT, str(tmp_path / "out"), *args], env=e,
                          capture_output=True, text=True, timeout=120)


def test_the_simulated_driver_is_built():
    assert os.path.exists(SIM), f"build the simulated driver first: {SIM}"


def test_two_devices_give_all_three_scenarios_with_busy_loaders(tmp_path):
    # A 2 ms delay in cuCtxCreate_v2: a round must measure at least that.
    r = run(tmp_path, "--driver", SIM, "--rounds", "6", "--loaders", "2",
            env={"CUPARITY_SIM_DEVICES": "2", "CUPARITY_SIM_FAULTS": "cuCtxCreate_v2:delay_ns=2000000"})
    assert r.returncode == 0, r.stderr
    result = json.loads((tmp_path / "out" / "contention.json").read_text())
    assert result["schema"] == "cuparity.context_contention/1"
    assert result["devices"] == 2
    by_name = {s["scenario"]: s for s in result["scenarios"]}
    assert list(by_name) == ["alone", "same", "other"]
    assert by_name["alone"]["loaders"] == 0 and by_name["alone"]["loader_rounds"] == []
    assert by_name["same"]["load_device"] == 0 and by_name["other"]["load_device"] == 1
    for s in by_name.values():
        assert s["rounds"] == 6
        assert s["create"]["median_ms"] >= 2.0, s  # the delay is measured, not made up
        assert s["destroy"]["median_ms"] < s["create"]["median_ms"]
        assert s["round"]["min_ms"] <= s["round"]["median_ms"] <= s["round"]["max_ms"]
    for name in ("same", "other"):
        assert len(by_name[name]["loader_rounds"]) == 2
        assert all(n >= 1 for n in by_name[name]["loader_rounds"]), by_name[name]
    text = (tmp_path / "out" / "contention.txt").read_text()
    assert "of alone" in text and text.count("\n") == 5


def test_one_device_skips_the_other_device_scenario_and_says_why(tmp_path):
    r = run(tmp_path, "--driver", SIM, "--rounds", "2", "--loaders", "1")
    assert r.returncode == 0, r.stderr
    result = json.loads((tmp_path / "out" / "contention.json").read_text())
    assert [s["scenario"] for s in result["scenarios"]] == ["alone", "same", "other"]
    assert "1 device(s)" in result["scenarios"][2]["skipped"]
    assert "not run: 1 device(s)" in r.stdout


def test_bad_input_is_exit_2_naming_it(tmp_path):
    r = run(tmp_path, "--driver", str(tmp_path / "no-such-driver.so"))
    assert r.returncode == 2 and "cannot load the driver" in r.stderr and "no-such-driver" in r.stderr
    r = run(tmp_path, "--rounds", "0")
    assert r.returncode == 2 and "--rounds" in r.stderr
    r = run(tmp_path, "--loaders", "x")
    assert r.returncode == 2 and "'x' is not an integer" in r.stderr
    r = run(tmp_path, "--driver", SIM, "--measure-device", "3")
    assert r.returncode == 2 and "--measure-device 3: the driver has 1 device(s)" in r.stderr
    assert not (tmp_path / "out" / "contention.json").exists()


def test_a_failing_driver_call_is_exit_1_naming_the_call(tmp_path):
    r = run(tmp_path, "--driver", SIM, "--rounds", "2",
            env={"CUPARITY_SIM_FAULTS": "cuCtxCreate_v2:error=CUDA_ERROR_OUT_OF_MEMORY"})
    assert r.returncode == 1, r.stderr
    assert "cuCtxCreate_v2 returned CUresult 2" in r.stderr
