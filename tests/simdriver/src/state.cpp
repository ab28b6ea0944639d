// Process-wide driver state: initialisation, device memory accounting and the context registry.
#include "api.hpp"

#include <cstdlib>
#include <unordered_set>

namespace cuparity::sim {

namespace {
std::atomic<bool> g_initialized{false};

struct device_state {
  std::atomic<std::uint64_t> used{0};
};

// Immortal on purpose: stream workers may run while the process exits; destroying shared state
// under them would turn a clean exit into a crash.
device_state *const g_devices = new device_state[64];
std::unordered_set<context *> &all_contexts() {
  static auto *set = new std::unordered_set<context *>();
  return *set;
}
} // namespace

std::mutex g_state_mutex;

bool initialized() {
  return g_initialized.load(std::memory_order_acquire);
}
int device_count() {
  return static_cast<int>(cfg().visible.size());
}
int host_device(CUdevice dev) {
  return cfg().visible[static_cast<std::size_t>(dev)];
}
bool valid_device(CUdevice dev) {
  return dev >= 0 && dev < device_count();
}
std::uint64_t device_total_mem() {
  return cfg().total_mem;
}

bool reserve_device_mem(int device, std::size_t bytes) {
  auto &used = g_devices[device].used;
  std::uint64_t current = used.load();
  do {
    if (bytes > device_total_mem() || current > device_total_mem() - bytes)
      return false;
  } while (!used.compare_exchange_weak(current, current + bytes));
  return true;
}

void release_device_mem(int device, std::size_t bytes) {
  g_devices[device].used -= bytes;
}
std::uint64_t device_used_mem(int device) {
  return g_devices[device].used.load();
}

CUcontext to_handle(context *c) {
  return reinterpret_cast<CUcontext>(c);
}

context *from_handle(CUcontext h) {
  auto *c = reinterpret_cast<context *>(h);
  std::lock_guard lock(g_state_mutex);
  return all_contexts().contains(c) ? c : nullptr;
}

// Registers a new context. Contexts are never freed: a destroyed context's handle must keep
// answering CUDA_ERROR_INVALID_CONTEXT / CONTEXT_IS_DESTROYED instead of aliasing a new one.
context *new_context(int device, unsigned flags, bool primary) {
  auto *c = new context();
  c->device = device;
  c->flags = flags;
  c->primary = primary;
  std::lock_guard lock(g_state_mutex);
  all_contexts().insert(c);
  return c;
}

CUresult current_context(context *&out) {
  const auto &stack = thread_stack();
  if (stack.empty() || stack.back() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  out = stack.back();
  switch (out->state.load(std::memory_order_acquire)) {
  case context::life::alive:
    return CUDA_SUCCESS;
  case context::life::destroyed:
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  case context::life::inactive:
    break;
  }
  return CUDA_ERROR_INVALID_CONTEXT;
}

CUresult checked_context(CUcontext h, context *&out) {
  out = from_handle(h);
  if (out == nullptr || out->state.load() != context::life::alive)
    return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

} // namespace cuparity::sim

using namespace cuparity::sim;

CUPARITY_SIM_API(cuInit, (unsigned int Flags), (Flags), (void)0) {
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (device_count() == 0)
    return CUDA_ERROR_NO_DEVICE;
  // A compute capability the sim cannot read: no device it could claim to be (config.cpp warned).
  if (!cfg().cc_error.empty())
    return CUDA_ERROR_NO_DEVICE;
  // Every simulated process calls cuInit first: the moment to remove what killed ones left. It
  // sweeps again when it exits, for a process killed while this one started: a cell still
  // dying of a runner's SIGKILL counts as alive at the sweep of a resume's first cells, and when
  // every cell of the resume has started by then, no later cuInit would sweep its objects.
  static std::once_flag swept;
  std::call_once(swept, [] {
    sweep_dead_shm_objects();
    std::atexit(sweep_dead_shm_objects);
  });
  g_initialized.store(true, std::memory_order_release);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDriverGetVersion, (int *driverVersion), (driverVersion), bump(driverVersion)) {
  if (driverVersion == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = cfg().driver_version;
  return CUDA_SUCCESS;
}
