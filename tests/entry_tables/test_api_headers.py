"""cmake/api_headers.py: the whole driver API from header sets, and `cuparity api` covering cuda.h."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "cmake"))
import api_headers  # noqa: E402
import entry_tables  # noqa: E402

CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
BIN_DIR = Path(os.environ.get("CUPARITY_BIN_DIR", REPO / "build" / "bin"))

# A header set in miniature, with the shapes CUDA's has: a macro to a numbered ABI, a per-thread
# wrapper, old ABIs declared under __CUDA_API_VERSION_INTERNAL, the cuGraphInstantiate alias and a
# static inline wrapper that is not an export.
CUDA_H = """/* a comment: CUresult CUDAAPI cuNotReally(int); */
#define CUDA_VERSION {version}
#define cuMemAlloc                 cuMemAlloc_v2
#define cuMemcpyHtoD               __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define cuGraphInstantiate         cuGraphInstantiateWithFlags
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
{extra}
#if defined(__CUDA_API_VERSION_INTERNAL)
    #undef cuMemAlloc
    #undef cuMemcpyHtoD
    #undef cuGraphInstantiate
    CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize);
    CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount);
    CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
    CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize);
#elif defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
static inline CUresult cuInit_ptsz(unsigned int Flags) {{ return cuInit(Flags); }}
#define cuInit cuInit_ptsz
#endif
"""
TYPEDEFS_H = """
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v3020)(CUdeviceptr_v2 *dptr, size_t bytesize);
typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v3020)(CUdeviceptr_v2 dstDevice, const void *srcHost, size_t ByteCount);
typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v7000_ptds)(CUdeviceptr_v2 dstDevice, const void *srcHost, size_t ByteCount);
typedef CUresult (CUDAAPI *PFN_cuGraphInstantiateWithFlags_v11040)(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
{extra}
#if defined(__CUDA_API_VERSION_INTERNAL)
    typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v2000)(CUdeviceptr_v1 *dptr, unsigned int bytesize);
    typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v2000)(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount);
    typedef CUresult (CUDAAPI *PFN_cuGraphInstantiate_v10000)(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize);
