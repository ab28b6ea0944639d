// Internal interface of the simulated CUDA driver: the state model shared by all its source files.
#pragma once

// First: cuda.h's declarations with default visibility, so every definition here is exported.
#include "tools/faults/driver_declarations.hpp"
#include "tools/faults/exported_symbol.hpp"
#include "tools/faults/fault_set.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cuparity::sim {

// ---- exported symbols (harness/driver/exported_symbols.inl, generated from entries.list)
using faults::call_path;
using faults::symbol_count;
using faults::symbol_id;

struct config {
  int driver_version = 0;
  int device_count = 1; // the host's devices (CUPARITY_SIM_DEVICES)
  // The devices this process sees (CUDA_VISIBLE_DEVICES): its ordinal i is the host's visible[i].
  std::vector<int> visible;
  std::uint64_t total_mem = 0;
  // CUPARITY_SIM_COMPUTE_CAPABILITY ("8.0"; default 9.0, an H100/H200). A malformed value leaves
  // `cc_error` set: cuInit then fails, as a driver that cannot identify its GPU does.
  int cc_major = 9, cc_minor = 0;
  std::string cc_error;
  std::set<std::string, std::less<>> hidden;
  faults::fault_set faults;
  // CUPARITY_SIM_SHM_TAG ([a-z0-9], 1 to 6): this process's shared-memory objects carry it in
  // their names, and its sweeps touch only objects of its own tag (shm_names.cpp).
  std::string shm_tag;
};

// The configuration; the first call reads the environment (and warns about malformed values).
const config &cfg();
// Writes one warning line to stderr, prefixed so the harness can recognise it.
void warn(const std::string &message);

// ---- faults (faults.cpp)
// 0: configuration not read yet; 1: read, no fault configured; 2: read, faults configured.
// Every exported function tests `!= 1` once, so the no-fault hot path is one predictable branch.
extern std::atomic<int> g_fault_gate;
// cuGetProcAddress hands out a symbol's hidden twin instead of its exported function while the
// symbol has a `dlsym` or `proc` fault (fault_set::needs_twin), so each path sees only its own.

// Set while the body of a call with an active `corrupt` fault runs. Bodies that write device data
// (copies, memsets, kernels) capture it into the queued operation, which perturbs its output.
bool corrupt_requested();
void set_corrupt_requested(bool on);
// Set while the body of a per-thread symbol with an active `legacy` fault runs: stream 0 then
// resolves to the legacy stream, as if the legacy twin had been called (resolve_stream).
bool legacy_requested();
void set_legacy_requested(bool on);
// Which symbols a `corrupt` fault changes anything in: CUPARITY_SIM_API notes each symbol's
// corrupt expression before main; a `corrupt` fault elsewhere is refused with a warning.
bool note_corrupt_expr(symbol_id id, const char *expr);
bool corrupt_applies(symbol_id id);
std::string fault_support(const faults::fault_spec &spec);

// ---- errors (errors.cpp)
const char *error_name(CUresult code);   // nullptr when unknown
const char *error_string(CUresult code); // nullptr when unknown

// ---- init and devices (state.cpp, device.cpp)
bool initialized();
// CUDA_ERROR_NOT_INITIALIZED before a successful cuInit.
inline CUresult check_init() {
  return initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}
int device_count(); // the devices this process sees
bool valid_device(CUdevice dev);
// The host's ordinal of a valid device of this process: what its UUID and PCI bus id identify.
int host_device(CUdevice dev);
std::uint64_t device_total_mem();
// Device memory accounting, so cuMemGetInfo and CUDA_ERROR_OUT_OF_MEMORY behave.
bool reserve_device_mem(int device, std::size_t bytes);
void release_device_mem(int device, std::size_t bytes);
std::uint64_t device_used_mem(int device);

// ---- contexts (state.cpp, context.cpp)
struct stream;
struct module;

struct context {
  int device = 0;
  unsigned flags = 0;
  bool primary = false;
  // alive: usable; destroyed: cuCtxDestroy'd (stale handles and stacks still point here);
  // inactive: a primary context whose refcount dropped to 0 or which was reset.
  enum class life : int { alive, destroyed, inactive };
  std::atomic<life> state{life::alive};
  int primary_refcount = 0; // guarded by g_state_mutex
  // Streams of this context; guarded by the scheduler mutex (streams.cpp).
  std::shared_ptr<stream> legacy;
  std::unordered_map<std::thread::id, std::shared_ptr<stream>> per_thread;
  std::vector<std::shared_ptr<stream>> streams;
  std::set<int> peers; // guarded by g_state_mutex
  // Bumped whenever the context loses its streams, so per-thread caches notice.
  std::atomic<std::uint64_t> epoch{0};
};

