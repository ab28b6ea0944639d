"""`cuparity run` of the [[suite]] matrices beside this file: simpkg's pytest suite in every cell.

Each matrix runs once (a module fixture) on the simulated driver, `cuparity --driver sim run
MATRIX --out DIR -j 2`, and the tests read DIR/summary.json:
- suite.toml: simpkg's dlsym and proc cells disagree on one test, and the divergence names the
  captured binding behind it (cuMemGetInfo_v2 against cuMemGetInfo); the misspelt SIMPKG_PTDSS is
  a no-op configuration; the test that fails every other try is flaky;
- suite-ptds.toml: SIMPKG_PTDS=1 cells form a semantic group of their own, and no variable is a
  no-op;
- suite-flakes.toml: the flaky test excused by flakes.txt is still flaky, but no problem;
- suite-broken.toml: a cell whose suite cannot import simpkg is one cell_error, with no per-test
  records;
- suite-crash.toml: the simulated driver crashes inside one test; that test is a crash and the
  rest of the suite, resumed in a fresh process, still has its own outcomes;
- suite-hang.toml: the simulated driver hangs inside one test; the runner kills the process at the
  suite's timeout, that test is a timeout, and the rest resumes as after a crash.
cuparity and the simulated driver are found in $CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin,
else <repo>/build/bin; without them every test here is skipped, naming the folder.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

MEM_INFO_CASE = "simpkg.test_memory.test_mem_info_matches_device_total"
FLAKY_CASE = "simpkg.test_flaky.test_every_other_try"


def bin_dir() -> Path:
    if os.environ.get("CUPARITY_BIN_DIR"):
        return Path(os.environ["CUPARITY_BIN_DIR"])
    if os.environ.get("CUPARITY_BUILD_DIR"):
        return Path(os.environ["CUPARITY_BUILD_DIR"]) / "bin"
    return REPO / "build" / "bin"


def run_matrix(matrix: str, out: Path, *extra: str, env_extra: dict | None = None) -> dict:
    """`cuparity --driver sim run` of a matrix here; its summary.json, checked against the exit.
    env_extra: variables given to cuparity besides this shell's (a suite root's {env:NAME})."""
    cuparity = bin_dir() / "cuparity"
    driver = bin_dir() / "libcuparity_simdriver.so"
    if not cuparity.is_file() or not driver.is_file():
        pytest.skip(f"no cuparity or libcuparity_simdriver.so in {bin_dir()}: build with "
                    "scripts/build (or set CUPARITY_BIN_DIR)")
    # Variables that would reach the cells from this shell and change what simpkg or pytest does:
    # the matrices name only some of them (SIMPKG_PTDS is not an axis of suite.toml).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SIMPKG_", "CUPARITY_SUITE_", "NUMBA_CUDA_", "CUDA_PYTHON_",
                                "PYTEST_"))}
    env.update(env_extra or {})
    proc = subprocess.run([str(cuparity), "--driver", "sim", "run", str(HERE / matrix),
                           "--out", str(out), "-j", "2", *extra],
                          env=env, capture_output=True, text=True, timeout=180)
    summary_path = out / "summary.json"
    assert summary_path.is_file(), (
        f"{matrix}: no summary.json (exit {proc.returncode})\n{proc.stdout[-3000:]}\n"
        f"{proc.stderr[-3000:]}")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["exit_code"] == proc.returncode, proc.stderr[-3000:]
    return summary


def cells_by(summary: dict, **env) -> list[str]:
    """The ids of the cells whose environment has these values (None: unset)."""
    return [c["id"] for c in summary["cells"]
            if all(c["env"].get(name) == value for name, value in env.items())]


def outcomes(summary: dict, case: str) -> dict:
    return {r["cell"]: r["outcome"] for r in summary["results"] if r["case"] == case}


def problems(summary: dict, kind: str) -> list[dict]:
    return [p for p in summary["problems"] if p["kind"] == kind]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return run_matrix("suite.toml", tmp_path_factory.mktemp("suite") / "out")


@pytest.fixture(scope="module")
def suite_ptds(tmp_path_factory):
    return run_matrix("suite-ptds.toml", tmp_path_factory.mktemp("suite-ptds") / "out")


@pytest.fixture(scope="module")
def suite_flakes(tmp_path_factory):
    return run_matrix("suite-flakes.toml", tmp_path_factory.mktemp("suite-flakes") / "out")


@pytest.fixture(scope="module")
def suite_broken(tmp_path_factory):
    return run_matrix("suite-broken.toml", tmp_path_factory.mktemp("suite-broken") / "out")


@pytest.fixture(scope="module")
def suite_crash_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite-crash") / "out"
    return run_matrix("suite-crash.toml", out), out


@pytest.fixture(scope="module")
def suite_crash(suite_crash_run):
    return suite_crash_run[0]


@pytest.fixture(scope="module")
def suite_hang(tmp_path_factory):
    return run_matrix("suite-hang.toml", tmp_path_factory.mktemp("suite-hang") / "out")


def test_every_test_is_a_case_of_every_cell(suite):
    assert len(suite["cells"]) == 4
    dlsym, proc = cells_by(suite, SIMPKG_BINDING="dlsym"), cells_by(suite, SIMPKG_BINDING="proc")
    assert len(dlsym) == len(proc) == 2
    everywhere = {
        "simpkg.test_basics.test_init_and_device": "pass",
        "simpkg.test_basics.test_roundtrip": "pass",
        "simpkg.test_basics.test_fill[1-0x00]": "pass",
        "simpkg.test_basics.test_fill[4096-0xab]": "pass",
        "simpkg.test_basics.test_fill[65539-[0x5a]]": "pass",
        "simpkg.test_basics.test_free_twice_is_an_error": "pass",
        "simpkg.test_basics.test_peer_copy": "not_supported",  # skipped, with its reason
        "simpkg.test_basics.StreamTests.test_synchronize": "pass",
        "simpkg.test_basics.StreamTests.test_copy_then_stream_sync": "pass",
    }
    for case, outcome in everywhere.items():
        assert outcomes(suite, case) == {cell: outcome for cell in dlsym + proc}, case
    skipped = [r for r in suite["results"] if r["case"] == "simpkg.test_basics.test_peer_copy"]
    assert all("no peer copies" in r["message"] for r in skipped)


def test_old_abi_on_the_proc_path_is_a_divergence_naming_the_binding(suite):
    dlsym, proc = cells_by(suite, SIMPKG_BINDING="dlsym"), cells_by(suite, SIMPKG_BINDING="proc")
    assert outcomes(suite, MEM_INFO_CASE) == {**{c: "pass" for c in dlsym},
                                             **{c: "fail" for c in proc}}
    found = [d for d in suite["divergences"] if d["case"] == MEM_INFO_CASE and d["key"] == "outcome"]
    assert len(found) == 1, suite["divergences"]
    divergence = found[0]
    assert divergence["values"] == {**{c: "pass" for c in dlsym}, **{c: "fail" for c in proc}}
    # All four cells bind the legacy stream (SIMPKG_PTDSS changes nothing): one group.
    groups = {g["key"]: sorted(g["cells"]) for g in suite["groups"]}
    assert groups[divergence["group"]] == sorted(dlsym + proc)
    mem_info = [b for b in divergence["bindings"] if b["function"] == "cuMemGetInfo"]
    assert len(mem_info) == 1, divergence["bindings"]
    # Each symbol with how it was bound: by name (dlsym) or through cuGetProcAddress (proc).
    assert mem_info[0]["cells"] == {**{c: ["cuMemGetInfo_v2 (dlsym)"] for c in dlsym},
                                    **{c: ["cuMemGetInfo (proc)"] for c in proc}}
    assert suite["verdict"] == "failed" and suite["exit_code"] == 1


def test_misspelt_variable_is_a_no_op_configuration(suite):
    no_ops = problems(suite, "no_op_configuration")
    assert [(p["cell"], p["case"]) for p in no_ops] == [("", "")]
    assert no_ops[0]["message"].startswith("SIMPKG_PTDSS changed nothing"), no_ops[0]


def test_failing_every_other_try_is_flaky(suite):
    cells = [c["id"] for c in suite["cells"]]
    assert outcomes(suite, FLAKY_CASE) == {cell: "flaky" for cell in cells}
    flaky = problems(suite, "flaky")
    assert sorted(p["cell"] for p in flaky) == sorted(cells)
    for p in flaky:
        assert p["case"] == FLAKY_CASE
        assert "fail, pass" in p["message"], p
    assert suite["counts"]["flaky"] == len(cells)


def test_ptds_cells_form_their_own_group(suite_ptds):
    assert problems(suite_ptds, "no_op_configuration") == []
    group_of = {c["id"]: c["group"] for c in suite_ptds["cells"]}
    legacy = cells_by(suite_ptds, SIMPKG_PTDS=None)
    per_thread = cells_by(suite_ptds, SIMPKG_PTDS="1")
    assert len(legacy) == len(per_thread) == 2
    assert len({group_of[c] for c in legacy}) == 1
    assert len({group_of[c] for c in per_thread}) == 1
    assert group_of[legacy[0]] != group_of[per_thread[0]]
    assert "per-thread" in group_of[per_thread[0]] and "legacy" in group_of[legacy[0]]
    groups = {g["key"]: sorted(g["cells"]) for g in suite_ptds["groups"]}
    assert groups[group_of[legacy[0]]] == sorted(legacy)
    assert groups[group_of[per_thread[0]]] == sorted(per_thread)
    # The old-ABI bug is in both stream modes: one divergence per group.
    assert sorted(d["group"] for d in suite_ptds["divergences"]
                  if d["case"] == MEM_INFO_CASE and d["key"] == "outcome") == sorted(groups)


def test_excused_flaky_test_is_still_flaky_but_no_problem(suite_flakes):
    cells = [c["id"] for c in suite_flakes["cells"]]
    assert outcomes(suite_flakes, FLAKY_CASE) == {cell: "flaky" for cell in cells}
    assert suite_flakes["counts"]["flaky"] >= 1
    assert problems(suite_flakes, "flaky") == []


def test_suite_that_cannot_import_is_one_cell_error(suite_broken):
    [broken] = cells_by(suite_broken, SIMPKG_BINDING="broken")
    [working] = cells_by(suite_broken, SIMPKG_BINDING="dlsym")
    errors = problems(suite_broken, "cell_error")
    assert [p["cell"] for p in errors] == [broken]
    assert "ImportError" in errors[0]["message"], errors[0]
    assert [r for r in suite_broken["results"]
            if r["cell"] == broken and r["case"].startswith("simpkg.")] == []
    assert outcomes(suite_broken, "simpkg.test_basics.test_roundtrip") == {working: "pass"}


def test_crash_inside_a_test_is_that_tests_and_the_suite_resumes(suite_crash):
    [clean] = cells_by(suite_crash, CUPARITY_SIM_FAULTS=None)
    [faulty] = cells_by(suite_crash, CUPARITY_SIM_FAULTS="cuCtxSynchronize:crash")
    crashed = "simpkg.test_basics.StreamTests.test_synchronize"
    assert outcomes(suite_crash, crashed) == {clean: "pass", faulty: "crash"}
    [record] = [r for r in suite_crash["results"] if r["cell"] == faulty and r["case"] == crashed]
    assert "killed by signal 11" in record["message"], record
    by_cell = {cell: {r["case"]: r["outcome"] for r in suite_crash["results"] if r["cell"] == cell}
               for cell in (clean, faulty)}
    # Every other test has the clean cell's outcome, those after the crash (test_flaky,
    # test_memory) included: the suite went on in a fresh process without the finished tests.
    del by_cell[clean][crashed], by_cell[faulty][crashed]
    assert by_cell[faulty] == by_cell[clean]
    assert MEM_INFO_CASE in by_cell[faulty] and FLAKY_CASE in by_cell[faulty]
    assert [d["case"] for d in suite_crash["divergences"]] == [crashed]


def test_hang_inside_a_test_is_that_tests_timeout_and_the_suite_resumes(suite_hang):
    [clean] = cells_by(suite_hang, CUPARITY_SIM_FAULTS=None)
    [faulty] = cells_by(suite_hang, CUPARITY_SIM_FAULTS="cuCtxSynchronize:delay_ns=600000000000")
    hung = "simpkg.test_basics.StreamTests.test_synchronize"
    assert outcomes(suite_hang, hung) == {clean: "pass", faulty: "timeout"}
    [record] = [r for r in suite_hang["results"] if r["cell"] == faulty and r["case"] == hung]
    assert "timed out: killed at the suite's timeout_s, 5 s" in record["message"], record
    assert "the same in 2 tries" in record["message"], record  # its re-run hung too
    by_cell = {cell: {r["case"]: r["outcome"] for r in suite_hang["results"] if r["cell"] == cell}
               for cell in (clean, faulty)}
    del by_cell[clean][hung], by_cell[faulty][hung]
    assert by_cell[faulty] == by_cell[clean]
    assert [p["kind"] for p in suite_hang["problems"] if p["cell"] == faulty and
            p["kind"] == "cell_error"] == []


def suite_ends(out: Path) -> list[str]:
    """The cells of every suite_end record in a run folder's results.jsonl, in order."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [r["cell"] for r in map(json.loads, lines) if r.get("type") == "suite_end"]


