// Helper process for the fault shim's tests: opens a driver library (the shim, or the simulated
// driver for comparison) with dlopen, as the harness does, and prints key=value lines.
// Usage: cuparity_fault_shim_probe <driver library> paths | delay <calls> | copy <symbol>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace {

void *lib = nullptr;

template <class F> F get(const char *name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}
#define CALL(symbol, pfn) get<PFN_##pfn>(#symbol)

void print(const char *key, long long value) {
  std::printf("%s=%lld\n", key, value);
}

void *proc(const char *base, int version) {
  void *pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  auto query = CALL(cuGetProcAddress_v2, cuGetProcAddress_v12000);
  if (query == nullptr ||
      query(base, &pfn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) != CUDA_SUCCESS)
    return nullptr;
  return pfn;
}

void make_current() {
  CUcontext ctx = nullptr;
  CALL(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain_v7000)(&ctx, 0);
  CALL(cuCtxSetCurrent, cuCtxSetCurrent_v4000)(ctx);
}

// cuDeviceGetCount through dlsym and through cuGetProcAddress: what each path returns and does.
int paths() {
  print("init_rc", CALL(cuInit, cuInit_v2000)(0));
  auto by_dlsym = CALL(cuDeviceGetCount, cuDeviceGetCount_v2000);
  auto by_proc = reinterpret_cast<PFN_cuDeviceGetCount_v2000>(proc("cuDeviceGetCount", 2000));
  print("proc_found", by_proc != nullptr);
  print("proc_is_export", reinterpret_cast<void *>(by_proc) == reinterpret_cast<void *>(by_dlsym));
  int count = 0;
  print("count_dlsym_rc", by_dlsym(&count));
  print("count_dlsym", count);
  if (by_proc == nullptr)
    return 0;
  count = 0;
  print("count_proc_rc", by_proc(&count));
  print("count_proc", count);
  return 0;
}

// Median cost of cuCtxGetCurrent through each path, calls interleaved so load hits both alike.
int delay(int calls) {
  CALL(cuInit, cuInit_v2000)(0);
  auto by_dlsym = CALL(cuCtxGetCurrent, cuCtxGetCurrent_v4000);
  auto by_proc = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(proc("cuCtxGetCurrent", 4000));
  if (by_dlsym == nullptr || by_proc == nullptr)
    return 2;
  using clock = std::chrono::steady_clock;
  std::vector<long long> ns[2];
  CUcontext ctx = nullptr;
  for (int i = 0; i < calls; ++i)
    for (int path = 0; path < 2; ++path) {
      const auto t0 = clock::now();
      (path == 0 ? by_dlsym : by_proc)(&ctx);
      ns[path].push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count());
    }
  for (int path = 0; path < 2; ++path) {
    auto &v = ns[path];
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    print(path == 0 ? "dlsym_median_ns" : "proc_median_ns", v[v.size() / 2]);
  }
  return 0;
}

// One copy through the named exported symbol; prints the destination's first two bytes, read
// with a copy function other than the one under test.
int copy(const std::string &symbol) {
  CALL(cuInit, cuInit_v2000)(0);
  make_current();
  const bool to_host = symbol.find("DtoH") != std::string::npos;
  const bool from_host = symbol.find("HtoD") != std::string::npos;
  const bool async = symbol.find("Async") != std::string::npos;
  const char *upload = symbol == "cuMemcpyHtoD_v2" ? "cuMemcpyHtoD_v2_ptds" : "cuMemcpyHtoD_v2";
  const char *download = symbol == "cuMemcpyDtoH_v2" ? "cuMemcpyDtoH_v2_ptds" : "cuMemcpyDtoH_v2";
  auto htod = get<PFN_cuMemcpyHtoD_v3020>(upload);
  auto dtoh = get<PFN_cuMemcpyDtoH_v3020>(download);
  CUdeviceptr src = 0, dst = 0;
  CALL(cuMemAlloc_v2, cuMemAlloc_v3020)(&src, 16);
  CALL(cuMemAlloc_v2, cuMemAlloc_v3020)(&dst, 16);
  unsigned char pattern[16] = {0x10, 0x20}, out[16] = {};
  htod(src, pattern, 16);
  CUstream stream = nullptr;
  CALL(cuStreamCreate, cuStreamCreate_v2000)(&stream, 0);
  void *fn = dlsym(lib, symbol.c_str());
  if (fn == nullptr)
    return 2;
  CUresult rc = CUDA_SUCCESS;
  if (from_host)
    rc = async ? reinterpret_cast<PFN_cuMemcpyHtoDAsync_v3020>(fn)(dst, pattern, 16, stream)
               : reinterpret_cast<PFN_cuMemcpyHtoD_v3020>(fn)(dst, pattern, 16);
  else if (to_host)
    rc = async ? reinterpret_cast<PFN_cuMemcpyDtoHAsync_v3020>(fn)(out, src, 16, stream)
               : reinterpret_cast<PFN_cuMemcpyDtoH_v3020>(fn)(out, src, 16);
  else
    rc = async ? reinterpret_cast<PFN_cuMemcpyDtoDAsync_v3020>(fn)(dst, src, 16, stream)
               : reinterpret_cast<PFN_cuMemcpyDtoD_v3020>(fn)(dst, src, 16);
  CALL(cuStreamSynchronize, cuStreamSynchronize_v2000)(stream);
  if (!to_host)
    dtoh(out, dst, 16);
  print("copy_rc", rc);
  print("first", out[0]);
  print("second", out[1]);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cannot open %s: %s\n", argv[1], dlerror());
    return 2;
  }
  const std::string scenario = argv[2];
  if (scenario == "paths")
    return paths();
  if (scenario == "delay" && argc > 3)
    return delay(std::stoi(argv[3]));
  if (scenario == "copy" && argc > 3)
    return copy(argv[3]);
  return 2;
}
