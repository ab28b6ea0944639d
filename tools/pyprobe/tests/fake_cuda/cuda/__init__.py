"""The tests' stand-in `cuda` package: importable only where PYPROBE_FAKE_CUDA=1, so a matrix axis
gives some cells cuda.bindings and leaves others without (where Numba falls back to ctypes).

The real `cuda` is a namespace package that cuda-bindings and cuda-core each add to; this one is a
regular package (it must be able to refuse to import), so it takes in the other `cuda` folders on
sys.path itself: fake_core's cuda/core imports where this package does, as cuda.core needs
cuda.bindings."""

import os
import pkgutil

if os.environ.get("PYPROBE_FAKE_CUDA") != "1":
    raise ImportError("no module named 'cuda' here (the tests' stand-in is off: PYPROBE_FAKE_CUDA)")

__path__ = pkgutil.extend_path(__path__, __name__)
