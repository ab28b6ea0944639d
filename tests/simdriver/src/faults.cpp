// Fault injection: per exported symbol and per resolution path, an error code, a delay or
// corrupted output (CUPARITY_SIM_FAULTS), so tests can prove the comparator catches divergences.
#include "sim.hpp"

#include <csignal>

namespace cuparity::sim {

std::atomic<int> g_fault_gate{0};

namespace {
thread_local bool t_corrupt = false;

bool path_matches(call_path configured, call_path actual) {
  return configured == call_path::any || configured == actual;
}

void busy_wait_ns(std::int64_t ns) {
  // Busy-wait rather than sleep: a sleep rounds up to scheduler ticks and would blur latency
  // probes, which is what delay faults exist to move.
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}
} // namespace

fault_outcome apply_faults(symbol_id id, call_path path) {
  fault_outcome outcome;
  for (const fault_spec &f : cfg().faults) {
    if (f.symbol != id || !path_matches(f.path, path))
      continue;
    switch (f.what) {
    case fault_spec::kind::delay_ns:
      busy_wait_ns(f.value);
      break;
    case fault_spec::kind::error:
      if (!outcome.fail) {
        outcome.fail = true;
        outcome.code = static_cast<CUresult>(f.value);
      }
      break;
    case fault_spec::kind::corrupt:
      outcome.corrupt = true;
      break;
    case fault_spec::kind::crash:
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
      break;
    }
  }
  return outcome;
}

bool has_proc_fault(symbol_id id) {
  for (const fault_spec &f : cfg().faults)
    if (f.symbol == id && f.path == call_path::proc)
      return true;
  return false;
}

bool corrupt_requested() {
  return t_corrupt;
}
void set_corrupt_requested(bool on) {
  t_corrupt = on;
}

void corrupt_byte(void *p) {
  if (p != nullptr)
    *static_cast<unsigned char *>(p) ^= 0xFFu;
}

} // namespace cuparity::sim
