// Memory: device/managed/host/stream-ordered allocations (device pointers are host addresses),
// the allocation map behind pointer queries, and copies and memsets in stream order.
#include "api.hpp"

#include <climits>
#include <cstring>
#include <fcntl.h>
#include <shared_mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace cuparity::sim {

namespace {

struct allocation_map {
  std::shared_mutex mu;
  std::map<std::uintptr_t, allocation> by_base;
};
allocation_map &allocations() {
  static auto *m = new allocation_map();
  return *m;
}

std::atomic<std::uint64_t> g_shm_counter{0};
std::atomic<std::uint64_t> g_buffer_ids{1};

std::size_t page_round(std::size_t n) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

// The allocation containing ptr (caller holds the lock).
const allocation *containing_locked(allocation_map &m, std::uintptr_t ptr) {
  auto it = m.by_base.upper_bound(ptr);
  if (it == m.by_base.begin())
    return nullptr;
  --it;
  const allocation &a = it->second;
  return ptr - a.base < std::max<std::size_t>(a.size, 1) ? &a : nullptr;
}

bool overlaps_locked(allocation_map &m, std::uintptr_t p, std::size_t n) {
  auto it = m.by_base.lower_bound(p + n);
  if (it == m.by_base.begin())
    return false;
  --it;
  return it->second.base + it->second.size > p;
}

void *map_anonymous(std::size_t size, std::size_t &map_len) {
  map_len = page_round(size);
  void *p = mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

CUresult sync_op(null_stream mode, const std::function<void()> &op) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(nullptr, mode, s))
    return r;
  run_synchronously(s, op);
  return CUDA_SUCCESS;
}

CUresult async_op(CUstream h, null_stream mode, std::function<void()> op) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  enqueue(s, std::move(op));
  return CUDA_SUCCESS;
}

// ---- copies and memsets: validate on the calling thread, then run in stream order

enum class copy_dir { htod, dtoh, dtod };

CUresult prepare_copy(copy_dir dir, std::uintptr_t dst, std::uintptr_t src, std::size_t n,
                      std::function<void()> &op) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (n == 0) {
    op = [] {};
    return CUDA_SUCCESS;
  }
  allocation a;
  if (dst == 0 || src == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (dir != copy_dir::dtoh && find_allocation(dst, n, a) != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  if (dir != copy_dir::htod && find_allocation(src, n, a) != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  const bool corrupt = corrupt_requested();
  op = [dst, src, n, corrupt] {
    std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), n);
    if (corrupt)
      corrupt_byte(reinterpret_cast<void *>(dst));
  };
  return CUDA_SUCCESS;
}

CUresult copy_sync(copy_dir dir, std::uintptr_t dst, std::uintptr_t src, std::size_t n,
                   null_stream mode) {
  std::function<void()> op;
  if (CUresult r = prepare_copy(dir, dst, src, n, op))
    return r;
  return sync_op(mode, op);
}

CUresult copy_async(copy_dir dir, std::uintptr_t dst, std::uintptr_t src, std::size_t n, CUstream h,
                    null_stream mode) {
  std::function<void()> op;
  if (CUresult r = prepare_copy(dir, dst, src, n, op))
    return r;
  return async_op(h, mode, std::move(op));
}

template <class T>
CUresult prepare_memset(CUdeviceptr dst, T value, std::size_t count, std::function<void()> &op) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (count == 0) {
    op = [] {};
    return CUDA_SUCCESS;
  }
  if (dst % sizeof(T) != 0 || count > SIZE_MAX / sizeof(T))
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  if (find_allocation(dst, count * sizeof(T), a) != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  const bool corrupt = corrupt_requested();
  op = [dst, value, count, corrupt] {
    auto *p = reinterpret_cast<T *>(dst);
    std::fill(p, p + count, value);
    if (corrupt)
      corrupt_byte(p);
  };
  return CUDA_SUCCESS;
}

template <class T>
CUresult memset_sync(CUdeviceptr dst, T value, std::size_t count, null_stream mode) {
  std::function<void()> op;
  if (CUresult r = prepare_memset(dst, value, count, op))
    return r;
  return sync_op(mode, op);
}

