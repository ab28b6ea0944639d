// The progress file of cuparity's pytest plugin: which test started and ended, line by line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// One test as the plugin saw it (tools/suite/cuparity_pytest.py).
struct suite_test_progress {
  std::string nodeid;
  std::string classname, name; ///< as pytest's JUnit XML names it
  bool ended = false;
  std::string outcome; ///< "passed", "failed" or "skipped" once ended
  double duration_s = 0;
  double started_unix = 0; ///< when it started, seconds since the epoch (0: not said)
  std::string message;     ///< a skip's reason, a failure's last line
  std::string when;        ///< a failure's phase: "setup", "call", "teardown" ("": not said)

  /// A failure outside the test's call (a fixture): what JUnit calls an error.
  [[nodiscard]] bool errored() const {
    return outcome == "failed" && !when.empty() && when != "call";
  }
  /// The message as JUnit would give it: an error's is `failed on setup with "<cause>"`.
  [[nodiscard]] std::string junit_style_message() const {
    return errored() ? "failed on " + when + " with \"" + message + "\"" : message;
  }
};

/// A module pytest could not import, as the plugin named it (CUPARITY_SUITE_CONTINUE_COLLECTION).
struct suite_collect_error {
  std::string nodeid;          ///< "pkg/test_x.py"
  std::string classname, name; ///< as JUnit names the module's error ("", "pkg.test_x")
  std::string message;         ///< its last line, or "missing test dependency 'x' (imported by m)"
};

/// Why the plugin stopped the session early (CUPARITY_SUITE_SAME_FAILURES, _MAX_FAILS).
struct suite_stop {
  std::string reason;  ///< "environment" or "max_fails"
  std::string message; ///< environment: the one message every failure had
  long count = 0;      ///< environment: the tests that failed with it; max_fails: the failures
};

/// What one suite process got through. The file is written one line per event while the tests
/// run, so it survives a process the kernel kills, when the JUnit file is never written.
struct suite_progress {
  std::optional<long> collected;          ///< how many tests the process set out to run
  std::vector<suite_test_progress> tests; ///< in start order
  std::vector<suite_collect_error> collect_errors;
  std::optional<suite_stop> stopped;
  std::map<std::string, std::size_t> by_nodeid;

  /// The test that started and never ended: the one a killed process was running.
  [[nodiscard]] const suite_test_progress *in_flight() const;
  /// The test whose JUnit name is (classname, name), nullptr when none.
  [[nodiscard]] const suite_test_progress *find_junit(const std::string &classname,
                                                      const std::string &name) const;
};

/// The longest progress line read: far above any event's (a node id and a message), so a suite's
/// process cannot make the runner hold a line of any size.
inline constexpr std::size_t suite_progress_line_limit = std::size_t{1} << 20;

/// Reads `path`; a missing file is an empty progress (the process never got to its tests). A
/// torn last line (the process killed mid-write), lines that are no event, lines longer than
/// suite_progress_line_limit or nested deeper than JSON input may be are skipped; what is past
/// max_input_bytes is not read, and what is no regular file (a FIFO the suite made there) is not
/// opened.
[[nodiscard]] suite_progress read_suite_progress(const std::string &path);

/// A descriptor for reading `path` when it is a regular file (opened without blocking, so a FIFO
/// in its place never blocks the runner), else -1. The caller closes it.
[[nodiscard]] int open_regular_file(const std::string &path) noexcept;

} // namespace cuparity
