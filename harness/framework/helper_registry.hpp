// Helper entry points: code a case runs in a second process (the cell's helper server).
#pragma once

#include "harness/driver/driver.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cuparity {

/// A helper gets a driver opened from its own (inherited) environment and its arguments; it
/// returns its exit code (0 = all good) and appends what the case should read to `out`. One
/// helper process serves every request of its cell, so a helper leaves nothing behind: what it
/// opens it closes, and it restores the current context it found.
using helper_fn =
    std::function<int(driver &, const std::vector<std::string> &args, std::string &out)>;

class helper_registry {
public:
  static helper_registry &instance();
  void add(std::string name, helper_fn fn);
  [[nodiscard]] const helper_fn *find(const std::string &name) const;

private:
  std::vector<std::pair<std::string, helper_fn>> m_helpers;
};

struct helper_registrar {
  helper_registrar(std::string name, helper_fn fn) {
    helper_registry::instance().add(std::move(name), std::move(fn));
  }
};

#define CUPARITY_HELPER_CONCAT2(a, b) a##b
#define CUPARITY_HELPER_CONCAT(a, b) CUPARITY_HELPER_CONCAT2(a, b)
/// CUPARITY_HELPER("ipc.open", fn): registers fn under that name (in an OBJECT library only).
#define CUPARITY_HELPER(name, fn)                                                                  \
  static const ::cuparity::helper_registrar CUPARITY_HELPER_CONCAT(helper_registrar_, __LINE__) {  \
    name, fn                                                                                       \
  }

} // namespace cuparity
