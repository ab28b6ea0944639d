// The binding differences behind a divergence, as lines for the console and junit.xml.
#pragma once

#include "harness/verdict/compare.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// One line per function: "cuMemGetInfo: cuMemGetInfo_v2 (dlsym) in 'a' -> cuMemGetInfo (proc)
/// in 'b'" (every cell's symbols; "nothing" where a cell did not bind it).
[[nodiscard]] std::vector<std::string> binding_difference_lines(const divergence &d);

} // namespace cuparity