extern std::mutex g_state_mutex;
CUcontext to_handle(context *c);
// The context behind a handle, or nullptr when the handle never named a context.
context *from_handle(CUcontext h);
// The context current on this thread: CUDA_ERROR_INVALID_CONTEXT when there is none (or a
// released primary), CUDA_ERROR_CONTEXT_IS_DESTROYED when it was destroyed meanwhile.
CUresult current_context(context *&out);
// A usable context for an explicit handle (CUDA_ERROR_INVALID_CONTEXT otherwise).
CUresult checked_context(CUcontext h, context *&out);
context *new_context(int device, unsigned flags, bool primary);
// The primary context object of a device (one per device for the life of the process).
context *primary_context(int device);
// Releases everything a context owns: waits for its work, stops its streams, frees its memory and
// modules. Used by cuCtxDestroy and when a primary context is released for the last time or reset.
void teardown_context(context *c);
// Per-thread context stack (context.cpp).
std::vector<context *> &thread_stack();

// ---- streams and events (streams.cpp, events.cpp)
enum class null_stream : std::uint8_t { legacy, per_thread };

struct event_state;

struct dependency {
  std::shared_ptr<stream> on_stream; // satisfied when on_stream->completed >= seq
  std::uint64_t seq = 0;
  std::shared_ptr<event_state> on_event; // satisfied when the event reached generation `seq`
};

struct stream_op {
  std::function<void()> run;
  std::vector<dependency> deps;
  std::int64_t queued_ns = 0; // when it was enqueued (now_ns)
};

struct stream {
  enum class kind : std::uint8_t { created, legacy, per_thread } what = kind::created;
  context *ctx = nullptr;
  unsigned flags = 0;
  int priority = 0;
  // All below guarded by the scheduler mutex.
  std::deque<stream_op> queue;
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  bool destroyed = false;
  bool worker_started = false;
  std::int64_t last_end_ns = 0; // when its last operation ended, on the stream's own clock
  bool blocking() const { return what != kind::created || (flags & CU_STREAM_NON_BLOCKING) == 0; }
};

struct event_state {
  unsigned flags = 0;
  context *ctx = nullptr;
  // Generation counters; they point into shared memory for interprocess events.
  std::atomic<std::uint64_t> *recorded = nullptr;
  std::atomic<std::uint64_t> *completed = nullptr;
  std::atomic<std::uint64_t> local_recorded{0};
  std::atomic<std::uint64_t> local_completed{0};
  std::atomic<std::int64_t> completed_at_ns{0}; // steady_clock time of the latest completion
  bool external = false;                        // counters live in shared memory: poll them
  std::string shm_name;                         // interprocess backing object, if any
  bool owns_shm = false;
  void *shm_map = nullptr;
  ~event_state();
};

// Resolves a stream handle (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a created stream).
// `mode` says what 0 means for the calling symbol (plain: legacy; _ptds/_ptsz: per-thread).
CUresult resolve_stream(CUstream h, null_stream mode, std::shared_ptr<stream> &out);
// Queues an operation in stream order (adding the legacy-stream dependencies); returns its seq.
std::uint64_t enqueue(const std::shared_ptr<stream> &s, std::function<void()> run,
                      std::vector<dependency> extra = {});
// Runs `run` in stream order and waits for it: how synchronous copies and memsets work. When the
// stream (and, for the legacy stream, every blocking stream) is idle it runs on the caller.
void run_synchronously(const std::shared_ptr<stream> &s, const std::function<void()> &run);
void wait_stream(const std::shared_ptr<stream> &s);
bool stream_idle(const std::shared_ptr<stream> &s);
void synchronize_context(context *c);
// Marks every stream of the context destroyed after its queued work; used by teardown.
void drop_context_streams(context *c);
std::shared_ptr<event_state> find_event(CUevent e);
// Blocks until the event reached generation `gen` (polling when its counters are interprocess).
void wait_event(const std::shared_ptr<event_state> &e, std::uint64_t gen);
// Wakes everything waiting on stream progress (after an event completes, for instance).
void notify_progress();
// Whether this process can make no progress without the one running operation: a host thread
// waits in a synchronising call, no other operation runs, and nothing queued is ready to run.
// The meeting kernel's clock runs only then (kernels.cpp).
bool host_stalled();
std::int64_t now_ns();
// When a GPU would have reached the operation now running on this thread: for one that waited for
// no other stream, as soon as it was queued and its stream's previous operation had ended (that
// one's start plus its own run time); else now. Events take their time from it, so two records with
// nothing between them read ~0 ms however late a loaded host schedules the stream's worker
// (seen: 1.08 ms on a CI host).
std::int64_t op_reached_ns();

// ---- memory (memory.cpp)
enum class mem_kind : std::uint8_t {
  device,
  managed,
  host_alloc,
  host_registered,
  async,
  ipc,
  module_global
};

struct allocation {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  mem_kind kind = mem_kind::device;
  context *ctx = nullptr;
  int device = 0;
  unsigned flags = 0;
  std::size_t map_len = 0;     // length of the mapping behind it (page rounded)
  std::string shm_name;        // device allocations: the POSIX shared-memory object
  int ipc_refcount = 0;        // imported IPC mappings: cuIpcOpenMemHandle count
  std::string ipc_key;         // imported IPC mappings: exporter name, to reuse the mapping
  std::uint64_t buffer_id = 0; // CU_POINTER_ATTRIBUTE_BUFFER_ID: unique per allocation
};

