"""drvcalls: three CUDA driver calls through ctypes, bound the way the cell's variable selects.

The example package of examples/benchmarks: a package whose own benchmarks cuparity times in
every cell of a matrix ([[benchmark]], docs/configuration.md#benchmarks). Like Numba's two
bindings, it binds the driver either by name (dlsym, NUMBA_CUDA_USE_NVIDIA_BINDING unset or "0")
or through cuGetProcAddress_v2 ("1"), so the two cells of the example matrix time two binding
paths to one driver. The driver is the file NUMBA_CUDA_DRIVER names (cuparity's cells set it to
the driver under test, e.g. the simulated one), else libcuda.so.1.
"""

from __future__ import annotations

import ctypes
import os

_P = ctypes.POINTER
# name -> (exported symbol, ABI version for cuGetProcAddress_v2, argument types)
_ENTRIES = {
    "cuInit": ("cuInit", 2000, (ctypes.c_uint,)),
    "cuDeviceGet": ("cuDeviceGet", 2000, (_P(ctypes.c_int), ctypes.c_int)),
    "cuDevicePrimaryCtxRetain": ("cuDevicePrimaryCtxRetain", 7000,
                                 (_P(ctypes.c_void_p), ctypes.c_int)),
    "cuCtxSetCurrent": ("cuCtxSetCurrent", 4000, (ctypes.c_void_p,)),
    "cuCtxGetCurrent": ("cuCtxGetCurrent", 4000, (_P(ctypes.c_void_p),)),
    "cuMemAlloc": ("cuMemAlloc_v2", 3020, (_P(ctypes.c_uint64), ctypes.c_size_t)),
    "cuMemFree": ("cuMemFree_v2", 3020, (ctypes.c_uint64,)),
    "cuDriverGetVersion": ("cuDriverGetVersion", 2020, (_P(ctypes.c_int),)),
}

BINDING = "proc" if os.environ.get("NUMBA_CUDA_USE_NVIDIA_BINDING") == "1" else "dlsym"
# What each benchmark reports as the binding it used (pytest-benchmark's extra_info, pyperf's
# metadata `cuparity_binding`), in cuparity's words: cuparity sets figures that say another
# binding than their cell's aside, so a fallback is never compared as the binding it did not use.
CUPARITY_BINDING = "nvidia" if BINDING == "proc" else "internal"


def _bind() -> dict:
    lib = ctypes.CDLL(os.environ.get("NUMBA_CUDA_DRIVER") or "libcuda.so.1")
    out = {}
    if BINDING == "dlsym":
        for name, (symbol, _version, argtypes) in _ENTRIES.items():
            fn = getattr(lib, symbol)
            fn.restype, fn.argtypes = ctypes.c_int, argtypes
            out[name] = fn
        return out
    get_proc = lib.cuGetProcAddress_v2
    get_proc.restype = ctypes.c_int
    get_proc.argtypes = (ctypes.c_char_p, _P(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                         _P(ctypes.c_int))
    for name, (_symbol, version, argtypes) in _ENTRIES.items():
        pointer, status = ctypes.c_void_p(), ctypes.c_int()
        if get_proc(name.encode(), ctypes.byref(pointer), version, 0, ctypes.byref(status)):
            raise ImportError(f"drvcalls: cuGetProcAddress_v2 has no {name}")
        out[name] = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(pointer.value)
    return out


_F = _bind()


def _check(name: str, result: int) -> None:
    if result != 0:
        raise RuntimeError(f"{name} returned {result}")


def setup() -> None:
    """cuInit and the primary context of device 0, current on this thread."""
    _check("cuInit", _F["cuInit"](0))
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    _check("cuDeviceGet", _F["cuDeviceGet"](ctypes.byref(dev), 0))
    _check("cuDevicePrimaryCtxRetain", _F["cuDevicePrimaryCtxRetain"](ctypes.byref(ctx), dev))
    _check("cuCtxSetCurrent", _F["cuCtxSetCurrent"](ctx))


_CTX = ctypes.c_void_p()
_VERSION = ctypes.c_int()
_PTR = ctypes.c_uint64()


def ctx_get_current() -> None:
    _check("cuCtxGetCurrent", _F["cuCtxGetCurrent"](ctypes.byref(_CTX)))


def driver_get_version() -> None:
    _check("cuDriverGetVersion", _F["cuDriverGetVersion"](ctypes.byref(_VERSION)))


def alloc_free_4k() -> None:
    _check("cuMemAlloc", _F["cuMemAlloc"](ctypes.byref(_PTR), 4096))
    _check("cuMemFree", _F["cuMemFree"](_PTR.value))
