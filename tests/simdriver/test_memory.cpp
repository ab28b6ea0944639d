// Memory: allocation bookkeeping, errors, copies and memsets, host/managed/stream-ordered memory.
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

using namespace cuparity::sim::test;

TEST_CASE("cuMemAlloc, cuMemGetInfo, cuMemGetAddressRange and cuMemFree", "[memory]") {
  primary();
  auto alloc = SIM(cuMemAlloc_v2, cuMemAlloc_v3020);
  auto free_ = SIM(cuMemFree_v2, cuMemFree_v3020);
  auto info = SIM(cuMemGetInfo_v2, cuMemGetInfo_v3020);
  size_t free_before = 0, total = 0;
  REQUIRE(info(&free_before, &total) == CUDA_SUCCESS);
  CHECK(total == 16ULL << 30);

  CUdeviceptr p = 0;
  REQUIRE(alloc(&p, 1 << 20) == CUDA_SUCCESS);
  size_t free_after = 0;
  REQUIRE(info(&free_after, &total) == CUDA_SUCCESS);
  CHECK(free_before - free_after == 1 << 20);

  CUdeviceptr base = 0;
  size_t size = 0;
  REQUIRE(SIM(cuMemGetAddressRange_v2, cuMemGetAddressRange_v3020)(&base, &size, p + 4096) ==
          CUDA_SUCCESS);
  CHECK(base == p);
  CHECK(size == 1 << 20);
  CHECK(SIM(cuMemGetAddressRange_v2, cuMemGetAddressRange_v3020)(&base, &size, 16) ==
        CUDA_ERROR_NOT_FOUND);

  CHECK(alloc(&p, 0) == CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr huge = 0;
  CHECK(alloc(&huge, 1ULL << 40) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(free_(p + 8) == CUDA_ERROR_INVALID_VALUE);
  CHECK(free_(0xdead0000) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(free_(p) == CUDA_SUCCESS);
  CHECK(free_(p) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(info(&free_after, &total) == CUDA_SUCCESS);
  CHECK(free_after == free_before);
}

TEST_CASE("copies, memsets and pointer attributes", "[memory]") {
  CUcontext ctx = primary();
  CUdeviceptr a = 0, b = 0;
  REQUIRE(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&a, 64) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&b, 64) == CUDA_SUCCESS);
  std::vector<std::uint32_t> host(16), back(16, 0);
  for (std::uint32_t i = 0; i < 16; ++i)
    host[i] = i * 3;
  REQUIRE(SIM(cuMemcpyHtoD_v2, cuMemcpyHtoD_v3020)(a, host.data(), 64) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v7000_ptds)(b, a, 64) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemcpyDtoH_v2, cuMemcpyDtoH_v3020)(back.data(), b, 64) == CUDA_SUCCESS);
  CHECK(back == host);
  CHECK(SIM(cuMemcpyHtoD_v2, cuMemcpyHtoD_v3020)(a, host.data(), 65) == CUDA_ERROR_INVALID_VALUE);

  REQUIRE(SIM(cuMemsetD32_v2, cuMemsetD32_v3020)(a, 0xabcdef01u, 16) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemsetD8_v2_ptds, cuMemsetD8_v7000_ptds)(a, 0x7f, 4) == CUDA_SUCCESS);
  CHECK(SIM(cuMemsetD32_v2, cuMemsetD32_v3020)(a + 2, 0, 1) == CUDA_ERROR_INVALID_VALUE);
  CUstream s = nullptr;
  REQUIRE(SIM(cuStreamCreate, cuStreamCreate_v2000)(&s, 0) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemsetD8Async, cuMemsetD8Async_v3020)(b, 0x11, 64, s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v3020)(back.data(), a, 64, s) ==
          CUDA_SUCCESS);
  REQUIRE(SIM(cuStreamSynchronize, cuStreamSynchronize_v2000)(s) == CUDA_SUCCESS);
  CHECK(back[0] == 0x7f7f7f7fu);
  CHECK(back[1] == 0xabcdef01u);

  auto attr = SIM(cuPointerGetAttribute, cuPointerGetAttribute_v4000);
  CUcontext owner = nullptr;
  unsigned type = 0;
  int ordinal = -1, managed = -1;
  CUdeviceptr dev = 0;
  REQUIRE(attr(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, a + 8) == CUDA_SUCCESS);
  CHECK(owner == ctx);
  REQUIRE(attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a) == CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  REQUIRE(attr(&dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, a + 8) == CUDA_SUCCESS);
  CHECK(dev == a + 8);
  REQUIRE(attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a) == CUDA_SUCCESS);
  CHECK(ordinal == 0);
  REQUIRE(attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, a) == CUDA_SUCCESS);
  CHECK(managed == 0);
  CHECK(attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0x1000) == CUDA_ERROR_INVALID_VALUE);

  REQUIRE(SIM(cuStreamDestroy_v2, cuStreamDestroy_v4000)(s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(a) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(b) == CUDA_SUCCESS);
}

