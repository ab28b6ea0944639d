// The functional verdict's rules that test_verdict.cpp leaves open, each found by a mutant of
// tests/mutants/functional.mutants that no test killed.
#include "harness/report/summary.hpp"
#include "verdict_records.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;
using namespace cuparity::verdict_test;

TEST_CASE("verdict: a baseline line expecting a failure is stale once its case ends not_supported",
          "[verdict][stale][baseline]") {
  auto m = load("baseline_not_supported");
  const std::vector<json> records{cell_rec("A=0,B=0"), cell_rec("A=0,B=1"),
                                  result("A=0,B=0", "mem.a", outcome::not_supported),
                                  result("A=0,B=1", "mem.b", outcome::not_supported)};
  // Without a baseline, not_supported is a success; a line expecting it is met by it.
  CHECK(compare(m, records).problems.empty());
  CHECK(
      compare(m, records, {{"mem.b", "A=0,B=1", outcome::not_supported, "", 4}}).problems.empty());
  // A line expecting fail no longer describes the case, as an allowance would be stale.
  auto c = compare(m, records,
                   {{"mem.a", "A=0,B=0", outcome::fail, "", 3},
                    {"mem.b", "A=0,B=1", outcome::not_supported, "", 4}});
  CHECK(problems(c) == std::vector<std::string>{
                           "stale_expectation [A=0,B=0] mem.a: baseline line 3 expects fail, but "
                           "the case ended not_supported: update the baseline"});
  CHECK(c.allowed == 0);
  CHECK(verdict_exit_code(c, run_facts{}) == 1);
}
