// The functional verdict's rules that test_verdict.cpp leaves open, each found by a mutant of
// tests/mutants/functional.mutants that no test killed: baseline files, records of cells the
// matrix lacks, repeated and unreadable records, and the exit code of whole comparisons.
#include "harness/report/summary.hpp"
#include "harness/verdict/baseline.hpp"
#include "verdict_records.hpp"

#include <catch2/catch.hpp>
#include <sstream>

using namespace cuparity;
using namespace cuparity::verdict_test;

namespace {

/// Writes `text` to a scratch file and returns its path.
std::string write_file(const std::string &name, const std::string &text) {
  const auto path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// An entry as "case|cell|outcome|line|comment", so a whole baseline compares in one CHECK.
std::vector<std::string> entries(const std::vector<baseline_entry> &baseline) {
  std::vector<std::string> out;
  for (const auto &e : baseline)
    out.push_back(e.case_id + "|" + e.cell + "|" + std::string(to_string(e.expected)) + "|" +
                  std::to_string(e.line) + "|" + e.comment);
  return out;
}

json raw_case(const std::string &cell, const std::string &id, json outcome_value) {
  json r = make_record(record_type::case_result, {{"cell", cell}, {"case", id}});
  if (!outcome_value.is_null())
    r["outcome"] = std::move(outcome_value);
  return r;
}

} // namespace

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

TEST_CASE("verdict: a baseline line naming a recorded pair is used, though its cell or case is "
          "gone",
          "[verdict][stale][baseline]") {
  // Records merged from an older run: cell A=9,B=9 has left the matrix, gone.case the build.
  auto m = load("baseline_recorded_gone");
  auto known = [](const std::string &id) { return id.rfind("gone.", 0) != 0; };
  auto c = compare(
      m,
      {cell_rec("A=9,B=9"), cell_rec("A=0,B=0"), result("A=9,B=9", "mem.a", outcome::fail),
       result("A=0,B=0", "gone.case", outcome::crash)},
      {{"mem.a", "A=9,B=9", outcome::fail, "", 1}, {"gone.case", "A=0,B=0", outcome::crash, "", 2}},
      known);
  CHECK(problems(c).empty());
  CHECK(c.allowed == 2);
}

TEST_CASE("verdict: a cell the matrix lacks has no expectations and no allowances",
          "[verdict][records]") {
  auto m = load("unknown_cell", allow_mem(R"("fail")", "binding = \"nvidia\"\n"));
  auto c = compare(m, {cell_rec("A=1,B=9"), result("A=1,B=9", "mem.a", outcome::fail, {}, "bad"),
                       cell_rec("A=1,B=0", config({{"binding", "nvidia"}})),
                       result("A=1,B=0", "mem.a", outcome::fail)});
  // A=1,B=0 is in the matrix: its binding is as expected and its failure allowed. A=1,B=9 is
  // not: no expectation is checked against it and its failure is a failure.
  CHECK(problems(c) == std::vector<std::string>{"failure [A=1,B=9] mem.a: fail: bad"});
  CHECK(c.allowed == 1);
}

TEST_CASE("verdict: a cell that never started reports its latest cell_error", "[verdict][cells]") {
  auto m = load("latest_cell_error");
  auto c = compare(m, {cell_error("A=0,B=0", "spawn", "exec failed"),
                       cell_error("A=0,B=0", "start", "no cell_start within 5 minutes")});
  CHECK(problems(c) ==
        std::vector<std::string>{"cell_error [A=0,B=0] : no cell_start within 5 minutes"});
}

TEST_CASE("verdict: a case record with an unknown or no outcome counts as error, a failure",
          "[verdict][outcomes][records]") {
  auto m = load("unknown_outcome");
  auto c = compare(m, {cell_rec("A=0,B=0"), raw_case("A=0,B=0", "mem.a", "exploded"),
                       raw_case("A=0,B=0", "mem.b", nullptr)});
  CHECK(kinds(c) == std::vector<std::string>{"failure", "failure"});
  REQUIRE(c.problems.size() == 2);
  CHECK(c.problems[0].case_id == "mem.a");
  CHECK(c.problems[0].message.rfind("error: ", 0) == 0);
  CHECK(c.problems[1].case_id == "mem.b");
  CHECK(c.outcome_counts == std::map<std::string, std::size_t>{{"error", 2}});
}

TEST_CASE("verdict: an observation only a later cell recorded still diverges",
          "[verdict][equivalence]") {
  auto m = load("observation_later_cell");
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"),
                       result("A=0,B=0", "mem.a", outcome::pass),
                       result("A=0,B=1", "mem.a", outcome::pass, {{"n", 2}})});
  REQUIRE(c.divergences.size() == 1);
  CHECK(c.divergences[0].key == "observations.n");
  CHECK(c.divergences[0].values ==
        std::map<std::string, json>{{"A=0,B=0", nullptr}, {"A=0,B=1", 2}});
}

