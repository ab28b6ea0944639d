"""cuparity's Python latency probe: what a Python program pays per driver call, per binding.

A probe process like `cuparity probe` (docs/formats.md "Events", docs/latency.md "The Python
path"): it writes `cell_start`, then per round one `probe` event per probe and series, one
`probe_pairs` per probe and `round_done`; with --serve it answers `round <n> <flip>` lines on
stdin. Each probe's three series alternate block by block in a Williams order, as the C++ probes':
  facade  Numba's Driver facade (numba.cuda.cudadrv.driver.driver), whichever binding Numba chose
  direct  the binding Numba really uses, called directly (ctypes function objects in Numba's
          internal style, or cuda.bindings' / cuda.cuda's functions)
  other   the other binding, called directly in the same process and context; with --aa (or
          CUPARITY_PYPROBE_OTHER=same) a second function object of the same binding: a control;
          with CUPARITY_PYPROBE_OTHER=proc (`cuparity calibrate`) ctypes again, through the
          pointer cuGetProcAddress hands out: one call path, the two resolution paths; with
          CUPARITY_PYPROBE_OTHER=bindings (`cuparity calibrate`) direct and other are both
          cuda.bindings' driver module, imported without Numba, each call behind one spin
          wrapper that waits CUPARITY_PYPROBE_DELAY_NS before direct's calls and 0 before
          other's: a known delay on cuda.bindings' call path
`own`/`other` are "internal" (ctypes) and "nvidia" (cuda.bindings), so the runner's paired
verdict reads nvidia / internal as for the C++ probes. cell_start's config records the binding
the process really got (Numba's USE_NV_BINDING) and whether Numba fell back from the NVIDIA one.
Two more series, interleaved in the same orders, time the libraries where they import in the
cell's Python (else cell_start and every probe_pairs name why they are absent):
  cupy       CuPy's own API (cupy.cuda.driver / runtime, Stream, Event, RawModule)
  cuda_core  cuda.core's (Device, Stream, Event, Buffer, launch; cuda.core.experimental before 0.5)
They are figures beside the bindings, never part of the paired verdict between them.

Standard library only: it runs in every cell, whatever the cell installs.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import fnmatch
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from itertools import repeat

PROBES = (
    "py.ctx.get_current",
    "py.mem.alloc_free_4k",
    "py.memcpy.htod_4b",
    "py.launch.empty_kernel",
    "py.stream.sync_idle",
    "py.event.record_query",
)
SERIES = ("facade", "direct", "other")  # the bindings' series: what the paired verdict reads
LIBRARY_SERIES = ("cupy", "cuda_core")  # libraries above them, where they import
ALL_SERIES = SERIES + LIBRARY_SERIES
LAUNCH_BATCH = 64  # launches per timed batch, drained untimed (as cases/probes.cpp)
MAX_BLOCK_ITERATIONS = 1 << 30
MIN_TRIPLES = 2
DRIVER_DIR_VARIABLE = "CUPARITY_PYPROBE_DRIVER_DIR"
OTHER_VARIABLE = "CUPARITY_PYPROBE_OTHER"
DELAY_VARIABLE = "CUPARITY_PYPROBE_DELAY_NS"
MAX_DELAY_NS = 1_000_000
CUDA_SUCCESS = 0
CUDA_ERROR_NOT_READY = 600
CU_STREAM_NON_BLOCKING = 1
CU_EVENT_DISABLE_TIMING = 2

# An empty kernel as PTX text: no nvcc needed. cuparity_empty is the simulated driver's empty
# kernel too (tests/simdriver/src/kernels.cpp); on a GPU the driver JIT-compiles it once.
EMPTY_KERNEL_PTX = (
    b".version 7.8\n.target sm_75\n.address_size 64\n"
    b".visible .entry cuparity_empty()\n{\n\tret;\n}\n\0"
)


class StartError(Exception):
    """The process cannot measure: `kind` and the message become its cell_error."""

    def __init__(self, kind: str, message: str, code: int) -> None:
        super().__init__(message)
        self.kind = kind
        self.code = code


class CallError(Exception):
    """A timed call failed: the series it ran in ends for this round."""


# ---- events -------------------------------------------------------------------------------------


class Events:
    """One JSON object per line on a file descriptor of its own, each line one write(2)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, event: dict) -> None:
        data = (json.dumps(event, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]


def significant(x: float) -> float:
    """Six significant digits, as the C++ probes write block times."""
    return float(f"{x:.6g}")


def median(values: list) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


# ---- the block design ---------------------------------------------------------------------------


def balanced_orders(n: int) -> list:
    """Williams design (harness/probes/series_order.cpp): every series takes every position
    equally often and follows every other equally often."""
    if n == 0:
        return []
    first, lo, hi = [0], 1, n - 1
    j = 1
    while len(first) < n:
        if j % 2:
            first.append(lo)
            lo += 1
        else:
            first.append(hi)
            hi -= 1
        j += 1
    rows = []
    for i in range(n):
        row = [(x + i) % n for x in first]
        rows.append(row)
        if n % 2 == 1 and n > 1:
            rows.append(list(reversed(row)))
    return rows


def timed_loop(op, n: int) -> int:
    """n calls of op, timed as one block (ns). The loop's own cost per call is what
    tools/pyprobe/pyprobe_overhead.py measures."""
    clock = time.perf_counter_ns
    t0 = clock()
    for _ in repeat(None, n):
        op()
    return clock() - t0


def run_blocks(blocks: dict, block_s: float, budget_s: float, flip: bool):
    """The C++ probe_state's schedule: grow the block until it lasts block_s (the calibration
    blocks are not kept), then triples in the cycle's orders until each series has had budget_s,
    ending with a whole cycle. Returns ({series: [block ns]}, iterations per block)."""
    on = [s for s in ALL_SERIES if s in blocks]
    orders = [[on[i] for i in row] for row in balanced_orders(len(on))]
    if flip:
        orders.reverse()
    target = block_s * 1e9
    iterations = 1
    active = "direct" if "direct" in blocks else on[0]
    while True:
        ns = blocks[active](iterations)
        if ns >= target or iterations >= MAX_BLOCK_ITERATIONS:
            break
        grow = int(target / ns) if ns > 0 else 16
        iterations = min(MAX_BLOCK_ITERATIONS, iterations * min(16, max(2, grow)))
    out = {s: [] for s in on}
    start, triples = time.monotonic(), 0
    while True:
        for s in orders[triples % len(orders)]:
            out[s].append(blocks[s](iterations))
        triples += 1
        if (triples % len(orders) == 0 and triples >= MIN_TRIPLES
                and time.monotonic() - start >= budget_s * len(on)):
            return out, iterations


# ---- the driver and the bindings ----------------------------------------------------------------

VOIDP = ctypes.c_void_p
DEVPTR = ctypes.c_size_t  # Numba's cu_device_ptr
INT = ctypes.c_int
UINT = ctypes.c_uint

# Numba's API_PROTOTYPES for the functions the probes call (numba/cuda/cudadrv/drvapi.py).
PROTOTYPES = {
    "cuCtxGetCurrent": [ctypes.POINTER(VOIDP)],
    "cuMemAlloc": [ctypes.POINTER(DEVPTR), ctypes.c_size_t],
    "cuMemFree": [DEVPTR],
    "cuMemcpyHtoD": [DEVPTR, VOIDP, ctypes.c_size_t],
    "cuLaunchKernel": [VOIDP, UINT, UINT, UINT, UINT, UINT, UINT, UINT, VOIDP,
                       ctypes.POINTER(VOIDP), ctypes.POINTER(VOIDP)],
    "cuStreamSynchronize": [VOIDP],
    "cuEventRecord": [VOIDP, VOIDP],
    "cuEventQuery": [VOIDP],
}


def numba_int(name: str, warned: list) -> int:
    """An integer variable read as Numba's _readenv(name, int, 0) does: garbage warns, is 0."""
    raw = os.environ.get(name)
    if raw is None:
        return 0
    try:
        return int(raw)
    except ValueError:
        warned.append(f"environment variable {name!r} is defined but its associated value "
                      f"{raw!r} could not be parsed")
        return 0


def reexec_with_driver_first() -> None:
    """cuda.bindings opens "libcuda.so.1" itself. So that it calls the driver this cell selects
    (NUMBA_CUDA_DRIVER: the simulated driver, the fault shim), the process starts once more with
    a private folder first on LD_LIBRARY_PATH holding libcuda.so.1 -> that file, as the C++
    probe hands one driver to both backends. LD_LIBRARY_PATH is read only at start."""
    driver = os.environ.get("NUMBA_CUDA_DRIVER")
    if not driver or driver == "0" or os.environ.get(DRIVER_DIR_VARIABLE):
        return
    path = os.path.abspath(driver)
    if not os.path.isfile(path):
        return  # refused, named, by open_driver
    folder = tempfile.mkdtemp(prefix="cuparity-pyprobe-")
    for name in ("libcuda.so.1", "libcuda.so"):
        os.symlink(path, os.path.join(folder, name))
    env = dict(os.environ)
    env[DRIVER_DIR_VARIABLE] = folder
    env["LD_LIBRARY_PATH"] = folder + (":" + env["LD_LIBRARY_PATH"]
                                       if env.get("LD_LIBRARY_PATH") else "")
    argv = list(getattr(sys, "orig_argv", [sys.executable] + sys.argv))
    os.execve(sys.executable, argv, env)


def remove_driver_dir() -> None:
    folder = os.environ.get(DRIVER_DIR_VARIABLE, "")
    if os.path.basename(folder).startswith("cuparity-pyprobe-"):
        shutil.rmtree(folder, ignore_errors=True)


def loaded_path(lib: ctypes.CDLL) -> str:
    """The file the dynamic linker loaded (dlinfo's link map), as the C++ session records it."""
    try:
        libdl = ctypes.CDLL(None)
        dlinfo = libdl.dlinfo
        dlinfo.argtypes = [VOIDP, INT, VOIDP]
        link_map = VOIDP()
        if dlinfo(VOIDP(lib._handle), 2, ctypes.byref(link_map)) == 0 and link_map.value:
            name = ctypes.cast(link_map.value + ctypes.sizeof(VOIDP),
                               ctypes.POINTER(ctypes.c_char_p))[0]
            if name:
                return name.decode(errors="replace")
    except (AttributeError, OSError):
        pass
    return lib._name


def open_driver() -> ctypes.CDLL:
    """The driver as Numba's locate_driver_and_loader finds it: NUMBA_CUDA_DRIVER, else
    libcuda.so.1."""
    driver = os.environ.get("NUMBA_CUDA_DRIVER")
    if driver == "0":
        raise StartError("config", "NUMBA_CUDA_DRIVER=0 disables the CUDA driver (Numba's "
                         "convention): nothing to measure", 2)
    if driver is not None and not os.path.isfile(os.path.abspath(driver)):
        raise StartError("config", f"NUMBA_CUDA_DRIVER='{driver}' is not a valid file path", 2)
    name = os.path.abspath(driver) if driver else "libcuda.so.1"
    try:
        return ctypes.CDLL(name)
    except OSError as e:
        raise StartError("driver", f"cannot open the driver {name}: {e}", 3) from None


def find_api(lib: ctypes.CDLL, name: str, ptds: bool) -> str:
    """The exported symbol Numba's Driver._find_api binds for `name` (docs/driver-facts.md
    #numba-find-api): with the per-thread default stream _v2_ptds, _v2_ptsz, _ptds, _ptsz, _v2,
    bare; otherwise _v2, bare; the first the driver exports."""
    suffixes = ("_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz", "_v2", "") if ptds else ("_v2", "")
    for suffix in suffixes:
        try:
            getattr(lib, name + suffix)
            return name + suffix
        except AttributeError:
            continue
    raise CallError(f"the driver exports no {name}")


def proc_address(lib: ctypes.CDLL, base: str, ptds: bool) -> int:
    """What cuGetProcAddress_v2 answers for `base` (CUDA 12.0's version of it, in the stream
    mode of `ptds`): the pointer cuda.bindings would call."""
    get = lib.cuGetProcAddress_v2
    get.restype = INT
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(VOIDP), INT, ctypes.c_uint64,
                    ctypes.POINTER(INT)]
    address, status = VOIDP(), INT()
    flags = 2 if ptds else 1  # CU_GET_PROC_ADDRESS_{PER_THREAD_DEFAULT,LEGACY}_STREAM
    rc = get(base.encode(), ctypes.byref(address), 12000, flags, ctypes.byref(status))
    if rc != CUDA_SUCCESS or not address.value:
        raise CallError(f"cuGetProcAddress_v2({base}) returned {rc}")
    return address.value


