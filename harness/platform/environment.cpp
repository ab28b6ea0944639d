// Child-process environments built from the inherited one.
#include "harness/platform/environment.hpp"

#include <unistd.h> // environ (_GNU_SOURCE, which g++ defines)

namespace cuparity {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char **e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::map<std::string, std::string> environment_with(const environment_changes &changes) {
  auto env = current_environment();
  for (const auto &[k, v] : changes) {
    if (v)
      env[k] = *v;
    else
      env.erase(k);
  }
  return env;
}

environment_changes cell_changes(const std::vector<std::string> &controlled,
                                 const environment_changes &values, const std::string &gpu) {
  environment_changes changes;
  for (const auto &v : controlled)
    changes[v] = std::nullopt;
  for (const auto &[k, v] : values)
    if (v)
      changes[k] = *v;
  if (!gpu.empty())
    changes["CUDA_VISIBLE_DEVICES"] = gpu;
  return changes;
}

} // namespace cuparity
