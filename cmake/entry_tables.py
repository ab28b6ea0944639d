#!/usr/bin/env python3
"""Generates cuparity's driver entry tables from one list of base names and cudaTypedefs.h.

harness/driver/entries.list names the driver functions cuparity calls (its header says how); the
toolkit's typedef headers give every ABI of each as PFN_<name>_v<version>[_ptds|_ptsz]. From those
two this writes the X-macro lists the facade, the backends, the audit, the fault shim and the
simulated driver expand. Run at configure time by cmake/entry_tables.cmake; a list line the header
cannot answer is an error naming entries.list:LINE, and nothing is written.

With --api-set FOLDER (the toolkit's include folder, then any newer header sets) it also writes the
whole driver API (api_headers.py: every function of every set, each ABI, its per-thread variant),
checked against each set's cuda.h, and the simulated driver's table of it.

Usage: entry_tables.py --list FILE --header H [--header H...] [--api-set DIR...] --output DIR
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_headers  # noqa: E402  (cmake/api_headers.py: the whole API from the header sets)

_TYPEDEF = api_headers.TYPEDEF
_NAME_LINE = re.compile(r"^(cu[A-Za-z0-9_]+)(?:\s*=\s*(\d+))?$")


class GenerationError(Exception):
    """A list line or header fact that does not allow a table to be generated."""


@dataclass
class Abi:
    version: int
    parameters: tuple[str, ...]
    symbol: str = ""  # the exported symbol (set once every ABI of the name is known)
    per_thread: list[tuple[int, str]] = field(default_factory=list)  # (version, suffix)


@dataclass
class Entry:
    name: str
    abi: int
    line: int


parameter_types = api_headers.parameter_types


def read_header_abis(texts: list[tuple[str, str]]) -> dict[str, dict[int, Abi]]:
    """Every PFN typedef of the headers: name -> version -> Abi, with symbols and per-thread twins."""
    abis: dict[str, dict[int, Abi]] = {}
    per_thread: list[tuple[str, int, str, tuple[str, ...]]] = []
    for _, text in texts:
        for m in _TYPEDEF.finditer(text):
            name, version, suffix, params = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            if suffix:
                per_thread.append((name, version, suffix, parameter_types(params)))
            else:
                abis.setdefault(name, {})[version] = Abi(version, parameter_types(params))
    for name, versions in abis.items():
        # The n-th ABI (ascending) is exported as <name>_v<n>; the first is the bare name.
        for n, version in enumerate(sorted(versions)):
            versions[version].symbol = name if n == 0 else f"{name}_v{n + 1}"
    for name, version, suffix, params in per_thread:
        older = [v for v in abis.get(name, {}) if v <= version]
        if older:
            abis[name][max(older)].per_thread.append((version, suffix))
    return abis


def read_list(path: Path, abis: dict[str, dict[int, Abi]]) -> list[Entry]:
    """The list's entries with the ABI each calls; errors name path:line."""
    entries, seen = [], {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        where = f"{path}:{number}"
        m = _NAME_LINE.match(text)
        if not m:
            raise GenerationError(f"{where}: expected a base name such as cuMemAlloc, optionally "
                                  f"'= <version>', got {text!r}")
        name = m.group(1)
        if name in seen:
            raise GenerationError(f"{where}: {name} is listed twice (first at line {seen[name]})")
        seen[name] = number
        versions = abis.get(name)
        if not versions:
            raise GenerationError(f"{where}: {name}: the headers have no PFN_{name}_v<version> "
                                  "typedef (a misspelt name, or a function this toolkit lacks)")
        ordered = sorted(versions)
        if m.group(2):
            abi = int(m.group(2))
            if abi not in versions:
                raise GenerationError(f"{where}: {name} = {abi}: the headers have no PFN_{name}_v{abi} "
                                      f"(they have {', '.join(map(str, ordered))})")
        else:
            # The `_v2` symbol where one exists, else the bare one: what Numba's probing lands on.
            abi = ordered[1] if len(ordered) > 1 else ordered[0]
        entries.append(Entry(name, abi, number))
    if not entries:
        raise GenerationError(f"{path}: no driver function is listed")
    return entries


def _per_thread_of(abi: Abi) -> tuple[int, str] | None:
    return min(abi.per_thread) if abi.per_thread else None


def render(entries: list[Entry], abis: dict[str, dict[int, Abi]], source: str) -> dict[str, str]:
    """The generated files, relative path -> text."""
    banner = (f"// Generated from {source} and cudaTypedefs.h by cmake/entry_tables.py: do not edit.\n"
              "// No include guard: an X-macro list, included several times with different "
              "definitions.\n")
    out = {k: [banner] for k in ("entries", "per_thread", "older", "exported")}
    for e in entries:
        versions = abis[e.name]
        called = versions[e.abi]
        out["entries"].append(f"CUPARITY_ENTRY({e.name}, {e.abi}, ({', '.join(called.parameters)}))\n")
        twin = _per_thread_of(called)
        if twin:
            out["per_thread"].append(f"CUPARITY_PER_THREAD({e.name}, {twin[0]}, {twin[1]})\n")
        for version in sorted(versions):
            abi = versions[version]
            # An older ABI with the called one's own C signature, exported under the bare name.
            if version < e.abi and abi.parameters == called.parameters and abi.symbol == e.name:
                out["older"].append(f"CUPARITY_OLDER_ABI({e.name}, {version}, {e.abi})\n")
            out["exported"].append(f"CUPARITY_EXPORTED_SYMBOL({abi.symbol})\n")
            pt = _per_thread_of(abi)
            if pt:
                pt_symbol = f"{abi.symbol}_{pt[1]}"
                out["exported"].append(f"CUPARITY_EXPORTED_SYMBOL({pt_symbol})\n")
    paths = {
        "entries": "include/harness/driver/entries.inl",
        "per_thread": "include/harness/driver/per_thread_entries.inl",
        "older": "include/harness/driver/older_abis.inl",
        "exported": "include/harness/driver/exported_symbols.inl",
    }
    return {paths[k]: "".join(v) for k, v in out.items()}


def generate(list_path: Path, headers: list[Path], output: Path,
             api_sets: list[Path] | None = None) -> dict[str, str]:
    texts = []
    for header in headers:
        if not header.is_file():
            raise GenerationError(f"{header}: no such header (--header)")
        texts.append((str(header), header.read_text(encoding="utf-8", errors="replace")))
    if not list_path.is_file():
        raise GenerationError(f"{list_path}: no such list (--list)")
    abis = read_header_abis(texts)
    entries = read_list(list_path, abis)
    files = render(entries, abis, list_path.name)
    if api_sets:
        try:
            table = api_headers.read_api(api_sets)
        except api_headers.ApiHeaderError as error:
            raise GenerationError(str(error)) from error
        implemented = {abi.symbol for e in entries for abi in abis[e.name].values()}
        implemented |= {f"{abi.symbol}_{pt[1]}" for e in entries for abi in abis[e.name].values()
                        if (pt := _per_thread_of(abi))}
        files.update(api_headers.render(table, implemented))
    for relative, text in files.items():
        target = output / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        # Rewritten only when changed, so a re-configure recompiles nothing that did not change.
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return files


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", required=True, type=Path)
    parser.add_argument("--header", required=True, type=Path, action="append")
    parser.add_argument("--api-set", type=Path, action="append", default=[],
                        help="a folder with a cuda.h and cudaTypedefs.h (repeatable)")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    try:
        generate(args.list, args.header, args.output, args.api_set)
    except GenerationError as error:
        print(f"entry_tables.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
