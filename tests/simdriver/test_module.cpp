// Modules and launches: image scanning, the kernel registry, launch validation, argument passing
// through kernelParams and `extra`, globals, the linker's undefined references, occupancy.
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

using namespace cuparity::sim::test;

namespace {
CUmodule load(const std::string &image) {
  CUmodule m = nullptr;
  REQUIRE(SIM(cuModuleLoadData, cuModuleLoadData_v2000)(&m, image.data()) == CUDA_SUCCESS);
  return m;
}
CUfunction function(CUmodule m, const char *name) {
  CUfunction f = nullptr;
  REQUIRE(SIM(cuModuleGetFunction, cuModuleGetFunction_v2000)(&f, m, name) == CUDA_SUCCESS);
  return f;
}
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shared, void **params, void **extra = nullptr) {
  return SIM(cuLaunchKernel, cuLaunchKernel_v4000)(f, gx, gy, gz, bx, by, bz, shared, nullptr,
                                                   params, extra);
}
void check_write_index(CUfunction f, unsigned g[3], unsigned b[3]) {
  const size_t n = size_t{g[0]} * g[1] * g[2] * b[0] * b[1] * b[2];
  CUdeviceptr out = 0;
  REQUIRE(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&out, n * 4) == CUDA_SUCCESS);
  void *params[] = {&out};
  REQUIRE(launch(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, params) == CUDA_SUCCESS);
  std::vector<std::uint32_t> host(n, 0xffffffffu);
  REQUIRE(SIM(cuMemcpyDtoH_v2, cuMemcpyDtoH_v3020)(host.data(), out, n * 4) == CUDA_SUCCESS);
  for (size_t i = 0; i < n; ++i)
    if (host[i] != i)
      FAIL("out[" << i << "] = " << host[i]);
  REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(out) == CUDA_SUCCESS);
}
std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace

