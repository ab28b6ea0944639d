"""What `cuparity capture` and the suite runner cost, side by side with the bare command (issue 49).

A benchmark that reports figures, not a timed test: scripts/bench-overhead runs it. Each KIND is a
pair of commands, the bare one and the same under cuparity, run --pairs times in interleaved pairs
(the order alternates, so drift and caches weigh on both sides alike), after --warmup unmeasured
pairs. With --parts, a capture kind also runs the bare command with the audit library alone and
with the audit library and the Python start-up hook (rounds of four, each starting one later), so
the cost is split into the audit library's, the hook's and cuparity's own. Per kind it prints and writes (--json) each side's median, the ratio of the medians with a
bootstrap 95 % interval over the pairs, the difference of the medians in ms, and the median of the
per-pair differences with its distribution-free (order-statistic) 95 % interval.

Kinds:
  capture:LABEL=COMMAND  COMMAND (split as a shell would, no shell runs it) bare, and under
                         `cuparity capture --quiet --out TMP --`
  torch, cupy            presets: this Python running matrices/programs/{torch,cupy}_kernel.py
  simpkg                 preset: tests/programs/use_simpkg.py on the driver --driver names (the
                         simulated one with --driver sim), through cuGetProcAddress
  simpkg-numpy           the same after `import numpy` (many extension modules; numpy needed)
  suite200               a generated pytest suite of 200 quick tests, run directly
                         (python3 -m pytest -q -p no:cacheprovider --junitxml=...) against the
                         one-cell matrix `cuparity run` of the same command as a [[suite]]
  suite200-capture       the same pytest command under `cuparity capture` alone (so the runner's
                         own cost is suite200's less this one's)

Goals (issue 49): capture at most 2 % or 30 ms per process, whichever is larger; the runner at
most 5 % on a suite. Standard library only (the GPU machine has no pyperf).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "cuparity.bench_overhead/1"
SUITE_MODULES = 10
SUITE_TESTS_PER_MODULE = 20
BOOTSTRAP_RESAMPLES = 2000


class BenchError(Exception):
    """A condition that stops the benchmark; `code` is the exit status (harness exit codes)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


# --- the commands ---------------------------------------------------------------------------------


class Kind:
    """One comparison: `bare` and `wrapped` argv, their environment, and what to clear between runs."""

    def __init__(self, name: str, label: str, bare: list[str], wrapped: list[str], env: dict[str, str],
                 goal: str) -> None:
        self.name, self.label, self.bare, self.wrapped, self.env, self.goal = name, label, bare, wrapped, env, goal
        self.out_dir: Path | None = None  # emptied before each wrapped run
        # --parts: the bare command with only some of what `capture` adds, {part: extra variables};
        # "{events}" in a value is a fresh empty folder for each run.
        self.parts: dict[str, dict[str, str]] = {}


def _driver_library(args: argparse.Namespace) -> str:
    """The driver file a preset program loads: the simulated one for --driver sim."""
    if args.driver == "sim":
        return str(Path(args.cuparity).resolve().parent / "libcuparity_simdriver.so")
    return args.driver or "libcuda.so.1"


def _cuparity(args: argparse.Namespace) -> list[str]:
    return [args.cuparity] + (["--driver", args.driver] if args.driver else [])


def _capture_kind(args, work: Path, name: str, label: str, command: list[str], env: dict[str, str]) -> Kind:
    out = work / f"capture-{label}"
    out.mkdir()
    wrapped = _cuparity(args) + ["capture", "--quiet", "--out", str(out / "map.json"), "--"] + command
    kind = Kind(name, label, command, wrapped, env, "capture")
    kind.out_dir = out
    if args.parts:
        kind.parts = _parts(args, env)
    return kind


def _parts(args, env: dict[str, str]) -> dict[str, dict[str, str]]:
    """What `cuparity capture` adds to a command's environment, in two steps (docs/capture.md): the
    audit library alone, then with the Python start-up hook. What the full capture costs beyond
    both is cuparity's own: starting, waiting, reading the events, the map."""
    bin_dir = Path(args.cuparity).resolve().parent
    audit = {"LD_AUDIT": str(bin_dir / "libcuparity_audit.so"), "CUPARITY_CAPTURE_DIR": "{events}"}
    if args.driver:
        audit["CUPARITY_CAPTURE_DRIVER"] = _driver_library(args)
    path = env.get("PYTHONPATH") or os.environ.get("PYTHONPATH")
    hook = str(bin_dir / "python-hook") + (":" + path if path else "")
    return {"audit": audit, "audit+hook": dict(audit, PYTHONPATH=hook)}