// Finds the allocation containing [ptr, ptr+len): CUDA_ERROR_INVALID_VALUE when there is none.
CUresult find_allocation(std::uintptr_t ptr, std::size_t len, allocation &out);
bool lookup_allocation(std::uintptr_t ptr, allocation &out);
void insert_allocation(allocation a);
// Finds an allocation starting exactly at `base` with one of the given kinds.
bool lookup_base(std::uintptr_t base, std::initializer_list<mem_kind> kinds, allocation &out);
// Updates the IPC import count of the allocation at `base`; returns the new count.
int adjust_ipc_refcount(std::uintptr_t base, int delta);
// Bases of imported IPC mappings (guarded by the IPC import mutex in ipc.cpp).
std::vector<std::uintptr_t> &imported_bases();
bool erase_allocation(std::uintptr_t base, allocation &out);
// Frees the allocations a context owns (teardown).
void free_context_memory(context *c);
// ---- shared-memory objects (shm_names.cpp)
// "/<prefix>[-t<tag>].<pid>.<start time>.<n>": a name that says which process made the object.
std::string shm_object_name(const char *prefix, std::uint64_t n);
// Unlinks every such object of this process's tag whose maker has ended (killed processes cannot
// unlink their own).
void sweep_dead_shm_objects();

// Backs a device allocation with a shared-memory object (so IPC can map it elsewhere).
CUresult map_shared(std::size_t size, std::string &name, void *&ptr, std::size_t &map_len);
void unmap_allocation(const allocation &a);
// Flips the first byte of a buffer written by an operation with a `corrupt` fault.
void corrupt_byte(void *p);

// ---- modules and kernels (module.cpp, kernels.cpp)
void unload_context_modules(context *c);
struct launch_dims {
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
};
// A CPU implementation receives a pointer to each argument, as kernelParams has them.
using kernel_fn = void (*)(const launch_dims &dims, void *const *args);
struct kernel_desc {
  const char *name;
  std::vector<std::size_t> param_sizes;
  kernel_fn fn;
  int output_param; // index of the pointer argument the kernel writes first (-1: none)
};
const kernel_desc *find_kernel(std::string_view name);

struct function_state {
  context *ctx = nullptr;
  const kernel_desc *kernel = nullptr;
  int max_dynamic_shared = 49152; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int carveout = -1;              // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
  CUfunc_cache cache = CU_FUNC_CACHE_PREFER_NONE;
};
// Fixed per-function figures of the model (documented in module.cpp).
inline constexpr int sim_num_regs = 32;
inline constexpr int sim_max_dynamic_shared_optin = 232448;
inline constexpr int sim_sm_count = 132;
std::shared_ptr<function_state> find_function(CUfunction f);
// Resident blocks per SM for a block size and dynamic shared memory (occupancy.cpp).
int blocks_per_sm(const function_state &f, int block_size, std::size_t dynamic_smem);
const std::vector<kernel_desc> &kernel_registry();

// Names found in a PTX, cubin or fatbin image.
struct image_symbols {
  std::set<std::string, std::less<>> entries;              // kernels (.entry / STT_FUNC)
  std::map<std::string, std::size_t, std::less<>> globals; // __device__ variables and sizes
  std::set<std::string, std::less<>> defined_funcs;        // .func / .entry definitions (linker)
  std::set<std::string, std::less<>> extern_refs;          // .extern .func references (linker)
};
enum class image_kind : std::uint8_t { ptx, elf, fatbin, invalid };
// Determines the kind and byte length of an image given only its address, as cuModuleLoadData.
image_kind classify_image(const void *image, std::size_t &length);
image_symbols scan_image(const void *image, std::size_t length, image_kind kind);
// Whether an image holds code this process's device can run (image_arch.cpp): a cubin for its SM
// (or an older minor of the same major), or PTX for an architecture no newer than it.
bool image_runs_on_device(const void *image, std::size_t length, image_kind kind);
// The device's SM as a number: 90 for compute capability 9.0.
int device_sm();

// ---- JIT option helpers shared by module loading and the linker (linker.cpp)
struct jit_logs {
  char *error_log = nullptr;
  std::size_t error_size = 0;
  void **error_size_slot = nullptr; // option value slot to write the used size back into
  char *info_log = nullptr;
  std::size_t info_size = 0;
  void **info_size_slot = nullptr;
};
CUresult parse_jit_options(unsigned n, const CUjit_option *options, void **values, jit_logs &out);
void write_log(char *buffer, std::size_t size, void **size_slot, const std::string &text);

// ---- small helpers
template <class T> inline void bump(T *p) {
  if (p != nullptr)
    *p = static_cast<T>(*p + 1);
}

} // namespace cuparity::sim
