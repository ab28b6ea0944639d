"""Test double of numba (see tools/capture/tests/doubles/README.md)."""

__version__ = "0.60.0+cuparity.double"
