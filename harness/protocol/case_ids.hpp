// Case ids (suite.group.name) and the globs that select them, shared by the runner and the verdict.
#pragma once

#include <string>

namespace cuparity {

/// True when `id` matches the fnmatch glob `pattern` (or `pattern` names id's suite).
[[nodiscard]] bool case_matches(const std::string &id, const std::string &pattern);

} // namespace cuparity
