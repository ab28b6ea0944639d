"""Command line: `dashboard`, `compare`, `faults`, `history` (add, list, rebuild, site) and `site`
subcommands (argparse).

Exit codes: 0 done (compare: no regression); 1 compare only: B regressed or the comparison is
incomplete; 2 bad input, naming the file (and the member): a garbled, unreadable or special file
(FIFO, device, directory) given as input, a summary `cuparity compare` would refuse, a damaged
history index, an empty path, or an output that cannot be written or is not a regular file or is
one of the inputs or lies behind a link in the history store; 3 a write the environment refused
(a full device, stdout included: `stdout: No space left on device`); 130 interrupted; 70 a bug in
these reports, with its traceback. Every line goes out through output.say (stdout) or
output.warn (stderr), and stdout is flushed and closed before the exit code is returned. Text from
an input is printed with its control characters escaped (formatting.terminal_text).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Sequence

from . import __version__
from .formatting import terminal_text as term
from .json_input import ReportInputError
from .output import (ReportEnvironmentError, check_target, discard_stdout, finish_stdout, say, warn,
                     write_atomically, write_stdout)
from .reader import Run, load_run

PROG = "cuparity-report"


def _run_files(run: Run) -> list[str]:
    """The file a run was read from, and the run's other file beside it (summary.json and
    results.jsonl): neither may be where the page goes, read or not."""
    folder = Path(run.source).parent
    return [run.source, str(folder / "summary.json"), str(folder / "results.jsonl")]


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from .dashboard import build
    from .history import index_path, load_store

    runs: list[Run] = [load_run(p) for p in args.runs]
    history = load_store(args.history) if args.history else []
    if history and not args.all_lines:
        # A line is one matrix on one GPU configuration: other matrices' counts and medians are not
        # this run's history (default's 1044 passes beside latency's 8 read as a regression).
        from .trends import line_of, run_keys

        line = line_of(run_keys(max(runs, key=lambda r: r.started)))
        kept = [r for r in history if line_of(run_keys(r)) == line]
        warn(f"{PROG}: history: {len(kept)} of {len(history)} stored runs, those of this run's line "
             f"({term(line)}; --all-lines for every one)")
        history = kept
    inputs = [f for r in [*runs, *history] for f in _run_files(r)]
    inputs += [str(index_path(args.history))] if args.history else []
    out = Path(args.output)
    check_target(out, inputs)  # before the work: the page goes to a regular file, never over an input
    page = build(runs, history, args.title)
    write_atomically(out, page, inputs)
    say(f"{PROG}: wrote {term(out)} ({len(page.encode('utf-8')) // 1024} KiB)")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import exit_code, read_compare, render_json, render_text, run_compare

    if args.from_file:
        if args.a or args.b:
            raise ReportInputError(args.from_file, "give either --from FILE or runs A and B, not both")
        data = read_compare(args.from_file)
    else:
        if not (args.a and args.b):
            raise ReportInputError("compare", "needs runs A and B (or --from FILE)")
        options: list[str] = []
        for flag, value in (("--threshold", args.threshold), ("--matrix", args.matrix)):
            if value is not None:
                options += [flag, str(value)]
        data = run_compare(args.a, args.b, options)
    # Both read every member they show; check_compare already rendered it once, so neither fails here.
    write_stdout(render_json(data) if args.json else render_text(data))
    return exit_code(data)


def _cmd_faults(args: argparse.Namespace) -> int:
    from .faults import read_faults, render_faults

    view = read_faults(args.faults)
    out = Path(args.output)
    check_target(out, [args.faults])
    page = render_faults(view, str(args.faults), args.title)
    write_atomically(out, page, [args.faults])
    say(f"{PROG}: wrote {term(out)}: {len(view['missed'])} of {len(view['trials'])} trials not caught")
    return 0


def _cmd_history_add(args: argparse.Namespace) -> int:
    from .history import RESTORED, add

    for run in args.runs:
        key, what = add(run, args.store)
        why = " (its stored copy was missing or altered; copied again from the run given)" if what == RESTORED else ""
        say(f"{PROG}: {what}: {term(Path(args.store) / key)}{why}")
    return 0


def _cmd_history_list(args: argparse.Namespace) -> int:
    from .history import render_list

    if not Path(args.store).is_dir():
        raise ReportInputError(args.store, "no such history store")
    write_stdout(render_list(args.store, {k: getattr(args, k) for k in ("matrix", "gpu", "driver", "host")
                                          if getattr(args, k)}))
    return 0


def _cmd_history_rebuild(args: argparse.Namespace) -> int:
    from .history import index_path, rebuild

    done = rebuild(args.store)
    for path, why in done.left_out:
        warn(f"{PROG}: left out {term(path)}: {term(why)}")
    if done.aside is not None:
        say(f"{PROG}: kept the old index as {term(done.aside)}")
    left = f" ({len(done.left_out)} files left out, named above)" if done.left_out else ""
    say(f"{PROG}: rebuilt {term(index_path(args.store))}: {done.runs} run{'' if done.runs == 1 else 's'}{left}")
    return 0


def _cmd_history_site(args: argparse.Namespace) -> int:
    from .history_site import write_site

    site = write_site(args.store, args.output, args.title)
    for why in site.compare_errors:
        warn(f"{PROG}: not judged: {term(why)}")
    say(f"{PROG}: wrote {term(Path(args.output) / 'index.html')}: {site.runs} runs on {site.lines} lines, "
          f"{site.change_points} change points, {site.regressions} rows on regressions.html")
    return 0


def _cmd_site(args: argparse.Namespace) -> int:
    import time

    from .committed_site import build_site, default_output, default_runs_dir

    runs_dir = args.runs_dir or default_runs_dir()
    output = args.output or default_output()
    if runs_dir is None or output is None:
        raise ReportInputError("site", "give --runs-dir and --output (the package is not running from the "
                               "repository, so it has no reports/runs or build/ to default to)")
    began = time.monotonic()
    built = build_site(runs_dir, output, args.only or (), args.title)
    for why in built.compare_errors:
        warn(f"{PROG}: not judged: {term(why)}")
    say(f"{PROG}: wrote {term(Path(output) / 'index.html')}: {built.summaries} summaries from {built.folders} "
          f"folders of {term(runs_dir)}, {built.runs} runs on {built.lines} lines, {built.change_points} change "
          f"points, {built.regressions} rows on regressions.html; a dashboard per run in runs/, its compare in "
          f"compare/, the store in store/ ({time.monotonic() - began:.0f} s)")
    return 0


class Parser(argparse.ArgumentParser):
    """argparse, but its help, version and usage text are written as every other line is: a
    failed write to stdout is a ReportEnvironmentError (argparse itself drops it and exits 0)."""

    def _print_message(self, message: str, file=None) -> None:  # noqa: ANN001 - argparse's signature
        if not message:
            return
        if file is None or file is sys.stdout:
            write_stdout(message)
        else:
            warn(message.rstrip("\n"))


def path_arg(text: str) -> str:
    """A path option or argument: the empty string names no file (Path('') is the current folder,
    where a store or page would silently go), so it is bad input, as `cuparity merge --out ''` is."""
    if text == "":
        raise argparse.ArgumentTypeError("an empty path; name the file or folder")
    return text


def parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description="Reports over cuparity runs: an HTML dashboard, "
                                "run-vs-run comparison for CI, and a history store.",
                                epilog="Inputs are checked with the C++ reader's rules: a summary `cuparity "
                                "compare` refuses (NaN, an unknown outcome or verdict, a lone surrogate, ...), "
                                "a FIFO, device or directory, or a file over its size limit (256 MiB for a run's "
                                "files, 64 MiB for others) is bad input. An output must be a regular file or new, "
                                "never a link, device, FIFO or one of the inputs; it is written whole or not at "
                                "all. Exit codes: 0 done, 1 compare: regressed or incomplete, 2 bad input (the "
                                "message names the file; an empty path too), 3 a write the environment refused "
                                "(a full device, stdout included), 70 a bug in the reports.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("dashboard", help="write one self-contained HTML dashboard",
                       description="The newest run is shown in detail; every run given (and --history) "
                                   "forms the history section.")
    d.add_argument("runs", nargs="+", metavar="RUN_DIR_OR_SUMMARY", type=path_arg)
    d.add_argument("--output", "-o", required=True, metavar="FILE.html", type=path_arg,
                   help="the page to write: a new file or a regular one to replace (not a link, device, FIFO "
                        "or one of the inputs)")
    d.add_argument("--history", metavar="DIR", type=path_arg, help="a history store (see `history add`): its runs of the "
                   "same matrix on the same GPU model and count as the newest run given")
    d.add_argument("--all-lines", action="store_true", help="with --history: every stored run, whatever its "
                   "matrix and GPU")
    d.add_argument("--title", help="page title")
    d.set_defaults(func=_cmd_dashboard)

    c = sub.add_parser("compare", help="run B against run A, as `cuparity compare` judges it (exit 1 if B "
                                       "regressed or the comparison is incomplete)",
                       description="Runs `cuparity compare A B --json -` (the binary: $CUPARITY_BIN, build/bin/cuparity, "
                                   "or PATH) and renders its verdicts, or renders a compare JSON file (--from). Exit "
                                   "codes: 0 no regression, 1 B regressed (an outcome regression, a new divergence or "
                                   "a latency series 'slower') or the comparison is incomplete (a run is "
                                   "incomplete, B lacks pairs of A), 2 bad input or no binary.")
    c.add_argument("a", metavar="A", nargs="?", type=path_arg, help="run directory or summary.json")
    c.add_argument("b", metavar="B", nargs="?", type=path_arg, help="run directory or summary.json")
    c.add_argument("--from", dest="from_file", metavar="FILE", type=path_arg, help="a cuparity.compare/1 file to render")
    c.add_argument("--json", action="store_true", help="print the judge's JSON")
    c.add_argument("--threshold", type=float, help="relative latency threshold (passed to cuparity compare)")
    c.add_argument("--matrix", type=path_arg, help="judge latency by this matrix's [latency] settings (passed to cuparity compare)")
    c.set_defaults(func=_cmd_compare)

    f = sub.add_parser("faults", help="write the fault coverage page of `cuparity faults` (faults.json)")
    f.add_argument("faults", metavar="FAULTS_JSON", type=path_arg)
    f.add_argument("--output", "-o", required=True, metavar="FILE.html", type=path_arg,
                   help="the page to write: a new file or a regular one to replace (as dashboard --output)")
    f.add_argument("--title", help="page title")
    f.set_defaults(func=_cmd_faults)

    h = sub.add_parser("history", help="a store of run summaries over time",
                       description="A folder of run summaries (one file per run, byte for byte) and its "
                                   "index.json. A damaged index (a link, a FIFO, not JSON, `runs` not a list) "
                                   "is refused by every command, never rewritten: `history rebuild` makes a new "
                                   "one.")
    hs = h.add_subparsers(dest="history_command", required=True)
    ha = hs.add_parser("add", help="copy runs' summary.json into the store",
                       description="Copies each run's summary.json into the store and indexes it. A run "
                                   "already indexed is not stored twice: its stored copy is checked against the "
                                   "digest the index records, and when that copy is missing or altered it is "
                                   "restored from the run given (the same bytes), so no stored run is lost.")
    ha.add_argument("runs", nargs="+", metavar="RUN_DIR", type=path_arg)
    ha.add_argument("--store", required=True, metavar="DIR", type=path_arg)
    ha.set_defaults(func=_cmd_history_add)
    hl = hs.add_parser("list", help="list the stored runs, oldest first")
    hl.add_argument("--store", required=True, metavar="DIR", type=path_arg)
    hl.add_argument("--matrix", help="only runs of this matrix (its name)")
    hl.add_argument("--gpu", help="only runs whose GPU name contains this text")
    hl.add_argument("--driver", help="only runs of this driver release (or CUDA API version, older runs)")
    hl.add_argument("--host", help="only runs of this host name")
    hl.set_defaults(func=_cmd_history_list)
    hr = hs.add_parser("rebuild", help="make a new index.json from the stored runs",
                       description="Indexes every run file in the store (each read as `add` reads a run) and "
                                   "writes a new index.json. The old index, damaged or not, is kept aside as "
                                   "index.json.damaged-<UTC time> (index.json.previous-<UTC time> when it was "
                                   "sound), never deleted. A file that cannot be indexed (garbled, a link, a copy "
                                   "of another run) is left out and named on stderr, never changed; the exit code "
                                   "is 0 once the index is written.")
    hr.add_argument("--store", required=True, metavar="DIR", type=path_arg)
    hr.set_defaults(func=_cmd_history_rebuild)
    hp = hs.add_parser("site", help="write the history site: trends, regressions, each run and its compare",
                       description="Writes OUTPUT/index.html (interactive trends, self-contained: plotly.js "
                                   "inline), OUTPUT/regressions.html (change points, failed runs and run-vs-run "
                                   "regressions, newest first), OUTPUT/runs/<run>.html (each run's dashboard) and "
                                   "OUTPUT/compare/<run>.html (`cuparity compare` of each run against the previous "
                                   "run of its line: the binary must be found as for `compare`). A pair the judge "
                                   "refuses is named on stderr and its page says why; the site is still written.")
    hp.add_argument("--store", required=True, metavar="DIR", type=path_arg)
    hp.add_argument("--output", "-o", required=True, metavar="DIR", type=path_arg, help="the site's folder (made if missing)")
    hp.add_argument("--title", help="page title")
    hp.set_defaults(func=_cmd_history_site)

    st = sub.add_parser("site", help="build the history site and a dashboard per run from the committed runs",
                        description="Adds every summary of the run folders (RUNS_DIR/<folder>/*summary*.json[.gz]) "
                                    "to a fresh history store, OUTPUT/store, and writes its site into OUTPUT: "
                                    "index.html, regressions.html, runs/<run>.html (each run's dashboard) and "
                                    "compare/<run>.html (`cuparity compare` against the previous run of its line; "
                                    "the binary is found as for `compare`). An earlier site in OUTPUT is replaced; "
                                    "a folder holding anything else is refused.")
    st.add_argument("--runs-dir", metavar="DIR", type=path_arg, help="the run folders (default: the repository's reports/runs)")
    st.add_argument("--output", "-o", metavar="DIR", type=path_arg, help="the site's folder (default: $CUPARITY_BUILD_DIR/site, "
                    "else the repository's build/site)")
    st.add_argument("--only", action="append", metavar="GLOB", help="only the folders whose name matches "
                    "(repeatable; e.g. '2026-12-03-*')")
    st.add_argument("--title", help="page title")
    st.set_defaults(func=_cmd_site)
    return p


# Exit codes: 0 done (compare: no regression), 1 compare: B regressed or incomplete, and nothing else; 2 bad input
# (a garbled or unreadable file, a place that cannot be written: the message names it); 3 a write the
# environment refused (a full device, stdout included); 130 interrupted; 70 (EX_SOFTWARE) a bug in these
# reports, with its traceback, never mistaken for 1.
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a usage error (2), its text written
        return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    return int(args.func(args))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (`argv`, else this process's, whose stdout is then closed at the end)."""
    try:
        code = _run(argv)
        finish_stdout(close=argv is None)  # the last lines may still be buffered: a failure is exit 3 too
        return code
    except ReportInputError as e:
        warn(f"{PROG}: error: {term(e)}")
        return EXIT_BAD_INPUT
    except ReportEnvironmentError as e:
        if e.where == "stdout":
            discard_stdout()
        warn(f"{PROG}: error: {term(e)}")
        return EXIT_ENVIRONMENT
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - a bug must not exit 1, which means "regressed"
        traceback.print_exc()
        warn(f"{PROG}: internal error (a bug in cuparity_reports, not a verdict); exit {EXIT_INTERNAL}")
        return EXIT_INTERNAL