template <class T>
CUresult memset_async(CUdeviceptr dst, T value, std::size_t count, CUstream h, null_stream mode) {
  std::function<void()> op;
  if (CUresult r = prepare_memset(dst, value, count, op))
    return r;
  return async_op(h, mode, std::move(op));
}

// ---- allocation

CUresult mem_alloc(CUdeviceptr *dptr, std::size_t size) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (dptr == nullptr || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Checked against the simulated capacity before touching the host, so absurd sizes fail fast.
  if (!reserve_device_mem(c->device, size))
    return CUDA_ERROR_OUT_OF_MEMORY;
  allocation a;
  void *p = nullptr;
  if (CUresult r = map_shared(size, a.shm_name, p, a.map_len)) {
    release_device_mem(c->device, size);
    return r;
  }
  a.base = reinterpret_cast<std::uintptr_t>(p);
  a.size = size;
  a.kind = mem_kind::device;
  a.ctx = c;
  a.device = c->device;
  insert_allocation(a);
  *dptr = a.base;
  return CUDA_SUCCESS;
}

void release(const allocation &a) {
  if (a.kind == mem_kind::device || a.kind == mem_kind::async)
    release_device_mem(a.device, a.size);
  unmap_allocation(a);
}

CUresult mem_free(CUdeviceptr dptr) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  // cuMemFree(0) is accepted as a no-op (unverified; cudaFree(0) is documented so).
  if (dptr == 0)
    return CUDA_SUCCESS;
  allocation a;
  if (!lookup_base(dptr, {mem_kind::device, mem_kind::managed, mem_kind::async}, a))
    return CUDA_ERROR_INVALID_VALUE;
  // cuMemFree synchronises: queued work may still touch the memory.
  synchronize_context(a.ctx);
  allocation erased;
  if (!erase_allocation(a.base, erased))
    return CUDA_ERROR_INVALID_VALUE;
  release(erased);
  return CUDA_SUCCESS;
}

CUresult mem_get_info(std::size_t *free_bytes, std::size_t *total_bytes) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (free_bytes == nullptr || total_bytes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *total_bytes = device_total_mem();
  *free_bytes = device_total_mem() - device_used_mem(c->device);
  return CUDA_SUCCESS;
}

CUresult address_range(CUdeviceptr *pbase, std::size_t *psize, CUdeviceptr dptr) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  allocation a;
  if (!lookup_allocation(dptr, a))
    return CUDA_ERROR_NOT_FOUND;
  if (pbase != nullptr)
    *pbase = a.base;
  if (psize != nullptr)
    *psize = a.size;
  return CUDA_SUCCESS;
}

CUresult host_get_device_pointer(CUdeviceptr *pdptr, void *p, unsigned flags) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (pdptr == nullptr || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  const auto ptr = reinterpret_cast<std::uintptr_t>(p);
  if (!lookup_allocation(ptr, a) ||
      (a.kind != mem_kind::host_alloc && a.kind != mem_kind::host_registered))
    return CUDA_ERROR_INVALID_VALUE;
  *pdptr = ptr; // unified addressing: the device sees host memory at the same address
  return CUDA_SUCCESS;
}

CUresult host_register(void *p, std::size_t size, unsigned flags) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  constexpr unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                             CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
  if (p == nullptr || size == 0 || (flags & ~known) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  a.base = reinterpret_cast<std::uintptr_t>(p);
  a.size = size;
  a.kind = mem_kind::host_registered;
  a.ctx = c;
  a.device = c->device;
  a.flags = flags;
  auto &m = allocations();
  std::unique_lock lock(m.mu);
  if (overlaps_locked(m, a.base, a.size))
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  a.buffer_id = g_buffer_ids.fetch_add(1);
  m.by_base.emplace(a.base, a);
  return CUDA_SUCCESS;
}

