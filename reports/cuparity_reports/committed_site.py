"""`site`: the history site of the committed runs, built in one command (never committed).

Every run summary in the run folders (`reports/runs/<folder>/*summary*.json*`, gzipped or not) is
added to a fresh history store (`history add`), and the store's site is written (`history site`):
index.html, regressions.html, each run's dashboard (runs/) and its `cuparity compare` against
the previous run of its line (compare/). The store is kept beside the pages (OUTPUT/store), so
`dashboard --history OUTPUT/store` works on it. The site is generated: it lives in an ignored
folder (build/site by default), never in the tree.

A rebuild replaces an earlier site in the same folder (the marker file `.cuparity-site` says the
folder is one); a folder that holds anything else is refused, never emptied.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .json_input import ReportInputError
from .output import write_atomically, write_failure

MARKER = ".cuparity-site"
REPO = Path(__file__).resolve().parents[2]  # the repository, when the package runs from its source tree


@dataclass
class Built:
    """What `build_site` did, for the command's message."""

    summaries: int
    folders: int
    runs: int
    lines: int
    change_points: int
    regressions: int
    compare_errors: list[str]


def default_runs_dir() -> Path | None:
    """reports/runs of the repository the package runs from; None for an installed package."""
    runs = REPO / "reports" / "runs"
    return runs if runs.is_dir() else None


def default_output() -> Path | None:
    """<build>/site: $CUPARITY_BUILD_DIR, else the repository's build/ (ignored by git)."""
    build = os.environ.get("CUPARITY_BUILD_DIR")
    if build:
        return Path(build) / "site"
    return REPO / "build" / "site" if default_runs_dir() is not None else None


def committed_summaries(runs_dir: str | os.PathLike[str], only: Sequence[str] = ()) -> list[Path]:
    """The summaries of the run folders, by folder then name: each `*summary*.json*` file of a
    folder (a symbolic link names another summary of its folder, so it is skipped). With `only`,
    the folders whose name matches one of its globs."""
    root = Path(runs_dir)
    if not root.is_dir():
        raise ReportInputError(root, "no such folder of runs")
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if only and not any(fnmatch.fnmatchcase(folder.name, g) for g in only):
            continue
        found += sorted(p for p in folder.glob("*summary*.json*")
                        if p.name.endswith((".json", ".json.gz")) and p.is_file() and not p.is_symlink())
    if not found:
        which = f" of the folders matching {', '.join(only)}" if only else ""
        raise ReportInputError(root, f"no run summary (*summary*.json[.gz]) in any folder{which}")
    return found


def _fresh_output(out: Path) -> None:
    """An empty folder at `out`: new, or an earlier site (its marker) removed first."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ReportInputError(out, "not a directory (--output names the site's folder)")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise ReportInputError(out, f"holds files that are not an earlier site (no {MARKER}): "
                                        "name a new or empty folder")
        try:
            shutil.rmtree(out)
        except OSError as e:
            raise write_failure(e.filename or out, e, "cannot remove the earlier site") from None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_failure(out, e, "cannot create the folder") from None


def build_site(runs_dir: str | os.PathLike[str], output: str | os.PathLike[str], only: Sequence[str] = (),
               title: str | None = None) -> Built:
    """Adds every committed summary to OUTPUT/store and writes the store's site into OUTPUT."""
    from .history import add
    from .history_site import write_site

    summaries = committed_summaries(runs_dir, only)
    out = Path(output)
    _fresh_output(out)
    write_atomically(out / MARKER, "written by `cuparity-report site`; the next build replaces this folder\n")
    store = out / "store"
    for summary in summaries:
        add(summary, store)
    site = write_site(store, out, title or "cuparity history: committed runs")
    return Built(summaries=len(summaries), folders=len({p.parent for p in summaries}), runs=site.runs,
                 lines=site.lines, change_points=site.change_points, regressions=site.regressions,
                 compare_errors=site.compare_errors)
