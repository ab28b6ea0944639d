// cuparity_fault_shim_target_symbol: dlsym in the shim's target.
#include "tools/fault_shim/target_query.hpp"

#include "tools/fault_shim/shim_state.hpp"

#include <dlfcn.h>

void *cuparity_fault_shim_target_symbol(const char *name) {
  const cuparity::shim::shim_state &s = cuparity::shim::state();
  return s.target_open && name != nullptr ? dlsym(s.target, name) : nullptr;
}
