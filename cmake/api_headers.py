"""The whole driver API from one or more CUDA header sets: every function, ABI and per-thread variant.

A header set is a folder holding a cuda.h and a cudaTypedefs.h (and, where present, the profiler
and interop typedef headers). Every PFN_<name>_v<version>[_ptds|_ptsz] typedef of every set is one
ABI of <name>; the n-th ABI (ascending) is exported as <name>_v<n>, the first under the bare name.
That numbering is checked against what each set's cuda.h itself says: its `#define cuX cuX_vN`
macros (and their __CUDA_API_PTDS/__CUDA_API_PTSZ wrappers) and every `CUresult CUDAAPI cu...(`
declaration, the old-ABI ones under __CUDA_API_VERSION_INTERNAL included. A disagreement, or a
declared function with no typedef, is an ApiHeaderError naming header:line. Used by
cmake/entry_tables.py, which writes the tables render() returns.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

TYPEDEF = re.compile(
    r"typedef\s+CUresult\s*\(\s*CUDAAPI\s*\*\s*PFN_(cu\w+?)_v(\d+)(?:_(ptds|ptsz))?\s*\)\s*\((.*?)\)\s*;",
    re.S,
)
_DECLARATOR = re.compile(r"^(.*?[\s*])([A-Za-z_]\w*)$")
_DECLARATION = re.compile(r"\bCUresult\s+CUDAAPI\s+(cu\w+)\s*\(")
_STATIC_INLINE = re.compile(r"\bstatic\s+inline\s+CUresult\s+(cu\w+)\s*\(")
_DEFINE = re.compile(r"^\s*#\s*define\s+(cu\w+)\s+(?:(__CUDA_API_PT(?:DS|SZ))\s*\(\s*(cu\w+)\s*\)|(cu\w+))\s*$")
_CUDA_VERSION = re.compile(r"^\s*#\s*define\s+CUDA_VERSION\s+(\d+)", re.M)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_SUFFIX = re.compile(r"^(cu\w+?)(?:_v(\d+))?(?:_(ptds|ptsz))?$")

# Headers of a set: the typedefs (cudaTypedefs.h required) and the declaring headers (cuda.h
# required); the others are read where the set has them.
TYPEDEF_HEADERS = ("cudaTypedefs.h", "cudaProfilerTypedefs.h", "cudaGLTypedefs.h",
                   "cudaEGLTypedefs.h", "cudaVDPAUTypedefs.h")
DECLARING_HEADERS = ("cuda.h", "cudaProfiler.h", "cudaGL.h", "cudaEGL.h", "cudaVDPAU.h")

# Macros of cuda.h that name another function, not an ABI of their own: since CUDA 12.0,
# `#define cuGraphInstantiate cuGraphInstantiateWithFlags` makes a program compiled against the
# header call cuGraphInstantiateWithFlags; cuGraphInstantiate keeps its own two ABIs (PFN_..._v10000
# and _v11000, exported as cuGraphInstantiate and cuGraphInstantiate_v2).
ALIASES = {"cuGraphInstantiate": "cuGraphInstantiateWithFlags"}


class ApiHeaderError(Exception):
    """A header set that does not give one consistent table."""


@dataclass
class ApiAbi:
    version: int
    parameters: tuple[str, ...]
    symbol: str = ""
    per_thread_version: int = 0
    per_thread_suffix: str = ""  # ptds or ptsz; empty: none

    @property
    def per_thread_symbol(self) -> str:
        return f"{self.symbol}_{self.per_thread_suffix}" if self.per_thread_suffix else ""


@dataclass
class ApiFunction:
    name: str
    abis: dict[int, ApiAbi] = field(default_factory=dict)  # version -> ABI
    declared_in: int = 0

    def ordered(self) -> list[ApiAbi]:
        return [self.abis[v] for v in sorted(self.abis)]


@dataclass
class HeaderSet:
    folder: Path
    version: int  # cuda.h's CUDA_VERSION


@dataclass
class ApiTable:
    functions: dict[str, ApiFunction]
    sets: list[HeaderSet]  # oldest first

    def symbols(self) -> dict[str, tuple[ApiFunction, ApiAbi, bool]]:
        """Every exported symbol: (function, ABI, per-thread)."""
        out = {}
        for function in self.functions.values():
            for abi in function.abis.values():
                out[abi.symbol] = (function, abi, False)
                if abi.per_thread_suffix:
                    out[abi.per_thread_symbol] = (function, abi, True)
        return out


def parameter_types(text: str) -> tuple[str, ...]:
    """The parameter types of a C prototype's parameter list, names dropped ("void" is none)."""
    text = " ".join(text.split())
    if text in ("", "void"):
        return ()
    types = []
    for parameter in text.split(","):
        parameter = parameter.strip()
        m = _DECLARATOR.match(parameter)
        # "CUdeviceptr_v2 *dptr" -> "CUdeviceptr_v2 *"; a lone type ("CUstream") stays as it is.
        kept = m.group(1) if m and m.group(1).strip() not in ("", "const", "unsigned") else parameter
        kept = re.sub(r"\s*\*", " *", kept.strip()).replace("* *", "**").replace("* *", "**")
        types.append(kept)
    return tuple(types)