#endif
"""


def header_set(folder: Path, version: int = 12000, cuda_extra: str = "", typedef_extra: str = "",
               edit=lambda cuda_h, typedefs: (cuda_h, typedefs)) -> Path:
    cuda_h, typedefs = edit(CUDA_H.format(version=version, extra=cuda_extra),
                            TYPEDEFS_H.format(extra=typedef_extra))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cuda.h").write_text(cuda_h, encoding="utf-8")
    (folder / "cudaTypedefs.h").write_text(typedefs, encoding="utf-8")
    return folder


def test_a_set_gives_every_function_numbered_as_cuda_h_says(tmp_path):
    table = api_headers.read_api([header_set(tmp_path / "h")])
    assert sorted(table.functions) == ["cuGraphInstantiate", "cuGraphInstantiateWithFlags", "cuInit",
                                       "cuMemAlloc", "cuMemcpyHtoD"]
    alloc = table.functions["cuMemAlloc"].ordered()
    assert [(a.version, a.symbol) for a in alloc] == [(2000, "cuMemAlloc"), (3020, "cuMemAlloc_v2")]
    htod = table.functions["cuMemcpyHtoD"].ordered()
    assert (htod[1].per_thread_version, htod[1].per_thread_symbol) == (7000, "cuMemcpyHtoD_v2_ptds")
    assert htod[0].per_thread_symbol == ""
    assert {f.declared_in for f in table.functions.values()} == {12000}
    text = api_headers.render_api(table)
    assert "CUPARITY_API_FUNCTION(cuMemAlloc, 12000)\n" in text
    assert ('CUPARITY_API_ABI(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, "CUdeviceptr_v2, const void *, '
            'size_t", 7000, cuMemcpyHtoD_v2_ptds)\n') in text
    assert 'CUPARITY_API_ABI(cuInit, 2000, cuInit, "unsigned int", 0, )\n' in text


def _drop(line: str):
    return lambda cuda_h, typedefs: (cuda_h, "\n".join(l for l in typedefs.splitlines() if line not in l))


@pytest.mark.parametrize("edit, message", [
    # Without the internal 2000 typedef, cuMemAlloc_v2 would be no ABI: cuda.h's macro says so.
    (_drop("PFN_cuMemAlloc_v2000"), r"cuda.h:3: #define cuMemAlloc cuMemAlloc_v2: the typedefs number "
                                    r"cuMemAlloc's ABIs 3020 -> cuMemAlloc; none is exported as cuMemAlloc_v2"),
    (lambda c, t: (c.replace("__CUDA_API_PTDS(cuMemcpyHtoD_v2)", "__CUDA_API_PTSZ(cuMemcpyHtoD_v2)"), t),
     r"cuda.h:4: __CUDA_API_PTSZ\(cuMemcpyHtoD_v2\) names cuMemcpyHtoD_v2_ptsz, but the typedefs give "
     r"cuMemcpyHtoD_v2 the per-thread variant _ptds"),
    (_drop("PFN_cuInit_v2000"), r"cuda.h:6: cuInit is declared: no header of the set has a "
                                r"PFN_cuInit_v<version> typedef"),
    (lambda c, t: (c.replace("CUresult CUDAAPI cuInit(unsigned int Flags);",
                             "CUresult CUDAAPI cuInit(unsigned int Flags, int extra);"), t),
     r"cuda.h:6: cuInit \(exported as cuInit\) takes 2 parameters, but its typedef PFN_cuInit_v2000 takes 1"),
    # An internal old-ABI declaration is checked too (line 16: cuMemcpyHtoD's 2000).
    (lambda c, t: (c.replace("CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount",
                             "CUdeviceptr_v1 dstDevice"), t),
     r"cuda.h:16: cuMemcpyHtoD \(exported as cuMemcpyHtoD\) takes 1 parameters"),
    (lambda c, t: (c.replace("#define cuMemAlloc                 cuMemAlloc_v2",
                             "#define cuMemAlloc cuMemcpyHtoD_v2"), t),
     r"cuda.h:3: #define cuMemAlloc cuMemcpyHtoD_v2: cuMemcpyHtoD_v2 is an ABI of cuMemcpyHtoD, not of cuMemAlloc"),
])
def test_a_numbering_the_header_disagrees_with_names_header_and_line(tmp_path, edit, message):
    folder = header_set(tmp_path / "h", edit=edit)
    with pytest.raises(api_headers.ApiHeaderError) as caught:
        api_headers.read_api([folder])
    assert re.search(re.escape(str(folder)) + "/" + message, str(caught.value)), str(caught.value)


def test_a_newer_set_adds_its_functions_and_abis(tmp_path):
    newer = header_set(
        tmp_path / "newer", version=12050,
        cuda_extra="CUresult CUDAAPI cuNewThing(int value);",
        typedef_extra="typedef CUresult (CUDAAPI *PFN_cuNewThing_v12050)(int value);\n"
                      "typedef CUresult (CUDAAPI *PFN_cuInit_v12050)(unsigned int Flags, int more);")
    older = header_set(tmp_path / "older")
    table = api_headers.read_api([newer, older])  # any order: sorted by CUDA_VERSION
    assert [s.version for s in table.sets] == [12000, 12050]
    assert table.functions["cuNewThing"].declared_in == 12050
    assert table.functions["cuInit"].declared_in == 12000
    assert [a.symbol for a in table.functions["cuInit"].ordered()] == ["cuInit", "cuInit_v2"]
    text = api_headers.render_api(table)
    assert text.index("CUPARITY_API_HEADER_SET(12000") < text.index("CUPARITY_API_HEADER_SET(12050")


def test_entries_list_compiles_against_the_toolkit_not_a_newer_set(tmp_path):
    # A newer set's function joins the whole table, never the list the backends call.
    newer = header_set(tmp_path / "newer", version=12050,
                       cuda_extra="CUresult CUDAAPI cuNewThing(int value);",
                       typedef_extra="typedef CUresult (CUDAAPI *PFN_cuNewThing_v12050)(int value);")
    toolkit = header_set(tmp_path / "toolkit")
    (tmp_path / "entries.list").write_text("cuInit\ncuNewThing\n", encoding="utf-8")
    with pytest.raises(entry_tables.GenerationError, match="entries.list:2: cuNewThing"):
        entry_tables.generate(tmp_path / "entries.list", [toolkit / "cudaTypedefs.h"], tmp_path / "out",
                              [toolkit, newer])
    (tmp_path / "entries.list").write_text("cuInit\n", encoding="utf-8")
    files = entry_tables.generate(tmp_path / "entries.list", [toolkit / "cudaTypedefs.h"],
                                  tmp_path / "out", [toolkit, newer])
    assert "CUPARITY_API_FUNCTION(cuNewThing, 12050)" in files["include/harness/driver/driver_api.inl"]
    # The simulated driver: cuInit is implemented, the rest are stubs.
    proc = files["simdriver/api_proc_table.inl"]
    assert "CUPARITY_SIM_API_PROC(cuInit, 2000, CUPARITY_SIM_IMPL(cuInit), 0, CUPARITY_SIM_NONE)" in proc
    assert "CUPARITY_SIM_API_PROC(cuNewThing, 12050, CUPARITY_SIM_STUB(" in proc
    assert "CUPARITY_SIM_STUB_FUNCTION(" in files["simdriver/api_stubs.inl"]
    assert (tmp_path / "out" / "include/harness/driver/driver_api.inl").is_file()


def test_a_set_without_its_headers_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "entries.list").write_text("cuInit\n", encoding="utf-8")
    toolkit = header_set(tmp_path / "toolkit")
    assert entry_tables.main(["--list", str(tmp_path / "entries.list"), "--header",
                              str(toolkit / "cudaTypedefs.h"), "--api-set", str(tmp_path / "empty"),
                              "--output", str(tmp_path / "out")]) == 1
    assert f"{tmp_path / 'empty'}: no cuda.h" in capsys.readouterr().err


def _cuda_h_functions(path: Path) -> set[str]:
    """Every function cuda.h declares, by base name, read here independently of the generator."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(encoding="utf-8", errors="replace"), flags=re.S)
    names = re.findall(r"\bCUresult\s+CUDAAPI\s+(cu\w+)\s*\(", text)
    return {re.sub(r"(_v\d+)?(_pt(ds|sz))?$", "", name) for name in names}


