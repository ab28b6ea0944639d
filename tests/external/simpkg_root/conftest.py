"""The source tree's conftest of simpkg's packaged tests: the fixture they need.

pytest loads it only when started in this folder (with `--pyargs`, no test path is a folder
above it), which is what a [[suite]]'s `root` key does. numba-cuda's testing/conftest.py holds
`initialize_from_pytest_config` the same way.
"""

from __future__ import annotations

import pytest

import simpkg


@pytest.fixture
def simpkg_config(pytestconfig):
    """simpkg initialised, after checking that pytest was configured from this folder."""
    assert pytestconfig.rootpath.name == "simpkg_root", pytestconfig.rootpath
    simpkg.init()
    return simpkg
