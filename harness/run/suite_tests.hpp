// A suite's tests in one cell: their tries, their case records, and the rules over them all.
#pragma once

#include "harness/external/suite_process.hpp"
#include "harness/protocol/outcome.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// One run of a test, in one process.
struct test_try {
  outcome result = outcome::error;
  std::string message;
  double time_s = 0;
  std::string process; ///< the tag of the process that ran it ("p1", "b2", "a1")
};

/// A test of the suite (or a module that could not be collected) and every try of it.
struct suite_test {
  std::string nodeid, classname, name, case_id;
  std::vector<test_try> tries;
  bool recorded = false;
  bool collection_error = false; ///< a module pytest could not import: one error, never re-run

  [[nodiscard]] const test_try &first() const { return tries.front(); }
  /// Whether every try so far had the first one's outcome.
  [[nodiscard]] bool unchanged() const;
};

/// A test as one process reported it: from its JUnit file or, when it has none, its progress.
struct reported_try {
  std::string nodeid, classname, name;
  test_try t;
};

/// The tests `p` ran to their end (not its collection errors), each with its try tagged `tag`: its
/// JUnit file's, else (a process killed before writing one) the tests its progress shows ended.
[[nodiscard]] std::vector<reported_try> reported_tries(const suite_process_result &p,
                                                       const std::string &tag);

/// The try of the test `p` died in (a crash, or a timeout when it was killed at its deadline).
[[nodiscard]] test_try in_flight_try(const suite_process_result &p, const std::string &tag);

/// The case record of `t` in `cell`: its first outcome, or `flaky` with every outcome when one
/// changed (order-dependent when it changed only in a process of its own), with its tries.
[[nodiscard]] nlohmann::json suite_case_record(const suite_test &t, const std::string &cell);

/// deqp-runner's "the tests fail with one message" (issue 49): of the main pass's tests that ended
/// (`tests`, collection errors aside) and did not skip, at least 2 and at least 90 % failed or
/// errored with one identical message. {"message", "count"}, else nullopt. A share, not every
/// test: a suite's few tests that do not use the broken fixture still pass (numba-cuda 0.30.4's
/// driver tests under pytest 9 on an H100: 9 passes beside 249 identical setup errors).
[[nodiscard]] std::optional<std::pair<std::string, long>>
identical_failures(const std::vector<const suite_test *> &tests);

} // namespace cuparity
