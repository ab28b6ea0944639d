// Expectations: reading [[expect]] rules, checking each matches a cell, attaching them to cells.
#pragma once

#include "harness/matrix/matrix_keys.hpp"

#include <vector>

namespace cuparity::matrix_detail {

/// Reads `tables` into m.expectations and points every cell at the rules that match it.
void read_expectations(const read_context &ctx, const std::vector<const toml::table *> &tables,
                       matrix &m);

} // namespace cuparity::matrix_detail