def checked(lib: ctypes.CDLL, name: str, *args) -> None:
    rc = getattr(lib, name)(*args)
    if rc != CUDA_SUCCESS:
        raise StartError("driver", f"{name} returned {rc}", 3)


class Fixture:
    """What every probe uses, made once through ctypes: the primary context (current), a
    non-blocking stream, the empty kernel, an event and a 4-byte device buffer, all as ints."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        dev, ctx = INT(), VOIDP()
        checked(lib, "cuInit", 0)
        checked(lib, "cuDeviceGet", ctypes.byref(dev), 0)
        checked(lib, "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
        checked(lib, "cuCtxSetCurrent", ctx)
        stream, module, function, event = VOIDP(), VOIDP(), VOIDP(), VOIDP()
        buf = DEVPTR()
        checked(lib, "cuStreamCreate", ctypes.byref(stream), CU_STREAM_NON_BLOCKING)
        checked(lib, "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(EMPTY_KERNEL_PTX))
        checked(lib, "cuModuleGetFunction", ctypes.byref(function), module, b"cuparity_empty")
        checked(lib, "cuEventCreate", ctypes.byref(event), CU_EVENT_DISABLE_TIMING)
        checked(lib, "cuMemAlloc_v2", ctypes.byref(buf), ctypes.c_size_t(4))
        self.device, self.context = dev.value, ctx.value
        self.stream, self.function, self.event, self.buffer = (
            stream.value, function.value, event.value, buf.value)
        self.host = ctypes.c_uint32(7)
        self.host_address = ctypes.addressof(self.host)
        self._sync = lib.cuStreamSynchronize
        self._sync.argtypes = [VOIDP]

    def drain(self) -> None:
        """The stream emptied between launch batches, untimed, the same for every series."""
        self._sync(VOIDP(self.stream))

    def keep_current(self, warned: list, who: str) -> None:
        """After a library started: the thread's context must still be the Fixture's (device 0's
        primary context, which CuPy and cuda.core bind too), so every series times one context.
        A library that left another current is named, and the Fixture's is set back."""
        get, ctx = self.lib.cuCtxGetCurrent, VOIDP()
        get.argtypes = [ctypes.POINTER(VOIDP)]
        if get(ctypes.byref(ctx)) == CUDA_SUCCESS and ctx.value == self.context:
            return
        found = f"context {ctx.value:#x}" if ctx.value else "no context"
        warned.append(f"{who} left {found} current, not device 0's primary context "
                      f"{self.context:#x}; the probe set the primary one back")
        set_current = self.lib.cuCtxSetCurrent
        set_current.argtypes = [VOIDP]
        set_current(VOIDP(self.context))


