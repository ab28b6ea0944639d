"""The CI examples of examples/ci run as their engines would run them (issue 50).

Each example is linted (yamllint; the GitHub workflow and the GitLab pipeline also against their
published schemas, check-jsonschema's vendored copies), then its shard job's exact command runs
once per index, with the engine's variables set as that engine sets them (GitLab: CI_NODE_INDEX
1..N and CI_NODE_TOTAL; Kubernetes: JOB_COMPLETION_INDEX 0..N-1; GitHub: strategy.job-index and
job-total substituted into the step), on the simulated driver. The variables each example
declares for its own paths are given ours: MATRIX a two-cell matrix of five cases, RESULTS a
scratch folder. Then the example's merge command runs, and its summary must hold every pair of
the plan exactly once.

cuparity and the simulated driver are found in $CUPARITY_BIN_DIR, else $CUPARITY_BUILD_DIR/bin,
else <repo>/build/bin; without them every run here is skipped, naming the folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from external.test_suite_matrix import bin_dir

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "ci"
TINY = Path(__file__).resolve().parent / "tiny.toml"
TINY_CELLS, TINY_CASES = 2, 5
LINT = YamlLintConfig("""
extends: default
rules:
  line-length: {max: 100}
  document-start: disable
  truthy: {check-keys: false}  # GitHub's `on:` key
