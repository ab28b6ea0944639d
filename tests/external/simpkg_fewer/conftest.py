"""simpkg's `driver` fixture; with SIMPKG_FEWER=1 the second module is not collected at all.

A suite that collects fewer tests in one cell than in another (a module skipped at collection by
an environment it reads, a plugin missing there) must fail naming both counts, never pass as
equivalent over the tests that happened to be collected (issue 49).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import simpkg  # noqa: E402  (needs the path above)

collect_ignore = ["test_sometimes.py"] if os.environ.get("SIMPKG_FEWER") == "1" else []


@pytest.fixture
def driver():
    simpkg.init()
    return simpkg
