// The functional verdict from hand-made records: one test per rule of compare_results.
#include "harness/report/summary.hpp"
#include "verdict_records.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;
using namespace cuparity::verdict_test;

TEST_CASE("verdict: a case that ends differently inside a group diverges on its outcome",
          "[verdict][equivalence]") {
  auto m = load("outcome_divergence");
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"), cell_rec("A=1,B=0"),
                       result("A=0,B=0", "mem.a", outcome::pass),
                       result("A=0,B=1", "mem.a", outcome::pass),
                       result("A=1,B=0", "mem.a", outcome::not_supported)});
  REQUIRE(c.divergences.size() == 1);
  const auto &d = c.divergences[0];
  CHECK(d.group == legacy_group);
  CHECK(d.case_id == "mem.a");
  CHECK(d.key == "outcome");
  CHECK(d.values == std::map<std::string, json>{
                        {"A=0,B=0", "pass"}, {"A=0,B=1", "pass"}, {"A=1,B=0", "not_supported"}});
  CHECK(c.problems.empty()); // not_supported is no failure: the divergence alone fails the run
}

TEST_CASE("verdict: an observation that differs inside a group diverges; absent reads null",
          "[verdict][equivalence]") {
  auto m = load("observation_divergence");
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"), cell_rec("A=1,B=0"),
                       result("A=0,B=0", "mem.a", outcome::pass, {{"n", 1}, {"same", "x"}}),
                       result("A=0,B=1", "mem.a", outcome::pass, {{"n", 2}, {"same", "x"}}),
                       result("A=1,B=0", "mem.a", outcome::pass, {{"same", "x"}})});
  REQUIRE(c.divergences.size() == 1);
  const auto &d = c.divergences[0];
  CHECK(d.key == "observations.n");
  CHECK(d.values ==
        std::map<std::string, json>{{"A=0,B=0", 1}, {"A=0,B=1", 2}, {"A=1,B=0", nullptr}});
  CHECK(c.problems.empty());
}

TEST_CASE("verdict: cells in different groups may differ; binding and fallback do not split",
          "[verdict][groups]") {
  auto m = load("groups");
  auto c =
      compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1", config({{"stream0", "per-thread"}})),
                  cell_rec("A=1,B=0", config({{"driver_path", "/other"}})),
                  cell_rec("A=1,B=1", config({{"binding", "nvidia"},
                                              {"fallback", true},
                                              {"warnings", json::array({"w"})}})),
                  result("A=0,B=0", "mem.a", outcome::pass, {{"n", 1}}),
                  result("A=0,B=1", "mem.a", outcome::not_supported, {{"n", 2}}),
                  result("A=1,B=0", "mem.a", outcome::not_supported, {{"n", 3}}),
                  result("A=1,B=1", "mem.a", outcome::pass, {{"n", 1}})});
  CHECK(c.divergences.empty());
  REQUIRE(c.groups.size() == 3);
  CHECK(c.groups.at(legacy_group) == std::vector<std::string>{"A=0,B=0", "A=1,B=1"});
  CHECK(c.cell_group.at("A=0,B=1") == "stream0=per-thread driver=/d include=/i");
  CHECK(c.cell_group.at("A=1,B=0") == "stream0=legacy driver=/other include=/i");
  CHECK(semantic_key(json::object()) == "stream0=? driver=? include=?");
}

TEST_CASE("verdict: configuration cases are compared on their outcome, not their observations",
          "[verdict][equivalence][configuration]") {
  CHECK(is_configuration_case("binding.config.stream0"));
  CHECK_FALSE(is_configuration_case("binding.configure"));
  CHECK_FALSE(is_configuration_case("mem.binding.config.x"));
  auto m = load("configuration_cases");
  const std::vector<json> agree{
      cell_rec("A=0,B=0"), cell_rec("A=1,B=1"),
      result("A=0,B=0", "binding.config.names", outcome::pass, {{"binding", "internal"}}),
      result("A=1,B=1", "binding.config.names", outcome::pass, {{"binding", "nvidia"}})};
  CHECK(compare(m, agree).divergences.empty());
  auto disagree = agree;
  disagree.push_back(result("A=1,B=1", "binding.config.names", outcome::not_supported));
  auto c = compare(m, disagree);
  REQUIRE(c.divergences.size() == 1);
  CHECK(c.divergences[0].key == "outcome");
}

