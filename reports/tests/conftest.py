"""Shared paths and helpers for the reports tests."""

from __future__ import annotations

import gzip
import signal
import sys
from pathlib import Path
from typing import Iterator

import pytest

REPORTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPORTS))

FIXTURES = REPORTS / "tests" / "fixtures"
H200_RUN = REPORTS / "runs" / "2026-11-29-h200-e0713a5"


def inflated(path: Path) -> bytes:
    """A file's bytes, inflated where it is gzipped (reports/runs keeps its files so)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def summary_file(run_dir: Path) -> Path:
    """A run folder's summary.json, or its summary.json.gz (a committed run)."""
    plain = run_dir / "summary.json"
    return plain if plain.exists() else run_dir / "summary.json.gz"


def summary_of(path: Path) -> dict:
    """The summary of a run folder or summary file, gzipped or not, as JSON."""
    import json

    return json.loads(inflated(summary_file(path) if path.is_dir() else path))


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def cuparity_bin() -> Path:
    """The judge. The reports render its verdicts, so these tests need it built (scripts/test
    builds it before pytest); without it they fail rather than pass without the judge."""
    from cuparity_reports.compare import find_cuparity
    from cuparity_reports.reader import ReportInputError

    try:
        return find_cuparity()
    except ReportInputError as e:
        pytest.fail(f"{e} (build it with scripts/build, or set CUPARITY_BIN)")


class Blocked(Exception):
    """The alarm of `no_blocking` went off: something blocked (a read of a FIFO)."""


@pytest.fixture
def no_blocking() -> Iterator[None]:
    """An alarm for tests of FIFOs: a read that blocked ends as an exception in the test (which the
    command line reports as a bug, exit 70), not as a suite that hangs."""
    def ring(*_: object) -> None:
        raise Blocked("blocked for 20 s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