class _Source:
    """A header with comments blanked (lines kept) and line lookup by offset."""

    def __init__(self, path: Path):
        self.path = path
        raw = path.read_text(encoding="utf-8", errors="replace")
        self.text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), raw)
        self._starts = [0] + [i + 1 for i, c in enumerate(self.text) if c == "\n"]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    def where(self, offset: int) -> str:
        return f"{self.path}:{self.line_of(offset)}"


def _internal_lines(source: _Source) -> list[bool]:
    """Per line (1-based index), whether it is compiled only under __CUDA_API_VERSION_INTERNAL."""
    stack: list[bool] = []
    flags = [False]
    for line in source.text.split("\n"):
        d = line.strip()
        needs = "__CUDA_API_VERSION_INTERNAL" in d and "||" not in d and "!defined(__CUDA_API_VERSION_INTERNAL)" not in d
        if re.match(r"#\s*if(n?def)?\b", d):
            stack.append(needs and not d.startswith("#ifndef"))
        elif re.match(r"#\s*(elif|else)\b", d) and stack:
            stack[-1] = needs and d.startswith("#elif")
        elif re.match(r"#\s*endif\b", d) and stack:
            stack.pop()
        flags.append(any(stack))
    return flags


def _arity(source: _Source, open_paren: int) -> tuple[int, int]:
    """Parameter count of the list opening at `open_paren`, and the offset after its `)`."""
    depth, commas, i, text = 0, 0, open_paren, source.text
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            commas += 1
        i += 1
    inner = " ".join(text[open_paren + 1:i].split())
    return (0 if inner in ("", "void") else commas + 1), i + 1


def _read_typedefs(folder: Path, rows: dict, where: dict) -> set[str]:
    """Adds the set's PFN typedefs to rows[(name, version, suffix)] = parameters; their names."""
    names = set()
    for header in TYPEDEF_HEADERS:
        path = folder / header
        if not path.is_file():
            if header == "cudaTypedefs.h":
                raise ApiHeaderError(f"{folder}: no cudaTypedefs.h (a header set needs cuda.h and "
                                     "cudaTypedefs.h)")
            continue
        source = _Source(path)
        for m in TYPEDEF.finditer(source.text):
            key = (m.group(1), int(m.group(2)), m.group(3) or "")
            rows[key] = parameter_types(m.group(4))
            where[key] = source.where(m.start())
            names.add(m.group(1))
    return names


def _number(rows: dict, where: dict) -> dict[str, ApiFunction]:
    """Functions from the typedef rows: symbols numbered, per-thread variants attached."""
    functions: dict[str, ApiFunction] = {}
    for (name, version, suffix), params in sorted(rows.items()):
        if not suffix:
            functions.setdefault(name, ApiFunction(name)).abis[version] = ApiAbi(version, params)
    for function in functions.values():
        for n, abi in enumerate(function.ordered()):
            abi.symbol = function.name if n == 0 else f"{function.name}_v{n + 1}"
    for (name, version, suffix), _ in sorted(rows.items()):
        if not suffix:
            continue
        older = [v for v in functions.get(name, ApiFunction(name)).abis if v <= version]
        if not older:
            raise ApiHeaderError(f"{where[(name, version, suffix)]}: PFN_{name}_v{version}_{suffix} "
                                 f"has no ABI of {name} at or below {version} to be the variant of")
        abi = functions[name].abis[max(older)]
        if abi.per_thread_suffix and abi.per_thread_suffix != suffix:
            raise ApiHeaderError(f"{where[(name, version, suffix)]}: {abi.symbol} has both a _ptds "
                                 "and a _ptsz variant")
        if not abi.per_thread_version or version < abi.per_thread_version:
            abi.per_thread_version, abi.per_thread_suffix = version, suffix
    return functions


