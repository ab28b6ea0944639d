// dlopen/dlsym/dladdr wrapper shared by both backends and the binding map.
#include "harness/driver/driver_library.hpp"

#include "harness/platform/library_loader.hpp"

#include <dlfcn.h>
#include <link.h>

namespace cuparity {

std::vector<std::string> default_driver_candidates() {
  return {"libcuda.so.1", "libcuda.so"};
}

std::shared_ptr<driver_library> driver_library::open(const std::string &path) {
  const auto found = open_first_library(path.empty() ? default_driver_candidates()
                                                     : std::vector<std::string>{path});
  if (found.handle)
    return std::shared_ptr<driver_library>(new driver_library(found.handle, found.opened));
  throw driver_load_error("cannot load the CUDA driver library; tried:" + found.tried +
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

void *driver_library::symbol_behind_shim(const char *name) const noexcept {
  if (void *own = symbol(name))
    return own;
  using target_query = void *(*)(const char *);
  auto query = reinterpret_cast<target_query>(symbol("cuparity_fault_shim_target_symbol"));
  return query != nullptr ? query(name) : nullptr;
}

std::string symbol_at(const void *address) {
  Dl_info info{};
  if (address && dladdr(address, &info) != 0 && info.dli_sname && info.dli_saddr == address)
    return info.dli_sname;
  return {};
}

std::string library_at(const void *address) {
  Dl_info info{};
  if (address && dladdr(address, &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return {};
}

} // namespace cuparity