TEST_CASE("PTX module: cuparity_write_index on a 3D grid", "[module]") {
  primary();
  CUmodule m = load(ptx_with_entries({"cuparity_write_index", "cuparity_without_cpu_version"}));
  CUfunction f = function(m, "cuparity_write_index");
  unsigned grid[3] = {3, 2, 2}, block[3] = {4, 2, 3};
  check_write_index(f, grid, block);
  CUfunction g = nullptr;
  auto get = SIM(cuModuleGetFunction, cuModuleGetFunction_v2000);
  CHECK(get(&g, m, "cuparity_without_cpu_version") == CUDA_ERROR_NOT_FOUND);
  CHECK(get(&g, m, "cuparity_fill_u32") == CUDA_ERROR_NOT_FOUND); // not in this image
  REQUIRE(SIM(cuModuleUnload, cuModuleUnload_v2000)(m) == CUDA_SUCCESS);
  void *params[] = {nullptr};
  CHECK(launch(f, 1, 1, 1, 1, 1, 1, 0, params) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("bad images", "[module]") {
  primary();
  CUmodule m = nullptr;
  auto load_data = SIM(cuModuleLoadData, cuModuleLoadData_v2000);
  CHECK(load_data(&m, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(load_data(&m, "") == CUDA_ERROR_INVALID_IMAGE);
  CHECK(load_data(&m, "not a kernel image") == CUDA_ERROR_INVALID_IMAGE);
}

TEST_CASE("launch arguments through extra, and launch validation", "[module]") {
  primary();
  CUfunction fill = kernel("cuparity_fill_u32");
  CUdeviceptr out = 0;
  REQUIRE(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&out, 400) == CUDA_SUCCESS);
  // Natural alignment: pointer at 0, u32 at 8, u64 at 16.
  struct {
    CUdeviceptr out;
    unsigned value;
    unsigned pad;
    unsigned long long n;
  } args{out, 0x5eed, 0, 100};
  size_t size = sizeof(args);
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  REQUIRE(launch(fill, 1, 1, 1, 32, 1, 1, 0, nullptr, extra) == CUDA_SUCCESS);
  std::vector<unsigned> host(100);
  REQUIRE(SIM(cuMemcpyDtoH_v2, cuMemcpyDtoH_v3020)(host.data(), out, 400) == CUDA_SUCCESS);
  CHECK(host == std::vector<unsigned>(100, 0x5eed));

  void *params[] = {&args.out, &args.value, &args.n};
  CHECK(launch(fill, 1, 1, 1, 32, 1, 1, 0, params, extra) == CUDA_ERROR_INVALID_VALUE);
  CHECK(launch(fill, 1, 1, 1, 1024, 2, 1, 0, params) == CUDA_ERROR_INVALID_VALUE);
  CHECK(launch(fill, 1, 1, 1, 1, 1, 65, 0, params) == CUDA_ERROR_INVALID_VALUE);
  CHECK(launch(fill, 0, 1, 1, 1, 1, 1, 0, params) == CUDA_ERROR_INVALID_VALUE);
  CHECK(launch(fill, 1, 1, 1, 1, 1, 1, 49153, params) == CUDA_ERROR_INVALID_VALUE);
  auto set_attr = SIM(cuFuncSetAttribute, cuFuncSetAttribute_v9000);
  CHECK(set_attr(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449) ==
        CUDA_ERROR_INVALID_VALUE);
  REQUIRE(set_attr(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000) == CUDA_SUCCESS);
  CHECK(launch(fill, 1, 1, 1, 1, 1, 1, 49153, params) == CUDA_SUCCESS);
  CHECK(launch(fill, 1, 1, 1, 1, 1, 1, 100001, params) == CUDA_ERROR_INVALID_VALUE);
  int v = 0;
  REQUIRE(SIM(cuFuncGetAttribute, cuFuncGetAttribute_v2020)(
              &v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fill) == CUDA_SUCCESS);
  CHECK(v == 100000);
  REQUIRE(set_attr(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152) == CUDA_SUCCESS);
  REQUIRE(SIM(cuCtxSynchronize, cuCtxSynchronize_v2000)() == CUDA_SUCCESS);

  // Sixteen pointer arguments.
  void *ptrs[16] = {};
  void *many[16];
  for (int i = 0; i < 16; ++i)
    many[i] = &ptrs[i];
  CHECK(launch(kernel("cuparity_args16"), 1, 1, 1, 1, 1, 1, 0, many) == CUDA_SUCCESS);
  REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(out) == CUDA_SUCCESS);
}

TEST_CASE("module globals and occupancy", "[module]") {
  primary();
  CUmodule m = load(ptx_with_entries({"cuparity_empty"},
                                     ".visible .global .align 4 .b8 cuparity_counter[16];\n"));
  CUdeviceptr p = 0;
  size_t bytes = 0;
  auto get_global = SIM(cuModuleGetGlobal_v2, cuModuleGetGlobal_v3020);
  REQUIRE(get_global(&p, &bytes, m, "cuparity_counter") == CUDA_SUCCESS);
  CHECK(bytes == 16);
  REQUIRE(SIM(cuMemsetD32_v2, cuMemsetD32_v3020)(p, 7, 4) == CUDA_SUCCESS);
  CHECK(get_global(&p, &bytes, m, "nope") == CUDA_ERROR_NOT_FOUND);

  CUfunction f = function(m, "cuparity_empty");
  int blocks = 0, min_grid = 0, block = 0;
  REQUIRE(SIM(cuOccupancyMaxActiveBlocksPerMultiprocessor,
              cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050)(&blocks, f, 256, 0) ==
          CUDA_SUCCESS);
  CHECK(blocks == 8);
  REQUIRE(SIM(cuOccupancyMaxPotentialBlockSize, cuOccupancyMaxPotentialBlockSize_v6050)(
              &min_grid, &block, f, nullptr, 0, 0) == CUDA_SUCCESS);
  CHECK(block == 1024);
  CHECK(min_grid == 2 * 132);
  REQUIRE(SIM(cuModuleUnload, cuModuleUnload_v2000)(m) == CUDA_SUCCESS);
  CHECK(SIM(cuModuleUnload, cuModuleUnload_v2000)(m) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("linker: undefined references fail with a log, complete links load", "[module][link]") {
  primary();
  auto create = SIM(cuLinkCreate_v2, cuLinkCreate_v6050);
  auto add = SIM(cuLinkAddData_v2, cuLinkAddData_v6050);
  auto complete = SIM(cuLinkComplete, cuLinkComplete_v5050);
  auto destroy = SIM(cuLinkDestroy, cuLinkDestroy_v5050);
  const std::string caller = ".version 9.0\n.target sm_90\n.address_size 64\n"
                             ".extern .func (.param .b32 r) cuparity_helper(.param .b32 x);\n"
                             ".visible .entry cuparity_empty()\n{\n\tret;\n}\n";
  const std::string helper = ".version 9.0\n.target sm_90\n.address_size 64\n"
                             ".visible .func (.param .b32 r) cuparity_helper(.param .b32 x)\n"
                             "{\n\tret;\n}\n";
  char log[512] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log))};
  CUlinkState state = nullptr;
  REQUIRE(create(2, options, values, &state) == CUDA_SUCCESS);
  REQUIRE(add(state, CU_JIT_INPUT_PTX, const_cast<char *>(caller.c_str()), caller.size() + 1,
              "caller.ptx", 0, nullptr, nullptr) == CUDA_SUCCESS);
  void *image = nullptr;
  size_t size = 0;
  CHECK(complete(state, &image, &size) == CUDA_ERROR_INVALID_SOURCE); // as driver 580 answers
  CHECK(std::string(log).find("error   : Undefined reference to 'cuparity_helper'") == 0);
  CHECK(reinterpret_cast<size_t>(values[1]) == std::string(log).size() + 1);
  REQUIRE(destroy(state) == CUDA_SUCCESS);
  CHECK(destroy(state) == CUDA_ERROR_INVALID_HANDLE);

  REQUIRE(create(0, nullptr, nullptr, &state) == CUDA_SUCCESS);
  REQUIRE(add(state, CU_JIT_INPUT_PTX, const_cast<char *>(caller.c_str()), caller.size(),
              "caller.ptx", 0, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(add(state, CU_JIT_INPUT_PTX, const_cast<char *>(helper.c_str()), helper.size(),
              "helper.ptx", 0, nullptr, nullptr) == CUDA_SUCCESS);
  CHECK(SIM(cuLinkAddFile_v2, cuLinkAddFile_v6050)(state, CU_JIT_INPUT_PTX,
                                                   "/nonexistent/cuparity.ptx", 0, nullptr,
                                                   nullptr) == CUDA_ERROR_FILE_NOT_FOUND);
  REQUIRE(complete(state, &image, &size) == CUDA_SUCCESS);
  CUmodule m = nullptr;
  REQUIRE(SIM(cuModuleLoadData, cuModuleLoadData_v2000)(&m, image) == CUDA_SUCCESS);
  REQUIRE(destroy(state) == CUDA_SUCCESS);
  CUfunction f = function(m, "cuparity_empty");
  CHECK(launch(f, 1, 1, 1, 1, 1, 1, 0, nullptr) == CUDA_SUCCESS);
  REQUIRE(SIM(cuModuleUnload, cuModuleUnload_v2000)(m) == CUDA_SUCCESS);
}

#ifdef CUPARITY_SIM_TEST_IMAGES
TEST_CASE("images built by nvcc: cubin, fatbin and PTX", "[module][nvcc]") {
  primary();
  for (const char *kind : {".cubin", ".fatbin", ".ptx"}) {
    INFO(kind);
    const std::string image = read_file(std::string(CUPARITY_SIM_TEST_IMAGES) + kind);
    REQUIRE(!image.empty());
    CUmodule m = load(image);
    unsigned grid[3] = {2, 3, 1}, block[3] = {8, 1, 2};
    check_write_index(function(m, "cuparity_write_index"), grid, block);
    CUfunction f = nullptr;
    CHECK(SIM(cuModuleGetFunction, cuModuleGetFunction_v2000)(&f, m, "cuparity_not_simulated") ==
          CUDA_ERROR_NOT_FOUND);
    CUdeviceptr p = 0;
    size_t bytes = 0;
    REQUIRE(SIM(cuModuleGetGlobal_v2, cuModuleGetGlobal_v3020)(&p, &bytes, m, "cuparity_counter") ==
            CUDA_SUCCESS);
    CHECK(bytes == 16);
    REQUIRE(SIM(cuModuleUnload, cuModuleUnload_v2000)(m) == CUDA_SUCCESS);
  }
}

// CUPARITY_SIM_COMPUTE_CAPABILITY sets the device's architecture, and images for another one are
// refused as the real driver refuses them: a cubin only on its own major (minor no newer), PTX
// on its own architecture or newer, a fatbin when one of its members fits.
TEST_CASE("compute capability: images for another architecture are refused", "[module][nvcc]") {
  const std::string base = CUPARITY_SIM_TEST_IMAGES;
  const std::string files = base + ".cubin," + base + "_sm80.cubin," + base + "_sm100.cubin," +
                            base + "_sm80.ptx," + base + "_sm100.ptx," + base + ".fatbin";
  const int ok = CUDA_SUCCESS, refused = CUDA_ERROR_NO_BINARY_FOR_GPU;
  struct expected {
    const char *cc;
    int sm;
    std::vector<int> loads; // sm_90 cubin, sm_80 cubin, sm_100 cubin, sm_80 PTX, sm_100 PTX, fatbin
  };
  for (const expected &e : {expected{"8.0", 80, {refused, ok, refused, ok, refused, refused}},
                            expected{"8.6", 86, {refused, ok, refused, ok, refused, refused}},
                            expected{"9.0", 90, {ok, refused, refused, ok, refused, ok}},
                            expected{"10.0", 100, {refused, refused, ok, ok, ok, ok}}}) {
    INFO(e.cc);
    const child_result r = run_child({CUPARITY_SIMDRIVER_PATH, "arch", files},
                                     {std::string("CUPARITY_SIM_COMPUTE_CAPABILITY=") + e.cc});
    REQUIRE(r.value("init") == "0");
    CHECK(r.value("cc") == std::to_string(e.sm));
    CHECK(r.value("cc_attribute") == std::to_string(e.sm));
    for (std::size_t i = 0; i < e.loads.size(); ++i) {
      INFO("image " << i);
      CHECK(r.value("load_" + std::to_string(i)) == std::to_string(e.loads[i]));
    }
  }
}

TEST_CASE("compute capability: a malformed value fails cuInit, naming the variable", "[module]") {
  for (const char *bad : {"9", "nine", "9.x", "0.5", "9.10", ""}) {
    INFO(bad);
    const child_result r = run_child({CUPARITY_SIMDRIVER_PATH, "arch", ""},
                                     {std::string("CUPARITY_SIM_COMPUTE_CAPABILITY=") + bad});
    CHECK(r.exit_code == 0);
    CHECK(r.value("init") == std::to_string(CUDA_ERROR_NO_DEVICE));
    CHECK(r.err.find("CUPARITY_SIM_COMPUTE_CAPABILITY='" + std::string(bad) + "'") !=
          std::string::npos);
  }
}
#endif
