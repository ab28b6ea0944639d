"""A module importing a module of the package under test that does not exist: the suite's own
error, not a missing dependency."""

from __future__ import annotations

import simpkg.not_a_module  # noqa: F401  (simpkg has none)


def test_never_collected():
    pass
