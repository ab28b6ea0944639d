#!/usr/bin/env python3
"""Records which driver symbols an installed CUDA Python package really binds.

    python3 tools/capture/cuparity_capture.py --package cuda.bindings|numba --out FILE

Run it with the Python that holds the package and under the environment to be audited (the
per-thread default stream variables are read by the package, not by this script). It imports the
package in a child Python of its own (the same interpreter and flags, the same environment), asks
it for the function pointers it resolved, names each pointer with dladdr(3), and writes a versioned
binding map (schema "cuparity.binding_map/1", described in tools/capture/README.md) for
`cuparity audit --map FILE`. A package that fails to import or to load the driver is recorded too:
the map is written with status "import_failed" or "load_failed", the exception as
"<Type>: <message>" (or how the package ended its process: "package exited during import (exit
status 0)", "package was killed by signal 9 (SIGKILL) while binding the driver") and no entries.
An old map at --out is removed before the package runs, so it is never left to pass for this run's.

Exit status: 0 when a map with entries was written; 1 when nothing was captured (the package is
missing, failed to import or to load the driver, ended its process, or bound no function: a map
saying why is written, and the message names the package and the error) or for a fault of this
script; 2 for bad usage or an --out that cannot be written (the message names the path): its
folder is missing or not writable, or it exists and is not a regular file (a directory, a device
node such as /dev/null, a FIFO, a socket, or a symbolic link, even one to a regular file: the
rename would put a regular file in its place); 3 when a write fails (the map on --out, e.g. a full
device, the old map's removal, standard output or error); 130 when interrupted (no map written).

The map is valid UTF-8 JSON, which `cuparity audit` reads: text that holds bytes that are not UTF-8
(an environment variable such as CUDA_VISIBLE_DEVICES=$'0\\xff', a library path) has each such
byte written as the four characters \\xNN (backslash, x, two hex digits), see visible_text().

Standard library only, so that it runs under whatever Python holds the package, and nothing of
reports/ (this script stands alone). Importable: capture(kind) returns the map as a dict,
write_map(doc, path) writes it atomically, base_function_name(raw) is the entry-name
normalisation, describe_address(ptr) the dladdr lookup, describe_table(table) a whole
_inspect_function_pointers() table so named (the start-up hook of `cuparity capture` uses it,
python_hook/sitecustomize.py), visible_text(s) the escaping above.
"""

from __future__ import annotations

import collections
import ctypes
import importlib
import json
import os
import re
import stat
import sys

# argparse, ctypes.util, datetime, importlib.metadata, platform, signal, subprocess and tempfile are
# imported where they are used: `cuparity capture`'s start-up hook loads this file at the exit of
# every process that imported cuda.bindings, for describe_table and _package_info alone, and those
# imports cost that process tens of milliseconds (issue 49, the capture's cost).

SCHEMA = "cuparity.binding_map/1"

KINDS = ("cuda.bindings", "numba")

# Recorded as they are when the capture starts (None when unset).
ENVIRONMENT_VARIABLES = (
    "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM",
    "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM",
    "NUMBA_CUDA_DRIVER",
    "NUMBA_CUDA_USE_NVIDIA_BINDING",
    "CUDA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
)

# cuda.bindings: the module whose _inspect_function_pointers() returns the resolved driver table.
# 12.x/13.x keep it in _bindings.cydriver; newer trees generate it as _internal.driver. The first
# that imports and has the function is used.
CUDA_BINDINGS_TABLE_MODULES = ("cuda.bindings._bindings.cydriver", "cuda.bindings._internal.driver")
CUDA_BINDINGS_DISTRIBUTIONS = ("cuda-bindings", "cuda-python")

NUMBA_DRIVER_MODULE = "numba.cuda.cudadrv.driver"
NUMBA_PROTOTYPES_MODULE = "numba.cuda.cudadrv.drvapi"
NUMBA_DISTRIBUTIONS = ("numba-cuda", "numba")

_SUFFIX = re.compile(r"_(?:v[0-9]+|ptds|ptsz)$")


class CaptureFailed(Exception):
    """The package could not be captured; status is "import_failed" or "load_failed"."""

    def __init__(self, status: str, error: str):
        super().__init__(error)
        self.status = status
        self.error = error


