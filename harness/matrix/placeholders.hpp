// Placeholders in matrix values: {bin} (the executable's directory), {matrix_dir}.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cuparity::matrix_detail {

/// `s` with every {bin} and {matrix_dir} replaced.
[[nodiscard]] std::string substitute_placeholders(std::string s, const std::string &matrix_dir);

/// The first "{name}" in `s` (a letter or '_', then letters, digits, '_', '-') that is no
/// placeholder: a typo like {matrix-dir} or {bni}, or a shell-style ${HOME}, which nothing would
/// expand.
[[nodiscard]] std::optional<std::string> unknown_placeholder(std::string_view s);

} // namespace cuparity::matrix_detail
