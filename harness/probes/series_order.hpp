// The order a probe's series take their blocks in: a Williams design, balanced by position.
#pragma once

#include <cstddef>
#include <vector>

namespace cuparity {

/// One cycle of block orders over `n` series (indices 0..n-1): the rows of a Williams design. For
/// even n, n rows; for odd n, each row is followed by its reverse (2n rows). Over one cycle every
/// series takes every position equally often, and every series follows every other equally often,
/// so neither a position (first block after a switch, last before one) nor a neighbour favours a
/// series. On the H200 the fixed F D O / O D F order kept `direct` in the middle and made two
/// series calling one address read 0.8-1 % apart.
[[nodiscard]] std::vector<std::vector<std::size_t>> balanced_orders(std::size_t n);

} // namespace cuparity
