// Text checks for matrix strings: control characters, and strings shown safely in messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cuparity::matrix_detail {

/// The byte offset of the first control character in `s` (U+0000-U+001F, U+007F-U+009F), if
/// any: what a label or an id must not hold (a newline in one breaks every line-based file).
[[nodiscard]] std::optional<std::size_t> first_control(std::string_view s);

/// `s` with control characters written as escapes (\n, \t, \u0000, ...): printable text.
[[nodiscard]] std::string escape_controls(std::string_view s);

/// Why `name` cannot be one path component of its own (empty, ".", "..", a '/', a control
/// character, longer than `max_bytes`), or std::nullopt when it can.
[[nodiscard]] std::optional<std::string> unsafe_component(std::string_view name,
                                                          std::size_t max_bytes);

/// `s` as a message quotes it: escaped, in single quotes, cut after `max_chars` bytes with the
/// full length said, so a 64 KiB value makes a readable message.
[[nodiscard]] std::string in_quotes(std::string_view s, std::size_t max_chars = 80);

} // namespace cuparity::matrix_detail