def fail(name: str, rc) -> None:
    raise CallError(f"{name} returned {rc}")


class CtypesPath:
    """Numba's internal binding's call path without its facade: ctypes function objects with
    Numba's prototypes, bound to the symbol its _find_api picks, each result checked."""

    label = "internal"

    def __init__(self, lib: ctypes.CDLL, fixture: Fixture, ptds: bool, fresh: bool,
                 resolve: str = "") -> None:
        """resolve "": the symbol, as Numba binds it; "symbol" or "proc": a CFUNCTYPE prototype
        called at the symbol's address or at the one cuGetProcAddress hands out (the `proc`
        path), two objects of one type whose only difference is the address (calibrate)."""
        self.symbols, self.fns, self.addresses = {}, {}, {}
        for base, argtypes in PROTOTYPES.items():
            symbol = find_api(lib, base, ptds)
            if resolve:
                address = (proc_address(lib, base, ptds) if resolve == "proc"
                           else ctypes.cast(lib[symbol], VOIDP).value)
                fn = ctypes.CFUNCTYPE(INT, *argtypes)(address)
            else:
                # lib[name] builds a new function object each time; getattr caches one per symbol.
                fn = lib[symbol] if fresh else getattr(lib, symbol)
                fn.restype, fn.argtypes = INT, argtypes
                address = ctypes.cast(fn, VOIDP).value
            self.symbols[base], self.fns[base], self.addresses[base] = symbol, fn, address
        self.fx = fixture

    def ops(self) -> dict:
        f, fx = self.fns, self.fx
        ctx, ptr = VOIDP(), DEVPTR()
        ctx_ref, ptr_ref = ctypes.byref(ctx), ctypes.byref(ptr)
        stream, function, event = VOIDP(fx.stream), VOIDP(fx.function), VOIDP(fx.event)
        buf, host = DEVPTR(fx.buffer), fx.host_address
        get, alloc, free, copy = (f["cuCtxGetCurrent"], f["cuMemAlloc"], f["cuMemFree"],
                                  f["cuMemcpyHtoD"])
        launch, sync, record, query = (f["cuLaunchKernel"], f["cuStreamSynchronize"],
                                       f["cuEventRecord"], f["cuEventQuery"])

        def ctx_get_current():
            rc = get(ctx_ref)
            if rc:
                fail("cuCtxGetCurrent", rc)

        def mem_alloc_free():
            rc = alloc(ptr_ref, 4096)
            if rc:
                fail("cuMemAlloc", rc)
            rc = free(ptr)
            if rc:
                fail("cuMemFree", rc)

        def memcpy_htod():
            rc = copy(buf, host, 4)
            if rc:
                fail("cuMemcpyHtoD", rc)

        def launch_one():
            rc = launch(function, 1, 1, 1, 1, 1, 1, 0, stream, None, None)
            if rc:
                fail("cuLaunchKernel", rc)

        def stream_sync():
            rc = sync(stream)
            if rc:
                fail("cuStreamSynchronize", rc)

        def record_query():
            rc = record(event, stream)
            if rc:
                fail("cuEventRecord", rc)
            rc = query(event)
            if rc and rc != CUDA_ERROR_NOT_READY:
                fail("cuEventQuery", rc)

        return ops_table(ctx_get_current, mem_alloc_free, memcpy_htod, launch_one, stream_sync,
                         record_query)


class NvidiaPath:
    """cuda.bindings' driver module (or cuda-python 12's cuda.cuda, what Numba 0.68 imports)
    called directly: each call's (CUresult, ...) tuple checked, as any caller would."""

    label = "nvidia"

    def __init__(self, module, fixture: Fixture) -> None:
        self.m = module
        self.fx = fixture
        self.symbols = {base: base for base in PROTOTYPES}
        err = module.cuInit(0)[0]
        if err != module.CUresult.CUDA_SUCCESS:
            raise CallError(f"cuInit returned {err}")

    def ops(self) -> dict:
        m, fx = self.m, self.fx
        ok, not_ready = m.CUresult.CUDA_SUCCESS, m.CUresult.CUDA_ERROR_NOT_READY
        stream, function = m.CUstream(fx.stream), m.CUfunction(fx.function)
        event, buf, host = m.CUevent(fx.event), m.CUdeviceptr(fx.buffer), fx.host_address
        get, alloc, free, copy = m.cuCtxGetCurrent, m.cuMemAlloc, m.cuMemFree, m.cuMemcpyHtoD
        launch, sync = m.cuLaunchKernel, m.cuStreamSynchronize
        record, query = m.cuEventRecord, m.cuEventQuery

        def ctx_get_current():
            err, _ = get()
            if err != ok:
                fail("cuCtxGetCurrent", err)

        def mem_alloc_free():
            err, ptr = alloc(4096)
            if err != ok:
                fail("cuMemAlloc", err)
            (err,) = free(ptr)
            if err != ok:
                fail("cuMemFree", err)

        def memcpy_htod():
            (err,) = copy(buf, host, 4)
            if err != ok:
                fail("cuMemcpyHtoD", err)

        def launch_one():
            (err,) = launch(function, 1, 1, 1, 1, 1, 1, 0, stream, 0, 0)
            if err != ok:
                fail("cuLaunchKernel", err)

        def stream_sync():
            (err,) = sync(stream)
            if err != ok:
                fail("cuStreamSynchronize", err)

        def record_query():
            (err,) = record(event, stream)
            if err != ok:
                fail("cuEventRecord", err)
            (err,) = query(event)
            if err != ok and err != not_ready:
                fail("cuEventQuery", err)

        return ops_table(ctx_get_current, mem_alloc_free, memcpy_htod, launch_one, stream_sync,
                         record_query)