TEST_CASE("verdict: a cell's configuration is checked against the expectations matching it",
          "[verdict][configuration]") {
  auto m = load("configuration_expectations", R"(
[[expect]]
when = { A = "1" }
binding = "nvidia"
stream0 = "per-thread"
fallback = true
warnings = ["Falling back", "libx"]
warning_count = 2
)");
  const json good =
      config({{"binding", "nvidia"},
              {"stream0", "per-thread"},
              {"fallback", true},
              {"warnings", json::array({"libx missing", "Falling back to internal"})}});
  SECTION("a configuration that matches raises nothing") {
    auto c = compare(m, {cell_rec("A=1,B=0", good), cell_rec("A=1,B=1", good)});
    CHECK(c.problems.empty());
  }
  SECTION("each mismatch is a problem of the cell, naming the expectation") {
    auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"),
                         cell_rec("A=1,B=1", config({{"warnings", json::array({"libx"})}}))});
    const std::string at = " (expected by " + m.expectations[0].where.text() + ")";
    CHECK(kinds(c) == std::vector<std::string>(11, "expectation"));
    CHECK(messages(c) ==
          std::vector<std::string>{
              // A=0 cells match no expectation; A=1,B=0 has no warnings at all
              "binding is internal, expected nvidia" + at,
              "stream 0 is legacy, expected per-thread" + at,
              "fallback is false, expected true" + at, "no warning contains 'Falling back'" + at,
              "no warning contains 'libx'" + at, "0 warnings, expected 2" + at,
              // A=1,B=1 has the 'libx' warning only
              "binding is internal, expected nvidia" + at,
              "stream 0 is legacy, expected per-thread" + at,
              "fallback is false, expected true" + at, "no warning contains 'Falling back'" + at,
              "1 warnings, expected 2" + at});
    REQUIRE(c.problems.size() == 11);
    CHECK(c.problems[0].cell == "A=1,B=0");
    CHECK(c.problems[0].case_id.empty());
    CHECK(c.problems[6].cell == "A=1,B=1");
  }
  SECTION("an absent setting reads '?'") {
    auto c = compare(m, {cell_rec("A=1,B=0", json::object())});
    REQUIRE(c.problems.size() >= 2);
    CHECK(messages(c)[0].rfind("binding is ?, expected nvidia", 0) == 0);
    CHECK(messages(c)[1].rfind("stream 0 is ?, expected per-thread", 0) == 0);
  }
}

TEST_CASE("verdict: a non-pass an allowance names is excused, counted and left out of the "
          "equivalence",
          "[verdict][outcomes]") {
  auto m = load("allowance", allow_mem(R"("fail", "timeout")"));
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"), cell_rec("A=1,B=1"),
                       result("A=0,B=0", "mem.a", outcome::pass, {{"n", 1}}),
                       result("A=1,B=0", "mem.a", outcome::fail, {{"n", 2}}),
                       result("A=1,B=1", "mem.b", outcome::timeout)});
  CHECK(c.problems.empty());
  CHECK(c.divergences.empty());
  CHECK(c.allowed == 2);
  CHECK(c.results == 3);
  CHECK(c.outcome_counts ==
        std::map<std::string, std::size_t>{{"pass", 1}, {"fail", 1}, {"timeout", 1}});
}

TEST_CASE("verdict: an allowance matches by any of its globs; accepting not_supported is no "
          "allowed non-pass",
          "[verdict][outcomes]") {
  auto m = load("allowance_globs", R"(
[[expect]]
when = { A = "1" }
[[expect.allow]]
cases = ["stream.*", "mem.a"]
outcomes = ["fail", "not_supported"]
reason = "known"
)");
  auto c = compare(
      m, {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"), result("A=0,B=0", "mem.a", outcome::pass),
          result("A=1,B=0", "mem.a", outcome::fail), result("A=0,B=0", "stream.s", outcome::pass),
          result("A=1,B=0", "stream.s", outcome::not_supported)});
  CHECK(c.problems.empty());
  CHECK(c.divergences.empty()); // both accepted pairs are left out of the equivalence
  CHECK(c.allowed == 1);        // not_supported is a success: accepted, but no non-pass
}

TEST_CASE("verdict: a non-pass nothing accepts is a failure, saying what was expected",
          "[verdict][outcomes]") {
  auto m = load("failure", allow_mem(R"("timeout")"));
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"),
                       result("A=0,B=0", "mem.a", outcome::crash, {}, "signal 11"),
                       result("A=0,B=0", "mem.b", outcome::not_supported),
                       result("A=1,B=0", "mem.a", outcome::fail, {}, "wrong"),
                       result("A=1,B=0", "mem.b", outcome::timeout)});
  CHECK(problems(c) ==
        std::vector<std::string>{"failure [A=0,B=0] mem.a: crash: signal 11",
                                 "failure [A=1,B=0] mem.a: fail: wrong (expected timeout)"});
  CHECK(c.allowed == 1);
}

