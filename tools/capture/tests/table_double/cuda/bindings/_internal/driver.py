"""The fake's table module: pointers resolved by cuGetProcAddress_v2 in libfake_table.so."""

import ctypes
import os

# (the table's key less "__", the name asked of cuGetProcAddress)
FUNCTIONS = (
    ("cuMemcpyHtoD_v2", "cuMemcpyHtoD"),
    ("cuStreamSynchronize", "cuStreamSynchronize"),
    ("cuCtxSynchronize", "cuCtxSynchronize"),
    ("cuGetProcAddress_v2", "cuGetProcAddress"),
)

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libfake_table.so")
_pointers = None


def _check_or_init():
    global _pointers
    if _pointers is not None:
        return
    lib = ctypes.CDLL(_LIBRARY)
    resolve = lib.fake_resolve
    resolve.restype = ctypes.c_int
    resolve.argtypes = [
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_int,
    ]
    n = len(FUNCTIONS)
    names = (ctypes.c_char_p * n)(*[name.encode() for _, name in FUNCTIONS])
    pointers = (ctypes.c_void_p * n)()
    per_thread = int(os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM") or 0) != 0
    if resolve(os.environ["CUPARITY_FAKE_DRIVER"].encode(), per_thread, names, pointers, n) < 0:
        raise RuntimeError("cannot open the driver " + os.environ["CUPARITY_FAKE_DRIVER"])
    _pointers = {key: pointers[i] or 0 for i, (key, _) in enumerate(FUNCTIONS)}


def _inspect_function_pointers():
    if os.environ.get("CUPARITY_FAKE_TABLE_RAISE"):
        raise RuntimeError("the fake table raises, as told")
    _check_or_init()
    table = {"__" + key: address for key, address in _pointers.items()}
    wrong = os.environ.get("CUPARITY_FAKE_TABLE_WRONG")
    if wrong:
        table["__" + wrong] = _pointers["cuCtxSynchronize"]
    return table


if os.environ.get("CUPARITY_FAKE_TABLE_OLD"):
    del _inspect_function_pointers
