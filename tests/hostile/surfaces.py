#!/usr/bin/env python3
"""Hostile inputs for every surface besides `run`'s matrix: compare, merge, audit, calibrate,
probe, the map axis, the reports (dashboard, history) and the capture's --out.

Each trial is made in a temporary folder: a summary, results file, map, history store or output
path that is garbage, deep, non-UTF-8, a FIFO, a device node, a symlink or a directory. Every
trial must end
  - with the exit code it expects (2 for bad input, naming the file on stderr),
  - within its time limit (a FIFO read would block forever), by exit, never by a signal,
  - with no Python traceback and no raw control character on the console,
  - having written nothing in the folder except what it may write (the target of an accepted
    output; lock and log files of the commands).
Usage: surfaces.py --bin BUILD/bin --source SRC [--out DIR] [--keep]; exit 1 when a trial fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
SMALL_MATRIX = """[matrix]
name = "surfaces"
description = "two cells, three cases: the runs the hostile inputs are made from"
cases = ["alloc.copy.dtod", "alloc.sizes.pattern", "stream.create.flags_priorities"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
"""


@dataclass
class trial:
    name: str
    argv: list[str]
    expect: set[int]
    names: str = ""  # a text stderr must hold on exit 2 (the file at fault)
    may_write: list[str] = field(default_factory=list)  # paths (relative to the work folder)
    env: dict[str, str] | None = None
    timeout: float = 60.0
    unchanged: list[str] = field(default_factory=list)  # files whose bytes must stay


class corpus:
    def __init__(self, a: argparse.Namespace, work: Path) -> None:
        self.bin = Path(a.bin).resolve()
        self.src = Path(a.source).resolve()
        self.work = work
        self.cuparity = str(self.bin / "cuparity")
        self.report = str(self.src / "scripts" / "report")
        self.trials: list[trial] = []
        self.root = os.geteuid() == 0

    # --- the base runs -----------------------------------------------------------------------
    def base(self) -> None:
        (self.work / "m.toml").write_text(SMALL_MATRIX)
        for run in ("runA", "runB"):
            rc = subprocess.run([self.cuparity, "--driver", "sim", "run", "m.toml", "--out", run,
                                 "--no-latency"], cwd=self.work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, timeout=300).returncode
            if rc != 0:
                raise SystemExit(f"surfaces: the base run {run} failed (exit {rc})")
        env = self.capture_env()
        rc = subprocess.run([sys.executable, str(self.src / "tools/capture/cuparity_capture.py"),
                             "--package", "cuda.bindings", "--out", "map.json"], cwd=self.work,
                            env=env, stdout=subprocess.DEVNULL, timeout=120).returncode
        if rc != 0:
            raise SystemExit(f"surfaces: the base capture failed (exit {rc})")

    def capture_env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "PYTHONPATH": str(self.src / "tools/capture/tests/doubles"),
                "PYTHONDONTWRITEBYTECODE": "1",
                "CUPARITY_FAKE_DRIVER": str(self.bin / "libcuparity_simdriver.so")}

    # --- making hostile things ---------------------------------------------------------------
    def special(self, kind: str, path: Path) -> bool:
        """Makes `path` a FIFO, device, symlink (to a file), dangling link, loop or directory."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "device":
            if not self.root:
                return False
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a /dev/null of our own
        elif kind == "symlink":
            (path.parent / (path.name + ".real")).write_text("{}\n")
            os.symlink(path.name + ".real", path)
        elif kind == "dangling":
            os.symlink("nowhere/at/all", path)
        elif kind == "loop":
            os.symlink(path.name, path)
        elif kind == "directory":
            path.mkdir()
        return True

    def run_copy(self, name: str, summary: str | bytes | None = None,
                 results: str | bytes | None = None) -> str:
        """A copy of runA with its summary or results replaced by the given bytes."""
        d = self.work / name
        shutil.copytree(self.work / "runA", d, symlinks=True)
        for file, data in (("summary.json", summary), ("results.jsonl", results)):
            if data is not None:
                p = d / file
                p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return name

    def summary_doc(self) -> dict:
        return json.loads((self.work / "runA" / "summary.json").read_text())

    def add(self, t: trial) -> None:
        self.trials.append(t)

    # --- the surfaces ------------------------------------------------------------------------
    def bad_summaries(self) -> dict[str, str | bytes]:
        doc = self.summary_doc()

        def edited(f: Callable[[dict], None]) -> str:
            d = json.loads(json.dumps(doc))
            f(d)
            return json.dumps(d)

        text = json.dumps(doc)
        first_result = "results"
        out: dict[str, str | bytes] = {
            "empty": "",
            "garbage": "this is no JSON",
            "array": "[]",
            "null": "null",
            "string": '"summary"',
            "truncated": text[: len(text) // 2],
            "nan": text.replace('"exit_code": 0', '"exit_code": NaN', 1),
            "huge_number": text.replace('"exit_code": 0', '"exit_code": 1e400', 1),
            "exit_1e300": edited(lambda d: d.__setitem__("exit_code", 1e300)),
            "exit_negative": edited(lambda d: d.__setitem__("exit_code", -1)),
            "exit_string": edited(lambda d: d.__setitem__("exit_code", "0")),
            "no_verdict": edited(lambda d: d.pop("verdict", None)),
            "verdict_unknown": edited(lambda d: d.__setitem__("verdict", "MAYBE")),
            "no_schema": edited(lambda d: d.pop("schema", None)),
            "wrong_schema": edited(lambda d: d.__setitem__("schema", "cuparity.summary/99")),
            "deep_observation": text[:-1] + ', "deep": ' + "[" * 100000 + "]" * 100000 + "}",
            "deep_200": text[:-1] + ', "deep": ' + "[" * 300 + "]" * 300 + "}",
            "invalid_utf8": text.encode()[:-1] + b', "x": "\xff\xfe"}',
            "lone_surrogate": text[:-1] + ', "x": "\\udcff"}',
            "nul_byte": text.encode()[:-1] + b', "x": "\x00"}',
            "counts_string": edited(lambda d: d.__setitem__("counts", "many")),
            "count_negative": edited(lambda d: d.__setitem__("counts", {"pass": -1})),
            "count_fraction": edited(lambda d: d.__setitem__("counts", {"pass": 1.5})),
            "results_object": edited(lambda d: d.__setitem__(first_result, {})),
        }
        if doc.get(first_result):
            out["outcome_unknown"] = edited(
                lambda d: d[first_result][0].__setitem__("outcome", "bogus"))
            out["outcome_number"] = edited(lambda d: d[first_result][0].__setitem__("outcome", 5))
            out["case_missing"] = edited(lambda d: d[first_result][0].pop("case", None))
        return out

    def compare_and_dashboard(self) -> None:
        for name, data in self.bad_summaries().items():
            run = self.run_copy(f"s-{name}", summary=data)
            self.add(trial(f"compare/summary-{name}", [self.cuparity, "compare", "runA", run],
                           {2}, names=f"{run}/summary.json"))
            self.add(trial(f"dashboard/summary-{name}",
                           [self.report, "dashboard", run, "--output", f"{run}.html"], {2},
                           names=f"{run}/summary.json"))
        for kind in ("fifo", "device", "directory", "dangling", "loop"):
            run = f"k-{kind}"
            shutil.copytree(self.work / "runA", self.work / run, symlinks=True)
            (self.work / run / "summary.json").unlink()
            if not self.special(kind, self.work / run / "summary.json"):
                continue
            self.add(trial(f"compare/summary-is-{kind}", [self.cuparity, "compare", "runA", run],
                           {2}, names=run, timeout=20))
            self.add(trial(f"dashboard/summary-is-{kind}",
                           [self.report, "dashboard", run, "--output", f"{run}.html"], {2},
                           names=run, timeout=20))

    def output_targets(self) -> None:
        """--json, --output and --out naming what is not a regular file, or an input."""
        tools = {
            "compare-json": lambda t: [self.cuparity, "compare", "runA", "runB", "--json", t],
            "audit-json": lambda t: [self.cuparity, "--driver", "sim", "audit", "--map",
                                     "map.json", "--json", t],
            "dashboard-output": lambda t: [self.report, "dashboard", "runA", "--output", t],
        }
        for tool, argv in tools.items():
            for kind in ("fifo", "device", "symlink", "dangling", "loop", "directory"):
                target = self.work / "out" / f"{tool}-{kind}"
                if not self.special(kind, target):
                    continue
                self.add(trial(f"{tool}/target-{kind}", argv(str(target.relative_to(self.work))),
                               {2}, names=target.name, timeout=20))
            if tool != "dashboard-output":  # the reports make the folders of a page
                self.add(trial(f"{tool}/target-no-folder", argv("no/such/folder/x.json"), {2},
                               names="no/such/folder"))
        for victim in ("runB/summary.json", "runA/summary.json", "runB/results.jsonl"):
            self.add(trial(f"compare-json/over-input-{victim}",
                           [self.cuparity, "compare", "runA", "runB", "--json", victim], {2},
                           names=victim, unchanged=[victim]))
        self.add(trial("audit-json/over-map", [self.cuparity, "--driver", "sim", "audit", "--map",
                                               "map.json", "--json", "map.json"], {2},
                       names="map.json", unchanged=["map.json"]))
        self.add(trial("dashboard-output/over-summary",
                       [self.report, "dashboard", "runA", "--output", "runA/summary.json"], {2},
                       names="summary.json", unchanged=["runA/summary.json"]))
        for kind in ("fifo", "device", "symlink", "directory"):
            target = self.work / "out" / f"capture-{kind}"
            if not self.special(kind, target):
                continue
            self.add(trial(f"capture-out/target-{kind}",
                           [sys.executable, str(self.src / "tools/capture/cuparity_capture.py"),
                            "--package", "cuda.bindings", "--out",
                            str(target.relative_to(self.work))], {2}, names=target.name,
                           env=self.capture_env(), timeout=30))

    def maps(self) -> None:
        doc = json.loads((self.work / "map.json").read_text())

        def edited(f: Callable[[dict], None]) -> str:
            d = json.loads(json.dumps(doc))
            f(d)
            return json.dumps(d)

        def rebind(function: str, symbol: str) -> Callable[[dict], None]:
            def f(d: dict) -> None:
                for e in d["entries"]:
                    if e.get("function") == function:
                        e["symbol"] = symbol
            return f

        bad: dict[str, str | bytes] = {
            "empty": "", "garbage": "{", "array": "[]", "no_schema": edited(lambda d: d.pop("schema")),
            "entries_null": edited(lambda d: d.__setitem__("entries", None)),
            "entries_object": edited(lambda d: d.__setitem__("entries", {})),
            "kind_unknown": edited(lambda d: d["package"].__setitem__("kind", "jax")),
            "status_unknown": edited(lambda d: d.__setitem__("status", "fine")),
            "deep": '{"schema": "cuparity.binding_map/1", "x": ' + "[" * 100000 + "]" * 100000 + "}",
            "invalid_utf8": json.dumps(doc).encode()[:-1] + b', "x": "\xff"}',
            "lone_surrogate": json.dumps(doc)[:-1] + ', "x": "\\udcff"}',
            "huge_number": json.dumps(doc)[:-1] + ', "x": 1e400}',
            "nan": json.dumps(doc)[:-1] + ', "x": NaN}',
        }
        for name, data in bad.items():
            p = self.work / "maps" / f"{name}.json"
            p.parent.mkdir(exist_ok=True)
            p.write_bytes(data if isinstance(data, bytes) else data.encode())
            self.add(trial(f"audit/map-{name}", [self.cuparity, "--driver", "sim", "audit",
                                                 "--map", f"maps/{name}.json"], {2},
                           names=f"maps/{name}.json"))
        # Maps that read, but bind what they must not: the audit fails (exit 1), naming the entry.
        wrong = {"free_as_alloc": rebind("cuMemFree", "cuMemAlloc_v2"),
                 "query_as_exit": rebind("cuStreamQuery", "exit"),
                 "init_as_puts": rebind("cuInit", "puts")}
        for name, f in wrong.items():
            p = self.work / "maps" / f"{name}.json"
            p.write_text(edited(f))
            self.add(trial(f"audit/wrong-{name}", [self.cuparity, "--driver", "sim", "audit",
                                                   "--map", f"maps/{name}.json"], {1},
                           names="no variant of"))
        ctrl = self.work / "maps" / "controls.json"
        ctrl.write_text(edited(lambda d: d["package"].__setitem__(
            "version", "1.0\x1b[31mRED\x07\nPASSED")))
        self.add(trial("audit/control-characters", [self.cuparity, "--driver", "sim", "audit",
                                                    "--map", "maps/controls.json"], {0}))
        for kind in ("fifo", "device", "directory", "dangling", "loop"):
            p = self.work / "maps" / f"is-{kind}.json"
            if self.special(kind, p):
                self.add(trial(f"audit/map-is-{kind}", [self.cuparity, "--driver", "sim", "audit",
                                                        "--map", f"maps/is-{kind}.json"], {2},
                               names=f"is-{kind}", timeout=20))
                self.map_axis(kind, f"maps/is-{kind}.json")
        odd = self.work / "maps" / "odd-\udcff.json".encode("utf-8", "surrogateescape").decode(
            "utf-8", "surrogateescape")
        shutil.copy(self.work / "map.json", odd)
        keep = self.work / "keep.json"
        keep.write_text('{"kept": true}\n')
        self.add(trial("audit/map-name-invalid-utf8",
                       [self.cuparity, "--driver", "sim", "audit", "--map",
                        str(odd.relative_to(self.work)), "--json", "keep.json"], {0},
                       may_write=["keep.json"]))

    def map_axis(self, kind: str, path: str) -> None:
        m = self.work / f"map-axis-{kind}.toml"
        m.write_text(SMALL_MATRIX.replace('NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]',
                                          f'CUPARITY_BINDING_MAP = ["{self.work / path}"]'))
        self.add(trial(f"run/map-axis-{kind}", [self.cuparity, "--driver", "sim", "run", m.name,
                                                "--out", f"o-axis-{kind}", "--no-latency"],
                       {2}, names=f"is-{kind}", may_write=[f"o-axis-{kind}"], timeout=60))

    def merges(self) -> None:
        c = self.cuparity
        self.add(trial("merge/out-empty", [c, "merge", "m.toml", "runA", "--out", ""], {2},
                       names="--out"))
        self.add(trial("merge/shard-missing", [c, "merge", "m.toml", "runA", "nowhere", "--out",
                                               "mg1"], {2}, names="nowhere"))
        (self.work / "plainfile").write_text("x\n")
        self.add(trial("merge/shard-is-file", [c, "merge", "m.toml", "plainfile", "--out", "mg2"],
                       {2}, names="plainfile"))
        (self.work / "emptydir").mkdir()
        self.add(trial("merge/shard-without-results", [c, "merge", "m.toml", "emptydir", "--out",
                                                       "mg3"], {2}, names="emptydir"))
        self.add(trial("merge/out-holds-another-run", [c, "merge", "m.toml", "runA", "--out",
                                                       "runB"], {2}, names="runB",
                       unchanged=["runB/summary.json", "runB/results.jsonl", "runB/junit.xml"]))
        self.add(trial("merge/out-is-a-shard", [c, "merge", "m.toml", "runA", "runB", "--out",
                                                "runB"], {2}, names="runB",
                       unchanged=["runB/results.jsonl"]))
        self.add(trial("merge/out-is-file", [c, "merge", "m.toml", "runA", "--out", "plainfile"],
                       {2}, names="plainfile"))
        lines = (self.work / "runA" / "results.jsonl").read_text().splitlines()
        bad_results = {
            "deep": "\n".join(lines[:1] + ['{"type": "case", "x": ' + "[" * 100000 + "]" * 100000
                                           + "}"]) + "\n",
            "garbage_line": "\n".join(lines[:2] + ["garbage"] + lines[2:]) + "\n",
            "unknown_type": "\n".join(lines + ['{"type": "surprise"}']) + "\n",
            "invalid_utf8": ("\n".join(lines) + "\n").encode() + b'{"type": "\xff"}\n',
            "other_missing_bool": "\n".join(lines + [
                '{"type": "latency_pairs", "round": 0, "cell": "x", "probe": "p", '
                '"other_missing": true}']) + "\n",
            "huge_number": "\n".join(lines + ['{"type": "resume", "started": "x", "pending": '
                                              '1e400}']) + "\n",
        }
        for name, data in bad_results.items():
            run = self.run_copy(f"r-{name}", results=data)
            (self.work / run / "summary.json").unlink()
            (self.work / run / "junit.xml").unlink()
            self.add(trial(f"merge/results-{name}", [c, "merge", "m.toml", run, "--out", run],
                           {2}, names=f"{run}/results.jsonl"))
        for kind in ("fifo", "device", "directory"):
            run = f"rk-{kind}"
            shutil.copytree(self.work / "runA", self.work / run, symlinks=True)
            for f in ("results.jsonl", "summary.json", "junit.xml"):
                (self.work / run / f).unlink()
            if self.special(kind, self.work / run / "results.jsonl"):
                self.add(trial(f"merge/results-is-{kind}", [c, "merge", "m.toml", run, "--out",
                                                            f"{run}-out"], {2}, names=run,
                               timeout=20))

    def commands(self) -> None:
        c = self.cuparity
        sim = str(self.bin / "libcuparity_simdriver.so")
        (self.work / "calfile").write_text("x\n")
        self.add(trial("calibrate/out-is-file", [c, "--driver", "sim", "calibrate", "--out",
                                                 "calfile", "--target", sim], {2},
                       names="calfile", unchanged=["calfile"]))
        self.add(trial("calibrate/probe-unknown", [c, "--driver", "sim", "calibrate", "--out",
                                                   "cal", "--probe", "no.such", "--target", sim],
                       {2}, names="no.such"))
        self.add(trial("probe/probe-unknown", [c, "--driver", "sim", "probe", "--probe",
                                               "no.such"], {2}, names="no.such"))
        self.add(trial("probe/events-fd-closed", [c, "--driver", "sim", "probe", "--probe",
                                                  "ctx.get_current", "--events-fd", "99"], {2},
                       names="--events-fd"))
        self.add(trial("cell/events-fd-closed", [c, "--driver", "sim", "cell", "--events-fd",
                                                 "99"], {2}, names="--events-fd"))

    def flags(self) -> None:
        c = self.cuparity
        for v in ("nan", "-1", "1e400", "abc", ""):
            self.add(trial(f"compare/threshold-{v or 'empty'}",
                           [c, "compare", "runA", "runB", "--threshold", v], {2},
                           names="--threshold"))
        self.add(trial("compare/run-empty-path", [c, "compare", "", "runB"], {2}))
        self.add(trial("audit/map-empty-path", [c, "--driver", "sim", "audit", "--map", ""], {2}))
        self.add(trial("merge/case-unknown", [c, "merge", "m.toml", "runA", "--out", "mg4",
                                              "--case", "no.such"], {2}, names="no.such"))
        self.add(trial("merge/cell-unknown", [c, "merge", "m.toml", "runA", "--out", "mg5",
                                              "--cell", "no-such-cell"], {2},
                       names="no-such-cell"))
        self.add(trial("probe/min-time-negative", [c, "--driver", "sim", "probe", "--min-time",
                                                   "-1"], {2}, names="--min-time"))
        self.add(trial("calibrate/delay-zero", [c, "--driver", "sim", "calibrate", "--out", "cal3",
                                                "--target", str(self.bin / "libcuparity_simdriver.so"),
                                                "--delays", "0"], {2}, names="--delays"))

    def history(self) -> None:
        r = self.report
        good = self.work / "store-good"
        subprocess.run([r, "history", "add", "runA", "--store", str(good)], cwd=self.work,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        damaged = {
            "runs_null": '{"schema": "cuparity.history/1", "runs": null}',
            "runs_object": '{"schema": "cuparity.history/1", "runs": {}}',
            "garbage": "not json",
            "deep": "[" * 100000 + "]" * 100000,
            "wrong_schema": '{"schema": "x", "runs": []}',
            "invalid_utf8": b'{"schema": "cuparity.history/1", "runs": [], "x": "\xff"}',
        }
        for name, data in damaged.items():
            store = self.work / f"store-{name}"
            store.mkdir()
            (store / "index.json").write_bytes(data if isinstance(data, bytes) else data.encode())
            for cmd in (["add", "runB"], ["list"]):
                self.add(trial(f"history-{cmd[0]}/index-{name}",
                               [r, "history", *cmd, "--store", store.name], {2},
                               names="index.json", unchanged=[f"{store.name}/index.json"]))
        for kind in ("fifo", "loop", "directory", "dangling"):
            store = self.work / f"store-is-{kind}"
            store.mkdir()
            if self.special(kind, store / "index.json"):
                for cmd in (["add", "runB"], ["list"]):
                    self.add(trial(f"history-{cmd[0]}/index-is-{kind}",
                                   [r, "history", *cmd, "--store", store.name], {2},
                                   names="index.json", timeout=20))

    # --- running ------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, tuple]:
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.work, followlinks=False):
            for n in dirnames + filenames:
                p = os.path.join(dirpath, n)
                st = os.lstat(p)
                out[os.path.relpath(p, self.work)] = (stat.S_IFMT(st.st_mode), st.st_size,
                                                       st.st_mtime_ns, st.st_ino)
        return out

    def allowed(self, rel: str, t: trial) -> bool:
        parts = Path(rel).parts
        if parts[-1] in (".cuparity.lock",) or "logs" in parts or "locks" in parts:
            return True
        return any(rel == w or rel.startswith(w.rstrip("/") + "/") for w in t.may_write)

    def check(self, t: trial) -> list[str]:
        before = self.snapshot()
        kept = {u: (self.work / u).read_bytes() for u in t.unchanged}
        env = t.env or {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            p = subprocess.run(t.argv, cwd=self.work, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=t.timeout)
        except subprocess.TimeoutExpired:
            return [f"no answer within {t.timeout:.0f} s (a hang)"]
        err = p.stderr.decode("utf-8", "replace")
        out = p.stdout.decode("utf-8", "replace")
        problems = []
        if p.returncode < 0:
            problems.append(f"killed by signal {-p.returncode}")
        elif p.returncode not in t.expect:
            problems.append(f"exit {p.returncode}, expected {sorted(t.expect)}: {err[-300:]!r}")
        if "Traceback (most recent call last)" in err:
            problems.append("a Python traceback: " + err[-300:])
        if p.returncode == 2 and t.names and t.names not in err:
            problems.append(f"stderr does not name {t.names!r}: {err[-300:]!r}")
        for stream, text in (("stdout", out), ("stderr", err)):
            if CONTROL.search(text):
                problems.append(f"a raw control character on {stream}: "
                                f"{CONTROL.search(text).group()!r}")
        after = self.snapshot()
        for rel in sorted(set(after) - set(before)) + [r for r in before if r in after and
                                                       after[r] != before[r]]:
            if not self.allowed(rel, t):
                problems.append(f"wrote {rel}")
        for rel in sorted(set(before) - set(after)):
            if not self.allowed(rel, t):
                problems.append(f"removed {rel}")
        for u, data in kept.items():
            if not (self.work / u).exists() or (self.work / u).read_bytes() != data:
                problems.append(f"changed {u}")
        return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--out", help="work folder (default: a temporary one, removed when all pass)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", help="run only trials whose name contains this")
    a = ap.parse_args()
    work = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="cuparity-surfaces-"))
    if a.out:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    c = corpus(a, work.resolve())
    c.base()
    for make in (c.compare_and_dashboard, c.output_targets, c.maps, c.merges, c.commands,
                 c.flags, c.history):
        make()
    failed = 0
    ran = 0
    for t in c.trials:
        if a.only and a.only not in t.name:
            continue
        ran += 1
        problems = c.check(t)
        if problems:
            failed += 1
            print(f"FAIL {t.name}: " + "; ".join(problems), flush=True)
    print(f"surfaces: {ran} hostile inputs, {failed} failed"
          + ("" if c.root else " (not root: no device-node trials)"))
    if not failed and not a.keep and not a.out:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
