// A JUnit XML report (pytest --junitxml, unittest's XML runners): its tests and their outcomes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cuparity {

/// What a <testcase> says happened: no child element is a pass; <failure>, <error> and <skipped>
/// the others. A testcase with several (pytest writes both <failure> and <error> when a test fails
/// and its teardown errs too) takes the gravest: errored, then failed, then skipped.
enum class junit_outcome { passed, failed, errored, skipped };

[[nodiscard]] const char *to_string(junit_outcome o) noexcept;

struct junit_test {
  std::string classname; ///< "test_nvvm_driver.TestNvvmDriver" (pytest: module path and class)
  std::string name;      ///< "test_nvvm_support"; pytest's parametrised ids keep their brackets
  junit_outcome outcome = junit_outcome::passed;
  /// The message attribute of the element behind the outcome (a skip's reason), else "".
  std::string message;
  /// The element's text (a traceback), at most junit_detail_limit bytes, cut at a line's end.
  std::string detail;
  double time_s = 0; ///< the testcase's time attribute; 0 when it has none
  int line = 0;      ///< the line of the <testcase> in the file, for messages
  /// When the file holds this id (classname, name) more than once: every <testcase> of it, in
  /// the file's order (line, outcome); empty when it is there once. One run of a test is one
  /// result, so the entries are not tries of a flaky test: the gravest outcome stands for them
  /// (and its message, detail and time), the others are only named.
  std::vector<std::pair<int, junit_outcome>> duplicates;
};

/// Bounds on what the file may hold, which a suite's process writes (untrusted input): a
/// message or text kept is cut at junit_detail_limit bytes, a name or classname longer than
/// junit_name_limit bytes and <testsuite> nesting deeper than junit_depth_limit are refused.
inline constexpr std::size_t junit_detail_limit = 4096;
inline constexpr std::size_t junit_name_limit = 4096;
inline constexpr int junit_depth_limit = 256;

struct junit_report {
  std::vector<junit_test> tests; ///< in the file's order
  /// The sum of the <testsuite> elements' `tests` attributes: what the runner says it ran (pytest
  /// counts subtests there too, so it may exceed tests.size()). 0 with no test is a run that
  /// collected nothing (pytest's exit 4: the package did not import).
  long declared_tests = 0;
};

/// Reads the JUnit XML file at `path` (gzip too; a regular file of at most 1 GiB). The root is
/// <testsuites> or <testsuite>; suites may nest, up to junit_depth_limit levels. A test id
/// (classname, name) found more than once is one test (junit_test::duplicates). Throws
/// bad_input_error "<path>:<line>: <problem>" for what is not such a report: not well-formed XML,
/// another root, suites nested deeper than the limit, a <testcase> without a name or with one
/// over junit_name_limit bytes, a time or count that is not a non-negative number.
[[nodiscard]] junit_report read_junit_report(const std::string &path);

/// The same for the text of a report; `where` names it in messages.
[[nodiscard]] junit_report parse_junit_report(const std::string &text, const std::string &where);

} // namespace cuparity
