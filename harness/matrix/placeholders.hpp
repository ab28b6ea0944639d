// Placeholders in matrix values: {bin} (the executable's directory), {matrix_dir}.
#pragma once

#include <string>

namespace cuparity::matrix_detail {

/// `s` with every {bin} and {matrix_dir} replaced.
[[nodiscard]] std::string substitute_placeholders(std::string s, const std::string &matrix_dir);

} // namespace cuparity::matrix_detail
