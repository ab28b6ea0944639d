"""cuparity's start-up hook: cuda.bindings' own driver table, for `cuparity capture`.

`cuparity capture` puts this file's folder first on PYTHONPATH (docs/capture.md, "cuda.bindings'
own table"), so every Python process of the captured command imports it as `sitecustomize` at
start-up. Then it gets out of the way, as if it had never been there: it removes its folder from
sys.path and itself from sys.modules and imports the next `sitecustomize` on the path (the site's
own, if any), reporting that one's failure as site.py would. At exit (atexit), and only when the
program imported `cuda.bindings` and the package has already asked the driver for its functions,
it writes the table cuda.bindings resolved (`_inspect_function_pointers()`, each pointer named by
dladdr, with the package's version and the module it came from) into the capture's events folder,
one file per process: package-table-<pid>.json. The capture puts it in the map's package_tables[]
and the audit checks the capture against it.

Start-up costs one atexit registration: nothing else is imported, cuda.bindings never. The table
is not read when the package has not bound the driver yet (reading it would bind it, at exit,
adding bindings the program never made): its process's events file (written by the audit library)
tells whether something of the package's folder asked cuGetProcAddress. The hook never raises and
never prints for itself: whatever fails is written into its file as status "failed", and the
program's exit status is its own. Standard library only; the helpers it shares with the per-package
capture (cuparity_capture.py, installed beside it) are loaded by path at exit, under a private name.
"""

import atexit
import os
import sys

_EVENT = "package_table"
_SHARED = "_cuparity_capture_for_hook"


def _without_own_folder(here):
    """sys.path less this folder, so the program sees the path it would have seen."""
    kept = []
    for entry in sys.path:
        try:
            ours = bool(entry) and os.path.realpath(entry) == here
        except Exception:  # an entry that is no path (bytes, an odd object): not ours
            ours = False
        if not ours:
            kept.append(entry)
    sys.path[:] = kept


def _chain():
    """Imports the next sitecustomize, reporting its failure as site.execsitecustomize does."""
    try:
        try:
            import sitecustomize  # noqa: F401 -- the next one: this one left sys.path and sys.modules
        except ImportError as exc:
            if exc.name != "sitecustomize":
                raise
    except Exception as err:
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write(
                "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (err.__class__.__name__, err)
            )


# --- at exit ------------------------------------------------------------------------------------


def _shared(here):
    """cuparity_capture.py from this folder, loaded once by path (never put on sys.path)."""
    if _SHARED not in sys.modules:
        import importlib.util

        path = os.path.join(here, "cuparity_capture.py")
        spec = importlib.util.spec_from_file_location(_SHARED, path)
        if spec is None or spec.loader is None:
            raise ImportError("cannot load " + path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_SHARED] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[_SHARED]
            raise
    return sys.modules[_SHARED]


def _package_folder(top):
    where = getattr(top, "__file__", None)
    if where:
        return os.path.realpath(os.path.dirname(where))
    paths = list(getattr(top, "__path__", None) or [])
    return os.path.realpath(paths[0]) if paths else None


def _asked_driver(directory, folder):
    """Whether this process's events show an object of `folder` asking cuGetProcAddress."""
    if folder is None:
        return False
    import json

    prefix = folder.rstrip(os.sep) + os.sep
    path = os.path.join(directory, "process-%d.jsonl" % os.getpid())
    # cudart asks hundreds of times from one object: a caller already looked at (the same bytes
    # from its "caller" member on) is neither parsed nor resolved again.
    seen = set()
    with open(path, "rb") as f:
        for line in f:
            if b'"event":"proc"' not in line:
                continue
            at = line.rfind(b'"caller":')
            key = line[at:] if at >= 0 else b""
            if key in seen:
                continue
            seen.add(key)
            try:
                caller = json.loads(line.decode("utf-8", "replace")).get("caller") or ""
            except ValueError:  # a line cut short: not an event
                continue
            if os.path.realpath(caller).startswith(prefix):
                return True
    return False