TEST_CASE("verdict: a baseline line excuses its (cell, case); the last line for a pair counts",
          "[verdict][outcomes][baseline]") {
  auto m = load("baseline");
  const std::vector<json> records{cell_rec("A=0,B=0"), cell_rec("A=0,B=1"),
                                  result("A=0,B=0", "mem.a", outcome::fail),
                                  result("A=0,B=1", "mem.a", outcome::crash, {}, "boom")};
  auto c = compare(m, records,
                   {{"mem.a", "A=0,B=0", outcome::crash, "", 1},
                    {"mem.a", "A=0,B=0", outcome::fail, "", 2},
                    {"mem.a", "A=0,B=1", outcome::timeout, "", 3}});
  CHECK(c.allowed == 1);
  CHECK(problems(c) ==
        std::vector<std::string>{"failure [A=0,B=1] mem.a: crash: boom (expected timeout)"});
  CHECK(c.divergences.empty()); // the excused pair is not compared with the crash
}

TEST_CASE("verdict: a pass where an allowance or a baseline line expects a non-pass is reported",
          "[verdict][outcomes][baseline]") {
  auto m = load("unexpected_pass", allow_mem(R"("fail")"));
  auto c = compare(
      m,
      {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"), result("A=0,B=0", "mem.a", outcome::pass),
       result("A=1,B=0", "mem.a", outcome::pass), result("A=1,B=0", "mem.c", outcome::fail)},
      {{"mem.a", "A=0,B=0", outcome::timeout, "", 1}});
  CHECK(problems(c) ==
        std::vector<std::string>{
            "unexpected_pass [A=0,B=0] mem.a: passed, but timeout is expected: update the matrix "
            "or baseline",
            "unexpected_pass [A=1,B=0] mem.a: passed, but fail is expected: update the matrix or "
            "baseline"});
}

TEST_CASE("verdict: an allowance that matched cases but excused none is stale",
          "[verdict][stale]") {
  auto m = load("stale_allowance", R"(
[[expect]]
when = { A = "1" }
[[expect.allow]]
cases = ["mem.*"]
outcomes = ["fail"]
reason = "issue 7"
[[expect.allow]]
cases = ["stream.*"]
outcomes = ["crash"]
reason = "never ran"
[[expect.allow]]
cases = ["mem.b"]
outcomes = ["timeout"]
reason = "used"
)");
  auto c = compare(m, {cell_rec("A=1,B=0"), result("A=1,B=0", "mem.a", outcome::not_supported),
                       result("A=1,B=0", "mem.b", outcome::timeout)});
  // The mem.* allowance matched mem.a and mem.b and excused neither; the stream.* one matched
  // no recorded case (not stale: another selection may run it); mem.b's excused its case.
  CHECK(problems(c) == std::vector<std::string>{
                           "stale_expectation [] : " + m.expectations[0].allow[0].where.text() +
                           ": allows fail but no matching case ended so (issue 7)"});
  CHECK(c.allowed == 1);
}

TEST_CASE("verdict: a baseline line naming an unknown cell or case is stale",
          "[verdict][stale][baseline]") {
  auto m = load("stale_baseline");
  auto known = [](const std::string &id) { return id.rfind("gone.", 0) != 0; };
  auto c = compare(m, {cell_rec("A=0,B=0"), result("A=0,B=0", "mem.a", outcome::fail)},
                   {{"mem.a", "A=0,B=0", outcome::fail, "", 3},
                    {"mem.a", "A=9,B=9", outcome::fail, "", 4},
                    {"gone.case", "A=0,B=0", outcome::crash, "", 5},
                    {"mem.z", "A=0,B=1", outcome::crash, "", 6}},
                   known);
  // Line 3 is used; line 6 names a known cell and case that this run did not record.
  CHECK(problems(c) ==
        std::vector<std::string>{
            "stale_expectation [A=9,B=9] mem.a: baseline line 4 names a cell that does not exist",
            "stale_expectation [A=0,B=0] gone.case: baseline line 5 names a case that does not "
            "exist"});
}

TEST_CASE("verdict: a cell that never started is a problem; one that died later is not twice",
          "[verdict][cells]") {
  auto m = load("cell_error");
  auto c = compare(
      m, {cell_error("A=0,B=0", "spawn"), cell_rec("A=0,B=1"), cell_error("A=0,B=1", "died")});
  CHECK(problems(c) == std::vector<std::string>{"cell_error [A=0,B=0] : A=0,B=0 did not start"});
  CHECK_FALSE(c.environment_problem);
  CHECK(c.groups.size() == 1);
}

