// Williams designs: block orders in which every series visits every position equally.
#include "harness/probes/series_order.hpp"

#include <algorithm>

namespace cuparity {

std::vector<std::vector<std::size_t>> balanced_orders(std::size_t n) {
  if (n == 0)
    return {};
  // The first row alternates from both ends: 0, 1, n-1, 2, n-2, ...; row i adds i to each.
  std::vector<std::size_t> first;
  for (std::size_t lo = 1, hi = n - 1, j = 0; first.size() < n; ++j) {
    if (j == 0)
      first.push_back(0);
    else if (j % 2 == 1)
      first.push_back(lo++);
    else
      first.push_back(hi--);
  }
  std::vector<std::vector<std::size_t>> rows;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::size_t> row;
    for (std::size_t x : first)
      row.push_back((x + i) % n);
    rows.push_back(row);
    if (n % 2 == 1 && n > 1) { // odd n: one square is not balanced for neighbours; its mirror is
      std::reverse(row.begin(), row.end());
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

} // namespace cuparity
