// Fault injection state of the simulated driver: the gate every export tests, the corrupt flag a
// body reads, and the byte flip. Parsing and applying faults is shared with the fault shim
// (tools/faults), so CUPARITY_SIM_FAULTS and CUPARITY_SHIM_FAULTS behave the same.
#include "sim.hpp"

#include <array>
#include <string>
#include <string_view>

namespace cuparity::sim {

std::atomic<int> g_fault_gate{0};

namespace {
thread_local bool t_corrupt = false;
thread_local bool t_legacy = false;
} // namespace

bool legacy_requested() {
  return t_legacy;
}
void set_legacy_requested(bool on) {
  t_legacy = on;
}

bool corrupt_requested() {
  return t_corrupt;
}
void set_corrupt_requested(bool on) {
  t_corrupt = on;
}

namespace {
// Symbols whose corrupt expression is not "(void)0": filled before main by CUPARITY_SIM_API.
std::array<bool, faults::symbol_count> g_corrupt_expr{};
} // namespace

bool note_corrupt_expr(symbol_id id, const char *expr) {
  g_corrupt_expr[faults::index_of(id)] = std::string_view(expr) != "(void)0";
  return true;
}

bool corrupt_applies(symbol_id id) {
  if (g_corrupt_expr[faults::index_of(id)])
    return true;
  // Bodies that damage the data their queued work writes (corrupt_requested()): copies,
  // memsets, kernel launches, pointer attributes.
  const std::string_view name = faults::symbol_name(id);
  for (std::string_view prefix : {"cuMemcpy", "cuMemsetD", "cuLaunchKernel",
                                  "cuLaunchCooperativeKernel", "cuPointerGetAttribute"})
    if (name.starts_with(prefix))
      return true;
  return false;
}

std::string fault_support(const faults::fault_spec &spec) {
  if (spec.kind == faults::fault_kind::corrupt && !corrupt_applies(spec.symbol))
    return "corrupt does nothing to " + std::string(faults::symbol_name(spec.symbol)) +
           " in the simulated driver (it writes nothing the simulation can damage)";
  return {};
}

void corrupt_byte(void *p) {
  if (p != nullptr)
    *static_cast<unsigned char *>(p) ^= 0xFFu;
}

} // namespace cuparity::sim

// Whether a fault item applies to this library, for tools that plan fault trials (cuparity faults):
// null when it does, else why not (a malformed item, or corrupt where it does nothing). The text
// lives until the next call on the same thread.
extern "C" __attribute__((visibility("default"))) const char *
cuparity_fault_support(const char *item) {
  static thread_local std::string why;
  why = cuparity::faults::fault_item_support(item ? item : "", cuparity::sim::fault_support);
  return why.empty() ? nullptr : why.c_str();
}
