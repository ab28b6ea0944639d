"""Collected only where SIMPKG_FEWER is not 1 (conftest.py's collect_ignore)."""

from __future__ import annotations


def test_device_again(driver):
    assert driver.device_count() >= 1


def test_version_again(driver):
    assert driver.driver_version() >= 2000
