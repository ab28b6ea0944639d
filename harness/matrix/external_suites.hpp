// [[suite]] and [[program]] tables: other projects' suites and commands, run in every cell.
#pragma once

#include "harness/matrix/matrix_keys.hpp"

namespace cuparity::matrix_detail {

/// Reads every [[suite]], then every [[program]] (program = true), into m.suites. A matrix with
/// either selects no built-in case and has no latency phase, so [matrix] cases, exclude_cases and
/// case_timeout_s and [latency] are refused beside them; names must differ across both. Throws
/// matrix_error at the offending key.
void read_suites(const read_context &ctx, const document_sections &s, matrix &m);

/// After the cells are expanded: a suite's or program's environment may not set a variable of the
/// cells.
void check_suite_environments(const toml_reader &r, const document_sections &s, const matrix &m);

/// `known` widened to the case ids of m's suites: a glob starting "<suite>." (or the suite's
/// name) names that suite's tests, which exist only once the suite runs.
[[nodiscard]] name_check with_suite_cases(const matrix &m, const name_check &known);

} // namespace cuparity::matrix_detail
