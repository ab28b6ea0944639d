// The binding differences behind a divergence, as lines for the console and junit.xml.
#pragma once

#include "harness/verdict/compare.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// One line per function bound to other symbols: "cuMemGetInfo: cuMemGetInfo_v2 (dlsym) in 'a' ->
/// cuMemGetInfo (proc) in 'b'" (every cell's; "nothing" where a cell did not bind it), then one
/// line naming the functions bound to the same symbols another way.
[[nodiscard]] std::vector<std::string> binding_difference_lines(const divergence &d);

} // namespace cuparity
