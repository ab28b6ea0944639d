// Helper process for the simulated driver's tests: started by fork+exec (posix_spawn) so each
// run reads its own CUPARITY_SIM_* configuration, and so IPC crosses a real process boundary.
// Usage: cuparity_simdriver_child <driver library> <scenario> [argument]; prints key=value lines.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace {

void *lib = nullptr;

template <class F> F get(const char *name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}
#define CALL(symbol, pfn) get<PFN_##pfn>(#symbol)

void print(const char *key, long long value) {
  std::printf("%s=%lld\n", key, value);
}

bool from_hex(const std::string &hex, void *out, std::size_t n) {
  if (hex.size() != 2 * n)
    return false;
  auto *bytes = static_cast<unsigned char *>(out);
  for (std::size_t i = 0; i < n; ++i)
    bytes[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return true;
}

CUcontext make_current() {
  CUcontext ctx = nullptr;
  CALL(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain_v7000)(&ctx, 0);
  CALL(cuCtxSetCurrent, cuCtxSetCurrent_v4000)(ctx);
  return ctx;
}

// Configuration as this process sees it.
int probe() {
  int count = -1;
  print("before_init", CALL(cuDeviceGetCount, cuDeviceGetCount_v2000)(&count));
  print("init", CALL(cuInit, cuInit_v2000)(0));
  int version = 0;
  CALL(cuDriverGetVersion, cuDriverGetVersion_v2020)(&version);
  print("version", version);
  const CUresult rc = CALL(cuDeviceGetCount, cuDeviceGetCount_v2000)(&count);
  print("count", rc == CUDA_SUCCESS ? count : -static_cast<long long>(rc));
  // Which of the host's devices each ordinal is (CUDA_VISIBLE_DEVICES): the UUID's last byte
  // and the PCI bus (0x18 + the host's ordinal), e.g. "1,0".
  std::string hosts, buses;
  for (int i = 0; rc == CUDA_SUCCESS && i < count; ++i) {
    CUuuid u{};
    CALL(cuDeviceGetUuid, cuDeviceGetUuid_v9020)(&u, i);
    int bus = 0;
    CALL(cuDeviceGetAttribute, cuDeviceGetAttribute_v2000)(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i);
    hosts += (i ? "," : "") + std::to_string(static_cast<unsigned char>(u.bytes[15]));
    buses += (i ? "," : "") + std::to_string(bus - 0x18);
  }
  char name[64] = {};
  if (rc == CUDA_SUCCESS && count > 0)
    CALL(cuDeviceGetName, cuDeviceGetName_v2000)(name, sizeof name, 0);
  std::printf("hosts=%s\nbuses=%s\nname0=%s\n", hosts.c_str(), buses.c_str(), name);
  void *pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  CALL(cuGetProcAddress_v2, cuGetProcAddress_v12000)("cuMemAlloc", &pfn, 3020, 0, &status);
  print("hide_status", status);
  return 0;
}

// Faults as seen through the exported symbol (dlsym) and through cuGetProcAddress.
int faults() {
  CALL(cuInit, cuInit_v2000)(0);
  make_current();
  auto by_dlsym = CALL(cuDeviceGetCount, cuDeviceGetCount_v2000);
  void *pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  CALL(cuGetProcAddress_v2, cuGetProcAddress_v12000)
  ("cuDeviceGetCount", &pfn, 2000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
  auto by_proc = reinterpret_cast<PFN_cuDeviceGetCount_v2000>(pfn);
  int count = 0;
  print("count_dlsym_rc", by_dlsym(&count));
  print("count_dlsym", count);
  count = 0;
  print("count_proc_rc", by_proc(&count));
  print("count_proc", count);
  print("proc_is_export", pfn == reinterpret_cast<void *>(by_dlsym) ? 1 : 0);

  CUdeviceptr d = 0;
  CALL(cuMemAlloc_v2, cuMemAlloc_v3020)(&d, 16);
  unsigned char in[16] = {0x10, 1, 2, 3}, out[16] = {};
  print("htod_rc", CALL(cuMemcpyHtoD_v2, cuMemcpyHtoD_v3020)(d, in, 16));
  print("dtoh_rc", CALL(cuMemcpyDtoH_v2, cuMemcpyDtoH_v3020)(out, d, 16));
  print("copy_first", out[0]);
  print("copy_second", out[1]);

  auto get_current = CALL(cuCtxGetCurrent, cuCtxGetCurrent_v4000);
  CUcontext c = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  get_current(&c);
  print("ctx_ns",
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
  return 0;
}

// Opens a memory handle exported by the parent, reads it, writes value+100 back.
int ipc_mem(const std::string &hex) {
  CALL(cuInit, cuInit_v2000)(0);
  make_current();
  CUipcMemHandle handle{};
  if (!from_hex(hex, &handle, sizeof(handle)))
    return 2;
  CUdeviceptr p = 0;
  const CUresult rc = CALL(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle_v11000)(
      &p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  print("open", rc);
  if (rc != CUDA_SUCCESS)
    return 1;
  unsigned values[4] = {};
  CALL(cuMemcpyDtoH_v2, cuMemcpyDtoH_v3020)(values, p, sizeof(values));
  std::printf("read=%u,%u,%u,%u\n", values[0], values[1], values[2], values[3]);
  for (unsigned &v : values)
    v += 100;
  print("write", CALL(cuMemcpyHtoD_v2, cuMemcpyHtoD_v3020)(p, values, sizeof(values)));
  print("close", CALL(cuIpcCloseMemHandle, cuIpcCloseMemHandle_v4010)(p));
  print("close_again", CALL(cuIpcCloseMemHandle, cuIpcCloseMemHandle_v4010)(p));
  return 0;
}

// Opens an event handle exported by the parent and waits for it.
int ipc_event(const std::string &hex) {
  CALL(cuInit, cuInit_v2000)(0);
  make_current();
  CUipcEventHandle handle{};
  if (!from_hex(hex, &handle, sizeof(handle)))
    return 2;
  CUevent e = nullptr;
  print("open", CALL(cuIpcOpenEventHandle, cuIpcOpenEventHandle_v4010)(&e, handle));
  print("query", CALL(cuEventQuery, cuEventQuery_v2000)(e));
  const auto t0 = std::chrono::steady_clock::now();
  print("sync", CALL(cuEventSynchronize, cuEventSynchronize_v2000)(e));
  print("waited_ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count());
  print("query_after", CALL(cuEventQuery, cuEventQuery_v2000)(e));
  return 0;
}

} // namespace

// Device memory and an interprocess event (each a shared-memory object of the simulator), left
// alive; then the process ends normally ("exit") or is killed ("kill"), as a watchdog would.
int hold_objects(const std::string &how) {
  CALL(cuInit, cuInit_v2000)(0);
  make_current();
  CUdeviceptr d = 0;
  print("alloc", CALL(cuMemAlloc_v2, cuMemAlloc_v3020)(&d, 1 << 20));
  CUevent e = nullptr;
  print("event", CALL(cuEventCreate,
                      cuEventCreate_v2000)(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  print("pid", getpid());
  if (how == "kill")
    raise(SIGKILL);
  return 0;
}

// The device's compute capability under CUPARITY_SIM_COMPUTE_CAPABILITY, then cuModuleLoadData
// and cuModuleLoadDataEx of each image file named in `paths` (comma-separated): load_<i>=CUresult.
int arch(const std::string &paths) {
  const CUresult init = CALL(cuInit, cuInit_v2000)(0);
  print("init", init);
  if (init != CUDA_SUCCESS)
    return 0;
  int major = -1, minor = -1;
  CALL(cuDeviceComputeCapability, cuDeviceComputeCapability_v2000)(&major, &minor, 0);
  print("cc", major * 10 + minor);
  CALL(cuDeviceGetAttribute, cuDeviceGetAttribute_v2000)
  (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
  CALL(cuDeviceGetAttribute, cuDeviceGetAttribute_v2000)
  (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
  print("cc_attribute", major * 10 + minor);
  make_current();
  std::size_t start = 0;
  for (int i = 0; start <= paths.size() && !paths.empty(); ++i) {
    const std::size_t comma = std::min(paths.find(',', start), paths.size());
    std::ifstream in(paths.substr(start, comma - start), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CUmodule m = nullptr;
    const CUresult rc = CALL(cuModuleLoadData, cuModuleLoadData_v2000)(&m, bytes.c_str());
    print(("load_" + std::to_string(i)).c_str(), rc);
    if (rc == CUDA_SUCCESS)
      CALL(cuModuleUnload, cuModuleUnload_v2000)(m);
    start = comma + 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <driver library> <scenario> [argument]\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 2;
  }
  const std::string scenario = argv[2];
  const std::string arg = argc > 3 ? argv[3] : "";
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  if (scenario == "probe")
    return probe();
  if (scenario == "faults")
    return faults();
  if (scenario == "ipc-mem")
    return ipc_mem(arg);
  if (scenario == "ipc-event")
    return ipc_event(arg);
  if (scenario == "hold")
    return hold_objects(arg);
  if (scenario == "arch")
    return arch(arg);
  std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
  return 2;
}
