// Registry of helper-process entry points.
#include "harness/framework/helper_registry.hpp"

#include <cstdio>
#include <cstdlib>

namespace cuparity {

helper_registry &helper_registry::instance() {
  static helper_registry r;
  return r;
}

void helper_registry::add(std::string name, helper_fn fn) {
  if (find(name)) {
    std::fprintf(stderr, "cuparity: helper '%s' is registered twice\n", name.c_str());
    std::abort();
  }
  m_helpers.emplace_back(std::move(name), std::move(fn));
}

const helper_fn *helper_registry::find(const std::string &name) const {
  for (const auto &[n, f] : m_helpers)
    if (n == name)
      return &f;
  return nullptr;
}

} // namespace cuparity
