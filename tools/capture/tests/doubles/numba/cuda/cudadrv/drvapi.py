"""Test double of numba.cuda.cudadrv.drvapi: API_PROTOTYPES, base name -> (restype, *argtypes)."""

from ctypes import POINTER, c_int, c_size_t, c_uint, c_void_p

CUresult = c_int
cu_context = c_void_p
cu_device = c_int
cu_device_ptr = c_size_t
cu_stream = c_void_p
cu_event = c_void_p
cu_function = c_void_p
cu_graph = c_void_p

API_PROTOTYPES = {
    "cuInit": (CUresult, c_uint),
    "cuDriverGetVersion": (CUresult, POINTER(c_int)),
    "cuCtxCreate": (CUresult, POINTER(cu_context), c_uint, cu_device),
    "cuMemAlloc": (CUresult, POINTER(cu_device_ptr), c_size_t),
    "cuMemFree": (CUresult, cu_device_ptr),
    "cuMemcpyHtoD": (CUresult, cu_device_ptr, c_void_p, c_size_t),
    "cuMemcpyDtoH": (CUresult, c_void_p, cu_device_ptr, c_size_t),
    "cuMemcpyHtoDAsync": (CUresult, cu_device_ptr, c_void_p, c_size_t, cu_stream),
    "cuStreamSynchronize": (CUresult, cu_stream),
    "cuLaunchKernel": (
        CUresult, cu_function, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
        cu_stream, POINTER(c_void_p), POINTER(c_void_p),
    ),
    "cuEventRecord": (CUresult, cu_event, cu_stream),
    "cuGraphCreate": (CUresult, POINTER(cu_graph), c_uint),  # the simulated driver has none
}
