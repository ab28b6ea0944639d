"""A stand-in for Numba where Numba is not installed (CI): only what cuparity_pyprobe.py reads.

numba.core.config decides the binding as Numba 0.68 does (NUMBA_CUDA_USE_NVIDIA_BINDING, and the
fall-back to ctypes, with a warning, when the `cuda` package does not import;
docs/driver-facts.md#numba-selection), and numba.cuda.cudadrv.driver has a ctypes Driver facade
that checks every result. Written for cuparity's tests; it is no copy of Numba.
"""

__version__ = "0.0+cuparity.fake"

from numba.core import config  # noqa: E402,F401  (Numba reads its config on import)
