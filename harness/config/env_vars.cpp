// Numba-compatible reading of integer environment variables.
#include "harness/config/env_vars.hpp"

#include <cstdlib>

namespace cuparity {

const std::vector<std::string> &binding_variables() {
  static const std::vector<std::string> vars{
      var::use_nvidia_binding, var::numba_ptds,     var::cuda_python_ptds, var::driver,
      var::include_path,       var::nvidia_backend, var::binding_map};
  return vars;
}

env_lookup process_environment() {
  return [](const std::string &name) -> std::optional<std::string> {
    if (const char *v = std::getenv(name.c_str()))
      return std::string(v);
    return std::nullopt;
  };
}

long long read_int_variable(const env_lookup &env, const std::string &name, long long fallback,
                            std::vector<std::string> &warnings) {
  auto raw = env(name);
  if (!raw)
    return fallback;
  if (auto v = parse_python_int(*raw))
    return *v;
  warnings.push_back(name + "='" + *raw + "' is not an integer; using the default " +
                     std::to_string(fallback) + " instead");
  return fallback;
}

} // namespace cuparity