class NumbaFacade:
    """Numba's Driver facade as Numba's own code calls it (`driver.cuXxx(...)`, attribute lookup
    included), with the binding Numba chose: its wrapper checks each result and raises."""

    def __init__(self, nd, use_nv: bool, fixture: Fixture) -> None:
        self.nd, self.use_nv, self.fx = nd, use_nv, fixture
        nd.driver.cuCtxGetCurrent  # first use initialises the facade (cuInit), untimed

    def ops(self) -> dict:
        d, fx, nd = self.nd.driver, self.fx, self.nd
        api_error = getattr(nd, "CudaAPIError", Exception)
        if self.use_nv:
            b = nd.binding
            stream, function = b.CUstream(fx.stream), b.CUfunction(fx.function)
            event, buf = b.CUevent(fx.event), b.CUdeviceptr(fx.buffer)
            null, ctx_args, ptr_of = 0, (), None
        else:
            stream, function, event = VOIDP(fx.stream), VOIDP(fx.function), VOIDP(fx.event)
            buf, null = DEVPTR(fx.buffer), None
            ctx, ptr = VOIDP(), DEVPTR()
            ctx_args, ptr_of = (ctypes.byref(ctx),), ptr
        host = fx.host_address
        use_nv = self.use_nv
        not_ready = [CUDA_ERROR_NOT_READY]
        if use_nv:
            not_ready.append(nd.binding.CUresult.CUDA_ERROR_NOT_READY)
        ptr_ref = None if use_nv else ctypes.byref(ptr_of)

        def ctx_get_current():
            d.cuCtxGetCurrent(*ctx_args)

        def mem_alloc_free():
            if use_nv:
                d.cuMemFree(d.cuMemAlloc(4096))
            else:
                d.cuMemAlloc(ptr_ref, 4096)
                d.cuMemFree(ptr_of)

        def memcpy_htod():
            d.cuMemcpyHtoD(buf, host, 4)

        def launch_one():
            d.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, null, null)

        def stream_sync():
            d.cuStreamSynchronize(stream)

        def record_query():
            d.cuEventRecord(event, stream)
            try:  # as Numba's Event.query: not ready is an answer, not an error
                d.cuEventQuery(event)
            except api_error as e:
                if getattr(e, "code", None) not in not_ready:
                    raise

        return ops_table(ctx_get_current, mem_alloc_free, memcpy_htod, launch_one, stream_sync,
                         record_query)


def ops_table(ctx_get_current, mem_alloc_free, memcpy_htod, launch_one, stream_sync,
              record_query) -> dict:
    """probe -> (op, calls per iteration, batch drained untimed: True drains the Fixture's
    stream, a function drains the series' own)."""
    return {
        "py.ctx.get_current": (ctx_get_current, 1, False),
        "py.mem.alloc_free_4k": (mem_alloc_free, 1, False),
        "py.memcpy.htod_4b": (memcpy_htod, 1, False),
        "py.launch.empty_kernel": (launch_one, LAUNCH_BATCH, True),
        "py.stream.sync_idle": (stream_sync, 1, False),
        "py.event.record_query": (record_query, 1, False),
    }


PROBE_SYMBOLS = {
    "py.ctx.get_current": ["cuCtxGetCurrent"],
    "py.mem.alloc_free_4k": ["cuMemAlloc", "cuMemFree"],
    "py.memcpy.htod_4b": ["cuMemcpyHtoD"],
    "py.launch.empty_kernel": ["cuLaunchKernel"],
    "py.stream.sync_idle": ["cuStreamSynchronize"],
    "py.event.record_query": ["cuEventRecord", "cuEventQuery"],
}


def spun(op, ns: int):
    """`op` after a busy wait of `ns` ns on perf_counter_ns: the calibration's known delay. With
    ns = 0 the wrapper still reads the clock twice, so a delayed and an undelayed series differ
    by the wait alone (spin_cost measures what the wait really costs, the clock's steps
    included)."""
    clock = time.perf_counter_ns

    def call():
        end = clock() + ns
        while clock() < end:
            pass
        return op()

    return call


def delayed(table: dict, ns: int) -> dict:
    """An ops table (probe -> (op, calls, batch)) with every op behind spun(op, ns)."""
    return {probe: (spun(op, ns), calls, batch) for probe, (op, calls, batch) in table.items()}


def spin_cost(ns: int) -> float:
    """What spun(op, ns) costs beyond spun(op, 0), per call, in ns: the median of 7 interleaved
    pairs of 2,000-call loops. Reported beside the delay asked for (the wait ends at the first
    clock reading past it, so it overshoots by part of one reading)."""
    if ns <= 0:
        return 0.0
    def nothing():
        return None
    slow, fast, n = spun(nothing, ns), spun(nothing, 0), 2000
    diffs = []
    for _ in range(7):
        diffs.append((timed_loop(slow, n) - timed_loop(fast, n)) / n)
    return significant(median(diffs))


def block_function(op, batch: bool, fixture: Fixture):
    """A series' block: `n` iterations, timed. A launch iteration is a batch of LAUNCH_BATCH
    launches, timed, then the stream drained untimed (as the C++ launch probes)."""
    if not batch:
        return lambda n: timed_loop(op, n)
    drain = batch if callable(batch) else fixture.drain

    def batches(n: int) -> int:
        clock, total = time.perf_counter_ns, 0
        for _ in repeat(None, n):
            t0 = clock()
            for _ in repeat(None, LAUNCH_BATCH):
                op()
            total += clock() - t0
            drain()
        return total

    return batches


# ---- the libraries: CuPy and cuda.core ----------------------------------------------------------
#
# One context for every series: the Fixture makes device 0's primary context current on this
# thread, and both libraries work in that same context. CuPy's runtime calls take the context
# current on the thread (the runtime/driver interoperability rule) and its Device(0).use() binds
# device 0's primary context; cuda.core's Device(0).set_current() retains that primary context
# and sets it current. Fixture.keep_current checks it after each library starts.


