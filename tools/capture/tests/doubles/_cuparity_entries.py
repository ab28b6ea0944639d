"""The function list the test doubles bind: cuparity's driver entry table, read at import.

The table is generated at configure time from harness/driver/entries.list and cudaTypedefs.h
(cmake/entry_tables.cmake) into <build>/generated/entry_tables/include/harness/driver/entries.inl,
one `CUPARITY_ENTRY(name, abi, (parameter types))` per entry. This module finds the build as the
capture tests do: $CUPARITY_BIN_DIR/.., else $CUPARITY_BUILD_DIR, else <repository>/build, the
repository being found from this module's own location (<repository>/tools/capture/tests/doubles/),
so the doubles cover whatever the table holds without a copy of the list. A missing or empty
table is an error naming the path, raised when a double imports this module.

The doubles do not import this module by name (a capture may run with PYTHONPATH elsewhere, as
the test of cuda.bindings' newer layout does): each loads it by path from the doubles' root, three
folders above itself, as sys.modules["_cuparity_double_entries"], so both share one copy.
"""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# <repository>/tools/capture/tests/doubles: four folders up (the doubles' folder itself when a copy
# sits too near the file-system root for that, so that the table is reported missing, not guessed).
REPO_ROOT = _HERE.parents[3] if len(_HERE.parents) > 3 else _HERE
ENTRIES_RELATIVE = Path("generated") / "entry_tables" / "include" / "harness" / "driver" / "entries.inl"


def build_dir() -> Path:
    """The build the table is read from (the capture tests' own rule for the binaries)."""
    if os.environ.get("CUPARITY_BIN_DIR"):
        return Path(os.environ["CUPARITY_BIN_DIR"]).resolve().parent
    if os.environ.get("CUPARITY_BUILD_DIR"):
        return Path(os.environ["CUPARITY_BUILD_DIR"]).resolve()
    return REPO_ROOT / "build"


ENTRIES_PATH = build_dir() / ENTRIES_RELATIVE

# Functions the driver has under a bare name only as far as the packages are concerned: CUDA 13
# added `_v2` functions with other signatures under these names, so Numba (and cuparity's
# suffix_rules) pin them to the bare symbol in both modes.
PINNED = ("cuCtxGetDevice", "cuCtxSynchronize")

LEGACY_SUFFIXES = ("_v2", "")
PER_THREAD_SUFFIXES = ("_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz") + LEGACY_SUFFIXES


class EntryTableError(RuntimeError):
    """The entry table is missing or holds no entry (deliberately not an ImportError)."""


class Entry:
    __slots__ = ("name", "abi", "parameters")

    def __init__(self, name: str, abi, parameters):
        self.name = name  # the base name cuGetProcAddress takes
        self.abi = abi  # int, or None when the call does not give one
        self.parameters = parameters  # list of C parameter types, or None when not given

    def __repr__(self):
        return f"Entry({self.name!r}, {self.abi!r}, {self.parameters!r})"


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#[^\n]*", re.M)
_CALL = re.compile(r"\bCUPARITY_ENTRY\s*\(")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _arguments(text: str, start: int, path: Path):
    """The top-level comma-separated arguments of the call whose '(' ends just before start."""
    depth, begin, args = 1, start, []
    for i in range(start, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(text[begin:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(text[begin:i].strip())
            begin = i + 1
    line = text.count("\n", 0, start) + 1
    raise EntryTableError(f"{path}: unterminated CUPARITY_ENTRY( near line {line}")


def parse(text: str, path: Path = ENTRIES_PATH):
    """The entries of an entries.inl text, in table order, each name once."""
    text = _DIRECTIVE.sub("", _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text))
    entries, seen = [], set()
    for m in _CALL.finditer(text):
        args = _arguments(text, m.end(), path)
        name = _IDENTIFIER.match(args[0]) if args else None
        if name is None:
            line = text.count("\n", 0, m.start()) + 1
            raise EntryTableError(f"{path}: CUPARITY_ENTRY( without a function name at line {line}")
        name = name.group(0)
        if name in seen:
            continue
        seen.add(name)
        abi = int(args[1]) if len(args) > 1 and args[1].isdigit() else None
        parameters = None
        if len(args) > 2 and args[2].startswith("(") and args[2].endswith(")"):
            inner = args[2][1:-1].strip()
            parameters = [p.strip() for p in inner.split(",")] if inner else []
        entries.append(Entry(name, abi, parameters))
    return entries


def read_entries(path: Path = ENTRIES_PATH):
    if not path.is_file():
        raise EntryTableError(
            f"cuparity test double: the driver entry table {path} does not exist. The doubles take "
            f"the functions they bind from <build>/{ENTRIES_RELATIVE.as_posix()}, generated by "
            "scripts/build; the build is $CUPARITY_BIN_DIR/.., else $CUPARITY_BUILD_DIR, else "
            f"<repository>/build, the repository being found from the doubles' own location ({_HERE})."
        )
    entries = parse(path.read_text(encoding="utf-8"), path)
    if not entries:
        raise EntryTableError(f"cuparity test double: no CUPARITY_ENTRY(...) in the driver entry table {path}")
    return entries


ENTRIES = read_entries()
NAMES = tuple(e.name for e in ENTRIES)


def candidates(name: str, per_thread: bool):
    """The symbols Numba's _find_api tries for name, in order (the pins: the bare name only)."""
    if name in PINNED:
        return [name]
    return [name + suffix for suffix in (PER_THREAD_SUFFIXES if per_thread else LEGACY_SUFFIXES)]


def first_exported(lib, names):
    """(symbol, address) of the first of names that the ctypes library lib exports, else (None, 0)."""
    for symbol in names:
        try:
            fn = getattr(lib, symbol)
        except AttributeError:
            continue
        return symbol, ctypes.cast(fn, ctypes.c_void_p).value or 0
    return None, 0

