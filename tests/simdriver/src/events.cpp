// Events: record/query/synchronize/elapsed time, with shared-memory counters for IPC events.
#include "api.hpp"

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace cuparity::sim {

namespace {

struct event_registry {
  std::mutex mu;
  std::unordered_map<event_state *, std::shared_ptr<event_state>> live;
};
event_registry &events() {
  static auto *r = new event_registry();
  return *r;
}

// What an interprocess event shares: its generation counters (lock-free 64-bit atomics work
// across processes on the same machine).
struct shared_event_block {
  std::uint32_t magic;
  std::uint32_t pad;
  std::atomic<std::uint64_t> recorded;
  std::atomic<std::uint64_t> completed;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
constexpr std::uint32_t event_magic = 0x43505345; // "ESPC"
constexpr std::uint32_t event_handle_magic = 0x45505348;

// CUipcEventHandle payload (64 bytes): magic, exporting pid, shared-memory name.
struct event_handle_payload {
  std::uint32_t magic;
  std::int32_t pid;
  char name[56];
};
static_assert(sizeof(event_handle_payload) <= sizeof(CUipcEventHandle));

std::atomic<std::uint64_t> g_event_shm_counter{0};

void attach_block(event_state &e, void *map) {
  auto *block = static_cast<shared_event_block *>(map);
  e.shm_map = map;
  e.recorded = &block->recorded;
  e.completed = &block->completed;
  e.external = true;
}

CUresult make_shared_block(event_state &e) {
  const std::string name = shm_object_name("cuparity-sim-ev", g_event_shm_counter.fetch_add(1));
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *map = MAP_FAILED;
  if (ftruncate(fd, sizeof(shared_event_block)) == 0)
    map = mmap(nullptr, sizeof(shared_event_block), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    shm_unlink(name.c_str());
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  auto *block = new (map) shared_event_block{event_magic, 0, {0}, {0}};
  (void)block;
  e.shm_name = name;
  e.owns_shm = true;
  attach_block(e, map);
  return CUDA_SUCCESS;
}

CUevent register_event(std::shared_ptr<event_state> e) {
  auto &r = events();
  std::lock_guard lock(r.mu);
  auto *key = e.get();
  r.live.emplace(key, std::move(e));
  return reinterpret_cast<CUevent>(key);
}

CUresult destroy_event(CUevent h) {
  if (CUresult r = check_init())
    return r;
  auto &reg = events();
  std::lock_guard lock(reg.mu);
  // Pending records keep the state alive through their shared_ptr; only the handle dies here.
  return reg.live.erase(reinterpret_cast<event_state *>(h)) ? CUDA_SUCCESS
                                                            : CUDA_ERROR_INVALID_HANDLE;
}

CUresult record_event(CUevent h, CUstream hs, null_stream mode) {
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(hs, mode, s))
    return r;
  std::shared_ptr<event_state> e = find_event(h);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  const std::uint64_t gen = e->recorded->fetch_add(1) + 1;
  enqueue(s, [e, gen] {
    // Records on different streams may complete out of order: keep the newest generation.
    std::uint64_t seen = e->completed->load();
    const std::int64_t t = op_reached_ns();
    while (seen < gen && !e->completed->compare_exchange_weak(seen, gen)) {
    }
    if (seen < gen)
      e->completed_at_ns.store(t);
  });
  return CUDA_SUCCESS;
}

CUresult elapsed_time(float *ms, CUevent start, CUevent end) {
  if (CUresult r = check_init())
    return r;
  if (ms == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<event_state> a = find_event(start);
  std::shared_ptr<event_state> b = find_event(end);
  if (!a || !b)
    return CUDA_ERROR_INVALID_HANDLE;
  if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
    return CUDA_ERROR_INVALID_HANDLE;
  const std::uint64_t ga = a->recorded->load();
  const std::uint64_t gb = b->recorded->load();
  if (ga == 0 || gb == 0)
    return CUDA_ERROR_INVALID_HANDLE;
  if (a->completed->load() < ga || b->completed->load() < gb)
    return CUDA_ERROR_NOT_READY;
  *ms = static_cast<float>(
      static_cast<double>(b->completed_at_ns.load() - a->completed_at_ns.load()) / 1e6);
  return CUDA_SUCCESS;
}

// Unlinks the shared-memory objects of interprocess events still alive when the library goes
// away (the registry is immortal, so their destructors never run).
[[gnu::destructor]] void unlink_leftover_events() {
  auto &r = events();
  std::lock_guard lock(r.mu);
  for (const auto &[key, e] : r.live)
    if (e->owns_shm)
      shm_unlink(e->shm_name.c_str());
}

} // namespace

event_state::~event_state() {
  if (shm_map != nullptr)
    munmap(shm_map, sizeof(shared_event_block));
  if (owns_shm)
    shm_unlink(shm_name.c_str());
}

std::shared_ptr<event_state> find_event(CUevent h) {
  auto &r = events();
  std::lock_guard lock(r.mu);
  auto it = r.live.find(reinterpret_cast<event_state *>(h));
  return it == r.live.end() ? nullptr : it->second;
}

} // namespace cuparity::sim

using namespace cuparity::sim;

CUPARITY_SIM_API(cuEventCreate, (CUevent * phEvent, unsigned int Flags), (phEvent, Flags),
                 (void)0) {
  if (CUresult r = check_init())
    return r;
  constexpr unsigned known =
      CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (phEvent == nullptr || (Flags & ~known) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Interprocess events must not time (documented requirement of cuIpcGetEventHandle).
  if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  auto e = std::make_shared<event_state>();
  e->flags = Flags;
  e->ctx = c;
  e->recorded = &e->local_recorded;
  e->completed = &e->local_completed;
  if (Flags & CU_EVENT_INTERPROCESS)
    if (CUresult r = make_shared_block(*e))
      return r;
  *phEvent = register_event(std::move(e));
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuEventDestroy, (CUevent hEvent), (hEvent), (void)0) {
  return destroy_event(hEvent);
}
CUPARITY_SIM_API(cuEventDestroy_v2, (CUevent hEvent), (hEvent), (void)0) {
  return destroy_event(hEvent);
}

CUPARITY_SIM_API(cuEventRecord, (CUevent hEvent, CUstream hStream), (hEvent, hStream), (void)0) {
  return record_event(hEvent, hStream, null_stream::legacy);
}
CUPARITY_SIM_API(cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), (hEvent, hStream),
                 (void)0) {
  return record_event(hEvent, hStream, null_stream::per_thread);
}

CUPARITY_SIM_API(cuEventQuery, (CUevent hEvent), (hEvent), (void)0) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<event_state> e = find_event(hEvent);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  return e->completed->load() >= e->recorded->load() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUPARITY_SIM_API(cuEventSynchronize, (CUevent hEvent), (hEvent), (void)0) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<event_state> e = find_event(hEvent);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  wait_event(e, e->recorded->load());
  return CUDA_SUCCESS;
}

// The 12080 ABI only "relaxed error checking" (unverified how:
// docs/driver-facts.md#event-elapsed-time-v2): the sim gives both the same behaviour.
CUPARITY_SIM_API(cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd),
                 (pMilliseconds, hStart, hEnd), bump(pMilliseconds)) {
  return elapsed_time(pMilliseconds, hStart, hEnd);
}
CUPARITY_SIM_API(cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd),
                 (pMilliseconds, hStart, hEnd), bump(pMilliseconds)) {
  return elapsed_time(pMilliseconds, hStart, hEnd);
}

