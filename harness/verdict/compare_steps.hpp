// The steps of compare_results, in the order it runs them; each adds to one comparison.
#pragma once

#include "harness/verdict/compare.hpp"
#include "harness/verdict/record_index.hpp"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuparity::verdict {

/// What the outcome step found out about the expectations, for the stale and equivalence steps.
struct expectation_use {
  std::set<const allowance *> applicable; ///< allowances matching some recorded (cell, case)
  std::set<const allowance *> used;       ///< allowances that excused some recorded outcome
  std::set<case_key> excused;             ///< accepted pairs: left out of the equivalence
  /// Per baseline line: the outcome of the recorded pair it names (nullopt: none recorded).
  std::vector<std::optional<outcome>> baseline_seen;
};

/// Semantic groups from the configuration each cell's process reported, and with a reference
/// rule also the cell's values of the reference variables.
void assign_groups(const record_index &index, const cell_lookup &cells,
                   const std::optional<reference_rule> &reference, comparison &out);

/// A cell that never produced a cell record is a problem of its own.
void report_cell_errors(const record_index &index, comparison &out);

/// What each suite's end says of its cell (suite_ends.cpp), for a matrix of suites or programs:
/// an `environment` problem per (cell, suite) whose tests all failed with one message (its cases
/// were set aside: counted, not judged), a `failure_budget` problem per (cell, suite) its budget
/// stopped, a `collection` problem per cell that collected fewer tests of a suite than another
/// cell did (or none); and out.suites, the counts per (cell, suite).
void report_suite_ends(const matrix &m, const record_index &index, comparison &out);

/// Every expectation of a started cell, checked against the configuration it reported.
void check_configurations(const record_index &index, const cell_lookup &cells, comparison &out);

/// What one expectation says that `config` contradicts, one message per mismatch.
[[nodiscard]] std::vector<std::string> configuration_mismatches(const expectation &x,
                                                                const nlohmann::json &config);

/// Counts every outcome; a non-pass needs an allowance or a baseline line, and a pass that one of
/// them expected to fail is reported too.
/// A flaky outcome (an external suite's test that changed between tries) is excused by its
/// suite's flakes file, else a problem of kind "flaky"; it is never compared inside a group.
[[nodiscard]] expectation_use judge_outcomes(const record_index &index, const cell_lookup &cells,
                                             const std::vector<baseline_entry> &baseline,
                                             const std::vector<external_suite> &suites,
                                             comparison &out);

/// An allowance that matched cases but excused none of them.
void report_stale_allowances(const matrix &m, const expectation_use &use, comparison &out);

/// A baseline line naming a cell or a case that does not exist.
void report_stale_baseline(const std::vector<baseline_entry> &baseline, const expectation_use &use,
                           const cell_lookup &cells,
                           const std::function<bool(const std::string &)> &known_case,
                           comparison &out);

/// Inside each semantic group, the outcome and every observation of a case must agree.
void compare_groups(const record_index &index, const std::set<case_key> &excused, comparison &out);

/// Beside each divergence among cells whose external suites were captured: the functions whose
/// bound symbols differ between those cells.
void attach_binding_differences(const record_index &index, comparison &out);

/// A matrix variable that changed nothing (noop_variables.cpp): every pair of cells that differ in
/// it alone recorded the same evidence (a suite's or program's cells: the same bound symbols; the
/// built-in cases' cells: the same effective configuration) and ended every case alike. A problem
/// of kind "no_op_configuration" per such variable, naming where it was written and the known
/// variable closest to it, unless [matrix] inert declares it. A matrix of suites or programs also
/// gets out.variable_effects.
void report_noop_variables(const matrix &m, const record_index &index, comparison &out);

/// A matrix of suites or programs in which no case ended otherwise than not_supported (every
/// program exited its skip_exit_code, every test skipped): one problem of kind "nothing_tested"
/// (nothing_tested.cpp). A run that looked at nothing is never equivalent.
void report_nothing_tested(const matrix &m, const record_index &index, comparison &out);

/// Whether cells `a` and `b` differ in `var` and in nothing else.
[[nodiscard]] bool differ_only_in(const cell &a, const cell &b, const std::string &var);

/// "cuMemGetInfo_v2 (dlsym)" -> "cuMemGetInfo_v2": the symbols without how they were bound.
[[nodiscard]] std::set<std::string> without_sources(const std::set<std::string> &bindings);

/// Per variable of a matrix of suites or programs (variable_effects.cpp): every pair of cells that
/// differ in it alone, each suite or program that ran in both, the functions bound otherwise and
/// whether a case ended otherwise.
[[nodiscard]] std::vector<variable_effect> variable_effects_of(const matrix &m,
                                                               const record_index &index);

/// "fail/timeout": outcomes as the messages show them.
[[nodiscard]] std::string join_outcomes(const std::vector<outcome> &outcomes);

} // namespace cuparity::verdict