def _simpkg_env(args) -> dict[str, str]:
    return {
        "PYTHONPATH": str(REPO / "tests" / "external"),
        "NUMBA_CUDA_DRIVER": _driver_library(args),
        "SIMPKG_BINDING": "proc",
    }


def write_suite(folder: Path, driver: str) -> None:
    """SUITE_MODULES modules of SUITE_TESTS_PER_MODULE quick tests; the conftest loads the driver
    and asks its version once per process (no cuInit), so each process binds something of it."""
    folder.mkdir(parents=True)
    (folder / "conftest.py").write_text(
        "import ctypes, os\n"
        f"_driver = ctypes.CDLL(os.environ.get('CUPARITY_BENCH_DRIVER') or {driver!r})\n"
        "_version = ctypes.c_int(0)\n"
        "assert _driver.cuDriverGetVersion(ctypes.byref(_version)) == 0\n"
    )
    for m in range(SUITE_MODULES):
        tests = "".join(
            f"def test_sum_{t}():\n    assert sum(range({t})) == {t * (t - 1) // 2}\n\n\n"
            for t in range(SUITE_TESTS_PER_MODULE)
        )
        (folder / f"test_module_{m:02d}.py").write_text(tests)


def _suite_kinds(args, work: Path, name: str) -> Kind:
    suite = work / "suite200"
    if not suite.exists():
        write_suite(suite, _driver_library(args))
    env = {"CUPARITY_BENCH_DRIVER": _driver_library(args)}
    pytest_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if name == "suite200-capture":
        return _capture_kind(args, work, name, name, pytest_argv + ["--junitxml", str(work / "capture-junit.xml"),
                                                                   str(suite)], env)
    matrix = work / "suite200.toml"
    command = pytest_argv + ["--junitxml={junit}", str(suite)]
    matrix.write_text(
        '[matrix]\nname = "bench-suite200"\ndescription = "200 quick tests, for the runner\'s overhead"\n\n'
        '[axes]\nCUPARITY_BENCH_CELL = ["1"]   # one cell\n\n'
        "[[suite]]\n"
        'name = "bench"\n'
        f"command = {json.dumps(command)}\n"
        f"environment = {{ CUPARITY_BENCH_DRIVER = {json.dumps(env['CUPARITY_BENCH_DRIVER'])} }}\n"
        "timeout_s = 600\n"
    )
    out = work / "run-suite200"
    bare = pytest_argv + ["--junitxml", str(work / "direct-junit.xml"), str(suite)]
    kind = Kind(name, name, bare, _cuparity(args) + ["run", str(matrix), "--out", str(out)], env, "suite")
    kind.out_dir = out
    return kind


def make_kind(args, work: Path, spec: str) -> Kind:
    programs = REPO / "matrices" / "programs"
    if spec.startswith("capture:"):
        label, sep, command = spec[len("capture:"):].partition("=")
        if not sep or not label or not command.strip():
            raise BenchError(f"{spec}: expected capture:LABEL=COMMAND", 2)
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise BenchError(f"{spec}: {e}", 2) from e
        return _capture_kind(args, work, "capture", label, argv, {})
    if spec in ("torch", "cupy"):
        return _capture_kind(args, work, spec, spec, [sys.executable, str(programs / f"{spec}_kernel.py")], {})
    if spec in ("simpkg", "simpkg-numpy"):
        program = str(REPO / "tests" / "programs" / "use_simpkg.py")
        argv = [sys.executable, program] if spec == "simpkg" else [
            sys.executable, "-c", f"import numpy, runpy, sys; sys.argv = [{program!r}]; "
            f"runpy.run_path({program!r}, run_name='__main__')"]
        return _capture_kind(args, work, spec, spec, argv, _simpkg_env(args))
    if spec in ("suite200", "suite200-capture"):
        return _suite_kinds(args, work, spec)
    raise BenchError(f"unknown kind {spec!r} (capture:LABEL=COMMAND, torch, cupy, simpkg, simpkg-numpy, "
                     "suite200, suite200-capture)", 2)


# --- running ---------------------------------------------------------------------------------------


