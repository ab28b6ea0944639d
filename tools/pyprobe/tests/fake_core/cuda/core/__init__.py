"""A stand-in for cuda.core where it is not installed (CI), laid out as cuda.core 0.3 and 0.4 are:
the package holds its version, the API is cuda.core.experimental. It imports where the tests'
`cuda` does (PYPROBE_FAKE_CUDA=1), as the real one needs cuda.bindings."""

__version__ = "0.0+cuparity.fake"
