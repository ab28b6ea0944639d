// The verdict on external suites' records: flaky tests, flakes files, the bindings beside a
// divergence, no-op variables, one cell error per suite, and coverage by suite.
#include "harness/verdict/changes.hpp"
#include "harness/verdict/coverage.hpp"
#include "verdict_records.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;
using namespace cuparity::verdict_test;

namespace {

/// A suite matrix over the axes A and B (four cells), suite "ext"; `extra` is appended.
matrix load_suite_matrix(const std::string &name, const std::string &extra = "") {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  std::ofstream(path) << "[matrix]\nname = \"" << name << "\"\n[axes]\nA = [\"0\", \"1\"]\n"
                      << "B = [\"0\", \"1\"]\n[[suite]]\nname = \"ext\"\n"
                      << "command = [\"python3\", \"-m\", \"pytest\", \"--junitxml={junit}\"]\n"
                      << extra;
  return load_matrix(path, [](const std::string &g) { return g == "*"; });
}

json flaky(const std::string &cell, const std::string &id) {
  return result(cell, id, outcome::flaky, json::object(),
                "changed outcome between tries: fail, pass");
}

const json legacy_bindings = {{"cuInit", {"cuInit (dlsym)"}},
                              {"cuMemGetInfo", {"cuMemGetInfo_v2 (dlsym)"}}};

std::size_t count_kind(const comparison &c, const std::string &kind) {
  const std::vector<std::string> all = kinds(c);
  return static_cast<std::size_t>(std::count(all.begin(), all.end(), kind));
}

std::vector<planned_pair> suite_plan(const std::vector<std::string> &cells) {
  std::vector<planned_pair> out;
  for (const auto &c : cells)
    out.push_back({c, "ext.*"});
  return out;
}

} // namespace

TEST_CASE("suite verdict: a flaky test nothing excuses is a problem of its own, never compared",
          "[verdict][suite]") {
  auto m = load_suite_matrix("flaky_problem");
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"), flaky("A=0,B=0", "ext.t.T.test_x"),
                       result("A=0,B=1", "ext.t.T.test_x", outcome::pass)});
  CHECK(kinds(c) == std::vector<std::string>{"flaky"});
  CHECK(c.problems[0].message.find("fail, pass") != std::string::npos);
  CHECK(c.divergences.empty()); // reported as flaky, not as a difference between the cells
  CHECK(c.outcome_counts["flaky"] == 1);
  CHECK(c.flaky_excused == 0);
}

TEST_CASE("suite verdict: the suite's flakes file excuses a flaky test, and the summary counts it",
          "[verdict][suite]") {
  std::ofstream(scratch_dir() / "ext.flakes") << "# known races\next.t.T.test_x* races a timer\n";
  auto m = load_suite_matrix("flaky_excused", "flakes = \"ext.flakes\"\n");
  REQUIRE(m.suites.at(0).flakes.size() == 1);
  auto c = compare(m, {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"), flaky("A=0,B=0", "ext.t.T.test_x"),
                       flaky("A=0,B=1", "ext.t.T.test_y")});
  CHECK(kinds(c) == std::vector<std::string>{"flaky"}); // test_y is not excused
  CHECK(c.problems[0].case_id == "ext.t.T.test_y");
  CHECK(c.flaky_excused == 1);
  CHECK(c.allowed == 1);
  CHECK(c.outcome_counts["flaky"] == 2);
}

TEST_CASE("suite verdict: a divergence names the functions its cells bound apart",
          "[verdict][suite]") {
  auto m = load_suite_matrix("bound_apart");
  json proc = legacy_bindings;
  proc["cuMemGetInfo"] = {"cuMemGetInfo (proc)"};
  auto c =
      compare(m, {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"), suite_end("A=0,B=0", legacy_bindings),
                  suite_end("A=1,B=0", proc), result("A=0,B=0", "ext.t.test_info", outcome::pass),
                  result("A=1,B=0", "ext.t.test_info", outcome::fail)});
  REQUIRE(c.divergences.size() == 1);
  const auto &b = c.divergences[0].bindings;
  REQUIRE(b.size() == 1); // cuInit was bound alike: not listed
  CHECK(b[0].function == "cuMemGetInfo");
  CHECK_FALSE(b[0].same_symbols);
  CHECK(b[0].cells.at("A=0,B=0") == std::vector<std::string>{"cuMemGetInfo_v2 (dlsym)"});
  CHECK(b[0].cells.at("A=1,B=0") == std::vector<std::string>{"cuMemGetInfo (proc)"});
}

