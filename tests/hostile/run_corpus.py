#!/usr/bin/env python3
"""Hostile matrices against `cuparity list` and `cuparity run` on the simulated driver.

Usage:
  run_corpus.py --bin BUILD/bin [--out DIR] [--jobs N] [--timeout S] [--strict] [FILE ...]
  run_corpus.py --list-runner      (the files whose expected answer waits on a runner fix)

Every *.toml beside this script (and a few the script writes itself: inputs too big to commit,
and matrix paths that are no file) says on its first line what it attacks and what is expected:
"# <what it attacks> -- expect: <codes>", where <codes> is "2" (bad input: both commands exit 2),
a run's exit code such as "0", "1", "3" or "0|1" (`list` exits 0 then), or "no-abort (runner)".

For each file, `cuparity list FILE` and `cuparity run FILE --out <tmp> --no-latency -j 2` run
under a timeout, and each must:
  - end by itself: no signal (SIGABRT, SIGSEGV, ...), no "terminate called", no timeout;
  - exit 0, 1, 2 or 3, and the one the first line expects;
  - on exit 2, print FILE:line:column (a matrix path that is no file: FILE itself), and leave the
    run's output folder uncreated.
"no-abort (runner)" marks a matrix whose runtime fault (a driver crashing in cuInit) the runner
does not survive yet: it must not abort, but until the runner is fixed a failure there is
reported as pending, not counted (--strict counts it). The exit code is 1 when any check failed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_PENDING = "no-abort (runner)"
EXPECT = re.compile(r"--\s*expect:\s*(.+?)\s*$")
# Variables that would change what a cell sees: the commands get none of the caller's.
CONTROLLED_PREFIXES = ("NUMBA_", "CUDA_PYTHON_", "CUPARITY_", "CUDA_VISIBLE_DEVICES", "GTEST_")


@dataclass
class hostile_file:
    path: str
    expect: str  # "2", "0|1", RUNNER_PENDING, ...
    what: str
    path_only: bool = False  # the path is no matrix file: messages name the path, no line


@dataclass
class outcome:
    file: hostile_file
    problems: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    seconds: float = 0.0


def first_line(path: str) -> str:
    with open(path, "rb") as f:
        line = f.readline()
    return line.decode("utf-8", errors="replace").lstrip("\ufeff").strip()


def parse_header(path: str) -> hostile_file:
    line = first_line(path)
    m = EXPECT.search(line)
    if not line.startswith("#") or not m:
        raise SystemExit(f"{path}: the first line must be '# <what it attacks> -- expect: <codes>'")
    what = line[1 : m.start()].strip()
    return hostile_file(path, m.group(1), what)


def committed_files() -> list[str]:
    return sorted(os.path.join(HERE, n) for n in os.listdir(HERE) if n.endswith(".toml"))


def write(path: str, comment: str, body: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# {comment}\n{body}")
    return path


def generated_files(gen: str) -> list[hostile_file]:
    """Inputs too big to commit, and matrix paths that are no matrix file."""
    os.makedirs(gen, exist_ok=True)
    ok = '[matrix]\ncases = ["binding.*"]\n'
    one = '[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]\n'
    specs = {
        "variable_name_50k": ("an axis key of 50,000 characters (std::regex overflowed the stack: "
                              "exit 139) -- expect: 2",
                              ok + "[axes]\n" + "A" * 50000 + ' = ["0"]\n'),
        "variable_name_50k_lowercase": ("a 50,000-character key that is no UPPER_CASE name -- "
                                        "expect: 2",
                                        ok + "[axes]\n" + "a" * 50000 + ' = ["0"]\n'),
        "include_name_50k": ("an [[include]] key of 50,000 characters -- expect: 2",
                             ok + one + "[[include]]\n" + "B" * 50000 + ' = "1"\n'),
        "value_over_64k": ("a value of 65537 bytes, over the bound -- expect: 2",
                           ok + '[axes]\nA = ["' + "v" * 65537 + '"]\n'),
        "value_128k": ("a value over 128 KiB (aborted the runner before) -- expect: 2",
                       ok + '[axes]\nA = ["' + "v" * (128 * 1024 + 1) + '"]\n'),
        "value_at_64k": ("a value of exactly 65536 bytes is accepted -- expect: 0",
                         ok + 'inert = { CUPARITY_HOSTILE_NOTE = "a note; nothing reads it" }\n'
                         + '[axes]\nCUPARITY_HOSTILE_NOTE = ["' + "v" * 65536 + '"]\n'),
        "cell_env_over_bound": ("five values of 60 KiB: each fine, too much for one environment "
                                "-- expect: 2",
                                ok + "[[include]]\n" + "".join(
                                    f'V{i} = "' + "x" * (60 * 1024) + '"\n' for i in range(5))),
        "axis_10001_values": ("one axis of 10001 values: one cell over the bound -- expect: 2",
                              ok + "[axes]\nA = [" + ", ".join(map(str, range(10001))) + "]\n"),
        "expect_1001_rules": ("1001 [[expect]] rules, one over the bound -- expect: 2",
                              ok + one + "[[expect]]\n" * 1001),
        "include_1001_rules": ("1001 [[include]] rules, one over the bound -- expect: 2",
                               ok + "".join(f'[[include]]\nA = "{i}"\n' for i in range(1001))),
        "huge_description": ("a description of a megabyte: accepted, it is only text -- expect: 0",
                             ok + 'description = "' + "d" * (1 << 20) + '"\n' + one),
        "empty_file": ("an empty matrix: no cells -- expect: 2", ""),
    }
    out = [parse_header(write(os.path.join(gen, n + ".toml"), c, b)) for n, (c, b) in specs.items()]
    folder = os.path.join(gen, "folder.toml")
    os.makedirs(folder, exist_ok=True)
    dangling = os.path.join(gen, "dangling.toml")
    if not os.path.lexists(dangling):
        os.symlink(os.path.join(gen, "no-such-matrix"), dangling)
    out.append(hostile_file(folder, "2", "a matrix path that is a folder", path_only=True))
    out.append(hostile_file(dangling, "2", "a matrix path that is a dangling link", path_only=True))
    return out


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(CONTROLLED_PREFIXES)}


def expected_codes(expect: str, command: str) -> set[int] | None:
    if expect == RUNNER_PENDING:
        return {0} if command == "list" else None
    codes = {int(c) for c in expect.split("|")}
    if command == "list":
        return {2} if codes == {2} else {0}
    return codes


def run_one(cmd: list[str], timeout: float) -> tuple[int | None, str]:
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                           env=clean_env())
    except subprocess.TimeoutExpired:
        return None, ""
    return p.returncode, p.stderr.decode("utf-8", errors="replace")


def check_command(f: hostile_file, command: str, cmd: list[str], timeout: float,
                  out_dir: str | None) -> list[str]:
    rc, err = run_one(cmd, timeout)
    name = f"{command}: "
    if rc is None:
        return [name + f"did not end within {timeout:.0f} s (a hang)"]
    problems = []
    if rc < 0:
        problems.append(name + f"killed by signal {-rc}")
    if "terminate called" in err or "Aborted" in err:
        problems.append(name + "aborted: " + err.strip().splitlines()[-1][:200])
    if rc >= 0 and rc not in (0, 1, 2, 3):
        problems.append(name + f"exit {rc}, not 0, 1, 2 or 3")
    codes = expected_codes(f.expect, command)
    if codes is not None and rc not in codes:
        problems.append(name + f"exit {rc}, expected {'|'.join(map(str, sorted(codes)))}: "
                        + (err.strip().splitlines() or [""])[-1][:300])
    if rc == 2:
        where = re.escape(f.path) + (r": " if f.path_only else r":\d+:\d+: ")
        if not re.search(where, err):
            problems.append(name + "exit 2 without " + ("the path" if f.path_only else
                                                        "FILE:line:column") + ": " + err[:300])
        if out_dir and os.path.exists(out_dir):
            problems.append(name + f"exit 2, yet it created {out_dir}")
    return problems


def check_file(f: hostile_file, cuparity: str, tmp: str, timeout: float) -> outcome:
    start = time.monotonic()
    result = outcome(f)
    out_dir = os.path.join(tmp, "runs", os.path.basename(f.path))
    shutil.rmtree(out_dir, ignore_errors=True)
    problems = check_command(f, "list", [cuparity, "--driver", "sim", "list", f.path], timeout,
                             None)
    problems += check_command(f, "run", [cuparity, "--driver", "sim", "run", f.path, "--out",
                                         out_dir, "--no-latency", "-j", "2"], timeout, out_dir)
    if f.expect == RUNNER_PENDING:
        result.pending = problems
    else:
        result.problems = problems
    result.seconds = time.monotonic() - start
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", help="hostile matrices (default: the whole corpus)")
    p.add_argument("--bin", help="the build's bin folder (cuparity, libcuparity_simdriver.so)")
    p.add_argument("--out", help="scratch folder (default: a temporary one, removed)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30, help="seconds per command")
    p.add_argument("--strict", action="store_true", help="count no-abort (runner) failures")
    p.add_argument("--list-runner", action="store_true",
                   help="print the files marked no-abort (runner) and stop")
    a = p.parse_args()
    files = [parse_header(x) for x in (a.files or committed_files())]
    if a.list_runner:
        for f in files:
            if f.expect == RUNNER_PENDING:
                print(f"{os.path.relpath(f.path)}: {f.what}")
        return 0
    if not a.bin:
        p.error("--bin is needed to run the corpus")
    cuparity = os.path.join(a.bin, "cuparity")
    tmp = a.out or tempfile.mkdtemp(prefix="cuparity-hostile-")
    if a.out:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp, exist_ok=True)
    if not a.files:
        files += generated_files(os.path.join(tmp, "generated"))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(lambda f: check_file(f, cuparity, tmp, a.timeout), files))
    failed = [r for r in results if r.problems or (a.strict and r.pending)]
    for r in results:
        for msg in r.problems + (r.pending if a.strict else []):
            print(f"FAIL {os.path.relpath(r.file.path)}: {msg}")
        if not a.strict:
            for msg in r.pending:
                print(f"PENDING (runner) {os.path.relpath(r.file.path)}: {msg}")
    pending_ok = [r for r in results if r.file.expect == RUNNER_PENDING and not r.pending]
    for r in pending_ok:
        print(f"NOTE {os.path.relpath(r.file.path)}: passes now; its mark no-abort (runner) "
              "can become an exit code")
    slowest = max(results, key=lambda r: r.seconds)
    print(f"{len(results)} hostile matrices, {len(failed)} failed, "
          f"{sum(1 for r in results if r.pending)} pending on the runner; "
          f"{time.monotonic() - start:.1f} s (slowest {os.path.basename(slowest.file.path)} "
          f"{slowest.seconds:.1f} s)")
    if not a.out:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
