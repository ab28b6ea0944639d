"""cmake/entry_tables.py: the driver entry tables generated from entries.list and cudaTypedefs.h."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "cmake" / "entry_tables.py"
LIST = REPO / "harness" / "driver" / "entries.list"
CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
HEADERS = [CUDA_INCLUDE / "cudaTypedefs.h", CUDA_INCLUDE / "cudaProfilerTypedefs.h"]

spec = importlib.util.spec_from_file_location("cuparity_entry_tables", SCRIPT)
gen = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = gen
spec.loader.exec_module(gen)

# A toolkit header in miniature: the shapes cudaTypedefs.h has.
FAKE_HEADER = """
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v3020)(CUdeviceptr_v2 *dptr, size_t bytesize);
typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v7000_ptds)(CUdeviceptr_v2 dstDevice, const void *srcHost, size_t ByteCount);
typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v3020)(CUdeviceptr_v2 dstDevice, const void *srcHost, size_t ByteCount);
typedef CUresult (CUDAAPI *PFN_cuCtxDestroy_v4000)(CUcontext ctx);
typedef CUresult (CUDAAPI *PFN_cuCtxGetDevice_v2000)(CUdevice_v1 *device);
typedef CUresult (CUDAAPI *PFN_cuCtxGetDevice_v13000)(CUdevice *device, CUcontext ctx);
typedef CUresult (CUDAAPI *PFN_cuProfilerStart_v4000)(void);
#ifdef __CUDA_API_VERSION_INTERNAL
    typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v2000)(CUdeviceptr_v1 *dptr, unsigned int bytesize);
    typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v2000)(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount);
    typedef CUresult (CUDAAPI *PFN_cuCtxDestroy_v2000)(CUcontext ctx);