class LibraryPath:
    """A library's ops, what its users call for each operation. Each is built and tried once,
    untimed, at start: an op the library has no call for, or whose call this release lacks or
    refuses, is absent from the series with its reason (named in probe_pairs), never an error of
    the cell. The library's own calls check their results (they raise)."""

    label = ""

    def __init__(self) -> None:
        self.table, self.absent = {}, {}

    def add(self, probe: str, build) -> None:
        """build() -> (op, drain or None): the drain empties the series' own stream, untimed."""
        try:
            op, drain = build()
            op()
            if drain:
                drain()
        except Exception as e:  # the library's errors, or an API this release does not have
            self.absent[probe] = f"{self.label}: {type(e).__name__}: {e}"
            return
        calls = LAUNCH_BATCH if probe == "py.launch.empty_kernel" else 1
        self.table[probe] = (op, calls, drain or False)

    def lacks(self, probe: str, why: str) -> None:
        self.absent[probe] = f"{self.label}: {why}"

    def ops(self) -> dict:
        return self.table


def ptx_file() -> str:
    """The empty kernel as a .ptx file (CuPy's RawModule loads modules from a path), removed at
    exit."""
    folder = tempfile.mkdtemp(prefix="cuparity-pyprobe-ptx-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "cuparity_empty.ptx")
    with open(path, "wb") as f:
        f.write(EMPTY_KERNEL_PTX.rstrip(b"\0"))
    return path


class CupyPath(LibraryPath):
    """CuPy (13, 14) as its users call it. Its driver calls (cupy.cuda.driver, RawKernel's launch)
    bind libcuda's exported symbols: linked against them up to CuPy 13, dlsym'd by CuPy 14's
    SoftLink, so the C++ figure they are set against is the internal pointer. Its runtime calls
    (cupy.cuda.runtime, Stream, Event) go through libcudart, which resolves the driver itself."""

    label = "cupy"

    def __init__(self, cupy, fixture: Fixture) -> None:
        super().__init__()
        self.cp, self.cuda, self.fx = cupy, cupy.cuda, fixture
        self.cuda.Device(0).use()  # device 0's primary context: the Fixture's
        self.stream = self.cuda.Stream(non_blocking=True)
        self.stream.use()  # a RawKernel launches on CuPy's current stream
        self.add("py.ctx.get_current", self._ctx)
        self.add("py.mem.alloc_free_4k", self._alloc)
        self.add("py.memcpy.htod_4b", self._copy)
        self.add("py.launch.empty_kernel", self._launch)
        self.add("py.stream.sync_idle", self._sync)
        self.add("py.event.record_query", self._event)

    def _ctx(self):
        get = self.cuda.driver.ctxGetCurrent  # cuCtxGetCurrent

        def ctx_get_current():
            get()
        return ctx_get_current, None

    def _alloc(self):
        malloc, free = self.cuda.runtime.malloc, self.cuda.runtime.free  # cudaMalloc, cudaFree

        def mem_alloc_free():
            free(malloc(4096))
        return mem_alloc_free, None

    def _copy(self):
        memcpy, kind = self.cuda.runtime.memcpy, self.cuda.runtime.memcpyHostToDevice
        dst, src = self.fx.buffer, self.fx.host_address

        def memcpy_htod():
            memcpy(dst, src, 4, kind)  # cudaMemcpy: synchronous for pageable host memory
        return memcpy_htod, None

    def _launch(self):
        kernel = self.cp.RawModule(path=ptx_file()).get_function("cuparity_empty")
        grid, block, args = (1,), (1,), ()

        def launch_one():
            kernel(grid, block, args)  # cuLaunchKernel on the current stream
        return launch_one, self.stream.synchronize

    def _sync(self):
        sync = self.stream.synchronize  # cudaStreamSynchronize

        def stream_sync():
            sync()
        return stream_sync, None

    def _event(self):
        event = self.cuda.Event(disable_timing=True)
        record, stream = event.record, self.stream

        def record_query():
            record(stream)  # cudaEventRecord
            return event.done  # cudaEventQuery: not ready is an answer (False), not an error
        return record_query, None


class CudaCorePath(LibraryPath):
    """cuda.core (0.3 and 0.4 as cuda.core.experimental, cuda.core itself after) as its users
    call it. It calls through cuda.bindings, whose functions are the pointers cuGetProcAddress
    hands out: the C++ figure it is set against is the nvidia pointer."""

    label = "cuda_core"

    def __init__(self, core, fixture: Fixture) -> None:
        super().__init__()
        self.core = core
        self.dev = core.Device(0)
        self.dev.set_current()  # retains device 0's primary context and sets it: the Fixture's
        self.stream = self.dev.create_stream()  # non-blocking by default (StreamOptions)
        self.add("py.ctx.get_current", self._ctx)
        self.add("py.mem.alloc_free_4k", self._alloc)
        self.lacks("py.memcpy.htod_4b", "cuda.core has no synchronous host-to-device copy "
                   "(Buffer.copy_from / copy_to are stream-ordered copies between Buffers)")
        self.add("py.launch.empty_kernel", self._launch)
        self.add("py.stream.sync_idle", self._sync)
        self.add("py.event.record_query", self._event)

    def _ctx(self):
        device = self.core.Device

        def ctx_get_current():
            device()  # the thread's current device: cuCtxGetDevice on its current context
        return ctx_get_current, None

    def _alloc(self):
        allocate, stream = self.dev.allocate, self.stream

        def mem_alloc_free():
            # The device's memory resource: its memory pool (stream-ordered) where it has one.
            allocate(4096, stream=stream).close(stream)
        return mem_alloc_free, None

    def _launch(self):
        core, ptx = self.core, EMPTY_KERNEL_PTX.rstrip(b"\0")
        if hasattr(core.ObjectCode, "from_ptx"):
            code = core.ObjectCode.from_ptx(ptx)
        else:  # releases without ObjectCode.from_ptx: PTX goes through Program
            code = core.Program(ptx.decode(), "ptx").compile("cubin")
        kernel = code.get_kernel("cuparity_empty")
        config = core.LaunchConfig(grid=1, block=1)
        launch, stream = core.launch, self.stream

        def launch_one():
            launch(stream, config, kernel)
        return launch_one, stream.sync

    def _sync(self):
        sync = self.stream.sync  # cuStreamSynchronize

        def stream_sync():
            sync()
        return stream_sync, None

    def _event(self):
        stream = self.stream
        create = getattr(self.dev, "create_event", None)
        event = create() if create else stream.record()  # timing disabled by default
        record = stream.record

        def record_query():
            record(event)  # cuEventRecord
            return event.is_done  # cuEventQuery: not ready is an answer (False)
        return record_query, None


def import_quietly(name: str, warned: list):
    """(module, None) or (None, why it does not import); its warnings, but deprecations, kept."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module, error = importlib.import_module(name), None
        except Exception as e:  # ImportError, or whatever a broken install raises
            module, error = None, f"{name}: {type(e).__name__}: {e}"
    warned.extend(str(w.message) for w in caught
                  if not issubclass(w.category, DeprecationWarning))
    return module, error


def import_cupy(warned: list):
    module, error = import_quietly("cupy", warned)
    return module, "cupy" if module else None, error


def import_cuda_core(warned: list):
    """cuda.core's API: the package itself where it holds Device (newer releases), else
    cuda.core.experimental (0.3, 0.4)."""
    errors = []
    for name in ("cuda.core", "cuda.core.experimental"):
        module, error = import_quietly(name, warned)
        if module is None:
            errors.append(error)
            break  # cuda.core itself does not import: nor does anything below it
        if all(hasattr(module, a) for a in ("Device", "LaunchConfig", "launch", "ObjectCode")):
            return module, name, None
        errors.append(f"{name} has no Device, LaunchConfig, launch and ObjectCode")
    return None, None, "; ".join(errors)


def start_library(path_class, importer, fixture: Fixture, warned: list):
    """(path or None, why it is absent or None, the module it imported)."""
    module, module_name, error = importer(warned)
    if module is None:
        return None, f"{path_class.label} does not import: {error}", None
    try:
        return path_class(module, fixture), None, module_name
    except Exception as e:  # a library that cannot start in this cell: named, never a traceback
        return None, f"{path_class.label} cannot start: {type(e).__name__}: {e}", module_name
    finally:
        fixture.keep_current(warned, path_class.label)


def library_version(module_name, distribution: str):
    version = distribution_version(distribution)
    if version is None and module_name:
        version = getattr(sys.modules.get(module_name.split(".experimental")[0]), "__version__",
                          None)
    return version


# ---- what this process really got ---------------------------------------------------------------

BINDING_VARIABLES = ("NUMBA_CUDA_USE_NVIDIA_BINDING", "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM",
                     "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "NUMBA_CUDA_DRIVER",
                     "NUMBA_CUDA_INCLUDE_PATH", "CUPARITY_NVIDIA_BACKEND", "CUPARITY_BINDING_MAP")


def import_numba(warned: list):
    """Numba's driver module as this cell's environment makes it, and what Numba decided: its
    USE_NV_BINDING (numba/core/config.py falls back to ctypes, with a warning, when the `cuda`
    package does not import)."""
    info = {"numba": None, "numba_error": None, "use_nv_binding": None, "numba_cuda_file": None}
    nd = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import numba
            info["numba"] = getattr(numba, "__version__", "unknown")
            nd = importlib.import_module("numba.cuda.cudadrv.driver")
        except Exception as e:  # ImportError, or whatever a broken install raises
            info["numba_error"] = f"{type(e).__name__}: {e}"
    warned.extend(str(w.message) for w in caught)
    config_use = getattr(sys.modules.get("numba.core.config"), "CUDA_USE_NVIDIA_BINDING", None)
    if nd is not None:
        use = getattr(nd, "USE_NV_BINDING", config_use)
        # numba-cuda from v0.21.0 has no ctypes binding and no switch (driver-facts.md).
        info["use_nv_binding"] = True if use is None else bool(use)
        info["numba_cuda_file"] = getattr(sys.modules.get("numba.cuda"), "__file__", None)
    elif config_use is not None:
        # Numba decided, then its driver module failed (Numba 0.68's `from cuda import cuda`
        # under cuda-bindings 13): what it decided is still what the cell asked of it.
        info["use_nv_binding"] = bool(config_use)
    return nd, info


def import_nvidia(warned: list):
    """cuda.bindings' driver module (cuda-python 12's cuda.cuda where it is the only one)."""
    errors = []
    for name in ("cuda.bindings.driver", "cuda.cuda"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                module = importlib.import_module(name)
            except Exception as e:
                errors.append(f"{name}: {type(e).__name__}: {e}")
                continue
        warned.extend(str(w.message) for w in caught if not issubclass(w.category,
                                                                       DeprecationWarning))
        return module, name, None
    return None, None, "; ".join(errors)


def distribution_version(name: str):
    try:
        from importlib import metadata
        return metadata.version(name)
    except Exception:
        return None


class World:
    """The process's driver, fixture, series and the config it reports in cell_start."""

    def __init__(self, aa: str, requires: list, delay_ns: int = 0) -> None:
        warned: list = []
        self.delay_ns = delay_ns
        requested_nv = numba_int("NUMBA_CUDA_USE_NVIDIA_BINDING", warned) != 0
        numba_ptds = numba_int("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", warned) != 0
        cp_ptds = numba_int("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", warned) != 0
        for module in requires:
            try:
                importlib.import_module(module)
            except Exception as e:
                raise StartError("package", f"the matrix requires the Python module {module}, "
                                 f"which does not import in this cell: {type(e).__name__}: {e}",
                                 3) from None
        self.lib = open_driver()
        self.fx = Fixture(self.lib)
        nd, ninfo = import_numba(warned)
        nv_module, nv_name, nv_error = import_nvidia(warned)
        own_nv = (ninfo["use_nv_binding"] if ninfo["use_nv_binding"] is not None
                  else requested_nv)
        numba_nv = nd.binding if (nd is not None and own_nv and hasattr(nd, "binding")) else None
        own_module = numba_nv or nv_module
        if own_nv and own_module is None:
            own_nv = False  # nothing NVIDIA imports: the cell can only run ctypes
        self.fallback = requested_nv and not own_nv
        reasons = [w for w in warned if "CUDA Python bindings requested" in w]
        self.fallback_reason = (reasons[0] if reasons else
                                (nv_error or "") if self.fallback else "")
        self.facade, self.facade_missing = None, None
        self.start_problem = None
        if nd is None:
            self.facade_missing = f"Numba's driver facade does not import: {ninfo['numba_error']}"
            if importlib.util.find_spec("numba") is not None:
                self.start_problem = (f"numba is installed but numba.cuda.cudadrv.driver does "
                                      f"not import ({ninfo['numba_error']}): the py.* facade "
                                      f"series is left out")
        else:
            try:
                self.facade = NumbaFacade(nd, own_nv, self.fx)
            except Exception as e:
                self.facade_missing = f"Numba's driver facade cannot start: {type(e).__name__}: {e}"
        if aa == "bindings":  # calibration of cuda.bindings' call path: Numba plays no part
            if nv_module is None:
                raise StartError("package", f"{OTHER_VARIABLE}=bindings calibrates cuda.bindings' "
                                 f"call path, which does not import here: {nv_error}", 3)
            own_nv, own_module, self.fallback, self.fallback_reason = True, nv_module, False, ""
            self.facade, self.start_problem = None, None
            self.facade_missing = (f"Numba's facade is not timed in calibration "
                                   f"({OTHER_VARIABLE}=bindings)")
        self.ptds = cp_ptds if own_nv else numba_ptds
        proc_mode = aa == "proc" and not own_nv
        self.direct = (NvidiaPath(own_module, self.fx) if own_nv
                       else CtypesPath(self.lib, self.fx, numba_ptds, fresh=False,
                                       resolve="symbol" if proc_mode else ""))
        self.other, self.other_missing, self.same_address = None, None, False
        try:
            if aa in ("same", "bindings"):
                self.other = (NvidiaPath(own_module, self.fx) if own_nv
                              else CtypesPath(self.lib, self.fx, numba_ptds, fresh=True))
                # A delayed direct series is no control: it differs from other by design.
                self.same_address = not delay_ns
            elif proc_mode:
                self.other = CtypesPath(self.lib, self.fx, numba_ptds, fresh=True, resolve="proc")
                self.same_address = None  # per probe: whether both pointers are one address
            elif own_nv:
                self.other = CtypesPath(self.lib, self.fx, numba_ptds, fresh=False)
            elif nv_module is not None:
                self.other = NvidiaPath(nv_module, self.fx)
            else:
                self.other_missing = f"cuda.bindings does not import: {nv_error}"
        except (CallError, AttributeError) as e:
            self.other_missing = f"the other binding cannot start: {e}"
        self.start_libraries(aa, warned)
        self.config = {
            "process": "python",
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "binding": self.direct.label,
            "requested_binding": "nvidia" if requested_nv else "internal",
            "fallback": self.fallback,
            "fallback_reason": self.fallback_reason,
            "use_nv_binding": ninfo["use_nv_binding"],
            "numba": ninfo["numba"],
            "numba_error": ninfo["numba_error"],
            "numba_cuda_file": ninfo["numba_cuda_file"],
            "numba_binding_module": getattr(numba_nv, "__name__", None),
            "nvidia_module": nv_name,
            "nvidia_error": nv_error,
            "cuda_bindings": distribution_version("cuda-bindings"),
            "cuda_python": distribution_version("cuda-python"),
            "other": self.other.label if self.other else None,
            "other_missing": self.other_missing,
            "facade_missing": self.facade_missing,
            "other_mode": aa or "binding",
            "delay_ns": delay_ns if aa == "bindings" else None,
            "delay_actual_ns": spin_cost(delay_ns) if aa == "bindings" else None,
            "cupy": library_version(self.cupy_module, "cupy"),
            "cupy_missing": self.cupy_missing,
            "cuda_core": library_version(self.cuda_core_module, "cuda-core"),
            "cuda_core_module": self.cuda_core_module,
            "cuda_core_missing": self.cuda_core_missing,
            "per_thread_default_stream": self.ptds,
            "stream0": "per-thread" if self.ptds else "legacy",
            "numba_ptds": numba_ptds,
            "cuda_python_ptds": cp_ptds,
            "driver_path": loaded_path(self.lib),
            "include_path": os.environ.get("NUMBA_CUDA_INCLUDE_PATH", "/usr/local/cuda/include"),
            "variables": {v: os.environ[v] for v in BINDING_VARIABLES if v in os.environ},
            "warnings": warned,
        }

    def start_libraries(self, aa: str, warned: list) -> None:
        """The cupy and cuda_core series, where each library imports. Not in calibration (`proc`,
        `bindings`: the delays are read on the direct and other series alone)."""
        for label, path_class, importer in (("cupy", CupyPath, import_cupy),
                                            ("cuda_core", CudaCorePath, import_cuda_core)):
            if aa in ("proc", "bindings"):
                path, missing, module = None, (f"{label} is not timed in calibration "
                                               f"({OTHER_VARIABLE}={aa})"), None
            else:
                path, missing, module = start_library(path_class, importer, self.fx, warned)
            setattr(self, label, path)
            setattr(self, label + "_missing", missing)
            setattr(self, label + "_module", module)


