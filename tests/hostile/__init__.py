"""tests/hostile as a package: its conftest is then `hostile.conftest`, not a second top-level
`conftest` beside reports/tests' (which its tests import names from)."""
