// dlopen/dlsym/dladdr wrapper shared by both backends and the binding map.
#include "harness/driver/driver_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace cuparity {

std::vector<std::string> default_driver_candidates() {
  return {"libcuda.so.1", "libcuda.so"};
}

std::shared_ptr<driver_library> driver_library::open(const std::string &path) {
  std::vector<std::string> candidates =
      path.empty() ? default_driver_candidates() : std::vector<std::string>{path};
  std::string tried;
  for (const auto &candidate : candidates) {
    // RTLD_LOCAL: two backends (or a simulated and a real driver in tests) must not see each
    // other's symbols through the global namespace.
    if (void *h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))
      return std::shared_ptr<driver_library>(new driver_library(h, candidate));
    const char *why = dlerror();
    tried += "\n  " + candidate + ": " + (why ? why : "unknown dlopen error");
  }
  throw driver_load_error("cannot load the CUDA driver library; tried:" + tried +
                          "\n  (set NUMBA_CUDA_DRIVER to the driver's file path, or use "
                          "--driver sim for a dry run on the simulated driver)");
}

driver_library::driver_library(void *handle, std::string path)
    : m_handle(handle), m_path(std::move(path)), m_resolved(m_path) {
  link_map *map = nullptr;
  if (dlinfo(m_handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    m_resolved = map->l_name;
}

driver_library::~driver_library() {
  // Never throws; a failing dlclose at exit has nothing useful to report.
  dlclose(m_handle);
}

void *driver_library::symbol(const char *name) const noexcept {
  return dlsym(m_handle, name);
}

std::string symbol_at(const void *address) {
  Dl_info info{};
  if (address && dladdr(address, &info) != 0 && info.dli_sname && info.dli_saddr == address)
    return info.dli_sname;
  return {};
}

} // namespace cuparity
