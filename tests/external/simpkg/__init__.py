"""simpkg: a tiny CUDA driver binding in ctypes, the "external package" of cuparity's suite tests.

It stands for a third-party package whose own pytest suite `cuparity run` runs in every cell of
a matrix ([[suite]] tables, tests/external/*.toml). It binds the driver in either of the two ways
real packages do, so that `cuparity capture` sees different binding maps in different cells:

- SIMPKG_BINDING=dlsym (default): ctypes attribute lookups of the versioned exported names
  (`cuMemAlloc_v2`), as Numba's ctypes binding does;
- SIMPKG_BINDING=proc: every function through `cuGetProcAddress_v2(name, version, flags, ...)`,
  as cuda.bindings does, each asked at the version of the ABI the package calls;
- SIMPKG_BINDING=broken: importing the package raises ImportError (a suite that cannot start).

SIMPKG_PTDS=1 binds the per-thread default stream variants: the `_ptds`/`_ptsz` symbols on the
dlsym path, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM on the proc path. Anything else is the
legacy default stream.

The driver is the file NUMBA_CUDA_DRIVER names (cuparity's cells set it to the driver under test,
e.g. the simulated one), else the system's libcuda.so.1.

SIMPKG_DEFECT (unset: none) adds one binding defect of the kinds `cuparity audit` names (issue 48;
tests/external/test_whole_api_audit.py captures each), one per run:
- ptds_under_legacy: on the dlsym path, cuStreamSynchronize is bound as its per-thread variant
  `cuStreamSynchronize_ptsz` while every other function is bound legacy: one binder in both
  stream-0 modes (the audit's mixed_modes). It needs SIMPKG_BINDING=dlsym: on the proc path each
  request carries its own flags, which is no defect;
- old_abi: cuMemAlloc is bound by dlsym of the bare symbol `cuMemAlloc`, the CUDA 2.0 ABI whose size
  and device pointer are 32 bits, while the package still passes 64-bit ones (old_semantics);
- null_answer: the package also asks cuGetProcAddress_v2 for cuMemAllocAsync at 11000, below its
  first ABI (11020), and takes the missing pointer as "stream-ordered allocation unavailable"
  (null_entry).

The deliberate bug (the divergence the suite tests look for): the proc path's version table asks
for cuMemGetInfo at 3000 where the size_t ABI is 3020, so the driver answers with the CUDA 2.0
`cuMemGetInfo` (32-bit sizes) while the package still passes size_t pointers. On a device with
more than 4 GiB the totals it reads back are wrong (the simulated driver), or the call fails
(driver 580 on an H200 answers the old ABI with CUDA_ERROR_INVALID_CONTEXT,
reports/runs/2026-12-03-h200-7af2c2d-suites), so `test_memory.py` fails in the proc cells only,
and the captured map shows the cause: `cuMemGetInfo` bound where the dlsym cells bound
`cuMemGetInfo_v2`.
"""

from __future__ import annotations

import ctypes
import os
import threading

BINDING = os.environ.get("SIMPKG_BINDING", "dlsym")
PER_THREAD = os.environ.get("SIMPKG_PTDS") == "1"

if BINDING == "broken":
    # Read before anything is loaded: the package is unusable in this configuration, as one whose
    # compiled extension does not match the interpreter is.
    raise ImportError("simpkg: SIMPKG_BINDING=broken: this build of simpkg cannot be imported")
if BINDING not in ("dlsym", "proc"):
    raise ImportError(f"simpkg: SIMPKG_BINDING={BINDING!r}: expected dlsym, proc or broken")
DEFECT = os.environ.get("SIMPKG_DEFECT", "")
if DEFECT not in ("", "ptds_under_legacy", "old_abi", "null_answer"):
    raise ImportError(f"simpkg: SIMPKG_DEFECT={DEFECT!r}: expected ptds_under_legacy, old_abi or "
                      "null_answer")
if DEFECT == "ptds_under_legacy" and BINDING != "dlsym":
    raise ImportError("simpkg: SIMPKG_DEFECT=ptds_under_legacy binds by dlsym: it needs "
                      "SIMPKG_BINDING=dlsym")

CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1
CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2
# The version from which the _ptds/_ptsz symbols exist: asking with the per-thread flag at an
# older version gets no pointer (CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT).
PER_THREAD_VERSION = 7000

_ptr = ctypes.POINTER
CUdeviceptr = ctypes.c_uint64

