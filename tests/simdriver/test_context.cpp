// Contexts: the per-thread stack, created and primary contexts, CUDA 13's _v2 queries, devices.
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

using namespace cuparity::sim::test;

TEST_CASE("the context stack is per thread", "[context]") {
  CUcontext prim = primary();
  auto get = SIM(cuCtxGetCurrent, cuCtxGetCurrent_v4000);
  CUcontext created = nullptr, cur = nullptr;
  REQUIRE(SIM(cuCtxCreate_v2, cuCtxCreate_v3020)(&created, 0, 0) == CUDA_SUCCESS);
  REQUIRE(get(&cur) == CUDA_SUCCESS);
  CHECK(cur == created); // cuCtxCreate pushes

  std::thread other([&] {
    CUcontext seen = reinterpret_cast<CUcontext>(1);
    REQUIRE(get(&seen) == CUDA_SUCCESS);
    CHECK(seen == nullptr); // a new thread has an empty stack
    CHECK(SIM(cuCtxSynchronize, cuCtxSynchronize_v2000)() == CUDA_ERROR_INVALID_CONTEXT);
    CUdeviceptr p = 0;
    CHECK(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&p, 16) == CUDA_ERROR_INVALID_CONTEXT);
    REQUIRE(SIM(cuCtxPushCurrent_v2, cuCtxPushCurrent_v4000)(created) == CUDA_SUCCESS);
    REQUIRE(get(&seen) == CUDA_SUCCESS);
    CHECK(seen == created);
    CUcontext popped = nullptr;
    REQUIRE(SIM(cuCtxPopCurrent_v2, cuCtxPopCurrent_v4000)(&popped) == CUDA_SUCCESS);
    CHECK(popped == created);
    CHECK(SIM(cuCtxPopCurrent_v2, cuCtxPopCurrent_v4000)(&popped) == CUDA_ERROR_INVALID_CONTEXT);
  });
  other.join();

  CUdevice dev = -1;
  REQUIRE(SIM(cuCtxGetDevice, cuCtxGetDevice_v2000)(&dev) == CUDA_SUCCESS);
  CHECK(dev == 0);
  dev = -1;
  REQUIRE(SIM(cuCtxGetDevice_v2, cuCtxGetDevice_v13000)(&dev, created) == CUDA_SUCCESS);
  CHECK(dev == 0);
  REQUIRE(SIM(cuCtxSynchronize_v2, cuCtxSynchronize_v13000)(created) == CUDA_SUCCESS);

  // Destroying the current context pops it; its handle is dead afterwards.
  REQUIRE(SIM(cuCtxDestroy_v2, cuCtxDestroy_v4000)(created) == CUDA_SUCCESS);
  REQUIRE(get(&cur) == CUDA_SUCCESS);
  CHECK(cur == prim);
  CHECK(SIM(cuCtxDestroy_v2, cuCtxDestroy_v4000)(created) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(SIM(cuCtxPushCurrent_v2, cuCtxPushCurrent_v4000)(created) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(SIM(cuCtxGetDevice_v2, cuCtxGetDevice_v13000)(&dev, created) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("cuCtxCreate_v4 with NULL or zeroed params behaves like _v2", "[context]") {
  primary();
  CUcontext a = nullptr, b = nullptr;
  REQUIRE(SIM(cuCtxCreate_v4, cuCtxCreate_v12050)(&a, nullptr, 0, 0) == CUDA_SUCCESS);
  CUctxCreateParams params{};
  REQUIRE(SIM(cuCtxCreate_v4, cuCtxCreate_v12050)(&b, &params, CU_CTX_SCHED_BLOCKING_SYNC, 0) ==
          CUDA_SUCCESS);
  CHECK(SIM(cuCtxCreate_v4, cuCtxCreate_v12050)(&b, &params, 0, 7) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(SIM(cuCtxCreate_v2, cuCtxCreate_v3020)(&b, 3, 0) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(SIM(cuCtxDestroy_v2, cuCtxDestroy_v4000)(b) == CUDA_SUCCESS);
  REQUIRE(SIM(cuCtxDestroy_v2, cuCtxDestroy_v4000)(a) == CUDA_SUCCESS);
}

TEST_CASE("primary context reference counting", "[context]") {
  primary();
  auto state = SIM(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState_v7000);
  unsigned flags = 0;
  int active = 0;
  REQUIRE(state(0, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 1);
  CHECK(SIM(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v11000)(0, 0) ==
        CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE);
  REQUIRE(SIM(cuDevicePrimaryCtxSetFlags_v2,
              cuDevicePrimaryCtxSetFlags_v11000)(0, CU_CTX_SCHED_SPIN) == CUDA_SUCCESS);
  REQUIRE(state(0, &flags, &active) == CUDA_SUCCESS);
  CHECK(flags == CU_CTX_SCHED_SPIN);
  CHECK(SIM(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain_v7000)(nullptr, 0) ==
        CUDA_ERROR_INVALID_VALUE);
  CUcontext c = nullptr;
  CHECK(SIM(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain_v7000)(&c, 1) ==
        CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("device queries", "[device]") {
  sim();
  int n = 0;
  REQUIRE(SIM(cuDeviceGetCount, cuDeviceGetCount_v2000)(&n) == CUDA_SUCCESS);
  CHECK(n == 1);
  char name[64] = {};
  REQUIRE(SIM(cuDeviceGetName, cuDeviceGetName_v2000)(name, sizeof(name), 0) == CUDA_SUCCESS);
  CHECK(std::string(name) == "cuparity simulated device 0");
  auto attr = SIM(cuDeviceGetAttribute, cuDeviceGetAttribute_v2000);
  int v = 0;
  REQUIRE(attr(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0) == CUDA_SUCCESS);
  CHECK(v == 232448);
  REQUIRE(attr(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS);
  CHECK(v == 9);
  CHECK(attr(&v, static_cast<CUdevice_attribute>(100000), 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(attr(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 3) == CUDA_ERROR_INVALID_DEVICE);
  CUuuid a{}, b{};
  REQUIRE(SIM(cuDeviceGetUuid_v2, cuDeviceGetUuid_v11040)(&a, 0) == CUDA_SUCCESS);
  REQUIRE(SIM(cuDeviceGetUuid_v2, cuDeviceGetUuid_v11040)(&b, 0) == CUDA_SUCCESS);
  CHECK(std::memcmp(a.bytes, b.bytes, 16) == 0);
  size_t total = 0;
  REQUIRE(SIM(cuDeviceTotalMem_v2, cuDeviceTotalMem_v3020)(&total, 0) == CUDA_SUCCESS);
  CHECK(total == 16ULL << 30);
  CHECK(SIM(cuInit, cuInit_v2000)(1) == CUDA_ERROR_INVALID_VALUE);
}
