"""A fake cuda.bindings (tools/capture/tests/table_double/README.md)."""

__version__ = "13.9.0"