# ---- rounds -------------------------------------------------------------------------------------


class Prober:
    """Runs the selected probes' rounds and writes their events."""

    def __init__(self, world: World, probes: list, min_time: float, block_time: float,
                 probe_times: dict, events: Events) -> None:
        self.world, self.probes, self.events = world, probes, events
        self.min_time, self.block_time, self.probe_times = min_time, block_time, probe_times
        self.ops = {"direct": world.direct.ops()}
        if world.config["other_mode"] == "bindings" and world.other is not None:
            self.ops = {"direct": delayed(self.ops["direct"], world.delay_ns),
                        "other": delayed(world.other.ops(), 0)}
        for series in ("facade", "other") + LIBRARY_SERIES:
            path = getattr(world, series)
            if path is None or series in self.ops:
                continue
            try:
                self.ops[series] = path.ops()
            except Exception as e:  # the binding lacks a type or function the probes call
                setattr(world, series, None)
                setattr(world, series + "_missing", f"{series} series: {type(e).__name__}: {e}")

    def run_probe(self, probe: str, flip: bool, round_: int) -> None:
        w = self.world
        _, calls, _ = self.ops["direct"][probe]
        blocks, absent = {}, {}
        for s, table in self.ops.items():
            if probe not in table:  # a library with no call for this operation
                absent[s] = getattr(getattr(w, s), "absent", {}).get(probe, f"{s}: no {probe}")
                continue
            op, _, batch = table[probe]
            blocks[s] = block_function(op, batch, w.fx)
        budget = self.probe_times.get(probe, self.min_time)
        failed = {}
        while "direct" in blocks:
            try:
                times, iterations = run_blocks(blocks, self.block_time, budget, flip)
                break
            except (CallError, Exception) as e:  # the binding's own errors are Exceptions too
                failing = self._failing_series(blocks, probe, e)
                failed[failing] = f"{type(e).__name__}: {e}"
                del blocks[failing]
        if "direct" not in blocks:
            self._series_event(probe, "direct", [], 0, calls, round_, failed.get("direct"))
            return
        per_call = {s: [significant(ns / (iterations * calls)) for ns in v]
                    for s, v in times.items()}
        for s in ALL_SERIES:
            if s in per_call:
                self._series_event(probe, s, per_call[s], iterations, calls, round_, None)
            elif s in failed:
                self._series_event(probe, s, [], 0, calls, round_, failed[s])
        self._pairs_event(probe, round_, per_call, iterations, failed, absent)

    def _failing_series(self, blocks: dict, probe: str, error: Exception) -> str:
        """Which series raised: each is tried alone for one block (the error is deterministic
        for a binding that cannot make the call)."""
        for s in LIBRARY_SERIES + ("other", "facade", "direct"):
            if s in blocks:
                try:
                    blocks[s](1)
                except Exception:
                    return s
        return "direct"

    def _series_event(self, probe, series, values, iterations, calls, round_, error) -> None:
        ev = {"event": "probe", "probe": probe, "series": series, "kind": "host", "unit": "ns",
              "iterations": len(values) * iterations, "blocks": len(values), "round": round_}
        if values:
            ev["value"] = median(values)
        else:
            ev["error"] = error or "no measurement"
        self.events.write(ev)

    def _pairs_event(self, probe, round_, per_call, iterations, failed, absent) -> None:
        w = self.world
        ev = {"event": "probe_pairs", "probe": probe, "round": round_,
              "own": w.direct.label, "other": w.other.label if w.other else "",
              "same_address": "other" in per_call and self._same_address(probe),
              "block_iterations": iterations,
              "symbols": [w.direct.symbols.get(b, b) if isinstance(w.direct, CtypesPath)
                          else find_symbol(w, b) for b in PROBE_SYMBOLS[probe]],
              "per_call_ns": per_call,
              "requested": w.config["requested_binding"], "fallback": w.fallback}
        missing = failed.get("other") or w.other_missing
        if missing:
            ev["other_missing"] = missing
        facade_missing = failed.get("facade") or w.facade_missing
        if facade_missing:
            ev["facade_missing"] = facade_missing
        for s in LIBRARY_SERIES:  # a figure beside the bindings' series, or why there is none
            missing = failed.get(s) or absent.get(s) or getattr(w, s + "_missing")
            if s not in per_call and missing:
                ev[s + "_missing"] = missing
        self.events.write(ev)

    def _same_address(self, probe: str) -> bool:
        w = self.world
        if w.same_address is not None:
            return w.same_address
        return all(w.direct.addresses[b] == w.other.addresses[b] for b in PROBE_SYMBOLS[probe])

    def run_round(self, round_: int, flip: bool) -> None:
        for probe in self.probes:
            self.run_probe(probe, flip, round_)
        self.events.write({"event": "round_done", "round": round_})


