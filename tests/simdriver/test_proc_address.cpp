// cuGetProcAddress_v2 semantics and the binding audit: both backends' resolution rules must land
// on the address the driver itself reports.
#include "test_support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

using namespace cuparity::sim::test;

namespace {
constexpr cuuint64_t legacy_flag = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
constexpr cuuint64_t ptds_flag = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

struct entry {
  const char *base;
  int abi;
  int per_thread_version = 0;
};

// The harness's entry table (generated with the simulated driver's own table from
// harness/driver/entries.list: cmake/entry_tables.cmake): every entry must resolve.
#define CUPARITY_ENTRY(base, abi, params) {#base, abi},
const entry table_entries[] = {
#include "harness/driver/entries.inl"
};
#undef CUPARITY_ENTRY
struct per_thread {
  const char *base;
  int version;
};
#define CUPARITY_PER_THREAD(base, version, suffix) {#base, version},
const per_thread per_thread_entries[] = {
#include "harness/driver/per_thread_entries.inl"
};
#undef CUPARITY_PER_THREAD
const std::vector<entry> harness_entries = [] {
  std::vector<entry> out(std::begin(table_entries), std::end(table_entries));
  for (auto &e : out)
    for (const auto &p : per_thread_entries)
      if (std::string_view(p.base) == e.base)
        e.per_thread_version = p.version;
  return out;
}();

// Numba's _find_api probing, including its two pins.
void *probe_internal(const std::string &base, bool ptds) {
  if (base == "cuCtxGetDevice" || base == "cuCtxSynchronize")
    return sim().get(base.c_str());
  const char *with_ptds[] = {"_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz", "_v2", ""};
  const char *without[] = {"_v2", ""};
  const auto &suffixes = ptds
                             ? std::vector<const char *>(std::begin(with_ptds), std::end(with_ptds))
                             : std::vector<const char *>(std::begin(without), std::end(without));
  for (const char *suffix : suffixes)
    if (void *p = sim().get((base + suffix).c_str()))
      return p;
  return nullptr;
}

std::string symbol_at(void *p) {
  Dl_info info{};
  return p != nullptr && dladdr(p, &info) && info.dli_sname ? info.dli_sname : "(none)";
}
} // namespace

TEST_CASE("per-thread flag picks the _ptsz/_ptds export", "[proc]") {
  sim();
  CHECK(proc("cuStreamSynchronize", 7000, ptds_flag) == sim().get("cuStreamSynchronize_ptsz"));
  // Below 7000 there is no per-thread variant to give (driver 580 answers so).
  CHECK(proc("cuStreamSynchronize", 2000, ptds_flag) == nullptr);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  CHECK(proc("cuMemcpyHtoD", 3020, ptds_flag, &status) == nullptr);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(proc("cuStreamSynchronize", 2000, legacy_flag) == sim().get("cuStreamSynchronize"));
  CHECK(proc("cuStreamSynchronize", 2000, 0) == sim().get("cuStreamSynchronize"));
  CHECK(proc("cuMemcpyHtoD", 7000, ptds_flag) == sim().get("cuMemcpyHtoD_v2_ptds"));
  CHECK(proc("cuMemcpyHtoD", 3020, legacy_flag) == sim().get("cuMemcpyHtoD_v2"));
  CHECK(proc("cuMemsetD8Async", 7000, ptds_flag) == sim().get("cuMemsetD8Async_ptsz"));
  CHECK(proc("cuLaunchKernel", 7000, ptds_flag) == sim().get("cuLaunchKernel_ptsz"));
  CHECK(proc("cuMemPrefetchAsync", 12020, ptds_flag) == sim().get("cuMemPrefetchAsync_v2_ptsz"));
  CHECK(proc("cuMemPrefetchAsync", 8000, ptds_flag) == sim().get("cuMemPrefetchAsync_ptsz"));
  // No per-thread variant: the plain export either way.
  CHECK(proc("cuMemAlloc", 3020, ptds_flag) == sim().get("cuMemAlloc_v2"));
}