def _clear(folder: Path | None) -> None:
    if folder is None or not folder.exists():
        return
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def time_once(kind: Kind, side: str, log: Path, work: Path) -> float:
    """Seconds one run of `side` ("bare", "capture"/"runner", or a part) took; BenchError (exit 1)
    when it did not exit 0, with its output's end."""
    wrapped = side not in ("bare", *kind.parts)
    if wrapped:
        _clear(kind.out_dir)
        if kind.goal == "suite" and kind.out_dir is not None and kind.out_dir.exists():
            kind.out_dir.rmdir()  # `cuparity run` wants a fresh --out
    argv = kind.wrapped if wrapped else kind.bare
    env = dict(os.environ)
    env.update(kind.env)
    events = work / "part-events"
    if side in kind.parts:
        shutil.rmtree(events, ignore_errors=True)
        events.mkdir()
        env.update({k: v.replace("{events}", str(events)) for k, v in kind.parts[side].items()})
    with open(log, "wb") as out:
        start = time.perf_counter()
        try:
            code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                  cwd=str(REPO), check=False).returncode
        except OSError as e:
            raise BenchError(f"{kind.label}: cannot run {argv[0]}: {e}", 3) from e
        seconds = time.perf_counter() - start
    if code != 0:
        tail = log.read_bytes()[-2000:].decode("utf-8", "replace")
        raise BenchError(f"{kind.label} ({side}) exited {code}: {shlex.join(argv)}\n{tail}", 1)
    return seconds


def measure(kind: Kind, pairs: int, warmup: int, work: Path) -> list[dict]:
    """`pairs` rounds of every side; each round starts one side later than the one before (two
    sides: bare first, then the other first), so no side always runs first."""
    log = work / "last-output.log"
    full = "capture" if kind.goal == "capture" else "runner"
    sides = ["bare", *kind.parts, full]
    for _ in range(warmup):
        for side in sides:
            time_once(kind, side, log, work)
    times: dict[str, list[float]] = {side: [] for side in sides}
    order = []
    for i in range(pairs):
        rotated = sides[i % len(sides):] + sides[:i % len(sides)]
        order.append(rotated)
        for side in rotated:
            times[side].append(time_once(kind, side, log, work))
        print(f"  {kind.label} round {i + 1}/{pairs}: " +
              ", ".join(f"{side} {times[side][-1] * 1000:.1f} ms" for side in sides), file=sys.stderr)
    return [summarize(kind, side, times["bare"], times[side], order) for side in [*kind.parts, full]]


# --- statistics ------------------------------------------------------------------------------------


def bootstrap_ratio(bare: list[float], wrapped: list[float], resamples: int = BOOTSTRAP_RESAMPLES) -> list[float]:
    """95 % percentile-bootstrap interval of median(wrapped) / median(bare), resampling pairs."""
    rng = random.Random(49)  # fixed: the same samples give the same interval
    n = len(bare)
    ratios = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(statistics.median(wrapped[i] for i in picks) / statistics.median(bare[i] for i in picks))
    ratios.sort()
    return [ratios[int(0.025 * (resamples - 1))], ratios[int(0.975 * (resamples - 1))]]


