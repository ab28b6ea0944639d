// Applies parsed faults to one call: delays, crashes, errors, the corrupt flag.
#include "tools/faults/fault_set.hpp"

#include "tools/faults/precise_delay.hpp"

#include <csignal>
#include <cstdlib>

namespace cuparity::faults {

namespace {
bool path_matches(call_path configured, call_path actual) {
  return configured == call_path::any || configured == actual;
}

[[noreturn]] void crash_now() {
  // Default action, so a handler the host process installed cannot turn the crash into
  // something else; the runner must see a process killed by SIGSEGV.
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  std::abort(); // not reached: raise does not return for SIGSEGV with SIG_DFL
}
} // namespace

fault_set::fault_set(std::vector<fault_spec> specs) : m_specs(std::move(specs)) {
  for (const fault_spec &f : m_specs) {
    m_faulted[index_of(f.symbol)] = 1;
    if (f.path != call_path::any)
      m_path_specific[index_of(f.symbol)] = 1;
    m_has_delay = m_has_delay || f.kind == fault_kind::delay_ns;
  }
  if (m_has_delay)
    calibrate_delay();
}

fault_outcome fault_set::apply(symbol_id id, call_path path) const {
  fault_outcome outcome;
  for (const fault_spec &f : m_specs) {
    if (f.symbol != id || !path_matches(f.path, path))
      continue;
    switch (f.kind) {
    case fault_kind::delay_ns:
      precise_delay(f.value);
      break;
    case fault_kind::error:
      if (!outcome.fail) {
        outcome.fail = true;
        outcome.code = f.value;
      }
      break;
    case fault_kind::corrupt:
      outcome.corrupt = true;
      break;
    case fault_kind::legacy:
      outcome.legacy = true;
      break;
    case fault_kind::crash:
      crash_now();
    }
  }
  return outcome;
}

} // namespace cuparity::faults