def _check_macros(source: _Source, internal: list[bool], symbols: dict) -> dict[str, str]:
    """cuda.h's `#define cuX target` macros against the numbering; returns name -> target."""
    inline = set(_STATIC_INLINE.findall(source.text))
    macros = {}
    offset = 0
    for number, line in enumerate(source.text.split("\n"), start=1):
        m = _DEFINE.match(line)
        start, offset = offset, offset + len(line) + 1
        if not m or internal[number]:
            continue
        name, wrapper, target = m.group(1), m.group(2), m.group(3) or m.group(4)
        if target in inline:
            continue  # the header's own static inline wrapper (cuGetProcAddress_v2_ptsz), no export
        where = f"{source.path}:{number}"
        macros[name] = target
        found = symbols.get(target)
        if found is None or found[2]:
            raise ApiHeaderError(_unknown_symbol(where, f"#define {name} {target}", target, symbols))
        function, abi, _ = found
        own = symbols[name][0].name if name in symbols else _SUFFIX.match(name).group(1)
        if function.name != own and ALIASES.get(own) != function.name:
            raise ApiHeaderError(f"{where}: #define {name} {target}: {target} is an ABI of "
                                 f"{function.name}, not of {own}")
        if wrapper:
            suffix = wrapper[-4:].lower()
            if abi.per_thread_suffix != suffix:
                have = f"_{abi.per_thread_suffix}" if abi.per_thread_suffix else "none"
                raise ApiHeaderError(f"{where}: {wrapper}({target}) names {target}_{suffix}, but the "
                                     f"typedefs give {target} the per-thread variant {have}")
    return macros


def _unknown_symbol(where: str, what: str, symbol: str, symbols: dict) -> str:
    base = _SUFFIX.match(symbol).group(1)
    known = sorted((abi.version, abi.symbol) for s, (f, abi, pt) in symbols.items()
                   if f.name == base and not pt)
    if not known:
        return (f"{where}: {what}: no header of the set has a PFN_{base}_v<version> typedef "
                "for it")
    listed = ", ".join(f"{v} -> {s}" for v, s in known)
    return (f"{where}: {what}: the typedefs number {base}'s ABIs {listed}; none is exported as "
            f"{symbol} (a typedef missing, or the header numbers them otherwise)")


def _check_declarations(source: _Source, internal: list[bool], macros: dict, symbols: dict) -> None:
    """Each `CUresult CUDAAPI cu...(` declaration: its symbol is in the table, with that arity."""
    for m in _DECLARATION.finditer(source.text):
        declared = m.group(1)
        line = source.line_of(m.start())
        symbol = declared if internal[line] else macros.get(declared, declared)
        where = f"{source.path}:{line}"
        found = symbols.get(symbol)
        if found is None:
            raise ApiHeaderError(_unknown_symbol(where, f"{declared} is declared", symbol, symbols))
        arity, _ = _arity(source, m.end() - 1)
        if arity != len(found[1].parameters):
            raise ApiHeaderError(f"{where}: {declared} (exported as {symbol}) takes {arity} "
                                 f"parameters, but its typedef PFN_{found[0].name}_v{found[1].version}"
                                 f" takes {len(found[1].parameters)}")


def read_api(folders: list[Path]) -> ApiTable:
    """The table of every function of the header sets, checked against each set's cuda.h."""
    sets, rows, where, names_of = [], {}, {}, {}
    for folder in folders:
        cuda_h = folder / "cuda.h"
        if not cuda_h.is_file():
            raise ApiHeaderError(f"{folder}: no cuda.h (a header set needs cuda.h and cudaTypedefs.h)")
        m = _CUDA_VERSION.search(cuda_h.read_text(encoding="utf-8", errors="replace"))
        if not m:
            raise ApiHeaderError(f"{cuda_h}: no `#define CUDA_VERSION <number>`")
        sets.append(HeaderSet(folder, int(m.group(1))))
    sets.sort(key=lambda s: s.version)
    for header_set in sets:  # oldest first: a newer set's text of the same typedef wins
        names_of[header_set.folder] = _read_typedefs(header_set.folder, rows, where)
    functions = _number(rows, where)
    table = ApiTable(functions, sets)
    symbols = table.symbols()
    for header_set in sets:
        for name in names_of[header_set.folder]:
            if name in functions and not functions[name].declared_in:
                functions[name].declared_in = header_set.version
        for header in DECLARING_HEADERS:
            if (header_set.folder / header).is_file():
                source = _Source(header_set.folder / header)
                internal = _internal_lines(source)
                macros = _check_macros(source, internal, symbols)
                _check_declarations(source, internal, macros, symbols)
    return table


def _banner(what: str) -> str:
    return (f"// Generated by cmake/entry_tables.py (cmake/api_headers.py) from the header sets: {what}."
            "\n// Do not edit. No include guard: an X-macro list.\n")


