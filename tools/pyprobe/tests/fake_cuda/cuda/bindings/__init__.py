"""A stand-in for cuda.bindings where it is not installed (CI): its driver module only."""

__version__ = "0.0+cuparity.fake"