def find_symbol(world: World, base: str) -> str:
    """The exported symbol the ctypes path binds for `base` (what a dlsym delay must slow)."""
    try:
        return find_api(world.lib, base, world.config["numba_ptds"])
    except CallError:
        return base


# ---- the command line ---------------------------------------------------------------------------


def selected(globs: list) -> list:
    if not globs:
        return list(PROBES)
    return [p for p in PROBES if any(fnmatch.fnmatchcase(p, g) for g in globs)]


def parse_probe_times(items: list) -> dict:
    out = {}
    for item in items:
        name, eq, text = item.partition("=")
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
        if not eq or name not in PROBES or not (1e-4 <= seconds <= 3600):
            raise ValueError(f"--probe-time {item}: want <probe>=<seconds> with a py.* probe of "
                             f"--list and seconds from 0.0001 to 3600")
        out[name] = seconds
    return out


def parse_args(argv: list) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="cuparity_pyprobe.py",
                                 description="cuparity's Python latency probe process")
    ap.add_argument("--probe", action="append", default=[], help="probe glob (repeatable)")
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--probe-time", action="append", default=[])
    ap.add_argument("--block-time", type=float, default=2.5e-4)
    ap.add_argument("--cpu", type=int, default=-2)
    ap.add_argument("--flip", action="store_true")
    ap.add_argument("--serve", action="store_true")
    ap.add_argument("--events-fd", type=int, default=1)
    ap.add_argument("--aa", action="store_true",
                    help="the other series is this binding again (an A/A control)")
    ap.add_argument("--require", action="append", default=[],
                    help="a Python module that must import, else the cell's error")
    ap.add_argument("--list", action="store_true")
    return ap.parse_args(argv)


