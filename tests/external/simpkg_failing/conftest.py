"""simpkg from its source folder and its `driver` fixture, as simpkg_tests/conftest.py has them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import simpkg  # noqa: E402  (needs the path above)


@pytest.fixture
def driver():
    simpkg.init()
    return simpkg