TEST_CASE("suite verdict: other symbols are listed before the same symbols bound another way",
          "[verdict][suite]") {
  auto m = load_suite_matrix("bound_another_way");
  const json proc = {{"cuInit", {"cuInit (proc)"}}, {"cuMemGetInfo", {"cuMemGetInfo (proc)"}}};
  auto c =
      compare(m, {cell_rec("A=0,B=0"), cell_rec("A=1,B=0"), suite_end("A=0,B=0", legacy_bindings),
                  suite_end("A=1,B=0", proc), result("A=0,B=0", "ext.t.test_info", outcome::pass),
                  result("A=1,B=0", "ext.t.test_info", outcome::fail)});
  REQUIRE(c.divergences.size() == 1);
  const auto &b = c.divergences[0].bindings;
  REQUIRE(b.size() == 2);
  CHECK(b[0].function == "cuMemGetInfo"); // another symbol: first, though cuInit sorts before it
  CHECK_FALSE(b[0].same_symbols);
  CHECK(b[1].function == "cuInit");
  CHECK(b[1].same_symbols);
}

TEST_CASE("suite verdict: a variable that changed no captured cell's bindings is a no-op",
          "[verdict][suite][noop]") {
  auto m = load_suite_matrix("noop");
  json other = legacy_bindings;
  other["cuMemGetInfo"] = {"cuMemGetInfo (proc)"};
  // A changes the bindings, B never does.
  auto c = compare(m, {suite_end("A=0,B=0", legacy_bindings), suite_end("A=0,B=1", legacy_bindings),
                       suite_end("A=1,B=0", other), suite_end("A=1,B=1", other)});
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  CHECK(c.problems[0].message.rfind("B changed nothing", 0) == 0);
  CHECK(c.problems[0].message.find("2 pair(s)") != std::string::npos);
  // One pair that differs is enough: B is read.
  auto read = compare(m, {suite_end("A=0,B=0", legacy_bindings), suite_end("A=0,B=1", other),
                          suite_end("A=1,B=0", other), suite_end("A=1,B=1", other)});
  CHECK(count_kind(read, "no_op_configuration") == 0);
  // A variable the driver reads (a fault to inject) changes outcomes, not bindings: read.
  auto outcome_only =
      compare(m, {suite_end("A=0,B=0", legacy_bindings), suite_end("A=0,B=1", legacy_bindings),
                  result("A=0,B=0", "ext.t.test_x", outcome::pass),
                  result("A=0,B=1", "ext.t.test_x", outcome::crash)});
  CHECK(count_kind(outcome_only, "no_op_configuration") == 0);
  // Without captured pairs there is no evidence either way.
  CHECK(kinds(compare(m, {suite_end("A=0,B=0", legacy_bindings)})).empty());
}

TEST_CASE("suite verdict: a suite that could not run is one cell error, until it ran to its end",
          "[verdict][suite]") {
  auto m = load_suite_matrix("suite_error");
  json error = cell_error("A=1,B=0", "suite", "ext: the suite ran no test (ImportError)");
  error["suite"] = "ext";
  auto c = compare(m, {cell_rec("A=0,B=0"), error});
  CHECK(problems(c) == std::vector<std::string>{
                           "cell_error [A=1,B=0] : ext: the suite ran no test (ImportError)"});
  auto resumed = compare(m, {cell_rec("A=0,B=0"), error, suite_end("A=1,B=0", legacy_bindings)});
  CHECK(kinds(resumed).empty());
}

