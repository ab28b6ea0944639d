"""cupy.cuda.driver's stand-in: as CuPy's driver module, it binds libcuda's exported symbols
(CuPy 14's SoftLink dlsyms "libcuda.so.1"; CuPy 13 links against it), the bare names: ctypes'
attribute lookup is that dlsym. Errors raise CUDADriverError."""

import ctypes

_P = ctypes.c_void_p
_lib = ctypes.CDLL("libcuda.so.1")


class CUDADriverError(RuntimeError):
    def __init__(self, status):
        super().__init__(f"CUDA driver error {status}")
        self.status = status


def _symbol(name, argtypes):
    fn = getattr(_lib, name)
    fn.restype, fn.argtypes = ctypes.c_int, argtypes
    return fn


_cuCtxGetCurrent = _symbol("cuCtxGetCurrent", [ctypes.POINTER(_P)])
_cuModuleLoadData = _symbol("cuModuleLoadData", [ctypes.POINTER(_P), ctypes.c_char_p])
_cuModuleGetFunction = _symbol("cuModuleGetFunction", [ctypes.POINTER(_P), _P, ctypes.c_char_p])
_cuLaunchKernel = _symbol("cuLaunchKernel", [_P] + [ctypes.c_uint] * 7 + [_P, _P, _P])


def _check(status):
    if status != 0:
        raise CUDADriverError(status)


def ctxGetCurrent():
    ctx = _P()
    _check(_cuCtxGetCurrent(ctypes.byref(ctx)))
    return ctx.value or 0


def moduleLoad(filename):
    """CuPy calls cuModuleLoad(filename); the simulated driver loads images from memory only."""
    with open(filename, "rb") as f:
        image = f.read() + b"\0"
    module = _P()
    _check(_cuModuleLoadData(ctypes.byref(module), image))
    return module.value


def moduleGetFunction(module, funcname):
    function = _P()
    _check(_cuModuleGetFunction(ctypes.byref(function), module, funcname.encode()))
    return function.value


def launchKernel(f, gx, gy, gz, bx, by, bz, shared_mem_bytes, stream, kernel_params, extra):
    _check(_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared_mem_bytes, stream or None,
                           kernel_params or None, extra or None))
