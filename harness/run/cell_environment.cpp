// The environments of cell and probe processes, from the matrix and the cell.
#include "harness/run/cell_environment.hpp"

#include "harness/config/env_vars.hpp"
#include "harness/platform/environment.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/run/package_env.hpp"

namespace cuparity {
namespace {

/// `folder` first on the path list `path` ("" gives the folder alone).
std::string path_first(const std::string &folder, const std::string &path) {
  return path.empty() ? folder : folder + ":" + path;
}

} // namespace

std::map<std::string, std::string> cell_environment(const matrix &m, const cell &c,
                                                    const std::string &gpu,
                                                    const std::string &lock_dir) {
  auto changes = cell_changes(m.variables, c.env, gpu);
  // The packages axis is no variable: its value is the folder installed for it, found first.
  if (m.packages)
    changes.erase(m.packages->axis);
  changes[gpu_lock_variable] = lock_dir;
  auto env = environment_with(changes);
  if (const std::string folder = package_folder(m, c); !folder.empty())
    env["PYTHONPATH"] = path_first(folder, env["PYTHONPATH"]);
  return env;
}

std::map<std::string, std::string>
suite_environment_of(const matrix &m, const cell &c,
                     const std::map<std::string, std::string> &suite_env) {
  auto env = suite_env;
  if (const auto it = env.find("PYTHONPATH"); it != env.end())
    if (const std::string folder = package_folder(m, c); !folder.empty())
      it->second = path_first(folder, it->second);
  return env;
}

std::map<std::string, std::string> driver_check_environment(const matrix &m) {
  environment_changes driver;
  if (!m.cells.empty())
    if (auto it = m.cells.front().env.find(var::driver); it != m.cells.front().env.end())
      driver.insert(*it);
  auto changes = cell_changes(m.variables, driver, "");
  if (m.packages)
    changes.erase(m.packages->axis);
  return environment_with(changes);
}

} // namespace cuparity
