"""An order-dependent failure: test_poisoned fails only in a process where test_poisons ran.

test_poisons always fails, and leaves a mark in the process (an attribute of the simpkg module);
test_poisoned fails when it finds that mark. Run together (the main pass, each batch re-run)
both fail; run alone, test_poisoned passes: `cuparity run` must call it flaky, order-dependent.
"""

from __future__ import annotations

import simpkg


def test_clean(driver):
    assert driver.device_count() >= 1


def test_poisons(driver):
    simpkg.poisoned_by_test_order = True
    assert driver.device_count() < 0, "this test always fails"


def test_poisoned(driver):
    assert not getattr(simpkg, "poisoned_by_test_order", False), "an earlier test poisoned me"