TEST_CASE("read_baseline: entries, their comments, line numbers; blanks and CRs are not part of "
          "them",
          "[verdict][baseline]") {
  const auto path = write_file("entries.txt", "# a header, no entry's\n"
                                              "\n"
                                              "# reason: issue 12\n"
                                              "# https://example.org/12\n"
                                              "mem.a,A=0,B=0,fail\n"
                                              "  stream.b,A=1,B=0,crash \r\n"
                                              "mem.c,A=0,B=1,timeout  \n"
                                              "   \n"
                                              "# orphan\n"
                                              "\n"
                                              "binding.x,A=1,B=1,not_supported\n");
  CHECK(
      entries(read_baseline(path)) ==
      std::vector<std::string>{"mem.a|A=0,B=0|fail|5|# reason: issue 12\n# https://example.org/12",
                               "stream.b|A=1,B=0|crash|6|", "mem.c|A=0,B=1|timeout|7|",
                               "binding.x|A=1,B=1|not_supported|11|"});
}

TEST_CASE("read_baseline: a malformed line, an unknown outcome and 'pass' name file:line",
          "[verdict][baseline]") {
  auto refused = [](const std::string &name, const std::string &bad) {
    const auto path = write_file(name, "# ok\nmem.a,A=0,B=0,fail\n" + bad + "\n");
    return std::make_pair(path, [path] { return read_baseline(path); });
  };
  SECTION("two fields") {
    auto [path, read] = refused("two_fields.txt", "mem.a,fail");
    CHECK_THROWS_WITH(read(), path + ":3: expected 'case,cell,outcome', got 'mem.a,fail'");
  }
  SECTION("no comma") {
    auto [path, read] = refused("no_comma.txt", "mem.a");
    CHECK_THROWS_WITH(read(), path + ":3: expected 'case,cell,outcome', got 'mem.a'");
  }
  SECTION("an unknown outcome") {
    auto [path, read] = refused("unknown.txt", "mem.b,A=0,B=0,exploded");
    CHECK_THROWS_WITH(read(), path + ":3: unknown outcome 'exploded'");
  }
  SECTION("pass") {
    auto [path, read] = refused("pass.txt", "mem.b,A=0,B=0,pass");
    CHECK_THROWS_WITH(read(), path + ":3: a baseline lists expected non-passes; 'pass' does "
                                     "not belong");
  }
  CHECK_THROWS_WITH(read_baseline((scratch_dir() / "absent.txt").string()),
                    Catch::Contains("cannot read the baseline file"));
}

TEST_CASE("read_baseline: a folder or a device is no baseline; /dev/null is an empty one",
          "[verdict][baseline]") {
  const std::string folder = scratch_dir().string();
  CHECK_THROWS_WITH(read_baseline(folder), folder + ": is a folder, not a baseline file");
  CHECK_THROWS_WITH(read_baseline("/dev/zero"),
                    Catch::Contains("/dev/zero: is not a regular file"));
  CHECK(read_baseline("/dev/null").empty());
}

