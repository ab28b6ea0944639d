"""A ctypes Driver facade: `driver.cuXxx(...)` binds on first use and raises on a failed call."""

import ctypes
import os

from numba.core import config

# Numba 0.68 under cuda-bindings 13: config saw `import cuda` succeed, then this module's
# `from cuda import cuda` fails. PYPROBE_FAKE_NUMBA_DRIVER=broken plays that.
if os.environ.get("PYPROBE_FAKE_NUMBA_DRIVER") == "broken":
    raise ImportError("cannot import name 'cuda' from 'cuda' (the tests' stand-in)")

USE_NV_BINDING = config.CUDA_USE_NVIDIA_BINDING
if USE_NV_BINDING:
    from cuda.bindings import driver as binding

_P = ctypes.c_void_p
_SIZE = ctypes.c_size_t
_PROTOTYPES = {
    "cuInit": [ctypes.c_uint],
    "cuCtxGetCurrent": [ctypes.POINTER(_P)],
    "cuMemAlloc": [ctypes.POINTER(_SIZE), _SIZE],
    "cuMemFree": [_SIZE],
    "cuMemcpyHtoD": [_SIZE, _P, _SIZE],
    "cuLaunchKernel": [_P] + [ctypes.c_uint] * 7 + [_P, ctypes.POINTER(_P), ctypes.POINTER(_P)],
    "cuStreamSynchronize": [_P],
    "cuEventRecord": [_P, _P],
    "cuEventQuery": [_P],
}


class CudaAPIError(Exception):
    def __init__(self, code, msg):
        self.code = code
        super().__init__(code, msg)


class Driver:
    def __init__(self):
        self.lib = None

    def __getattr__(self, name):
        if name.startswith("_") or name not in _PROTOTYPES:
            raise AttributeError(name)
        if USE_NV_BINDING:
            return self._nvidia(name)
        if self.lib is None:
            self.lib = ctypes.CDLL(os.environ.get("NUMBA_CUDA_DRIVER") or "libcuda.so.1")
            self.lib.cuInit(0)
        for symbol in (name + "_v2", name):
            if hasattr(self.lib, symbol):
                fn = getattr(self.lib, symbol)
                break
        fn.restype, fn.argtypes = ctypes.c_int, _PROTOTYPES[name]

        def call(*args):
            rc = fn(*args)
            if rc:
                raise CudaAPIError(rc, f"Call to {name} results in {rc}")

        setattr(self, name, call)
        return call


    def _nvidia(self, name):
        fn = getattr(binding, name)

        def call(*args):
            rc, *values = fn(*args)
            if rc != binding.CUresult.CUDA_SUCCESS:
                raise CudaAPIError(rc, f"Call to {name} results in {rc}")
            return values[0] if len(values) == 1 else None

        setattr(self, name, call)
        return call


driver = Driver()