# base name -> (exported symbol called, its per-thread twin or None, version asked on the proc
# path, argument types). The exported symbol is the ABI the argument types are written for.
ENTRIES = {
    "cuInit": ("cuInit", None, 2000, (ctypes.c_uint,)),
    "cuDriverGetVersion": ("cuDriverGetVersion", None, 2020, (_ptr(ctypes.c_int),)),
    "cuGetErrorName": ("cuGetErrorName", None, 6000, (ctypes.c_int, _ptr(ctypes.c_char_p))),
    "cuDeviceGetCount": ("cuDeviceGetCount", None, 2000, (_ptr(ctypes.c_int),)),
    "cuDeviceGet": ("cuDeviceGet", None, 2000, (_ptr(ctypes.c_int), ctypes.c_int)),
    "cuDeviceTotalMem": ("cuDeviceTotalMem_v2", None, 3020, (_ptr(ctypes.c_size_t), ctypes.c_int)),
    "cuDevicePrimaryCtxRetain": ("cuDevicePrimaryCtxRetain", None, 7000,
                                 (_ptr(ctypes.c_void_p), ctypes.c_int)),
    "cuCtxSetCurrent": ("cuCtxSetCurrent", None, 4000, (ctypes.c_void_p,)),
    "cuCtxSynchronize": ("cuCtxSynchronize", None, 2000, ()),
    "cuMemAlloc": ("cuMemAlloc_v2", None, 3020, (_ptr(CUdeviceptr), ctypes.c_size_t)),
    "cuMemFree": ("cuMemFree_v2", None, 3020, (CUdeviceptr,)),
    # The bug (module docstring): 3000 is below cuMemGetInfo_v2's 3020, so the proc path gets the
    # 32-bit ABI. The dlsym path names its symbol and is unaffected.
    "cuMemGetInfo": ("cuMemGetInfo_v2", None, 3000, (_ptr(ctypes.c_size_t), _ptr(ctypes.c_size_t))),
    "cuMemsetD8": ("cuMemsetD8_v2", "cuMemsetD8_v2_ptds", 3020,
                   (CUdeviceptr, ctypes.c_ubyte, ctypes.c_size_t)),
    "cuMemcpyHtoD": ("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", 3020,
                     (CUdeviceptr, ctypes.c_void_p, ctypes.c_size_t)),
    "cuMemcpyDtoH": ("cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds", 3020,
                     (ctypes.c_void_p, CUdeviceptr, ctypes.c_size_t)),
    "cuStreamSynchronize": ("cuStreamSynchronize", "cuStreamSynchronize_ptsz", 2000,
                            (ctypes.c_void_p,)),
}


class CudaError(RuntimeError):
    """A driver call that did not return CUDA_SUCCESS; `code` is the CUresult."""

    def __init__(self, function: str, code: int, name: str) -> None:
        super().__init__(f"{function} returned {code} ({name})")
        self.function = function
        self.code = code


def driver_path() -> str:
    return os.environ.get("NUMBA_CUDA_DRIVER") or "libcuda.so.1"


def _open_driver() -> ctypes.CDLL:
    path = driver_path()
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"simpkg: cannot load the CUDA driver {path!r}: {e}") from e


def _symbol_for(base: str, symbol: str, per_thread_symbol: str | None) -> str:
    """The symbol the dlsym path binds for `base`, with SIMPKG_DEFECT's change where it has one."""
    if DEFECT == "ptds_under_legacy" and base == "cuStreamSynchronize":
        return per_thread_symbol
    if DEFECT == "old_abi" and base == "cuMemAlloc":
        return "cuMemAlloc"  # the CUDA 2.0 ABI: 32-bit size and device pointer
    return per_thread_symbol if PER_THREAD and per_thread_symbol else symbol


def _bind_dlsym(lib: ctypes.CDLL) -> dict:
    functions = {}
    for base, (symbol, per_thread_symbol, _version, argtypes) in ENTRIES.items():
        name = _symbol_for(base, symbol, per_thread_symbol)
        try:
            fn = getattr(lib, name)
        except AttributeError as e:
            raise ImportError(f"simpkg: the driver {driver_path()!r} does not export {name}") from e
        fn.restype, fn.argtypes = ctypes.c_int, argtypes
        functions[base] = fn
    return functions