TEST_CASE("suite coverage: a suite_end covers its (cell, suite) pair and the suite's tests",
          "[verdict][suite][coverage]") {
  const std::vector<json> records = {suite_end("c1", json::object()),
                                     result("c1", "ext.t.test_a", outcome::pass),
                                     result("c1", "ext.t.test_a", outcome::pass), // a resumed suite
                                     result("c2", "ext.t.test_a", outcome::pass)};
  const coverage cov = check_coverage(suite_plan({"c1", "c2"}), records);
  CHECK(cov.recorded == 1);
  REQUIRE(cov.missing.size() == 1); // c2's suite never ended
  CHECK(cov.missing[0] == planned_pair{"c2", "ext.*"});
  CHECK(cov.unplanned.empty());
  CHECK(cov.duplicated.empty());
  // A test of a suite the plan does not hold is unplanned.
  const coverage foreign =
      check_coverage(suite_plan({"c1"}),
                     {suite_end("c1", json::object()), result("c9", "ext.t.x", outcome::pass)});
  CHECK(foreign.unplanned.size() == 1);
}

TEST_CASE("suite changes: a run against a run names what an external suite's cell bound otherwise",
          "[verdict][suite][changes]") {
  json proc = legacy_bindings;
  proc["cuMemGetInfo"] = {"cuMemGetInfo (proc)"};
  const auto before = latest_binding_maps({suite_end("c1", legacy_bindings)});
  const auto after = latest_binding_maps({suite_end("c1", proc)});
  REQUIRE(before.count("c1") == 1);
  const auto changes = binding_changes("c1", "c1", before.at("c1"), after.at("c1"));
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].key == "binding.cuMemGetInfo");
  CHECK(changes[0].before["symbol"] == "cuMemGetInfo_v2 (dlsym)");
  CHECK(changes[0].after["symbol"] == "cuMemGetInfo (proc)");
  CHECK(binding_changes("c1", "c1", before.at("c1"), before.at("c1")).empty());
}