def pin_cpu(wanted: int) -> None:
    """The last allowed CPU, as `cuparity probe` (its latencies depend on the core)."""
    if wanted == -1 or not hasattr(os, "sched_setaffinity"):
        return
    try:
        cpu = wanted if wanted >= 0 else max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    except OSError:
        print(f"cuparity_pyprobe: cannot pin to CPU {wanted}; running unpinned", file=sys.stderr)


def serve(prober: Prober, events: Events) -> None:
    for line in sys.stdin:
        words = line.split()
        try:
            if len(words) != 3 or words[0] != "round":
                raise ValueError
            round_, flip = int(words[1]), int(words[2])
        except ValueError:
            events.write({"event": "probe_error", "message": f"bad command '{line.rstrip()}'"})
            continue
        prober.run_round(round_, flip != 0)


def read_delay(aa: str) -> tuple:
    """CUPARITY_PYPROBE_DELAY_NS: (ns, "") or (0, why it cannot be used)."""
    text = os.environ.get(DELAY_VARIABLE)
    if text is None:
        return 0, ""
    if aa != "bindings":
        return 0, (f"{DELAY_VARIABLE}={text}: a delay is read only with {OTHER_VARIABLE}=bindings "
                   f"(this process has {OTHER_VARIABLE}='{aa}')")
    try:
        ns = int(text)
    except ValueError:
        ns = -1
    if not 0 <= ns <= MAX_DELAY_NS:
        return 0, f"{DELAY_VARIABLE}='{text}': want whole nanoseconds from 0 to {MAX_DELAY_NS}"
    return ns, ""


def start_failed(events: Events, kind: str, message: str, code: int) -> int:
    events.write({"event": "cell_error", "kind": kind, "message": f"python probe: {message}"})
    print(f"cuparity_pyprobe: {message}", file=sys.stderr)
    return code


def main(argv: list) -> int:
    args = parse_args(argv)
    if args.list:
        for p in PROBES:
            print(f"{p}  host (ns)")
        return 0
    try:
        probe_times = parse_probe_times(args.probe_time)
    except ValueError as e:
        print(f"cuparity_pyprobe: {e}", file=sys.stderr)
        return 2
    probes = selected(args.probe)
    try:
        os.fstat(args.events_fd)
    except OSError:
        print(f"cuparity_pyprobe: --events-fd {args.events_fd}: not an open file descriptor",
              file=sys.stderr)
        return 2
    reexec_with_driver_first()
    atexit.register(remove_driver_dir)
    pin_cpu(args.cpu)
    events = Events(args.events_fd)
    aa = "same" if args.aa else os.environ.get(OTHER_VARIABLE, "")
    if aa not in ("", "same", "proc", "bindings"):
        return start_failed(events, "config", f"{OTHER_VARIABLE}='{aa}': want 'same' (an A/A "
                            "control), 'proc' (ctypes through cuGetProcAddress's pointer) or "
                            "'bindings' (cuda.bindings twice, the calibration's delay)", 2)
    delay_ns, why = read_delay(aa)
    if why:
        return start_failed(events, "config", why, 2)
    try:
        world = World(aa, args.require, delay_ns)
        prober = Prober(world, probes, args.min_time, args.block_time, probe_times, events)
    except StartError as e:
        return start_failed(events, e.kind, str(e), e.code)
    except Exception as e:  # a binding that breaks while it starts: named, never a traceback
        return start_failed(events, "driver", f"{type(e).__name__}: {e}", 3)
    world.config["other"] = world.other.label if world.other else None
    for series in ("other", "facade") + LIBRARY_SERIES:  # as the Prober left them
        world.config[series + "_missing"] = getattr(world, series + "_missing")
    events.write({"event": "cell_start", "process": "python", "pid": os.getpid(),
                  "config": world.config, "driver": {"path": world.config["driver_path"]}})
    if world.start_problem:
        events.write({"event": "probe_error", "message": f"python probe: {world.start_problem}"})
    if args.serve:
        serve(prober, events)
    else:
        prober.run_round(0, args.flip)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
