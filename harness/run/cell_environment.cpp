// The environments of cell and probe processes, from the matrix and the cell.
#include "harness/run/cell_environment.hpp"

#include "harness/config/env_vars.hpp"
#include "harness/platform/environment.hpp"
#include "harness/platform/gpu_lock.hpp"

namespace cuparity {

std::map<std::string, std::string> cell_environment(const matrix &m, const cell &c,
                                                    const std::string &gpu,
                                                    const std::string &lock_dir) {
  auto changes = cell_changes(m.variables, c.env, gpu);
  changes[gpu_lock_variable] = lock_dir;
  return environment_with(changes);
}

std::map<std::string, std::string> driver_check_environment(const matrix &m) {
  environment_changes driver;
  if (!m.cells.empty())
    if (auto it = m.cells.front().env.find(var::driver); it != m.cells.front().env.end())
      driver.insert(*it);
  return environment_with(cell_changes(m.variables, driver, ""));
}

} // namespace cuparity