TEST_CASE("the newest ABI not above the requested version wins", "[proc]") {
  sim();
  CHECK(proc("cuCtxGetDevice", 2000, legacy_flag) == sim().get("cuCtxGetDevice"));
  CHECK(proc("cuCtxGetDevice", 12090, legacy_flag) == sim().get("cuCtxGetDevice"));
  CHECK(proc("cuCtxGetDevice", 13000, legacy_flag) == sim().get("cuCtxGetDevice_v2"));
  CHECK(proc("cuMemAlloc", 2000, legacy_flag) == sim().get("cuMemAlloc"));
  CHECK(proc("cuMemAlloc", 3020, legacy_flag) == sim().get("cuMemAlloc_v2"));
  CHECK(proc("cuMemAlloc", 13000, legacy_flag) == sim().get("cuMemAlloc_v2"));
  CHECK(proc("cuCtxCreate", 3020, legacy_flag) == sim().get("cuCtxCreate_v2"));
  CHECK(proc("cuCtxCreate", 11040, legacy_flag) == sim().get("cuCtxCreate_v3"));
  CHECK(proc("cuCtxCreate", 12050, legacy_flag) == sim().get("cuCtxCreate_v4"));
  CHECK(proc("cuGetProcAddress", 12000, 0) == sim().get("cuGetProcAddress_v2"));
  CHECK(proc("cuGetProcAddress", 11030, 0) == sim().get("cuGetProcAddress"));
}