TEST_CASE("write_baseline: every non-success once, sorted; the run it came from passes with it",
          "[verdict][baseline]") {
  auto m = load("write_baseline");
  const std::vector<json> cases{result("A=1,B=0", "stream.b", outcome::crash),
                                result("A=0,B=0", "mem.a", outcome::pass),
                                result("A=0,B=1", "mem.c", outcome::timeout),
                                result("A=0,B=0", "mem.b", outcome::not_supported),
                                result("A=0,B=0", "mem.c", outcome::fail),
                                result("A=0,B=0", "mem.c", outcome::fail)}; // resumed: twice
  const auto path = (scratch_dir() / "written.txt").string();
  write_baseline(path, cases, "written by a test");
  CHECK(read_file(path) == "# written by a test\n"
                           "# case,cell,outcome; add a comment line above an entry with the "
                           "reason and an issue link\n"
                           "mem.c,A=0,B=0,fail\n"
                           "mem.c,A=0,B=1,timeout\n"
                           "stream.b,A=1,B=0,crash\n");
  std::vector<json> records{cell_rec("A=0,B=0"), cell_rec("A=0,B=1"), cell_rec("A=1,B=0")};
  records.insert(records.end(), cases.begin(), cases.end());
  auto c = compare(m, records, read_baseline(path));
  CHECK(c.problems.empty());
  CHECK(c.allowed == 3);
}

TEST_CASE("verdict_exit_code of whole comparisons: each kind of problem fails the run",
          "[verdict][exit]") {
  auto m = load("exit_codes", allow_mem(R"("fail")", "fallback = false\n"));
  const std::vector<json> ok{cell_rec("A=0,B=0"), cell_rec("A=1,B=0"),
                             result("A=0,B=0", "mem.a", outcome::pass),
                             result("A=1,B=0", "mem.a", outcome::fail)};
  auto exit_of = [&](std::vector<json> records, const std::vector<baseline_entry> &base = {}) {
    return verdict_exit_code(compare(m, records, base), run_facts{});
  };
  CHECK(exit_of(ok) == 0);
  auto with = [&](std::vector<json> extra) {
    auto r = ok;
    r.insert(r.end(), extra.begin(), extra.end());
    return r;
  };
  CHECK(exit_of(with({result("A=0,B=0", "mem.b", outcome::crash)})) == 1);        // failure
  CHECK(exit_of(with({result("A=1,B=0", "mem.a", outcome::pass)})) == 1);         // unexpected pass
  CHECK(exit_of(with({cell_rec("A=1,B=0", config({{"fallback", true}}))})) == 1); // expectation
  CHECK(exit_of(with({cell_error("A=1,B=1", "spawn")})) == 1);                    // cell_error
  CHECK(exit_of(ok, {{"mem.a", "A=9,B=9", outcome::fail, "", 1}}) == 1);          // stale line
  CHECK(exit_of(with({result("A=0,B=0", "mem.x", outcome::pass, {{"n", 1}}),
                      result("A=1,B=0", "mem.x", outcome::pass, {{"n", 2}})})) == 1); // diverges
  CHECK(exit_of({cell_error("A=0,B=0", "driver"), cell_error("A=1,B=0", "driver")}) == 3);
}

TEST_CASE("verdict: every rule matching a cell is checked, and each of its allowances applies",
          "[verdict][configuration][outcomes]") {
  auto m = load("several_rules", R"(
[[expect]]
when = { A = "1" }
binding = "nvidia"
[[expect.allow]]
cases = ["mem.*"]
outcomes = ["fail"]
reason = "first rule"
[[expect.allow]]
cases = ["mem.a"]
outcomes = ["timeout"]
reason = "first rule, mem.a"
[[expect]]
when = { B = "1" }
stream0 = "per-thread"
[[expect.allow]]
cases = ["stream.*"]
outcomes = ["crash"]
reason = "second rule"
)");
  // A=1,B=1 matches both rules: both configurations are checked, all three allowances apply.
  auto c = compare(m, {cell_rec("A=1,B=1"), result("A=1,B=1", "mem.a", outcome::timeout),
                       result("A=1,B=1", "mem.b", outcome::fail),
                       result("A=1,B=1", "stream.a", outcome::crash)});
  CHECK(problems(c) ==
        std::vector<std::string>{"expectation [A=1,B=1] : binding is internal, expected nvidia "
                                 "(expected by " +
                                     m.expectations[0].where.text() + ")",
                                 "expectation [A=1,B=1] : stream 0 is legacy, expected per-thread "
                                 "(expected by " +
                                     m.expectations[1].where.text() + ")"});
  CHECK(c.allowed == 3);
}
