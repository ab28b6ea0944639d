"""Setup of simpkg's suite: the package from its source folder, and a driver fixture.

tests/external is put on sys.path so `import simpkg` finds the package without installing it.
The import below is the suite's own: when simpkg cannot be imported (SIMPKG_BINDING=broken),
loading this conftest fails and pytest runs nothing at all, which is the case `cuparity run`
must report as one cell error, not as a failure of every test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import simpkg  # noqa: E402  (needs the path above)


@pytest.fixture
def driver():
    """simpkg with the driver initialised and device 0's primary context current."""
    simpkg.init()
    return simpkg
