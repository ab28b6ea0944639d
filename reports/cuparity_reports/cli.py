"""Command line: `dashboard`, `compare` and `history` subcommands (argparse)."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Sequence

from . import __version__
from .formatting import terminal_text as term
from .json_input import ReportInputError
from .output import write_atomically
from .reader import Run, load_run

PROG = "cuparity-report"


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from .dashboard import build
    from .history import load_store

    runs: list[Run] = [load_run(p) for p in args.runs]
    history = load_store(args.history) if args.history else []
    page = build(runs, history, args.title)
    out = Path(args.output)
    if out.is_dir():  # before the work: a folder is no place for the page
        raise ReportInputError(out, "is a directory (--output names the HTML file to write)")
    write_atomically(out, page)
    print(f"{PROG}: wrote {term(out)} ({len(page.encode('utf-8')) // 1024} KiB)")
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
    sys.stdout.write(render_json(data) if args.json else render_text(data))
    return exit_code(data)


def _cmd_faults(args: argparse.Namespace) -> int:
    from .faults import read_faults, render_faults

    view = read_faults(args.faults)
    page = render_faults(view, str(args.faults), args.title)
    out = Path(args.output)
    if out.is_dir():
        raise ReportInputError(out, "is a directory (--output names the HTML file to write)")
    write_atomically(out, page)
    print(f"{PROG}: wrote {term(out)}: {len(view['missed'])} of {len(view['trials'])} trials not caught")
    return 0


def _cmd_history_add(args: argparse.Namespace) -> int:
    from .history import add

    for run in args.runs:
        key, new = add(run, args.store)
        print(f"{PROG}: {'added' if new else 'already stored:'} {term(Path(args.store) / key)}")
    return 0


def _cmd_history_list(args: argparse.Namespace) -> int:
    from .history import render_list

    if not Path(args.store).is_dir():
        raise ReportInputError(args.store, "no such history store")
    sys.stdout.write(render_list(args.store))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Reports over cuparity runs: an HTML dashboard, "
                                "run-vs-run comparison for CI, and a history store.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("dashboard", help="write one self-contained HTML dashboard",
                       description="The newest run is shown in detail; every run given (and --history) "
                                   "forms the history section.")
    d.add_argument("runs", nargs="+", metavar="RUN_DIR_OR_SUMMARY")
    d.add_argument("--output", "-o", required=True, metavar="FILE.html")
    d.add_argument("--history", metavar="DIR", help="a history store (see `history add`)")
    d.add_argument("--title", help="page title")
    d.set_defaults(func=_cmd_dashboard)

    c = sub.add_parser("compare", help="run B against run A, as `cuparity compare` judges it (exit 1 if B "
                                       "regressed or the comparison is incomplete)",
                       description="Runs `cuparity compare A B --json -` (the binary: $CUPARITY_BIN, build/bin/cuparity, "
                                   "or PATH) and renders its verdicts, or renders a compare JSON file (--from). Exit "
                                   "codes: 0 no regression, 1 B regressed (an outcome regression, a new divergence or "
                                   "a latency series 'slower') or the comparison is incomplete (a run is "
                                   "incomplete, B lacks pairs of A), 2 bad input or no binary.")
    c.add_argument("a", metavar="A", nargs="?", help="run directory or summary.json")
    c.add_argument("b", metavar="B", nargs="?", help="run directory or summary.json")
    c.add_argument("--from", dest="from_file", metavar="FILE", help="a cuparity.compare/1 file to render")
    c.add_argument("--json", action="store_true", help="print the judge's JSON")
    c.add_argument("--threshold", type=float, help="relative latency threshold (passed to cuparity compare)")
    c.add_argument("--matrix", help="judge latency by this matrix's [latency] settings (passed to cuparity compare)")
    c.set_defaults(func=_cmd_compare)

    f = sub.add_parser("faults", help="write the fault coverage page of `cuparity faults` (faults.json)")
    f.add_argument("faults", metavar="FAULTS_JSON")
    f.add_argument("--output", "-o", required=True, metavar="FILE.html")
    f.add_argument("--title", help="page title")
    f.set_defaults(func=_cmd_faults)

    h = sub.add_parser("history", help="a store of run summaries over time")
    hs = h.add_subparsers(dest="history_command", required=True)
    ha = hs.add_parser("add", help="copy runs' summary.json into the store")
    ha.add_argument("runs", nargs="+", metavar="RUN_DIR")
    ha.add_argument("--store", required=True, metavar="DIR")
    ha.set_defaults(func=_cmd_history_add)
    hl = hs.add_parser("list", help="list the stored runs, oldest first")
    hl.add_argument("--store", required=True, metavar="DIR")
    hl.set_defaults(func=_cmd_history_list)
    return p


# Exit codes: 0 done (compare: no regression), 1 compare: B regressed or incomplete, and nothing else; 2 bad input
# (a garbled or unreadable file, a place that cannot be written: the message names it); 130
# interrupted; 70 (EX_SOFTWARE) a bug in these reports, with its traceback, never mistaken for 1.
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ReportInputError as e:
        print(f"{PROG}: error: {term(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - a bug must not exit 1, which means "regressed"
        traceback.print_exc()
        print(f"{PROG}: internal error (a bug in cuparity_reports, not a verdict); exit {EXIT_INTERNAL}",
              file=sys.stderr)
        return EXIT_INTERNAL