#endif
"""


def generate(tmp_path: Path, lines: str, header: str = FAKE_HEADER) -> dict:
    (tmp_path / "entries.list").write_text(lines, encoding="utf-8")
    (tmp_path / "typedefs.h").write_text(header, encoding="utf-8")
    return gen.generate(tmp_path / "entries.list", [tmp_path / "typedefs.h"], tmp_path / "out")


def rows(text: str) -> list:
    return [line for line in text.splitlines() if not line.startswith("//")]


def test_each_table_from_one_list(tmp_path):
    files = generate(tmp_path, "# a comment\ncuInit\n\ncuMemAlloc\ncuMemcpyHtoD  # the per-thread one\n"
                               "cuCtxDestroy\ncuCtxGetDevice = 2000\ncuProfilerStart\n")
    assert rows(files["include/harness/driver/entries.inl"]) == [
        "CUPARITY_ENTRY(cuInit, 2000, (unsigned int))",
        # The `_v2` ABI where there is one (what Numba's probing lands on), else the bare one.
        "CUPARITY_ENTRY(cuMemAlloc, 3020, (CUdeviceptr_v2 *, size_t))",
        "CUPARITY_ENTRY(cuMemcpyHtoD, 3020, (CUdeviceptr_v2, const void *, size_t))",
        "CUPARITY_ENTRY(cuCtxDestroy, 4000, (CUcontext))",
        "CUPARITY_ENTRY(cuCtxGetDevice, 2000, (CUdevice_v1 *))",  # the pin, not CUDA 13's _v2
        "CUPARITY_ENTRY(cuProfilerStart, 4000, ())",
    ]
    assert rows(files["include/harness/driver/per_thread_entries.inl"]) == [
        "CUPARITY_PER_THREAD(cuMemcpyHtoD, 7000, ptds)"]
    # cuCtxDestroy's 2000 has the called signature; cuMemAlloc's 2000 (unsigned int) does not.
    assert rows(files["include/harness/driver/older_abis.inl"]) == [
        "CUPARITY_OLDER_ABI(cuCtxDestroy, 2000, 4000)"]
    assert rows(files["include/harness/driver/exported_symbols.inl"]) == [
        f"CUPARITY_EXPORTED_SYMBOL({s})" for s in (
            "cuInit", "cuMemAlloc", "cuMemAlloc_v2", "cuMemcpyHtoD", "cuMemcpyHtoD_v2",
            "cuMemcpyHtoD_v2_ptds", "cuCtxDestroy", "cuCtxDestroy_v2", "cuCtxGetDevice",
            "cuCtxGetDevice_v2", "cuProfilerStart")]
    on_disk = (tmp_path / "out" / "include" / "harness" / "driver" / "entries.inl").read_text(encoding="utf-8")
    assert on_disk == files["include/harness/driver/entries.inl"]


@pytest.mark.parametrize("lines, message", [
    ("cuInit\ncuNoSuchThing\n", "entries.list:2: cuNoSuchThing: the headers have no PFN_cuNoSuchThing_v<version>"),
    ("cuInit\ncuCtxGetDevice = 3020\n", "entries.list:2: cuCtxGetDevice = 3020: the headers have no "
                                        "PFN_cuCtxGetDevice_v3020 (they have 2000, 13000)"),
    ("cuInit\n\ncuInit\n", "entries.list:3: cuInit is listed twice (first at line 1)"),
    ("cuMemAlloc_v2 bad\n", "entries.list:1: expected a base name"),
    ("# nothing\n", "no driver function is listed"),
])
def test_a_line_the_header_cannot_answer_names_itself(tmp_path, lines, message):
    with pytest.raises(gen.GenerationError, match=None) as caught:
        generate(tmp_path, lines)
    assert message in str(caught.value)
    assert not (tmp_path / "out").exists()  # nothing written


def test_the_command_line_exits_non_zero_naming_the_input(tmp_path, capsys):
    assert gen.main(["--list", str(tmp_path / "missing.list"), "--header", str(tmp_path / "h.h"),
                     "--output", str(tmp_path / "out")]) == 1
    assert "h.h: no such header (--header)" in capsys.readouterr().err


def test_adding_a_function_is_one_line(tmp_path):
    # The note's claim, held: one line in the list adds the function to every table.
    headers = [h for h in HEADERS if h.is_file()]
    if len(headers) != 2:
        pytest.skip(f"no CUDA toolkit headers under {CUDA_INCLUDE}")
    base = LIST.read_text(encoding="utf-8")
    before = gen.generate(LIST, headers, tmp_path / "before")
    (tmp_path / "entries.list").write_text(base + "cuCtxGetFlags\n", encoding="utf-8")
    after = gen.generate(tmp_path / "entries.list", headers, tmp_path / "after")
    added = {k: sorted(set(rows(after[k])) - set(rows(before[k]))) for k in after}
    assert added == {
        "include/harness/driver/entries.inl": ["CUPARITY_ENTRY(cuCtxGetFlags, 7000, (unsigned int *))"],
        "include/harness/driver/per_thread_entries.inl": [],
        "include/harness/driver/older_abis.inl": [],
        "include/harness/driver/exported_symbols.inl": ["CUPARITY_EXPORTED_SYMBOL(cuCtxGetFlags)"],
    }
    assert all(set(rows(before[k])) <= set(rows(after[k])) for k in before)


def test_the_real_list_against_the_toolkit(tmp_path):
    headers = [h for h in HEADERS if h.is_file()]
    if len(headers) != 2:
        pytest.skip(f"no CUDA toolkit headers under {CUDA_INCLUDE}")
    files = gen.generate(LIST, headers, tmp_path / "out")
    entries = rows(files["include/harness/driver/entries.inl"])
    assert len(entries) > 90
    # Facts checked on the H200 (driver 580.159.04) and in docs/driver-facts.md.
    assert "CUPARITY_ENTRY(cuMemAlloc, 3020, (CUdeviceptr_v2 *, size_t))" in entries
    assert "CUPARITY_ENTRY(cuCtxSynchronize, 2000, ())" in entries
    assert "CUPARITY_ENTRY(cuGetProcAddress, 12000, (const char *, void **, int, cuuint64_t, " \
           "CUdriverProcAddressQueryResult *))" in entries
    assert "CUPARITY_PER_THREAD(cuMemcpyHtoD, 7000, ptds)" in files["include/harness/driver/per_thread_entries.inl"]
    assert "CUPARITY_PER_THREAD(cuLaunchKernel, 7000, ptsz)" in files["include/harness/driver/per_thread_entries.inl"]
    assert "CUPARITY_OLDER_ABI(cuCtxPushCurrent, 2000, 4000)" in files["include/harness/driver/older_abis.inl"]
    assert "cuMemAlloc," not in files["include/harness/driver/older_abis.inl"]
    exported = rows(files["include/harness/driver/exported_symbols.inl"])
    assert "CUPARITY_EXPORTED_SYMBOL(cuCtxCreate_v4)" in exported
    assert "CUPARITY_EXPORTED_SYMBOL(cuMemsetD8_v2_ptds)" in exported


def test_the_build_holds_what_the_list_and_header_give_now(tmp_path):
    # The configured build's tables are not stale: what the generator makes from today's list and
    # header is what the harness was compiled with.
    bin_dir = os.environ.get("CUPARITY_BIN_DIR")
    build = Path(bin_dir).resolve().parent if bin_dir else Path(os.environ.get("CUPARITY_BUILD_DIR", REPO / "build"))
    tables = build / "generated" / "entry_tables"
    if not tables.is_dir() or not all(h.is_file() for h in HEADERS):
        pytest.skip(f"no configured build at {build} or no toolkit headers")
    for relative, text in gen.generate(LIST, HEADERS, tmp_path / "now").items():
        assert (tables / relative).read_text(encoding="utf-8") == text, relative