def describe_exception(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def base_function_name(raw: str) -> str:
    """The name cuGetProcAddress takes for a package's key or a driver symbol.

    Leading underscores go, then trailing `_v<N>`, `_ptds` and `_ptsz` suffixes, repeatedly:
    "__cuMemcpyHtoD_v2" -> "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds" -> "cuMemcpyHtoD",
    "__cuCtxCreate_v4" -> "cuCtxCreate", "cuStreamSynchronize" stays.
    """
    name = raw.lstrip("_")
    while True:
        m = _SUFFIX.search(name)
        if m is None or m.start() == 0:
            return name
        name = name[: m.start()]


# --- dladdr ---------------------------------------------------------------------------------


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


_dladdr = None


def _load_dladdr():
    global _dladdr
    if _dladdr is not None:
        return _dladdr
    def candidates():
        yield None  # the process: glibc >= 2.34 has dladdr in libc
        # find_library runs ldconfig -p (or gcc): only when the process has no dladdr.
        import ctypes.util

        for name in (ctypes.util.find_library("dl"), "libdl.so.2", ctypes.util.find_library("c")):
            if name:
                yield name

    for lib in candidates():
        try:
            fn = ctypes.CDLL(lib).dladdr
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        fn.restype = ctypes.c_int
        _dladdr = fn
        return fn
    raise RuntimeError("dladdr is not available (neither in the process nor in libdl)")


_POINTER_MASK = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1


def _as_address(value) -> int:
    """A pointer as an unsigned address (intptr_t values may come back negative)."""
    return int(value) & _POINTER_MASK


def describe_address(address: int):
    """(symbol, library) for a function pointer, from dladdr.

    (None, None) for a null pointer or one no loaded object contains. symbol is None unless an
    exported dynamic symbol starts exactly at the address: dladdr names the nearest symbol below,
    which for a pointer into a hidden function (a driver's internal twin) is another function.
    """
    address = _as_address(address)
    if address == 0:
        return None, None
    info = _DlInfo()
    if _load_dladdr()(ctypes.c_void_p(address), ctypes.byref(info)) == 0:
        return None, None
    library = os.fsdecode(info.dli_fname) if info.dli_fname else None
    symbol = None
    if info.dli_sname and info.dli_saddr is not None and _as_address(info.dli_saddr) == address:
        symbol = os.fsdecode(info.dli_sname)
    return symbol, library or None


def describe_table(table: dict) -> dict:
    """cuda.bindings' `_inspect_function_pointers()` table, each pointer named by dladdr:
    {"cuMemcpyHtoD_v2": {"symbol": ..., "library": ...}, ...}, keys without their two leading
    underscores, None for an address of 0 (the package holds no function). The start-up hook of
    `cuparity capture` (tools/capture/python_hook) writes this into the map's package_tables."""
    functions = {}
    for key, value in table.items():
        address = _as_address(value)
        symbol, library = describe_address(address)
        name = key[2:] if key.startswith("__") else key
        functions[name] = None if address == 0 else {"symbol": symbol, "library": library}
    return functions


def _entry(function: str, raw_name: str, address: int) -> dict:
    symbol, library = describe_address(address)
    return {"function": function, "raw_name": raw_name, "symbol": symbol, "library": library}


# --- the driver the pointers live in ----------------------------------------------------------


def _driver_of(entries) -> dict:
    """The library most pointers live in, and cuDriverGetVersion called on it through ctypes."""
    libraries = collections.Counter(e["library"] for e in entries if e["library"])
    if not libraries:
        return {"path": None, "version": None}
    path = sorted(libraries.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return {"path": path, "version": _driver_version(path)}


def _driver_version(path: str):
    try:
        # Already loaded by the package: NOLOAD takes that copy and never maps a second one.
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        fn = lib.cuDriverGetVersion
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    fn.restype = ctypes.c_int
    version = ctypes.c_int(0)
    if fn(ctypes.byref(version)) != 0:
        return None
    return version.value


# --- package identity -------------------------------------------------------------------------


def _owning_distribution(candidates, module_file):
    """The installed distribution among candidates whose files include module_file.

    Checking ownership, not just presence, keeps a shadowing copy on PYTHONPATH (or numba-cuda's
    numba.cuda inside numba) from being reported with another distribution's version.
    """
    import importlib.metadata
    if not module_file:
        return None
    target = os.path.realpath(module_file)
    base = os.path.basename(target)
    for name in candidates:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        files = dist.files
        if files is None:
            root = os.path.realpath(str(dist.locate_file("")))
            if target.startswith(root + os.sep):
                return dist
            continue
        for f in files:
            if f.name == base and os.path.realpath(str(dist.locate_file(f))) == target:
                return dist
    return None


def _installed_distribution(candidates):
    import importlib.metadata
    for name in candidates:
        try:
            return importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _package_info(kind, module_name, distributions, module):
    """{"kind", "name", "version"} for the imported module (or, when it did not import, for
    whichever candidate distribution is installed)."""
    if module is not None:
        dist = _owning_distribution(distributions, getattr(module, "__file__", None))
    else:
        dist = _installed_distribution(distributions)
    if dist is not None:
        return {"kind": kind, "name": dist.metadata["Name"], "version": dist.version}
    version = getattr(module, "__version__", None) if module is not None else None
    return {"kind": kind, "name": module_name, "version": None if version is None else str(version)}


def _import(name):
    try:
        return importlib.import_module(name)
    except BaseException as e:  # SystemExit and KeyboardInterrupt raised by the package too
        raise CaptureFailed("import_failed", describe_exception(e)) from e


def _is_missing(e: BaseException, module_name: str) -> bool:
    """Whether e says that module_name itself (or a parent package of it) does not exist."""
    if not isinstance(e, ModuleNotFoundError) or not e.name:
        return False
    return module_name == e.name or module_name.startswith(e.name + ".")


# --- cuda.bindings ----------------------------------------------------------------------------


def _cuda_bindings_table_function():
    """_inspect_function_pointers of the first table module that has it."""
    first_error = None
    for name in CUDA_BINDINGS_TABLE_MODULES:
        try:
            module = importlib.import_module(name)
        except BaseException as e:
            if _is_missing(e, name):
                first_error = first_error or e
                continue
            raise CaptureFailed("import_failed", describe_exception(e)) from e
        fn = getattr(module, "_inspect_function_pointers", None)
        if callable(fn):
            return fn
        first_error = first_error or AttributeError(
            f"module '{name}' has no attribute '_inspect_function_pointers'"
        )
    raise CaptureFailed("import_failed", describe_exception(first_error))


def _capture_cuda_bindings(state):
    top = _import("cuda.bindings")
    state["package"] = _package_info("cuda.bindings", "cuda.bindings", CUDA_BINDINGS_DISTRIBUTIONS, top)
    _note(state, "import")
    inspect = _cuda_bindings_table_function()
    _note(state, "bind")
    try:
        # Binds the driver on first use (cuPythonInit): dlopen, cuGetProcAddress per function,
        # _ptds/_ptsz variants when CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM says so.
        table = inspect()
        if not isinstance(table, dict):
            raise TypeError(f"_inspect_function_pointers() returned {type(table).__name__}, not dict")
        # {"__cuMemAlloc_v2": <intptr_t>, ...}; 0 where the package found no function.
        pairs = [(str(key), _as_address(value)) for key, value in table.items()]
    except BaseException as e:
        raise CaptureFailed("load_failed", describe_exception(e)) from e
    return [_entry(base_function_name(key), key, address) for key, address in pairs]


# --- numba ------------------------------------------------------------------------------------


def _capture_numba(state):
    top = _import("numba")
    state["package"] = _package_info("numba", "numba", NUMBA_DISTRIBUTIONS, top)
    _note(state, "import")
    driver_module = _import(NUMBA_DRIVER_MODULE)
    # Report the distribution that holds the driver binding: numba-cuda may provide numba.cuda.
    owner = _owning_distribution(NUMBA_DISTRIBUTIONS, getattr(driver_module, "__file__", None))
    if owner is not None:
        state["package"] = {"kind": "numba", "name": owner.metadata["Name"], "version": owner.version}
    _note(state, "import")
    prototypes = _import(NUMBA_PROTOTYPES_MODULE)
    _note(state, "bind")
    try:
        names = list(prototypes.API_PROTOTYPES)
        driver = driver_module.driver
        init_error = getattr(driver, "initialization_error", None)
        if init_error is not None:
            # What numba raises at the first driver call when loading the library failed.
            raise CaptureFailed("load_failed", f"CudaSupportError: {init_error}")
        found = []
        for name in names:
            fn = driver._find_api(name)
            # A ctypes function of the driver library, or numba's absent_function stand-in.
            address = ctypes.cast(fn, ctypes.c_void_p).value if isinstance(fn, ctypes._CFuncPtr) else 0
            found.append((str(name), address or 0))
    except CaptureFailed:
        raise
    except BaseException as e:
        raise CaptureFailed("load_failed", describe_exception(e)) from e
    return [_entry(base_function_name(name), name, address) for name, address in found]


_CAPTURERS = {"cuda.bindings": _capture_cuda_bindings, "numba": _capture_numba}


# --- the map ----------------------------------------------------------------------------------


def _note(state: dict, phase: str) -> None:
    """Tells state's progress callback, if any, the phase the capture enters and the package known
    so far: a package can end the process (os._exit, a signal) in any of them."""
    progress = state.get("progress")
    if progress is not None:
        progress(phase, state.get("package"))


def _distributions(kind: str):
    return CUDA_BINDINGS_DISTRIBUTIONS if kind == "cuda.bindings" else NUMBA_DISTRIBUTIONS


def document(kind, package, environment, status, error, entries) -> dict:
    """A binding map (a dict) of these parts; package None: whichever candidate is installed."""
    import datetime
    import platform
    if package is None:
        # Never imported: report whichever candidate distribution is installed, if any.
        package = _package_info(kind, kind, _distributions(kind), None)
    entries = sorted(entries, key=lambda e: (e["function"], e["raw_name"]))
    driver = _driver_of(entries) if status == "ok" else {"path": None, "version": None}
    return {
        "schema": SCHEMA,
        "package": package,
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "environment": environment,
        "driver": driver,
        "status": status,
        "error": error,
        "captured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "entries": entries,
    }


def recorded_environment() -> dict:
    return {name: os.environ.get(name) for name in ENVIRONMENT_VARIABLES}


def capture(kind: str, progress=None) -> dict:
    """The binding map of the package `kind` under the current environment, as a dict, taken in
    this process. progress(phase, package), when given, is called as the capture enters "import"
    (the package's modules are imported) and "bind" (the package binds the driver, its pointers
    are named)."""
    if kind not in _CAPTURERS:
        raise ValueError(f"unknown package kind {kind!r} (expected one of {', '.join(KINDS)})")
    environment = recorded_environment()
    state = {"progress": progress}  # the capturer sets "package" once the top module has imported
    _note(state, "import")
    status, error, entries = "ok", "", []
    try:
        entries = _CAPTURERS[kind](state)
    except CaptureFailed as e:
        status, error, entries = e.status, e.error, []
    return document(kind, state.get("package"), environment, status, error, entries)


# A lone surrogate: what Python makes of a byte that is not UTF-8 (os.environ, os.fsdecode and
# sys.executable use surrogateescape: byte 0xNN becomes U+DCNN), or one an exception message holds.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def visible_text(text: str) -> str:
    """text as valid Unicode: each undecodable byte as the four characters \\xNN, any other lone
    surrogate as \\uNNNN. JSON would write either as an escaped lone surrogate ("\\udcff"), which
    no UTF-8 reader takes (the C++ `audit` refuses the map). The escape is for reading, not for a
    round trip: text that already reads \\xff looks the same, and an escaped library path no longer
    names its file. A variable's value so escaped is no integer, as the bytes were none for Python."""
    return _SURROGATE.sub(_escape_surrogate, text) if _SURROGATE.search(text) else text


def visible(value):
    """value with every string in it (keys too) made visible_text."""
    if isinstance(value, str):
        return visible_text(value)
    if isinstance(value, dict):
        return {visible(k): visible(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible(v) for v in value]
    return value


def render(doc: dict) -> str:
    return json.dumps(visible(doc), indent=2) + "\n"


def _printable(text) -> str:
    """text for the terminal: characters it would act on (ESC, CR, bidirectional controls) and lone
    surrogates shown as escapes."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _target_problem(path: str):
    """Why an existing path may not be replaced by the map (it must be a regular file), or None."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        return e.strerror or str(e)
    if stat.S_ISREG(mode):
        return None
    return f"is {_kind_of(mode)}, not a regular file (the map is only written as a new or a regular file)"


class OutRefused(OSError):
    """--out is not a place to write the map; the message says why."""


def write_map(doc: dict, path: str) -> None:
    """Writes doc to path atomically: a temporary file in the same folder, then a rename. A path
    that exists and is not a regular file is refused (OutRefused), before and again just before
    the rename; a failure leaves an old map as it was and no temporary file."""
    import tempfile
    path = os.fspath(path)
    problem = _target_problem(path)
    if problem is not None:
        raise OutRefused(problem)
    folder = os.path.dirname(os.path.abspath(path))
    text = render(doc)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        problem = _target_problem(path)  # again: the rename replaces whatever is there now
        if problem is not None:
            raise OutRefused(problem)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _out_problem(path: str):
    """Why path cannot be written as --out, or None (checked before the package is imported)."""
    if not path:
        return "empty path"
    problem = _target_problem(path)
    if problem is not None:
        return problem
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"folder {_printable(repr(folder))} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"folder {_printable(repr(folder))} is not writable"
    return None


# --- the command: the package runs in a Python of its own ------------------------------------------
#
# A package can end the process that imports it (os._exit, a signal, a crash in its native code)
# where no exception reaches this script; in one process that was exit 0 and no map. So the
# command (the parent) removes any old --out, runs the capture in a child Python (the same
# interpreter and flags, this script with --child-fd), and writes the map itself: the child's map
# when it handed one back, else a map saying how and in which phase the package ended the child.


class _Console:
    """stderr, remembering whether a write to it failed (that ends the command with 3)."""

    failed = False

    @classmethod
    def say(cls, text: str) -> None:
        try:
            print(f"cuparity_capture: {text}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            cls.failed = True


def _send(fd: int, record: dict) -> None:
    """One JSON line to the parent (ASCII: a lone surrogate travels as a JSON escape)."""
    data = (json.dumps(record) + "\n").encode("ascii")
    while data:
        data = data[os.write(fd, data):]


def _child(kind: str, fd: int):
    """The capture in the child: phases, then the map (or this script's fault), sent on fd; then
    the child ends."""
    os.set_inheritable(fd, False)  # nothing the package starts with exec holds it
    status = 0
    try:
        doc = capture(kind, progress=lambda phase, package: _send(fd, {"phase": phase, "package": package}))
        _send(fd, {"map": doc})
    except BaseException as e:  # a fault of this script (or a failed send), not of the package
        status = 1
        try:
            _send(fd, {"fault": describe_exception(e)})
        except OSError:
            pass
    # The parent has what it needs and speaks for the command. The package's threads and exit
    # handlers are not waited for, and what it printed to a console that fails is its own affair.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(status)


def _interpreter_flags() -> list:
    import subprocess
    flags = getattr(subprocess, "_args_from_interpreter_flags", None)
    return list(flags()) if flags is not None else []


def _report_channel() -> int:
    """A file only this command and its child see, for the child's report: in memory where the
    system can (a full disk cannot lose the report), else an unlinked temporary file."""
    import tempfile
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("cuparity-capture-report")
        except OSError:
            pass
    return os.dup(tempfile.TemporaryFile().fileno())


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _records(data: bytes) -> list:
    """The child's records; a last line cut short (the child died mid-write) is dropped."""
    records = []
    for line in data.splitlines():
        try:
            records.append(json.loads(line.decode("ascii")))
        except ValueError:
            break
    return records


_PHASES = {"import": ("import_failed", "during import"), "bind": ("load_failed", "while binding the driver")}


def _how_it_ended(returncode: int, when: str, who: str = "package") -> str:
    """The map's error for a child that ended before handing back a map."""
    import signal
    if returncode >= 0:
        return f"{who} exited {when} (exit status {returncode})"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "an unknown signal"
    return f"{who} was killed by signal {-returncode} ({name}) {when}"


def _run_child(kind: str):
    """The child's map, or a map of how the package ended it; raises _Fault for this script's own."""
    import subprocess
    if not sys.executable:
        raise _Fault(3, "cannot start a Python for the package: sys.executable is empty")
    fd = _report_channel()
    try:
        cmd = [sys.executable, *_interpreter_flags(), os.path.abspath(__file__),
               "--package", kind, "--child-fd", str(fd)]
        try:
            proc = subprocess.Popen(cmd, pass_fds=(fd,))
        except OSError as e:
            raise _Fault(3, f"cannot start {_printable(repr(sys.executable))}: {e.strerror or e}")
        try:
            returncode = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        records = _records(_read_all(fd))
    finally:
        os.close(fd)
    if not records:  # capture() reports "import" before anything of the package runs
        when = "at start-up, before the capture began"
        raise _Fault(1, "capture failed: " + _how_it_ended(returncode, when, "the capture's Python"))
    phase, package = "import", None
    for r in records:
        if "map" in r:
            return r["map"]
        if "fault" in r:
            raise _Fault(1, f"capture failed: {_printable(r['fault'])}")
        phase, package = r.get("phase", phase), r.get("package") or package
    status, when = _PHASES.get(phase, _PHASES["import"])
    return document(kind, package, recorded_environment(), status, _how_it_ended(returncode, when), [])


class _Fault(Exception):
    """The command cannot go on: exit status and the message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _remove_old(path: str, shown: str) -> None:
    """Takes an old map away before anything runs: whatever happens next, it is not this run's."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise _Fault(3, f"cannot remove the old --out {shown}: {e.strerror or e}")


def _outcome(kind: str, doc: dict, shown: str):
    """(exit status, message) of a written map: 0 only when it holds what the package binds."""
    if doc["status"] != "ok":
        return 1, f"{kind}: {doc['status']}: {_printable(doc['error'])}: nothing captured (the map {shown} says why)"
    if not doc["entries"]:
        return 1, f"{kind}: the package bound no driver function (its table is empty): nothing captured ({shown})"
    return 0, f"{kind}: ok: {len(doc['entries'])} entries -> {shown}"


def _command(kind: str, out: str) -> int:
    shown = _printable(repr(out))
    problem = _out_problem(out)
    if problem is not None:
        raise _Fault(2, f"cannot write --out {shown}: {problem}")
    _remove_old(out, shown)
    doc = _run_child(kind)
    try:
        write_map(doc, out)
    except OutRefused as e:
        raise _Fault(2, f"cannot write --out {shown}: {e}")
    except OSError as e:
        raise _Fault(3, f"cannot write --out {shown}: {e.strerror or e}")
    status, message = _outcome(kind, doc, shown)
    _Console.say(message)
    return status


def _parse(argv):
    import argparse
    parser = argparse.ArgumentParser(
        prog="cuparity_capture.py",
        usage="%(prog)s [-h] --package {cuda.bindings,numba} --out FILE",
        description="Record the driver symbols an installed CUDA Python package binds.",
    )
    parser.add_argument("--package", required=True, choices=KINDS, help="which package to capture")
    parser.add_argument("--out", metavar="FILE", help="binding map to write (JSON; required)")
    parser.add_argument("--child-fd", type=int, help=argparse.SUPPRESS)  # the parent's report file
    args = parser.parse_args(argv)  # exits 2 on bad usage
    if args.out is None and args.child_fd is None:
        parser.error("the following arguments are required: --out")
    return args


def main(argv=None) -> int:
    """Exit status: 0 map written with entries; 1 nothing captured (the map says why) or a fault of
    this script; 2 bad usage or --out; 3 a write that failed, on --out or the console; 130 Ctrl-C."""
    try:
        args = _parse(argv)
    except SystemExit as e:  # --help (0) or bad usage (2), already printed
        return e.code if isinstance(e.code, int) else 2
    if args.child_fd is not None:
        return _child(args.package, args.child_fd)
    try:
        return _command(args.package, args.out)
    except _Fault as e:
        _Console.say(e.message)
        return e.status
    except KeyboardInterrupt:
        _Console.say("interrupted: no map written")
        return 130
    except Exception as e:  # a fault of this script
        _Console.say(f"capture failed: {_printable(describe_exception(e))}")
        return 1


def _exit(status: int) -> None:
    """Ends the process with status, or 3 when the console could not take what was written to it
    (Python would otherwise report the failed flush at exit with a traceback-like note and 120)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as e:
        _Console.say(f"cannot write to standard output: {e.strerror if isinstance(e, OSError) else e}")
        status = 3
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        _Console.failed = True
    os._exit(3 if _Console.failed else status)


if __name__ == "__main__":
    try:
        _exit(main())
    except (OSError, ValueError):  # argparse's own write to a console that fails
        _exit(3)
