// Case ids (suite.group.name) and the globs that select them, shared by the runner and the verdict.
#pragma once

#include <string>

namespace cuparity {

/// True when `id` matches the fnmatch glob `pattern` (or `pattern` names id's suite).
[[nodiscard]] bool case_matches(const std::string &id, const std::string &pattern);

/// The plan's id for "every test of the external suite `suite`" in a cell: "<suite>.*". A suite's
/// tests are known only once it runs, so the plan holds this pair, a suite_end record covers it,
/// and the suite's case records ("<suite>.<classname>.<test>") come under it.
[[nodiscard]] std::string suite_pair_id(const std::string &suite);

/// The suite a plan id names ("simpkg" for "simpkg.*"); "" for a case id.
[[nodiscard]] std::string suite_of_pair_id(const std::string &id);

} // namespace cuparity
