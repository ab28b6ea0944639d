"""Test double of numba.cuda.cudadrv.driver: the ctypes Driver singleton `driver`.

As in numba's own binding, the library is loaded when the module is imported (a failure is kept
in driver.initialization_error, and driver.lib is then missing), and _find_api(name) returns the
first of the name's variants the library exports, or a Python stand-in that raises when called.
The variants are numba's: `<name>_v2`, then `<name>`, with `_v2_ptds`, `_v2_ptsz`, `_ptds`, `_ptsz`
first under NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM; cuCtxGetDevice and cuCtxSynchronize are pinned to
the bare name in both modes (as cuparity's suffix_rules pin them: CUDA 13's `_v2` functions of those
names have other signatures, docs/driver-facts.md#cuda-13-v2-functions).
cuCtxCreate probes like any other name, so it lands on cuCtxCreate_v2.
"""

import ctypes
import os
import warnings

from numba.cuda.cudadrv import drvapi  # reads the entry table (numba's driver imports drvapi too)

# Called by their bare name only, whatever the per-thread setting.
_PINNED = drvapi._ENTRIES.PINNED


class CudaSupportError(RuntimeError):
    pass


class CudaDriverError(Exception):
    pass


def _per_thread_default_stream():
    # numba's config: _readenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", int, 0); a value int()
    # rejects warns and keeps the default.
    raw = os.environ.get("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM")
    if raw is None:
        return 0
    try:
        return int(raw)
    except ValueError:
        warnings.warn(
            f"Environment variable 'NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM' is defined but its "
            f"associated value '{raw}' could not be parsed.",
            RuntimeWarning,
        )
        return 0


CUDA_PER_THREAD_DEFAULT_STREAM = _per_thread_default_stream()


def _find_driver():
    path = os.environ.get("NUMBA_CUDA_DRIVER") or os.environ.get("CUPARITY_FAKE_DRIVER")
    if not path:
        raise CudaSupportError("CUDA driver library cannot be found (no NUMBA_CUDA_DRIVER)")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise CudaSupportError(f"Driver not found: {path}: {e}") from None


class Driver:
    def __init__(self):
        self.is_initialized = False
        self.initialization_error = None
        try:
            self.lib = _find_driver()
        except CudaSupportError as e:
            self.is_initialized = True
            self.initialization_error = str(e)

    def _find_api(self, fname):
        if fname in _PINNED:
            variants = ("",)
        elif CUDA_PER_THREAD_DEFAULT_STREAM:
            variants = ("_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz", "_v2", "")
        else:
            variants = ("_v2", "")
        for variant in variants:
            try:
                return getattr(self.lib, f"{fname}{variant}")
            except AttributeError:
                pass

        def absent_function(*args, **kws):
            raise CudaDriverError(f"Driver missing function: {fname}")

        setattr(self, fname, absent_function)
        return absent_function


driver = Driver()
