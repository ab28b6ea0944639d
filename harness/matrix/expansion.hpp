// Cells from [axes], [[exclude]] and [[include]] (GitHub Actions semantics), with their ids.
#pragma once

#include "harness/matrix/matrix_keys.hpp"

namespace cuparity::matrix_detail {

/// Fills m.axes, m.variables and m.cells from the file's sections.
void expand_cells(const read_context &ctx, const document_sections &s, matrix &m);

/// Refuses a [matrix] reference naming a variable no cell has, or one that pairs no cell.
void check_reference(const matrix &m);

} // namespace cuparity::matrix_detail
