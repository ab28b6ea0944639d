"""Collected in every cell."""

from __future__ import annotations


def test_device(driver):
    assert driver.device_count() >= 1


def test_version(driver):
    assert driver.driver_version() >= 2000
