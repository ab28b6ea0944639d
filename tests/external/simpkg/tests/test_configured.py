"""Tests needing the source tree's fixture `simpkg_config` (tests/external/simpkg_root/conftest.py).

Run from a folder without that conftest, every one errors at setup with one identical message,
"fixture 'simpkg_config' not found": numba-cuda's wheel case (issue 49), which `cuparity run`
must report as one environment failure within seconds, not re-run test by test.
"""

from __future__ import annotations

import pytest


def test_configured_device(simpkg_config):
    assert simpkg_config.device_count() >= 1


# Enough tests that re-running each alone would cost a minute: the environment rule must not.
@pytest.mark.parametrize("size", range(1, 41))
def test_fill_size(simpkg_config, size):
    with simpkg_config.DeviceBuffer(size) as buf:
        buf.fill(0x3C)
        assert buf.read() == bytes([0x3C]) * size
