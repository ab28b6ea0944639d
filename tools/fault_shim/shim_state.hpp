// What the fault shim knows once loaded: the target driver, its functions, the faults to apply.
#pragma once

#include "tools/faults/exported_symbol.hpp"
#include "tools/faults/fault_set.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuparity::shim {

using faults::symbol_id;

/// One exported symbol's forwarding data, read by its wrapper on every call. `fast` is set (with
/// release order, after `real`) only when a call needs nothing but the jump to `real`: the target
/// has the symbol, it has no fault, and its answer needs no rewriting (cuGetProcAddress).
struct slot {
  void *real = nullptr;
  std::atomic<bool> fast{false};
};
extern std::array<slot, faults::symbol_count> g_slots;

/// Calls that took the slow path, per symbol and path (0: dlsym, 1: proc), for the log
/// (shim_log.hpp). Counted with a relaxed load and store, not an atomic add, which would cost more
/// than a short delay: two threads calling at once may lose a count.
extern std::array<std::array<std::atomic<std::uint64_t>, 2>, faults::symbol_count> g_slow_calls;

struct shim_state {
  bool target_open = false;
  void *target = nullptr;                          ///< dlopen handle of CUPARITY_SHIM_TARGET
  std::array<void *, faults::symbol_count> real{}; ///< the target's functions (nullptr: missing)
  faults::fault_set faults;
  /// (real address, symbol) sorted by address: recognises cuGetProcAddress's answers.
  std::vector<std::pair<const void *, symbol_id>> by_address;
};

/// The state, loaded on first use (the library's constructor uses it first): opens the target,
/// reads CUPARITY_SHIM_FAULTS and fills g_slots. Never throws and never aborts.
const shim_state &state();

/// The shim's own functions for a symbol: the exported wrapper (what dlsym finds, `dlsym` faults)
/// and its hidden proc twin (`proc` faults); exports.cpp defines the table.
struct wrapper_pair {
  void *exported;
  void *twin;
};
extern const std::array<wrapper_pair, faults::symbol_count> g_wrappers;

/// Writes "cuparity fault shim: <level>: <message>" on one line of stderr.
void report(const char *level, const std::string &message);

} // namespace cuparity::shim
