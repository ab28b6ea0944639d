// Fault injection state of the simulated driver: the gate every export tests, the corrupt flag a
// body reads, and the byte flip. Parsing and applying faults is shared with the fault shim
// (tools/faults), so CUPARITY_SIM_FAULTS and CUPARITY_SHIM_FAULTS behave the same.
#include "sim.hpp"

namespace cuparity::sim {

std::atomic<int> g_fault_gate{0};

namespace {
thread_local bool t_corrupt = false;
} // namespace

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
