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
};

/// What one suite process got through. The file is written one line per event while the tests
/// run, so it survives a process the kernel kills, when the JUnit file is never written.
struct suite_progress {
  std::optional<long> collected;          ///< how many tests the process set out to run
  std::vector<suite_test_progress> tests; ///< in start order
  std::map<std::string, std::size_t> by_nodeid;

  /// The test that started and never ended: the one a killed process was running.
  [[nodiscard]] const suite_test_progress *in_flight() const;
  /// The test whose JUnit name is (classname, name), nullptr when none.
  [[nodiscard]] const suite_test_progress *find_junit(const std::string &classname,
                                                      const std::string &name) const;
};

/// Reads `path`; a missing file is an empty progress (the process never got to its tests). A
/// torn last line (the process killed mid-write) and lines that are no event are skipped.
[[nodiscard]] suite_progress read_suite_progress(const std::string &path);

} // namespace cuparity
