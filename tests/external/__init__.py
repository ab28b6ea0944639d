"""tests/external as a package, so its conftest.py is imported as external.conftest and never
shadows reports/tests/conftest.py (imported as plain `conftest`) in one pytest run."""
