"""Shared paths and helpers for the reports tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPORTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPORTS))

FIXTURES = REPORTS / "tests" / "fixtures"
H200_RUN = REPORTS / "runs" / "2026-11-29-h200-e0713a5"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