def _table_module(cc):
    """(module name, module, its _inspect_function_pointers or None): the first table module of
    cuda.bindings the program imported, else (None, None, None). Nothing is imported here."""
    first = (None, None, None)
    for name in cc.CUDA_BINDINGS_TABLE_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        inspect = getattr(module, "_inspect_function_pointers", None)
        if callable(inspect):
            return name, module, inspect
        if first[0] is None:
            first = (name, module, None)
    return first


def _record(directory, here):
    cc = _shared(here)
    top = sys.modules["cuda.bindings"]
    # The module's name and __version__: the capture names the distribution (cuda-bindings or
    # cuda-python) from the RECORD listing the package's __init__.py in `folder`, as
    # importlib.metadata would, without the 20 ms that importing it costs at exit.
    version = getattr(top, "__version__", None)
    folder = _package_folder(top)
    name, module, inspect = _table_module(cc)
    record = {
        "event": _EVENT,
        "pid": os.getpid(),
        "package": "cuda.bindings",
        "version": None if version is None else str(version),
        "module": name,
        "file": getattr(module, "__file__", None),
        "folder": folder,
        "status": "ok",
        "why": "",
        "functions": {},
    }
    if name is None:
        record["status"] = "not_bound"
        record["why"] = "no table module of cuda.bindings was imported (%s)" % ", ".join(cc.CUDA_BINDINGS_TABLE_MODULES)
    elif inspect is None:
        record["status"] = "no_table"
        record["why"] = "%s has no _inspect_function_pointers(): this version of cuda.bindings shows no table" % name
    elif not _asked_driver(directory, folder):
        record["status"] = "not_bound"
        record["why"] = (
            "cuda.bindings had asked the driver for no function, so its table was not read "
            "(reading it would have bound the driver at exit)"
        )
    else:
        table = inspect()
        if not isinstance(table, dict):
            raise TypeError("_inspect_function_pointers() returned %s, not dict" % type(table).__name__)
        record["functions"] = cc.describe_table(table)
    return cc.visible(record)


def _failure(directory, error):
    return {
        "event": _EVENT,
        "pid": os.getpid(),
        "package": "cuda.bindings",
        "version": None,
        "module": None,
        "file": None,
        "folder": None,
        "status": "failed",
        "why": "%s: %s" % (type(error).__name__, error),
        "functions": {},
    }


def _write(directory, record):
    """Atomically (a temporary file, then a rename): the capture never reads half a table."""
    import json

    final = os.path.join(directory, "package-table-%d.json" % os.getpid())
    temporary = final + ".tmp"
    with open(temporary, "w", encoding="ascii") as f:
        json.dump(record, f, ensure_ascii=True)
    os.replace(temporary, final)


def _at_exit(directory, here):
    try:
        if "cuda.bindings" not in sys.modules:
            return
        try:
            record = _record(directory, here)
        except BaseException as e:  # the package's own failure too: never the program's end
            record = _failure(directory, e)
        _write(directory, record)
    except BaseException:
        pass


def _install():
    """Registers the exit handler, takes this folder off sys.path and this module out of
    sys.modules; returns this module."""
    me = sys.modules.get(__name__)
    try:
        here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
        _without_own_folder(here)
        directory = os.environ.get("CUPARITY_CAPTURE_DIR")
        if directory:
            # Registered first, so it runs last: after the program's own exit handlers.
            atexit.register(_at_exit, directory, here)
    except Exception:
        pass
    sys.modules.pop(__name__, None)
    return me


_me = _install()
_chain()
# importlib moves the module it has just run to the end of sys.modules by popping its name: with no
# other sitecustomize (or a failed one) that name must be there again, or site reports a KeyError.
if "sitecustomize" not in sys.modules and _me is not None:
    sys.modules["sitecustomize"] = _me
