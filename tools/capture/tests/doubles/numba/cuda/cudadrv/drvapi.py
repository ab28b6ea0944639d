"""Test double of numba.cuda.cudadrv.drvapi: API_PROTOTYPES, base name -> (restype, *argtypes).

The names are every entry of cuparity's driver entry table (harness/driver/entries.inl, read at
import through ../../../_cuparity_entries.py) plus EXTRA_PROTOTYPES; the prototypes are made from
the table's C parameter types, roughly as numba spells them (handles as c_void_p, CUdeviceptr as
c_size_t, enums as c_int). Only the names matter to the capture: a type this double does not know
becomes c_void_p.
"""

import ctypes
import importlib.util
import os
import re
import sys
from ctypes import POINTER, c_char, c_char_p, c_float, c_int, c_size_t, c_ubyte, c_uint, c_uint64, c_void_p


def _entry_table():
    """tools/capture/tests/doubles/_cuparity_entries.py, loaded by path (three folders up)."""
    name = "_cuparity_double_entries"
    if name not in sys.modules:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.normpath(os.path.join(here, os.pardir, os.pardir, os.pardir, "_cuparity_entries.py"))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


_ENTRIES = _entry_table()  # raises, naming the path, when entries.inl is missing

CUresult = c_int
cu_context = c_void_p
cu_device = c_int
cu_device_ptr = c_size_t
cu_stream = c_void_p
cu_event = c_void_p
cu_function = c_void_p
cu_module = c_void_p
cu_link_state = c_void_p
cu_graph = c_void_p


class cu_uuid(ctypes.Structure):
    _fields_ = [("bytes", c_char * 16)]


class cu_ipc_mem_handle(ctypes.Structure):
    _fields_ = [("reserved", c_char * 64)]


class cu_ipc_event_handle(ctypes.Structure):
    _fields_ = [("reserved", c_char * 64)]


class cu_mem_location(ctypes.Structure):
    _fields_ = [("type", c_int), ("id", c_int)]


_C_TYPES = {
    "void": None,
    "char": c_char,
    "unsigned char": c_ubyte,
    "int": c_int,
    "unsigned int": c_uint,
    "float": c_float,
    "size_t": c_size_t,
    "cuuint64_t": c_uint64,
    "CUresult": CUresult,
    "CUdevice": cu_device,
    "CUdeviceptr": cu_device_ptr,
    "CUcontext": cu_context,
    "CUmodule": cu_module,
    "CUfunction": cu_function,
    "CUstream": cu_stream,
    "CUevent": cu_event,
    "CUlinkState": cu_link_state,
    "CUuuid": cu_uuid,
    "CUipcMemHandle": cu_ipc_mem_handle,
    "CUipcEventHandle": cu_ipc_event_handle,
    "CUmemLocation": cu_mem_location,
    # enums
    "CUdevice_attribute": c_int,
    "CUfunction_attribute": c_int,
    "CUfunc_cache": c_int,
    "CUjit_option": c_int,
    "CUjitInputType": c_int,
    "CUpointer_attribute": c_int,
    "CUmem_advise": c_int,
    "CUdriverProcAddressQueryResult": c_int,
    # callbacks
    "CUstreamCallback": c_void_p,
    "CUhostFn": c_void_p,
    "CUoccupancyB2DSize": c_void_p,
}


def _ctype(c_type: str):
    """The ctypes type of one C parameter type of entries.inl ("const char **", "CUcontext *")."""
    stars = c_type.count("*")
    base = " ".join(w for w in c_type.replace("*", " ").split() if w not in ("const", "volatile"))
    # The table keeps cudaTypedefs.h's versioned names (CUdeviceptr_v2, CUdevice_v1): the ABIs it
    # calls use the current layouts, which the unversioned names have.
    base = re.sub(r"_v[0-9]+$", "", base)
    t = _C_TYPES.get(base, c_void_p)
    if stars and base == "void":
        t, stars = c_void_p, stars - 1
    elif stars and base == "char":
        t, stars = c_char_p, stars - 1
    for _ in range(stars):
        t = POINTER(t)
    return t


def _prototype(entry):
    return (CUresult, *(_ctype(p) for p in (entry.parameters or [])))


# Not in the entry table. cuGraphCreate: declared, and exported by the simulated driver (a stub).
# cuNotADriverFunction: a name no header declares, so no driver exports it and numba's lookup gives
# its absent_function stand-in (the audit's "unknown" case). (CUPARITY_SIM_HIDE would not do: it
# hides a function from cuGetProcAddress only, and numba binds by dlsym.)
EXTRA_PROTOTYPES = {
    "cuGraphCreate": (CUresult, POINTER(cu_graph), c_uint),
    "cuNotADriverFunction": (CUresult,),
}

API_PROTOTYPES = {e.name: _prototype(e) for e in _ENTRIES.ENTRIES}
for _name, _proto in EXTRA_PROTOTYPES.items():
    API_PROTOTYPES.setdefault(_name, _proto)
del _name, _proto
