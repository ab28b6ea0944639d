// Recognises the real driver's cuGetProcAddress answers by address and hands out wrappers.
#include "tools/fault_shim/proc_answers.hpp"

#include "tools/fault_shim/shim_state.hpp"
#include "tools/faults/driver_declarations.hpp"

#include <algorithm>
#include <string_view>

namespace cuparity::shim {

namespace {

bool ends_with_per_thread(std::string_view name) {
  return name.ends_with("_ptds") || name.ends_with("_ptsz");
}

// Two exported names may share one real address (an alias in the driver). The one that fits the
// question wins: the requested base name, and per-thread suffixes only when the flag asked.
int fit(std::string_view name, std::string_view requested, bool per_thread) {
  int score = 0;
  if (name.starts_with(requested) &&
      (name.size() == requested.size() || name[requested.size()] == '_'))
    score += 2;
  if (ends_with_per_thread(name) == per_thread)
    score += 1;
  return score;
}

} // namespace

void rewrite_answer(const char *requested, std::uint64_t flags, void **pfn) {
  if (pfn == nullptr || *pfn == nullptr)
    return;
  const shim_state &s = state();
  const auto by_first = [](const auto &entry, const void *address) {
    return entry.first < address;
  };
  auto it = std::lower_bound(s.by_address.begin(), s.by_address.end(), *pfn, by_first);
  if (it == s.by_address.end() || it->first != *pfn)
    return; // not a function the shim wraps: passed through
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const std::string_view asked = requested != nullptr ? requested : "";
  symbol_id best = it->second;
  int best_fit = -1;
  for (; it != s.by_address.end() && it->first == *pfn; ++it) {
    const int f = fit(faults::symbol_name(it->second), asked, per_thread);
    if (f > best_fit) {
      best = it->second;
      best_fit = f;
    }
  }
  const wrapper_pair &w = g_wrappers[faults::index_of(best)];
  *pfn = s.faults.needs_twin(best) ? w.twin : w.exported;
}

} // namespace cuparity::shim
