// What each process of a captured map bound, against the whole driver API cuparity was built from.
#pragma once

#include "harness/capture/captured_map.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cuparity {

/// One process image's bound functions, against the driver API (harness/driver/driver_api.hpp).
struct api_coverage {
  std::size_t functions = 0; ///< distinct functions it got a pointer for
  /// The names it bound or asked for (a request the driver answered with no pointer too) that
  /// no header of the table declares, sorted: the audit can only call them "unknown".
  std::vector<std::string> undeclared;
};

/// Per {pid, image} of `m`'s processes (a process that bound nothing has 0 functions).
[[nodiscard]] std::map<std::pair<long, int>, api_coverage> api_coverage_of(const captured_map &m);

/// "13.0" for 13000: the newest headers the table was generated from, as CUDA names them.
[[nodiscard]] std::string api_headers_name();

} // namespace cuparity
