// Shared helpers for the tests: injected environments and settings for the simulated driver.
#pragma once

#include "harness/config/config.hpp"
#include "harness/platform/subprocess.hpp"

#include <map>
#include <string>

namespace cuparity::test {

using vars = std::map<std::string, std::string>;

/// An env_lookup over a fixed map, so tests never depend on the process environment.
inline env_lookup lookup(vars v) {
  return [v = std::move(v)](const std::string &name) -> std::optional<std::string> {
    auto it = v.find(name);
    if (it == v.end())
      return std::nullopt;
    return it->second;
  };
}

/// Settings for the given variables, with NUMBA_CUDA_DRIVER defaulting to the simulated driver
/// and the nvidia backend to the one built beside the tests.
inline settings sim_settings(vars v, const std::string &driver = CUPARITY_SIMDRIVER) {
  v.try_emplace(var::driver, driver);
  v.try_emplace(var::nvidia_backend, CUPARITY_NVIDIA_LIB);
  return read_settings(lookup(std::move(v)), CUPARITY_BIN_DIR);
}

/// Runs the cuparity executable with exactly `env` plus PATH (no inherited binding variables).
/// A run killed at `timeout` has exit code -1.
inline process_result run_cuparity(std::vector<std::string> args, vars env,
                                   std::chrono::seconds timeout = std::chrono::seconds(60)) {
  process_spec spec;
  spec.argv = {CUPARITY_EXE};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  env.try_emplace("PATH", "/usr/bin:/bin");
  spec.env = std::move(env);
  spec.timeout = timeout;
  return run_process(spec);
}

} // namespace cuparity::test
