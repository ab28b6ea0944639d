// Loads the fault shim: opens CUPARITY_SHIM_TARGET, reads CUPARITY_SHIM_FAULTS, fills the slots.
#include "tools/fault_shim/shim_state.hpp"

#include "tools/fault_shim/copy_corruption.hpp"
#include "tools/fault_shim/target_query.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace cuparity::shim {

std::array<slot, faults::symbol_count> g_slots;
std::array<std::array<std::atomic<std::uint64_t>, 2>, faults::symbol_count> g_slow_calls;

namespace {

constexpr const char *target_variable = "CUPARITY_SHIM_TARGET";
constexpr const char *faults_variable = "CUPARITY_SHIM_FAULTS";
constexpr const char *default_target = "libcuda.so.1";

// Their answers are rewritten (proc_answers.hpp), so every call takes the slow path.
bool rewrites_answer(symbol_id id) {
  return id == symbol_id::cuGetProcAddress || id == symbol_id::cuGetProcAddress_v2;
}

// Opens the target; returns why not ("" when open). The message names the variable, the value
// and dlerror's words, as the one line a user sees.
std::string open_target(shim_state &s) {
  const char *env = std::getenv(target_variable);
  const bool set = env != nullptr && *env != '\0';
  const std::string name = set ? env : default_target;
  const std::string named =
      std::string(target_variable) + "='" + name + "'" + (set ? "" : " (the default)");
  dlerror();
  void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *why = dlerror();
    return "cannot open the driver " + named + ": " + (why ? why : "dlopen failed");
  }
  // Under the name libcuda.so.1 the shim may find itself: forwarding to itself would never end.
  if (dlsym(handle, "cuparity_fault_shim_target_symbol") ==
      reinterpret_cast<void *>(&cuparity_fault_shim_target_symbol))
    return named + " is this fault shim itself; point it at the real driver's file";
  s.target = handle;
  s.target_open = true;
  return {};
}

void resolve_symbols(shim_state &s) {
  for (std::size_t i = 0; i < faults::symbol_count; ++i) {
    const auto id = static_cast<symbol_id>(i);
    s.real[i] = dlsym(s.target, std::string(faults::symbol_name(id)).c_str());
    if (s.real[i] != nullptr)
      s.by_address.emplace_back(s.real[i], id);
  }
  std::sort(s.by_address.begin(), s.by_address.end());
}

void read_faults(shim_state &s) {
  const char *raw = std::getenv(faults_variable);
  if (raw == nullptr)
    return;
  const auto warn = [](const std::string &message) { report("warning", message); };
  s.faults =
      faults::fault_set(faults::parse_fault_list(raw, faults_variable, warn, corrupt_support));
}

void fill_slots(const shim_state &s) {
  for (std::size_t i = 0; i < faults::symbol_count; ++i) {
    const auto id = static_cast<symbol_id>(i);
    g_slots[i].real = s.real[i];
    const bool fast = s.real[i] != nullptr && !s.faults.has_fault(id) && !rewrites_answer(id);
    g_slots[i].fast.store(fast, std::memory_order_release);
  }
}

shim_state *load() {
  auto *s = new shim_state;
  // Faults are read even without a target, so a malformed list is reported either way.
  read_faults(*s);
  if (std::string why = open_target(*s); !why.empty())
    report("error", why + "; every driver call returns CUDA_ERROR_NOT_INITIALIZED");
  else
    resolve_symbols(*s);
  fill_slots(*s);
  return s;
}

// At load, so the message about an unopenable target comes before the first call, and so the
// first call does not pay for opening the target.
[[gnu::constructor]] void load_at_start() {
  (void)state();
}

} // namespace

const shim_state &state() {
  // Intentionally leaked, and the target never closed: other libraries' destructors and atexit
  // handlers may still call the driver while the process exits.
  static const shim_state *const loaded = load();
  return *loaded;
}

void report(const char *level, const std::string &message) {
  std::fprintf(stderr, "cuparity fault shim: %s: %s\n", level, message.c_str());
}

} // namespace cuparity::shim

// Whether a fault item applies to the shim, for tools that plan fault trials (cuparity faults):
// null when it does, else why not. The text lives until the next call on the same thread.
extern "C" __attribute__((visibility("default"))) const char *
cuparity_fault_support(const char *item) {
  static thread_local std::string why;
  why = cuparity::faults::fault_item_support(item ? item : "", cuparity::shim::corrupt_support);
  return why.empty() ? nullptr : why.c_str();
}
