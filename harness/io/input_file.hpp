// Reading a file a user named: a regular file only, bounded in size and JSON depth, errors naming
// it.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace cuparity {

/// Input or output that cannot be used, named in what(): "<file>: <problem>". main() reports it
/// as bad input (exit 2), never as "cannot go on" (exit 3, kept for a driver that cannot be used).
class bad_input_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A file as a message names it: "<what> <path>" ("matrix m.toml"), or the path alone.
[[nodiscard]] std::string named_file(const std::string &path, const std::string &what);

/// The largest input file read whole: results of a 1,000-cell matrix with latency stay far below.
inline constexpr std::size_t max_input_bytes = std::size_t{1} << 30;
/// The deepest JSON nesting accepted. Records nest about six deep; nlohmann's parser and our own
/// walks recurse, and 100,000 levels (about 200 KB) crashed `compare` and `merge` with SIGSEGV.
inline constexpr int max_json_depth = 256;

/// The bytes of `path`, which must be a regular file (a link to one is fine): a directory, FIFO,
/// socket or device is refused before it is opened, so a FIFO never blocks. A gzip file is read
/// as the text inside it (at most `max_bytes` of it either way). Throws
/// bad_input_error "<path>: <problem>" (with `what`, e.g. "--map", in front when given).
[[nodiscard]] std::string read_input_file(const std::string &path, const std::string &what = "",
                                          std::size_t max_bytes = max_input_bytes);

/// Parses `text` as one JSON document, refusing nesting deeper than max_json_depth before the
/// parser sees it, invalid UTF-8, NaN and numbers out of range. Throws bad_input_error
/// "<where>: <problem>".
[[nodiscard]] nlohmann::json parse_json_input(const std::string &text, const std::string &where);

/// read_input_file, then parse_json_input.
[[nodiscard]] nlohmann::json read_json_file(const std::string &path, const std::string &what = "");

/// The nesting depth of the JSON text (brackets outside strings); stops counting past `limit`.
[[nodiscard]] int json_depth(const std::string &text, int limit = max_json_depth);

} // namespace cuparity
