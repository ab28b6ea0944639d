// Reading the binding variables with Numba's semantics ("0" is off; garbage warns, uses default).
#include "harness/config/config.hpp"

#include "harness/platform/self_exe.hpp"

#include <filesystem>
#include <system_error>
#include <vector>

namespace cuparity {
namespace fs = std::filesystem;

std::string executable_dir() {
  try {
    return fs::path(self_executable()).parent_path().string();
  } catch (const fs::filesystem_error &) {
    return "."; // /proc unreadable: companions are then looked for in the working directory
  }
}

// The installed layout (CMakeLists.txt, install section) keeps the libraries in lib/cuparity.
#ifndef CUPARITY_PKGLIBDIR_FROM_BINDIR
#define CUPARITY_PKGLIBDIR_FROM_BINDIR "../lib/cuparity"
#endif

namespace {
// Function-local: registrations run in static initialisers of other translation units.
std::vector<fs::path> &registered_companion_folders() {
  static std::vector<fs::path> folders;
  return folders;
}
} // namespace

void add_companion_folder(std::string folder) {
  registered_companion_folders().emplace_back(std::move(folder));
}

std::string companion_library(const std::string &exe_dir, const std::string &file) {
  std::error_code ec;
  const fs::path beside = fs::path(exe_dir) / file;
  std::vector<fs::path> candidates{
      beside, (fs::path(exe_dir) / CUPARITY_PKGLIBDIR_FROM_BINDIR / file).lexically_normal()};
  for (const auto &folder : registered_companion_folders())
    candidates.push_back((folder / file).lexically_normal());
  for (const auto &c : candidates)
    if (fs::exists(c, ec))
      return c.string();
  return beside.string();
}

settings read_settings(const env_lookup &env, const std::string &exe_dir) {
  settings s;
  for (const auto &name : binding_variables())
    if (auto v = env(name))
      s.variables[name] = *v;

  s.use_nvidia_binding = read_int_variable(env, var::use_nvidia_binding, 0, s.warnings) != 0;
  s.numba_ptds = read_int_variable(env, var::numba_ptds, 0, s.warnings) != 0;
  // Parsed as an integer, so "0" is off. cuda-python once treated any non-empty value as on
  // (NVIDIA/cuda-python#2076, fixed in cuda-bindings 13.2.1/13.3.0): the matrix tests that trap.
  s.cuda_python_ptds = read_int_variable(env, var::cuda_python_ptds, 0, s.warnings) != 0;

  if (auto d = env(var::driver)) {
    // Numba: NUMBA_CUDA_DRIVER='0' forces "driver not found"; otherwise it must be a file
    // (numba/cuda/cudadrv/driver.py locate_driver_and_loader; its docs wrongly say directory).
    if (*d == "0")
      throw config_error(std::string(var::driver) +
                         "=0 disables the CUDA driver (Numba's convention): nothing to test");
    std::error_code ec;
    fs::path p = fs::absolute(*d, ec);
    if (d->empty() || ec || !fs::is_regular_file(p, ec))
      throw config_error(std::string(var::driver) + "='" + *d + "' is not a valid file path" +
                         (d->empty() ? "" : " (" + p.string() + " is not a regular file)") +
                         "; it must name the driver library file itself, e.g. "
                         "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    s.driver_path = p.string();
  }
  if (auto inc = env(var::include_path))
    s.include_path = *inc;
  if (auto map = env(var::binding_map))
    s.binding_map_path = *map;
  if (auto nb = env(var::nvidia_backend))
    s.nvidia_backend_path = *nb;
  else
    s.nvidia_backend_path = companion_library(exe_dir, "libcuparity_nvidia.so");
  return s;
}

} // namespace cuparity