def _bind_proc(lib: ctypes.CDLL) -> dict:
    try:
        get_proc = lib.cuGetProcAddress_v2
    except AttributeError as e:
        raise ImportError(f"simpkg: SIMPKG_BINDING=proc needs cuGetProcAddress_v2, which the "
                          f"driver {driver_path()!r} does not export") from e
    get_proc.restype = ctypes.c_int
    get_proc.argtypes = (ctypes.c_char_p, _ptr(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                         _ptr(ctypes.c_int))
    flags = (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM if PER_THREAD
             else CU_GET_PROC_ADDRESS_LEGACY_STREAM)
    functions = {}
    for base, (_symbol, per_thread_symbol, version, argtypes) in ENTRIES.items():
        if PER_THREAD and per_thread_symbol:
            version = max(version, PER_THREAD_VERSION)
        pointer, status = ctypes.c_void_p(), ctypes.c_int(-1)
        result = get_proc(base.encode(), ctypes.byref(pointer), version, flags, ctypes.byref(status))
        if result != 0 or not pointer.value:
            raise ImportError(f"simpkg: cuGetProcAddress_v2({base}, {version}, flags {flags}) "
                              f"returned {result}, symbol status {status.value}, no pointer")
        functions[base] = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(pointer.value)
    if DEFECT == "old_abi":
        # The bare symbol whatever the path: the old ABI, called with the new ABI's arguments.
        functions["cuMemAlloc"] = _bind_dlsym_one(lib, "cuMemAlloc", ENTRIES["cuMemAlloc"][3])
    return functions


def _bind_dlsym_one(lib: ctypes.CDLL, name: str, argtypes: tuple):
    try:
        fn = getattr(lib, name)
    except AttributeError as e:
        raise ImportError(f"simpkg: the driver {driver_path()!r} does not export {name}") from e
    fn.restype, fn.argtypes = ctypes.c_int, argtypes
    return fn


def _ask_stream_ordered_alloc(lib: ctypes.CDLL):
    """SIMPKG_DEFECT=null_answer: cuMemAllocAsync asked at 11000, below its first ABI (11020): the
    driver gives no pointer, and the package goes on without stream-ordered allocation."""
    get_proc = lib.cuGetProcAddress_v2
    get_proc.restype = ctypes.c_int
    get_proc.argtypes = (ctypes.c_char_p, _ptr(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                         _ptr(ctypes.c_int))
    pointer, status = ctypes.c_void_p(), ctypes.c_int(-1)
    get_proc(b"cuMemAllocAsync", ctypes.byref(pointer), 11000, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
             ctypes.byref(status))
    return pointer.value


_lib = _open_driver()
_functions = _bind_dlsym(_lib) if BINDING == "dlsym" else _bind_proc(_lib)
STREAM_ORDERED_ALLOC = _ask_stream_ordered_alloc(_lib) if DEFECT == "null_answer" else None
_context_lock = threading.Lock()
_context = None


def error_name(code: int) -> str:
    name = ctypes.c_char_p()
    if _functions["cuGetErrorName"](code, ctypes.byref(name)) != 0 or not name.value:
        return "unknown error"
    return name.value.decode()


def call(base: str, *args) -> None:
    """Calls the bound driver function; raises CudaError unless it returns CUDA_SUCCESS."""
    result = _functions[base](*args)
    if result != 0:
        raise CudaError(base, result, error_name(result))


def init() -> None:
    """cuInit, then device 0's primary context made current (once per process)."""
    global _context
    with _context_lock:
        if _context is not None:
            call("cuCtxSetCurrent", _context)
            return
        call("cuInit", 0)
        device = ctypes.c_int()
        call("cuDeviceGet", ctypes.byref(device), 0)
        context = ctypes.c_void_p()
        call("cuDevicePrimaryCtxRetain", ctypes.byref(context), device.value)
        call("cuCtxSetCurrent", context)
        _context = context


def driver_version() -> int:
    version = ctypes.c_int()
    call("cuDriverGetVersion", ctypes.byref(version))
    return version.value


def device_count() -> int:
    init()
    count = ctypes.c_int()
    call("cuDeviceGetCount", ctypes.byref(count))
    return count.value


def device_total_mem(ordinal: int = 0) -> int:
    init()
    device = ctypes.c_int()
    call("cuDeviceGet", ctypes.byref(device), ordinal)
    total = ctypes.c_size_t()
    call("cuDeviceTotalMem", ctypes.byref(total), device.value)
    return total.value


def mem_get_info() -> tuple[int, int]:
    """(free, total) bytes of the current context's device."""
    init()
    free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
    call("cuMemGetInfo", ctypes.byref(free), ctypes.byref(total))
    return free.value, total.value


class DeviceBuffer:
    """`size` bytes of device memory, freed by close() (or at the end of a `with`)."""

    def __init__(self, size: int) -> None:
        init()
        self.size = size
        self.ptr = CUdeviceptr()
        call("cuMemAlloc", ctypes.byref(self.ptr), size)

    def write(self, data: bytes) -> None:
        if len(data) > self.size:
            raise ValueError(f"{len(data)} bytes do not fit in a buffer of {self.size}")
        host = ctypes.create_string_buffer(data, len(data))
        call("cuMemcpyHtoD", self.ptr, host, len(data))

    def read(self, count: int | None = None) -> bytes:
        count = self.size if count is None else count
        host = ctypes.create_string_buffer(count)
        call("cuMemcpyDtoH", host, self.ptr, count)
        return host.raw

    def fill(self, value: int) -> None:
        call("cuMemsetD8", self.ptr, value, self.size)
        # The memset is asynchronous with respect to the host on the default stream.
        call("cuStreamSynchronize", None)

    def close(self) -> None:
        if self.ptr.value:
            call("cuMemFree", self.ptr)
            self.ptr = CUdeviceptr()

    def __enter__(self) -> "DeviceBuffer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def synchronize() -> None:
    init()
    call("cuCtxSynchronize")
