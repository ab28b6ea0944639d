// Python 3's int(str) on an environment value: what Numba's _readenv(name, int, default) accepts.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace cuparity {

/// Python 3.11+ refuses to convert a decimal string of more digits than this (its default
/// sys.get_int_max_str_digits(); PYTHONINTMAXSTRDIGITS can change it, cuparity does not read it).
inline constexpr std::size_t python_int_max_str_digits = 4300;

/// Python 3's int() on `text` as os.environ holds it (UTF-8): surrounding whitespace (Unicode
/// whitespace too), an optional sign, decimal digits (any Unicode decimal digit, "١" is 1),
/// single underscores between digits, at most python_int_max_str_digits digits. Anything else
/// ("", "0x10", "1e3", "1.0", "- 1", invalid UTF-8) is not an integer. Python's ints have no
/// bound: one beyond long long is still an integer, given as LLONG_MAX or LLONG_MIN (the
/// variables only ask whether it is 0, and its sign stays right).
[[nodiscard]] std::optional<long long> parse_python_int(std::string_view text);

} // namespace cuparity