def median_interval(values: list[float]) -> list[float] | None:
    """Distribution-free 95 % interval of the median: the order statistics whose binomial coverage
    reaches 95 %; None when there are too few values for one (fewer than 6)."""
    xs = sorted(values)
    n = len(xs)
    from math import comb

    for k in range(n // 2, -1, -1):  # widen from the middle: [xs[k], xs[n-1-k]]
        coverage = sum(comb(n, j) for j in range(k + 1, n - k)) / 2 ** n
        if coverage >= 0.95:
            return [xs[k], xs[n - 1 - k]]
    return None


def summarize(kind: Kind, part: str, bare: list[float], wrapped: list[float], order: list[list[str]]) -> dict:
    mb, mw = statistics.median(bare), statistics.median(wrapped)
    diffs = [w - b for b, w in zip(bare, wrapped)]
    interval = median_interval(diffs)
    ratio = mw / mb
    diff_ms = (mw - mb) * 1000
    if kind.goal == "capture":
        allowed_ms = max(0.02 * mb * 1000, 30.0)
        goal = {"rule": "at most 2 % or 30 ms, whichever is larger", "allowed_ms": round(allowed_ms, 3)}
        meets = diff_ms <= allowed_ms
    else:
        goal = {"rule": "at most 5 %", "allowed_ratio": 1.05}
        meets = ratio <= 1.05
    in_part = part in kind.parts
    return {
        "kind": kind.name,
        "label": kind.label if part in ("capture", "runner") else f"{kind.label}/{part}",
        "measures": kind.goal,
        "part": part,
        "bare_command": kind.bare,
        "command": kind.bare if in_part else kind.wrapped,
        "environment": dict(kind.env, **kind.parts[part]) if in_part else kind.env,
        "order": order,
        "bare_s": bare,
        "wrapped_s": wrapped,
        "bare_median_s": mb,
        "wrapped_median_s": mw,
        "ratio": ratio,
        "ratio_ci95": bootstrap_ratio(bare, wrapped),
        "overhead_pct": (ratio - 1) * 100,
        "diff_ms": diff_ms,
        "paired_diff_median_ms": statistics.median(diffs) * 1000,
        "paired_diff_ci95_ms": None if interval is None else [x * 1000 for x in interval],
        "goal": goal,
        "meets_goal": meets,
    }


def print_table(results: list[dict], out) -> None:
    head = f"{'kind':<26} {'bare ms':>9} {'cuparity ms':>11} {'ratio':>7} {'95 % CI':>15} {'+ms':>8} {'paired +ms (95 % CI)':>26}  goal"
    print(head, file=out)
    for r in results:
        lo, hi = r["ratio_ci95"]
        ci = r["paired_diff_ci95_ms"]
        paired = f"{r['paired_diff_median_ms']:.1f}" + (f" ({ci[0]:.1f}..{ci[1]:.1f})" if ci else " (n<6)")
        print(f"{r['label']:<26} {r['bare_median_s'] * 1000:>9.1f} {r['wrapped_median_s'] * 1000:>11.1f} "
              f"{r['ratio']:>7.3f} {f'{lo:.3f}..{hi:.3f}':>15} {r['diff_ms']:>8.1f} {paired:>26}  "
              f"{'met' if r['meets_goal'] else 'NOT met'} ({r['goal']['rule']})", file=out)


# --- the command line ------------------------------------------------------------------------------


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/bench-overhead", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("kinds", nargs="+", metavar="KIND")
    p.add_argument("--pairs", type=int, default=10, help="measured pairs per kind (default 10)")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured pairs first (default 1)")
    p.add_argument("--json", metavar="OUT", help="write the figures here (cuparity.bench_overhead/1)")
    p.add_argument("--cuparity", default=os.environ.get("CUPARITY_BIN") or str(REPO / "build" / "bin" / "cuparity"),
                   help="the cuparity executable (default $CUPARITY_BIN, else build/bin/cuparity)")
    p.add_argument("--driver", help="passed to cuparity as --driver (sim: the simulated driver)")
    p.add_argument("--parts", action="store_true",
                   help="for capture kinds, also time the command with the audit library alone and with "
                        "the audit library and the Python start-up hook (where capture's cost lies)")
    p.add_argument("--keep", metavar="DIR", help="work in this new folder and keep it (default: a temporary one)")
    args = p.parse_args(argv)
    if args.pairs < 1 or args.warmup < 0:
        p.error("--pairs must be at least 1 and --warmup at least 0")
    return args


def run(args: argparse.Namespace) -> int:
    if not os.access(args.cuparity, os.X_OK):
        raise BenchError(f"--cuparity {args.cuparity}: not an executable file (set CUPARITY_BIN)", 3)
    if args.keep:
        work = Path(args.keep).resolve()
        work.mkdir(parents=True, exist_ok=False)
    else:
        work = Path(tempfile.mkdtemp(prefix="cuparity-bench-"))
    try:
        kinds = [make_kind(args, work, spec) for spec in args.kinds]
        results = []
        for kind in kinds:
            print(f"{kind.label}: {args.pairs} pairs (+{args.warmup} warm-up)", file=sys.stderr)
            results.extend(measure(kind, args.pairs, args.warmup, work))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_table(results, sys.stdout)
    if args.json:
        document = {
            "schema": SCHEMA,
            "cuparity": args.cuparity,
            "driver": args.driver,
            "pairs": args.pairs,
            "warmup": args.warmup,
            "host": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
                     "node": platform.node()},
            "results": results,
        }
        try:
            Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
        except OSError as e:
            raise BenchError(f"--json {args.json}: {e}", 2) from e
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except BenchError as e:
        print(f"bench-overhead: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("bench-overhead: interrupted", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
