// What a suite's end says of its cell (harness/verdict/suite_ends.cpp, docs/verdicts.md "Suites"):
// a broken environment, a failure budget, fewer tests collected; the counts summary.json, the
// console and junit.xml show. Records are hand-made, as the runner (suite_watch.cpp) writes them.
#include "harness/protocol/case_ids.hpp"
#include "harness/report/junit_writer.hpp"
#include "harness/report/summary.hpp"
#include "verdict_records.hpp"

#include <catch2/catch.hpp>
#include <sstream>

using namespace cuparity;
using namespace cuparity::verdict_test;

namespace {

/// Four cells over A and B, suites "ext" and "other"; A and B are declared inert (a test's axes).
matrix suites_matrix(const std::string &name) {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  std::ofstream(path) << "[matrix]\nname = \"" << name << "\"\n"
                      << "inert = { A = \"a test's axis\", B = \"a test's axis\" }\n"
                      << "[axes]\nA = [\"0\", \"1\"]\nB = [\"0\", \"1\"]\n"
                      << "[[suite]]\nname = \"ext\"\n"
                      << "command = [\"python3\", \"-m\", \"pytest\", \"--junitxml={junit}\"]\n"
                      << "[[suite]]\nname = \"other\"\n"
                      << "command = [\"python3\", \"-m\", \"pytest\", \"--junitxml={junit}\"]\n";
  return load_matrix(path, [](const std::string &g) { return g == "*"; });
}

const std::string c00 = "A=0,B=0", c01 = "A=0,B=1", c10 = "A=1,B=0", c11 = "A=1,B=1";

/// A suite_end of `suite` in `cell` with the new members in `extra` (older records lack them).
json end_of(const std::string &cell, json extra = json::object(),
            const std::string &suite = "ext") {
  json fields = {{"cell", cell},
                 {"suite", suite},
                 {"tests", 3},
                 {"processes", json::array({json::object(), json::object()})},
                 {"bindings", json::object()},
                 {"evidence", json::object()}};
  if (extra.is_object()) // `{}` reads as null
    fields.update(extra);
  return make_record(record_type::suite_end, fields);
}

const json broken = {{"environment",
                      {{"message", "fixture 'initialize_from_pytest_config' not found"},
                       {"count", 3},
                       {"stopped", true},
                       {"not_run", 221}}}};

/// Three tests of `suite` in `cell`, each ending `o` with `message`.
std::vector<json> three(const std::string &cell, outcome o, const std::string &message = "msg",
                        const std::string &suite = "ext") {
  std::vector<json> out;
  for (const char *t : {"t.test_a", "t.test_b", "t.test_c"})
    out.push_back(result(cell, suite + "." + t, o, json::object(), message));
  return out;
}

std::vector<json> operator+(std::vector<json> a, const std::vector<json> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// The verdict on `records`, planned as a run of suites plans them: a pair per suite_end.
comparison judge(const matrix &m, const std::vector<json> &records) {
  std::vector<planned_pair> plan;
  for (const auto &r : records)
    if (is_record(r, record_type::suite_end))
      plan.push_back({r.value("cell", ""), suite_pair_id(r.value("suite", ""))});
  return compare_results(m, records, plan, {}, any_case);
}

std::size_t count_kind(const comparison &c, const std::string &kind) {
  const auto all = kinds(c);
  return static_cast<std::size_t>(std::count(all.begin(), all.end(), kind));
}

} // namespace

TEST_CASE("suite ends: a suite whose every test failed alike is one environment problem, its "
          "tests neither judged nor compared",
          "[verdict][suite][suite_ends]") {
  const auto m = suites_matrix("environment");
  const std::string fixture = "fixture 'initialize_from_pytest_config' not found";
  // c00's ext is broken; c01 (the same group) passed it; c00's other suite failed for real.
  const auto records = std::vector<json>{cell_rec(c00), cell_rec(c01)} +
                       three(c00, outcome::error, fixture) + three(c01, outcome::pass) +
                       three(c00, outcome::fail, "real", "other") +
                       three(c01, outcome::pass, "", "other") +
                       std::vector<json>{end_of(c00, broken), end_of(c01), end_of(c00, {}, "other"),
                                         end_of(c01, {}, "other")};
  const auto c = judge(m, records);
  REQUIRE(count_kind(c, "environment") == 1);
  CHECK(problems(c).front() ==
        "environment [A=0,B=0] : suite 'ext' in cell 'A=0,B=0': 3 tests of those it ran failed with "
        "one message, so its environment is broken (its tests did not run as written; they are "
        "not judged one by one); stopped there, 221 tests not run: " +
            fixture);
  // No per-test failure of the broken suite, and no divergence against the cell that passed it;
  // the other suite of the same cell is judged and compared as ever.
  CHECK(count_kind(c, "failure") == 3);
  for (const auto &p : c.problems)
    if (p.kind == "failure")
      CHECK(p.case_id.rfind("other.", 0) == 0);
  REQUIRE(c.divergences.size() == 3);
  for (const auto &d : c.divergences)
    CHECK(d.case_id.rfind("other.", 0) == 0);
  // They ran: counted, and set aside.
  CHECK(c.results == 12);
  CHECK(c.outcome_counts.at("error") == 3);
  CHECK(c.set_aside.size() == 3);
  CHECK(c.set_aside.count({c00, "ext.t.test_a"}) == 1);
  CHECK(verdict_exit_code(c, run_facts{}) == 1);
  CHECK(std::string(verdict_name(c, run_facts{})) == "failed");
}

TEST_CASE("suite ends: a resumed suite's last end decides whether its environment was broken",
          "[verdict][suite][suite_ends]") {
  const auto m = suites_matrix("environment_resumed");
  json not_stopped = broken;
  not_stopped["environment"]["stopped"] = false;
  not_stopped["environment"]["not_run"] = 0;
  // c01's tests of the same suite, its environment whole, are judged as ever.
  const auto first = judge(m, three(c00, outcome::error) + three(c01, outcome::error) +
                                  std::vector<json>{end_of(c00, not_stopped), end_of(c01)});
  REQUIRE(kinds(first) == std::vector<std::string>{"environment", "failure", "failure", "failure"});
  CHECK(first.problems[1].cell == c01);
  CHECK(first.problems[0].message.find(": 3 tests failed with one message") != std::string::npos);
  CHECK(first.problems[0].message.find("tests not run") == std::string::npos);
  // The same suite ended again, its environment mended: its tests are judged again.
  const auto resumed = judge(m, three(c00, outcome::error) +
                                    std::vector<json>{end_of(c00, not_stopped), end_of(c00)});
  CHECK(kinds(resumed) == std::vector<std::string>(3, "failure"));
  CHECK(resumed.set_aside.empty());
}

TEST_CASE("suite ends: a failure budget that stopped a suite is a problem; its failures stay",
          "[verdict][suite][suite_ends]") {
  const auto m = suites_matrix("budget");
  const json budget = {{"budget", {{"max_fails", 2}, {"failures", 2}, {"not_run", 5}}}};
  const auto c =
      judge(m, std::vector<json>{result(c00, "ext.t.test_a", outcome::fail),
                                 result(c00, "ext.t.test_b", outcome::error), end_of(c00, budget)});
  REQUIRE(kinds(c) == std::vector<std::string>{"failure_budget", "failure", "failure"});
  CHECK(c.problems[0].cell == c00);
  CHECK(c.problems[0].message ==
        "suite 'ext' in cell 'A=0,B=0' stopped at its failure budget: 2 failures (max_fails 2); "
        "5 tests not run, so the cell's results of it are partial");
  CHECK(c.set_aside.empty());
  // An end whose budget and environment are null (or an older record's, without them) is no
  // problem, and its tests are judged as ever.
  const auto none = judge(m, {result(c00, "ext.t.test_a", outcome::fail),
                              end_of(c00, {{"budget", nullptr}, {"environment", nullptr}})});
  CHECK(kinds(none) == std::vector<std::string>{"failure"});
}

TEST_CASE("suite ends: a cell that collected fewer tests of a suite than another names the counts",
          "[verdict][suite][suite_ends]") {
  const auto m = suites_matrix("collection");
  // c11's count is unknown (null): it takes no part.
  const auto c = judge(m, {end_of(c00, {{"collected", 224}}), end_of(c01, {{"collected", 224}}),
                           end_of(c10, {{"collected", 180}}), end_of(c11, {{"collected", nullptr}}),
                           end_of(c10, {{"collected", 7}}, "other")});
  REQUIRE(problems(c) ==
          std::vector<std::string>{"collection [A=1,B=0] : suite 'ext' collected 180 tests in cell "
                                   "'A=1,B=0', but 224 in cells 'A=0,B=0', 'A=0,B=1'"});
  // Zero where another cell collected some; zero everywhere is a problem in each cell too.
  const auto zero = judge(m, {end_of(c00, {{"collected", 5}}), end_of(c01, {{"collected", 0}})});
  CHECK(messages(zero) == std::vector<std::string>{"suite 'ext' collected 0 tests in cell "
                                                   "'A=0,B=1', but 5 in cell 'A=0,B=0'"});
  const auto none = judge(m, {end_of(c00, {{"collected", 0}}), end_of(c01, {{"collected", 0}})});
  CHECK(kinds(none) == std::vector<std::string>(2, "collection"));
  CHECK(none.problems[1].message ==
        "suite 'ext' collected 0 tests in cell 'A=0,B=1': zero tests is never a pass");
  CHECK(verdict_exit_code(none, run_facts{}) == 1);
}

TEST_CASE("suite ends: the counts per cell and suite, older records and suites that could not run",
          "[verdict][suite][suite_ends]") {
  const auto m = suites_matrix("counts");
  json error = cell_error(c10, "suite", "ext: collection failed");
  error["suite"] = "ext";
  const auto c =
      judge(m, {end_of(c00, {{"collected", 224}, {"process_count", 3}, {"wall_ms", 12.5}}),
                end_of(c01), error});
  REQUIRE(c.suites);
  REQUIRE(c.suites->size() == 3);
  const suite_count &s = c.suites->at(0);
  CHECK((s.cell == c00 && s.suite == "ext" && !s.program && !s.error));
  CHECK(s.collected == std::optional<std::size_t>(224));
  CHECK(s.tests == 3);
  CHECK(s.process_count == 3);
  CHECK(s.wall_ms == std::optional<double>(12.5));
  const suite_count &older = c.suites->at(1); // no collected, no process_count: its processes[]
  CHECK(!older.collected);
  CHECK(older.process_count == 2);
  CHECK(!older.wall_ms);
  CHECK(c.suites->at(2).error == std::optional<std::string>("ext: collection failed"));
  // A matrix of built-in cases has no such member.
  CHECK(!judge(load("builtin"), {cell_rec(c00)}).suites);
}

TEST_CASE("suite ends: summary.json, the console and junit.xml show what the verdict decided",
          "[verdict][suite][suite_ends][report]") {
  const auto m = suites_matrix("outputs");
  json counted = broken;
  counted.update({{"collected", 224}, {"process_count", 3}, {"wall_ms", 40.0}});
  // A program's end (its one case is its run: nothing collected) gets its own word.
  const auto records =
      std::vector<json>{cell_rec(c00)} + three(c00, outcome::error) +
      std::vector<json>{end_of(c00, counted),
                        end_of(c01, {{"program", true}, {"process_count", 1}}, "other")};
  const auto c = judge(m, records);
  run_facts facts;
  facts.provenance = json::object();
  const auto s = make_summary(m, records, c, facts);
  REQUIRE(s["suites"].size() == 2);
  CHECK(s["suites"][1]["program"] == true);
  CHECK(s["suites"][0] == json{{"cell", c00},
                               {"suite", "ext"},
                               {"program", false},
                               {"error", nullptr},
                               {"collected", 224},
                               {"tests", 3},
                               {"process_count", 3},
                               {"wall_ms", 40.0},
                               {"environment", broken["environment"]},
                               {"budget", nullptr}});
  CHECK(s["problems"][0]["kind"] == "environment");
  CHECK(make_summary(load("builtin_summary"), {}, comparison{}, facts)["suites"].is_null());
  std::ostringstream console;
  print_console(console, m, records, c, facts);
  INFO(console.str());
  CHECK(console.str().find("SUITE ext cell=A=0,B=0 collected 224, recorded 3, 3 processes; "
                           "environment broken (3 alike, 221 not run)\n") != std::string::npos);
  CHECK(console.str().find("PROGRAM other cell=A=0,B=1 recorded 3, 1 process\n") !=
        std::string::npos);
  // The set-aside tests are skipped in junit.xml; the environment problem is its failing testcase.
  const auto xml = junit_xml(m, records, c);
  CHECK(xml.find("skipped message=\"not run as written") != std::string::npos);
  CHECK(xml.find("name=\"environment [A=0,B=0]\"") != std::string::npos);
}