def test_cuparity_api_covers_every_function_of_the_toolkits_cuda_h():
    cuda_h = CUDA_INCLUDE / "cuda.h"
    exe = BIN_DIR / "cuparity"
    if not cuda_h.is_file() or not exe.is_file():
        pytest.skip(f"no toolkit cuda.h under {CUDA_INCLUDE} or no built {exe}")
    out = subprocess.run([str(exe), "api", "--json"], capture_output=True, text=True, timeout=60, check=True)
    table = json.loads(out.stdout)
    assert table["schema"] == "cuparity.api/1"
    names = {f["name"] for f in table["functions"]}
    declared = _cuda_h_functions(cuda_h)
    assert len(declared) > 400
    assert sorted(declared - names) == []
    version = int(re.search(r"#define CUDA_VERSION (\d+)", cuda_h.read_text(errors="replace")).group(1))
    assert table["header_versions"][0] == version
    by_name = {f["name"]: f for f in table["functions"]}
    assert [a["symbol"] for a in by_name["cuCtxCreate"]["abis"]][-1] == "cuCtxCreate_v4"


def test_cuparity_api_names_an_unknown_function_and_exits_2():
    exe = BIN_DIR / "cuparity"
    if not exe.is_file():
        pytest.skip(f"no built {exe}")
    out = subprocess.run([str(exe), "api", "cuMemAlloc_v2", "cuNoSuchFunction"], capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 2
    assert "cuNoSuchFunction: no driver function or exported symbol" in out.stderr
    assert "cuMemAlloc (declared in the headers of" in out.stdout  # a symbol shows its function


def test_the_build_holds_the_whole_api_of_its_header_sets(tmp_path):
    build = BIN_DIR.resolve().parent
    cache = build / "CMakeCache.txt"
    generated = build / "generated" / "entry_tables" / "include" / "harness" / "driver" / "driver_api.inl"
    if not cache.is_file() or not generated.is_file() or not (CUDA_INCLUDE / "cuda.h").is_file():
        pytest.skip(f"no configured build at {build} or no toolkit headers")
    m = re.search(r"^CUPARITY_API_HEADERS:STRING=(.*)$", cache.read_text(encoding="utf-8"), re.M)
    extra = [Path(p) for p in m.group(1).split(";") if p] if m else []
    table = api_headers.read_api([CUDA_INCLUDE.resolve()] + [p.resolve() for p in extra])
    now = api_headers.render_api(table)
    built = generated.read_text(encoding="utf-8")
    # The folder of a row may be spelt through a link; the rows of functions must be identical.
    strip = lambda text: [l for l in text.splitlines() if not l.startswith("CUPARITY_API_HEADER_SET")]
    assert strip(built) == strip(now)
