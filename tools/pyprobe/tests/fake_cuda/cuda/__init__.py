"""The tests' stand-in `cuda` package: importable only where PYPROBE_FAKE_CUDA=1, so a matrix axis
gives some cells cuda.bindings and leaves others without (where Numba falls back to ctypes)."""

import os

if os.environ.get("PYPROBE_FAKE_CUDA") != "1":
    raise ImportError("no module named 'cuda' here (the tests' stand-in is off: PYPROBE_FAKE_CUDA)")
