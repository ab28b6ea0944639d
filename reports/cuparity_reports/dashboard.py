"""Builds the self-contained HTML dashboard (grid, details, changes, latency, time breakdown, history) for one or more runs."""

from __future__ import annotations

import datetime as _dt
from typing import Iterable, Sequence

from . import __version__
from .reader import Run
from .templating import render, stylesheet
from .views.breakdown import breakdown_view
from .views.cells import cells_view
from .views.changes import changes_view
from .views.coverage import coverage_view
from .views.details import details_view
from .views.grid import grid_view
from .views.header import header_view
from .views.history import history_view
from .views.latency import latency_view
from .views.run_index import RunIndex


def banner_subject(run: Run, history_runs: Sequence[Run]) -> str | None:
    """Who ran on the simulated driver ('this run', 'some runs in the history'), or None."""
    if run.simulated:
        return "this run"
    if any(r.simulated for r in history_runs):
        return "some runs in the history"
    return None


def render_page(run: Run, history_runs: Sequence[Run] = (), title: str | None = None,
                generated: str | None = None) -> str:
    """One run in detail, plus history over `history_runs` (shown from two runs on). `generated`
    (the footer's time) is now unless given: the history site gives the store's, so that a page
    whose run did not change is written again byte for byte."""
    ix = RunIndex(run)
    page_title = title or f"cuparity {ix.s.obj('matrix').string('name')} {run.started}"
    return render(
        "dashboard.html",
        css=stylesheet(),
        page_title=("[SIMULATED] " if run.simulated else "") + page_title,
        banner=banner_subject(run, history_runs),
        header=header_view(ix, title),
        coverage=coverage_view(ix),
        grid=grid_view(ix),
        cells=cells_view(ix),
        details=details_view(ix),
        changes=changes_view(ix),
        latency=latency_view(ix, run),
        breakdown=breakdown_view(ix),
        history=history_view(history_runs),
        generated=generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        version=__version__,
        source=run.source,
    )


def check_renderable(run: Run) -> None:
    """Reads every member of `run` that the dashboard shows, without drawing its figures: a summary the
    page could not show is refused now (ReportInputError naming the file and the member), as
    `history add` does before it stores one."""
    ix = RunIndex(run)
    header_view(ix, None)
    coverage_view(ix)
    grid_view(ix)
    cells_view(ix)
    details_view(ix)
    changes_view(ix)
    latency_view(ix, run, draw=False)
    breakdown_view(ix)
    history_view([run, run], draw=False)


def _identity(run: Run) -> str:
    """A run is the same run when it is the same file: a run given on the command line that is also
    in the history store (a byte copy) is shown once, while two runs started in the same second on
    the same revision both stay."""
    return run.digest or run.source


def build(runs: Sequence[Run], history: Iterable[Run] = (), title: str | None = None,
          generated: str | None = None) -> str:
    """The dashboard: the newest of `runs` in detail; all runs plus `history` in the history section."""
    if not runs:
        raise ValueError("no runs")
    ordered = sorted(runs, key=lambda r: r.started)
    seen: dict[str, Run] = {}
    for r in list(history) + ordered:
        seen[_identity(r)] = r
    timeline = sorted(seen.values(), key=lambda r: r.started)
    return render_page(ordered[-1], timeline, title, generated)