// ---- IPC events

CUPARITY_SIM_API(cuIpcGetEventHandle, (CUipcEventHandle * pHandle, CUevent event), (pHandle, event),
                 (void)0) {
  if (CUresult r = check_init())
    return r;
  if (pHandle == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<event_state> e = find_event(event);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  // Only events created with CU_EVENT_INTERPROCESS can be exported.
  if (!(e->flags & CU_EVENT_INTERPROCESS) || e->shm_name.empty())
    return CUDA_ERROR_INVALID_VALUE;
  event_handle_payload payload{};
  payload.magic = event_handle_magic;
  payload.pid = static_cast<std::int32_t>(getpid());
  std::strncpy(payload.name, e->shm_name.c_str(), sizeof(payload.name) - 1);
  std::memset(pHandle, 0, sizeof(*pHandle));
  std::memcpy(pHandle->reserved, &payload, sizeof(payload));
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuIpcOpenEventHandle, (CUevent * phEvent, CUipcEventHandle handle),
                 (phEvent, handle), (void)0) {
  if (CUresult r = check_init())
    return r;
  if (phEvent == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  event_handle_payload payload{};
  std::memcpy(&payload, handle.reserved, sizeof(payload));
  payload.name[sizeof(payload.name) - 1] = '\0';
  if (payload.magic != event_handle_magic)
    return CUDA_ERROR_INVALID_VALUE;
  const int fd = shm_open(payload.name, O_RDWR, 0);
  if (fd < 0)
    return CUDA_ERROR_INVALID_VALUE;
  void *map = mmap(nullptr, sizeof(shared_event_block), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return CUDA_ERROR_INVALID_VALUE;
  if (static_cast<shared_event_block *>(map)->magic != event_magic) {
    munmap(map, sizeof(shared_event_block));
    return CUDA_ERROR_INVALID_VALUE;
  }
  auto e = std::make_shared<event_state>();
  e->flags = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
  e->ctx = c;
  attach_block(*e, map);
  *phEvent = register_event(std::move(e));
  return CUDA_SUCCESS;
}