TEST_CASE("verdict: an environment problem only when every cell failed to open the driver",
          "[verdict][cells]") {
  auto m = load("environment");
  CHECK(compare(m, {cell_error("A=0,B=0", "driver"), cell_error("A=0,B=1", "driver")})
            .environment_problem);
  CHECK_FALSE(compare(m, {cell_error("A=0,B=0", "driver"), cell_error("A=0,B=1", "spawn")})
                  .environment_problem);
  CHECK_FALSE(
      compare(m, {cell_error("A=0,B=0", "driver"), cell_rec("A=0,B=1")}).environment_problem);
  CHECK_FALSE(
      compare(m, {cell_rec("A=0,B=1"), cell_error("A=0,B=0", "driver")}).environment_problem);
  CHECK_FALSE(compare(m, {}).environment_problem);
}

TEST_CASE("verdict: the latest record of a cell and of a (cell, case) wins", "[verdict][records]") {
  auto m = load("latest");
  auto c =
      compare(m, {cell_rec("A=0,B=0", config({{"stream0", "per-thread"}})), cell_rec("A=0,B=0"),
                  cell_rec("A=0,B=1"), result("A=0,B=0", "mem.a", outcome::crash),
                  result("A=0,B=0", "mem.a", outcome::pass, {{"n", 1}}),
                  result("A=0,B=1", "mem.a", outcome::pass, {{"n", 1}}),
                  make_record(record_type::binding_map, {{"cell", "A=0,B=1"}})});
  CHECK(c.results == 2);
  CHECK(c.problems.empty());
  CHECK(c.divergences.empty());
  CHECK(c.cell_group.at("A=0,B=0") == legacy_group);
  CHECK(c.outcome_counts == std::map<std::string, std::size_t>{{"pass", 2}});
}

TEST_CASE("verdict: problems come in the order of the steps", "[verdict]") {
  auto m = load("order", allow_mem(R"("fail")", "binding = \"nvidia\"\n"));
  auto c = compare(m,
                   {result("A=1,B=0", "mem.a", outcome::pass), cell_rec("A=1,B=0"),
                    result("A=1,B=0", "stream.a", outcome::crash), cell_error("A=0,B=0", "spawn")},
                   {{"mem.a", "A=9,B=9", outcome::fail, "", 1}});
  CHECK(kinds(c) == std::vector<std::string>{"cell_error", "expectation", "unexpected_pass",
                                             "failure", "stale_expectation", "stale_expectation"});
  REQUIRE(c.problems.size() == 6);
  CHECK(c.problems[4].cell.empty()); // the allowance, then the baseline line
  CHECK(c.problems[5].cell == "A=9,B=9");
}

TEST_CASE("verdict_exit_code: 0 equivalent, 1 failed, 3 environment", "[verdict][exit]") {
  comparison c;
  run_facts facts;
  CHECK(verdict_exit_code(c, facts) == 1); // nothing planned: incomplete, never equivalent
  CHECK(std::string(verdict_name(c, facts)) == "incomplete");
  c.coverage.planned = c.coverage.recorded = 1;
  CHECK(verdict_exit_code(c, facts) == 0);
  CHECK(std::string(verdict_name(c, facts)) == "equivalent");
  c.divergences.push_back({"g", "mem.a", "outcome", {}});
  CHECK(verdict_exit_code(c, facts) == 1);
  c.divergences.clear();
  c.problems.push_back({"failure", "A", "mem.a", "m"});
  CHECK(verdict_exit_code(c, facts) == 1);
  c.problems.clear();
  facts.latency_failed = true;
  CHECK(verdict_exit_code(c, facts) == 1);
  c.environment_problem = true;
  c.problems.push_back({"cell_error", "A", "", "m"});
  CHECK(verdict_exit_code(c, facts) == 3); // the environment outranks everything it causes
  CHECK(std::string(verdict_name(c, facts)) == "environment");
  c.environment_problem = false;
  CHECK(std::string(verdict_name(c, facts)) == "failed");
  c.coverage.missing.push_back({"A", "mem.a"});
  CHECK(verdict_exit_code(c, facts) == 1);
  CHECK(std::string(verdict_name(c, facts)) == "incomplete"); // outranks failed
}

TEST_CASE("verdict: a latency process or benchmark that could not run is its cell's named error",
          "[verdict][latency_errors]") {
  auto m = load("latency_errors");
  auto err = [](const std::string &cell, json extra) {
    json r = {{"type", "latency_error"}, {"cell", cell}, {"round", 0}, {"message", "no numba"}};
    r.update(extra);
    return r;
  };
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"),
                       result("A=0,B=0", "mem.a", outcome::pass),
                       result("A=0,B=1", "mem.a", outcome::pass), err("A=0,B=0", json::object()),
                       err("A=0,B=0", {{"round", 1}, {"message", "again"}}),
                       err("A=0,B=1", {{"benchmark", "drv"}, {"message", "benchmark 'drv' ..."}})});
  CHECK(problems(c) == std::vector<std::string>{
                           "cell_error [A=0,B=0] : latency probe process: no numba",
                           "cell_error [A=0,B=1] : benchmark 'drv' ..."});
}
