"""cupy.cuda.runtime's stand-in: CuPy's runtime calls go through libcudart, which takes its driver
entry points from cuGetProcAddress; here each runtime function calls the driver function cudart
reaches for it, through that pointer. Errors raise CUDARuntimeError; cudaEventQuery's not-ready
is returned, not raised, as CuPy's eventQuery does."""

import ctypes
import os

_P = ctypes.c_void_p
_SIZE = ctypes.c_size_t
memcpyHostToDevice = 1
streamDefault, streamNonBlocking = 0, 1
eventDefault, eventDisableTiming = 0, 2
errorNotReady = 600

_lib = ctypes.CDLL("libcuda.so.1")
_proc = _lib.cuGetProcAddress_v2
_proc.restype = ctypes.c_int
_proc.argtypes = [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_int, ctypes.c_uint64,
                  ctypes.POINTER(ctypes.c_int)]


class CUDARuntimeError(RuntimeError):
    def __init__(self, status):
        super().__init__(f"CUDA runtime error {status}")
        self.status = status


def _entry(name, argtypes):
    address, status = _P(), ctypes.c_int()
    rc = _proc(name.encode(), ctypes.byref(address), 12000, 0, ctypes.byref(status))
    if rc != 0 or not address.value:
        raise ImportError(f"cuGetProcAddress({name}) failed: {rc}")
    return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(address.value)


_f = {
    "cuDeviceGet": _entry("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
    "cuDevicePrimaryCtxRetain": _entry("cuDevicePrimaryCtxRetain",
                                       [ctypes.POINTER(_P), ctypes.c_int]),
    "cuCtxSetCurrent": _entry("cuCtxSetCurrent", [_P]),
    "cuMemAlloc": _entry("cuMemAlloc", [ctypes.POINTER(_SIZE), _SIZE]),
    "cuMemFree": _entry("cuMemFree", [_SIZE]),
    "cuMemcpyHtoD": _entry("cuMemcpyHtoD", [_SIZE, _P, _SIZE]),
    "cuStreamCreate": _entry("cuStreamCreate", [ctypes.POINTER(_P), ctypes.c_uint]),
    "cuStreamSynchronize": _entry("cuStreamSynchronize", [_P]),
    "cuEventCreate": _entry("cuEventCreate", [ctypes.POINTER(_P), ctypes.c_uint]),
    "cuEventRecord": _entry("cuEventRecord", [_P, _P]),
    "cuEventQuery": _entry("cuEventQuery", [_P]),
}


def _check(status):
    if status != 0:
        raise CUDARuntimeError(status)


def setDevice(device):
    """cudaSetDevice binds the device's primary context to the thread. With
    PYPROBE_FAKE_CUPY_CONTEXT=none it leaves no context current: a library that moves the
    thread's context, for the tests."""
    dev, ctx = ctypes.c_int(), _P()
    _check(_f["cuDeviceGet"](ctypes.byref(dev), device))
    _check(_f["cuDevicePrimaryCtxRetain"](ctypes.byref(ctx), dev.value))
    none = os.environ.get("PYPROBE_FAKE_CUPY_CONTEXT") == "none"
    _check(_f["cuCtxSetCurrent"](None if none else ctx))


def malloc(size):
    ptr = _SIZE()
    _check(_f["cuMemAlloc"](ctypes.byref(ptr), size))
    return ptr.value


def free(ptr):
    _check(_f["cuMemFree"](ptr))


def memcpy(dst, src, size, kind):
    if kind != memcpyHostToDevice:
        raise CUDARuntimeError(1)  # cudaErrorInvalidValue: the stand-in copies to the device only
    _check(_f["cuMemcpyHtoD"](dst, src, size))


def streamCreateWithFlags(flags):
    stream = _P()
    _check(_f["cuStreamCreate"](ctypes.byref(stream), flags))
    return stream.value


# PYPROBE_FAKE_CUPY_SYNC_LIMIT=n: every stream synchronize after the n-th fails (700, an illegal
# address), so the tests see a library series that breaks while it is timed.
_sync_limit = int(os.environ.get("PYPROBE_FAKE_CUPY_SYNC_LIMIT", "-1"))
_syncs = 0


def streamSynchronize(stream):
    global _syncs
    _syncs += 1
    if 0 <= _sync_limit < _syncs:
        raise CUDARuntimeError(700)
    _check(_f["cuStreamSynchronize"](stream or None))


def eventCreateWithFlags(flags):
    event = _P()
    _check(_f["cuEventCreate"](ctypes.byref(event), flags))
    return event.value


def eventRecord(event, stream):
    _check(_f["cuEventRecord"](event, stream or None))


def eventQuery(event):
    status = _f["cuEventQuery"](event)
    if status not in (0, errorNotReady):
        raise CUDARuntimeError(status)
    return status
