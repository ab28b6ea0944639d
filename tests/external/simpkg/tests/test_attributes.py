"""Tests that need no fixture: they pass wherever simpkg imports, with or without the source tree.

Beside test_configured.py's 41 tests that all error alike without the source tree's conftest,
they make the wheel case what numba-cuda 0.30.4's is (a few passes beside many identical setup
errors), which the environment rule must still name as one broken environment.
"""

from __future__ import annotations

import simpkg


def test_binding_is_named():
    assert simpkg.BINDING


def test_module_has_a_file():
    assert simpkg.__file__.endswith("__init__.py")
