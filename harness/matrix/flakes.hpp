// A suite's flakes file: glob and reason per line, the tests excused for changing outcome.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// Reads a flakes file: one entry per line, `<glob> <reason>`, blank lines and lines starting
/// with '#' skipped. Every glob must start with "<suite>." (it matches that suite's case ids) and
/// every entry needs a reason. Throws matrix_error "path:line:column: ..." otherwise, or when the
/// file cannot be read.
[[nodiscard]] std::vector<flake_rule> read_flakes(const std::string &path,
                                                  const std::string &suite);

/// The first rule whose glob matches `case_id`, nullptr when none does.
[[nodiscard]] const flake_rule *find_flake(const std::vector<flake_rule> &rules,
                                           const std::string &case_id);

} // namespace cuparity