""")



def job_env(**engine: str) -> dict[str, str]:
    """A clean environment (no shard variable of the machine running the tests), cuparity on
    PATH, the simulated driver as the driver, and what the engine sets."""
    exe, sim = bin_dir() / "cuparity", bin_dir() / "libcuparity_simdriver.so"
    if not exe.exists() or not sim.exists():
        pytest.skip(f"no cuparity or libcuparity_simdriver.so in {bin_dir()}: build with "
                    "scripts/build (or set CUPARITY_BIN_DIR)")
    env = {"PATH": f"{bin_dir()}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "NUMBA_CUDA_DRIVER": str(sim)}
    env.update({k: str(v) for k, v in engine.items()})
    return env


def run_all(commands: list[tuple[list[str], dict[str, str]]],
            cwd: Path) -> list[subprocess.CompletedProcess]:
    """Starts every shard at once, as the engine would, and waits for all."""
    procs = [subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for argv, env in commands]
    done = []
    for (argv, _), p in zip(commands, procs):
        out, err = p.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(argv, p.returncode, out, err))
    return done


def check_shards_ran(done: list[subprocess.CompletedProcess], sources: list[str]) -> None:
    for proc, source in zip(done, sources):
        assert proc.returncode == 0, proc.stderr
        # The one line that says what decided the shard.
        assert f"from {source}" in proc.stderr, proc.stderr


def check_merged(merge: subprocess.CompletedProcess, merged: Path) -> None:
    """The merged summary holds every (cell, case) of the plan exactly once."""
    assert merge.returncode == 0, merge.stdout + merge.stderr
    results = json.loads((merged / "summary.json").read_text())["results"]
    pairs = [(r["cell"], r["case"]) for r in results]
    assert len(pairs) == TINY_CELLS * TINY_CASES
    assert len(set(pairs)) == len(pairs)


def load(name: str) -> list:
    path = EXAMPLES / name
    problems = [f"{path}:{p.line}:{p.column}: {p.desc} ({p.rule})"
                for p in linter.run(path.read_text(), LINT, str(path))]
    assert not problems, "\n".join(problems)
    return list(yaml.safe_load_all(path.read_text()))


def check_schema(name: str, schema: str) -> None:
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema,
                           str(EXAMPLES / name)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_gitlab_parallel_jobs_cover_the_plan_once(tmp_path: Path) -> None:
    check_schema("gitlab-ci.yml", "vendor.gitlab-ci")
    (pipeline,) = load("gitlab-ci.yml")
    shard, merge = pipeline["cuparity-shard"], pipeline["cuparity-merge"]
    n = shard["parallel"]
    assert isinstance(n, int) and n >= 2
    variables = {**pipeline["variables"], "MATRIX": str(TINY)}
    # GitLab numbers parallel jobs from 1.
    jobs = [(["bash", "-ec", "\n".join(shard["script"])],
             job_env(**variables, CI_NODE_INDEX=str(k), CI_NODE_TOTAL=str(n)))
            for k in range(1, n + 1)]
    check_shards_ran(run_all(jobs, tmp_path),
                     [f"GitLab (CI_NODE_INDEX={k}, CI_NODE_TOTAL={n})" for k in range(1, n + 1)])
    for k in range(1, n + 1):  # each job's artifact is the folder its run wrote
        (path,) = shard["artifacts"]["paths"]
        assert (tmp_path / path.replace("$CI_NODE_INDEX", str(k)) / "results.jsonl").exists()
    # The merge job is no parallel job: GitLab sets CI_NODE_TOTAL=1 there, which is no shard.
    merged = subprocess.run(["bash", "-ec", "\n".join(merge["script"])], cwd=tmp_path,
                            env=job_env(**variables, CI_NODE_TOTAL="1"), capture_output=True,
                            text=True)
    check_merged(merged, tmp_path / "merged")


def test_kubernetes_indexed_job_covers_the_plan_once(tmp_path: Path) -> None:
    shards_job, merge_job = load("kubernetes-indexed-job.yaml")
    for job in (shards_job, merge_job):
        assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
        assert job["spec"]["template"]["spec"]["restartPolicy"] in ("Never", "OnFailure")
    spec = shards_job["spec"]
    assert spec["completionMode"] == "Indexed"
    n = spec["completions"]
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    # A pod is not told spec.completions: the Job must give the same count.
    assert env["CUPARITY_TOTAL_SHARDS"] == str(n)
    env.update(MATRIX=str(TINY), RESULTS=str(tmp_path / "results"))
    pods = [(container["command"], job_env(**env, JOB_COMPLETION_INDEX=str(k))) for k in range(n)]
    check_shards_ran(run_all(pods, tmp_path), [
        f"Kubernetes (JOB_COMPLETION_INDEX={k}, CUPARITY_TOTAL_SHARDS={n})" for k in range(n)])
    (merger,) = merge_job["spec"]["template"]["spec"]["containers"]
    merge_env = {e["name"]: e["value"] for e in merger["env"]}
    merge_env.update(MATRIX=str(TINY), RESULTS=str(tmp_path / "results"))
    merged = subprocess.run(merger["command"], cwd=tmp_path, env=job_env(**merge_env),
                            capture_output=True, text=True)
    check_merged(merged, tmp_path / "results" / "merged")


def github_step(command: str, index: int, total: int) -> str:
    """The step as GitHub runs it: its ${{ }} expressions replaced, none left unknown."""
    known = {"strategy.job-index": str(index), "strategy.job-total": str(total)}
    out = re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: known[m.group(1)], command)
    assert "${{" not in out
    return out


def test_github_actions_matrix_covers_the_plan_once(tmp_path: Path) -> None:
    check_schema("github-actions.yml", "vendor.github-workflows")
    (workflow,) = load("github-actions.yml")
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    n = len(shard["strategy"]["matrix"]["shard"])
    (run_step,) = [s["run"] for s in shard["steps"] if "cuparity run" in s.get("run", "")]
    (merge_step,) = [s["run"] for s in merge["steps"] if "cuparity merge" in s.get("run", "")]
    (upload,) = [s for s in shard["steps"] if s.get("uses", "").startswith("actions/upload")]
    env = {**workflow["env"], "MATRIX": str(TINY)}
    # GitHub gives each job a step-summary file of its own.
    pages = [tmp_path / f"step-summary-{k}.md" for k in range(n)]
    jobs = [(["bash", "-ec", github_step(run_step, k, n)],
             job_env(**env, GITHUB_STEP_SUMMARY=str(pages[k]))) for k in range(n)]
    check_shards_ran(run_all(jobs, tmp_path), [f"--shard {k}/{n}" for k in range(n)])
    for k, page in enumerate(pages):  # each shard's verdict on its job's page
        assert "— EQUIVALENT (SIMULATED DRIVER)" in page.read_text()
        assert f"; shard {k}/{n}." in page.read_text()
    # download-artifact puts each artifact in shards/<its name>: where the run wrote it.
    for k in range(n):
        name, path = (github_step(upload["with"][key], k, n) for key in ("name", "path"))
        assert Path(path) == Path("shards") / name
        assert (tmp_path / path / "results.jsonl").exists()
    merged = subprocess.run(["bash", "-ec", merge_step], cwd=tmp_path, env=job_env(**env),
                            capture_output=True, text=True)
    check_merged(merged, tmp_path / "merged")
    (page_step,) = [s for s in merge["steps"] if "cuparity markdown" in s.get("run", "")]
    assert page_step["if"] == "always()"  # a failed merge's verdict is the one to show
    merge_page = tmp_path / "step-summary-merge.md"
    shown = subprocess.run(["bash", "-ec", page_step["run"]], cwd=tmp_path,
                           env=job_env(**env, GITHUB_STEP_SUMMARY=str(merge_page)),
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "## cuparity: ci-tiny — EQUIVALENT (SIMULATED DRIVER)" in merge_page.read_text()
    assert f"{TINY_CELLS * TINY_CASES} results in {TINY_CELLS} cells" in merge_page.read_text()
    # A shard missing is no verdict: the merge says so.
    shutil.rmtree(tmp_path / "shards" / "shard-1")
    partial = subprocess.run(["bash", "-ec", merge_step.replace("merged", "partial")],
                             cwd=tmp_path, env=job_env(**env), capture_output=True, text=True)
    assert partial.returncode != 0


def test_shards_dealt_by_time_cover_the_plan_once(tmp_path: Path) -> None:
    whole = subprocess.run(["cuparity", "run", str(TINY), "--out", "whole"], cwd=tmp_path,
                           env=job_env(), capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    n = 3
    jobs = [(["cuparity", "run", str(TINY), "--shard-by-time", "whole", "--out", f"s{k}"],
             job_env(BUILDKITE_PARALLEL_JOB=str(k), BUILDKITE_PARALLEL_JOB_COUNT=str(n)))
            for k in range(n)]
    done = run_all(jobs, tmp_path)
    check_shards_ran(done, [f"Buildkite (BUILDKITE_PARALLEL_JOB={k}" for k in range(n)])
    assert all(" by time " in p.stderr for p in done)
    merged = subprocess.run(["cuparity", "merge", str(TINY), *[f"s{k}" for k in range(n)],
                             "--out", "merged"], cwd=tmp_path, env=job_env(),
                            capture_output=True, text=True)
    check_merged(merged, tmp_path / "merged")
