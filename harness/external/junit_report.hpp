// A JUnit XML report (pytest --junitxml, unittest's XML runners): its tests and their outcomes.
#pragma once

#include <string>
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
};

inline constexpr std::size_t junit_detail_limit = 4096;

struct junit_report {
  std::vector<junit_test> tests; ///< in the file's order
  /// The sum of the <testsuite> elements' `tests` attributes: what the runner says it ran (pytest
  /// counts subtests there too, so it may exceed tests.size()). 0 with no test is a run that
  /// collected nothing (pytest's exit 4: the package did not import).
  long declared_tests = 0;
};

/// Reads the JUnit XML file at `path` (gzip too; a regular file of at most 1 GiB). The root is
/// <testsuites> or <testsuite>; suites may nest. Throws bad_input_error "<path>:<line>: <problem>"
/// for what is not such a report: not well-formed XML, another root, a <testcase> without a name,
/// a time or count that is not a non-negative number.
[[nodiscard]] junit_report read_junit_report(const std::string &path);

/// The same for the text of a report; `where` names it in messages.
[[nodiscard]] junit_report parse_junit_report(const std::string &text, const std::string &where);

} // namespace cuparity
