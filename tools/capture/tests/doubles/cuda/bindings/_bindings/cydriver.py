"""Test double of cuda.bindings._bindings.cydriver: the resolved driver table and how it is made.

Like cuda.bindings 13, the table is keyed by the module's global names, "__" plus the versioned
function name ("__cuMemcpyHtoD_v2", "__cuCtxCreate_v4"), with the address the package holds as an
int, 0 where it found no function. The key stays the same when the per-thread default stream is
on: only the address changes, to the driver's _ptds/_ptsz variant. The PTDS variable is parsed at
import; the driver ($CUPARITY_FAKE_DRIVER) is bound at the first _inspect_function_pointers() call,
as the real module binds it at its first cuPythonInit().
"""

import ctypes
import os

_VARIABLE = "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"

# key -> (legacy symbol, per-thread symbol or None when the function has no per-thread variant)
_TABLE = {
    "__cuInit": ("cuInit", None),
    "__cuDriverGetVersion": ("cuDriverGetVersion", None),
    "__cuCtxCreate_v4": ("cuCtxCreate_v4", None),
    "__cuMemAlloc_v2": ("cuMemAlloc_v2", None),
    "__cuMemFree_v2": ("cuMemFree_v2", None),
    "__cuMemcpyHtoD_v2": ("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds"),
    "__cuMemcpyDtoH_v2": ("cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds"),
    "__cuMemcpyHtoDAsync_v2": ("cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz"),
    "__cuStreamSynchronize": ("cuStreamSynchronize", "cuStreamSynchronize_ptsz"),
    "__cuLaunchKernel": ("cuLaunchKernel", "cuLaunchKernel_ptsz"),
    "__cuEventRecord": ("cuEventRecord", "cuEventRecord_ptsz"),
    "__cuGraphCreate": ("cuGraphCreate", None),  # the simulated driver has none
}


def _per_thread_fixed():
    # cuda.bindings after NVIDIA/cuda-python#2076: bool(int(os.getenv(VAR, default=0))).
    # A value int() rejects ("yes", "") raises ValueError here, at import.
    return bool(int(os.getenv(_VARIABLE, default=0)))


def _per_thread_buggy():
    # cuda.bindings before it: the raw string as a truth value, so "0" enables PTDS.
    return bool(os.getenv(_VARIABLE, default=0))


_PER_THREAD = (
    _per_thread_buggy() if os.environ.get("CUPARITY_FAKE_PTDS_PARSE") == "buggy" else _per_thread_fixed()
)

_func_ptrs = None


def _bind():
    path = os.environ.get("CUPARITY_FAKE_DRIVER")
    if not path:
        raise RuntimeError("Failed to dlopen the driver: CUPARITY_FAKE_DRIVER is not set")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise RuntimeError(f"Failed to dlopen {path}: {e}") from None
    data = {}
    for key, (legacy, per_thread) in _TABLE.items():
        symbol = per_thread if (_PER_THREAD and per_thread) else legacy
        try:
            data[key] = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value or 0
        except AttributeError:
            data[key] = 0
    return data


def _inspect_function_pointers():
    global _func_ptrs
    if _func_ptrs is None:
        _func_ptrs = _bind()
    return _func_ptrs


def _inspect_function_pointer(name):
    return _inspect_function_pointers()[name]
