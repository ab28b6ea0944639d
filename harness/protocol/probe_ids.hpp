// Probe names the protocol itself defines, and the globs that select them.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

/// What a fresh cell process pays before its first useful call (cuInit and the primary context):
/// a probe for selection and in the records, measured by the process's start rather than by a
/// registered, timed loop.
inline constexpr const char *startup_probe = "cell.startup";

/// Whether probe globs select cell.startup: none given (every probe) or one that matches it.
[[nodiscard]] bool selects_startup(const std::vector<std::string> &globs);

/// Whether one probe glob matches cell.startup.
[[nodiscard]] bool glob_matches_startup(const std::string &glob);

} // namespace cuparity
