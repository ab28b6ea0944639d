"""A module importing a test dependency that is not installed (numba-cuda's cffi, issue 49)."""

from __future__ import annotations

import cuparity_absent_test_dependency  # noqa: F401  (installed nowhere, on purpose)


def test_never_collected():
    pass