def test_shards_merge_into_the_whole_runs_verdict(suite, tmp_path):
    """Each shard runs its (cell, suite) pairs; `cuparity merge` judges them as one run."""
    for k in (0, 1):
        run_matrix("suite.toml", tmp_path / f"shard{k}", "--shard", f"{k}/2")
    merged = tmp_path / "merged"
    proc = subprocess.run([str(bin_dir() / "cuparity"), "merge", str(HERE / "suite.toml"),
                           str(tmp_path / "shard0"), str(tmp_path / "shard1"), "--out", str(merged)],
                          capture_output=True, text=True, timeout=120)
    summary = json.loads((merged / "summary.json").read_text(encoding="utf-8"))
    assert proc.returncode == summary["exit_code"] == suite["exit_code"], proc.stderr[-2000:]
    assert summary["coverage"]["recorded"] == summary["coverage"]["planned"] == 4
    assert summary["counts"] == suite["counts"]
    assert sorted((p["kind"], p["cell"], p["case"]) for p in summary["problems"]) == \
        sorted((p["kind"], p["cell"], p["case"]) for p in suite["problems"])
    assert [(d["case"], d["values"]) for d in summary["divergences"]] == \
        [(d["case"], d["values"]) for d in suite["divergences"]]


def test_resume_runs_only_the_suites_that_did_not_end(tmp_path):
    """A cell whose suite ended is done; one that could not run is tried again, and its cell
    error is still one problem."""
    out = tmp_path / "out"
    first = run_matrix("suite-broken.toml", out)
    [working] = cells_by(first, SIMPKG_BINDING="dlsym")
    [broken] = cells_by(first, SIMPKG_BINDING="broken")
    assert suite_ends(out) == [working]
    resumed = run_matrix("suite-broken.toml", out, "--resume")
    assert suite_ends(out) == [working]  # the working cell was not run again
    assert [p["cell"] for p in problems(resumed, "cell_error")] == [broken]
    assert resumed["counts"] == first["counts"]


def test_a_crash_inside_a_batch_resumes_the_batch(suite_crash_run):
    """The faulty cell's failed tests re-run together (b1); the crash in test_synchronize ends its
    try there, and the batch resumes without it (b1.2), where the flaky test passes."""
    summary, out = suite_crash_run
    [faulty] = cells_by(summary, CUPARITY_SIM_FAULTS="cuCtxSynchronize:crash")
    records = map(json.loads, (out / "results.jsonl").read_text(encoding="utf-8").splitlines())
    by_case = {r["case"]: r for r in records if r.get("cell") == faulty and "case" in r}
    crashed = by_case["simpkg.test_basics.StreamTests.test_synchronize"]
    assert [(t["process"], t["outcome"]) for t in crashed["tries"]][:2] == \
        [("p1", "crash"), ("b1", "crash")]
    flaky = by_case[FLAKY_CASE]
    assert [(t["process"], t["outcome"]) for t in flaky["tries"]] == \
        [("p2", "fail"), ("b1.2", "pass")]
