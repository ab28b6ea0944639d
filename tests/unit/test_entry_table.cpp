// The entry table covers Numba's prototype table and carries the ABI versions probing lands on.
#include "harness/driver/entry.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>

using namespace cuparity;

TEST_CASE("entry table covers every function of Numba's API_PROTOTYPES", "[entries]") {
  // The 75 names of numba/cuda/cudadrv/drvapi.py (docs/driver-facts.md#numba-prototype-table).
  const char *numba_names[] = {"cuInit",
                               "cuDriverGetVersion",
                               "cuDeviceGetCount",
                               "cuDeviceGet",
                               "cuDeviceGetName",
                               "cuDeviceGetAttribute",
                               "cuDeviceComputeCapability",
                               "cuDeviceGetUuid",
                               "cuDeviceCanAccessPeer",
                               "cuDevicePrimaryCtxGetState",
                               "cuDevicePrimaryCtxRelease",
                               "cuDevicePrimaryCtxReset",
                               "cuDevicePrimaryCtxRetain",
                               "cuDevicePrimaryCtxSetFlags",
                               "cuCtxCreate",
                               "cuCtxGetDevice",
                               "cuCtxGetCurrent",
                               "cuCtxPushCurrent",
                               "cuCtxPopCurrent",
                               "cuCtxDestroy",
                               "cuCtxSynchronize",
                               "cuCtxEnablePeerAccess",
                               "cuModuleLoadDataEx",
                               "cuModuleUnload",
                               "cuModuleGetFunction",
                               "cuModuleGetGlobal",
                               "cuFuncSetCacheConfig",
                               "cuFuncGetAttribute",
                               "cuMemAlloc",
                               "cuMemAllocManaged",
                               "cuMemFree",
                               "cuMemsetD8",
                               "cuMemsetD8Async",
                               "cuMemcpyHtoD",
                               "cuMemcpyHtoDAsync",
                               "cuMemcpyDtoD",
                               "cuMemcpyDtoDAsync",
                               "cuMemcpyDtoH",
                               "cuMemcpyDtoHAsync",
                               "cuMemHostAlloc",
                               "cuMemFreeHost",
                               "cuMemHostRegister",
                               "cuMemHostUnregister",
                               "cuMemHostGetDevicePointer",
                               "cuMemHostGetFlags",
                               "cuMemGetInfo",
                               "cuMemGetAddressRange",
                               "cuPointerGetAttribute",
                               "cuStreamCreate",
                               "cuStreamDestroy",
                               "cuStreamSynchronize",
                               "cuStreamAddCallback",
                               "cuStreamWaitEvent",
                               "cuEventCreate",
                               "cuEventDestroy",
                               "cuEventElapsedTime",
                               "cuEventQuery",
                               "cuEventRecord",
                               "cuEventSynchronize",
                               "cuLaunchKernel",
                               "cuLaunchCooperativeKernel",
                               "cuLinkCreate",
                               "cuLinkAddData",
                               "cuLinkAddFile",
                               "cuLinkComplete",
                               "cuLinkDestroy",
                               "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                               "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                               "cuOccupancyMaxPotentialBlockSize",
                               "cuOccupancyMaxPotentialBlockSizeWithFlags",
                               "cuIpcGetMemHandle",
                               "cuIpcOpenMemHandle",
                               "cuIpcCloseMemHandle",
                               "cuProfilerStart",
                               "cuProfilerStop"};
  for (const char *n : numba_names) {
    INFO(n);
    CHECK(find_entry(n).has_value());
  }
  // ...plus what the case suites need beyond Numba's table.
  for (const char *n :
       {"cuGetProcAddress", "cuGetErrorName", "cuGetErrorString", "cuLaunchHostFunc",
        "cuMemAllocAsync", "cuMemFreeAsync", "cuIpcGetEventHandle", "cuIpcOpenEventHandle",
        "cuModuleLoadData", "cuFuncSetAttribute", "cuCtxGetStreamPriorityRange"}) {
    INFO(n);
    CHECK(find_entry(n).has_value());
  }
  CHECK_FALSE(find_entry("cuMemAlloc_v2").has_value()); // base names only
}

TEST_CASE("entry ABI versions are those Numba's probing lands on", "[entries]") {
  auto abi = [](const char *n) { return info(*find_entry(n)).abi_version; };
  CHECK(abi("cuMemAlloc") == 3020);       // cuMemAlloc_v2
  CHECK(abi("cuDeviceGetUuid") == 11040); // cuDeviceGetUuid_v2
  CHECK(abi("cuCtxCreate") == 3020);      // cuCtxCreate_v2, 3 arguments (not _v4)
  CHECK(abi("cuIpcOpenMemHandle") == 11000);
  CHECK(abi("cuGetProcAddress") == 12000); // cuGetProcAddress_v2
  // The pins: the bare ABI, not CUDA 13's differently shaped _v2 functions.
  CHECK(abi("cuCtxGetDevice") == 2000);
  CHECK(abi("cuCtxSynchronize") == 2000);
}

TEST_CASE("entry ids, names and table order agree", "[entries]") {
  std::set<std::string_view> names;
  std::size_t i = 0;
  for (const auto &e : all_entries()) {
    CHECK(static_cast<std::size_t>(e.id) == i++);
    CHECK(names.insert(e.name).second); // no duplicates
    CHECK(info(e.id).name == e.name);
  }
  CHECK(all_entries().size() == entry_count);
}
