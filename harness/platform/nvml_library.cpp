// NVML through dlopen. The toolkit here ships no nvml.h, so the two functions used are declared
// from NVML's documented C API (they return nvmlReturn_t, 0 = NVML_SUCCESS).
#include "harness/platform/nvml_library.hpp"

#include <dlfcn.h>

namespace cuparity {
namespace {
using init_fn = int (*)();
} // namespace

nvml_session::nvml_session() noexcept {
  m_handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!m_handle)
    return;
  auto init = reinterpret_cast<init_fn>(dlsym(m_handle, "nvmlInit_v2"));
  m_initialised = init && init() == 0;
}

nvml_session::~nvml_session() {
  if (m_initialised)
    if (auto shutdown = reinterpret_cast<init_fn>(dlsym(m_handle, "nvmlShutdown")))
      shutdown();
  if (m_handle)
    dlclose(m_handle);
}

void *nvml_session::symbol(const char *name) const noexcept {
  return m_initialised ? dlsym(m_handle, name) : nullptr;
}

} // namespace cuparity