bool valid_location(const CUmemLocation &loc, CUresult &why) {
  switch (loc.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE:
    why = CUDA_ERROR_INVALID_DEVICE;
    return valid_device(loc.id);
  case CU_MEM_LOCATION_TYPE_HOST:
  case CU_MEM_LOCATION_TYPE_HOST_NUMA:
  case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
    return true;
  default:
    why = CUDA_ERROR_INVALID_VALUE;
    return false;
  }
}

CUresult check_managed_range(CUdeviceptr p, std::size_t count) {
  allocation a;
  if (count == 0 || find_allocation(p, count, a) != CUDA_SUCCESS || a.kind != mem_kind::managed)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// Prefetching has nothing to move on a CPU; it is validated and takes its place in the stream.
CUresult prefetch(CUdeviceptr p, std::size_t count, CUmemLocation loc, unsigned flags, CUstream h,
                  null_stream mode) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  CUresult why = CUDA_SUCCESS;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_location(loc, why))
    return why;
  if (CUresult r = check_managed_range(p, count))
    return r;
  enqueue(s, [] {});
  return CUDA_SUCCESS;
}

CUmemLocation location_of_device(CUdevice dev) {
  CUmemLocation loc{};
  if (dev == CU_DEVICE_CPU) {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = dev;
  }
  return loc;
}

// Advice is a hint: validated and recorded nowhere, since the CPU model has one memory.
CUresult advise(CUdeviceptr p, std::size_t count, CUmem_advise advice, CUmemLocation loc) {
  if (CUresult r = check_init())
    return r;
  if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
    return CUDA_ERROR_INVALID_VALUE;
  const bool uses_location = advice != CU_MEM_ADVISE_SET_READ_MOSTLY &&
                             advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
                             advice != CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
  CUresult why = CUDA_SUCCESS;
  if (uses_location && !valid_location(loc, why))
    return why;
  return check_managed_range(p, count);
}

CUresult alloc_async(CUdeviceptr *dptr, std::size_t size, CUstream h, null_stream mode) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  if (dptr == nullptr || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!reserve_device_mem(s->ctx->device, size))
    return CUDA_ERROR_OUT_OF_MEMORY;
  // Pool memory is not exportable through cuIpcGetMemHandle, so no shared-memory object here.
  allocation a;
  void *p = map_anonymous(size, a.map_len);
  if (p == nullptr) {
    release_device_mem(s->ctx->device, size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a.base = reinterpret_cast<std::uintptr_t>(p);
  a.size = size;
  a.kind = mem_kind::async;
  a.ctx = s->ctx;
  a.device = s->ctx->device;
  insert_allocation(a);
  *dptr = a.base;
  return CUDA_SUCCESS;
}

CUresult free_async(CUdeviceptr dptr, CUstream h, null_stream mode) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  allocation a;
  if (!lookup_base(dptr, {mem_kind::async, mem_kind::device}, a) || !erase_allocation(a.base, a))
    return CUDA_ERROR_INVALID_VALUE;
  // The pointer is invalid for new calls at once; the memory goes away in stream order.
  enqueue(s, [a] { release(a); });
  return CUDA_SUCCESS;
}

CUresult pointer_attribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (CUresult r = check_init())
    return r;
  if (data == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  if (!lookup_allocation(ptr, a))
    return CUDA_ERROR_INVALID_VALUE;
  const bool host = a.kind == mem_kind::host_alloc || a.kind == mem_kind::host_registered;
  const int bump_by = corrupt_requested() ? 1 : 0;
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
    *static_cast<CUcontext *>(data) = to_handle(a.ctx);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *static_cast<unsigned *>(data) = (host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE) + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    *static_cast<CUdeviceptr *>(data) = ptr + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    if (!host && a.kind != mem_kind::managed)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<void **>(data) = reinterpret_cast<void *>(ptr + bump_by);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    *static_cast<unsigned long long *>(data) = a.buffer_id + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    *static_cast<int *>(data) = (a.kind == mem_kind::managed ? 1 : 0) + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    *static_cast<int *>(data) = a.device + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    *static_cast<CUdeviceptr *>(data) = a.base + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    *static_cast<std::size_t *>(data) = a.size + bump_by;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MAPPED:
    *static_cast<int *>(data) = 1 + bump_by;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

// The 32-bit device-pointer ABIs of CUDA 2.x cannot address the sim's 64-bit host addresses;
// they exist so cuGetProcAddress has their addresses, and answer CUDA_ERROR_NOT_SUPPORTED.
CUresult legacy_32bit() {
  if (CUresult r = check_init())
    return r;
  return CUDA_ERROR_NOT_SUPPORTED;
}

// Unlinks the shared-memory objects of allocations still alive when the library goes away, so a
// test that does not free everything leaves nothing behind in /dev/shm.
[[gnu::destructor]] void unlink_leftover_objects() {
  auto &m = allocations();
  std::unique_lock lock(m.mu);
  for (const auto &[base, a] : m.by_base)
    if (!a.shm_name.empty())
      shm_unlink(a.shm_name.c_str());
}

} // namespace