namespace {

/// A program matrix over the axes A and B (four cells), programs "prog" and "other".
matrix load_program_matrix(const std::string &name) {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  std::ofstream(path) << "[matrix]\nname = \"" << name << "\"\n[axes]\nA = [\"0\", \"1\"]\n"
                      << "B = [\"0\", \"1\"]\n[[program]]\nname = \"prog\"\n"
                      << "command = [\"python3\", \"-c\", \"pass\"]\nskip_exit_code = 77\n"
                      << "[[program]]\nname = \"other\"\ncommand = [\"true\"]\n";
  return load_matrix(path, [](const std::string &g) { return g == "*"; });
}

json program_end(const std::string &cell, const std::string &name, json bindings) {
  return make_record(record_type::suite_end, {{"cell", cell},
                                              {"suite", name},
                                              {"program", true},
                                              {"tests", 1},
                                              {"processes", json::array()},
                                              {"bindings", std::move(bindings)},
                                              {"evidence", json::object()}});
}

/// A program's run in a cell: its one case and its end.
std::vector<json> program_run(const std::string &cell, const std::string &name, json bindings,
                              outcome o = outcome::pass) {
  return {result(cell, name, o, json::object(), ""), program_end(cell, name, std::move(bindings))};
}

std::vector<json> joined(std::initializer_list<std::vector<json>> parts) {
  std::vector<json> out;
  for (const auto &p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

const variable_effect &effect(const comparison &c, const std::string &var) {
  REQUIRE(c.variable_effects.has_value());
  for (const auto &e : *c.variable_effects)
    if (e.variable == var)
      return e;
  FAIL("no effect for " << var);
  return c.variable_effects->front();
}

const json ptds_bindings = {{"cuInit", {"cuInit (dlsym)"}},
                            {"cuMemGetInfo", {"cuMemGetInfo_v2 (dlsym)"}},
                            {"cuMemcpyHtoD", {"cuMemcpyHtoD_v2_ptds (dlsym)"}}};
const json bare_bindings = {{"cuInit", {"cuInit (dlsym)"}},
                            {"cuMemGetInfo", {"cuMemGetInfo_v2 (dlsym)"}},
                            {"cuMemcpyHtoD", {"cuMemcpyHtoD_v2 (dlsym)"}}};

} // namespace

TEST_CASE("program verdict: per variable, the functions whose bindings it changed, and a variable "
          "that changed none is a no-op",
          "[verdict][suite][program][noop]") {
  auto m = load_program_matrix("program_effects");
  REQUIRE(m.suites.size() == 2);
  // A=1 binds the per-thread cuMemcpyHtoD in "prog"; B changes nothing; "other" binds alike.
  auto c = compare(m, joined({program_run("A=0,B=0", "prog", bare_bindings),
                              program_run("A=0,B=1", "prog", bare_bindings),
                              program_run("A=1,B=0", "prog", ptds_bindings),
                              program_run("A=1,B=1", "prog", ptds_bindings),
                              program_run("A=0,B=0", "other", legacy_bindings),
                              program_run("A=1,B=0", "other", legacy_bindings)}));
  const variable_effect &a = effect(c, "A");
  CHECK(a.pairs == 2);
  CHECK(a.outcome_pairs == 0);
  REQUIRE(a.bindings.size() == 1);
  CHECK(a.bindings[0].suite == "prog");
  CHECK(a.bindings[0].function == "cuMemcpyHtoD");
  CHECK(a.bindings[0].cell_a == "A=0,B=0");
  CHECK(a.bindings[0].cell_b == "A=1,B=0");
  CHECK(a.bindings[0].value_a == env_value("0"));
  CHECK(a.bindings[0].a == std::vector<std::string>{"cuMemcpyHtoD_v2 (dlsym)"});
  CHECK(a.bindings[0].b == std::vector<std::string>{"cuMemcpyHtoD_v2_ptds (dlsym)"});
  CHECK(a.bindings[0].pairs == 2);
  CHECK_FALSE(a.bindings[0].same_symbols);
  const variable_effect &b = effect(c, "B");
  CHECK(b.pairs == 2);
  CHECK(b.bindings.empty());
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  CHECK(c.problems[0].message.rfind("B changed nothing", 0) == 0);
  CHECK(c.problems[0].message.find("the package does not read it") != std::string::npos);
  // A changed outcome alone is a change too (a variable the package reads to fail).
  auto failed = compare(m, joined({program_run("A=0,B=0", "prog", bare_bindings),
                                   program_run("A=0,B=1", "prog", bare_bindings, outcome::fail)}));
  CHECK(effect(failed, "B").outcome_pairs == 1);
  CHECK(count_kind(failed, "no_op_configuration") == 0);
}

TEST_CASE("program verdict: a program that could not run (not_supported) is no evidence of a "
          "variable",
          "[verdict][suite][program][noop]") {
  auto m = load_program_matrix("program_skipped");
  // "prog"'s package is missing in every cell: B has no pair to show anything, so no no-op.
  auto skipped = compare(m, joined({program_run("A=0,B=0", "prog", json::object(),
                                                outcome::not_supported),
                                    program_run("A=0,B=1", "prog", json::object(),
                                                outcome::not_supported)}));
  CHECK(effect(skipped, "B").pairs == 0);
  CHECK(count_kind(skipped, "no_op_configuration") == 0);
  // "other" ran in both: its evidence stands beside the skipped one.
  auto beside = compare(m, joined({program_run("A=0,B=0", "prog", json::object(),
                                               outcome::not_supported),
                                   program_run("A=0,B=1", "prog", json::object(),
                                               outcome::not_supported),
                                   program_run("A=0,B=0", "other", legacy_bindings),
                                   program_run("A=0,B=1", "other", legacy_bindings)}));
  CHECK(effect(beside, "B").pairs == 1);
  CHECK(count_kind(beside, "no_op_configuration") == 1);
  // A program that ran and bound nothing ("nothing captured", an error) is evidence.
  auto nothing = compare(m, joined({program_run("A=0,B=0", "prog", json::object(), outcome::error),
                                    program_run("A=0,B=1", "prog", bare_bindings)}));
  CHECK(effect(nothing, "B").bindings.size() == 3);
}

TEST_CASE("program verdict: each program's bindings are its own, not its cell's union",
          "[verdict][suite][program][noop]") {
  auto m = load_program_matrix("program_own");
  // B moves "cuMemcpyHtoD_v2_ptds" from "other" to "prog": the cell's union stays the same.
  auto c = compare(m, joined({program_run("A=0,B=0", "prog", bare_bindings),
                              program_run("A=0,B=0", "other", ptds_bindings),
                              program_run("A=0,B=1", "prog", ptds_bindings),
                              program_run("A=0,B=1", "other", bare_bindings)}));
  CHECK(effect(c, "B").bindings.size() == 2);
  CHECK(count_kind(c, "no_op_configuration") == 0);
}

TEST_CASE("program coverage: a program's one case, its name alone, is under its pair",
          "[verdict][suite][program][coverage]") {
  const coverage cov = check_coverage(
      {{"c1", "prog.*"}}, joined({program_run("c1", "prog", json::object())}));
  CHECK(cov.complete());
  CHECK(cov.recorded == 1);
  CHECK(cov.unplanned.empty());
}

TEST_CASE("program verdict: versions of the packages axis that bind alike are reported, not a "
          "no-op",
          "[verdict][suite][program][noop]") {
  const auto path = (scratch_dir() / "program_packages.toml").string();
  std::ofstream(path) << "[axes]\npackages = [\"p==1\", \"p==2\"]\nB = [\"0\", \"1\"]\n"
                      << "[[program]]\nname = \"prog\"\ncommand = [\"true\"]\n";
  const matrix m = load_matrix(path, [](const std::string &g) { return g == "*"; });
  REQUIRE(m.packages);
  auto c = compare(m, joined({program_run("packages=p==1,B=0", "prog", bare_bindings),
                              program_run("packages=p==2,B=0", "prog", bare_bindings),
                              program_run("packages=p==1,B=1", "prog", ptds_bindings)}));
  CHECK(effect(c, "packages").pairs == 1);
  CHECK(effect(c, "packages").bindings.empty());
  CHECK(count_kind(c, "no_op_configuration") == 0); // B changed bindings; packages is let be
}

TEST_CASE("program verdict: a run where every program ended not_supported tested nothing",
          "[verdict][suite][program][noop]") {
  auto m = load_program_matrix("program_nothing");
  const auto skipped = [](const std::string &cell, const std::string &name) {
    return program_run(cell, name, json::object(), outcome::not_supported);
  };
  auto c = compare(m, joined({skipped("A=0,B=0", "prog"), skipped("A=0,B=1", "prog"),
                              skipped("A=0,B=0", "other"), skipped("A=0,B=1", "other")}));
  REQUIRE(kinds(c) == std::vector<std::string>{"nothing_tested"});
  CHECK(c.problems[0].message.rfind("every one of the 4 results of the programs ended "
                                    "not_supported (first: program 'other' in cell 'A=0,B=0'",
                                    0) == 0);
  CHECK(c.problems[0].message.find("nothing was tested") != std::string::npos);
  // One program that ran anywhere is something looked at: its verdict stands on its own.
  auto one_ran = compare(
      m, joined({skipped("A=0,B=0", "prog"), skipped("A=0,B=1", "prog"),
                 skipped("A=0,B=0", "other"), program_run("A=0,B=1", "other", legacy_bindings)}));
  CHECK(count_kind(one_ran, "nothing_tested") == 0);
  // A failure is something looked at too (and a problem of its own).
  auto failed = compare(m, joined({skipped("A=0,B=0", "prog"),
                                   program_run("A=0,B=1", "prog", json::object(), outcome::fail)}));
  CHECK(count_kind(failed, "nothing_tested") == 0);
  // Built-in cases earn each not_supported from a declared requirement: not this rule's.
  const matrix builtin = load("builtin_nothing");
  CHECK(kinds(compare(builtin,
                      {cell_rec("A=0,B=0"), result("A=0,B=0", "mem.x", outcome::not_supported)}))
            .empty());
}