TEST_CASE("cuGetProcAddress_v2 statuses and errors", "[proc]") {
  sim();
  CUdriverProcAddressQueryResult status{};
  CUresult rc{};
  CHECK(proc("cuNoSuchFunction", 13000, 0, &status, &rc) == nullptr);
  CHECK(rc == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(proc("cuMemAllocAsync", 11000, 0, &status, &rc) == nullptr);
  CHECK(rc == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(proc("cuMemAlloc", 13010, 0, &status, &rc) == nullptr); // newer than the driver
  CHECK(rc == CUDA_ERROR_INVALID_VALUE);
  CHECK(proc("cuMemAlloc", 3020, 4, &status, &rc) == nullptr); // unknown flag
  CHECK(rc == CUDA_ERROR_INVALID_VALUE);
  CHECK(proc("cuMemAlloc", 3020, legacy_flag, &status, &rc) != nullptr);
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  // The 4-argument 11.3 form answers the same.
  void *pfn = nullptr;
  auto v1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(sim().get("cuGetProcAddress"));
  REQUIRE(v1("cuMemAlloc", &pfn, 3020, 0) == CUDA_SUCCESS);
  CHECK(pfn == sim().get("cuMemAlloc_v2"));
}

TEST_CASE("binding audit: internal probing and cuGetProcAddress agree on every entry", "[proc]") {
  sim();
  for (const entry &e : harness_entries) {
    for (bool ptds : {false, true}) {
      INFO(e.base << " abi " << e.abi << (ptds ? " ptds" : " legacy"));
      void *internal = probe_internal(e.base, ptds);
      // In PTDS mode a per-thread entry is asked for at its per-thread version, as the harness
      // does (harness/driver/per_thread_entries.inl).
      const int version = ptds && e.per_thread_version > e.abi ? e.per_thread_version : e.abi;
      void *nvidia = proc(e.base, version, ptds ? ptds_flag : legacy_flag);
      REQUIRE(internal != nullptr);
      CHECK(symbol_at(internal) == symbol_at(nvidia));
      CHECK(internal == nvidia);
    }
  }
}

// Every ABI of the whole driver API (harness/driver/driver_api.inl), implemented or not.
struct api_row {
  const char *base;
  int version;
  const char *symbol;
  int per_thread_version;
  const char *per_thread_symbol;
};
#define CUPARITY_API_ABI(base, version, symbol, parameters, pt_version, pt_symbol)                 \
  {#base, version, #symbol, pt_version, #pt_symbol},
const api_row api_rows[] = {
#include "harness/driver/driver_api.inl"
};

TEST_CASE("cuGetProcAddress answers every function and ABI of the whole driver API", "[proc]") {
  sim();
  std::size_t answered = 0;
  for (const api_row &row : api_rows) {
    if (row.version > 13000)
      continue; // a newer header set's ABI: above the driver this models
    INFO(row.base << " " << row.version);
    void *exported = sim().get(row.symbol);
    REQUIRE(exported != nullptr);
    CHECK(symbol_at(exported) == row.symbol);
    CHECK(proc(row.base, row.version, legacy_flag) == exported);
    ++answered;
    if (*row.per_thread_symbol == '\0')
      continue;
    void *per_thread = sim().get(row.per_thread_symbol);
    REQUIRE(per_thread != nullptr);
    CHECK(symbol_at(per_thread) == row.per_thread_symbol);
    CHECK(proc(row.base, std::max(row.version, row.per_thread_version), ptds_flag) == per_thread);
  }
  CHECK(answered > 500);
}

TEST_CASE("a function the simulated driver does not implement is a stub: NOT_SUPPORTED",
          "[proc][stubs]") {
  sim();
  CUdriverProcAddressQueryResult status{};
  void *create = proc("cuGraphCreate", 13000, 0, &status);
  REQUIRE(create != nullptr);
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(create == sim().get("cuGraphCreate"));
  CHECK(symbol_at(create) == "cuGraphCreate");
  CUgraph graph = nullptr;
  CHECK(reinterpret_cast<PFN_cuGraphCreate_v10000>(create)(&graph, 0) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(graph == nullptr);
  // Graphs came with CUDA 10.0: below its first ABI there is nothing to give.
  CHECK(proc("cuGraphCreate", 9020, 0, &status) == nullptr);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

  // A stub's ABIs and per-thread variant are each their own symbol, at their own address.
  void *launch = proc("cuGraphLaunch", 10000, legacy_flag);
  void *launch_pt = proc("cuGraphLaunch", 10000, ptds_flag);
  CHECK(launch == sim().get("cuGraphLaunch"));
  CHECK(launch_pt == sim().get("cuGraphLaunch_ptsz"));
  CHECK(symbol_at(launch_pt) == "cuGraphLaunch_ptsz");
  CHECK(launch != launch_pt);
  CHECK(reinterpret_cast<PFN_cuGraphLaunch_v10000_ptsz>(launch_pt)(nullptr, nullptr) ==
        CUDA_ERROR_NOT_SUPPORTED);
  CHECK(proc("cuArrayCreate", 2000, legacy_flag) == sim().get("cuArrayCreate"));
  CHECK(proc("cuArrayCreate", 3020, legacy_flag) == sim().get("cuArrayCreate_v2"));
  CHECK(sim().get("cuArrayCreate") != sim().get("cuArrayCreate_v2"));
}

TEST_CASE("the legacy model exports the stubs of its own version only", "[proc][legacy][stubs]") {
  REQUIRE(legacy().loaded());
  CHECK(legacy().get("cuGraphCreate") != nullptr);                // CUDA 10.0
  CHECK(legacy().get("cuGraphInstantiateWithParams") == nullptr); // CUDA 12.0
  CHECK(legacy().get("cuGraphLaunch_ptsz") != nullptr);           // CUDA 10.0
}

TEST_CASE("errors have names and descriptions", "[proc]") {
  sim();
  auto name = reinterpret_cast<PFN_cuGetErrorName_v6000>(sim().get("cuGetErrorName"));
  auto text = reinterpret_cast<PFN_cuGetErrorString_v6000>(sim().get("cuGetErrorString"));
  const char *s = nullptr;
  REQUIRE(name(CUDA_ERROR_INVALID_CONTEXT, &s) == CUDA_SUCCESS);
  CHECK(std::string(s) == "CUDA_ERROR_INVALID_CONTEXT");
  REQUIRE(name(CUDA_ERROR_NOT_READY, &s) == CUDA_SUCCESS);
  CHECK(std::string(s) == "CUDA_ERROR_NOT_READY");
  REQUIRE(text(CUDA_ERROR_OUT_OF_MEMORY, &s) == CUDA_SUCCESS);
  CHECK(std::strlen(s) > 10);
  CHECK(name(static_cast<CUresult>(12345), &s) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("the legacy driver model lacks the newer entry points", "[proc][legacy]") {
  REQUIRE(legacy().loaded());
  CHECK(legacy().get("cuGetProcAddress_v2") == nullptr);
  CHECK(legacy().get("cuGetProcAddress") == nullptr);
  CHECK(legacy().get("cuMemAllocAsync") == nullptr);
  CHECK(legacy().get("cuMemFreeAsync_ptsz") == nullptr);
  CHECK(legacy().get("cuLaunchHostFunc") == nullptr);
  CHECK(legacy().get("cuCtxGetDevice_v2") == nullptr);
  CHECK(legacy().get("cuCtxSynchronize_v2") == nullptr);
  CHECK(legacy().get("cuCtxGetDevice") != nullptr);
  CHECK(legacy().get("cuMemAlloc_v2") != nullptr);
  CHECK(std::string(static_cast<const char *>(legacy().get("cuparity_simulated_driver")))
            .find("cuparity simdriver") == 0);
  int version = 0;
  auto get_version =
      reinterpret_cast<PFN_cuDriverGetVersion_v2020>(legacy().get("cuDriverGetVersion"));
  REQUIRE(get_version(&version) == CUDA_SUCCESS);
  CHECK(version == 11000);
}

TEST_CASE("each model exports its release: its own, then the driver version it models",
          "[proc][legacy]") {
  using release_fn = const char *(*)();
  auto current = reinterpret_cast<release_fn>(sim().get("cuparity_simulated_driver_release"));
  auto old = reinterpret_cast<release_fn>(legacy().get("cuparity_simulated_driver_release"));
  REQUIRE(current != nullptr);
  REQUIRE(old != nullptr);
  CHECK(std::string(current()) == "sim-1.0-13000");
  CHECK(std::string(old()) == "sim-1.0-legacy-11000");
}
