// dlopen of the first library that opens from a list of candidates, with every failure's reason.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

struct library_candidates_result {
  void *handle = nullptr; ///< null when no candidate opened
  std::string opened;     ///< the candidate that opened
  std::string tried;      ///< one "\n  <candidate>: <dlerror>" per candidate that failed
};

/// dlopen(RTLD_NOW | RTLD_LOCAL) of each candidate in order; the first that opens wins. LOCAL:
/// two drivers (a simulated and a real one in tests) or two toolkit libraries must not see each
/// other's symbols through the global namespace.
[[nodiscard]] library_candidates_result open_first_library(const std::vector<std::string> &names);

} // namespace cuparity
