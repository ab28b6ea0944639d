// The suite runner's broken-environment rule (harness/run/suite_tests.cpp, identical_failures):
// at least 2, and at least 9 in 10 of the tests that ended (skips aside), failed alike.
#include "harness/run/suite_tests.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;

namespace {

/// `n` tests with this outcome and message, as the main pass recorded them.
void add(std::vector<suite_test> &tests, int n, outcome o, const std::string &message) {
  for (int k = 0; k < n; ++k)
    tests.push_back({.nodeid = "t" + std::to_string(tests.size()),
                     .tries = {{.result = o, .message = message, .process = "p1"}}});
}

std::optional<std::pair<std::string, long>> judge(const std::vector<suite_test> &tests) {
  std::vector<const suite_test *> ptrs;
  for (const auto &t : tests)
    ptrs.push_back(&t);
  return identical_failures(ptrs);
}

const std::string fixture = "fixture 'initialize_from_pytest_config' not found";

} // namespace

TEST_CASE("a few passes beside many identical errors are a broken environment", "[suite]") {
  std::vector<suite_test> tests; // numba-cuda 0.30.4's cudadrv tests under pytest 9, on an H100
  add(tests, 9, outcome::pass, "");
  add(tests, 9, outcome::not_supported, "no multiple GPUs");
  add(tests, 249, outcome::error, fixture);
  const auto found = judge(tests);
  REQUIRE(found);
  CHECK(found->first == fixture);
  CHECK(found->second == 249);
}

TEST_CASE("the share is 9 in 10 of the tests that ended, skips aside", "[suite]") {
  std::vector<suite_test> at;
  add(at, 1, outcome::pass, "");
  add(at, 100, outcome::not_supported, "skipped"); // skips count neither way
  add(at, 9, outcome::fail, "same");
  CHECK(judge(at)); // 9 of 10
  std::vector<suite_test> below = at;
  add(below, 1, outcome::pass, "");
  CHECK_FALSE(judge(below)); // 9 of 11
  std::vector<suite_test> mixed;
  add(mixed, 9, outcome::error, "same");
  add(mixed, 2, outcome::fail, "another");
  CHECK_FALSE(judge(mixed)); // failures, but 9 of 11 alike
}

TEST_CASE("one failure, or failures that differ, are no environment", "[suite]") {
  std::vector<suite_test> one;
  add(one, 1, outcome::error, "same");
  CHECK_FALSE(judge(one));
  std::vector<suite_test> distinct;
  for (int k = 0; k < 30; ++k)
    add(distinct, 1, outcome::fail, "assert " + std::to_string(k) + " == 0");
  CHECK_FALSE(judge(distinct));
  std::vector<suite_test> passing;
  add(passing, 5, outcome::pass, "");
  CHECK_FALSE(judge(passing));
}
