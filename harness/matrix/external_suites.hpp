// [[suite]] and [[program]] tables: other projects' suites and commands, run in every cell.
#pragma once

#include "harness/matrix/matrix_keys.hpp"

namespace cuparity::matrix_detail {

/// Reads every [[suite]], then every [[program]] (program = true), into m.suites. A matrix with
/// either selects no built-in case and has no latency phase, so [matrix] cases, exclude_cases and
/// case_timeout_s and [latency] are refused beside them; names must differ across both. Throws
/// matrix_error at the offending key.
void read_suites(const read_context &ctx, const document_sections &s, matrix &m);

/// suite.root: the folder a suite's processes start in. {matrix_dir} and {bin} are substituted,
/// and {env:NAME} by NAME's value in cuparity's own environment (where a checkout lies differs
/// from host to host: the GPU machine's copy, a developer's clone). A relative folder is the
/// matrix's folder's; it must exist. Throws matrix_error at the value: an unset or empty variable
/// names it, a missing folder names the folder.
void set_suite_root(external_suite &x, const key_value &v);

/// The folder a root key names, as set_suite_root reads it (`what`: "suite", "benchmark").
[[nodiscard]] std::string root_folder(const key_value &v, const std::string &what);

/// A string of a [[suite]], [[program]] or [[benchmark]] (its command's arguments, its
/// environment's values): {bin} and {matrix_dir} substituted now; {out} and `run_time` (the
/// file the runner reads: "{junit}", "{json}") left for the process's start. Throws matrix_error
/// at the value for any other placeholder, naming the known ones.
[[nodiscard]] std::string run_time_text(const key_value &v, std::string written,
                                        const std::string &run_time);

/// An `environment` table (of such an entry, or [latency] python_environment): each key a
/// variable name, each value a string with {bin} and {matrix_dir} substituted and `run_time`'s
/// placeholders left for the process's start. Throws matrix_error at the offending key or value.
[[nodiscard]] std::map<std::string, std::string>
environment_table(const key_value &v, const std::vector<std::string> &run_time);

/// After the cells are expanded: a suite's or program's environment may not set a variable of the
/// cells.
void check_suite_environments(const toml_reader &r, const document_sections &s, const matrix &m);

/// `known` widened to the case ids of m's suites: a glob starting "<suite>." (or the suite's
/// name) names that suite's tests, which exist only once the suite runs.
[[nodiscard]] name_check with_suite_cases(const matrix &m, const name_check &known);

} // namespace cuparity::matrix_detail

namespace cuparity {

/// `cuparity run --suite-root NAME=DIR` (each given once or more, the last one wins): the root of
/// suite NAME, over its `root` key. Returns why one cannot be applied ("--suite-root 'x=/d': no
/// [[suite]] named 'x' in m.toml (its suites: a, b)", a DIR that is no folder), else nullopt.
[[nodiscard]] std::optional<std::string>
apply_suite_roots(matrix &m, const std::vector<std::string> &assignments);

} // namespace cuparity