CUresult find_allocation(std::uintptr_t ptr, std::size_t len, allocation &out) {
  auto &m = allocations();
  std::shared_lock lock(m.mu);
  const allocation *a = containing_locked(m, ptr);
  if (a == nullptr || len > a->size - (ptr - a->base))
    return CUDA_ERROR_INVALID_VALUE;
  out = *a;
  return CUDA_SUCCESS;
}

bool lookup_allocation(std::uintptr_t ptr, allocation &out) {
  auto &m = allocations();
  std::shared_lock lock(m.mu);
  const allocation *a = containing_locked(m, ptr);
  if (a == nullptr)
    return false;
  out = *a;
  return true;
}

bool lookup_base(std::uintptr_t base, std::initializer_list<mem_kind> kinds, allocation &out) {
  auto &m = allocations();
  std::shared_lock lock(m.mu);
  auto it = m.by_base.find(base);
  if (it == m.by_base.end() ||
      std::find(kinds.begin(), kinds.end(), it->second.kind) == kinds.end())
    return false;
  out = it->second;
  return true;
}

void insert_allocation(allocation a) {
  a.buffer_id = g_buffer_ids.fetch_add(1);
  auto &m = allocations();
  std::unique_lock lock(m.mu);
  m.by_base.emplace(a.base, std::move(a));
}

bool erase_allocation(std::uintptr_t base, allocation &out) {
  auto &m = allocations();
  std::unique_lock lock(m.mu);
  auto it = m.by_base.find(base);
  if (it == m.by_base.end())
    return false;
  out = std::move(it->second);
  m.by_base.erase(it);
  return true;
}

int adjust_ipc_refcount(std::uintptr_t base, int delta) {
  auto &m = allocations();
  std::unique_lock lock(m.mu);
  auto it = m.by_base.find(base);
  if (it == m.by_base.end())
    return -1;
  return it->second.ipc_refcount += delta;
}

void free_context_memory(context *c) {
  std::vector<allocation> owned;
  {
    auto &m = allocations();
    std::unique_lock lock(m.mu);
    for (auto it = m.by_base.begin(); it != m.by_base.end();) {
      if (it->second.ctx == c) {
        owned.push_back(std::move(it->second));
        it = m.by_base.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const allocation &a : owned)
    release(a);
}

CUresult map_shared(std::size_t size, std::string &name, void *&ptr, std::size_t &map_len) {
  name = shm_object_name("cuparity-sim", g_shm_counter.fetch_add(1));
  map_len = page_round(size);
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(map_len)) == 0)
    p = mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ptr = p;
  return CUDA_SUCCESS;
}

void unmap_allocation(const allocation &a) {
  switch (a.kind) {
  case mem_kind::host_registered:
    return; // the caller's memory
  case mem_kind::device:
    shm_unlink(a.shm_name.c_str());
    [[fallthrough]];
  default:
    munmap(reinterpret_cast<void *>(a.base), a.map_len);
  }
}

} // namespace cuparity::sim

using namespace cuparity::sim;

namespace {
constexpr null_stream legacy_mode = null_stream::legacy;
constexpr null_stream pt_mode = null_stream::per_thread;
auto dp(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p);
}
} // namespace

