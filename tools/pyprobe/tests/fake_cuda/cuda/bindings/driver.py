"""cuda.bindings.driver's shape over ctypes, for cuparity's tests: every call returns a tuple
(CUresult, values...), handles are objects built from ints, and, as the real module, it opens
"libcuda.so.1" by that name and takes its functions from cuGetProcAddress (the `proc` path the
fault shim can slow), never from the exported symbols. Written for cuparity; no copy of NVIDIA's.
"""

import ctypes
import enum


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_NOT_READY = 600


def _result(rc):
    try:
        return CUresult(rc)
    except ValueError:
        return rc


class _Handle:
    def __init__(self, init_value=0):
        self._value = int(init_value)

    def __int__(self):
        return self._value


class CUcontext(_Handle):
    pass


class CUstream(_Handle):
    pass


class CUfunction(_Handle):
    pass


class CUevent(_Handle):
    pass


class CUdeviceptr(_Handle):
    pass


class CUdevice(_Handle):
    pass


class CUmodule(_Handle):
    pass


_P = ctypes.c_void_p
_SIGNATURES = {
    "cuInit": [ctypes.c_uint],
    "cuCtxGetCurrent": [ctypes.POINTER(_P)],
    "cuMemAlloc": [ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t],
    "cuMemFree": [ctypes.c_size_t],
    "cuMemcpyHtoD": [ctypes.c_size_t, _P, ctypes.c_size_t],
    "cuLaunchKernel": [_P] + [ctypes.c_uint] * 7 + [_P, _P, _P],
    "cuStreamSynchronize": [_P],
    "cuEventRecord": [_P, _P],
    "cuEventQuery": [_P],
    # What the tests' cuda.core stand-in (fake_core) calls as well.
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(_P), ctypes.c_int],
    "cuCtxSetCurrent": [_P],
    "cuCtxGetDevice": [ctypes.POINTER(ctypes.c_int)],
    "cuStreamCreate": [ctypes.POINTER(_P), ctypes.c_uint],
    "cuEventCreate": [ctypes.POINTER(_P), ctypes.c_uint],
    "cuModuleLoadData": [ctypes.POINTER(_P), ctypes.c_char_p],
    "cuModuleGetFunction": [ctypes.POINTER(_P), _P, ctypes.c_char_p],
    "cuMemAllocAsync": [ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, _P],
    "cuMemFreeAsync": [ctypes.c_size_t, _P],
}
_lib = ctypes.CDLL("libcuda.so.1")
_proc = _lib.cuGetProcAddress_v2
_proc.restype = ctypes.c_int
_proc.argtypes = [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_int, ctypes.c_uint64,
                  ctypes.POINTER(ctypes.c_int)]


def _bind(name):
    address, status = _P(), ctypes.c_int()
    rc = _proc(name.encode(), ctypes.byref(address), 12000, 0, ctypes.byref(status))
    if rc != 0 or not address.value:
        raise ImportError(f"cuGetProcAddress({name}) failed: {rc}")
    return ctypes.CFUNCTYPE(ctypes.c_int, *_SIGNATURES[name])(address.value)


_fn = {name: _bind(name) for name in _SIGNATURES}


def cuInit(flags):
    return (_result(_fn["cuInit"](flags)),)


def cuCtxGetCurrent():
    ctx = _P()
    return (_result(_fn["cuCtxGetCurrent"](ctypes.byref(ctx))), CUcontext(ctx.value or 0))


def cuMemAlloc(size):
    ptr = ctypes.c_size_t()
    return (_result(_fn["cuMemAlloc"](ctypes.byref(ptr), size)), CUdeviceptr(ptr.value))


def cuMemFree(ptr):
    return (_result(_fn["cuMemFree"](int(ptr))),)


def cuMemcpyHtoD(dst, src, size):
    return (_result(_fn["cuMemcpyHtoD"](int(dst), src, size)),)


def cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    return (_result(_fn["cuLaunchKernel"](int(f), gx, gy, gz, bx, by, bz, shared, int(stream),
                                          params or None, extra or None)),)


def cuStreamSynchronize(stream):
    return (_result(_fn["cuStreamSynchronize"](int(stream))),)


def cuEventRecord(event, stream):
    return (_result(_fn["cuEventRecord"](int(event), int(stream))),)


def cuEventQuery(event):
    return (_result(_fn["cuEventQuery"](int(event))),)


def cuDeviceGet(ordinal):
    dev = ctypes.c_int()
    return (_result(_fn["cuDeviceGet"](ctypes.byref(dev), ordinal)), CUdevice(dev.value))


def cuDeviceGetCount():
    count = ctypes.c_int()
    return (_result(_fn["cuDeviceGetCount"](ctypes.byref(count))), count.value)


def cuDevicePrimaryCtxRetain(dev):
    ctx = _P()
    return (_result(_fn["cuDevicePrimaryCtxRetain"](ctypes.byref(ctx), int(dev))),
            CUcontext(ctx.value or 0))


def cuCtxSetCurrent(ctx):
    return (_result(_fn["cuCtxSetCurrent"](int(ctx) or None)),)


def cuCtxGetDevice():
    dev = ctypes.c_int()
    return (_result(_fn["cuCtxGetDevice"](ctypes.byref(dev))), CUdevice(dev.value))


def cuStreamCreate(flags):
    stream = _P()
    return (_result(_fn["cuStreamCreate"](ctypes.byref(stream), flags)), CUstream(stream.value))


def cuEventCreate(flags):
    event = _P()
    return (_result(_fn["cuEventCreate"](ctypes.byref(event), flags)), CUevent(event.value))


def cuModuleLoadData(image):
    module = _P()
    return (_result(_fn["cuModuleLoadData"](ctypes.byref(module), image)), CUmodule(module.value))


def cuModuleGetFunction(module, name):
    function = _P()
    return (_result(_fn["cuModuleGetFunction"](ctypes.byref(function), int(module), name)),
            CUfunction(function.value))


def cuMemAllocAsync(size, stream):
    ptr = ctypes.c_size_t()
    return (_result(_fn["cuMemAllocAsync"](ctypes.byref(ptr), size, int(stream))),
            CUdeviceptr(ptr.value))


def cuMemFreeAsync(ptr, stream):
    return (_result(_fn["cuMemFreeAsync"](int(ptr), int(stream))),)
