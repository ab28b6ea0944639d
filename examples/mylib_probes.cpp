// A latency probe of the example project: one function and one registration line, timed in every
// series (through the facade, the raw pointer and the other backend's pointer) by the runner's
// latency phase (docs/latency.md).
#include "harness/probes/probe_registry.hpp"

#include <cstddef>

namespace mylib {
namespace {

/// cuMemGetInfo: a host call that reaches the driver's device bookkeeping, nothing asynchronous.
/// The probe process has made device 0's primary context current (probe_env).
void mem_get_info(cuparity::probe_state &s, cuparity::probe_env &e) {
  auto get_info = s.bind(e.drv.cuMemGetInfo);
  std::size_t free_bytes = 0, total_bytes = 0;
  for (auto _ : s) {
    get_info(&free_bytes, &total_bytes);
    cuparity::keep(free_bytes);
  }
}

} // namespace

CUPARITY_PROBE_FILE(register_mylib_probes) {
  // The module every probe finds loaded in probe_env (this device's image of it); a project whose
  // probes launch nothing may leave it out.
  registry.set_fixture_image("mylib_kernels.cubin");
  registry.add("mylib.mem_get_info", cuparity::probe_kind::host, mem_get_info);
}

} // namespace mylib