// ---- allocation

CUPARITY_SIM_API(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize), (dptr, bytesize), (void)0) {
  return mem_alloc(dptr, bytesize);
}
CUPARITY_SIM_API(cuMemFree_v2, (CUdeviceptr dptr), (dptr), (void)0) {
  return mem_free(dptr);
}
CUPARITY_SIM_API(cuMemGetInfo_v2, (size_t * free, size_t *total), (free, total), bump(free)) {
  return mem_get_info(free, total);
}
CUPARITY_SIM_API(cuMemGetAddressRange_v2, (CUdeviceptr * pbase, size_t *psize, CUdeviceptr dptr),
                 (pbase, psize, dptr), bump(psize)) {
  return address_range(pbase, psize, dptr);
}

CUPARITY_SIM_API(cuMemAllocManaged, (CUdeviceptr * dptr, size_t bytesize, unsigned int flags),
                 (dptr, bytesize, flags), (void)0) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (dptr == nullptr || bytesize == 0 ||
      (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  // Managed memory is not charged to the device (it migrates on demand on a real GPU).
  allocation a;
  void *p = map_anonymous(bytesize, a.map_len);
  if (p == nullptr)
    return CUDA_ERROR_OUT_OF_MEMORY;
  a.base = dp(p);
  a.size = bytesize;
  a.kind = mem_kind::managed;
  a.ctx = c;
  a.device = c->device;
  a.flags = flags;
  insert_allocation(a);
  *dptr = a.base;
  return CUDA_SUCCESS;
}

// ---- 32-bit ABIs (see legacy_32bit)

CUPARITY_SIM_API(cuMemAlloc, (CUdeviceptr_v1 * dptr, unsigned int bytesize), (dptr, bytesize),
                 (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemFree, (CUdeviceptr_v1 dptr), (dptr), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemGetAddressRange,
                 (CUdeviceptr_v1 * pbase, unsigned int *psize, CUdeviceptr_v1 dptr),
                 (pbase, psize, dptr), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemsetD8, (CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N),
                 (dstDevice, uc, N), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemsetD32, (CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N),
                 (dstDevice, ui, N), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemcpyHtoD,
                 (CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount),
                 (dstDevice, srcHost, ByteCount), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemcpyDtoH, (void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount),
                 (dstHost, srcDevice, ByteCount), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemcpyDtoD,
                 (CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount),
                 (dstDevice, srcDevice, ByteCount), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemcpyHtoDAsync,
                 (CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                  CUstream hStream),
                 (dstDevice, srcHost, ByteCount, hStream), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemcpyDtoHAsync,
                 (void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                  CUstream hStream),
                 (dstHost, srcDevice, ByteCount, hStream), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemcpyDtoDAsync,
                 (CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                  CUstream hStream),
                 (dstDevice, srcDevice, ByteCount, hStream), (void)0) {
  return legacy_32bit();
}
CUPARITY_SIM_API(cuMemHostGetDevicePointer, (CUdeviceptr_v1 * pdptr, void *p, unsigned int Flags),
                 (pdptr, p, Flags), (void)0) {
  return legacy_32bit();
}
// Sizes saturate at 4 GiB - 1 through the 32-bit ABI (unverified guess at libcuda's behaviour).
CUPARITY_SIM_API(cuMemGetInfo, (unsigned int *free, unsigned int *total), (free, total),
                 bump(free)) {
  if (CUresult r = check_init())
    return r;
  if (free == nullptr || total == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t f = 0, t = 0;
  if (CUresult r = mem_get_info(&f, &t))
    return r;
  *free = f > UINT_MAX ? UINT_MAX : static_cast<unsigned>(f);
  *total = t > UINT_MAX ? UINT_MAX : static_cast<unsigned>(t);
  return CUDA_SUCCESS;
}

// ---- copies and memsets

CUPARITY_SIM_API(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
                 (dstDevice, srcHost, ByteCount), (void)0) {
  return copy_sync(copy_dir::htod, dstDevice, dp(srcHost), ByteCount, legacy_mode);
}
CUPARITY_SIM_API(cuMemcpyHtoD_v2_ptds,
                 (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
                 (dstDevice, srcHost, ByteCount), (void)0) {
  return copy_sync(copy_dir::htod, dstDevice, dp(srcHost), ByteCount, pt_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
                 (dstHost, srcDevice, ByteCount), (void)0) {
  return copy_sync(copy_dir::dtoh, dp(dstHost), srcDevice, ByteCount, legacy_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
                 (dstHost, srcDevice, ByteCount), (void)0) {
  return copy_sync(copy_dir::dtoh, dp(dstHost), srcDevice, ByteCount, pt_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
                 (dstDevice, srcDevice, ByteCount), (void)0) {
  return copy_sync(copy_dir::dtod, dstDevice, srcDevice, ByteCount, legacy_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoD_v2_ptds,
                 (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
                 (dstDevice, srcDevice, ByteCount), (void)0) {
  return copy_sync(copy_dir::dtod, dstDevice, srcDevice, ByteCount, pt_mode);
}
CUPARITY_SIM_API(cuMemcpyHtoDAsync_v2,
                 (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
                 (dstDevice, srcHost, ByteCount, hStream), (void)0) {
  return copy_async(copy_dir::htod, dstDevice, dp(srcHost), ByteCount, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemcpyHtoDAsync_v2_ptsz,
                 (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
                 (dstDevice, srcHost, ByteCount, hStream), (void)0) {
  return copy_async(copy_dir::htod, dstDevice, dp(srcHost), ByteCount, hStream, pt_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoHAsync_v2,
                 (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                 (dstHost, srcDevice, ByteCount, hStream), (void)0) {
  return copy_async(copy_dir::dtoh, dp(dstHost), srcDevice, ByteCount, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoHAsync_v2_ptsz,
                 (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                 (dstHost, srcDevice, ByteCount, hStream), (void)0) {
  return copy_async(copy_dir::dtoh, dp(dstHost), srcDevice, ByteCount, hStream, pt_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoDAsync_v2,
                 (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                 (dstDevice, srcDevice, ByteCount, hStream), (void)0) {
  return copy_async(copy_dir::dtod, dstDevice, srcDevice, ByteCount, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemcpyDtoDAsync_v2_ptsz,
                 (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                 (dstDevice, srcDevice, ByteCount, hStream), (void)0) {
  return copy_async(copy_dir::dtod, dstDevice, srcDevice, ByteCount, hStream, pt_mode);
}

CUPARITY_SIM_API(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N),
                 (dstDevice, uc, N), (void)0) {
  return memset_sync<unsigned char>(dstDevice, uc, N, legacy_mode);
}
CUPARITY_SIM_API(cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N),
                 (dstDevice, uc, N), (void)0) {
  return memset_sync<unsigned char>(dstDevice, uc, N, pt_mode);
}
CUPARITY_SIM_API(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N),
                 (dstDevice, ui, N), (void)0) {
  return memset_sync<unsigned int>(dstDevice, ui, N, legacy_mode);
}
CUPARITY_SIM_API(cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N),
                 (dstDevice, ui, N), (void)0) {
  return memset_sync<unsigned int>(dstDevice, ui, N, pt_mode);
}
CUPARITY_SIM_API(cuMemsetD8Async,
                 (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),
                 (dstDevice, uc, N, hStream), (void)0) {
  return memset_async<unsigned char>(dstDevice, uc, N, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemsetD8Async_ptsz,
                 (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),
                 (dstDevice, uc, N, hStream), (void)0) {
  return memset_async<unsigned char>(dstDevice, uc, N, hStream, pt_mode);
}

// ---- host memory

CUPARITY_SIM_API(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags),
                 (pp, bytesize, Flags), (void)0) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  constexpr unsigned known =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if (pp == nullptr || bytesize == 0 || (Flags & ~known) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  void *p = map_anonymous(bytesize, a.map_len);
  if (p == nullptr)
    return CUDA_ERROR_OUT_OF_MEMORY;
  a.base = dp(p);
  a.size = bytesize;
  a.kind = mem_kind::host_alloc;
  a.ctx = c;
  a.device = c->device;
  a.flags = Flags;
  insert_allocation(a);
  *pp = p;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuMemFreeHost, (void *p), (p), (void)0) {
  if (CUresult r = check_init())
    return r;
  allocation a;
  if (!lookup_base(dp(p), {mem_kind::host_alloc}, a))
    return CUDA_ERROR_INVALID_VALUE;
  synchronize_context(a.ctx);
  if (!erase_allocation(a.base, a))
    return CUDA_ERROR_INVALID_VALUE;
  release(a);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuMemHostRegister, (void *p, size_t bytesize, unsigned int Flags),
                 (p, bytesize, Flags), (void)0) {
  return host_register(p, bytesize, Flags);
}
CUPARITY_SIM_API(cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags),
                 (p, bytesize, Flags), (void)0) {
  return host_register(p, bytesize, Flags);
}

CUPARITY_SIM_API(cuMemHostUnregister, (void *p), (p), (void)0) {
  if (CUresult r = check_init())
    return r;
  allocation a;
  if (!lookup_base(dp(p), {mem_kind::host_registered}, a))
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  synchronize_context(a.ctx);
  erase_allocation(a.base, a);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuMemHostGetDevicePointer_v2, (CUdeviceptr * pdptr, void *p, unsigned int Flags),
                 (pdptr, p, Flags), bump(pdptr)) {
  return host_get_device_pointer(pdptr, p, Flags);
}

CUPARITY_SIM_API(cuMemHostGetFlags, (unsigned int *pFlags, void *p), (pFlags, p), bump(pFlags)) {
  if (CUresult r = check_init())
    return r;
  if (pFlags == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  allocation a;
  if (!lookup_allocation(dp(p), a) || a.kind != mem_kind::host_alloc)
    return CUDA_ERROR_INVALID_VALUE;
  *pFlags = a.flags;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuPointerGetAttribute,
                 (void *data, CUpointer_attribute attribute, CUdeviceptr ptr),
                 (data, attribute, ptr), (void)0) {
  return pointer_attribute(data, attribute, ptr);
}

// ---- stream-ordered allocation, managed memory hints

CUPARITY_SIM_API(cuMemAllocAsync, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
                 (dptr, bytesize, hStream), (void)0) {
  return alloc_async(dptr, bytesize, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
                 (dptr, bytesize, hStream), (void)0) {
  return alloc_async(dptr, bytesize, hStream, pt_mode);
}
CUPARITY_SIM_API(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream), (void)0) {
  return free_async(dptr, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream),
                 (void)0) {
  return free_async(dptr, hStream, pt_mode);
}

CUPARITY_SIM_API(cuMemPrefetchAsync_v2,
                 (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                  CUstream hStream),
                 (devPtr, count, location, flags, hStream), (void)0) {
  return prefetch(devPtr, count, location, flags, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemPrefetchAsync_v2_ptsz,
                 (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                  CUstream hStream),
                 (devPtr, count, location, flags, hStream), (void)0) {
  return prefetch(devPtr, count, location, flags, hStream, pt_mode);
}
CUPARITY_SIM_API(cuMemPrefetchAsync,
                 (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream),
                 (devPtr, count, dstDevice, hStream), (void)0) {
  return prefetch(devPtr, count, location_of_device(dstDevice), 0, hStream, legacy_mode);
}
CUPARITY_SIM_API(cuMemPrefetchAsync_ptsz,
                 (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream),
                 (devPtr, count, dstDevice, hStream), (void)0) {
  return prefetch(devPtr, count, location_of_device(dstDevice), 0, hStream, pt_mode);
}
CUPARITY_SIM_API(cuMemAdvise_v2,
                 (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location),
                 (devPtr, count, advice, location), (void)0) {
  return advise(devPtr, count, advice, location);
}
CUPARITY_SIM_API(cuMemAdvise,
                 (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device),
                 (devPtr, count, advice, device), (void)0) {
  return advise(devPtr, count, advice, location_of_device(device));
}