def render_api(table: ApiTable) -> str:
    """include/harness/driver/driver_api.inl: header sets, functions and ABIs, sorted by name."""
    lines = [_banner("the whole driver API"),
             "// Define the rows you expand before including; the others expand to nothing, and all\n"
             "// three are undefined at the end.\n"]
    for macro, params in (("CUPARITY_API_HEADER_SET", "version, folder"),
                          ("CUPARITY_API_FUNCTION", "name, declared_in"),
                          ("CUPARITY_API_ABI", "name, version, symbol, parameters, per_thread_version, "
                                               "per_thread_symbol")):
        lines.append(f"#ifndef {macro}\n#define {macro}({params})\n#endif\n")
    for header_set in table.sets:
        lines.append(f'CUPARITY_API_HEADER_SET({header_set.version}, "{header_set.folder}")\n')
    for name in sorted(table.functions):
        function = table.functions[name]
        lines.append(f"CUPARITY_API_FUNCTION({name}, {function.declared_in})\n")
        for abi in function.ordered():
            lines.append(f'CUPARITY_API_ABI({name}, {abi.version}, {abi.symbol}, '
                         f'"{", ".join(abi.parameters)}", {abi.per_thread_version}, '
                         f"{abi.per_thread_symbol})\n")
    lines.append("#undef CUPARITY_API_HEADER_SET\n#undef CUPARITY_API_FUNCTION\n#undef CUPARITY_API_ABI\n")
    return "".join(lines)


def render_simdriver(table: ApiTable, implemented: set[str]) -> dict[str, str]:
    """The simulated driver's cuGetProcAddress table of every ABI, and stubs for what it lacks."""
    stubs: list[tuple[str, int]] = []  # (symbol, version it exists from)

    def ref(symbol: str, version: int) -> str:
        if not symbol:
            return "CUPARITY_SIM_NONE"
        if symbol in implemented:
            return f"CUPARITY_SIM_IMPL({symbol})"
        stubs.append((symbol, version))
        return f"CUPARITY_SIM_STUB({len(stubs) - 1})"

    proc = [_banner("every ABI, for the simulated driver's cuGetProcAddress"),
            "// CUPARITY_SIM_API_PROC(base, abi, symbol, per_thread_version, per_thread_symbol), sorted by\n"
            "// base then ABI; a symbol is CUPARITY_SIM_IMPL(name) (implemented) or CUPARITY_SIM_STUB(index)\n"
            "// (api_stubs.inl), CUPARITY_SIM_NONE where there is no per-thread variant.\n"]
    for name in sorted(table.functions):
        for abi in table.functions[name].ordered():
            proc.append(f"CUPARITY_SIM_API_PROC({name}, {abi.version}, {ref(abi.symbol, abi.version)}, "
                        f"{abi.per_thread_version}, "
                        f"{ref(abi.per_thread_symbol, abi.per_thread_version)})\n")
    versions = sorted({v for _, v in stubs})
    stub = [_banner("the functions the simulated driver does not implement"),
            "// CUPARITY_SIM_STUB_FUNCTION(index, symbol, visibility): index as in api_proc_table.inl;\n"
            "// CUPARITY_SIM_EXPORTED_<version> is the visibility of a symbol that exists from <version>:\n"
            "// exported by a driver modelling that version or newer (CUPARITY_SIM_DEFAULT_DRIVER_VERSION).\n"]
    for version in versions:
        stub.append(f"#if CUPARITY_SIM_DEFAULT_DRIVER_VERSION >= {version}\n"
                    f"#define CUPARITY_SIM_EXPORTED_{version} CUPARITY_SIM_VISIBLE\n#else\n"
                    f"#define CUPARITY_SIM_EXPORTED_{version} CUPARITY_SIM_HIDDEN\n#endif\n")
    for index, (symbol, version) in enumerate(stubs):
        stub.append(f"CUPARITY_SIM_STUB_FUNCTION({index}, {symbol}, CUPARITY_SIM_EXPORTED_{version})\n")
    for version in versions:
        stub.append(f"#undef CUPARITY_SIM_EXPORTED_{version}\n")
    return {"simdriver/api_proc_table.inl": "".join(proc), "simdriver/api_stubs.inl": "".join(stub)}


def render(table: ApiTable, implemented: set[str]) -> dict[str, str]:
    """Every file of the whole API, relative path -> text."""
    files = {"include/harness/driver/driver_api.inl": render_api(table)}
    files.update(render_simdriver(table, implemented))
    return files
