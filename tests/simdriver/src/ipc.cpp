// IPC memory handles: a cuMemAlloc allocation is a POSIX shared-memory object, and its handle
// carries the object's name, so another process can map the same pages.
#include "api.hpp"

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity::sim {
namespace {

constexpr std::uint32_t mem_handle_magic = 0x4d505348; // "HSPM"

// CUipcMemHandle payload (64 bytes): magic, exporting pid, size, shared-memory object name.
struct mem_handle_payload {
  std::uint32_t magic;
  std::int32_t pid;
  std::uint64_t size;
  char name[48];
};
static_assert(sizeof(mem_handle_payload) <= sizeof(CUipcMemHandle));

std::mutex g_import_mutex; // serialises opens, so one name maps once per process

CUresult open_mem_handle(CUdeviceptr *pdptr, const CUipcMemHandle &handle, unsigned flags) {
  if (CUresult r = check_init())
    return r;
  // The flag "must be specified" (driver API docs); driver 580 (H200) answers 0 with
  // CUDA_ERROR_INVALID_VALUE, even when the memory is on the opening context's own device.
  if (pdptr == nullptr || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
    return CUDA_ERROR_INVALID_VALUE;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  mem_handle_payload payload{};
  std::memcpy(&payload, handle.reserved, sizeof(payload));
  payload.name[sizeof(payload.name) - 1] = '\0';
  if (payload.magic != mem_handle_magic)
    return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 refuses to open a handle in the process that exported it
  // (docs/driver-facts.md#ipc-open-in-exporter).
  if (payload.pid == static_cast<std::int32_t>(getpid()))
    return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(g_import_mutex);
  // Opening the same handle again returns the same mapping with one more reference.
  std::uintptr_t existing = 0;
  {
    allocation probe;
    // Linear scan is fine: imports are few and opening is not a hot path.
    for (std::uintptr_t candidate : imported_bases()) {
      if (lookup_base(candidate, {mem_kind::ipc}, probe) && probe.ipc_key == payload.name) {
        existing = candidate;
        break;
      }
    }
  }
  if (existing != 0) {
    adjust_ipc_refcount(existing, +1);
    *pdptr = existing;
    return CUDA_SUCCESS;
  }
  // The exporter freed it (or the handle is garbage): unverified which code libcuda returns.
  const int fd = shm_open(payload.name, O_RDWR, 0);
  if (fd < 0)
    return CUDA_ERROR_INVALID_VALUE;
  struct stat st {};
  void *p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) >= payload.size)
    p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
             0);
  close(fd);
  if (p == MAP_FAILED)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  a.base = reinterpret_cast<std::uintptr_t>(p);
  a.size = payload.size;
  a.map_len = static_cast<std::size_t>(st.st_size);
  a.kind = mem_kind::ipc;
  a.ctx = c;
  a.device = c->device;
  a.ipc_key = payload.name;
  a.ipc_refcount = 1;
  insert_allocation(a);
  imported_bases().push_back(a.base);
  *pdptr = a.base;
  return CUDA_SUCCESS;
}

} // namespace

std::vector<std::uintptr_t> &imported_bases() {
  static auto *v = new std::vector<std::uintptr_t>();
  return *v;
}

} // namespace cuparity::sim

using namespace cuparity::sim;

CUPARITY_SIM_API(cuIpcGetMemHandle, (CUipcMemHandle * pHandle, CUdeviceptr dptr), (pHandle, dptr),
                 (void)0) {
  if (CUresult r = check_init())
    return r;
  if (pHandle == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  // A pointer inside a cuMemAlloc allocation exports the whole allocation: driver 580 (H200)
  // returns CUDA_SUCCESS for an interior pointer; the importer gets the base.
  if (find_allocation(dptr, 1, a) != CUDA_SUCCESS || a.kind != mem_kind::device ||
      a.shm_name.size() >= 48)
    return CUDA_ERROR_INVALID_VALUE;
  mem_handle_payload payload{};
  payload.magic = mem_handle_magic;
  payload.pid = static_cast<std::int32_t>(getpid());
  payload.size = a.size;
  std::strncpy(payload.name, a.shm_name.c_str(), sizeof(payload.name) - 1);
  std::memset(pHandle, 0, sizeof(*pHandle));
  std::memcpy(pHandle->reserved, &payload, sizeof(payload));
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuIpcOpenMemHandle,
                 (CUdeviceptr * pdptr, CUipcMemHandle handle, unsigned int Flags),
                 (pdptr, handle, Flags), (void)0) {
  return open_mem_handle(pdptr, handle, Flags);
}
CUPARITY_SIM_API(cuIpcOpenMemHandle_v2,
                 (CUdeviceptr * pdptr, CUipcMemHandle handle, unsigned int Flags),
                 (pdptr, handle, Flags), (void)0) {
  return open_mem_handle(pdptr, handle, Flags);
}

CUPARITY_SIM_API(cuIpcCloseMemHandle, (CUdeviceptr dptr), (dptr), (void)0) {
  if (CUresult r = check_init())
    return r;
  allocation a;
  if (!lookup_base(dptr, {mem_kind::ipc}, a))
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g_import_mutex);
  if (adjust_ipc_refcount(a.base, -1) > 0)
    return CUDA_SUCCESS;
  synchronize_context(a.ctx);
  if (erase_allocation(a.base, a))
    unmap_allocation(a);
  std::erase(imported_bases(), a.base);
  return CUDA_SUCCESS;
}