TEST_CASE("host, managed and stream-ordered memory", "[memory]") {
  primary();
  void *host = nullptr;
  REQUIRE(SIM(cuMemHostAlloc, cuMemHostAlloc_v2020)(&host, 4096, CU_MEMHOSTALLOC_DEVICEMAP) ==
          CUDA_SUCCESS);
  unsigned flags = 0;
  REQUIRE(SIM(cuMemHostGetFlags, cuMemHostGetFlags_v2030)(&flags, host) == CUDA_SUCCESS);
  CHECK(flags == CU_MEMHOSTALLOC_DEVICEMAP);
  CUdeviceptr mapped = 0;
  REQUIRE(SIM(cuMemHostGetDevicePointer_v2, cuMemHostGetDevicePointer_v3020)(&mapped, host, 0) ==
          CUDA_SUCCESS);
  CHECK(mapped == reinterpret_cast<CUdeviceptr>(host));
  unsigned type = 0;
  REQUIRE(SIM(cuPointerGetAttribute, cuPointerGetAttribute_v4000)(
              &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, mapped) == CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_HOST);
  REQUIRE(SIM(cuMemFreeHost, cuMemFreeHost_v2000)(host) == CUDA_SUCCESS);
  CHECK(SIM(cuMemFreeHost, cuMemFreeHost_v2000)(host) == CUDA_ERROR_INVALID_VALUE);

  std::vector<char> buffer(8192);
  auto reg = SIM(cuMemHostRegister_v2, cuMemHostRegister_v6050);
  REQUIRE(reg(buffer.data(), buffer.size(), 0) == CUDA_SUCCESS);
  CHECK(reg(buffer.data() + 16, 16, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  REQUIRE(SIM(cuMemHostUnregister, cuMemHostUnregister_v4000)(buffer.data()) == CUDA_SUCCESS);
  CHECK(SIM(cuMemHostUnregister, cuMemHostUnregister_v4000)(buffer.data()) ==
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);

  CUdeviceptr m = 0;
  REQUIRE(SIM(cuMemAllocManaged, cuMemAllocManaged_v6000)(&m, 1024, CU_MEM_ATTACH_GLOBAL) ==
          CUDA_SUCCESS);
  int is_managed = 0;
  REQUIRE(SIM(cuPointerGetAttribute, cuPointerGetAttribute_v4000)(
              &is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m) == CUDA_SUCCESS);
  CHECK(is_managed == 1);
  CUmemLocation device0{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemLocation device9{CU_MEM_LOCATION_TYPE_DEVICE, 9};
  CHECK(SIM(cuMemAdvise_v2, cuMemAdvise_v12020)(m, 1024, CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                                                device0) == CUDA_SUCCESS);
  CHECK(SIM(cuMemAdvise_v2, cuMemAdvise_v12020)(m, 1024, CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                                                device9) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(SIM(cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v12020)(m, 1024, device0, 0, nullptr) ==
        CUDA_SUCCESS);
  CHECK(SIM(cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v12020)(m, 2048, device0, 0, nullptr) ==
        CUDA_ERROR_INVALID_VALUE);
  REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(m) == CUDA_SUCCESS);

  CUstream s = nullptr;
  REQUIRE(SIM(cuStreamCreate, cuStreamCreate_v2000)(&s, 0) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(SIM(cuMemAllocAsync, cuMemAllocAsync_v11020)(&d, 256, s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemsetD8Async, cuMemsetD8Async_v3020)(d, 3, 256, s) == CUDA_SUCCESS);
  unsigned char first = 0;
  REQUIRE(SIM(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v3020)(&first, d, 1, s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemFreeAsync, cuMemFreeAsync_v11020)(d, s) == CUDA_SUCCESS);
  CHECK(SIM(cuMemFreeAsync, cuMemFreeAsync_v11020)(d, s) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(SIM(cuStreamSynchronize, cuStreamSynchronize_v2000)(s) == CUDA_SUCCESS);
  CHECK(first == 3);
  REQUIRE(SIM(cuStreamDestroy_v2, cuStreamDestroy_v4000)(s) == CUDA_SUCCESS);
}
