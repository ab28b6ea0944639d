// Binding differences (behind a divergence, and per variable) as lines for the console and junit.
#pragma once

#include "harness/verdict/compare.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// One line per function bound to other symbols: "cuMemGetInfo: cuMemGetInfo_v2 (dlsym) in 'a' ->
/// cuMemGetInfo (proc) in 'b'" (every cell's; "nothing" where a cell did not bind it), then one
/// line naming the functions bound to the same symbols another way.
[[nodiscard]] std::vector<std::string> binding_difference_lines(const divergence &d);

/// What one variable of a suite or program matrix changed, as console lines: a head line ("X
/// changed the bindings of 3 functions in 2 of 2 pairs of cells that differ in it alone"), then one
/// line per function bound to other symbols, up to `most` ("suite cuMemcpyHtoD: cuMemcpyHtoD_v2
/// (dlsym) in 'a' (unset) -> cuMemcpyHtoD_v2_ptds (dlsym) in 'b' ("1"), 2 pairs"), how many more,
/// then one line naming the functions bound to the same symbols another way.
[[nodiscard]] std::vector<std::string> variable_effect_lines(const variable_effect &e,
                                                             std::size_t most);

} // namespace cuparity
